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
 * driver passes two tiles a call with the broadcasts).
 *
 * With as many output as input channels per group, 4, 8 or 16 (g->lanes; WRN-40-2 g2..g8), lane l
 * of vector k is output channel 4 l + k: every lane's inputs then lie in its own 128 bits of the
 * pixel's run, and one load a pixel and tap with an in-lane vpshufd a step feeds all four vectors
 * (tile_lanes): no broadcast per product, no cross-lane permute. The store puts the channels back
 * in order (q8_rows_avx512.h's strided rows, as the NHWC depthwise kernel's). Zen 5, 1 thread, u8,
 * WRN-40-2 g2..g8 layers it takes, its time / the broadcasts' or the permutes': 0.67-0.78. */
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

/* vpshufd on acc's own register choice, kept from being folded into a broadcast load */
#define SHUFD(x, IMM) ({ __m512i r_; __asm__("vpshufd $" #IMM ", %1, %0" : "=v"(r_) : "v"(x)); r_; })

/* Lanes mode (g->lanes): K = 4 NS output and input channels per group. Lane l = 4 j + d of vector b
   is output channel 4 l + b of the block: its group's inputs are bytes of the 128-bit lane j of the
   pixel's 64-byte run (K 16: group j's 4 quads; 8: groups 2 j, 2 j + 1, 2 quads each; 4: group 4 j
   + d's quad in dword d), so one load of the run and an in-lane vpshufd a step put every lane's quad
   in place for all four vectors: per pixel and tap one load, NS - 1 shuffles (K 4: none) and 4 NS
   vpdpbusd. PAIR (32 channels): a vector holds two pixels, the first in lanes 0..7 (its 32 bytes in
   the low 256 bits of the load), the second in 8..15; the weights' lanes 8..15 repeat 0..7.
   S 1: strided, a pointer per tap (lanes mode is always strided); 2: strided across padding, bit i
   of vm[t] set where pixel i's tap t lies in the image: the others load the zero point's bytes
   (masked loads, which do not fault on the lanes they skip), so that the tiles at the image's
   borders need no pointer per pixel either (building them cost a quarter of the layer on 32 x 32). */
