/* cuda.c - the CUDA backend's host side: is there a GPU, the implementation list's entries
 * (plan: pack the host weights for the kernel, upload weights, bias and requantisation; destroy:
 * free them), and execute: check that x, y and workspace are device memory, launch on the
 * plan's stream, turn a CUDA error into DLCONV_ERR_DEVICE with CUDA's message.
 *
 * Kernels (cuda_kernels.h): the implicit GEMMs (CUDA cores for F32, tensor cores for F16), the
 * grouped kernel for few channels per group, one thread per output (direct, every dtype), CSR. */
#include "cuda.h"

#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/util.h"
#include "cuda_kernels.h"

/* ---- is there a GPU ---- */

static int g_available;
/* DLCONV_CUDA_MMA: which F16 tensor-core GEMM: 2 (default) the mma2 tiles on NHWC layers with
   8 | cin_g of at least DLC_MMA2_MIN_MACS multiply-adds, WMMA elsewhere; 3 mma2 on every layer
   (x gathered through the k table where rows of 8 channels do not load); 1 the first mma.sync
   kernel on large layers, WMMA elsewhere; 0 WMMA only */
static int g_mma = 2;
/* DLCONV_CUDA_KTAB=1: the F32 128 x 128 GEMM reads each k's channel and tap from a plan-time table
   (igemm_big_tab_kernel; it measured slower: one block per SM for its 129 registers) */
static int g_ktab = 0;
/* DLCONV_CUDA_MMA2_BLOCKS: the block count the mma2 tile rule aims for (default 132) */
static int g_mma2_blocks = 132;
/* DLCONV_CUDA_GSPC=1: grouped layers by the first rules (no gspc2 kernel) */
static int g_gspc2 = 1;

/* The mma2 tiles against WMMA on an H200, batch 32, F16 NHWC: mma2 wins on every ResNet-50 and
   ResNeXt-50 layer of 0.41 G multiply-adds and more (1x1 64 > 256 on 56x56: 0.043 ms against
   0.110 for the first mma.sync kernel; 3x3 512 on 7x7: 0.108 against 0.160 for WMMA) and loses on
   WideResNet-40-2's, all of 0.30 G and less (3x3 32 on 32x32: 0.0162 against 0.0137; 1x1 32 > 32:
   0.0066 against 0.0053), and on the 1x1-plane fc layer (0.058 against 0.049). */
#define DLC_MMA2_MIN_MACS 4.0e8
static char g_why[256];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void probe(void) {
  int n = 0, dev = 0, major = 0, minor = 0;
  const char *mma = getenv("DLCONV_CUDA_MMA");
  g_mma = mma && (!strcmp(mma, "0") || !strcmp(mma, "1") || !strcmp(mma, "3")) ? mma[0] - '0' : 2;
  const char *kt = getenv("DLCONV_CUDA_KTAB");
  g_ktab = kt && !strcmp(kt, "1");
  const char *mb = getenv("DLCONV_CUDA_MMA2_BLOCKS");
  if (mb && atoi(mb) > 0) g_mma2_blocks = atoi(mb);
  const char *gs = getenv("DLCONV_CUDA_GSPC");
  g_gspc2 = !(gs && !strcmp(gs, "1"));
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    snprintf(g_why, sizeof g_why, "no usable GPU (cudaGetDeviceCount: %s)",
             e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    (void)cudaGetLastError();
    return;
  }
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
    snprintf(g_why, sizeof g_why, "could not query the GPU: %s", cudaGetErrorString(cudaGetLastError()));
    return;
  }
  if (major < 8) {
    snprintf(g_why, sizeof g_why, "GPU of compute capability %d.%d; the CUDA backend is built for 8.0 and newer",
             major, minor);
    return;
  }
  g_available = 1;
}

int dlc_cuda_available(void) {
  pthread_once(&g_once, probe);
  return g_available;
}

const char *dlc_cuda_why(void) {
  pthread_once(&g_once, probe);
  return g_available ? "" : g_why;
}

