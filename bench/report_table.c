/* report_table.c - the tables a person reads. */
#include <string.h>

#include "report.h"

#define W_NAME 22
#define W_CELL 15        /* "   12.3456  87%" */
#define W_IMPL 14        /* AUTO's cell starts with what it chose */
#define W_PEER 11
#define W_RATIO 9
#define W_BEST 7
#define W_TOTAL 11

static int is_ours(const bench_run *r, int k) { return !r->slots[k].is_peer; }
static int has_best(const bench_run *r) { return r->n_explicit >= 2; }
static int has_peers(const bench_run *r) { return r->slot_blocked >= 0; }
static int has_xnn(const bench_run *r) { return r->slot_xnn >= 0; }

static void shape_text(const bench_layer *l, char *buf, size_t n) {
  if (l->is_dense) {
    snprintf(buf, n, "fc %d>%d", l->c_in, l->c_out);
    return;
  }
  char k[16], g[16] = "", dil[16] = "";
  if (l->k_h == l->k_w) snprintf(k, sizeof k, "%d", l->k_h);
  else snprintf(k, sizeof k, "%dx%d", l->k_h, l->k_w);
  if (l->groups > 1) snprintf(g, sizeof g, l->groups == l->c_in ? " dw" : " g%d", l->groups);
  if (l->dil_h > 1 || l->dil_w > 1) snprintf(dil, sizeof dil, " d%d", l->dil_h);
  snprintf(buf, n, "%dx%dx%d>%d k%s/%d%s%s", l->c_in, l->h_in, l->w_in, l->c_out, k, l->stride_h, dil, g);
}

/* Long layer names differ at their end (features.denseblock1.denselayer7.conv1): keep the end. */
static const char *name_text(const bench_layer *l, char *buf, size_t n) {
  size_t len = strlen(l->name);
  if (len <= W_NAME) return l->name;
  snprintf(buf, n, "~%s", l->name + len - (W_NAME - 1));
  return buf;
}

/* "ms pct%" of one measurement, or what happened instead. */
static void cell_text(const bench_run *r, const bench_layer *l, int threads, const bench_measure *m, char *buf,
                      size_t n) {
  if (!bench_has_time(m)) {
    snprintf(buf, n, "%s", m->status == BENCH_SKIPPED ? "skipped" : m->status == BENCH_ERROR ? "ERROR" : "-");
    return;
  }
  if (m->status == BENCH_WRONG) snprintf(buf, n, "%9.4f WRONG", m->ms);
  else if (bench_peak_of(r, m) > 0) snprintf(buf, n, "%9.4f %4.0f%%", m->ms, bench_peak_pct_of(r, l, threads, m));
  else snprintf(buf, n, "%9.4f", m->ms);
}

static int slot_width(const bench_run *r, int k) { return k == r->slot_auto ? W_IMPL + 1 + W_CELL : W_CELL; }

static void print_header(FILE *f, const bench_run *r) {
  int nhwc = r->o->layout == DLCONV_NHWC;
  fprintf(f, "%3s %-*s %-24s %8s %3s", "#", W_NAME, "layer", "shape", "MMAC", "rep");
  for (int k = 0; k < r->n_slots; k++)
    if (is_ours(r, k))
      fprintf(f, "  %*s", slot_width(r, k), k == r->slot_auto ? "auto: impl       ms   %pk" : r->slots[k].name);
  if (has_best(r)) {
    fprintf(f, "  %-*s", W_BEST, "best");
    if (r->slot_auto >= 0) fprintf(f, " %*s", W_RATIO, "auto/best");
  }
  if (has_peers(r))
    fprintf(f, "  %*s %*s  %*s %*s", W_PEER, "dnnl_blk", W_PEER, nhwc ? "dnnl_nhwc" : "dnnl_nchw", W_RATIO,
            "ours/blk", W_RATIO, nhwc ? "ours/nhwc" : "ours/nchw");
  if (has_xnn(r)) fprintf(f, "  %*s %*s", W_PEER, "xnnpack", W_RATIO, "ours/xnn");
  fputc('\n', f);
}

static void print_ratio(FILE *f, double num, double den) {
  if (num > 0 && den > 0) fprintf(f, " %*.2f", W_RATIO, num / den);
  else fprintf(f, " %*s", W_RATIO, "-");
}

