#include "env.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static dlc_env_settings settings;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static int env_int(const char *name) {
  const char *v = getenv(name);
  if (!v || !*v) return 0;
  char *end;
  long n = strtol(v, &end, 10);
  return (*end == 0 && n > 0 && n < 1 << 20) ? (int)n : 0;
}

static void read_env(void) {
  const char *isa = getenv("DLCONV_ISA");
  settings.isa_cap = DLCONV_ISA_AUTO;
  if (isa) {
    if (!strcmp(isa, "generic")) settings.isa_cap = DLCONV_ISA_GENERIC;
    else if (!strcmp(isa, "avx2")) settings.isa_cap = DLCONV_ISA_AVX2;
    else if (!strcmp(isa, "avx512")) settings.isa_cap = DLCONV_ISA_AVX512;
    else if (!strcmp(isa, "neon")) settings.isa_cap = DLCONV_ISA_NEON;
  }
  settings.num_threads = env_int("DLCONV_NUM_THREADS");
  settings.verbose = env_int("DLCONV_VERBOSE");
  settings.verify = env_int("DLCONV_VERIFY");
}

const dlc_env_settings *dlc_env(void) {
  pthread_once(&once, read_env);
  return &settings;
}
