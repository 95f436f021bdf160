/* What the library reads from its environment, and the small API that explains itself.
 *
 * The environment is read once per process, so every setting is tried in a child: this program
 * runs itself again ("child MODE") with the variables (and, for thread counts, the CPU affinity
 * mask) under test, and reads what the child printed. The child plans with DLCONV_VERBOSE=1 where
 * it must say something, so its plan lines tell the thread count, ISA and dtype it chose.
 *
 *   test_env                 every test
 *   test_env child MODE      one child: plan (f32 conv, 3 plans, output checksum on stdout),
 *                            f16 (one f16 plan), fail (one invalid plan) */
#include <errno.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_common.h"

/* ------------------------------------------------------------------------------------------ */
/* the child                                                                                  */

static void child_desc(dlconv_conv2d_desc *d) {
  dlconv_conv2d_desc_init(d, 1, 8, 12, 10, 16, 3, 3);
  d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1;
}

static int child_plan(void) {
  dlconv_conv2d_desc d;
  child_desc(&d);
  size_t nx = 8 * 12 * 10, nw = 16 * 8 * 9, ny = 16 * 12 * 10;
  float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *y = malloc(ny * sizeof *y);
  if (!x || !w || !y) return 3;
  for (size_t i = 0; i < nx; i++) x[i] = (float)((i * 37) % 19) / 19.0f - 0.5f;
  for (size_t i = 0; i < nw; i++) w[i] = (float)((i * 11) % 23) / 23.0f - 0.5f;
  uint64_t h = 1469598103934665603ull;
  for (int rep = 0; rep < 3; rep++) {
    dlconv_plan *p;
    if (dlconv_plan_conv2d(&p, &d, w, NULL, NULL, NULL) != DLCONV_OK) return 4;
    if (dlconv_execute(p, x, y, NULL) != DLCONV_OK) return 5;
    dlconv_plan_destroy(p);
  }
  const unsigned char *b = (const unsigned char *)y;
  for (size_t i = 0; i < ny * sizeof *y; i++) h = (h ^ b[i]) * 1099511628211ull;
  printf("%016llx\n", (unsigned long long)h);
  free(x);
  free(w);
  free(y);
  return 0;
}

static int child_f16(void) {
  dlconv_conv2d_desc d;
  child_desc(&d);
  d.dtype = DLCONV_F16;
  d.layout = DLCONV_NHWC;
  uint16_t *w = calloc(16 * 8 * 9, sizeof *w);
  dlconv_plan *p;
  if (!w || dlconv_plan_conv2d(&p, &d, w, NULL, NULL, NULL) != DLCONV_OK) return 4;
  dlconv_plan_destroy(p);
  free(w);
  return 0;
}

static int child_fail(void) {
  dlconv_conv2d_desc d;
  child_desc(&d);
  d.stride_h = 0;
  float w[16 * 8 * 9] = {0};
  dlconv_plan *p;
  return dlconv_plan_conv2d(&p, &d, w, NULL, NULL, NULL) == DLCONV_ERR_INVALID_ARG ? 0 : 4;
}

static int child_main(const char *mode) {
  if (!strcmp(mode, "plan")) return child_plan();
  if (!strcmp(mode, "f16")) return child_f16();
  if (!strcmp(mode, "fail")) return child_fail();
  return 2;
}

/* ------------------------------------------------------------------------------------------ */
/* running a child                                                                            */

typedef struct child_run {
  int status;          /* exit status, or -1 */
  char out[4096];      /* its stdout */
  char err[16384];     /* its stderr */
} child_run;

#define MAX_CPUS 2
typedef struct child_cfg {
  const char *mode;
  const char *env[8];  /* NAME=VALUE to set; the other DLCONV_* and OMP_* variables that count are unset */
  int n_cpus;          /* > 0: the child's affinity mask is the first n_cpus CPUs of ours */
} child_cfg;

