/* peer_xnnpack.h - XNNPACK (Debian's libxnnpack-dev, its C operator API) timed on the same
 * layer, data and policy as libdlconv.
 *
 * XNNPACK computes NHWC only: x is given to it in NHWC (transposed outside the timing when the
 * bench runs NCHW), weights in its [c_out][k_h][k_w][c_in/groups] order are packed when the
 * operator is created, and the shape is set up once; timed: xnn_run_operator alone. Grouped and
 * depthwise layers use its groups; dense layers its fully connected operator.
 *   f32: convolution2d_nhwc_f32 / fully_connected_nc_f32
 *   u8:  ..._qu8 (weights shifted to u8 with kernel zero point 128), s8: ..._qs8; per-tensor
 *        scales as the bench gives them. XNNPACK requantises its own way: an error over the
 *        bench's tolerance is reported and held to 4 output units only.
 *   f16: ..._f16 where this XNNPACK has f16 kernels for the CPU, else skipped; it sums in f16,
 *        so its error is held to 5% of the largest output instead of the bench's tolerance.
 * Threads: a pthreadpool of N threads (pinned one per CPU), none for 1 thread. Built only when
 * meson finds XNNPACK (peer_xnnpack_none.c otherwise). */
#ifndef DLCB_PEER_XNNPACK_H
#define DLCB_PEER_XNNPACK_H

#include <stddef.h>

#include "data.h"
#include "layer.h"
#include "measure.h"
#include "options.h"
#include "timer.h"

/* 1 and a one-line description when XNNPACK can run here, else 0 and why. */
int bench_xnnpack_available(char *desc, size_t len);
void bench_xnnpack_run(const bench_layer *l, const bench_data *d, int threads, const bench_options *o,
                       const bench_timing *t, bench_measure *m);
void bench_xnnpack_shutdown(void);

#endif
