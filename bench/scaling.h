/* scaling.h - the G(g) scaling table: a family of grouped models against its standard model. */
#ifndef DLCB_SCALING_H
#define DLCB_SCALING_H

#include <stdio.h>

#include "results.h"

/* For each family of the run (a model named <prefix>g1, the standard model S, and models named
   <prefix>g<k> or <prefix>gN), per thread count: each model's time over S's, the ideal (the
   ratio of their MACs) and measured / ideal, for ours, each oneDNN slot and XNNPACK. Nothing when the run
   has no such family. */
void bench_table_scaling(FILE *f, const bench_run *r);

#endif
