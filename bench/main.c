/* main.c - dlconv-bench: per-layer timings of libdlconv (and peers) over layer suites.
 * What it does and prints: bench_print_help (options.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "affinity.h"
#include "bench_cuda.h"
#include "data.h"
#include "info.h"
#include "options.h"
#include "peak.h"
#include "peer_onednn.h"
#include "peer_xnnpack.h"
#include "report.h"
#include "scaling.h"
#include "results.h"
#include "run_dlconv.h"
#include "timer.h"

#define QUICK_LAYERS 4

static int progress_on;   /* a live progress line, only when stderr is a terminal */

static void progress(const bench_suite *s, int i, const char *what) {
  if (!progress_on) return;
  fprintf(stderr, "\r\033[K[%s %d/%d] %s %s", s->title, i + 1, s->n_layers, s->layers[i].name, what);
  fflush(stderr);
}

static void progress_done(void) {
  if (progress_on) fputs("\r\033[K", stderr);
}

/* Data depends on the layer only (not on its position or the options), so a layer gets the
   same inputs in every run and every filter. */
static uint64_t layer_seed(const bench_layer *l) {
  uint64_t h = 1469598103934665603ull;
  for (const char *p = l->name; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  return h ^ (uint64_t)l->macs;
}

static void report_problem(const bench_run *r, const bench_layer *l, int k, int threads, const bench_measure *m) {
  if (m->status == BENCH_WRONG)
    fprintf(stderr, "VERIFY FAIL %s (%s) %s/%s threads=%d: max error %.3g > tol %.3g\n", r->slots[k].name, m->impl,
            l->model, l->name, threads, m->err, m->tol);
  else if (m->status == BENCH_ERROR)
    fprintf(stderr, "ERROR %s %s/%s threads=%d: %s\n", r->slots[k].name, l->model, l->name, threads, m->note);
}

/* Every slot on one layer at one thread count. */
static void measure_threads(const bench_run *r, bench_suite *s, int i, int ti, const bench_data *d,
                            const bench_timing *t) {
  const bench_layer *l = &s->layers[i];
  int threads = r->o->threads[ti];
  bench_affinity_for_threads(threads);
  for (int k = 0; k < r->n_slots; k++) {
    if (r->slots[k].is_peer) continue;
    progress(s, i, r->slots[k].name);
    bench_run_dlconv(l, d, r->slots[k].algo, threads, r->o, t, bench_at(r, s, i, ti, k));
  }
  if (r->slot_blocked >= 0) {
    progress(s, i, "onednn");
    bench_onednn_run(l, d, threads, r->o, t, bench_at(r, s, i, ti, r->slot_blocked),
                     bench_at(r, s, i, ti, r->slot_user));
  }
  if (r->slot_xnn >= 0) {
    progress(s, i, "xnnpack");
    bench_xnnpack_run(l, d, threads, r->o, t, bench_at(r, s, i, ti, r->slot_xnn));
  }
  progress_done();
  for (int k = 0; k < r->n_slots; k++) report_problem(r, l, k, threads, bench_at(r, s, i, ti, k));
}

static void measure_suite(const bench_run *r, bench_suite *s, const bench_timing *t, FILE *csv) {
  for (int i = 0; i < s->n_layers; i++) {
    const bench_layer *l = &s->layers[i];
    bench_data d;
    progress(s, i, "data");
    if (bench_data_make(&d, l, r->o->dtype, r->o->layout, r->o->sparsity, layer_seed(l))) {
      progress_done();
      fprintf(stderr, "ERROR %s/%s: out of memory for the test data\n", l->model, l->name);
      for (int ti = 0; ti < r->o->n_threads; ti++)
        for (int k = 0; k < r->n_slots; k++) bench_at(r, s, i, ti, k)->status = BENCH_ERROR;
      continue;
    }
    for (int ti = 0; ti < r->o->n_threads; ti++) {
      measure_threads(r, s, i, ti, &d, t);
      if (csv) bench_csv_rows(csv, r, s, i, ti);
    }
    bench_data_free(&d);
  }
}

static int keep_layer(const bench_options *o, const bench_layer *l) {
  return !o->filter || strstr(l->name, o->filter);
}

/* The layers to run: those matching --filter; with --quick, a few spread over the suite. */
static int select_layers(const bench_options *o, bench_layer *ls, int n) {
  int kept = 0;
  for (int i = 0; i < n; i++)
    if (keep_layer(o, &ls[i])) ls[kept++] = ls[i];
  if (!o->quick || kept <= QUICK_LAYERS) return kept;
  for (int j = 0; j < QUICK_LAYERS; j++) ls[j] = ls[(long)j * (kept - 1) / (QUICK_LAYERS - 1)];
  return QUICK_LAYERS;
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

static int load_suites(bench_run *r) {
  const bench_options *o = r->o;
  r->suites = calloc((size_t)o->n_suites + 1, sizeof *r->suites);
  if (!r->suites) return -1;
  char err[512] = "";
  for (int j = 0; j < o->n_suites; j++) {
    bench_suite *s = &r->suites[r->n_suites];
    int n = bench_read_suite(o->suites[j], &s->layers, err, sizeof err);
    if (n < 0) {
      fprintf(stderr, "dlconv-bench: %s\n", err);
      return -1;
    }
    snprintf(s->title, sizeof s->title, "%s", base_name(o->suites[j]));
    s->n_layers = select_layers(o, s->layers, n);
    r->n_suites++;
  }
  if (o->n_shapes) {
    bench_suite *s = &r->suites[r->n_suites++];
    snprintf(s->title, sizeof s->title, "--shape");
    if (!(s->layers = calloc((size_t)o->n_shapes, sizeof *s->layers))) return -1;
    for (int j = 0; j < o->n_shapes; j++)
      if (bench_parse_shape(o->shapes[j], &s->layers[s->n_layers++], err, sizeof err)) {
        fprintf(stderr, "dlconv-bench: %s\n", err);
        return -1;
      }
  }
  for (int j = 0; j < r->n_suites && o->batch; j++)   /* --batch */
    for (int i = 0; i < r->suites[j].n_layers; i++) {
      r->suites[j].layers[i].n = o->batch;
      if (bench_layer_finish(&r->suites[j].layers[i], err, sizeof err)) {
        fprintf(stderr, "dlconv-bench: %s\n", err);
        return -1;
      }
    }
  return 0;
}

static int alloc_measures(bench_run *r) {
  for (int j = 0; j < r->n_suites; j++) {
    bench_suite *s = &r->suites[j];
    size_t count = (size_t)s->n_layers * r->o->n_threads * r->n_slots;
    if (!(s->m = calloc(count ? count : 1, sizeof *s->m))) return -1;
  }
  return 0;
}

static void free_run(bench_run *r) {
  for (int j = 0; j < r->n_suites; j++) {
    free(r->suites[j].layers);
    free(r->suites[j].m);
  }
  free(r->suites);
}

static void cpu_model(char *buf, size_t n) {
  snprintf(buf, n, "unknown cpu");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[256];
  while (fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (!strncmp(line, "model name", 10) && colon) {
      snprintf(buf, n, "%s", colon + 2);
      buf[strcspn(buf, "\n")] = 0;
      break;
    }
  }
  fclose(f);
}

/* The 1-minute load average before we start: other work on the machine shows up in every
   timing, and a reader of the results should know. -1 when unknown. */
static double machine_load(void) {
  double load = -1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &load) != 1) load = -1;
    fclose(f);
  }
  return load;
}

