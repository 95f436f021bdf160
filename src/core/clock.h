/* clock.h - a monotonic clock in seconds, for planning times (DLCONV_VERBOSE) and MEASURE. */
#ifndef DLC_CLOCK_H
#define DLC_CLOCK_H

#include <time.h>

static inline double dlc_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
