/* test_ukernel_csr.c - the sparse_csr algorithm: every ISA's micro-kernel at every tile edge,
 * then the driver through the public API (dense weights with exact zeros and the caller's CSR)
 * for every available ISA, against a naive double-precision convolution written here. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arch/families.h"
#include "dlconv.h"
#include "support/compare.h"
#include "support/guard_pages.h"
#include "support/kernel_tables.h"
#include "support/layer.h"
#include "support/rng.h"
#include "support/skip.h"

/* ---- helpers ------------------------------------------------------------------------------- */

/* Agreement within fp32 accumulation error of a sum whose terms add up to mag in magnitude. */
static int csr_close(float got, double want, double mag) {
  if (isnan(want)) return isnan(got);
  if (isinf(want)) return got == want;
  return fabs((double)got - want) <= 1e-5 * mag + 1e-6;
}

/* ---- micro-kernels ------------------------------------------------------------------------- */

#define KROWS 10
#define KCOLS 37

/* Per-row nonzero counts: empty, single and full rows next to ordinary ones. */
static const int32_t kernel_nnz[KROWS] = {0, 1, KCOLS, 3, 0, 17, 1, 5, KCOLS - 1, 2};

static void check_kernel_once(const dlc_f32_csr_family *fam, size_t npix, float lo, float hi,
                              const region *xg, int nan_bias) {
  size_t total = 0;
  for (int r = 0; r < KROWS; r++) total += (size_t)kernel_nnz[r];
  float val[KROWS * KCOLS], bias[KROWS];
  int32_t off[KROWS * KCOLS], colv[KROWS * KCOLS];
  /* The operand ends exactly at the guard page: a kernel reading past a row's npix faults on
     the last row. Rows are npix apart, so the operand is as tight as the caller's tensor. */
  float *x = (float *)(void *)xg->hi - (size_t)KCOLS * npix;
  for (size_t i = 0; i < (size_t)KCOLS * npix; i++) x[i] = xorshift_float();
  size_t i = 0;
  for (int r = 0; r < KROWS; r++) {
    bias[r] = xorshift_float();
    /* Distinct columns; the last row always uses the operand's last row. */
    int32_t perm[KCOLS];
    for (int k = 0; k < KCOLS; k++) perm[k] = k;
    for (int k = KCOLS - 1; k > 0; k--) {
      int j = (int)(xorshift_u32() % (uint32_t)(k + 1));
      int32_t t = perm[k];
      perm[k] = perm[j];
      perm[j] = t;
    }
    for (int j = 0; j < kernel_nnz[r]; j++, i++) {
      colv[i] = r == KROWS - 1 && j == 0 ? KCOLS - 1 : perm[j];
      if (r == KROWS - 1 && j > 0 && colv[i] == KCOLS - 1) colv[i] = perm[0];
      val[i] = xorshift_float();
      off[i] = colv[i] * (int32_t)npix;
    }
  }
  if (nan_bias) bias[3] = NAN;
  const size_t ldy = npix + 7;
  float *y = malloc((KROWS * ldy + 1) * sizeof(float));
  assert_non_null(y);
  /* Odd start: the kernel must not assume an aligned output. */
  float *yo = y + 1;
  for (size_t j = 0; j < KROWS * ldy; j++) yo[j] = 12345.0f;
  fam->spmm(KROWS, npix, x, kernel_nnz, val, off, bias, yo, ldy, lo, hi);
  i = 0;
  for (int r = 0; r < KROWS; r++) {
    for (size_t p = 0; p < npix; p++) {
      double acc = bias[r], mag = fabs((double)bias[r]);
      for (int j = 0; j < kernel_nnz[r]; j++) {
        double t = (double)val[i + (size_t)j] * x[(size_t)off[i + (size_t)j] + p];
        acc += t;
        mag += fabs(t);
      }
      const double want = clampd(acc, lo, hi);
      if (!csr_close(yo[(size_t)r * ldy + p], want, mag))
        fail_msg("%s npix=%zu row=%d pixel=%zu: got %g want %g", fam->name, npix, r, p,
                 (double)yo[(size_t)r * ldy + p], want);
    }
    for (size_t p = npix; p < ldy; p++)
      if (yo[(size_t)r * ldy + p] != 12345.0f)
        fail_msg("%s npix=%zu row=%d wrote past the row at %zu", fam->name, npix, r, p);
    i += (size_t)kernel_nnz[r];
  }
  free(y);
}

