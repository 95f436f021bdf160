/* int8 gemm with C transposed on SDOT, AArch64 with FEAT_DotProd: the q8_d4 family's ukernel_t
 * (lowp_gemm_ukernel.h: one row of C per output position, B read in place through the offset
 * table and the positions' table), "q8_gemm_t_6x16c4__neondot", and its transpose.
 *
 * Tile 6 positions x 16 output channels: per group of four k, the panel's four vectors of weights
 * (channel 4v + l's four in lane l of vector v) and the positions' four bytes each as a 32-bit lane
 * of a B register, flipped to s8, into 24 accumulators by SDOT by element (position r's lane
 * against the four vectors of A). Positions lie anywhere in the copy: two a d register (LDR S and
 * LD1 into lane 1), 3 EORs, per 24 SDOT. Where the tile's positions are consecutive (r = pos[0] + r,
 * a tile within an output row; checked per call) their bytes are one run: a
 * 16-byte load, one of 8 (or 4) and 2 EORs. The flip takes 128 x the row sum of A away from every
 * position alike (as in q8_gemm_neondot.c); that is added back from a pass over the panel after
 * the main loop (one SDOT against ones per vector of A and group), when the loop's registers are
 * free. Registers in the loop: 24 accumulators, 4 of A, 1-2 of B, the mask. */
#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "../template/inline.h"
#include "q8_neondot.h"

#define TR DLC_Q8_NEONDOT_TR
#define TM DLC_Q8_NEONDOT_TM

/* a position's four bytes, wherever they lie (offsets are in 2-byte units) */
typedef uint32_t u32_unaligned __attribute__((aligned(1), may_alias));

/* CONTIG (positions r = pos[0] + r, a tile within an output row): the R positions' four bytes
   of one group are one 16-byte load (positions 0-3) and one of 8 or 4 (4-5), flipped to s8 */
INLINE void gather_contig(const size_t R, const uint8_t *p, uint8x16_t flip, int8x16_t b[2]) {
  uint8x16_t x1 = vdupq_n_u8(0);
  if (R == 6) x1 = vcombine_u8(vld1_u8(p + 16), vdup_n_u8(0));
  if (R == 5) x1 = vreinterpretq_u8_u32(vsetq_lane_u32(*(const u32_unaligned *)(p + 16), vdupq_n_u32(0), 0));
  b[0] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(p), flip));
  b[1] = vreinterpretq_s8_u8(veorq_u8(x1, flip));
}

