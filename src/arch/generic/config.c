/* The portable C kernel table: every family, on every machine. */
#include "../families.h"

static const dlc_isa_kernels table = {
    .isa = DLCONV_ISA_GENERIC,
    .name = "generic",
    .direct = &dlc_f32_direct__generic,
    .gemm = &dlc_f32_gemm__generic,
    .spack = &dlc_f32_spack__generic,
    .gspc = &dlc_f32_gspc__generic,
    .csr = &dlc_f32_csr__generic,
    .f16_gemm = &dlc_f16_gemm__generic,
    .q8_gemm = &dlc_q8_gemm__generic,
    .lowp_dw = &dlc_lowp_dw__generic,
    .lowp_gspc = &dlc_lowp_gspc__generic,
    .q8_csr = &dlc_q8_csr__generic,
};

const dlc_isa_kernels *dlc_config_generic(void) { return &table; }
