/* The caller thread pool (tpool.h). */
#include "tpool.h"

#include <stdlib.h>

#include "alloc.h"

static void tpool_drain(tpool *tp) {
  size_t i;
  while ((i = atomic_fetch_add(&tp->next, 1)) < tp->n) {
    tp->task(tp->arg, i);
    atomic_fetch_add(&tp->tasks_run, 1);
  }
}

static void *tpool_worker(void *p) {
  tpool *tp = p;
  uint64_t seen = 0;
  pthread_mutex_lock(&tp->mu);
  for (;;) {
    while (!tp->stop && tp->gen == seen) pthread_cond_wait(&tp->cv, &tp->mu);
    if (tp->stop) break;
    seen = tp->gen;
    pthread_mutex_unlock(&tp->mu);
    tpool_drain(tp);
    pthread_mutex_lock(&tp->mu);
    if (--tp->busy == 0) pthread_cond_signal(&tp->done_cv);
  }
  pthread_mutex_unlock(&tp->mu);
  return NULL;
}

tpool *tpool_create(int nw) {
  tpool *tp = calloc(1, sizeof *tp);
  if (!tp) test_die("out of memory (a thread pool)");
  if (nw > TPOOL_MAX) nw = TPOOL_MAX;
  /* DLCONV_NUM_THREADS=1 (the AArch64 stage under qemu-user, where a second thread never runs):
     no workers, the caller runs every task, in order */
  const char *env = getenv("DLCONV_NUM_THREADS");
  if (env && atoi(env) >= 1 && nw > atoi(env) - 1) nw = atoi(env) - 1;
  tp->nw = nw;
  pthread_mutex_init(&tp->call_mu, NULL);
  pthread_mutex_init(&tp->mu, NULL);
  pthread_cond_init(&tp->cv, NULL);
  pthread_cond_init(&tp->done_cv, NULL);
  for (int i = 0; i < nw; i++) pthread_create(&tp->th[i], NULL, tpool_worker, tp);
  return tp;
}

void tpool_parallel_for(void *pool, dlconv_task_fn task, void *arg, size_t n) {
  tpool *tp = pool;
  pthread_mutex_lock(&tp->call_mu);
  pthread_mutex_lock(&tp->mu);
  tp->task = task;
  tp->arg = arg;
  tp->n = n;
  atomic_store(&tp->next, 0);
  tp->busy = tp->nw;
  tp->gen++;
  pthread_cond_broadcast(&tp->cv);
  pthread_mutex_unlock(&tp->mu);
  tpool_drain(tp);
  pthread_mutex_lock(&tp->mu);
  while (tp->busy > 0) pthread_cond_wait(&tp->done_cv, &tp->mu);
  pthread_mutex_unlock(&tp->mu);
  atomic_fetch_add(&tp->calls, 1);
  pthread_mutex_unlock(&tp->call_mu);
}

void tpool_destroy(tpool *tp) {
  if (!tp) return;
  pthread_mutex_lock(&tp->mu);
  tp->stop = 1;
  pthread_cond_broadcast(&tp->cv);
  pthread_mutex_unlock(&tp->mu);
  for (int i = 0; i < tp->nw; i++) pthread_join(tp->th[i], NULL);
  pthread_mutex_destroy(&tp->call_mu);
  pthread_mutex_destroy(&tp->mu);
  pthread_cond_destroy(&tp->cv);
  pthread_cond_destroy(&tp->done_cv);
  free(tp);
}
