/* The small public API: version, initialisers, plan_query, workspace size, destroy(NULL),
 * one-shot == plan + execute bit for bit, NaN propagation through the clamp, weights copied at
 * plan time, quietness, wisdom, and the environment variables.
 *
 *   test_api               the main suite
 *   test_api env-isa       run with DLCONV_ISA=<isa>: AUTO picks nothing above it, explicit ISAs win
 *   test_api env-threads   run with DLCONV_NUM_THREADS=N: num_threads 0 plans are correct
 *   test_api verify        run with DLCONV_VERIFY=1: correct layers must still return OK
 *   test_api verbose       run with DLCONV_VERBOSE=1: one stderr line per plan naming the kernel */
#include <fenv.h>
#include <unistd.h>

#include "test_common.h"

static void layer_3x3(dlconv_conv2d_desc *d) {
  dlconv_conv2d_desc_init(d, 2, 13, 11, 9, 17, 3, 3);
  d->pad_top = 1; d->pad_bottom = 2; d->pad_left = 0; d->pad_right = 1;
  d->stride_w = 2;
  d->layout = DLCONV_NHWC;
}

/* ------------------------------------------------------------------------------------------ */
/* stdout/stderr capture (the library must print nothing unless DLCONV_VERBOSE is set)        */

typedef struct capture { int saved1, saved2; FILE *tmp; } capture;

static void capture_begin(capture *c) {
  fflush(stdout);
  fflush(stderr);
  c->tmp = tmpfile();
  assert_non_null(c->tmp);
  c->saved1 = dup(1);
  c->saved2 = dup(2);
  dup2(fileno(c->tmp), 1);
  dup2(fileno(c->tmp), 2);
}

/* returns what was printed (malloc'ed, NUL-terminated) */
static char *capture_end(capture *c) {
  fflush(stdout);
  fflush(stderr);
  dup2(c->saved1, 1);
  dup2(c->saved2, 2);
  close(c->saved1);
  close(c->saved2);
  long n = lseek(fileno(c->tmp), 0, SEEK_END);
  char *s = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
  if (n > 0) {
    lseek(fileno(c->tmp), 0, SEEK_SET);
    ssize_t got = read(fileno(c->tmp), s, (size_t)n);
    s[got > 0 ? got : 0] = 0;
  }
  fclose(c->tmp);
  return s;
}

/* ------------------------------------------------------------------------------------------ */

static void test_version(void **state) {
  (void)state;
  const char *v = dlconv_version();
  assert_non_null(v);
  int ma = -1, mi = -1, pa = -1, used = 0;
  assert_int_equal(sscanf(v, "%d.%d.%d%n", &ma, &mi, &pa, &used), 3);
  assert_int_equal((int)strlen(v), used);
  assert_true(v[0] >= '0' && v[0] <= '9');
  assert_int_equal(ma, DLCONV_VERSION_MAJOR);
  assert_int_equal(mi, DLCONV_VERSION_MINOR);
  assert_int_equal(pa, DLCONV_VERSION_PATCH);
  assert_ptr_equal(v, dlconv_version());
}

static void test_options_init(void **state) {
  (void)state;
  dlconv_options o;
  memset(&o, 0xAB, sizeof o);
  dlconv_options_init(&o);
  assert_int_equal(o.algo, DLCONV_ALGO_AUTO);
  assert_int_equal(o.isa, DLCONV_ISA_AUTO);
  assert_int_equal(o.num_threads, 0);
  assert_int_equal(o.flags, 0);
  assert_null(o.parallel_for);
  assert_null(o.pool);
  assert_null(o.cuda_stream);
}

