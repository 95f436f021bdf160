/* f32 gemm micro-kernels, avx2.
 *
 * Tile 6 x 16: the 16 columns of C are two ymm vectors of B loaded per k step, each of the 6 rows
 * broadcasts one float of A and issues two FMAs: 12 of the 16 ymm registers hold accumulators,
 * 2 hold B and 1 the broadcast (the classic Haswell/Zen BLIS tile). 12 independent chains cover
 * the FMA latency of two pipes.
 *
 * One function per (rows, vectors) pair is generated from one template, so edge tiles compute only
 * what they store; C is read with _mm256_maskload_ps and written in pieces (avx2_store.h: no
 * vmaskmovps store, slow on AMD), so nothing past the m x n corner is touched. */
#include <immintrin.h>
#include <stddef.h>

#include "../../ukernel/config.h"
#include "avx2_store.h"

#define MR 6
#define NR 16
/* k steps between a B load and the prefetch that brings it: 16 steps (1 KB) cover B streaming
   from L2 for a full tile; a one- or two-row tile (dense, batch 1) is bound by memory and must
   run a DRAM latency ahead, some 4 KB. */
#define B_PREFETCH_STEPS(M) ((M) <= 2 ? 64 : 16)

typedef void (*tile_fn)(size_t n, size_t kc, const float *restrict a, const float *restrict b,
                        float *restrict c, size_t ldc, int accumulate, const dlc_f32_gemm_epilogue *ep);

#define FOR_ROWS _Pragma("GCC unroll 6") for (size_t i = 0; i < M; i++)

/* One k step of the M x (8 * NV) tile: a points at the k-th MR floats of A, b at the k-th NR of B. */
#define K_STEP(a, b)                                                   \
  do {                                                                 \
    __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_setzero_ps();          \
    if (NV == 2) b1 = _mm256_loadu_ps((b) + 8);                        \
    FOR_ROWS {                                                         \
      __m256 ai = _mm256_broadcast_ss((a) + i);                        \
      acc0[i] = _mm256_fmadd_ps(ai, b0, acc0[i]);                      \
      if (NV == 2) acc1[i] = _mm256_fmadd_ps(ai, b1, acc1[i]);         \
    }                                                                  \
  } while (0)

/* Lane masks for maskload/maskstore: the first v lanes of &lane_mask[8 - v] are all ones. */
static const int32_t lane_mask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

static inline __m256i first_lanes(size_t v) {
  return _mm256_loadu_si256((const __m256i *)(lane_mask + 8 - (v > 8 ? 8 : v)));
}

/* In-register transpose: on return r[c] holds column c of the 8 x 8 block. */
static inline void transpose_8x8(__m256 r[8]) {
  __m256 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  /* r[4q + j], 128-bit lane L: column 4L + j of rows 4q .. 4q + 3 */
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int j = 0; j < 4; j++) {
    t[j] = _mm256_permute2f128_ps(r[j], r[4 + j], 0x20);
    t[4 + j] = _mm256_permute2f128_ps(r[j], r[4 + j], 0x31);
  }
  for (int j = 0; j < 8; j++) r[j] = t[j];
}

/* The epilogue of the C-transposed kernel (ukernel_ct): the tile is transposed in registers, 8 x 8
   per vector of columns, so each of its n columns becomes one m-lane vector stored at
   c + j * ldc. */
static inline __attribute__((always_inline)) void store_ct(
    const size_t M, const size_t NV, size_t n, __m256 *acc0, __m256 *acc1, float *restrict c,
    size_t ldc, int accumulate, const dlc_f32_gemm_epilogue *ep) {
  const __m256i mm = first_lanes(M);
  for (size_t v = 0; v < NV; v++) {
    __m256 r[8];
    _Pragma("GCC unroll 8") for (size_t i = 0; i < 8; i++) r[i] = i < M ? (v ? acc1[i] : acc0[i]) : _mm256_setzero_ps();
    transpose_8x8(r);
    size_t nj = n - 8 * v < 8 ? n - 8 * v : 8;
    for (size_t j = 0; j < nj; j++) {
      float *cj = c + (8 * v + j) * ldc;
      __m256 x = r[j];
      if (accumulate) x = _mm256_add_ps(x, _mm256_maskload_ps(cj, mm));
      if (ep != NULL) {
        if (ep->bias != NULL && ep->bias_per_column)
          x = _mm256_add_ps(x, _mm256_broadcast_ss(ep->bias + 8 * v + j));
        else if (ep->bias != NULL)
          x = _mm256_add_ps(x, _mm256_maskload_ps(ep->bias, mm));
        x = _mm256_min_ps(_mm256_set1_ps(ep->out_max), _mm256_max_ps(_mm256_set1_ps(ep->out_min), x));
      }
      dlc_avx2_store_first(cj, (ptrdiff_t)M, x);
    }
  }
}

