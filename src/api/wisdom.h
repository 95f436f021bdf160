/* wisdom.h - the process-wide cache of measured algorithm choices (tier 3 of AUTO). */
#ifndef DLC_WISDOM_H
#define DLC_WISDOM_H

#include <stddef.h>

#include "../core/plan.h"

/* The key of a plan's shape, dtype, layout, ISA and thread count, one text token. */
void dlc_wisdom_key(const dlconv_plan *p, char *buf, size_t size);
/* 1 and *algo when the key was measured (or imported). */
int dlc_wisdom_lookup(const char *key, dlconv_algo *algo);
void dlc_wisdom_remember(const char *key, dlconv_algo algo);

#endif
