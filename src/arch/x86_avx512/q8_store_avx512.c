/* int8 requantising store on 16 lanes (AVX-512 F/BW/VL/DQ): the q8 store contract of
 * lowp_gemm_ukernel.h with quant.h's arithmetic, the same steps as the avx2 store
 * (../x86_avx2/q8_gemm_avx2.c) on vectors twice as wide:
 *   the fp32 screen where the plan derived it (quant.h proves when it gives the formula's bits),
 *   else the double path (bias added in s32 where the plan found that exact, else in double).
 * Every run is whole vectors plus one masked tail: its inputs loaded under the lane mask (lanes
 * past n compute on zeros and are dropped), its bytes stored under it, so a 7-wide output row
 * costs one step. Clamp bounds inside the type's range leave every lane in it, so vpmovdb's
 * truncation is the whole narrowing. */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "../../gemm_im2col/lowp_gemm_ukernel.h"

#define INLINE static inline __attribute__((always_inline))

INLINE __mmask16 first_lanes16(size_t n) { return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u); }

/* 8 outputs in double: (acc + bias) * mult clamped to [lo, hi] (the caller's clamp within the
   type's range, see store16), rounded half to even, plus zp. */
INLINE __m256i requant8(__m256i acc, __m256i bias, __m512d mult, __m512d lo, __m512d hi, __m512d zp, int s32) {
  __m512d v;
  if (s32)
    v = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm256_add_epi32(acc, bias)), mult);
  else
    v = _mm512_mul_pd(_mm512_add_pd(_mm512_cvtepi32_pd(acc), _mm512_cvtepi32_pd(bias)), mult);
  v = _mm512_min_pd(hi, _mm512_max_pd(lo, v));
  v = _mm512_roundscale_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm512_cvttpd_epi32(_mm512_add_pd(v, zp));
}

/* Clamping to [lo, hi] and saturating the rounded value + zp to [y_min, y_max] is one clamp to
   [lo, hi] pulled into [y_min - zp, y_max - zp] (for lo <= hi; integer bounds commute with
   rounding), so no lane needs a saturation step. The fp32 screen rounds with the 1.5 x 2^23
   trick: c + M lands on M + round_half_even(c) exactly (|c| <= 256), so (c + M) - M is the
   rounded value for the screen's distance and the bits of c + M less those of M (less zp) are
   the output: simple adds where vrndscaleps and vcvtps2dq queue on fewer ports. */
INLINE void store16(size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, int per_column, uint8_t *out,
                    const int s32) {
  const double ylo = (double)(q->y_min - q->y_zero_point), yhi = (double)(q->y_max - q->y_zero_point);
  const double lo_y = q->lo < ylo ? ylo : q->lo > yhi ? yhi : q->lo;
  const double hi_y = q->hi < ylo ? ylo : q->hi > yhi ? yhi : q->hi;
  const __m512d lo = _mm512_set1_pd(lo_y), hi = _mm512_set1_pd(hi_y);
  const __m512d zpd = _mm512_set1_pd((double)q->y_zero_point);
  const float *mult_f = s32 ? q->mult_f : NULL;
  const __m512 lo_f = _mm512_set1_ps((float)lo_y), hi_f = _mm512_set1_ps((float)hi_y);
  const __m512 half_in = _mm512_set1_ps(0.5f - DLC_Q8_SCREEN_MARGIN);
  const __m512 magic = _mm512_set1_ps(12582912.0f); /* 1.5 x 2^23 */
  const __m512i magic_less_zp = _mm512_set1_epi32(0x4b400000 - q->y_zero_point);
  const __m512i bias_r = _mm512_set1_epi32(q->bias[c0]);
  const __m512d mult_r = _mm512_set1_pd(q->mult[c0]);
  const __m512 mf_r = _mm512_set1_ps(mult_f ? mult_f[c0] : 0.0f);
  for (size_t j = 0; j < n; j += 16) {
    const size_t len = n - j < 16 ? n - j : 16;
    const __mmask16 m = first_lanes16(len);
    const __m512i a = _mm512_maskz_loadu_epi32(m, acc + j);
    const __m512i b = per_column ? _mm512_maskz_loadu_epi32(m, q->bias + c0 + j) : bias_r;
    __m512i r;
    int done = 0;
    if (mult_f) {
      const __m512 mf = per_column ? _mm512_maskz_loadu_ps(m, mult_f + c0 + j) : mf_r;
      const __m512 v = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(a, b)), mf);
      const __m512 c = _mm512_min_ps(hi_f, _mm512_max_ps(lo_f, v));
      const __m512 t = _mm512_add_ps(c, magic);
      const __m512 off = _mm512_abs_ps(_mm512_sub_ps(c, _mm512_sub_ps(t, magic)));
      if (!_mm512_mask_cmp_ps_mask(m, off, half_in, _CMP_GT_OQ)) {
        r = _mm512_sub_epi32(_mm512_castps_si512(t), magic_less_zp);
        done = 1;
      }
    }
    if (!done) {
      __m512d m0 = mult_r, m1 = mult_r;
      if (per_column) {
        m0 = _mm512_maskz_loadu_pd((__mmask8)m, q->mult + c0 + j);
        m1 = _mm512_maskz_loadu_pd((__mmask8)(m >> 8), q->mult + c0 + j + 8);
      }
      const __m256i r0 = requant8(_mm512_castsi512_si256(a), _mm512_castsi512_si256(b), m0, lo, hi, zpd, s32);
      const __m256i r1 = requant8(_mm512_extracti64x4_epi64(a, 1), _mm512_extracti64x4_epi64(b, 1), m1, lo, hi,
                                  zpd, s32);
      r = _mm512_inserti64x4(_mm512_castsi256_si512(r0), r1, 1);
    }
    const __m128i bytes = _mm512_cvtepi32_epi8(r); /* in the type's range: keep the low bytes */
    if (len == 16)
      _mm_storeu_si128((__m128i *)(out + j), bytes);
    else
      _mm_mask_storeu_epi8(out + j, m, bytes);
  }
}

void dlc_q8_store__avx512(size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, int per_column, void *y) {
  if (q->bias_s32)
    store16(n, acc, q, c0, per_column, y, 1);
  else
    store16(n, acc, q, c0, per_column, y, 0);
}
