/* lowp_dw.h - the depthwise F16 / int8 row family (contract: src/ukernel/lowp_dw_ukernel.h; the
 * generic file, src/arch/generic/lowp_dw_generic.c, is the readable specification) over the
 * vector layer: rows of one tap (f16_row, q8_row), NHWC channel runs (f16_ch, q8_ch) and NCHW
 * planes widened to fp32 (f16_widen, q8_widen). Instantiated per ISA by a two-line file
 * (src/arch/x86_avx2/lowp_dw_avx2.c): the family is dlc_lowp_dw__<isa>, its kernels
 * "f16_dwconv_row__<isa>" and "q8_dwconv_row__<isa>".
 *
 * DLC_VL output lanes per block. Stride 1 and 2 load their inputs as vectors, other strides
 * gather the lanes element by element into one vector; either way only x[0], ..., x[(n-1)*stride]
 * and the bytes between them are touched, never anything past the last element (the row may end
 * at the end of the caller's buffer):
 *  - stride 2, F16: v_load_f16_evens, which reads up to the last even half only;
 *  - stride 2, int8: vi_load_*8_evens (2 VL bytes, one past the last even) while x[2j + 2 VL - 1]
 *    still belongs to the row, vi_load_*8_evens_end (up to the last even only) for the last block.
 * n >= VL: the last VL lanes [n-VL, n) are computed first from the untouched acc and stored after
 * the main loop, so a tail of 1..VL-1 lanes is one overlapping vector; lanes both cover get the
 * same value twice (F16 skips it when n % VL == 0; int8 always ends with it, as the block whose
 * stride-2 load must stop at the last element). n < VL: scalar.
 *
 * F16 accumulates with one FMA per element, rounded once (the generic rounds x*w and then the
 * sum); both are within the library's F16 tolerance. Scalar lanes use the same FMA (fmaf, one
 * instruction on every ISA here), so a result does not depend on whether its lane took the
 * vector or the scalar path.
 *
 * int8 products, exact in s32, two ways (knob DLC_LOWP_DW_DOT2):
 *  - 1: vi_dot2_s16 on s16 pairs: x widened to s32 minus zp is, read as s16 pairs, (x - zp, sign),
 *    and the weight pair (w, 0) makes the pair sum (x - zp) * w exactly. It needs x - zp and w in
 *    s16, always true for validated zero points (type range) and s8 weights; anything else takes
 *    the scalar loop. For x86, where vpmulld is slow (avx2's file says why);
 *  - 0 (default): vi_mullo, exact modulo 2^32 for any zp and w (the contract's result fits s32),
 *    so no range check. For ISAs whose 32-bit lane multiply is as fast as any (Neon MUL / MLA:
 *    one instruction, where vi_dot2_s16 is SMULL + SMULL2 + ADDP + ADD). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "../../ukernel/config.h"
#include "family.h"

#ifndef DLC_LOWP_DW_DOT2
#define DLC_LOWP_DW_DOT2 0
#endif

/* 1: the int8 NHWC channel runs take two blocks a loop iteration, as the rows do (one loop
   branch, counter update and compare per two blocks); 0: one */
#ifndef DLC_LOWP_DW_Q8_CH_PAIRS
#define DLC_LOWP_DW_Q8_CH_PAIRS 0
#endif

/* 1: int8 rows of stride S = 1 or 2 first take the instantiating file's
     size_t ldw_q8_s16_row(size_t n, const uint8_t *x, const size_t S, int32_t w, int32_t zp, const int sgn,
                           int32_t *acc)
   on a prefix of the row (reading x[0 .. (n-1) S] only) (the lanes it did, a multiple of its step; the template does the rest),
   called only where x - zp and w fit s16 (ldw_q8_s16_ok): 16-bit lanes multiplied into s32 with
   widening multiply-accumulates, where a 32-bit lane multiply is slow (Neon: MLA .4s issues at
   half of SMLAL's rate). 0 (default): none. */
#ifndef DLC_LOWP_DW_Q8_S16
#define DLC_LOWP_DW_Q8_S16 0
#endif

#define LDW_VL DLC_VL

/* ================================================================ F16 */

INLINE float ldw_f16_fma1(uint16_t h, float w, float a) { return fmaf(v_f16_to_f32(h), w, a); }

/* Halves x[0], x[s], ..., x[(VL-1) s] widened. S is 1, 2 or 0 (run-time stride). */
INLINE vf ldw_f16_load(const uint16_t *x, const size_t S, size_t stride) {
  if (S == 1) return v_load_f16(x);
  if (S == 2) return v_load_f16_evens(x);
  return v_load_f16_strided(x, stride);
}

