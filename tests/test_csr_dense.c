/* Caller CSR weights (unsorted columns, empty rows, nnz 0) through every algorithm, and dense
 * layers, against the oracle; plus a self-check of the oracle on hand-computed values. */
#include "test_common.h"

static tpool *g_pool;

/* ------------------------------------------------------------------------------------------ */

static void test_oracle_selfcheck(void **state) {
  (void)state;
  /* 1 image, 1 channel, 3x3 input 1..9, 2x2 kernel [1 2; 3 4], pad 1 on top/left only, bias 0.5 */
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 1, 1, 3, 3, 1, 2, 2);
  d.pad_top = 1;
  d.pad_left = 1;
  const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, w[4] = {1, 2, 3, 4}, b[1] = {0.5f};
  double y[9], mag[9];
  oracle_conv2d(&d, x, w, b, y, mag);
  /* y[i][j] = sum_{ky,kx} w[ky][kx] * x[i-1+ky][j-1+kx] + 0.5 */
  const double want[9] = {4.5, 11.5, 18.5, 18.5, 37.5, 47.5, 36.5, 67.5, 77.5};
  for (int i = 0; i < 9; i++) assert_true(fabs(y[i] - want[i]) < 1e-12);
  assert_true(fabs(mag[4] - 37.5) < 1e-12);
  /* clamp: NaN stays NaN, bounds apply */
  assert_true(isnan(oracle_clamp(NAN, 0, 6)));
  assert_true(oracle_clamp(-1, 0, 6) == 0 && oracle_clamp(7, 0, 6) == 6 && oracle_clamp(3, 0, 6) == 3);

  /* NCHW and NHWC give the same numbers, transposed; dense == 1x1 conv */
  rng_t r = rng_seed(1);
  dlconv_conv2d_desc a;
  dlconv_conv2d_desc_init(&a, 2, 6, 5, 4, 4, 3, 2);
  a.groups = 2; a.stride_h = 2; a.dilation_w = 2; a.pad_top = 1; a.pad_right = 2;
  const int64_t ho = oracle_out_dim(5, 1, 0, 3, 1, 2), wo = oracle_out_dim(4, 0, 2, 2, 2, 1);
  float xa[240], xb[240], wa[72], ba[4];
  for (int i = 0; i < 240; i++) xa[i] = rng_float(&r, -1, 1);
  for (int i = 0; i < 72; i++) wa[i] = rng_float(&r, -1, 1);
  for (int i = 0; i < 4; i++) ba[i] = rng_float(&r, -1, 1);
  for (int n = 0; n < 2; n++)
    for (int c = 0; c < 6; c++)
      for (int h = 0; h < 5; h++)
        for (int ww = 0; ww < 4; ww++) xb[((n * 5 + h) * 4 + ww) * 6 + c] = xa[((n * 6 + c) * 5 + h) * 4 + ww];
  double ya[256], yb[256];
  oracle_conv2d(&a, xa, wa, ba, ya, NULL);
  a.layout = DLCONV_NHWC;
  oracle_conv2d(&a, xb, wa, ba, yb, NULL);
  for (int n = 0; n < 2; n++)
    for (int c = 0; c < 4; c++)
      for (int h = 0; h < ho; h++)
        for (int ww = 0; ww < wo; ww++)
          assert_true(ya[((n * 4 + c) * ho + h) * wo + ww] == yb[((n * ho + h) * wo + ww) * 4 + c]);
  double yd[8], yc[8];
  oracle_dense(2, 3, 4, xa, wa, ba, -INFINITY, INFINITY, yd, NULL);
  dlconv_conv2d_desc dd;
  dense_desc(&dd, 2, 3, 4, -INFINITY, INFINITY);
  oracle_conv2d(&dd, xa, wa, ba, yc, NULL);
  for (int i = 0; i < 8; i++) assert_true(fabs(yd[i] - yc[i]) < 1e-12);
}

