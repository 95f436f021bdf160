/* The CUDA backend against the double oracle (fp) and the CPU (int8, bit for bit).
 *
 *   test_cuda [--shapes N] [--seed S] [--only I]
 *
 * Without a GPU (or without CUDA in the build) it checks that ISA_CUDA is refused with a
 * message and exits 77 (SKIP), saying why. With one: a seeded sweep of conv shapes (groups,
 * depthwise, stride, dilation, asymmetric padding, batch, clamp, bias) for F32 and F16 in both
 * layouts with every algorithm and AUTO; int8 (U8, S8) with every algorithm, equal to the CPU's
 * plan byte for byte; dense layers; the caller's stream; bad input (host pointers where device
 * ones are required: INVALID_ARG, no crash). Public header and the CUDA runtime's C API only. */
#include "test_common.h"
#include "support/half.h"

#if defined(DLC_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif

static int g_shapes = 160, g_only = -1;
static uint64_t g_seed = 20261127;

#if defined(DLC_HAVE_CUDA)

static const dlconv_algo ALGOS[] = {DLCONV_ALGO_AUTO, DLCONV_ALGO_DIRECT, DLCONV_ALGO_IM2COL_GEMM, DLCONV_ALGO_GSPC,
                                    DLCONV_ALGO_SPARSE_CSR};

static void *dev_copy(const void *host, size_t bytes) {
  void *d = NULL;
  assert_int_equal(cudaMalloc(&d, bytes ? bytes : 1), cudaSuccess);
  if (host) assert_int_equal(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice), cudaSuccess);
  return d;
}

static void gen_shape(int idx, dlconv_conv2d_desc *d, int *bias) {
  rng_t r = rng_seed_salted(g_seed, (uint64_t)idx);
  const int kind = rng_int(&r, 0, 9);
  int groups = 1, cin_g, cout_g;
  if (kind <= 3) {          /* dense conv */
    cin_g = rng_pick(&r, (const int[]){1, 3, 5, 8, 16, 17, 32, 64}, 8);
    cout_g = rng_pick(&r, (const int[]){1, 4, 7, 16, 24, 33, 64, 70}, 8);
  } else if (kind <= 6) {   /* grouped */
    groups = rng_pick(&r, (const int[]){2, 3, 4, 8, 16}, 5);
    cin_g = rng_pick(&r, (const int[]){1, 2, 3, 4, 8, 16, 24}, 7);
    cout_g = rng_pick(&r, (const int[]){1, 2, 4, 5, 8, 16, 40}, 7);
  } else {                  /* depthwise, multiplier 1 or 2 */
    groups = rng_pick(&r, (const int[]){3, 8, 16, 32, 40}, 5);
    cin_g = 1;
    cout_g = rng_int(&r, 1, 2);
  }
  const int h = rng_int(&r, 1, 19), w = rng_int(&r, 1, 19);
  dlconv_conv2d_desc_init(d, rng_int(&r, 1, 3), groups * cin_g, h, w, groups * cout_g, 1, 1);
  d->groups = groups;
  switch (rng_int(&r, 0, 3)) {
    case 0: d->k_h = d->k_w = 1; break;
    case 1: d->k_h = d->k_w = 3; break;
    case 2: d->k_h = rng_int(&r, 1, 5); d->k_w = rng_int(&r, 1, 5); break;
    default: d->k_h = d->k_w = rng_pick(&r, (const int[]){5, 7}, 2); break;
  }
  d->stride_h = rng_int(&r, 1, 2);
  d->stride_w = rng_chance(&r, 0.8) ? d->stride_h : rng_int(&r, 1, 3);
  d->dilation_h = rng_chance(&r, 0.8) ? 1 : 2;
  d->dilation_w = rng_chance(&r, 0.8) ? d->dilation_h : rng_int(&r, 1, 2);
  d->pad_top = rng_int(&r, 0, 2); d->pad_bottom = rng_int(&r, 0, 2);
  d->pad_left = rng_int(&r, 0, 2); d->pad_right = rng_int(&r, 0, 3);
  /* keep an output */
  while ((d->h_in + d->pad_top + d->pad_bottom - d->dilation_h * (d->k_h - 1) - 1) < 0) d->pad_bottom++;
  while ((d->w_in + d->pad_left + d->pad_right - d->dilation_w * (d->k_w - 1) - 1) < 0) d->pad_right++;
  switch (rng_int(&r, 0, 3)) {
    case 0: d->out_min = 0.f; break;
    case 1: d->out_min = -0.5f; d->out_max = 0.75f; break;
    default: break;
  }
  *bias = rng_chance(&r, 0.7);
}

