/* DLCONV_VERIFY=1 (docs/api.md, "Self-check"), run with that variable set by meson:
 *
 * - a wrong micro-kernel (the corrupt-kernel hook of src/core/test_hooks.h, which perturbs the
 *   first element of every tile a kernel stores) is caught for every algorithm (AUTO and the five
 *   explicit ones), every ISA the machine has, and every planning entry point (conv2d, conv2d
 *   from CSR, dense): the execute answers DLCONV_ERR_INTERNAL, dlconv_last_error() says
 *   "DLCONV_VERIFY mismatch" and names the plan, and one line goes to stderr;
 * - the same plans without the hook pass, silently;
 * - no false alarm on non-finite inputs: NaN/Inf in x against zero weights (dense kernels
 *   compute NaN*0 = NaN, CSR kernels never multiply a zero weight), explicit zeros stored in
 *   caller CSR values, and infinite weights against zero padding.
 *
 * Links the static library and includes the internal test_hooks.h. */
#include <unistd.h>

#include "test_common.h"

#include "core/test_hooks.h"

typedef struct vcase {
  const char *name;
  case_kind kind;
  dlconv_conv2d_desc d;
} vcase;

/* The layers every check runs: padded and strided, NCHW and NHWC, grouped, depthwise, 1x1, from
   caller CSR and dense; returns their count. */
static int make_cases(vcase *v) {
  int n = 0;
  dlconv_conv2d_desc *d;
  /* 3x3 same padding, NCHW */
  v[n].name = "3x3 pad NCHW";
  v[n].kind = KIND_CONV;
  d = &v[n++].d;
  dlconv_conv2d_desc_init(d, 1, 8, 9, 10, 19, 3, 3);
  d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1;
  /* strided, clamped, NHWC, batch 2 */
  v[n].name = "5x3 stride 2 NHWC relu6";
  v[n].kind = KIND_CONV;
  d = &v[n++].d;
  dlconv_conv2d_desc_init(d, 2, 6, 11, 9, 12, 5, 3);
  d->stride_h = d->stride_w = 2;
  d->pad_top = 2; d->pad_bottom = 1; d->pad_left = 1;
  d->layout = DLCONV_NHWC;
  d->out_min = 0; d->out_max = 6;
  /* depthwise NHWC (direct dwc, gspc groups in lanes) */
  v[n].name = "depthwise NHWC";
  v[n].kind = KIND_CONV;
  d = &v[n++].d;
  dlconv_conv2d_desc_init(d, 1, 16, 8, 8, 16, 3, 3);
  d->groups = 16;
  d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1;
  d->layout = DLCONV_NHWC;
  /* depthwise NCHW x2 (direct dwp) */
  v[n].name = "depthwise x2 NCHW";
  v[n].kind = KIND_CONV;
  d = &v[n++].d;
  dlconv_conv2d_desc_init(d, 1, 8, 12, 13, 16, 3, 3);
  d->groups = 8;
  d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1;
  /* grouped pointwise NCHW, no padding (gspc reading x in place, gemm without im2col) */
  v[n].name = "grouped 1x1 NCHW";
  v[n].kind = KIND_CONV;
  d = &v[n++].d;
  dlconv_conv2d_desc_init(d, 1, 16, 7, 7, 24, 1, 1);
  d->groups = 4;
  /* the same 3x3 layer planned from caller CSR weights */
  v[n].name = "3x3 via CSR";
  v[n].kind = KIND_CSR;
  d = &v[n++].d;
  dlconv_conv2d_desc_init(d, 1, 8, 9, 10, 19, 3, 3);
  d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1;
  /* dense */
  v[n].name = "dense";
  v[n].kind = KIND_DENSE;
  d = &v[n++].d;
  dense_desc(d, 3, 40, 21, -INFINITY, INFINITY);
  return n;
}

/* stderr into a temporary file while a call runs */
typedef struct capture {
  int saved;
  FILE *f;
} capture;

static void capture_begin(capture *c) {
  fflush(stderr);
  c->f = tmpfile();
  assert_non_null(c->f);
  c->saved = dup(2);
  dup2(fileno(c->f), 2);
}

/* the captured text (malloc'ed) */
static char *capture_end(capture *c) {
  fflush(stderr);
  dup2(c->saved, 2);
  close(c->saved);
  long n = ftell(c->f);
  char *s = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
  rewind(c->f);
  if (n > 0 && fread(s, 1, (size_t)n, c->f) != (size_t)n) s[0] = 0;
  fclose(c->f);
  return s;
}