static void test_kernel_edges(void **state) {
  const dlconv_isa isa = *(const dlconv_isa *)*state;
  const dlc_isa_kernels *k = dlc_kernels_for(isa);
  if (!k->csr) skip_test("kernel edges", "no csr family in this table");
  const dlc_f32_csr_family *fam = k->csr;
  assert_non_null(fam->spmm);
  assert_true(fam->nr >= 1);
  assert_true(strstr(fam->name, "f32_csr_") == fam->name);
  const size_t max_pix = 3 * fam->nr + 17;
  region xg;
  region_open(&xg, (size_t)KCOLS * max_pix * sizeof(float));
  /* Every pixel count up to three full tiles and a remainder: all masks and tile counts. */
  for (size_t npix = 1; npix <= max_pix; npix++) {
    check_kernel_once(fam, npix, -INFINITY, INFINITY, &xg, 0);
    check_kernel_once(fam, npix, -0.3f, 0.4f, &xg, npix % 5 == 0);
  }
  region_close(&xg);
}

/* The transposition that NHWC layers go through, at every block edge. */
static void test_transpose_edges(void **state) {
  const dlconv_isa isa = *(const dlconv_isa *)*state;
  const dlc_isa_kernels *k = dlc_kernels_for(isa);
  if (!k->csr) skip_test("transpose edges", "no csr family in this table");
  assert_non_null(k->csr->transpose);
  for (size_t rows = 1; rows <= 37; rows++)
    for (size_t cols = 1; cols <= 37; cols += (cols < 18 ? 1 : 6)) {
      const size_t ldi = cols + rows % 3, ldo = rows + cols % 5;
      region ig;
      region_open(&ig, rows * ldi * sizeof(float));
      /* The last input row ends at the guard page: no load past a row's cols. */
      float *in = (float *)(void *)ig.hi - ((rows - 1) * ldi + cols);
      for (size_t i = 0; i < (rows - 1) * ldi + cols; i++) in[i] = xorshift_float();
      float *out = malloc((cols * ldo + 1) * sizeof(float));
      for (size_t i = 0; i < cols * ldo + 1; i++) out[i] = 12345.0f;
      k->csr->transpose(rows, cols, in, ldi, out + 1, ldo);
      assert_true(out[0] == 12345.0f);
      for (size_t c = 0; c < cols; c++)
        for (size_t r = 0; r < ldo; r++) {
          const float want = r < rows ? in[r * ldi + c] : 12345.0f; /* nothing past a column */
          if (out[1 + c * ldo + r] != want)
            fail_msg("%s transpose %zux%zu: out[%zu][%zu] = %g, want %g", k->name, rows, cols, c, r,
                     (double)out[1 + c * ldo + r], (double)want);
        }
      free(out);
      region_close(&ig);
    }
}

/* ---- driver through the API ----------------------------------------------------------------- */

typedef struct shape {
  layer_shape s;
  float lo, hi;
} shape;

