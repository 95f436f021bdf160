/* f32 gemm micro-kernels, avx512.
 *
 * Tile 14 x 32: the 32 columns of C are two zmm vectors of B loaded per k step, each of the 14
 * rows broadcasts one float of A and issues two FMAs, so 28 of the 32 zmm registers hold
 * accumulators, 2 hold B and 1 the broadcast. Per k step: 2 loads + 14 broadcasts for 28 FMAs,
 * enough independent chains (28) to cover the FMA latency of two pipes (4 cycles x 2).
 *
 * One function per (rows, vectors) pair is generated from one template, so an edge tile of m < 14
 * rows or n <= 16 columns computes only what it stores (an NCHW layer with 64 channels has a
 * 8-row edge; a dense layer with batch 1 is a 1-row GEMM); C is read and written with masks, so
 * nothing past the m x n corner is touched. */
#include <immintrin.h>
#include <stddef.h>

#include "../../ukernel/config.h"

#define MR 14
#define NR 32
/* k steps between a B load and the prefetch that brings it, 0 for none. A tile of one or two
   rows (a dense layer with batch 1) is bound by memory and spends ~2 cycles per step: it must run
   a DRAM latency ahead, some 8 KB. A taller tile spends 7 to 14 cycles per k step (two FMA
   pipes) on a B micro-panel that the driver reads sequentially (from L1 or a contiguous block in
   L2), which the hardware prefetchers already follow: on a two-FMA-port core (Sapphire Rapids) the
   two prefetch instructions per k step cost 4-5% of a full tile's throughput for nothing. */
#define B_PREFETCH_STEPS(M) ((M) <= 2 ? 64 : (M) <= 6 ? 24 : 0)

typedef void (*tile_fn)(size_t n, size_t kc, const float *restrict a, const float *restrict b,
                        float *restrict c, size_t ldc, int accumulate, const dlc_f32_gemm_epilogue *ep);

#define FOR_ROWS _Pragma("GCC unroll 14") for (size_t i = 0; i < M; i++)

/* One k step of the M x (16 * NV) tile: a points at the k-th MR floats of A, b at the k-th NR of B. */
#define K_STEP(a, b)                                                   \
  do {                                                                 \
    __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_setzero_ps();          \
    if (NV == 2) b1 = _mm512_loadu_ps((b) + 16);                       \
    FOR_ROWS {                                                         \
      __m512 ai = _mm512_set1_ps((a)[i]);                              \
      acc0[i] = _mm512_fmadd_ps(ai, b0, acc0[i]);                      \
      if (NV == 2) acc1[i] = _mm512_fmadd_ps(ai, b1, acc1[i]);         \
    }                                                                  \
  } while (0)

/* In-register transpose: on return r[c] holds column c of the 16 x 16 block (lane i = r_in[i][c]).
   Two 32-bit interleaves, then two 128-bit lane exchanges. */
static inline void transpose_16x16(__m512 r[16]) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  /* r[4q + j], 128-bit lane L: column 4L + j of rows 4q .. 4q + 3 */
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int j = 0; j < 4; j++) {
    t[j] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x88);
    t[4 + j] = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xDD);
    t[8 + j] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x88);
    t[12 + j] = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xDD);
  }
  for (int j = 0; j < 4; j++) {
    r[j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0x88);
    r[8 + j] = _mm512_shuffle_f32x4(t[j], t[8 + j], 0xDD);
    r[4 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0x88);
    r[12 + j] = _mm512_shuffle_f32x4(t[4 + j], t[12 + j], 0xDD);
  }
}

/* The epilogue of the C-transposed kernel (ukernel_ct): the tile is transposed in registers, 16
   x 16 per vector of columns, so each of its n columns becomes one m-lane masked vector stored at
   c + j * ldc (an NCHW output channel's run of m pixels). */
