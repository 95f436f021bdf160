/* lowp_dw_ukernel.h - micro-kernels of the depthwise F16 / int8 path of the direct algorithm
 * (src/direct/direct_lowp.c).
 *
 * A depthwise layer is no matrix product: each output channel sums its own k_h x k_w taps. The
 * driver walks one output row of one channel at a time and, per tap, adds a run of the input
 * row times the tap's weight into a row of wide accumulators (fp32 or s32); the finished row is
 * then stored by the gemm family's store (bias, clamp and binary16 rounding, or the exact
 * requantisation of quant.h). Only taps that land inside the image are issued: the driver
 * clips each run to the valid output columns, so the kernels never see padding.
 *
 *   F16:  acc[j] += f32(x[j * stride]) * w                       j < n
 *   int8: acc[j] += (x[j * stride] - zp) * w                     j < n, exact in s32
 * x is binary16 (F16), u8 or s8 (int8, is_signed); stride >= 1 elements; w is the tap's weight
 * (an s8 value for int8). Reads x[0], x[stride], ..., x[(n-1) * stride] only. */
#ifndef DLC_LOWP_DW_UKERNEL_H
#define DLC_LOWP_DW_UKERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "../quant/quant.h"

typedef void (*dlc_f16_dw_row_fn)(size_t n, const uint16_t *x, size_t stride, float w, float *acc);
typedef void (*dlc_q8_dw_row_fn)(size_t n, const void *x, size_t stride, int32_t w, int32_t zp, int is_signed,
                                 int32_t *acc);

/* NHWC (depth multiplier 1): one pixel's run of channels, each with its own weight:
 *   F16:  acc[j] += f32(x[j]) * w[j]                             j < n
 *   int8: acc[j] += (x[j] - zp) * w[j]                           j < n, exact in s32
 * w[j] is the tap's weight of channel j (an s8 value for int8). Reads x[0 .. n) only. */
typedef void (*dlc_f16_dw_ch_fn)(size_t n, const uint16_t *x, const float *w, float *acc);
typedef void (*dlc_q8_dw_ch_fn)(size_t n, const void *x, const int32_t *w, int32_t zp, int is_signed, int32_t *acc);

/* NCHW, through the fp32 depthwise kernel (direct_dwp.h): a channel's input plane widened to fp32,
 *   F16:  dst[j] = f32(x[j])                                      j < n
 *   int8: dst[j] = (float)(x[j] - zp)                             j < n, exact (|x - zp| <= 255)
 * Reads x[0 .. n) and writes dst[0 .. n) only. */
typedef void (*dlc_f16_widen_fn)(size_t n, const uint16_t *x, float *dst);
typedef void (*dlc_q8_widen_fn)(size_t n, const void *x, int32_t zp, int is_signed, float *dst);

/* NCHW int8 on u8 x s8 quads (vpdpbusd: four byte products and their sum per s32 lane). In a
 * plane, the taps of one kernel row of an output pixel are k_w bytes of one input row, so with a
 * byte permute that gathers each lane's taps next to each other, one instruction adds up to
 * four taps of 16 output pixels. A block of 16 outputs reads one 64-byte window of an input row;
 * idx (plan time, DLC_Q8_DW4_LANES x 4 bytes per quad) says which window byte each lane's four
 * taps take, and the weights beyond k_w are 0:
 *   acc[r * ldacc + j] = sum over ky < kh, q < nq, t < 4 of
 *       x[r * ldx + ky * ky_step + b * 16 * sw + idx[64 q + 4 (j - 16 b) + t]] * w4[ky * nq + q].byte[t]
 *   for r < rows, j < n, b = j / 16
 * x is u8 (the driver's copy of the plane: padding and S8 flip as in the q8_d4 contract of
 * lowp_gemm_ukernel.h, so the zero point's correction is zu * sum(w), in the bias); w4 holds four s8
 * weights per int32 (byte t, little-endian); idx bytes < 64. Reads the 64 bytes at
 * x + r * ldx + ky * ky_step + b * 16 * sw for each row, tap row and block of n (the driver leaves
 * that slack past its copy), writes acc[r * ldacc + j] for j < n only. */
#define DLC_Q8_DW4_LANES 16
#define DLC_Q8_DW4_MAX_QUADS 2 /* k_w <= 8 */
typedef void (*dlc_q8_dw4_fn)(size_t rows, size_t n, const uint8_t *x, size_t ldx, size_t sw, size_t kh,
                              size_t ky_step, size_t nq, const uint8_t *idx, const int32_t *w4, int32_t *acc,
                              size_t ldacc);

typedef struct dlc_q8_dw4_family {
  const char *name; /* e.g. "q8_dwconv_4x32c4__avx512vbmi" */
  dlc_q8_dw4_fn run;
} dlc_q8_dw4_family;