INLINE vf ldw_f16_block(const uint16_t *x, const size_t S, size_t stride, vf w, const float *acc) {
  return v_fma(ldw_f16_load(x, S, stride), w, v_load(acc));
}

INLINE void ldw_f16_run(size_t n, const uint16_t *x, const size_t S, size_t stride, float w, float *acc) {
  if (S) stride = S;
  if (n < LDW_VL) {
    for (size_t j = 0; j < n; j++) acc[j] = ldw_f16_fma1(x[j * stride], w, acc[j]);
    return;
  }
  const vf wv = v_set1(w);
  const size_t t = n - LDW_VL;
  const vf tail = n % LDW_VL ? ldw_f16_block(x + t * stride, S, stride, wv, acc + t) : v_zero();
  size_t j = 0;
  for (; j + 2 * LDW_VL <= n; j += 2 * LDW_VL) {
    const vf a0 = ldw_f16_block(x + j * stride, S, stride, wv, acc + j);
    const vf a1 = ldw_f16_block(x + (j + LDW_VL) * stride, S, stride, wv, acc + j + LDW_VL);
    v_store(acc + j, a0);
    v_store(acc + j + LDW_VL, a1);
  }
  if (j + LDW_VL <= n) {
    v_store(acc + j, ldw_f16_block(x + j * stride, S, stride, wv, acc + j));
    j += LDW_VL;
  }
  if (j < n) v_store(acc + t, tail);
}

static void f16_row(size_t n, const uint16_t *x, size_t stride, float w, float *acc) {
  if (stride == 1)
    ldw_f16_run(n, x, 1, 1, w, acc);
  else if (stride == 2)
    ldw_f16_run(n, x, 2, 2, w, acc);
  else
    ldw_f16_run(n, x, 0, stride, w, acc);
}

/* ================================================================ int8 */

INLINE int32_t ldw_q8_elem(const uint8_t *p, const int sgn) { return sgn ? (int32_t)(int8_t)*p : (int32_t)*p; }

/* Bytes x[0], x[s], ..., x[(VL-1) s] widened to s32 (sgn: s8, else u8); end: reads nothing past
   x[(VL-1) s] (the plain stride-2 load reads one byte more). */
INLINE vi ldw_q8_load(const uint8_t *x, const size_t S, size_t stride, const int end, const int sgn) {
  const int8_t *xs = (const int8_t *)(const void *)x;
  if (S == 1) return sgn ? vi_load_s8(xs) : vi_load_u8(x);
  if (S == 2) {
    if (end) return sgn ? vi_load_s8_evens_end(xs) : vi_load_u8_evens_end(x);
    return sgn ? vi_load_s8_evens(xs) : vi_load_u8_evens(x);
  }
  return sgn ? vi_load_s8_strided(xs, stride) : vi_load_u8_strided(x, stride);
}

/* acc + d * w per lane, exact; wv: (w, 0) s16 pairs under DLC_LOWP_DW_DOT2, else w */
INLINE vi ldw_q8_madd(vi acc, vi d, vi wv) {
#if DLC_LOWP_DW_DOT2
  return vi_dot2_s16(acc, d, wv);
#else
  return vi_add(acc, vi_mullo(d, wv));
#endif
}

/* acc[0..VL) + (x - zp) * w */
INLINE vi ldw_q8_block(const uint8_t *x, const size_t S, size_t stride, const int end, const int sgn, vi zp, vi wv,
                       const int32_t *acc) {
  return ldw_q8_madd(vi_load(acc), vi_sub(ldw_q8_load(x, S, stride, end, sgn), zp), wv);
}

