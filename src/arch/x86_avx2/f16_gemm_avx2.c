/* f16 gemm micro-kernel and store, avx2 + f16c (contract: src/gemm_im2col/lowp_gemm_ukernel.h).
 *
 * Tile 6 x 16, the register layout of the f32 kernel: 12 accumulators, 2 for the B row and 1 for
 * the broadcast of A. The B row is widened in registers (two vcvtph2ps per k step), which costs
 * next to nothing beside the 12 FMAs on Zen 2 as long as the load stays a separate instruction:
 * with the memory-operand form of vcvtph2ps a k step took 7 cycles instead of 6.
 *
 * A has no such cheap path. A broadcast half per row needs one conversion per row (6 per k step:
 * 63% of the f32 rate measured), and widening a k column once and spreading its lanes with
 * vpermilps leaves too few registers (67%). So each call first widens its A micro-panel into an
 * fp32 buffer on the stack (0.75 conversions and stores per k step, KC_CHUNK steps at a time) and
 * the k loop then broadcasts from it as the f32 kernel does. Measured on Zen 2, one thread,
 * kc = 256 in L1: 88 GFLOP/s against the f32 kernel's 105; with A given in fp32 the same loop
 * ran at 98%, so the remaining gap is the widening of A, which the contract asks of every call.
 *
 * Edge tiles are generated per (rows, vectors) pair as in the f32 file, so they compute only
 * what they store; C is read with maskload and written in pieces (avx2_store.h). */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../ukernel/config.h"
#include "avx2_store.h"

#define MR 6
#define NR 16
/* k steps of A widened per pass: 6 KB of stack, the driver's whole K block (256) in one pass. */
#define KC_CHUNK 256
/* Bytes of B between the load and its prefetch: as in the f32 kernel, 1 KB for a full tile and
   a DRAM latency's worth (4 KB) for the one- and two-row tiles that stream B from memory. */
#define B_PREFETCH_BYTES(M) ((M) <= 2 ? 4096 : 1024)

typedef void (*tile_fn)(size_t n, size_t kc, const uint16_t *restrict a, const uint16_t *restrict b,
                        float *restrict c, size_t ldc, int accumulate);

#define FOR_ROWS _Pragma("GCC unroll 6") for (size_t i = 0; i < M; i++)

/* The empty asm keeps the load out of vcvtph2ps (see the top of the file). */
static inline __attribute__((always_inline)) __m256 widen_reg(const uint16_t *p) {
  __m128i h = _mm_loadu_si128((const __m128i *)p);
  __asm__("" : "+x"(h));
  return _mm256_cvtph_ps(h);
}

/* af[0 .. len) = a[0 .. len) widened; len is a multiple of MR, so a tail is 2, 4 or 6 halves.
   Here the memory-operand form is the faster one (with the store, 1 against 2 cycles each). */
static inline __attribute__((always_inline)) void widen_a(size_t len, const uint16_t *restrict a,
                                                          float *restrict af) {
  size_t t = 0;
  _Pragma("GCC unroll 4") for (; t + 8 <= len; t += 8)
    _mm256_store_ps(af + t, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(a + t))));
  size_t r = len - t;
  if (r == 0) return;
  int32_t w;
  __m128i h;
  if (r == 2) {
    memcpy(&w, a + t, 4);
    h = _mm_cvtsi32_si128(w);
  } else {
    h = _mm_loadl_epi64((const __m128i *)(a + t));
    if (r == 6) {
      memcpy(&w, a + t + 4, 4);
      h = _mm_unpacklo_epi64(h, _mm_cvtsi32_si128(w));
    }
  }
  _mm256_store_ps(af + t, _mm256_cvtph_ps(h)); /* lanes past len land in the buffer's slack */
}

/* The half at p widened and broadcast (the one- and two-row tiles). */
static inline __attribute__((always_inline)) __m256 widen_bcast(const uint16_t *p) {
  __m128i h = _mm_set1_epi16((short)*p);
  __asm__("" : "+x"(h));
  return _mm256_cvtph_ps(h);
}

