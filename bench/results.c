/* results.c - slots and sums over measurements (see results.h). */
#include "results.h"

#include <stdio.h>
#include <string.h>

#define AUTO_MARGIN 1.10   /* "AUTO within 10% of the best": the project's target is >= 90% of layers */

void bench_run_init_slots(bench_run *r, const bench_options *o, int with_peers, int with_xnn) {
  r->o = o;
  r->n_slots = 0;
  r->slot_auto = r->slot_blocked = r->slot_user = r->slot_xnn = -1;
  r->n_explicit = 0;
  for (int i = 0; i < o->n_algos; i++) {
    bench_slot *s = &r->slots[r->n_slots];
    snprintf(s->name, sizeof s->name, "%s", bench_algo_name(o->algos[i]));
    s->algo = o->algos[i];
    if (s->algo == DLCONV_ALGO_AUTO) r->slot_auto = r->n_slots;
    else r->n_explicit++;
    r->n_slots++;
  }
  r->slot_ours = r->slot_auto >= 0 ? r->slot_auto : 0;
  if (with_peers) {
    r->slot_blocked = r->n_slots;
    snprintf(r->slots[r->n_slots].name, sizeof r->slots[0].name, "onednn_blocked");
    r->slots[r->n_slots++].is_peer = 1;
    r->slot_user = r->n_slots;
    snprintf(r->slots[r->n_slots].name, sizeof r->slots[0].name, "onednn_%s", bench_layout_name(o->layout));
    r->slots[r->n_slots++].is_peer = 1;
  }
  if (with_xnn) {
    r->slot_xnn = r->n_slots;
    snprintf(r->slots[r->n_slots].name, sizeof r->slots[0].name, "xnnpack");
    r->slots[r->n_slots++].is_peer = 1;
  }
}

int bench_best_slot(const bench_run *r, const bench_suite *s, int layer, int ti) {
  if (r->n_explicit < 2) return -1;
  int best = -1;
  for (int k = 0; k < r->n_slots; k++) {
    if (r->slots[k].is_peer || k == r->slot_auto) continue;
    const bench_measure *m = bench_at(r, s, layer, ti, k);
    if (bench_is_valid(m) && (best < 0 || m->ms < bench_at(r, s, layer, ti, best)->ms)) best = k;
  }
  return best;
}

double bench_peak_pct(const bench_run *r, const bench_layer *l, int threads, double ms) {
  if (r->peak.gflops <= 0 || ms <= 0) return 0;
  return 100.0 * (2.0 * (double)l->macs / (ms * 1e6)) / (threads * r->peak.gflops);
}

double bench_peak_of(const bench_run *r, const bench_measure *m) {
  int int8 = r->o->dtype == DLCONV_U8 || r->o->dtype == DLCONV_S8;
  if (int8 && r->peak.n_int8 > 0) return bench_peak_int8_for(&r->peak, m->kernel);
  return r->peak.gflops;
}

double bench_peak_pct_of(const bench_run *r, const bench_layer *l, int threads, const bench_measure *m) {
  double peak = bench_peak_of(r, m);
  if (peak <= 0 || m->ms <= 0) return 0;
  return 100.0 * (2.0 * (double)l->macs / (m->ms * 1e6)) / (threads * peak);
}

static int in_model(const bench_layer *l, const char *model) { return !model || !strcmp(l->model, model); }

bench_total bench_total_of(const bench_run *r, const bench_suite *s, const char *model, int ti, int slot) {
  bench_total t = {0, 0, 0, 0, 0};
  const int threads = r->o->threads[ti];
  for (int i = 0; i < s->n_layers; i++) {
    const bench_layer *l = &s->layers[i];
    if (!in_model(l, model)) continue;
    int k = slot >= 0 ? slot : bench_best_slot(r, s, i, ti);
    const bench_measure *m = k >= 0 ? bench_at(r, s, i, ti, k) : NULL;
    if (!m || !bench_is_valid(m)) {
      t.missing++;
      continue;
    }
    t.ms += m->ms * l->repeats;
    t.flops += 2.0 * (double)l->macs * l->repeats;
    double peak = bench_peak_of(r, m);
    if (peak > 0) t.peak_ms += 2.0 * (double)l->macs * l->repeats / (threads * peak * 1e6);
    t.counted++;
  }
  return t;
}

void bench_auto_share(const bench_run *r, const bench_suite *s, const char *model, int ti, int *within, int *of) {
  *within = *of = 0;
  if (r->slot_auto < 0) return;
  for (int i = 0; i < s->n_layers; i++) {
    int best = bench_best_slot(r, s, i, ti);
    if (!in_model(&s->layers[i], model) || best < 0) continue;
    const bench_measure *a = bench_at(r, s, i, ti, r->slot_auto);
    (*of)++;   /* a wrong or failed AUTO counts against it */
    if (bench_is_valid(a) && a->ms <= AUTO_MARGIN * bench_at(r, s, i, ti, best)->ms) (*within)++;
  }
}
