/* Every allocation of the library goes through here: one place to align, to count, and (in
   tests) to fail the k-th call on purpose. */
#include <stdlib.h>
#include <string.h>

#include "util.h"

void *dlc_malloc(size_t bytes) {
  void *p = NULL;
  size_t n = dlc_round_up(bytes ? bytes : 1, DLC_ALIGN);
  if (n < bytes) return NULL; /* rounding overflowed */
  if (posix_memalign(&p, DLC_ALIGN, n) != 0) return NULL;
  return p;
}

void *dlc_calloc(size_t bytes) {
  void *p = dlc_malloc(bytes);
  if (p) memset(p, 0, bytes);
  return p;
}

void dlc_free(void *p) { free(p); }
