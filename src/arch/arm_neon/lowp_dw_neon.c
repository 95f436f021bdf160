/* Depthwise F16 / int8 row kernels, Neon (armv8-a: FCVTL, FMLA, MUL / MLA): the template
 * src/arch/template/lowp_dw.h over this ISA's vec.h, 4 lanes a block. int8 rows of stride 1 and
 * 2 take 16-bit lanes and SMLAL first (below); the rest multiplies 32-bit lanes with MUL folded
 * into MLA (the template's default): one instruction per 4 products, where the s16 pairs
 * (vi_dot2_s16) take SMULL + SMULL2 + ADDP + ADD, and exact for any zero point.
 * The int8 NHWC channel runs take two blocks a loop iteration: llvm-mca (scripts/mca_neon.py) put
 * the one-block loop at 6.1 cycles a block on Neoverse N1, the two-block one at 3.5 (the F16 one
 * stays at one block: GCC's two-block loop, on post-indexed loads, took 5.5 a block against 2.7). */
#define DLC_LOWP_DW_Q8_CH_PAIRS 1
#include "vec.h"

/* int8 rows of stride 1 or 2, 16 lanes a step where zp is of the type (so that USUBL / SSUBL make
   x - zp in s16 from the bytes and zp's low byte): four SMLAL / SMLAL2 by w into the s32
   accumulators. Neoverse N1 issues MLA .4s at one per 2 cycles, SMLAL at one per cycle, and the
   bytes need no UXTL pair per 4 lanes (llvm-mca, scripts/mca_neon.py: the MLA row loop ran at
   6.1 cycles per 8 lanes). Stride 2: two 16-byte loads, UZP1 keeps the even bytes; the last
   byte read, x[2j + 31], is one past lane j + 15's, so a step needs j + 16 < n. Returns the
   lanes done; the template does the rest. */
#define DLC_LOWP_DW_Q8_S16 1
INLINE size_t ldw_q8_s16_row(size_t n, const uint8_t *x, const size_t S, int32_t w, int32_t zp, const int sgn,
                             int32_t *acc) {
  if (sgn ? zp < -128 || zp > 127 : zp < 0 || zp > 255) return 0;
  const int16x8_t wv = vdupq_n_s16((int16_t)w);
  const uint8x16_t zu = vdupq_n_u8((uint8_t)zp);
  const int8x16_t zs = vdupq_n_s8((int8_t)zp);
  size_t j = 0;
  for (; j + 16 + (S - 1) <= n; j += 16) {
    int16x8_t d0, d1;
    uint8x16_t b = vld1q_u8(x + j * S);
    if (S == 2) b = vuzp1q_u8(b, vld1q_u8(x + j * S + 16));
    if (sgn) {
      const int8x16_t v = vreinterpretq_s8_u8(b);
      d0 = vsubl_s8(vget_low_s8(v), vget_low_s8(zs));
      d1 = vsubl_high_s8(v, zs);
    } else {
      const uint8x16_t v = b;
      d0 = vreinterpretq_s16_u16(vsubl_u8(vget_low_u8(v), vget_low_u8(zu)));
      d1 = vreinterpretq_s16_u16(vsubl_high_u8(v, zu));
    }
    int32_t *a = acc + j;
    const int32x4_t a0 = vld1q_s32(a), a1 = vld1q_s32(a + 4), a2 = vld1q_s32(a + 8), a3 = vld1q_s32(a + 12);
    vst1q_s32(a, vmlal_s16(a0, vget_low_s16(d0), vget_low_s16(wv)));
    vst1q_s32(a + 4, vmlal_high_s16(a1, d0, wv));
    vst1q_s32(a + 8, vmlal_s16(a2, vget_low_s16(d1), vget_low_s16(wv)));
    vst1q_s32(a + 12, vmlal_high_s16(a3, d1, wv));
  }
  return j;
}

#include "../template/lowp_dw.h"
