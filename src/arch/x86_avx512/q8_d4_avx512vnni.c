/* int8 gemm on u8 x s8 dot products of four, AVX512-VNNI (vpdpbusd on zmm: Ice Lake and later,
 * Zen 4 and 5). The contract is lowp_gemm_ukernel.h's dlc_q8d4_gemm_family.
 *
 * Tile 8 x 32c4: per group of four k, two zmm of B (16 columns x 4 bytes each) and, per row, the
 * row's four weights broadcast as one dword (folded into vpdpbusd as an embedded broadcast), into
 * 16 accumulators. vpdpbusd does 64 multiply-adds, four times an fp32 FMA's 16 and twice the s16
 * pairs' vpdpwssd; Zen 4 issues one zmm vpdpbusd per cycle at a latency of 4, so 16 independent
 * chains keep it busy while its loads (2 + 8 per 16 vpdpbusd) fit beside it. The products of u8
 * and s8 are below 2^15 and four of them below 2^17: the s32 sum wraps only where the plan's
 * reduction limit already refuses (DLC_Q8_MAX_K).
 *
 * Each (rows, vectors) pair is its own function, so an edge tile computes only what it stores;
 * partial rows of C are written through lane masks (the packed B panels are always whole, so
 * the loads never need one). */
#include <immintrin.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../ukernel/config.h"
#include "q8_wide_avx512.h"
#include "q8_store_avx512.h"

#define MR 8
#define NR 32
#define INLINE static inline __attribute__((always_inline))
#define FOR_ROWS _Pragma("GCC unroll 8") for (size_t i = 0; i < M; i++)

INLINE __mmask16 first_lanes(ptrdiff_t n) {
  return n <= 0 ? (__mmask16)0 : n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1u);
}

INLINE __m512i weights4(const int8_t *a) {
  int32_t w;
  memcpy(&w, a, sizeof w);
  return _mm512_set1_epi32(w);
}

/* Rows [0, M) of the accumulators into C: added to C's values when accumulate, the first n
   columns (whole vectors when n is the tile's width). */
INLINE void tile_store(const size_t M, const size_t NV, __m512i acc[][2], size_t n, int32_t *c, size_t ldc,
                       int accumulate) {
  if (n == 16 * NV) {
    FOR_ROWS {
      int32_t *ci = c + i * ldc;
      for (size_t v = 0; v < NV; v++) {
        if (accumulate) acc[i][v] = _mm512_add_epi32(acc[i][v], _mm512_loadu_si512(ci + 16 * v));
        _mm512_storeu_si512(ci + 16 * v, acc[i][v]);
      }
    }
    return;
  }
  const __mmask16 m0 = first_lanes((ptrdiff_t)n), m1 = first_lanes((ptrdiff_t)n - 16);
  FOR_ROWS {
    int32_t *ci = c + i * ldc;
    if (accumulate) acc[i][0] = _mm512_add_epi32(acc[i][0], _mm512_maskz_loadu_epi32(m0, ci));
    _mm512_mask_storeu_epi32(ci, m0, acc[i][0]);
    if (NV == 2) {
      if (accumulate) acc[i][1] = _mm512_add_epi32(acc[i][1], _mm512_maskz_loadu_epi32(m1, ci + 16));
      _mm512_mask_storeu_epi32(ci + 16, m1, acc[i][1]);
    }
  }
}

/* The products of one tile into acc, for all kernels: IB (compile time) reads each group's B row
   where the offset table says (32 units, 128 bytes, always 32 columns), else from the packed
   panel. */
INLINE void tile_products(const int IB, const size_t M, const size_t NV, size_t kc, const int8_t *restrict a,
                          const uint8_t *restrict b, const ptrdiff_t *restrict boff, __m512i acc[MR][2]) {
  FOR_ROWS {
    acc[i][0] = _mm512_setzero_si512();
    acc[i][1] = _mm512_setzero_si512();
  }
  _Pragma("GCC unroll 2") for (size_t k4 = 0; k4 < kc / 4; k4++) {
    const uint8_t *bk = IB ? b + 2 * boff[k4] : b + k4 * 4 * NR;
    const __m512i b0 = _mm512_loadu_si512(bk);
    const __m512i b1 = NV == 2 ? _mm512_loadu_si512(bk + 64) : _mm512_setzero_si512();
    FOR_ROWS {
      const __m512i ai = weights4(a + 4 * i);
      acc[i][0] = _mm512_dpbusd_epi32(acc[i][0], b0, ai);
      if (NV == 2) acc[i][1] = _mm512_dpbusd_epi32(acc[i][1], b1, ai);
    }
    a += 4 * MR;
  }
}

INLINE void tile_body(const int IB, const size_t M, const size_t NV, size_t n, size_t kc, const int8_t *restrict a,
                      const uint8_t *restrict b, const ptrdiff_t *restrict boff, int32_t *restrict c, size_t ldc,
                      int accumulate) {
  __m512i acc[MR][2];
  tile_products(IB, M, NV, kc, a, b, boff, acc);
  tile_store(M, NV, acc, n, c, ldc, accumulate);
}

