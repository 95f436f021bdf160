/* layer.h - a layer as the kernel tests' driver-level cases list it, and the options that force a
 * plan onto one algorithm and ISA. Public header only. */
#ifndef DLC_TESTS_SUPPORT_LAYER_H
#define DLC_TESTS_SUPPORT_LAYER_H

#include <stddef.h>

#include "dlconv.h"

/* Batch, channels in, image, channels out, kernel, strides, dilations, pads (top, bottom, left,
   right) and groups, in dlconv_conv2d_desc's order. */
typedef struct layer_shape {
  int n, c_in, h, w, c_out, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, groups;
} layer_shape;

/* The element counts of a valid layer's x, w and y, and its K (the terms of one output). */
typedef struct layer_sizes {
  size_t x, w, y, k;
} layer_sizes;
layer_sizes layer_sizes_of(const dlconv_conv2d_desc *d);

/* The descriptor of s in layout, clamped to [lo, hi], into *d; returns its sizes. */
layer_sizes layer_desc(dlconv_conv2d_desc *d, const layer_shape *s, dlconv_layout layout, float lo, float hi);

/* Options that force algo on isa with threads (0: the library's choice). */
dlconv_options forced_options(dlconv_algo algo, dlconv_isa isa, int threads);

#endif