/* R positions x V vectors of channels (compile time; channels past m of the panel are zero) */
INLINE void ttile_body(const size_t R, const size_t V, const int CONTIG, size_t m, size_t kc, const int8_t *restrict a,
                       const uint8_t *restrict b, const size_t *restrict pos, const ptrdiff_t *restrict boff,
                       int32_t *restrict c, size_t ldc, int accumulate) {
  const uint8x16_t flip = vdupq_n_u8(0x80);
  const size_t groups = kc / 4;
  int32x4_t acc[TR][4];
  UNROLL for (size_t r = 0; r < R; r++) UNROLL for (size_t v = 0; v < V; v++) acc[r][v] = vdupq_n_s32(0);
  const int8_t *const a0 = a;
  const uint8_t *row[TR];
  UNROLL for (size_t r = 0; r < R; r++) row[r] = b + 4 * pos[r];
  _Pragma("GCC unroll 2") for (size_t g = 0; g < groups; g++) {
    const ptrdiff_t o = 2 * boff[g];
    int8x16_t w[4];
    UNROLL for (size_t v = 0; v < V; v++) w[v] = vld1q_s8(a + 16 * v);
    if (CONTIG) {
      int8x16_t x[2];
      gather_contig(R, row[0] + o, flip, x);
#define POS_STEP(r) \
  if (r < R) UNROLL for (size_t v = 0; v < V; v++) acc[r][v] = vdotq_laneq_s32(acc[r][v], w[v], x[r / 4], r % 4);
      POS_STEP(0) POS_STEP(1) POS_STEP(2) POS_STEP(3) POS_STEP(4) POS_STEP(5)
#undef POS_STEP
    } else {
      /* positions anywhere: two a d register (LDR S, then LD1 into lane 1: a chain of two loads),
         flipped by one EOR, each a 32-bit lane for SDOT by element */
#define PAIR_STEP(p)                                                                                        \
  if (2 * p < R) {                                                                                          \
    uint32x2_t l = vset_lane_u32(*(const u32_unaligned *)(row[2 * p] + o), vdup_n_u32(0), 0);             \
    if (2 * p + 1 < R) l = vset_lane_u32(*(const u32_unaligned *)(row[2 * p + 1] + o), l, 1);              \
    const int8x8_t xp = vreinterpret_s8_u8(veor_u8(vreinterpret_u8_u32(l), vget_low_u8(flip)));           \
    UNROLL for (size_t v = 0; v < V; v++) acc[2 * p][v] = vdotq_lane_s32(acc[2 * p][v], w[v], xp, 0);      \
    if (2 * p + 1 < R)                                                                                      \
      UNROLL for (size_t v = 0; v < V; v++) acc[2 * p + 1][v] = vdotq_lane_s32(acc[2 * p + 1][v], w[v], xp, 1); \
  }
      PAIR_STEP(0) PAIR_STEP(1) PAIR_STEP(2)
#undef PAIR_STEP
    }
    a += 4 * TM;
  }
  /* after the products, so that its registers are free again: 128 x the row sums of A */
  {
    const int8x16_t ones = vdupq_n_s8(1);
    int32x4_t rs[4]; /* one chain a vector: beside the 24 accumulators there is room for no more */
    UNROLL for (size_t v = 0; v < V; v++) rs[v] = vdupq_n_s32(0);
    const int8_t *ak = a0;
    for (size_t g = 0; g < groups; g++, ak += 4 * TM)
      UNROLL for (size_t v = 0; v < V; v++) rs[v] = vdotq_s32(rs[v], vld1q_s8(ak + 16 * v), ones);
    UNROLL for (size_t v = 0; v < V; v++) rs[v] = vshlq_n_s32(rs[v], 7);
    UNROLL for (size_t r = 0; r < R; r++) UNROLL for (size_t v = 0; v < V; v++) acc[r][v] = vaddq_s32(acc[r][v], rs[v]);
  }
  UNROLL for (size_t r = 0; r < R; r++) {
    int32_t *cr = c + r * ldc;
    UNROLL for (size_t v = 0; v < V; v++) {
      if (4 * v + 4 <= m) {
        int32x4_t s = acc[r][v];
        if (accumulate) s = vaddq_s32(s, vld1q_s32(cr + 4 * v));
        vst1q_s32(cr + 4 * v, s);
      } else {
        int32_t t[4];
        vst1q_s32(t, acc[r][v]);
        for (size_t l = 0; l < m - 4 * v; l++)
          cr[4 * v + l] = (int32_t)((accumulate ? (uint32_t)cr[4 * v + l] : 0u) + (uint32_t)t[l]);
      }
    }
  }
}

typedef void (*ttile_fn)(size_t m, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,
                         const size_t *restrict pos, const ptrdiff_t *restrict boff, int32_t *restrict c, size_t ldc,
                         int accumulate);
#define DEFINE_TTILE(R, V)                                                                                     \
  static void ttile_##R##x##V(size_t m, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,       \
                              const size_t *restrict pos, const ptrdiff_t *restrict boff,                    \
                              int32_t *restrict c, size_t ldc, int accumulate) {                             \
    ttile_body(R, V, 0, m, kc, a, b, pos, boff, c, ldc, accumulate);                                          \
  }                                                                                                           \
  static void ttile_c_##R##x##V(size_t m, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,     \
                                const size_t *restrict pos, const ptrdiff_t *restrict boff,                  \
                                int32_t *restrict c, size_t ldc, int accumulate) {                           \
    ttile_body(R, V, R >= 4, m, kc, a, b, pos, boff, c, ldc, accumulate);                                     \
  }
