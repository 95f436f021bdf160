/* env.h - the DLCONV_* environment variables (and OMP_NUM_THREADS), read once at the first call.
   Unknown or malformed DLCONV_* values are ignored with one warning on stderr (env.c). */
#ifndef DLC_ENV_H
#define DLC_ENV_H

#include "dlconv.h"

/* The most threads a default (num_threads 0) plan takes, whatever the machine or the variables say. */
#define DLC_MAX_DEFAULT_THREADS 1024

typedef struct dlc_env_settings {
  dlconv_isa isa_cap;   /* DLCONV_ISA: the best ISA AUTO may pick (AUTO = no cap) */
  int num_threads;      /* DLCONV_NUM_THREADS, 0 = unset */
  int verbose;          /* DLCONV_VERBOSE: 1 plan lines, 2 also execute lines */
  int verify;           /* DLCONV_VERIFY */
  int omp_threads;      /* OMP_NUM_THREADS's first count, 0 = unset or not a count */
} dlc_env_settings;

const dlc_env_settings *dlc_env(void);

#endif
