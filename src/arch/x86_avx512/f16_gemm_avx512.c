/* f16 gemm micro-kernels and store, avx512 (F/BW/VL) + F16C (contract:
 * src/gemm_im2col/lowp_gemm_ukernel.h).
 *
 * Tile 14 x 32, the register layout of the f32 avx512 kernel (f32_gemm_avx512.c): 28
 * accumulators, two zmm of B and one broadcast of A. Each k step widens its 32 halves of B with
 * two vcvtph2ps (ymm of halves to zmm of floats) beside 28 FMAs. A is widened once per call
 * (ukernel: KC_CHUNK k steps at a time into a stack buffer) or by the driver for all the B panels
 * it sweeps (ukernel_a32, ukernel_ib), then broadcast from fp32 as the f32 kernel does. Having the
 * same tile as the f32 family also lets the im2col driver run NCHW 1 x 1 layers on the f32 kernel
 * itself with B widened while it is packed (pack_cols_f32: gemm_lowp.c asks for equal tiles).
 *
 * The avx2 family (../x86_avx2/f16_gemm_avx2.c) does the same on ymm with a 6 x 16 tile; on a
 * core with 512-bit FMAs it runs at half the f32 kernel's width, which this file exists to close.
 *
 * One function per (rows, vectors) pair from one template, so an edge tile computes only what
 * it stores; C, the halves of edge panels and every tail are read and written under lane masks,
 * so nothing outside the m x n corner (or past the last half asked for) is touched. */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#include "../../ukernel/config.h"

#define MR 14
#define NR 32
/* k steps of A widened per pass of ukernel: 14 KB of stack, the drivers' whole K block (256). */
#define KC_CHUNK 256

#define INLINE static inline __attribute__((always_inline))
#define FOR_ROWS _Pragma("GCC unroll 14") for (size_t i = 0; i < M; i++)

INLINE __mmask16 first_lanes(ptrdiff_t n) {
  return n <= 0 ? (__mmask16)0 : n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u);
}

INLINE __m512 widen16(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }

INLINE __m512 widen16_masked(const uint16_t *p, __mmask16 m) {
  return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
}

/* af[0 .. len) = a[0 .. len) widened (len a multiple of MR). */
INLINE void widen_a(size_t len, const uint16_t *restrict a, float *restrict af) {
  size_t t = 0;
  _Pragma("GCC unroll 4") for (; t + 16 <= len; t += 16) _mm512_storeu_ps(af + t, widen16(a + t));
  if (t < len) {
    const __mmask16 m = first_lanes((ptrdiff_t)(len - t));
    _mm512_mask_storeu_ps(af + t, m, widen16_masked(a + t, m));
  }
}

/* One k step of the M x (16 * NV) tile: b at the k-th NR halves of B, ap at the k-th MR floats of A. */
#define K_STEP(ap, b)                                                  \
  do {                                                                 \
    const __m512 b0 = widen16(b);                                      \
    const __m512 b1 = NV == 2 ? widen16((b) + 16) : _mm512_setzero_ps(); \
    FOR_ROWS {                                                         \
      const __m512 ai = _mm512_set1_ps((ap)[i]);                       \
      acc0[i] = _mm512_fmadd_ps(ai, b0, acc0[i]);                      \
      if (NV == 2) acc1[i] = _mm512_fmadd_ps(ai, b1, acc1[i]);         \
    }                                                                  \
  } while (0)

/* Rows [0, M) of the accumulators to C (added to C's values when accumulate), the first n columns. */
INLINE void tile_store(const size_t M, const size_t NV, __m512 acc0[], __m512 acc1[], size_t n, float *c, size_t ldc,
                       int accumulate) {
  const __mmask16 m0 = first_lanes((ptrdiff_t)n), m1 = first_lanes((ptrdiff_t)n - 16);
  FOR_ROWS {
    float *ci = c + i * ldc;
    if (accumulate) acc0[i] = _mm512_add_ps(acc0[i], _mm512_maskz_loadu_ps(m0, ci));
    _mm512_mask_storeu_ps(ci, m0, acc0[i]);
    if (NV == 2) {
      if (accumulate) acc1[i] = _mm512_add_ps(acc1[i], _mm512_maskz_loadu_ps(m1, ci + 16));
      _mm512_mask_storeu_ps(ci + 16, m1, acc1[i]);
    }
  }
}

/* a32 != NULL: A already widened (ukernel_a32); else a holds halves, widened here a chunk at a time
   (one or two rows broadcast their own halves instead: too few FMAs per k step to pay for the
   chunk's conversions). B's panel is whole (nr halves per k step) even on edge tiles. */
