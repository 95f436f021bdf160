/* half.h - IEEE binary16, written from the format's definition (not the library's quant.h), so the
 * F16 tests' references do not share a converter with the code they check. */
#ifndef DLC_TESTS_SUPPORT_HALF_H
#define DLC_TESTS_SUPPORT_HALF_H

#include <stdint.h>

/* The exact value of h (infinities and NaNs included, the sign too). */
double half_value(uint16_t h);
/* v rounded to the nearest binary16, ties to even; past 65504 (from 65520 on) an infinity, a NaN
   the quiet NaN 0x7E00 with v's sign. */
uint16_t half_of(double v);
int half_is_nan(uint16_t h);

#endif