static void print_preamble(FILE *f, const bench_run *r, const bench_timing *t) {
  const bench_options *o = r->o;
  char cpu[128];
  cpu_model(cpu, sizeof cpu);
  fprintf(f, "# dlconv-bench: libdlconv %s; ISAs here:", dlconv_version());
  for (int isa = DLCONV_ISA_GENERIC; isa <= DLCONV_ISA_NEON; isa++)
    if (dlconv_isa_available((dlconv_isa)isa)) fprintf(f, " %s", bench_isa_name((dlconv_isa)isa));
  fprintf(f, "\n# machine: %s, %ld CPUs online; fp32 peak per core %.1f GFLOP/s (%s)\n", cpu,
          sysconf(_SC_NPROCESSORS_ONLN), r->peak.gflops, r->peak.unit);
  if (r->peak.n_int8) {
    fprintf(f, "# int8 peak per core, GOP/s (2 per multiply-add):");
    for (int i = 0; i < r->peak.n_int8; i++)
      fprintf(f, "%s %s %.1f", i ? "," : "", r->peak.int8[i].instr, r->peak.int8[i].gops);
    fputc('\n', f);
  }
  double load = machine_load();
  if (load >= 0)
    fprintf(f, "# load average before the run: %.2f%s\n", load,
            load > 0.5 ? " (other work is running: timings suffer)" : "");
  fprintf(f, "# timing: median per call of >= %d calls and >= %.3g s after warm-up; plan outside timing\n",
          t->min_runs, t->min_time);
  fprintf(f, "# run: algo");
  for (int k = 0; k < o->n_algos; k++) fprintf(f, "%c%s", k ? ',' : ' ', bench_algo_name(o->algos[k]));
  fprintf(f, ", isa %s, dtype %s, layout %s, threads", bench_isa_name(o->isa), bench_dtype_name(o->dtype),
          bench_layout_name(o->layout));
  for (int k = 0; k < o->n_threads; k++) fprintf(f, "%c%d", k ? ',' : ' ', o->threads[k]);
  if (o->sparsity > 0) fprintf(f, ", sparsity %.3g", o->sparsity);
  if (o->measure) fprintf(f, ", MEASURE");
  if (!o->verify) fprintf(f, ", not verified");
  fputc('\n', f);
  if (r->slot_blocked >= 0) fprintf(f, "# peers: %s\n", r->peer_desc);
  if (r->slot_xnn >= 0) fprintf(f, "# peers: %s\n", r->xnn_desc);
}

