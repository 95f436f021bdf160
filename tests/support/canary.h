/* canary.h - the API tests' caller buffers: a canary pattern before and after the payload must
 * survive every call (writes outside it show), or the payload against an inaccessible page on one
 * side (reads past it fault). Public header only. */
#ifndef DLC_TESTS_SUPPORT_CANARY_H
#define DLC_TESTS_SUPPORT_CANARY_H

#include <stddef.h>

#include "guard_pages.h"

#define GUARD_BYTES 128 /* a multiple of 64 so an unshifted payload is 64-byte aligned */

typedef struct canary_buf {
  unsigned char *raw;
  size_t total, pre, bytes;
  void *p;
  int fenced; /* against an inaccessible page right after (1) or before (2) the payload */
  region r;   /* fenced: the guarded region (guard_pages.h) */
} canary_buf;

/* payload of `bytes` bytes at offset GUARD_BYTES + shift from a 64-byte aligned block */
void canary_alloc(canary_buf *g, size_t bytes, size_t shift);

/* Input buffers for catching over-reads: the payload touches a PROT_NONE page on one side, so a
 * kernel that reads even one float past the end (or before the start) of x or w faults. */
void canary_alloc_fenced(canary_buf *g, size_t bytes, int side);

void canary_free(canary_buf *g);

/* back to the pristine canary, payload included, so that canary_untouched can be asked again */
void canary_reset(canary_buf *g);

/* 1 if both guards hold the canary */
int canary_guards_ok(const canary_buf *g);

/* 1 if the payload still holds the canary too (nothing was written at all) */
int canary_untouched(const canary_buf *g);

#endif
