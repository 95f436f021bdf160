/* tpool.h - a caller thread pool (dlconv_parallel_for_fn): nw workers plus the calling thread.
 * Calls from several threads are serialised, so one pool can serve concurrent executes. */
#ifndef DLC_TESTS_SUPPORT_TPOOL_H
#define DLC_TESTS_SUPPORT_TPOOL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "dlconv.h"

#define TPOOL_MAX 16

typedef struct tpool {
  pthread_t th[TPOOL_MAX];
  int nw;
  pthread_mutex_t call_mu, mu;
  pthread_cond_t cv, done_cv;
  uint64_t gen;
  int stop, busy;
  dlconv_task_fn task;
  void *arg;
  size_t n;
  atomic_size_t next;
  atomic_long calls, tasks_run;
} tpool;

tpool *tpool_create(int nw);

void tpool_parallel_for(void *pool, dlconv_task_fn task, void *arg, size_t n);

void tpool_destroy(tpool *tp);

#endif
