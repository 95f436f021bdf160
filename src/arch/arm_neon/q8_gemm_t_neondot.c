/* int8 gemm with C transposed on SDOT, AArch64 with FEAT_DotProd: the q8_d4 family's ukernel_t
 * (lowp_gemm_ukernel.h: one row of C per output position, B read in place through the offset
 * table and the positions' table), "q8_gemm_t_6x16c4__neondot", and its transpose.
 *
 * Tile 6 positions x 16 output channels: per group of four k, the panel's four vectors of weights
 * (channel 4v + l's four in lane l of vector v) and the positions' four bytes each as a 32-bit lane
 * of a B register, flipped to s8, into 24 accumulators by SDOT by element (position r's lane
 * against the four vectors of A). Positions lie anywhere in the copy: two a d register (LDR S and
 * LD1 into lane 1), 3 EORs, per 24 SDOT. Where the tile's positions are consecutive (r = pos[0] + r,
 * a tile within an output row; checked per call) their bytes are one run: a 16-byte load, one of
 * 8 (or 4) and 2 EORs; where they are two runs (a tile across the end of a row) each run is read
 * exactly (LDR q / d / s) and flipped by an EOR a register. The flip takes 128 x the row sum of A away from every
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

/* SDOT by element with the lane a compile-time value after inlining (a switch, so that the
   intrinsics see literal lanes at any optimisation level) */
INLINE int32x4_t dot_laneq(int32x4_t acc, int8x16_t w, int8x16_t x, size_t lane) {
  switch (lane) {
    case 0: return vdotq_laneq_s32(acc, w, x, 0);
    case 1: return vdotq_laneq_s32(acc, w, x, 1);
    case 2: return vdotq_laneq_s32(acc, w, x, 2);
    default: return vdotq_laneq_s32(acc, w, x, 3);
  }
}
INLINE int32x4_t dot_lane(int32x4_t acc, int8x16_t w, int8x8_t x, size_t lane) {
  return lane ? vdotq_lane_s32(acc, w, x, 1) : vdotq_lane_s32(acc, w, x, 0);
}

/* A run of L consecutive positions' four bytes (L <= 6, compile time), read exactly: 16 bytes
   (4 positions) into q, then 8 into d[0] and 4 into d[1], or 4 into d[0]; each flipped to s8.
   LDR q / d / s: no vector-pipe work but the EORs. */
typedef struct run_regs {
  int8x16_t q;
  int8x8_t d[2];
} run_regs;

INLINE int8x8_t flipped4(const uint8_t *p, uint8x16_t flip) {
  const uint32x2_t l = vset_lane_u32(*(const u32_unaligned *)p, vdup_n_u32(0), 0);
  return vreinterpret_s8_u8(veor_u8(vreinterpret_u8_u32(l), vget_low_u8(flip)));
}

INLINE void load_run(const size_t L, const uint8_t *p, uint8x16_t flip, run_regs *x) {
  const size_t full = L >= 4, rest = L - 4 * full;
  if (full) x->q = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(p), flip));
  p += 16 * full;
  if (rest >= 2) x->d[0] = vreinterpret_s8_u8(veor_u8(vld1_u8(p), vget_low_u8(flip)));
  if (rest == 3) x->d[1] = flipped4(p + 8, flip);
  if (rest == 1) x->d[0] = flipped4(p, flip);
}

/* position j of a run of L, against one vector of A */
INLINE int32x4_t dot_run(const size_t L, const size_t j, int32x4_t acc, int8x16_t w, const run_regs *x) {
  const size_t full = L >= 4, rest = L - 4 * full, jj = j - 4 * full;
  if (full && j < 4) return dot_laneq(acc, w, x->q, j);
  if (rest >= 2 && jj < 2) return dot_lane(acc, w, x->d[0], jj);
  return dot_lane(acc, w, rest == 3 ? x->d[1] : x->d[0], 0);
}

/* R positions x V vectors of channels (compile time; channels past m of the panel are zero). S:
   0 for positions anywhere, else positions [0, S) and [S, R) are runs of consecutive ones (one
   run where S = R). */
