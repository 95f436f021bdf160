/* half.h - IEEE binary16 <-> binary32 for test data (round to nearest even), independent of
 * the library's own conversions so that the bench checks them rather than trusts them. */
#ifndef DLCB_HALF_H
#define DLCB_HALF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t bench_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
  uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0);  /* inf, NaN */
  if (a >= 0x477ff000u) return sign | 0x7c00u;        /* rounds past 65504 */
  if (a < 0x38800000u) {                              /* half subnormal: units of 2^-24 */
    float v;
    memcpy(&v, &a, 4);
    return sign | (uint16_t)lrintf(v * 16777216.0f);  /* exact scaling, rounding to even */
  }
  a += 0xfffu + ((a >> 13) & 1u);                     /* round to even at bit 13 */
  return sign | (uint16_t)((a - 0x38000000u) >> 13);  /* exponent bias 127 -> 15 */
}

static inline float bench_f16_to_f32(uint16_t h) {
  uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
  float f;
  if (e == 0) {
    f = (float)m * 5.9604644775390625e-8f;           /* m x 2^-24, exact */
    memcpy(&x, &f, 4);
  } else {
    x = (e == 31 ? 0x7f800000u : (e + 112) << 23) | (m << 13);
  }
  x |= (uint32_t)(h & 0x8000u) << 16;
  memcpy(&f, &x, 4);
  return f;
}

#endif
