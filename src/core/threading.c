/* Parallel regions: the caller's pool, else OpenMP, else a plain loop. */
#include "threading.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(DLC_HAVE_OPENMP)
#include <omp.h>
#endif

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
      /* no barrier of the loop's own: the region's end is one */
#pragma omp for schedule(static) nowait
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

void dlc_parallel_passes(const struct dlconv_plan *p, const dlc_pass *pass, size_t npass) {
#if defined(DLC_HAVE_OPENMP)
  /* a single task first or last runs on the caller, outside the region (no barrier for it): an
     int8 stem's copy of its 3 input planes is one task */
  for (; npass > 1 && pass[0].ntasks <= 1; pass++, npass--) dlc_parallel_for(p, pass[0].ntasks, pass[0].fn, pass[0].arg);
  size_t last = npass;
  while (last > 1 && pass[last - 1].ntasks <= 1) last--;
  size_t most = 0;
  for (size_t k = 0; k < last; k++) most = pass[k].ntasks > most ? pass[k].ntasks : most;
  const int nt = (int)(most < (size_t)p->nthreads ? most : (size_t)p->nthreads);
  if (!p->parallel_for && nt > 1) {
#pragma omp parallel num_threads(nt)
    {
      dlc_fpmode saved = dlc_fpmode_enter();
      for (size_t k = 0; k < last; k++) {
        const long n = (long)pass[k].ntasks;
        if (k + 1 < last) {
          /* the loop's implicit barrier: the pass is done before the next starts */
#pragma omp for schedule(static)
          for (long i = 0; i < n; i++) pass[k].fn(pass[k].arg, (size_t)i);
        } else {
          /* the region's end waits for the last */
#pragma omp for schedule(static) nowait
          for (long i = 0; i < n; i++) pass[k].fn(pass[k].arg, (size_t)i);
        }
      }
      dlc_fpmode_leave(saved);
    }
    for (size_t k = last; k < npass; k++) dlc_parallel_for(p, pass[k].ntasks, pass[k].fn, pass[k].arg);
    return;
  }
#endif
  for (size_t k = 0; k < npass; k++) dlc_parallel_for(p, pass[k].ntasks, pass[k].fn, pass[k].arg);
}

/* The first number in a file (with cpu.max's "max" as 0), -1 when unreadable; *second gets the
   one after it when asked for. */
static long read_numbers(const char *path, long *second) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char word[32];
  long first = -1;
  if (fscanf(f, "%31s", word) == 1) first = strcmp(word, "max") ? strtol(word, NULL, 10) : 0;
  if (second && fscanf(f, "%ld", second) != 1) first = -1;
  fclose(f);
  return first;
}

/* A cgroup CPU bandwidth limit on this process, rounded up to whole CPUs; 0 when there is none.
   cgroup v2: cpu.max ("QUOTA PERIOD" or "max PERIOD"); v1: cpu.cfs_quota_us / cpu.cfs_period_us
   (quota -1: none). Read where a container sees its own cgroup. */
static int cgroup_cpus(void) {
  long period = 0, quota = read_numbers("/sys/fs/cgroup/cpu.max", &period);
  if (quota < 0) {
    quota = read_numbers("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", NULL);
    period = read_numbers("/sys/fs/cgroup/cpu/cpu.cfs_period_us", NULL);
  }
  if (quota <= 0 || period <= 0) return 0;
  long cpus = (quota + period - 1) / period;
  return (int)(cpus < DLC_MAX_DEFAULT_THREADS ? cpus : DLC_MAX_DEFAULT_THREADS);
}

static int quota_cpus;
static pthread_once_t quota_once = PTHREAD_ONCE_INIT;
static void read_quota(void) { quota_cpus = cgroup_cpus(); }

/* The CPUs this process may run on. With OpenMP, OpenMP's default team size (its nthreads ICV):
   the affinity mask the program started with (taskset, a container's cpuset), or what the
   program set with omp_set_num_threads. Not the calling thread's mask: OMP_PROC_BIND binds the
   initial thread to one place, and a program may pin its own threads. Without OpenMP, the
   calling thread's affinity mask, else the online CPUs. */
static int usable_cpus(void) {
#if defined(DLC_HAVE_OPENMP)
  int omp = omp_get_max_threads();
  if (omp > 0) return omp < DLC_MAX_DEFAULT_THREADS ? omp : DLC_MAX_DEFAULT_THREADS;
#endif
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n < DLC_MAX_DEFAULT_THREADS ? n : DLC_MAX_DEFAULT_THREADS;
  }
#endif
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (int)(n < DLC_MAX_DEFAULT_THREADS ? n : DLC_MAX_DEFAULT_THREADS) : 1;
}

/* DLCONV_NUM_THREADS, else OMP_NUM_THREADS, else the CPUs this process may run on (usable_cpus),
   capped by a cgroup CPU quota. */
int dlc_default_threads(void) {
  const dlc_env_settings *e = dlc_env();
  if (e->num_threads > 0) return e->num_threads;
  if (e->omp_threads > 0) return e->omp_threads;
  pthread_once(&quota_once, read_quota);
  int n = usable_cpus();
  return quota_cpus > 0 && quota_cpus < n ? quota_cpus : n;
}
