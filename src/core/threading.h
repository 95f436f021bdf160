/* threading.h - parallel regions on the plan's threads.
 *
 * dlc_parallel_for runs fn(arg, i) for every i in [0, ntasks): on the caller's pool when the plan
 * has one, else with OpenMP when built with it, else serially; a single task runs inline on the
 * calling thread (no pool, no parallel region), so a driver need not special-case one. Tasks
 * carry no thread id (a pool may run any task on any thread), so a driver that needs per-thread
 * scratch calls it with ntasks = p->nthreads (or fewer) and gives task i the i-th slice of the
 * workspace, splitting its jobs with dlc_split_range. */
#ifndef DLC_THREADING_H
#define DLC_THREADING_H

#include <stddef.h>

#include "dlconv.h"

struct dlconv_plan;
void dlc_parallel_for(const struct dlconv_plan *p, size_t ntasks, dlconv_task_fn fn, void *arg);

/* Passes that run one after another, each once every task of the one before is done (a copy of x,
   then the convolution on it): in one parallel region where OpenMP runs them, so that a call pays
   one region's start and end and a barrier between passes, not a region a pass. A region's start
   and end cost about a microsecond each on 2 threads; an int8 1x1 layer on a 32 x 32 plane takes
   5 us. */
typedef struct dlc_pass {
  size_t ntasks;
  dlconv_task_fn fn;
  void *arg;
} dlc_pass;
void dlc_parallel_passes(const struct dlconv_plan *p, const dlc_pass *pass, size_t npass);

/* One execute call as a plan's tasks see it: the plan (whose algo_data holds the driver's packed
   data), the call's x and y, and its workspace. Every driver splits an execute into tasks that
   need just these, so they share this one context instead of each declaring its own. */
typedef struct dlc_exec {
  const struct dlconv_plan *p;
  const void *x;
  void *y;
  char *ws;
} dlc_exec;

/* Runs task(&exec, t) for every t in [0, ntasks) with dlc_parallel_for. */
static inline void dlc_exec_tasks(const struct dlconv_plan *p, size_t ntasks, dlconv_task_fn task, const void *x,
                                  void *y, void *ws) {
  dlc_exec e = {p, x, y, ws};
  dlc_parallel_for(p, ntasks, task, &e);
}

/* The part [*begin, *end) of [0, n) that task i of `parts` gets (contiguous, sizes differ by <= 1). */
static inline void dlc_split_range(size_t n, size_t parts, size_t i, size_t *begin, size_t *end) {
  size_t q = n / parts, r = n % parts;
  *begin = i * q + (i < r ? i : r);
  *end = *begin + q + (i < r ? 1 : 0);
}

/* Default thread count (num_threads 0): DLCONV_NUM_THREADS, else OMP_NUM_THREADS, else the CPUs
   this process may run on (OpenMP's default team size, which is the affinity mask the program
   started with; without OpenMP sched_getaffinity), capped by a cgroup CPU quota. */
int dlc_default_threads(void);

#endif
