/* direct_ukernel.h - the micro-kernel interface of the direct algorithm.
 *
 * One dlc_f32_direct_family per ISA (dlc_f32_direct__generic in src/arch/generic/, __avx2, __avx512,
 * ...): function pointers plus the register-block shapes the driver blocks its loops by.
 * The driver receives it through the kernel table (ukernel/config.h) and never includes arch code.
 *
 * Three kernels, all reading the caller's x in place through strides (no copy of the input):
 *
 * conv (any group with cin_g > 1, or any shape at all): a register tile of nw consecutive output
 *   pixels of one output row x nv vectors of vl output channels. Innermost step: a vector FMA of
 *   the vl packed weights of one (ky, kx, ic) with x[ic] of one pixel broadcast. The tap range
 *   [ky0,ky1) x [kx0,kx1) (as loop counts and strides) is given by the driver and must be valid
 *   (inside x) for every pixel of the tile, so the kernel has no bounds checks; the driver covers
 *   padded borders with several calls over sub-rectangles of (pixels x taps) that accumulate
 *   through a small tile buffer.
 *
 * dwc (depthwise, NHWC): the same tile (pixels x channel vectors) but each output channel reads only
 *   its own input channel oc / multiplier: one x vector load per (tap, pixel, vector), permuted when
 *   the channel multiplier is > 1.
 *
 * dwp (depthwise, NCHW): vectorised over output pixels of a row, for one channel and a few rows;
 *   the kernel clips taps itself (per-tap lane masks and row checks), so the driver only tiles. */
#ifndef DLC_DIRECT_UKERNEL_H
#define DLC_DIRECT_UKERNEL_H

#include <stddef.h>
#include <stdint.h>

/* Arguments of conv and dwc, in floats unless said otherwise. */
typedef struct dlc_f32_direct_args {
  /* The reduction: three nested loops (outer, middle, inner) over the taps ky, kx and (conv) the
     input channels ic, in the order the driver picks for the layout (NHWC: ky, kx, ic; NCHW: ic,
     ky, kx), merged where contiguous. Loop i runs n[i] times (any n may be 1; a 0 means no term:
     the tile is just init -> store) and steps x by x_s[i], the weights by w_s[i]. */
  size_t n[3];
  ptrdiff_t x_s[3], w_s[3];
  /* x at (first input channel, first tap) of the tile's first pixel (never read when a count is 0). */
  const float *x;
  ptrdiff_t x_pix;            /* between consecutive output pixels of the tile (stride_w * pixel stride) */
  /* Packed weights of the tile's first vector at (first tap, ic 0): vl values per step. */
  const float *w;
  ptrdiff_t w_v;              /* between the weights of the tile's channel vectors */
  /* Output channels of the tile: nc valid ones (1 <= nc <= nv*vl); lanes beyond nc are computed
     on zero-padded weights and never stored to y. */
  size_t nc;
  const float *bias;          /* nc values, read only when acc_in is NULL */
  /* Start: acc_in ? acc_in[p*acc_ld + lane] : bias. End: acc_out ? raw acc_out[p*acc_ld + lane]
     (all nv*vl lanes) : clamp(acc) into y[p*y_pix + c*y_c] for c < nc. acc_in may equal acc_out. */
  const float *acc_in;
  float *acc_out;
  ptrdiff_t acc_ld;
  float *y;
  ptrdiff_t y_pix, y_c;       /* NHWC: (c_out, 1); NCHW: (1, h_out*w_out) */
  float out_min, out_max;
  /* conv of a family with f16_out: when yh is not NULL the clamped tile is rounded to binary16
     (nearest even, as dlc_f32_to_f16) into yh, with the same strides in halves, and y is unused. */
  uint16_t *yh;
  /* dwc only (its loops run over taps; channels are contiguous in x), per channel vector v: its input
     channels start at x + x_v[v] and are n_in[v] long (masked load); lane l takes input channel
     perm[v*vl + l] of them. perm is NULL when the channel multiplier is 1 (lane l is channel l);
     then x_v[v] is v*vl, which the kernels may take as given. */
  ptrdiff_t x_v[2];
  int32_t n_in[2];
  const int32_t *perm;
} dlc_f32_direct_args;