/* The tolerance: a plain float32 left-to-right sum passes; one dropped tap of a 4608-long
 * reduction (512 channels x 3x3) fails. */
static void test_tolerance_sensitivity(void **state) {
  (void)state;
  const data_opts o = {.bias = 1};
  conv_data cd;
  cd_init_same3x3(&cd, KIND_CONV, 512, 4, 4, 8, 42, &o);
  assert_int_equal(cd.K, 4608);
  float *y = malloc(cd.y_len * sizeof(float));
  /* naive float32 accumulation, NCHW, the worst ordering a real kernel would use */
  for (int oc = 0; oc < 8; oc++)
    for (int oh = 0; oh < 4; oh++)
      for (int ow = 0; ow < 4; ow++) {
        float acc = 0;
        for (int ic = 0; ic < 512; ic++)
          for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++) {
              int ih = oh - 1 + ky, iw = ow - 1 + kx;
              if (ih < 0 || ih >= 4 || iw < 0 || iw >= 4) continue;
              acc += cd.x[(ic * 4 + ih) * 4 + iw] * cd.w[((oc * 512 + ic) * 3 + ky) * 3 + kx];
            }
        y[(oc * 4 + oh) * 4 + ow] = acc + cd.bias[oc];
      }
  char msg[400];
  if (check_y(&cd, y, msg, sizeof msg)) fail_msg("float32 naive sum rejected: %s", msg);
  /* drop one tap (a weight of the middle tap with |w| >= 0.5) of output channel 3 */
  size_t tap = (((size_t)3 * 512 + 100) * 3 + 1) * 3 + 1;
  while (fabsf(cd.w[tap]) < 0.5f) tap += 9;
  double *full = malloc(cd.y_len * sizeof(double));
  memcpy(full, cd.ref, cd.y_len * sizeof(double));
  cd.w[tap] = 0;
  cd_refresh(&cd);
  for (size_t i = 0; i < cd.y_len; i++) y[i] = (float)cd.ref[i];
  memcpy(cd.ref, full, cd.y_len * sizeof(double));
  size_t bad = check_y(&cd, y, msg, sizeof msg);
  printf("  one dropped tap of K=4608: %zu of 16 outputs of that channel flagged (%s)\n", bad, msg);
  assert_true(bad >= 4);
  free(full);
  free(y);
  cd_free(&cd);
}

/* ------------------------------------------------------------------------------------------ */

static void csr_shape(int s, dlconv_conv2d_desc *d, const char **name) {
  switch (s) {
    case 0: *name = "3x3 pad1 NCHW";
      dlconv_conv2d_desc_init(d, 2, 13, 10, 9, 17, 3, 3);
      d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1; break;
    case 1: *name = "1x1 NHWC relu";
      dlconv_conv2d_desc_init(d, 1, 64, 7, 7, 33, 1, 1);
      d->layout = DLCONV_NHWC; d->out_min = 0; d->out_max = INFINITY; break;
    case 2: *name = "grouped 5x1 stride2 dil2";
      dlconv_conv2d_desc_init(d, 3, 16, 15, 8, 24, 5, 1);
      d->groups = 4; d->stride_h = 2; d->dilation_h = 2; d->pad_top = 3; d->pad_bottom = 1; break;
    case 3: *name = "depthwise x2 NHWC relu6";
      dlconv_conv2d_desc_init(d, 1, 12, 9, 11, 24, 3, 3);
      d->groups = 12; d->layout = DLCONV_NHWC; d->pad_left = 2; d->pad_bottom = 1; d->out_min = 0; d->out_max = 6; break;
    default: *name = "wide 3x3 (K = 4608)";
      dlconv_conv2d_desc_init(d, 1, 512, 4, 4, 40, 3, 3);
      d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1; break;
  }
}

