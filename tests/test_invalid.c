/* Malformed calls: each must fail with a status, a dlconv_last_error() naming the offending
 * field, *plan set to NULL and y untouched (canary intact). Plus the small status/ISA queries,
 * unsupported dtypes and dlconv_conv2d_output_shape. */
#include <ctype.h>

#include "test_common.h"

static tally g_t;
static long g_cases;
static dlconv_plan *g_ok_plan;   /* a valid plan, used to reset the last error between cases */

/* Set the thread's last error to something that names none of the tested fields, so a stale
 * message cannot pass the field check of the next case. */
static void reset_last_error(void) {
  (void)dlconv_plan_query(g_ok_plan, NULL);
}

static int is_ident(int c) { return isalnum(c) || c == '_'; }

/* 1 if `word` occurs in s as a whole identifier (case-insensitive): "n" matches "desc->n = 0"
 * but not "invalid". */
static int has_word(const char *s, const char *word) {
  const size_t n = strlen(word);
  for (const char *p = s; *p; p++) {
    if (strncasecmp(p, word, n)) continue;
    if (p > s && is_ident((unsigned char)p[-1])) continue;
    if (is_ident((unsigned char)p[n])) continue;
    return 1;
  }
  return 0;
}

/* fields: "a|b|c" (any one must appear as a word), or NULL (any non-empty message) */
static int names_field(const char *msg, const char *fields) {
  if (!fields) return 1;
  char buf[256];
  snprintf(buf, sizeof buf, "%s", fields);
  for (char *tok = strtok(buf, "|"); tok; tok = strtok(NULL, "|"))
    if (has_word(msg, tok)) return 1;
  return 0;
}

/* want: the exact status expected, or -1 for "any failure". */
static void expect_failure(const char *what, dlconv_status st, int want, const char *fields) {
  g_cases++;
  const char *e = dlconv_last_error();
  if (getenv("TEST_VERBOSE")) printf("  %-60s -> %-16s \"%s\"\n", what, dlconv_status_string(st), e ? e : "(null)");
  if (st == DLCONV_OK) { tally_fail(&g_t, "%s: returned OK", what); return; }
  if (want >= 0 && (int)st != want) {
    tally_fail(&g_t, "%s: returned %s, expected %s (%s)", what, dlconv_status_string(st),
               dlconv_status_string((dlconv_status)want), e ? e : "(null)");
    return;
  }
  if (!e || !e[0]) { tally_fail(&g_t, "%s: dlconv_last_error() empty", what); return; }
  if (st == DLCONV_ERR_INVALID_ARG && !names_field(e, fields))
    tally_fail(&g_t, "%s: last_error \"%s\" does not name %s", what, e, fields);
}

/* ------------------------------------------------------------------------------------------ */
/* A valid base layer and its buffers (the library must reject before touching them).        */

static dlconv_conv2d_desc g_base;
static conv_data g_cd;

static void base_desc(dlconv_conv2d_desc *d) {
  dlconv_conv2d_desc_init(d, 2, 4, 6, 5, 6, 3, 3);
  d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1;
  d->groups = 2;
  d->layout = DLCONV_NHWC;
}

static int setup(void **state) {
  (void)state;
  base_desc(&g_base);
  rng_t r = rng_seed(11);
  data_opts o = {.bias = 1, .zero_frac = 0.3};
  cd_init(&g_cd, KIND_CSR, &g_base, &r, &o);
  dlconv_options opt;
  dlconv_options_init(&opt);
  opt.num_threads = 1;
  if (dlconv_plan_conv2d(&g_ok_plan, &g_base, g_cd.w, g_cd.bias, NULL, &opt) != DLCONV_OK) return -1;
  return 0;
}

static int teardown(void **state) {
  (void)state;
  dlconv_plan_destroy(g_ok_plan);
  cd_free(&g_cd);
  return 0;
}

/* plan_conv2d must fail and set *plan NULL; one-shot conv2d must fail and leave y untouched;
 * a shape-level error must also be rejected by dlconv_conv2d_output_shape. */
static void bad_desc_case(const char *what, const dlconv_conv2d_desc *d, int want, const char *fields,
                          int shape_level, const dlconv_options *opt) {
  char name[200];
  dlconv_plan *plan = (dlconv_plan *)(uintptr_t)0x10;
  reset_last_error();
  dlconv_status st = dlconv_plan_conv2d(&plan, d, g_cd.w, g_cd.bias, NULL, opt);
  snprintf(name, sizeof name, "plan_conv2d(%s)", what);
  expect_failure(name, st, want, fields);
  if (plan) tally_fail(&g_t, "%s: *plan not set to NULL", name);
  if (st == DLCONV_OK) dlconv_plan_destroy(plan);

  canary_buf yb;
  canary_alloc(&yb, 4096, 0);
  reset_last_error();
  st = dlconv_conv2d(d, g_cd.x, g_cd.w, g_cd.bias, yb.p, NULL, opt);
  snprintf(name, sizeof name, "conv2d(%s)", what);
  expect_failure(name, st, want, fields);
  if (!canary_untouched(&yb)) tally_fail(&g_t, "%s: y was written", name);
  if (!inputs_unchanged(&g_cd)) tally_fail(&g_t, "%s: x or w modified", name);
  canary_free(&yb);

  if (shape_level) {
    int32_t ho = 7, wo = 7;
    reset_last_error();
    st = dlconv_conv2d_output_shape(d, &ho, &wo);
    snprintf(name, sizeof name, "output_shape(%s)", what);
    expect_failure(name, st, want, fields);
  }
}

#define I32MAX INT32_MAX