INLINE void ttile_body(const size_t R, const size_t V, const size_t S, size_t m, size_t kc, const int8_t *restrict a,
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
    if (S) {
      /* one run after the other, so that the first's registers are free for the second */
      run_regs x1, x2;
      load_run(S, row[0] + o, flip, &x1);
      UNROLL for (size_t r = 0; r < S; r++)
        UNROLL for (size_t v = 0; v < V; v++) acc[r][v] = dot_run(S, r, acc[r][v], w[v], &x1);
      if (S < R) {
        load_run(R - S, row[S] + o, flip, &x2);
        UNROLL for (size_t r = S; r < R; r++)
          UNROLL for (size_t v = 0; v < V; v++) acc[r][v] = dot_run(R - S, r - S, acc[r][v], w[v], &x2);
      }
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
#define DEFINE_TTILE_S(R, V, S, NAME)                                                                      \
  static void NAME(size_t m, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,                 \
                   const size_t *restrict pos, const ptrdiff_t *restrict boff, int32_t *restrict c, size_t ldc, \
                   int accumulate) {                                                                          \
    ttile_body(R, V, S, m, kc, a, b, pos, boff, c, ldc, accumulate);                                          \
  }
/* positions anywhere and one run, every R x V */
#define DEFINE_TTILE(R, V) DEFINE_TTILE_S(R, V, 0, ttile_##R##x##V) DEFINE_TTILE_S(R, V, R, ttile_c_##R##x##V)
#define DEFINE_TTILES(R) DEFINE_TTILE(R, 1) DEFINE_TTILE(R, 2) DEFINE_TTILE(R, 3) DEFINE_TTILE(R, 4)
DEFINE_TTILES(1) DEFINE_TTILES(2) DEFINE_TTILES(3) DEFINE_TTILES(4) DEFINE_TTILES(5) DEFINE_TTILES(6)
#define TTILE_ROW(P, R) {P##R##x1, P##R##x2, P##R##x3, P##R##x4}
static const ttile_fn ttiles[2][TR][4] = {
    {TTILE_ROW(ttile_, 1), TTILE_ROW(ttile_, 2), TTILE_ROW(ttile_, 3), TTILE_ROW(ttile_, 4), TTILE_ROW(ttile_, 5),
     TTILE_ROW(ttile_, 6)},
    {TTILE_ROW(ttile_c_, 1), TTILE_ROW(ttile_c_, 2), TTILE_ROW(ttile_c_, 3), TTILE_ROW(ttile_c_, 4),
     TTILE_ROW(ttile_c_, 5), TTILE_ROW(ttile_c_, 6)},
};
/* two runs (a tile across the end of an output row: one break), for the full panel of 16 channels
   and 4-6 positions, the tiles the direct driver runs most */
#define DEFINE_SPLIT(R, S) DEFINE_TTILE_S(R, 4, S, ttile_s_##R##_##S)
DEFINE_SPLIT(4, 1) DEFINE_SPLIT(4, 2) DEFINE_SPLIT(4, 3)
DEFINE_SPLIT(5, 1) DEFINE_SPLIT(5, 2) DEFINE_SPLIT(5, 3) DEFINE_SPLIT(5, 4)
DEFINE_SPLIT(6, 1) DEFINE_SPLIT(6, 2) DEFINE_SPLIT(6, 3) DEFINE_SPLIT(6, 4) DEFINE_SPLIT(6, 5)
static const ttile_fn ttiles_split[3][5] = {
    {ttile_s_4_1, ttile_s_4_2, ttile_s_4_3, NULL, NULL},
    {ttile_s_5_1, ttile_s_5_2, ttile_s_5_3, ttile_s_5_4, NULL},
    {ttile_s_6_1, ttile_s_6_2, ttile_s_6_3, ttile_s_6_4, ttile_s_6_5},
};

void dlc_q8d4_gemm_t_6x16c4__neondot(size_t np, size_t m, size_t kc, const int8_t *a, const uint8_t *b,
                                     const size_t *pos, const ptrdiff_t *boff, int32_t *c, size_t ldc,
                                     int accumulate) {
  /* the breaks in the run of positions: none, one (at split), or more */
  size_t breaks = 0, split = 0;
  for (size_t r = 1; r < np; r++)
    if (pos[r] != pos[r - 1] + 1) breaks++, split = r;
  if (breaks == 1 && np >= 4 && m > 12) {
    ttiles_split[np - 4][split - 1](m, kc, a, b, pos, boff, c, ldc, accumulate);
    return;
  }
  const int contig = breaks == 0;
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