INLINE void ldw_q8_run(size_t n, const uint8_t *x, const size_t S, size_t stride, int32_t w, int32_t zp, const int sgn,
                       int32_t *acc) {
  if (S) stride = S;
  if (n < LDW_VL) {
    for (size_t j = 0; j < n; j++) acc[j] += (ldw_q8_elem(x + j * stride, sgn) - zp) * w;
    return;
  }
  const vi zv = vi_set1(zp), wv = vi_set1(DLC_LOWP_DW_DOT2 ? (int32_t)(w & 0xffff) : w);
  const size_t t = n - LDW_VL;
  const vi tail = ldw_q8_block(x + t * stride, S, stride, 1, sgn, zv, wv, acc + t);
  size_t j = 0;
  /* j + 2 VL < n (not <=): the plain stride-2 load reads up to x[(j + 2 VL) * 2 - 1] */
  for (; j + 2 * LDW_VL < n; j += 2 * LDW_VL) {
    const vi a0 = ldw_q8_block(x + j * stride, S, stride, 0, sgn, zv, wv, acc + j);
    const vi a1 = ldw_q8_block(x + (j + LDW_VL) * stride, S, stride, 0, sgn, zv, wv, acc + j + LDW_VL);
    vi_store(acc + j, a0);
    vi_store(acc + j + LDW_VL, a1);
  }
  if (j + LDW_VL < n) {
    vi_store(acc + j, ldw_q8_block(x + j * stride, S, stride, 0, sgn, zv, wv, acc + j));
    j += LDW_VL;
  }
  (void)j; /* [j, n) is at most VL lanes, all inside [t, n) */
  vi_store(acc + t, tail);
}

#if DLC_LOWP_DW_Q8_S16
/* x - zp for every x of the type, and w, in s16 */
INLINE int ldw_q8_s16_ok(int32_t w, int32_t zp, int is_signed) {
  const int32_t lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
  return w >= INT16_MIN && w <= INT16_MAX && lo - zp >= INT16_MIN && hi - zp <= INT16_MAX;
}
#endif

static void q8_row(size_t n, const void *x, size_t stride, int32_t w, int32_t zp, int is_signed, int32_t *acc) {
  const uint8_t *p = x;
#if DLC_LOWP_DW_Q8_S16
  if ((stride == 1 || stride == 2) && ldw_q8_s16_ok(w, zp, is_signed)) {
    size_t done;
    if (stride == 1)
      done = is_signed ? ldw_q8_s16_row(n, p, 1, w, zp, 1, acc) : ldw_q8_s16_row(n, p, 1, w, zp, 0, acc);
    else
      done = is_signed ? ldw_q8_s16_row(n, p, 2, w, zp, 1, acc) : ldw_q8_s16_row(n, p, 2, w, zp, 0, acc);
    p += done * stride;
    acc += done;
    n -= done;
  }
#endif
#if DLC_LOWP_DW_DOT2
  /* the s16 pairs need w and x - zp in s16 for every x in [-128, 255]: zp in [255 - 32767, 32768 - 128] */
  if (w < INT16_MIN || w > INT16_MAX || zp < 255 - INT16_MAX || zp > -128 - INT16_MIN) {
    for (size_t j = 0; j < n; j++) acc[j] += (ldw_q8_elem(p + j * stride, is_signed) - zp) * w;
    return;
  }
#endif
  if (is_signed) {
    if (stride == 1)
      ldw_q8_run(n, p, 1, 1, w, zp, 1, acc);
    else if (stride == 2)
      ldw_q8_run(n, p, 2, 2, w, zp, 1, acc);
    else
      ldw_q8_run(n, p, 0, stride, w, zp, 1, acc);
  } else {
    if (stride == 1)
      ldw_q8_run(n, p, 1, 1, w, zp, 0, acc);
    else if (stride == 2)
      ldw_q8_run(n, p, 2, 2, w, zp, 0, acc);
    else
      ldw_q8_run(n, p, 0, stride, w, zp, 0, acc);
  }
}

/* ================================================================ NHWC channel runs */

/* Same scheme as the rows: VL channels a block, the last VL computed first from the untouched acc
   and stored last so that a tail of 1..VL-1 is one overlapping block, n < VL scalar. */
static void f16_ch(size_t n, const uint16_t *x, const float *w, float *acc) {
  if (n < LDW_VL) {
    for (size_t j = 0; j < n; j++) acc[j] = ldw_f16_fma1(x[j], w[j], acc[j]);
    return;
  }
  const size_t t = n - LDW_VL;
  const vf tail = v_fma(v_load_f16(x + t), v_load(w + t), v_load(acc + t));
  for (size_t j = 0; j < t; j += LDW_VL) v_store(acc + j, v_fma(v_load_f16(x + j), v_load(w + j), v_load(acc + j)));
  v_store(acc + t, tail);
}

/* acc[0..VL) + (x - zp) * w; lo16: 0xffff per lane under DLC_LOWP_DW_DOT2 (w & lo16 is the
   (w, 0) pair of an s8 weight) */
