/* int8 NHWC indirect GEMM on u8 x s8 dot products of four, AVX512-VNNI (vpdpbusd on zmm). The
 * contract is lowp_gemm_ukernel.h's dlc_q8_igemm_family.
 *
 * Tile 6 x 64c4: per tap and group of four input channels, four zmm of weights (64 output channels
 * x 4 bytes) and, per row, the pixel's four activations broadcast as one dword into a register
 * (they are vpdpbusd's unsigned operand, which cannot come from memory) against all four: 24
 * vpdpbusd per 4 weight loads and 6 broadcasts, 24 independent chains for an instruction of
 * latency 4 that Zen 4 issues once a cycle. Fewer columns (the last panel of a layer whose
 * channels are not a multiple of 64) use fewer vectors, not masked ones, so a 24-channel layer
 * does 2 vectors of work per row, not 4.
 *
 * The accumulators start at the plan's bias (with the zero point's correction), and each row is
 * requantised while in registers (q8_rows_avx512.h). */
#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../core/kernels.h"
#include "q8_rows_avx512.h"

#define MR 6
#define NR 64
#define NVMAX DLC_ROWS_NV
#define INLINE static inline __attribute__((always_inline))

INLINE __m512i bcast4(const uint8_t *p) {
  int32_t v;
  memcpy(&v, p, sizeof v);
  return _mm512_set1_epi32(v);
}

INLINE void tile(const size_t M, const size_t NV, const int FLIP, size_t n, size_t ntaps, size_t kq,
                 const uint8_t *const *restrict ind, const int8_t *restrict w, const dlc_q8_params *q, size_t c0,
                 uint8_t *restrict y, size_t ldy) {
  __mmask16 cm[NVMAX];
  __m512i acc[MR][NVMAX];
  for (size_t v = 0; v < NV; v++) {
    cm[v] = dlc_rows_lanes((ptrdiff_t)n - (ptrdiff_t)(16 * v));
    const __m512i b = _mm512_maskz_loadu_epi32(cm[v], q->bias + c0 + 16 * v);
    _Pragma("GCC unroll 6") for (size_t i = 0; i < M; i++) acc[i][v] = b;
  }
  /* y's lines are first written by this tile's stores: fetched now, they are in L1 by then
     instead of the stores waiting on them (and the next tile's pointer stores behind those) */
  _Pragma("GCC unroll 6") for (size_t i = 0; i < M; i++) __builtin_prefetch(y + i * ldy, 1, 3);
  const __m512i fl = _mm512_set1_epi8((char)0x80);
  for (size_t t = 0; t < ntaps; t++) {
    const uint8_t *p[MR];
    _Pragma("GCC unroll 6") for (size_t i = 0; i < M; i++) p[i] = ind[t * MR + i];
    _Pragma("GCC unroll 2") for (size_t u = 0; u < kq; u++) {
      __m512i wv[NVMAX];
      for (size_t v = 0; v < NV; v++) wv[v] = _mm512_loadu_si512(w + 64 * v);
      w += 64 * NV;
      _Pragma("GCC unroll 6") for (size_t i = 0; i < M; i++) {
        __m512i b = bcast4(p[i] + 4 * u);
        if (FLIP) b = _mm512_xor_si512(b, fl);
        for (size_t v = 0; v < NV; v++) acc[i][v] = _mm512_dpbusd_epi32(acc[i][v], b, wv[v]);
      }
    }
  }

  dlc_q8_rows_store(M, NV, acc, n, q, c0, y, ldy);
}

typedef void (*tile_fn)(size_t n, size_t ntaps, size_t kq, const uint8_t *const *restrict ind,
                        const int8_t *restrict w, const dlc_q8_params *q, size_t c0, uint8_t *restrict y,
                        size_t ldy);
#define DEFINE_TILE(M, NV, FLIP)                                                                           \
  static void tile_##M##x##NV##_##FLIP(size_t n, size_t ntaps, size_t kq, const uint8_t *const *restrict ind, \
                                       const int8_t *restrict w, const dlc_q8_params *q, size_t c0,          \
                                       uint8_t *restrict y, size_t ldy) {                                    \
    tile(M, NV, FLIP, n, ntaps, kq, ind, w, q, c0, y, ldy);                                                  \
  }
#define DEFINE_ROWS(NV, FLIP)                                                                              \
  DEFINE_TILE(1, NV, FLIP) DEFINE_TILE(2, NV, FLIP) DEFINE_TILE(3, NV, FLIP) DEFINE_TILE(4, NV, FLIP)      \
  DEFINE_TILE(5, NV, FLIP) DEFINE_TILE(6, NV, FLIP)
#define DEFINE_FLIP(FLIP) DEFINE_ROWS(1, FLIP) DEFINE_ROWS(2, FLIP) DEFINE_ROWS(3, FLIP) DEFINE_ROWS(4, FLIP)
DEFINE_FLIP(0)
DEFINE_FLIP(1)

#define ROWS(NV, FLIP)                                                                                      \
  {tile_1x##NV##_##FLIP, tile_2x##NV##_##FLIP, tile_3x##NV##_##FLIP, tile_4x##NV##_##FLIP,                 \
   tile_5x##NV##_##FLIP, tile_6x##NV##_##FLIP}
static const tile_fn tiles[2][NVMAX][MR] = {
    {ROWS(1, 0), ROWS(2, 0), ROWS(3, 0), ROWS(4, 0)},
    {ROWS(1, 1), ROWS(2, 1), ROWS(3, 1), ROWS(4, 1)},
};

static void q8_igemm_6x64c4(size_t m, size_t n, size_t ntaps, size_t kq, const uint8_t *const *ind,
                            const int8_t *w, uint8_t flip, const dlc_q8_params *q, size_t c0, void *y, size_t ldy) {
  tiles[flip != 0][(n - 1) / 16][m - 1](n, ntaps, kq, ind, w, q, c0, (uint8_t *)y, ldy);
}

const dlc_q8_igemm_family dlc_q8_igemm__avx512vnni = {
    .name = "q8_igemm_6x64c4__avx512vnni",
    .mr = MR,
    .nr = NR,
    .ukernel = q8_igemm_6x64c4,
};
