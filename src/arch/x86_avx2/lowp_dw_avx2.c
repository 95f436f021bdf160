/* Depthwise F16 / int8 row kernels, avx2 + FMA + F16C (contract: src/direct/lowp_dw_ukernel.h;
 * the generic file is the readable specification).
 *
 * 8 output lanes per block. Stride 1 and 2 load their inputs as vectors, other strides gather
 * the 8 lanes element by element into one vector; either way only x[0], ..., x[(n-1)*stride]
 * and the bytes between them are touched, never anything past the last element (the row may end
 * at the end of the caller's buffer):
 *  - stride 2, F16: the 15 halves of a block are two 8-half loads at +0 and +7 (halves 0..7 and
 *    7..14), the even halves of the first and the odd ones of the second picked by vpshufb;
 *  - stride 2, int8: one 16-byte load and vpshufb while x[2j+15] still belongs to the row, the
 *    +0 / +7 pair of 8-byte loads for the last block.
 * n >= 8: the last 8 lanes [n-8, n) are computed first from the untouched acc and stored after
 * the main loop, so a tail of 1..7 lanes is one overlapping vector; lanes both cover get the same
 * value twice (F16 skips it when n % 8 == 0; int8 always ends with it, as the block whose
 * stride-2 load must stop at the last element). n < 8: scalar.
 *
 * F16 accumulates with one FMA per element, rounded once (the generic rounds x*w and then the
 * sum); both are within the library's F16 tolerance. Scalar lanes use the same FMA, so a result
 * does not depend on whether its lane took the vector or the scalar path.
 *
 * int8 multiplies with vpmaddwd rather than vpmulld: x widened to s32 minus zp is, read as s16
 * pairs, (x - zp, sign) and the weight pair (w, 0) makes the pair sum (x - zp) * w exactly. On
 * Zen 2 (measured) ymm vpmaddwd issues one per cycle at latency 3, vpmulld one per two cycles
 * at latency 4: with vpmulld a long stride-1 row is bound by the multiply (8 lanes / 2 cycles),
 * with vpmaddwd by the loads and stores. It needs x - zp and w in s16, always true for validated
 * zero points (type range) and s8 weights; anything else takes the scalar loop. */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "../../ukernel/config.h"

#define VL 8
#define INLINE static inline __attribute__((always_inline))

/* ================================================================ F16 */

INLINE float f16_fma1(uint16_t h, float w, float a) {
  const __m128 x = _mm_cvtph_ps(_mm_cvtsi32_si128(h));
  return _mm_cvtss_f32(_mm_fmadd_ss(x, _mm_set_ss(w), _mm_set_ss(a)));
}

/* Halves x[0], x[s], ..., x[7s] as 8 binary16 in one xmm. S is 1, 2 or 0 (run-time stride). */
INLINE __m128i f16_load8(const uint16_t *x, const size_t S, size_t stride) {
  if (S == 1) return _mm_loadu_si128((const __m128i *)x);
  if (S == 2) {
    const __m128i even = _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m128i odd = _mm_setr_epi8(2, 3, 6, 7, 10, 11, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m128i a = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)x), even);
    const __m128i b = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(x + 7)), odd);
    return _mm_unpacklo_epi64(a, b);
  }
  __m128i v = _mm_cvtsi32_si128(x[0]);
  v = _mm_insert_epi16(v, x[stride], 1);
  v = _mm_insert_epi16(v, x[2 * stride], 2);
  v = _mm_insert_epi16(v, x[3 * stride], 3);
  v = _mm_insert_epi16(v, x[4 * stride], 4);
  v = _mm_insert_epi16(v, x[5 * stride], 5);
  v = _mm_insert_epi16(v, x[6 * stride], 6);
  v = _mm_insert_epi16(v, x[7 * stride], 7);
  return v;
}

INLINE __m256 f16_block(const uint16_t *x, const size_t S, size_t stride, __m256 w, const float *acc) {
  return _mm256_fmadd_ps(_mm256_cvtph_ps(f16_load8(x, S, stride)), w, _mm256_loadu_ps(acc));
}

INLINE void f16_run(size_t n, const uint16_t *x, const size_t S, size_t stride, float w, float *acc) {
  if (S) stride = S;
  if (n < VL) {
    for (size_t j = 0; j < n; j++) acc[j] = f16_fma1(x[j * stride], w, acc[j]);
    return;
  }
  const __m256 wv = _mm256_set1_ps(w);
  const size_t t = n - VL;
  const __m256 tail = n % VL ? f16_block(x + t * stride, S, stride, wv, acc + t) : _mm256_setzero_ps();
  size_t j = 0;
  for (; j + 2 * VL <= n; j += 2 * VL) {
    const __m256 a0 = f16_block(x + j * stride, S, stride, wv, acc + j);
    const __m256 a1 = f16_block(x + (j + VL) * stride, S, stride, wv, acc + j + VL);
    _mm256_storeu_ps(acc + j, a0);
    _mm256_storeu_ps(acc + j + VL, a1);
  }
  if (j + VL <= n) {
    _mm256_storeu_ps(acc + j, f16_block(x + j * stride, S, stride, wv, acc + j));
    j += VL;
  }
  if (j < n) _mm256_storeu_ps(acc + t, tail);
}