static int count_lines(const char *s) {
  int n = 0;
  for (; *s; s++) n += *s == '\n';
  return n;
}

/* every algorithm (AUTO too) on every ISA the machine has, and AUTO/AUTO */
static int verify_pairs(pair *ps) {
  dlconv_isa isas[8];
  int ni = cpu_isas(isas), n = 0;
  for (int a = DLCONV_ALGO_AUTO; a <= DLCONV_ALGO_SPARSE_CSR; a++)
    for (int i = 0; i < ni; i++) ps[n++] = (pair){(dlconv_algo)a, isas[i]};
  ps[n++] = (pair){DLCONV_ALGO_AUTO, DLCONV_ISA_AUTO};
  return n;
}

static void require_verify_env(void) {
  const char *v = getenv("DLCONV_VERIFY");
  if (!v || strcmp(v, "1")) {
    print_error("run this test with DLCONV_VERIFY=1 (meson does)\n");
    fail();
  }
}

/* Plan cd with (algo, isa) and execute once into a NaN-filled y; *st_exec is the execute status,
   *printed what went to stderr. Returns the plan status. */
static dlconv_status plan_and_run(const conv_data *cd, pair p, dlconv_status *st_exec, char **printed,
                                  char *err, size_t errlen, dlconv_plan_info *info) {
  run_cfg c = {.algo = p.algo, .isa = p.isa, .num_threads = 1};
  dlconv_options o;
  cfg_options(&c, &o);
  dlconv_plan *plan = NULL;
  memset(info, 0, sizeof *info);
  dlconv_status st = cd_plan(cd, &plan, &o);
  *printed = NULL;
  if (st != DLCONV_OK) {
    snprintf(err, errlen, "%s", dlconv_last_error());
    return st;
  }
  dlconv_plan_query(plan, info);
  float *y = malloc(cd->y_len * 4 + 4);
  fill_nan(y, cd->y_len * 4);
  capture cap;
  capture_begin(&cap);
  *st_exec = dlconv_execute(plan, cd->x, y, NULL);
  *printed = capture_end(&cap);
  snprintf(err, errlen, "%s", dlconv_last_error());
  if (*st_exec == DLCONV_OK) {
    char m[400] = "";
    if (check_y(cd, y, m, sizeof m)) snprintf(err, errlen, "OK but wrong output: %s", m);
  }
  free(y);
  dlconv_plan_destroy(plan);
  return st;
}

