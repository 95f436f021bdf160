/* test_common.h - what every API-level test includes: cmocka, the public header, the independent
 * oracle and the shared test support (support/): names and (algorithm, ISA) pairs, seeded random
 * streams, canary-guarded and fenced buffers, a caller thread pool, one layer's data with its
 * oracle result, the plan-execute-check runner and failure tallies.
 *
 * Only the public header is used: these tests see the library exactly as a user does. */
#ifndef DLCONV_TEST_COMMON_H
#define DLCONV_TEST_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlconv.h"
#include "oracle.h"
#include "support/alloc.h"
#include "support/canary.h"
#include "support/conv_data.h"
#include "support/layer.h"
#include "support/names.h"
#include "support/rng.h"
#include "support/run_case.h"
#include "support/sentinel.h"
#include "support/skip.h"
#include "support/tally.h"
#include "support/tpool.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#endif /* DLCONV_TEST_COMMON_H */