static void test_bad_descriptors(void **state) {
  (void)state;
  struct { const char *what; const char *fields; int want; int shape; } c;
  for (int i = 0;; i++) {
    dlconv_conv2d_desc d = g_base;
    c.want = DLCONV_ERR_INVALID_ARG;
    c.shape = 1;
    switch (i) {
      case 0: d.n = 0; c.what = "n = 0"; c.fields = "n|batch"; break;
      case 1: d.n = -1; c.what = "n = -1"; c.fields = "n|batch"; break;
      case 2: d.c_in = 0; c.what = "c_in = 0"; c.fields = "c_in"; break;
      case 3: d.c_in = -4; c.what = "c_in = -4"; c.fields = "c_in"; break;
      case 4: d.h_in = 0; c.what = "h_in = 0"; c.fields = "h_in"; break;
      case 5: d.w_in = -1; c.what = "w_in = -1"; c.fields = "w_in"; break;
      case 6: d.c_out = 0; c.what = "c_out = 0"; c.fields = "c_out"; break;
      case 7: d.k_h = 0; c.what = "k_h = 0"; c.fields = "k_h"; break;
      case 8: d.k_w = -2; c.what = "k_w = -2"; c.fields = "k_w"; break;
      case 9: d.stride_h = 0; c.what = "stride_h = 0"; c.fields = "stride_h|stride"; break;
      case 10: d.stride_w = 0; c.what = "stride_w = 0"; c.fields = "stride_w|stride"; break;
      case 11: d.stride_w = -1; c.what = "stride_w = -1"; c.fields = "stride_w|stride"; break;
      case 12: d.dilation_h = 0; c.what = "dilation_h = 0"; c.fields = "dilation_h|dilation"; break;
      case 13: d.dilation_w = -1; c.what = "dilation_w = -1"; c.fields = "dilation_w|dilation"; break;
      case 14: d.pad_top = -1; c.what = "pad_top = -1"; c.fields = "pad_top|pad|padding"; break;
      case 15: d.pad_bottom = -1; c.what = "pad_bottom = -1"; c.fields = "pad_bottom|pad|padding"; break;
      case 16: d.pad_left = -2; c.what = "pad_left = -2"; c.fields = "pad_left|pad|padding"; break;
      case 17: d.pad_right = -1; c.what = "pad_right = -1"; c.fields = "pad_right|pad|padding"; break;
      case 18: d.groups = 0; c.what = "groups = 0"; c.fields = "groups"; break;
      case 19: d.groups = -2; c.what = "groups = -2"; c.fields = "groups"; break;
      case 20: d.groups = 3; c.what = "groups = 3 with c_in 4"; c.fields = "groups"; break;
      case 21: d.groups = 4; c.what = "groups = 4 with c_out 6"; c.fields = "groups"; break;
      case 22: d.c_in = 6; d.groups = 6; d.c_out = 4; c.what = "depthwise groups = 6 with c_out 4"; c.fields = "groups"; break;
      case 23: d.h_in = 1; d.pad_top = d.pad_bottom = 0; c.what = "output height < 1";
        c.fields = "h_out|output|height|h_in|k_h"; break;
      case 24: d.dilation_w = 4; c.what = "output width < 1 (dilation 4)";
        c.fields = "w_out|output|width|w_in|k_w|dilation_w"; break;
      case 25: d.n = d.c_in = d.h_in = d.w_in = I32MAX; d.groups = 1; d.c_out = 1; d.k_h = d.k_w = 1;
        d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 0; c.what = "x byte count overflows size_t"; c.fields = NULL; break;
      case 26: d.c_in = d.c_out = I32MAX; d.groups = 1; d.k_h = d.k_w = 1; d.h_in = d.w_in = 1;
        c.what = "w byte count overflows size_t"; c.fields = NULL; break;
      case 27: d.c_in = 1; d.groups = 1; d.c_out = 8; d.n = 1; d.k_h = d.k_w = 1; d.h_in = d.w_in = 1;
        d.pad_top = d.pad_left = 0; d.pad_bottom = d.pad_right = I32MAX - 1;
        c.what = "y byte count overflows size_t (h_out = w_out = INT32_MAX)"; c.fields = NULL; break;
      case 28: d.h_in = I32MAX; d.pad_top = d.pad_bottom = I32MAX; d.k_h = 1; d.c_in = 2; d.groups = 1; d.c_out = 1;
        d.n = 1; d.w_in = 1; d.k_w = 1; d.pad_left = d.pad_right = 0;
        c.what = "h_out above INT32_MAX"; c.fields = NULL; break;
      case 29: d.k_h = I32MAX; d.dilation_h = I32MAX; c.what = "dilated kernel span overflows int32"; c.fields = NULL; break;
      case 30: d.w_in = I32MAX; d.pad_left = d.pad_right = I32MAX; d.k_w = 1; d.stride_w = 1;
        c.what = "w_out above INT32_MAX"; c.fields = NULL; break;
      case 31: d.dtype = (dlconv_dtype)99; c.what = "dtype = 99"; c.fields = "dtype"; c.shape = 0; break;
      case 32: d.dtype = (dlconv_dtype)-1; c.what = "dtype = -1"; c.fields = "dtype"; c.shape = 0; break;
      case 33: d.dtype = DLCONV_S32; c.what = "dtype = S32 (not a conv dtype)"; c.fields = "dtype"; c.shape = 0; c.want = -1; break;
      case 34: d.layout = (dlconv_layout)2; c.what = "layout = 2"; c.fields = "layout"; c.shape = 0; break;
      case 35: d.layout = (dlconv_layout)-1; c.what = "layout = -1"; c.fields = "layout"; c.shape = 0; break;
      case 36: d.out_min = 1; d.out_max = 0; c.what = "out_min > out_max"; c.fields = "out_min|out_max|clamp"; c.shape = 0; break;
      case 37: d.out_min = NAN; c.what = "out_min NaN"; c.fields = "out_min|clamp"; c.shape = 0; break;
      case 38: d.out_max = NAN; d.out_min = 0; c.what = "out_max NaN"; c.fields = "out_max|clamp"; c.shape = 0; break;
      default: c.what = NULL; break;
    }
    if (!c.what) break;
    bad_desc_case(c.what, &d, c.want, c.fields, c.shape, NULL);
  }

  /* bad options */
  dlconv_options o;
  struct { const char *what; const char *fields; } oc[] = {
      {"options.algo = 42", "algo"}, {"options.algo = -1", "algo"}, {"options.isa = 77", "isa"},
      {"options.isa = -1", "isa"}, {"options.num_threads = -1", "num_threads|threads"},
      {"options.num_threads = INT32_MIN", "num_threads|threads"},
  };
  for (size_t i = 0; i < ARRAY_LEN(oc); i++) {
    dlconv_options_init(&o);
    switch (i) {
      case 0: o.algo = (dlconv_algo)42; break;
      case 1: o.algo = (dlconv_algo)-1; break;
      case 2: o.isa = (dlconv_isa)77; break;
      case 3: o.isa = (dlconv_isa)-1; break;
      case 4: o.num_threads = -1; break;
      default: o.num_threads = INT32_MIN; break;
    }
    bad_desc_case(oc[i].what, &g_base, DLCONV_ERR_INVALID_ARG, oc[i].fields, 0, &o);
  }
  printf("%ld malformed-call checks, %ld failures\n", g_cases, g_t.fails);
  assert_int_equal(g_t.fails, 0);
}

