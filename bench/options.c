/* options.c - command line of dlconv-bench. */
#include "options.h"

#include <stdlib.h>
#include <string.h>

static const char *const ALGO_NAMES[] = {"auto", "direct", "gemm", "spack", "gspc", "csr"};
static const char *const ISA_NAMES[] = {"auto", "generic", "avx2", "avx512", "neon", "cuda"};
static const char *const DTYPE_NAMES[] = {"f32", "f16", "u8", "s8", "s32"};

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

static const char *name_of(const char *const *names, int n, int v) { return v >= 0 && v < n ? names[v] : "?"; }
const char *bench_algo_name(dlconv_algo a) { return name_of(ALGO_NAMES, COUNT(ALGO_NAMES), (int)a); }
const char *bench_isa_name(dlconv_isa i) { return name_of(ISA_NAMES, COUNT(ISA_NAMES), (int)i); }
const char *bench_dtype_name(dlconv_dtype d) { return name_of(DTYPE_NAMES, COUNT(DTYPE_NAMES), (int)d); }
const char *bench_layout_name(dlconv_layout l) { return l == DLCONV_NHWC ? "nhwc" : "nchw"; }

static int index_of(const char *const *names, int n, const char *s) {
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], s)) return i;
  return -1;
}

void bench_print_help(FILE *f) {
  fputs(
    "usage: dlconv-bench [options] suite.csv...\n"
    "       dlconv-bench --info [options] [suite.csv...]\n"
    "\n"
    "Times libdlconv on every layer of each suite (bench/layers/*.csv) through its public API:\n"
    "plan once (not timed), warm up, time dlconv_execute until --min-time has passed, report the\n"
    "median ms per call and gflops = 2 x MACs / time, and check the output against a naive\n"
    "double-precision convolution (every point of small layers, a sample of big ones). A wrong\n"
    "result prints 'VERIFY FAIL' on stderr and is marked in the table and the CSV.\n"
    "\n"
    "options:\n"
    "  --algo LIST      auto,direct,gemm,spack,gspc,csr (comma list; default auto)\n"
    "  --isa ISA        auto|generic|avx2|avx512|cuda (default auto: the best this CPU runs); cuda:\n"
    "                   the GPU run (docs/cuda.md): device buffers, CUDA-event timing, a table of\n"
    "                   ms per layer and model totals\n"
    "  --batch N        every layer's batch size n (default: the suite's)\n"
    "  --threads LIST   thread counts, comma list, e.g. 1,2 (default 1)\n"
    "  --layout L       nchw|nhwc, layout of x and y (default nchw)\n"
    "  --dtype T        f32|f16|u8|s8 (default f32); what the library cannot do is shown as skipped\n"
    "  --sparsity S     set a seeded fraction S of each layer's weights to zero (for csr); gflops\n"
    "                   and % of peak still count the dense MACs (effective throughput)\n"
    "  --measure        plan with DLCONV_PLAN_MEASURE (AUTO times its candidates)\n"
    "  --shape SPEC     one layer instead of (or besides) suites; may repeat, e.g.\n"
    "                   \"n=1,c_in=64,h=56,w=56,c_out=64,k=3,stride=1,pad=1,dil=1,groups=1\"\n"
    "                   (also op=dense, bias=1, k_h/k_w, stride_h/..., name=...)\n"
    "  --filter TEXT    only layers whose name contains TEXT\n"
    "  --peers onednn   also time oneDNN on every layer (when the bench was built with it):\n"
    "                   onednn_blocked (its preferred layouts, reorders outside the timing) and\n"
    "                   onednn_nchw / onednn_nhwc (fed user-layout data, reorders timed)\n"
    "  --peers xnnpack  also time XNNPACK on every layer (when the bench was built with it): NHWC\n"
    "                   data (transposed outside the timing for nchw), weights packed and shape\n"
    "                   set up outside the timing; f32, u8 (qu8), s8 (qs8), f16 where it has\n"
    "                   kernels; its int8 and f16 outputs are held to looser bounds (4 units, 5%)\n"
    "  --peers LIST     several peers: --peers onednn,xnnpack (or --peers repeated)\n"
    "  --peers cudnn    with --isa cuda: also time cuDNN (its fastest algorithm by cudnnFind)\n"
    "  --csv FILE       also write every measurement to FILE as CSV (columns below)\n"
    "  --min-time S     seconds of timed calls per measurement (default 0.2; env DLCONV_BENCH_MIN_TIME)\n"
    "  --peak GFLOPS    per-core peak to use instead of probing it (for every dtype)\n"
    "  --quick          CI smoke: at most 4 layers per suite, 0.02 s per measurement\n"
    "  --no-verify      skip the reference check\n"
    "  --info           plan, do not time: print this machine's ISAs and, per layer (the suites,\n"
    "                   the --shape layers, or else a built-in set of six representative shapes),\n"
    "                   one table of what each algorithm x dtype x layout x ISA runs (see below)\n"
    "  -h, --help       this text\n"
    "\n"
    "Threads: each measurement plans with num_threads = N; oneDNN gets omp_set_num_threads(N),\n"
    "XNNPACK a pool of N threads pinned one per CPU (no pool for 1).\n"
    "With one thread the bench pins itself to the CPU it runs on. With N > 1, pin the OpenMP\n"
    "threads or timings jump by scheduler ticks on small VMs:\n"
    "    OMP_PROC_BIND=close OMP_PLACES=cores dlconv-bench --threads 1,2 suite.csv\n"
    "(these must be in the environment when the program starts; the bench then leaves placement\n"
    "to OpenMP). Keep other work off the machine while measuring.\n"
    "\n"
    "Output: the machine's measured peaks per core, a legend, then per suite and thread count a\n"
    "table: ms per call and %pk, the percentage of threads x the per-core peak that 2 x MACs / ms\n"
    "reaches (f32 and f16 against the fp32 FMA peak, f16 products being summed in fp32; u8 and s8\n"
    "against the int8 multiply-add peak of the kernel's instruction: vpdpbusd or vpdpwssd (VNNI),\n"
    "vpmaddwd (AVX2)); what each algorithm ran as, per layer count; with several explicit\n"
    "algorithms the fastest ('best') and how often AUTO is within 10% of it; with peers our ms /\n"
    "their ms. Then the model totals (sum of ms x repeats). --csv FILE gets one row per\n"
    "measurement: the layer's columns then\n"
    "algo,impl,kernel,dtype,layout,threads,ms,gflops,peak_pct,plan_ms,status,err[,ratio_onednn_*]\n"
    "[,ratio_xnnpack]\n"
    "(err: the largest error against the double-precision reference, relative for f32/f16, in\n"
    "output units for int8; gflops: 2 x MACs / time, GOP/s for int8; "
    "ratio = our ms / the peer's ms). Exit status: 0; 1 when a result was wrong or a call failed\n"
    "(skipped is not a failure); 2 for a bad command line.\n"
    "\n"
    "--info: every dtype (f32, f16, u8, s8), layout, algorithm (AUTO and the five) and ISA this\n"
    "machine runs, unless --dtype, --layout, --algo or --isa narrow it. Each cell is what\n"
    "dlconv_plan_query reports for a plan with that algorithm and ISA forced: the micro-kernel,\n"
    "after the algorithm (AUTO rows) and the ISA (isa auto) that ran it, or '-' and a note: the\n"
    "DLCONV_ERR_UNSUPPORTED message (dlconv_last_error) listed under the table. '*' marks what a\n"
    "call with algo AUTO and isa AUTO runs. Dense layers have no layout ('-'). The built-in set:\n"
    "3x3 (64 > 64 channels, 56 x 56), 1x1 (256 > 64, 56 x 56), 7x7s2_rgb_stem (3 > 64, 224 x 224),\n"
    "grouped3x3_g4 (128 > 128, 28 x 28), depthwise3x3 (144 channels, 56 x 56) and dense\n"
    "(batch 1, 2048 > 1000), each with a bias. Plans use num_threads = the first --threads\n"
    "value and never MEASURE; nothing is executed. With --csv FILE the cells also go to FILE,\n"
    "one row each:\n"
    "layer,dtype,layout,algo,isa,status,impl_algo,impl_isa,kernel,message\n"
    "Exit status: 0; 1 when a plan failed other than with DLCONV_ERR_UNSUPPORTED.\n",
    f);
}