typedef void (*tile_fn)(size_t n, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,
                        int32_t *restrict c, size_t ldc, int accumulate);
#define DEFINE_TILE(M, NV)                                                                               \
  static void tile_##M##x##NV(size_t n, size_t kc, const int8_t *restrict a, const uint8_t *restrict b, \
                              int32_t *restrict c, size_t ldc, int accumulate) {                      \
    tile_body(0, M, NV, n, kc, a, b, NULL, c, ldc, accumulate);                                        \
  }
#define DEFINE_TILES(M) DEFINE_TILE(M, 1) DEFINE_TILE(M, 2)
DEFINE_TILES(1) DEFINE_TILES(2) DEFINE_TILES(3) DEFINE_TILES(4)
DEFINE_TILES(5) DEFINE_TILES(6) DEFINE_TILES(7) DEFINE_TILES(8)

static const tile_fn tiles[2][MR] = {
    {tile_1x1, tile_2x1, tile_3x1, tile_4x1, tile_5x1, tile_6x1, tile_7x1, tile_8x1},
    {tile_1x2, tile_2x2, tile_3x2, tile_4x2, tile_5x2, tile_6x2, tile_7x2, tile_8x2},
};

static void q8d4_gemm_8x32c4(size_t m, size_t n, size_t kc, const int8_t *a, const uint8_t *b, int32_t *c,
                             size_t ldc, int accumulate) {
  tiles[n > 16][m - 1](n, kc, a, b, c, ldc, accumulate);
}

typedef void (*ib_fn)(size_t kc, const int8_t *restrict a, const uint8_t *restrict b, const ptrdiff_t *restrict boff,
                      int32_t *restrict c, size_t ldc, int accumulate);
#define DEFINE_IB(M)                                                                                   \
  static void ib_##M(size_t kc, const int8_t *restrict a, const uint8_t *restrict b,                   \
                     const ptrdiff_t *restrict boff, int32_t *restrict c, size_t ldc, int accumulate) { \
    tile_body(1, M, 2, NR, kc, a, b, boff, c, ldc, accumulate);                                        \
  }
DEFINE_IB(1) DEFINE_IB(2) DEFINE_IB(3) DEFINE_IB(4) DEFINE_IB(5) DEFINE_IB(6) DEFINE_IB(7) DEFINE_IB(8)
static const ib_fn ib_tiles[MR] = {ib_1, ib_2, ib_3, ib_4, ib_5, ib_6, ib_7, ib_8};

static void q8d4_gemm_ib_8x32c4(size_t m, size_t kc, const int8_t *a, const uint8_t *b, const ptrdiff_t *boff,
                                int32_t *c, size_t ldc, int accumulate) {
  ib_tiles[m - 1](kc, a, b, boff, c, ldc, accumulate);
}

/* ukernel_q: the tile requantised in registers (the wide screen of quant.h, as the store's wide
   path, with the row's bias and multiplier broadcast), each row's 16-lane vectors narrowed with
   saturation and stored under the column mask; a tile with a lane near a tie, or a plan without
   the wide screen, goes through the exact store row by row instead. */

/* Where a tile's columns go in y: nseg runs, run s the lanes under mask[s] stored at lane j to
   y[off[s] + j] (ukernel_q: one run, the first n lanes at y[j]; ukernel_qv: one run per output row
   the tile's virtual positions cross). valid: the union of the masks. */
typedef struct qv_runs {
  size_t nseg;
  __mmask32 valid;
  __mmask32 mask[NR + 1];
  ptrdiff_t off[NR + 1];
} qv_runs;

/* One row's accumulators (t: NR values, NV vectors of them valid) through the exact store: the
   first n lanes, or the runs'. */
static void row_exact(const int32_t *t, size_t n, const dlc_q8_params *q, size_t c, uint8_t *y, const qv_runs *runs) {
  if (!runs) {
    dlc_q8_store__avx512(n, t, q, c, 0, y);
    return;
  }
  for (size_t s = 0; s < runs->nseg; s++) {
    const size_t a = (size_t)__builtin_ctz(runs->mask[s]), e = 32 - (size_t)__builtin_clz(runs->mask[s]);
    dlc_q8_store__avx512(e - a, t + a, q, c, 0, y + runs->off[s] + (ptrdiff_t)a);
  }
}

/* 32 bytes (one row's two vectors) to y: under the column mask, or as the runs. */
INLINE void row_bytes(__m256i b, __mmask32 k, uint8_t *y, const qv_runs *runs) {
  if (!runs) {
    _mm256_mask_storeu_epi8(y, k, b);
    return;
  }
  /* a run's base may lie before y (its first lanes masked off): the address is formed as an
     integer, and only the masked lanes, all within y's row, are written */
  const uintptr_t yi = (uintptr_t)y;
  for (size_t s = 0; s < runs->nseg; s++) _mm256_mask_storeu_epi8((void *)(yi + (uintptr_t)runs->off[s]), runs->mask[s], b);
}

