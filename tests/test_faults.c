/* Fault injection: every allocation the library makes can fail, one at a time.
 *
 * For representative shapes, every algorithm (AUTO, direct, im2col, spack, gspc, csr) and every
 * entry point that allocates (dlconv_plan_conv2d, dlconv_plan_conv2d_csr, dlconv_plan_dense,
 * the one-shot dlconv_conv2d / dlconv_dense, dlconv_execute with workspace NULL, planning with
 * DLCONV_PLAN_MEASURE), a clean run counts the allocations through the hook of
 * src/core/test_hooks.h; then for every k the k-th allocation fails and
 *   - the call answers DLCONV_ERR_OUT_OF_MEMORY with a message (*plan NULL, y untouched), or
 *     DLCONV_OK with a correct result where the failed allocation was optional (MEASURE's
 *     timing buffers);
 *   - nothing leaks: every allocation made while armed is freed by the time the call (and
 *     dlconv_plan_destroy of a plan it returned) is done (and LeakSanitizer checks the rest in
 *     the sanitizer stage);
 *   - the next call, without failures, succeeds with the right output.
 * Wisdom export/import allocate with the C library (fopen, realloc), not through the hook: the
 * test checks that they make no hooked allocation and round-trip, and leaves leaks to LSan.
 *
 * Run a second time with DLCONV_VERIFY=1 (meson: faults_verify) to cover the allocations the
 * self-check makes at plan time. */
#include <unistd.h>

#include "test_common.h"

#include "core/test_hooks.h"

typedef enum entry {
  E_PLAN,          /* dlconv_plan_conv2d (dense layers: dlconv_plan_dense), then execute with a caller workspace */
  E_PLAN_CSR,      /* dlconv_plan_conv2d_csr */
  E_EXECUTE,       /* a plan made without faults, dlconv_execute(workspace = NULL) under faults */
  E_ONESHOT,       /* dlconv_conv2d / dlconv_dense */
  E_MEASURE,       /* dlconv_plan_conv2d with DLCONV_PLAN_MEASURE (AUTO only) */
  N_ENTRIES
} entry;

static const char *const ENTRY_NAMES[] = {"plan", "plan_csr", "execute(ws=NULL)", "one-shot", "plan MEASURE"};

typedef struct fcase {
  const char *name;
  case_kind kind;
  dlconv_conv2d_desc d;
  double zero_frac;
  int threads;
} fcase;

static int make_cases(fcase *c) {
  int n = 0;
  dlconv_conv2d_desc *d;
  c[n] = (fcase){.name = "3x3 pad NCHW", .kind = KIND_CONV, .threads = 1};
  d = &c[n++].d;
  dlconv_conv2d_desc_init(d, 1, 8, 9, 9, 12, 3, 3);
  d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1;

  c[n] = (fcase){.name = "grouped 5x3 stride 2 NHWC batch 2, 2 threads", .kind = KIND_CONV, .threads = 2};
  d = &c[n++].d;
  dlconv_conv2d_desc_init(d, 2, 8, 11, 10, 12, 5, 3);
  d->groups = 2;
  d->stride_h = d->stride_w = 2;
  d->pad_top = 2; d->pad_bottom = 1; d->pad_left = 1;
  d->layout = DLCONV_NHWC;
  d->out_min = 0; d->out_max = 6;

  c[n] = (fcase){.name = "depthwise 3x3 NHWC", .kind = KIND_CONV, .threads = 1};
  d = &c[n++].d;
  dlconv_conv2d_desc_init(d, 1, 16, 8, 7, 16, 3, 3);
  d->groups = 16;
  d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1;
  d->layout = DLCONV_NHWC;

  c[n] = (fcase){.name = "pointwise NCHW", .kind = KIND_CONV, .threads = 1};
  d = &c[n++].d;
  dlconv_conv2d_desc_init(d, 1, 24, 6, 6, 20, 1, 1);

  c[n] = (fcase){.name = "80% sparse 3x3 NHWC", .kind = KIND_CONV, .zero_frac = 0.8, .threads = 1};
  d = &c[n++].d;
  dlconv_conv2d_desc_init(d, 1, 16, 7, 7, 16, 3, 3);
  d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1;
  d->layout = DLCONV_NHWC;

  c[n] = (fcase){.name = "dense 3x40->21", .kind = KIND_DENSE, .threads = 1};
  dense_desc(&c[n++].d, 3, 40, 21, -INFINITY, 1.5f);
  return n;
}

