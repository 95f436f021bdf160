/* int8 NHWC depthwise convolution in registers, AVX512-VNNI. The contract is lowp_dw_ukernel.h's
 * dlc_q8_dwn_family.
 *
 * In NHWC a depthwise tap of one pixel is a run of channels, each with its own weight: no
 * reduction across a dword for vpdpbusd to do. Widening each 16 channels to s32 for a
 * multiply-add per lane (vpmovzxbd + vpdpwssd) made the widening's shuffles the bottleneck, at 1.6x
 * oneDNN's time on MobileNetV2. Here a tap's 64 channels are one load, used as they are by four
 * vpdpbusd whose weight vectors keep one byte of each dword (k = 0..3, the others 0): vector k adds
 * channel 4 l + k into lane l of accumulator k. Four instructions for 64 channels, as many as the
 * widening needed for 64, with no shuffle and a quarter of the loads.
 *
 * Tile 4 x 64: four pixels' four accumulators (16 chains for an instruction of latency 4 issued
 * once a cycle), the tap's four weight vectors loaded once for the four pixels. Layers of up to 32
 * channels hold two pixels a vector (PAIR below), so their tiles are 8 pixels in as many registers
 * (MRN): a tile's fixed cost (bias, epilogue setup, the call and its pointers) shared by twice the
 * pixels, 5 to 10 % off 16- and 32-channel layers of 32 x 32. Layers of up to 16 channels hold four
 * pixels a vector (QUAD, one per 128-bit lane), tiles of 16 pixels: as pairs, half of each vector's
 * lanes had been empty, and the epilogue half a tile's time. Loads of x are
 * masked to the layer's channels, so a run never reads past its pixel's last channel (nor past
 * x). The accumulators start at the bias in lane order (the zero point's correction in it) and
 * each pixel is requantised in registers, put back in channel order by one byte shuffle and stored
 * as one run of bytes (q8_rows_avx512.h, strided). */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "../../ukernel/config.h"
#include "q8_rows_avx512.h"

#define MR 4
#define MRN 8  /* pixels a tile where the layer has at most 32 channels (PAIR: 4 rows of registers) */
#define MRQ 16 /* pixels a tile where it has at most 16 (QUAD: 4 rows of registers) */
#define NB 64 /* channels of a block */
#define INLINE static inline __attribute__((always_inline))

/* acc += the dword dot products of u8 x and s8 w, as an instruction on acc's own register: with the
   intrinsic, gcc 12 gives each result a new register and copies it back (or spills) every tap,
   twice the kernel's time. */
INLINE void dpbusd(__m512i *acc, __m512i x, __m512i w) { __asm__("vpdpbusd %2, %1, %0" : "+v"(*acc) : "v"(x), "v"(w)); }

/* Channels [c0, c0 + nb) (nb <= 64) of pixels [0, M), P pixels a vector. P 2 (PAIR, nb <= 32): a
   vector holds two pixels' channels, 2 r in its low 32 bytes and 2 r + 1 in its high, against
   weights and bias whose low halves are copied up: half the instructions of a vector per pixel,
   where lanes 8..15 would compute nothing (MobileNetV2's 32-channel layer). P 4 (QUAD, nb <= 16):
   the same with four pixels, 4 r + j in 128-bit lane j. */
/* src: the indirection pointers, mr = pstep a tap (STRIDED 0), or a pointer per tap, the pixels
   pstep apart (STRIDED 1). M <= MR P. */
INLINE void tile(const size_t M, const int FLIP, const int P, const int STRIDED, size_t nb, size_t ntaps,
                 size_t c0, const uint8_t *const *restrict src, ptrdiff_t pstep, const int8_t *restrict w,
                 const dlc_q8_params *q, const dlc_q8_params *ql, uint8_t *restrict y, size_t ldy) {
#define PTR(t, i) (STRIDED ? src[t] + (ptrdiff_t)(i) * pstep : src[(size_t)(t) * (size_t)pstep + (i)])
  const size_t R = (M + P - 1) / P; /* <= MR */
  /* PAIR with 32 channels and a pixel's neighbour right after it in x (stride 1): one load a pair */
  const int adjacent = P == 2 && STRIDED && nb == 32 && pstep == 32;
  /* QUAD with 16 channels at stride 1: four pixels are 64 bytes in a row, one load */
  const int adjacentq = P == 4 && STRIDED && nb == 16 && pstep == 16;
  const __mmask64 xm = nb >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << nb) - 1;
  const __m512i fl = _mm512_set1_epi8((char)0x80);
  __m512i acc[MR][DLC_ROWS_NV];
  _Pragma("GCC unroll 4") for (size_t k = 0; k < DLC_ROWS_NV; k++) {
    __m512i b = _mm512_loadu_si512(ql->bias + c0 + 16 * k);
    if (P == 2) b = _mm512_shuffle_i64x2(b, b, 0x44);
    if (P == 4) b = _mm512_shuffle_i32x4(b, b, 0x00);
    _Pragma("GCC unroll 4") for (size_t i = 0; i < R; i++) acc[i][k] = b;
  }
  _Pragma("GCC unroll 1") for (size_t t = 0; t < ntaps; t++) {
    /* PAIR / QUAD: each weight vector's first half / quarter to all, as a broadcast load (no shuffle) */
#define WLOAD(o) (P == 4   ? _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)(w + (o))))          \
                  : P == 2 ? _mm512_broadcast_i64x4(_mm256_loadu_si256((const __m256i *)(w + (o)))) \
                           : _mm512_loadu_si512(w + (o)))
    const __m512i w0 = WLOAD(0), w1 = WLOAD(64), w2 = WLOAD(128), w3 = WLOAD(192);
