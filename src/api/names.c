/* The words the library prints for its enums. */
#include "names.h"

const char *dlc_algo_name(dlconv_algo a) {
  static const char *names[] = {"auto", "direct", "im2col_gemm", "spatial_pack", "gspc", "sparse_csr"};
  return (unsigned)a <= DLCONV_ALGO_SPARSE_CSR ? names[a] : "?";
}

int dlc_algo_is_concrete(dlconv_algo a) { return a >= DLCONV_ALGO_DIRECT && a <= DLCONV_ALGO_SPARSE_CSR; }

const char *dlc_isa_name(dlconv_isa i) {
  static const char *names[] = {"auto", "generic", "avx2", "avx512", "neon", "cuda"};
  return (unsigned)i <= DLCONV_ISA_CUDA ? names[i] : "?";
}