static inline __attribute__((always_inline)) void store_ct(
    const size_t M, const size_t NV, size_t n, __m512 *acc0, __m512 *acc1, float *restrict c,
    size_t ldc, int accumulate, const dlc_f32_gemm_epilogue *ep) {
  const __mmask16 mm = (__mmask16)((1u << M) - 1);
  for (size_t v = 0; v < NV; v++) {
    __m512 r[16];
    _Pragma("GCC unroll 16") for (size_t i = 0; i < 16; i++) r[i] = i < M ? (v ? acc1[i] : acc0[i]) : _mm512_setzero_ps();
    transpose_16x16(r);
    size_t nj = n - 16 * v < 16 ? n - 16 * v : 16;
    for (size_t j = 0; j < nj; j++) {
      float *cj = c + (16 * v + j) * ldc;
      __m512 x = r[j];
      if (accumulate) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(mm, cj));
      if (ep != NULL) {
        if (ep->bias != NULL && ep->bias_per_column)
          x = _mm512_add_ps(x, _mm512_set1_ps(ep->bias[16 * v + j]));
        else if (ep->bias != NULL)
          x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(mm, ep->bias));
        x = _mm512_min_ps(_mm512_set1_ps(ep->out_max), _mm512_max_ps(_mm512_set1_ps(ep->out_min), x));
      }
      _mm512_mask_storeu_ps(cj, mm, x);
    }
  }
}

static inline __attribute__((always_inline)) void tile_body(
    const size_t M, const size_t NV, const int CT, size_t n, size_t kc, const float *restrict a,
    const float *restrict b, float *restrict c, size_t ldc, int accumulate, const dlc_f32_gemm_epilogue *ep) {
  __m512 acc0[MR], acc1[MR];
  FOR_ROWS {
    acc0[i] = _mm512_setzero_ps();
    acc1[i] = _mm512_setzero_ps();
    /* C is needed only after the k loop: start bringing its lines in now. */
    if (!CT) {
      _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
      _mm_prefetch((const char *)(c + i * ldc + 16 * NV - 1), _MM_HINT_T0);
    }
  }
  /* Unrolled by the compiler rather than by hand: a hand-unrolled body made GCC 12 rotate
     accumulators through the stack; this form keeps all 28 in registers. */
  _Pragma("GCC unroll 4") for (size_t k = 0; k < kc; k++) {
    if (B_PREFETCH_STEPS(M) > 0) {
      _mm_prefetch((const char *)(b + B_PREFETCH_STEPS(M) * NR), _MM_HINT_T0);
      if (NV == 2) _mm_prefetch((const char *)(b + B_PREFETCH_STEPS(M) * NR + 16), _MM_HINT_T0);
    }
    K_STEP(a, b);
    a += MR;
    b += NR;
  }
  if (CT) {
    store_ct(M, NV, n, acc0, acc1, c, ldc, accumulate, ep);
    return;
  }

  __mmask16 m0 = n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
  __mmask16 m1 = n >= 32 ? (__mmask16)0xFFFF : n > 16 ? (__mmask16)((1u << (n - 16)) - 1) : 0;
  if (accumulate) {
    FOR_ROWS {
      acc0[i] = _mm512_add_ps(acc0[i], _mm512_maskz_loadu_ps(m0, c + i * ldc));
      if (NV == 2) acc1[i] = _mm512_add_ps(acc1[i], _mm512_maskz_loadu_ps(m1, c + i * ldc + 16));
    }
  }
  if (ep != NULL) {
    if (ep->bias != NULL && ep->bias_per_column) {
      __m512 bc0 = _mm512_maskz_loadu_ps(m0, ep->bias), bc1 = _mm512_setzero_ps();
      if (NV == 2) bc1 = _mm512_maskz_loadu_ps(m1, ep->bias + 16);
      FOR_ROWS {
        acc0[i] = _mm512_add_ps(acc0[i], bc0);
        if (NV == 2) acc1[i] = _mm512_add_ps(acc1[i], bc1);
      }
    } else if (ep->bias != NULL) {
      FOR_ROWS {
        __m512 bi = _mm512_set1_ps(ep->bias[i]);
        acc0[i] = _mm512_add_ps(acc0[i], bi);
        if (NV == 2) acc1[i] = _mm512_add_ps(acc1[i], bi);
      }
    }
    /* Bound first: max/min return their second operand when either is NaN, so NaN survives.
       An unbounded side is skipped: 28 max or min cost 14 FMA-pipe cycles, 1-2% of a short-K
       tile (a 1x1 layer with 64 input channels). */
    if (ep->out_min > -__builtin_inff()) {
      __m512 lo = _mm512_set1_ps(ep->out_min);
      FOR_ROWS {
        acc0[i] = _mm512_max_ps(lo, acc0[i]);
        if (NV == 2) acc1[i] = _mm512_max_ps(lo, acc1[i]);
      }
    }
    if (ep->out_max < __builtin_inff()) {
      __m512 hi = _mm512_set1_ps(ep->out_max);
      FOR_ROWS {
        acc0[i] = _mm512_min_ps(hi, acc0[i]);
        if (NV == 2) acc1[i] = _mm512_min_ps(hi, acc1[i]);
      }
    }
  }
  if (!CT && ep != NULL && ep->yh != NULL) {
    /* vcvtps2ph with an immediate rounds to nearest even whatever MXCSR says and keeps NaN */
    FOR_ROWS {
      _mm256_mask_storeu_epi16(ep->yh + i * ep->ldyh, m0, _mm512_cvtps_ph(acc0[i], _MM_FROUND_TO_NEAREST_INT));
      if (NV == 2)
        _mm256_mask_storeu_epi16(ep->yh + i * ep->ldyh + 16, m1, _mm512_cvtps_ph(acc1[i], _MM_FROUND_TO_NEAREST_INT));
    }
    return;
  }
  FOR_ROWS {
    _mm512_mask_storeu_ps(c + i * ldc, m0, acc0[i]);
    if (NV == 2) _mm512_mask_storeu_ps(c + i * ldc + 16, m1, acc1[i]);
  }
}