/* Rows in pairs: each pair's four vectors requantised under the wide screen, then narrowed together
   (vpackssdw, vpack[us]swb, one vpermd back to row order: 1 instruction a vector where vpmov[us]db
   took 2 and the clamp 2 more) and the clamp applied to 64 bytes at once (bounds inside the type's
   range commute with its saturation). A pair with a lane near a tie goes through the exact store
   alone. 1x1 layers of 32 channels spent 2/3 of their tile time here. */
INLINE void tile_requant(const size_t M, const size_t NV, __m512i acc[MR][2], size_t n, const int32_t *c, size_t ldc,
                         int accumulate, const dlc_q8_params *q, size_t c0, uint8_t *y, size_t ldy,
                         const qv_runs *runs) {
  const __mmask16 m0 = first_lanes((ptrdiff_t)n), m1 = first_lanes((ptrdiff_t)n - 16);
  /* lanes a store keeps: the first n, or the runs' */
  const __mmask16 k0 = runs ? (__mmask16)runs->valid : m0, k1 = runs ? (__mmask16)(runs->valid >> 16) : m1;
  const __mmask32 k32 = (__mmask32)k0 | (__mmask32)k1 << 16;
  if (accumulate) FOR_ROWS {
      acc[i][0] = _mm512_add_epi32(acc[i][0], _mm512_maskz_loadu_epi32(m0, c + i * ldc));
      if (NV == 2) acc[i][1] = _mm512_add_epi32(acc[i][1], _mm512_maskz_loadu_epi32(m1, c + i * ldc + 16));
    }
  /* rows for the exact store wait here until every accumulator is done with: a call while they are
     live had the compiler split their ranges, which cost two register moves and a spill per
     vpdpbusd pair in the loop above (GCC 12) */
  int32_t t[MR][NR] __attribute__((aligned(64)));
  unsigned exact = 0; /* rows to store exactly */
  if (q->screen_wide) {
    /* s8 outputs narrow as u8 with 128 added (the zero point's bias) and flip back: one path for
       both types, and the clamp always (to the type's range where the plan has none) */
    const int sg = q->is_signed;
    const __m512i m_less_zp = _mm512_set1_epi32(0x4b400000 - q->y_zero_point - (sg ? 128 : 0));
    const __m512 thr = _mm512_set1_ps(0.5f - DLC_Q8_WIDE_MARGIN);
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const int lo = q->clamp_i ? q->lo_i + (sg ? 128 : 0) : 0, hi = q->clamp_i ? q->hi_i + (sg ? 128 : 0) : 255;
    const __m512i lo8 = _mm512_set1_epi8((char)lo), hi8 = _mm512_set1_epi8((char)hi);
    const __m512i flip = _mm512_set1_epi8(sg ? (char)0x80 : 0);
    _Pragma("GCC unroll 4") for (size_t i = 0; i < M; i += 2) {
      const size_t h = i + 1 < M ? 2 : 1;
      __m512i r[2][2];
      __m512 dmax = _mm512_setzero_ps();
      for (size_t e = 0; e < h; e++) {
        const __m512i bias = _mm512_set1_epi32(q->bias[c0 + i + e]);
        const __m512 mf = _mm512_set1_ps(q->mult_f[c0 + i + e]);
        for (size_t v = 0; v < 2; v++) {
          if (v >= NV) {
            r[e][v] = r[e][0];
            continue;
          }
          __m512 d;
          r[e][v] = dlc_q8_wide16(_mm512_add_epi32(acc[i + e][v], bias), mf, m_less_zp, &d);
          /* lanes not stored hold sums of whatever B had there: they must not send the pair down */
          dmax = _mm512_mask_range_ps(dmax, v ? k1 : k0, dmax, d, 0x0B);
        }
      }
      if (h == 1) r[1][0] = r[1][1] = r[0][0];
      if (_mm512_cmp_ps_mask(dmax, thr, _CMP_GT_OQ)) {
        for (size_t e = 0; e < h; e++) {
          _mm512_store_si512(t[i + e], acc[i + e][0]);
          if (NV == 2) _mm512_store_si512(t[i + e] + 16, acc[i + e][1]);
          exact |= 1u << (i + e);
        }
        continue;
      }
      const __m512i w0 = _mm512_packs_epi32(r[0][0], r[0][1]), w1 = _mm512_packs_epi32(r[1][0], r[1][1]);
      __m512i b = _mm512_permutexvar_epi32(order, _mm512_packus_epi16(w0, w1));
      b = _mm512_xor_si512(_mm512_min_epu8(_mm512_max_epu8(b, lo8), hi8), flip);
      row_bytes(_mm512_castsi512_si256(b), k32, y + i * ldy, runs);
      if (h == 2) row_bytes(_mm512_extracti64x4_epi64(b, 1), k32, y + (i + 1) * ldy, runs);
    }
  } else {
    FOR_ROWS {
      _mm512_store_si512(t[i], acc[i][0]);
      if (NV == 2) _mm512_store_si512(t[i] + 16, acc[i][1]);
    }
    exact = (1u << M) - 1u;
  }
  for (; exact; exact &= exact - 1) {
    const size_t i = (size_t)__builtin_ctz(exact);
    row_exact(t[i], n, q, c0 + i, y + i * ldy, runs);
  }
}

