/* sentinel.h - values a kernel or the library must never leave behind where it writes: an output
 * point never written still holds one and fails the check. */
#ifndef DLC_TESTS_SUPPORT_SENTINEL_H
#define DLC_TESTS_SUPPORT_SENTINEL_H

#include <stddef.h>

/* A quiet NaN with a payload: an output point the library never writes stays NaN and fails. */
float sentinel_nan(void);
void fill_nan(void *p, size_t bytes);

#endif