/* ------------------------------------------------------------------------------------------ */

static void test_bad_pointers(void **state) {
  (void)state;
  long f0 = g_t.fails;
  dlconv_plan *plan;
  canary_buf yb;
  canary_alloc(&yb, g_cd.y_len * 4, 0);

#define PLAN_CASE(what, fields, call)                                               \
  do {                                                                              \
    plan = (dlconv_plan *)(uintptr_t)0x10;                                          \
    reset_last_error();                                                             \
    dlconv_status st_ = (call);                                                     \
    expect_failure(what, st_, DLCONV_ERR_INVALID_ARG, fields);                      \
    if (plan) tally_fail(&g_t, "%s: *plan not NULL", what);                        \
  } while (0)

  reset_last_error();
  expect_failure("plan_conv2d(plan = NULL)", dlconv_plan_conv2d(NULL, &g_base, g_cd.w, NULL, NULL, NULL),
                 DLCONV_ERR_INVALID_ARG, "plan");
  PLAN_CASE("plan_conv2d(desc = NULL)", "desc|d", dlconv_plan_conv2d(&plan, NULL, g_cd.w, NULL, NULL, NULL));
  PLAN_CASE("plan_conv2d(w = NULL)", "w|weights|weight", dlconv_plan_conv2d(&plan, &g_base, NULL, NULL, NULL, NULL));
  PLAN_CASE("plan_conv2d_csr(csr = NULL)", "w|csr", dlconv_plan_conv2d_csr(&plan, &g_base, NULL, NULL, NULL, NULL));
  PLAN_CASE("plan_dense(w = NULL)", "w|weights|weight", dlconv_plan_dense(&plan, 2, 8, 4, DLCONV_F32, NULL, NULL, -INFINITY, INFINITY, NULL, NULL));
  reset_last_error();
  expect_failure("plan_dense(plan = NULL)", dlconv_plan_dense(NULL, 2, 8, 4, DLCONV_F32, g_cd.w, NULL, -INFINITY, INFINITY, NULL, NULL),
                 DLCONV_ERR_INVALID_ARG, "plan");
  /* output_shape's output pointers: refused, naming the pointer, the other output left as it was */
  int32_t ho = -5, wo = -5;
  reset_last_error();
  expect_failure("output_shape(h_out = NULL)", dlconv_conv2d_output_shape(&g_base, NULL, &wo), DLCONV_ERR_INVALID_ARG, "h_out");
  reset_last_error();
  expect_failure("output_shape(w_out = NULL)", dlconv_conv2d_output_shape(&g_base, &ho, NULL), DLCONV_ERR_INVALID_ARG, "w_out");
  reset_last_error();
  expect_failure("output_shape(h_out = w_out = NULL)", dlconv_conv2d_output_shape(&g_base, NULL, NULL), DLCONV_ERR_INVALID_ARG,
                 "h_out|w_out");
  if (ho != -5 || wo != -5) tally_fail(&g_t, "output_shape with a NULL output wrote the other (%d, %d)", ho, wo);

  struct { const char *what; const char *fields; const void *x; const void *w; int y_null; } oc[] = {
      {"conv2d(x = NULL)", "x|input", NULL, g_cd.w, 0},
      {"conv2d(w = NULL)", "w|weights|weight", g_cd.x, NULL, 0},
      {"conv2d(y = NULL)", "y|output", g_cd.x, g_cd.w, 1},
  };
  for (size_t i = 0; i < ARRAY_LEN(oc); i++) {
    reset_last_error();
    dlconv_status st = dlconv_conv2d(&g_base, oc[i].x, oc[i].w, g_cd.bias, oc[i].y_null ? NULL : yb.p, NULL, NULL);
    expect_failure(oc[i].what, st, DLCONV_ERR_INVALID_ARG, oc[i].fields);
    if (!canary_untouched(&yb)) tally_fail(&g_t, "%s: y written", oc[i].what);
  }
  reset_last_error();
  expect_failure("conv2d(desc = NULL)", dlconv_conv2d(NULL, g_cd.x, g_cd.w, NULL, yb.p, NULL, NULL), DLCONV_ERR_INVALID_ARG, "desc|d");

  /* execute */
  reset_last_error();
  expect_failure("execute(plan = NULL)", dlconv_execute(NULL, g_cd.x, yb.p, NULL), DLCONV_ERR_INVALID_ARG, "plan");
  reset_last_error();
  expect_failure("execute(x = NULL)", dlconv_execute(g_ok_plan, NULL, yb.p, NULL), DLCONV_ERR_INVALID_ARG, "x|input");
  reset_last_error();
  expect_failure("execute(y = NULL)", dlconv_execute(g_ok_plan, g_cd.x, NULL, NULL), DLCONV_ERR_INVALID_ARG, "y|output");
  if (!canary_untouched(&yb)) tally_fail(&g_t, "execute with a NULL pointer wrote y");

  /* x and y overlapping: y in the middle of x, y == x, x starting inside y */
  const size_t xl = g_cd.x_len, yl = g_cd.y_len, tot = xl + yl + 64;
  canary_buf ov;
  canary_alloc(&ov, tot * 4, 0);
  float *base = ov.p;
  for (int k = 0; k < 3; k++) {
    float *x = k == 2 ? base + yl / 2 : base;
    float *y = k == 0 ? base + xl / 2 : k == 1 ? base : base;
    if (k == 2) memcpy(x, g_cd.x, xl * 4);
    else memcpy(base, g_cd.x, xl * 4);
    unsigned char *snap = malloc(ov.total);
    memcpy(snap, ov.raw, ov.total);
    char what[64];
    snprintf(what, sizeof what, "execute(x, y overlapping, case %d)", k);
    reset_last_error();
    expect_failure(what, dlconv_execute(g_ok_plan, x, y, NULL), DLCONV_ERR_INVALID_ARG, "x|y|overlap|overlaps|overlapping|alias|aliases");
    if (memcmp(snap, ov.raw, ov.total)) tally_fail(&g_t, "%s: buffer written", what);
    snprintf(what, sizeof what, "conv2d(x, y overlapping, case %d)", k);
    reset_last_error();
    expect_failure(what, dlconv_conv2d(&g_base, x, g_cd.w, g_cd.bias, y, NULL, NULL), DLCONV_ERR_INVALID_ARG,
                   "x|y|overlap|overlaps|overlapping|alias|aliases");
    if (memcmp(snap, ov.raw, ov.total)) tally_fail(&g_t, "%s: buffer written", what);
    free(snap);
  }
  /* adjacent but not overlapping is fine: y right after x, and x right after y */
  for (int k = 0; k < 2; k++) {
    float *x = k ? base + yl : base, *y = k ? base : base + xl;
    memcpy(x, g_cd.x, xl * 4);
    dlconv_status st = dlconv_execute(g_ok_plan, x, y, NULL);
    char msg[400] = "";
    if (st != DLCONV_OK) tally_fail(&g_t, "execute with y adjacent to x (case %d) refused: %s", k, dlconv_last_error());
    else if (check_y(&g_cd, y, msg, sizeof msg)) tally_fail(&g_t, "adjacent x/y case %d: %s", k, msg);
    if (memcmp(x, g_cd.x, xl * 4)) tally_fail(&g_t, "adjacent x/y case %d: x modified", k);
    g_cases++;
  }
  canary_free(&ov);

  /* misaligned caller workspace (needs 64 bytes) */
  const dlconv_options opt = forced_options(DLCONV_ALGO_IM2COL_GEMM, DLCONV_ISA_GENERIC, 1);
  dlconv_plan *wp = NULL;
  if (dlconv_plan_conv2d(&wp, &g_base, g_cd.w, g_cd.bias, NULL, &opt) == DLCONV_OK) {
    size_t ws = dlconv_plan_workspace_size(wp);
    if (ws > 0) {
      canary_buf wsb;
      canary_alloc(&wsb, ws + 64, 0);
      const size_t shifts[] = {4, 32};
      for (size_t i = 0; i < 2; i++) {
        char what[64];
        snprintf(what, sizeof what, "execute(workspace %% 64 == %zu)", shifts[i]);
        reset_last_error();
        expect_failure(what, dlconv_execute(wp, g_cd.x, yb.p, (char *)wsb.p + shifts[i]), DLCONV_ERR_INVALID_ARG, "workspace|ws");
        if (!canary_untouched(&yb)) tally_fail(&g_t, "%s: y written", what);
      }
      canary_free(&wsb);
    } else {
      printf("note: im2col generic plan needs no workspace; misaligned-workspace case skipped\n");
    }
    dlconv_plan_destroy(wp);
  } else {
    tally_fail(&g_t, "im2col/generic plan of the base layer failed: %s", dlconv_last_error());
  }

  /* quantisation parameters: q given for F32, missing for U8/S8 */
  const float wsc = 0.5f;
  dlconv_quant q = {.x_scale = 0.1f, .x_zero_point = 0, .w_scales = &wsc, .n_w_scales = 1, .y_scale = 0.2f, .y_zero_point = 0};
  PLAN_CASE("plan_conv2d(F32 with q)", "q|quant", dlconv_plan_conv2d(&plan, &g_base, g_cd.w, g_cd.bias, &q, NULL));
  reset_last_error();
  expect_failure("conv2d(F32 with q)", dlconv_conv2d(&g_base, g_cd.x, g_cd.w, g_cd.bias, yb.p, &q, NULL), DLCONV_ERR_INVALID_ARG, "q|quant");
  PLAN_CASE("plan_dense(F32 with q)", "q|quant", dlconv_plan_dense(&plan, 2, 8, 4, DLCONV_F32, g_cd.w, NULL, -INFINITY, INFINITY, &q, NULL));
  for (int t = 0; t < 2; t++) {
    dlconv_conv2d_desc d = g_base;
    d.dtype = t ? DLCONV_S8 : DLCONV_U8;
    int8_t w8[4096] = {0};
    int32_t b32[64] = {0};
    char what[64];
    snprintf(what, sizeof what, "plan_conv2d(%s without q)", t ? "S8" : "U8");
    plan = (dlconv_plan *)(uintptr_t)0x10;
    reset_last_error();
    expect_failure(what, dlconv_plan_conv2d(&plan, &d, w8, b32, NULL, NULL), -1, "q|quant");
    if (plan) tally_fail(&g_t, "%s: *plan not NULL", what);
    snprintf(what, sizeof what, "conv2d(%s without q)", t ? "S8" : "U8");
    unsigned char x8[4096] = {0};
    reset_last_error();
    expect_failure(what, dlconv_conv2d(&d, x8, w8, b32, yb.p, NULL, NULL), -1, "q|quant");
    if (!canary_untouched(&yb)) tally_fail(&g_t, "%s: y written", what);
  }
  canary_free(&yb);
  printf("pointer / overlap / workspace / quant checks done, %ld failures\n", g_t.fails - f0);
  assert_int_equal(g_t.fails - f0, 0);
}

