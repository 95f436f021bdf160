/* peer_onednn.h - oneDNN (2.x C API) timed on the same layer, data and policy as libdlconv.
 *
 * Two measurements per layer, fp32 forward inference (convolution_auto; inner product for
 * dense layers), oneDNN threads = omp_set_num_threads(N):
 *   blocked: src, weights and dst in the layouts oneDNN prefers (format_tag any); weights and
 *            input reordered once outside the timing; timed: the primitive alone.
 *   user:    fed the user's NCHW (or NHWC) data and OIHW weights; timed: input reorder +
 *            primitive + output reorder (a reorder is left out when the layouts already agree):
 *            what a caller holding plain tensors pays. Weights are still reordered once.
 * Built only when meson finds oneDNN (peer_none.c otherwise). */
#ifndef DLCB_PEER_ONEDNN_H
#define DLCB_PEER_ONEDNN_H

#include <stddef.h>

#include "data.h"
#include "layer.h"
#include "measure.h"
#include "options.h"
#include "timer.h"

/* 1 and a one-line description of the library when oneDNN can run here, else 0 and why. */
int bench_onednn_available(char *desc, size_t len);
void bench_onednn_run(const bench_layer *l, const bench_data *d, int threads, const bench_options *o,
                      const bench_timing *t, bench_measure *blocked, bench_measure *user);
void bench_onednn_shutdown(void);

#endif
