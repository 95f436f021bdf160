/* compare.h - how a kernel's fp32 result is held against a double-precision reference. */
#ifndef DLC_TESTS_SUPPORT_COMPARE_H
#define DLC_TESTS_SUPPORT_COMPARE_H

#include <stddef.h>

/* v clamped to [lo, hi]; a NaN stays NaN (the contract's clamp). */
double clampd(double v, double lo, double hi);

/* got agrees with ref within the float rounding of a k-term sum whose terms add up to mag in
   absolute value: |got - ref| <= rel (k + 2) mag + 1e-30, rel a few fp32 half-ulps (2^-23 = 1.2e-7)
   as the test's summation order needs. A NaN reference wants a NaN. */
int close_to_sum(float got, double ref, double mag, size_t k, double rel);
/* the same with rel = 2e-7, what most kernels' blocked sums need */
int close_enough(float got, double ref, double mag, size_t k);

#endif
