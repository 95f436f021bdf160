/* f32_gemm.h - the f32 GEMM micro-kernel family (ukernel/gemm_ukernel.h says what each function
 * computes; src/arch/generic/f32_gemm_generic.c is the readable specification), written once over
 * the vector layer and instantiated per ISA by src/arch/<isa>/f32_gemm_<isa>.c, which includes
 * its vec.h, may set the knobs below, then includes this file.
 *
 * Tile MR x NR, NR = two vectors: per k step the NR columns of B are two vector loads, and each
 * of the MR rows broadcasts one float of A and issues two FMAs, so 2 * MR registers hold
 * accumulators, 2 hold B and 1 the broadcast (AVX2: 6 x 16 in 16 ymm, the classic Haswell/Zen
 * BLIS tile; AVX-512: 14 x 32 in 32 zmm, 2 loads + 14 broadcasts for 28 FMAs). 2 * MR independent
 * chains cover the FMA latency of two pipes.
 *
 * One function per (rows, vectors) pair is generated from one body, so an edge tile of m < MR rows
 * or n <= VL columns computes only what it stores (an NCHW layer with 64 channels has an 8-row
 * edge on AVX-512; a dense layer with batch 1 is a 1-row GEMM); C is read with masked loads and
 * written with v_store_first, so nothing past the m x n corner is touched. ukernel_ldb is the
 * full-width tile with B's rows ldb floats apart (an NCHW 1x1 layer's input rows, read in place);
 * ukernel_lda the tile with A's rows lda floats apart (an NHWC 1x1 layer's pixels, read in place).
 *
 * Knobs (macros the instantiating file may set before including this file):
 *   DLC_GEMM_MR                  rows of the tile, a literal (it names the family); default
 *                                (DLC_NREGS - 3) / 2: 6 with 16 registers, 14 with 32
 *   DLC_GEMM_B_PREFETCH_STEPS(M) k steps between a B load and the prefetch that brings its lines,
 *                                for an M-row tile; 0 for none
 *   DLC_GEMM_F16_OUT             1: ukernel honours the epilogue's yh (binary16 output); default 0 */
#include <stddef.h>
#include <stdint.h>

#include "../../ukernel/config.h"
#include "family.h"

#ifndef DLC_GEMM_MR
#if DLC_NREGS == 32
#define DLC_GEMM_MR 14
#elif DLC_NREGS == 16
#define DLC_GEMM_MR 6
#else
#error "f32_gemm.h: set DLC_GEMM_MR for this register count"
#endif
#endif

#define DLC_GEMM_NR DLC_VL_X2 /* a literal: it names the family */

/* 16 k steps (1 KB at NR = 16) cover B streaming from L2 for a full tile; a one- or two-row tile
   (dense, batch 1) is bound by memory and must run a DRAM latency ahead, some 4 KB. */
#ifndef DLC_GEMM_B_PREFETCH_STEPS
#define DLC_GEMM_B_PREFETCH_STEPS(M) ((M) <= 2 ? 64 : 16)
#endif

#ifndef DLC_GEMM_F16_OUT
#define DLC_GEMM_F16_OUT 0
#endif

#define MR DLC_GEMM_MR
#define NR DLC_GEMM_NR
#define VL DLC_VL
/* floats per 64-byte cache line: B prefetches one per line of its NR floats */
#define LINE_FLOATS 16

typedef void (*tile_fn)(size_t n, size_t kc, const float *restrict a, const float *restrict b,
                        float *restrict c, size_t ldc, int accumulate, const dlc_f32_gemm_epilogue *ep);

#define FOR_ROWS UNROLL for (size_t i = 0; i < M; i++)

/* The epilogue of the C-transposed kernel (ukernel_ct): the tile is transposed in registers, VL x VL
   per vector of columns and block of VL rows (one block when MR <= VL, as on x86; Neon's 4-lane
   vectors take MR / 4 of them), so each of its n columns becomes one m-lane run stored at
   c + j * ldc (an NCHW output channel's run of m pixels). */