typedef struct fp_case {
  dlconv_conv2d_desc d;
  int64_t ho, wo;
  size_t nx, nw, ny;
  float *x, *w, *b;   /* the values (F16: already rounded to binary16) */
  double *ref, *mag;
} fp_case;

static void fp_case_init(fp_case *c, const dlconv_conv2d_desc *d, int bias, dlconv_dtype dt, uint64_t seed) {
  c->d = *d;
  c->d.dtype = dt;
  c->ho = oracle_out_dim(d->h_in, d->pad_top, d->pad_bottom, d->k_h, d->dilation_h, d->stride_h);
  c->wo = oracle_out_dim(d->w_in, d->pad_left, d->pad_right, d->k_w, d->dilation_w, d->stride_w);
  c->nx = (size_t)d->n * d->c_in * d->h_in * d->w_in;
  c->nw = (size_t)d->c_out * (d->c_in / d->groups) * d->k_h * d->k_w;
  c->ny = (size_t)d->n * d->c_out * c->ho * c->wo;
  c->x = malloc(c->nx * 4);
  c->w = malloc(c->nw * 4);
  c->b = bias ? malloc((size_t)d->c_out * 4) : NULL;
  c->ref = malloc(c->ny * 8);
  c->mag = malloc(c->ny * 8);
  rng_t r = rng_seed(seed);
  for (size_t i = 0; i < c->nx; i++) c->x[i] = rng_float(&r, -1, 1);
  for (size_t i = 0; i < c->nw; i++) c->w[i] = rng_chance(&r, 0.2) ? 0.f : rng_float(&r, -1, 1);
  for (int i = 0; bias && i < d->c_out; i++) c->b[i] = rng_float(&r, -1, 1);
  if (dt == DLCONV_F16) {
    for (size_t i = 0; i < c->nx; i++) c->x[i] = (float)half_value(half_of(c->x[i]));
    for (size_t i = 0; i < c->nw; i++) c->w[i] = (float)half_value(half_of(c->w[i]));
    for (int i = 0; bias && i < d->c_out; i++) c->b[i] = (float)half_value(half_of(c->b[i]));
  }
  oracle_conv2d(&c->d, c->x, c->w, c->b, c->ref, c->mag);
}

static void fp_case_free(fp_case *c) {
  free(c->x); free(c->w); free(c->b); free(c->ref); free(c->mag);
}

/* The values in the dtype's storage. */
static void *as_dtype(const float *v, size_t n, dlconv_dtype dt) {
  if (!v) return NULL;
  if (dt == DLCONV_F32) {
    void *o = malloc(n * 4);
    memcpy(o, v, n * 4);
    return o;
  }
  uint16_t *h = malloc(n * 2 + 2);
  for (size_t i = 0; i < n; i++) h[i] = half_of(v[i]);
  return h;
}

static char g_last_kernel[64];   /* what run_fp's plan ran */