#undef WLOAD
    w += 256;
    _Pragma("GCC unroll 4") for (size_t i = 0; i < R; i++) {
      __m512i xb;
      if (P == 4 && adjacentq && 4 * i + 3 < M) {
        xb = _mm512_loadu_si512(PTR(t, 4 * i) + c0);
      } else if (P == 4) {
        /* each pixel's channels into its 128-bit lane, lanes past M zero */
        xb = _mm512_zextsi128_si512(_mm_maskz_loadu_epi8((__mmask16)xm, PTR(t, 4 * i) + c0));
        if (4 * i + 1 < M) xb = _mm512_inserti32x4(xb, _mm_maskz_loadu_epi8((__mmask16)xm, PTR(t, 4 * i + 1) + c0), 1);
        if (4 * i + 2 < M) xb = _mm512_inserti32x4(xb, _mm_maskz_loadu_epi8((__mmask16)xm, PTR(t, 4 * i + 2) + c0), 2);
        if (4 * i + 3 < M) xb = _mm512_inserti32x4(xb, _mm_maskz_loadu_epi8((__mmask16)xm, PTR(t, 4 * i + 3) + c0), 3);
      } else if (P == 2 && adjacent && 2 * i + 1 < M) {
        xb = _mm512_loadu_si512(PTR(t, 2 * i) + c0);
      } else if (P == 2) {
        const __m256i lo = _mm256_maskz_loadu_epi8((__mmask32)xm, PTR(t, 2 * i) + c0);
        const __m256i hi = 2 * i + 1 < M ? _mm256_maskz_loadu_epi8((__mmask32)xm, PTR(t, 2 * i + 1) + c0)
                                         : _mm256_setzero_si256();
        xb = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
      } else {
        xb = _mm512_maskz_loadu_epi8(xm, PTR(t, i) + c0);
      }
      if (FLIP) xb = _mm512_xor_si512(xb, fl);
      dpbusd(&acc[i][0], xb, w0);
      dpbusd(&acc[i][1], xb, w1);
      dpbusd(&acc[i][2], xb, w2);
      dpbusd(&acc[i][3], xb, w3);
    }
  }
  dlc_q8_rows_store_any(P, M, DLC_ROWS_NV, acc, nb, q, ql, c0, y + c0, ldy);
#undef PTR
}

typedef void (*tile_fn)(size_t nb, size_t ntaps, size_t c0, const uint8_t *const *restrict src, ptrdiff_t pstep,
                        const int8_t *restrict w, const dlc_q8_params *q, const dlc_q8_params *ql,
                        uint8_t *restrict y, size_t ldy);
#define DEFINE_TILE(M, FLIP, P, S)                                                                         \
  static void tile_##M##_##FLIP##_##P##_##S(size_t nb, size_t ntaps, size_t c0,                            \
                                            const uint8_t *const *restrict src, ptrdiff_t pstep,           \
                                            const int8_t *restrict w, const dlc_q8_params *q,               \
                                            const dlc_q8_params *ql, uint8_t *restrict y, size_t ldy) {     \
    tile(M, FLIP, P, S, nb, ntaps, c0, src, pstep, w, q, ql, y, ldy);                                       \
  }
#define DEFINE_ROWS(FLIP, P, S) \
  DEFINE_TILE(1, FLIP, P, S) DEFINE_TILE(2, FLIP, P, S) DEFINE_TILE(3, FLIP, P, S) DEFINE_TILE(4, FLIP, P, S)
#define DEFINE_ROWS8(FLIP, P, S)                                                                              \
  DEFINE_ROWS(FLIP, P, S) DEFINE_TILE(5, FLIP, P, S) DEFINE_TILE(6, FLIP, P, S) DEFINE_TILE(7, FLIP, P, S) \
      DEFINE_TILE(8, FLIP, P, S)
