/* The AArch64 Neon kernel table, filled once: the fp32 families over src/arch/arm_neon/vec.h (base
   armv8-a, so every AArch64 core runs them). The F16 and int8 families stay NULL: planned with
   neon, those dtypes answer UNSUPPORTED and AUTO runs them on the generic table.
   Compiled without ISA flags (src/arch/meson.build): this file only copies pointers. */
#include <pthread.h>

#include "../../core/cpu.h"
#include "../families.h"

static dlc_isa_kernels table;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void fill(void) {
  const dlc_cpu_features *f = dlc_cpu();
  table = (dlc_isa_kernels){
      .isa = DLCONV_ISA_NEON,
      .name = "neon",
      .direct = &dlc_f32_direct__neon,
      .gemm = &dlc_f32_gemm__neon,
      .spack = &dlc_f32_spack__neon,
      .gspc = &dlc_f32_gspc__neon,
      .csr = &dlc_f32_csr__neon,
  };
  (void)f;
}

const dlc_isa_kernels *dlc_config_neon(void) {
  pthread_once(&once, fill);
  return &table;
}
