/* skip.h - honest SKIP. A test program whose every test skipped (no family on this CPU, nothing to
 * run) exits with 77, meson's SKIP, and says why, rather than passing on no case at all; one that
 * ran some case passes or fails on them as before.
 *
 * Include after <cmocka.h>. */
#ifndef DLC_TESTS_SUPPORT_SKIP_H
#define DLC_TESTS_SUPPORT_SKIP_H

#include <stddef.h>

/* Ends the running cmocka test as skipped (cmocka's skip()), having said why on stdout. */
void skip_test(const char *test, const char *why);

/* Runs tests[n] as cmocka_run_group_tests does, under the group name group; returns the count of
   tests that failed, or 77 where none failed and every one of them skipped (skip_test). */
int run_group(const char *group, const struct CMUnitTest *tests, size_t n);

/* The same for the test functions fns[n], each named as the comma-separated list names spells it:
     return RUN_TESTS(test_edges, test_wide_ldc, test_nan);
   runs them as the group "tests" (RUN_GROUP("api_env_isa", ...) under a name of its own). */
int run_named_tests(const char *group, const char *names, const CMUnitTestFunction *fns, size_t n);
#define RUN_GROUP(group, ...)                                                 \
  run_named_tests((group), #__VA_ARGS__, (const CMUnitTestFunction[]){__VA_ARGS__}, \
            sizeof((const CMUnitTestFunction[]){__VA_ARGS__}) / sizeof(CMUnitTestFunction))
#define RUN_TESTS(...) RUN_GROUP("tests", __VA_ARGS__)

#endif
