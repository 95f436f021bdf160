/* info.c - dlconv-bench --info: per layer, one table of what each algorithm x dtype x layout x ISA
 * plans to (dlconv_plan_query: algorithm and micro-kernel) or why it cannot (dlconv_last_error).
 * Public API only; plans are made and destroyed, never executed, so it takes seconds. */
#include "info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "data.h"
#include "layer.h"
#include "run_dlconv.h"

/* The default layers: one of each kind the algorithms tell apart. */
static const char *const BUILTIN[] = {
    "name=3x3,c_in=64,h=56,w=56,c_out=64,k=3,pad=1,bias=1",
    "name=1x1,c_in=256,h=56,w=56,c_out=64,k=1,bias=1",
    "name=7x7s2_rgb_stem,c_in=3,h=224,w=224,c_out=64,k=7,stride=2,pad=3,bias=1",
    "name=grouped3x3_g4,c_in=128,h=28,w=28,c_out=128,k=3,pad=1,groups=4,bias=1",
    "name=depthwise3x3,c_in=144,h=56,w=56,c_out=144,k=3,pad=1,groups=144,bias=1",
    "name=dense,op=dense,n=1,c_in=2048,c_out=1000,bias=1",
};
#define N_BUILTIN ((int)(sizeof BUILTIN / sizeof BUILTIN[0]))

static const dlconv_dtype DTYPES[] = {DLCONV_F32, DLCONV_F16, DLCONV_U8, DLCONV_S8};
static const dlconv_algo ALGOS[] = {DLCONV_ALGO_AUTO, DLCONV_ALGO_DIRECT, DLCONV_ALGO_IM2COL_GEMM,
                                    DLCONV_ALGO_SPATIAL_PACK, DLCONV_ALGO_GSPC, DLCONV_ALGO_SPARSE_CSR};

#define MAX_COLS 6
#define MAX_ROWS 64
#define MAX_NOTES 40
#define CELL 112

typedef struct cell {
  char text[CELL];
} cell;

typedef struct row {
  const char *dtype, *layout, *algo;   /* dtype and layout NULL: same as the row above */
  cell c[MAX_COLS];
  char tail[CELL + 32];                /* what isa AUTO runs, when no cell of the row shows it */
} row;

typedef struct table {
  dlconv_isa cols[MAX_COLS];
  int n_cols;
  row rows[MAX_ROWS];
  int n_rows;
  char notes[MAX_NOTES][320];
  int n_notes;
} table;

typedef struct counts {
  long plans, failed;
} counts;

/* 1-based number of msg among the table's notes, added when new. */
static int note_of(table *t, const char *msg) {
  for (int i = 0; i < t->n_notes; i++)
    if (!strcmp(t->notes[i], msg)) return i + 1;
  if (t->n_notes == MAX_NOTES) return MAX_NOTES;
  snprintf(t->notes[t->n_notes++], sizeof t->notes[0], "%s", msg);
  return t->n_notes;
}

static void csv_field(FILE *f, const char *s, int last) {
  if (strpbrk(s, ",\"\n")) {
    fputc('"', f);
    for (const char *p = s; *p; p++) {
      if (*p == '"') fputc('"', f);
      fputc(*p, f);
    }
    fputc('"', f);
  } else {
    fputs(s, f);
  }
  fputc(last ? '\n' : ',', f);
}

typedef struct outcome {
  dlconv_status st;
  dlconv_plan_info info;
  char msg[256];
} outcome;

static void plan_one(const bench_layer *l, const bench_data *d, dlconv_algo algo, dlconv_isa isa,
                     const bench_options *o, counts *n, outcome *r) {
  dlconv_options opt;
  dlconv_options_init(&opt);
  opt.algo = algo;
  opt.isa = isa;
  opt.num_threads = o->threads[0];
  dlconv_plan *plan = NULL;
  memset(r, 0, sizeof *r);
  r->st = bench_make_plan(&plan, l, d, &opt);
  if (r->st == DLCONV_OK) r->st = dlconv_plan_query(plan, &r->info);
  if (r->st != DLCONV_OK) snprintf(r->msg, sizeof r->msg, "%s", dlconv_last_error());
  dlconv_plan_destroy(plan);
  n->plans++;
  if (r->st != DLCONV_OK && r->st != DLCONV_ERR_UNSUPPORTED) n->failed++;
}

