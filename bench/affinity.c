/* affinity.c - pinning of the main thread (see affinity.h); Linux only, a no-op elsewhere. */
#include "affinity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char state[96] = "affinity untouched";

int bench_affinity_openmp_binds(void) {
  const char *b = getenv("OMP_PROC_BIND");
  return b && *b && strcmp(b, "false") && strcmp(b, "FALSE");
}

const char *bench_affinity_describe(void) { return state; }

#ifdef __linux__
#include <sched.h>

static cpu_set_t original;
static int have_original;

void bench_affinity_init(void) {
  have_original = sched_getaffinity(0, sizeof original, &original) == 0;
}

void bench_affinity_for_threads(int n) {
  if (!have_original || bench_affinity_openmp_binds()) {
    snprintf(state, sizeof state, "%s", have_original ? "placed by OpenMP (OMP_PROC_BIND)" : "affinity unknown");
    return;
  }
  if (n > 1) {
    sched_setaffinity(0, sizeof original, &original);
    snprintf(state, sizeof state, "unpinned (%d CPUs; set OMP_PROC_BIND=close OMP_PLACES=cores)",
             CPU_COUNT(&original));
    return;
  }
  int cpu = sched_getcpu();
  if (cpu < 0 || !CPU_ISSET(cpu, &original)) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof one, &one) == 0) snprintf(state, sizeof state, "main thread pinned to cpu %d", cpu);
}
#else
void bench_affinity_init(void) {}
void bench_affinity_for_threads(int n) { (void)n; }
#endif
