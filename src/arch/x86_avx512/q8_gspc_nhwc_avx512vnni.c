/* int8 NHWC grouped convolution of few input channels per group in registers, AVX512-VNNI. The
 * contract is lowp_gspc_ukernel.h's dlc_q8_gcn_family.
 *
 * With 2 to 16 channels per group, a GEMM per group (the indirect GEMM's 64 output lanes) or the
 * s16 pairs of groups in lanes (GSPC: a repack of x, a store call per pixel) leave most of the work
 * outside the products: on WRN-40-2 g16 the 32 x 32 layer of 2 channels per group took longer than
 * the dense layer of 16x its products. Here the lanes are output channels, and each lane's quad of
 * inputs is gathered from x in registers: one masked 64-byte load of a pixel's channel run per tap
 * holds every input channel of a block of 64 output channels, and one permute per vector of 16
 * outputs puts each output channel's four inputs (four channels of one tap, or two channels of two
 * taps with 2 per group) in its lane for one vpdpbusd. No copy of x, no s32 round trip: the
 * accumulators start at the bias (the zero point's correction in it) and each pixel is requantised
 * in registers and stored as one run (q8_rows_avx512.h).
 *
 * Tile: up to 4 pixels x 4 vectors (16 accumulators, 16 chains for vpdpbusd's latency of 4), a
 * step's weight vectors and permute indices in registers, read once for the tile's pixels.
 *
 * With 16 or more output channels per group in whole vectors (g->bcast), every lane of a vector
 * takes the same quad: it is broadcast from memory (a load) rather than permuted (a shuffle, one a
 * cycle on Zen 5, which then bounds the products: WRN-40-2 g2 32 x 32 at 16 channels per group ran
 * at 40% of the peak). A call takes up to 8 pixels of a row, run as two tiles of at most 4 (the
 * driver passes two tiles a call with the broadcasts). */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "../../ukernel/config.h"
#include "q8_rows_avx512.h"

#define MR 8  /* pixels a call, run as one or two tiles */
#define MRP 4 /* pixels a tile (8 x 2 vectors of broadcasts spilled its accumulators: 1.13x the time) */
#define INLINE static inline __attribute__((always_inline))

/* acc += the dword dot products of u8 x and s8 w on acc's own register (see q8_dwnhwc_avx512vnni.c:
   gcc 12 copies the intrinsic's result around otherwise) */
INLINE void dpbusd(__m512i *acc, __m512i x, __m512i w) { __asm__("vpdpbusd %2, %1, %0" : "+v"(*acc) : "v"(x), "v"(w)); }

/* the dword at p + o + 4 s in every lane: base, index and displacement in one load (gcc otherwise
   keeps a register, or a spill, for every sum); x is not written while a kernel runs */
#define BCAST_AT(D) __asm__("vpbroadcastd " #D "(%1,%2), %0" : "=v"(x) : "r"(p), "r"(o))
INLINE __m512i bcast(const uint8_t *p, size_t o, size_t s) {
  __m512i x;
  switch (s) {
    case 0: BCAST_AT(0); break;
    case 1: BCAST_AT(4); break;
    case 2: BCAST_AT(8); break;
    default: BCAST_AT(12); break;
  }
  return x;
}

/* MODE 0: pairs (two taps a quad), 1, 2, 4: quads a tap. NV vectors of the block (3 runs as 4:
   its fourth vector has zero weights and stores nothing). */