/* Plans and runs c with algo on the GPU; 1 = checked and right, 0 = UNSUPPORTED, -1 = wrong. */
static int run_fp(const fp_case *c, dlconv_algo algo, char *msg, size_t len) {
  const dlconv_dtype dt = c->d.dtype;
  const size_t es = dt == DLCONV_F32 ? 4 : 2;
  void *w = as_dtype(c->w, c->nw, dt), *b = as_dtype(c->b, (size_t)c->d.c_out, dt), *x = as_dtype(c->x, c->nx, dt);
  dlconv_options o;
  dlconv_options_init(&o);
  o.isa = DLCONV_ISA_CUDA;
  o.algo = algo;
  dlconv_plan *p = NULL;
  dlconv_status st = dlconv_plan_conv2d(&p, &c->d, w, b, NULL, &o);
  free(w);
  free(b);
  int ok = 1;
  if (st == DLCONV_ERR_UNSUPPORTED) {
    free(x);
    if (!dlconv_last_error()[0]) {
      snprintf(msg, len, "UNSUPPORTED without a message");
      return -1;
    }
    return 0;
  }
  if (st != DLCONV_OK) {
    snprintf(msg, len, "plan: %s: %s", dlconv_status_string(st), dlconv_last_error());
    free(x);
    return -1;
  }
  dlconv_plan_info info;
  dlconv_plan_query(p, &info);
  snprintf(g_last_kernel, sizeof g_last_kernel, "%s", info.kernel);
  if (info.isa != DLCONV_ISA_CUDA || info.algo == DLCONV_ALGO_AUTO || (algo && info.algo != algo)) {
    snprintf(msg, len, "plan_info: isa %d algo %d", (int)info.isa, (int)info.algo);
    ok = -1;
  }
  void *dx = dev_copy(x, c->nx * es), *dy = dev_copy(NULL, c->ny * es);
  free(x);
  cudaMemset(dy, 0xff, c->ny * es);   /* NaN: a point never written fails */
  st = dlconv_execute(p, dx, dy, NULL);
  if (st != DLCONV_OK) {
    snprintf(msg, len, "execute: %s: %s", dlconv_status_string(st), dlconv_last_error());
    ok = -1;
  }
  void *y = malloc(c->ny * es);
  cudaError_t e = cudaMemcpy(y, dy, c->ny * es, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess && ok > 0) {
    snprintf(msg, len, "cuda: %s", cudaGetErrorString(e));
    ok = -1;
  }
  const int64_t K = (int64_t)(c->d.c_in / c->d.groups) * c->d.k_h * c->d.k_w;
  for (size_t i = 0; i < c->ny && ok > 0; i++) {
    const double v = dt == DLCONV_F32 ? ((float *)y)[i] : half_value(((uint16_t *)y)[i]);
    const double ref = c->ref[i];
    const double tol = dt == DLCONV_F32 ? 4e-6 * sqrt((double)K) * c->mag[i] + 1e-30
                                        : fabs(ref) * 0x1p-11 + 4e-6 * sqrt((double)K) * c->mag[i] + 0x1p-24;
    if (!(fabs(v - ref) <= tol)) {
      snprintf(msg, len, "%s y[%zu] = %.9g, oracle %.9g (tol %.3g, kernel %s)", info.kernel, i, v, ref, tol, info.kernel);
      ok = -1;
    }
  }
  free(y);
  cudaFree(dx);
  cudaFree(dy);
  dlconv_plan_destroy(p);
  return ok;
}

static void test_fp_sweep(void **state) {
  (void)state;
  long runs = 0, unsupported = 0, fails = 0;
  for (int idx = 0; idx < g_shapes; idx++) {
    if (g_only >= 0 && idx != g_only) continue;
    dlconv_conv2d_desc d;
    int bias;
    gen_shape(idx, &d, &bias);
    for (int dt = 0; dt < 2; dt++)
      for (int lay = 0; lay < 2; lay++) {
        d.layout = lay ? DLCONV_NHWC : DLCONV_NCHW;
        fp_case c;
        fp_case_init(&c, &d, bias, dt ? DLCONV_F16 : DLCONV_F32, g_seed + (uint64_t)idx);
        for (size_t a = 0; a < ARRAY_LEN(ALGOS); a++) {
          char msg[512] = "", buf[256];
          int r = run_fp(&c, ALGOS[a], msg, sizeof msg);
          runs++;
          unsupported += r == 0;
          if (r < 0) {
            fails++;
            print_error("shape #%d %s %s algo %s: %s\n", idx, desc_str(&c.d, buf, sizeof buf), dt ? "f16" : "f32",
                        algo_name(ALGOS[a]), msg);
          }
        }
        fp_case_free(&c);
      }
  }
  printf("cuda fp sweep: %d shapes x f32,f16 x nchw,nhwc x 5 algos: %ld runs, %ld unsupported, %ld failures\n",
         g_only >= 0 ? 1 : g_shapes, runs, unsupported, fails);
  assert_int_equal(fails, 0);
  assert_int_equal(unsupported, 0);   /* every fp shape runs with every algorithm */
}