INLINE void tile_body(const size_t M, const size_t NV, size_t n, size_t kc, const uint16_t *restrict a,
                      const float *restrict a32, const uint16_t *restrict b, float *restrict c, size_t ldc,
                      int accumulate) {
  __m512 acc0[MR], acc1[MR];
  FOR_ROWS {
    acc0[i] = _mm512_setzero_ps();
    acc1[i] = _mm512_setzero_ps();
  }
  if (M <= 2 && !a32) {
    _Pragma("GCC unroll 4") for (size_t k = 0; k < kc; k++) {
      const __m512 b0 = widen16(b);
      const __m512 b1 = NV == 2 ? widen16(b + 16) : _mm512_setzero_ps();
      FOR_ROWS {
        const __m512 ai = _mm512_cvtph_ps(_mm256_set1_epi16((short)a[k * MR + i]));
        acc0[i] = _mm512_fmadd_ps(ai, b0, acc0[i]);
        if (NV == 2) acc1[i] = _mm512_fmadd_ps(ai, b1, acc1[i]);
      }
      b += NR;
    }
  } else {
    float af[KC_CHUNK * MR] __attribute__((aligned(64)));
    for (size_t k0 = 0; k0 < kc; k0 += KC_CHUNK) {
      const size_t kn = kc - k0 < KC_CHUNK ? kc - k0 : KC_CHUNK;
      const float *ap = af;
      if (a32)
        ap = a32 + k0 * MR;
      else
        widen_a(kn * MR, a + k0 * MR, af);
      _Pragma("GCC unroll 2") for (size_t k = 0; k < kn; k++) {
        K_STEP(ap, b);
        ap += MR;
        b += NR;
      }
    }
  }
  tile_store(M, NV, acc0, acc1, n, c, ldc, accumulate);
}

typedef void (*tile_fn)(size_t n, size_t kc, const uint16_t *restrict a, const uint16_t *restrict b,
                        float *restrict c, size_t ldc, int accumulate);
typedef void (*tile32_fn)(size_t n, size_t kc, const float *restrict a, const uint16_t *restrict b,
                          float *restrict c, size_t ldc, int accumulate);
#define DEFINE_TILE(M, NV)                                                                                 \
  static void tile_##M##x##NV(size_t n, size_t kc, const uint16_t *restrict a, const uint16_t *restrict b, \
                              float *restrict c, size_t ldc, int accumulate) {                           \
    tile_body(M, NV, n, kc, a, NULL, b, c, ldc, accumulate);                                               \
  }                                                                                                        \
  static void tile32_##M##x##NV(size_t n, size_t kc, const float *restrict a, const uint16_t *restrict b,  \
                                float *restrict c, size_t ldc, int accumulate) {                         \
    tile_body(M, NV, n, kc, NULL, a, b, c, ldc, accumulate);                                               \
  }
#define DEFINE_TILES(M) DEFINE_TILE(M, 1) DEFINE_TILE(M, 2)
DEFINE_TILES(1) DEFINE_TILES(2) DEFINE_TILES(3) DEFINE_TILES(4) DEFINE_TILES(5) DEFINE_TILES(6) DEFINE_TILES(7)
DEFINE_TILES(8) DEFINE_TILES(9) DEFINE_TILES(10) DEFINE_TILES(11) DEFINE_TILES(12) DEFINE_TILES(13) DEFINE_TILES(14)

#define ROW_TABLE(P, NV)                                                                                 \
  {P##1x##NV, P##2x##NV, P##3x##NV, P##4x##NV, P##5x##NV, P##6x##NV, P##7x##NV, P##8x##NV, P##9x##NV, \
   P##10x##NV, P##11x##NV, P##12x##NV, P##13x##NV, P##14x##NV}
static const tile_fn tiles[2][MR] = {ROW_TABLE(tile_, 1), ROW_TABLE(tile_, 2)};
static const tile32_fn tiles32[2][MR] = {ROW_TABLE(tile32_, 1), ROW_TABLE(tile32_, 2)};

static void f16_gemm_14x32(size_t m, size_t n, size_t kc, const uint16_t *a, const uint16_t *b, float *c, size_t ldc,
                           int accumulate) {
  tiles[n > 16][m - 1](n, kc, a, b, c, ldc, accumulate);
}

static void f16_gemm_a32_14x32(size_t m, size_t n, size_t kc, const float *a, const uint16_t *b, float *c, size_t ldc,
                               int accumulate) {
  tiles32[n > 16][m - 1](n, kc, a, b, c, ldc, accumulate);
}

/* ukernel_ib: A in fp32, each k row of B NR halves where the offset table says (the direct
   algorithm's copy of x), widened in registers; always NR columns. */
INLINE void ib_body(const size_t M, size_t kc, const float *restrict a, const uint16_t *restrict b,
                    const ptrdiff_t *restrict boff, float *restrict c, size_t ldc, int accumulate) {
  __m512 acc0[MR], acc1[MR];
  FOR_ROWS {
    acc0[i] = _mm512_setzero_ps();
    acc1[i] = _mm512_setzero_ps();
  }
  _Pragma("GCC unroll 2") for (size_t k = 0; k < kc; k++) {
    const uint16_t *bk = b + boff[k];
    const size_t NV = 2;
    K_STEP(a, bk);
    a += MR;
  }
  tile_store(M, 2, acc0, acc1, NR, c, ldc, accumulate);
}

typedef void (*ib_fn)(size_t kc, const float *restrict a, const uint16_t *restrict b, const ptrdiff_t *restrict boff,
                      float *restrict c, size_t ldc, int accumulate);
#define DEFINE_IB(M)                                                                                   \
  static void ib_##M(size_t kc, const float *restrict a, const uint16_t *restrict b,                   \
                     const ptrdiff_t *restrict boff, float *restrict c, size_t ldc, int accumulate) { \
    ib_body(M, kc, a, b, boff, c, ldc, accumulate);                                                    \
  }