INLINE void tile_lanes(const size_t M, const size_t NS, const int PAIR, const int S, const int FLIP,
                       size_t ntaps, const uint8_t *const *restrict src, ptrdiff_t pstep, const uint8_t *vm,
                       uint8_t zp, size_t ib, const int8_t *restrict w, uint8_t flip, const dlc_q8_params *q,
                       const dlc_q8_params *ql, size_t c0, size_t nb, uint8_t *restrict y, size_t ldy) {
  const int EDGE = S == 2;
#define PTR(t, i) (src[t] + (ptrdiff_t)(i) * pstep)
  const size_t R = PAIR ? (M + 1) / 2 : M; /* rows of accumulators */
  const int adjacent = PAIR && pstep == 32;
  const __m512i fl = _mm512_set1_epi8((char)flip), zv = _mm512_set1_epi8((char)zp);
  /* bits 2 i, 2 i + 1 of a tap's vm: the pair's 32-byte halves to load */
  static const uint64_t halves[4] = {0, 0xFFFFFFFFu, 0xFFFFFFFF00000000u, ~(uint64_t)0};
  __m512i acc[MRP][DLC_ROWS_NV];
  _Pragma("GCC unroll 4") for (size_t v = 0; v < DLC_ROWS_NV; v++) {
    __m512i b = _mm512_loadu_si512(ql->bias + c0 + 16 * v);
    if (PAIR) b = _mm512_shuffle_i64x2(b, b, 0x44);
    _Pragma("GCC unroll 4") for (size_t i = 0; i < R; i++) acc[i][v] = b;
  }
  _Pragma("GCC unroll 1") for (size_t t = 0; t < ntaps; t++) {
    __m512i x[MRP];
    const unsigned vt = EDGE ? vm[t] : 0;
    _Pragma("GCC unroll 4") for (size_t i = 0; i < R; i++) {
      if (EDGE && PAIR && adjacent && 2 * i + 1 < M) {
        x[i] = _mm512_mask_loadu_epi8(zv, _cvtu64_mask64(halves[vt >> (2 * i) & 3]), PTR(t, 2 * i) + ib);
      } else if (EDGE && PAIR) {
        const __m256i z = _mm512_castsi512_si256(zv);
        const __m256i lo =
            _mm256_mask_loadu_epi8(z, (__mmask32)(0u - (vt >> (2 * i) & 1)), PTR(t, 2 * i) + ib);
        const __m256i hi = 2 * i + 1 < M ? _mm256_mask_loadu_epi8(z, (__mmask32)(0u - (vt >> (2 * i + 1) & 1)),
                                                                  PTR(t, 2 * i + 1) + ib)
                                         : _mm256_setzero_si256();
        x[i] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
      } else if (EDGE) {
        x[i] = _mm512_mask_loadu_epi8(zv, _cvtu64_mask64(0 - (uint64_t)(vt >> i & 1)), PTR(t, i) + ib);
      } else if (PAIR && adjacent && 2 * i + 1 < M) {
        x[i] = _mm512_loadu_si512(PTR(t, 2 * i) + ib);
      } else if (PAIR) {
        const __m256i lo = _mm256_loadu_si256((const __m256i *)(PTR(t, 2 * i) + ib));
        const __m256i hi = 2 * i + 1 < M ? _mm256_loadu_si256((const __m256i *)(PTR(t, 2 * i + 1) + ib))
                                         : _mm256_setzero_si256();
        x[i] = _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1);
      } else {
        x[i] = _mm512_loadu_si512(PTR(t, i) + ib);
      }
      if (FLIP) x[i] = _mm512_xor_si512(x[i], fl);
    }
    _Pragma("GCC unroll 4") for (size_t s = 0; s < NS; s++) {
      __m512i wv[DLC_ROWS_NV];
      _Pragma("GCC unroll 4") for (size_t v = 0; v < DLC_ROWS_NV; v++) wv[v] = _mm512_loadu_si512(w + 64 * v);
      w += 256;
      _Pragma("GCC unroll 4") for (size_t i = 0; i < R; i++) {
        __m512i xs = x[i];
        if (NS == 4) xs = s == 0 ? SHUFD(x[i], 0x00) : s == 1 ? SHUFD(x[i], 0x55) : s == 2 ? SHUFD(x[i], 0xAA)
                                                                                        : SHUFD(x[i], 0xFF);
        if (NS == 2) xs = s == 0 ? SHUFD(x[i], 0xA0) : SHUFD(x[i], 0xF5);
        _Pragma("GCC unroll 4") for (size_t v = 0; v < DLC_ROWS_NV; v++) dpbusd(&acc[i][v], xs, wv[v]);
      }
    }
  }
  dlc_q8_rows_store_any(PAIR ? 2 : 1, M, DLC_ROWS_NV, acc, nb, q, ql, c0, y + c0, ldy);
#undef PTR
}

typedef void (*lanes_fn)(size_t ntaps, const uint8_t *const *restrict src, ptrdiff_t pstep, const uint8_t *vm,
                         uint8_t zp, size_t ib, const int8_t *restrict w, uint8_t flip, const dlc_q8_params *q,
                         const dlc_q8_params *ql, size_t c0, size_t nb, uint8_t *restrict y, size_t ldy);
#define DEFINE_LANES(M, NS, P, S, F)                                                                              \
  static void lanes_##M##_##NS##_##P##S##F(size_t ntaps, const uint8_t *const *restrict src, ptrdiff_t pstep,     \
                                           const uint8_t *vm, uint8_t zp, size_t ib, const int8_t *restrict w,    \
                                           uint8_t flip, const dlc_q8_params *q, const dlc_q8_params *ql,         \
                                           size_t c0, size_t nb, uint8_t *restrict y, size_t ldy) {               \
    tile_lanes(M, NS, P, S, F, ntaps, src, pstep, vm, zp, ib, w, flip, q, ql, c0, nb, y, ldy);                    \
  }
/* M: pixels, up to MRP, or MR with PAIR */
#define DEFINE_LANES_M4(NS, P, S, F) \
  DEFINE_LANES(1, NS, P, S, F) DEFINE_LANES(2, NS, P, S, F) DEFINE_LANES(3, NS, P, S, F) DEFINE_LANES(4, NS, P, S, F)
