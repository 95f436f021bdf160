/* names.h - the API tests' names of algorithms, ISAs and dtypes, the CPU ISAs this machine has and
 * the (algorithm, ISA) pairs to plan with, and which of those must plan. Public header only. */
#ifndef DLC_TESTS_SUPPORT_NAMES_H
#define DLC_TESTS_SUPPORT_NAMES_H

#include "dlconv.h"

enum { N_ALGOS = 6, N_ISAS = 6 };

const char *algo_name(int a);
const char *isa_name(int i);
const char *dtype_name(dlconv_dtype t);

int algo_from_name(const char *s);

/* The CPU ISAs this machine (and build) has, GENERIC first: every dlconv_isa value named here
   (N_ISAS: the tests index their counts by it) but CUDA that dlconv_isa_available says 1 for, so that a
   new ISA is swept once it has its name above, without editing the tests. out has room for
   MAX_CPU_ISAS. */
#define MAX_CPU_ISAS 7
int cpu_isas(dlconv_isa *out);

/* An (algorithm, ISA) pair to plan with. */
typedef struct pair {
  dlconv_algo algo;
  dlconv_isa isa;
} pair;
/* Every algorithm with ISA AUTO and each CPU ISA: N_ALGOS * (1 + cpu_isas) pairs. */
#define MAX_PAIRS (N_ALGOS * (1 + MAX_CPU_ISAS))
int all_pairs(pair *out);

/* An explicit (algorithm, ISA) pair must plan (never UNSUPPORTED) where this says 1. Generic C
 * does every algorithm; AUTO algorithm works with every available ISA; ISA AUTO with an explicit
 * algorithm picks an ISA that has it. Flip an entry to 1 once that ISA's family has landed, so a
 * kernel family that silently disappears fails the suite instead of hiding in the skip counts. */
int pair_required(int algo, int isa);

#endif