static inline __attribute__((always_inline)) void tile_body(
    const size_t M, const size_t NV, const int CT, size_t n, size_t kc, const float *restrict a,
    const float *restrict b, float *restrict c, size_t ldc, int accumulate, const dlc_f32_gemm_epilogue *ep) {
  __m256 acc0[MR], acc1[MR];
  FOR_ROWS {
    acc0[i] = _mm256_setzero_ps();
    acc1[i] = _mm256_setzero_ps();
    /* C is needed only after the k loop: start bringing its lines in now. */
    if (!CT) {
      _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
      _mm_prefetch((const char *)(c + i * ldc + 8 * NV - 1), _MM_HINT_T0);
    }
  }
  _Pragma("GCC unroll 4") for (size_t k = 0; k < kc; k++) {
    _mm_prefetch((const char *)(b + B_PREFETCH_STEPS(M) * NR), _MM_HINT_T0);
    K_STEP(a, b);
    a += MR;
    b += NR;
  }
  if (CT) {
    store_ct(M, NV, n, acc0, acc1, c, ldc, accumulate, ep);
    return;
  }

  __m256i m0 = first_lanes(n), m1 = first_lanes(n > 8 ? n - 8 : 0);
  if (accumulate) {
    FOR_ROWS {
      acc0[i] = _mm256_add_ps(acc0[i], _mm256_maskload_ps(c + i * ldc, m0));
      if (NV == 2) acc1[i] = _mm256_add_ps(acc1[i], _mm256_maskload_ps(c + i * ldc + 8, m1));
    }
  }
  if (ep != NULL) {
    if (ep->bias != NULL && ep->bias_per_column) {
      __m256 bc0 = _mm256_maskload_ps(ep->bias, m0), bc1 = _mm256_setzero_ps();
      if (NV == 2) bc1 = _mm256_maskload_ps(ep->bias + 8, m1);
      FOR_ROWS {
        acc0[i] = _mm256_add_ps(acc0[i], bc0);
        if (NV == 2) acc1[i] = _mm256_add_ps(acc1[i], bc1);
      }
    } else if (ep->bias != NULL) {
      FOR_ROWS {
        __m256 bi = _mm256_broadcast_ss(ep->bias + i);
        acc0[i] = _mm256_add_ps(acc0[i], bi);
        if (NV == 2) acc1[i] = _mm256_add_ps(acc1[i], bi);
      }
    }
    /* Bound first: max/min return their second operand when either is NaN, so NaN survives.
       An unbounded side is skipped. */
    if (ep->out_min > -__builtin_inff()) {
      __m256 lo = _mm256_set1_ps(ep->out_min);
      FOR_ROWS {
        acc0[i] = _mm256_max_ps(lo, acc0[i]);
        if (NV == 2) acc1[i] = _mm256_max_ps(lo, acc1[i]);
      }
    }
    if (ep->out_max < __builtin_inff()) {
      __m256 hi = _mm256_set1_ps(ep->out_max);
      FOR_ROWS {
        acc0[i] = _mm256_min_ps(hi, acc0[i]);
        if (NV == 2) acc1[i] = _mm256_min_ps(hi, acc1[i]);
      }
    }
  }
  /* n is 8 * NV on all but the right-edge tiles: whole-vector stores there */
  const ptrdiff_t n0 = n == 8 * NV ? 8 : (ptrdiff_t)n, n1 = n == 8 * NV ? 8 : (ptrdiff_t)n - 8;
  FOR_ROWS {
    dlc_avx2_store_first(c + i * ldc, n0, acc0[i]);
    if (NV == 2) dlc_avx2_store_first(c + i * ldc + 8, n1, acc1[i]);
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

static const tile_fn tiles[2][MR] = {
    {tile_1x1, tile_2x1, tile_3x1, tile_4x1, tile_5x1, tile_6x1},
    {tile_1x2, tile_2x2, tile_3x2, tile_4x2, tile_5x2, tile_6x2},
};

static const tile_fn tiles_ct[2][MR] = {
    {tile_ct_1x1, tile_ct_2x1, tile_ct_3x1, tile_ct_4x1, tile_ct_5x1, tile_ct_6x1},
    {tile_ct_1x2, tile_ct_2x2, tile_ct_3x2, tile_ct_4x2, tile_ct_5x2, tile_ct_6x2},
};

static void dlc_f32_gemm_6x16_ct__avx2(size_t m, size_t n, size_t kc, const float *a, const float *b,
                                       float *c, size_t ldc, int accumulate,
                                       const dlc_f32_gemm_epilogue *ep) {
  tiles_ct[n > 8][m - 1](n, kc, a, b, c, ldc, accumulate, ep);
}

static void dlc_f32_gemm_6x16__avx2(size_t m, size_t n, size_t kc, const float *a, const float *b,
                                    float *c, size_t ldc, int accumulate,
                                    const dlc_f32_gemm_epilogue *ep) {
  tiles[n > 8][m - 1](n, kc, a, b, c, ldc, accumulate, ep);
}

/* 8 columns at a time: 6 (masked) row loads, an 8 x 8 transpose with two zero rows, and a 4 + 2
   float store per column (vmaskmovps stores are slow on AMD). */
static void dlc_f32_gemm_pack_rows_6__avx2(size_t len, const float *const *rows, float *dst) {
  for (size_t t = 0; t < len; t += 8) {
    size_t w = len - t < 8 ? len - t : 8;
    __m256i lm = first_lanes(w);
    __m256 r[8];
    _Pragma("GCC unroll 6") for (size_t i = 0; i < MR; i++) {
      r[i] = rows[i] ? _mm256_maskload_ps(rows[i] + t, lm) : _mm256_setzero_ps();
    }
    r[6] = r[7] = _mm256_setzero_ps();
    transpose_8x8(r);
    for (size_t c = 0; c < w; c++) {
      float *o = dst + (t + c) * MR;
      _mm_storeu_ps(o, _mm256_castps256_ps128(r[c]));
      _mm_storel_pi((__m64 *)(o + 4), _mm256_extractf128_ps(r[c], 1));
    }
  }
}

/* Two (masked) loads and two stores per k (see the avx512 file). */
static void dlc_f32_gemm_pack_cols_16__avx2(size_t kc, size_t n, const float *src, size_t ld, float *dst) {
  if (n >= NR) {
    _Pragma("GCC unroll 4") for (size_t k = 0; k < kc; k++) {
      __m256 v0 = _mm256_loadu_ps(src + k * ld), v1 = _mm256_loadu_ps(src + k * ld + 8);
      _mm256_storeu_ps(dst + k * NR, v0);
      _mm256_storeu_ps(dst + k * NR + 8, v1);
    }
    return;
  }
  __m256i m0 = first_lanes(n), m1 = first_lanes(n > 8 ? n - 8 : 0);
  for (size_t k = 0; k < kc; k++) {
    _mm256_storeu_ps(dst + k * NR, _mm256_maskload_ps(src + k * ld, m0));
    _mm256_storeu_ps(dst + k * NR + 8, _mm256_maskload_ps(src + k * ld + 8, m1));
  }
}

/* 16 floats per step, the tail with masked loads and stores. */
static void dlc_f32_gemm_copy__avx2(float *dst, const float *src, size_t len) {
  size_t t = 0;
  for (; t + 16 <= len; t += 16) {
    __m256 v0 = _mm256_loadu_ps(src + t), v1 = _mm256_loadu_ps(src + t + 8);
    _mm256_storeu_ps(dst + t, v0);
    _mm256_storeu_ps(dst + t + 8, v1);
  }
  size_t r = len - t;
  if (r == 0) return;
  dlc_avx2_store_first(dst + t, (ptrdiff_t)r, _mm256_maskload_ps(src + t, first_lanes(r)));
  if (r > 8) dlc_avx2_store_first(dst + t + 8, (ptrdiff_t)r - 8, _mm256_maskload_ps(src + t + 8, first_lanes(r - 8)));
}

const dlc_f32_gemm_family dlc_f32_gemm__avx2 = {
    .name = "f32_gemm_6x16__avx2",
    .mr = MR,
    .nr = NR,
    .ukernel = dlc_f32_gemm_6x16__avx2,
    .ukernel_ct = dlc_f32_gemm_6x16_ct__avx2,
    .pack_rows = dlc_f32_gemm_pack_rows_6__avx2,
    .pack_cols = dlc_f32_gemm_pack_cols_16__avx2,
    .copy = dlc_f32_gemm_copy__avx2,
};