INLINE vi ldw_q8_ch_block(const uint8_t *x, const int32_t *w, const int sgn, vi zp, vi lo16, const int32_t *acc) {
  const vi d = vi_sub(sgn ? vi_load_s8((const int8_t *)(const void *)x) : vi_load_u8(x), zp);
#if DLC_LOWP_DW_DOT2
  const vi wv = vi_and(vi_load(w), lo16);
#else
  const vi wv = vi_load(w);
  (void)lo16;
#endif
  return ldw_q8_madd(vi_load(acc), d, wv);
}

INLINE void ldw_q8_ch_run(size_t n, const uint8_t *x, const int32_t *w, int32_t zp, const int sgn, int32_t *acc) {
  const vi zv = vi_set1(zp), lo16 = vi_set1(0xffff);
  const size_t t = n - LDW_VL;
  const vi tail = ldw_q8_ch_block(x + t, w + t, sgn, zv, lo16, acc + t);
  size_t j = 0;
#if DLC_LOWP_DW_Q8_CH_PAIRS
  for (; j + LDW_VL < t; j += 2 * LDW_VL) {
    const vi a0 = ldw_q8_ch_block(x + j, w + j, sgn, zv, lo16, acc + j);
    const vi a1 = ldw_q8_ch_block(x + j + LDW_VL, w + j + LDW_VL, sgn, zv, lo16, acc + j + LDW_VL);
    vi_store(acc + j, a0);
    vi_store(acc + j + LDW_VL, a1);
  }
#endif
  for (; j < t; j += LDW_VL) vi_store(acc + j, ldw_q8_ch_block(x + j, w + j, sgn, zv, lo16, acc + j));
  vi_store(acc + t, tail);
}

static void q8_ch(size_t n, const void *x, const int32_t *w, int32_t zp, int is_signed, int32_t *acc) {
  const uint8_t *p = x;
#if DLC_LOWP_DW_DOT2
  /* s8 weights and zero points of the type's range keep both pair operands in s16 */
  const int vec_ok = zp >= 255 - INT16_MAX && zp <= -128 - INT16_MIN;
#else
  const int vec_ok = 1;
#endif
  if (n < LDW_VL || !vec_ok) {
    for (size_t j = 0; j < n; j++) acc[j] += (ldw_q8_elem(p + j, is_signed) - zp) * w[j];
    return;
  }
  if (is_signed)
    ldw_q8_ch_run(n, p, w, zp, 1, acc);
  else
    ldw_q8_ch_run(n, p, w, zp, 0, acc);
}

/* ================================================================ NCHW planes widened to fp32 */

/* 2 VL elements a step; the tail of 1..2VL-1 is a scalar loop (planes are long, the tail is rare). */
static void f16_widen(size_t n, const uint16_t *x, float *dst) {
  size_t j = 0;
  for (; j + 2 * LDW_VL <= n; j += 2 * LDW_VL) {
    v_store(dst + j, v_load_f16(x + j));
    v_store(dst + j + LDW_VL, v_load_f16(x + j + LDW_VL));
  }
  for (; j < n; j++) dst[j] = v_f16_to_f32(x[j]);
}

INLINE void ldw_q8_widen_run(size_t n, const uint8_t *x, int32_t zp, const int sgn, float *dst) {
  const vi zv = vi_set1(zp);
  const int8_t *xs = (const int8_t *)(const void *)x;
  size_t j = 0;
  for (; j + 2 * LDW_VL <= n; j += 2 * LDW_VL) {
    const vi lo = sgn ? vi_load_s8(xs + j) : vi_load_u8(x + j);
    const vi hi = sgn ? vi_load_s8(xs + j + LDW_VL) : vi_load_u8(x + j + LDW_VL);
    v_store(dst + j, vi_to_vf(vi_sub(lo, zv)));
    v_store(dst + j + LDW_VL, vi_to_vf(vi_sub(hi, zv)));
  }
  for (; j < n; j++) dst[j] = (float)(ldw_q8_elem(x + j, sgn) - zp);
}

static void q8_widen(size_t n, const void *x, int32_t zp, int is_signed, float *dst) {
  if (is_signed)
    ldw_q8_widen_run(n, x, zp, 1, dst);
  else
    ldw_q8_widen_run(n, x, zp, 0, dst);
}

const dlc_lowp_dw_family DLC_FAMILY_NAME(lowp_dw) = {
    .f16_name = "f16_dwconv_row__" DLC_ISA_STR,
    .q8_name = "q8_dwconv_row__" DLC_ISA_STR,
    .f16_row = f16_row,
    .q8_row = q8_row,
    .f16_ch = f16_ch,
    .q8_ch = q8_ch,
    .f16_widen = f16_widen,
    .q8_widen = q8_widen,
};