/* ---- plans ---- */

typedef enum cu_kind { CU_GEMM_FMA, CU_GEMM_TC, CU_GSPC, CU_DIRECT, CU_CSR } cu_kind;

typedef struct cu_plan {
  cu_kind kind;
  int bn, vec, mma;   /* mma: CU_GEMM_TC on the mma.sync kernel (1) or the mma2 tile (2), where x is 16-byte aligned */
  int tile, va;       /* mma 2: dlc_cu_mma2_tile; x read as rows of 8 channels (else through the k table) */
  int gspc2;          /* CU_GSPC on the gspc2 kernel (where x and y are 16-byte aligned) */
  dlc_cu_conv c;
  void *dev[8];   /* device allocations: weights (and their int8 tap form), bias, mult, qbias, row_ptr, col */
  int ndev;
} cu_plan;

static dlconv_status cuda_error(cudaError_t e, const char *what) {
  (void)cudaGetLastError();   /* clear it */
  return dlc_fail(DLCONV_ERR_DEVICE, "isa cuda: %s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}

static void cu_destroy(dlconv_plan *p) {
  cu_plan *cp = p->algo_data;
  if (!cp) return;
  for (int i = 0; i < cp->ndev; i++) cudaFree(cp->dev[i]);
  dlc_free(cp);
  p->algo_data = NULL;
}

/* A device copy of bytes of host memory, kept by the plan; NULL with the status set on failure. */
static void *upload(cu_plan *cp, const void *host, size_t bytes, dlconv_status *st) {
  void *d = NULL;
  cudaError_t e = cudaMalloc(&d, bytes ? bytes : 1);
  if (e == cudaSuccess) {
    cp->dev[cp->ndev++] = d;
    e = cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice);
  }
  if (e != cudaSuccess) {
    *st = e == cudaErrorMemoryAllocation ? dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "isa cuda: out of device memory (%zu bytes)", bytes)
                                         : cuda_error(e, "uploading the plan");
    return NULL;
  }
  return d;
}

static int cu_dtype(dlconv_dtype t) {
  return t == DLCONV_F16 ? DLC_CU_F16 : t == DLCONV_U8 ? DLC_CU_U8 : t == DLCONV_S8 ? DLC_CU_S8 : DLC_CU_F32;
}

static int is_q8(dlconv_dtype t) { return t == DLCONV_U8 || t == DLCONV_S8; }

/* The shape into the kernels' int fields; UNSUPPORTED where a field leaves int or the grid. */
static dlconv_status describe(const dlconv_plan *p, dlc_cu_conv *c) {
  const dlc_conv_shape *s = &p->s;
  memset(c, 0, sizeof *c);
  const int64_t K = s->cin_g * s->k_h * s->k_w;
  if (K > INT32_MAX / 2 || s->n * s->h_out * s->w_out > INT32_MAX)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "isa cuda: the reduction (%lld) or the pixel count is too large",
                    (long long)K);
  c->n = (int)s->n; c->c_in = (int)s->c_in; c->h_in = (int)s->h_in; c->w_in = (int)s->w_in;
  c->c_out = (int)s->c_out; c->h_out = (int)s->h_out; c->w_out = (int)s->w_out;
  c->k_h = (int)s->k_h; c->k_w = (int)s->k_w;
  c->stride_h = (int)s->stride_h; c->stride_w = (int)s->stride_w;
  c->dil_h = (int)s->dil_h; c->dil_w = (int)s->dil_w;
  c->pad_t = (int)s->pad_t; c->pad_l = (int)s->pad_l;
  c->groups = (int)s->groups; c->cin_g = (int)s->cin_g; c->cout_g = (int)s->cout_g;
  c->nhwc = s->layout == DLCONV_NHWC;
  c->dtype = cu_dtype(p->dtype);
  c->K = (int)K;
  c->out_min = s->out_min;
  c->out_max = s->out_max;
  return DLCONV_OK;
}

