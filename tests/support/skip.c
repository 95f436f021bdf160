/* Honest SKIP (skip.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "alloc.h"
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

int run_named_tests(const char *group, const char *names, const CMUnitTestFunction *fns, size_t n) {
  struct CMUnitTest *tests = xmalloc(n * sizeof *tests);
  char *list = xmalloc(strlen(names) + 1), *at = list;
  strcpy(list, names);
  for (size_t i = 0; i < n; i++) {
    while (*at == ' ' || *at == ',') at++;
    char *end = at + strcspn(at, ", ");
    const int last = *end == 0;
    *end = 0;
    tests[i] = (struct CMUnitTest){at, fns[i], NULL, NULL, NULL};
    at = last ? end : end + 1;
  }
  const int rc = run_group(group, tests, n);
  free(list);
  free(tests);
  return rc;
}