/* ------------------------------------------------------------------------------------------ */

static void test_bad_csr(void **state) {
  (void)state;
  long f0 = g_t.fails;
  const dlconv_csr good = g_cd.csr;
  const int32_t rows = good.rows, nnz = good.nnz;
  assert_true(nnz >= 4 && rows >= 3);
  int32_t *rp = malloc(sizeof(int32_t) * (size_t)(rows + 1));
  int32_t *ci = malloc(sizeof(int32_t) * (size_t)nnz);
  canary_buf yb;
  canary_alloc(&yb, g_cd.y_len * 4, 0);
  /* first row with at least two entries (for the duplicate case) */
  int32_t r2 = 0;
  while (r2 < rows && good.row_ptr[r2 + 1] - good.row_ptr[r2] < 2) r2++;
  assert_true(r2 < rows);
  for (int i = 0;; i++) {
    dlconv_csr c = good;
    memcpy(rp, good.row_ptr, sizeof(int32_t) * (size_t)(rows + 1));
    memcpy(ci, good.col_indices, sizeof(int32_t) * (size_t)nnz);
    c.row_ptr = rp;
    c.col_indices = ci;
    const char *what, *fields;
    switch (i) {
      case 0: c.rows = rows - 1; what = "csr.rows != c_out"; fields = "rows|c_out"; break;
      case 1: c.rows = rows + 1; what = "csr.rows = c_out + 1"; fields = "rows|c_out"; break;
      case 2: c.cols = good.cols + 1; what = "csr.cols != (c_in/groups)*k_h*k_w"; fields = "cols"; break;
      case 3: c.cols = good.cols * 2; what = "csr.cols = c_in*k_h*k_w with groups 2"; fields = "cols"; break;
      case 4: rp[0] = 1; what = "row_ptr[0] = 1"; fields = "row_ptr"; break;
      case 5: rp[1] = rp[2] + 1; what = "decreasing row_ptr"; fields = "row_ptr"; break;
      case 6: rp[rows] = nnz - 1; what = "row_ptr[rows] != nnz"; fields = "row_ptr|nnz"; break;
      case 7: c.nnz = nnz + 1; what = "nnz != row_ptr[rows]"; fields = "row_ptr|nnz"; break;
      case 8: ci[0] = good.cols; what = "column == cols (out of range)"; fields = "col_indices|column|col|cols"; break;
      case 9: ci[nnz - 1] = -1; what = "column = -1"; fields = "col_indices|column|col|cols"; break;
      case 10: ci[good.row_ptr[r2] + 1] = ci[good.row_ptr[r2]]; what = "duplicate column in a row";
        fields = "col_indices|column|col|cols|duplicate|duplicated"; break;
      case 11: c.nnz = -1; what = "nnz = -1"; fields = "nnz"; break;
      case 12: c.values = NULL; what = "values = NULL with nnz > 0"; fields = "values"; break;
      case 13: c.col_indices = NULL; what = "col_indices = NULL"; fields = "col_indices"; break;
      case 14: c.row_ptr = NULL; what = "row_ptr = NULL"; fields = "row_ptr"; break;
      case 15: rp[rows - 1] = rp[rows] + 1; what = "row_ptr[rows-1] > row_ptr[rows]"; fields = "row_ptr"; break;
      case 16: rp[1] = -3; what = "negative row_ptr entry"; fields = "row_ptr"; break;
      default: what = ""; fields = NULL; break;
    }
    if (!what[0]) break;
    char name[128];
    dlconv_plan *plan = (dlconv_plan *)(uintptr_t)0x10;
    snprintf(name, sizeof name, "plan_conv2d_csr(%s)", what);
    reset_last_error();
    expect_failure(name, dlconv_plan_conv2d_csr(&plan, &g_base, &c, g_cd.bias, NULL, NULL), DLCONV_ERR_INVALID_ARG, fields);
    if (plan) tally_fail(&g_t, "%s: *plan not NULL", name);
    /* the same through every explicit algorithm on GENERIC (each densifies or uses the CSR) */
    for (int a = DLCONV_ALGO_DIRECT; a <= DLCONV_ALGO_SPARSE_CSR; a++) {
      dlconv_options o;
      dlconv_options_init(&o);
      o.algo = (dlconv_algo)a;
      o.isa = DLCONV_ISA_GENERIC;
      plan = (dlconv_plan *)(uintptr_t)0x10;
      snprintf(name, sizeof name, "plan_conv2d_csr(%s, algo %s)", what, algo_name(a));
      reset_last_error();
      expect_failure(name, dlconv_plan_conv2d_csr(&plan, &g_base, &c, g_cd.bias, NULL, &o), DLCONV_ERR_INVALID_ARG, fields);
      if (plan) tally_fail(&g_t, "%s: *plan not NULL", name);
    }
  }
  free(rp);
  free(ci);
  canary_free(&yb);
  printf("CSR checks done, %ld failures\n", g_t.fails - f0);
  assert_int_equal(g_t.fails - f0, 0);
}