/* The outcome of one call under (or without) faults. */
typedef struct outcome {
  dlconv_status st;
  int plan_not_null;     /* a failed planning call left *plan non-NULL */
  int y_touched;         /* a failed call wrote to y */
  int wrong;             /* OK but the output disagrees with the oracle (msg says how) */
  int no_message;        /* failed without a dlconv_last_error() message */
  long live;             /* hooked allocations still live after the call and destroy */
  char msg[600];
} outcome;

static const float SENTINEL_Y = -12345.5f;

static int y_all_sentinel(const float *y, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (memcmp(&y[i], &SENTINEL_Y, 4)) return 0;
  return 1;
}

/* Plans cd (conv, csr or dense per entry and kind) with opt; *plan NULL on failure. */
static dlconv_status plan_entry(const conv_data *cd, entry e, dlconv_plan **plan, const dlconv_options *o) {
  const dlconv_conv2d_desc *d = &cd->d;
  if (e == E_PLAN_CSR) return dlconv_plan_conv2d_csr(plan, d, &cd->csr, cd->bias, NULL, o);
  if (cd->kind == KIND_DENSE)
    return dlconv_plan_dense(plan, d->n, d->c_in, d->c_out, DLCONV_F32, cd->w, cd->bias, d->out_min, d->out_max, NULL, o);
  return dlconv_plan_conv2d(plan, d, cd->w, cd->bias, NULL, o);
}

/* Runs entry e once with the k-th hooked allocation failing (k = 0: none fails). A plan made
   before arming (E_EXECUTE) is passed in pre. */
static outcome run_entry(const conv_data *cd, entry e, const dlconv_options *o, const dlconv_plan *pre, long k,
                         long *count) {
  outcome r;
  memset(&r, 0, sizeof r);
  float *y = malloc(cd->y_len * 4 + 4);
  for (size_t i = 0; i < cd->y_len; i++) y[i] = SENTINEL_Y;
  dlc_test_alloc_arm(k);
  dlconv_plan *plan = (dlconv_plan *)(uintptr_t)0x40;
  const dlconv_plan *exe = NULL;
  switch (e) {
    case E_PLAN:
    case E_PLAN_CSR:
    case E_MEASURE:
      r.st = plan_entry(cd, e, &plan, o);
      if (r.st != DLCONV_OK) r.plan_not_null = plan != NULL;
      else exe = plan;
      break;
    case E_EXECUTE:
      r.st = dlconv_execute(pre, cd->x, y, NULL);
      break;
    case E_ONESHOT: {
      const dlconv_conv2d_desc *d = &cd->d;
      if (cd->kind == KIND_DENSE)
        r.st = dlconv_dense(d->n, d->c_in, d->c_out, DLCONV_F32, cd->x, cd->w, cd->bias, y, d->out_min, d->out_max, NULL, o);
      else
        r.st = dlconv_conv2d(d, cd->x, cd->w, cd->bias, y, NULL, o);
      break;
    }
    default: break;
  }
  if (r.st != DLCONV_OK) {
    const char *m = dlconv_last_error();
    r.no_message = !m || !m[0];
    snprintf(r.msg, sizeof r.msg, "%s", m ? m : "(null)");
    r.y_touched = !y_all_sentinel(y, cd->y_len);
  }
  if (exe) {
    /* the plan works: execute it with a caller workspace (no allocation), still armed so that
       a fault-free execute of a plan born under faults is exercised too */
    size_t wsb = dlconv_plan_workspace_size(exe);
    void *ws = wsb ? aligned_alloc(64, (wsb + 63) / 64 * 64) : NULL;
    dlconv_status st = dlconv_execute(exe, cd->x, y, ws);
    free(ws);
    if (st != DLCONV_OK) {
      r.wrong = 1;
      snprintf(r.msg, sizeof r.msg, "plan OK but execute -> %s (%s)", dlconv_status_string(st), dlconv_last_error());
    }
    dlconv_plan_destroy(plan);
  }
  if (r.st == DLCONV_OK && !r.wrong) {
    char m[400] = "";
    if (check_y(cd, y, m, sizeof m)) {
      r.wrong = 1;
      snprintf(r.msg, sizeof r.msg, "%s", m);
    }
  }
  r.live = dlc_test_alloc_live();
  if (count) *count = dlc_test_alloc_count();
  if (k > 0 && !dlc_test_alloc_fired()) r.wrong = 2;
  dlc_test_alloc_disarm();
  free(y);
  return r;
}

