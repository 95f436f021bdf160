/* f16_gemm_neon.h - the F16 gemm family on AArch64 Neon (contract:
 * src/ukernel/lowp_gemm_ukernel.h; src/arch/generic/f16_gemm_generic.c is the readable
 * specification), included by f16_gemm_neon.c (base armv8-a) and f16_gemm_neonfhm.c (FEAT_FHM).
 *
 * Tile 12 x 8, the register layout of the f32 Neon kernel (f32_gemm_neon.c: 24 accumulators), so
 * that the im2col driver may run NCHW 1 x 1 layers on the f32 kernel with B widened while packed
 * (pack_cols_f32 needs equal tiles). Products are exact in fp32 (11-bit significands) and each
 * is added with one rounding, by FMLA on widened operands or by FMLAL on halves: the two paths
 * give the same sums bit for bit.
 *   base (DLC_F16_FHM 0): per k step one 16-byte load of B's 8 halves, FCVTL + FCVTL2, 24 FMLA
 *     by element from A widened once per call into a stack buffer (KC_CHUNK steps at a time) or
 *     by the driver (ukernel_a32, ukernel_ib);
 *   FHM (DLC_F16_FHM 1, asimdfhm): ukernel reads A's 12 halves of a k step into two registers and
 *     issues 12 FMLAL + 12 FMLAL2 by element on B's halves: no conversion at all. The fp32-A
 *     entry points (ukernel_a32, ukernel_ib) keep the base loop.
 * One function per row count, so an edge tile of m rows computes m rows; C is read and written
 * only in its m x n corner. */
#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../ukernel/config.h"
#include "../template/family.h"
#include "../template/inline.h"

#define MR 12
#define NR 8
#define KC_CHUNK 256

typedef void (*f16_tile_fn)(size_t n, size_t kc, const uint16_t *restrict a, const float *restrict a32,
                            const uint16_t *restrict b, const ptrdiff_t *restrict boff, float *restrict c, size_t ldc,
                            int accumulate);

INLINE float32x4_t widen_lo(uint16x8_t h) { return vcvt_f32_f16(vreinterpret_f16_u16(vget_low_u16(h))); }
INLINE float32x4_t widen_hi(uint16x8_t h) { return vcvt_high_f32_f16(vreinterpretq_f16_u16(h)); }
INLINE float f16_scalar(uint16_t h) { return vgetq_lane_f32(vcvt_f32_f16(vreinterpret_f16_u16(vdup_n_u16(h))), 0); }

/* af[0 .. len) = a[0 .. len) widened, len a multiple of 4 (MR is) */
INLINE void widen_a_run(size_t len, const uint16_t *restrict a, float *restrict af) {
  size_t t = 0;
  for (; t + 8 <= len; t += 8) {
    const uint16x8_t h = vld1q_u16(a + t);
    vst1q_f32(af + t, widen_lo(h));
    vst1q_f32(af + t + 4, widen_hi(h));
  }
  if (t < len) vst1q_f32(af + t, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(a + t))));
}

/* kc steps of the M x 8 tile into acc0 (columns 0-3) and acc1 (4-7) from fp32 A (k-major, MR a
   step; its 12 floats of a step in 3 registers, FMLA by lane, so that 24 accumulators, B and A fit
   the 32 registers without a spill) and B halves at b + k * NR, or (IB) at b + boff[k] */
#define F32A_ROW(I, unused)                                                                   \
  if (I - 1 < M) {                                                                            \
    acc0[I - 1] = vfmaq_laneq_f32(acc0[I - 1], b0, a4[(I - 1) / 4], (I - 1) % 4);             \
    acc1[I - 1] = vfmaq_laneq_f32(acc1[I - 1], b1, a4[(I - 1) / 4], (I - 1) % 4);             \
  }
INLINE void k_loop_f32a(const size_t M, size_t kc, const float *restrict a, const uint16_t *restrict b,
                        const ptrdiff_t *restrict boff, float32x4_t *acc0, float32x4_t *acc1, const int IB) {
  _Pragma("GCC unroll 2") for (size_t k = 0; k < kc; k++) {
    const uint16x8_t h = vld1q_u16(IB ? b + boff[k] : b + k * NR);
    const float32x4_t b0 = widen_lo(h), b1 = widen_hi(h);
    float32x4_t a4[MR / 4];
    UNROLL for (size_t q = 0; q < MR / 4; q++) a4[q] = q * 4 < M ? vld1q_f32(a + k * MR + 4 * q) : vdupq_n_f32(0.0f);
    DLC_REPEAT(12, F32A_ROW, )
  }
}