/* Layers large enough for the big tiles (F32 128 x 128; F16 on NHWC with 8 | cin_g: the mma2
   tiles, or with DLCONV_CUDA_MMA=1 mma.sync 128 x 64 and 128 x 128, or with DLCONV_CUDA_MMA=0
   the WMMA 128 x 64 two-stage tile), small ones for the small mma2 tiles, grouped ones for gspc2,
   with strides, asymmetric padding, a channel tail, groups, bias and clamp. */
static void test_large_tiles(void **state) {
  (void)state;
  struct { int n, c_in, h, w, c_out, k, stride, pt, pb, pl, pr, groups; dlconv_dtype dt; dlconv_layout lay; } L[] = {
      {4, 32, 64, 64, 128, 3, 1, 1, 1, 1, 1, 1, DLCONV_F32, DLCONV_NCHW},
      {4, 32, 64, 64, 192, 3, 1, 1, 1, 1, 1, 1, DLCONV_F16, DLCONV_NHWC},
      {4, 24, 128, 128, 130, 3, 2, 1, 0, 2, 1, 1, DLCONV_F32, DLCONV_NHWC},
      {4, 24, 128, 128, 130, 3, 2, 1, 0, 2, 1, 1, DLCONV_F16, DLCONV_NHWC},
      {4, 24, 128, 128, 130, 3, 2, 1, 0, 2, 1, 1, DLCONV_F16, DLCONV_NCHW},
      {9, 64, 32, 32, 256, 3, 1, 1, 1, 1, 1, 2, DLCONV_F32, DLCONV_NCHW},
      {9, 64, 32, 32, 256, 3, 1, 1, 1, 1, 1, 2, DLCONV_F16, DLCONV_NHWC},
      {16, 16, 32, 32, 48, 3, 1, 0, 2, 1, 1, 1, DLCONV_F16, DLCONV_NHWC},
      {16, 64, 32, 32, 64, 1, 1, 0, 0, 0, 0, 1, DLCONV_F16, DLCONV_NHWC},
      /* the small mma2 tiles: long reductions on small planes, groups of 16 and of 20 channels
         (outputs stored element by element), a dense layer with a channel tail */
      {32, 128, 8, 8, 128, 3, 1, 1, 1, 1, 1, 1, DLCONV_F16, DLCONV_NHWC},
      {8, 512, 7, 7, 512, 3, 1, 1, 1, 1, 1, 1, DLCONV_F16, DLCONV_NHWC},
      {8, 64, 16, 16, 64, 3, 1, 1, 1, 1, 1, 4, DLCONV_F16, DLCONV_NHWC},
      {8, 48, 16, 16, 40, 3, 2, 1, 1, 1, 1, 2, DLCONV_F16, DLCONV_NHWC},
      {32, 256, 1, 1, 100, 1, 1, 0, 0, 0, 0, 1, DLCONV_F16, DLCONV_NHWC},
      /* the F32 128 x 128 tile's float4 stores with a channel tail, and its element stores where
         4 does not divide the plane */
      {9, 32, 32, 32, 200, 3, 1, 1, 1, 1, 1, 1, DLCONV_F32, DLCONV_NCHW},
      {8, 32, 29, 29, 512, 3, 1, 0, 0, 0, 0, 1, DLCONV_F32, DLCONV_NCHW},
      /* gspc2 (AUTO on grouped F16 NHWC layers with 2, 4, 8 or 16 channels in and out per group):
         3x3 (unrolled) with stride and asymmetric padding, 1x1 and 5x5 */
      {8, 32, 32, 32, 32, 3, 1, 1, 1, 1, 1, 8, DLCONV_F16, DLCONV_NHWC},
      {4, 64, 17, 15, 64, 3, 2, 1, 0, 0, 1, 8, DLCONV_F16, DLCONV_NHWC},
      {4, 128, 8, 8, 128, 3, 1, 1, 1, 1, 1, 8, DLCONV_F16, DLCONV_NHWC},
      {4, 32, 16, 16, 32, 1, 1, 0, 0, 0, 0, 16, DLCONV_F16, DLCONV_NHWC},
      {2, 64, 12, 12, 64, 5, 1, 2, 1, 2, 1, 16, DLCONV_F16, DLCONV_NHWC},
  };
  long fails = 0;
  for (size_t i = 0; i < ARRAY_LEN(L); i++) {
    dlconv_conv2d_desc d;
    dlconv_conv2d_desc_init(&d, L[i].n, L[i].c_in, L[i].h, L[i].w, L[i].c_out, L[i].k, L[i].k);
    d.stride_h = d.stride_w = L[i].stride;
    d.pad_top = L[i].pt; d.pad_bottom = L[i].pb; d.pad_left = L[i].pl; d.pad_right = L[i].pr;
    d.groups = L[i].groups;
    d.layout = L[i].lay;
    d.out_min = -0.25f;
    fp_case c;
    fp_case_init(&c, &d, 1, L[i].dt, 100 + i);
    const dlconv_algo a[] = {DLCONV_ALGO_AUTO, DLCONV_ALGO_IM2COL_GEMM};
    for (size_t k = 0; k < ARRAY_LEN(a); k++) {
      char msg[512] = "", buf[256];
      const int r = run_fp(&c, a[k], msg, sizeof msg);
      printf("large #%zu %s %s %s: %s\n", i, L[i].dt == DLCONV_F16 ? "f16" : "f32", L[i].lay ? "nhwc" : "nchw",
             algo_name(a[k]), r > 0 ? g_last_kernel : "FAIL");
      if (r <= 0) {
        fails++;
        print_error("large #%zu %s %s: %s\n", i, desc_str(&c.d, buf, sizeof buf), algo_name(a[k]), msg[0] ? msg : "unsupported");
      }
    }
    fp_case_free(&c);
  }
  assert_int_equal(fails, 0);
}

