/* int8 NHWC depthwise convolution in registers, AVX512-VNNI. The contract is lowp_dw_ukernel.h's
 * dlc_q8_dwn_family.
 *
 * In NHWC a depthwise tap of one pixel is a run of channels, each with its own weight: there is
 * no reduction across lanes to give vpdpbusd four products per lane without first interleaving
 * four taps' bytes. Instead each run of 16 channels is widened to s32 (vpmovzxbd / vpmovsxbd,
 * whose high halves are then 0 or the sign's -1) and meets the tap's weights held as s16 pairs
 * (w, 0): vpdpwssd adds x * w + hi * 0, one multiply-add per lane and instruction, exact.
 *
 * Tile 6 x 64: six pixels' accumulators for 64 channels (24 chains for an instruction of latency 4
 * issued once a cycle), the tap's four weight vectors loaded once for the six pixels. Every load
 * of x is masked to the layer's channels, so a run never reads past its pixel's last channel (nor
 * past x). The accumulators start at the bias (the zero point's correction in it) and each pixel
 * is requantised in registers and stored as one run of bytes (q8_rows_avx512.h). */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "../../core/kernels.h"
#include "q8_rows_avx512.h"

#define MR 6
#define NB 64 /* channels of a block */
#define NVMAX DLC_ROWS_NV
#define INLINE static inline __attribute__((always_inline))

/* Channels [c0, c0 + nb) (nb <= 64, NV = ceil(nb / 16) vectors) of pixels [0, M). */
INLINE void tile(const size_t M, const size_t NV, const int SIGNED, size_t nb, size_t ntaps, size_t c0,
                 const uint8_t *const *restrict ind, const int32_t *restrict w, const dlc_q8_params *q,
                 uint8_t *restrict y, size_t ldy) {
  __mmask16 cm[NVMAX];
  __m512i acc[MR][NVMAX];
  for (size_t v = 0; v < NV; v++) {
    cm[v] = dlc_rows_lanes((ptrdiff_t)nb - (ptrdiff_t)(16 * v));
    const __m512i b = _mm512_maskz_loadu_epi32(cm[v], q->bias + c0 + 16 * v);
    _Pragma("GCC unroll 6") for (size_t i = 0; i < M; i++) acc[i][v] = b;
  }
  const size_t nw = 16 * NV;
  for (size_t t = 0; t < ntaps; t++) {
    __m512i wv[NVMAX];
    for (size_t v = 0; v < NV; v++) wv[v] = _mm512_loadu_si512(w + t * nw + 16 * v);
    _Pragma("GCC unroll 6") for (size_t i = 0; i < M; i++) {
      const uint8_t *p = ind[t * MR + i] + c0;
      for (size_t v = 0; v < NV; v++) {
        const __m128i b = _mm_maskz_loadu_epi8(cm[v], p + 16 * v);
        const __m512i xv = SIGNED ? _mm512_cvtepi8_epi32(b) : _mm512_cvtepu8_epi32(b);
        acc[i][v] = _mm512_dpwssd_epi32(acc[i][v], xv, wv[v]);
      }
    }
  }
  dlc_q8_rows_store(M, NV, acc, nb, q, c0, y + c0, ldy);
}

typedef void (*tile_fn)(size_t nb, size_t ntaps, size_t c0, const uint8_t *const *restrict ind,
                        const int32_t *restrict w, const dlc_q8_params *q, uint8_t *restrict y, size_t ldy);
#define DEFINE_TILE(M, NV, SIGNED)                                                                         \
  static void tile_##M##x##NV##_##SIGNED(size_t nb, size_t ntaps, size_t c0, const uint8_t *const *restrict ind, \
                                         const int32_t *restrict w, const dlc_q8_params *q,                    \
                                         uint8_t *restrict y, size_t ldy) {                                    \
    tile(M, NV, SIGNED, nb, ntaps, c0, ind, w, q, y, ldy);                                                     \
  }
#define DEFINE_ROWS(NV, SIGNED)                                                                            \
  DEFINE_TILE(1, NV, SIGNED) DEFINE_TILE(2, NV, SIGNED) DEFINE_TILE(3, NV, SIGNED) DEFINE_TILE(4, NV, SIGNED) \
  DEFINE_TILE(5, NV, SIGNED) DEFINE_TILE(6, NV, SIGNED)
#define DEFINE_SIGN(SIGNED) DEFINE_ROWS(1, SIGNED) DEFINE_ROWS(2, SIGNED) DEFINE_ROWS(3, SIGNED) DEFINE_ROWS(4, SIGNED)
DEFINE_SIGN(0)
DEFINE_SIGN(1)

#define ROWS(NV, SIGNED)                                                                                    \
  {tile_1x##NV##_##SIGNED, tile_2x##NV##_##SIGNED, tile_3x##NV##_##SIGNED, tile_4x##NV##_##SIGNED,         \
   tile_5x##NV##_##SIGNED, tile_6x##NV##_##SIGNED}
static const tile_fn tiles[2][NVMAX][MR] = {
    {ROWS(1, 0), ROWS(2, 0), ROWS(3, 0), ROWS(4, 0)},
    {ROWS(1, 1), ROWS(2, 1), ROWS(3, 1), ROWS(4, 1)},
};

static void q8_dwconv_nhwc_6x64(size_t m, size_t c, size_t ntaps, const uint8_t *const *ind, const int32_t *w,
                                int is_signed, const dlc_q8_params *q, void *y, size_t ldy) {
  for (size_t c0 = 0; c0 < c; c0 += NB) {
    const size_t nb = c - c0 < NB ? c - c0 : NB;
    tiles[is_signed != 0][(nb - 1) / 16][m - 1](nb, ntaps, c0, ind, w + c0 * ntaps, q, (uint8_t *)y, ldy);
  }
}

const dlc_q8_dwn_family dlc_q8_dwn__avx512vnni = {
    .name = "q8_dwconv_nhwc_6x64__avx512vnni",
    .mr = MR,
    .run = q8_dwconv_nhwc_6x64,
};
