/* int8 gemm micro-kernel, AArch64 Neon without dotprod (contract: src/ukernel/lowp_gemm_ukernel.h,
 * s16 operands in pairs along k, s32 accumulators; src/arch/generic/q8_gemm_generic.c is the
 * readable specification). Runs on every AArch64 core (Cortex-A53 included).
 *
 * Tile MR x 8, "q8_gemm_<MR>x8c2__neon". Per k pair the 8 columns of B are one 16-byte load per
 * k (16 s16: column j's pair at lanes 2j, 2j + 1); UZP1 / UZP2 split them into the 8 columns' k0
 * and k1 values (2 vector instructions for the whole tile), and each row then takes four
 * SMLAL / SMLAL2 by element, its two weights read from the A panel's register by lane: 16
 * multiply-accumulates in 4 instructions, 2 accumulators (8 s32 columns) per row. MR = 12: 24
 * accumulators, the B pair and its split, 3 registers of A (lanes 2i, 2i + 1 hold row i's pair;
 * a by-element s16 operand must sit in v0-v15, which leaves room).
 *
 * Sums wrap modulo 2^32 as in the generic kernel (the contract keeps the stored results in range).
 * One function per row count, so an edge tile of m rows computes m rows; only the m x n corner of
 * C is touched. */
#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>

#include "../../ukernel/config.h"
#include "../template/family.h"
#include "../template/inline.h"
#include "q8_store_neon.h"

#define MR 12
#define NR 8

/* the rows of the tile, in quads of A (a q register of 8 s16 holds the pairs of 4 rows) */
#define ROW_STEP(I, unused)                                                                               \
  if (I - 1 < M) {                                                                                         \
    acc_lo[I - 1] = vmlal_laneq_s16(acc_lo[I - 1], vget_low_s16(b0), a4[(I - 1) / 4], ((I - 1) % 4) * 2);     \
    acc_hi[I - 1] = vmlal_high_laneq_s16(acc_hi[I - 1], b0, a4[(I - 1) / 4], ((I - 1) % 4) * 2);              \
    acc_lo[I - 1] = vmlal_laneq_s16(acc_lo[I - 1], vget_low_s16(b1), a4[(I - 1) / 4], ((I - 1) % 4) * 2 + 1); \
    acc_hi[I - 1] = vmlal_high_laneq_s16(acc_hi[I - 1], b1, a4[(I - 1) / 4], ((I - 1) % 4) * 2 + 1);          \
  }

/* one k pair: bp at the pair's 8 columns (16 s16), ap at its MR pairs of A */
#define K_PAIR(ap, bp)                                                        \
  do {                                                                        \
    const int16x8_t p0 = vld1q_s16(bp), p1 = vld1q_s16((bp) + 8);             \
    const int16x8_t b0 = vuzp1q_s16(p0, p1), b1 = vuzp2q_s16(p0, p1);         \
    int16x8_t a4[MR / 4];                                                     \
    UNROLL for (int q = 0; q < MR / 4; q++) a4[q] = 4 * q < (int)M ? vld1q_s16((ap) + 8 * q) : vdupq_n_s16(0); \
    DLC_REPEAT(MR, ROW_STEP, )                                                \
  } while (0)

/* the tile's accumulators (m x n of them) into C */
INLINE void put_tile(const size_t M, size_t m, size_t n, int32x4_t *acc_lo, int32x4_t *acc_hi, int32_t *restrict c, size_t ldc,
                     int accumulate) {
  if (n == NR) {
    UNROLL for (size_t i = 0; i < M; i++) {
      if (i >= m) break;
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
    if (i >= m) break;
    int32_t t[NR];
    vst1q_s32(t, acc_lo[i]);
    vst1q_s32(t + 4, acc_hi[i]);
    int32_t *ci = c + i * ldc;
    for (size_t j = 0; j < n; j++) ci[j] = (int32_t)(accumulate ? (uint32_t)ci[j] + (uint32_t)t[j] : (uint32_t)t[j]);
  }
}

/* M rows (a compile-time count: an edge tile of m rows computes m, a dense layer's one row one);
   boff NULL: B packed, else read in place (ukernel_ib, nr columns) */
INLINE void tile_body(const size_t M, size_t n, size_t kc, const int16_t *restrict a, const int16_t *restrict b,
                      const ptrdiff_t *restrict boff, int32_t *restrict c, size_t ldc, int accumulate, const int IB) {
  int32x4_t acc_lo[MR], acc_hi[MR];
  UNROLL for (size_t i = 0; i < M; i++) acc_lo[i] = acc_hi[i] = vdupq_n_s32(0);
  _Pragma("GCC unroll 2") for (size_t k2 = 0; k2 < kc / 2; k2++) {
    const int16_t *bk = IB ? b + boff[k2] : b + k2 * 2 * NR;
    K_PAIR(a, bk);
    a += 2 * MR;
  }
  put_tile(M, M, n, acc_lo, acc_hi, c, ldc, accumulate);
}

typedef void (*q8_tile_fn)(size_t n, size_t kc, const int16_t *restrict a, const int16_t *restrict b,
                           const ptrdiff_t *restrict boff, int32_t *restrict c, size_t ldc, int accumulate);
#define DEFINE_TILE(M, unused)                                                                             \
  static void tile_##M(size_t n, size_t kc, const int16_t *restrict a, const int16_t *restrict b,          \
                       const ptrdiff_t *restrict boff, int32_t *restrict c, size_t ldc, int accumulate) {  \
    tile_body(M, n, kc, a, b, boff, c, ldc, accumulate, 0);                                                \
  }                                                                                                        \
  static void tile_ib_##M(size_t n, size_t kc, const int16_t *restrict a, const int16_t *restrict b,       \
                          const ptrdiff_t *restrict boff, int32_t *restrict c, size_t ldc, int accumulate) { \
    tile_body(M, n, kc, a, b, boff, c, ldc, accumulate, 1);                                                \
  }
