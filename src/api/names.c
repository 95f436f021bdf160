/* The words the library prints for its enums, and their public to-string functions. */
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

const char *dlc_dtype_name(dlconv_dtype d) {
  static const char *names[] = {"f32", "f16", "u8", "s8", "s32"};
  return (unsigned)d <= DLCONV_S32 ? names[d] : "?";
}

const char *dlc_layout_name(dlconv_layout l) {
  return l == DLCONV_NCHW ? "nchw" : l == DLCONV_NHWC ? "nhwc" : "?";
}

/* Public: the same words, "unknown" for a value outside the enum. */
static const char *known(const char *word) { return word[0] == '?' ? "unknown" : word; }
const char *dlconv_algo_string(dlconv_algo a) { return known(dlc_algo_name(a)); }
const char *dlconv_isa_string(dlconv_isa i) { return known(dlc_isa_name(i)); }
const char *dlconv_dtype_string(dlconv_dtype d) { return known(dlc_dtype_name(d)); }
const char *dlconv_layout_string(dlconv_layout l) { return known(dlc_layout_name(l)); }