#define DEFINE_ROWS16(FLIP, S)                                                                                 \
  DEFINE_ROWS8(FLIP, 4, S) DEFINE_TILE(9, FLIP, 4, S) DEFINE_TILE(10, FLIP, 4, S) DEFINE_TILE(11, FLIP, 4, S) \
      DEFINE_TILE(12, FLIP, 4, S) DEFINE_TILE(13, FLIP, 4, S) DEFINE_TILE(14, FLIP, 4, S)                     \
          DEFINE_TILE(15, FLIP, 4, S) DEFINE_TILE(16, FLIP, 4, S)
#define DEFINE_ALL(S)                                                                                       \
  DEFINE_ROWS(0, 1, S) DEFINE_ROWS(1, 1, S) DEFINE_ROWS8(0, 2, S) DEFINE_ROWS8(1, 2, S) DEFINE_ROWS16(0, S) \
      DEFINE_ROWS16(1, S)
DEFINE_ALL(0)
DEFINE_ALL(1)

#define ROWS(FLIP, P, S) \
  tile_1_##FLIP##_##P##_##S, tile_2_##FLIP##_##P##_##S, tile_3_##FLIP##_##P##_##S, tile_4_##FLIP##_##P##_##S
#define ROWS8(FLIP, P, S) \
  ROWS(FLIP, P, S), tile_5_##FLIP##_##P##_##S, tile_6_##FLIP##_##P##_##S, tile_7_##FLIP##_##P##_##S, tile_8_##FLIP##_##P##_##S
#define ROWS16(FLIP, S)                                                                                     \
  {ROWS8(FLIP, 4, S), tile_9_##FLIP##_4_##S, tile_10_##FLIP##_4_##S, tile_11_##FLIP##_4_##S, tile_12_##FLIP##_4_##S, \
   tile_13_##FLIP##_4_##S, tile_14_##FLIP##_4_##S, tile_15_##FLIP##_4_##S, tile_16_##FLIP##_4_##S}
#define MODES(S) {{{ROWS(0, 1, S)}, {ROWS(1, 1, S)}}, {{ROWS8(0, 2, S)}, {ROWS8(1, 2, S)}}, {ROWS16(0, S), ROWS16(1, S)}}
/* [strided][mode: one pixel, PAIR, QUAD][flip][m - 1]; m <= MR, MRN, MRQ */
static const tile_fn tiles[2][3][2][MRQ] = {MODES(0), MODES(1)};

/* m <= MR, or <= MRN where c <= 32 (every block PAIR), or <= MRQ where c <= 16 (QUAD); a last block
   of up to 32 or 16 channels after full ones is PAIR or QUAD with m <= MR; not strided: pstep is the
   pointers' mr */
static void run(int strided, size_t m, size_t c, size_t ntaps, const uint8_t *const *src, ptrdiff_t pstep,
                const int8_t *w, uint8_t flip, const dlc_q8_params *q, const dlc_q8_params *ql, void *y, size_t ldy) {
  for (size_t c0 = 0; c0 < c; c0 += NB) {
    const size_t nb = c - c0 < NB ? c - c0 : NB;
    tiles[strided][nb <= 16 ? 2 : nb <= 32][flip != 0][m - 1](nb, ntaps, c0, src, pstep, w + 4 * c0 * ntaps, q, ql,
                                                              (uint8_t *)y, ldy);
  }
}

static void q8_dwconv_nhwc_4x64c4(size_t m, size_t c, size_t ntaps, const uint8_t *const *ind, const int8_t *w,
                                  uint8_t flip, const dlc_q8_params *q, const dlc_q8_params *ql, void *y,
                                  size_t ldy) {
  run(0, m, c, ntaps, ind, c <= 16 ? MRQ : c <= 32 ? MRN : MR, w, flip, q, ql, y, ldy);
}

static void q8_dwconv_nhwc_4x64c4_s(size_t m, size_t c, size_t ntaps, const uint8_t *const *tap, ptrdiff_t pstep,
                                    const int8_t *w, uint8_t flip, const dlc_q8_params *q, const dlc_q8_params *ql,
                                    void *y, size_t ldy) {
  run(1, m, c, ntaps, tap, pstep, w, flip, q, ql, y, ldy);
}

const dlc_q8_dwn_family dlc_q8_dwn__avx512vnni = {
    .name = "q8_dwconv_nhwc_4x64c4__avx512vnni",
    .mr = MR,
    .mr_narrow = MRN,
    .mr_quad = MRQ,
    .run = q8_dwconv_nhwc_4x64c4,
    .run_s = q8_dwconv_nhwc_4x64c4_s,
};
