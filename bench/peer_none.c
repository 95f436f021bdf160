/* peer_none.c - the oneDNN peer when the bench was built without oneDNN. */
#include <stdio.h>
#include <string.h>

#include "peer_onednn.h"

int bench_onednn_available(char *desc, size_t len) {
  snprintf(desc, len, "this dlconv-bench was built without oneDNN (install libdnnl-dev and reconfigure)");
  return 0;
}

void bench_onednn_run(const bench_layer *l, const bench_data *d, int threads, const bench_options *o,
                      const bench_timing *t, bench_measure *blocked, bench_measure *user) {
  (void)l, (void)d, (void)threads, (void)o, (void)t;
  memset(blocked, 0, sizeof *blocked);
  memset(user, 0, sizeof *user);
  blocked->status = user->status = BENCH_SKIPPED;
}

void bench_onednn_shutdown(void) {}
