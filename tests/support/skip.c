/* Honest SKIP (skip.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "skip.h"

static size_t skipped;
static char first_why[256];

void skip_test(const char *test, const char *why) {
  print_message("[ %s ] skipped: %s\n", test, why);
  if (!skipped++) snprintf(first_why, sizeof first_why, "%s", why);
  skip();
}

int run_group(const char *group, const struct CMUnitTest *tests, size_t n) {
  skipped = 0;
  const int failed = _cmocka_run_group_tests(group, tests, n, NULL, NULL);
  if (failed || n == 0 || skipped < n) return failed;
  printf("SKIP: every test skipped (%s)\n", first_why);
  fflush(stdout);
  return 77;
}
