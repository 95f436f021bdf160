/* Checked allocation (alloc.h). */
#include "alloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void test_die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("test: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(2);
}

static void *aligned_lines(size_t bytes, size_t extra_lines) {
  const size_t total = (bytes + 63) / 64 * 64 + 64 * extra_lines;
  void *p = aligned_alloc(64, total ? total : 64);
  if (!p) test_die("out of memory (%zu bytes)", total);
  return p;
}

void *xalloc(size_t bytes) { return aligned_lines(bytes, 0); }
void *xalloc_slack(size_t bytes) { return aligned_lines(bytes, 1); }

void *xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) test_die("out of memory (%zu bytes)", bytes);
  return p;
}

float *dup_floats(const float *p, size_t n) {
  float *q = xmalloc(n * sizeof(float) + 4);
  if (n) memcpy(q, p, n * sizeof(float));
  return q;
}