/* int8: the GPU's bytes equal the CPU's (AUTO plan) for U8 and S8, per-channel scales, zero points,
   clamp, bias, both layouts, the int8 algorithms (DIRECT, SPARSE_CSR, AUTO). */
static void test_int8_equals_cpu(void **state) {
  (void)state;
  long runs = 0, fails = 0;
  for (int idx = 0; idx < g_shapes / 2; idx++) {
    if (g_only >= 0 && idx != g_only) continue;
    dlconv_conv2d_desc d;
    int bias;
    gen_shape(idx, &d, &bias);
    rng_t r = rng_seed_salted(g_seed ^ 0x5a5a, (uint64_t)idx);
    for (int dt = 0; dt < 2; dt++)
      for (int lay = 0; lay < 2; lay++) {
        d.dtype = dt ? DLCONV_S8 : DLCONV_U8;
        d.layout = lay ? DLCONV_NHWC : DLCONV_NCHW;
        if (d.out_min == -0.5f) d.out_max = 0.75f;
        const int64_t ho = oracle_out_dim(d.h_in, d.pad_top, d.pad_bottom, d.k_h, d.dilation_h, d.stride_h);
        const int64_t wo = oracle_out_dim(d.w_in, d.pad_left, d.pad_right, d.k_w, d.dilation_w, d.stride_w);
        const size_t nx = (size_t)d.n * d.c_in * d.h_in * d.w_in, nw = (size_t)d.c_out * (d.c_in / d.groups) * d.k_h * d.k_w;
        const size_t ny = (size_t)d.n * d.c_out * ho * wo;
        uint8_t *x = malloc(nx), *y_cpu = malloc(ny), *y_gpu = malloc(ny);
        int8_t *w = malloc(nw);
        int32_t *b = malloc((size_t)d.c_out * 4);
        float *ws = malloc((size_t)d.c_out * 4);
        for (size_t i = 0; i < nx; i++) x[i] = (uint8_t)rng_int(&r, 0, 255);
        for (size_t i = 0; i < nw; i++) w[i] = (int8_t)(rng_chance(&r, 0.2) ? 0 : rng_int(&r, -128, 127));
        for (int i = 0; i < d.c_out; i++) {
          b[i] = rng_int(&r, -5000, 5000);
          ws[i] = rng_float(&r, 0.001f, 0.02f);
        }
        dlconv_quant q = {rng_float(&r, 0.01f, 0.05f), dt ? rng_int(&r, -20, 20) : rng_int(&r, 0, 255), ws,
                          rng_chance(&r, 0.5) ? d.c_out : 1, rng_float(&r, 0.05f, 0.5f), dt ? rng_int(&r, -10, 10) : rng_int(&r, 0, 40)};
        assert_int_equal(dlconv_conv2d(&d, x, w, bias ? b : NULL, y_cpu, &q, NULL), DLCONV_OK);
        const dlconv_algo qa[] = {DLCONV_ALGO_AUTO, DLCONV_ALGO_DIRECT, DLCONV_ALGO_SPARSE_CSR};
        for (size_t a = 0; a < ARRAY_LEN(qa); a++) {
          dlconv_options o;
          dlconv_options_init(&o);
          o.isa = DLCONV_ISA_CUDA;
          o.algo = qa[a];
          dlconv_plan *p;
          dlconv_status st = dlconv_plan_conv2d(&p, &d, w, bias ? b : NULL, &q, &o);
          char buf[256];
          runs++;
          if (st != DLCONV_OK) {
            fails++;
            print_error("int8 shape #%d %s algo %s: plan %s: %s\n", idx, desc_str(&d, buf, sizeof buf),
                        algo_name(qa[a]), dlconv_status_string(st), dlconv_last_error());
            continue;
          }
          void *dx = dev_copy(x, nx), *dy = dev_copy(NULL, ny);
          st = dlconv_execute(p, dx, dy, NULL);
          cudaMemcpy(y_gpu, dy, ny, cudaMemcpyDeviceToHost);
          size_t bad = ny;
          for (size_t i = 0; i < ny; i++)
            if (y_gpu[i] != y_cpu[i]) { bad = i; break; }
          if (st != DLCONV_OK || bad < ny) {
            fails++;
            print_error("int8 shape #%d %s algo %s: %s; y[%zu] gpu %d cpu %d\n", idx, desc_str(&d, buf, sizeof buf),
                        algo_name(qa[a]), dlconv_status_string(st), bad, bad < ny ? y_gpu[bad] : 0,
                        bad < ny ? y_cpu[bad] : 0);
          }
          cudaFree(dx);
          cudaFree(dy);
          dlconv_plan_destroy(p);
        }
        free(x); free(y_cpu); free(y_gpu); free(w); free(b); free(ws);
      }
  }
  printf("cuda int8 vs cpu: %ld runs, %ld failures (bit for bit)\n", runs, fails);
  assert_int_equal(fails, 0);
}