static void f16_row(size_t n, const uint16_t *x, size_t stride, float w, float *acc) {
  if (stride == 1)
    f16_run(n, x, 1, 1, w, acc);
  else if (stride == 2)
    f16_run(n, x, 2, 2, w, acc);
  else
    f16_run(n, x, 0, stride, w, acc);
}

/* ================================================================ int8 */

/* 8 bytes x[0], x[s], ..., x[7s] in the low half of an xmm; safe: reads nothing past x[7s]
   (the 16-byte stride-2 load reads x[15]). */
INLINE __m128i q8_load8(const uint8_t *x, const size_t S, size_t stride, const int safe) {
  if (S == 1) return _mm_loadl_epi64((const __m128i *)x);
  if (S == 2) {
    if (!safe) {
      const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
      return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)x), even);
    }
    /* bytes 0..7 and 7..14: the wanted 0, 2, .., 14 are at 0, 2, 4, 6 and 9, 11, 13, 15 */
    const __m128i pick = _mm_setr_epi8(0, 2, 4, 6, 9, 11, 13, 15, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m128i v =
        _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)x), _mm_loadl_epi64((const __m128i *)(x + 7)));
    return _mm_shuffle_epi8(v, pick);
  }
  const uint32_t lo = (uint32_t)x[0] | (uint32_t)x[stride] << 8 | (uint32_t)x[2 * stride] << 16 |
                      (uint32_t)x[3 * stride] << 24;
  const uint32_t hi = (uint32_t)x[4 * stride] | (uint32_t)x[5 * stride] << 8 | (uint32_t)x[6 * stride] << 16 |
                      (uint32_t)x[7 * stride] << 24;
  return _mm_insert_epi32(_mm_cvtsi32_si128((int)lo), (int)hi, 1);
}

/* acc[0..8) + (x - zp) * w; wp holds (w, 0) s16 pairs. */
INLINE __m256i q8_block(const uint8_t *x, const size_t S, size_t stride, const int safe, const int sgn, __m256i zp,
                        __m256i wp, const int32_t *acc) {
  const __m128i b = q8_load8(x, S, stride, safe);
  const __m256i v = sgn ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
  const __m256i p = _mm256_madd_epi16(_mm256_sub_epi32(v, zp), wp);
  return _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)acc), p);
}

INLINE int32_t q8_elem(const uint8_t *p, const int sgn) { return sgn ? (int32_t)(int8_t)*p : (int32_t)*p; }

INLINE void q8_run(size_t n, const uint8_t *x, const size_t S, size_t stride, int32_t w, int32_t zp, const int sgn,
                   int32_t *acc) {
  if (S) stride = S;
  if (n < VL) {
    for (size_t j = 0; j < n; j++) acc[j] += (q8_elem(x + j * stride, sgn) - zp) * w;
    return;
  }
  const __m256i zv = _mm256_set1_epi32(zp), wp = _mm256_set1_epi32(w & 0xffff);
  const size_t t = n - VL;
  const __m256i tail = q8_block(x + t * stride, S, stride, 1, sgn, zv, wp, acc + t);
  size_t j = 0;
  /* j + 2 VL < n (not <=): the unsafe stride-2 load reads up to x[(j + 2 VL) * 2 - 1] */
  for (; j + 2 * VL < n; j += 2 * VL) {
    const __m256i a0 = q8_block(x + j * stride, S, stride, 0, sgn, zv, wp, acc + j);
    const __m256i a1 = q8_block(x + (j + VL) * stride, S, stride, 0, sgn, zv, wp, acc + j + VL);
    _mm256_storeu_si256((__m256i *)(acc + j), a0);
    _mm256_storeu_si256((__m256i *)(acc + j + VL), a1);
  }
  if (j + VL < n) {
    _mm256_storeu_si256((__m256i *)(acc + j), q8_block(x + j * stride, S, stride, 0, sgn, zv, wp, acc + j));
    j += VL;
  }
  (void)j; /* [j, n) is at most VL lanes, all inside [t, n) */
  _mm256_storeu_si256((__m256i *)(acc + t), tail);
}

static void q8_row(size_t n, const void *x, size_t stride, int32_t w, int32_t zp, int is_signed, int32_t *acc) {
  const uint8_t *p = x;
  /* vpmaddwd needs w and x - zp in s16 for every x in [-128, 255]: zp in [255 - 32767, 32768 - 128] */
  if (w < INT16_MIN || w > INT16_MAX || zp < 255 - INT16_MAX || zp > -128 - INT16_MIN) {
    for (size_t j = 0; j < n; j++) acc[j] += (q8_elem(p + j * stride, is_signed) - zp) * w;
    return;
  }
  if (is_signed) {
    if (stride == 1)
      q8_run(n, p, 1, 1, w, zp, 1, acc);
    else if (stride == 2)
      q8_run(n, p, 2, 2, w, zp, 1, acc);
    else
      q8_run(n, p, 0, stride, w, zp, 1, acc);
  } else {
    if (stride == 1)
      q8_run(n, p, 1, 1, w, zp, 0, acc);
    else if (stride == 2)
      q8_run(n, p, 2, 2, w, zp, 0, acc);
    else
      q8_run(n, p, 0, stride, w, zp, 0, acc);
  }
}