#define DEFINE_LANES_M8(NS, P, S, F) \
  DEFINE_LANES_M4(NS, P, S, F)       \
  DEFINE_LANES(5, NS, P, S, F) DEFINE_LANES(6, NS, P, S, F) DEFINE_LANES(7, NS, P, S, F) DEFINE_LANES(8, NS, P, S, F)
#define DEFINE_LANES_ALL(S, F)                                                                               \
  DEFINE_LANES_M4(1, 0, S, F) DEFINE_LANES_M4(2, 0, S, F) DEFINE_LANES_M4(4, 0, S, F) DEFINE_LANES_M8(1, 1, S, F) \
  DEFINE_LANES_M8(2, 1, S, F) DEFINE_LANES_M8(4, 1, S, F)
DEFINE_LANES_ALL(1, 0)
DEFINE_LANES_ALL(2, 0)
DEFINE_LANES_ALL(1, 1)
DEFINE_LANES_ALL(2, 1)
#define LROW_M4(NS, P, S, F) \
  lanes_1_##NS##_##P##S##F, lanes_2_##NS##_##P##S##F, lanes_3_##NS##_##P##S##F, lanes_4_##NS##_##P##S##F
#define LROW_M8(NS, P, S, F) \
  {LROW_M4(NS, P, S, F), lanes_5_##NS##_##P##S##F, lanes_6_##NS##_##P##S##F, lanes_7_##NS##_##P##S##F, lanes_8_##NS##_##P##S##F}
#define LROW_ALL(S, F)                                                                        \
  {{{LROW_M4(1, 0, S, F)}, {LROW_M4(2, 0, S, F)}, {LROW_M4(4, 0, S, F)}},                     \
   {LROW_M8(1, 1, S, F), LROW_M8(2, 1, S, F), LROW_M8(4, 1, S, F)}}
/* [flip][strided, strided across padding][pair][steps 1, 2, 4][m - 1]; without PAIR m <= MRP (the rest
   NULL) */
static const lanes_fn lanes[2][2][2][3][MR] = {{LROW_ALL(1, 0), LROW_ALL(2, 0)}, {LROW_ALL(1, 1), LROW_ALL(2, 1)}};

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
                                const uint8_t *vm, const dlc_q8_gcn_geom *g, const int8_t *w, uint8_t flip, const dlc_q8_params *q,
                                void *y, size_t ldy) {
  const int mode = g->pairs ? 0 : (g->nsteps == 1 ? 1 : g->nsteps == 2 ? 2 : 3) + (g->bcast ? 3 : 0);
  const size_t ns = g->pairs ? 1 : g->nsteps;
  if (g->lanes) {
    const int pair = g->c_out == 32;
    const size_t si = g->nsteps == 1 ? 0 : g->nsteps == 2 ? 1 : 2;
    const lanes_fn *row = lanes[flip != 0][vm != NULL][pair][si]; /* strided (the contract) */
    for (size_t c0 = 0; c0 < g->c_out; c0 += 64) {
      const int8_t *wb = w + c0 / 64 * g->nk * 256;
      const size_t nb = pair ? 32 : 64;
      if (pair || m <= MRP) {
        row[m - 1](ntaps, src, pstep, vm, g->zp, c0, wb, flip, q, g->ql, c0, nb, (uint8_t *)y, ldy);
        continue;
      }
      const size_t m0 = (m + 1) / 2;
      row[m0 - 1](ntaps, src, pstep, vm, g->zp, c0, wb, flip, q, g->ql, c0, nb, (uint8_t *)y, ldy);
      /* the second tile's masks: vm's bits from m0 on */
      uint8_t vm1[64]; /* ntaps <= 64 with vm (the contract) */
      if (vm)
        for (size_t t = 0; t < ntaps; t++) vm1[t] = (uint8_t)(vm[t] >> m0);
      row[m - m0 - 1](ntaps, src, pstep, vm ? vm1 : NULL, g->zp, c0 + m0 * (size_t)pstep, wb, flip, q, g->ql, c0, nb,
                      (uint8_t *)y + m0 * ldy, ldy);
    }
    return;
  }
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
