/* skip.h - a test that can run no case on this machine (no family on this CPU) says why and ends as
 * cmocka's SKIPPED, rather than passing on nothing.
 *
 * Include after <cmocka.h>. */
#ifndef DLC_TESTS_SUPPORT_SKIP_H
#define DLC_TESTS_SUPPORT_SKIP_H

#include <stddef.h>

/* Ends the running cmocka test as skipped (cmocka's skip()), having said why on stdout. */
void skip_test(const char *test, const char *why);

/* Runs tests[n] as cmocka_run_group_tests does, under the group name group; returns the count of
   tests that failed. */
int run_group(const char *group, const struct CMUnitTest *tests, size_t n);
#define RUN_TESTS(tests) run_group(#tests, (tests), sizeof(tests) / sizeof((tests)[0]))

#endif