static void test_bad_dense(void **state) {
  (void)state;
  long f0 = g_t.fails;
  canary_buf yb;
  canary_alloc(&yb, 4096, 0);
  float w[64], x[64], b[8];
  for (int i = 0; i < 64; i++) w[i] = x[i] = 0.25f;
  for (int i = 0; i < 8; i++) b[i] = 1;
  struct { const char *what; const char *fields; int32_t batch, in, out; int dt; float lo, hi; } c[] = {
      {"in_features = 0", "in_features|in|features", 2, 0, 4, DLCONV_F32, -INFINITY, INFINITY},
      {"out_features = 0", "out_features|out|features", 2, 8, 0, DLCONV_F32, -INFINITY, INFINITY},
      {"in_features = -8", "in_features|in|features", 2, -8, 4, DLCONV_F32, -INFINITY, INFINITY},
      {"batch = 0", "batch|n", 0, 8, 4, DLCONV_F32, -INFINITY, INFINITY},
      {"batch = -1", "batch|n", -1, 8, 4, DLCONV_F32, -INFINITY, INFINITY},
      {"out_min > out_max", "out_min|out_max|clamp", 2, 8, 4, DLCONV_F32, 3, 2},
      {"out_max NaN", "out_max|clamp", 2, 8, 4, DLCONV_F32, 0, NAN},
      {"dtype = 99", "dtype", 2, 8, 4, 99, -INFINITY, INFINITY},
      {"batch*in overflow", NULL, I32MAX, I32MAX, 4, DLCONV_F32, -INFINITY, INFINITY},
  };
  for (size_t i = 0; i < ARRAY_LEN(c); i++) {
    char name[96];
    dlconv_plan *plan = (dlconv_plan *)(uintptr_t)0x10;
    snprintf(name, sizeof name, "plan_dense(%s)", c[i].what);
    reset_last_error();
    expect_failure(name, dlconv_plan_dense(&plan, c[i].batch, c[i].in, c[i].out, (dlconv_dtype)c[i].dt, w, b, c[i].lo, c[i].hi, NULL, NULL),
                   DLCONV_ERR_INVALID_ARG, c[i].fields);
    if (plan) tally_fail(&g_t, "%s: *plan not NULL", name);
    snprintf(name, sizeof name, "dense(%s)", c[i].what);
    reset_last_error();
    expect_failure(name, dlconv_dense(c[i].batch, c[i].in, c[i].out, (dlconv_dtype)c[i].dt, x, w, b, yb.p, c[i].lo, c[i].hi, NULL, NULL),
                   DLCONV_ERR_INVALID_ARG, c[i].fields);
    if (!canary_untouched(&yb)) tally_fail(&g_t, "%s: y written", name);
  }
  reset_last_error();
  expect_failure("dense(x = NULL)", dlconv_dense(2, 8, 4, DLCONV_F32, NULL, w, b, yb.p, -INFINITY, INFINITY, NULL, NULL),
                 DLCONV_ERR_INVALID_ARG, "x|input");
  reset_last_error();
  expect_failure("dense(y = NULL)", dlconv_dense(2, 8, 4, DLCONV_F32, x, w, b, NULL, -INFINITY, INFINITY, NULL, NULL),
                 DLCONV_ERR_INVALID_ARG, "y|output");
  if (!canary_untouched(&yb)) tally_fail(&g_t, "dense with NULL pointers wrote y");
  canary_free(&yb);
  printf("dense checks done, %ld failures\n", g_t.fails - f0);
  assert_int_equal(g_t.fails - f0, 0);
}

