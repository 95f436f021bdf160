/* vec.h (neon) - the vector layer the kernel templates (src/arch/template/) are written over;
 * the same names with the same meaning as every ISA's vec.h (see src/arch/template/README.md).
 *
 * AArch64 Advanced SIMD: 4 floats in a q register, 32 of them. Masks are vectors whose lanes are
 * all ones or all zeros (what the compares make). Neon has no masked load or store: a whole
 * vector goes plainly, a part lane by lane (a 2-float piece where it can), so that memory past
 * the lanes asked for is never touched (the kernel tests fence their buffers with guard pages).
 *
 * A broadcast is written as a scalar load duplicated (v_bcast): GCC folds the duplicate into the
 * FMA as FMLA by element, so a k step of a GEMM tile reads A with scalar loads (load pipes only)
 * and issues nothing but FMLA on the vector pipes.
 *
 * max / min: x86 semantics (the second operand when either is NaN or both are zeros), not FMAX's,
 * so a clamp keeps a NaN and rounds -0 as the generic kernels do. */
#ifndef DLC_VEC_NEON_H
#define DLC_VEC_NEON_H

#include <arm_neon.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define DLC_VL 4
#define DLC_VEC_ISA neon
#define DLC_NREGS 32 /* vector registers */

#include "../template/inline.h"

typedef float32x4_t vf;
typedef uint32x4_t vmask;

/* lanes [0, n), n clamped to [0, VL] */
INLINE vmask v_first(ptrdiff_t n) {
  const uint32_t k = n <= 0 ? 0u : n >= DLC_VL ? (uint32_t)DLC_VL : (uint32_t)n;
  const uint32x4_t iota = {0, 1, 2, 3};
  return vcgtq_u32(vdupq_n_u32(k), iota);
}
/* lanes [lo, hi) */
INLINE vmask v_range(ptrdiff_t lo, ptrdiff_t hi) { return vbicq_u32(v_first(hi), v_first(lo)); }

INLINE vf v_zero(void) { return vdupq_n_f32(0.0f); }
INLINE vf v_set1(float x) { return vdupq_n_f32(x); }
/* a scalar load duplicated: folded into FMLA (by element) where it feeds one */
INLINE vf v_bcast(const float *p) { return vdupq_n_f32(*p); }
INLINE vf v_load(const float *p) { return vld1q_f32(p); }
INLINE vf v_load_aligned(const float *p) { return vld1q_f32((const float *)__builtin_assume_aligned(p, 16)); }

/* the first n floats, zeros elsewhere; other lanes' memory is not read */
INLINE vf v_load_first(const float *p, ptrdiff_t n) {
  if (n >= DLC_VL) return vld1q_f32(p);
  if (n <= 0) return v_zero();
  if (n == 1) return vsetq_lane_f32(p[0], v_zero(), 0);
  const float32x2_t lo = vld1_f32(p);
  if (n == 2) return vcombine_f32(lo, vdup_n_f32(0.0f));
  return vcombine_f32(lo, vset_lane_f32(p[2], vdup_n_f32(0.0f), 0));
}
/* the lanes of m from p, zero elsewhere; the other lanes' memory is not read. All lanes: one
   load; else lane by lane (the edges of a row). */