/* Bias (fp32) and, for int8, the requantisation, uploaded. */
static dlconv_status upload_epilogue(const dlconv_plan *p, cu_plan *cp) {
  dlconv_status st = DLCONV_OK;
  const size_t co = (size_t)p->s.c_out;
  if (!(cp->c.bias = upload(cp, p->bias, co * sizeof(float), &st))) return st;
  if (is_q8(p->dtype)) {
    const dlc_q8_params *q = &p->q8;
    cp->c.x_zp = q->x_zero_point;
    cp->c.y_zp = q->y_zero_point;
    cp->c.y_min = q->y_min;
    cp->c.y_max = q->y_max;
    cp->c.lo = q->lo;
    cp->c.hi = q->hi;
    if (!(cp->c.mult = upload(cp, q->mult, co * sizeof(double), &st))) return st;
    if (!(cp->c.qbias = upload(cp, q->bias, co * sizeof(int32_t), &st))) return st;
  }
  return DLCONV_OK;
}

/* OIHW weights into the GEMM packing of cuda_kernels.h: per group k_pad x n_pad, zeros beyond. */
static void *pack_gemm(const dlc_cu_conv *c, const void *w, size_t es) {
  unsigned char *b = dlc_calloc((size_t)c->groups * c->k_pad * c->n_pad * es);
  if (!b) return NULL;
  for (int g = 0; g < c->groups; g++)
    for (int o = 0; o < c->cout_g; o++)
      for (int ci = 0; ci < c->cin_g; ci++)
        for (int ky = 0; ky < c->k_h; ky++)
          for (int kx = 0; kx < c->k_w; kx++) {
            const size_t src = (((size_t)(g * c->cout_g + o) * c->cin_g + ci) * c->k_h + ky) * c->k_w + kx;
            const size_t k = c->nhwc ? ((size_t)ky * c->k_w + kx) * c->cin_g + ci : ((size_t)ci * c->k_h + ky) * c->k_w + kx;
            memcpy(b + (((size_t)g * c->k_pad + k) * c->n_pad + o) * es, (const unsigned char *)w + src * es, es);
          }
  return b;
}

/* OIHW weights as cuda_gspc.cu reads them: [k][co][g], k = (ky * k_w + kx) * cin_g + c. */
static void *pack_gspc(const dlc_cu_conv *c, const void *w, size_t es) {
  unsigned char *b = dlc_malloc((size_t)c->groups * c->cout_g * c->K * es);
  if (!b) return NULL;
  for (int g = 0; g < c->groups; g++)
    for (int o = 0; o < c->cout_g; o++)
      for (int ci = 0; ci < c->cin_g; ci++)
        for (int ky = 0; ky < c->k_h; ky++)
          for (int kx = 0; kx < c->k_w; kx++) {
            const size_t src = (((size_t)(g * c->cout_g + o) * c->cin_g + ci) * c->k_h + ky) * c->k_w + kx;
            const size_t k = ((size_t)ky * c->k_w + kx) * c->cin_g + ci;
            memcpy(b + ((k * c->cout_g + o) * c->groups + g) * es, (const unsigned char *)w + src * es, es);
          }
  return b;
}

/* int8 direct on quads (cuda_kernels.h): the s8 OIHW weights as [oc][ky][kx][c] and each output
   channel's per-tap sums over the channels, uploaded. */
static dlconv_status pack_q8_taps(cu_plan *cp, const int8_t *w) {
  dlc_cu_conv *c = &cp->c;
  const size_t taps = (size_t)c->k_h * c->k_w, co = (size_t)c->c_out, cg = (size_t)c->cin_g;
  int8_t *wt = dlc_malloc(co * taps * cg);
  int32_t *ts = dlc_calloc(co * taps * sizeof(int32_t));
  dlconv_status st = DLCONV_OK;
  if (!wt || !ts) {
    st = dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory packing the int8 weights");
  } else {
    for (size_t o = 0; o < co; o++)
      for (size_t ci = 0; ci < cg; ci++)
        for (size_t t = 0; t < taps; t++) {
          const int8_t v = w[(o * cg + ci) * taps + t];
          wt[(o * taps + t) * cg + ci] = v;
          ts[o * taps + t] += v;
        }
    if ((c->w_taps = upload(cp, wt, co * taps * cg, &st))) c->tap_sum = upload(cp, ts, co * taps * sizeof(int32_t), &st);
  }
  dlc_free(wt);
  dlc_free(ts);
  return st;
}