DEFINE_IB(1) DEFINE_IB(2) DEFINE_IB(3) DEFINE_IB(4) DEFINE_IB(5) DEFINE_IB(6) DEFINE_IB(7)
DEFINE_IB(8) DEFINE_IB(9) DEFINE_IB(10) DEFINE_IB(11) DEFINE_IB(12) DEFINE_IB(13) DEFINE_IB(14)
static const ib_fn ib_tiles[MR] = {ib_1, ib_2, ib_3, ib_4, ib_5, ib_6, ib_7, ib_8, ib_9, ib_10, ib_11, ib_12, ib_13, ib_14};

static void f16_gemm_ib_14x32(size_t m, size_t kc, const float *a, const uint16_t *b, const ptrdiff_t *boff, float *c,
                              size_t ldc, int accumulate) {
  ib_tiles[m - 1](kc, a, b, boff, c, ldc, accumulate);
}

static void f16_widen_a_14(size_t kc, const uint16_t *a, float *af) { widen_a(kc * MR, a, af); }

/* Bias, then each bound as the first operand of max/min: they return the second operand when
   either is NaN, so a NaN sum passes through. vcvtps2ph with an immediate rounding mode rounds to
   nearest even whatever MXCSR says, overflows to inf and keeps NaN a NaN. */
INLINE __m256i to_f16(__m512 v, __m512 bv, __m512 lo, __m512 hi) {
  v = _mm512_min_ps(hi, _mm512_max_ps(lo, _mm512_add_ps(v, bv)));
  return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
}

static void f16_store_16(size_t n, const float *acc, const float *bias, size_t c0, int per_column, float out_min,
                         float out_max, uint16_t *y) {
  const __m512 lo = _mm512_set1_ps(out_min), hi = _mm512_set1_ps(out_max);
  const float *bp = bias + c0;
  const __m512 bc = _mm512_set1_ps(*bp);
  size_t j = 0;
  if (per_column) {
    _Pragma("GCC unroll 2") for (; j + 16 <= n; j += 16)
      _mm256_storeu_si256((__m256i *)(y + j), to_f16(_mm512_loadu_ps(acc + j), _mm512_loadu_ps(bp + j), lo, hi));
  } else {
    _Pragma("GCC unroll 2") for (; j + 16 <= n; j += 16)
      _mm256_storeu_si256((__m256i *)(y + j), to_f16(_mm512_loadu_ps(acc + j), bc, lo, hi));
  }
  if (j == n) return;
  const __mmask16 m = first_lanes((ptrdiff_t)(n - j));
  const __m512 bv = per_column ? _mm512_maskz_loadu_ps(m, bp + j) : bc;
  _mm256_mask_storeu_epi16(y + j, m, to_f16(_mm512_maskz_loadu_ps(m, acc + j), bv, lo, hi));
}

/* Strided runs one element at a time with F16C. */
static void f16_widen_run_16(size_t n, const uint16_t *src, size_t step, float *dst) {
  size_t j = 0;
  if (step == 1) {
    for (; j + 16 <= n; j += 16) _mm512_storeu_ps(dst + j, widen16(src + j));
    if (j < n) {
      const __mmask16 m = first_lanes((ptrdiff_t)(n - j));
      _mm512_mask_storeu_ps(dst + j, m, widen16_masked(src + j, m));
    }
    return;
  }
  for (; j < n; j++) dst[j] = _cvtsh_ss(src[j * step]);
}

/* Two vcvtph2ps per row; a short last panel loads under lane masks (masked-off lanes read
   nothing and widen to +0). */