INLINE vf v_load_mask(const float *p, vmask m) {
  if (vminvq_u32(m) != 0) return vld1q_f32(p);
  vf r = v_zero();
  UNROLL
  for (int l = 0; l < DLC_VL; l++)
    if (m[l]) r[l] = p[l];
  return r;
}
INLINE void v_store(float *p, vf v) { vst1q_f32(p, v); }
INLINE void v_store_aligned(float *p, vf v) { vst1q_f32((float *)__builtin_assume_aligned(p, 16), v); }
/* p[i] = v[i] for i < min(n, VL); nothing else is written: 2 + 1 pieces */
INLINE void v_store_first(float *p, ptrdiff_t n, vf v) {
  if (n >= DLC_VL) {
    vst1q_f32(p, v);
    return;
  }
  if (n <= 0) return;
  if (n == 1) {
    vst1q_lane_f32(p, v, 0);
    return;
  }
  vst1_f32(p, vget_low_f32(v));
  if (n == 3) vst1q_lane_f32(p + 2, v, 2);
}
INLINE vf v_fma(vf a, vf b, vf c) { return vfmaq_f32(c, a, b); }
INLINE vf v_add(vf a, vf b) { return vaddq_f32(a, b); }
INLINE vf v_mul(vf a, vf b) { return vmulq_f32(a, b); }
/* the larger, the smaller; b when either is NaN (x86's maxps / minps: a compare and a select) */
INLINE vf v_max(vf a, vf b) { return vbslq_f32(vcgtq_f32(a, b), a, b); }
INLINE vf v_min(vf a, vf b) { return vbslq_f32(vcltq_f32(a, b), a, b); }
/* min(hi, max(lo, v)) with the bound first, so a NaN v stays NaN */
INLINE vf v_clamp(vf v, vf lo, vf hi) { return v_min(hi, v_max(lo, v)); }
/* r[i][j] <-> r[j][i] over 4 x 4: TRN1/TRN2 of pairs, then of 64-bit halves */
INLINE void v_transpose(vf r[DLC_VL]) {
  const float32x4_t t0 = vtrn1q_f32(r[0], r[1]), t1 = vtrn2q_f32(r[0], r[1]);
  const float32x4_t t2 = vtrn1q_f32(r[2], r[3]), t3 = vtrn2q_f32(r[2], r[3]);
  r[0] = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2)));
  r[1] = vreinterpretq_f32_f64(vtrn1q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3)));
  r[2] = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t0), vreinterpretq_f64_f32(t2)));
  r[3] = vreinterpretq_f32_f64(vtrn2q_f64(vreinterpretq_f64_f32(t1), vreinterpretq_f64_f32(t3)));
}
INLINE void v_prefetch(const void *p) { __builtin_prefetch(p, 0, 3); }

/* binary16: FCVTL widens exactly; FCVTN rounds by FPCR.RMode, round to nearest even unless a
   caller changed it (the library never does), overflow to inf, NaN stays NaN. Both are in the
   base ISA (no FEAT_FP16 needed). */
INLINE vf v_load_f16(const uint16_t *p) { return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(p))); }
INLINE void v_store_f16_first(uint16_t *p, ptrdiff_t n, vf v) {
  const uint16x4_t h = vreinterpret_u16_f16(vcvt_f16_f32(v));
  if (n >= DLC_VL) {
    vst1_u16(p, h);
    return;
  }
  if (n <= 0) return;
  if (n >= 2) vst1_lane_u32((uint32_t *)(void *)p, vreinterpret_u32_u16(h), 0);
  if (n == 1) vst1_lane_u16(p, h, 0);
  if (n == 3) vst1_lane_u16(p + 2, h, 2);
}
/* the first n binary16 widened, zeros elsewhere; other lanes' memory is not read */
INLINE vf v_load_f16_first(const uint16_t *p, ptrdiff_t n) {
  if (n >= DLC_VL) return v_load_f16(p);
  uint16x4_t h = vdup_n_u16(0);
  if (n >= 2) h = vreinterpret_u16_u32(vld1_lane_u32((const uint32_t *)(const void *)p, vreinterpret_u32_u16(h), 0));
  if (n == 1) h = vld1_lane_u16(p, h, 0);
  if (n == 3) h = vld1_lane_u16(p + 2, h, 2);
  return vcvt_f32_f16(vreinterpret_f16_u16(h));
}
/* the even floats of a then b (2 * VL consecutive floats), in order (UZP1) */
INLINE vf v_evens(vf a, vf b) { return vuzp1q_f32(a, b); }
INLINE vf v_evens_in_order(vf v) { return v; }
/* the odd floats of a then b, in order (UZP2) */
INLINE vf v_odds(vf a, vf b) { return vuzp2q_f32(a, b); }
/* a's and b's first halves interleaved, a0 b0 a1 b1; their second halves, a2 b2 a3 b3 */
INLINE vf v_zip_lo(vf a, vf b) { return vzip1q_f32(a, b); }
INLINE vf v_zip_hi(vf a, vf b) { return vzip2q_f32(a, b); }
/* lanes n .. VL-1 of a, then lanes 0 .. n-1 of b: VL consecutive floats n past a's first when b
   follows a in memory (EXT); n a constant in [0, VL) */
#define v_shift_in(a, b, n) vextq_f32(a, b, (n))
/* lane l of m: p[l * stride], zero elsewhere; other lanes' memory is not read */
INLINE vf v_gather(const float *p, ptrdiff_t stride, vmask m) {
  vf r = v_zero();
  UNROLL
  for (int l = 0; l < DLC_VL; l++)
    if (m[l]) r[l] = p[l * stride];
  return r;
}