/* ================================================================ NHWC channel runs */

/* Same scheme as the rows: 8 channels a block, the last 8 computed first from the untouched acc
   and stored last so that a tail of 1..7 is one overlapping block, n < 8 scalar. */
static void f16_ch(size_t n, const uint16_t *x, const float *w, float *acc) {
  if (n < VL) {
    for (size_t j = 0; j < n; j++) acc[j] = f16_fma1(x[j], w[j], acc[j]);
    return;
  }
  const size_t t = n - VL;
  const __m256 tail = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + t))),
                                      _mm256_loadu_ps(w + t), _mm256_loadu_ps(acc + t));
  size_t j = 0;
  for (; j < t; j += VL)
    _mm256_storeu_ps(acc + j, _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + j))),
                                              _mm256_loadu_ps(w + j), _mm256_loadu_ps(acc + j)));
  _mm256_storeu_ps(acc + t, tail);
}

INLINE __m256i q8_ch_block(const uint8_t *x, const int32_t *w, const int sgn, __m256i zp, __m256i lo16,
                           const int32_t *acc) {
  const __m128i b = _mm_loadl_epi64((const __m128i *)x);
  const __m256i v = _mm256_sub_epi32(sgn ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b), zp);
  const __m256i wp = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)w), lo16); /* (w, 0) pairs */
  return _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)acc), _mm256_madd_epi16(v, wp));
}

INLINE void q8_ch_run(size_t n, const uint8_t *x, const int32_t *w, int32_t zp, const int sgn, int32_t *acc) {
  const __m256i zv = _mm256_set1_epi32(zp), lo16 = _mm256_set1_epi32(0xffff);
  const size_t t = n - VL;
  const __m256i tail = q8_ch_block(x + t, w + t, sgn, zv, lo16, acc + t);
  for (size_t j = 0; j < t; j += VL)
    _mm256_storeu_si256((__m256i *)(acc + j), q8_ch_block(x + j, w + j, sgn, zv, lo16, acc + j));
  _mm256_storeu_si256((__m256i *)(acc + t), tail);
}

static void q8_ch(size_t n, const void *x, const int32_t *w, int32_t zp, int is_signed, int32_t *acc) {
  const uint8_t *p = x;
  /* s8 weights and zero points of the type's range keep both vpmaddwd operands in s16 */
  const int s16_ok = zp >= 255 - INT16_MAX && zp <= -128 - INT16_MIN;
  if (n < VL || !s16_ok) {
    for (size_t j = 0; j < n; j++) acc[j] += (q8_elem(p + j, is_signed) - zp) * w[j];
    return;
  }
  if (is_signed)
    q8_ch_run(n, p, w, zp, 1, acc);
  else
    q8_ch_run(n, p, w, zp, 0, acc);
}

/* ================================================================ NCHW planes widened to fp32 */

/* 16 elements a step; the tail of 1..15 is a scalar loop (planes are long, the tail is rare). */
static void f16_widen(size_t n, const uint16_t *x, float *dst) {
  size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    _mm256_storeu_ps(dst + j, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + j))));
    _mm256_storeu_ps(dst + j + 8, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(x + j + 8))));
  }
  for (; j < n; j++) dst[j] = _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(x[j])));
}

INLINE void q8_widen_run(size_t n, const uint8_t *x, int32_t zp, const int sgn, float *dst) {
  const __m256i zv = _mm256_set1_epi32(zp);
  size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m128i b = _mm_loadu_si128((const __m128i *)(x + j));
    const __m128i h = _mm_unpackhi_epi64(b, b);
    const __m256i lo = sgn ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
    const __m256i hi = sgn ? _mm256_cvtepi8_epi32(h) : _mm256_cvtepu8_epi32(h);
    _mm256_storeu_ps(dst + j, _mm256_cvtepi32_ps(_mm256_sub_epi32(lo, zv)));
    _mm256_storeu_ps(dst + j + 8, _mm256_cvtepi32_ps(_mm256_sub_epi32(hi, zv)));
  }
  for (; j < n; j++) dst[j] = (float)(q8_elem(x + j, sgn) - zp);
}

static void q8_widen(size_t n, const void *x, int32_t zp, int is_signed, float *dst) {
  if (is_signed)
    q8_widen_run(n, x, zp, 1, dst);
  else
    q8_widen_run(n, x, zp, 0, dst);
}

const dlc_lowp_dw_family dlc_lowp_dw__avx2 = {
    .f16_name = "f16_dwconv_row__avx2",
    .q8_name = "q8_dwconv_row__avx2",
    .f16_row = f16_row,
    .q8_row = q8_row,
    .f16_ch = f16_ch,
    .q8_ch = q8_ch,
    .f16_widen = f16_widen,
    .q8_widen = q8_widen,
};