/* nw >= 1 consecutive output pixels (pixel p at x + p*x_pix, y + p*y_pix, acc + p*acc_ld): the
   kernel covers them with balanced register tiles of at most the family's tile width for this nv,
   so the driver can hand it a whole interior run of a row in one call. */
typedef void (*dlc_f32_direct_fn)(size_t nw, const dlc_f32_direct_args *a);

/* The arguments of the sub-run starting p0 pixels into a's run (for kernels splitting nw into
   register tiles). x is only moved when it is read (counts > 0), so it never leaves the input. */
static inline void dlc_f32_direct_args_at(const dlc_f32_direct_args *a, size_t p0, dlc_f32_direct_args *t) {
  *t = *a;
  const ptrdiff_t p = (ptrdiff_t)p0;
  if (a->n[0] && a->n[1] && a->n[2]) t->x = a->x + p * a->x_pix;
  if (a->acc_in) t->acc_in = a->acc_in + p * a->acc_ld;
  if (a->acc_out) t->acc_out = a->acc_out + p * a->acc_ld;
  else if (a->yh) t->yh = a->yh + p * a->y_pix;
  else t->y = a->y + p * a->y_pix;
}

/* Calls tile(n, args) over nw pixels in ceil(nw/tw) register tiles whose sizes differ by <= 1. */
static inline void dlc_f32_direct_split(size_t nw, size_t tw, const dlc_f32_direct_args *a,
                                        void (*tile)(size_t, const dlc_f32_direct_args *)) {
  if (nw <= tw) {
    tile(nw, a);
    return;
  }
  const size_t nt = (nw + tw - 1) / tw;
  dlc_f32_direct_args t;
  for (size_t i = 0, p0 = 0; i < nt; i++) {
    const size_t n = nw / nt + (i < nw % nt ? 1 : 0);
    dlc_f32_direct_args_at(a, p0, &t);
    tile(n, &t);
    p0 += n;
  }
}

/* Arguments of dwp: nr output rows x nw output pixels of one channel. */
typedef struct dlc_f32_dwp_args {
  const float *x;             /* the input plane of the channel (h_in x w_in, rows contiguous) */
  ptrdiff_t h_in, w_in;
  ptrdiff_t iy0, ix0;         /* input coordinates of tap (0,0) of the tile's first pixel (may be < 0) */
  ptrdiff_t sh, sw, dh, dw;   /* stride, dilation */
  ptrdiff_t kh, kw;
  const float *w;             /* kh*kw weights of the channel */
  float bias;
  float *y;                   /* the tile's first output pixel */
  ptrdiff_t y_row;            /* between output rows */
  size_t nr;                  /* 1 <= nr <= dwp_rows[npv-1], npv = vectors of the row, ceil(nw/vl) */
  float out_min, out_max;
  const uint16_t *xh;         /* dwp_f16: x and y as binary16 instead of x and y */
  uint16_t *yh;
} dlc_f32_dwp_args;

/* 1 <= nw <= dwp_vecs*vl. */
typedef void (*dlc_f32_dwp_fn)(size_t nw, const dlc_f32_dwp_args *a);

#define DLC_DIRECT_MAX_DWP_VECS 8

/* Arguments of dwf: depthwise NCHW at stride 1, channel multiplier 1, a k x k kernel padded
   (k - 1) / 2 on every side (planes keep their h x w size), over nc whole channels:
     y[c][oy][ox] = clamp(bias[c] + sum over taps of w[c][ky][kx] * x[c][oy + ky - p][ox + kx - p],
                          out_min, out_max), p = (k - 1) / 2, x zero outside its plane.
   Channel c's planes are x + c * h * w and y + c * h * w; writes nothing else. */