INLINE void store_ct(const size_t M, const size_t NV, size_t n, vf *acc0, vf *acc1, float *restrict c, size_t ldc,
                     int accumulate, const dlc_f32_gemm_epilogue *ep) {
  UNROLL for (size_t rb = 0; rb < M; rb += VL) {
    const size_t mb = M - rb < VL ? M - rb : VL;
    const vmask mm = v_first((ptrdiff_t)mb);
    for (size_t v = 0; v < NV; v++) {
      vf r[VL];
      UNROLL for (size_t i = 0; i < VL; i++) r[i] = i < mb ? (v ? acc1[rb + i] : acc0[rb + i]) : v_zero();
      v_transpose(r);
      size_t nj = n - VL * v < VL ? n - VL * v : VL;
      for (size_t j = 0; j < nj; j++) {
        float *cj = c + (VL * v + j) * ldc + rb;
        vf x = r[j];
        if (accumulate) x = v_add(x, v_load_mask(cj, mm));
        if (ep != NULL) {
          if (ep->bias != NULL && ep->bias_per_column)
            x = v_add(x, v_bcast(ep->bias + VL * v + j));
          else if (ep->bias != NULL)
            x = v_add(x, v_load_mask(ep->bias + rb, mm));
          x = v_clamp(x, v_set1(ep->out_min), v_set1(ep->out_max));
        }
        v_store_first(cj, (ptrdiff_t)mb, x);
      }
    }
  }
}

/* ldb: NR for a packed panel (B prefetched a fixed distance ahead in it); otherwise the row
   stride of a B read in place, whose rows the hardware prefetchers follow. COPY: B's vectors are
   also stored to bcopy, packed. BMASK (NV = 1): B's rows are read only to their n-th float (an A
   panel of weights read as B, whose last row ends the buffer). AIN: A is read in place, row i at
   a + i * lda (an NHWC 1x1 layer's pixels), not from a packed panel (lda unused). */