#define DEFINE_TILE(M, NV)                                                                      \
  static void tile_##M##x##NV(size_t n, size_t kc, const float *restrict a, const float *restrict b, \
                              float *restrict c, size_t ldc, int accumulate,                    \
                              const dlc_f32_gemm_epilogue *ep) {                                \
    tile_body(M, NV, 0, n, kc, a, b, c, ldc, accumulate, ep);                                   \
  }                                                                                             \
  static void tile_ct_##M##x##NV(size_t n, size_t kc, const float *restrict a, const float *restrict b, \
                                 float *restrict c, size_t ldc, int accumulate,                 \
                                 const dlc_f32_gemm_epilogue *ep) {                             \
    tile_body(M, NV, 1, n, kc, a, b, c, ldc, accumulate, ep);                                   \
  }
#define DEFINE_TILES(M) DEFINE_TILE(M, 1) DEFINE_TILE(M, 2)
DEFINE_TILES(1) DEFINE_TILES(2) DEFINE_TILES(3) DEFINE_TILES(4) DEFINE_TILES(5) DEFINE_TILES(6)
DEFINE_TILES(7) DEFINE_TILES(8) DEFINE_TILES(9) DEFINE_TILES(10) DEFINE_TILES(11) DEFINE_TILES(12)
DEFINE_TILES(13) DEFINE_TILES(14)

static const tile_fn tiles[2][MR] = {
    {tile_1x1, tile_2x1, tile_3x1, tile_4x1, tile_5x1, tile_6x1, tile_7x1, tile_8x1, tile_9x1,
     tile_10x1, tile_11x1, tile_12x1, tile_13x1, tile_14x1},
    {tile_1x2, tile_2x2, tile_3x2, tile_4x2, tile_5x2, tile_6x2, tile_7x2, tile_8x2, tile_9x2,
     tile_10x2, tile_11x2, tile_12x2, tile_13x2, tile_14x2},
};

static const tile_fn tiles_ct[2][MR] = {
    {tile_ct_1x1, tile_ct_2x1, tile_ct_3x1, tile_ct_4x1, tile_ct_5x1, tile_ct_6x1, tile_ct_7x1, tile_ct_8x1,
     tile_ct_9x1, tile_ct_10x1, tile_ct_11x1, tile_ct_12x1, tile_ct_13x1, tile_ct_14x1},
    {tile_ct_1x2, tile_ct_2x2, tile_ct_3x2, tile_ct_4x2, tile_ct_5x2, tile_ct_6x2, tile_ct_7x2, tile_ct_8x2,
     tile_ct_9x2, tile_ct_10x2, tile_ct_11x2, tile_ct_12x2, tile_ct_13x2, tile_ct_14x2},
};

static void dlc_f32_gemm_14x32_ct__avx512(size_t m, size_t n, size_t kc, const float *a, const float *b,
                                          float *c, size_t ldc, int accumulate,
                                          const dlc_f32_gemm_epilogue *ep) {
  tiles_ct[n > 16][m - 1](n, kc, a, b, c, ldc, accumulate, ep);
}