/* One k step of the M x (8 * NV) tile: b points at the k-th NR halves of B, A_ROW(i) is the
   k-th element of row i of A as a broadcast vector. */
#define K_STEP(A_ROW, b)                                               \
  do {                                                                 \
    __m256 b0 = widen_reg(b), b1 = _mm256_setzero_ps();                \
    if (NV == 2) b1 = widen_reg((b) + 8);                              \
    FOR_ROWS {                                                         \
      __m256 ai = A_ROW(i);                                            \
      acc0[i] = _mm256_fmadd_ps(ai, b0, acc0[i]);                      \
      if (NV == 2) acc1[i] = _mm256_fmadd_ps(ai, b1, acc1[i]);         \
    }                                                                  \
  } while (0)
#define A_FROM_BUF(i) _mm256_broadcast_ss(ap + (i))
#define A_FROM_BUF_NEXT(i) _mm256_broadcast_ss(ap + MR + (i))
#define A_FROM_HALVES(i) widen_bcast(a + k * MR + (i))

static const int32_t lane_mask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

/* The first v (<= 8) lanes all ones. */
static inline __m256i first_lanes(size_t v) {
  return _mm256_loadu_si256((const __m256i *)(lane_mask + 8 - (v > 8 ? 8 : v)));
}

/* a32 != NULL: A is already widened (ukernel_a32, the driver widens a micro-panel once for all
   the B panels it sweeps); else a holds halves. */
