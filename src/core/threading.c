/* Parallel regions: the caller's pool, else OpenMP, else a plain loop. */
#include "threading.h"

#include <stdlib.h>
#include <unistd.h>

#include "env.h"
#include "plan.h"

void dlc_parallel_for(const struct dlconv_plan *p, size_t ntasks, dlconv_task_fn fn, void *arg) {
  if (ntasks == 0) return;
  if (ntasks == 1) {
    fn(arg, 0);
    return;
  }
  if (p->parallel_for) {
    p->parallel_for(p->pool, fn, arg, ntasks);
    return;
  }
#if defined(DLC_HAVE_OPENMP)
  int nt = (int)(ntasks < (size_t)p->nthreads ? ntasks : (size_t)p->nthreads);
  if (nt > 1) {
    long n = (long)ntasks;
#pragma omp parallel for num_threads(nt) schedule(static)
    for (long i = 0; i < n; i++) fn(arg, (size_t)i);
    return;
  }
#endif
  for (size_t i = 0; i < ntasks; i++) fn(arg, i);
}

int dlc_default_threads(void) {
  int env = dlc_env()->num_threads;
  if (env > 0) return env;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)(n < 1024 ? n : 1024) : 1;
}
