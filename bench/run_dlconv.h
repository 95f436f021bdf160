/* run_dlconv.h - one libdlconv measurement through the public API: plan (timed apart), warm up,
 * time dlconv_execute with a caller-owned workspace, check the output. */
#ifndef DLCB_RUN_DLCONV_H
#define DLCB_RUN_DLCONV_H

#include "data.h"
#include "layer.h"
#include "measure.h"
#include "options.h"
#include "timer.h"

/* Plans layer l on data d (conv2d, or dense when l is dense) with opt; dlconv's status. */
dlconv_status bench_make_plan(dlconv_plan **p, const bench_layer *l, const bench_data *d, const dlconv_options *opt);

void bench_run_dlconv(const bench_layer *l, const bench_data *d, dlconv_algo algo, int threads,
                      const bench_options *o, const bench_timing *t, bench_measure *m);

#endif
