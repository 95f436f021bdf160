/* Parallel regions: the caller's pool, else OpenMP, else a plain loop. */
#include "threading.h"

#include <stdlib.h>
#include <unistd.h>

#include "env.h"
#include "fpenv.h"
#include "plan.h"

/* A caller's pool runs tasks on its own threads: each task sets the kernels' floating-point
   mode (fpenv.h) and gives the thread its own back. */
typedef struct {
  dlconv_task_fn fn;
  void *arg;
} fp_task;

static void run_in_fpmode(void *arg, size_t i) {
  const fp_task *t = arg;
  dlc_fpmode saved = dlc_fpmode_enter();
  t->fn(t->arg, i);
  dlc_fpmode_leave(saved);
}

void dlc_parallel_for(const struct dlconv_plan *p, size_t ntasks, dlconv_task_fn fn, void *arg) {
  if (ntasks == 0) return;
  if (p->parallel_for && ntasks > 1) {
    fp_task t = {fn, arg};
    p->parallel_for(p->pool, run_in_fpmode, &t, ntasks);
    return;
  }
#if defined(DLC_HAVE_OPENMP)
  int nt = (int)(ntasks < (size_t)p->nthreads ? ntasks : (size_t)p->nthreads);
  if (nt > 1) {
    long n = (long)ntasks;
#pragma omp parallel num_threads(nt)
    {
      dlc_fpmode saved = dlc_fpmode_enter();
#pragma omp for schedule(static)
      for (long i = 0; i < n; i++) fn(arg, (size_t)i);
      dlc_fpmode_leave(saved);
    }
    return;
  }
#endif
  dlc_fpmode saved = dlc_fpmode_enter();
  for (size_t i = 0; i < ntasks; i++) fn(arg, i);
  dlc_fpmode_leave(saved);
}

int dlc_default_threads(void) {
  int env = dlc_env()->num_threads;
  if (env > 0) return env;
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)(n < 1024 ? n : 1024) : 1;
}