static inline __attribute__((always_inline)) void tile_body(const size_t M, const size_t NV, size_t n,
                                                            size_t kc, const uint16_t *restrict a,
                                                            const float *restrict a32,
                                                            const uint16_t *restrict b, float *restrict c,
                                                            size_t ldc, int accumulate) {
  float af[KC_CHUNK * MR + 8] __attribute__((aligned(32)));
  __m256 acc0[MR], acc1[MR];
  FOR_ROWS {
    acc0[i] = _mm256_setzero_ps();
    acc1[i] = _mm256_setzero_ps();
    /* C is needed only after the k loop: start bringing its lines in now. */
    _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch((const char *)(c + i * ldc + 8 * NV - 1), _MM_HINT_T0);
  }
  if (M == 1) {
    /* One row (a dense layer with batch 1): 2 FMAs per k step would wait on their own previous
       result (5 cycles of latency on Zen 2); four k-interleaved partial sums keep 8 in flight. */
    __m256 p0[4], p1[4];
    _Pragma("GCC unroll 4") for (size_t u = 0; u < 4; u++) p0[u] = p1[u] = _mm256_setzero_ps();
    size_t k = 0;
    for (; k + 4 <= kc; k += 4) {
      _mm_prefetch((const char *)b + B_PREFETCH_BYTES(M), _MM_HINT_T0);
      _mm_prefetch((const char *)b + B_PREFETCH_BYTES(M) + 64, _MM_HINT_T0);
      _Pragma("GCC unroll 4") for (size_t u = 0; u < 4; u++) {
        const __m256 av = a32 ? _mm256_broadcast_ss(a32 + (k + u) * MR) : widen_bcast(a + (k + u) * MR);
        p0[u] = _mm256_fmadd_ps(av, widen_reg(b + u * NR), p0[u]);
        if (NV == 2) p1[u] = _mm256_fmadd_ps(av, widen_reg(b + u * NR + 8), p1[u]);
      }
      b += 4 * NR;
    }
    for (; k < kc; k++) {
      const __m256 av = a32 ? _mm256_broadcast_ss(a32 + k * MR) : widen_bcast(a + k * MR);
      p0[0] = _mm256_fmadd_ps(av, widen_reg(b), p0[0]);
      if (NV == 2) p1[0] = _mm256_fmadd_ps(av, widen_reg(b + 8), p1[0]);
      b += NR;
    }
    acc0[0] = _mm256_add_ps(_mm256_add_ps(p0[0], p0[1]), _mm256_add_ps(p0[2], p0[3]));
    acc1[0] = _mm256_add_ps(_mm256_add_ps(p1[0], p1[1]), _mm256_add_ps(p1[2], p1[3]));
  } else if (M <= 2 && !a32) {
    /* Too few FMAs per k step to pay for widening all MR rows of A: their own broadcasts
       instead (measured 21 against 17 GFLOP/s for one row, as fast as the f32 kernel). */
    _Pragma("GCC unroll 4") for (size_t k = 0; k < kc; k++) {
      if (k % 2 == 0) _mm_prefetch((const char *)b + B_PREFETCH_BYTES(M), _MM_HINT_T0);
      K_STEP(A_FROM_HALVES, b);
      b += NR;
    }
  } else {
    for (size_t k0 = 0; k0 < kc; k0 += KC_CHUNK) {
      const size_t kn = kc - k0 < KC_CHUNK ? kc - k0 : KC_CHUNK;
      const float *ap = af;
      if (a32)
        ap = a32 + k0 * MR;
      else
        widen_a(kn * MR, a + k0 * MR, af);
      size_t k = 0;
      /* two k steps are one 64-byte line of B: one prefetch per pair */
      _Pragma("GCC unroll 4") for (; k + 2 <= kn; k += 2) {
        _mm_prefetch((const char *)b + B_PREFETCH_BYTES(M), _MM_HINT_T0);
        K_STEP(A_FROM_BUF, b);
        K_STEP(A_FROM_BUF_NEXT, b + NR);
        ap += 2 * MR;
        b += 2 * NR;
      }
      if (k < kn) {
        K_STEP(A_FROM_BUF, b);
        b += NR;
      }
    }
  }

  if (accumulate) {
    __m256i m0 = first_lanes(n), m1 = first_lanes(n > 8 ? n - 8 : 0);
    FOR_ROWS {
      acc0[i] = _mm256_add_ps(acc0[i], _mm256_maskload_ps(c + i * ldc, m0));
      if (NV == 2) acc1[i] = _mm256_add_ps(acc1[i], _mm256_maskload_ps(c + i * ldc + 8, m1));
    }
  }
  /* n is 8 * NV on all but the right-edge tiles: whole-vector stores there */
  const ptrdiff_t n0 = n == 8 * NV ? 8 : (ptrdiff_t)n, n1 = n == 8 * NV ? 8 : (ptrdiff_t)n - 8;
  FOR_ROWS {
    dlc_avx2_store_first(c + i * ldc, n0, acc0[i]);
    if (NV == 2) dlc_avx2_store_first(c + i * ldc + 8, n1, acc1[i]);
  }
}

#define DEFINE_TILE(M, NV)                                                                             \
  static void tile_##M##x##NV(size_t n, size_t kc, const uint16_t *restrict a, const uint16_t *restrict b, \
                              float *restrict c, size_t ldc, int accumulate) {                         \
    tile_body(M, NV, n, kc, a, NULL, b, c, ldc, accumulate);                                           \
  }                                                                                                    \
  static void tile32_##M##x##NV(size_t n, size_t kc, const float *restrict a, const uint16_t *restrict b, \
                                float *restrict c, size_t ldc, int accumulate) {                       \
    tile_body(M, NV, n, kc, NULL, a, b, c, ldc, accumulate);                                           \
  }
#define DEFINE_TILES(M) DEFINE_TILE(M, 1) DEFINE_TILE(M, 2)
DEFINE_TILES(1) DEFINE_TILES(2) DEFINE_TILES(3) DEFINE_TILES(4) DEFINE_TILES(5) DEFINE_TILES(6)

static const tile_fn tiles[2][MR] = {
    {tile_1x1, tile_2x1, tile_3x1, tile_4x1, tile_5x1, tile_6x1},
    {tile_1x2, tile_2x2, tile_3x2, tile_4x2, tile_5x2, tile_6x2},
};

