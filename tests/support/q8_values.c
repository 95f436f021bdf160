/* int8 operand bytes and requantisation bounds (q8_values.h). */
#include "q8_values.h"

#include "rng.h"

const char *screen_name(const dlc_q8_params *q) {
  return !q->mult_f ? "no screen" : q->screen_wide ? "wide screen" : "narrow screen";
}

uint8_t x_u(int kind) {
  const uint32_t r = next_u32();
  switch (kind) {
    case X_ALL_255: return 0xff;
    case X_ALL_0: return 0x00;
    case X_ENDS: return r % 2 ? 0xff : 0x00;
    case X_SMALL: return (uint8_t)(r % 4);
    default: return r % 16 == 0 ? 0xff : r % 16 == 1 ? 0x00 : (uint8_t)(r >> 8);
  }
}

int8_t w_byte(int kind) {
  const uint32_t r = next_u32();
  switch (kind) {
    case W_ALL_MIN: return -128;
    case W_ALL_MAX: return 127;
    case W_SMALL: return (int8_t)((int)(r % 7) - 3);
    case W_ENDS: return r % 2 ? (int8_t)127 : (int8_t)-128;
    default: return r % 16 == 0 ? (int8_t)-128 : r % 16 == 1 ? (int8_t)127 : (int8_t)(uint8_t)(r >> 8);
  }
}

double frac_bound(int64_t lo, int64_t hi) {
  static const double fr[] = {0.0, 0.5, -0.5, 0.25};
  const uint32_t r = next_u32() % 5;
  return (double)irand(lo, hi) + (r < 4 ? fr[r] : urand());
}

void clamp_inside_type(dlc_q8_params *q) {
  const uint32_t r = next_u32() % 6;
  const int64_t zl = q->y_min - q->y_zero_point, zh = q->y_max - q->y_zero_point; /* the type in y units */
  if (r == 0) {
    q->lo = q->hi = frac_bound(zl, zh);
  } else if (r == 1) {
    q->lo = frac_bound(zl, zh);
  } else if (r == 2) {
    q->hi = frac_bound(zl, zh);
  } else {
    double a = frac_bound(zl, zh), b = frac_bound(zl, zh);
    if (a > b) {
      const double t = a;
      a = b, b = t;
    }
    q->lo = a, q->hi = b;
  }
}