static int is_zero(const unsigned char *v, size_t es) {
  if (es == 4) { float f; memcpy(&f, v, 4); return f == 0.0f; }
  if (es == 2) { uint16_t h; memcpy(&h, v, 2); return (h & 0x7fffu) == 0; }
  return *v == 0;
}

static size_t weight_es(dlconv_dtype t) { return t == DLCONV_F32 ? 4 : t == DLCONV_F16 ? 2 : 1; }

static const char *dtype_word(dlconv_dtype t) {
  return t == DLCONV_F32 ? "f32" : t == DLCONV_F16 ? "f16" : t == DLCONV_U8 ? "u8" : "s8";
}

/* The GEMM tile of the output channels. Measured on an H200 (132 SMs), batch 32:
   - F32 (CUDA cores): 128 x 128 where the group has 128+ channels and the layer gives that tile
     a wave of blocks (ResNet-50, NCHW: 1x1 256 > 128 on 56x56 0.31 ms against 0.51 with 64 x 64;
     with 64 channels, or under a wave, 64 x 64 won: 3x3 64 > 64 on 56x56 0.48 against 0.65);
     else 64 x 64 (64 x 16 where the group has at most 16): narrowing it further for more blocks
     lost (3x3 512 on 7x7: 1.38 ms at 64 x 16 against 0.76).
   - F16 (tensor cores): the group's channel count rounded up to 16, 32 or 64, narrowed while the
     grid of 64-pixel tiles would not fill the GPU twice (WideResNet's 3x3 128 on 8x8: 0.031 ms
     at 64 x 16 against 0.050 at 64 x 64; ResNet-50's 3x3 512 on 7x7: 0.160 at 64 x 32 against
     0.218). */
static int fit_bn(const dlconv_plan *p, int fma) {
  const int64_t cout_g = p->s.cout_g;
  const int64_t rows = (p->s.n * p->s.h_out * p->s.w_out + 63) / 64;
  if (fma) {
    if (cout_g >= 128 && (rows + 1) / 2 * ((cout_g + 127) / 128) * p->s.groups >= 132) return 128;
    return cout_g <= 16 ? 16 : 64;
  }
  int bn = cout_g <= 16 ? 16 : cout_g <= 32 ? 32 : 64;
  while (bn > 16 && rows * ((cout_g + bn - 1) / bn) * p->s.groups < 264) bn /= 2;
  return bn;
}

/* The k table of the F32 128 x 128 GEMM (cuda_kernels.h: ktab), uploaded. */
static dlconv_status upload_ktab(cu_plan *cp) {
  dlc_cu_conv *c = &cp->c;
  int *t = dlc_malloc((size_t)c->k_pad * 4 * sizeof(int));
  if (!t) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory building the k table");
  for (int k = 0; k < c->k_pad; k++) {
    int *e = t + 4 * (size_t)k;
    if (k >= c->K) {
      e[0] = 0; e[1] = -(1 << 29); e[2] = -(1 << 29);   /* DLC_CU_FAR: padding */
    } else if (c->nhwc) {
      const int ch = k % c->cin_g, tap = k / c->cin_g;
      e[0] = ch; e[1] = tap / c->k_w * c->dil_h; e[2] = tap % c->k_w * c->dil_w;
    } else {
      const int kx = k % c->k_w, t2 = k / c->k_w;
      e[0] = t2 / c->k_h * c->h_in * c->w_in; e[1] = t2 % c->k_h * c->dil_h; e[2] = kx * c->dil_w;
    }
    e[3] = 0;
  }
  dlconv_status st = DLCONV_OK;
  c->ktab = upload(cp, t, (size_t)c->k_pad * 4 * sizeof(int), &st);
  dlc_free(t);
  return st;
}

