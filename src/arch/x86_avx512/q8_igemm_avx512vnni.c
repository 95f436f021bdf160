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

#include "../../ukernel/config.h"
#include "q8_rows_avx512.h"

#define MR 6
#define NR 64
#define MR_NARROW 12 /* ukernel_s's rows where n <= 32: 12 x 2 accumulators */
#define NVMAX DLC_ROWS_NV
#define INLINE static inline __attribute__((always_inline))

INLINE __m512i bcast4(const uint8_t *p) {
  int32_t v;
  memcpy(&v, p, sizeof v);
  return _mm512_set1_epi32(v);
}

/* The dot products keep the tile's accumulators in named variables, c<row><vector>, and hand them
   to the epilogue through `out` (24 stores and loads in L1). As one array through both, gcc 12
   kept it in memory: the bias stored into it before the taps, loaded, stored again after them;
   as named variables through the epilogue as well, it spilled them inside the loop. On an RGB
   stem's 9 groups of four per tile those stores were a third of the tile's time. */
#define ROWS_X(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define DECL_ROW(i) __m512i c##i##_0 = b0, c##i##_1 = b1, c##i##_2 = b2, c##i##_3 = b3;
#define PTR_ROW(i) const uint8_t *p##i = M <= i ? NULL : STRIDED ? src[t] + (ptrdiff_t)i * pstep : src[t * MR + i];
#define DOT_ROW(i)                                                            \
  if (M > i) {                                                                \
    __m512i x = bcast4(p##i + 4 * u);                                         \
    if (FLIP) x = _mm512_xor_si512(x, fl);                                    \
    c##i##_0 = _mm512_dpbusd_epi32(c##i##_0, x, w0);                          \
    if (NV > 1) c##i##_1 = _mm512_dpbusd_epi32(c##i##_1, x, w1);              \
    if (NV > 2) c##i##_2 = _mm512_dpbusd_epi32(c##i##_2, x, w2);              \
    if (NV > 3) c##i##_3 = _mm512_dpbusd_epi32(c##i##_3, x, w3);              \
  }
#define SAVE_ROW(i)                                                  \
  if (M > i) {                                                       \
    _mm512_store_si512(out[i], c##i##_0);                            \
    if (NV > 1) _mm512_store_si512(out[i] + 16, c##i##_1);           \
    if (NV > 2) _mm512_store_si512(out[i] + 32, c##i##_2);           \
    if (NV > 3) _mm512_store_si512(out[i] + 48, c##i##_3);           \
  }

/* src: the indirection pointers (STRIDED 0) or a pointer per tap, the rows pstep apart (STRIDED 1) */
INLINE void dots(const size_t M, const size_t NV, const int FLIP, const int STRIDED, size_t n, size_t ntaps, size_t kq,
                 const uint8_t *const *restrict src, ptrdiff_t pstep, const int8_t *restrict w,
                 const dlc_q8_params *q, size_t c0, uint8_t *restrict y, size_t ldy, int32_t out[MR_NARROW][16 * NVMAX]) {
  const __m512i zero = _mm512_setzero_si512();
  const __m512i b0 = _mm512_maskz_loadu_epi32(dlc_rows_vmask(NV, n, 0), q->bias + c0);
  const __m512i b1 = NV > 1 ? _mm512_maskz_loadu_epi32(dlc_rows_vmask(NV, n, 1), q->bias + c0 + 16) : zero;
  const __m512i b2 = NV > 2 ? _mm512_maskz_loadu_epi32(dlc_rows_vmask(NV, n, 2), q->bias + c0 + 32) : zero;
  const __m512i b3 = NV > 3 ? _mm512_maskz_loadu_epi32(dlc_rows_vmask(NV, n, 3), q->bias + c0 + 48) : zero;
  ROWS_X(DECL_ROW)
  /* y's lines are first written by this tile's stores: fetched now, they are in L1 by then
     instead of the stores waiting on them (and the next tile's pointer stores behind those) */
  _Pragma("GCC unroll 12") for (size_t i = 0; i < M; i++) __builtin_prefetch(y + i * ldy, 1, 3);
  const __m512i fl = _mm512_set1_epi8((char)0x80);
  for (size_t t = 0; t < ntaps; t++) {
    ROWS_X(PTR_ROW)
    _Pragma("GCC unroll 2") for (size_t u = 0; u < kq; u++) {
      const __m512i w0 = _mm512_loadu_si512(w);
      const __m512i w1 = NV > 1 ? _mm512_loadu_si512(w + 64) : zero;
      const __m512i w2 = NV > 2 ? _mm512_loadu_si512(w + 128) : zero;
      const __m512i w3 = NV > 3 ? _mm512_loadu_si512(w + 192) : zero;
      w += 64 * NV;
      ROWS_X(DOT_ROW)
    }
  }

  ROWS_X(SAVE_ROW)
}

INLINE void tile(const size_t M, const size_t NV, const int FLIP, const int STRIDED, size_t n, size_t ntaps,
                 size_t kq, const uint8_t *const *restrict src, ptrdiff_t pstep, const int8_t *restrict w,
                 const dlc_q8_params *q, size_t c0, uint8_t *restrict y, size_t ldy) {
  _Alignas(64) int32_t out[MR_NARROW][16 * NVMAX];
  dots(M, NV, FLIP, STRIDED, n, ntaps, kq, src, pstep, w, q, c0, y, ldy, out);
  __m512i acc[MR_NARROW][NVMAX];
  for (size_t i = 0; i < M; i++)
    for (size_t v = 0; v < NV; v++) acc[i][v] = _mm512_load_si512(out[i] + 16 * v);
  dlc_q8_rows_store(M, NV, acc, n, q, c0, y, ldy);
}

typedef void (*tile_fn)(size_t n, size_t ntaps, size_t kq, const uint8_t *const *restrict src, ptrdiff_t pstep,
                        const int8_t *restrict w, const dlc_q8_params *q, size_t c0, uint8_t *restrict y,
                        size_t ldy);
#define DEFINE_TILE(M, NV, FLIP, S)                                                                          \
  static void tile_##M##x##NV##_##FLIP##S(size_t n, size_t ntaps, size_t kq, const uint8_t *const *restrict src, \
                                          ptrdiff_t pstep, const int8_t *restrict w, const dlc_q8_params *q,     \
                                          size_t c0, uint8_t *restrict y, size_t ldy) {                          \
    tile(M, NV, FLIP, S, n, ntaps, kq, src, pstep, w, q, c0, y, ldy);                                          \
  }
#define DEFINE_ROWS(NV, FLIP, S)                                                                              \
  DEFINE_TILE(1, NV, FLIP, S) DEFINE_TILE(2, NV, FLIP, S) DEFINE_TILE(3, NV, FLIP, S)                        \
  DEFINE_TILE(4, NV, FLIP, S) DEFINE_TILE(5, NV, FLIP, S) DEFINE_TILE(6, NV, FLIP, S)
#define DEFINE_FLIP(FLIP, S) DEFINE_ROWS(1, FLIP, S) DEFINE_ROWS(2, FLIP, S) DEFINE_ROWS(3, FLIP, S) DEFINE_ROWS(4, FLIP, S)
DEFINE_FLIP(0, 0)
DEFINE_FLIP(1, 0)
DEFINE_FLIP(0, 1)
DEFINE_FLIP(1, 1)
/* ukernel_s's taller tiles for one or two vectors */
#define DEFINE_TALL(NV, FLIP)                                                                                \
  DEFINE_TILE(7, NV, FLIP, 1) DEFINE_TILE(8, NV, FLIP, 1) DEFINE_TILE(9, NV, FLIP, 1)                        \
  DEFINE_TILE(10, NV, FLIP, 1) DEFINE_TILE(11, NV, FLIP, 1) DEFINE_TILE(12, NV, FLIP, 1)
DEFINE_TALL(1, 0)
DEFINE_TALL(2, 0)
DEFINE_TALL(1, 1)
DEFINE_TALL(2, 1)

#define ROWS(NV, FLIP, S)                                                                                    \
  {tile_1x##NV##_##FLIP##S, tile_2x##NV##_##FLIP##S, tile_3x##NV##_##FLIP##S, tile_4x##NV##_##FLIP##S,         \
   tile_5x##NV##_##FLIP##S, tile_6x##NV##_##FLIP##S}
#define TALL(NV, FLIP)                                                                                       \
  {tile_1x##NV##_##FLIP##1, tile_2x##NV##_##FLIP##1, tile_3x##NV##_##FLIP##1, tile_4x##NV##_##FLIP##1,         \
   tile_5x##NV##_##FLIP##1, tile_6x##NV##_##FLIP##1, tile_7x##NV##_##FLIP##1, tile_8x##NV##_##FLIP##1,         \
   tile_9x##NV##_##FLIP##1, tile_10x##NV##_##FLIP##1, tile_11x##NV##_##FLIP##1, tile_12x##NV##_##FLIP##1}
#define FLIPS(FLIP, S) {ROWS(1, FLIP, S), ROWS(2, FLIP, S), ROWS(3, FLIP, S), ROWS(4, FLIP, S)}
#define FLIPS_S(FLIP) {TALL(1, FLIP), TALL(2, FLIP), ROWS(3, FLIP, 1), ROWS(4, FLIP, 1)}
static const tile_fn tiles[2][2][NVMAX][MR_NARROW] = {
    {FLIPS(0, 0), FLIPS(1, 0)},
    {FLIPS_S(0), FLIPS_S(1)},
};

static void q8_igemm_6x64c4(size_t m, size_t n, size_t ntaps, size_t kq, const uint8_t *const *ind,
                            const int8_t *w, uint8_t flip, const dlc_q8_params *q, size_t c0, void *y, size_t ldy) {
  tiles[0][flip != 0][(n - 1) / 16][m - 1](n, ntaps, kq, ind, 0, w, q, c0, (uint8_t *)y, ldy);
}

static void q8_igemm_6x64c4_s(size_t m, size_t n, size_t ntaps, size_t kq, const uint8_t *const *tap,
                              ptrdiff_t pstep, const int8_t *w, uint8_t flip, const dlc_q8_params *q, size_t c0,
                              void *y, size_t ldy) {
  tiles[1][flip != 0][(n - 1) / 16][m - 1](n, ntaps, kq, tap, pstep, w, q, c0, (uint8_t *)y, ldy);
}

const dlc_q8_igemm_family dlc_q8_igemm__avx512vnni = {
    .name = "q8_igemm_6x64c4__avx512vnni",
    .mr = MR,
    .nr = NR,
    .ukernel = q8_igemm_6x64c4,
    .ukernel_s = q8_igemm_6x64c4_s,
    .mr_s_narrow = MR_NARROW,
};