typedef struct totals {
  long points, oom, optional, optional_by_entry[N_ENTRIES];
} totals;

/* Clean count, then every k; returns the number of failures added to t. */
static void sweep_entry(const fcase *fc, const conv_data *cd, entry e, dlconv_algo algo, tally *t, totals *tot) {
  dlconv_options o;
  dlconv_options_init(&o);
  o.algo = algo;
  o.num_threads = fc->threads;
  if (e == E_MEASURE) o.flags = DLCONV_PLAN_MEASURE;
  dlconv_plan *pre = NULL;
  dlconv_wisdom_forget();   /* AUTO must not depend on an earlier MEASURE */
  if (e == E_EXECUTE) {
    dlconv_status st = plan_entry(cd, E_PLAN, &pre, &o);
    if (st != DLCONV_OK) {
      tally_fail(t, "%s %s %s: plan without faults -> %s (%s)", fc->name, algo_name(algo), ENTRY_NAMES[e],
                 dlconv_status_string(st), dlconv_last_error());
      return;
    }
  }
  long n = 0;
  outcome clean = run_entry(cd, e, &o, pre, 0, &n);
  if (clean.st != DLCONV_OK || clean.wrong || clean.live) {
    tally_fail(t, "%s %s %s: clean run -> %s, live %ld: %s", fc->name, algo_name(algo), ENTRY_NAMES[e],
               dlconv_status_string(clean.st), clean.live, clean.msg);
    dlconv_plan_destroy(pre);
    return;
  }
  for (long k = 1; k <= n; k++) {
    outcome r = run_entry(cd, e, &o, pre, k, NULL);
    tot->points++;
    char where[200];
    snprintf(where, sizeof where, "%s %s %s, allocation %ld of %ld failing", fc->name, algo_name(algo), ENTRY_NAMES[e], k, n);
    /* MEASURE picks by timing, so the allocations after the first timing may differ per run */
    if (r.wrong == 2 && e != E_MEASURE) tally_fail(t, "%s: the allocation was never attempted (not deterministic?)", where);
    if (r.st == DLCONV_ERR_OUT_OF_MEMORY) {
      tot->oom++;
      if (r.no_message) tally_fail(t, "%s: OUT_OF_MEMORY without a message", where);
      if (r.plan_not_null) tally_fail(t, "%s: *plan not NULL after failure", where);
      if (r.y_touched) tally_fail(t, "%s: y written by a failing call", where);
    } else if (r.st == DLCONV_OK) {
      tot->optional++;
      tot->optional_by_entry[e]++;
      if (r.wrong == 1) tally_fail(t, "%s: OK but wrong: %s", where, r.msg);
    } else {
      tally_fail(t, "%s: expected OUT_OF_MEMORY, got %s (%s)", where, dlconv_status_string(r.st), r.msg);
    }
    if (r.live) tally_fail(t, "%s: %ld allocation(s) leaked", where, r.live);
    /* and the next call without faults works */
    outcome after = run_entry(cd, e, &o, pre, 0, NULL);
    if (after.st != DLCONV_OK || after.wrong || after.live)
      tally_fail(t, "%s: the next clean call -> %s, live %ld: %s", where, dlconv_status_string(after.st), after.live,
                 after.msg);
  }
  dlconv_plan_destroy(pre);
}