static void test_desc_init(void **state) {
  (void)state;
  dlconv_conv2d_desc d;
  memset(&d, 0xCD, sizeof d);
  dlconv_conv2d_desc_init(&d, 3, 5, 7, 11, 13, 2, 4);
  assert_int_equal(d.n, 3);
  assert_int_equal(d.c_in, 5);
  assert_int_equal(d.h_in, 7);
  assert_int_equal(d.w_in, 11);
  assert_int_equal(d.c_out, 13);
  assert_int_equal(d.k_h, 2);
  assert_int_equal(d.k_w, 4);
  assert_int_equal(d.stride_h, 1);
  assert_int_equal(d.stride_w, 1);
  assert_int_equal(d.dilation_h, 1);
  assert_int_equal(d.dilation_w, 1);
  assert_int_equal(d.pad_top, 0);
  assert_int_equal(d.pad_bottom, 0);
  assert_int_equal(d.pad_left, 0);
  assert_int_equal(d.pad_right, 0);
  assert_int_equal(d.groups, 1);
  assert_int_equal(d.dtype, DLCONV_F32);
  assert_int_equal(d.layout, DLCONV_NCHW);
  assert_true(isinf(d.out_min) && d.out_min < 0);
  assert_true(isinf(d.out_max) && d.out_max > 0);
  int32_t ho = 0, wo = 0;
  assert_int_equal(dlconv_conv2d_output_shape(&d, &ho, &wo), DLCONV_OK);
  assert_int_equal(ho, 6);
  assert_int_equal(wo, 8);
}

static void test_plan_destroy_null(void **state) {
  (void)state;
  dlconv_plan_destroy(NULL);
}

/* plan_query fields, workspace size, query errors, for every pair */
static void test_plan_query(void **state) {
  (void)state;
  dlconv_conv2d_desc d;
  layer_3x3(&d);
  rng_t r = rng_seed(3);
  data_opts o = {.bias = 1, .zero_frac = 0.5};
  conv_data cd;
  cd_init(&cd, KIND_CONV, &d, &r, &o);
  pair ps[64];
  int np = all_pairs(ps);
  tally t = {0};
  for (int i = 0; i < np; i++) {
    run_cfg c = {.algo = ps[i].algo, .isa = ps[i].isa, .num_threads = 1};
    dlconv_options opt;
    cfg_options(&c, &opt);
    dlconv_plan *plan = NULL;
    dlconv_status st = dlconv_plan_conv2d(&plan, &d, cd.w, cd.bias, NULL, &opt);
    if (st == DLCONV_ERR_UNSUPPORTED && !pair_required(c.algo, c.isa)) continue;
    if (st != DLCONV_OK) { tally_fail(&t, "%s/%s: plan -> %s", algo_name(c.algo), isa_name(c.isa), dlconv_status_string(st)); continue; }
    char msg[512] = "";
    dlconv_plan_info info;
    if (check_info(&cd, &c, plan, &info, msg, sizeof msg)) tally_fail(&t, "%s/%s: %s", algo_name(c.algo), isa_name(c.isa), msg);
    if (info.packed_weight_bytes == 0) tally_fail(&t, "%s/%s: packed_weight_bytes = 0", algo_name(c.algo), isa_name(c.isa));
    assert_int_not_equal(dlconv_plan_query(plan, NULL), DLCONV_OK);
    printf("  %-7s %-8s -> %-7s %-8s kernel %-32s ws %8zu B, packed %8zu B, density %.3f, macs %lld\n",
           algo_name(c.algo), isa_name(c.isa), algo_name(info.algo), isa_name(info.isa), info.kernel,
           info.workspace_bytes, info.packed_weight_bytes, info.weight_density, (long long)info.macs);
    dlconv_plan_destroy(plan);
  }
  dlconv_plan_info info;
  assert_int_not_equal(dlconv_plan_query(NULL, &info), DLCONV_OK);
  cd_free(&cd);
  assert_int_equal(t.fails, 0);
}