INLINE void tile(const size_t M, const size_t NV, const int MODE, const int BC, const int STRIDED, const int FLIP,
                 size_t ntaps,
                 const uint8_t *const *restrict src, ptrdiff_t pstep, size_t ib, __mmask64 xm,
                 const int32_t *restrict idx, const int8_t *restrict w, uint8_t flip, const dlc_q8_params *q,
                 size_t c0, size_t nb, uint8_t *restrict y, size_t ldy) {
#define PTR(t, i) (STRIDED ? src[t] + (ptrdiff_t)(i) * pstep : src[(t) * MR + (i)])
  const size_t NS = MODE == 0 ? 1 : (size_t)MODE;
  const __m512i fl = _mm512_set1_epi8((char)flip);
  __m512i acc[MRP][DLC_ROWS_NV];
  _Pragma("GCC unroll 4") for (size_t v = 0; v < NV; v++) {
    const __m512i b = _mm512_maskz_loadu_epi32(dlc_rows_vmask(NV, nb, v), q->bias + c0 + 16 * v);
    _Pragma("GCC unroll 4") for (size_t i = 0; i < M; i++) acc[i][v] = b;
  }
  if (BC) {
    /* each vector's quad at step 0, in bytes from the block's first: the index of its lanes */
    size_t off[DLC_ROWS_NV];
    _Pragma("GCC unroll 4") for (size_t v = 0; v < NV; v++) off[v] = ib + 4 * (size_t)idx[v * 16];
    _Pragma("GCC unroll 1") for (size_t t = 0; t < ntaps; t++) {
      const uint8_t *px[MRP];
      _Pragma("GCC unroll 4") for (size_t i = 0; i < M; i++) px[i] = PTR(t, i);
      _Pragma("GCC unroll 4") for (size_t s = 0; s < NS; s++) {
        __m512i wv[DLC_ROWS_NV];
        _Pragma("GCC unroll 4") for (size_t v = 0; v < NV; v++) wv[v] = _mm512_loadu_si512(w + 64 * v);
        w += 256;
        _Pragma("GCC unroll 4") for (size_t i = 0; i < M; i++) {
          _Pragma("GCC unroll 4") for (size_t v = 0; v < NV; v++) {
            __m512i x = bcast(px[i], off[v], s);
            if (FLIP) x = _mm512_xor_si512(x, fl);
            dpbusd(&acc[i][v], x, wv[v]);
          }
        }
      }
    }
    dlc_q8_rows_store(M, NV, acc, nb, q, c0, y + c0, ldy);
    return;
  }
  __m512i ix[4][DLC_ROWS_NV];
  _Pragma("GCC unroll 4") for (size_t s = 0; s < NS; s++)
    _Pragma("GCC unroll 4") for (size_t v = 0; v < NV; v++) ix[s][v] = _mm512_loadu_si512(idx + (s * 4 + v) * 16);
  if (MODE == 0) {
    _Pragma("GCC unroll 1") for (size_t t = 0; t < ntaps; t += 2) {
      const size_t tb = t + 1 < ntaps ? t + 1 : t; /* the last odd tap with itself, its partner's weights 0 */
      __m512i wv[DLC_ROWS_NV];
      _Pragma("GCC unroll 4") for (size_t v = 0; v < NV; v++) wv[v] = _mm512_loadu_si512(w + 64 * v);
      w += 256;
      _Pragma("GCC unroll 4") for (size_t i = 0; i < M; i++) {
        const __m512i a = _mm512_maskz_loadu_epi8(xm, PTR(t, i) + ib), b = _mm512_maskz_loadu_epi8(xm, PTR(tb, i) + ib);
        /* each group's pair of the two taps as one dword: words 0-3 of each 128-bit lane in lo,
           4-7 in hi (word permutes cost several times a dword one) */
        __m512i lo = _mm512_unpacklo_epi16(a, b), hi = _mm512_unpackhi_epi16(a, b);
        if (FLIP) lo = _mm512_xor_si512(lo, fl), hi = _mm512_xor_si512(hi, fl);
        _Pragma("GCC unroll 4") for (size_t v = 0; v < NV; v++)
          dpbusd(&acc[i][v], _mm512_permutex2var_epi32(lo, ix[0][v], hi), wv[v]);
      }
    }
  } else {
    _Pragma("GCC unroll 1") for (size_t t = 0; t < ntaps; t++) {
      _Pragma("GCC unroll 4") for (size_t s = 0; s < NS; s++) {
        __m512i wv[DLC_ROWS_NV];
        _Pragma("GCC unroll 4") for (size_t v = 0; v < NV; v++) wv[v] = _mm512_loadu_si512(w + 64 * v);
        w += 256;
        _Pragma("GCC unroll 4") for (size_t i = 0; i < M; i++) {
          /* reloaded per step (an L1 hit) rather than held: the registers go to the indices */
          __m512i x = _mm512_maskz_loadu_epi8(xm, PTR(t, i) + ib);
          if (FLIP) x = _mm512_xor_si512(x, fl);
          _Pragma("GCC unroll 4") for (size_t v = 0; v < NV; v++)
            dpbusd(&acc[i][v], _mm512_permutexvar_epi32(ix[s][v], x), wv[v]);
        }
      }
    }
  }
  dlc_q8_rows_store(M, NV, acc, nb, q, c0, y + c0, ldy);
#undef PTR
}

typedef void (*tile_fn)(size_t ntaps, const uint8_t *const *restrict src, ptrdiff_t pstep, size_t ib, __mmask64 xm,
                        const int32_t *restrict idx, const int8_t *restrict w, uint8_t flip, const dlc_q8_params *q,
                        size_t c0, size_t nb, uint8_t *restrict y, size_t ldy);
