/* timer.c - warm-up, repeated timed calls, median. */
#include "timer.h"

#include <stdlib.h>
#include <time.h>

double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void bench_timing_default(bench_timing *t, double min_time) {
  t->min_time = min_time;
  t->warmup_time = min_time < 0.1 ? min_time : 0.02;
  t->min_runs = 5;
  t->max_runs = 100000;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Returns the duration of the slowest warm-up call, which decides how many timed calls a slow
   implementation is worth. */
static int warm_up(bench_call_fn fn, void *ctx, const bench_timing *t, double *slowest) {
  double start = bench_now();
  *slowest = 0;
  for (int calls = 0;; calls++) {
    double now = bench_now();
    if (calls >= 2 && now - start >= t->warmup_time) return 0;
    if (calls >= 1 && *slowest > t->min_time) return 0;
    int rc = fn(ctx);
    double d = bench_now() - now;
    if (rc) return rc;
    if (d > *slowest) *slowest = d;
  }
}

int bench_time_calls(bench_call_fn fn, void *ctx, const bench_timing *t, double *ms, long *runs) {
  *ms = -1;
  *runs = 0;
  double slowest;
  int rc = warm_up(fn, ctx, t, &slowest);
  if (rc) return rc;
  int min_runs = slowest > t->min_time && t->min_runs > 3 ? 3 : t->min_runs;
  long cap = 256, n = 0;
  double *d = malloc((size_t)cap * sizeof *d);
  if (!d) return -1;
  double start = bench_now();
  for (;;) {
    double a = bench_now();
    rc = fn(ctx);
    double b = bench_now();
    if (rc) break;
    if (n == cap) {
      double *grown = realloc(d, (size_t)(cap *= 2) * sizeof *d);
      if (!grown) { rc = -1; break; }
      d = grown;
    }
    d[n++] = b - a;
    if (n >= t->max_runs || (n >= min_runs && b - start >= t->min_time)) break;
  }
  if (!rc) {
    qsort(d, (size_t)n, sizeof *d, cmp_double);
    *ms = 1e3 * (n % 2 ? d[n / 2] : 0.5 * (d[n / 2 - 1] + d[n / 2]));
    *runs = n;
  }
  free(d);
  return rc;
}