INLINE void tile_body_m(const size_t M, const size_t NV, const int CT, const int COPY, const int BMASK, const int AIN,
                      size_t n, size_t kc, const float *restrict a, const size_t lda, const float *restrict b, const size_t ldb,
                      float *restrict bcopy, float *restrict c, size_t ldc, int accumulate,
                      const dlc_f32_gemm_epilogue *ep) {
  vf acc0[MR], acc1[MR];
  FOR_ROWS {
    acc0[i] = v_zero();
    acc1[i] = v_zero();
    /* C is needed only after the k loop: start bringing its lines in now. */
    if (!CT) {
      v_prefetch(c + i * ldc);
      v_prefetch(c + i * ldc + VL * NV - 1);
    }
  }
  const vmask bm = v_first(BMASK ? (ptrdiff_t)n : (ptrdiff_t)VL);
  /* A in place: a base pointer every third row, the rows between at 1 and 2 strides from it
     (x86 addresses base + 1 or 2 x index), so that 14 rows need 5 pointers and a stride in
     registers rather than 14 offsets, some of them spilled and reloaded each k step. */
  const float *ab[(MR + 2) / 3];
  if (AIN) UNROLL for (size_t j = 0; j < (M + 2) / 3; j++) ab[j] = a + 3 * j * lda;
  /* Unrolled by the compiler rather than by hand: a hand-unrolled body made GCC 12 rotate
     accumulators through the stack; this form keeps all 2 * MR in registers. */
  _Pragma("GCC unroll 4") for (size_t k = 0; k < kc; k++) {
    if (DLC_GEMM_B_PREFETCH_STEPS(M) > 0 && ldb == NR) {
      UNROLL for (size_t l = 0; l < VL * NV; l += LINE_FLOATS) v_prefetch(b + DLC_GEMM_B_PREFETCH_STEPS(M) * NR + l);
    }
    /* one k step: a at the k-th MR floats of A, b at the k-th NR of B */
    const vf b0 = BMASK ? v_load_mask(b, bm) : v_load(b), b1 = NV == 2 ? v_load(b + VL) : v_zero();
    if (COPY) {
      v_store(bcopy, b0);
      v_store(bcopy + VL, b1);
      bcopy += NR;
    }
    FOR_ROWS {
      const vf ai = v_bcast(AIN ? ab[i / 3] + (i % 3) * lda : a + i);
      acc0[i] = v_fma(ai, b0, acc0[i]);
      if (NV == 2) acc1[i] = v_fma(ai, b1, acc1[i]);
    }
    if (AIN) {
      UNROLL for (size_t j = 0; j < (M + 2) / 3; j++) ab[j]++;
    } else {
      a += MR;
    }
    b += ldb;
  }
  if (CT) {
    store_ct(M, NV, n, acc0, acc1, c, ldc, accumulate, ep);
    return;
  }

  const vmask m0 = v_first((ptrdiff_t)n), m1 = v_first((ptrdiff_t)n - VL);
  if (accumulate) {
    FOR_ROWS {
      acc0[i] = v_add(acc0[i], v_load_mask(c + i * ldc, m0));
      if (NV == 2) acc1[i] = v_add(acc1[i], v_load_mask(c + i * ldc + VL, m1));
    }
  }
  if (ep != NULL) {
    if (ep->bias != NULL && ep->bias_per_column) {
      const vf bc0 = v_load_mask(ep->bias, m0), bc1 = NV == 2 ? v_load_mask(ep->bias + VL, m1) : v_zero();
      FOR_ROWS {
        acc0[i] = v_add(acc0[i], bc0);
        if (NV == 2) acc1[i] = v_add(acc1[i], bc1);
      }
    } else if (ep->bias != NULL) {
      FOR_ROWS {
        const vf bi = v_bcast(ep->bias + i);
        acc0[i] = v_add(acc0[i], bi);
        if (NV == 2) acc1[i] = v_add(acc1[i], bi);
      }
    }
    /* Bound first: max/min return their second operand when either is NaN, so NaN survives.
       An unbounded side is skipped: on AVX-512 28 max or min cost 14 FMA-pipe cycles, 1-2% of a
       short-K tile (a 1x1 layer with 64 input channels). */
    if (ep->out_min > -__builtin_inff()) {
      const vf lo = v_set1(ep->out_min);
      FOR_ROWS {
        acc0[i] = v_max(lo, acc0[i]);
        if (NV == 2) acc1[i] = v_max(lo, acc1[i]);
      }
    }
    if (ep->out_max < __builtin_inff()) {
      const vf hi = v_set1(ep->out_max);
      FOR_ROWS {
        acc0[i] = v_min(hi, acc0[i]);
        if (NV == 2) acc1[i] = v_min(hi, acc1[i]);
      }
    }
  }
  /* n is VL * NV on all but the right-edge tiles: whole-vector stores there, decided once per
     tile (AVX-512's v_store_first decides per store) */
  const int f16 = DLC_GEMM_F16_OUT && ep != NULL && ep->yh != NULL;
  if (n == VL * NV) {
    FOR_ROWS {
      if (f16) {
        v_store_f16_first(ep->yh + i * ep->ldyh, VL, acc0[i]);
        if (NV == 2) v_store_f16_first(ep->yh + i * ep->ldyh + VL, VL, acc1[i]);
      } else {
        v_store(c + i * ldc, acc0[i]);
        if (NV == 2) v_store(c + i * ldc + VL, acc1[i]);
      }
    }
    return;
  }
  const ptrdiff_t n0 = (ptrdiff_t)n, n1 = (ptrdiff_t)n - VL;
  FOR_ROWS {
    if (f16) {
      v_store_f16_first(ep->yh + i * ep->ldyh, n0, acc0[i]);
      if (NV == 2) v_store_f16_first(ep->yh + i * ep->ldyh + VL, n1, acc1[i]);
    } else {
      v_store_first(c + i * ldc, n0, acc0[i]);
      if (NV == 2) v_store_first(c + i * ldc + VL, n1, acc1[i]);
    }
  }
}

