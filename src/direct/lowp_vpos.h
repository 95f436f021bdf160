/* lowp_vpos.h - F16 / int8 convolution over the virtual positions of a stride-phase-split padded
 * copy of x: what the direct driver (one copy of the whole image, src/direct/direct_lowp_conv.c)
 * and the spatial pack driver (a copy of each band of rows, src/spatial_pack/spack_lowp.c) share.
 *
 * The copy holds, per group, channel unit (int8: a pair of channels, interleaved as s16 x - zp,
 * or, where the ISA has the q8_d4 family, four channels interleaved as u8 bytes with the zero
 * point left in (lowp_gemm_ukernel.h), padding holding the zero point's byte; F16: one channel
 * of halves) and stride phase (py, px) that some tap reads, a sub-plane of
 * rows x wq units: sub-plane element (r, c) is padded input (r * sh + py, c * sw + px). Output
 * (oy, ox) is virtual position v = oy * wq + ox, and its input for reduction unit (cu, tap) sits
 * at copy + v + boff[cu * taps + tap]: every tap reads a stride-1 run, so the family's
 * ukernel_ib reads B in place through the offset table. The wq - w_out virtual columns per row
 * are computed and dropped by the store.
 *
 * The weights are packed once as the A panels of that reduction order:
 *   [group][oc / mr][cu * taps + tap][mr][u]      (u = 2 for int8 pairs, 1 for F16) */
#ifndef DLC_LOWP_VPOS_H
#define DLC_LOWP_VPOS_H

#include <stddef.h>
#include <stdint.h>

#include "../core/plan.h"

#define DLC_LOWP_VPOS_MAX_PHASES 64 /* larger strides have at most k_h x k_w used phases */

typedef struct dlc_lowp_vpos {
  int q8;
  size_t u;                 /* int16 elements per unit: 2 (int8 pair) or 1 (half) */
  size_t taps, cpg;         /* k_h * k_w; channel units per group */
  size_t kunits;            /* reduction units per group: cpg * taps */
  size_t nslot;             /* stride phases copied */
  int slot_py[DLC_LOWP_VPOS_MAX_PHASES], slot_px[DLC_LOWP_VPOS_MAX_PHASES];
  size_t wq;                /* sub-plane width */
  size_t mr, nr, wpanels;   /* the family's tile; A panels per group */
  size_t kcu;               /* reduction units per K chunk */
  int16_t *wpack;           /* groups x wpanels x kunits x mr x u (d4: x 4 bytes) */
  int d4;                   /* int8 on the q8_d4 family: units of 4 channels as u8 */
  uint8_t zu, flip;         /* d4: x's zero point as a u8 byte (padding); 0x80 for S8 (x ^ flip is u8) */
  uint8_t *zrow;            /* d4: 2 * wq bytes of zu ^ flip, the row of a channel past the group's end */
  dlc_q8_params q4;         /* d4: the plan's params with the bias less zu x the sum of the channel's
                               weights (bias and mult_f owned here) */
  size_t wpack_bytes;
} dlc_lowp_vpos;

/* Checks the family (UNSUPPORTED without ukernel_ib) and the int8 reduction length, finds the
   stride phases, packs the weights. On failure nothing is left allocated. */
dlconv_status dlc_lowp_vpos_plan(dlc_lowp_vpos *v, const dlconv_plan *p, const void *w, const char *algo);
/* (Re)packs the weights as A panels of mr rows (the plan packs them for the family's mr; a driver
   taking another kernel's panels repacks). On failure v is freed. */
dlconv_status dlc_lowp_vpos_pack(dlc_lowp_vpos *v, const dlconv_plan *p, const void *w, size_t mr, const char *algo);
void dlc_lowp_vpos_free(dlc_lowp_vpos *v);

/* The requantisation the stores of an int8 plan's accumulators take: p->q8, or with d4 the
   bias that takes the zero point back out. */
static inline const dlc_q8_params *dlc_lowp_vpos_q8(const dlc_lowp_vpos *v, const dlconv_plan *p) {
  return v->d4 ? &v->q4 : &p->q8;
}

/* int8 on the q8_d4 family (lowp_gemm_ukernel.h): zu, x's zero point as the byte the kernels see
   (x ^ 0x80 for S8), and q4, the plan's requantisation with bias[oc] less zu x the sum of channel
   oc's weights (w: OIHW s8), its bias and (where the fp32 screen holds) mult_f allocated (dlc_q8_d4_params_free). *ok = 0 where
   a bias would leave s32 (nothing left allocated: the caller takes the s16 pairs). */
