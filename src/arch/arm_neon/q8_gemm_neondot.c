/* int8 gemm micro-kernel on dot products of four, AArch64 with FEAT_DotProd (asimddp): the u8 x s8
 * quad family (contract: dlc_q8d4_gemm_family, src/ukernel/lowp_gemm_ukernel.h), "q8_gemm_12x8c4__neondot".
 * Compiled with -march=armv8.2-a+dotprod in a library of its own (src/arch/meson.build); the neon
 * table takes it where getauxval says asimddp (config.c), and cores without it (Cortex-A53) keep
 * the SMLAL family alone.
 *
 * Operands. The contract's B holds u8 (activations, S8 ones flipped by the driver to x ^ 0x80) and
 * A s8 weights; x86's vpdpbusd takes u8 x s8 as such. Neon's SDOT is s8 x s8 and UDOT u8 x u8
 * (USDOT, the mixed one, needs FEAT_I8MM), so the kernel flips B once more to s8, b - 128 =
 * b ^ 0x80, and adds back what that took away:
 *   sum_k A(i, k) * B(k, j) = sum_k A(i, k) * (B(k, j) - 128) + 128 * sum_k A(i, k)
 * The row sums of A come from SDOT against a vector of ones (one a k step per 4 rows, 3 beside the
 * tile's 24), in a pass over the A panel before the main loop, whose accumulators start at 128 times
 * them. Every term is an exact integer and the s32
 * sums wrap as the generic kernel's do (the contract keeps the results in range), so C is the
 * same bit for bit. ukernel_q requantises the tile in registers (the wide screen, quant.h) and
 * leaves what that cannot settle to the shared store (q8_store_neon.c, exact as dlc_q8_requant1).
 * The gemv and the transposed tile (ukernel_t) are files of their own (q8_neondot.h).
 *
 * Tile 12 x 8: per k step (4 values of k) B is two 16-byte loads (columns 0-3 and 4-7, four bytes
 * each) flipped by two EORs, A three 16-byte loads (rows 4q .. 4q + 3), and each row takes two
 * SDOT by element (its four weights a 32-bit lane of A's register): 24 accumulators, 2 + 3 more
 * registers (B, A) and the 0x80 mask: 30 of 32.
 *
 * One function per row count, so an edge tile of m rows computes m rows; only the m x n corner of
 * C is touched. */
#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "../../ukernel/config.h"
#include "../template/family.h"
#include "../template/inline.h"
#include "q8_neondot.h"
#include "q8_store_neon.h"

#define MR 12
#define NR 8

#define ROW_STEP(I, unused)                                                                   \
  if (I - 1 < M) {                                                                            \
    acc_lo[I - 1] = vdotq_laneq_s32(acc_lo[I - 1], b0, a4[(I - 1) / 4], (I - 1) % 4);         \
    acc_hi[I - 1] = vdotq_laneq_s32(acc_hi[I - 1], b1, a4[(I - 1) / 4], (I - 1) % 4);         \
  }

/* one k step of four: bp at its 8 columns (32 bytes), ap at its MR x 4 bytes of A */
#define K_QUAD(ap, bp)                                                                                        \
  do {                                                                                                        \
    const int8x16_t b0 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(bp), flip));                                   \
    const int8x16_t b1 = vreinterpretq_s8_u8(veorq_u8(vld1q_u8((bp) + 16), flip));                            \
    int8x16_t a4[MR / 4];                                                                                     \
    UNROLL for (int q = 0; q < MR / 4; q++) a4[q] = 4 * q < (int)M ? vld1q_s8((ap) + 16 * q) : vdupq_n_s8(0); \
    DLC_REPEAT(MR, ROW_STEP, )                                                                                \
  } while (0)