/* MODE 0 pairs, 1, 2, 4 quads a tap by permutes; 5, 6, 8: 1, 2, 4 quads a tap by broadcasts */
#define DEFINE_TILE(M, NV, MODE, S, F)                                                                           \
  static void tile_##M##_##NV##_##MODE##_##S##F(size_t ntaps, const uint8_t *const *restrict src, ptrdiff_t pstep, \
                                                size_t ib, __mmask64 xm, const int32_t *restrict idx,              \
                                                const int8_t *restrict w, uint8_t flip, const dlc_q8_params *q,    \
                                                size_t c0, size_t nb, uint8_t *restrict y, size_t ldy) {           \
    tile(M, NV, (MODE) > 4 ? (MODE) - 4 : (MODE), (MODE) > 4, S, F, ntaps, src, pstep, ib, xm, idx, w, flip, q, c0, \
         nb, y, ldy);                                                                                              \
  }
#define DEFINE_M(NV, MODE, S, F) \
  DEFINE_TILE(1, NV, MODE, S, F) DEFINE_TILE(2, NV, MODE, S, F) DEFINE_TILE(3, NV, MODE, S, F) DEFINE_TILE(4, NV, MODE, S, F)
#define DEFINE_NV(MODE, S, F) DEFINE_M(1, MODE, S, F) DEFINE_M(2, MODE, S, F) DEFINE_M(4, MODE, S, F)
#define DEFINE_MODES(S, F)                                                                                \
  DEFINE_NV(0, S, F) DEFINE_NV(1, S, F) DEFINE_NV(2, S, F) DEFINE_NV(4, S, F) DEFINE_NV(5, S, F) DEFINE_NV(6, S, F) \
  DEFINE_NV(8, S, F)
DEFINE_MODES(0, 0)
DEFINE_MODES(1, 0)
DEFINE_MODES(0, 1)
DEFINE_MODES(1, 1)

#define ROW_M(NV, MODE, S, F) {tile_1_##NV##_##MODE##_##S##F, tile_2_##NV##_##MODE##_##S##F, \
                               tile_3_##NV##_##MODE##_##S##F, tile_4_##NV##_##MODE##_##S##F}
#define ROW_NV(MODE, S, F) {ROW_M(1, MODE, S, F), ROW_M(2, MODE, S, F), ROW_M(4, MODE, S, F)}
#define ROW_MODES(S, F)                                                                                        \
  {ROW_NV(0, S, F), ROW_NV(1, S, F), ROW_NV(2, S, F), ROW_NV(4, S, F), ROW_NV(5, S, F), ROW_NV(6, S, F), \
   ROW_NV(8, S, F)}
/* [flip][strided][mode][vectors][m - 1] */
static const tile_fn tiles[2][2][7][3][MRP] = {{ROW_MODES(0, 0), ROW_MODES(1, 0)}, {ROW_MODES(0, 1), ROW_MODES(1, 1)}};

static void q8_gspc_nhwc_4x64c4(size_t m, size_t ntaps, const uint8_t *const *src, ptrdiff_t pstep, int strided,
                                const dlc_q8_gcn_geom *g, const int8_t *w, uint8_t flip, const dlc_q8_params *q,
                                void *y, size_t ldy) {
  const int mode = g->pairs ? 0 : (g->nsteps == 1 ? 1 : g->nsteps == 2 ? 2 : 3) + (g->bcast ? 3 : 0);
  const size_t ns = g->pairs ? 1 : g->nsteps;
  for (size_t b = 0, c0 = 0; c0 < g->c_out; b++, c0 += 64) {
    const size_t nb = g->c_out - c0 < 64 ? g->c_out - c0 : 64, nv = (nb + 15) / 16;
    const size_t ib = g->ib[b], avail = g->c_in - ib;
    const __mmask64 xm = avail >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << avail) - 1;
    const tile_fn *row = tiles[flip != 0][strided != 0][mode][nv == 1 ? 0 : nv == 2 ? 1 : 2];
    const int32_t *idx = g->idx + b * ns * 64;
    const int8_t *wb = w + b * g->nk * 256;
    if (m <= MRP) {
      row[m - 1](ntaps, src, pstep, ib, xm, idx, wb, flip, q, c0, nb, (uint8_t *)y, ldy);
      continue;
    }
    /* two tiles of at most 4 (the driver's two even tiles): the second's pixels from m0 (a pointer
       per tap: src + m0, the rows of src keep their stride MR; strided: m0 pixels further, in ib) */
    const size_t m0 = (m + 1) / 2;
    row[m0 - 1](ntaps, src, pstep, ib, xm, idx, wb, flip, q, c0, nb, (uint8_t *)y, ldy);
    row[m - m0 - 1](ntaps, strided ? src : src + m0, pstep, strided ? ib + m0 * (size_t)pstep : ib, xm, idx, wb, flip,
                    q, c0, nb, (uint8_t *)y + m0 * ldy, ldy);
  }
}

const dlc_q8_gcn_family dlc_q8_gcn__avx512vnni = {
    .name = "q8_gspc_nhwc_4x64c4__avx512vnni",
    .mr = MR,
    .max_nsteps = 4,
    .run = q8_gspc_nhwc_4x64c4,
};
