/* Canary-guarded caller buffers (canary.h). */
#include "canary.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

static unsigned char canary_byte(size_t i) { return (unsigned char)(0xC3u ^ (i * 0x9Du) ^ (i >> 8)); }

void canary_alloc(canary_buf *g, size_t bytes, size_t shift) {
  g->fenced = 0;
  g->pre = GUARD_BYTES + shift;
  g->bytes = bytes;
  g->total = (g->pre + bytes + GUARD_BYTES + 63) / 64 * 64;
  g->raw = xalloc(g->total);
  for (size_t i = 0; i < g->total; i++) g->raw[i] = canary_byte(i);
  g->p = g->raw + g->pre;
}

void canary_alloc_fenced(canary_buf *g, size_t bytes, int side) {
  memset(g, 0, sizeof *g);
  region_open(&g->r, bytes);
  g->fenced = side;
  g->bytes = bytes;
  g->p = region_place(&g->r, bytes, side == 1);
}

void canary_free(canary_buf *g) {
  if (g->fenced)
    region_close(&g->r);
  else
    free(g->raw);
  memset(g, 0, sizeof *g);
}

void canary_reset(canary_buf *g) {
  if (g->fenced) return;
  for (size_t i = 0; i < g->total; i++) g->raw[i] = canary_byte(i);
}

int canary_guards_ok(const canary_buf *g) {
  if (g->fenced) return 1; /* the fence pages guard it */
  for (size_t i = 0; i < g->pre; i++)
    if (g->raw[i] != canary_byte(i)) return 0;
  for (size_t i = g->pre + g->bytes; i < g->total; i++)
    if (g->raw[i] != canary_byte(i)) return 0;
  return 1;
}

int canary_untouched(const canary_buf *g) {
  if (g->fenced) return 1;
  for (size_t i = 0; i < g->total; i++)
    if (g->raw[i] != canary_byte(i)) return 0;
  return 1;
}