INLINE void put_tile(const size_t M, size_t n, int32x4_t *acc_lo, int32x4_t *acc_hi, int32_t *restrict c, size_t ldc,
                     int accumulate) {
  if (n == NR) {
    UNROLL for (size_t i = 0; i < M; i++) {
      int32_t *ci = c + i * ldc;
      int32x4_t lo = acc_lo[i], hi = acc_hi[i];
      if (accumulate) {
        lo = vaddq_s32(lo, vld1q_s32(ci));
        hi = vaddq_s32(hi, vld1q_s32(ci + 4));
      }
      vst1q_s32(ci, lo);
      vst1q_s32(ci + 4, hi);
    }
    return;
  }
  UNROLL for (size_t i = 0; i < M; i++) {
    int32_t t[NR];
    vst1q_s32(t, acc_lo[i]);
    vst1q_s32(t + 4, acc_hi[i]);
    int32_t *ci = c + i * ldc;
    for (size_t j = 0; j < n; j++) ci[j] = (int32_t)(accumulate ? (uint32_t)ci[j] + (uint32_t)t[j] : (uint32_t)t[j]);
  }
}

/* The products of M rows (compile-time) into acc_lo / acc_hi, for all kernels: boff NULL (IB 0): B
   packed, else read in place (nr columns) */
INLINE void tile_products(const size_t M, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,
                          const ptrdiff_t *restrict boff, const int IB, int32x4_t *acc_lo, int32x4_t *acc_hi) {
  const uint8x16_t flip = vdupq_n_u8(0x80);
  {
    /* the accumulators start at 128 * (row sum of A), what the flip of B takes away (wrapping as
       the sums do): a pass over the panel of its own, so that the main loop keeps its registers */
    const int8x16_t ones = vdupq_n_s8(1);
    int32x4_t rsum[MR / 4], rsum2[MR / 4]; /* two chains a row group: even and odd k steps */
    UNROLL for (size_t q = 0; q < MR / 4; q++) rsum[q] = rsum2[q] = vdupq_n_s32(0);
    const int8_t *ak = a;
    size_t k4 = 0;
    _Pragma("GCC unroll 2") for (; k4 + 2 <= kc / 4; k4 += 2, ak += 8 * MR)
      UNROLL for (size_t q = 0; q < MR / 4; q++) if (4 * q < M) {
        rsum[q] = vdotq_s32(rsum[q], vld1q_s8(ak + 16 * q), ones);
        rsum2[q] = vdotq_s32(rsum2[q], vld1q_s8(ak + 4 * MR + 16 * q), ones);
      }
    if (k4 < kc / 4)
      UNROLL for (size_t q = 0; q < MR / 4; q++) if (4 * q < M) rsum[q] = vdotq_s32(rsum[q], vld1q_s8(ak + 16 * q), ones);
    UNROLL for (size_t q = 0; q < MR / 4; q++) rsum[q] = vaddq_s32(rsum[q], rsum2[q]);
    UNROLL for (size_t q = 0; q < MR / 4; q++) rsum[q] = vshlq_n_s32(rsum[q], 7);
#define ROW_INIT(I, unused) \
  if (I - 1 < M) acc_lo[I - 1] = acc_hi[I - 1] = vdupq_laneq_s32(rsum[(I - 1) / 4], (I - 1) % 4);
    DLC_REPEAT(MR, ROW_INIT, )
#undef ROW_INIT
  }
  _Pragma("GCC unroll 2") for (size_t k4 = 0; k4 < kc / 4; k4++) {
    const uint8_t *bk = IB ? b + 2 * boff[k4] : b + k4 * 4 * NR;
    K_QUAD(a, bk);
    a += 4 * MR;
  }
}

INLINE void tile_body(const size_t M, size_t n, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,
                      const ptrdiff_t *restrict boff, int32_t *restrict c, size_t ldc, int accumulate, const int IB) {
  int32x4_t acc_lo[MR], acc_hi[MR];
  tile_products(M, kc, a, b, boff, IB, acc_lo, acc_hi);
  put_tile(M, n, acc_lo, acc_hi, c, ldc, accumulate);
}

