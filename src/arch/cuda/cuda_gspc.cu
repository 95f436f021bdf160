/* cuda_gspc.cu - grouped convolution with few channels per group (GSPC on the GPU; depthwise
 * included): one thread per (run of output pixels, group, run of up to CO output channels), all the
 * groups of the layer in one launch.
 *
 * A thread computes a few neighbouring pixels of a row. Threads are numbered group fastest in
 * NHWC (a warp reads and writes neighbouring groups' channels) and pixel fastest in NCHW (a warp
 * reads neighbouring pixels of one group's planes).
 * The weights are packed at plan time as [k][co][g] (k = (ky * k_w + kx) * cin_g + c), so that
 * the lanes of an NHWC warp read neighbouring words; a thread keeps its CO fp32 accumulators in
 * registers and reads each input once per tap. */
#include "cuda_common.cuh"

namespace dlc_cu {

constexpr int GS_THREADS = 256;

/* Thread e's pixel run, group and channel run (see below), in I: 32-bit divisions where the
   thread count allows (64-bit ones cost several times more). */
template <typename I>
__device__ __forceinline__ void gspc_point(const dlc_cu_conv &c, I e, int runs, int wblocks, long long *n, int *g,
                                           int *run, int *oh, int *wb) {
  if (c.nhwc) {   /* e = (((n * h_out + oh) * wblocks + wb) * runs + run) * groups + g */
    *g = (int)(e % (I)c.groups);
    I t = e / (I)c.groups;
    *run = (int)(t % (I)runs);
    t /= (I)runs;
    *wb = (int)(t % (I)wblocks);
    t /= (I)wblocks;
    *oh = (int)(t % (I)c.h_out);
    *n = (long long)(t / (I)c.h_out);
  } else {        /* e = (((n * groups + g) * runs + run) * h_out + oh) * wblocks + wb */
    *wb = (int)(e % (I)wblocks);
    I t = e / (I)wblocks;
    *oh = (int)(t % (I)c.h_out);
    t /= (I)c.h_out;
    *run = (int)(t % (I)runs);
    t /= (I)runs;
    *g = (int)(t % (I)c.groups);
    *n = (long long)(t / (I)c.groups);
  }
}

/* PX neighbouring output pixels of a row per thread: each weight read feeds PX FMAs, each input
   read CO. */
template <typename T, int CO, int PX>
__global__ void __launch_bounds__(GS_THREADS) gspc_kernel(const dlc_cu_conv c, const T *__restrict__ x,
                                                          T *__restrict__ y, long long total, int runs) {
  const long long e = (long long)blockIdx.x * GS_THREADS + threadIdx.x;
  if (e >= total) return;
  const int wblocks = (c.w_out + PX - 1) / PX;
  long long n;
  int g, run, oh, wb;
  if (total <= 0xffffffffLL) gspc_point<unsigned>(c, (unsigned)e, runs, wblocks, &n, &g, &run, &oh, &wb);
  else gspc_point<unsigned long long>(c, (unsigned long long)e, runs, wblocks, &n, &g, &run, &oh, &wb);
  const int ow0 = wb * PX;
  const int ih0 = oh * c.stride_h - c.pad_t, iw0 = ow0 * c.stride_w - c.pad_l;
  const int co0 = run * CO, nco = min(CO, c.cout_g - co0);
  const long long plane = (long long)c.h_in * c.w_in;
  const T *xg = x + (c.nhwc ? n * plane * c.c_in + (long long)g * c.cin_g : (n * c.c_in + (long long)g * c.cin_g) * plane);
  const long long cstep = c.nhwc ? 1 : plane, wpos = c.nhwc ? c.c_in : 1;
  const T *w = (const T *)c.w;
  const long long wstep = (long long)c.cout_g * c.groups;   /* one k */
  float acc[PX][CO];
#pragma unroll
  for (int q = 0; q < PX; q++)
#pragma unroll
    for (int j = 0; j < CO; j++) acc[q][j] = 0.f;
  for (int ky = 0; ky < c.k_h; ky++) {
    const int h = ih0 + ky * c.dil_h;
    if ((unsigned)h >= (unsigned)c.h_in) continue;
    const T *xrow = xg + (long long)h * c.w_in * wpos;
    for (int kx = 0; kx < c.k_w; kx++) {
      const int wx0 = iw0 + kx * c.dil_w;
      bool in[PX];
#pragma unroll
      for (int q = 0; q < PX; q++) in[q] = (unsigned)(wx0 + q * c.stride_w) < (unsigned)c.w_in;
      const T *wk = w + (long long)((ky * c.k_w + kx) * c.cin_g) * wstep + (long long)co0 * c.groups + g;
      for (int ci = 0; ci < c.cin_g; ci++) {
        float xv[PX];
#pragma unroll
        for (int q = 0; q < PX; q++)
          xv[q] = in[q] ? load_f(xrow + (long long)(wx0 + q * c.stride_w) * wpos + ci * cstep) : 0.f;
        const T *wc = wk + ci * wstep;
#pragma unroll
        for (int j = 0; j < CO; j++) {
          if (j >= nco) break;
          const float wv = load_f(wc + (long long)j * c.groups);
#pragma unroll
          for (int q = 0; q < PX; q++) acc[q][j] = fmaf(xv[q], wv, acc[q][j]);
        }
      }
    }
  }
  const int hw = c.h_out * c.w_out;
  const long long ostride = c.nhwc ? 1 : hw;
#pragma unroll
  for (int q = 0; q < PX; q++) {
    const int ow = ow0 + q;
    if (ow >= c.w_out) break;
    const int r = oh * c.w_out + ow;
    const long long ybase = c.nhwc ? (n * hw + r) * c.c_out : n * c.c_out * hw + r;
#pragma unroll
    for (int j = 0; j < CO; j++) {
      if (j >= nco) break;
      const int oc = g * c.cout_g + co0 + j;
      store_f(y + ybase + oc * ostride, clampf(acc[q][j] + c.bias[oc], c.out_min, c.out_max));
    }
  }
}

template <typename T, int CO, int PX> static int launch(const dlc_cu_conv *c, const void *x, void *y, cudaStream_t s) {
  const int runs = (c->cout_g + CO - 1) / CO;
  const long long total = (long long)c->n * c->h_out * ((c->w_out + PX - 1) / PX) * c->groups * runs;
  const unsigned blocks = (unsigned)((total + GS_THREADS - 1) / GS_THREADS);
  gspc_kernel<T, CO, PX><<<blocks, GS_THREADS, 0, s>>>(*c, (const T *)x, (T *)y, total, runs);
  return (int)cudaGetLastError();
}

/* 4 pixels per thread (2 at 8 channels). Measured on WideResNet-40-2, batch 32, F16 NHWC, H200:
   one pixel per thread on the small layers lost to 4 (depthwise 64 x 8x8: 0.0114 ms against
   0.0058; 4 channels per group on 32x32: 0.038 against 0.025) more often than it won. */
template <typename T, int CO> static int pick_px(const dlc_cu_conv *c, const void *x, void *y, cudaStream_t s) {
  return launch<T, CO, (CO >= 8 ? 2 : 4)>(c, x, y, s);
}

template <typename T> static int pick(const dlc_cu_conv *c, const void *x, void *y, cudaStream_t s) {
  if (c->cout_g <= 1) return pick_px<T, 1>(c, x, y, s);
  if (c->cout_g <= 2) return pick_px<T, 2>(c, x, y, s);
  if (c->cout_g <= 4) return pick_px<T, 4>(c, x, y, s);
  return pick_px<T, 8>(c, x, y, s);
}

/* ---- gspc2: F16 NHWC, cin_g == cout_g == C (2, 4, 8 or 16) ----
 * A warp's lanes are GL = 32 / C neighbouring groups (fastest) times 32 / GL pixels: each pixel's
 * C channels of a tap are one 4- to 32-byte load, the GL groups' loads one 64-byte run. A block
 * of 128 threads holds its GL groups' weights in shared memory as fp32 [k][group][co], so a
 * warp's weight reads are GL distinct 4C-byte vectors side by side (one pass of the banks). A
 * thread keeps C fp32 accumulators and stores its C outputs as one vector. 3x3 filters unroll
 * fully, so the nine taps' loads are in flight together. */
constexpr int G2_THREADS = 128;

struct alignas(16) Half16 { uint4 a, b; };
template <int C> struct HalfVec;
template <> struct HalfVec<2> { using T = unsigned; };
template <> struct HalfVec<4> { using T = uint2; };
template <> struct HalfVec<8> { using T = uint4; };
template <> struct HalfVec<16> { using T = Half16; };

template <int C, bool K3>
__global__ void __launch_bounds__(G2_THREADS) gspc2_kernel(const dlc_cu_conv c, const __half *__restrict__ x,
                                                           __half *__restrict__ y, int P) {
  using V = typename HalfVec<C>::T;
  constexpr int GL = 32 / C, PPB = G2_THREADS / GL;
  extern __shared__ __align__(16) float ws[];   /* [k][GL][co], k = (ky * k_w + kx) * C + ci */
  const int tid = threadIdx.x, gl = tid % GL, pp = tid / GL;
  const int g0 = blockIdx.y * GL, g = g0 + gl;
  const int KH = K3 ? 3 : c.k_h, KW = K3 ? 3 : c.k_w, K = KH * KW * C;
  const __half *w = (const __half *)c.w;   /* pack_gspc: [k][co][g] */
  for (int i = tid; i < K * GL * C; i += G2_THREADS) {
    const int o = i % C, j = (i / C) % GL, k = i / (C * GL);
    ws[i] = g0 + j < c.groups ? __half2float(w[((long long)k * C + o) * c.groups + g0 + j]) : 0.f;
  }
  __syncthreads();
  const int pix = blockIdx.x * PPB + pp;
  if (pix >= P || g >= c.groups) return;
  const int hw = c.h_out * c.w_out;
  const int n = pix / hw, r = pix - n * hw, oh = r / c.w_out, ow = r - oh * c.w_out;
  const int ih0 = oh * c.stride_h - c.pad_t, iw0 = ow * c.stride_w - c.pad_l;
  const __half *xg = x + (long long)n * c.h_in * c.w_in * c.c_in + g * C;
  float acc[C];
#pragma unroll
  for (int o = 0; o < C; o++) acc[o] = 0.f;
#pragma unroll
  for (int ky = 0; ky < KH; ky++) {
    const int h = ih0 + ky * c.dil_h;
#pragma unroll
    for (int kx = 0; kx < KW; kx++) {
      const int wx = iw0 + kx * c.dil_w;
      if ((unsigned)h >= (unsigned)c.h_in || (unsigned)wx >= (unsigned)c.w_in) continue;
      const V v = *(const V *)(xg + ((long long)h * c.w_in + wx) * c.c_in);
      const __half2 *hv = (const __half2 *)&v;
      const float *wk = ws + ((ky * KW + kx) * C * GL + gl) * C;   /* + ci * GL * C + o */
#pragma unroll
      for (int i = 0; i < C / 2; i++) {
        const float2 xf = __half22float2(hv[i]);
#pragma unroll
        for (int o = 0; o < C; o++) acc[o] = fmaf(xf.x, wk[(2 * i) * GL * C + o], acc[o]);
#pragma unroll
        for (int o = 0; o < C; o++) acc[o] = fmaf(xf.y, wk[(2 * i + 1) * GL * C + o], acc[o]);
      }
    }
  }
  V out;
  __half2 *ho = (__half2 *)&out;
  const float *b = c.bias + g * C;
#pragma unroll
  for (int i = 0; i < C / 2; i++)   /* each rounded once to binary16, to nearest even */
    ho[i] = __floats2half2_rn(clampf(acc[2 * i] + b[2 * i], c.out_min, c.out_max),
                              clampf(acc[2 * i + 1] + b[2 * i + 1], c.out_min, c.out_max));
  *(V *)(y + (long long)pix * c.c_out + g * C) = out;
}

template <int C> static int launch2(const dlc_cu_conv *c, const void *x, void *y, cudaStream_t s) {
  constexpr int GL = 32 / C, PPB = G2_THREADS / GL;
  const int P = c->n * c->h_out * c->w_out;
  const size_t smem = (size_t)c->k_h * c->k_w * C * GL * C * sizeof(float);
  dim3 grid((unsigned)((P + PPB - 1) / PPB), (unsigned)((c->groups + GL - 1) / GL));
  if (c->k_h == 3 && c->k_w == 3) gspc2_kernel<C, true><<<grid, G2_THREADS, smem, s>>>(*c, (const __half *)x, (__half *)y, P);
  else gspc2_kernel<C, false><<<grid, G2_THREADS, smem, s>>>(*c, (const __half *)x, (__half *)y, P);
  return (int)cudaGetLastError();
}

}  // namespace dlc_cu