static void csv_row(FILE *f, const bench_layer *l, const char *dtype, const char *layout, dlconv_algo algo,
                    dlconv_isa isa, const outcome *r) {
  if (!f) return;
  int ok = r->st == DLCONV_OK;
  csv_field(f, l->name, 0);
  csv_field(f, dtype, 0);
  csv_field(f, layout, 0);
  csv_field(f, bench_algo_name(algo), 0);
  csv_field(f, bench_isa_name(isa), 0);
  csv_field(f, ok ? "ok" : r->st == DLCONV_ERR_UNSUPPORTED ? "unsupported" : dlconv_status_string(r->st), 0);
  csv_field(f, ok ? bench_algo_name(r->info.algo) : "", 0);
  csv_field(f, ok ? bench_isa_name(r->info.isa) : "", 0);
  csv_field(f, ok ? r->info.kernel : "", 0);
  csv_field(f, r->msg, 1);
}

static int same_choice(const outcome *a, const outcome *b) {
  return a->st == DLCONV_OK && b->st == DLCONV_OK && a->info.algo == b->info.algo && a->info.isa == b->info.isa &&
         !strcmp(a->info.kernel, b->info.kernel);
}

/* The cell of a plan with algo and column isa forced; '*' when it is what isa AUTO runs. */
static void fill_cell(table *t, cell *c, dlconv_algo algo, dlconv_isa isa, const outcome *r, int star) {
  if (r->st == DLCONV_OK) {
    char what[48] = "";
    if (algo == DLCONV_ALGO_AUTO || r->info.algo != algo) snprintf(what, sizeof what, "%s", bench_algo_name(r->info.algo));
    if (isa == DLCONV_ISA_AUTO || r->info.isa != isa)
      snprintf(what + strlen(what), sizeof what - strlen(what), "%s%s", what[0] ? "/" : "", bench_isa_name(r->info.isa));
    snprintf(c->text, sizeof c->text, "%s%s%s%s", star ? "*" : "", what, what[0] ? " " : "", r->info.kernel);
  } else if (r->st == DLCONV_ERR_UNSUPPORTED) {
    snprintf(c->text, sizeof c->text, "- (%d)", note_of(t, r->msg));
  } else {
    char msg[320];
    snprintf(msg, sizeof msg, "%s: %s", dlconv_status_string(r->st), r->msg);
    snprintf(c->text, sizeof c->text, "ERROR (%d)", note_of(t, msg));
  }
}

/* The rows of one dtype and layout. Returns -1 when the test data could not be made. */
static int fill_rows(table *t, const bench_layer *l, dlconv_dtype dt, dlconv_layout lay, const bench_options *o,
                     FILE *csv, counts *n) {
  const char *dname = bench_dtype_name(dt), *lname = l->is_dense ? "-" : bench_layout_name(lay);
  bench_data d;
  if (bench_data_make(&d, l, dt, lay, 0.0, 0x1f0u + (uint64_t)dt)) return -1;
  outcome full;   /* a default call: algo AUTO, isa AUTO */
  plan_one(l, &d, DLCONV_ALGO_AUTO, DLCONV_ISA_AUTO, o, n, &full);
  csv_row(csv, l, dname, lname, DLCONV_ALGO_AUTO, DLCONV_ISA_AUTO, &full);
  int first = 1;
  for (int a = 0; a < o->n_algos && t->n_rows < MAX_ROWS; a++) {
    const dlconv_algo algo = o->algos[a];
    row *rw = &t->rows[t->n_rows++];
    memset(rw, 0, sizeof *rw);
    rw->dtype = first ? dname : NULL;
    rw->layout = first ? lname : NULL;
    rw->algo = algo == DLCONV_ALGO_AUTO ? "AUTO" : bench_algo_name(algo);
    first = 0;
    int shown = 0;
    for (int i = 0; i < t->n_cols; i++) {
      outcome r;
      if (algo == DLCONV_ALGO_AUTO && t->cols[i] == DLCONV_ISA_AUTO) {
        r = full;   /* the default call itself, in the CSV once */
      } else {
        plan_one(l, &d, algo, t->cols[i], o, n, &r);
        csv_row(csv, l, dname, lname, algo, t->cols[i], &r);
      }
      int star = algo == DLCONV_ALGO_AUTO && !shown && same_choice(&r, &full);
      shown |= star;
      fill_cell(t, &rw->c[i], algo, t->cols[i], &r, star);
    }
    if (algo == DLCONV_ALGO_AUTO && !shown) {
      cell c;
      fill_cell(t, &c, DLCONV_ALGO_AUTO, DLCONV_ISA_AUTO, &full, 0);
      snprintf(rw->tail, sizeof rw->tail, "isa AUTO: %s", c.text);
    }
  }
  bench_data_free(&d);
  return 0;
}