/* ------------------------------------------------------------------------------------------ */

static void test_status_strings(void **state) {
  (void)state;
  const char *seen[7];
  for (int s = 0; s <= DLCONV_ERR_INTERNAL; s++) {
    const char *str = dlconv_status_string((dlconv_status)s);
    assert_non_null(str);
    assert_true(str[0] != 0);
    for (int t = 0; t < s; t++) assert_string_not_equal(str, seen[t]);
    seen[s] = str;
  }
  const int unknown[] = {-1, 7, 99, INT32_MAX, INT32_MIN};
  for (size_t i = 0; i < ARRAY_LEN(unknown); i++) {
    const char *str = dlconv_status_string((dlconv_status)unknown[i]);
    assert_non_null(str);
    assert_true(str[0] != 0);
  }
  assert_non_null(dlconv_last_error());
}

static void test_isa_available(void **state) {
  (void)state;
  const int isas[] = {-1, 0, 1, 2, 3, 4, 5, 6, 99};
  for (size_t i = 0; i < ARRAY_LEN(isas); i++) {
    int v = dlconv_isa_available((dlconv_isa)isas[i]);
    if (v != 0 && v != 1) fail_msg("dlconv_isa_available(%d) = %d, must be 0 or 1", isas[i], v);
  }
  assert_int_equal(dlconv_isa_available(DLCONV_ISA_GENERIC), 1);
  printf("ISAs available:");
  for (int i = 0; i < N_ISAS; i++)
    if (dlconv_isa_available((dlconv_isa)i)) printf(" %s", isa_name(i));
  printf("\n");
}

static void test_cuda_unavailable(void **state) {
  (void)state;
  if (dlconv_isa_available(DLCONV_ISA_CUDA)) skip();
  canary_buf yb;
  canary_alloc(&yb, g_cd.y_len * 4, 0);
  for (int a = 0; a < N_ALGOS; a++) {
    dlconv_options o;
    dlconv_options_init(&o);
    o.algo = (dlconv_algo)a;
    o.isa = DLCONV_ISA_CUDA;
    dlconv_plan *plan = (dlconv_plan *)(uintptr_t)0x10;
    reset_last_error();
    dlconv_status st = dlconv_plan_conv2d(&plan, &g_base, g_cd.w, g_cd.bias, NULL, &o);
    if (st != DLCONV_ERR_UNSUPPORTED) fail_msg("CUDA plan, algo %s: %s", algo_name(a), dlconv_status_string(st));
    assert_null(plan);
    assert_true(dlconv_last_error()[0] != 0);
    st = dlconv_conv2d(&g_base, g_cd.x, g_cd.w, g_cd.bias, yb.p, NULL, &o);
    assert_int_equal(st, DLCONV_ERR_UNSUPPORTED);
    assert_true(canary_untouched(&yb));
  }
  canary_free(&yb);
}