extern "C" int dlc_cu_gspc(const dlc_cu_conv *c, const void *x, void *y, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  return c->dtype == DLC_CU_F16 ? dlc_cu::pick<__half>(c, x, y, s) : dlc_cu::pick<float>(c, x, y, s);
}

/* 1 where dlc_cu_gspc2 runs c (given x and y 16-byte aligned): F16 NHWC, cin_g == cout_g of 2, 4,
   8 or 16, a block's weights (32 / C groups) within 48 KB as fp32, pixels within the grid. */
extern "C" int dlc_cu_gspc2_applies(const dlc_cu_conv *c) {
  const int C = c->cin_g;
  return c->dtype == DLC_CU_F16 && c->nhwc && c->cout_g == C && (C == 2 || C == 4 || C == 8 || C == 16) &&
         (long long)c->k_h * c->k_w * C * 32 * 4 <= 48 * 1024 && (long long)c->n * c->h_out * c->w_out <= 0x7fffffffLL - 128;
}

extern "C" int dlc_cu_gspc2(const dlc_cu_conv *c, const void *x, void *y, void *stream) {
  using namespace dlc_cu;
  cudaStream_t s = (cudaStream_t)stream;
  switch (c->cin_g) {
    case 2: return launch2<2>(c, x, y, s);
    case 4: return launch2<4>(c, x, y, s);
    case 8: return launch2<8>(c, x, y, s);
    case 16: return launch2<16>(c, x, y, s);
  }
  return (int)cudaErrorInvalidValue;
}
