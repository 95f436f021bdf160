/* Wisdom: measured choices kept per (shape, dtype, layout, ISA, threads), exported and imported
   as text, one "key algo" line each after a version line. */
#include "wisdom.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/util.h"
#include "names.h"

#define WISDOM_MAGIC "# libdlconv wisdom 1"
#define KEY_MAX 256

typedef struct entry {
  char key[KEY_MAX];
  dlconv_algo algo;
} entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static entry *entries;
static size_t count, cap;

void dlc_wisdom_key(const dlconv_plan *p, char *buf, size_t size) {
  const dlc_conv_shape *s = &p->s;
  snprintf(buf, size, "conv2d:%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld:%d:%s:%d:t%d",
           (long long)s->n, (long long)s->c_in, (long long)s->h_in, (long long)s->w_in, (long long)s->c_out,
           (long long)s->k_h, (long long)s->k_w, (long long)s->stride_h, (long long)s->stride_w, (long long)s->dil_h,
           (long long)s->dil_w, (long long)s->pad_t, (long long)s->pad_b, (long long)s->pad_l, (long long)s->pad_r,
           (long long)s->groups, (int)p->dtype, s->layout == DLCONV_NHWC ? "nhwc" : "nchw", (int)p->isa, p->nthreads);
}

/* Caller holds the lock. */
static int put(const char *key, dlconv_algo algo) {
  for (size_t i = 0; i < count; i++)
    if (!strcmp(entries[i].key, key)) {
      entries[i].algo = algo;
      return 1;
    }
  if (count == cap) {
    size_t ncap = cap ? 2 * cap : 64;
    entry *n = realloc(entries, ncap * sizeof *n);
    if (!n) return 0;
    entries = n;
    cap = ncap;
  }
  snprintf(entries[count].key, KEY_MAX, "%s", key);
  entries[count++].algo = algo;
  return 1;
}

int dlc_wisdom_lookup(const char *key, dlconv_algo *algo) {
  int found = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < count && !found; i++)
    if (!strcmp(entries[i].key, key)) {
      *algo = entries[i].algo;
      found = 1;
    }
  pthread_mutex_unlock(&lock);
  return found;
}

void dlc_wisdom_remember(const char *key, dlconv_algo algo) {
  pthread_mutex_lock(&lock);
  put(key, algo);
  pthread_mutex_unlock(&lock);
}

dlconv_status dlconv_wisdom_export(const char *path) {
  if (!path) return dlc_fail(DLCONV_ERR_INVALID_ARG, "path is NULL");
  FILE *f = fopen(path, "w");
  if (!f) return dlc_fail(DLCONV_ERR_IO, "cannot open %s for writing", path);
  pthread_mutex_lock(&lock);
  int ok = fprintf(f, "%s\n", WISDOM_MAGIC) > 0;
  for (size_t i = 0; i < count && ok; i++) ok = fprintf(f, "%s %d\n", entries[i].key, (int)entries[i].algo) > 0;
  pthread_mutex_unlock(&lock);
  if (fclose(f) != 0 || !ok) return dlc_fail(DLCONV_ERR_IO, "error writing %s", path);
  return DLCONV_OK;
}

/* All or nothing: a malformed file changes nothing. */
dlconv_status dlconv_wisdom_import(const char *path) {
  if (!path) return dlc_fail(DLCONV_ERR_INVALID_ARG, "path is NULL");
  FILE *f = fopen(path, "r");
  if (!f) return dlc_fail(DLCONV_ERR_IO, "cannot open %s", path);
  char line[KEY_MAX + 32];
  entry *got = NULL;
  size_t n = 0, ncap = 0;
  dlconv_status st = DLCONV_OK;
  if (!fgets(line, sizeof line, f) || strncmp(line, WISDOM_MAGIC, strlen(WISDOM_MAGIC)) != 0)
    st = dlc_fail(DLCONV_ERR_IO, "%s is not a libdlconv wisdom file", path);
  for (int ln = 2; st == DLCONV_OK && fgets(line, sizeof line, f); ln++) {
    char key[KEY_MAX], extra;
    int algo;
    if (line[0] == '\n') continue;
    if (!strchr(line, '\n') && !feof(f)) { st = dlc_fail(DLCONV_ERR_IO, "%s:%d: line too long", path, ln); break; }
    if (sscanf(line, "%255s %d %c", key, &algo, &extra) != 2 || strncmp(key, "conv2d:", 7) != 0 ||
        !dlc_algo_is_concrete((dlconv_algo)algo)) {
      st = dlc_fail(DLCONV_ERR_IO, "%s:%d: malformed wisdom line", path, ln);
      break;
    }
    if (n == ncap) {
      ncap = ncap ? 2 * ncap : 64;
      entry *g = realloc(got, ncap * sizeof *g);
      if (!g) { st = dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory reading %s", path); break; }
      got = g;
    }
    snprintf(got[n].key, KEY_MAX, "%s", key);
    got[n++].algo = (dlconv_algo)algo;
  }
  fclose(f);
  if (st == DLCONV_OK) {
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < n; i++) put(got[i].key, got[i].algo);
    pthread_mutex_unlock(&lock);
  }
  free(got);
  return st;
}

void dlconv_wisdom_forget(void) {
  pthread_mutex_lock(&lock);
  free(entries);
  entries = NULL;
  count = cap = 0;
  pthread_mutex_unlock(&lock);
}