typedef void (*qtile_fn)(size_t n, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,
                         const ptrdiff_t *restrict boff, const int32_t *restrict c, size_t ldc, int accumulate,
                         const dlc_q8_params *q, size_t c0, uint8_t *y, size_t ldy);
#define DEFINE_QTILE(IB, M, NV)                                                                           \
  static void qtile_##IB##_##M##x##NV(size_t n, size_t kc, const int8_t *restrict a,                      \
                                      const uint8_t *restrict b, const ptrdiff_t *restrict boff,         \
                                      const int32_t *restrict c, size_t ldc, int accumulate,             \
                                      const dlc_q8_params *q, size_t c0, uint8_t *y, size_t ldy) {       \
    __m512i acc[MR][2];                                                                                   \
    tile_products(IB, M, NV, kc, a, b, boff, acc);                                                        \
    tile_requant(M, NV, acc, n, c, ldc, accumulate, q, c0, y, ldy, NULL);                                 \
  }
#define DEFINE_QTILES(M) DEFINE_QTILE(0, M, 1) DEFINE_QTILE(0, M, 2) DEFINE_QTILE(1, M, 2)
DEFINE_QTILES(1) DEFINE_QTILES(2) DEFINE_QTILES(3) DEFINE_QTILES(4)
DEFINE_QTILES(5) DEFINE_QTILES(6) DEFINE_QTILES(7) DEFINE_QTILES(8)
#define QROW(IB, NV) {qtile_##IB##_1x##NV, qtile_##IB##_2x##NV, qtile_##IB##_3x##NV, qtile_##IB##_4x##NV, \
                      qtile_##IB##_5x##NV, qtile_##IB##_6x##NV, qtile_##IB##_7x##NV, qtile_##IB##_8x##NV}
static const qtile_fn qtiles[3][MR] = {QROW(0, 1), QROW(0, 2), QROW(1, 2)};

static void q8d4_gemm_q_8x32c4(size_t m, size_t n, size_t kc, const int8_t *a, const uint8_t *b, const ptrdiff_t *boff,
                               const int32_t *c, size_t ldc, int accumulate, const dlc_q8_params *q, size_t c0,
                               void *y, size_t ldy) {
  qtiles[boff ? 2 : n > 16][m - 1](n, kc, a, b, boff, c, ldc, accumulate, q, c0, y, ldy);
}

/* ukernel_qv: the in-place tile's 32 virtual positions v0 .. v0 + 31 of a plane whose output rows
   are wq positions apart (wo of them outputs), requantised in registers as ukernel_q and stored as
   one masked run per output row they cross: the virtual columns need no pass through C and no
   store call per row. */
typedef void (*qvtile_fn)(size_t kc, const int8_t *restrict a, const uint8_t *restrict b,
                          const ptrdiff_t *restrict boff, const int32_t *restrict c, size_t ldc, int accumulate,
                          const dlc_q8_params *q, size_t c0, uint8_t *y, size_t ldy, const qv_runs *runs);
#define DEFINE_QVTILE(M)                                                                                    \
  static void qvtile_##M(size_t kc, const int8_t *restrict a, const uint8_t *restrict b,                    \
                         const ptrdiff_t *restrict boff, const int32_t *restrict c, size_t ldc, int accumulate, \
                         const dlc_q8_params *q, size_t c0, uint8_t *y, size_t ldy, const qv_runs *runs) {   \
    __m512i acc[MR][2];                                                                                     \
    tile_products(1, M, 2, kc, a, b, boff, acc);                                                            \
    tile_requant(M, 2, acc, NR, c, ldc, accumulate, q, c0, y, ldy, runs);                                   \
  }
DEFINE_QVTILE(1) DEFINE_QVTILE(2) DEFINE_QVTILE(3) DEFINE_QVTILE(4)
DEFINE_QVTILE(5) DEFINE_QVTILE(6) DEFINE_QVTILE(7) DEFINE_QVTILE(8)
static const qvtile_fn qvtiles[MR] = {qvtile_1, qvtile_2, qvtile_3, qvtile_4,
                                      qvtile_5, qvtile_6, qvtile_7, qvtile_8};

static void q8d4_gemm_qv_8x32c4(size_t m, size_t kc, const int8_t *a, const uint8_t *b, const ptrdiff_t *boff,
                                const int32_t *c, size_t ldc, int accumulate, const dlc_q8_params *q, size_t c0,
                                void *y, size_t ldy, size_t v0, size_t nv, size_t wq, size_t wo) {
  qv_runs runs;
  runs.nseg = 0;
  runs.valid = 0;
  const size_t vend = v0 + NR < nv ? v0 + NR : nv;
  for (size_t row = v0 / wq; row * wq < vend; row++) {
    const size_t lo = row * wq > v0 ? row * wq - v0 : 0, hi0 = row * wq + wo < vend ? row * wq + wo : vend;
    if (hi0 <= v0 + lo) continue;
    const size_t hi = hi0 - v0;
    const __mmask32 mk = (__mmask32)(((hi >= 32 ? 0xFFFFFFFFu : (1u << hi) - 1u)) & ~((1u << lo) - 1u));
    runs.mask[runs.nseg] = mk;
    runs.off[runs.nseg] = (ptrdiff_t)v0 - (ptrdiff_t)(row * (wq - wo)); /* lane j: output v0 + j - row (wq - wo) */
    runs.valid |= mk;
    runs.nseg++;
  }
  if (!runs.nseg) return;
  qvtiles[m - 1](kc, a, b, boff, c, ldc, accumulate, q, c0, y, ldy, &runs);
}