/* ---- names the gspc, spack and csr templates added ------------------------------------------ */

/* the first n lanes (n clamped to [0, VL]) as v_store_tail stores them: v_store_first's pieces */
typedef ptrdiff_t vtail;
INLINE vtail v_tail(ptrdiff_t n) { return n; }
INLINE void v_store_tail(float *p, vtail t, vf v) { v_store_first(p, t, v); }

/* DLC_VL int32 lane indices (a permutation, gather offsets) */
typedef int32x4_t vidx;
INLINE vidx v_load_idx(const int32_t *p) { return vld1q_s32(p); }
/* r[k] = v[i[k]]: TBL on the bytes 4 i[k] .. 4 i[k] + 3 */
INLINE vf v_permute(vf v, vidx i) {
  const uint32x4_t bytes = vmlaq_n_u32(vdupq_n_u32(0x03020100u), vreinterpretq_u32_s32(i), 0x04040404u);
  return vreinterpretq_f32_u8(vqtbl1q_u8(vreinterpretq_u8_f32(v), vreinterpretq_u8_u32(bytes)));
}
/* the lanes of m p[i[k]], zero elsewhere; the other lanes' memory is not read */
INLINE vf v_gather_mask(const float *p, vidx i, vmask m) {
  vf r = v_zero();
  UNROLL
  for (int l = 0; l < DLC_VL; l++)
    if (m[l]) r[l] = p[i[l]];
  return r;
}
INLINE vmask v_mask_and(vmask a, vmask b) { return vandq_u32(a, b); }
INLINE vmask v_mask_or(vmask a, vmask b) { return vorrq_u32(a, b); }
/* p[i] = v[i] for the lanes of m; nothing else is written */
INLINE void v_store_mask(float *p, vmask m, vf v) {
  if (vminvq_u32(m) != 0) {
    vst1q_f32(p, v);
    return;
  }
  UNROLL
  for (int l = 0; l < DLC_VL; l++)
    if (m[l]) p[l] = v[l];
}
/* the g floats at p (g = 1, 2 or 4) repeated across the vector: LD1R of a float or of a pair
   (as one 64-bit element), or a load */
INLINE vf v_bcast_groups(const float *p, const size_t g) {
  if (g == 1) return vld1q_dup_f32(p);
  if (g == 2) return vreinterpretq_f32_u64(vld1q_dup_u64((const uint64_t *)(const void *)p));
  return vld1q_f32(p);
}

/* ---- int32 lanes (the int8 templates) ---------------------------------------------------------- */

/* DLC_VL int32 lanes; the bit casts to and from vf are free (a template may keep s32 sums in vf) */
typedef int32x4_t vi;
INLINE vi v_as_vi(vf v) { return vreinterpretq_s32_f32(v); }
INLINE vf vi_as_vf(vi v) { return vreinterpretq_f32_s32(v); }
INLINE vi vi_zero(void) { return vdupq_n_s32(0); }
INLINE vi vi_set1(int32_t x) { return vdupq_n_s32(x); }
INLINE vi vi_load(const int32_t *p) { return vld1q_s32(p); }
INLINE void vi_store(int32_t *p, vi v) { vst1q_s32(p, v); }
INLINE vi vi_add(vi a, vi b) { return vaddq_s32(a, b); }
INLINE vi vi_sub(vi a, vi b) { return vsubq_s32(a, b); }
INLINE vi vi_mullo(vi a, vi b) { return vmulq_s32(a, b); }
INLINE vf vi_to_vf(vi v) { return vcvtq_f32_s32(v); }
/* DLC_VL bytes (u8, s8) widened to int32 (one 32-bit lane load, two lengthening moves); reads those
   bytes only */
INLINE vi vi_load_u8(const uint8_t *p) {
  const uint8x8_t b = vreinterpret_u8_u32(vld1_lane_u32((const uint32_t *)(const void *)p, vdup_n_u32(0), 0));
  return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(vmovl_u8(b))));
}
INLINE vi vi_load_s8(const int8_t *p) {
  const int8x8_t b = vreinterpret_s8_u32(vld1_lane_u32((const uint32_t *)(const void *)p, vdup_n_u32(0), 0));
  return vmovl_s16(vget_low_s16(vmovl_s8(b)));
}
/* acc + a.lo16 * b.lo16 + a.hi16 * b.hi16 per lane (s16 halves, products exact, sums mod 2^32, as
   x86's vpmaddwd): SMULL / SMULL2 of the halves, ADDP of neighbouring products */
