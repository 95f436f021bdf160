/* rng.h - the tests' random numbers: every case is reproducible from a seed.
 *
 * Three generators, each kept bit for bit as the tests first drew from it, so every test still
 * sees the cases it always saw:
 *   rng_t        splitmix64 streams a test seeds per case (the API tests);
 *   rng_state    one 64-bit LCG stream per program (Knuth's MMIX constants; the micro-kernel
 *                tests), set by the test (main, or a test that wants the same cases whatever ran
 *                before it) and drawn with next_u32 and the helpers below;
 *   xorshift     one xorshift64 stream per program (test_ukernel_csr). */
#ifndef DLC_TESTS_SUPPORT_RNG_H
#define DLC_TESTS_SUPPORT_RNG_H

#include <stddef.h>
#include <stdint.h>

/* ---- splitmix64 streams --------------------------------------------------------------------- */

typedef struct rng_t {
  uint64_t s;
} rng_t;

uint64_t rng_next(rng_t *r);
/* The stream of seed; salt tells apart tests that would otherwise share their streams. */
rng_t rng_seed_salted(uint64_t seed, uint64_t salt);
static inline rng_t rng_seed(uint64_t seed) { return rng_seed_salted(seed, 1); }
/* uniform integer in [lo, hi] */
int rng_int(rng_t *r, int lo, int hi);
/* uniform in [0, 1) with 53 random bits */
double rng_unit(rng_t *r);
double rng_range(rng_t *r, double lo, double hi);
float rng_float(rng_t *r, float lo, float hi);
int rng_pick(rng_t *r, const int *v, int n);
int rng_chance(rng_t *r, double p);

/* ---- the program's LCG stream --------------------------------------------------------------- */

extern uint64_t rng_state;

uint32_t next_u32(void);
/* uniform in [lo, hi] (hi - lo < 2^64) from two draws */
int64_t irand(int64_t lo, int64_t hi);
/* uniform in [lo, hi] from one draw (hi - lo < 2^32) */
int irand32(int lo, int hi);
/* [-1, 1) in steps of 2^-23 */
float frand(void);
/* [0, 1) in steps of 2^-32 */
double urand(void);
/* log-uniform in [lo, hi] */
double log_uniform(double lo, double hi);
size_t pick(const size_t *v, size_t n);

/* ---- the program's xorshift stream ---------------------------------------------------------- */

extern uint64_t xorshift_state;

uint32_t xorshift_u32(void);
/* [-1, 1] in steps of 1e-4 */
float xorshift_float(void);

#endif