static void dlc_f32_gemm_14x32__avx512(size_t m, size_t n, size_t kc, const float *a, const float *b,
                                       float *c, size_t ldc, int accumulate,
                                       const dlc_f32_gemm_epilogue *ep) {
  tiles[n > 16][m - 1](n, kc, a, b, c, ldc, accumulate, ep);
}

/* 16 columns at a time: 14 (masked) row loads, a 16 x 16 transpose with two zero rows, and one
   14-lane masked store per column. */
static void dlc_f32_gemm_pack_rows_14__avx512(size_t len, const float *const *rows, float *dst) {
  for (size_t t = 0; t < len; t += 16) {
    size_t w = len - t < 16 ? len - t : 16;
    __mmask16 lm = (__mmask16)((1u << w) - 1);
    __m512 r[16];
    _Pragma("GCC unroll 14") for (size_t i = 0; i < MR; i++) {
      r[i] = rows[i] ? _mm512_maskz_loadu_ps(lm, rows[i] + t) : _mm512_setzero_ps();
    }
    r[14] = r[15] = _mm512_setzero_ps();
    transpose_16x16(r);
    for (size_t c = 0; c < w; c++) _mm512_mask_storeu_ps(dst + (t + c) * MR, (__mmask16)0x3FFF, r[c]);
  }
}

/* Two (masked) loads and two stores per k: a 1x1 NCHW layer packs its B micro-panel in L1 right
   before the micro-kernels sweep it, at ~1 cycle per k against 14 cycles per k per tile. */
static void dlc_f32_gemm_pack_cols_32__avx512(size_t kc, size_t n, const float *src, size_t ld, float *dst) {
  if (n >= NR) {
    _Pragma("GCC unroll 4") for (size_t k = 0; k < kc; k++) {
      __m512 v0 = _mm512_loadu_ps(src + k * ld), v1 = _mm512_loadu_ps(src + k * ld + 16);
      _mm512_storeu_ps(dst + k * NR, v0);
      _mm512_storeu_ps(dst + k * NR + 16, v1);
    }
    return;
  }
  __mmask16 m0 = n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1);
  __mmask16 m1 = n > 16 ? (__mmask16)((1u << (n - 16)) - 1) : 0;
  for (size_t k = 0; k < kc; k++) {
    _mm512_storeu_ps(dst + k * NR, _mm512_maskz_loadu_ps(m0, src + k * ld));
    _mm512_storeu_ps(dst + k * NR + 16, _mm512_maskz_loadu_ps(m1, src + k * ld + 16));
  }
}

/* 32 floats per step, the tail with masks: a run of up to 32 floats is two loads and two stores. */
static void dlc_f32_gemm_copy__avx512(float *dst, const float *src, size_t len) {
  size_t t = 0;
  for (; t + 32 <= len; t += 32) {
    __m512 v0 = _mm512_loadu_ps(src + t), v1 = _mm512_loadu_ps(src + t + 16);
    _mm512_storeu_ps(dst + t, v0);
    _mm512_storeu_ps(dst + t + 16, v1);
  }
  size_t r = len - t;
  if (r == 0) return;
  __mmask16 m0 = r >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << r) - 1);
  __mmask16 m1 = r > 16 ? (__mmask16)((1u << (r - 16)) - 1) : 0;
  __m512 v0 = _mm512_maskz_loadu_ps(m0, src + t);
  _mm512_mask_storeu_ps(dst + t, m0, v0);
  if (m1) _mm512_mask_storeu_ps(dst + t + 16, m1, _mm512_maskz_loadu_ps(m1, src + t + 16));
}

const dlc_f32_gemm_family dlc_f32_gemm__avx512 = {
    .name = "f32_gemm_14x32__avx512",
    .mr = MR,
    .nr = NR,
    .ukernel = dlc_f32_gemm_14x32__avx512,
    .ukernel_ct = dlc_f32_gemm_14x32_ct__avx512,
    .pack_rows = dlc_f32_gemm_pack_rows_14__avx512,
    .pack_cols = dlc_f32_gemm_pack_cols_32__avx512,
    .copy = dlc_f32_gemm_copy__avx512,
    .f16_out = 1,
};