/* F16 / U8 / S8 (values are checked in test_lowp.c): AUTO, IM2COL_GEMM, SPATIAL_PACK, GSPC and SPARSE_CSR plan and execute on
 * every available ISA; an explicit algorithm without a low-precision path for this layer (NHWC)
 * answers UNSUPPORTED and leaves no trace. Flip an entry of LOWP_PATH to 1 once that algorithm
 * gains F16/int8 support; F16 DIRECT has it on the x86 and generic ISAs. */
static void test_other_dtypes(void **state) {
  (void)state;
  static const int LOWP_PATH[N_ALGOS] = {
      [DLCONV_ALGO_AUTO] = 1, [DLCONV_ALGO_DIRECT] = 0, [DLCONV_ALGO_IM2COL_GEMM] = 1,
      [DLCONV_ALGO_SPATIAL_PACK] = 1, [DLCONV_ALGO_GSPC] = 1, [DLCONV_ALGO_SPARSE_CSR] = 1,
  };
  long f0 = g_t.fails;
  const float wsc[8] = {0.01f, 0.02f, 0.03f, 0.01f, 0.02f, 0.05f, 0.01f, 0.01f};
  const dlconv_quant q = {.x_scale = 0.05f, .x_zero_point = 3, .w_scales = wsc, .n_w_scales = 6, .y_scale = 0.1f, .y_zero_point = -2};
  const dlconv_quant qu = {.x_scale = 0.05f, .x_zero_point = 128, .w_scales = wsc, .n_w_scales = 1, .y_scale = 0.1f, .y_zero_point = 100};
  const dlconv_dtype dts[] = {DLCONV_F16, DLCONV_U8, DLCONV_S8};
  unsigned char buf_w[2048], buf_b[256];
  uint16_t w16[1024], b16[64];
  for (size_t i = 0; i < sizeof buf_w; i++) buf_w[i] = (unsigned char)(i * 37u);
  memset(buf_b, 0, sizeof buf_b);
  /* finite F16 weights and bias: +-[0.125, 0.25) */
  for (size_t i = 0; i < ARRAY_LEN(w16); i++) w16[i] = (uint16_t)(0x3000u | ((i * 37u) & 0x83ffu));
  for (size_t i = 0; i < ARRAY_LEN(b16); i++) b16[i] = (uint16_t)(0x3000u | ((i * 91u) & 0x83ffu));
  dlconv_isa isas[8];
  int ni = 0;
  isas[ni++] = DLCONV_ISA_AUTO;
  ni += cpu_isas(isas + 1);
  for (size_t t = 0; t < ARRAY_LEN(dts); t++) {
    dlconv_conv2d_desc d = g_base;
    d.dtype = dts[t];
    const dlconv_quant *qp = dts[t] == DLCONV_F16 ? NULL : dts[t] == DLCONV_U8 ? &qu : &q;
    const size_t es = dts[t] == DLCONV_F16 ? 2 : 1;
    const void *wp = dts[t] == DLCONV_F16 ? (const void *)w16 : (const void *)buf_w;
    const void *bp = dts[t] == DLCONV_F16 ? (const void *)b16 : (const void *)buf_b;
    const char *tn = dts[t] == DLCONV_F16 ? "F16" : dts[t] == DLCONV_U8 ? "U8" : "S8";
    for (int a = 0; a < N_ALGOS; a++)
      for (int i = 0; i < ni; i++) {
        dlconv_options o;
        dlconv_options_init(&o);
        o.algo = (dlconv_algo)a;
        o.isa = isas[i];
        dlconv_plan *plan = (dlconv_plan *)(uintptr_t)0x10;
        reset_last_error();
        dlconv_status st = dlconv_plan_conv2d(&plan, &d, wp, bp, qp, &o);
        canary_buf xb, yb;
        canary_alloc(&xb, g_cd.x_len * es, 0);
        memset(xb.p, 0x3c, xb.bytes);
        canary_alloc(&yb, g_cd.y_len * es, 0);
        /* F16 DIRECT of this layout (NHWC, groups 1) runs on the fp32 conv kernels of the families
           that store binary16: generic, avx2 and avx512; not on neon, and AUTO takes either */
        const int f16_direct = dts[t] == DLCONV_F16 && a == DLCONV_ALGO_DIRECT;
        const int f16_direct_any = f16_direct && (isas[i] == DLCONV_ISA_AUTO || isas[i] == DLCONV_ISA_NEON);
        const int expect_ok = LOWP_PATH[a] || (f16_direct && !f16_direct_any) || (f16_direct_any && st == DLCONV_OK);
        if (!expect_ok) {
          /* no low-precision path: UNSUPPORTED, *plan NULL, a message, y untouched by the one-shot call */
          if (st != DLCONV_ERR_UNSUPPORTED) {
            tally_fail(&g_t, "%s algo %s isa %s: plan -> %s, expected UNSUPPORTED (%s)", tn, algo_name(a),
                       isa_name(isas[i]), dlconv_status_string(st), dlconv_last_error());
            if (st == DLCONV_OK) dlconv_plan_destroy(plan);
          } else {
            if (plan) tally_fail(&g_t, "%s algo %s isa %s: *plan not NULL", tn, algo_name(a), isa_name(isas[i]));
            if (!dlconv_last_error()[0]) tally_fail(&g_t, "%s algo %s: empty last_error", tn, algo_name(a));
            st = dlconv_conv2d(&d, xb.p, wp, bp, yb.p, qp, &o);
            if (st != DLCONV_ERR_UNSUPPORTED)
              tally_fail(&g_t, "%s algo %s isa %s: plan UNSUPPORTED but one-shot %s", tn, algo_name(a),
                         isa_name(isas[i]), dlconv_status_string(st));
            if (!canary_untouched(&yb)) tally_fail(&g_t, "%s algo %s: failed one-shot wrote y", tn, algo_name(a));
          }
          if (i == 0) printf("%s algo %-6s: %s\n", tn, algo_name(a), dlconv_status_string(st));
        } else if (st != DLCONV_OK) {
          tally_fail(&g_t, "%s algo %s isa %s: plan -> %s (%s)", tn, algo_name(a), isa_name(isas[i]),
                     dlconv_status_string(st), dlconv_last_error());
        } else {
          dlconv_plan_info info;
          assert_int_equal(dlconv_plan_query(plan, &info), DLCONV_OK);
          if (info.dtype != dts[t] || info.algo == DLCONV_ALGO_AUTO || (a != DLCONV_ALGO_AUTO && (int)info.algo != a) ||
              info.isa == DLCONV_ISA_AUTO || (isas[i] != DLCONV_ISA_AUTO && info.isa != isas[i]))
            tally_fail(&g_t, "%s algo %s isa %s: plan_query says dtype %d algo %s isa %s", tn, algo_name(a),
                       isa_name(isas[i]), (int)info.dtype, algo_name(info.algo), isa_name(info.isa));
          /* two executes into differently pre-filled y: the same bits, so every point is written */
          unsigned char *y1 = malloc(yb.bytes);
          memset(yb.p, 0x00, yb.bytes);
          st = dlconv_execute(plan, xb.p, yb.p, NULL);
          memcpy(y1, yb.p, yb.bytes);
          memset(yb.p, 0xff, yb.bytes);
          dlconv_status st2 = dlconv_execute(plan, xb.p, yb.p, NULL);
          if (st != DLCONV_OK || st2 != DLCONV_OK)
            tally_fail(&g_t, "%s algo %s isa %s: execute -> %s / %s", tn, algo_name(a), isa_name(isas[i]),
                       dlconv_status_string(st), dlconv_status_string(st2));
          else if (memcmp(y1, yb.p, yb.bytes))
            tally_fail(&g_t, "%s algo %s isa %s: y depends on its previous contents", tn, algo_name(a), isa_name(isas[i]));
          if (!canary_guards_ok(&yb)) tally_fail(&g_t, "%s algo %s isa %s: wrote outside y", tn, algo_name(a), isa_name(isas[i]));
          free(y1);
          if (i == 0) printf("%s algo %-6s: OK (%s/%s/%s)\n", tn, algo_name(a), algo_name(info.algo), isa_name(info.isa), info.kernel);
          dlconv_plan_destroy(plan);
        }
        canary_free(&xb);
        canary_free(&yb);
      }
  }
  assert_int_equal(g_t.fails - f0, 0);
}

