/* The avx512 kernel table. A family still NULL answers UNSUPPORTED when avx512 is forced;
   replace its line by the descriptor once the family's avx512 file defines it.

   F16 gemm has its own zmm family; the other F16 and int8 families without an avx512 version are
   lent by avx2 (every CPU that runs this table runs avx2, FMA and F16C, which kernels.c checks),
   so forcing avx512 or capping at it keeps those paths instead of answering UNSUPPORTED; plans
   name the kernels they run. kernels.c swaps in the VNNI int8 families where cpuid has them. */
#include "../../core/kernels.h"

const dlc_isa_kernels dlc_kernels_avx512 = {
    .isa = DLCONV_ISA_AVX512,
    .name = "avx512",
    .direct = &dlc_f32_direct__avx512,
    .gemm = &dlc_f32_gemm__avx512,
    .spack = &dlc_f32_spack__avx512,
    .gspc = &dlc_f32_gspc__avx512,
    .csr = &dlc_f32_csr__avx512,
    .f16_gemm = &dlc_f16_gemm__avx512,
    .q8_gemm = &dlc_q8_gemm__avx2,
    .lowp_dw = &dlc_lowp_dw__avx2,
    .lowp_gspc = &dlc_lowp_gspc__avx2,
    .q8_csr = &dlc_q8_csr__avx2,
};