static int width_of(const table *t, int col) {
  int w = (int)strlen(bench_isa_name(t->cols[col]));
  for (int r = 0; r < t->n_rows; r++) {
    int n = (int)strlen(t->rows[r].c[col].text);
    if (n > w) w = n;
  }
  return w;
}

static void print_table(FILE *f, const table *t) {
  int w[MAX_COLS];
  fprintf(f, "%-5s %-6s %-6s", "dtype", "layout", "algo");
  for (int i = 0; i < t->n_cols; i++) {
    w[i] = width_of(t, i);
    fprintf(f, "  %-*s", i + 1 < t->n_cols ? w[i] : 0, bench_isa_name(t->cols[i]));
  }
  fputc('\n', f);
  for (int r = 0; r < t->n_rows; r++) {
    const row *rw = &t->rows[r];
    fprintf(f, "%-5s %-6s %-6s", rw->dtype ? rw->dtype : "", rw->layout ? rw->layout : "", rw->algo);
    for (int i = 0; i < t->n_cols; i++)
      fprintf(f, "  %-*s", i + 1 < t->n_cols || rw->tail[0] ? w[i] : 0, rw->c[i].text);
    if (rw->tail[0]) fprintf(f, "  (%s)", rw->tail);
    fputc('\n', f);
  }
  for (int i = 0; i < t->n_notes; i++) fprintf(f, "  (%d) %s\n", i + 1, t->notes[i]);
}

static void print_layer_title(FILE *f, const bench_layer *l) {
  if (l->is_dense) {
    fprintf(f, "\n== %s: dense batch=%d in=%d out=%d%s (%.3g MMAC)\n", l->name, l->n, l->c_in, l->c_out,
            l->bias ? " bias" : "", (double)l->macs * 1e-6);
    return;
  }
  fprintf(f, "\n== %s: n=%d c_in=%d %dx%d c_out=%d k=%dx%d stride=%dx%d pad=%dx%d dil=%dx%d groups=%d%s -> %dx%d (%.3g MMAC)\n",
          l->name, l->n, l->c_in, l->h_in, l->w_in, l->c_out, l->k_h, l->k_w, l->stride_h, l->stride_w, l->pad_h,
          l->pad_w, l->dil_h, l->dil_w, l->groups, l->bias ? " bias" : "", l->h_out, l->w_out, (double)l->macs * 1e-6);
}

static int info_layer(const bench_layer *l, const bench_options *o, const dlconv_isa *cols, int n_cols, FILE *csv,
                      counts *n) {
  table *t = calloc(1, sizeof *t);
  if (!t) return -1;
  memcpy(t->cols, cols, (size_t)n_cols * sizeof *cols);
  t->n_cols = n_cols;
  int rc = 0;
  for (int di = 0; di < (int)(sizeof DTYPES / sizeof DTYPES[0]) && !rc; di++) {
    if (o->dtype_given && DTYPES[di] != o->dtype) continue;
    for (int lay = DLCONV_NCHW; lay <= DLCONV_NHWC && !rc; lay++) {
      if (l->is_dense ? lay != DLCONV_NCHW : o->layout_given && (dlconv_layout)lay != o->layout) continue;
      rc = fill_rows(t, l, DTYPES[di], (dlconv_layout)lay, o, csv, n);
    }
  }
  print_layer_title(stdout, l);
  if (rc) fprintf(stderr, "dlconv-bench: %s: out of memory for the test data\n", l->name);
  else print_table(stdout, t);
  free(t);
  return rc;
}

