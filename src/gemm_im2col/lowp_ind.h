/* lowp_ind.h - indirection pointers for the int8 NHWC kernels that read x in place (the q8_igemm
 * family, src/gemm_im2col/igemm_q8.c; the NHWC depthwise kernel, src/direct/direct_lowp.c).
 *
 * In NHWC a pixel's channels are one run of bytes, so a kernel can read a window tap by tap
 * through one pointer per (tap, output pixel): into x for taps inside the image, at a row of the
 * zero point's byte for padding taps (whose products the zero point's correction in the bias
 * cancels). A tile's pointers are tap-major, mr apart: ind[t * mr + i] for pixel q0 + i of the
 * n x h_out x w_out output pixels in order (a tile may span output rows and images).
 *
 * Row mode (first layers of a few channels, groups 1, dilation_w 1): a tap is a kernel row, the
 * k_w * c_in bytes of the window's row; where that run crosses the image's left or right border,
 * or a kernel reading `need` bytes would pass the end of x, it is copied into the caller's scratch
 * with the zero point's byte around it. */
#ifndef DLC_LOWP_IND_H
#define DLC_LOWP_IND_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../core/plan.h"

#define DLC_IND_MAX_TAPS 64       /* a tile's pointers live on the caller's stack */
#define DLC_IND_ROW_MAX_BYTES 64  /* row mode: k_w * c_in at most */
#define DLC_IND_ROW_MAX_TAPS 16   /* row mode: k_h at most */
/* bytes of scratch a caller of dlc_nhwc_ind_build provides (row mode's copied runs) */
#define DLC_IND_SCRATCH_BYTES (16 * DLC_IND_ROW_MAX_TAPS * DLC_IND_ROW_MAX_BYTES)

typedef struct dlc_nhwc_ind {
  int rows;                       /* row mode */
  size_t ntaps, mr;               /* pointers per pixel; the tile's row stride (<= 16) */
  size_t cin;                     /* channels per group: group g starts g * cin bytes into a pixel */
  size_t need;                    /* bytes a kernel reads at a pointer */
  ptrdiff_t toff[DLC_IND_MAX_TAPS]; /* a tap's bytes past its window's origin, inside the image */
  uint8_t *zrow;                  /* need bytes (rounded up to 64) of the zero point's byte */
  uint8_t zp;
} dlc_nhwc_ind;

/* Whether row mode can take layer s (and a plain window needs it: c_in per group not a multiple of 4). */
int dlc_nhwc_ind_row_mode(const dlc_conv_shape *s);
/* Fills v for plan p's shape; only running out of memory fails. */
dlconv_status dlc_nhwc_ind_init(dlc_nhwc_ind *v, const dlconv_plan *p, int rows, size_t need, size_t mr);
void dlc_nhwc_ind_free(dlc_nhwc_ind *v);
/* The pointers of output pixels [q0, q0 + m) of group g (m <= mr); scratch holds
   DLC_IND_SCRATCH_BYTES. */
void dlc_nhwc_ind_build(const dlc_nhwc_ind *v, const dlc_conv_shape *s, const uint8_t *x, size_t g, size_t q0,
                        size_t m, const uint8_t **ind, uint8_t *scratch);
/* Taps per kernel row: k_w, or 1 in row mode (a tap is a kernel row). */
static inline size_t dlc_nhwc_ind_taps_per_row(const dlc_nhwc_ind *v, const dlc_conv_shape *s) {
  return v->rows ? 1 : (size_t)s->k_w;
}
/* The kernel rows [*ky0, *ky1) that read inside the image for output row oy (none: *ky0 == *ky1). */
void dlc_nhwc_ind_row_taps(const dlc_conv_shape *s, size_t oy, size_t *ky0, size_t *ky1);
/* The pointers of m output pixels (m <= mr) of one output row (image img, row oy, columns ox0 on)
   of group g for the taps of kernel rows [ky0, ky1) only, from dlc_nhwc_ind_row_taps: the first
   of them at ind[0 * mr + i] (a caller that skips the rows wholly in the padding). scratch as
   for dlc_nhwc_ind_build. */
void dlc_nhwc_ind_build_row(const dlc_nhwc_ind *v, const dlc_conv_shape *s, const uint8_t *x, size_t g, size_t img,
                            size_t oy, size_t ox0, size_t m, size_t ky0, size_t ky1, const uint8_t **ind,
                            uint8_t *scratch);

/* Where the m pixels' windows are evenly spaced in x, for a kernel whose tile rows step by one
   spacing (the q8_igemm family's ukernel_s): a pointer per tap for the tile's first pixel to tap
   (taps of kernel rows [ky0, ky1) only, as dlc_nhwc_ind_build_row) and the spacing to *pstep,
   returning 1; 0 where some tap of some pixel is padding or (row mode) would be copied, nothing
   written. One output row (image img, row oy, columns ox0 on). */
int dlc_nhwc_ind_strided_row(const dlc_nhwc_ind *v, const dlc_conv_shape *s, const uint8_t *x, size_t g,
                             size_t img, size_t oy, size_t ox0, size_t m, size_t ky0, size_t ky1,
                             const uint8_t **tap, ptrdiff_t *pstep);
/* Whether a layer's output pixel q reads input pixel q alone: 1 x 1, stride 1, no padding, not row
   mode (all its pixels' channels follow each other in x, across rows and images). */
int dlc_nhwc_ind_flat(const dlc_nhwc_ind *v, const dlc_conv_shape *s);
/* The same for output pixels [q0, q0 + m) in order, all kernel rows: a flat layer's, or pixels
   in one output row. */
int dlc_nhwc_ind_strided(const dlc_nhwc_ind *v, const dlc_conv_shape *s, const uint8_t *x, size_t g, size_t q0,
                         size_t m, const uint8_t **tap, ptrdiff_t *pstep);

/* One input row of an NHWC layer copied padded with the zero-point byte zp: pl pixels of padding,
   nin pixels of src (c bytes each), pr pixels of padding; src NULL (a row outside the image) or
   nin 0 gives a row of padding alone. Both padded-row paths (int8 depthwise bands, the indirect
   GEMM's row mode) build their rows with it. */
static inline void dlc_ind_pad_row(uint8_t *dst, const uint8_t *src, size_t pl, size_t nin, size_t pr, size_t c,
                                   uint8_t zp) {
  if (!src || !nin) {
    memset(dst, zp, (pl + nin + pr) * c);
    return;
  }
  memset(dst, zp, pl * c);
  memcpy(dst + pl * c, src, nin * c);
  memset(dst + (pl + nin) * c, zp, pr * c);
}

#endif
