/* util.h - small helpers every layer of the library shares. */
#ifndef DLC_UTIL_H
#define DLC_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "dlconv.h"

#define DLC_ALIGN 64
#define DLC_MIN(a, b) ((a) < (b) ? (a) : (b))
#define DLC_MAX(a, b) ((a) > (b) ? (a) : (b))

static inline size_t dlc_round_up(size_t v, size_t m) { return (v + m - 1) / m * m; }
static inline size_t dlc_div_up(size_t v, size_t m) { return (v + m - 1) / m; }

/* Cuts [0, n) into about n / max_block blocks of equal size, rounded up to a multiple of unit. */
static inline size_t dlc_balanced_block(size_t n, size_t max_block, size_t unit) {
  size_t nb = dlc_div_up(n, max_block);
  return dlc_round_up(dlc_div_up(n, nb), unit);
}

/* The fused clamp. Written with comparisons (not fminf/fmaxf) so that a NaN produced by the
   inputs stays NaN: a clamp must never hide one. */
static inline float dlc_clamp(float v, float lo, float hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

/* 64-byte aligned allocation; every allocation of the library goes through these two, so that
   out-of-memory paths can be tested by failing the k-th call. NULL on failure or size 0 -> 64 bytes. */
void *dlc_malloc(size_t bytes);
void *dlc_calloc(size_t bytes);
void dlc_free(void *p);

/* Thread-local message for dlconv_last_error(); printf-style. Returns s for `return dlc_fail(...)`. */
void dlc_set_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
dlconv_status dlc_fail(dlconv_status s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