INLINE void tile_body(const size_t M, const size_t NV, const int CT, const int COPY, size_t n, size_t kc,
                      const float *restrict a, const float *restrict b, const size_t ldb, float *restrict bcopy,
                      float *restrict c, size_t ldc, int accumulate, const dlc_f32_gemm_epilogue *ep) {
  tile_body_m(M, NV, CT, COPY, 0, 0, n, kc, a, 0, b, ldb, bcopy, c, ldc, accumulate, ep);
}

#define DEFINE_TILE(M, NV)                                                                            \
  static void tile_##M##x##NV(size_t n, size_t kc, const float *restrict a, const float *restrict b,  \
                              float *restrict c, size_t ldc, int accumulate,                          \
                              const dlc_f32_gemm_epilogue *ep) {                                      \
    tile_body(M, NV, 0, 0, n, kc, a, b, NR, NULL, c, ldc, accumulate, ep);                            \
  }                                                                                                   \
  static void tile_ct_##M##x##NV(size_t n, size_t kc, const float *restrict a, const float *restrict b, \
                                 float *restrict c, size_t ldc, int accumulate,                       \
                                 const dlc_f32_gemm_epilogue *ep) {                                   \
    tile_body(M, NV, 1, 0, n, kc, a, b, NR, NULL, c, ldc, accumulate, ep);                            \
  }
#define DEFINE_TILE_LDB(M)                                                                            \
  static void tile_ldb_##M(size_t kc, const float *restrict a, const float *restrict b, size_t ldb,   \
                           float *restrict bcopy, float *restrict c, size_t ldc, int accumulate,      \
                           const dlc_f32_gemm_epilogue *ep) {                                         \
    if (bcopy)                                                                                        \
      tile_body(M, 2, 0, 1, NR, kc, a, b, ldb, bcopy, c, ldc, accumulate, ep);                        \
    else                                                                                              \
      tile_body(M, 2, 0, 0, NR, kc, a, b, ldb, NULL, c, ldc, accumulate, ep);                         \
  }
#define DEFINE_TILE_CT_LDB(M)                                                                         \
  static void tile_ct_ldb_##M(size_t n, size_t kc, const float *restrict a, const float *restrict b,  \
                              size_t ldb, float *restrict c, size_t ldc, int accumulate,              \
                              const dlc_f32_gemm_epilogue *ep) {                                      \
    tile_body_m(M, 1, 1, 0, 1, 0, n, kc, a, 0, b, ldb, NULL, c, ldc, accumulate, ep);                   \
  }
#define DEFINE_TILE_LDA(M, NV)                                                                        \
  static void tile_lda_##M##x##NV(size_t n, size_t kc, const float *restrict a, size_t lda,           \
                                  const float *restrict b, float *restrict c, size_t ldc,             \
                                  int accumulate, const dlc_f32_gemm_epilogue *ep) {                  \
    tile_body_m(M, NV, 0, 0, 0, 1, n, kc, a, lda, b, NR, NULL, c, ldc, accumulate, ep);                  \
  }
#define DEFINE_TILES(M, unused) DEFINE_TILE(M, 1) DEFINE_TILE(M, 2) DEFINE_TILE_LDB(M) DEFINE_TILE_CT_LDB(M) \
  DEFINE_TILE_LDA(M, 1) DEFINE_TILE_LDA(M, 2)
DLC_REPEAT(DLC_GEMM_MR, DEFINE_TILES, )

#define TILE_NAME(M, NV) tile_##M##x##NV,
#define TILE_CT_NAME(M, NV) tile_ct_##M##x##NV,
static const tile_fn tiles[2][MR] = {{DLC_REPEAT(DLC_GEMM_MR, TILE_NAME, 1)}, {DLC_REPEAT(DLC_GEMM_MR, TILE_NAME, 2)}};
static const tile_fn tiles_ct[2][MR] = {{DLC_REPEAT(DLC_GEMM_MR, TILE_CT_NAME, 1)},
                                        {DLC_REPEAT(DLC_GEMM_MR, TILE_CT_NAME, 2)}};

