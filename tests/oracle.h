/* Naive double-precision reference for conv2d and dense layers.
 *
 * Written from the contract (docs/api.md) only and shares no code with src/: the test
 * suite's ground truth. Loops are the textbook definition; speed only matters enough to keep
 * the sweep fast. */
#ifndef DLCONV_TEST_ORACLE_H
#define DLCONV_TEST_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "dlconv.h"

/* h_out / w_out from the formula in dlconv.h, in 64-bit; < 1 means "no output". */
int64_t oracle_out_dim(int64_t in, int64_t pad_a, int64_t pad_b, int64_t k, int64_t dil, int64_t stride);

/* y[n_out] and abs_sum[n_out] (either may be NULL) in d->layout. w is OIHW, bias c_out or NULL.
 * abs_sum holds sum |x*w| + |b| per output point (the scale of the rounding error).
 * Clamp as the contract says: NaN stays NaN, else min(max(v, out_min), out_max). */
void oracle_conv2d(const dlconv_conv2d_desc *d, const float *x, const float *w, const float *bias,
                   double *y, double *abs_sum);

/* y[b][o] = clamp(sum_i x[b][i] * w[o][i] + bias[o]); w is out x in, row-major. */
void oracle_dense(int32_t batch, int32_t in_f, int32_t out_f, const float *x, const float *w,
                  const float *bias, float out_min, float out_max, double *y, double *abs_sum);

/* The clamp, NaN-preserving. */
double oracle_clamp(double v, double lo, double hi);

#endif