static void f16_pack_cols_f32_32(size_t kc, size_t n, const uint16_t *src, size_t ld, float *dst) {
  if (n == NR) {
    for (size_t k = 0; k < kc; k++, src += ld, dst += NR) {
      _mm512_storeu_ps(dst, widen16(src));
      _mm512_storeu_ps(dst + 16, widen16(src + 16));
    }
    return;
  }
  const __mmask16 m0 = first_lanes((ptrdiff_t)n), m1 = first_lanes((ptrdiff_t)n - 16);
  for (size_t k = 0; k < kc; k++, src += ld, dst += NR) {
    _mm512_storeu_ps(dst, widen16_masked(src, m0));
    _mm512_storeu_ps(dst + 16, widen16_masked(src + 16, m1));
  }
}

/* gemv: 64 rows (four zmm of fp32, widened from 128 bytes of halves per k) against nb <= 4 rows
   of x, each x value broadcast. With one row, two k at a time into two sets of accumulators: the
   four chains of one set would wait on the FMA latency. */
#define GEMV_MR 64
INLINE void gemv_body(const size_t NB, size_t m, size_t kc, const uint16_t *restrict a, const float *restrict b,
                      size_t ldb, float *restrict c, size_t ldc) {
  const size_t SETS = NB == 1 ? 2 : 1;
  __m512 acc[2][4][4];
  for (size_t s = 0; s < SETS; s++)
    for (size_t r = 0; r < NB; r++)
      for (size_t v = 0; v < 4; v++) acc[s][r][v] = _mm512_setzero_ps();
  size_t k = 0;
  for (; k + SETS <= kc; k += SETS)
    for (size_t s = 0; s < SETS; s++) {
      __m512 w[4];
      for (size_t v = 0; v < 4; v++) w[v] = widen16(a + (k + s) * GEMV_MR + 16 * v);
      for (size_t r = 0; r < NB; r++) {
        const __m512 xb = _mm512_set1_ps(b[r * ldb + k + s]);
        for (size_t v = 0; v < 4; v++) acc[s][r][v] = _mm512_fmadd_ps(w[v], xb, acc[s][r][v]);
      }
    }
  for (; k < kc; k++) { /* one row, kc odd */
    for (size_t v = 0; v < 4; v++)
      acc[0][0][v] = _mm512_fmadd_ps(widen16(a + k * GEMV_MR + 16 * v), _mm512_set1_ps(b[k]), acc[0][0][v]);
  }
  for (size_t r = 0; r < NB; r++)
    for (size_t v = 0; v < 4; v++) {
      const __m512 sum = SETS == 2 ? _mm512_add_ps(acc[0][r][v], acc[1][r][v]) : acc[0][r][v];
      const ptrdiff_t left = (ptrdiff_t)m - 16 * (ptrdiff_t)v;
      if (left >= 16)
        _mm512_storeu_ps(c + r * ldc + 16 * v, sum);
      else if (left > 0)
        _mm512_mask_storeu_ps(c + r * ldc + 16 * v, first_lanes(left), sum);
    }
}

#define DEFINE_GEMV(NB)                                                                                \
  static void gemv_##NB(size_t m, size_t kc, const uint16_t *restrict a, const float *restrict b,     \
                        size_t ldb, float *restrict c, size_t ldc) {                                 \
    gemv_body(NB, m, kc, a, b, ldb, c, ldc);                                                         \
  }
DEFINE_GEMV(1) DEFINE_GEMV(2) DEFINE_GEMV(3) DEFINE_GEMV(4)

static void f16_gemv_64(size_t m, size_t nb, size_t kc, const uint16_t *a, const float *b, size_t ldb, float *c,
                        size_t ldc) {
  static void (*const fns[4])(size_t, size_t, const uint16_t *restrict, const float *restrict, size_t,
                              float *restrict, size_t) = {gemv_1, gemv_2, gemv_3, gemv_4};
  fns[nb - 1](m, kc, a, b, ldb, c, ldc);
}

const dlc_f16_gemm_family dlc_f16_gemm__avx512 = {
    .name = "f16_gemm_14x32__avx512",
    .mr = MR,
    .nr = NR,
    .ukernel = f16_gemm_14x32,
    .store = f16_store_16,
    .widen_a = f16_widen_a_14,
    .ukernel_a32 = f16_gemm_a32_14x32,
    .ukernel_ib = f16_gemm_ib_14x32,
    .widen_run = f16_widen_run_16,
    .pack_cols_f32 = f16_pack_cols_f32_32,
    .gemv_mr = GEMV_MR,
    .gemv = f16_gemv_64,
    .gemv_name = "f16_gemv_64__avx512",
};
