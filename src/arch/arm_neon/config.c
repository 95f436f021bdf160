/* The AArch64 Neon kernel table, filled once from getauxval (src/core/cpu.c): the fp32 families
   over src/arch/arm_neon/vec.h, the int8 gemm on SMLAL and the F16 gemm on FCVTL + FMLA, all base
   armv8-a, so every AArch64 core (Cortex-A53 too) runs them; with FEAT_FHM (asimdfhm) the F16
   gemm on FMLAL / FMLAL2, the same sums bit for bit; with FEAT_DotProd (asimddp) the u8 x s8 quad
   gemm (q8_d4) on SDOT with its gemv, transposed tile and fused store, which the direct, spatial
   pack and dense gemv drivers prefer to the SMLAL pairs (still the store, and the whole int8 path
   on cores without it, Cortex-A53). The F16/int8 depthwise rows, GSPC and int8 csr are the
   templates of src/arch/template/ over the neon vec.h, armv8-a too; the other quad families
   (q8_igemm, q8_dwn, q8_dw4, q8_dwc) stay NULL.
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
      .f16_gemm = &dlc_f16_gemm__neon,
      .q8_gemm = &dlc_q8_gemm__neon,
      .lowp_dw = &dlc_lowp_dw__neon,
      .lowp_gspc = &dlc_lowp_gspc__neon,
      .q8_csr = &dlc_q8_csr__neon,
  };
#if defined(DLC_HAVE_NEONFHM)
  if (f->neon_fhm) table.f16_gemm = &dlc_f16_gemm__neonfhm;
#endif
#if defined(DLC_HAVE_NEONDOT)
  if (f->neon_dotprod) table.q8_d4 = &dlc_q8d4_gemm__neondot;
#endif
  (void)f;
}

const dlc_isa_kernels *dlc_config_neon(void) {
  pthread_once(&once, fill);
  return &table;
}
