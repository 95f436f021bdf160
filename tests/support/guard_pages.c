/* Guard pages (guard_pages.h). */
#include "guard_pages.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

#ifdef HAVE_GUARD_PAGES
#include <sys/mman.h>
#include <unistd.h>
#endif

size_t page_size(void) {
#ifdef HAVE_GUARD_PAGES
  return (size_t)sysconf(_SC_PAGESIZE);
#else
  return 4096;
#endif
}

void region_open(region *r, size_t bytes) {
  memset(r, 0, sizeof *r);
#ifdef HAVE_GUARD_PAGES
  const size_t pg = page_size();
  const size_t data = (bytes + pg - 1) / pg * pg;
  r->map_len = data + 2 * pg;
  r->map = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (r->map == MAP_FAILED) test_die("mmap of %zu bytes failed", r->map_len);
  unsigned char *m = r->map;
  if (mprotect(m, pg, PROT_NONE) || mprotect(m + pg + data, pg, PROT_NONE)) test_die("mprotect failed");
  r->lo = m + pg, r->hi = m + pg + data;
#else
  r->map = xmalloc(bytes);
  r->lo = r->map, r->hi = r->lo + bytes;
#endif
}

void region_close(region *r) {
#ifdef HAVE_GUARD_PAGES
  if (r->map) munmap(r->map, r->map_len);
#else
  free(r->map);
#endif
  memset(r, 0, sizeof *r);
}

void *region_place(const region *r, size_t bytes, int at_end) {
  if (bytes > (size_t)(r->hi - r->lo)) test_die("%zu bytes do not fit a region of %zu", bytes, (size_t)(r->hi - r->lo));
  return at_end ? r->hi - bytes : r->lo;
}

void *gbuf_open(gbuf *g, size_t bytes, int at_end) {
  if (!bytes) bytes = 1;
  region_open(&g->r, bytes);
  g->p = region_place(&g->r, bytes, at_end);
  return g->p;
}

void gbuf_close(gbuf *g) { region_close(&g->r); }