INLINE vi vi_dot2_s16(vi acc, vi a, vi b) {
  const int16x8_t a16 = vreinterpretq_s16_s32(a), b16 = vreinterpretq_s16_s32(b);
  const int32x4_t lo = vmull_s16(vget_low_s16(a16), vget_low_s16(b16));
  const int32x4_t hi = vmull_high_s16(a16, b16);
  return vaddq_s32(acc, vpaddq_s32(lo, hi));
}

/* ---- the lowp_dw template (depthwise F16 / int8 rows, src/arch/template/lowp_dw.h) ----------- */

/* one binary16 widened to a float, as v_load_f16 widens a lane (FCVT, base ISA) */
INLINE float v_f16_to_f32(uint16_t h) {
  __fp16 f;
  memcpy(&f, &h, sizeof f);
  return (float)f;
}
/* the DLC_VL binary16 p[0], p[2], p[4], p[6] widened; reads p[0 .. 7) only: halves 0..3 and
   3..6, the second rotated by one (4 5 6 3) so that UZP1 takes 0 2 and 4 6 */
INLINE vf v_load_f16_evens(const uint16_t *p) {
  const uint16x4_t a = vld1_u16(p), b = vld1_u16(p + 3);
  return vcvt_f32_f16(vreinterpret_f16_u16(vuzp1_u16(a, vext_u16(b, b, 1))));
}
/* the DLC_VL binary16 p[0], p[s], p[2 s], p[3 s] widened; reads those only (LD1 to lanes) */
INLINE vf v_load_f16_strided(const uint16_t *p, size_t s) {
  uint16x4_t h = vld1_dup_u16(p);
  h = vld1_lane_u16(p + s, h, 1);
  h = vld1_lane_u16(p + 2 * s, h, 2);
  h = vld1_lane_u16(p + 3 * s, h, 3);
  return vcvt_f32_f16(vreinterpret_f16_u16(h));
}
/* the DLC_VL bytes p[0], p[2], p[4], p[6] widened to int32 (u8, s8); reads the 2 VL bytes
   p[0 .. 8), the one after the last even included: one 8-byte load read as halfwords, the low
   (even) byte of each kept (u8: AND; s8: SHL and SSHR by 8) */
INLINE vi vi_load_u8_evens(const uint8_t *p) {
  const uint16x4_t h = vand_u16(vreinterpret_u16_u8(vld1_u8(p)), vdup_n_u16(0xff));
  return vreinterpretq_s32_u32(vmovl_u16(h));
}
INLINE vi vi_load_s8_evens(const int8_t *p) {
  const int16x4_t h = vshr_n_s16(vshl_n_s16(vreinterpret_s16_s8(vld1_s8(p)), 8), 8);
  return vmovl_s16(h);
}
/* the same reading p[0 .. 7) only (the last even is the last byte read): bytes 0..3 and 3..6 in
   one d register, TBL picks 0, 2, 5, 7 */
INLINE uint8x8_t dlc_neon_bytes_evens_end(const void *p) {
  uint32x2_t d = vld1_dup_u32((const uint32_t *)p);
  d = vld1_lane_u32((const uint32_t *)(const void *)((const uint8_t *)p + 3), d, 1);
  const uint8x8_t pick = {0, 2, 5, 7, 0, 2, 5, 7};
  return vtbl1_u8(vreinterpret_u8_u32(d), pick);
}
INLINE vi vi_load_u8_evens_end(const uint8_t *p) {
  return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(vmovl_u8(dlc_neon_bytes_evens_end(p)))));
}
INLINE vi vi_load_s8_evens_end(const int8_t *p) {
  return vmovl_s16(vget_low_s16(vmovl_s8(vreinterpret_s8_u8(dlc_neon_bytes_evens_end(p)))));
}
/* the DLC_VL bytes p[0], p[s], p[2 s], p[3 s] widened to int32; reads those only (one word
   assembled in a general register) */