typedef void (*tile_fn)(size_t n, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,
                        const ptrdiff_t *restrict boff, int32_t *restrict c, size_t ldc, int accumulate);
#define DEFINE_TILE(M, unused)                                                                             \
  static void tile_##M(size_t n, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,           \
                       const ptrdiff_t *restrict boff, int32_t *restrict c, size_t ldc, int accumulate) {  \
    tile_body(M, n, kc, a, b, boff, c, ldc, accumulate, 0);                                                \
  }                                                                                                        \
  static void tile_ib_##M(size_t n, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,        \
                          const ptrdiff_t *restrict boff, int32_t *restrict c, size_t ldc, int accumulate) { \
    tile_body(M, n, kc, a, b, boff, c, ldc, accumulate, 1);                                                \
  }
DLC_REPEAT(MR, DEFINE_TILE, )
#define TILE_NAME(M, unused) tile_##M,
#define TILE_IB_NAME(M, unused) tile_ib_##M,
static const tile_fn tiles[MR] = {DLC_REPEAT(MR, TILE_NAME, )};
static const tile_fn tiles_ib[MR] = {DLC_REPEAT(MR, TILE_IB_NAME, )};

static void q8d4_ukernel(size_t m, size_t n, size_t kc, const int8_t *a, const uint8_t *b, int32_t *c, size_t ldc,
                         int accumulate) {
  tiles[m - 1](n, kc, a, b, NULL, c, ldc, accumulate);
}

static void q8d4_ukernel_ib(size_t m, size_t kc, const int8_t *a, const uint8_t *b, const ptrdiff_t *boff, int32_t *c,
                            size_t ldc, int accumulate) {
  tiles_ib[m - 1](NR, kc, a, b, boff, c, ldc, accumulate);
}

/* ukernel_q: the tile requantised in registers (the wide screen of quant.h, as the store's wide
   path, with the row's bias and multiplier broadcast), each row's 8 lanes narrowed with
   saturation; a tile with a lane of its m x n corner near a tie, or a plan without the wide
   screen, goes through the exact store (q8_store_neon.c) row by row instead. */
