/* gspc_geom.h - the geometry both GSPC drivers (gspc.c for fp32, gspc_lowp.c for F16 / int8)
 * share: where the packed input's taps, stride phases and lanes are. Element counts are in the
 * packed input's elements (floats, or s16 pairs), so the same arithmetic serves both. */
#ifndef DLC_GSPC_GEOM_H
#define DLC_GSPC_GEOM_H

#include <stddef.h>
#include <stdint.h>

#include "../core/plan.h"
#include "../core/util.h"

/* Offset of each tap (ky, kx) from the window origin in the packed input: rows row_stride apart,
   the stride phase (col % s_w) of its column at phase * wq columns, columns pxs elements apart. */
static inline void dlc_gspc_tap_offsets(const dlc_conv_shape *s, size_t row_stride, size_t wq, size_t pxs,
                                        ptrdiff_t *tap_off) {
  const size_t sw = (size_t)s->stride_w;
  for (size_t ky = 0; ky < (size_t)s->k_h; ky++)
    for (size_t kx = 0; kx < (size_t)s->k_w; kx++) {
      const size_t col = kx * (size_t)s->dil_w;
      tap_off[ky * (size_t)s->k_w + kx] =
          (ptrdiff_t)(ky * (size_t)s->dil_h * row_stride + ((col % sw) * wq + col / sw) * pxs);
    }
}

/* Groups in lanes: lane L holds (group L % gpv, channel L / gpv); stored channel j of the block
   is group j / kpg, channel j % kpg, so perm[j] = the lane holding it. Returns 1 when that is the
   identity (depthwise: lane j is channel j already). */
static inline int dlc_gspc_lane_perm(size_t nvl, size_t gpv, size_t kpg, int32_t *perm) {
  int identity = 1;
  for (size_t j = 0; j < nvl; j++) {
    perm[j] = j < gpv * kpg ? (int32_t)((j % kpg) * gpv + j / kpg) : (int32_t)j;
    identity &= perm[j] == (int32_t)j;
  }
  return identity;
}

/* Stride phase ph of a packed row of wq columns: padded column q*s_w + ph is image column
   q*s_w + *col0, and the columns inside the image are [*q_lo, *q_hi) (the rest is padding). */
static inline void dlc_gspc_phase_columns(const dlc_conv_shape *s, size_t ph, size_t wq, ptrdiff_t *col0,
                                          size_t *q_lo, size_t *q_hi) {
  const int64_t sw = s->stride_w, c0 = (int64_t)ph - s->pad_l;
  int64_t lo = c0 >= 0 ? 0 : (-c0 + sw - 1) / sw;
  int64_t hi = s->w_in - c0 <= 0 ? 0 : (s->w_in - c0 + sw - 1) / sw;
  lo = DLC_MIN(lo, (int64_t)wq);
  hi = DLC_MAX(lo, DLC_MIN(hi, (int64_t)wq));
  *col0 = (ptrdiff_t)c0;
  *q_lo = (size_t)lo;
  *q_hi = (size_t)hi;
}

/* The next job of the (group block, image, row tile, oc block) order, oc blocks fastest. */
static inline void dlc_gspc_next_job(size_t n_ocb, size_t n_rt, size_t n_img, size_t *ob, size_t *rt, size_t *n,
                                     size_t *gb) {
  if (++*ob < n_ocb) return;
  *ob = 0;
  if (++*rt < n_rt) return;
  *rt = 0;
  if (++*n < n_img) return;
  *n = 0;
  ++*gb;
}

#endif
