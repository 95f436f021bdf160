/* q8_rows_avx512.h - the int8 epilogue of kernels whose tile is rows of up to 64 output channels
 * in the lanes of four accumulators (NHWC: a row is an output pixel, its channels contiguous in
 * y): q8_igemm_avx512vnni.c and q8_dwnhwc_avx512vnni.c. Each accumulator holds acc + bias already
 * (the kernels start from the bias). A row is requantised in the lanes on the wide screen of
 * quant.h (per-channel multipliers in the lanes), clamped in integers where the plan clamps inside
 * the type, narrowed by packs with the type's saturation and put back in channel order by one
 * dword permute: one 64-byte store per row. A row with a lane near a tie, or a plan without the
 * wide screen, goes through the exact store. Needs AVX-512 F/BW. */
#ifndef DLC_Q8_ROWS_AVX512_H
#define DLC_Q8_ROWS_AVX512_H

#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "../../quant/quant.h"
#include "q8_store_avx512.h"
#include "q8_wide_avx512.h"

#define DLC_ROWS_NV 4 /* accumulators per row: 64 channels */
#define DLC_ROWS_MAX_M 16

/* The lanes of vector v of a row of n channels in NV = ceil(n / 16) vectors: all but the last
   full, without branches. */
static inline __attribute__((always_inline)) __mmask16 dlc_rows_vmask(size_t NV, size_t n, size_t v) {
  return v + 1 < NV ? (__mmask16)0xFFFF : (__mmask16)(0xFFFFu >> (16 * NV - n));
}

/* The epilogue's constants, set once per tile (dlc_q8_rows_setup) for its rows (dlc_q8_row_wide).
 * Strided (the depthwise kernel's order, STRIDED 1): lane l of a row's accumulator b is channel
 * c0 + 4 l + b, all four vectors, and ql holds q's bias and mult_f in that lane order (64 a block,
 * zeros past n; ql = q otherwise): one byte shuffle per 16-byte lane puts the packs' bytes in
 * channel order. Strided pairs (STRIDED 2, n <= 32): a row of accumulators holds two pixels (lanes
 * 0..7 and 8..15 of each), each as strided, with ql's first 8 entries of a vector for both; strided
 * quads (STRIDED 4, n <= 16): four pixels (lanes 4 j .. 4 j + 3 pixel j), ql's first 4 entries. */
typedef struct dlc_q8_rows_k {
  int fast, clamp, is_signed;
  __m512i lo8, hi8;         /* the clamp's bounds as bytes of the type (inside it: quant.h) */
  __m512i m_less_zp;
  __m512 half_in;
  __m512 mf[DLC_ROWS_NV];
  __mmask16 cm[DLC_ROWS_NV];
  __mmask64 row_mask;
} dlc_q8_rows_k;

static inline __attribute__((always_inline)) void dlc_q8_rows_setup(const int STRIDED, const size_t NV,
                                                                    dlc_q8_rows_k *k, size_t n,
                                                                    const dlc_q8_params *q,
                                                                    const dlc_q8_params *ql, size_t c0) {
  /* q's fields read once: a store to y (bytes) could alias them for the compiler */
  k->fast = q->screen_wide;
  k->clamp = q->clamp_i;
  k->is_signed = q->is_signed;
  k->lo8 = _mm512_set1_epi8((char)q->lo_i);
  k->hi8 = _mm512_set1_epi8((char)q->hi_i);
  k->m_less_zp = _mm512_set1_epi32(0x4b400000 - q->y_zero_point);
  k->half_in = _mm512_set1_ps(0.5f - DLC_Q8_WIDE_MARGIN);
  k->row_mask = n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
  _Pragma("GCC unroll 4") for (size_t v = 0; v < NV; v++) {
    k->cm[v] = STRIDED ? (__mmask16)0xFFFF : dlc_rows_vmask(NV, n, v);
    k->mf[v] = k->fast ? _mm512_maskz_loadu_ps(k->cm[v], ql->mult_f + c0 + 16 * v) : _mm512_setzero_ps();
    if (STRIDED == 2) k->mf[v] = _mm512_shuffle_f32x4(k->mf[v], k->mf[v], 0x44);
    if (STRIDED == 4) k->mf[v] = _mm512_shuffle_f32x4(k->mf[v], k->mf[v], 0x00);
  }
}