INLINE void tile_requant(const size_t M, size_t n, int32x4_t *acc_lo, int32x4_t *acc_hi, const int32_t *restrict c,
                         size_t ldc, int accumulate, const dlc_q8_params *q, size_t c0, uint8_t *restrict y,
                         size_t ldy) {
  if (accumulate) UNROLL for (size_t i = 0; i < M; i++) {
      const int32_t *ci = c + i * ldc;
      if (n == NR) {
        acc_lo[i] = vaddq_s32(acc_lo[i], vld1q_s32(ci));
        acc_hi[i] = vaddq_s32(acc_hi[i], vld1q_s32(ci + 4));
      } else { /* only the corner's ints may be read */
        int32_t t[NR] = {0};
        for (size_t j = 0; j < n; j++) t[j] = ci[j];
        acc_lo[i] = vaddq_s32(acc_lo[i], vld1q_s32(t));
        acc_hi[i] = vaddq_s32(acc_hi[i], vld1q_s32(t + 4));
      }
    }
  if (q->screen_wide) {
    const int32x4_t lo_i = vdupq_n_s32(q->lo_i), hi_i = vdupq_n_s32(q->hi_i);
    const int32x4_t m_less_zp = vdupq_n_s32(0x4b400000 - q->y_zero_point);
    const uint32x4_t iota = {0, 1, 2, 3}, nv = vdupq_n_u32((uint32_t)n);
    /* lanes past n hold sums of whatever B had there: they must not send the tile down */
    const uint32x4_t in_lo = vcltq_u32(iota, nv), in_hi = vcltq_u32(vaddq_u32(iota, vdupq_n_u32(4)), nv);
    uint32x4_t far = vdupq_n_u32(0);
    const float32x4_t half_in = vdupq_n_f32(0.5f - DLC_Q8_WIDE_MARGIN);
    uint8x8_t out[MR];
    UNROLL for (size_t i = 0; i < M; i++) {
      const int32x4_t bias = vdupq_n_s32(q->bias[c0 + i]);
      const float32x4_t mf = vdupq_n_f32(q->mult_f[c0 + i]);
      float32x4_t d0, d1;
      int32x4_t r0 = dlc_q8_wide4__neon(vaddq_s32(acc_lo[i], bias), mf, m_less_zp, &d0);
      int32x4_t r1 = dlc_q8_wide4__neon(vaddq_s32(acc_hi[i], bias), mf, m_less_zp, &d1);
      if (q->clamp_i) {
        r0 = vminq_s32(vmaxq_s32(r0, lo_i), hi_i);
        r1 = vminq_s32(vmaxq_s32(r1, lo_i), hi_i);
      }
      far = vorrq_u32(far, vandq_u32(vcgtq_f32(d0, half_in), in_lo));
      far = vorrq_u32(far, vandq_u32(vcgtq_f32(d1, half_in), in_hi));
      const int16x8_t h = vcombine_s16(vqmovn_s32(r0), vqmovn_s32(r1));
      out[i] = q->is_signed ? vreinterpret_u8_s8(vqmovn_s16(h)) : vqmovun_s16(h);
    }
    if (!vmaxvq_u32(far)) {
      UNROLL for (size_t i = 0; i < M; i++) {
        if (n == NR) {
          vst1_u8(y + i * ldy, out[i]);
        } else {
          uint8_t t[NR];
          vst1_u8(t, out[i]);
          for (size_t j = 0; j < n; j++) y[i * ldy + j] = t[j];
        }
      }
      return;
    }
  }
  int32_t t[MR * NR];
  UNROLL for (size_t i = 0; i < M; i++) {
    vst1q_s32(t + i * NR, acc_lo[i]);
    vst1q_s32(t + i * NR + 4, acc_hi[i]);
    dlc_q8_store__neon(n, t + i * NR, q, c0 + i, 0, y + i * ldy);
  }
}

typedef void (*qtile_fn)(size_t n, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,
                         const ptrdiff_t *restrict boff, const int32_t *restrict c, size_t ldc, int accumulate,
                         const dlc_q8_params *q, size_t c0, uint8_t *restrict y, size_t ldy);
#define DEFINE_QTILE(M, IB)                                                                                \
  static void qtile_##IB##_##M(size_t n, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,   \
                               const ptrdiff_t *restrict boff, const int32_t *restrict c, size_t ldc,      \
                               int accumulate, const dlc_q8_params *q, size_t c0, uint8_t *restrict y,     \
                               size_t ldy) {                                                               \
    int32x4_t acc_lo[MR], acc_hi[MR];                                                                      \
    tile_products(M, kc, a, b, boff, IB, acc_lo, acc_hi);                                                  \
    tile_requant(M, n, acc_lo, acc_hi, c, ldc, accumulate, q, c0, y, ldy);                                 \
  }
DLC_REPEAT(MR, DEFINE_QTILE, 0)
DLC_REPEAT(MR, DEFINE_QTILE, 1)
#define QTILE_NAME(M, IB) qtile_##IB##_##M,
static const qtile_fn qtiles[2][MR] = {{DLC_REPEAT(MR, QTILE_NAME, 0)}, {DLC_REPEAT(MR, QTILE_NAME, 1)}};

static void q8d4_ukernel_q(size_t m, size_t n, size_t kc, const int8_t *a, const uint8_t *b, const ptrdiff_t *boff,
                           const int32_t *c, size_t ldc, int accumulate, const dlc_q8_params *q, size_t c0, void *y,
                           size_t ldy) {
  qtiles[boff != NULL][m - 1](n, kc, a, b, boff, c, ldc, accumulate, q, c0, y, ldy);
}