static void read_all(int fd, char *buf, size_t n) {
  size_t got = 0;
  for (;;) {
    ssize_t r = read(fd, buf + got, n - 1 - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
    if (got == n - 1) {
      char sink[256];
      while (read(fd, sink, sizeof sink) > 0) {}
      break;
    }
  }
  buf[got] = 0;
  close(fd);
}

static void run_child(const child_cfg *c, child_run *r) {
  int out[2], err[2];
  assert_int_equal(pipe(out), 0);
  assert_int_equal(pipe(err), 0);
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    close(out[0]); close(out[1]); close(err[0]); close(err[1]);
    static const char *const cleared[] = {"DLCONV_ISA", "DLCONV_NUM_THREADS", "DLCONV_VERBOSE", "DLCONV_VERIFY",
                                          "OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES", "OMP_DYNAMIC",
                                          "OMP_THREAD_LIMIT"};
    for (size_t i = 0; i < ARRAY_LEN(cleared); i++) unsetenv(cleared[i]);
    for (int i = 0; i < 8 && c->env[i]; i++) putenv((char *)c->env[i]);
    if (c->n_cpus > 0) {
      cpu_set_t mine, want;
      CPU_ZERO(&want);
      if (sched_getaffinity(0, sizeof mine, &mine)) _exit(90);
      for (int cpu = 0, k = 0; cpu < CPU_SETSIZE && k < c->n_cpus; cpu++)
        if (CPU_ISSET(cpu, &mine)) { CPU_SET(cpu, &want); k++; }
      if (sched_setaffinity(0, sizeof want, &want)) _exit(91);
    }
    execl("/proc/self/exe", "test_env", "child", c->mode, (char *)NULL);
    _exit(92);
  }
  close(out[1]);
  close(err[1]);
  read_all(out[0], r->out, sizeof r->out);
  read_all(err[0], r->err, sizeof r->err);
  int st;
  r->status = waitpid(pid, &st, 0) == pid && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  if (r->status != 0) fail_msg("child %s exited with %d; stderr: \"%.500s\"", c->mode, r->status, r->err);
}

static int count_of(const char *hay, const char *needle) {
  int n = 0;
  for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle)) n++;
  return n;
}

/* The thread count of the child's plan lines (all of them must agree), -1 without any. */
static int plan_threads(const child_run *r) {
  int threads = -1;
  for (const char *p = r->err; (p = strstr(p, " threads=")); p++) {
    int t = atoi(p + 9);
    if (threads >= 0 && t != threads) fail_msg("plan lines disagree on threads: \"%.500s\"", r->err);
    threads = t;
  }
  return threads;
}

static int usable_cpus(void) {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof set, &set) ? 1 : CPU_COUNT(&set);
}