/* 16 columns of one row, flipped (pack_quads' short rows: a 64-column block of 16 columns did the
   work of 64) */
INLINE __m128i row16(const uint8_t *r, size_t len, size_t step, __m128i flip) {
  if (step == 1) return _mm_xor_si128(_mm_maskz_loadu_epi8(first_lanes((ptrdiff_t)len), r), flip);
  const __mmask32 m = (__mmask32)((1u << (2 * len - 1)) - 1u); /* 2 * len - 1 bytes: not the odd one past the last */
  return _mm_xor_si128(_mm256_cvtepi16_epi8(_mm256_maskz_loadu_epi8(m, r)), flip);
}

INLINE void pack_quads16(size_t len, const uint8_t *r0, const uint8_t *r1, const uint8_t *r2, const uint8_t *r3,
                         const size_t step, uint8_t flip, uint8_t *dst) {
  const __m128i f = _mm_set1_epi8((char)flip);
  const __m128i a = row16(r0, len, step, f), b = row16(r1, len, step, f);
  const __m128i c = row16(r2, len, step, f), d = row16(r3, len, step, f);
  const __m128i ab0 = _mm_unpacklo_epi8(a, b), ab1 = _mm_unpackhi_epi8(a, b);
  const __m128i cd0 = _mm_unpacklo_epi8(c, d), cd1 = _mm_unpackhi_epi8(c, d);
  const __m512i q = _mm512_inserti64x4(
      _mm512_castsi256_si512(_mm256_set_m128i(_mm_unpackhi_epi16(ab0, cd0), _mm_unpacklo_epi16(ab0, cd0))),
      _mm256_set_m128i(_mm_unpackhi_epi16(ab1, cd1), _mm_unpacklo_epi16(ab1, cd1)), 1);
  _mm512_mask_storeu_epi8(dst, len == 16 ? ~(__mmask64)0 : (((__mmask64)1 << (4 * len)) - 1u), q);
}

/* 64 columns of one row, flipped: at step 2 the even bytes of 128 (vpmovwb keeps the low byte of
   each 16-bit lane); a short block loads under a byte mask that stops at the last column read. */
INLINE __m512i row64(const uint8_t *r, size_t len, size_t step, __m512i flip) {
  if (step == 1) {
    const __mmask64 m = len >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << len) - 1u);
    return _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, r), flip);
  }
  const size_t bytes = 2 * len - 1; /* not the odd one past the last column */
  const __mmask64 m0 = bytes >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << bytes) - 1u);
  const __mmask64 m1 = bytes <= 64 ? 0 : bytes >= 128 ? ~(__mmask64)0 : (((__mmask64)1 << (bytes - 64)) - 1u);
  const __m256i lo = _mm512_cvtepi16_epi8(_mm512_maskz_loadu_epi8(m0, r));
  const __m256i hi = _mm512_cvtepi16_epi8(_mm512_maskz_loadu_epi8(m1, r + 64));
  return _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1), flip);
}

/* 64 columns of four rows (a, b, c, d) into 64 units: out[l] holds units 16 l .. 16 l + 15. */
INLINE void quads64(__m512i a, __m512i b, __m512i c, __m512i d, __m512i out[4]) {
  const __m512i ab0 = _mm512_unpacklo_epi8(a, b), ab1 = _mm512_unpackhi_epi8(a, b);
  const __m512i cd0 = _mm512_unpacklo_epi8(c, d), cd1 = _mm512_unpackhi_epi8(c, d);
  const __m512i q0 = _mm512_unpacklo_epi16(ab0, cd0), q1 = _mm512_unpackhi_epi16(ab0, cd0);
  const __m512i q2 = _mm512_unpacklo_epi16(ab1, cd1), q3 = _mm512_unpackhi_epi16(ab1, cd1);
  const __m512i t0 = _mm512_shuffle_i32x4(q0, q1, 0x44), t1 = _mm512_shuffle_i32x4(q2, q3, 0x44);
  const __m512i t2 = _mm512_shuffle_i32x4(q0, q1, 0xEE), t3 = _mm512_shuffle_i32x4(q2, q3, 0xEE);
  out[0] = _mm512_shuffle_i32x4(t0, t1, 0x88);
  out[1] = _mm512_shuffle_i32x4(t0, t1, 0xDD);
  out[2] = _mm512_shuffle_i32x4(t2, t3, 0x88);
  out[3] = _mm512_shuffle_i32x4(t2, t3, 0xDD);
}

