/* Names, ISAs and (algorithm, ISA) pairs of the API tests (names.h). */
#include "names.h"

#include <string.h>

static const char *const ALGO_NAMES[] = {"auto", "direct", "im2col", "spack", "gspc", "csr"};
static const char *const ISA_NAMES[] = {"auto", "generic", "avx2", "avx512", "neon", "cuda"};


const char *algo_name(int a) { return (a >= 0 && a < N_ALGOS) ? ALGO_NAMES[a] : "?"; }

const char *isa_name(int i) { return (i >= 0 && i < N_ISAS) ? ISA_NAMES[i] : "?"; }

const char *dtype_name(dlconv_dtype t) {
  return t == DLCONV_F16 ? "F16" : t == DLCONV_U8 ? "U8" : t == DLCONV_S8 ? "S8" : t == DLCONV_F32 ? "F32" : "?";
}

int algo_from_name(const char *s) {
  for (int a = 0; a < N_ALGOS; a++)
    if (!strcmp(s, ALGO_NAMES[a])) return a;
  return -1;
}

int cpu_isas(dlconv_isa *out) {
  int n = 0;
  for (int v = DLCONV_ISA_GENERIC; v < N_ISAS && n < MAX_CPU_ISAS; v++)
    if (v != DLCONV_ISA_CUDA && dlconv_isa_available((dlconv_isa)v) == 1)   /* CUDA: device memory, test_cuda.c */
      out[n++] = (dlconv_isa)v;
  return n;
}

int all_pairs(pair *out) {
  dlconv_isa isas[1 + MAX_CPU_ISAS];
  const int ni = cpu_isas(isas + 1) + 1;
  int n = 0;
  isas[0] = DLCONV_ISA_AUTO;
  for (int a = 0; a < N_ALGOS; a++)
    for (int i = 0; i < ni; i++) out[n++] = (pair){(dlconv_algo)a, isas[i]};
  return n;
}

int pair_required(int algo, int isa) {
  static const int REQUIRED[N_ALGOS][N_ISAS] = {
      /*                          auto generic avx2 avx512 neon cuda */
      [DLCONV_ALGO_AUTO] = {1, 1, 1, 1, 1, 0},        [DLCONV_ALGO_DIRECT] = {1, 1, 1, 1, 1, 0},
      [DLCONV_ALGO_IM2COL_GEMM] = {1, 1, 1, 1, 1, 0}, [DLCONV_ALGO_SPATIAL_PACK] = {1, 1, 1, 1, 1, 0},
      [DLCONV_ALGO_GSPC] = {1, 1, 1, 1, 1, 0},        [DLCONV_ALGO_SPARSE_CSR] = {1, 1, 1, 1, 1, 0},
  };
  if (algo < 0 || algo >= N_ALGOS || isa < 0 || isa >= N_ISAS) return 0;
  return REQUIRED[algo][isa] && (isa == DLCONV_ISA_AUTO || dlconv_isa_available((dlconv_isa)isa) == 1);
}
