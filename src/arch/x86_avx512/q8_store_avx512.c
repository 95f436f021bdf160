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
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "../../ukernel/lowp_gemm_ukernel.h"
#include "q8_store_avx512.h"
#include "q8_wide_avx512.h"

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

/* 16 outputs (lanes under m) in double, the multiplier per lane from mult (per_column) or mult_r. */
INLINE __m512i requant16(__m512i a, __m512i b, const double *mult, __m512d mult_r, __mmask16 m, int per_column,
                         __m512d lo, __m512d hi, __m512d zp, int s32) {
  __m512d m0 = mult_r, m1 = mult_r;
  if (per_column) {
    m0 = _mm512_maskz_loadu_pd((__mmask8)m, mult);
    m1 = _mm512_maskz_loadu_pd((__mmask8)(m >> 8), mult + 8);
  }
  const __m256i r0 = requant8(_mm512_castsi512_si256(a), _mm512_castsi512_si256(b), m0, lo, hi, zp, s32);
  const __m256i r1 = requant8(_mm512_extracti64x4_epi64(a, 1), _mm512_extracti64x4_epi64(b, 1), m1, lo, hi, zp, s32);
  return _mm512_inserti64x4(_mm512_castsi256_si512(r0), r1, 1);
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
    if (!done) r = requant16(a, b, q->mult + c0 + j, mult_r, m, per_column, lo, hi, zpd, s32);
    const __m128i bytes = _mm512_cvtepi32_epi8(r); /* in the type's range: keep the low bytes */
    if (len == 16)
      _mm_storeu_si128((__m128i *)(out + j), bytes);
    else
      _mm_mask_storeu_epi8(out + j, m, bytes);
  }
}

typedef struct wide_consts {
  __m512i m_less_zp, lo_i, hi_i, bias_r;
  __m512 mf_r, half_in;
  __m512d lo, hi, zpd, mult_r;
} wide_consts;

/* 16 outputs (the first len) of the wide screen, each vector checked on its own: a lane within
   the margin of a tie sends the vector to the double path. s32 values in the type's range or
   beyond it (saturated by the caller's narrowing). */
INLINE __m512i wide_one16(const wide_consts *k, const int32_t *acc, const dlc_q8_params *q, size_t c, __mmask16 m,
                          const int per_column, const int clamp) {
  const __m512i a = _mm512_maskz_loadu_epi32(m, acc);
  const __m512i b = per_column ? _mm512_maskz_loadu_epi32(m, q->bias + c) : k->bias_r;
  const __m512 mf = per_column ? _mm512_maskz_loadu_ps(m, q->mult_f + c) : k->mf_r;
  __m512 d;
  __m512i r = dlc_q8_wide16(_mm512_add_epi32(a, b), mf, k->m_less_zp, &d);
  if (clamp) r = _mm512_min_epi32(_mm512_max_epi32(r, k->lo_i), k->hi_i);
  if (__builtin_expect(_mm512_mask_cmp_ps_mask(m, _mm512_abs_ps(d), k->half_in, _CMP_GT_OQ) != 0, 0))
    r = requant16(a, b, q->mult + c, k->mult_r, m, per_column, k->lo, k->hi, k->zpd, 1);
  return r;
}

INLINE void wide_narrow16(__m512i r, size_t len, __mmask16 m, const int is_signed, uint8_t *out) {
  const __m128i bytes = is_signed ? _mm512_cvtsepi32_epi8(r)
                                  : _mm512_cvtusepi32_epi8(_mm512_max_epi32(r, _mm512_setzero_si512()));
  if (len == 16)
    _mm_storeu_si128((__m128i *)out, bytes);
  else
    _mm_mask_storeu_epi8(out, m, bytes);
}

/* Blocks of 64: four vectors' distances folded by vrangeps (largest magnitude) into one test,
   the four narrowed by two packs and one dword permute (vpmovdb costs two ops a vector on Zen 4);
   a block with a lane near a tie (about 1 in 130 at random) goes vector by vector. */