typedef struct dlc_f32_dwf_args {
  const float *x;
  const float *w;             /* nc x k x k */
  const float *bias;          /* nc */
  float *y;
  size_t nc;
  float out_min, out_max;
} dlc_f32_dwf_args;

typedef void (*dlc_f32_dwf_fn)(const dlc_f32_dwf_args *a);

/* One input row to channel-last (the NCHW conv reads x transposed, see direct.c):
     dst[ix * ci + ic] = src[ic * plane + ix]      for ix < w, ic < ci.
   Reads and writes nothing else. */
typedef void (*dlc_f32_direct_to_channel_last_fn)(const float *src, size_t plane, size_t w, size_t ci, float *dst);

/* The same from binary16, widened: dst[ix * ci + ic] = f32(src[ic * plane + ix]) (the F16 conv
   runs the fp32 conv kernels on a band of x widened this way, see direct.c). */
typedef void (*dlc_f16_direct_to_channel_last_fn)(const uint16_t *src, size_t plane, size_t w, size_t ci, float *dst);

/* Channel-last pixels back to NCHW planes (the NCHW conv's output staged channel-last, see direct.c):
     dst[ic * plane + ix] = src[ix * ld + ic]      for ix < w, ic < ci.
   Reads and writes nothing else. */
typedef void (*dlc_f32_direct_to_channel_first_fn)(const float *src, size_t ld, size_t w, size_t ci, float *dst,
                                                   size_t plane);

typedef struct dlc_f32_direct_family {
  const char *name;           /* conv kernel and tile, e.g. "f32_direct_14x32__avx512" */
  const char *dw_name;        /* depthwise kernels, e.g. "f32_dwconv_..__avx512" */
  size_t vl;                  /* output channels (dwp: pixels) per vector; weights packed in blocks of vl */
  size_t conv_tw[2];          /* conv: pixels of a register tile with 1, 2 channel vectors */
  dlc_f32_direct_fn conv[2];  /* conv[nv-1] */
  size_t dwc_tw[2];           /* dwc: pixels of a register tile with 1, 2 channel vectors */
  dlc_f32_direct_fn dwc[2];
  size_t dwp_vecs;            /* dwp: max pixel vectors per row (<= DLC_DIRECT_MAX_DWP_VECS) */
  size_t dwp_rows[DLC_DIRECT_MAX_DWP_VECS];  /* dwp: max rows of a tile with npv = index+1 vectors */
  dlc_f32_dwp_fn dwp;
  /* Optional: dwp on binary16 x and y (xh, yh), widened and rounded in registers (F16 depthwise
     layers without a pass over the plane each way), stride_w 1 or 2 only; rounds to nearest
     even like the F16 stores. */
  dlc_f32_dwp_fn dwp_f16;
  /* dwp_f16's rows per tile (0: dwp_rows'): taller tiles widen each input vector for more output
     rows, where the fp32 kernel's loads cost nothing to repeat */
  size_t dwp_rows_f16[DLC_DIRECT_MAX_DWP_VECS];
  dlc_f32_direct_to_channel_last_fn to_channel_last;   /* NULL: the driver's scalar loop */
  int f16_out;                /* the conv kernels honour yh (binary16 output): F16 layers may run them */
  dlc_f16_direct_to_channel_last_fn to_channel_last_f16; /* NULL: the driver's scalar loop */
  dlc_f32_direct_to_channel_first_fn to_channel_first;    /* NULL: the driver's scalar loop */
  /* Optional: the dwf kernel for h x w planes and a k x k kernel, NULL where the family has none
     for that shape (a kernel per plane size: its shifts are constants). */
  dlc_f32_dwf_fn (*dwf)(size_t h, size_t w, size_t k);
  const char *dwf_name;       /* the dwf kernels, e.g. "f32_dwconv_flat_16p__avx512" */
} dlc_f32_direct_family;

#endif
