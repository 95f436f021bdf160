/* q8_store_neon.h - the AArch64 int8 requantising store (q8_store_neon.c), shared by the SMLAL
 * family (its store member, which the drivers of both int8 families call) and the SDOT family's
 * fused epilogue (ukernel_q, for what its fp32 screen cannot settle): the q8 store contract of
 * lowp_gemm_ukernel.h (dlc_q8_store_fn), exact per quant.h. Base armv8-a: every AArch64 core. */
#ifndef DLC_Q8_STORE_NEON_H
#define DLC_Q8_STORE_NEON_H

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "../../quant/quant.h"

void dlc_q8_store__neon(size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, int per_column, void *y);

/* The wide screen's step on 4 lanes (quant.h, where q->screen_wide), the same fp32 operations as
   x86's dlc_q8_wide16: p = (float)a x mult_f rounded by one fused multiply-add onto 1.5 x 2^23,
   whose bits less M's less zp are round(p) + zp, and |d| = |p - round(p)| by one fused
   multiply-subtract (the sign of d is the opposite of x86's; only |d| is used). a is acc + bias;
   a lane with |d| > 1/2 - DLC_Q8_WIDE_MARGIN must take the double path. */
static inline __attribute__((always_inline)) int32x4_t dlc_q8_wide4__neon(int32x4_t a, float32x4_t mf,
                                                                          int32x4_t m_less_zp, float32x4_t *absd) {
  const float32x4_t magic = vdupq_n_f32(12582912.0f);
  const float32x4_t f = vcvtq_f32_s32(a);
  const float32x4_t t = vfmaq_f32(magic, f, mf);
  *absd = vabsq_f32(vfmsq_f32(vsubq_f32(t, magic), f, mf));
  return vsubq_s32(vreinterpretq_s32_f32(t), m_less_zp);
}

#endif