/* A plan with default options (opt = NULL) works. */
static void test_default_options(void **state) {
  (void)state;
  dlconv_conv2d_desc d;
  layer_3x3(&d);
  rng_t r = rng_seed(4);
  data_opts o = {.bias = 0};
  conv_data cd;
  cd_init(&cd, KIND_CONV, &d, &r, &o);
  dlconv_plan *plan = NULL;
  assert_int_equal(dlconv_plan_conv2d(&plan, &d, cd.w, NULL, NULL, NULL), DLCONV_OK);
  char msg[512] = "";
  run_cfg c = {.algo = DLCONV_ALGO_AUTO, .isa = DLCONV_ISA_AUTO};
  if (execute_checked(&cd, plan, &c, NULL, msg, sizeof msg)) fail_msg("%s", msg);
  dlconv_plan_destroy(plan);
  canary_buf yb;
  canary_alloc(&yb, cd.y_len * 4, 0);
  assert_int_equal(dlconv_conv2d(&d, cd.x, cd.w, NULL, yb.p, NULL, NULL), DLCONV_OK);
  assert_true(canary_guards_ok(&yb));
  if (check_y(&cd, yb.p, msg, sizeof msg)) fail_msg("one-shot, default options: %s", msg);
  canary_free(&yb);
  cd_free(&cd);
}

/* dlconv_conv2d / dlconv_dense one-shot == plan + execute, bit for bit (single-threaded). */
static void test_one_shot_equals_plan(void **state) {
  (void)state;
  pair ps[64];
  int np = all_pairs(ps);
  tally t = {0};
  for (int kind = 0; kind < 2; kind++) {
    dlconv_conv2d_desc d;
    if (kind == 0) layer_3x3(&d);
    else dense_desc(&d, 3, 37, 19, 0, 6);
    rng_t r = rng_seed(5 + (uint64_t)kind);
    data_opts o = {.bias = 1, .shift = 4};
    conv_data cd;
    cd_init(&cd, kind ? KIND_DENSE : KIND_CONV, &d, &r, &o);
    for (int i = 0; i < np; i++) {
      run_cfg c = {.algo = ps[i].algo, .isa = ps[i].isa, .num_threads = 1};
      dlconv_options opt;
      cfg_options(&c, &opt);
      dlconv_plan *plan = NULL;
      dlconv_status st = cd_plan(&cd, &plan, &opt);
      if (st == DLCONV_ERR_UNSUPPORTED && !pair_required(c.algo, c.isa)) continue;
      if (st != DLCONV_OK) { tally_fail(&t, "%s/%s: plan -> %s", algo_name(c.algo), isa_name(c.isa), dlconv_status_string(st)); continue; }
      canary_buf y1, y2;
      canary_alloc(&y1, cd.y_len * 4, 0);
      canary_alloc(&y2, cd.y_len * 4, 8);
      fill_nan(y1.p, y1.bytes);
      fill_nan(y2.p, y2.bytes);
      st = dlconv_execute(plan, cd.x, y1.p, NULL);
      dlconv_status st2 = kind ? dlconv_dense(d.n, d.c_in, d.c_out, DLCONV_F32, cd.x, cd.w, cd.bias, y2.p, d.out_min, d.out_max, NULL, &opt)
                               : dlconv_conv2d(&d, cd.x, cd.w, cd.bias, y2.p, NULL, &opt);
      char msg[400] = "";
      if (st != DLCONV_OK || st2 != DLCONV_OK) tally_fail(&t, "%s %s/%s: execute %d, one-shot %d", kind ? "dense" : "conv", algo_name(c.algo), isa_name(c.isa), st, st2);
      else if (memcmp(y1.p, y2.p, cd.y_len * 4)) tally_fail(&t, "%s %s/%s: one-shot differs from plan+execute", kind ? "dense" : "conv", algo_name(c.algo), isa_name(c.isa));
      else if (check_y(&cd, y1.p, msg, sizeof msg)) tally_fail(&t, "%s %s/%s: %s", kind ? "dense" : "conv", algo_name(c.algo), isa_name(c.isa), msg);
      if (!canary_guards_ok(&y1) || !canary_guards_ok(&y2)) tally_fail(&t, "%s/%s: guard overwritten", algo_name(c.algo), isa_name(c.isa));
      canary_free(&y1);
      canary_free(&y2);
      dlconv_plan_destroy(plan);
    }
    cd_free(&cd);
  }
  assert_int_equal(t.fails, 0);
}

