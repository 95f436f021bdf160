/* Sentinel values (sentinel.h). */
#include "sentinel.h"

#include <stdint.h>
#include <string.h>

float sentinel_nan(void) {
  uint32_t u = 0x7FC5A5A5u;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

void fill_nan(void *p, size_t bytes) {
  float s = sentinel_nan();
  for (size_t i = 0; i + 4 <= bytes; i += 4) memcpy((char *)p + i, &s, 4);
}
