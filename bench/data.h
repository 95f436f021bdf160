/* data.h - deterministic test data for one layer, in the dtype and layout the library is asked
 * to run, and the same values as floats for the reference.
 *
 * The reference's view (x_ref NCHW, w_ref OIHW, b_ref) holds exactly what the library gets:
 * f16 values already rounded to f16; for int8 the integers x - x_zero_point, w and the s32
 * bias, so the double reference sums them exactly. Seeded per layer, so every implementation,
 * thread count and peer sees identical data. */
#ifndef DLCB_DATA_H
#define DLCB_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "dlconv.h"
#include "layer.h"

typedef struct bench_data {
  dlconv_dtype dtype;
  dlconv_layout layout;            /* of x (and of y) */
  float *x_ref, *w_ref, *b_ref;    /* b_ref NULL when the layer has no bias */
  void *x, *w, *b;                 /* the library's inputs (may alias the _ref arrays for f32) */
  size_t y_bytes;
  dlconv_quant quant;              /* U8/S8 only (quant.w_scales points at w_scale) */
  float w_scale;
  double density;                  /* nonzero weights / weights */
} bench_data;

/* 0, or -1 when memory is short (d is then empty). sparsity: fraction of weights zeroed. */
int bench_data_make(bench_data *d, const bench_layer *l, dlconv_dtype dtype, dlconv_layout layout,
                    double sparsity, uint64_t seed);
void bench_data_free(bench_data *d);

size_t bench_dtype_size(dlconv_dtype t);
void *bench_alloc(size_t bytes);   /* 64-byte aligned (what a workspace needs); free() it */

/* Flat index of element (n, c, h, w) of a tensor of c x h x w per image in a layout. */
static inline size_t bench_index(dlconv_layout lay, int c_all, int h_all, int w_all, int n, int c, int h, int w) {
  return lay == DLCONV_NHWC ? (((size_t)n * h_all + h) * w_all + w) * c_all + c
                            : (((size_t)n * c_all + c) * h_all + h) * w_all + w;
}

#endif