/* The plan copies w and bias: clobbering them after planning changes nothing. */
static void test_weights_copied(void **state) {
  (void)state;
  pair ps[64];
  int np = all_pairs(ps);
  tally t = {0};
  dlconv_conv2d_desc d;
  layer_3x3(&d);
  d.groups = 1;
  d.layout = DLCONV_NCHW;
  for (int i = 0; i < np; i++) {
    rng_t r = rng_seed(6 + (uint64_t)i);
    data_opts o = {.bias = 1, .zero_frac = 0.3};
    conv_data cd;
    cd_init(&cd, KIND_CONV, &d, &r, &o);
    run_cfg c = {.algo = ps[i].algo, .isa = ps[i].isa, .num_threads = 1, .ws_mode = 1};
    dlconv_options opt;
    cfg_options(&c, &opt);
    dlconv_plan *plan = NULL;
    dlconv_status st = dlconv_plan_conv2d(&plan, &d, cd.w, cd.bias, NULL, &opt);
    if (st == DLCONV_ERR_UNSUPPORTED && !pair_required(c.algo, c.isa)) { cd_free(&cd); continue; }
    if (st != DLCONV_OK) { tally_fail(&t, "%s/%s: plan -> %s", algo_name(c.algo), isa_name(c.isa), dlconv_status_string(st)); cd_free(&cd); continue; }
    fill_nan(cd.w, cd.w_len * 4);
    fill_nan(cd.bias, (size_t)d.c_out * 4);
    memcpy(cd.w0, cd.w, cd.w_len * 4);   /* keep inputs_unchanged() meaningful */
    memcpy(cd.b0, cd.bias, (size_t)d.c_out * 4);
    char msg[600] = "";
    if (execute_checked(&cd, plan, &c, NULL, msg, sizeof msg))
      tally_fail(&t, "%s/%s after clobbering w and bias: %s", algo_name(c.algo), isa_name(c.isa), msg);
    dlconv_plan_destroy(plan);
    cd_free(&cd);
  }
  assert_int_equal(t.fails, 0);
}

/* A NaN in x makes exactly the outputs that read it NaN, even through ReLU / ReLU6; a NaN bias
 * makes its channel NaN. Weights have no zeros, so "reads it" is unambiguous (NaN * w = NaN). */
static void test_nan_propagation(void **state) {
  (void)state;
  pair ps[64];
  int np = all_pairs(ps);
  tally t = {0};
  for (int variant = 0; variant < 6; variant++) {
    dlconv_conv2d_desc d;
    switch (variant) {
      case 0: case 5: layer_3x3(&d); d.out_min = 0; d.out_max = INFINITY; break;
      case 4: layer_3x3(&d); d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 0; break;
      case 1: dlconv_conv2d_desc_init(&d, 1, 8, 9, 10, 8, 3, 3); d.groups = 8; d.pad_top = d.pad_bottom = 1; d.out_min = 0; d.out_max = 6; break;
      case 2: dlconv_conv2d_desc_init(&d, 2, 19, 5, 6, 21, 1, 1); d.layout = DLCONV_NHWC; d.out_min = -0.5f; d.out_max = 0.5f; break;
      default: dense_desc(&d, 3, 40, 24, 0, INFINITY); break;
    }
    rng_t r = rng_seed(70 + (uint64_t)variant);
    data_opts o = {.bias = 1};
    conv_data cd;
    cd_init(&cd, variant == 3 ? KIND_DENSE : KIND_CONV, &d, &r, &o);
    for (size_t i = 0; i < cd.w_len; i++)
      if (fabsf(cd.w[i]) < 0.01f) cd.w[i] = 0.5f;
    if (variant == 4) {          /* a NaN weight (no padding: 0 * NaN at a padded tap is not defined here) */
      cd.w[cd.K + 3] = NAN;
    } else if (variant == 5) {   /* +Inf / -Inf inputs: Inf or NaN (Inf - Inf) exactly as the oracle */
      cd.x[5] = INFINITY;
      cd.x[cd.x_len - 7] = -INFINITY;
    } else {
      cd.x[0] = NAN;
      cd.x[cd.x_len / 2 + 1] = NAN;
      cd.bias[d.c_out - 1] = NAN;
    }
    cd.nnz = cd.w_len;
    cd_refresh(&cd);
    size_t nan_refs = 0;
    for (size_t i = 0; i < cd.y_len; i++) nan_refs += !isfinite(cd.ref[i]);
    assert_true(nan_refs > 0 && nan_refs < cd.y_len);
    for (int i = 0; i < np; i++) {
      run_cfg c = {.algo = ps[i].algo, .isa = ps[i].isa, .num_threads = 1, .ws_mode = i & 1};
      run_result res;
      run_outcome out = run_case(&cd, &c, &res);
      if (out == RUN_UNSUPPORTED && !pair_required(c.algo, c.isa)) continue;
      char ds[300];
      if (out != RUN_PASS) tally_fail(&t, "NaN variant %d %s %s/%s: %s", variant, desc_str(&d, ds, sizeof ds), algo_name(c.algo), isa_name(c.isa), res.msg);
    }
    cd_free(&cd);
  }
  assert_int_equal(t.fails, 0);
}

