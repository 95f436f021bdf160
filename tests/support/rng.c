/* The tests' random numbers (rng.h). */
#include "rng.h"

#include <math.h>

uint64_t rng_next(rng_t *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

rng_t rng_seed_salted(uint64_t seed, uint64_t salt) {
  rng_t r = {seed * 0x2545F4914F6CDD1Dull + salt};
  rng_next(&r);
  return r;
}

int rng_int(rng_t *r, int lo, int hi) { return lo + (int)(rng_next(r) % (uint64_t)((int64_t)hi - lo + 1)); }
double rng_unit(rng_t *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }
double rng_range(rng_t *r, double lo, double hi) { return lo + rng_unit(r) * (hi - lo); }
float rng_float(rng_t *r, float lo, float hi) { return lo + (float)rng_unit(r) * (hi - lo); }
int rng_pick(rng_t *r, const int *v, int n) { return v[rng_int(r, 0, n - 1)]; }
int rng_chance(rng_t *r, double p) { return rng_unit(r) < p; }

uint64_t rng_state = 0x2545F4914F6CDD1Dull;

uint32_t next_u32(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 32);
}

int64_t irand(int64_t lo, int64_t hi) {
  const uint64_t span = (uint64_t)(hi - lo) + 1;
  const uint64_t r = ((uint64_t)next_u32() << 32) | next_u32();
  return lo + (int64_t)(span ? r % span : r);
}

int irand32(int lo, int hi) { return lo + (int)(next_u32() % (uint32_t)(hi - lo + 1)); }
float frand(void) { return (float)(next_u32() >> 8) / 8388608.0f - 1.0f; }
double urand(void) { return (double)next_u32() / 4294967296.0; }
double log_uniform(double lo, double hi) { return exp(log(lo) + (log(hi) - log(lo)) * urand()); }
size_t pick(const size_t *v, size_t n) { return v[next_u32() % n]; }

uint64_t xorshift_state = 0x9E3779B97F4A7C15ull;

uint32_t xorshift_u32(void) {
  xorshift_state ^= xorshift_state << 13;
  xorshift_state ^= xorshift_state >> 7;
  xorshift_state ^= xorshift_state << 17;
  return (uint32_t)(xorshift_state >> 16);
}

float xorshift_float(void) { return (float)(xorshift_u32() % 20001) * 1e-4f - 1.0f; }