static inline uint8_t dlc_q8_d4_zu(const dlconv_plan *p) {
  return (uint8_t)(p->q8.x_zero_point + (p->dtype == DLCONV_S8 ? 128 : 0));
}
/* The xor that turns x's bytes into the u8 the kernels see: 0x80 for S8 (x + 128), 0 for U8. */
static inline uint8_t dlc_q8_d4_flip(const dlconv_plan *p) { return p->dtype == DLCONV_S8 ? 0x80 : 0; }
dlconv_status dlc_q8_d4_params(const dlconv_plan *p, const void *w, dlc_q8_params *q4, int *ok);
void dlc_q8_d4_params_free(dlc_q8_params *q4);

/* The kernel name a plan on v reports. */
const char *dlc_lowp_vpos_kernel_name(const dlc_lowp_vpos *v, const dlconv_plan *p);

/* The kunits offsets (int16 elements) of each reduction unit from a group's base in a copy
   whose sub-planes are planeq units apart. */
void dlc_lowp_vpos_offsets(const dlc_lowp_vpos *v, const dlc_conv_shape *s, size_t planeq, ptrdiff_t *boff);

/* Row r of the sub-plane (group g, channel unit cu, phase slot) of image img from NCHW x, for
   padded row index yq (the sub-plane row of the whole image): wq units to dst, zeros where the
   padding is. */
void dlc_lowp_vpos_copy_row_nchw(const dlconv_plan *p, const dlc_lowp_vpos *v, const void *x, size_t img, size_t g,
                                 size_t cu, size_t slot, size_t yq, int16_t *dst);

/* d4 with stride_w <= 2 (pack_quads' steps): rows [y0, y1) of the sub-plane (group g, channel unit
   cu, phase slot; rows of wq units, dst its row 0) in one call: x's four planes interleaved in one pass where there is no
   padding and stride 1 (a 7 x 7 layer's rows cost a call each), else a pack per input row with the
   padding between rows filled as one run; channels past the group's end hold the padding byte.
   0 where that does not hold (nothing written). */
int dlc_lowp_vpos_copy_plane_d4(const dlconv_plan *p, const dlc_lowp_vpos *v, const void *x, size_t img, size_t g,
                                size_t cu, size_t slot, size_t y0, size_t y1, int16_t *dst);

/* The same row for every channel unit of group g from NHWC x: unit cu's row at dst + cu * cu_stride
   (int16 elements). */
void dlc_lowp_vpos_copy_rows_nhwc(const dlconv_plan *p, const dlc_lowp_vpos *v, const void *x, size_t img, size_t g,
                                  size_t slot, size_t yq, int16_t *dst, size_t cu_stride);

/* One K chunk of the A panel of output channels [oc0, oc0 + m) of group g (oc0 a multiple of
   mr): acc[i * ldc + j] (+)= sum over units [pc, pc + kcu) for i < m, j < n (acc: the
   accumulator of row oc0, column 0; accumulating from pc > 0 on). B is either in place (b at
   virtual position 0 of the columns, boff the full table; n is rounded up to whole nr tiles,
   which the accumulator block must hold) or packed (b: the chunk's panels, unit (k, j) of
   panel j / nr at (k * nr + j % nr) * u). a32: F16 only, room for kcu * mr + 8 floats,
   32-byte aligned. */
void dlc_lowp_vpos_panel(const dlconv_plan *p, const dlc_lowp_vpos *v, size_t g, size_t oc0, size_t m, size_t pc,
                         size_t kcu, const int16_t *b, const ptrdiff_t *boff, int packed, size_t n, void *acc,
                         size_t ldc, float *a32);

/* int8 on the q8_d4 family with ukernel_q (v->d4): the last K chunk of the same, requantised into
   y instead of added into acc, for outputs with no virtual columns (column j of row i at
   y[i * ldy + j], j < n): acc holds the earlier chunks' sums (read from pc > 0 on, not written),
   q the plan's parameters (dlc_lowp_vpos_q8), qc0 the global channel of row 0. */
void dlc_lowp_vpos_panel_q(const dlconv_plan *p, const dlc_lowp_vpos *v, size_t g, size_t oc0, size_t m, size_t pc,
                           size_t kcu, const int16_t *b, const ptrdiff_t *boff, int packed, size_t n, const int32_t *acc,
                           size_t ldc, const dlc_q8_params *q, size_t qc0, uint8_t *y, size_t ldy);

#endif