/* One row of accumulators (acc + bias; NV of them, the rest ignored) requantised in the lanes on
 * the wide screen: its bytes in channel order to *z and 1, or 0 where the plan has no wide screen
 * or a lane is near a tie (the caller takes the exact store). Clamped in bytes after the packs'
 * saturation: the bounds lie inside the type, where clamping and saturating commute. */
static inline __attribute__((always_inline)) int dlc_q8_row_wide(const int STRIDED, const size_t NV,
                                                                 const dlc_q8_rows_k *k, __m512i a0, __m512i a1,
                                                                 __m512i a2, __m512i a3, __m512i *z) {
  const __m512i a[DLC_ROWS_NV] = {a0, a1, a2, a3};
  __m512i r[DLC_ROWS_NV];
  __m512 d[DLC_ROWS_NV];
  _Pragma("GCC unroll 4") for (size_t v = 0; v < NV; v++) r[v] = dlc_q8_wide16(a[v], k->mf[v], k->m_less_zp, &d[v]);
  /* the largest |d| of the row as a tree of ranges (imm 0x0B: the larger magnitude, sign cleared) */
  const __m512 d01 = _mm512_range_ps(d[0], NV > 1 ? d[1] : d[0], 0x0B);
  const __m512 d23 = NV > 3 ? _mm512_range_ps(d[2], d[3], 0x0B) : NV > 2 ? d[2] : d01;
  const __m512 dmax = NV > 2 ? _mm512_range_ps(d01, d23, 0x0B) : d01;
  if (!k->fast || _mm512_cmp_ps_mask(dmax, k->half_in, _CMP_GT_OQ)) return 0;
  _Pragma("GCC unroll 4") for (size_t v = NV; v < DLC_ROWS_NV; v++) r[v] = _mm512_setzero_si512();
  /* the packs saturate to the type (what lies beyond saturates either way, quant.h) and leave
     dword 4 L + v = channels 16 v + 4 L .. + 3: one dword transpose puts them in order */
  const __m512i w01 = _mm512_packs_epi32(r[0], r[1]), w23 = _mm512_packs_epi32(r[2], r[3]);
  __m512i b = k->is_signed ? _mm512_packs_epi16(w01, w23) : _mm512_packus_epi16(w01, w23);
  if (k->clamp)
    b = k->is_signed ? _mm512_min_epi8(_mm512_max_epi8(b, k->lo8), k->hi8)
                     : _mm512_min_epu8(_mm512_max_epu8(b, k->lo8), k->hi8);
  if (STRIDED) {
    const __m512i order_s =
        _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
    *z = _mm512_shuffle_epi8(b, order_s); /* byte 4 b + l' of 16-byte lane L: channel 16 L + 4 l' + b */
  } else {
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    *z = _mm512_permutexvar_epi32(order, b);
  }
  return 1;
}

/* For the exact store after a tile's rows (a call among them would make every accumulator live
   across it, and the compiler then keeps them all in memory): a row's accumulators less the bias
   they started from, the products' exact s32 sums, to a. */
static inline __attribute__((always_inline)) void dlc_q8_row_defer(const int STRIDED, const size_t NV,
                                                                   const dlc_q8_rows_k *k, const dlc_q8_params *ql,
                                                                   size_t c0, __m512i a0, __m512i a1, __m512i a2,
                                                                   __m512i a3, int32_t *a) {
  const __m512i acc[DLC_ROWS_NV] = {a0, a1, a2, a3};
  _Pragma("GCC unroll 4") for (size_t v = 0; v < NV; v++) {
    __m512i bv = _mm512_maskz_loadu_epi32(k->cm[v], ql->bias + c0 + 16 * v);
    if (STRIDED == 2) bv = _mm512_shuffle_i64x2(bv, bv, 0x44);
    if (STRIDED == 4) bv = _mm512_shuffle_i32x4(bv, bv, 0x00);
    _mm512_storeu_si512(a + 16 * v, _mm512_sub_epi32(acc[v], bv));
  }
}

/* The deferred rows (bit i of exact: row i of accumulators) through the exact store: output row i
   of M at y + i * ldy. */
