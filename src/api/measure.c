/* DLCONV_PLAN_MEASURE: plan each candidate, run it on scratch data, keep the fastest. */
#include "measure.h"

#include <math.h>

#include "../core/clock.h"
#include "../core/util.h"
#include "impl_list.h"
#include "names.h"
#include "validate.h"
#include "wisdom.h"

/* Median-free quick timing: best of a few executes on scratch data. */
static double time_execute(const dlconv_plan *p) {
  size_t xb = dlc_x_elems(&p->s) * 4, yb = dlc_y_elems(&p->s) * 4;
  float *x = dlc_malloc(xb), *y = dlc_malloc(yb);
  void *ws = p->workspace_bytes ? dlc_malloc(p->workspace_bytes) : NULL;
  double best = INFINITY;
  if (x && y && (ws || !p->workspace_bytes)) {
    for (size_t i = 0; i < xb / 4; i++) x[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
    dlc_plan_run(p, x, y, ws);
    for (int r = 0; r < 3; r++) {
      double t0 = dlc_now_s();
      dlc_plan_run(p, x, y, ws);
      double t = dlc_now_s() - t0;
      if (t < best) best = t;
    }
  }
  dlc_free(x);
  dlc_free(y);
  dlc_free(ws);
  return best;
}

dlconv_status dlc_measure(dlconv_plan *p, const dlconv_algo *algos, int n, dlconv_isa isa, dlc_weights *w) {
  dlconv_algo best = DLCONV_ALGO_AUTO;
  double best_t = INFINITY;
  for (int i = 0; i < n; i++) {
    dlconv_status st = dlc_impl_plan(p, algos[i], isa, w);
    if (st == DLCONV_ERR_UNSUPPORTED) continue;
    if (st != DLCONV_OK) return st;
    double t = time_execute(p);
    dlc_impl_release(p);
    if (t < best_t) { best_t = t; best = algos[i]; }
  }
  if (best == DLCONV_ALGO_AUTO) return dlc_fail(DLCONV_ERR_UNSUPPORTED, "no algorithm accepts this shape on %s", dlc_isa_name(isa));
  char key[256];
  dlc_wisdom_key(p, key, sizeof key);
  dlc_wisdom_remember(key, best);
  return dlc_impl_plan(p, best, isa, w);
}