/* The CPU flags the kernel tables are chosen by, as /proc/cpuinfo names them. */
static void print_cpu(FILE *f) {
  static const char *const KNOWN[] = {"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512dq", "avx512vl",
                                      "avx512_vnni", "avx512vbmi", "avx_vnni", "asimd", "asimdhp", "asimddp"};
  char line[8192], model[128] = "unknown cpu", flags[256] = "";
  FILE *in = fopen("/proc/cpuinfo", "r");
  int have_flags = 0;
  while (in && fgets(line, sizeof line, in)) {
    char *colon = strchr(line, ':');
    if (!colon) continue;
    if (!strncmp(line, "model name", 10) && !strcmp(model, "unknown cpu")) {
      snprintf(model, sizeof model, "%s", colon + 2);
      model[strcspn(model, "\n")] = 0;
    }
    if (!have_flags && (!strncmp(line, "flags", 5) || !strncmp(line, "Features", 8))) {
      have_flags = 1;
      for (size_t k = 0; k < sizeof KNOWN / sizeof KNOWN[0]; k++) {
        size_t len = strlen(KNOWN[k]);
        for (char *p = colon + 1; (p = strstr(p, KNOWN[k])); p += len)
          if (p[-1] == ' ' && (p[len] == ' ' || p[len] == '\n' || p[len] == 0)) {
            snprintf(flags + strlen(flags), sizeof flags - strlen(flags), " %s", KNOWN[k]);
            break;
          }
      }
    }
  }
  if (in) fclose(in);
  fprintf(f, "# /proc/cpuinfo: %s; flags that pick kernels:%s\n", model, flags[0] ? flags : " (none found)");
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int bench_info(const bench_options *o) {
  const double t0 = now_s();
  dlconv_isa cols[MAX_COLS];
  int n_cols = 0;
  printf("# dlconv-bench --info: libdlconv %s\n", dlconv_version());
  print_cpu(stdout);
  printf("# dlconv_isa_available:");
  for (int isa = DLCONV_ISA_GENERIC; isa <= DLCONV_ISA_CUDA; isa++) {
    int yes = dlconv_isa_available((dlconv_isa)isa);
    printf(" %s %s%s", bench_isa_name((dlconv_isa)isa), yes ? "yes" : "no", isa < DLCONV_ISA_CUDA ? "," : "\n");
    if (yes && isa != DLCONV_ISA_CUDA && !o->isa_given) cols[n_cols++] = (dlconv_isa)isa;
  }
  if (o->isa_given) cols[n_cols++] = o->isa;
  printf("# cells: dlconv_plan_query of a plan with that algorithm and ISA forced (threads %d): the kernel,\n"
         "# after the algorithm on AUTO rows; '-' (n): DLCONV_ERR_UNSUPPORTED, the message is note n\n"
         "# below the table; '*': what a call with algo AUTO and isa AUTO runs\n",
         o->threads[0]);

  bench_options oo = *o;
  if (!o->algo_given) {
    oo.n_algos = (int)(sizeof ALGOS / sizeof ALGOS[0]);
    memcpy(oo.algos, ALGOS, sizeof ALGOS);
  }
  FILE *csv = NULL;
  if (o->csv_path) {
    if (!(csv = fopen(o->csv_path, "w"))) {
      perror(o->csv_path);
      return 2;
    }
    fputs("layer,dtype,layout,algo,isa,status,impl_algo,impl_isa,kernel,message\n", csv);
  }
  counts n = {0, 0};
  int rc = 0;
  char err[512] = "";
  for (int j = 0; j < o->n_suites && !rc; j++) {
    bench_layer *ls = NULL;
    int count = bench_read_suite(o->suites[j], &ls, err, sizeof err);
    if (count < 0) {
      fprintf(stderr, "dlconv-bench: %s\n", err);
      rc = 2;
      break;
    }
    printf("\n#### %s\n", o->suites[j]);
    for (int i = 0; i < count && !rc; i++)
      if (!o->filter || strstr(ls[i].name, o->filter)) rc = info_layer(&ls[i], &oo, cols, n_cols, csv, &n) ? 2 : 0;
    free(ls);
  }
  const int builtin = !o->n_suites && !o->n_shapes;
  const int n_specs = builtin ? N_BUILTIN : o->n_shapes;
  for (int j = 0; j < n_specs && !rc; j++) {
    bench_layer l;
    if (bench_parse_shape(builtin ? BUILTIN[j] : o->shapes[j], &l, err, sizeof err)) {
      fprintf(stderr, "dlconv-bench: %s\n", err);
      rc = 2;
      break;
    }
    if (!o->filter || strstr(l.name, o->filter)) rc = info_layer(&l, &oo, cols, n_cols, csv, &n) ? 2 : 0;
  }
  if (csv && fclose(csv)) {
    perror(o->csv_path);
    rc = 2;
  }
  printf("\n# %ld plans in %.2f s; %ld failed other than UNSUPPORTED\n", n.plans, now_s() - t0, n.failed);
  if (rc) return rc;
  if (n.failed) fprintf(stderr, "dlconv-bench: %ld plans failed other than with DLCONV_ERR_UNSUPPORTED\n", n.failed);
  return n.failed ? 1 : 0;
}
