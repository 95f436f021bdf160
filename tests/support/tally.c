/* Failure tallies and a clock (tally.h). */
#include "tally.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

void tally_fail(tally *t, const char *fmt, ...) {
  t->fails++;
  if (t->printed >= TALLY_PRINT_MAX) return;
  t->printed++;
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL: ");
  vprintf(fmt, ap);
  printf("\n");
  fflush(stdout);
  va_end(ap);
}

double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