typedef void (*tile_ldb_fn)(size_t kc, const float *restrict a, const float *restrict b, size_t ldb,
                            float *restrict bcopy, float *restrict c, size_t ldc, int accumulate,
                            const dlc_f32_gemm_epilogue *ep);
#define TILE_LDB_NAME(M, unused) tile_ldb_##M,
static const tile_ldb_fn tiles_ldb[MR] = {DLC_REPEAT(DLC_GEMM_MR, TILE_LDB_NAME, )};

static void gemm_ukernel_ldb(size_t m, size_t kc, const float *a, const float *b, size_t ldb, float *bcopy, float *c,
                             size_t ldc, int accumulate, const dlc_f32_gemm_epilogue *ep) {
  tiles_ldb[m - 1](kc, a, b, ldb, bcopy, c, ldc, accumulate, ep);
}

typedef void (*tile_ct_ldb_fn)(size_t n, size_t kc, const float *restrict a, const float *restrict b, size_t ldb,
                               float *restrict c, size_t ldc, int accumulate, const dlc_f32_gemm_epilogue *ep);
#define TILE_CT_LDB_NAME(M, unused) tile_ct_ldb_##M,
static const tile_ct_ldb_fn tiles_ct_ldb[MR] = {DLC_REPEAT(DLC_GEMM_MR, TILE_CT_LDB_NAME, )};

static void gemm_ukernel_ct_ldb(size_t m, size_t n, size_t kc, const float *a, const float *b, size_t ldb, float *c,
                                size_t ldc, int accumulate, const dlc_f32_gemm_epilogue *ep) {
  tiles_ct_ldb[m - 1](n, kc, a, b, ldb, c, ldc, accumulate, ep);
}

static void gemm_ukernel_ct(size_t m, size_t n, size_t kc, const float *a, const float *b, float *c, size_t ldc,
                            int accumulate, const dlc_f32_gemm_epilogue *ep) {
  tiles_ct[n > VL][m - 1](n, kc, a, b, c, ldc, accumulate, ep);
}

typedef void (*tile_lda_fn)(size_t n, size_t kc, const float *restrict a, size_t lda, const float *restrict b,
                            float *restrict c, size_t ldc, int accumulate, const dlc_f32_gemm_epilogue *ep);
#define TILE_LDA_NAME(M, NV) tile_lda_##M##x##NV,
static const tile_lda_fn tiles_lda[2][MR] = {{DLC_REPEAT(DLC_GEMM_MR, TILE_LDA_NAME, 1)},
                                             {DLC_REPEAT(DLC_GEMM_MR, TILE_LDA_NAME, 2)}};

static void gemm_ukernel_lda(size_t m, size_t n, size_t kc, const float *a, size_t lda, const float *b, float *c,
                             size_t ldc, int accumulate, const dlc_f32_gemm_epilogue *ep) {
  tiles_lda[n > VL][m - 1](n, kc, a, lda, b, c, ldc, accumulate, ep);
}

static void gemm_ukernel(size_t m, size_t n, size_t kc, const float *a, const float *b, float *c, size_t ldc,
                         int accumulate, const dlc_f32_gemm_epilogue *ep) {
  tiles[n > VL][m - 1](n, kc, a, b, c, ldc, accumulate, ep);
}

/* VL columns at a time: per block of VL rows (one when MR <= VL), the rows' (masked) loads, a VL x VL
   transpose with zero rows past MR, and one store of the block's floats per column (AVX2: 4 + 2
   floats; AVX-512: one 14-lane masked store; Neon: MR / 4 whole vectors). */
