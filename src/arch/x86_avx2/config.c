/* The avx2 kernel table, filled once from cpuid: the AVX2 + FMA + F16C families, with the int8
   gemm, csr and gspc families on AVX-VNNI (vpdpwssd, the VEX form) where the CPU has it. vpdpwssd
   is vpmaddwd + vpaddd in one, on the same packed formats, with the same results bit for bit
   (x86_avx2/q8_gemm_tiles.h, template/q8_csr.h and template/lowp_gspc.h, whose vi_dot2_s16 is
   vpdpwssd in a file built with -mavxvnni), so the rest of the table stays. A caller capping at
   avx2 gets no EVEX instruction.

   Compiled without ISA flags (src/arch/meson.build): this file only copies pointers, and runs
   before anyone knows the CPU has AVX2. */
#include <pthread.h>

#include "../../core/cpu.h"
#include "../families.h"

static dlc_isa_kernels table;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void fill(void) {
  const dlc_cpu_features *f = dlc_cpu();
  table = (dlc_isa_kernels){
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
#if defined(DLC_HAVE_AVXVNNI)
  if (f->avx_vnni) {
    table.q8_gemm = &dlc_q8_gemm__avxvnni;
    table.q8_csr = &dlc_q8_csr__avxvnni;
    table.lowp_gspc = &dlc_lowp_gspc__avxvnni;
  }
#endif
  (void)f;
}

const dlc_isa_kernels *dlc_config_avx2(void) {
  pthread_once(&once, fill);
  return &table;
}