static void dlc_f16_gemm_6x16__avx2(size_t m, size_t n, size_t kc, const uint16_t *a, const uint16_t *b,
                                    float *c, size_t ldc, int accumulate) {
  tiles[n > 8][m - 1](n, kc, a, b, c, ldc, accumulate);
}

typedef void (*tile32_fn)(size_t n, size_t kc, const float *restrict a, const uint16_t *restrict b,
                          float *restrict c, size_t ldc, int accumulate);
static const tile32_fn tiles32[2][MR] = {
    {tile32_1x1, tile32_2x1, tile32_3x1, tile32_4x1, tile32_5x1, tile32_6x1},
    {tile32_1x2, tile32_2x2, tile32_3x2, tile32_4x2, tile32_5x2, tile32_6x2},
};

static void dlc_f16_gemm_6x16_a32__avx2(size_t m, size_t n, size_t kc, const float *a, const uint16_t *b,
                                        float *c, size_t ldc, int accumulate) {
  tiles32[n > 8][m - 1](n, kc, a, b, c, ldc, accumulate);
}

/* ukernel_ib: A in fp32 (the driver widened it), each k row of B 16 halves where the offset
   table says (the direct algorithm's copy of x), widened in registers; always 16 columns. */
static inline __attribute__((always_inline)) void ib_body(const size_t M, size_t kc, const float *restrict a,
                                                          const uint16_t *restrict b, const ptrdiff_t *restrict boff,
                                                          float *restrict c, size_t ldc, int accumulate) {
  __m256 acc0[MR], acc1[MR];
  FOR_ROWS {
    acc0[i] = _mm256_setzero_ps();
    acc1[i] = _mm256_setzero_ps();
  }
  _Pragma("GCC unroll 4") for (size_t k = 0; k < kc; k++) {
    const uint16_t *bk = b + boff[k];
    const __m256 b0 = widen_reg(bk), b1 = widen_reg(bk + 8);
    FOR_ROWS {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      acc0[i] = _mm256_fmadd_ps(ai, b0, acc0[i]);
      acc1[i] = _mm256_fmadd_ps(ai, b1, acc1[i]);
    }
    a += MR;
  }
  FOR_ROWS {
    float *ci = c + i * ldc;
    if (accumulate) {
      acc0[i] = _mm256_add_ps(acc0[i], _mm256_loadu_ps(ci));
      acc1[i] = _mm256_add_ps(acc1[i], _mm256_loadu_ps(ci + 8));
    }
    _mm256_storeu_ps(ci, acc0[i]);
    _mm256_storeu_ps(ci + 8, acc1[i]);
  }
}

typedef void (*ib_fn)(size_t kc, const float *restrict a, const uint16_t *restrict b, const ptrdiff_t *restrict boff,
                      float *restrict c, size_t ldc, int accumulate);
#define DEFINE_IB(M)                                                                                   \
  static void ib_##M(size_t kc, const float *restrict a, const uint16_t *restrict b,                   \
                     const ptrdiff_t *restrict boff, float *restrict c, size_t ldc, int accumulate) { \
    ib_body(M, kc, a, b, boff, c, ldc, accumulate);                                                    \
  }
DEFINE_IB(1) DEFINE_IB(2) DEFINE_IB(3) DEFINE_IB(4) DEFINE_IB(5) DEFINE_IB(6)
static const ib_fn ib_tiles[MR] = {ib_1, ib_2, ib_3, ib_4, ib_5, ib_6};

static void dlc_f16_gemm_ib_6x16__avx2(size_t m, size_t kc, const float *a, const uint16_t *b, const ptrdiff_t *boff,
                                       float *c, size_t ldc, int accumulate) {
  ib_tiles[m - 1](kc, a, b, boff, c, ldc, accumulate);
}

static void dlc_f16_widen_a__avx2(size_t kc, const uint16_t *a, float *af) { widen_a(kc * MR, a, af); }

