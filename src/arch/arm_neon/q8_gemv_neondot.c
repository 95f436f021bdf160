/* int8 gemv on SDOT, AArch64 with FEAT_DotProd: the q8_d4 family's gemv member (lowp_gemm_ukernel.h:
 * dense layers with nb <= 4 rows of x, the weights streamed once per call), "q8_gemv_16c4__neondot".
 *
 * A panel of 16 output channels is four vectors a group of four k (channel 4v + l's four weights
 * in lane l of vector v). Each row of x is loaded 16 bytes (four groups) at a time, flipped once to
 * s8 (b - 128 = b ^ 0x80, as in q8_gemm_neondot.c), and each group's four bytes are a 32-bit lane
 * of that register for SDOT by element: per group, 4 x nb SDOT into 4 x nb accumulators. What the
 * flip took away, 128 x the row sum of A, comes from one SDOT against ones per vector of A in the
 * same pass (the panel is read once: at batch 1 a dense layer is bound by that stream):
 *   sum_k A(i, k) b(k) = sum_k A(i, k) (b(k) - 128) + 128 sum_k A(i, k)
 * exact integers, wrapping as the contract's sums may. Registers: 16 accumulators, 4 row sums, 4
 * of A, 4 of x, the mask and the ones: 30 of 32. */
#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../template/inline.h"
#include "q8_neondot.h"

#define GMR DLC_Q8_NEONDOT_GEMV_MR

INLINE int8x16_t flipped16(const uint8_t *p, uint8x16_t flip) {
  return vreinterpretq_s8_u8(veorq_u8(vld1q_u8(p), flip));
}

/* one group of four k: A's four vectors against lane L of each row's x register */
#define GROUP(L)                                                                  \
  do {                                                                            \
    int8x16_t w[4];                                                               \
    UNROLL for (size_t v = 0; v < 4; v++) w[v] = vld1q_s8(a + 16 * v);            \
    UNROLL for (size_t v = 0; v < 4; v++) rs[v] = vdotq_s32(rs[v], w[v], ones);   \
    UNROLL for (size_t r = 0; r < NB; r++)                                        \
      UNROLL for (size_t v = 0; v < 4; v++) acc[r][v] = vdotq_laneq_s32(acc[r][v], w[v], x[r], L); \
    a += 4 * GMR;                                                                 \
  } while (0)

INLINE void gemv_body(const size_t NB, size_t m, size_t kc, const int8_t *restrict a, const uint8_t *restrict b,
                      size_t ldb, int32_t *restrict c, size_t ldc) {
  const uint8x16_t flip = vdupq_n_u8(0x80);
  const int8x16_t ones = vdupq_n_s8(1);
  int32x4_t acc[4][4], rs[4];
  UNROLL for (size_t v = 0; v < 4; v++) rs[v] = vdupq_n_s32(0);
  UNROLL for (size_t r = 0; r < NB; r++) UNROLL for (size_t v = 0; v < 4; v++) acc[r][v] = vdupq_n_s32(0);
  const size_t groups = kc / 4;
  size_t g = 0;
  for (; g + 4 <= groups; g += 4) {
    int8x16_t x[4];
    UNROLL for (size_t r = 0; r < NB; r++) x[r] = flipped16(b + r * ldb + 4 * g, flip);
    GROUP(0);
    GROUP(1);
    GROUP(2);
    GROUP(3);
  }
  for (; g < groups; g++) { /* the last 1-3 groups: each row's four bytes in lane 0 */
    int8x16_t x[4];
    UNROLL for (size_t r = 0; r < NB; r++) {
      uint32_t u;
      memcpy(&u, b + r * ldb + 4 * g, sizeof u);
      x[r] = vreinterpretq_s8_u8(veorq_u8(vreinterpretq_u8_u32(vdupq_n_u32(u)), flip));
    }
    GROUP(0);
  }
  UNROLL for (size_t v = 0; v < 4; v++) rs[v] = vshlq_n_s32(rs[v], 7);
  UNROLL for (size_t r = 0; r < NB; r++) {
    int32_t *cr = c + r * ldc;
    UNROLL for (size_t v = 0; v < 4; v++) {
      const int32x4_t s = vaddq_s32(acc[r][v], rs[v]);
      if (4 * v + 4 <= m) {
        vst1q_s32(cr + 4 * v, s);
      } else if (4 * v < m) {
        int32_t t[4];
        vst1q_s32(t, s);
        for (size_t l = 0; l < m - 4 * v; l++) cr[4 * v + l] = t[l];
      }
    }
  }
}

#define DEFINE_GEMV(NB)                                                                                          \
  static void gemv_##NB(size_t m, size_t kc, const int8_t *restrict a, const uint8_t *restrict b, size_t ldb,  \
                        int32_t *restrict c, size_t ldc) {                                                     \
    gemv_body(NB, m, kc, a, b, ldb, c, ldc);                                                                   \
  }
DEFINE_GEMV(1) DEFINE_GEMV(2) DEFINE_GEMV(3) DEFINE_GEMV(4)

void dlc_q8d4_gemv_16c4__neondot(size_t m, size_t nb, size_t kc, const int8_t *a, const uint8_t *b, size_t ldb,
                                 int32_t *c, size_t ldc) {
  static void (*const fns[4])(size_t, size_t, const int8_t *restrict, const uint8_t *restrict, size_t,
                              int32_t *restrict, size_t) = {gemv_1, gemv_2, gemv_3, gemv_4};
  fns[nb - 1](m, kc, a, b, ldb, c, ldc);
}
