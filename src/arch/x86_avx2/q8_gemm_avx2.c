/* int8 gemm family, avx2 (contract: lowp_gemm_ukernel.h): the avx2 instance of the product
 * kernels (q8_gemm_tiles.h, which describes the tile), the requantising store and the activation
 * packing. The store and packing do not depend on the dot-product instruction, so the VNNI
 * families (q8_gemm_avxvnni.c, ../x86_avx512/q8_gemm_avx512vnni.c) use these (q8_gemm_avx2.h). */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../ukernel/config.h"
#include "q8_gemm_avx2.h"

#define Q8_ISA avx2
#define Q8_DOT2(acc, a, b) _mm256_add_epi32((acc), _mm256_madd_epi16((a), (b)))
#include "q8_gemm_tiles.h"

#define INLINE_PAIRS static inline __attribute__((always_inline))

/* Four outputs of quant.h's formula, one double operation per step in its order. acc + bias is
   exact as a sum of doubles (|sum| < 2^33). max(lo, v) and min(hi, v) return v unless the bound
   wins strictly, as the scalar ternaries do. t is integral and in range when converted. */
static inline __m128i requant4(__m128i acc, __m128i bias, __m256d mult, __m256d lo, __m256d hi, __m256d zp,
                               __m256d ymin, __m256d ymax) {
  __m256d v = _mm256_add_pd(_mm256_cvtepi32_pd(acc), _mm256_cvtepi32_pd(bias));
  v = _mm256_mul_pd(v, mult);
  v = _mm256_max_pd(lo, v);
  v = _mm256_min_pd(hi, v);
  v = _mm256_round_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  v = _mm256_add_pd(v, zp);
  v = _mm256_min_pd(ymax, _mm256_max_pd(ymin, v));
  return _mm256_cvttpd_epi32(v);
}

/* Bias and multipliers of the 8 channels from c (per_column stores: NHWC rows). */
static inline __attribute__((always_inline)) void channel_params8(const dlc_q8_params *q, size_t c, __m128i *b0,
                                                                  __m128i *b1, __m256d *m0, __m256d *m1) {
  *b0 = _mm_loadu_si128((const __m128i *)(q->bias + c));
  *b1 = _mm_loadu_si128((const __m128i *)(q->bias + c + 4));
  *m0 = _mm256_loadu_pd(q->mult + c);
  *m1 = _mm256_loadu_pd(q->mult + c + 4);
}

/* The same four outputs when q->bias_s32 (quant.h): the bias added in s32, clamped to the
   narrowed bounds, so after rounding only the zero point (s32) and the packs' saturation remain:
   6 double operations instead of 11. */
static inline __m128i requant4_s32(__m128i acc, __m128i bias, __m256d mult, __m256d lo, __m256d hi, __m128i zp) {
  __m256d v = _mm256_mul_pd(_mm256_cvtepi32_pd(_mm_add_epi32(acc, bias)), mult);
  v = _mm256_min_pd(hi, _mm256_max_pd(lo, v));
  v = _mm256_round_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  return _mm_add_epi32(_mm256_cvttpd_epi32(v), zp);
}

/* The fp32 screen (quant.h) of 8 outputs: the rounded values + zp as 8 s32 when every lane is
   clear of the half-integers by the margin; returns 0 (and the double path takes the 8) if not.
   Per 8 outputs 11 vector operations where the double path has 2 x 7 on half-width vectors. */