typedef int (*item_fn)(bench_options *o, const char *item);

/* Calls fn on each item of a comma list. */
static int each_item(bench_options *o, const char *list, item_fn fn) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", list);
  int any = 0;
  for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (fn(o, t)) return -1;
    any = 1;
  }
  return any ? 0 : -1;
}

static int add_algo(bench_options *o, const char *s) {
  int a = index_of(ALGO_NAMES, COUNT(ALGO_NAMES), s);
  if (a < 0) return -1;
  for (int i = 0; i < o->n_algos; i++)
    if ((int)o->algos[i] == a) return 0;
  o->algos[o->n_algos++] = (dlconv_algo)a;
  return 0;
}

static int add_peer(bench_options *o, const char *s) {
  if (!strcmp(s, "onednn")) o->peers_onednn = 1;
  else if (!strcmp(s, "xnnpack")) o->peers_xnnpack = 1;
  else if (!strcmp(s, "cudnn")) o->peers_cudnn = 1;
  else return -1;
  return 0;
}

static int add_threads(bench_options *o, const char *s) {
  char *end;
  long v = strtol(s, &end, 10);
  if (*end || v < 1 || v > 4096 || o->n_threads == BENCH_MAX_THREADS) return -1;
  o->threads[o->n_threads++] = (int)v;
  return 0;
}

static int parse_double(const char *s, double lo, double hi, double *v) {
  char *end;
  double x = strtod(s, &end);
  if (end == s || *end || !(x >= lo && x <= hi)) return -1;
  *v = x;
  return 0;
}