#if DLC_F16_FHM
/* the same from A in halves, by FMLAL / FMLAL2 (A's 12 halves of a step: 8 in one register, 4 in
   another's low half) */
INLINE void k_loop_f16a(const size_t M, size_t kc, const uint16_t *restrict a, const uint16_t *restrict b,
                        float32x4_t *acc0, float32x4_t *acc1) {
  _Pragma("GCC unroll 2") for (size_t k = 0; k < kc; k++) {
    const float16x8_t bh = vreinterpretq_f16_u16(vld1q_u16(b + k * NR));
    const float16x8_t a0 = vreinterpretq_f16_u16(vld1q_u16(a + k * MR));
    const float16x8_t a1 = vreinterpretq_f16_u16(vcombine_u16(vld1_u16(a + k * MR + 8), vdup_n_u16(0)));
#define FHM_ROW(I, unused)                                                                              \
  if (I - 1 < M) {                                                                                      \
    acc0[I - 1] = vfmlalq_laneq_low_f16(acc0[I - 1], bh, (I - 1) < 8 ? a0 : a1, (I - 1) % 8);             \
    acc1[I - 1] = vfmlalq_laneq_high_f16(acc1[I - 1], bh, (I - 1) < 8 ? a0 : a1, (I - 1) % 8);            \
  }
    DLC_REPEAT(12, FHM_ROW, )
#undef FHM_ROW
  }
}
#endif

INLINE void put_tile(const size_t M, size_t n, const float32x4_t *acc0, const float32x4_t *acc1, float *restrict c,
                     size_t ldc, int accumulate) {
  UNROLL for (size_t i = 0; i < M; i++) {
    float *ci = c + i * ldc;
    float32x4_t x0 = acc0[i], x1 = acc1[i];
    if (n == NR) {
      if (accumulate) {
        x0 = vaddq_f32(x0, vld1q_f32(ci));
        x1 = vaddq_f32(x1, vld1q_f32(ci + 4));
      }
      vst1q_f32(ci, x0);
      vst1q_f32(ci + 4, x1);
    } else {
      float t[NR];
      vst1q_f32(t, x0);
      vst1q_f32(t + 4, x1);
      for (size_t j = 0; j < n; j++) ci[j] = accumulate ? ci[j] + t[j] : t[j];
    }
  }
}

/* a32 NULL: A in halves (ukernel); else A widened (ukernel_a32, ukernel_ib with boff) */
INLINE void tile_body(const size_t M, size_t n, size_t kc, const uint16_t *restrict a, const float *restrict a32,
                      const uint16_t *restrict b, const ptrdiff_t *restrict boff, float *restrict c, size_t ldc,
                      int accumulate) {
  float32x4_t acc0[MR], acc1[MR];
  UNROLL for (size_t i = 0; i < M; i++) acc0[i] = acc1[i] = vdupq_n_f32(0.0f);
  if (a32 && boff) {
    k_loop_f32a(M, kc, a32, b, boff, acc0, acc1, 1);
  } else if (a32) {
    k_loop_f32a(M, kc, a32, b, NULL, acc0, acc1, 0);
  } else {
#if DLC_F16_FHM
    k_loop_f16a(M, kc, a, b, acc0, acc1);
#else
    float af[KC_CHUNK * MR] __attribute__((aligned(16)));
    for (size_t k0 = 0; k0 < kc; k0 += KC_CHUNK) {
      const size_t kn = kc - k0 < KC_CHUNK ? kc - k0 : KC_CHUNK;
      widen_a_run(kn * MR, a + k0 * MR, af);
      k_loop_f32a(M, kn, af, b + k0 * NR, NULL, acc0, acc1, 0);
    }
#endif
  }
  put_tile(M, n, acc0, acc1, c, ldc, accumulate);
}

#define DEFINE_TILE(M, unused)                                                                                   \
  static void tile_##M(size_t n, size_t kc, const uint16_t *restrict a, const float *restrict a32,               \
                       const uint16_t *restrict b, const ptrdiff_t *restrict boff, float *restrict c, size_t ldc, \
                       int accumulate) {                                                                         \
    tile_body(M, n, kc, a, a32, b, boff, c, ldc, accumulate);                                                    \
  }
DLC_REPEAT(12, DEFINE_TILE, )
#define TILE_NAME(M, unused) tile_##M,
static const f16_tile_fn tiles[MR] = {DLC_REPEAT(12, TILE_NAME, )};