static void print_peer_cells(FILE *f, const bench_measure *ours, const bench_measure *blk, const bench_measure *usr) {
  const bench_measure *peers[2] = {blk, usr};
  fputc(' ', f);
  for (int i = 0; i < 2; i++) {
    if (bench_has_time(peers[i])) fprintf(f, " %*.4f", W_PEER, peers[i]->ms);
    else fprintf(f, " %*s", W_PEER, peers[i]->status == BENCH_SKIPPED ? "skipped" : "ERROR");
  }
  fputc(' ', f);
  for (int i = 0; i < 2; i++)
    print_ratio(f, bench_has_time(ours) ? ours->ms : 0, bench_has_time(peers[i]) ? peers[i]->ms : 0);
}

/* XNNPACK's ms (WRONG when its output is off) and our ms over it. */
static void print_xnn_cells(FILE *f, const bench_measure *ours, const bench_measure *x) {
  fputc(' ', f);
  if (x->status == BENCH_WRONG) fprintf(f, " %*s", W_PEER, "WRONG");
  else if (bench_has_time(x)) fprintf(f, " %*.4f", W_PEER, x->ms);
  else fprintf(f, " %*s", W_PEER, x->status == BENCH_SKIPPED ? "skipped" : "ERROR");
  print_ratio(f, bench_has_time(ours) ? ours->ms : 0, bench_is_valid(x) ? x->ms : 0);
}

static void print_layer_row(FILE *f, const bench_run *r, const bench_suite *s, int i, int ti) {
  const bench_layer *l = &s->layers[i];
  int threads = r->o->threads[ti];
  char shape[64], cell[64], name[W_NAME + 1];
  shape_text(l, shape, sizeof shape);
  fprintf(f, "%3d %-*s %-24.24s %8.1f %3d", i + 1, W_NAME, name_text(l, name, sizeof name), shape,
          (double)l->macs * 1e-6, l->repeats);
  for (int k = 0; k < r->n_slots; k++) {
    if (!is_ours(r, k)) continue;
    const bench_measure *m = bench_at(r, s, i, ti, k);
    cell_text(r, l, threads, m, cell, sizeof cell);
    if (k == r->slot_auto) fprintf(f, "  %-*.*s %*s", W_IMPL, W_IMPL, m->impl, W_CELL, cell);
    else fprintf(f, "  %*s", W_CELL, cell);
  }
  if (has_best(r)) {
    int b = bench_best_slot(r, s, i, ti);
    fprintf(f, "  %-*s", W_BEST, b >= 0 ? r->slots[b].name : "-");
    if (r->slot_auto >= 0) {
      const bench_measure *a = bench_at(r, s, i, ti, r->slot_auto);
      print_ratio(f, bench_has_time(a) ? a->ms : 0, b >= 0 ? bench_at(r, s, i, ti, b)->ms : 0);
    }
  }
  if (has_peers(r))
    print_peer_cells(f, bench_at(r, s, i, ti, r->slot_ours), bench_at(r, s, i, ti, r->slot_blocked),
                     bench_at(r, s, i, ti, r->slot_user));
  if (has_xnn(r)) print_xnn_cells(f, bench_at(r, s, i, ti, r->slot_ours), bench_at(r, s, i, ti, r->slot_xnn));
  fputc('\n', f);
}

/* A total's cell: ms, '*' when some layers are missing from it, % of peak. */
static void total_text(const bench_run *r, int threads, bench_total t, char *buf, size_t n) {
  if (!t.counted) {
    snprintf(buf, n, "-");
    return;
  }
  (void)r;
  (void)threads;
  double pct = t.ms > 0 ? 100.0 * t.peak_ms / t.ms : 0;
  snprintf(buf, n, "%9.3f%c%4.0f%%", t.ms, t.missing ? '*' : ' ', pct);
}

static double total_ms(bench_total t) { return t.counted ? t.ms : 0; }

static void print_peer_total(FILE *f, bench_total t) {
  if (t.counted) fprintf(f, " %*.3f%c", W_PEER - 1, t.ms, t.missing ? '*' : ' ');
  else fprintf(f, " %*s", W_PEER, "-");
}