static inline __attribute__((always_inline)) int screen8(__m256i a, __m256 mf, __m256 lo, __m256 hi, __m256i zp,
                                                         __m256i *r) {
  const __m256 half_in = _mm256_set1_ps(0.5f - DLC_Q8_SCREEN_MARGIN);
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 c = _mm256_min_ps(hi, _mm256_max_ps(lo, _mm256_mul_ps(_mm256_cvtepi32_ps(a), mf)));
  const __m256 rc = _mm256_round_ps(c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256 off = _mm256_and_ps(_mm256_sub_ps(c, rc), abs_mask);
  if (_mm256_movemask_ps(_mm256_cmp_ps(off, half_in, _CMP_GT_OQ))) return 0;
  *r = _mm256_add_epi32(_mm256_cvtps_epi32(rc), zp); /* |rc| <= 258: exact */
  return 1;
}

/* Whole runs of 8 on the bias_s32 path; returns how many outputs it stored. */
static size_t store_s32(size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, int per_column,
                        uint8_t *out) {
  const __m256d lo = _mm256_set1_pd(q->lo_sat), hi = _mm256_set1_pd(q->hi_sat);
  const __m128i zp = _mm_set1_epi32(q->y_zero_point);
  const __m128i bias_r = _mm_set1_epi32(q->bias[c0]);
  const __m256d mult_r = _mm256_set1_pd(q->mult[c0]);
  const int is_signed = q->is_signed;
  const float *mult_f = q->mult_f;
  const __m256 lo_f = _mm256_set1_ps(q->lo_f), hi_f = _mm256_set1_ps(q->hi_f);
  const __m256 mf_r = _mm256_set1_ps(mult_f ? mult_f[c0] : 0.0f);
  const __m256i bias8_r = _mm256_set1_epi32(q->bias[c0]), zp8 = _mm256_set1_epi32(q->y_zero_point);
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    if (mult_f) {
      const __m256i b8 = per_column ? _mm256_loadu_si256((const __m256i *)(q->bias + c0 + j)) : bias8_r;
      const __m256 mf = per_column ? _mm256_loadu_ps(mult_f + c0 + j) : mf_r;
      __m256i r;
      if (screen8(_mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(acc + j)), b8), mf, lo_f, hi_f, zp8, &r)) {
        __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
        w = is_signed ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
        _mm_storel_epi64((__m128i *)(out + j), w);
        continue;
      }
    }
    __m128i b0 = bias_r, b1 = bias_r;
    __m256d m0 = mult_r, m1 = mult_r;
    if (per_column) channel_params8(q, c0 + j, &b0, &b1, &m0, &m1);
    const __m128i r0 = requant4_s32(_mm_loadu_si128((const __m128i *)(acc + j)), b0, m0, lo, hi, zp);
    const __m128i r1 = requant4_s32(_mm_loadu_si128((const __m128i *)(acc + j + 4)), b1, m1, lo, hi, zp);
    /* |r - zp| <= 256 + 1: the s16 pack is exact, the 8-bit pack saturates as the formula does */
    __m128i w = _mm_packs_epi32(r0, r1);
    w = is_signed ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
    _mm_storel_epi64((__m128i *)(out + j), w);
  }
  return j;
}

void dlc_q8_store__avx2(size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, int per_column,
                               void *y) {
  const __m256d lo = _mm256_set1_pd(q->lo), hi = _mm256_set1_pd(q->hi);
  const __m256d zp = _mm256_set1_pd((double)q->y_zero_point);
  const __m256d ymin = _mm256_set1_pd((double)q->y_min), ymax = _mm256_set1_pd((double)q->y_max);
  const int is_signed = q->is_signed;
  uint8_t *out = y;
  if (n == 0) return;
  __m128i bias_r = _mm_set1_epi32(q->bias[c0]);
  __m256d mult_r = _mm256_set1_pd(q->mult[c0]);
  size_t j = q->bias_s32 ? store_s32(n, acc, q, c0, per_column, out) : 0;
  for (; j + 8 <= n; j += 8) {
    __m128i a0 = _mm_loadu_si128((const __m128i *)(acc + j)), a1 = _mm_loadu_si128((const __m128i *)(acc + j + 4));
    __m128i b0 = bias_r, b1 = bias_r;
    __m256d m0 = mult_r, m1 = mult_r;
    if (per_column) channel_params8(q, c0 + j, &b0, &b1, &m0, &m1);
    __m128i r0 = requant4(a0, b0, m0, lo, hi, zp, ymin, ymax);
    __m128i r1 = requant4(a1, b1, m1, lo, hi, zp, ymin, ymax);
    /* already within the output type: the packs do not saturate */
    __m128i w = _mm_packs_epi32(r0, r1);
    w = is_signed ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
    _mm_storel_epi64((__m128i *)(out + j), w);
  }
  if (j == n) return;
  /* The last 1..7 through the same vector steps, their inputs read with masked loads (short rows,
     e.g. 7-wide output rows, are all tail: the scalar formula's nearbyint call per output cost
     more than the vector work), then only their bytes are stored, 4 + 2 + 1. */
  const size_t r = n - j;
  const __m256i mk = first_lanes(r), mk_lo = first_lanes(r > 4 ? 4 : r), mk_hi = first_lanes(r > 4 ? r - 4 : 0);
  const __m256i av = _mm256_maskload_epi32(acc + j, mk);
  __m128i b0 = bias_r, b1 = bias_r;
  __m256d m0 = mult_r, m1 = mult_r;
  if (per_column) {
    const __m256i bv = _mm256_maskload_epi32(q->bias + c0 + j, mk);
    b0 = _mm256_castsi256_si128(bv);
    b1 = _mm256_extracti128_si256(bv, 1);
    /* 64-bit lanes: lane l of the mask pair (2l, 2l + 1) says whether double l is wanted */
    m0 = _mm256_maskload_pd(q->mult + c0 + j, _mm256_cvtepi32_epi64(_mm256_castsi256_si128(mk_lo)));
    m1 = _mm256_maskload_pd(q->mult + c0 + j + 4, _mm256_cvtepi32_epi64(_mm256_castsi256_si128(mk_hi)));
  }
  __m128i r0 = requant4(_mm256_castsi256_si128(av), b0, m0, lo, hi, zp, ymin, ymax);
  __m128i r1 = requant4(_mm256_extracti128_si256(av, 1), b1, m1, lo, hi, zp, ymin, ymax);
  __m128i w = _mm_packs_epi32(r0, r1);
  w = is_signed ? _mm_packs_epi16(w, w) : _mm_packus_epi16(w, w);
  uint8_t *o = out + j;
  if (r & 4) {
    const int32_t v = _mm_cvtsi128_si32(w);
    memcpy(o, &v, 4);
    w = _mm_srli_si128(w, 4);
    o += 4;
  }
  if (r & 2) {
    const uint16_t v = (uint16_t)_mm_cvtsi128_si32(w);
    memcpy(o, &v, 2);
    w = _mm_srli_si128(w, 2);
    o += 2;
  }
  if (r & 1) *o = (uint8_t)_mm_cvtsi128_si32(w);
}

