/* quant.h - what the F16 and int8 (U8/S8) paths share across algorithms: the plan's copy of the
 * quantisation parameters, the exact requantisation of one accumulator, and the binary16
 * conversions the generic kernels and core use.
 *
 * int8 arithmetic (API.md, "int8 arithmetic"): with acc = sum over taps of (x - x_zero_point) * w
 * in exact integers and bias the caller's s32 value,
 *   v = (double)(acc + bias) * mult[oc],  mult[oc] = (double)x_scale * (double)w_scale[oc] / (double)y_scale
 *   v = min(max(v, lo), hi),               lo = (double)out_min / y_scale, hi = (double)out_max / y_scale
 *   y = saturate(round_half_even(v) + y_zero_point)   to [0, 255] (U8) or [-128, 127] (S8)
 * each operation one IEEE double operation in this order. Kernels that vectorise it must
 * produce the same bits; the oracle and DLCONV_VERIFY compute it the same way. */
#ifndef DLC_QUANT_H
#define DLC_QUANT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dlconv.h"

/* The longest int8 reduction whose s32 accumulators cannot overflow: |x - zp| <= 255, |w| <= 128
   (plans with a longer one answer UNSUPPORTED). */
#define DLC_Q8_MAX_K ((size_t)INT32_MAX / (255u * 128u))

/* Per plan, int8 only. Channel-indexed arrays have c_out entries (per-tensor scales are
   broadcast at plan time, so kernels never branch on n_w_scales). */
typedef struct dlc_q8_params {
  int32_t x_zero_point, y_zero_point;
  int32_t y_min, y_max;     /* range of y's type: 0..255 or -128..127 */
  int is_signed;            /* S8 x and y */
  double lo, hi;            /* clamp in units of y_scale (may be -inf / +inf) */
  /* For vector stores, the same outputs with less work: lo and hi narrowed to
     [y_min - zp - 1, y_max - zp + 1] (what lies beyond saturates either way, so the rounded value
     + zp fits s16 and the packs' saturation is the formula's), and whether acc + bias[c] is exact
     in s32 for every c (|acc| <= K * 255 * 128), so the bias can be added before the conversion. */
  double lo_sat, hi_sat;
  int bias_s32;
  double *mult;             /* c_out: x_scale * w_scale[oc] / y_scale */
  int32_t *bias;            /* c_out: the caller's s32 bias, zeros when none */
} dlc_q8_params;

/* The requantisation of one accumulator (acc already includes the zero-point correction). */
static inline int32_t dlc_q8_requant1(int64_t acc_plus_bias, double mult, const dlc_q8_params *q) {
  double v = (double)acc_plus_bias * mult;
  v = v < q->lo ? q->lo : v;
  v = v > q->hi ? q->hi : v;
  double r = nearbyint(v); /* round half to even in the default rounding mode */
  double t = r + (double)q->y_zero_point;
  if (t < (double)q->y_min) return q->y_min;
  if (t > (double)q->y_max) return q->y_max;
  return (int32_t)t;
}

/* IEEE binary16 <-> binary32, round to nearest even, NaN stays NaN (quiet), overflow to inf. */
static inline float dlc_f16_to_f32(uint16_t h) {
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
  float f;
  if (e == 0) {
    f = (float)m * 5.9604644775390625e-8f; /* m x 2^-24, exact */
    memcpy(&x, &f, 4);
  } else {
    x = (e == 31 ? 0x7f800000u | (m ? 0x400000u : 0) : (e + 112) << 23) | (m << 13);
  }
  x |= (uint32_t)(h & 0x8000u) << 16;
  memcpy(&f, &x, 4);
  return f;
}

static inline uint16_t dlc_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00u | (uint16_t)((a >> 13) & 0x3ffu); /* NaN, quiet */
  if (a == 0x7f800000u) return sign | 0x7c00u;
  if (a >= 0x477ff000u) return sign | 0x7c00u; /* rounds past 65504 */
  if (a < 0x38800000u) {                       /* half subnormal or zero: units of 2^-24 */
    float v;
    memcpy(&v, &a, 4);
    return sign | (uint16_t)nearbyintf(v * 16777216.0f);
  }
  a += 0xfffu + ((a >> 13) & 1u);
  return sign | (uint16_t)((a - 0x38000000u) >> 13);
}

#endif