/* int8 on the GEMM algorithms: UNSUPPORTED with a message, never a wrong answer. */
static void test_int8_gemm_refused(void **state) {
  (void)state;
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 1, 8, 5, 5, 8, 3, 3);
  d.dtype = DLCONV_U8;
  int8_t w[8 * 8 * 9] = {0};
  float ws = 0.01f;
  dlconv_quant q = {0.02f, 3, &ws, 1, 0.1f, 5};
  dlconv_options o;
  dlconv_options_init(&o);
  o.isa = DLCONV_ISA_CUDA;
  o.algo = DLCONV_ALGO_IM2COL_GEMM;
  dlconv_plan *p = (dlconv_plan *)&o;
  assert_int_equal(dlconv_plan_conv2d(&p, &d, w, NULL, &q, &o), DLCONV_ERR_UNSUPPORTED);
  assert_null(p);
  assert_non_null(strstr(dlconv_last_error(), "cuda"));
}

static void test_dense(void **state) {
  (void)state;
  const int cases[][3] = {{1, 100, 37}, {3, 64, 10}, {32, 512, 1000}, {7, 5, 129}};
  for (size_t k = 0; k < ARRAY_LEN(cases); k++)
    for (int dt = 0; dt < 2; dt++) {
      const int batch = cases[k][0], in = cases[k][1], out = cases[k][2];
      rng_t r = rng_seed(k);
      float *x = malloc((size_t)batch * in * 4), *w = malloc((size_t)in * out * 4), *b = malloc((size_t)out * 4);
      for (int i = 0; i < batch * in; i++) x[i] = (float)half_value(half_of(rng_float(&r, -1, 1)));
      for (int i = 0; i < in * out; i++) w[i] = (float)half_value(half_of(rng_float(&r, -1, 1)));
      for (int i = 0; i < out; i++) b[i] = (float)half_value(half_of(rng_float(&r, -1, 1)));
      double *ref = malloc((size_t)batch * out * 8), *mag = malloc((size_t)batch * out * 8);
      oracle_dense(batch, in, out, x, w, b, 0.f, INFINITY, ref, mag);
      const dlconv_dtype t = dt ? DLCONV_F16 : DLCONV_F32;
      const size_t es = dt ? 2 : 4;
      void *hx = as_dtype(x, (size_t)batch * in, t), *hw = as_dtype(w, (size_t)in * out, t), *hb = as_dtype(b, (size_t)out, t);
      dlconv_options o;
      dlconv_options_init(&o);
      o.isa = DLCONV_ISA_CUDA;
      dlconv_plan *p;
      assert_int_equal(dlconv_plan_dense(&p, batch, in, out, t, hw, hb, 0.f, INFINITY, NULL, &o), DLCONV_OK);
      void *dx = dev_copy(hx, (size_t)batch * in * es), *dy = dev_copy(NULL, (size_t)batch * out * es);
      assert_int_equal(dlconv_execute(p, dx, dy, NULL), DLCONV_OK);
      void *y = malloc((size_t)batch * out * es);
      assert_int_equal(cudaMemcpy(y, dy, (size_t)batch * out * es, cudaMemcpyDeviceToHost), cudaSuccess);
      for (int i = 0; i < batch * out; i++) {
        const double v = dt ? half_value(((uint16_t *)y)[i]) : ((float *)y)[i];
        const double tol = (dt ? fabs(ref[i]) * 0x1p-11 : 0) + 4e-6 * sqrt((double)in) * mag[i] + 1e-7;
        if (!(fabs(v - ref[i]) <= tol)) {
          print_error("dense %dx%d>%d %s y[%d] = %g, oracle %g\n", batch, in, out, dt ? "f16" : "f32", i, v, ref[i]);
          fail();
        }
      }
      cudaFree(dx); cudaFree(dy);
      free(x); free(w); free(b); free(ref); free(mag); free(hx); free(hw); free(hb); free(y);
      dlconv_plan_destroy(p);
    }
}

