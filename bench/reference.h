/* reference.h - checking an output against a naive double-precision convolution.
 *
 * Every output point of a small layer (<= 20 M MACs) is checked, else a seeded sample of 3000
 * points that always includes the corners of the first and last channel, where padding
 * matters. fp error = max |y - ref| / max |ref| over the points (NaN counts as infinite);
 * the tolerance follows the API contract: 1e-4 for f32 (f16: 2e-3, its storage precision),
 * growing with sqrt of the reduction length beyond 256 terms. int8: the QLinearConv formula
 * evaluated in double, at most 1 unit apart (a multiplier rounded to float may move a tie). */
#ifndef DLCB_REFERENCE_H
#define DLCB_REFERENCE_H

#include "data.h"
#include "layer.h"

typedef struct bench_check {
  double err, tol;
  long points;
  int ok;
} bench_check;

/* y: the output in `layout` and d->dtype. quick: fewer points. */
void bench_check_output(const bench_layer *l, const bench_data *d, const void *y, dlconv_layout layout, int quick,
                        bench_check *c);

#endif
