/* The DLCONV_* environment variables, read once. Their values are words in any case, blanks
   around them ignored; a value that is not understood is ignored (the setting keeps its default)
   and named in one warning on stderr, printed once per process when DLCONV_VERBOSE is set (to any
   value but an explicit off: the contract's "Quiet" rule, the library prints nothing otherwise; a
   malformed DLCONV_VERBOSE is set, so it is named). */
#include "env.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static dlc_env_settings settings;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The warnings, held until DLCONV_VERBOSE is read: one per variable at most. */
static char warnings[6][224];
static int n_warnings;
static int verbose_malformed;

static void warn_bad(const char *name, const char *value, const char *expected) {
  if (n_warnings < (int)(sizeof warnings / sizeof warnings[0]))
    snprintf(warnings[n_warnings++], sizeof warnings[0],
             "dlconv: warning: %s=\"%s\" is not understood (expected %s); ignored\n", name, value, expected);
}

/* The value without surrounding blanks, in buf; NULL when unset or blank. */
static const char *env_value(const char *name, char *buf, size_t n) {
  const char *v = getenv(name);
  if (!v) return NULL;
  while (*v == ' ' || *v == '\t') v++;
  snprintf(buf, n, "%s", v);
  size_t len = strlen(buf);
  while (len && (buf[len - 1] == ' ' || buf[len - 1] == '\t' || buf[len - 1] == '\n')) buf[--len] = 0;
  return len ? buf : NULL;
}

/* A decimal integer in [lo, hi], all of s; -1 when s is not one. */
static long parse_long(const char *s, long lo, long hi) {
  char *end;
  long n = strtol(s, &end, 10);
  return (end != s && *end == 0 && n >= lo && n <= hi) ? n : -1;
}

/* Levels: 0..hi, or a word for 0 / 1. Unset: 0. */
static int env_level(const char *name, long hi) {
  char buf[64];
  const char *v = env_value(name, buf, sizeof buf);
  if (!v) return 0;
  long n = parse_long(v, 0, hi);
  if (n >= 0) return (int)n;
  static const char *const on[] = {"on", "yes", "true"}, *const off[] = {"off", "no", "false"};
  for (int i = 0; i < 3; i++) {
    if (!strcasecmp(v, on[i])) return 1;
    if (!strcasecmp(v, off[i])) return 0;
  }
  char expected[96];
  snprintf(expected, sizeof expected, "a number from 0 to %ld, on/off, yes/no or true/false", hi);
  warn_bad(name, v, expected);
  if (!strcmp(name, "DLCONV_VERBOSE")) verbose_malformed = 1;
  return 0;
}

static int env_threads(const char *name) {
  char buf[64];
  const char *v = env_value(name, buf, sizeof buf);
  if (!v) return 0;
  long n = parse_long(v, 1, DLC_MAX_DEFAULT_THREADS);
  if (n > 0) return (int)n;
  char expected[64];
  snprintf(expected, sizeof expected, "an integer from 1 to %d", DLC_MAX_DEFAULT_THREADS);
  warn_bad(name, v, expected);
  return 0;
}

static dlconv_isa env_isa(void) {
  char buf[64];
  const char *v = env_value("DLCONV_ISA", buf, sizeof buf);
  if (!v) return DLCONV_ISA_AUTO;
  static const struct { const char *name; dlconv_isa isa; } isas[] = {
    {"auto", DLCONV_ISA_AUTO}, {"generic", DLCONV_ISA_GENERIC}, {"avx2", DLCONV_ISA_AVX2},
    {"avx512", DLCONV_ISA_AVX512}, {"neon", DLCONV_ISA_NEON}};
  for (size_t i = 0; i < sizeof isas / sizeof isas[0]; i++)
    if (!strcasecmp(v, isas[i].name)) return isas[i].isa;
  warn_bad("DLCONV_ISA", v, "generic, avx2, avx512, neon or auto");
  return DLCONV_ISA_AUTO;
}

static void read_env(void) {
  settings.isa_cap = env_isa();
  settings.num_threads = env_threads("DLCONV_NUM_THREADS");
  settings.verbose = env_level("DLCONV_VERBOSE", 9);
  settings.verify = env_level("DLCONV_VERIFY", 1 << 20);
  settings.omp_threads = 0;
  /* OpenMP's own variable: a comma list (threads per nesting level), of which the first counts.
     Its syntax is the OpenMP runtime's to check: a value that is not a count is passed over. */
  const char *omp = getenv("OMP_NUM_THREADS");
  if (omp) {
    char *end;
    long n = strtol(omp, &end, 10);
    if (end != omp && (*end == 0 || *end == ',') && n > 0)
      settings.omp_threads = (int)(n < DLC_MAX_DEFAULT_THREADS ? n : DLC_MAX_DEFAULT_THREADS);
  }
  if (settings.verbose > 0 || verbose_malformed)
    for (int i = 0; i < n_warnings; i++) fputs(warnings[i], stderr);
}

const dlc_env_settings *dlc_env(void) {
  pthread_once(&once, read_env);
  return &settings;
}