/* 16 lanes a step: widen both rows to s16, remove the zero point, interleave. unpacklo/hi work
   within 128-bit halves, so the two halves are put back in lane order by permute2x128. */
void dlc_q8_pack_pairs__avx2(size_t n, const void *a, const void *b, int32_t zp, int is_signed, int16_t *dst) {
  const uint8_t *pa = a, *pb = b;
  const __m256i z = _mm256_set1_epi16((int16_t)zp);
  size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m128i ra = _mm_loadu_si128((const __m128i *)(pa + j)), rb = _mm_loadu_si128((const __m128i *)(pb + j));
    const __m256i va = _mm256_sub_epi16(is_signed ? _mm256_cvtepi8_epi16(ra) : _mm256_cvtepu8_epi16(ra), z);
    const __m256i vb = _mm256_sub_epi16(is_signed ? _mm256_cvtepi8_epi16(rb) : _mm256_cvtepu8_epi16(rb), z);
    const __m256i lo = _mm256_unpacklo_epi16(va, vb), hi = _mm256_unpackhi_epi16(va, vb);
    _mm256_storeu_si256((__m256i *)(dst + 2 * j), _mm256_permute2x128_si256(lo, hi, 0x20));
    _mm256_storeu_si256((__m256i *)(dst + 2 * j + 16), _mm256_permute2x128_si256(lo, hi, 0x31));
  }
  for (; j < n; j++) {
    int32_t va = is_signed ? (int8_t)pa[j] : pa[j], vb = is_signed ? (int8_t)pb[j] : pb[j];
    dst[2 * j] = (int16_t)(va - zp);
    dst[2 * j + 1] = (int16_t)(vb - zp);
  }
}

/* 8 pairs a step: 16 bytes widened to s16 minus the zero point, then each 32-bit pair stored
   at its place (no scatter in AVX2: vmovd / vpextrd per pair, still a third of the scalar
   loop's work). The last 1..7 pairs go through a zero-padded copy of their bytes. */
INLINE_PAIRS void pairs8_strided(__m128i bytes, const int is_signed, __m256i z, int16_t *dst, size_t stride,
                                 size_t count) {
  const __m256i v = _mm256_sub_epi16(is_signed ? _mm256_cvtepi8_epi16(bytes) : _mm256_cvtepu8_epi16(bytes), z);
  const __m128i lo = _mm256_castsi256_si128(v), hi = _mm256_extracti128_si256(v, 1);
  int32_t pr[8];
  pr[0] = _mm_cvtsi128_si32(lo);
  pr[1] = _mm_extract_epi32(lo, 1);
  pr[2] = _mm_extract_epi32(lo, 2);
  pr[3] = _mm_extract_epi32(lo, 3);
  pr[4] = _mm_cvtsi128_si32(hi);
  pr[5] = _mm_extract_epi32(hi, 1);
  pr[6] = _mm_extract_epi32(hi, 2);
  pr[7] = _mm_extract_epi32(hi, 3);
  for (size_t p = 0; p < count; p++) memcpy(dst + p * stride, &pr[p], 4);
}

void dlc_q8_pack_pairs_strided__avx2(size_t n, const void *src, int32_t zp, int is_signed, int16_t *dst,
                                            size_t stride) {
  const uint8_t *s = src;
  const __m256i z = _mm256_set1_epi16((int16_t)zp);
  size_t p = 0;
  for (; p + 8 <= n; p += 8)
    pairs8_strided(_mm_loadu_si128((const __m128i *)(s + 2 * p)), is_signed, z, dst + p * stride, stride, 8);
  if (p == n) return;
  uint8_t tail[16] = {0};
  memcpy(tail, s + 2 * p, 2 * (n - p));
  pairs8_strided(_mm_loadu_si128((const __m128i *)tail), is_signed, z, dst + p * stride, stride, n - p);
}

