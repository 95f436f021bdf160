/* timer.h - the timing policy every measurement of the bench follows (ours and the peers').
 *
 * Warm-up: at least 2 calls and 0.02 s (1 call when a single call is slower than min_time), so
 * caches, page mappings and thread pools are in their steady state. Then timed calls, each
 * timed alone, until at least `min_runs` calls and `min_time` seconds have passed (3 calls for
 * calls slower than min_time, at most max_runs). The result is the median per call: robust to
 * the odd preempted call that a mean would absorb. */
#ifndef DLCB_TIMER_H
#define DLCB_TIMER_H

typedef struct bench_timing {
  double min_time;    /* seconds of timed calls */
  double warmup_time; /* seconds of untimed calls first */
  int min_runs;
  long max_runs;
} bench_timing;

/* One call of the thing measured: 0 on success; a failure stops the measurement. */
typedef int (*bench_call_fn)(void *ctx);

double bench_now(void);   /* monotonic seconds */
void bench_timing_default(bench_timing *t, double min_time);

/* Median ms per call into *ms and the number of timed calls into *runs; returns the first
   failing call's status (and leaves *ms at -1) or 0. */
int bench_time_calls(bench_call_fn fn, void *ctx, const bench_timing *t, double *ms, long *runs);

#endif
