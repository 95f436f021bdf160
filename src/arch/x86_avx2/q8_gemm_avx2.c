/* int8 gemm micro-kernel and requantising store, avx2 (contract: lowp_gemm_ukernel.h).
 *
 * Tile 6 x 16c2: per k pair two ymm of B (8 columns x 2 k each) and, per row, one broadcast A pair;
 * vpmaddwd forms each column's pair sum exactly in s32 (|sum| <= 2 * 255 * 128) and vpaddd adds
 * it to one of 12 accumulators. Zen 2 issues one vpmaddwd per cycle, so the tile is bound by it
 * as long as loads (8 per 12 vpmaddwd) and the vpaddd fit beside it; 12 accumulators + 2 B + the
 * broadcast + the product use all 16 ymm without spilling.
 *
 * As in the f32 file, one function per (rows, vectors) pair, so an edge tile computes only what
 * it stores, and C is written in 4 + 2 + 1 pieces (no vpmaskmovd stores: microcoded on AMD). */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../core/kernels.h"

#define MR 6
#define NR 16
#define INLINE_PAIRS static inline __attribute__((always_inline))
/* k pairs between a B load and its prefetch: B is one cache line per k pair, as in the f32
   kernel per k step, so the same distances (one- and two-row tiles are bound by memory). */
#define B_PREFETCH_PAIRS(M) ((M) <= 2 ? 64 : 16)

typedef void (*tile_fn)(size_t n, size_t kc, const int16_t *restrict a, const int16_t *restrict b,
                        int32_t *restrict c, size_t ldc, int accumulate);

#define FOR_ROWS _Pragma("GCC unroll 6") for (size_t i = 0; i < M; i++)

static const int32_t lane_mask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

static inline __m256i first_lanes(size_t v) {
  return _mm256_loadu_si256((const __m256i *)(lane_mask + 8 - (v > 8 ? 8 : v)));
}

/* p[i] = v[i] for i < min(n, 8); nothing else written. */
static inline __attribute__((always_inline)) void store_first_epi32(int32_t *p, ptrdiff_t n, __m256i v) {
  if (n >= 8) {
    _mm256_storeu_si256((__m256i *)p, v);
    return;
  }
  if (n <= 0) return;
  __m128i x = _mm256_castsi256_si128(v);
  if (n & 4) {
    _mm_storeu_si128((__m128i *)p, x);
    x = _mm256_extracti128_si256(v, 1);
    p += 4;
  }
  if (n & 2) {
    _mm_storel_epi64((__m128i *)p, x);
    x = _mm_unpackhi_epi64(x, x);
    p += 2;
  }
  if (n & 1) *p = _mm_cvtsi128_si32(x);
}

static inline __attribute__((always_inline)) void tile_body(const size_t M, const size_t NV, size_t n, size_t kc,
                                                            const int16_t *restrict a, const int16_t *restrict b,
                                                            int32_t *restrict c, size_t ldc, int accumulate) {
  __m256i acc0[MR], acc1[MR];
  FOR_ROWS {
    acc0[i] = _mm256_setzero_si256();
    acc1[i] = _mm256_setzero_si256();
    _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch((const char *)(c + i * ldc + 8 * NV - 1), _MM_HINT_T0);
  }
  _Pragma("GCC unroll 4") for (size_t k2 = 0; k2 < kc / 2; k2++) {
    _mm_prefetch((const char *)(b + B_PREFETCH_PAIRS(M) * 2 * NR), _MM_HINT_T0);
    __m256i b0 = _mm256_loadu_si256((const __m256i *)b), b1 = _mm256_setzero_si256();
    if (NV == 2) b1 = _mm256_loadu_si256((const __m256i *)(b + 16));
    FOR_ROWS {
      int32_t pair;
      memcpy(&pair, a + 2 * i, sizeof pair);
      __m256i ai = _mm256_set1_epi32(pair);
      acc0[i] = _mm256_add_epi32(acc0[i], _mm256_madd_epi16(ai, b0));
      if (NV == 2) acc1[i] = _mm256_add_epi32(acc1[i], _mm256_madd_epi16(ai, b1));
    }
    a += 2 * MR;
    b += 2 * NR;
  }

  if (accumulate) {
    __m256i m0 = first_lanes(n), m1 = first_lanes(n > 8 ? n - 8 : 0);
    FOR_ROWS {
      acc0[i] = _mm256_add_epi32(acc0[i], _mm256_maskload_epi32(c + i * ldc, m0));
      if (NV == 2) acc1[i] = _mm256_add_epi32(acc1[i], _mm256_maskload_epi32(c + i * ldc + 8, m1));
    }
  }
  /* n is 8 * NV on all but the right-edge tiles: whole-vector stores there */
  const ptrdiff_t n0 = n == 8 * NV ? 8 : (ptrdiff_t)n, n1 = n == 8 * NV ? 8 : (ptrdiff_t)n - 8;
  FOR_ROWS {
    store_first_epi32(c + i * ldc, n0, acc0[i]);
    if (NV == 2) store_first_epi32(c + i * ldc + 8, n1, acc1[i]);
  }
}