/* gspc2 (F16 NHWC, cin_g == cout_g = C), where it measured fastest on an H200 (WideResNet-40-2
   G(g) and ResNeXt-50, batch 32): C = 4 always (3x3 on 32x32: 0.012 ms against 0.025 for the
   first grouped kernel), C = 2 with 16+ groups (a warp's 16 groups all busy: 0.013 against 0.021;
   with 8 groups 0.013 against 0.010), C = 8 with 4+ groups on planes of 28x28 and more (0.085
   against 0.095 for the GEMM; on 16x16, 0.011 against 0.009), never C = 16 (0.058 against 0.034
   for the GEMM on 14x14). */
static int use_gspc2(const dlconv_plan *p) {
  const int64_t C = p->s.cin_g, G = p->s.groups, plane = p->s.h_out * p->s.w_out;
  return g_gspc2 && p->dtype == DLCONV_F16 && p->s.layout == DLCONV_NHWC && p->s.cout_g == C &&
         p->s.k_h * p->s.k_w * C * 32 * 4 <= 48 * 1024 &&
         ((C == 2 && G >= 16) || C == 4 || (C == 8 && G >= 4 && plane >= 784));
}

/* Plans kind on p from dense OIHW weights w. */
static dlconv_status plan_kind(dlconv_plan *p, const void *w, cu_kind kind, int bn) {
  if (!dlc_cuda_available()) return dlc_fail(DLCONV_ERR_UNSUPPORTED, "isa cuda: %s", dlc_cuda_why());
  cu_plan *cp = dlc_calloc(sizeof *cp);
  if (!cp) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory allocating the plan");
  dlconv_status st = describe(p, &cp->c);
  if (st) {
    dlc_free(cp);
    return st;
  }
  p->algo_data = cp;
  cp->kind = kind;
  cp->bn = bn;
  dlc_cu_conv *c = &cp->c;
  const size_t es = weight_es(p->dtype);
  void *host = NULL;
  size_t bytes = 0;
  const char *dt = dtype_word(p->dtype);
  switch (kind) {
    case CU_GEMM_FMA:
    case CU_GEMM_TC:
      if (c->groups > 65535) {
        cu_destroy(p);
        return dlc_fail(DLCONV_ERR_UNSUPPORTED, "isa cuda: %d groups exceed the GEMM's grid (65535)", c->groups);
      }
      const int va = c->nhwc && c->cin_g % 8 == 0 && c->c_in % 8 == 0;
      const double macs = (double)c->n * c->h_out * c->w_out * c->K * c->cout_g * c->groups;
      if (kind == CU_GEMM_TC && (g_mma == 3 || (g_mma == 2 && va && macs >= DLC_MMA2_MIN_MACS))) {
        static int set_up;   /* the kernels' shared-memory limit, once (setting it twice is harmless) */
        if (!set_up) {
          cudaError_t e = (cudaError_t)dlc_cu_mma2_setup();
          if (e != cudaSuccess) {
            cu_destroy(p);
            return cuda_error(e, "setting up the mma2 kernels");
          }
          set_up = 1;
        }
        cp->mma = 2;
        cp->va = va;
        cp->tile = dlc_cu_mma2_tile(c, g_mma2_blocks);
        cp->bn = bn = dlc_cu_mma2_bn(cp->tile);
      } else if (kind == CU_GEMM_TC && g_mma == 1 && dlc_cu_mma_applies(c)) {
        cp->mma = 1;
        cp->bn = bn = c->cout_g <= 64 ? 64 : 128;
      }
      c->k_pad = (int)dlc_round_up((size_t)c->K, kind == CU_GEMM_TC ? 32 : 16);
      c->n_pad = (int)dlc_round_up((size_t)c->cout_g, (size_t)bn);
      host = pack_gemm(c, w, es);
      bytes = (size_t)c->groups * c->k_pad * c->n_pad * es;
      cp->vec = kind == CU_GEMM_TC && c->nhwc && c->cin_g % 8 == 0 && c->c_in % 8 == 0;
      if (cp->mma == 2)
        snprintf(p->kernel, sizeof p->kernel, "%s%s", dlc_cu_mma2_name(cp->tile), cp->va ? "" : "_gather");
      else if (cp->mma)
        snprintf(p->kernel, sizeof p->kernel, "cuda_mma_f16_128x%dx32_cp2", bn);
      else if (kind == CU_GEMM_TC && cp->vec && bn == 64 && dlc_cu_tc_big(c))
        snprintf(p->kernel, sizeof p->kernel, "cuda_wmma_f16_128x64x32_v8_2stage");
      else if (kind == CU_GEMM_TC)
        snprintf(p->kernel, sizeof p->kernel, "cuda_wmma_f16_64x%dx32%s", bn, cp->vec ? "_v8" : "");
      else
        snprintf(p->kernel, sizeof p->kernel, bn == 128 ? "cuda_igemm_%s_128x128x8_2stage" : "cuda_igemm_%s_64x%dx16",
                 dt, bn);
      break;
    case CU_GSPC:
      host = pack_gspc(c, w, es);
      bytes = (size_t)c->groups * c->cout_g * c->K * es;
      snprintf(p->kernel, sizeof p->kernel, "cuda_gspc_%s_co%d", dt, c->cout_g <= 1 ? 1 : c->cout_g <= 2 ? 2 : c->cout_g <= 4 ? 4 : 8);
      cp->gspc2 = use_gspc2(p) && dlc_cu_gspc2_applies(c);
      if (cp->gspc2) snprintf(p->kernel, sizeof p->kernel, "cuda_gspc2_f16_c%d", c->cin_g);
      break;
    case CU_DIRECT:
      bytes = (size_t)c->c_out * c->K * es;
      host = dlc_malloc(bytes);
      if (host) memcpy(host, w, bytes);
      snprintf(p->kernel, sizeof p->kernel, "cuda_direct_%s", dt);
      if (host && is_q8(p->dtype) && c->nhwc && c->cin_g % 4 == 0 && c->c_in % 4 == 0) {
        st = pack_q8_taps(cp, (const int8_t *)w);
        if (st == DLCONV_OK) snprintf(p->kernel, sizeof p->kernel, "cuda_direct_%s_dp4a", dt);
      }
      break;
    case CU_CSR: {
      /* rows of nonzeros in column order, from the dense weights */
      const size_t rows = (size_t)c->c_out, cols = (size_t)c->K;
      int32_t *rp = dlc_malloc((rows + 1) * sizeof(int32_t));
      size_t nnz = 0;
      for (size_t i = 0; i < rows * cols; i++) nnz += !is_zero((const unsigned char *)w + i * es, es);
      int32_t *ci = dlc_malloc((nnz ? nnz : 1) * sizeof(int32_t));
      host = dlc_malloc((nnz ? nnz : 1) * es);
      if (rp && ci && host) {
        size_t j = 0;
        rp[0] = 0;
        for (size_t r = 0; r < rows; r++) {
          for (size_t k = 0; k < cols; k++) {
            const unsigned char *v = (const unsigned char *)w + (r * cols + k) * es;
            if (is_zero(v, es)) continue;
            ci[j] = (int32_t)k;
            memcpy((unsigned char *)host + j * es, v, es);
            j++;
          }
          rp[r + 1] = (int32_t)j;
        }
        if ((c->row_ptr = upload(cp, rp, (rows + 1) * sizeof(int32_t), &st)))
          c->col = upload(cp, ci, nnz * sizeof(int32_t), &st);
      }
      if (!rp || !ci) st = dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory building the CSR rows");
      dlc_free(rp);
      dlc_free(ci);
      bytes = nnz * es;
      p->weight_density = rows * cols != 0 ? (double)nnz / (double)(rows * cols) : 1.0;
      snprintf(p->kernel, sizeof p->kernel, "cuda_csr_%s", dt);
      break;
    }
  }
  if (!host && st == DLCONV_OK) st = dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory packing the weights");
  if (st == DLCONV_OK) {
    void *d = upload(cp, host, bytes, &st);
    if (kind == CU_CSR) c->val = d;
    else c->w = d;
  }
  dlc_free(host);
  if (st == DLCONV_OK) st = upload_epilogue(p, cp);
  if (st == DLCONV_OK && ((kind == CU_GEMM_FMA && bn == 128 && g_ktab) || (cp->mma == 2 && !cp->va)))
    st = upload_ktab(cp);
  if (st != DLCONV_OK) {
    cu_destroy(p);
    return st;
  }
  p->packed_weight_bytes = bytes + (kind == CU_CSR ? ((size_t)c->c_out + 1 + bytes / es) * sizeof(int32_t) : 0);
  p->workspace_bytes = 0;
  return DLCONV_OK;
}

