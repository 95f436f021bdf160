/* binary16 from its definition (half.h). */
#include "half.h"

#include <math.h>

double half_value(uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
  return h & 0x8000 ? -v : v;
}

/* The magnitude is scaled so that one unit of the last place is 1, rounded with nearbyint (the
   default mode rounds to nearest even), and the integer laid back into sign / exponent /
   mantissa; a mantissa carry moves into the exponent. */
uint16_t half_of(double v) {
  const uint16_t sign = signbit(v) ? 0x8000 : 0;
  const double a = fabs(v);
  if (isnan(v)) return sign | 0x7E00;
  if (a >= 65520.0) return sign | 0x7C00; /* half-way to 2^16 and above: past 65504 */
  if (a < ldexp(1.0, -14)) return sign | (uint16_t)nearbyint(ldexp(a, 24));
  const int e = ilogb(a);
  const double q = nearbyint(ldexp(a, 10 - e)); /* 1024 .. 2048 */
  return sign | (uint16_t)(((e + 15) << 10) + (int)q - 1024);
}

int half_is_nan(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0; }
