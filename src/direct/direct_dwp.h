/* direct_dwp.h - the NCHW depthwise fp32 path of direct.c (the family's dwp kernel over a plane),
 * shared with the F16 / int8 depthwise driver (direct_lowp.c), which widens a plane to fp32 and
 * runs it through the same register-tiled kernel. */
#ifndef DLC_DIRECT_DWP_H
#define DLC_DIRECT_DWP_H

#include <stddef.h>
#include <stdint.h>

#include "../core/plan.h"

/* Row groups of an output plane (the unit of work of the dwp kernel calls). */
size_t dlc_direct_dwp_row_groups(const dlconv_plan *p);

/* Output rows of row groups [rg_begin, rg_end) of one channel of the plan's shape:
     y[oy][ox] = clamp(bias + sum over taps of w[ky][kx] * x[iy][ix], out_min, out_max)
   x: the channel's input plane (h_in x w_in), w: its k_h x k_w weights, y: its output plane
   (h_out x w_out). Needs p->kernels->direct->dwp. */
void dlc_direct_dwp_run(const dlconv_plan *p, const float *x, const float *w, float bias, float out_min,
                        float out_max, float *y, size_t rg_begin, size_t rg_end);

/* The same on binary16 planes x and y (fp32 weights and arithmetic, y rounded to nearest even),
   through the family's dwp_f16: needs p->kernels->direct->dwp_f16 and stride_w 1 or 2. */
void dlc_direct_dwp_run_f16(const dlconv_plan *p, const uint16_t *x, const float *w, float bias, float out_min,
                            float out_max, uint16_t *y, size_t rg_begin, size_t rg_end);

#endif
