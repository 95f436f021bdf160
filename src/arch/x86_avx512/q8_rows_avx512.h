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

static inline __attribute__((always_inline)) __mmask16 dlc_rows_lanes(ptrdiff_t n) {
  return n <= 0 ? (__mmask16)0 : n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u);
}

/* y[i * ldy + j] = requant(acc[i][j / 16] lane j % 16, channel c0 + j) for i < M, j < n (n <= 16 NV).
 * Strided (the depthwise kernel's order, STRIDED 1): lane l of acc[i][b] is channel c0 + 4 l + b,
 * all four vectors, and ql holds q's bias and mult_f in that lane order (64 a block, zeros past n;
 * ql = q otherwise): one byte shuffle per 16-byte lane puts the packs' bytes in channel order.
 * Strided pairs (STRIDED 2, n <= 32): acc[r] holds pixels 2 r (lanes 0..7) and 2 r + 1 (lanes
 * 8..15) of M, each as strided, with ql's first 8 entries of a vector for both. */
static inline __attribute__((always_inline)) void dlc_q8_rows_store_any(const int STRIDED, const size_t M,
                                                                        const size_t NV, __m512i acc[][DLC_ROWS_NV],
                                                                        size_t n, const dlc_q8_params *q,
                                                                        const dlc_q8_params *ql, size_t c0,
                                                                        uint8_t *y, size_t ldy) {
  /* q's fields read once: a store to y (bytes) could alias them for the compiler */
  const int fast = q->screen_wide, clamp = q->clamp_i, is_signed = q->is_signed;
  const __m512i lo_i = _mm512_set1_epi32(q->lo_i), hi_i = _mm512_set1_epi32(q->hi_i);
  const __m512i m_less_zp = _mm512_set1_epi32(0x4b400000 - q->y_zero_point);
  const __m512 half_in = _mm512_set1_ps(0.5f - DLC_Q8_WIDE_MARGIN);
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  /* strided: the packs leave byte 4 b + l' of 16-byte lane L for channel 16 L + 4 l' + b */
  const __m512i order_s = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15));
  const __mmask64 row_mask = n >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << n) - 1;
  __mmask16 cm[DLC_ROWS_NV];
  __m512 mf[DLC_ROWS_NV];
  _Pragma("GCC unroll 4") for (size_t v = 0; v < NV; v++) {
    cm[v] = STRIDED ? (__mmask16)0xFFFF : dlc_rows_lanes((ptrdiff_t)n - (ptrdiff_t)(16 * v));
    mf[v] = fast ? _mm512_maskz_loadu_ps(cm[v], ql->mult_f + c0 + 16 * v) : _mm512_setzero_ps();
    if (STRIDED == 2) mf[v] = _mm512_shuffle_f32x4(mf[v], mf[v], 0x44);
  }
  const size_t R = STRIDED == 2 ? (M + 1) / 2 : M; /* rows of accumulators */
  int32_t a[DLC_ROWS_MAX_M][16 * DLC_ROWS_NV];
  unsigned exact = 0; /* rows for the exact store */
  _Pragma("GCC unroll 6") for (size_t i = 0; i < R; i++) {
    uint8_t *yi = y + i * (STRIDED == 2 ? 2 : 1) * ldy;
    __m512i r[DLC_ROWS_NV];
    __m512 dmax = _mm512_setzero_ps();
    _Pragma("GCC unroll 4") for (size_t v = 0; v < NV; v++) {
      __m512 d;
      r[v] = dlc_q8_wide16(acc[i][v], mf[v], m_less_zp, &d);
      dmax = _mm512_range_ps(dmax, d, 0x0B);
    }
    if (fast && !_mm512_cmp_ps_mask(dmax, half_in, _CMP_GT_OQ)) {
      if (clamp)
        _Pragma("GCC unroll 4") for (size_t v = 0; v < NV; v++) r[v] = _mm512_min_epi32(_mm512_max_epi32(r[v], lo_i), hi_i);
      _Pragma("GCC unroll 4") for (size_t v = NV; v < DLC_ROWS_NV; v++) r[v] = _mm512_setzero_si512();
      /* the packs saturate to the type (what lies beyond saturates either way, quant.h) and leave
         dword 4 L + v = channels 16 v + 4 L .. + 3: one dword transpose puts them in order */
      const __m512i w01 = _mm512_packs_epi32(r[0], r[1]), w23 = _mm512_packs_epi32(r[2], r[3]);
      const __m512i b = is_signed ? _mm512_packs_epi16(w01, w23) : _mm512_packus_epi16(w01, w23);
      const __m512i z = STRIDED ? _mm512_shuffle_epi8(b, order_s) : _mm512_permutexvar_epi32(order, b);
      _mm512_mask_storeu_epi8(yi, row_mask, z);
      if (STRIDED == 2 && 2 * i + 1 < M) _mm256_mask_storeu_epi8(yi + ldy, (__mmask32)row_mask, _mm512_extracti64x4_epi64(z, 1));
    } else {
      /* for the exact store after the loop (a call here would make every accumulator live across
         it, and the compiler then keeps them all in memory): acc less the bias it started from, the
         products' exact s32 sum */
      _Pragma("GCC unroll 4") for (size_t v = 0; v < NV; v++) {
        __m512i bv = _mm512_maskz_loadu_epi32(cm[v], ql->bias + c0 + 16 * v);
        if (STRIDED == 2) bv = _mm512_shuffle_i64x2(bv, bv, 0x44);
        _mm512_storeu_si512(a[i] + 16 * v, _mm512_sub_epi32(acc[i][v], bv));
      }
      exact |= 1u << i;
    }
  }
  for (size_t i = 0; exact && i < M; i++) {
    const size_t row = STRIDED == 2 ? i / 2 : i, half = STRIDED == 2 ? 8 * (i % 2) : 0;
    if (exact >> row & 1) {
      int32_t u[16 * DLC_ROWS_NV];
      if (STRIDED)
        for (size_t j = 0; j < n; j++) u[j] = a[row][16 * (j % 4) + half + j / 4];
      dlc_q8_store__avx512(n, STRIDED ? u : a[row], q, c0, 1, y + i * ldy);
    }
  }
}

static inline __attribute__((always_inline)) void dlc_q8_rows_store(const size_t M, const size_t NV,
                                                                    __m512i acc[][DLC_ROWS_NV], size_t n,
                                                                    const dlc_q8_params *q, size_t c0, uint8_t *y,
                                                                    size_t ldy) {
  dlc_q8_rows_store_any(0, M, NV, acc, n, q, q, c0, y, ldy);
}

#endif
