/* alloc.h - checked allocation: a test that cannot get its memory stops with a message instead of
 * running on a NULL pointer. Release with free(). */
#ifndef DLC_TESTS_SUPPORT_ALLOC_H
#define DLC_TESTS_SUPPORT_ALLOC_H

#include <stddef.h>

/* 64-byte aligned, the size rounded up to whole 64-byte lines (a vector kernel's loads of an
   aligned operand stay inside it). */
void *xalloc(size_t bytes);
/* The same with one line more: for operands a kernel may read a vector past (packed panels). */
void *xalloc_slack(size_t bytes);
/* Exactly bytes (at least 1), for valgrind and ASan to see one byte past the end. */
void *xmalloc(size_t bytes);
/* A copy of n floats (room for one more, so that n = 0 is a real allocation). */
float *dup_floats(const float *p, size_t n);

/* Stops the program (exit status 2) with what went wrong: for the environment failing a test
   (no memory, no mapping), not for a kernel's error. */
_Noreturn void test_die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
