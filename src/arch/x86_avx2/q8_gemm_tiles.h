/* q8_gemm_tiles.h - the int8 gemm product kernels (ukernel and ukernel_ib of
 * lowp_gemm_ukernel.h, tile 6 x 16c2 on 256-bit integer vectors) as one template for every x86
 * ISA that has them. A file instantiates it once, after defining
 *   Q8_ISA                 the name suffix (avx2, avxvnni, avx512vnni)
 *   Q8_DOT2(acc, a, b)     acc + the s32 sums of the s16 pair products of a and b, per lane
 * avx2 spells Q8_DOT2 vpmaddwd + vpaddd; the VNNI ISAs spell it vpdpwssd, which computes the same
 * wrapping s32 sum in one instruction, so all instances give the same results bit for bit and
 * the avx2 one (run on every x86-64 CI machine) tests the template the others share. It defines
 *   static void Q8_FN(dlc_q8_gemm_6x16c2__)(...)      the family's ukernel
 *   static void Q8_FN(dlc_q8_gemm_ib_6x16c2__)(...)   its ukernel_ib
 *
 * Per k pair two ymm of B (8 columns x 2 k each) and, per row, one broadcast A pair; the pair sum
 * is exact in s32 (|sum| <= 2 * 255 * 128) and goes into one of 12 accumulators. Zen 2 issues one
 * vpmaddwd per cycle, so the avx2 tile is bound by it as long as loads (8 per 12 vpmaddwd) and
 * the vpaddd fit beside it; 12 accumulators + 2 B + the broadcast + the product use all 16 ymm
 * without spilling. vpdpwssd drops the vpaddd and the product register.
 *
 * As in the f32 file, one function per (rows, vectors) pair, so an edge tile computes only what
 * it stores, and C is written in 4 + 2 + 1 pieces (no vpmaskmovd stores: microcoded on AMD). */
#if !defined(Q8_ISA) || !defined(Q8_DOT2)
#error "define Q8_ISA and Q8_DOT2 before including q8_gemm_tiles.h"
#endif

#define Q8_CAT2(a, b) a##b
#define Q8_CAT(a, b) Q8_CAT2(a, b)
#define Q8_FN(name) Q8_CAT(name, Q8_ISA)

#define MR 6
#define NR 16
/* k pairs between a B load and its prefetch: B is one cache line per k pair, as in the f32
   kernel per k step, so the same distances (one- and two-row tiles are bound by memory). */
#define B_PREFETCH_PAIRS(M) ((M) <= 2 ? 64 : 16)

typedef void (*tile_fn)(size_t n, size_t kc, const int16_t *restrict a, const int16_t *restrict b,
                        int32_t *restrict c, size_t ldc, int accumulate);

#define FOR_ROWS _Pragma("GCC unroll 6") for (size_t i = 0; i < M; i++)

static const int32_t lane_mask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

static inline __m256i first_lanes(size_t v) {
  return _mm256_loadu_si256((const __m256i *)(lane_mask + 8 - (v > 8 ? 8 : v)));
}

/* p[i] = v[i] for i < min(n, 8); nothing else written. */
static inline __attribute__((always_inline)) void store_first_epi32(int32_t *p, ptrdiff_t n, __m256i v) {
  if (n >= 8) {
    _mm256_storeu_si256((__m256i *)p, v);
    return;
  }
  if (n <= 0) return;
  __m128i x = _mm256_castsi256_si128(v);
  if (n & 4) {
    _mm_storeu_si128((__m128i *)p, x);
    x = _mm256_extracti128_si256(v, 1);
    p += 4;
  }
  if (n & 2) {
    _mm_storel_epi64((__m128i *)p, x);
    x = _mm_unpackhi_epi64(x, x);
    p += 2;
  }
  if (n & 1) *p = _mm_cvtsi128_si32(x);
}

static inline __attribute__((always_inline)) void tile_body(const size_t M, const size_t NV, size_t n, size_t kc,
                                                            const int16_t *restrict a, const int16_t *restrict b,
                                                            int32_t *restrict c, size_t ldc, int accumulate) {
  __m256i acc0[MR], acc1[MR];
  FOR_ROWS {
    acc0[i] = _mm256_setzero_si256();
    acc1[i] = _mm256_setzero_si256();
    _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch((const char *)(c + i * ldc + 8 * NV - 1), _MM_HINT_T0);
  }
  _Pragma("GCC unroll 4") for (size_t k2 = 0; k2 < kc / 2; k2++) {
    _mm_prefetch((const char *)(b + B_PREFETCH_PAIRS(M) * 2 * NR), _MM_HINT_T0);
    __m256i b0 = _mm256_loadu_si256((const __m256i *)b), b1 = _mm256_setzero_si256();
    if (NV == 2) b1 = _mm256_loadu_si256((const __m256i *)(b + 16));
    FOR_ROWS {
      int32_t pair;
      memcpy(&pair, a + 2 * i, sizeof pair);
      __m256i ai = _mm256_set1_epi32(pair);
      acc0[i] = Q8_DOT2(acc0[i], ai, b0);
      if (NV == 2) acc1[i] = Q8_DOT2(acc1[i], ai, b1);
    }
    a += 2 * MR;
    b += 2 * NR;
  }

  if (accumulate) {
    __m256i m0 = first_lanes(n), m1 = first_lanes(n > 8 ? n - 8 : 0);
    FOR_ROWS {
      acc0[i] = _mm256_add_epi32(acc0[i], _mm256_maskload_epi32(c + i * ldc, m0));
      if (NV == 2) acc1[i] = _mm256_add_epi32(acc1[i], _mm256_maskload_epi32(c + i * ldc + 8, m1));
    }
  }
  /* n is 8 * NV on all but the right-edge tiles: whole-vector stores there */
  const ptrdiff_t n0 = n == 8 * NV ? 8 : (ptrdiff_t)n, n1 = n == 8 * NV ? 8 : (ptrdiff_t)n - 8;
  FOR_ROWS {
    store_first_epi32(c + i * ldc, n0, acc0[i]);
    if (NV == 2) store_first_epi32(c + i * ldc + 8, n1, acc1[i]);
  }
}

