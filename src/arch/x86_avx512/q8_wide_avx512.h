/* q8_wide_avx512.h - the wide screen's 16-lane step (quant.h, where q->screen_wide), shared by
 * the int8 store (q8_store_avx512.c) and the kernels that requantise in their epilogue
 * (q8_dwc_avx512vbmi.c). Needs AVX-512 F. */
#ifndef DLC_Q8_WIDE_AVX512_H
#define DLC_Q8_WIDE_AVX512_H

#include <immintrin.h>

/* 16 products p = (float)(acc + bias) x mult_f rounded by one fma onto 1.5 x 2^23, whose bits
   less M's less zp are round(p) + zp, and d = p - round(p) by one fms. No fp clamp: the caller's
   clamp moves into integers, the type's range into the narrowing's saturation; a lane with
   |d| > 1/2 - DLC_Q8_WIDE_MARGIN must take the double path. a is acc + bias. */
static inline __attribute__((always_inline)) __m512i dlc_q8_wide16(__m512i a, __m512 mf, __m512i m_less_zp,
                                                                   __m512 *d) {
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  const __m512 f = _mm512_cvtepi32_ps(a);
  const __m512 t = _mm512_fmadd_ps(f, mf, magic);
  *d = _mm512_fmsub_ps(f, mf, _mm512_sub_ps(t, magic));
  return _mm512_sub_epi32(_mm512_castps_si512(t), m_less_zp);
}

#endif
