/* int8 requantising store, AArch64 Neon (base armv8-a): the q8 store contract of
 * lowp_gemm_ukernel.h with quant.h's arithmetic, in runs of 8 outputs and a scalar tail
 * (dlc_q8_requant1 itself):
 *   the wide screen where the plan derived it (fp32, 4 lanes: quant.h proves when it gives the
 *     formula's bits; a run with a lane near a tie takes the double path),
 *   else the double path: float64x2_t lanes doing exactly the formula's IEEE double operations in
 *     its order (acc + bias widened to s64 exactly, one conversion, one multiply, the clamp,
 *     FRINTN's round half to even, + zp), so each lane is dlc_q8_requant1's value bit for bit.
 * As on x86 (../x86_avx512/q8_store_avx512.c), the clamp to [lo, hi] and the saturation of the
 * rounded value + zp to [y_min, y_max] are one clamp to [lo, hi] pulled into
 * [y_min - zp, y_max - zp] (integer bounds commute with rounding), so every double lane ends in
 * the type's range and plain narrowing keeps it; the wide screen clamps in integers and narrows
 * with saturation (SQXTN / SQXTUN), which is the type's range. */
#include "q8_store_neon.h"

#include <stddef.h>
#include <stdint.h>

#define INLINE static inline __attribute__((always_inline))

typedef struct exact_consts {
  float64x2_t lo, hi, zp;
} exact_consts;

/* two outputs in double: exactly dlc_q8_requant1's operations */
INLINE int32x2_t requant2(int32x2_t acc, int32x2_t bias, float64x2_t mult, const exact_consts *k) {
  float64x2_t v = vmulq_f64(vcvtq_f64_s64(vaddl_s32(acc, bias)), mult);
  v = vminq_f64(k->hi, vmaxq_f64(k->lo, v));
  v = vaddq_f64(vrndnq_f64(v), k->zp);
  return vmovn_s64(vcvtq_s64_f64(v));
}

/* 8 outputs in double into 8 s32 lanes of the type's range, the multiplier and bias per lane
   (per_column) or the run's */
INLINE void requant8(const int32_t *acc, const dlc_q8_params *q, size_t c, int per_column, int32x4_t bias_r,
                     float64x2_t mult_r, const exact_consts *k, int32x4_t r[2]) {
  for (int h = 0; h < 2; h++) {
    const int32x4_t a = vld1q_s32(acc + 4 * h);
    const int32x4_t b = per_column ? vld1q_s32(q->bias + c + 4 * h) : bias_r;
    const float64x2_t m0 = per_column ? vld1q_f64(q->mult + c + 4 * h) : mult_r;
    const float64x2_t m1 = per_column ? vld1q_f64(q->mult + c + 4 * h + 2) : mult_r;
    r[h] = vcombine_s32(requant2(vget_low_s32(a), vget_low_s32(b), m0, k),
                        requant2(vget_high_s32(a), vget_high_s32(b), m1, k));
  }
}

INLINE void exact_consts_of(const dlc_q8_params *q, exact_consts *k) {
  const double ylo = (double)(q->y_min - q->y_zero_point), yhi = (double)(q->y_max - q->y_zero_point);
  const double lo_y = q->lo < ylo ? ylo : q->lo > yhi ? yhi : q->lo;
  const double hi_y = q->hi < ylo ? ylo : q->hi > yhi ? yhi : q->hi;
  k->lo = vdupq_n_f64(lo_y), k->hi = vdupq_n_f64(hi_y), k->zp = vdupq_n_f64((double)q->y_zero_point);
}

INLINE void scalar_tail(size_t j, size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, int per_column,
                        uint8_t *out) {
  for (; j < n; j++) {
    const size_t c = per_column ? c0 + j : c0;
    out[j] = (uint8_t)dlc_q8_requant1((int64_t)acc[j] + q->bias[c], q->mult[c], q);
  }
}