#define DEFINE_TILE(M, NV)                                                                                 \
  static void tile_##M##x##NV(size_t n, size_t kc, const int16_t *restrict a, const int16_t *restrict b, \
                              int32_t *restrict c, size_t ldc, int accumulate) {                        \
    tile_body(M, NV, n, kc, a, b, c, ldc, accumulate);                                                   \
  }
#define DEFINE_TILES(M) DEFINE_TILE(M, 1) DEFINE_TILE(M, 2)
DEFINE_TILES(1) DEFINE_TILES(2) DEFINE_TILES(3) DEFINE_TILES(4) DEFINE_TILES(5) DEFINE_TILES(6)

static const tile_fn tiles[2][MR] = {
    {tile_1x1, tile_2x1, tile_3x1, tile_4x1, tile_5x1, tile_6x1},
    {tile_1x2, tile_2x2, tile_3x2, tile_4x2, tile_5x2, tile_6x2},
};

static void Q8_FN(dlc_q8_gemm_6x16c2__)(size_t m, size_t n, size_t kc, const int16_t *a, const int16_t *b,
                                     int32_t *c, size_t ldc, int accumulate) {
  tiles[n > 8][m - 1](n, kc, a, b, c, ldc, accumulate);
}

/* ukernel_ib: the same 6 x 16c2 register tile with each k pair's B row read where the offset
   table says (one 64-byte run of the direct algorithm's copy of x) and always 16 columns. */
static inline __attribute__((always_inline)) void ib_body(const size_t M, size_t kc, const int16_t *restrict a,
                                                          const int16_t *restrict b, const ptrdiff_t *restrict boff,
                                                          int32_t *restrict c, size_t ldc, int accumulate) {
  __m256i acc0[MR], acc1[MR];
  FOR_ROWS {
    acc0[i] = _mm256_setzero_si256();
    acc1[i] = _mm256_setzero_si256();
  }
  _Pragma("GCC unroll 4") for (size_t k2 = 0; k2 < kc / 2; k2++) {
    const int16_t *bk = b + boff[k2];
    const __m256i b0 = _mm256_loadu_si256((const __m256i *)bk), b1 = _mm256_loadu_si256((const __m256i *)(bk + 16));
    FOR_ROWS {
      int32_t pair;
      memcpy(&pair, a + 2 * i, sizeof pair);
      __m256i ai = _mm256_set1_epi32(pair);
      acc0[i] = Q8_DOT2(acc0[i], ai, b0);
      acc1[i] = Q8_DOT2(acc1[i], ai, b1);
    }
    a += 2 * MR;
  }
  FOR_ROWS {
    int32_t *ci = c + i * ldc;
    if (accumulate) {
      acc0[i] = _mm256_add_epi32(acc0[i], _mm256_loadu_si256((const __m256i *)ci));
      acc1[i] = _mm256_add_epi32(acc1[i], _mm256_loadu_si256((const __m256i *)(ci + 8)));
    }
    _mm256_storeu_si256((__m256i *)ci, acc0[i]);
    _mm256_storeu_si256((__m256i *)(ci + 8), acc1[i]);
  }
}

typedef void (*ib_fn)(size_t kc, const int16_t *restrict a, const int16_t *restrict b, const ptrdiff_t *restrict boff,
                      int32_t *restrict c, size_t ldc, int accumulate);
#define DEFINE_IB(M)                                                                                     \
  static void ib_##M(size_t kc, const int16_t *restrict a, const int16_t *restrict b,                    \
                     const ptrdiff_t *restrict boff, int32_t *restrict c, size_t ldc, int accumulate) { \
    ib_body(M, kc, a, b, boff, c, ldc, accumulate);                                                      \
  }
DEFINE_IB(1) DEFINE_IB(2) DEFINE_IB(3) DEFINE_IB(4) DEFINE_IB(5) DEFINE_IB(6)
static const ib_fn ib_tiles[MR] = {ib_1, ib_2, ib_3, ib_4, ib_5, ib_6};

static void Q8_FN(dlc_q8_gemm_ib_6x16c2__)(size_t m, size_t kc, const int16_t *a, const int16_t *b,
                                        const ptrdiff_t *boff, int32_t *c, size_t ldc, int accumulate) {
  ib_tiles[m - 1](kc, a, b, boff, c, ldc, accumulate);
}