DLC_REPEAT(MR, DEFINE_TILE, )
#define TILE_NAME(M, unused) tile_##M,
#define TILE_IB_NAME(M, unused) tile_ib_##M,
static const q8_tile_fn tiles[MR] = {DLC_REPEAT(MR, TILE_NAME, )};
static const q8_tile_fn tiles_ib[MR] = {DLC_REPEAT(MR, TILE_IB_NAME, )};

static void q8_gemm_ukernel(size_t m, size_t n, size_t kc, const int16_t *restrict a, const int16_t *restrict b,
                            int32_t *restrict c, size_t ldc, int accumulate) {
  tiles[m - 1](n, kc, a, b, NULL, c, ldc, accumulate);
}

static void q8_gemm_ukernel_ib(size_t m, size_t kc, const int16_t *restrict a, const int16_t *restrict b,
                               const ptrdiff_t *restrict boff, int32_t *restrict c, size_t ldc, int accumulate) {
  tiles_ib[m - 1](NR, kc, a, b, boff, c, ldc, accumulate);
}

/* 8 bytes of each row at a time: widened (u8 or s8), zero point off, interleaved with ZIP1/ZIP2 */
static void q8_pack_pairs(size_t n, const void *a, const void *b, int32_t zp, int is_signed, int16_t *dst) {
  const uint8_t *pa = a, *pb = b;
  const int16x8_t z = vdupq_n_s16((int16_t)zp);
  size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    int16x8_t va, vb;
    if (is_signed) {
      va = vmovl_s8(vld1_s8((const int8_t *)pa + j));
      vb = vmovl_s8(vld1_s8((const int8_t *)pb + j));
    } else {
      va = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(pa + j)));
      vb = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(pb + j)));
    }
    va = vsubq_s16(va, z);
    vb = vsubq_s16(vb, z);
    vst1q_s16(dst + 2 * j, vzip1q_s16(va, vb));
    vst1q_s16(dst + 2 * j + 8, vzip2q_s16(va, vb));
  }
  for (; j < n; j++) {
    const int32_t va = is_signed ? ((const int8_t *)a)[j] : pa[j];
    const int32_t vb = is_signed ? ((const int8_t *)b)[j] : pb[j];
    dst[2 * j] = (int16_t)(va - zp);
    dst[2 * j + 1] = (int16_t)(vb - zp);
  }
}

static void q8_widen_run(size_t n, const void *src, size_t step, int32_t zp, int is_signed, int16_t *dst) {
  size_t j = 0;
  if (step == 1) {
    const int16x8_t z = vdupq_n_s16((int16_t)zp);
    for (; j + 8 <= n; j += 8) {
      const int16x8_t v = is_signed ? vmovl_s8(vld1_s8((const int8_t *)src + j))
                                    : vreinterpretq_s16_u16(vmovl_u8(vld1_u8((const uint8_t *)src + j)));
      vst1q_s16(dst + j, vsubq_s16(v, z));
    }
  }
  for (; j < n; j++)
    dst[j] = (int16_t)((is_signed ? ((const int8_t *)src)[j * step] : ((const uint8_t *)src)[j * step]) - zp);
}

static void q8_pack_pairs_strided(size_t n, const void *src, int32_t zp, int is_signed, int16_t *dst, size_t stride) {
  for (size_t p = 0; p < n; p++)
    for (size_t t = 0; t < 2; t++) {
      const int32_t v = is_signed ? ((const int8_t *)src)[2 * p + t] : ((const uint8_t *)src)[2 * p + t];
      dst[p * stride + t] = (int16_t)(v - zp);
    }
}

const dlc_q8_gemm_family dlc_q8_gemm__neon = {
    .name = "q8_gemm_" DLC_STR(MR) "x" DLC_STR(NR) "c2__neon",
    .mr = MR,
    .nr = NR,
    .ukernel = q8_gemm_ukernel,
    .store = dlc_q8_store__neon, /* q8_store_neon.c, shared with the SDOT family */
    .pack_pairs = q8_pack_pairs,
    .pack_pairs_strided = q8_pack_pairs_strided,
    .ukernel_ib = q8_gemm_ukernel_ib,
    .widen_run = q8_widen_run,
};