/* The caller's stream: execute is queued on it (and finished after a synchronise of it). */
static void test_stream(void **state) {
  (void)state;
  fp_case c;
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 2, 16, 12, 12, 32, 3, 3);
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
  d.layout = DLCONV_NHWC;
  fp_case_init(&c, &d, 1, DLCONV_F32, 7);
  cudaStream_t s;
  assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  dlconv_options o;
  dlconv_options_init(&o);
  o.isa = DLCONV_ISA_CUDA;
  o.cuda_stream = s;
  dlconv_plan *p;
  assert_int_equal(dlconv_plan_conv2d(&p, &c.d, c.w, c.b, NULL, &o), DLCONV_OK);
  float *dx = dev_copy(c.x, c.nx * 4), *dy = dev_copy(NULL, c.ny * 4);
  for (int i = 0; i < 3; i++) assert_int_equal(dlconv_execute(p, dx, dy, NULL), DLCONV_OK);
  assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
  float *y = malloc(c.ny * 4);
  assert_int_equal(cudaMemcpy(y, dy, c.ny * 4, cudaMemcpyDeviceToHost), cudaSuccess);
  for (size_t i = 0; i < c.ny; i++) assert_true(fabs(y[i] - c.ref[i]) <= 1e-4 * c.mag[i] + 1e-6);
  free(y);
  cudaFree(dx);
  cudaFree(dy);
  dlconv_plan_destroy(p);
  cudaStreamDestroy(s);
  fp_case_free(&c);
}