/* The caller's floating-point environment (rounding mode, and on x86 the MXCSR FTZ/DAZ bits)
 * is the same after planning and executing as before. */
static unsigned fp_mode(void) {
  unsigned m = (unsigned)fegetround();
#if defined(__x86_64__)
  unsigned csr;
  __asm__ volatile("stmxcsr %0" : "=m"(csr));
  m |= (csr & 0xFFC0u) << 8;   /* control bits only, not the sticky exception flags */
#endif
  return m;
}

static void test_fp_environment_preserved(void **state) {
  (void)state;
  pair ps[64];
  int np = all_pairs(ps);
  dlconv_conv2d_desc d;
  layer_3x3(&d);
  rng_t r = rng_seed(13);
  data_opts o = {.bias = 1, .zero_frac = 0.5};
  conv_data cd;
  cd_init(&cd, KIND_CONV, &d, &r, &o);
  const unsigned before = fp_mode();
  for (int i = 0; i < np; i++) {
    run_cfg c = {.algo = ps[i].algo, .isa = ps[i].isa, .num_threads = 1};
    run_result res;
    run_outcome out = run_case(&cd, &c, &res);
    if (out == RUN_FAIL) fail_msg("%s/%s: %s", algo_name(c.algo), isa_name(c.isa), res.msg);
    if (fp_mode() != before) fail_msg("%s/%s changed the caller's FP mode: %#x -> %#x", algo_name(c.algo), isa_name(c.isa), before, fp_mode());
  }
  cd_free(&cd);
}

/* Nothing on stdout or stderr from ordinary use, failures included (DLCONV_VERBOSE unset). */
static void test_quiet(void **state) {
  (void)state;
  const char *v = getenv("DLCONV_VERBOSE");
  if (v && v[0] && strcmp(v, "0")) skip();
  dlconv_conv2d_desc d;
  layer_3x3(&d);
  rng_t r = rng_seed(8);
  data_opts o = {.bias = 1};
  conv_data cd;
  cd_init(&cd, KIND_CONV, &d, &r, &o);
  canary_buf yb;
  canary_alloc(&yb, cd.y_len * 4, 0);
  capture cap;
  capture_begin(&cap);
  for (int a = 0; a < N_ALGOS; a++) {
    dlconv_options opt;
    dlconv_options_init(&opt);
    opt.algo = (dlconv_algo)a;
    opt.num_threads = 1;
    dlconv_plan *plan = NULL;
    if (dlconv_plan_conv2d(&plan, &d, cd.w, cd.bias, NULL, &opt) == DLCONV_OK) {
      dlconv_execute(plan, cd.x, yb.p, NULL);
      dlconv_plan_destroy(plan);
    }
    dlconv_conv2d(&d, cd.x, cd.w, cd.bias, yb.p, NULL, &opt);
  }
  dlconv_conv2d_desc bad = d;
  bad.stride_h = 0;
  dlconv_conv2d(&bad, cd.x, cd.w, cd.bias, yb.p, NULL, NULL);
  dlconv_execute(NULL, cd.x, yb.p, NULL);
  dlconv_wisdom_import("/nonexistent/dir/wisdom.txt");
  char *out = capture_end(&cap);
  if (out[0]) fail_msg("library printed without DLCONV_VERBOSE: \"%.200s\"", out);
  free(out);
  canary_free(&yb);
  cd_free(&cd);
}

