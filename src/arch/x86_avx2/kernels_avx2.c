/* The avx2 kernel table. A family still NULL answers UNSUPPORTED when avx2 is forced;
   replace its line by the descriptor once the family's avx2 file defines it. */
#include "../../core/kernels.h"

const dlc_isa_kernels dlc_kernels_avx2 = {
    .isa = DLCONV_ISA_AVX2,
    .name = "avx2",
    .direct = &dlc_f32_direct__avx2,
    .gemm = &dlc_f32_gemm__avx2,
    .spack = &dlc_f32_spack__avx2,
    .gspc = &dlc_f32_gspc__avx2,
    .csr = &dlc_f32_csr__avx2,
    .f16_gemm = &dlc_f16_gemm__avx2,
    .q8_gemm = &dlc_q8_gemm__avx2,
    .lowp_dw = &dlc_lowp_dw__avx2,
    .lowp_gspc = &dlc_lowp_gspc__avx2,
    .q8_csr = &dlc_q8_csr__avx2,
};