static dlconv_status refuse_q8(const dlconv_plan *p, const char *algo) {
  return dlc_fail(DLCONV_ERR_UNSUPPORTED, "isa cuda: %s has no %s kernel; int8 runs with algo direct or sparse_csr",
                  algo, dtype_word(p->dtype));
}

static dlconv_status plan_gemm(dlconv_plan *p, const void *w) {
  if (is_q8(p->dtype)) return refuse_q8(p, "im2col_gemm");
  const int fma = p->dtype == DLCONV_F32;
  return plan_kind(p, w, fma ? CU_GEMM_FMA : CU_GEMM_TC, fit_bn(p, fma));
}

/* GSPC: very few channels per group on the grouped kernel (CUDA cores), more on the GEMMs with
   the channel tile fitted to the group. Measured on WideResNet-40-2 G(g), batch 32, F16 NHWC,
   H200: the grouped kernel wins at 1 or 2 output channels per group (depthwise 16 x 32x32:
   0.0096 ms against 0.057), at 4 on planes of 16x16 and more at stride 1 (4 x 4 on 32x32: 0.025
   against 0.046), loses at 4 with stride 2 (0.020 against 0.015) and on 8x8 planes, and at 8
   (8 x 8 in, 16x16: 0.065 ms against 0.010 on the tensor cores). */
