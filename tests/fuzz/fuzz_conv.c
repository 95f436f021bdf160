/* libFuzzer target: clang -fsanitize=fuzzer,address,undefined (meson -Dfuzz=true, see
 * scripts/test_fuzz.sh). Every input goes through dlconv_fuzz_one (fuzz_check.c); a failed
 * check prints its reproducer and aborts, so libFuzzer keeps the input as a crash. Keep what
 * it finds in tests/fuzz/regressions/ (the replay test runs them in every build). */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static char msg[4096];
  if (dlconv_fuzz_one(data, size, msg, sizeof msg)) {
    fprintf(stderr, "dlconv fuzz check failed: %s\n", msg);
    abort();
  }
  return 0;
}
