/* Results against references (compare.h). */
#include "compare.h"

#include <math.h>

double clampd(double v, double lo, double hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

int close_to_sum(float got, double ref, double mag, size_t k, double rel) {
  if (isnan(ref)) return isnan(got);
  return fabs((double)got - ref) <= rel * (double)(k + 2) * mag + 1e-30;
}

int close_enough(float got, double ref, double mag, size_t k) { return close_to_sum(got, ref, mag, k, 2e-7); }