static dlconv_status plan_gspc(dlconv_plan *p, const void *w) {
  if (is_q8(p->dtype)) return refuse_q8(p, "gspc");
  const int unstrided = p->s.stride_h == 1 && p->s.stride_w == 1;
  if (use_gspc2(p)) return plan_kind(p, w, CU_GSPC, 0);
  if (p->s.cout_g <= 2 || (p->s.cout_g <= 4 && p->s.cin_g <= 4 && unstrided && p->s.h_out * p->s.w_out >= 256))
    return plan_kind(p, w, CU_GSPC, 0);
  const int fma = p->dtype == DLCONV_F32;
  return plan_kind(p, w, fma ? CU_GEMM_FMA : CU_GEMM_TC, fit_bn(p, fma));
}

static dlconv_status plan_direct(dlconv_plan *p, const void *w) {
  if (is_q8(p->dtype) && (size_t)p->s.cin_g * p->s.k_h * p->s.k_w > DLC_Q8_MAX_K)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "isa cuda: int8 reduction of %lld exceeds %zu",
                    (long long)(p->s.cin_g * p->s.k_h * p->s.k_w), DLC_Q8_MAX_K);
  return plan_kind(p, w, CU_DIRECT, 0);
}

static dlconv_status plan_csr(dlconv_plan *p, const void *w) {
  if (is_q8(p->dtype) && (size_t)p->s.cin_g * p->s.k_h * p->s.k_w > DLC_Q8_MAX_K)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "isa cuda: int8 reduction of %lld exceeds %zu",
                    (long long)(p->s.cin_g * p->s.k_h * p->s.k_w), DLC_Q8_MAX_K);
  return plan_kind(p, w, CU_CSR, 0);
}