/* dlconv_conv2d_output_shape agrees with the formula on valid descriptors. */
static void test_output_shape(void **state) {
  (void)state;
  rng_t r = rng_seed(99);
  for (int i = 0; i < 2000; i++) {
    dlconv_conv2d_desc d;
    dlconv_conv2d_desc_init(&d, rng_int(&r, 1, 4), 4, rng_int(&r, 1, 300), rng_int(&r, 1, 300), 8,
                            rng_int(&r, 1, 11), rng_int(&r, 1, 11));
    d.stride_h = rng_int(&r, 1, 5); d.stride_w = rng_int(&r, 1, 5);
    d.dilation_h = rng_int(&r, 1, 4); d.dilation_w = rng_int(&r, 1, 4);
    d.pad_top = rng_int(&r, 0, 6); d.pad_bottom = rng_int(&r, 0, 6);
    d.pad_left = rng_int(&r, 0, 6); d.pad_right = rng_int(&r, 0, 6);
    int64_t eh = oracle_out_dim(d.h_in, d.pad_top, d.pad_bottom, d.k_h, d.dilation_h, d.stride_h);
    int64_t ew = oracle_out_dim(d.w_in, d.pad_left, d.pad_right, d.k_w, d.dilation_w, d.stride_w);
    int32_t ho = -5, wo = -5;
    dlconv_status st = dlconv_conv2d_output_shape(&d, &ho, &wo);
    if (eh >= 1 && ew >= 1) {
      if (st != DLCONV_OK || ho != eh || wo != ew)
        fail_msg("output_shape #%d: %d %dx%d, expected %lldx%lld", i, (int)st, ho, wo, (long long)eh, (long long)ew);
    } else if (st != DLCONV_ERR_INVALID_ARG) {
      fail_msg("output_shape #%d: output %lldx%lld accepted (%d)", i, (long long)eh, (long long)ew, (int)st);
    }
  }
  /* large but valid: h_out exactly INT32_MAX is still representable */
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 1, 1, I32MAX, 1, 1, 1, 1);
  int32_t ho = 0, wo = 0;
  assert_int_equal(dlconv_conv2d_output_shape(&d, &ho, &wo), DLCONV_OK);
  assert_int_equal(ho, I32MAX);
  assert_int_equal(wo, 1);
  assert_int_not_equal(dlconv_conv2d_output_shape(NULL, &ho, &wo), DLCONV_OK);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_status_strings),
      cmocka_unit_test(test_isa_available),
      cmocka_unit_test(test_bad_descriptors),
      cmocka_unit_test(test_bad_pointers),
      cmocka_unit_test(test_bad_csr),
      cmocka_unit_test(test_bad_dense),
      cmocka_unit_test(test_cuda_unavailable),
      cmocka_unit_test(test_other_dtypes),
      cmocka_unit_test(test_output_shape),
  };
  return cmocka_run_group_tests_name("invalid", tests, setup, teardown);
}