#define DEFINE_TTILES(R) DEFINE_TTILE(R, 1) DEFINE_TTILE(R, 2) DEFINE_TTILE(R, 3) DEFINE_TTILE(R, 4)
DEFINE_TTILES(1) DEFINE_TTILES(2) DEFINE_TTILES(3) DEFINE_TTILES(4) DEFINE_TTILES(5) DEFINE_TTILES(6)
#define TTILE_ROW(P, R) {P##R##x1, P##R##x2, P##R##x3, P##R##x4}
static const ttile_fn ttiles[2][TR][4] = {
    {TTILE_ROW(ttile_, 1), TTILE_ROW(ttile_, 2), TTILE_ROW(ttile_, 3), TTILE_ROW(ttile_, 4), TTILE_ROW(ttile_, 5),
     TTILE_ROW(ttile_, 6)},
    {TTILE_ROW(ttile_c_, 1), TTILE_ROW(ttile_c_, 2), TTILE_ROW(ttile_c_, 3), TTILE_ROW(ttile_c_, 4),
     TTILE_ROW(ttile_c_, 5), TTILE_ROW(ttile_c_, 6)},
};

void dlc_q8d4_gemm_t_6x16c4__neondot(size_t np, size_t m, size_t kc, const int8_t *a, const uint8_t *b,
                                     const size_t *pos, const ptrdiff_t *boff, int32_t *c, size_t ldc,
                                     int accumulate) {
  int contig = np >= 4;
  for (size_t r = 1; r < np && contig; r++) contig = pos[r] == pos[0] + r;
  ttiles[contig][np - 1][(m - 1) / 4](m, kc, a, b, pos, boff, c, ldc, accumulate);
}

/* 4 x 4 blocks: TRN1 / TRN2 on 32-bit lanes, then on 64-bit halves; the edges (rows or columns
   past a multiple of 4) element by element, so nothing outside the rows x cols is read or written */
void dlc_s32_transpose__neon(size_t rows, size_t cols, const int32_t *src, size_t lds, int32_t *dst, size_t ldd) {
  const size_t r4 = rows & ~(size_t)3, c4 = cols & ~(size_t)3;
  for (size_t i = 0; i < r4; i += 4)
    for (size_t j = 0; j < c4; j += 4) {
      const int32_t *s = src + i * lds + j;
      const int32x4_t x0 = vld1q_s32(s), x1 = vld1q_s32(s + lds), x2 = vld1q_s32(s + 2 * lds),
                      x3 = vld1q_s32(s + 3 * lds);
      const int32x4_t t0 = vtrn1q_s32(x0, x1), t1 = vtrn2q_s32(x0, x1);
      const int32x4_t t2 = vtrn1q_s32(x2, x3), t3 = vtrn2q_s32(x2, x3);
      int32_t *d = dst + j * ldd + i;
      vst1q_s32(d, vreinterpretq_s32_s64(vtrn1q_s64(vreinterpretq_s64_s32(t0), vreinterpretq_s64_s32(t2))));
      vst1q_s32(d + ldd, vreinterpretq_s32_s64(vtrn1q_s64(vreinterpretq_s64_s32(t1), vreinterpretq_s64_s32(t3))));
      vst1q_s32(d + 2 * ldd, vreinterpretq_s32_s64(vtrn2q_s64(vreinterpretq_s64_s32(t0), vreinterpretq_s64_s32(t2))));
      vst1q_s32(d + 3 * ldd, vreinterpretq_s32_s64(vtrn2q_s64(vreinterpretq_s64_s32(t1), vreinterpretq_s64_s32(t3))));
    }
  for (size_t i = 0; i < rows; i++)
    for (size_t j = i < r4 ? c4 : 0; j < cols; j++) dst[j * ldd + i] = src[i * lds + j];
}