static int launch(const cu_plan *cp, const void *x, void *y, void *stream) {
  switch (cp->kind) {
    case CU_GEMM_FMA: return dlc_cu_igemm(&cp->c, cp->bn, x, y, stream);
    case CU_GEMM_TC:
      if (cp->mma == 2 && (!cp->va || (uintptr_t)x % 16 == 0)) return dlc_cu_mma2(&cp->c, cp->tile, cp->va, x, y, stream);
      if (cp->mma == 1 && (uintptr_t)x % 16 == 0) return dlc_cu_mma(&cp->c, cp->bn, x, y, stream);
      return dlc_cu_tc(&cp->c, cp->bn > 64 ? 64 : cp->bn, cp->vec && (uintptr_t)x % 16 == 0, x, y, stream);
    case CU_GSPC:
      if (cp->gspc2 && (uintptr_t)x % 16 == 0 && (uintptr_t)y % 16 == 0) return dlc_cu_gspc2(&cp->c, x, y, stream);
      return dlc_cu_gspc(&cp->c, x, y, stream);
    case CU_DIRECT: return dlc_cu_direct(&cp->c, x, y, stream);
    case CU_CSR: return dlc_cu_csr(&cp->c, x, y, stream);
  }
  return (int)cudaErrorInvalidValue;
}

/* ops->execute must not fail: the top floor calls dlc_cuda_execute instead; this one is there
   for completeness (a launch error stays in CUDA's state). */
static void cu_execute(const dlconv_plan *p, const void *x, void *y, void *workspace) {
  (void)workspace;
  (void)launch(p->algo_data, x, y, p->cuda_stream);
}

const dlc_impl_ops dlc_cuda_gemm_ops = {plan_gemm, cu_execute, NULL, cu_destroy, NULL};
const dlc_impl_ops dlc_cuda_gspc_ops = {plan_gspc, cu_execute, NULL, cu_destroy, NULL};
const dlc_impl_ops dlc_cuda_direct_ops = {plan_direct, cu_execute, NULL, cu_destroy, NULL};
const dlc_impl_ops dlc_cuda_csr_ops = {plan_csr, cu_execute, NULL, cu_destroy, NULL};

int dlc_cuda_auto_algos(const dlc_conv_shape *s, dlconv_dtype dtype, dlconv_algo out[4]) {
  int n = 0;
  if (is_q8(dtype)) {
    out[n++] = DLCONV_ALGO_DIRECT;
    return n;
  }
  if (s->groups > 1) out[n++] = DLCONV_ALGO_GSPC;
  out[n++] = DLCONV_ALGO_IM2COL_GEMM;
  out[n++] = DLCONV_ALGO_DIRECT;
  return n;
}

/* ---- execute ---- */

/* 1 when ptr is memory the GPU reads as device memory (device or managed allocations). */
static int device_memory(const void *ptr) {
  struct cudaPointerAttributes a;
  memset(&a, 0, sizeof a);
  cudaError_t e = cudaPointerGetAttributes(&a, ptr);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

dlconv_status dlc_cuda_execute(const dlconv_plan *p, const void *x, void *y, void *workspace) {
  if (!device_memory(x))
    return dlc_fail(DLCONV_ERR_INVALID_ARG, "isa cuda: x is not device memory (x, y and workspace must be)");
  if (!device_memory(y))
    return dlc_fail(DLCONV_ERR_INVALID_ARG, "isa cuda: y is not device memory (x, y and workspace must be)");
  if (workspace && !device_memory(workspace))
    return dlc_fail(DLCONV_ERR_INVALID_ARG, "isa cuda: workspace is not device memory (x, y and workspace must be)");
  const cu_plan *cp = p->algo_data;
  cudaError_t e = (cudaError_t)launch(cp, x, y, p->cuda_stream);
  if (e != cudaSuccess) return cuda_error(e, p->kernel);
  return DLCONV_OK;
}