/* NCHW int8 with 16 channels in the lanes, for small planes (a 7 x 7 plane fills 49 of 64 lanes
 * per tap where a lane per pixel needs a block of 16 per output row). Depth multiplier 1: the
 * driver interleaves the planes of 16 consecutive channels, pixel v of channel c at xc[16 v + c],
 * with its padding (the zero point's byte zu, as in q8_dw4), and each output pixel then takes
 * one 64-byte window per kernel row and quad of taps, a byte permute (lane c: bytes c, 16 + c,
 * 32 + c, 48 + c) and one vpdpbusd with the 16 channels' weights of those taps. The requantisation
 * and the way back to 16 planes happen in the kernel: per-plane store calls cost more than the
 * products on these planes.
 *
 * pack: dst[off[j] + c] = x[c * ldx + j] ^ flip                       for j < n, c < nc
 *   x u8 or s8 bytes (flip 0x80 for s8: u8 + 128, as q8_dw4); 1 <= nc <= 16. Reads those bytes of
 *   x only; writes the 16 bytes dst[off[j] .. off[j] + 16) for j < n (lanes c >= nc unspecified)
 *   and nothing else.
 * run: y[c * ldy + p] = requant(a(p, c) + q->bias[c0 + c], channel c0 + c)   for p < np, c < nc
 *   a(p, c) = sum over ky < kh, qd < nq, t < 4 of
 *             xc[pos[p] + ky * ky_step + 16 (4 qd + t) + c] * w[(ky * nq + qd) * 16 + c].byte[t]
 *   requant: quant.h's formula with q (u8 or s8 output per q->is_signed), bit-exact; 1 <= nc <= 16.
 *   w's bytes are s8 weights (taps past k_w, channels past nc: 0). pos holds round_up(np, 16)
 *   byte offsets (the entries past np any offset whose windows lie in xc): the kernel computes
 *   whole blocks of 16 pixels and reads the 64 bytes at xc + pos[p] + ky * ky_step + 64 qd for
 *   every such entry. Writes y[c * ldy + p] for c < nc, p < np only. */
#define DLC_Q8_DWC_LANES 16
typedef void (*dlc_q8_dwc_pack_fn)(size_t nc, size_t n, const uint8_t *x, size_t ldx, uint8_t flip,
                                   const uint32_t *off, uint8_t *dst);
typedef void (*dlc_q8_dwc_run_fn)(size_t np, const uint8_t *xc, const uint32_t *pos, size_t kh, size_t ky_step,
                                  size_t nq, const int32_t *w, const dlc_q8_params *q, size_t c0, size_t nc, void *y,
                                  size_t ldy);

typedef struct dlc_q8_dwc_family {
  const char *name; /* e.g. "q8_dwconv_16x16c4__avx512vbmi" */
  dlc_q8_dwc_pack_fn pack;
  dlc_q8_dwc_run_fn run;
} dlc_q8_dwc_family;

typedef struct dlc_lowp_dw_family {
  const char *f16_name, *q8_name; /* e.g. "f16_dwconv_row__avx2" */
  dlc_f16_dw_row_fn f16_row;
  dlc_q8_dw_row_fn q8_row;
  dlc_f16_dw_ch_fn f16_ch;
  dlc_q8_dw_ch_fn q8_ch;
  dlc_f16_widen_fn f16_widen; /* optional: without them NCHW runs the row kernels */
  dlc_q8_widen_fn q8_widen;
} dlc_lowp_dw_family;

/* NHWC int8 depthwise (depth multiplier 1) in registers: a tile of m <= mr (mr_narrow where set
 * and c <= 32, mr_quad where set and c <= 16) output pixels x all c channels, each tap of each pixel read in place through a
 * pointer, as the q8_igemm family does (lowp_gemm_ukernel.h; the pointers: src/quant/lowp_ind.h),
 * ind then ntaps x mr_narrow (mr_quad) pointers. A tap's 64 channels are one 64-byte
 * load, and four vpdpbusd against the tap's weights spread over four vectors, weight k of each
 * dword lane only (the other three bytes 0), add channel 4 l + k into lane l of accumulator k: no
 * widening, no shuffles. The accumulators' lanes are thus strided channels, which the
 * requantisation follows through ql.
 *   ind: ntaps x mr pointers, tap-major; row i (< m) of tap t reads the c bytes at ind[t * mr + i]
 *        (a pixel's channels, or the zero point's row), each xor flip (0 or 0x80 for S8: x + 128),
 *        so the zero point's correction zu * sum(w) is in the bias (lowp_vpos.h's dlc_q8_d4_params)
 *   w:   per block of 64 channels, ntaps x 4 vectors x 64 s8: block b starts at w + 256 b ntaps,
 *        byte 4 l + k' of vector k of tap t is w(t, 64 b + 4 l + k) where k' == k, else 0 (0 past c)
 *   ql:  q with bias and mult_f (where set) in lane order: entry 64 b + 16 k + l is channel
 *        64 b + 4 l + k's, round_up(c, 64) entries, zeros past c; other fields as q's
 *   y[i * ldy + j] = dlc_q8_requant1(C(i, j) + q->bias[j], q->mult[j], q)   for i < m, j < c,
 *        C the exact sum of the taps' products, u8 or s8 per q->is_signed; writes those bytes only. */
typedef void (*dlc_q8_dwn_fn)(size_t m, size_t c, size_t ntaps, const uint8_t *const *ind, const int8_t *w,
                              uint8_t flip, const dlc_q8_params *q, const dlc_q8_params *ql, void *y, size_t ldy);

/* The same where the tile's pixels are evenly spaced in x: row i of tap t reads at tap[t] + i * pstep
 * (a pointer per tap; pixels along a row of x inside the image). */
typedef void (*dlc_q8_dwn_s_fn)(size_t m, size_t c, size_t ntaps, const uint8_t *const *tap, ptrdiff_t pstep,
                                const int8_t *w, uint8_t flip, const dlc_q8_params *q, const dlc_q8_params *ql,
                                void *y, size_t ldy);

typedef struct dlc_q8_dwn_family {
  const char *name; /* e.g. "q8_dwconv_nhwc_6x64c4__avx512vnni" */
  size_t mr;
  size_t mr_narrow; /* optional: where c <= 32, m <= mr_narrow and ind holds ntaps x mr_narrow (0: mr) */
  size_t mr_quad;   /* optional: where c <= 16, m <= mr_quad and ind holds ntaps x mr_quad (0: as c <= 32) */
  dlc_q8_dwn_fn run;
  dlc_q8_dwn_s_fn run_s; /* optional */
} dlc_q8_dwn_family;

#endif