/* 64 columns of each row into 64 units: bytes interleave into pairs (rows 0-1, 2-3) and pairs
   into quads within 128-bit lanes, so that lane l of q[k] holds columns 16 l + 4 k .. + 3; a 4 x 4
   transpose of lanes puts columns 16 l .. 16 l + 15 into o[l]. Blocks short of 64 columns store
   under byte masks, so nothing past dst is touched (the xmm version of this took 4x the
   instructions per unit: 1x1 layers spent 15% of their time here). */
INLINE void pack_quads_step(size_t n, const uint8_t *r0, const uint8_t *r1, const uint8_t *r2, const uint8_t *r3,
                            const size_t step, uint8_t flip, uint8_t *dst) {
  const __m512i f = _mm512_set1_epi8((char)flip);
  for (size_t j = 0; j < n; j += 64) {
    const size_t len = n - j < 64 ? n - j : 64, o = j * step;
    if (len <= 16) {
      pack_quads16(len, r0 + o, r1 + o, r2 + o, r3 + o, step, flip, dst + 4 * j);
      return;
    }
    __m512i out[4];
    quads64(row64(r0 + o, len, step, f), row64(r1 + o, len, step, f), row64(r2 + o, len, step, f),
            row64(r3 + o, len, step, f), out);
    uint8_t *dj = dst + 4 * j;
    if (len == 64) {
      for (size_t l = 0; l < 4; l++) _mm512_storeu_si512(dj + 64 * l, out[l]);
      continue;
    }
    for (size_t l = 0; l < 4 && 16 * l < len; l++) {
      const size_t u = len - 16 * l < 16 ? len - 16 * l : 16;
      _mm512_mask_storeu_epi8(dj + 64 * l, u == 16 ? ~(__mmask64)0 : (((__mmask64)1 << (4 * u)) - 1u), out[l]);
    }
  }
}

static void q8d4_pack_quads(size_t n, const uint8_t *r0, const uint8_t *r1, const uint8_t *r2, const uint8_t *r3,
                            size_t step, uint8_t flip, uint8_t *dst) {
  if (step == 2)
    pack_quads_step(n, r0, r1, r2, r3, 2, flip, dst);
  else
    pack_quads_step(n, r0, r1, r2, r3, 1, flip, dst);
}

/* pack_plane: contiguous rows (step 1, ldx == n) as one run of h x n columns, 64 at a time, each
   16-unit vector stored as its pieces on each row it crosses (one full store where n is a multiple
   of 16; a piece's base may lie before dst, its first lanes masked off, so the address is formed as
   an integer); other rows one pack_quads_step each, without a call per row. */
INLINE __mmask64 unit_bytes(size_t lo, size_t hi) { /* bytes of units [lo, hi), hi <= 16 */
  const __mmask64 below = hi >= 16 ? ~(__mmask64)0 : (((__mmask64)1 << (4 * hi)) - 1u);
  return below & ~(((__mmask64)1 << (4 * lo)) - 1u);
}

static void q8d4_pack_plane(size_t h, size_t n, const uint8_t *r0, const uint8_t *r1, const uint8_t *r2,
                            const uint8_t *r3, size_t ldx, size_t step, uint8_t flip, uint8_t *dst, size_t ldd) {
  if (step != 1 || ldx != n) {
    for (size_t y = 0; y < h; y++) {
      const size_t o = y * ldx;
      if (step == 2)
        pack_quads_step(n, r0 + o, r1 + o, r2 + o, r3 + o, 2, flip, dst + 4 * y * ldd);
      else
        pack_quads_step(n, r0 + o, r1 + o, r2 + o, r3 + o, 1, flip, dst + 4 * y * ldd);
    }
    return;
  }
  const __m512i f = _mm512_set1_epi8((char)flip);
  const size_t total = h * n;
  size_t y = 0, x = 0; /* the row and column of the next unit to store */
  for (size_t j = 0; j < total; j += 64) {
    const size_t len = total - j < 64 ? total - j : 64;
    __m512i out[4];
    quads64(row64(r0 + j, len, 1, f), row64(r1 + j, len, 1, f), row64(r2 + j, len, 1, f), row64(r3 + j, len, 1, f),
            out);
    for (size_t l = 0; l < 4 && 16 * l < len; l++) {
      const size_t cnt = len - 16 * l < 16 ? len - 16 * l : 16;
      for (size_t k = 0; k < cnt;) {
        const size_t run = n - x < cnt - k ? n - x : cnt - k;
        const uintptr_t at = (uintptr_t)(dst + 4 * (y * ldd + x)) - 4 * (uintptr_t)k;
        _mm512_mask_storeu_epi8((void *)at, unit_bytes(k, k + run), out[l]);
        k += run;
        x += run;
        if (x == n) {
          x = 0;
          y++;
        }
      }
    }
  }
}

/* gemv: 64 rows (four zmm of weights, 256 bytes per group of four k) against nb <= 4 rows of x,
   each group's four bytes of a row broadcast: the weights stream from memory once for all nb
   rows (a dense layer at batch 1 is bound by that stream: 1 byte per multiply-add). */