/* 16 or 8 s16 from the low (even) or high (odd) byte of each 16-bit lane, minus the zero point. */
static inline __attribute__((always_inline)) __m256i bytes16_of_lanes(__m256i b, const int odd, const int sgn) {
  if (odd) return sgn ? _mm256_srai_epi16(b, 8) : _mm256_srli_epi16(b, 8);
  return sgn ? _mm256_srai_epi16(_mm256_slli_epi16(b, 8), 8) : _mm256_and_si256(b, _mm256_set1_epi16(0xff));
}
static inline __attribute__((always_inline)) __m128i bytes8_of_lanes(__m128i b, const int odd, const int sgn) {
  if (odd) return sgn ? _mm_srai_epi16(b, 8) : _mm_srli_epi16(b, 8);
  return sgn ? _mm_srai_epi16(_mm_slli_epi16(b, 8), 8) : _mm_and_si128(b, _mm_set1_epi16(0xff));
}

/* Runs are output rows (7 to 56 long on ResNet-50), so the tails are vectors too: a last block
   overlapping the one before it (the same values stored twice), and 8-wide blocks below 16.
   Step 2 (stride-2 columns) loads the bytes between elements and keeps the even ones, or, for a
   load that must end at the last element, the odd ones. Other steps (NHWC pixels, c_in apart):
   one element at a time. Nothing past src[(n - 1) * step] is read. */
static inline __attribute__((always_inline)) void widen_run(size_t n, const uint8_t *s, size_t step, int32_t zp,
                                                            const int sgn, int16_t *dst) {
  const __m256i z = _mm256_set1_epi16((int16_t)zp);
  const __m128i z8 = _mm256_castsi256_si128(z);
  if (step == 1 && n >= 16) {
    for (size_t j = 0;; j += 16) {
      if (j + 16 > n) j = n - 16;
      const __m128i b = _mm_loadu_si128((const __m128i *)(s + j));
      const __m256i w = sgn ? _mm256_cvtepi8_epi16(b) : _mm256_cvtepu8_epi16(b);
      _mm256_storeu_si256((__m256i *)(dst + j), _mm256_sub_epi16(w, z));
      if (j + 16 == n) return;
    }
  }
  if (step == 1 && n >= 8) {
    const size_t at[2] = {0, n - 8};
    for (int k = 0; k < 2; k++) {
      const __m128i b = _mm_loadl_epi64((const __m128i *)(s + at[k]));
      const __m128i w = sgn ? _mm_cvtepi8_epi16(b) : _mm_cvtepu8_epi16(b);
      _mm_storeu_si128((__m128i *)(dst + at[k]), _mm_sub_epi16(w, z8));
    }
    return;
  }
  if (step == 2 && n >= 17) {
    /* blocks of bytes 2j .. 2j + 31 while inside the run; the last block's load ends at the last
       element (bytes 2n - 33 .. 2n - 2), its elements in the odd bytes */
    size_t j = 0;
    for (; j + 17 <= n; j += 16) {
      const __m256i b = _mm256_loadu_si256((const __m256i *)(s + 2 * j));
      _mm256_storeu_si256((__m256i *)(dst + j), _mm256_sub_epi16(bytes16_of_lanes(b, 0, sgn), z));
    }
    const __m256i b = _mm256_loadu_si256((const __m256i *)(s + 2 * n - 33));
    _mm256_storeu_si256((__m256i *)(dst + n - 16), _mm256_sub_epi16(bytes16_of_lanes(b, 1, sgn), z));
    return;
  }
  if (step == 2 && n >= 9) {
    const __m128i b0 = _mm_loadu_si128((const __m128i *)s), b1 = _mm_loadu_si128((const __m128i *)(s + 2 * n - 17));
    _mm_storeu_si128((__m128i *)dst, _mm_sub_epi16(bytes8_of_lanes(b0, 0, sgn), z8));
    _mm_storeu_si128((__m128i *)(dst + n - 8), _mm_sub_epi16(bytes8_of_lanes(b1, 1, sgn), z8));
    return;
  }
  for (size_t j = 0; j < n; j++) dst[j] = (int16_t)((sgn ? (int32_t)(int8_t)s[j * step] : (int32_t)s[j * step]) - zp);
}

void dlc_q8_widen_run__avx2(size_t n, const void *src, size_t step, int32_t zp, int is_signed, int16_t *dst) {
  if (is_signed)
    widen_run(n, src, step, zp, 1, dst);
  else
    widen_run(n, src, step, zp, 0, dst);
}

const dlc_q8_gemm_family dlc_q8_gemm__avx2 = DLC_Q8_GEMM_6X16C2_FAMILY(avx2);