/* four rows into units of four: 16 columns at a time, two rounds of ZIP (bytes, then halves) */
static void q8d4_pack_quads(size_t n, const uint8_t *r0, const uint8_t *r1, const uint8_t *r2, const uint8_t *r3,
                            size_t step, uint8_t flip, uint8_t *dst) {
  const uint8x16_t f = vdupq_n_u8(flip);
  size_t j = 0;
  /* step 2 reads the pair of each column: the last column's partner byte must lie before the row's end */
  for (; (step == 1 && j + 16 <= n) || (step == 2 && j + 17 <= n); j += 16) {
    uint8x16_t v0, v1, v2, v3;
    if (step == 1) {
      v0 = vld1q_u8(r0 + j), v1 = vld1q_u8(r1 + j), v2 = vld1q_u8(r2 + j), v3 = vld1q_u8(r3 + j);
    } else {
      v0 = vld2q_u8(r0 + 2 * j).val[0], v1 = vld2q_u8(r1 + 2 * j).val[0];
      v2 = vld2q_u8(r2 + 2 * j).val[0], v3 = vld2q_u8(r3 + 2 * j).val[0];
    }
    v0 = veorq_u8(v0, f), v1 = veorq_u8(v1, f), v2 = veorq_u8(v2, f), v3 = veorq_u8(v3, f);
    const uint16x8_t p01l = vreinterpretq_u16_u8(vzip1q_u8(v0, v1)), p01h = vreinterpretq_u16_u8(vzip2q_u8(v0, v1));
    const uint16x8_t p23l = vreinterpretq_u16_u8(vzip1q_u8(v2, v3)), p23h = vreinterpretq_u16_u8(vzip2q_u8(v2, v3));
    vst1q_u8(dst + 4 * j, vreinterpretq_u8_u16(vzip1q_u16(p01l, p23l)));
    vst1q_u8(dst + 4 * j + 16, vreinterpretq_u8_u16(vzip2q_u16(p01l, p23l)));
    vst1q_u8(dst + 4 * j + 32, vreinterpretq_u8_u16(vzip1q_u16(p01h, p23h)));
    vst1q_u8(dst + 4 * j + 48, vreinterpretq_u8_u16(vzip2q_u16(p01h, p23h)));
  }
  for (; j < n; j++) {
    dst[4 * j] = r0[j * step] ^ flip;
    dst[4 * j + 1] = r1[j * step] ^ flip;
    dst[4 * j + 2] = r2[j * step] ^ flip;
    dst[4 * j + 3] = r3[j * step] ^ flip;
  }
}

const dlc_q8d4_gemm_family dlc_q8d4_gemm__neondot = {
    .name = "q8_gemm_" DLC_STR(MR) "x" DLC_STR(NR) "c4__neondot",
    .mr = MR,
    .nr = NR,
    .ukernel = q8d4_ukernel,
    .ukernel_ib = q8d4_ukernel_ib,
    .ukernel_q = q8d4_ukernel_q,
    .pack_quads = q8d4_pack_quads,
    .gemv_mr = DLC_Q8_NEONDOT_GEMV_MR,
    .gemv = dlc_q8d4_gemv_16c4__neondot,
    .gemv_name = "q8_gemv_" DLC_STR(DLC_Q8_NEONDOT_GEMV_MR) "c4__neondot",
    .tr = DLC_Q8_NEONDOT_TR,
    .tm = DLC_Q8_NEONDOT_TM,
    .ukernel_t = dlc_q8d4_gemm_t_6x16c4__neondot,
    .transpose = dlc_s32_transpose__neon,
    .t_name = "q8_gemm_t_" DLC_STR(DLC_Q8_NEONDOT_TR) "x" DLC_STR(DLC_Q8_NEONDOT_TM) "c4__neondot",
};
