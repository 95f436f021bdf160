/* results.h - every measurement of a bench run, and the sums the report is made of.
 *
 * A suite's measurements form a [layer][thread count][slot] array. Slots are the algorithms
 * asked for (in the order given) then, with --peers onednn, oneDNN blocked and oneDNN fed the
 * user layout, then with --peers xnnpack, XNNPACK (NHWC). "Ours" in peer ratios is AUTO when it ran, else the first algorithm. */
#ifndef DLCB_RESULTS_H
#define DLCB_RESULTS_H

#include "layer.h"
#include "measure.h"
#include "options.h"
#include "peak.h"

#define BENCH_MAX_SLOTS (BENCH_MAX_ALGOS + 3)

typedef struct bench_slot {
  char name[24];                   /* "auto", "gemm", "onednn_blocked", "onednn_nchw" */
  int is_peer;
  dlconv_algo algo;
} bench_slot;

typedef struct bench_suite {
  char title[128];                 /* the file name, or "--shape" */
  bench_layer *layers;
  int n_layers;
  bench_measure *m;                /* [n_layers][n_threads][n_slots] */
} bench_suite;

typedef struct bench_run {
  const bench_options *o;
  bench_peak peak;
  char peer_desc[128];
  bench_slot slots[BENCH_MAX_SLOTS];
  int n_slots;
  int slot_auto, slot_ours;        /* AUTO's slot or -1; the slot peers are compared with */
  int slot_blocked, slot_user;     /* oneDNN's slots or -1 */
  int slot_xnn;                    /* XNNPACK's slot or -1 */
  char xnn_desc[128];
  int n_explicit;                  /* algorithms other than AUTO */
  bench_suite *suites;
  int n_suites;
} bench_run;

/* with_peers: oneDNN's slots; with_xnn: XNNPACK's. */
void bench_run_init_slots(bench_run *r, const bench_options *o, int with_peers, int with_xnn);

static inline int bench_n_threads(const bench_run *r) { return r->o->n_threads; }
static inline bench_measure *bench_at(const bench_run *r, const bench_suite *s, int layer, int ti, int slot) {
  return &s->m[((size_t)layer * r->o->n_threads + ti) * r->n_slots + slot];
}

/* The fastest correct explicit algorithm's slot on a layer, or -1 (fewer than 2 explicit slots). */
int bench_best_slot(const bench_run *r, const bench_suite *s, int layer, int ti);
/* gflops / (threads x per-core peak) in percent; 0 when the peak is unknown. */
double bench_peak_pct(const bench_run *r, const bench_layer *l, int threads, double ms);
/* The per-core peak (GFLOP/s or int8 GOP/s) a measurement is held to: the fp32 FMA peak for f32
   and f16 (f16 products are summed in fp32), for u8/s8 the int8 multiply-add peak of its
   kernel's instruction (peak.h) when probed; 0 when unknown. */
double bench_peak_of(const bench_run *r, const bench_measure *m);
/* The measurement's speed in percent of threads x bench_peak_of; 0 when the peak is unknown. */
double bench_peak_pct_of(const bench_run *r, const bench_layer *l, int threads, const bench_measure *m);

/* Model time of one slot (or of the best explicit algorithm: slot -1) over the layers of
   `model` (NULL: all), sum of ms x repeats; missing counts layers without a valid time. */
typedef struct bench_total {
  double ms, flops;                /* flops: 2 x MACs x repeats of the layers counted */
  int counted, missing;
  double peak_ms;                  /* the time of the layers counted at each one's peak (bench_peak_of) */
} bench_total;
bench_total bench_total_of(const bench_run *r, const bench_suite *s, const char *model, int ti, int slot);

/* Layers where AUTO is within 10% of the best explicit algorithm, out of `of` comparable. */
void bench_auto_share(const bench_run *r, const bench_suite *s, const char *model, int ti, int *within, int *of);

#endif