#define GEMV_MR 64
INLINE void gemv_body(const size_t NB, size_t m, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,
                      size_t ldb, int32_t *restrict c, size_t ldc) {
  __m512i acc[4][4];
  for (size_t r = 0; r < NB; r++)
    for (size_t v = 0; v < 4; v++) acc[r][v] = _mm512_setzero_si512();
  for (size_t k4 = 0; k4 < kc / 4; k4++) {
    __m512i w[4];
    for (size_t v = 0; v < 4; v++) w[v] = _mm512_loadu_si512(a + 64 * v);
    for (size_t r = 0; r < NB; r++) {
      int32_t x4;
      memcpy(&x4, b + r * ldb + 4 * k4, sizeof x4);
      const __m512i xb = _mm512_set1_epi32(x4);
      for (size_t v = 0; v < 4; v++) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], xb, w[v]);
    }
    a += 4 * GEMV_MR;
  }
  for (size_t r = 0; r < NB; r++)
    for (size_t v = 0; v < 4; v++) {
      const ptrdiff_t left = (ptrdiff_t)m - 16 * (ptrdiff_t)v;
      if (left >= 16)
        _mm512_storeu_si512(c + r * ldc + 16 * v, acc[r][v]);
      else if (left > 0)
        _mm512_mask_storeu_epi32(c + r * ldc + 16 * v, first_lanes(left), acc[r][v]);
    }
}

#define DEFINE_GEMV(NB)                                                                                  \
  static void gemv_##NB(size_t m, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,       \
                        size_t ldb, int32_t *restrict c, size_t ldc) {                                 \
    gemv_body(NB, m, kc, a, b, ldb, c, ldc);                                                           \
  }
DEFINE_GEMV(1) DEFINE_GEMV(2) DEFINE_GEMV(3) DEFINE_GEMV(4)

static void q8d4_gemv_64c4(size_t m, size_t nb, size_t kc, const int8_t *a, const uint8_t *b, size_t ldb,
                           int32_t *c, size_t ldc) {
  static void (*const fns[4])(size_t, size_t, const int8_t *restrict, const uint8_t *restrict, size_t,
                              int32_t *restrict, size_t) = {gemv_1, gemv_2, gemv_3, gemv_4};
  fns[nb - 1](m, kc, a, b, ldb, c, ldc);
}

/* ukernel_t, tile 6 x 64: per group of four k, the panel's four zmm of weights (64 output
   channels) and, per position, its four bytes broadcast, into 24 accumulators: 4 + 6 loads per
   24 vpdpbusd, where the 8 x 32 tile takes 2 + 8 per 16. Positions are scalars here, so a plane
   of 49 costs 49 rows, not 64 columns. */
#define TR 6
#define TM 64
INLINE void ttile_body(const size_t R, const size_t V, size_t m, size_t kc, const int8_t *restrict a,
                       const uint8_t *restrict b, const size_t *restrict pos, const ptrdiff_t *restrict boff,
                       int32_t *restrict c, size_t ldc, int accumulate) {
  __m512i acc[TR][4];
  const uint8_t *row[TR];
  _Pragma("GCC unroll 6") for (size_t r = 0; r < R; r++) {
    row[r] = b + 4 * pos[r];
    for (size_t v = 0; v < V; v++) acc[r][v] = _mm512_setzero_si512();
  }
  _Pragma("GCC unroll 2") for (size_t k4 = 0; k4 < kc / 4; k4++) {
    const ptrdiff_t o = 2 * boff[k4];
    __m512i w[4];
    for (size_t v = 0; v < V; v++) w[v] = _mm512_loadu_si512(a + 64 * v);
    _Pragma("GCC unroll 6") for (size_t r = 0; r < R; r++) {
      int32_t x4;
      memcpy(&x4, row[r] + o, sizeof x4);
      const __m512i xb = _mm512_set1_epi32(x4);
      for (size_t v = 0; v < V; v++) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], xb, w[v]);
    }
    a += 4 * TM;
  }
  _Pragma("GCC unroll 6") for (size_t r = 0; r < R; r++) {
    int32_t *cr = c + r * ldc;
    for (size_t v = 0; v < V; v++) {
      const __mmask16 mk = first_lanes((ptrdiff_t)m - 16 * (ptrdiff_t)v);
      if (accumulate) acc[r][v] = _mm512_add_epi32(acc[r][v], _mm512_maskz_loadu_epi32(mk, cr + 16 * v));
      _mm512_mask_storeu_epi32(cr + 16 * v, mk, acc[r][v]);
    }
  }
}

typedef void (*ttile_fn)(size_t m, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,
                         const size_t *restrict pos, const ptrdiff_t *restrict boff, int32_t *restrict c, size_t ldc,
                         int accumulate);
#define DEFINE_TTILE(R, V)                                                                                 \
  static void ttile_##R##x##V(size_t m, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,   \
                              const size_t *restrict pos, const ptrdiff_t *restrict boff,                \
                              int32_t *restrict c, size_t ldc, int accumulate) {                         \
    ttile_body(R, V, m, kc, a, b, pos, boff, c, ldc, accumulate);                                         \
  }
