/* Every allocation of the library goes through here: one place to align, to count, and (in the
   test build) to fail the k-th call on purpose (test_hooks.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "test_hooks.h"
#include "util.h"

static void *aligned(size_t bytes) {
  void *p = NULL;
  size_t n = dlc_round_up(bytes ? bytes : 1, DLC_ALIGN);
  if (n < bytes) return NULL; /* rounding overflowed */
  if (posix_memalign(&p, DLC_ALIGN, n) != 0) return NULL;
  return p;
}

#if defined(DLC_TEST_HOOKS)
/* The fault-injection hook. `armed` is the only thing the fast path reads (a relaxed load); the
   counters are touched only while a test has armed the hook. */
static atomic_int armed;
static atomic_long fail_at, attempts, live, fired;

void dlc_test_alloc_arm(long k) {
  atomic_store(&attempts, 0);
  atomic_store(&live, 0);
  atomic_store(&fired, 0);
  atomic_store(&fail_at, k);
  atomic_store(&armed, 1);
}

void dlc_test_alloc_disarm(void) { atomic_store(&armed, 0); }
long dlc_test_alloc_count(void) { return atomic_load(&attempts); }
long dlc_test_alloc_live(void) { return atomic_load(&live); }
int dlc_test_alloc_fired(void) { return atomic_load(&fired) != 0; }

static void *hooked(size_t bytes) {
  long k = atomic_fetch_add(&attempts, 1) + 1;
  if (k == atomic_load(&fail_at)) {
    atomic_store(&fired, 1);
    return NULL;
  }
  void *p = aligned(bytes);
  if (p) atomic_fetch_add(&live, 1);
  return p;
}
#define ARMED() __builtin_expect(atomic_load_explicit(&armed, memory_order_relaxed), 0)
#else
#define ARMED() 0
#define hooked aligned
#endif

void *dlc_malloc(size_t bytes) {
  if (ARMED()) return hooked(bytes);
  return aligned(bytes);
}

void *dlc_calloc(size_t bytes) {
  void *p = dlc_malloc(bytes);
  if (p) memset(p, 0, bytes);
  return p;
}

void dlc_free(void *p) {
#if defined(DLC_TEST_HOOKS)
  if (p && ARMED()) atomic_fetch_sub(&live, 1);
#endif
  free(p);
}
