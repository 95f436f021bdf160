/* env.h - the DLCONV_* environment variables, read once at the first call. */
#ifndef DLC_ENV_H
#define DLC_ENV_H

#include "dlconv.h"

typedef struct dlc_env_settings {
  dlconv_isa isa_cap;   /* DLCONV_ISA: the best ISA AUTO may pick (AUTO = no cap) */
  int num_threads;      /* DLCONV_NUM_THREADS, 0 = unset */
  int verbose;          /* DLCONV_VERBOSE: 1 plan lines, 2 also execute lines */
  int verify;           /* DLCONV_VERIFY */
} dlc_env_settings;

const dlc_env_settings *dlc_env(void);

#endif
