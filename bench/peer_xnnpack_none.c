/* peer_xnnpack_none.c - the XNNPACK peer when the bench was built without XNNPACK. */
#include <stdio.h>
#include <string.h>

#include "peer_xnnpack.h"

int bench_xnnpack_available(char *desc, size_t len) {
  snprintf(desc, len, "not built (install libxnnpack-dev and libpthreadpool-dev and reconfigure)");
  return 0;
}

void bench_xnnpack_run(const bench_layer *l, const bench_data *d, int threads, const bench_options *o,
                       const bench_timing *t, bench_measure *m) {
  (void)l, (void)d, (void)threads, (void)o, (void)t;
  memset(m, 0, sizeof *m);
  m->status = BENCH_SKIPPED;
}

void bench_xnnpack_shutdown(void) {}