static void print_total_row(FILE *f, const bench_run *r, const bench_suite *s, const char *model, int ti) {
  int threads = r->o->threads[ti];
  double macs = 0;
  char cell[64];
  for (int i = 0; i < s->n_layers; i++)
    if (!strcmp(s->layers[i].model, model)) macs += (double)s->layers[i].macs * s->layers[i].repeats;
  fprintf(f, "%3s %-*s %-24s %8.1f %3s", "", W_NAME, "total (ms x rep)", model, macs * 1e-6, "");
  for (int k = 0; k < r->n_slots; k++) {
    if (!is_ours(r, k)) continue;
    total_text(r, threads, bench_total_of(r, s, model, ti, k), cell, sizeof cell);
    fprintf(f, "  %*s", slot_width(r, k), cell);
  }
  if (has_best(r)) {
    bench_total b = bench_total_of(r, s, model, ti, -1);
    fprintf(f, "  %-*s", W_BEST, b.counted ? "" : "-");
    if (r->slot_auto >= 0) print_ratio(f, total_ms(bench_total_of(r, s, model, ti, r->slot_auto)), total_ms(b));
  }
  if (has_peers(r)) {
    bench_total ours = bench_total_of(r, s, model, ti, r->slot_ours);
    bench_total blk = bench_total_of(r, s, model, ti, r->slot_blocked);
    bench_total usr = bench_total_of(r, s, model, ti, r->slot_user);
    fputc(' ', f);
    print_peer_total(f, blk);
    print_peer_total(f, usr);
    fputc(' ', f);
    print_ratio(f, total_ms(ours), total_ms(blk));
    print_ratio(f, total_ms(ours), total_ms(usr));
  }
  if (has_xnn(r)) {
    bench_total x = bench_total_of(r, s, model, ti, r->slot_xnn);
    fputc(' ', f);
    print_peer_total(f, x);
    print_ratio(f, total_ms(bench_total_of(r, s, model, ti, r->slot_ours)), total_ms(x));
  }
  fputc('\n', f);
  if (has_best(r)) {
    bench_total b = bench_total_of(r, s, model, ti, -1);
    fprintf(f, "    best explicit algorithm per layer, summed: %.3f ms%s\n", b.ms,
            b.missing ? " (some layers had none)" : "");
  }
}

/* The distinct models of a suite, in order of appearance. */
static int models_of(const bench_suite *s, const char **names, int max) {
  int n = 0;
  for (int i = 0; i < s->n_layers; i++) {
    int seen = 0;
    for (int j = 0; j < n && !seen; j++) seen = !strcmp(names[j], s->layers[i].model);
    if (!seen && n < max) names[n++] = s->layers[i].model;
  }
  return n;
}

static void print_auto_share(FILE *f, const bench_run *r, const bench_suite *s, const char *model, int ti) {
  int within, of;
  bench_auto_share(r, s, model, ti, &within, &of);
  if (!of) return;
  fprintf(f, "    %s: AUTO within 10%% of the best explicit algorithm on %d/%d layers (%.0f%%; target >= 90%%)\n",
          model, within, of, 100.0 * within / of);
}

/* What each slot ran as (every implementation and on how many layers, most first), and why it
   did not run where it did not. */
#define MAX_IMPLS 16
static void print_slot_notes(FILE *f, const bench_run *r, const bench_suite *s, int ti) {
  for (int k = 0; k < r->n_slots; k++) {
    int counts[BENCH_ERROR + 1] = {0};
    const char *impls[MAX_IMPLS], *note = NULL;
    int uses[MAX_IMPLS], n_impls = 0, others = 0;
    for (int i = 0; i < s->n_layers; i++) {
      const bench_measure *m = bench_at(r, s, i, ti, k);
      counts[m->status]++;
      if (!note && m->note[0]) note = m->note;
      if (!m->impl[0]) continue;
      int j = 0;
      while (j < n_impls && strcmp(impls[j], m->impl)) j++;
      if (j == n_impls && n_impls == MAX_IMPLS) { others++; continue; }
      if (j == n_impls) { impls[n_impls] = m->impl; uses[n_impls++] = 0; }
      uses[j]++;
    }
    for (int a = 1; a < n_impls; a++)   /* most used first; ties in order of appearance */
      for (int b = a; b > 0 && uses[b] > uses[b - 1]; b--) {
        int u = uses[b]; uses[b] = uses[b - 1]; uses[b - 1] = u;
        const char *t = impls[b]; impls[b] = impls[b - 1]; impls[b - 1] = t;
      }
    fprintf(f, "    %-15s ran:", r->slots[k].name);
    if (!n_impls) fprintf(f, " -");
    for (int j = 0; j < n_impls; j++) fprintf(f, "%s %s %d", j ? "," : "", impls[j], uses[j]);
    if (others) fprintf(f, ", others %d", others);
    if (counts[BENCH_WRONG]) fprintf(f, "; VERIFY FAIL on %d layers", counts[BENCH_WRONG]);
    if (counts[BENCH_SKIPPED]) fprintf(f, "; skipped %d", counts[BENCH_SKIPPED]);
    if (counts[BENCH_ERROR]) fprintf(f, "; errors %d", counts[BENCH_ERROR]);
    if (note) fprintf(f, " (first: %s)", note);
    fputc('\n', f);
  }
}

