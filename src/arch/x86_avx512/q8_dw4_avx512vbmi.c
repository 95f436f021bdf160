/* q8_dw4_avx512vbmi.c - int8 depthwise NCHW on u8 x s8 quads (lowp_dw_ukernel.h, dlc_q8_dw4_fn).
 *
 * Per kernel row and quad of taps, a block of 16 output pixels is one 64-byte load of the input
 * row, one vpermb that puts each pixel's (up to) four taps into its s32 lane, and one vpdpbusd
 * with the quad's four weights broadcast: a 3 x 3 layer costs three of each per 16 outputs, where
 * widening the bytes to s32 or fp32 takes nine multiplies.
 *
 * Register tile: 4 output rows x 2 blocks of 16, eight independent accumulator chains to cover
 * vpdpbusd's latency; the rows left over go one at a time, a last block of fewer than 16 pixels
 * is stored under a mask (its lanes past n compute on bytes the driver's slack holds). */
#include <immintrin.h>
#include <stdint.h>

#include "../../ukernel/config.h"

#define TILE_ROWS 4

static inline __mmask16 lanes_below(size_t n) {
  return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1u);
}

static inline __attribute__((always_inline)) void tile(const size_t RB, const size_t CB, size_t n_left,
                                                       const uint8_t *x, size_t ldx, size_t sw, size_t kh,
                                                       size_t ky_step, size_t nq, const __m512i *perm,
                                                       const int32_t *w4, int32_t *acc, size_t ldacc) {
  __m512i a[TILE_ROWS][2];
  for (size_t r = 0; r < RB; r++)
    for (size_t c = 0; c < CB; c++) a[r][c] = _mm512_setzero_si512();
  for (size_t ky = 0; ky < kh; ky++) {
    const uint8_t *xr = x + ky * ky_step;
    for (size_t q = 0; q < nq; q++) {
      const __m512i wv = _mm512_set1_epi32(w4[ky * nq + q]);
      for (size_t r = 0; r < RB; r++)
        for (size_t c = 0; c < CB; c++) {
          const __m512i win = _mm512_loadu_si512(xr + r * ldx + c * 16 * sw);
          a[r][c] = _mm512_dpbusd_epi32(a[r][c], _mm512_permutexvar_epi8(perm[q], win), wv);
        }
    }
  }
  for (size_t r = 0; r < RB; r++)
    for (size_t c = 0; c < CB; c++) {
      const size_t left = n_left - 16 * c;
      if (left >= 16)
        _mm512_storeu_si512(acc + r * ldacc + 16 * c, a[r][c]);
      else
        _mm512_mask_storeu_epi32(acc + r * ldacc + 16 * c, lanes_below(left), a[r][c]);
    }
}

#define DEFINE_TILE(RB, CB)                                                                                 \
  static void tile_##RB##x##CB(size_t n_left, const uint8_t *x, size_t ldx, size_t sw, size_t kh,           \
                               size_t ky_step, size_t nq, const __m512i *perm, const int32_t *w4,           \
                               int32_t *acc, size_t ldacc) {                                                \
    tile(RB, CB, n_left, x, ldx, sw, kh, ky_step, nq, perm, w4, acc, ldacc);                                \
  }
DEFINE_TILE(4, 2) DEFINE_TILE(4, 1) DEFINE_TILE(1, 2) DEFINE_TILE(1, 1)

static void q8_dw4_4x32c4(size_t rows, size_t n, const uint8_t *x, size_t ldx, size_t sw, size_t kh,
                          size_t ky_step, size_t nq, const uint8_t *idx, const int32_t *w4, int32_t *acc,
                          size_t ldacc) {
  __m512i perm[DLC_Q8_DW4_MAX_QUADS];
  for (size_t q = 0; q < nq; q++) perm[q] = _mm512_loadu_si512(idx + 64 * q);
  size_t r = 0;
  for (; r + TILE_ROWS <= rows; r += TILE_ROWS)
    for (size_t j = 0; j < n; j += 32) {
      const uint8_t *xs = x + r * ldx + j * sw;
      int32_t *as = acc + r * ldacc + j;
      if (n - j > 16)
        tile_4x2(n - j, xs, ldx, sw, kh, ky_step, nq, perm, w4, as, ldacc);
      else
        tile_4x1(n - j, xs, ldx, sw, kh, ky_step, nq, perm, w4, as, ldacc);
    }
  for (; r < rows; r++)
    for (size_t j = 0; j < n; j += 32) {
      const uint8_t *xs = x + r * ldx + j * sw;
      int32_t *as = acc + r * ldacc + j;
      if (n - j > 16)
        tile_1x2(n - j, xs, ldx, sw, kh, ky_step, nq, perm, w4, as, ldacc);
      else
        tile_1x1(n - j, xs, ldx, sw, kh, ky_step, nq, perm, w4, as, ldacc);
    }
}

const dlc_q8_dw4_family dlc_q8_dw4__avx512vbmi = {
    .name = "q8_dwconv_4x32c4__avx512vbmi",
    .run = q8_dw4_4x32c4,
};