static void set_defaults(bench_options *o) {
  memset(o, 0, sizeof *o);
  o->isa = DLCONV_ISA_AUTO;
  o->layout = DLCONV_NCHW;
  o->dtype = DLCONV_F32;
  o->verify = 1;
  o->min_time = -1;
}

/* Options that take a value. Returns 0, or -1 when the value is bad or the option unknown. */
static int value_option(bench_options *o, const char *opt, const char *v) {
  int i;
  if (!strcmp(opt, "--algo")) { o->n_algos = 0; o->algo_given = 1; return each_item(o, v, add_algo); }
  if (!strcmp(opt, "--threads")) { o->n_threads = 0; return each_item(o, v, add_threads); }
  if (!strcmp(opt, "--isa")) {
    i = index_of(ISA_NAMES, COUNT(ISA_NAMES), v);
    o->isa = (dlconv_isa)i;
    o->isa_given = 1;
    return i < 0 ? -1 : 0;   /* cuda: device buffers and CUDA-event timing (bench_cuda.c) */
  }
  if (!strcmp(opt, "--layout")) {
    if (strcmp(v, "nchw") && strcmp(v, "nhwc")) return -1;
    o->layout = strcmp(v, "nhwc") ? DLCONV_NCHW : DLCONV_NHWC;
    o->layout_given = 1;
    return 0;
  }
  if (!strcmp(opt, "--dtype")) {
    i = index_of(DTYPE_NAMES, COUNT(DTYPE_NAMES), v);
    o->dtype = (dlconv_dtype)i;
    o->dtype_given = 1;
    return i < 0 || i == DLCONV_S32 ? -1 : 0;
  }
  if (!strcmp(opt, "--peers")) return each_item(o, v, add_peer);   /* a comma list; may repeat */
  if (!strcmp(opt, "--batch")) {
    double b;
    if (parse_double(v, 1, 65536, &b) || b != (int)b) return -1;
    o->batch = (int)b;
    return 0;
  }
  if (!strcmp(opt, "--sparsity")) return parse_double(v, 0.0, 0.999999, &o->sparsity);
  if (!strcmp(opt, "--min-time")) return parse_double(v, 0.0, 3600.0, &o->min_time);
  if (!strcmp(opt, "--peak")) return parse_double(v, 1e-3, 1e9, &o->peak_gflops);
  if (!strcmp(opt, "--csv")) { o->csv_path = v; return 0; }
  if (!strcmp(opt, "--filter")) { o->filter = v; return 0; }
  if (!strcmp(opt, "--shape")) {
    if (o->n_shapes == BENCH_MAX_INPUTS) return -1;
    o->shapes[o->n_shapes++] = v;
    return 0;
  }
  return -1;
}

static int flag_option(bench_options *o, const char *opt) {
  if (!strcmp(opt, "--quick")) o->quick = 1;
  else if (!strcmp(opt, "--measure")) o->measure = 1;
  else if (!strcmp(opt, "--no-verify")) o->verify = 0;
  else if (!strcmp(opt, "--info")) o->info = 1;
  else return -1;
  return 0;
}

static void finish_defaults(bench_options *o) {
  if (!o->n_algos) o->algos[o->n_algos++] = DLCONV_ALGO_AUTO;
  if (!o->n_threads) o->threads[o->n_threads++] = 1;
  if (o->min_time < 0) {
    const char *env = getenv("DLCONV_BENCH_MIN_TIME");
    double v;
    o->min_time = o->quick ? 0.02 : 0.2;
    if (env && *env && parse_double(env, 0.0, 3600.0, &v))
      fprintf(stderr, "dlconv-bench: warning: DLCONV_BENCH_MIN_TIME=\"%s\" is not a number of seconds (0-3600); "
                      "ignored\n", env);
    else if (env && *env) o->min_time = v;
  }
}

int bench_parse_options(int argc, char **argv, bench_options *o) {
  set_defaults(o);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      bench_print_help(stdout);
      return 1;
    }
    if (a[0] != '-') {
      if (o->n_suites == BENCH_MAX_INPUTS) { fprintf(stderr, "dlconv-bench: too many suites\n"); return 2; }
      o->suites[o->n_suites++] = a;
      continue;
    }
    if (!flag_option(o, a)) continue;
    if (i + 1 >= argc || value_option(o, a, argv[i + 1])) {
      fprintf(stderr, "dlconv-bench: bad option %s%s%s (see --help)\n", a, i + 1 < argc ? " " : "",
              i + 1 < argc ? argv[i + 1] : "");
      return 2;
    }
    i++;
  }
  if (!o->n_suites && !o->n_shapes && !o->info) {
    fprintf(stderr, "dlconv-bench: give a suite (bench/layers/*.csv) or --shape (see --help)\n");
    return 2;
  }
  finish_defaults(o);
  return 0;
}
