/* ukernel_guard.h - operand buffers for the micro-kernel tests: readable memory of exactly the
 * asked size with an inaccessible page right before it or right after it (guard pages where the
 * system has mmap, else an exactly sized malloc for valgrind / ASan), so a kernel touching one
 * byte outside its operand faults. Include after <cmocka.h>. */
#ifndef DLC_TESTS_UKERNEL_GUARD_H
#define DLC_TESTS_UKERNEL_GUARD_H

#include <stdlib.h>
#include <string.h>

#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#define HAVE_GUARD_PAGES 1
#endif

typedef struct gbuf {
  void *map, *owned;
  size_t map_len;
  unsigned char *p; /* the payload */
} gbuf;

static inline void *gbuf_open(gbuf *g, size_t bytes, int at_end) {
  memset(g, 0, sizeof *g);
  if (!bytes) bytes = 1;
#ifdef HAVE_GUARD_PAGES
  const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
  const size_t data = (bytes + pg - 1) / pg * pg;
  g->map_len = data + 2 * pg;
  g->map = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(g->map != MAP_FAILED);
  unsigned char *m = g->map;
  assert_int_equal(mprotect(m, pg, PROT_NONE), 0);
  assert_int_equal(mprotect(m + pg + data, pg, PROT_NONE), 0);
  g->p = at_end ? m + pg + data - bytes : m + pg;
#else
  (void)at_end;
  g->owned = malloc(bytes);
  assert_non_null(g->owned);
  g->p = g->owned;
#endif
  return g->p;
}

static inline void gbuf_close(gbuf *g) {
#ifdef HAVE_GUARD_PAGES
  if (g->map) munmap(g->map, g->map_len);
#endif
  free(g->owned);
}

#endif