static void test_csr_all_algorithms(void **state) {
  (void)state;
  pair ps[64];
  int np = all_pairs(ps);
  tally t = {0};
  long runs = 0, skipped = 0;
  for (int s = 0; s < 5; s++)
    for (int v = 0; v < 5; v++) {
      dlconv_conv2d_desc d;
      const char *name;
      csr_shape(s, &d, &name);
      /* v: 0 sparse 70% + empty rows, 1 nnz 0 with bias, 2 nnz 0 without bias, 3 fully dense,
       *    4 very sparse (95%) */
      data_opts o = {.bias = v != 2, .zero_frac = v == 0 ? 0.7 : v == 1 || v == 2 ? 1.0 : v == 3 ? 0.0 : 0.95,
                     .empty_row_frac = v == 0 ? 0.3 : 0.0, .shift = (size_t)(4 * v), .fence = (s + v) % 3};
      rng_t r = rng_seed(100 + (uint64_t)(s * 10 + v));
      conv_data cd;
      cd_init(&cd, KIND_CSR, &d, &r, &o);
      if (v == 1 || v == 2) assert_int_equal(cd.csr.nnz, 0);
      for (int i = 0; i < np; i++) {
        run_cfg c = {.algo = ps[i].algo, .isa = ps[i].isa, .num_threads = 1, .ws_mode = i & 1, .repeat = v == 0,
                     .y_shift = (size_t)(4 * (i % 3))};
        if (i % 5 == 4) { c.num_threads = 2; c.pool = (i & 1) ? g_pool : NULL; }
        run_result res;
        run_outcome out = run_case(&cd, &c, &res);
        runs++;
        if (out == RUN_UNSUPPORTED && !pair_required(c.algo, c.isa)) { skipped++; continue; }
        char ds[320], cs[160];
        if (out != RUN_PASS)
          tally_fail(&t, "CSR %s variant %d (nnz %d) %s %s: %s", name, v, cd.csr.nnz, desc_str(&d, ds, sizeof ds),
                     cfg_str(&c, cs, sizeof cs), out == RUN_UNSUPPORTED ? "UNSUPPORTED but required" : res.msg);
      }
      cd_free(&cd);
    }
  printf("CSR: %ld runs, %ld UNSUPPORTED skips, %ld failures\n", runs, skipped, t.fails);
  assert_int_equal(t.fails, 0);
}

/* The plan copies the CSR arrays: clobbering them after planning changes nothing. */
static void test_csr_copied(void **state) {
  (void)state;
  tally t = {0};
  for (int a = 0; a < N_ALGOS; a++) {
    dlconv_conv2d_desc d;
    const char *name;
    csr_shape(2, &d, &name);
    data_opts o = {.bias = 1, .zero_frac = 0.6};
    rng_t r = rng_seed(200 + (uint64_t)a);
    conv_data cd;
    cd_init(&cd, KIND_CSR, &d, &r, &o);
    run_cfg c = {.algo = (dlconv_algo)a, .isa = a ? DLCONV_ISA_GENERIC : DLCONV_ISA_AUTO, .num_threads = 1};
    dlconv_options opt;
    cfg_options(&c, &opt);
    dlconv_plan *plan = NULL;
    dlconv_status st = dlconv_plan_conv2d_csr(&plan, &d, &cd.csr, cd.bias, NULL, &opt);
    if (st != DLCONV_OK) {
      tally_fail(&t, "CSR %s algo %s: plan -> %s (%s)", name, algo_name(a), dlconv_status_string(st), dlconv_last_error());
      cd_free(&cd);
      continue;
    }
    const size_t nnz = (size_t)cd.csr.nnz;
    fill_nan(cd.csr_vals, nnz * 4);
    for (size_t i = 0; i < nnz; i++) cd.csr_cols[i] = -7;
    for (int i = 0; i <= cd.csr.rows; i++) cd.csr_rowptr[i] = 123456;
    fill_nan(cd.bias, (size_t)d.c_out * 4);
    memcpy(cd.csr_vals0, cd.csr_vals, nnz * 4);
    memcpy(cd.csr_cols0, cd.csr_cols, nnz * 4);
    memcpy(cd.csr_rowptr0, cd.csr_rowptr, (size_t)(cd.csr.rows + 1) * 4);
    memcpy(cd.b0, cd.bias, (size_t)d.c_out * 4);
    char msg[600] = "";
    if (execute_checked(&cd, plan, &c, NULL, msg, sizeof msg))
      tally_fail(&t, "CSR %s algo %s after clobbering the caller's CSR and bias: %s", name, algo_name(a), msg);
    dlconv_plan_destroy(plan);
    cd_free(&cd);
  }
  assert_int_equal(t.fails, 0);
}