/* Host memory where device memory is required: INVALID_ARG with a message, nothing written. */
static void test_host_pointers(void **state) {
  (void)state;
  fp_case c;
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 1, 4, 6, 6, 4, 3, 3);
  fp_case_init(&c, &d, 0, DLCONV_F32, 9);
  dlconv_options o;
  dlconv_options_init(&o);
  o.isa = DLCONV_ISA_CUDA;
  dlconv_plan *p;
  assert_int_equal(dlconv_plan_conv2d(&p, &c.d, c.w, NULL, NULL, &o), DLCONV_OK);
  float *dx = dev_copy(c.x, c.nx * 4), *dy = dev_copy(NULL, c.ny * 4);
  float *hy = malloc(c.ny * 4);
  memset(hy, 0x7f, c.ny * 4);
  assert_int_equal(dlconv_execute(p, c.x, dy, NULL), DLCONV_ERR_INVALID_ARG);
  assert_non_null(strstr(dlconv_last_error(), "x is not device memory"));
  assert_int_equal(dlconv_execute(p, dx, hy, NULL), DLCONV_ERR_INVALID_ARG);
  assert_non_null(strstr(dlconv_last_error(), "y is not device memory"));
  for (size_t i = 0; i < c.ny; i++) assert_int_equal(((uint32_t *)hy)[i], 0x7f7f7f7fu);
  char ws[256];
  assert_int_equal(dlconv_execute(p, dx, dy, ws + (64 - (uintptr_t)ws % 64) % 64), DLCONV_ERR_INVALID_ARG);
  /* the one-shot call with host buffers: refused too */
  assert_int_equal(dlconv_conv2d(&c.d, c.x, c.w, NULL, hy, NULL, &o), DLCONV_ERR_INVALID_ARG);
  /* and a good call still works afterwards (no CUDA error left behind) */
  assert_int_equal(dlconv_execute(p, dx, dy, NULL), DLCONV_OK);
  assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
  free(hy);
  cudaFree(dx);
  cudaFree(dy);
  dlconv_plan_destroy(p);
  fp_case_free(&c);
}

/* ISA AUTO never picks CUDA, even with a GPU. */
static void test_auto_never_cuda(void **state) {
  (void)state;
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 1, 8, 8, 8, 8, 3, 3);
  float w[8 * 8 * 9] = {0};
  dlconv_plan *p;
  assert_int_equal(dlconv_plan_conv2d(&p, &d, w, NULL, NULL, NULL), DLCONV_OK);
  dlconv_plan_info info;
  dlconv_plan_query(p, &info);
  assert_int_not_equal(info.isa, DLCONV_ISA_CUDA);
  dlconv_plan_destroy(p);
}
#endif

/* No GPU: ISA_CUDA is not available and a plan for it is UNSUPPORTED with the reason. */
static int refused_without_gpu(void) {
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 1, 4, 5, 5, 4, 3, 3);
  float w[4 * 4 * 9] = {0};
  dlconv_options o;
  dlconv_options_init(&o);
  o.isa = DLCONV_ISA_CUDA;
  dlconv_plan *p = NULL;
  dlconv_status st = dlconv_plan_conv2d(&p, &d, w, NULL, NULL, &o);
  if (st != DLCONV_ERR_UNSUPPORTED || p || !strstr(dlconv_last_error(), "cuda")) {
    fprintf(stderr, "FAIL: without a GPU, isa cuda planned to %s: %s\n", dlconv_status_string(st), dlconv_last_error());
    return 0;
  }
  printf("isa cuda refused as it should be: %s\n", dlconv_last_error());
  return 1;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--shapes") && i + 1 < argc) g_shapes = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seed") && i + 1 < argc) g_seed = strtoull(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) g_only = atoi(argv[++i]);
  }
  if (!dlconv_isa_available(DLCONV_ISA_CUDA)) {
    if (!refused_without_gpu()) return 1;
    printf("SKIP: no CUDA GPU here (or CUDA not in this build): the CUDA tests need one; "
           "scripts/test_cuda.sh runs them on a GPU machine\n");
    return 77;
  }
#if defined(DLC_HAVE_CUDA)
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_host_pointers), cmocka_unit_test(test_auto_never_cuda), cmocka_unit_test(test_stream),
      cmocka_unit_test(test_int8_gemm_refused), cmocka_unit_test(test_dense), cmocka_unit_test(test_large_tiles),
      cmocka_unit_test(test_fp_sweep),
      cmocka_unit_test(test_int8_equals_cpu),
  };
  return cmocka_run_group_tests_name("cuda", tests, NULL, NULL);
#else
  return 1;
#endif
}