INLINE void store_wide(size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, const int per_column,
                       uint8_t *out, const int is_signed, const int clamp) {
  const double ylo = (double)(q->y_min - q->y_zero_point), yhi = (double)(q->y_max - q->y_zero_point);
  const double lo_y = q->lo < ylo ? ylo : q->lo > yhi ? yhi : q->lo;
  const double hi_y = q->hi < ylo ? ylo : q->hi > yhi ? yhi : q->hi;
  wide_consts k;
  k.m_less_zp = _mm512_set1_epi32(0x4b400000 - q->y_zero_point);
  k.lo_i = _mm512_set1_epi32(q->lo_i);
  k.hi_i = _mm512_set1_epi32(q->hi_i);
  k.bias_r = _mm512_set1_epi32(q->bias[c0]);
  k.mf_r = _mm512_set1_ps(q->mult_f[c0]);
  k.half_in = _mm512_set1_ps(0.5f - DLC_Q8_WIDE_MARGIN);
  k.lo = _mm512_set1_pd(lo_y), k.hi = _mm512_set1_pd(hi_y);
  k.zpd = _mm512_set1_pd((double)q->y_zero_point);
  k.mult_r = _mm512_set1_pd(q->mult[c0]);
  const __m512i order = _mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0);
  size_t j = 0;
  for (; j + 64 <= n; j += 64) {
    __m512i r[4];
    __m512 d[4];
    for (int v = 0; v < 4; v++) {
      const size_t c = c0 + j + 16 * (size_t)v;
      const __m512i b = per_column ? _mm512_loadu_si512(q->bias + c) : k.bias_r;
      const __m512 mf = per_column ? _mm512_loadu_ps(q->mult_f + c) : k.mf_r;
      r[v] = dlc_q8_wide16(_mm512_add_epi32(_mm512_loadu_si512(acc + j + 16 * (size_t)v), b), mf, k.m_less_zp, &d[v]);
      if (clamp) r[v] = _mm512_min_epi32(_mm512_max_epi32(r[v], k.lo_i), k.hi_i);
    }
    const __m512 dmax = _mm512_range_ps(_mm512_range_ps(d[0], d[1], 0x0B), _mm512_range_ps(d[2], d[3], 0x0B), 0x0B);
    if (__builtin_expect(_mm512_cmp_ps_mask(dmax, k.half_in, _CMP_GT_OQ) != 0, 0)) {
      for (size_t v = 0; v < 64; v += 16)
        wide_narrow16(wide_one16(&k, acc + j + v, q, c0 + j + v, 0xFFFF, per_column, clamp), 16, 0xFFFF, is_signed,
                      out + j + v);
      continue;
    }
    /* packs work within 128-bit lanes: lane L of the bytes holds r[0..3]'s lane L in turn */
    const __m512i w01 = _mm512_packs_epi32(r[0], r[1]), w23 = _mm512_packs_epi32(r[2], r[3]);
    const __m512i b = is_signed ? _mm512_packs_epi16(w01, w23) : _mm512_packus_epi16(w01, w23);
    _mm512_storeu_si512(out + j, _mm512_permutexvar_epi32(order, b));
  }
  for (; j < n; j += 16) {
    const size_t len = n - j < 16 ? n - j : 16;
    const __mmask16 m = first_lanes16(len);
    wide_narrow16(wide_one16(&k, acc + j, q, c0 + j, m, per_column, clamp), len, m, is_signed, out + j);
  }
}

#define WIDE_CASE(PC, SG, CL) \
  case (PC) * 4 + (SG) * 2 + (CL): store_wide(n, acc, q, c0, PC, out, SG, CL); return;

void dlc_q8_store__avx512(size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, int per_column, void *y) {
  if (q->screen_wide) {
    uint8_t *out = y;
    const int clamp = q->lo > (double)(q->y_min - q->y_zero_point) || q->hi < (double)(q->y_max - q->y_zero_point);
    switch ((per_column != 0) * 4 + (q->is_signed != 0) * 2 + clamp) {
      WIDE_CASE(0, 0, 0) WIDE_CASE(0, 0, 1) WIDE_CASE(0, 1, 0) WIDE_CASE(0, 1, 1)
      WIDE_CASE(1, 0, 0) WIDE_CASE(1, 0, 1) WIDE_CASE(1, 1, 0) WIDE_CASE(1, 1, 1)
    }
  }
  if (q->bias_s32)
    store16(n, acc, q, c0, per_column, y, 1);
  else
    store16(n, acc, q, c0, per_column, y, 0);
}