static void test_every_allocation_fails(void **state) {
  (void)state;
  fcase fc[16];
  int nc = make_cases(fc);
  tally t = {0};
  totals tot = {0};
  const dlconv_algo algos[] = {DLCONV_ALGO_AUTO, DLCONV_ALGO_DIRECT, DLCONV_ALGO_IM2COL_GEMM,
                               DLCONV_ALGO_SPATIAL_PACK, DLCONV_ALGO_GSPC, DLCONV_ALGO_SPARSE_CSR};
  for (int i = 0; i < nc; i++) {
    rng_t r = rng_seed(4242 + (uint64_t)i);
    data_opts o = {.bias = i % 3 != 1, .zero_frac = fc[i].zero_frac};
    conv_data cd;
    cd_init(&cd, fc[i].kind == KIND_DENSE ? KIND_DENSE : KIND_CSR, &fc[i].d, &r, &o);
    long before = t.fails;
    for (size_t a = 0; a < ARRAY_LEN(algos); a++)
      for (int e = 0; e < N_ENTRIES; e++) {
        if (e == E_PLAN_CSR && fc[i].kind == KIND_DENSE) continue;
        if (e == E_MEASURE && algos[a] != DLCONV_ALGO_AUTO) continue;
        sweep_entry(&fc[i], &cd, (entry)e, algos[a], &t, &tot);
      }
    printf("  %-48s %s\n", fc[i].name, t.fails == before ? "ok" : "FAIL");
    cd_free(&cd);
  }
  printf("%ld injected failures: %ld answered OUT_OF_MEMORY, %ld succeeded (optional allocation:", tot.points,
         tot.oom, tot.optional);
  for (int e = 0; e < N_ENTRIES; e++) printf(" %s %ld", ENTRY_NAMES[e], tot.optional_by_entry[e]);
  printf(")\n");
  assert_true(tot.points > 100);
  assert_int_equal(t.fails, 0);
}

/* Wisdom export/import: no hooked allocation, and the imported choice is used (round trip). */
static void test_wisdom_paths(void **state) {
  (void)state;
  char path[64];
  snprintf(path, sizeof path, "/tmp/dlconv_faults_wisdom_%d.txt", (int)getpid());
  dlconv_wisdom_forget();
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 1, 8, 9, 9, 12, 3, 3);
  rng_t r = rng_seed(99);
  data_opts o = {.bias = 1};
  conv_data cd;
  cd_init(&cd, KIND_CONV, &d, &r, &o);
  dlconv_options opt;
  dlconv_options_init(&opt);
  opt.num_threads = 1;
  opt.flags = DLCONV_PLAN_MEASURE;
  dlconv_plan *p = NULL;
  assert_int_equal(dlconv_plan_conv2d(&p, &d, cd.w, cd.bias, NULL, &opt), DLCONV_OK);
  dlconv_plan_info info;
  dlconv_plan_query(p, &info);
  dlconv_plan_destroy(p);

  dlc_test_alloc_arm(1);   /* a hooked allocation would fail and show up in the count */
  assert_int_equal(dlconv_wisdom_export(path), DLCONV_OK);
  dlconv_wisdom_forget();
  assert_int_equal(dlconv_wisdom_import(path), DLCONV_OK);
  long hooked = dlc_test_alloc_count();
  dlc_test_alloc_disarm();
  assert_int_equal(hooked, 0);

  opt.flags = 0;
  assert_int_equal(dlconv_plan_conv2d(&p, &d, cd.w, cd.bias, NULL, &opt), DLCONV_OK);
  dlconv_plan_info info2;
  dlconv_plan_query(p, &info2);
  assert_int_equal(info2.algo, info.algo);
  dlconv_plan_destroy(p);

  /* a malformed file: IO error with a message, nothing changes */
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "# libdlconv wisdom 1\nconv2d:garbage\n");
  fclose(f);
  assert_int_equal(dlconv_wisdom_import(path), DLCONV_ERR_IO);
  assert_true(dlconv_last_error()[0] != 0);
  remove(path);
  dlconv_wisdom_forget();
  cd_free(&cd);
}

int main(void) {
  return RUN_GROUP("faults", test_every_allocation_fails, test_wisdom_paths);
}