/* Bias, then the bound as the first operand of max/min: they return the second operand when
   either is NaN, so a NaN sum passes through (as dlc_clamp's comparisons let it). vcvtps2ph with
   an immediate rounding mode rounds to nearest even whatever MXCSR says, overflows to inf and
   keeps NaN a NaN, which is dlc_f32_to_f16 bit for bit apart from NaN payloads. */
static inline __attribute__((always_inline)) __m128i to_f16(__m256 v, __m256 bv, __m256 lo, __m256 hi) {
  v = _mm256_add_ps(v, bv);
  v = _mm256_min_ps(hi, _mm256_max_ps(lo, v));
  return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
}

static void dlc_f16_store__avx2(size_t n, const float *acc, const float *bias, size_t c0, int per_column,
                                float out_min, float out_max, uint16_t *y) {
  const __m256 lo = _mm256_set1_ps(out_min), hi = _mm256_set1_ps(out_max);
  const float *bp = bias + c0;
  const __m256 bc = _mm256_broadcast_ss(bp);
  size_t j = 0;
  if (per_column) {
    _Pragma("GCC unroll 2") for (; j + 8 <= n; j += 8)
      _mm_storeu_si128((__m128i *)(y + j), to_f16(_mm256_loadu_ps(acc + j), _mm256_loadu_ps(bp + j), lo, hi));
  } else {
    _Pragma("GCC unroll 2") for (; j + 8 <= n; j += 8)
      _mm_storeu_si128((__m128i *)(y + j), to_f16(_mm256_loadu_ps(acc + j), bc, lo, hi));
  }
  size_t r = n - j;
  if (r == 0) return;
  /* the last 1..7: masked loads, then 4 + 2 + 1 half pieces (no byte past y[n - 1]) */
  const __m256i mk = first_lanes(r);
  dlc_avx2_store_first_f16(y + j, (ptrdiff_t)r,
                           to_f16(_mm256_maskload_ps(acc + j, mk), per_column ? _mm256_maskload_ps(bp + j, mk) : bc, lo, hi));
}

/* Strided runs convert one element at a time with F16C (the portable conversion branches on
   the exponent, several times slower). */
static void dlc_f16_widen_run__avx2(size_t n, const uint16_t *src, size_t step, float *dst) {
  size_t j = 0;
  if (step == 1)
    for (; j + 8 <= n; j += 8) _mm256_storeu_ps(dst + j, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + j))));
  for (; j < n; j++) dst[j] = _cvtsh_ss(src[j * step]);
}

/* Full panels: two vcvtph2ps per row; a short last panel goes through a zeroed row copy (no
   16-bit masked load), so nothing past src[k * ld + n - 1] is read. */
static void dlc_f16_pack_cols_f32__avx2(size_t kc, size_t n, const uint16_t *src, size_t ld, float *dst) {
  if (n == NR) {
    for (size_t k = 0; k < kc; k++, src += ld, dst += NR) {
      _mm256_storeu_ps(dst, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)src)));
      _mm256_storeu_ps(dst + 8, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + 8))));
    }
    return;
  }
  for (size_t k = 0; k < kc; k++, src += ld, dst += NR) {
    uint16_t t[NR] = {0};
    memcpy(t, src, n * sizeof(uint16_t));
    _mm256_storeu_ps(dst, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)t)));
    _mm256_storeu_ps(dst + 8, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(t + 8))));
  }
}

const dlc_f16_gemm_family dlc_f16_gemm__avx2 = {
    .name = "f16_gemm_6x16__avx2",
    .mr = MR,
    .nr = NR,
    .ukernel = dlc_f16_gemm_6x16__avx2,
    .store = dlc_f16_store__avx2,
    .widen_a = dlc_f16_widen_a__avx2,
    .ukernel_a32 = dlc_f16_gemm_6x16_a32__avx2,
    .ukernel_ib = dlc_f16_gemm_ib_6x16__avx2,
    .widen_run = dlc_f16_widen_run__avx2,
    .pack_cols_f32 = dlc_f16_pack_cols_f32__avx2,
};