/* ------------------------------------------------------------------------------------------ */

static void test_dense_layers(void **state) {
  (void)state;
  static const int32_t L[][3] = {{1, 1, 1},    {1, 3, 5},     {2, 17, 13},   {3, 64, 10},  {4, 129, 63},
                                 {5, 256, 33}, {1, 1024, 17}, {2, 512, 512}, {5, 7, 1000}, {1, 2048, 8},
                                 {3, 33, 129}, {4, 100, 1}};
  pair ps[64];
  int np = all_pairs(ps);
  tally t = {0};
  for (size_t l = 0; l < ARRAY_LEN(L); l++) {
    const int32_t batch = L[l][0], in_f = L[l][1], out_f = L[l][2];
    const float lo[] = {-INFINITY, 0, 0, -0.25f}, hi[] = {INFINITY, INFINITY, 6, 0.3f};
    const int cl = (int)(l % 4);
    dlconv_conv2d_desc d;
    dense_desc(&d, batch, in_f, out_f, lo[cl], hi[cl]);
    data_opts o = {.bias = (l % 3) != 1, .zero_frac = l % 5 == 2 ? 0.8 : 0.0, .shift = 4 * (l % 2), .fence = (int)(l % 3)};
    rng_t r = rng_seed(300 + (uint64_t)l);
    conv_data cd;
    cd_init(&cd, KIND_DENSE, &d, &r, &o);
    /* the conv oracle on a 1x1 image and the dense oracle agree */
    double *yd = malloc(sizeof(double) * cd.y_len);
    oracle_dense(batch, in_f, out_f, cd.x, cd.w, cd.bias, lo[cl], hi[cl], yd, NULL);
    for (size_t i = 0; i < cd.y_len; i++) assert_true(fabs(yd[i] - cd.ref[i]) <= 1e-12 * (1 + cd.mag[i]));
    free(yd);
    for (int i = 0; i < np; i++) {
      run_cfg c = {.algo = ps[i].algo, .isa = ps[i].isa, .num_threads = 1, .ws_mode = (int)((l + (size_t)i) & 1),
                   .y_shift = (size_t)(4 * (i % 2))};
      if (i % 4 == 3) { c.num_threads = 2; c.pool = (l & 1) ? g_pool : NULL; }
      run_result res;
      run_outcome out = run_case(&cd, &c, &res);
      if (out == RUN_UNSUPPORTED && !pair_required(c.algo, c.isa)) continue;
      char cs[160];
      if (out != RUN_PASS)
        tally_fail(&t, "dense batch %d in %d out %d clamp %d bias %d %s: %s", batch, in_f, out_f, cl, o.bias,
                   cfg_str(&c, cs, sizeof cs), out == RUN_UNSUPPORTED ? "UNSUPPORTED but required" : res.msg);
    }
    cd_free(&cd);
  }
  assert_int_equal(t.fails, 0);
}

int main(void) {
  g_pool = tpool_create(2);
  int rc = RUN_GROUP("csr_dense", test_oracle_selfcheck, test_tolerance_sensitivity, test_csr_all_algorithms,
                     test_csr_copied, test_dense_layers);
  tpool_destroy(g_pool);
  return rc;
}
