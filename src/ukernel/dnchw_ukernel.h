/* dnchw_ukernel.h - the micro-kernel interface of the fp32 NCHW direct convolution with pixels in
 * the lanes (src/direct/direct_nchw.c), for stride 1 and dilation 1.
 *
 * The driver copies each input plane into a zero-padded plane of rows x_row floats apart (a
 * memcpy per row, no transpose), where output pixel (oy, ox) at tap (0, 0) reads flat position
 * q = oy * x_row + ox and tap (ky, kx) adds ky * x_row + kx. Output pixels in flat order are the
 * lanes: a vector is VL consecutive flat positions, the lanes of columns ox >= w_out computed on
 * whatever lies there and never stored. Accumulators: mr output channels x nv such vectors;
 * each reduction step (input channel, tap) loads nv input vectors and broadcasts mr weights. The
 * result goes straight to the NCHW output planes through lane-masked stores (segments). */
#ifndef DLC_DNCHW_UKERNEL_H
#define DLC_DNCHW_UKERNEL_H

#include <stddef.h>
#include <stdint.h>

/* The most row pieces one vector of lanes stores (a vector spanning several short rows). */
#define DLC_DNCHW_MAX_SEGS 4

/* One vector of a tile: flat positions [x_off, x_off + vl) of the padded plane; its lanes
   [lo[s], hi[s]) go to y + y_off[s] + (lane - lo[s]) of every output channel plane. */
typedef struct dlc_dnchw_vec {
  int32_t x_off;
  int32_t nseg;
  int32_t y_off[DLC_DNCHW_MAX_SEGS];
  int8_t lo[DLC_DNCHW_MAX_SEGS], hi[DLC_DNCHW_MAX_SEGS];
} dlc_dnchw_vec;

/* y[m][vector lanes] = clamp(bias[m] + sum over ic < n_ci, taps t < ntaps of
     w[(ic * ntaps + t) * mr + m] * x[ic * x_c + tap[t] + vecs[v].x_off + lane])  for m < mr. */
typedef struct dlc_f32_dnchw_args {
  const float *x;            /* the padded planes of the group's first input channel */
  ptrdiff_t x_c;             /* between input channel planes */
  size_t n_ci;
  const int32_t *tap;        /* ntaps flat offsets, ky * x_row + kx */
  size_t ntaps;
  /* 3: the taps are rows of 3, tap[t] = (t / 3) * x_row + t % 3, which the kernel may compute
     itself (constant displacements); 0: read tap[] */
  size_t kw;
  ptrdiff_t x_row;
  const float *w;            /* packed [ic][t][mr] */
  const float *bias;         /* mr values */
  float *y;                  /* the plane of the tile's first output channel */
  ptrdiff_t y_c;             /* between output channel planes */
  const dlc_dnchw_vec *vecs; /* nv vectors */
  float out_min, out_max;
} dlc_f32_dnchw_args;

typedef void (*dlc_f32_dnchw_fn)(const dlc_f32_dnchw_args *a);

/* One padded plane: dst[0, x_c) = 0 but dst[(pt + iy) * x_row + pl + ix] = x[iy * w + ix] for
   iy < h, ix < w (pl + w <= x_row). dst is vector-aligned, x_c a multiple of the vector length. */
typedef void (*dlc_f32_dnchw_pad_fn)(const float *x, size_t h, size_t w, size_t pt, size_t pl, size_t x_row,
                                     size_t x_c, float *dst);

#define DLC_DNCHW_MAX_NV 5

typedef struct dlc_f32_dnchw_family {
  const char *name;          /* e.g. "f32_dnchw__avx512" */
  size_t vl;                 /* pixels per vector */
  size_t max_nv;             /* <= DLC_DNCHW_MAX_NV */
  size_t max_mr[DLC_DNCHW_MAX_NV]; /* the most output channels of a tile of nv = index + 1 vectors */
  dlc_f32_dnchw_fn (*kernel)(size_t nv, size_t mr); /* 1 <= nv <= max_nv, 1 <= mr <= max_mr[nv-1] */
  dlc_f32_dnchw_pad_fn pad;
} dlc_f32_dnchw_family;

#endif