/* Wisdom: a MEASURE plan's choice survives export / forget / import; malformed files are IO
 * errors that change nothing. */
static void test_wisdom(void **state) {
  (void)state;
  char path[] = "/tmp/dlconv_test_wisdom_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  assert_int_equal(dlconv_wisdom_import("/nonexistent/dir/wisdom.txt"), DLCONV_ERR_IO);

  const data_opts o = {.bias = 1};
  conv_data cd;
  const dlconv_conv2d_desc d = *cd_init_same3x3(&cd, KIND_CONV, 32, 14, 14, 32, 9, &o);
  run_cfg c = {.algo = DLCONV_ALGO_AUTO, .isa = DLCONV_ISA_AUTO, .num_threads = 1};
  dlconv_options opt;
  cfg_options(&c, &opt);
  opt.flags = DLCONV_PLAN_MEASURE;
  dlconv_plan *plan = NULL;
  dlconv_wisdom_forget();
  assert_int_equal(dlconv_plan_conv2d(&plan, &d, cd.w, cd.bias, NULL, &opt), DLCONV_OK);
  dlconv_plan_info measured;
  char msg[600] = "";
  if (check_info(&cd, &c, plan, &measured, msg, sizeof msg)) fail_msg("MEASURE plan: %s", msg);
  if (execute_checked(&cd, plan, &c, NULL, msg, sizeof msg)) fail_msg("MEASURE plan: %s", msg);
  dlconv_plan_destroy(plan);
  printf("  MEASURE chose %s/%s %s\n", algo_name(measured.algo), isa_name(measured.isa), measured.kernel);
  assert_int_equal(dlconv_wisdom_export(path), DLCONV_OK);
  dlconv_wisdom_forget();
  assert_int_equal(dlconv_wisdom_import(path), DLCONV_OK);

  /* malformed files: IO, and the imported choice stays */
  char bad[] = "/tmp/dlconv_test_badwisdom_XXXXXX";
  fd = mkstemp(bad);
  assert_true(fd >= 0);
  const char junk[] = "this is not wisdom\n\x01\x02 garbage 1 2 3 conv ???\n";
  assert_true(write(fd, junk, sizeof junk - 1) == (ssize_t)(sizeof junk - 1));
  close(fd);
  assert_int_equal(dlconv_wisdom_import(bad), DLCONV_ERR_IO);
  assert_true(dlconv_last_error()[0] != 0);

  opt.flags = 0;
  assert_int_equal(dlconv_plan_conv2d(&plan, &d, cd.w, cd.bias, NULL, &opt), DLCONV_OK);
  dlconv_plan_info info;
  assert_int_equal(dlconv_plan_query(plan, &info), DLCONV_OK);
  msg[0] = 0;
  if (execute_checked(&cd, plan, &c, NULL, msg, sizeof msg)) fail_msg("plan from wisdom: %s", msg);
  dlconv_plan_destroy(plan);
  printf("  after import, AUTO chose %s/%s %s\n", algo_name(info.algo), isa_name(info.isa), info.kernel);
  if (info.algo != measured.algo || info.isa != measured.isa)
    fail_msg("imported wisdom not used: measured %s/%s, AUTO after import %s/%s", algo_name(measured.algo),
             isa_name(measured.isa), algo_name(info.algo), isa_name(info.isa));
  dlconv_wisdom_forget();
  remove(path);
  remove(bad);
  cd_free(&cd);
}

