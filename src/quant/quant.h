/* quant.h - what the F16 and int8 (U8/S8) paths share across algorithms: the plan's copy of the
 * quantisation parameters, the exact requantisation of one accumulator, and the binary16
 * conversions the generic kernels and core use.
 *
 * int8 arithmetic (docs/api.md, "int8 arithmetic"): with acc = sum over taps of (x - x_zero_point) * w
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
#include <stdlib.h>
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
  /* The fp32 screen (dlc_q8_derive): where mult_f is set, a vector store may compute 8 outputs
     as c = clamp((float)(acc + bias) * mult_f[oc], lo_f, hi_f) and keep round_half_even(c) + zp
     when c lies more than DLC_Q8_SCREEN_MARGIN from every half-integer: that is then the
     formula's result. Within the margin it must take the double path. */
  float *mult_f;            /* c_out: (float)mult[oc], or NULL: no screen */
  float lo_f, hi_f;         /* (float)lo_sat, (float)hi_sat */
  /* The wide screen (a refinement of the above, see DLC_Q8_WIDE_MARGIN): where set, every
     |acc + bias| x mult_f stays below 2^20, so a store may round the unclamped fp32 product with
     the 1.5 x 2^23 addition, clamp the rounded value + zp in integers and narrow it with the
     packs' saturation. */
  int screen_wide;
  /* For stores that clamp rounded integers (the wide screen): clamp_i says whether lo or hi lies
     inside the type's range, and lo_i, hi_i are round(lo), round(hi) moved into it, + zp. */
  int clamp_i;
  int32_t lo_i, hi_i;
  double *mult;             /* c_out: x_scale * w_scale[oc] / y_scale */
  int32_t *bias;            /* c_out: the caller's s32 bias, zeros when none */
} dlc_q8_params;

/* Why the screen is exact. Let a = acc + bias (exact in s32), v = (double)a * mult the formula's
   product and v' = (float)a * (float)mult in fp32: three roundings of relative error <= 2^-24
   each, so |v' - v| <= 3.01 * 2^-24 * |v|, below 2^-12.4 while |v| <= 1024. Clamping is
   1-Lipschitz in the value and in the bounds, and |lo_f - lo_sat|, |hi_f - hi_sat| <= 2^-16
   (|lo_sat|, |hi_sat| <= 257), so the clamped values differ by less than 2^-12 whenever
   |v| <= 1024; beyond that both clamp to the same bound (|v'| > 1023 > 257), to within 2^-16.
   A clamped fp32 value farther than 2^-10 from every half-integer therefore rounds to the
   double's integer. The multipliers must be normal floats (relative rounding 2^-24), hence the
   range [2^-60, 2^60] below. */
#define DLC_Q8_SCREEN_MARGIN 0x1p-10f

/* Why the wide screen is exact. There p = (float)a x (float)mult is rounded once, to an integer
   (fma(fa, mf, 1.5 x 2^23): |p| < 2^20 keeps the sum in [2^23, 2^24), where the spacing is 1),
   and d = p - round(p) once more (fms, |d| <= 1/2, so its error is <= 2^-26). Two roundings
   of relative error <= 2^-24 put p within 2^-23 (1 + 2^-23) |v| of the formula's double v
   (whose own rounding adds 2^-53 |v|): below 2^-13.99 while |v| <= 512. So where
   |d| <= 1/2 - 2^-13, v is more than 2^-13 - 2^-13.99 - 2^-26 > 0 away from the half-integer
   nearest p, and rounds to round(p). Where |v| > 512 both round beyond +-510 with the same sign,
   and round + zp saturates to the same end of the type either way (|zp| <= 255). Clamps commute
   with rounding (it is monotone): rounding clamp(v, lo, hi) is clamping round(v) to
   [round(lo), round(hi)], so lo and hi move into integers. */
#define DLC_Q8_WIDE_MARGIN 0x1p-13f

/* Fills the stores' derived fields from lo, hi, zero points, mult and bias: lo_sat, hi_sat,
   bias_s32 (with |acc| <= acc_max for every accumulator) and the fp32 screen, whose c_out
   multipliers go to mult_f (NULL: no screen; also none where a multiplier is out of range or
   lo_sat > hi_sat). Plans and tests derive them the same way. */
static inline void dlc_q8_derive(dlc_q8_params *q, int64_t acc_max, size_t c_out, float *mult_f) {
  q->lo_sat = fmax(q->lo, (double)(q->y_min - q->y_zero_point - 1));
  q->hi_sat = fmin(q->hi, (double)(q->y_max - q->y_zero_point + 1));
  q->bias_s32 = acc_max <= INT32_MAX;
  for (size_t c = 0; c < c_out && q->bias_s32; c++)
    q->bias_s32 = llabs((long long)q->bias[c]) <= INT32_MAX - acc_max;
  int screen = mult_f && q->bias_s32 && q->lo_sat <= q->hi_sat;
  for (size_t c = 0; c < c_out && screen; c++) {
    screen = q->mult[c] >= 0x1p-60 && q->mult[c] <= 0x1p60;
    mult_f[c] = (float)q->mult[c];
  }
  q->mult_f = screen ? mult_f : NULL;
  /* wide: (acc_max + |bias|) x mult_f x (1 + 2^-23) < 2^20, checked in double with room to spare */
  q->screen_wide = screen;
  for (size_t c = 0; c < c_out && q->screen_wide; c++)
    q->screen_wide = ((double)acc_max + fabs((double)q->bias[c])) * (double)mult_f[c] <= 0x1p19;
  q->lo_f = (float)q->lo_sat;
  q->hi_f = (float)q->hi_sat;
  const double ylo = (double)(q->y_min - q->y_zero_point), yhi = (double)(q->y_max - q->y_zero_point);
  const double lo_y = q->lo < ylo ? ylo : q->lo > yhi ? yhi : q->lo;
  const double hi_y = q->hi < ylo ? ylo : q->hi > yhi ? yhi : q->hi;
  q->clamp_i = q->lo > ylo || q->hi < yhi;
  q->lo_i = (int32_t)nearbyint(lo_y) + q->y_zero_point;
  q->hi_i = (int32_t)nearbyint(hi_y) + q->y_zero_point;
}

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