/* What the table's words and numbers mean, once before the first table. */
static void print_legend(FILE *f, const bench_run *r) {
  int int8 = r->o->dtype == DLCONV_U8 || r->o->dtype == DLCONV_S8;
  fputs("# legend: MMAC = millions of multiply-accumulates per call; rep = times the layer occurs in\n"
        "#   its model (totals = sum of ms x rep); shape 3x224x224>64 k7/2 = 3 input channels of\n"
        "#   224x224 pixels, 64 output channels, 7x7 kernel, stride 2 (then d2 = dilation 2, g4 = 4\n"
        "#   groups, dw = depthwise; fc 2048>1000 = a dense layer); auto: impl = the algorithm/ISA\n"
        "#   AUTO chose; ms = median per call.\n", f);
  if (int8 && r->peak.n_int8)
    fputs("#   %pk = 2 x MACs / time over threads x the per-core int8 peak of the kernel's instruction\n"
          "#   (VNNI vpdpbusd or vpdpwssd, AVX2 vpmaddwd; generic kernels: this machine's best).\n", f);
  else if (int8)
    fputs("#   %pk = 2 x MACs / time over threads x the per-core fp32 FMA peak (no int8 peak probed).\n", f);
  else
    fputs("#   %pk = 2 x MACs / time over threads x the per-core fp32 FMA peak (f16 too: its products\n"
          "#   are summed in fp32).\n", f);
  if (r->o->verify)
    fputs("#   Every output is checked against a double-precision reference (WRONG when it is off; the\n"
          "#   CSV's err column: largest relative error, in output units for int8).\n", f);
}

