/* The AArch64 Neon kernel table. A family still NULL answers UNSUPPORTED when neon is forced. */
#include "../../core/kernels.h"

const dlc_isa_kernels dlc_kernels_neon = {
    .isa = DLCONV_ISA_NEON,
    .name = "neon",
    .direct = NULL,
    .gemm = NULL,
    .spack = NULL,
    .gspc = NULL,
    .csr = NULL,
};