static void f16_ukernel(size_t m, size_t n, size_t kc, const uint16_t *a, const uint16_t *b, float *c, size_t ldc,
                        int accumulate) {
  tiles[m - 1](n, kc, a, NULL, b, NULL, c, ldc, accumulate);
}

static void f16_ukernel_a32(size_t m, size_t n, size_t kc, const float *a, const uint16_t *b, float *c, size_t ldc,
                            int accumulate) {
  tiles[m - 1](n, kc, NULL, a, b, NULL, c, ldc, accumulate);
}

static void f16_ukernel_ib(size_t m, size_t kc, const float *a, const uint16_t *b, const ptrdiff_t *boff, float *c,
                           size_t ldc, int accumulate) {
  tiles[m - 1](NR, kc, NULL, a, b, boff, c, ldc, accumulate);
}

static void f16_widen_a(size_t kc, const uint16_t *a, float *af) { widen_a_run(kc * MR, a, af); }

/* y[j] = f16(clamp(acc[j] + bias, lo, hi)): compares and selects (NaN passes both), FCVTN rounds
   to nearest even */
INLINE float32x4_t clamp4(float32x4_t x, float32x4_t lo, float32x4_t hi) {
  x = vbslq_f32(vcltq_f32(x, lo), lo, x);
  return vbslq_f32(vcgtq_f32(x, hi), hi, x);
}

static void f16_store(size_t n, const float *acc, const float *bias, size_t c0, int per_column, float out_min,
                      float out_max, uint16_t *y) {
  const float32x4_t lo = vdupq_n_f32(out_min), hi = vdupq_n_f32(out_max);
  const float32x4_t bc = vdupq_n_f32(bias[c0]);
  size_t j = 0;
  for (; j + 4 <= n; j += 4) {
    const float32x4_t b4 = per_column ? vld1q_f32(bias + c0 + j) : bc;
    const float32x4_t x = clamp4(vaddq_f32(vld1q_f32(acc + j), b4), lo, hi);
    vst1_u16(y + j, vreinterpret_u16_f16(vcvt_f16_f32(x)));
  }
  for (; j < n; j++) {
    const float32x4_t x = clamp4(vdupq_n_f32(acc[j] + bias[per_column ? c0 + j : c0]), lo, hi);
    y[j] = vget_lane_u16(vreinterpret_u16_f16(vcvt_f16_f32(x)), 0);
  }
}

static void f16_widen_run(size_t n, const uint16_t *src, size_t step, float *dst) {
  size_t j = 0;
  if (step == 1)
    for (; j + 8 <= n; j += 8) {
      const uint16x8_t h = vld1q_u16(src + j);
      vst1q_f32(dst + j, widen_lo(h));
      vst1q_f32(dst + j + 4, widen_hi(h));
    }
  for (; j < n; j++) dst[j] = f16_scalar(src[j * step]);
}

/* dst[k * NR + j] = j < n ? f32(src[k * ld + j]) : 0; no half of a row past its n-th is read */
static void f16_pack_cols_f32(size_t kc, size_t n, const uint16_t *src, size_t ld, float *dst) {
  if (n >= NR) {
    for (size_t k = 0; k < kc; k++) {
      const uint16x8_t h = vld1q_u16(src + k * ld);
      vst1q_f32(dst + k * NR, widen_lo(h));
      vst1q_f32(dst + k * NR + 4, widen_hi(h));
    }
    return;
  }
  for (size_t k = 0; k < kc; k++) {
    uint16_t t[NR] = {0};
    memcpy(t, src + k * ld, n * sizeof *t);
    const uint16x8_t h = vld1q_u16(t);
    vst1q_f32(dst + k * NR, widen_lo(h));
    vst1q_f32(dst + k * NR + 4, widen_hi(h));
  }
}

const dlc_f16_gemm_family DLC_CAT(dlc_f16_gemm__, DLC_F16_ISA) = {
    .name = "f16_gemm_12x8__" DLC_STR(DLC_F16_ISA),
    .mr = MR,
    .nr = NR,
    .ukernel = f16_ukernel,
    .store = f16_store,
    .widen_a = f16_widen_a,
    .ukernel_a32 = f16_ukernel_a32,
    .ukernel_ib = f16_ukernel_ib,
    .widen_run = f16_widen_run,
    .pack_cols_f32 = f16_pack_cols_f32,
};