#define DEFINE_TILE(M, NV)                                                                                 \
  static void tile_##M##x##NV(size_t n, size_t kc, const int16_t *restrict a, const int16_t *restrict b, \
                              int32_t *restrict c, size_t ldc, int accumulate) {                        \
    tile_body(M, NV, n, kc, a, b, c, ldc, accumulate);                                                   \
  }
#define DEFINE_TILES(M) DEFINE_TILE(M, 1) DEFINE_TILE(M, 2)
DEFINE_TILES(1) DEFINE_TILES(2) DEFINE_TILES(3) DEFINE_TILES(4) DEFINE_TILES(5) DEFINE_TILES(6)

static const tile_fn tiles[2][MR] = {
    {tile_1x1, tile_2x1, tile_3x1, tile_4x1, tile_5x1, tile_6x1},
    {tile_1x2, tile_2x2, tile_3x2, tile_4x2, tile_5x2, tile_6x2},
};

static void dlc_q8_gemm_6x16c2__avx2(size_t m, size_t n, size_t kc, const int16_t *a, const int16_t *b,
                                     int32_t *c, size_t ldc, int accumulate) {
  tiles[n > 8][m - 1](n, kc, a, b, c, ldc, accumulate);
}

/* ukernel_ib: the same 6 x 16c2 register tile with each k pair's B row read where the offset
   table says (one 64-byte run of the direct algorithm's copy of x) and always 16 columns. */
static inline __attribute__((always_inline)) void ib_body(const size_t M, size_t kc, const int16_t *restrict a,
                                                          const int16_t *restrict b, const ptrdiff_t *restrict boff,
                                                          int32_t *restrict c, size_t ldc, int accumulate) {
  __m256i acc0[MR], acc1[MR];
  FOR_ROWS {
    acc0[i] = _mm256_setzero_si256();
    acc1[i] = _mm256_setzero_si256();
  }
  _Pragma("GCC unroll 4") for (size_t k2 = 0; k2 < kc / 2; k2++) {
    const int16_t *bk = b + boff[k2];
    const __m256i b0 = _mm256_loadu_si256((const __m256i *)bk), b1 = _mm256_loadu_si256((const __m256i *)(bk + 16));
    FOR_ROWS {
      int32_t pair;
      memcpy(&pair, a + 2 * i, sizeof pair);
      __m256i ai = _mm256_set1_epi32(pair);
      acc0[i] = _mm256_add_epi32(acc0[i], _mm256_madd_epi16(ai, b0));
      acc1[i] = _mm256_add_epi32(acc1[i], _mm256_madd_epi16(ai, b1));
    }
    a += 2 * MR;
  }
  FOR_ROWS {
    int32_t *ci = c + i * ldc;
    if (accumulate) {
      acc0[i] = _mm256_add_epi32(acc0[i], _mm256_loadu_si256((const __m256i *)ci));
      acc1[i] = _mm256_add_epi32(acc1[i], _mm256_loadu_si256((const __m256i *)(ci + 8)));
    }
    _mm256_storeu_si256((__m256i *)ci, acc0[i]);
    _mm256_storeu_si256((__m256i *)(ci + 8), acc1[i]);
  }
}