#define DEFINE_TTILES(R) DEFINE_TTILE(R, 1) DEFINE_TTILE(R, 2) DEFINE_TTILE(R, 3) DEFINE_TTILE(R, 4)
DEFINE_TTILES(1) DEFINE_TTILES(2) DEFINE_TTILES(3) DEFINE_TTILES(4) DEFINE_TTILES(5) DEFINE_TTILES(6)
#define TTILE_ROW(R) {ttile_##R##x1, ttile_##R##x2, ttile_##R##x3, ttile_##R##x4}
static const ttile_fn ttiles[TR][4] = {TTILE_ROW(1), TTILE_ROW(2), TTILE_ROW(3),
                                       TTILE_ROW(4), TTILE_ROW(5), TTILE_ROW(6)};

static void q8d4_gemm_t_6x64c4(size_t np, size_t m, size_t kc, const int8_t *a, const uint8_t *b, const size_t *pos,
                               const ptrdiff_t *boff, int32_t *c, size_t ldc, int accumulate) {
  ttiles[np - 1][(m - 1) / 16](m, kc, a, b, pos, boff, c, ldc, accumulate);
}

/* One block of up to 16 x 16: rows past rb load as zeros, lanes past cb are neither read nor
   written; pairs of dwords interleave, then pairs of pairs, then 128-bit lanes (a 4 x 4 transpose
   of lanes). */
INLINE void transpose_block(size_t rb, size_t cb, const int32_t *src, size_t lds, int32_t *dst, size_t ldd) {
  const __mmask16 cm = first_lanes((ptrdiff_t)cb), rm = first_lanes((ptrdiff_t)rb);
  __m512i r[16], t[16];
  for (size_t i = 0; i < 16; i++)
    r[i] = i < rb ? _mm512_maskz_loadu_epi32(cm, src + i * lds) : _mm512_setzero_si512();
  for (size_t i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
  }
  /* u[4g + c]: lane L holds column 4L + c of rows 4g .. 4g + 3 */
  __m512i u[16];
  for (size_t g = 0; g < 4; g++) {
    u[4 * g + 0] = _mm512_unpacklo_epi64(t[4 * g], t[4 * g + 2]);
    u[4 * g + 1] = _mm512_unpackhi_epi64(t[4 * g], t[4 * g + 2]);
    u[4 * g + 2] = _mm512_unpacklo_epi64(t[4 * g + 1], t[4 * g + 3]);
    u[4 * g + 3] = _mm512_unpackhi_epi64(t[4 * g + 1], t[4 * g + 3]);
  }
  for (size_t cc = 0; cc < 4; cc++) {
    const __m512i lo01 = _mm512_shuffle_i32x4(u[cc], u[4 + cc], 0x44), lo23 = _mm512_shuffle_i32x4(u[8 + cc], u[12 + cc], 0x44);
    const __m512i hi01 = _mm512_shuffle_i32x4(u[cc], u[4 + cc], 0xEE), hi23 = _mm512_shuffle_i32x4(u[8 + cc], u[12 + cc], 0xEE);
    const __m512i out[4] = {_mm512_shuffle_i32x4(lo01, lo23, 0x88), _mm512_shuffle_i32x4(lo01, lo23, 0xDD),
                            _mm512_shuffle_i32x4(hi01, hi23, 0x88), _mm512_shuffle_i32x4(hi01, hi23, 0xDD)};
    for (size_t l = 0; l < 4; l++)
      if (4 * l + cc < cb) _mm512_mask_storeu_epi32(dst + (4 * l + cc) * ldd, rm, out[l]);
  }
}

static void s32_transpose(size_t rows, size_t cols, const int32_t *src, size_t lds, int32_t *dst, size_t ldd) {
  for (size_t i = 0; i < rows; i += 16)
    for (size_t j = 0; j < cols; j += 16)
      transpose_block(rows - i < 16 ? rows - i : 16, cols - j < 16 ? cols - j : 16, src + i * lds + j, lds, dst + j * ldd + i, ldd);
}

const dlc_q8d4_gemm_family dlc_q8d4_gemm__avx512vnni = {
    .name = "q8_gemm_8x32c4__avx512vnni",
    .mr = MR,
    .nr = NR,
    .ukernel = q8d4_gemm_8x32c4,
    .ukernel_ib = q8d4_gemm_ib_8x32c4,
    .ukernel_q = q8d4_gemm_q_8x32c4,
    .ukernel_qv = q8d4_gemm_qv_8x32c4,
    .pack_quads = q8d4_pack_quads,
    .pack_plane = q8d4_pack_plane,
    .gemv_mr = GEMV_MR,
    .gemv = q8d4_gemv_64c4,
    .gemv_name = "q8_gemv_64c4__avx512vnni",
    .tr = TR,
    .tm = TM,
    .ukernel_t = q8d4_gemm_t_6x64c4,
    .transpose = s32_transpose,
    .t_name = "q8_gemm_t_6x64c4__avx512vnni",
};