static inline __attribute__((always_inline)) void dlc_q8_rows_exact(const int STRIDED, const size_t M, unsigned exact,
                                                                    int32_t a[][16 * DLC_ROWS_NV], size_t n,
                                                                    const dlc_q8_params *q, size_t c0, uint8_t *y,
                                                                    size_t ldy) {
  const size_t P = STRIDED >= 2 ? (size_t)STRIDED : 1; /* pixels a row of accumulators */
  for (size_t i = 0; exact && i < M; i++) {
    const size_t row = i / P, part = 16 / P * (i % P); /* the pixel's first lane */
    if (exact >> row & 1) {
      int32_t u[16 * DLC_ROWS_NV];
      if (STRIDED)
        for (size_t j = 0; j < n; j++) u[j] = a[row][16 * (j % 4) + part + j / 4];
      dlc_q8_store__avx512(n, STRIDED ? u : a[row], q, c0, 1, y + i * ldy);
    }
  }
}

/* y[i * ldy + j] = requant(acc[i][j / 16] lane j % 16, channel c0 + j) for i < M, j < n (n <= 16 NV),
 * or in the strided orders above. */
static inline __attribute__((always_inline)) void dlc_q8_rows_store_any(const int STRIDED, const size_t M,
                                                                        const size_t NV, __m512i acc[][DLC_ROWS_NV],
                                                                        size_t n, const dlc_q8_params *q,
                                                                        const dlc_q8_params *ql, size_t c0,
                                                                        uint8_t *y, size_t ldy) {
  dlc_q8_rows_k k;
  dlc_q8_rows_setup(STRIDED, NV, &k, n, q, ql, c0);
  const size_t P = STRIDED >= 2 ? (size_t)STRIDED : 1; /* pixels a row of accumulators */
  const size_t R = (M + P - 1) / P;                    /* rows of accumulators */
  int32_t a[DLC_ROWS_MAX_M][16 * DLC_ROWS_NV];
  unsigned exact = 0; /* rows for the exact store */
  _Pragma("GCC unroll 6") for (size_t i = 0; i < R; i++) {
    uint8_t *yi = y + i * P * ldy;
    __m512i z;
    const __m512i z0 = _mm512_setzero_si512();
    const __m512i a0 = acc[i][0], a1 = NV > 1 ? acc[i][1] : z0, a2 = NV > 2 ? acc[i][2] : z0,
                  a3 = NV > 3 ? acc[i][3] : z0;
    if (dlc_q8_row_wide(STRIDED, NV, &k, a0, a1, a2, a3, &z)) {
      if (STRIDED == 4 && n == 16 && ldy == 16 && 4 * i + 3 < M) {
        _mm512_storeu_si512(yi, z); /* four pixels of 16 channels, one after another */
      } else if (STRIDED == 4) {
        _mm_mask_storeu_epi8(yi, (__mmask16)k.row_mask, _mm512_castsi512_si128(z));
        if (4 * i + 1 < M) _mm_mask_storeu_epi8(yi + ldy, (__mmask16)k.row_mask, _mm512_extracti32x4_epi32(z, 1));
        if (4 * i + 2 < M) _mm_mask_storeu_epi8(yi + 2 * ldy, (__mmask16)k.row_mask, _mm512_extracti32x4_epi32(z, 2));
        if (4 * i + 3 < M) _mm_mask_storeu_epi8(yi + 3 * ldy, (__mmask16)k.row_mask, _mm512_extracti32x4_epi32(z, 3));
      } else {
        _mm512_mask_storeu_epi8(yi, k.row_mask, z);
        if (STRIDED == 2 && 2 * i + 1 < M)
          _mm256_mask_storeu_epi8(yi + ldy, (__mmask32)k.row_mask, _mm512_extracti64x4_epi64(z, 1));
      }
    } else {
      dlc_q8_row_defer(STRIDED, NV, &k, ql, c0, a0, a1, a2, a3, a[i]);
      exact |= 1u << i;
    }
  }
  dlc_q8_rows_exact(STRIDED, M, exact, a, n, q, c0, y, ldy);
}

static inline __attribute__((always_inline)) void dlc_q8_rows_store(const size_t M, const size_t NV,
                                                                    __m512i acc[][DLC_ROWS_NV], size_t n,
                                                                    const dlc_q8_params *q, size_t c0, uint8_t *y,
                                                                    size_t ldy) {
  dlc_q8_rows_store_any(0, M, NV, acc, n, q, q, c0, y, ldy);
}

#endif
