/* guard_pages.h - operand memory with an inaccessible page right before it and right after it, so
 * that a kernel touching one byte outside its operand faults (where the system has mmap; elsewhere
 * plain memory of the asked size, for valgrind / ASan to watch).
 *
 *   region  readable [lo, hi), page-aligned, for operands of varying size placed against its end or
 *           its start;
 *   gbuf    one operand of exactly the asked size against the page after it or before it. */
#ifndef DLC_TESTS_SUPPORT_GUARD_PAGES_H
#define DLC_TESTS_SUPPORT_GUARD_PAGES_H

#include <stddef.h>

#if defined(__unix__) || defined(__APPLE__)
#define HAVE_GUARD_PAGES 1
#endif

typedef struct region {
  unsigned char *lo, *hi; /* readable [lo, hi): at least the asked size */
  void *map;
  size_t map_len;
} region;

void region_open(region *r, size_t bytes);
void region_close(region *r);
/* bytes of r against its end (at_end) or its start; bytes <= hi - lo */
void *region_place(const region *r, size_t bytes, int at_end);

typedef struct gbuf {
  region r;
  unsigned char *p; /* the payload */
} gbuf;

/* bytes (0 counts as 1) against the page after them (at_end) or before them; returns g->p, which
   is page-aligned (!at_end) or ends on a page boundary (at_end) */
void *gbuf_open(gbuf *g, size_t bytes, int at_end);
void gbuf_close(gbuf *g);

/* The system's page size (4096 where it has no pages). */
size_t page_size(void);

#endif