static void warn_threads(const bench_options *o) {
  for (int k = 0; k < o->n_threads; k++)
    if (o->threads[k] > 1 && !bench_affinity_openmp_binds()) {
      fprintf(stderr, "dlconv-bench: note: %d threads without OMP_PROC_BIND; for stable timings run with "
                      "OMP_PROC_BIND=close OMP_PLACES=cores\n", o->threads[k]);
      return;
    }
}

static int count_problems(const bench_run *r) {
  int bad = 0;
  for (int j = 0; j < r->n_suites; j++) {
    const bench_suite *s = &r->suites[j];
    size_t count = (size_t)s->n_layers * r->o->n_threads * r->n_slots;
    for (size_t i = 0; i < count; i++) bad += s->m[i].status == BENCH_WRONG || s->m[i].status == BENCH_ERROR;
  }
  return bad;
}

static void setup_slots(bench_run *r, const bench_options *o) {
  int peers = 0;
  if (o->peers_onednn && !(peers = bench_onednn_available(r->peer_desc, sizeof r->peer_desc)))
    fprintf(stderr, "dlconv-bench: --peers onednn: %s; running without peers\n", r->peer_desc);
  int xnn = 0;
  if (o->peers_xnnpack && !(xnn = bench_xnnpack_available(r->xnn_desc, sizeof r->xnn_desc)))
    fprintf(stderr, "dlconv-bench: --peers xnnpack: xnnpack: %s; running without it\n", r->xnn_desc);
  bench_run_init_slots(r, o, peers, xnn);
}

static void find_peak(bench_run *r, const bench_options *o) {
  bench_affinity_for_threads(1);   /* the probe measures one core */
  if (o->peak_gflops > 0) {
    r->peak.gflops = o->peak_gflops;
    r->peak.unit = "given with --peak";
  } else {
    bench_peak_probe(&r->peak);
    if (o->dtype == DLCONV_U8 || o->dtype == DLCONV_S8) bench_peak_probe_int8(&r->peak);
  }
}

int main(int argc, char **argv) {
  bench_options o;
  int rc = bench_parse_options(argc, argv, &o);
  if (rc) return rc == 1 ? 0 : 2;
  if (o.info) return bench_info(&o);
  if (o.isa == DLCONV_ISA_CUDA) return bench_cuda_main(&o);   /* the GPU's own run (bench_cuda.c) */
  bench_affinity_init();
  progress_on = isatty(STDERR_FILENO);
  bench_run r;
  memset(&r, 0, sizeof r);
  r.o = &o;
  bench_timing t;
  bench_timing_default(&t, o.min_time);
  if (o.quick) t.min_runs = 3;
  setup_slots(&r, &o);
  if (load_suites(&r) || alloc_measures(&r)) {
    free_run(&r);
    return 2;
  }
  FILE *csv = NULL;
  if (o.csv_path && !(csv = fopen(o.csv_path, "w"))) {
    perror(o.csv_path);
    free_run(&r);
    return 2;
  }
  find_peak(&r, &o);
  warn_threads(&o);
  print_preamble(stdout, &r, &t);
  print_legend(stdout, &r);
  if (csv) bench_csv_header(csv, &r);
  for (int j = 0; j < r.n_suites; j++) {
    measure_suite(&r, &r.suites[j], &t, csv);
    for (int ti = 0; ti < o.n_threads; ti++) bench_table_suite(stdout, &r, &r.suites[j], ti);
    fflush(stdout);
  }
  bench_table_summary(stdout, &r);
  bench_table_scaling(stdout, &r);
  if (!o.csv_path) {
    printf("\n# every measurement as CSV: --csv FILE\n");
  } else {
    fclose(csv);
    printf("\n# CSV: %s\n", o.csv_path);
  }
  int bad = count_problems(&r);
  if (bad) fprintf(stderr, "dlconv-bench: %d measurements failed or gave wrong results\n", bad);
  bench_onednn_shutdown();
  bench_xnnpack_shutdown();
  free_run(&r);
  return bad ? 1 : 0;
}
