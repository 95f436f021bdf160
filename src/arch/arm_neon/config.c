/* The AArch64 Neon kernel table. A family still NULL answers UNSUPPORTED when neon is forced;
   while every family is NULL the table is not offered at all (dlc_kernels_for answers NULL), so
   forcing neon says "not available" up front and AUTO runs the generic kernels. */
#include "../families.h"

static const dlc_isa_kernels table = {
    .isa = DLCONV_ISA_NEON,
    .name = "neon",
};

const dlc_isa_kernels *dlc_config_neon(void) {
  return table.direct || table.gemm || table.spack || table.gspc || table.csr ? &table : NULL;
}