void bench_table_suite(FILE *f, const bench_run *r, const bench_suite *s, int ti) {
  int threads = r->o->threads[ti];
  int int8 = (r->o->dtype == DLCONV_U8 || r->o->dtype == DLCONV_S8) && r->peak.n_int8 > 0;
  fprintf(f, "\n== %s: %d thread%s, %s %s, isa %s; ms per call (median), %%pk: %% of %d x ", s->title, threads,
          threads > 1 ? "s" : "", bench_dtype_name(r->o->dtype), bench_layout_name(r->o->layout),
          bench_isa_name(r->o->isa), threads);
  if (int8) fprintf(f, "the int8 peak of each kernel's instruction ==\n");
  else fprintf(f, "%.1f GFLOP/s ==\n", r->peak.gflops);
  print_header(f, r);
  for (int i = 0; i < s->n_layers; i++) print_layer_row(f, r, s, i, ti);
  const char *models[64];
  int nm = models_of(s, models, 64);
  for (int j = 0; j < nm; j++) print_total_row(f, r, s, models[j], ti);
  for (int j = 0; j < nm; j++) print_auto_share(f, r, s, models[j], ti);
  print_slot_notes(f, r, s, ti);
  if (has_peers(r) || has_xnn(r))
    fprintf(f, "    ours = %s; ratios are our ms / the peer's ms (< 1: we are faster); totals marked * miss layers\n",
            r->slots[r->slot_ours].name);
}

static void print_summary_header(FILE *f, const bench_run *r) {
  fprintf(f, "%-20s %3s", "model", "thr");
  for (int k = 0; k < r->n_slots; k++) fprintf(f, " %*s", W_TOTAL, r->slots[k].name);
  if (has_best(r)) {
    fprintf(f, " %*s", W_TOTAL, "best");
    if (r->slot_auto >= 0) fprintf(f, " %*s %9s", W_RATIO, "auto/best", "auto<=10%");
  }
  if (has_peers(r)) fprintf(f, " %*s %*s", W_RATIO, "ours/blk", W_RATIO, "ours/usr");
  if (has_xnn(r)) fprintf(f, " %*s", W_RATIO, "ours/xnn");
  fputc('\n', f);
}

static void print_summary_total(FILE *f, bench_total t) {
  if (t.counted) fprintf(f, " %*.3f%c", W_TOTAL - 1, t.ms, t.missing ? '*' : ' ');
  else fprintf(f, " %*s", W_TOTAL, "-");
}

static void print_summary_row(FILE *f, const bench_run *r, const bench_suite *s, const char *model, int ti) {
  fprintf(f, "%-20.20s %3d", model, r->o->threads[ti]);
  for (int k = 0; k < r->n_slots; k++) print_summary_total(f, bench_total_of(r, s, model, ti, k));
  if (has_best(r)) {
    bench_total b = bench_total_of(r, s, model, ti, -1);
    print_summary_total(f, b);
    if (r->slot_auto >= 0) {
      int within, of;
      bench_auto_share(r, s, model, ti, &within, &of);
      print_ratio(f, total_ms(bench_total_of(r, s, model, ti, r->slot_auto)), total_ms(b));
      if (of) fprintf(f, " %5d/%-3d", within, of);
      else fprintf(f, " %9s", "-");
    }
  }
  if (has_peers(r)) {
    double ours = total_ms(bench_total_of(r, s, model, ti, r->slot_ours));
    print_ratio(f, ours, total_ms(bench_total_of(r, s, model, ti, r->slot_blocked)));
    print_ratio(f, ours, total_ms(bench_total_of(r, s, model, ti, r->slot_user)));
  }
  if (has_xnn(r))
    print_ratio(f, total_ms(bench_total_of(r, s, model, ti, r->slot_ours)),
                total_ms(bench_total_of(r, s, model, ti, r->slot_xnn)));
  fputc('\n', f);
}

void bench_table_summary(FILE *f, const bench_run *r) {
  fprintf(f, "\n== model totals: ms per inference = sum of ms x repeats (* = some layers missing) ==\n");
  print_summary_header(f, r);
  for (int j = 0; j < r->n_suites; j++) {
    const bench_suite *s = &r->suites[j];
    const char *models[64];
    int nm = models_of(s, models, 64);
    for (int m = 0; m < nm; m++)
      for (int ti = 0; ti < r->o->n_threads; ti++) print_summary_row(f, r, s, models[m], ti);
  }
}