static const shape shapes[] = {
    /* n c_in  h  w c_out kh kw sh sw dh dw pt pb pl pr groups lo hi */
    {{2, 19, 7, 5, 13, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, -INFINITY, INFINITY},   /* 1x1: operand is x */
    {{1, 5, 40, 37, 7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, 0.0f, INFINITY},        /* many pixel blocks */
    {{2, 6, 9, 11, 4, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1}, -INFINITY, INFINITY},    /* strided 1x1 */
    {{1, 8, 9, 11, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, -INFINITY, INFINITY},   /* 3x3 same */
    {{2, 5, 13, 12, 6, 3, 3, 2, 1, 2, 1, 0, 2, 1, 0, 1}, -0.5f, 0.5f},          /* asym pad, dil */
    {{1, 12, 10, 9, 18, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3}, 0.0f, 6.0f},          /* groups */
    {{2, 16, 11, 10, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 16}, -INFINITY, INFINITY}, /* depthwise */
    {{1, 6, 12, 13, 12, 5, 5, 1, 2, 2, 2, 4, 3, 4, 5, 6}, -INFINITY, INFINITY}, /* dw multiplier 2 */
    {{3, 7, 1, 1, 9, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, -INFINITY, INFINITY},    /* 1x1 image */
    {{1, 4, 1, 1, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, -INFINITY, INFINITY},    /* 3x3 on 1x1 */
    {{1, 3, 20, 19, 8, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1}, -INFINITY, INFINITY},  /* 7x7 stem */
    {{1, 3, 33, 35, 5, 3, 2, 1, 3, 1, 2, 2, 0, 0, 3, 1}, -1.0f, 1.0f},          /* odd everything */
    {{1, 4, 6, 7, 6, 2, 3, 3, 1, 3, 1, 2, 2, 0, 1, 2}, -INFINITY, INFINITY},    /* tall stride */
    {{2, 5, 13, 12, 6, 3, 3, 1, 1, 2, 3, 0, 2, 1, 3, 1}, -0.5f, 0.5f},          /* stride 1: slabs */
    {{1, 8, 9, 10, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8}, -INFINITY, INFINITY},   /* dw stride 1 */
    {{1, 4, 7, 9, 8, 5, 3, 1, 1, 1, 2, 2, 1, 0, 3, 4}, 0.0f, 6.0f},             /* g4 x2, stride 1 */
    {{1, 3, 5, 6, 4, 1, 1, 1, 1, 1, 1, 1, 0, 2, 1, 1}, -INFINITY, INFINITY},    /* padded 1x1 */
    {{1, 6, 40, 33, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, -INFINITY, INFINITY},  /* many slab jobs */
    {{2, 24, 6, 5, 16, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2}, -INFINITY, INFINITY},  /* 1x1, groups */
};

static size_t at(const dlconv_conv2d_desc *d, int64_t n, int64_t c, int64_t y, int64_t x, int64_t C,
                 int64_t H, int64_t W) {
  (void)d;
  return d->layout == DLCONV_NCHW ? (size_t)(((n * C + c) * H + y) * W + x)
                                  : (size_t)(((n * H + y) * W + x) * C + c);
}

/* The naive convolution in double; zero weights are skipped, as a sparse layer's are. */
static void conv_ref(const dlconv_conv2d_desc *d, const float *x, const float *w, const float *bias,
                     double *y, double *mag) {
  const int64_t ho = (d->h_in + d->pad_top + d->pad_bottom - d->dilation_h * (d->k_h - 1) - 1) / d->stride_h + 1;
  const int64_t wo = (d->w_in + d->pad_left + d->pad_right - d->dilation_w * (d->k_w - 1) - 1) / d->stride_w + 1;
  const int64_t cig = d->c_in / d->groups, cog = d->c_out / d->groups;
  for (int64_t n = 0; n < d->n; n++)
    for (int64_t oc = 0; oc < d->c_out; oc++)
      for (int64_t oy = 0; oy < ho; oy++)
        for (int64_t ox = 0; ox < wo; ox++) {
          const int64_t g = oc / cog;
          double acc = bias ? bias[oc] : 0.0, m = fabs(acc);
          for (int64_t ic = 0; ic < cig; ic++)
            for (int64_t ky = 0; ky < d->k_h; ky++)
              for (int64_t kx = 0; kx < d->k_w; kx++) {
                const int64_t iy = oy * d->stride_h - d->pad_top + ky * d->dilation_h;
                const int64_t ix = ox * d->stride_w - d->pad_left + kx * d->dilation_w;
                if (iy < 0 || iy >= d->h_in || ix < 0 || ix >= d->w_in) continue;
                const float wv = w[((oc * cig + ic) * d->k_h + ky) * d->k_w + kx];
                if (wv == 0.0f) continue;
                const double t = (double)wv * x[at(d, n, g * cig + ic, iy, ix, d->c_in, d->h_in, d->w_in)];
                acc += t;
                m += fabs(t);
              }
          const size_t o = at(d, n, oc, oy, ox, d->c_out, ho, wo);
          y[o] = clampd(acc, d->out_min, d->out_max);
          mag[o] = m;
        }
}

/* A pool that runs the tasks serially, last first: tasks must not depend on their order. */
static void reverse_pool(void *pool, dlconv_task_fn fn, void *arg, size_t n) {
  (void)pool;
  for (size_t i = n; i-- > 0;) fn(arg, i);
}

typedef enum wmode { W_DENSE, W_CSR } wmode;

#define GUARD 64

/* Plans d with w (dense, or converted to a CSR with shuffled columns), executes it and checks
   y against the oracle, the guard after y, the workspace's guard and the plan info. */
static void run_case(const dlconv_conv2d_desc *d, dlconv_isa isa, int threads, int pool, wmode mode,
                     const float *x, const float *w, const float *bias) {
  int32_t ho, wo;
  assert_int_equal(dlconv_conv2d_output_shape(d, &ho, &wo), DLCONV_OK);
  const size_t cig = (size_t)(d->c_in / d->groups);
  const size_t cols = cig * (size_t)d->k_h * (size_t)d->k_w, wn = (size_t)d->c_out * cols;
  const size_t yn = (size_t)d->n * (size_t)d->c_out * (size_t)ho * (size_t)wo;

  dlconv_options opt = forced_options(DLCONV_ALGO_SPARSE_CSR, isa, threads);
  if (pool) opt.parallel_for = reverse_pool;

  size_t nnz = 0;
  for (size_t i = 0; i < wn; i++) nnz += w[i] != 0.0f;
  dlconv_plan *plan = NULL;
  dlconv_status st;
  int32_t *row_ptr = NULL, *col_idx = NULL;
  float *vals = NULL;
  if (mode == W_DENSE) {
    st = dlconv_plan_conv2d(&plan, d, w, bias, NULL, &opt);
  } else {
    row_ptr = malloc(((size_t)d->c_out + 1) * sizeof(int32_t));
    col_idx = malloc((nnz + 1) * sizeof(int32_t));
    vals = malloc((nnz + 1) * sizeof(float));
    size_t i = 0;
    for (size_t r = 0; r < (size_t)d->c_out; r++) {
      row_ptr[r] = (int32_t)i;
      const size_t b = i;
      for (size_t k = 0; k < cols; k++)
        if (w[r * cols + k] != 0.0f) col_idx[i] = (int32_t)k, vals[i] = w[r * cols + k], i++;
      for (size_t k = i - b; k > 1; k--) { /* shuffle the row: the plan must sort it */
        size_t j = b + xorshift_u32() % k, t = b + k - 1;
        int32_t c = col_idx[t];
        float v = vals[t];
        col_idx[t] = col_idx[j], vals[t] = vals[j];
        col_idx[j] = c, vals[j] = v;
      }
    }
    row_ptr[d->c_out] = (int32_t)i;
    dlconv_csr c = {d->c_out, (int32_t)cols, (int32_t)nnz, vals, col_idx, row_ptr};
    st = dlconv_plan_conv2d_csr(&plan, d, &c, bias, NULL, &opt);
  }
  const dlc_isa_kernels *kt = dlc_kernels_for(isa);
  if (!kt || !kt->csr) { /* no kernel for this ISA: refused, never a fallback */
    assert_int_equal(st, DLCONV_ERR_UNSUPPORTED);
    goto out;
  }
  if (st != DLCONV_OK) fail_msg("plan failed: %s", dlconv_last_error());

  dlconv_plan_info info;
  assert_int_equal(dlconv_plan_query(plan, &info), DLCONV_OK);
  assert_int_equal(info.algo, DLCONV_ALGO_SPARSE_CSR);
  assert_int_equal(info.isa, isa);
  assert_true(info.weight_density == (double)nnz / (double)wn);
  assert_true(info.macs == (int64_t)d->n * d->c_out * ho * wo * (int64_t)cols);
  assert_true(info.workspace_bytes == dlconv_plan_workspace_size(plan));
  assert_true(strstr(info.kernel, "f32_csr_") == info.kernel);

  double *ref = malloc(yn * sizeof(double)), *mag = malloc(yn * sizeof(double));
  float *y = malloc((yn + GUARD) * sizeof(float));
  conv_ref(d, x, w, bias, ref, mag);
  /* Twice: with the library's workspace, then with the caller's (guarded at its end). */
  for (int rep = 0; rep < 2; rep++) {
    for (size_t i = 0; i < yn + GUARD; i++) y[i] = i < yn ? NAN : -777.0f;
    unsigned char *ws = NULL;
    const size_t wsb = info.workspace_bytes;
    if (rep == 1) {
      ws = aligned_alloc(64, (wsb + 64 + 63) / 64 * 64);
      memset(ws + wsb, 0xA5, 64);
    }
    assert_int_equal(dlconv_execute(plan, x, y, ws), DLCONV_OK);
    for (size_t i = 0; i < yn; i++)
      if (!csr_close(y[i], ref[i], mag[i]))
        fail_msg("isa=%d %s %s threads=%d n=%d c_in=%d %dx%d c_out=%d k=%dx%d g=%d nnz=%zu: y[%zu] = %g, want %g",
                 isa, mode == W_DENSE ? "dense" : "csr", d->layout == DLCONV_NCHW ? "nchw" : "nhwc", threads,
                 d->n, d->c_in, d->h_in, d->w_in, d->c_out, d->k_h, d->k_w, d->groups, nnz, i, (double)y[i], ref[i]);
    for (size_t i = yn; i < yn + GUARD; i++) assert_true(y[i] == -777.0f);
    if (ws) {
      for (size_t i = 0; i < 64; i++) assert_int_equal(ws[wsb + i], 0xA5);
      free(ws);
    }
  }
  free(ref);
  free(mag);
  free(y);
out:
  dlconv_plan_destroy(plan);
  free(row_ptr);
  free(col_idx);
  free(vals);
}

/* Weights with exact zeros at the given density (0: all zero, 1: none); density < 0: input
   channels pruned (only channels ic % 3 == 0 kept, dense), so the operand holds a few channels. */
static void make_weights(float *w, size_t n, double density, size_t taps_per_channel, size_t cin_g) {
  for (size_t i = 0; i < n; i++) {
    const int keep = density < 0.0 ? (i / taps_per_channel) % cin_g % 3 == 0
                                    : density >= 1.0 || (double)(xorshift_u32() % 100000) < density * 100000.0;
    float v = xorshift_float();
    if (v == 0.0f) v = 0.5f;
    w[i] = keep ? v : 0.0f;
  }
}

static void sweep(dlconv_isa isa, wmode mode) {
  static const double densities[] = {0.0, 0.1, 0.5, 1.0, -1.0};
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
    const layer_shape *sh = &shapes[si].s;
    const size_t xn = (size_t)sh->n * (size_t)sh->c_in * (size_t)sh->h * (size_t)sh->w;
    const size_t wn = (size_t)sh->c_out * (size_t)(sh->c_in / sh->groups) * (size_t)sh->kh * (size_t)sh->kw;
    float *x = malloc(xn * sizeof(float)), *w = malloc(wn * sizeof(float)), *bias = malloc((size_t)sh->c_out * sizeof(float));
    for (size_t i = 0; i < xn; i++) x[i] = xorshift_float();
    for (int32_t i = 0; i < sh->c_out; i++) bias[i] = xorshift_float();
    for (int layout = 0; layout < 2; layout++) {
      dlconv_conv2d_desc d;
      layer_desc(&d, sh, (dlconv_layout)layout, shapes[si].lo, shapes[si].hi);
      for (size_t di = 0; di < sizeof densities / sizeof densities[0]; di++) {
        make_weights(w, wn, densities[di], (size_t)sh->kh * (size_t)sh->kw, (size_t)(sh->c_in / sh->groups));
        run_case(&d, isa, 1, 0, mode, x, w, di == 1 ? NULL : bias);
        run_case(&d, isa, 3, 0, mode, x, w, bias);
        run_case(&d, isa, 4, 1, mode, x, w, bias);
      }
    }
    free(x);
    free(w);
    free(bias);
  }
}

static void test_api_dense(void **state) { sweep(*(const dlconv_isa *)*state, W_DENSE); }
static void test_api_csr(void **state) { sweep(*(const dlconv_isa *)*state, W_CSR); }

/* nnz == 0 through the CSR entry point: the output is the clamped bias. */
static void test_api_csr_empty(void **state) {
  const dlconv_isa isa = *(const dlconv_isa *)*state;
  if (!dlc_kernels_for(isa)->csr) skip_test("api csr empty", "no csr family in this table");
  for (int layout = 0; layout < 2; layout++) {
    dlconv_conv2d_desc d;
    dlconv_conv2d_desc_init(&d, 2, 6, 5, 4, 4, 3, 3);
    d.layout = (dlconv_layout)layout;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    d.out_min = -0.25f, d.out_max = 0.25f;
    const int32_t row_ptr[5] = {0, 0, 0, 0, 0};
    const float bias[4] = {-1.0f, 0.1f, 2.0f, NAN};
    dlconv_csr c = {4, 6 * 9, 0, NULL, NULL, row_ptr};
    const dlconv_options opt = forced_options(DLCONV_ALGO_SPARSE_CSR, isa, 0);
    dlconv_plan *plan = NULL;
    if (dlconv_plan_conv2d_csr(&plan, &d, &c, bias, NULL, &opt) != DLCONV_OK)
      fail_msg("plan: %s", dlconv_last_error());
    dlconv_plan_info info;
    assert_int_equal(dlconv_plan_query(plan, &info), DLCONV_OK);
    assert_true(info.weight_density == 0.0);
    float x[2 * 6 * 5 * 4], y[2 * 4 * 5 * 4 + 1];
    for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = xorshift_float();
    y[2 * 4 * 20] = -777.0f;
    assert_int_equal(dlconv_execute(plan, x, y, NULL), DLCONV_OK);
    for (int n = 0; n < 2; n++)
      for (int oc = 0; oc < 4; oc++)
        for (int p = 0; p < 20; p++) {
          const float v = layout == DLCONV_NCHW ? y[(n * 4 + oc) * 20 + p] : y[(n * 20 + p) * 4 + oc];
          const float want[4] = {-0.25f, 0.1f, 0.25f, NAN};
          if (oc == 3) assert_true(isnan(v));
          else assert_true(v == want[oc]);
        }
    assert_true(y[2 * 4 * 20] == -777.0f);
    dlconv_plan_destroy(plan);
  }
}

/* A NaN input reaching a nonzero weight stays NaN through a ReLU6 clamp. */
static void test_api_nan(void **state) {
  const dlconv_isa isa = *(const dlconv_isa *)*state;
  if (!dlc_kernels_for(isa)->csr) skip_test("api nan", "no csr family in this table");
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 1, 3, 4, 5, 2, 1, 1);
  d.out_min = 0.0f, d.out_max = 6.0f;
  const float w[6] = {1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 2.0f};
  float x[60], y[40];
  for (int i = 0; i < 60; i++) x[i] = 1.0f;
  x[0] = NAN;        /* channel 0, pixel 0: row 0 uses it */
  x[2 * 20 + 7] = NAN; /* channel 2, pixel 7: row 1 uses it */
  const dlconv_options opt = forced_options(DLCONV_ALGO_SPARSE_CSR, isa, 0);
  assert_int_equal(dlconv_conv2d(&d, x, w, NULL, y, NULL, &opt), DLCONV_OK);
  for (int p = 0; p < 20; p++) {
    assert_true(p == 0 ? isnan(y[p]) : y[p] == 1.0f);
    assert_true(p == 7 ? isnan(y[20 + p]) : y[20 + p] == 2.0f);
  }
}

/* Every test once per table under test, each run a cmocka test of its own with the table's ISA as
   its state: a test's runs first, then the next test's. */
int main(void) {
  static const struct CMUnitTest per_isa[] = {
      cmocka_unit_test(test_kernel_edges), cmocka_unit_test(test_transpose_edges), cmocka_unit_test(test_api_dense),
      cmocka_unit_test(test_api_csr),      cmocka_unit_test(test_api_csr_empty),   cmocka_unit_test(test_api_nan),
  };
  enum { N_PER_ISA = sizeof per_isa / sizeof per_isa[0] };
  static dlconv_isa isas[MAX_KERNEL_TABLES];
  struct CMUnitTest tests[N_PER_ISA * MAX_KERNEL_TABLES];
  const size_t n_isas = kernel_table_count();
  for (size_t i = 0; i < n_isas; i++) isas[i] = kernel_table(i)->isa;
  size_t n = 0;
  for (size_t t = 0; t < N_PER_ISA; t++)
    for (size_t i = 0; i < n_isas; i++) {
      tests[n] = per_isa[t];
      tests[n++].initial_state = &isas[i];
    }
  xorshift_state = 0x9E3779B97F4A7C15ull;
  return run_group("tests", tests, n);
}