static void gemm_pack_rows(size_t len, const float *const *rows, float *dst) {
  for (size_t t = 0; t < len; t += VL) {
    const size_t w = len - t < VL ? len - t : VL;
    const vmask lm = v_first((ptrdiff_t)w);
    UNROLL for (size_t rb = 0; rb < MR; rb += VL) {
      vf r[VL];
      UNROLL for (size_t i = 0; i < VL; i++) r[i] = rb + i < MR && rows[rb + i] ? v_load_mask(rows[rb + i] + t, lm) : v_zero();
      v_transpose(r);
      for (size_t c = 0; c < w; c++) v_store_first(dst + (t + c) * MR + rb, MR - rb, r[c]);
    }
  }
}

/* Two (masked) loads and two stores per k: a 1x1 NCHW layer packs its B micro-panel in L1 right
   before the micro-kernels sweep it, at ~1 cycle per k against MR cycles per k per tile. */
static void gemm_pack_cols(size_t kc, size_t n, const float *src, size_t ld, float *dst) {
  if (n >= NR) {
    _Pragma("GCC unroll 4") for (size_t k = 0; k < kc; k++) {
      const vf v0 = v_load(src + k * ld), v1 = v_load(src + k * ld + VL);
      v_store(dst + k * NR, v0);
      v_store(dst + k * NR + VL, v1);
    }
    return;
  }
  const vmask m0 = v_first((ptrdiff_t)n), m1 = v_first((ptrdiff_t)n - VL);
  for (size_t k = 0; k < kc; k++) {
    v_store(dst + k * NR, v_load_mask(src + k * ld, m0));
    v_store(dst + k * NR + VL, v_load_mask(src + k * ld + VL, m1));
  }
}

/* NR floats per step, the tail with masked loads and v_store_first: a run of up to NR floats is
   two loads and two stores. */
static void gemm_copy(float *dst, const float *src, size_t len) {
  size_t t = 0;
  for (; t + NR <= len; t += NR) {
    const vf v0 = v_load(src + t), v1 = v_load(src + t + VL);
    v_store(dst + t, v0);
    v_store(dst + t + VL, v1);
  }
  const ptrdiff_t r = (ptrdiff_t)(len - t);
  if (r == 0) return;
  v_store_first(dst + t, r, v_load_first(src + t, r));
  if (r > VL) v_store_first(dst + t + VL, r - VL, v_load_first(src + t + VL, r - VL));
}

/* VL outputs per step: two loads and the evens of them (AVX-512: one vpermt2ps). A step reads
   2 VL floats, one past its last even, so whole steps run while another output follows (that
   float is then read anyway); the rest, with masked loads of the 2 r - 1 floats it needs. */
static void gemm_copy_s2(float *dst, const float *src, size_t len) {
  size_t t = 0;
  for (; t + VL < len; t += VL) v_store(dst + t, v_evens_in_order(v_evens(v_load(src + 2 * t), v_load(src + 2 * t + VL))));
  const ptrdiff_t r = (ptrdiff_t)(len - t), need = 2 * r - 1;
  if (r <= 0) return;
  const vf lo = v_load_first(src + 2 * t, need), hi = need > VL ? v_load_first(src + 2 * t + VL, need - VL) : v_zero();
  v_store_first(dst + t, r, v_evens_in_order(v_evens(lo, hi)));
}

const dlc_f32_gemm_family DLC_FAMILY_NAME(f32_gemm) = {
    .name = "f32_gemm_" DLC_STR(DLC_GEMM_MR) "x" DLC_STR(DLC_GEMM_NR) "__" DLC_ISA_STR,
    .mr = MR,
    .nr = NR,
    .ukernel = gemm_ukernel,
    .ukernel_ct = gemm_ukernel_ct,
    .pack_rows = gemm_pack_rows,
    .pack_cols = gemm_pack_cols,
    .copy = gemm_copy,
    .copy_s2 = gemm_copy_s2,
    .ukernel_ldb = gemm_ukernel_ldb,
    .ukernel_ct_ldb = gemm_ukernel_ct_ldb,
    .ukernel_lda = gemm_ukernel_lda,
    .f16_out = DLC_GEMM_F16_OUT,
};