static void run_hook_cases(int corrupt) {
  require_verify_env();
  vcase vc[16];
  int nc = make_cases(vc);
  pair ps[64];
  int np = verify_pairs(ps);
  tally t = {0};
  long caught[N_ALGOS][N_ISAS] = {{0}}, planned[N_ALGOS][N_ISAS] = {{0}};
  for (int k = 0; k < nc; k++) {
    rng_t r = rng_seed(700 + (uint64_t)k);
    data_opts o = {.bias = k % 2 == 0, .zero_frac = vc[k].kind == KIND_CSR ? 0.7 : 0.0};
    conv_data cd;
    cd_init(&cd, vc[k].kind, &vc[k].d, &r, &o);
    for (int i = 0; i < np; i++) {
      dlc_test_corrupt_kernels(corrupt);
      dlconv_status st_exec = DLCONV_OK;
      char *printed, err[600];
      dlconv_plan_info info;
      dlconv_status st = plan_and_run(&cd, ps[i], &st_exec, &printed, err, sizeof err, &info);
      dlc_test_corrupt_kernels(0);
      if (st == DLCONV_ERR_UNSUPPORTED && !pair_required(ps[i].algo, ps[i].isa)) continue;
      if (st != DLCONV_OK) {
        tally_fail(&t, "%s %s/%s: plan -> %s (%s)", vc[k].name, algo_name(ps[i].algo), isa_name(ps[i].isa),
                   dlconv_status_string(st), err);
        continue;
      }
      planned[ps[i].algo][ps[i].isa]++;
      if (corrupt) {
        if (st_exec != DLCONV_ERR_INTERNAL)
          tally_fail(&t, "%s %s/%s (%s): corrupt kernel not caught: execute -> %s (%s)", vc[k].name,
                     algo_name(ps[i].algo), isa_name(ps[i].isa), info.kernel, dlconv_status_string(st_exec), err);
        else if (!strstr(err, "DLCONV_VERIFY mismatch") || !strstr(err, info.kernel))
          tally_fail(&t, "%s %s/%s: last_error does not name the mismatch and kernel %s: \"%s\"", vc[k].name,
                     algo_name(ps[i].algo), isa_name(ps[i].isa), info.kernel, err);
        else if (count_lines(printed) != 1 || !strstr(printed, "DLCONV_VERIFY mismatch"))
          tally_fail(&t, "%s %s/%s: expected one stderr line, got \"%.300s\"", vc[k].name, algo_name(ps[i].algo),
                     isa_name(ps[i].isa), printed);
        else
          caught[ps[i].algo][ps[i].isa]++;
      } else {
        if (st_exec != DLCONV_OK || strstr(err, "OK but wrong"))
          tally_fail(&t, "%s %s/%s (%s): clean kernel: execute -> %s (%s)", vc[k].name, algo_name(ps[i].algo),
                     isa_name(ps[i].isa), info.kernel, dlconv_status_string(st_exec), err);
        else if (printed[0])
          tally_fail(&t, "%s %s/%s: clean kernel but stderr \"%.300s\"", vc[k].name, algo_name(ps[i].algo),
                     isa_name(ps[i].isa), printed);
      }
      free(printed);
    }
    cd_free(&cd);
  }
  /* every explicit algorithm, on every ISA the machine has, was planned (and caught) */
  for (int i = 0; i < np; i++) {
    if (!pair_required(ps[i].algo, ps[i].isa)) continue;
    if (!planned[ps[i].algo][ps[i].isa])
      tally_fail(&t, "%s/%s never planned", algo_name(ps[i].algo), isa_name(ps[i].isa));
    if (corrupt) printf("  %-7s %-8s caught %ld of %ld plans\n", algo_name(ps[i].algo), isa_name(ps[i].isa),
                        caught[ps[i].algo][ps[i].isa], planned[ps[i].algo][ps[i].isa]);
  }
  assert_int_equal(t.fails, 0);
}

static void test_corrupt_kernels_caught(void **state) {
  (void)state;
  run_hook_cases(1);
}

static void test_clean_kernels_pass(void **state) {
  (void)state;
  run_hook_cases(0);
}

/* NaN and Inf in x meeting zero weights, explicit zeros in caller CSR, Inf weights meeting
   zero padding: every algorithm and ISA must pass DLCONV_VERIFY (no false alarm), and the
   outputs that depend on a non-finite input through a nonzero weight must be non-finite. */
