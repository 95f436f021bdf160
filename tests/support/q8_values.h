/* q8_values.h - what the int8 micro-kernel tests draw their operands and requantisation bounds from:
 * activation and weight bytes of a kind (random with the ends, all at one end, small, the ends), a
 * clamp bound, and the name of a parameter set's screen. Draws from the program's stream (rng.h). */
#ifndef DLC_TESTS_SUPPORT_Q8_VALUES_H
#define DLC_TESTS_SUPPORT_Q8_VALUES_H

#include <stdint.h>

#include "quant/quant.h"

enum { X_RANDOM, X_ALL_255, X_ALL_0, X_ENDS, X_SMALL, N_X_KINDS };
enum { W_RANDOM, W_ALL_MIN, W_ALL_MAX, W_SMALL, W_ENDS, N_W_KINDS };

/* "no screen", "narrow screen" or "wide screen" */
const char *screen_name(const dlc_q8_params *q);

/* u, the byte the kernel multiplies (byte ^ flip) */
uint8_t x_u(int kind);

/* a weight byte of kind */
int8_t w_byte(int kind);

/* A clamp bound: an integer, a half-integer, a quarter or any fraction. */
double frac_bound(int64_t lo, int64_t hi);

/* RQ_CLAMP's bounds: lo and hi inside q's type (its zero point set), integers, half-integers,
   quarters or any fraction: equal, lo alone, hi alone, or both. */
void clamp_inside_type(dlc_q8_params *q);

#endif