typedef void (*ib_fn)(size_t kc, const int16_t *restrict a, const int16_t *restrict b, const ptrdiff_t *restrict boff,
                      int32_t *restrict c, size_t ldc, int accumulate);
#define DEFINE_IB(M)                                                                                     \
  static void ib_##M(size_t kc, const int16_t *restrict a, const int16_t *restrict b,                    \
                     const ptrdiff_t *restrict boff, int32_t *restrict c, size_t ldc, int accumulate) { \
    ib_body(M, kc, a, b, boff, c, ldc, accumulate);                                                      \
  }
DEFINE_IB(1) DEFINE_IB(2) DEFINE_IB(3) DEFINE_IB(4) DEFINE_IB(5) DEFINE_IB(6)
static const ib_fn ib_tiles[MR] = {ib_1, ib_2, ib_3, ib_4, ib_5, ib_6};

static void dlc_q8_gemm_ib_6x16c2__avx2(size_t m, size_t kc, const int16_t *a, const int16_t *b,
                                        const ptrdiff_t *boff, int32_t *c, size_t ldc, int accumulate) {
  ib_tiles[m - 1](kc, a, b, boff, c, ldc, accumulate);
}

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

/* Whole runs of 8 on the bias_s32 path; returns how many outputs it stored. */
static size_t store_s32(size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, int per_column,
                        uint8_t *out) {
  const __m256d lo = _mm256_set1_pd(q->lo_sat), hi = _mm256_set1_pd(q->hi_sat);
  const __m128i zp = _mm_set1_epi32(q->y_zero_point);
  const __m128i bias_r = _mm_set1_epi32(q->bias[c0]);
  const __m256d mult_r = _mm256_set1_pd(q->mult[c0]);
  const int is_signed = q->is_signed;
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
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

static void dlc_q8_store__avx2(size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, int per_column,
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
static void dlc_q8_pack_pairs__avx2(size_t n, const void *a, const void *b, int32_t zp, int is_signed, int16_t *dst) {
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

static void dlc_q8_pack_pairs_strided__avx2(size_t n, const void *src, int32_t zp, int is_signed, int16_t *dst,
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

static void dlc_q8_widen_run__avx2(size_t n, const void *src, int32_t zp, int is_signed, int16_t *dst) {
  const uint8_t *s = src;
  const __m256i z = _mm256_set1_epi16((int16_t)zp);
  size_t j = 0;
  for (; j + 16 <= n; j += 16) {
    const __m128i b = _mm_loadu_si128((const __m128i *)(s + j));
    const __m256i w = is_signed ? _mm256_cvtepi8_epi16(b) : _mm256_cvtepu8_epi16(b);
    _mm256_storeu_si256((__m256i *)(dst + j), _mm256_sub_epi16(w, z));
  }
  for (; j < n; j++) dst[j] = (int16_t)((is_signed ? (int32_t)(int8_t)s[j] : (int32_t)s[j]) - zp);
}

const dlc_q8_gemm_family dlc_q8_gemm__avx2 = {
    .name = "q8_gemm_6x16c2__avx2",
    .mr = MR,
    .nr = NR,
    .ukernel = dlc_q8_gemm_6x16c2__avx2,
    .store = dlc_q8_store__avx2,
    .pack_pairs = dlc_q8_pack_pairs__avx2,
    .pack_pairs_strided = dlc_q8_pack_pairs_strided__avx2,
    .ukernel_ib = dlc_q8_gemm_ib_6x16c2__avx2,
    .widen_run = dlc_q8_widen_run__avx2,
};