static void test_nonfinite_no_false_alarm(void **state) {
  (void)state;
  require_verify_env();
  pair ps[64];
  int np = verify_pairs(ps);
  tally t = {0};
  for (int v = 0; v < 4; v++) {
    dlconv_conv2d_desc d;
    dlconv_conv2d_desc_init(&d, 1, 4, 7, 8, 6, 3, 3);
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    if (v & 1) d.layout = DLCONV_NHWC;
    if (v >= 2) { d.out_min = 0; d.out_max = 6; }
    for (int kind = KIND_CONV; kind <= KIND_CSR; kind += 2) {
      for (int inf_w = 0; inf_w < 2; inf_w++) {
        if (inf_w && kind == KIND_CSR) continue;
        rng_t r = rng_seed(900 + (uint64_t)v);
        data_opts o = {.bias = 1, .zero_frac = 0.5};
        conv_data cd;
        cd_init(&cd, (case_kind)kind, &d, &r, &o);
        if (inf_w) {
          /* corner taps infinite: they meet the zero padding on the borders */
          for (int oc = 0; oc < d.c_out; oc++) cd.w[(size_t)oc * cd.K] = oc & 1 ? INFINITY : -INFINITY;
        } else {
          /* non-finite x everywhere in channel 1's first row and at one pixel of channel 3 */
          for (int iw = 0; iw < d.w_in; iw++) {
            size_t i = d.layout == DLCONV_NHWC ? (size_t)iw * 4 + 1 : (size_t)(1 * d.h_in * d.w_in + iw);
            cd.x[i] = iw % 3 == 0 ? NAN : iw % 3 == 1 ? INFINITY : -INFINITY;
          }
          size_t j = d.layout == DLCONV_NHWC ? (size_t)((3 * d.w_in + 4) * 4 + 3) : (size_t)((3 * d.h_in + 3) * d.w_in + 4);
          cd.x[j] = NAN;
          /* and a stored zero in every caller CSR row (the CSR kernel multiplies it) */
          if (kind == KIND_CSR)
            for (int oc = 0; oc < d.c_out; oc++)
              if (cd.csr.row_ptr[oc + 1] > cd.csr.row_ptr[oc]) cd.csr_vals[cd.csr.row_ptr[oc]] = 0.0f;
        }
        cd_refresh(&cd);
        if (kind == KIND_CSR) memcpy(cd.csr_vals0, cd.csr_vals, (size_t)cd.csr.nnz * 4);
        for (int i = 0; i < np; i++) {
          dlconv_status st_exec = DLCONV_OK;
          char *printed, err[600];
          dlconv_plan_info info;
          dlconv_status st = plan_and_run(&cd, ps[i], &st_exec, &printed, err, sizeof err, &info);
          if (st == DLCONV_ERR_UNSUPPORTED && !pair_required(ps[i].algo, ps[i].isa)) continue;
          if (st != DLCONV_OK) {
            tally_fail(&t, "v%d %s/%s: plan -> %s (%s)", v, algo_name(ps[i].algo), isa_name(ps[i].isa),
                       dlconv_status_string(st), err);
          } else if (st_exec != DLCONV_OK) {
            tally_fail(&t, "v%d %s%s %s/%s (%s): false alarm: execute -> %s (%s)", v, kind == KIND_CSR ? "csr" : "dense",
                       inf_w ? " inf-weights" : " nonfinite-x", algo_name(ps[i].algo), isa_name(ps[i].isa), info.kernel,
                       dlconv_status_string(st_exec), err);
          } else if (printed[0]) {
            tally_fail(&t, "v%d %s/%s: OK but stderr \"%.200s\"", v, algo_name(ps[i].algo), isa_name(ps[i].isa), printed);
          }
          free(printed);
        }
        cd_free(&cd);
      }
    }
  }
  assert_int_equal(t.fails, 0);
}

/* Denormal inputs: the kernels run with flush-to-zero and denormals-are-zero (src/core/fpenv.h),
   so an output made only of denormal contributions comes out 0 where the double reference is
   tiny but nonzero. That is the library's documented precision, not a wrong kernel: no alarm. */
static void test_denormals_no_false_alarm(void **state) {
  (void)state;
  require_verify_env();
  pair ps[64];
  int np = verify_pairs(ps);
  tally t = {0};
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 1, 4, 6, 6, 5, 3, 3);
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
  for (int v = 0; v < 2; v++) {
    rng_t r = rng_seed(31337);
    data_opts o = {.bias = 0};
    conv_data cd;
    cd_init(&cd, KIND_CONV, &d, &r, &o);
    /* v 0: denormal x times big weights; v 1: big x times denormal weights (products ~1e-30) */
    for (size_t i = 0; i < cd.x_len; i++) cd.x[i] = (v ? 1e10f : 1e-40f) * (float)(1 + i % 7);
    for (size_t i = 0; i < cd.w_len; i++) cd.w[i] = (v ? 1e-40f : 1e10f) * (i % 2 ? 1.0f : -0.5f);
    cd_refresh(&cd);
    for (int i = 0; i < np; i++) {
      dlconv_status st_exec = DLCONV_OK;
      char *printed, err[600];
      dlconv_plan_info info;
      dlconv_status st = plan_and_run(&cd, ps[i], &st_exec, &printed, err, sizeof err, &info);
      if (st == DLCONV_ERR_UNSUPPORTED && !pair_required(ps[i].algo, ps[i].isa)) continue;
      if (st != DLCONV_OK || st_exec != DLCONV_OK)
        tally_fail(&t, "%s/%s (%s): plan %s, execute %s (%s)", algo_name(ps[i].algo), isa_name(ps[i].isa), info.kernel,
                   dlconv_status_string(st), dlconv_status_string(st_exec), err);
      free(printed);
    }
    cd_free(&cd);
  }
  assert_int_equal(t.fails, 0);
}

int main(void) {
  return RUN_GROUP("verify_hook", test_clean_kernels_pass, test_corrupt_kernels_caught, test_nonfinite_no_false_alarm,
                   test_denormals_no_false_alarm);
}