/* in the type's range: the low bytes are the outputs (u8, or s8 in two's complement) */
INLINE void narrow8(const int32x4_t r[2], uint8_t *out) {
  vst1_u8(out, vreinterpret_u8_s8(vmovn_s16(vcombine_s16(vmovn_s32(r[0]), vmovn_s32(r[1])))));
}

INLINE void store_exact(size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, const int per_column,
                        uint8_t *out) {
  exact_consts k;
  exact_consts_of(q, &k);
  const int32x4_t bias_r = vdupq_n_s32(q->bias[c0]);
  const float64x2_t mult_r = vdupq_n_f64(q->mult[c0]);
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    int32x4_t r[2];
    requant8(acc + j, q, c0 + j, per_column, bias_r, mult_r, &k, r);
    narrow8(r, out + j);
  }
  scalar_tail(j, n, acc, q, c0, per_column, out);
}

/* the wide screen, 8 outputs a step; a step with a lane near a tie goes the double path */
INLINE void store_wide(size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, const int per_column,
                       uint8_t *out, const int is_signed, const int clamp) {
  exact_consts k;
  exact_consts_of(q, &k);
  const int32x4_t m_less_zp = vdupq_n_s32(0x4b400000 - q->y_zero_point);
  const int32x4_t lo_i = vdupq_n_s32(q->lo_i), hi_i = vdupq_n_s32(q->hi_i);
  const int32x4_t bias_r = vdupq_n_s32(q->bias[c0]);
  const float32x4_t mf_r = vdupq_n_f32(q->mult_f[c0]);
  const float32x4_t half_in = vdupq_n_f32(0.5f - DLC_Q8_WIDE_MARGIN);
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    int32x4_t r[2];
    float32x4_t d[2];
    for (int h = 0; h < 2; h++) {
      const size_t c = c0 + j + 4 * (size_t)h;
      const int32x4_t b = per_column ? vld1q_s32(q->bias + c) : bias_r;
      const float32x4_t mf = per_column ? vld1q_f32(q->mult_f + c) : mf_r;
      r[h] = dlc_q8_wide4__neon(vaddq_s32(vld1q_s32(acc + j + 4 * h), b), mf, m_less_zp, &d[h]);
      if (clamp) r[h] = vminq_s32(vmaxq_s32(r[h], lo_i), hi_i);
    }
    if (__builtin_expect(vmaxvq_u32(vcgtq_f32(vmaxq_f32(d[0], d[1]), half_in)) != 0, 0)) {
      requant8(acc + j, q, c0 + j, per_column, bias_r, vdupq_n_f64(q->mult[c0]), &k, r);
      narrow8(r, out + j);
      continue;
    }
    const int16x8_t h16 = vcombine_s16(vqmovn_s32(r[0]), vqmovn_s32(r[1]));
    vst1_u8(out + j, is_signed ? vreinterpret_u8_s8(vqmovn_s16(h16)) : vqmovun_s16(h16));
  }
  scalar_tail(j, n, acc, q, c0, per_column, out);
}

#define WIDE_CASE(PC, SG, CL) \
  case (PC) * 4 + (SG) * 2 + (CL): store_wide(n, acc, q, c0, PC, out, SG, CL); return;

void dlc_q8_store__neon(size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, int per_column, void *y) {
  uint8_t *out = y;
  if (q->screen_wide) {
    const int clamp = q->lo > (double)(q->y_min - q->y_zero_point) || q->hi < (double)(q->y_max - q->y_zero_point);
    switch ((per_column != 0) * 4 + (q->is_signed != 0) * 2 + clamp) {
      WIDE_CASE(0, 0, 0) WIDE_CASE(0, 0, 1) WIDE_CASE(0, 1, 0) WIDE_CASE(0, 1, 1)
      WIDE_CASE(1, 0, 0) WIDE_CASE(1, 0, 1) WIDE_CASE(1, 1, 0) WIDE_CASE(1, 1, 1)
    }
  }
  if (per_column)
    store_exact(n, acc, q, c0, 1, out);
  else
    store_exact(n, acc, q, c0, 0, out);
}