INLINE uint8x8_t dlc_neon_bytes_strided(const uint8_t *x, size_t s) {
  const uint32_t b = (uint32_t)x[0] | (uint32_t)x[s] << 8 | (uint32_t)x[2 * s] << 16 | (uint32_t)x[3 * s] << 24;
  return vreinterpret_u8_u32(vdup_n_u32(b));
}
INLINE vi vi_load_u8_strided(const uint8_t *p, size_t s) {
  return vreinterpretq_s32_u32(vmovl_u16(vget_low_u16(vmovl_u8(dlc_neon_bytes_strided(p, s)))));
}
INLINE vi vi_load_s8_strided(const int8_t *p, size_t s) {
  return vmovl_s16(vget_low_s16(vmovl_s8(vreinterpret_s8_u8(dlc_neon_bytes_strided((const uint8_t *)p, s)))));
}
/* bitwise and */
INLINE vi vi_and(vi a, vi b) { return vandq_s32(a, b); }

/* ---- names the lowp_gspc and q8_csr templates added -------------------------------------------- */

/* An accumulator of vi_dot2_s16 steps that an ISA may keep split, so that a step is one or two
   widening multiply-accumulates instead of a multiply, a pairwise add and an add: vi2_sum of the
   chain is the lanes the same vi_dot2_s16 chain gives (sums mod 2^32). DLC_VI2_REGS: the
   registers one takes (a template's accumulator budget). Here two vectors: the products of each
   pair's low and high s16 (SMLAL of the low halves, SMLAL2 of the high ones), added pairwise once
   (ADDP) by vi2_sum. */
typedef int32x4x2_t vi2;
#define DLC_VI2_REGS 2
/* DLC_VL int32 from a vector-aligned p (as v_load_aligned) */
INLINE vi vi_load_aligned(const int32_t *p) { return vld1q_s32((const int32_t *)__builtin_assume_aligned(p, 16)); }
INLINE vi2 vi2_zero(void) {
  const vi2 z = {{vdupq_n_s32(0), vdupq_n_s32(0)}};
  return z;
}
INLINE vi2 vi2_dot2_s16(vi2 acc, vi a, vi b) {
  const int16x8_t a16 = vreinterpretq_s16_s32(a), b16 = vreinterpretq_s16_s32(b);
  acc.val[0] = vmlal_s16(acc.val[0], vget_low_s16(a16), vget_low_s16(b16));
  acc.val[1] = vmlal_high_s16(acc.val[1], a16, b16);
  return acc;
}
INLINE vi vi2_sum(vi2 acc) { return vpaddq_s32(acc.val[0], acc.val[1]); }
/* The s16 of a and b (2 * VL each, two rows of pixels) interleaved into VL pairs (a_k, b_k), in
   the ISA's zip order, here in order (ZIP1: pairs 0-3, ZIP2: 4-7); vi_zip16_in_order(lo, hi, k)
   puts the lanes of results taken from zip_lo and zip_hi back in order: k = 0 pairs 0 .. VL-1,
   k = 1 pairs VL .. 2 VL-1 (here lo, hi as they are). */
INLINE vi vi_zip16_lo(vi a, vi b) {
  return vreinterpretq_s32_s16(vzip1q_s16(vreinterpretq_s16_s32(a), vreinterpretq_s16_s32(b)));
}
INLINE vi vi_zip16_hi(vi a, vi b) {
  return vreinterpretq_s32_s16(vzip2q_s16(vreinterpretq_s16_s32(a), vreinterpretq_s16_s32(b)));
}
INLINE vi vi_zip16_in_order(vi lo, vi hi, const int k) { return k ? hi : lo; }

/* lane k: the low 16 bits of lo_k, those of hi_k above them (two rows of s16 into pairs): TRN1 */
INLINE vi vi_pair16(vi lo, vi hi) {
  return vreinterpretq_s32_s16(vtrn1q_s16(vreinterpretq_s16_s32(lo), vreinterpretq_s16_s32(hi)));
}
/* 2 DLC_VL bytes (u8, s8) widened to s16 less zp, as DLC_VL pairs (byte 2k low, 2k + 1 high);
   reads those bytes only */
INLINE vi vi_load_pairs_u8(const uint8_t *p, int32_t zp) {
  return vreinterpretq_s32_s16(vsubq_s16(vreinterpretq_s16_u16(vmovl_u8(vld1_u8(p))), vdupq_n_s16((int16_t)zp)));
}
INLINE vi vi_load_pairs_s8(const int8_t *p, int32_t zp) {
  return vreinterpretq_s32_s16(vsubq_s16(vmovl_s8(vld1_s8(p)), vdupq_n_s16((int16_t)zp)));
}

#endif
