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
#define RUN_TESTS(tests) run_group(#tests, (tests), sizeof(tests) / sizeof((tests)[0]))

#endif
