/* tally.h - failures of a sweep: the first few printed in full, the rest counted, one assert at the
 * end; and a clock for the sweeps' time budgets. */
#ifndef DLC_TESTS_SUPPORT_TALLY_H
#define DLC_TESTS_SUPPORT_TALLY_H

typedef struct tally {
  long fails, printed, runs;
} tally;

#define TALLY_PRINT_MAX 40

void tally_fail(tally *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* a monotonic clock, in seconds */
double now_s(void);

#endif
