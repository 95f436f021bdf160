/* gemv_rows.h - what the two dense paths of few rows (gemv_f16.c, gemv_q8d4.c) share: the layers
 * they take, the output channels cut into panels of mr, the panels split over the tasks, and a
 * task's workspace slice (its copy of x, converted once, then n x mr 32-bit accumulators).
 * The weights' panel layout, the conversion of x and the kernels are each dtype's own. */
#ifndef DLC_GEMV_ROWS_H
#define DLC_GEMV_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "../core/plan.h"
#include "../core/threading.h"
#include "../core/util.h"

/* Beyond this many rows the GEMM's register tile pays for its packing (F16) and for reading x
   as pairs (int8). */
#define DLC_GEMV_MAX_ROWS 8

/* A dense layer (a 1x1 NHWC convolution on 1x1 pixels, one group) of at most DLC_GEMV_MAX_ROWS rows. */
static inline int dlc_gemv_takes(const dlc_conv_shape *s) {
  return s->layout == DLCONV_NHWC && s->groups == 1 && s->h_in == 1 && s->w_in == 1 && s->k_h == 1 &&
         s->k_w == 1 && s->h_out == 1 && s->w_out == 1 && s->n <= DLC_GEMV_MAX_ROWS;
}

typedef struct dlc_gemv_split {
  size_t mr, panels, ntasks;   /* output channels per panel, panels, tasks */
  size_t x_bytes, slice;       /* a task's copy of x, and its whole slice (accumulators after x) */
} dlc_gemv_split;

/* The split of p's output channels into panels of mr, for x rows of x_row_bytes once converted. */
static inline dlc_gemv_split dlc_gemv_split_of(const dlconv_plan *p, size_t mr, size_t x_row_bytes) {
  dlc_gemv_split g;
  g.mr = mr;
  g.panels = dlc_div_up((size_t)p->s.c_out, mr);
  g.ntasks = DLC_MIN((size_t)p->nthreads, g.panels);
  g.x_bytes = dlc_round_up((size_t)p->s.n * x_row_bytes, DLC_ALIGN);
  g.slice = g.x_bytes + dlc_round_up((size_t)p->s.n * mr * sizeof(int32_t), DLC_ALIGN);
  return g;
}

/* Task t's part of the workspace ws (its x copy and its accumulators) and its panels [*begin, *end). */
static inline void dlc_gemv_task_part(const dlc_gemv_split *g, char *ws, size_t t, void **x, void **acc,
                                      size_t *begin, size_t *end) {
  *x = ws + t * g->slice;
  *acc = ws + t * g->slice + g->x_bytes;
  dlc_split_range(g->panels, g->ntasks, t, begin, end);
}

#endif