/* A cgroup CPU quota on this process in whole CPUs (rounded up), 0 when none (v2, then v1). */
static int quota_cpus(void) {
  long q = -1, p = 0;
  char word[32];
  FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
  if (f) {
    if (fscanf(f, "%31s %ld", word, &p) == 2 && strcmp(word, "max")) q = atol(word);
    fclose(f);
  } else if ((f = fopen("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "r"))) {
    if (fscanf(f, "%ld", &q) != 1) q = -1;
    fclose(f);
    if ((f = fopen("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "r"))) {
      if (fscanf(f, "%ld", &p) != 1) p = 0;
      fclose(f);
    }
  }
  return q > 0 && p > 0 ? (int)((q + p - 1) / p) : 0;
}

static int min_quota(int n) {
  int q = quota_cpus();
  return q > 0 && q < n ? q : n;
}

/* ------------------------------------------------------------------------------------------ */
/* default thread count                                                                       */

static void expect_threads(const child_cfg *c, int want) {
  child_run r;
  run_child(c, &r);
  int got = plan_threads(&r);
  if (got != want)
    fail_msg("%s%s%s, %d CPUs: default threads %d, expected %d; stderr: \"%.400s\"", c->env[0] ? c->env[0] : "",
             c->env[1] ? " " : "", c->env[1] ? c->env[1] : "", c->n_cpus, got, want, r.err);
  if (count_of(r.err, "warning")) fail_msg("unexpected warning: \"%.400s\"", r.err);
}

/* A build without OpenMP runs plans without a caller's pool on one thread, whatever the default:
   its plan lines say threads=1 even when DLCONV_NUM_THREADS asks for 2. */
static int threads_visible(void) {
  child_cfg c = {"plan", {"DLCONV_VERBOSE=1", "DLCONV_NUM_THREADS=2"}, 0};
  child_run r;
  run_child(&c, &r);
  return plan_threads(&r) == 2;
}

static void test_threads_affinity(void **state) {
  (void)state;
  if (!threads_visible()) skip_test("threads_affinity", "built without OpenMP: every plan runs on one thread");
  child_cfg one = {"plan", {"DLCONV_VERBOSE=1"}, 1};
  expect_threads(&one, 1);
  if (usable_cpus() < 2) {
    skip_test("threads_affinity", "one CPU here: the 2-CPU mask is not tried");
    return;
  }
  child_cfg two = {"plan", {"DLCONV_VERBOSE=1"}, 2};
  expect_threads(&two, min_quota(2));
  /* OpenMP binding the initial thread to one place leaves the process its 2 CPUs */
  child_cfg bound = {"plan", {"DLCONV_VERBOSE=1", "OMP_PROC_BIND=close", "OMP_PLACES=cores"}, 2};
  expect_threads(&bound, min_quota(2));
}

static void test_threads_omp(void **state) {
  (void)state;
  if (!threads_visible()) skip_test("threads_omp", "built without OpenMP: every plan runs on one thread");
  child_cfg omp = {"plan", {"DLCONV_VERBOSE=1", "OMP_NUM_THREADS=3"}, 1};
  expect_threads(&omp, 3);   /* OpenMP's count wins over the mask */
  child_cfg nested = {"plan", {"DLCONV_VERBOSE=1", "OMP_NUM_THREADS=2,1"}, 1};
  expect_threads(&nested, 2);
  child_cfg ours = {"plan", {"DLCONV_VERBOSE=1", "OMP_NUM_THREADS=3", "DLCONV_NUM_THREADS=5"}, 1};
  expect_threads(&ours, 5);  /* and ours over OpenMP's */
}

/* ------------------------------------------------------------------------------------------ */
/* malformed values: one warning per variable, the setting's default, the same results        */

static void expect_warning(const char *setting, const char *var) {
  child_cfg plain = {"plan", {NULL}, 1};
  child_run ref, r, quiet;
  run_child(&plain, &ref);
  if (ref.err[0]) fail_msg("no setting, yet stderr: \"%.500s\"", ref.err);
  /* without DLCONV_VERBOSE the library prints nothing (the contract's "Quiet" rule) */
  int is_verbose = !strncmp(setting, "DLCONV_VERBOSE=", 15);
  if (!is_verbose) {
    child_cfg q = {"plan", {setting}, 1};
    run_child(&q, &quiet);
    if (quiet.err[0]) fail_msg("%s without DLCONV_VERBOSE printed \"%.500s\"", setting, quiet.err);
    if (strcmp(ref.out, quiet.out)) fail_msg("%s: results changed: %s vs %s", setting, quiet.out, ref.out);
  }
  child_cfg c = {"plan", {setting, is_verbose ? NULL : "DLCONV_VERBOSE=1"}, 1};
  run_child(&c, &r);
  char tag[64];
  snprintf(tag, sizeof tag, "warning: %s=", var);
  if (count_of(r.err, tag) != 1 || count_of(r.err, "warning") != 1)
    fail_msg("%s: expected one warning naming %s over 3 plans; stderr: \"%.500s\"", setting, var, r.err);
  int verbose_lines = is_verbose ? 0 : 3;
  if (count_of(r.err, "dlconv: plan ") != verbose_lines)
    fail_msg("%s: expected %d plan lines; stderr: \"%.500s\"", setting, verbose_lines, r.err);
  if (strcmp(ref.out, r.out)) fail_msg("%s: results changed: %s vs %s", setting, r.out, ref.out);
}

static void test_malformed(void **state) {
  (void)state;
  expect_warning("DLCONV_ISA=bogus", "DLCONV_ISA");
  expect_warning("DLCONV_VERBOSE=loud", "DLCONV_VERBOSE");
  expect_warning("DLCONV_VERIFY=maybe", "DLCONV_VERIFY");
  expect_warning("DLCONV_NUM_THREADS=0", "DLCONV_NUM_THREADS");
  expect_warning("DLCONV_NUM_THREADS=two", "DLCONV_NUM_THREADS");
}

static void test_words(void **state) {
  (void)state;
  child_run r;
  child_cfg yes = {"plan", {"DLCONV_VERBOSE=yes"}, 0};
  run_child(&yes, &r);
  if (count_of(r.err, "dlconv: plan ") != 3 || count_of(r.err, "warning"))
    fail_msg("DLCONV_VERBOSE=yes: expected 3 plan lines, no warning: \"%.500s\"", r.err);
  child_cfg upper = {"plan", {"DLCONV_VERBOSE=1", "DLCONV_ISA=GENERIC"}, 0};
  run_child(&upper, &r);
  if (count_of(r.err, " isa=generic ") != 3 || count_of(r.err, "warning"))
    fail_msg("DLCONV_ISA=GENERIC: expected 3 generic plans, no warning: \"%.500s\"", r.err);
  child_cfg off = {"plan", {"DLCONV_VERBOSE=Off", "DLCONV_ISA= avx2 "}, 0};
  run_child(&off, &r);
  if (r.err[0]) fail_msg("DLCONV_VERBOSE=Off: printed \"%.500s\"", r.err);
}

/* A cap naming an ISA this machine (or build) lacks: said once under verbose, else silent. */
static void test_cap_unavailable(void **state) {
  (void)state;
  static const struct { const char *env; dlconv_isa isa; } caps[] = {
    {"DLCONV_ISA=neon", DLCONV_ISA_NEON}, {"DLCONV_ISA=avx512", DLCONV_ISA_AVX512}, {"DLCONV_ISA=avx2", DLCONV_ISA_AVX2}};
  for (size_t i = 0; i < ARRAY_LEN(caps); i++) {
    if (dlconv_isa_available(caps[i].isa)) continue;
    child_run r;
    child_cfg loud = {"plan", {"DLCONV_VERBOSE=1", caps[i].env}, 0};
    run_child(&loud, &r);
    if (count_of(r.err, "not available") != 1)
      fail_msg("%s, verbose: expected one 'not available' line: \"%.500s\"", caps[i].env, r.err);
    child_cfg quiet = {"plan", {caps[i].env}, 0};
    run_child(&quiet, &r);
    if (r.err[0]) fail_msg("%s, not verbose: printed \"%.500s\"", caps[i].env, r.err);
    return;
  }
  skip_test("cap_unavailable", "every ISA a cap can name is available here");
}

/* The plan line names dtype and layout; a failed plan says why. */
static void test_verbose_lines(void **state) {
  (void)state;
  child_run r;
  child_cfg f16 = {"f16", {"DLCONV_VERBOSE=1"}, 0};
  run_child(&f16, &r);
  if (!strstr(r.err, " dtype=f16 layout=nhwc ")) fail_msg("f16 plan line without dtype/layout: \"%.500s\"", r.err);
  child_cfg fail = {"fail", {"DLCONV_VERBOSE=1"}, 0};
  run_child(&fail, &r);
  if (count_of(r.err, "\n") != 1 || !strstr(r.err, "failed: invalid argument: ") || !strstr(r.err, "stride"))
    fail_msg("failed plan: expected one line with status and message: \"%.500s\"", r.err);
  child_cfg quiet = {"fail", {NULL}, 0};
  run_child(&quiet, &r);
  if (r.err[0]) fail_msg("failed plan, not verbose: printed \"%.500s\"", r.err);
}

/* ------------------------------------------------------------------------------------------ */
/* the to-string functions and ownership                                                      */

static void test_strings(void **state) {
  (void)state;
  static const char *const algos[] = {"auto", "direct", "im2col_gemm", "spatial_pack", "gspc", "sparse_csr"};
  static const char *const isas[] = {"auto", "generic", "avx2", "avx512", "neon", "cuda"};
  static const char *const dtypes[] = {"f32", "f16", "u8", "s8", "s32"};
  for (int i = 0; i < (int)ARRAY_LEN(algos); i++) assert_string_equal(dlconv_algo_string((dlconv_algo)i), algos[i]);
  for (int i = 0; i < (int)ARRAY_LEN(isas); i++) assert_string_equal(dlconv_isa_string((dlconv_isa)i), isas[i]);
  for (int i = 0; i < (int)ARRAY_LEN(dtypes); i++) assert_string_equal(dlconv_dtype_string((dlconv_dtype)i), dtypes[i]);
  assert_string_equal(dlconv_layout_string(DLCONV_NCHW), "nchw");
  assert_string_equal(dlconv_layout_string(DLCONV_NHWC), "nhwc");
  assert_string_equal(dlconv_algo_string((dlconv_algo)6), "unknown");
  assert_string_equal(dlconv_algo_string((dlconv_algo)-1), "unknown");
  assert_string_equal(dlconv_isa_string((dlconv_isa)6), "unknown");
  assert_string_equal(dlconv_isa_string((dlconv_isa)-1), "unknown");
  assert_string_equal(dlconv_dtype_string((dlconv_dtype)5), "unknown");
  assert_string_equal(dlconv_dtype_string((dlconv_dtype)-1), "unknown");
  assert_string_equal(dlconv_layout_string((dlconv_layout)2), "unknown");
  assert_string_equal(dlconv_layout_string((dlconv_layout)-1), "unknown");
}

/* Every planning call leaves *plan NULL when it fails. */
static void test_plan_null_on_failure(void **state) {
  (void)state;
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 1, 4, 5, 5, 4, 3, 3);
  d.groups = 3;   /* does not divide c_in */
  float w[4 * 4 * 9] = {0};
  dlconv_plan *sentinel = (dlconv_plan *)(uintptr_t)0x10, *p = sentinel;
  assert_int_equal(dlconv_plan_conv2d(&p, &d, w, NULL, NULL, NULL), DLCONV_ERR_INVALID_ARG);
  assert_null(p);
  int32_t rp[5] = {0}, ci[1] = {0};
  dlconv_csr csr = {4, 12, 0, w, ci, rp};
  p = sentinel;
  assert_int_equal(dlconv_plan_conv2d_csr(&p, &d, &csr, NULL, NULL, NULL), DLCONV_ERR_INVALID_ARG);
  assert_null(p);
  p = sentinel;
  assert_int_equal(dlconv_plan_dense(&p, 1, 0, 4, DLCONV_F32, w, NULL, -INFINITY, INFINITY, NULL, NULL),
                   DLCONV_ERR_INVALID_ARG);
  assert_null(p);
  p = sentinel;   /* valid shape, int8 without its quantisation */
  d.groups = 1;
  d.dtype = DLCONV_U8;
  assert_int_not_equal(dlconv_plan_conv2d(&p, &d, w, NULL, NULL, NULL), DLCONV_OK);
  assert_null(p);
}

/* q and q->w_scales are copied at plan time: changing them afterwards changes nothing. */
static void test_quant_copied(void **state) {
  (void)state;
  enum { C = 6, K = 3, H = 7 };
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 1, C, H, H, C, K, K);
  d.dtype = DLCONV_U8;
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
  uint8_t x[C * H * H], y1[C * H * H], y2[C * H * H];
  int8_t w[C * C * K * K];
  int32_t bias[C];
  for (int i = 0; i < C * H * H; i++) x[i] = (uint8_t)(i * 29 % 251);
  for (int i = 0; i < C * C * K * K; i++) w[i] = (int8_t)(i * 13 % 61 - 30);
  for (int i = 0; i < C; i++) bias[i] = i * 100 - 250;
  float *scales = malloc(C * sizeof *scales);
  dlconv_quant *q = malloc(sizeof *q);
  assert_non_null(scales);
  assert_non_null(q);
  for (int i = 0; i < C; i++) scales[i] = 0.01f + 0.002f * (float)i;
  *q = (dlconv_quant){.x_scale = 0.02f, .x_zero_point = 120, .w_scales = scales, .n_w_scales = C,
                      .y_scale = 0.05f, .y_zero_point = 7};
  dlconv_plan *p;
  assert_int_equal(dlconv_plan_conv2d(&p, &d, w, bias, q, NULL), DLCONV_OK);
  assert_int_equal(dlconv_execute(p, x, y1, NULL), DLCONV_OK);
  for (int i = 0; i < C; i++) scales[i] = 100.0f;
  q->x_zero_point = 0;
  q->y_scale = 1e-6f;
  memset(w, 0, sizeof w);
  memset(bias, 0, sizeof bias);
  free(scales);
  free(q);
  assert_int_equal(dlconv_execute(p, x, y2, NULL), DLCONV_OK);
  assert_memory_equal(y1, y2, sizeof y1);
  dlconv_plan_destroy(p);
}

int main(int argc, char **argv) {
  if (argc > 2 && !strcmp(argv[1], "child")) return child_main(argv[2]);
  return RUN_GROUP("env", test_strings, test_plan_null_on_failure, test_quant_copied, test_threads_affinity,
                   test_threads_omp, test_malformed, test_words, test_cap_unavailable, test_verbose_lines);
}