/* ------------------------------------------------------------------------------------------ */
/* Environment modes (each a separate meson test with the variable set)                       */

/* DLCONV_ISA caps what AUTO picks; an explicit ISA still wins. */
static void test_env_isa_cap(void **state) {
  (void)state;
  const char *env = getenv("DLCONV_ISA");
  assert_non_null(env);
  int cap = !strcmp(env, "generic") ? DLCONV_ISA_GENERIC : !strcmp(env, "avx2") ? DLCONV_ISA_AVX2
          : !strcmp(env, "avx512") ? DLCONV_ISA_AVX512 : !strcmp(env, "neon") ? DLCONV_ISA_NEON : -1;
  assert_true(cap > 0);
  if (!dlconv_isa_available((dlconv_isa)cap)) skip_test("env isa cap", "DLCONV_ISA names an ISA this machine lacks");
  dlconv_conv2d_desc d;
  layer_3x3(&d);
  rng_t r = rng_seed(10);
  data_opts o = {.bias = 1};
  conv_data cd;
  cd_init(&cd, KIND_CONV, &d, &r, &o);
  dlconv_isa isas[8];
  int ni = cpu_isas(isas);
  for (int a = 0; a < N_ALGOS; a++) {
    run_cfg c = {.algo = (dlconv_algo)a, .isa = DLCONV_ISA_AUTO, .num_threads = 1};
    run_result res;
    if (run_case(&cd, &c, &res) != RUN_PASS) fail_msg("DLCONV_ISA=%s, %s/auto: %s", env, algo_name(a), res.msg);
    if ((int)res.info.isa > cap) fail_msg("DLCONV_ISA=%s but AUTO picked %s for %s", env, isa_name(res.info.isa), algo_name(a));
    printf("  DLCONV_ISA=%s: %s/auto -> %s/%s %s\n", env, algo_name(a), algo_name(res.info.algo), isa_name(res.info.isa), res.info.kernel);
    for (int i = 0; i < ni; i++) {   /* an explicit ISA still wins */
      c.isa = isas[i];
      run_outcome out = run_case(&cd, &c, &res);
      if (out == RUN_UNSUPPORTED && !pair_required(c.algo, c.isa)) continue;
      if (out != RUN_PASS) fail_msg("DLCONV_ISA=%s, explicit %s/%s: %s", env, algo_name(a), isa_name(isas[i]), res.msg);
    }
  }
  cd_free(&cd);
}

/* DLCONV_NUM_THREADS sets the default (num_threads 0): results stay correct. */
static void test_env_num_threads(void **state) {
  (void)state;
  pair ps[64];
  int np = all_pairs(ps);
  tally t = {0};
  dlconv_conv2d_desc d;
  layer_3x3(&d);
  d.h_in = 40;
  d.w_in = 33;
  rng_t r = rng_seed(14);
  data_opts o = {.bias = 1, .zero_frac = 0.4};
  conv_data cd;
  cd_init(&cd, KIND_CONV, &d, &r, &o);
  for (int i = 0; i < np; i++) {
    run_cfg c = {.algo = ps[i].algo, .isa = ps[i].isa, .num_threads = 0, .ws_mode = i & 1};
    run_result res;
    run_outcome out = run_case(&cd, &c, &res);
    if (out == RUN_UNSUPPORTED && !pair_required(c.algo, c.isa)) continue;
    if (out != RUN_PASS) tally_fail(&t, "DLCONV_NUM_THREADS=%s %s/%s: %s", getenv("DLCONV_NUM_THREADS"), algo_name(c.algo), isa_name(c.isa), res.msg);
  }
  cd_free(&cd);
  assert_int_equal(t.fails, 0);
}

