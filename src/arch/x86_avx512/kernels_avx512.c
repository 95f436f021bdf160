/* The avx512 kernel table. A family still NULL answers UNSUPPORTED when avx512 is forced;
   replace its line by the descriptor once the family's avx512 file defines it. */
#include "../../core/kernels.h"

const dlc_isa_kernels dlc_kernels_avx512 = {
    .isa = DLCONV_ISA_AVX512,
    .name = "avx512",
    .direct = &dlc_f32_direct__avx512,
    .gemm = &dlc_f32_gemm__avx512,
    .spack = &dlc_f32_spack__avx512,
    .gspc = &dlc_f32_gspc__avx512,
    .csr = &dlc_f32_csr__avx512,
};