static void test_env_verify(void **state) {
  (void)state;
  pair ps[64];
  int np = all_pairs(ps);
  tally t = {0};
  for (int v = 0; v < 3; v++) {
    dlconv_conv2d_desc d;
    layer_3x3(&d);
    if (v == 1) { d.groups = 13; d.c_out = 26; d.layout = DLCONV_NCHW; }
    if (v == 2) { d.c_in = 256; d.h_in = d.w_in = 5; d.out_min = 0; d.out_max = 6; }
    rng_t r = rng_seed(11 + (uint64_t)v);
    data_opts o = {.bias = v != 1, .zero_frac = v == 1 ? 0.6 : 0.0};
    conv_data cd;
    cd_init(&cd, KIND_CONV, &d, &r, &o);
    for (int i = 0; i < np; i++) {
      run_cfg c = {.algo = ps[i].algo, .isa = ps[i].isa, .num_threads = 1 + (i & 1)};
      run_result res;
      capture cap;
      capture_begin(&cap);
      run_outcome out = run_case(&cd, &c, &res);
      char *printed = capture_end(&cap);
      if (out == RUN_UNSUPPORTED && !pair_required(c.algo, c.isa)) { free(printed); continue; }
      if (out != RUN_PASS) tally_fail(&t, "DLCONV_VERIFY=1 layer %d %s/%s: %s [stderr: %.300s]", v, algo_name(c.algo), isa_name(c.isa), res.msg, printed);
      else if (printed[0]) tally_fail(&t, "DLCONV_VERIFY=1 layer %d %s/%s: correct result but printed \"%.300s\"", v, algo_name(c.algo), isa_name(c.isa), printed);
      free(printed);
    }
    cd_free(&cd);
  }
  assert_int_equal(t.fails, 0);
}

static void test_env_verbose(void **state) {
  (void)state;
  dlconv_conv2d_desc d;
  layer_3x3(&d);
  rng_t r = rng_seed(12);
  data_opts o = {.bias = 1};
  conv_data cd;
  cd_init(&cd, KIND_CONV, &d, &r, &o);
  for (int a = 0; a < N_ALGOS; a++) {
    dlconv_options opt;
    dlconv_options_init(&opt);
    opt.algo = (dlconv_algo)a;
    opt.isa = DLCONV_ISA_GENERIC;
    dlconv_plan *plan = NULL;
    capture cap;
    capture_begin(&cap);
    dlconv_status st = dlconv_plan_conv2d(&plan, &d, cd.w, cd.bias, NULL, &opt);
    char *printed = capture_end(&cap);
    assert_int_equal(st, DLCONV_OK);
    dlconv_plan_info info;
    dlconv_plan_query(plan, &info);
    int lines = 0;
    for (const char *p = printed; *p; p++) lines += *p == '\n';
    if (lines != 1) fail_msg("DLCONV_VERBOSE=1: %d lines for one plan: \"%.300s\"", lines, printed);
    if (!strstr(printed, info.kernel)) fail_msg("DLCONV_VERBOSE=1 line does not name the kernel %s: \"%.300s\"", info.kernel, printed);
    free(printed);
    dlconv_plan_destroy(plan);
  }
  cd_free(&cd);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "env-isa")) return RUN_GROUP("api_env_isa", test_env_isa_cap);
  if (!strcmp(mode, "env-threads")) return RUN_GROUP("api_env_threads", test_env_num_threads);
  if (!strcmp(mode, "verify")) return RUN_GROUP("api_env_verify", test_env_verify);
  if (!strcmp(mode, "verbose")) return RUN_GROUP("api_env_verbose", test_env_verbose);
  return RUN_GROUP("api", test_version, test_options_init, test_desc_init, test_plan_destroy_null, test_plan_query,
                   test_default_options, test_one_shot_equals_plan, test_weights_copied, test_nan_propagation,
                   test_fp_environment_preserved, test_quiet, test_wisdom);
}
