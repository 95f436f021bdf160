/* families.h - every kernel family this build defines, per ISA, for the config files
 * (src/arch/<isa>/config.c) that put them in their tables. Nothing else includes it. */
#ifndef DLC_ARCH_FAMILIES_H
#define DLC_ARCH_FAMILIES_H

#include "../ukernel/config.h"

/* Family descriptors, defined in src/arch/<isa>/f32_<family>_<isa>.c. */
#define DLC_DECLARE_FAMILIES(isa)                     \
  extern const dlc_f32_direct_family dlc_f32_direct__##isa; \
  extern const dlc_f32_gemm_family dlc_f32_gemm__##isa;     \
  extern const dlc_f32_spack_family dlc_f32_spack__##isa;   \
  extern const dlc_f32_gspc_family dlc_f32_gspc__##isa;     \
  extern const dlc_f32_csr_family dlc_f32_csr__##isa;
DLC_DECLARE_FAMILIES(generic)
DLC_DECLARE_FAMILIES(avx2)
DLC_DECLARE_FAMILIES(avx512)
DLC_DECLARE_FAMILIES(neon)
extern const dlc_f16_gemm_family dlc_f16_gemm__generic, dlc_f16_gemm__avx2, dlc_f16_gemm__avx512;
extern const dlc_q8_gemm_family dlc_q8_gemm__generic, dlc_q8_gemm__avx2;
/* AArch64: the int8 gemm on SMLAL (every core), the F16 gemm on FCVTL + FMLA, and on FMLAL where
   the CPU has FEAT_FHM (src/arch/arm_neon/config.c) */
extern const dlc_q8_gemm_family dlc_q8_gemm__neon;
extern const dlc_f16_gemm_family dlc_f16_gemm__neon, dlc_f16_gemm__neonfhm;
/* AArch64 with FEAT_DotProd (asimddp): the u8 x s8 quad family on SDOT (arm_neon/q8_gemm_neondot.c) */
extern const dlc_q8d4_gemm_family dlc_q8d4_gemm__neondot;
/* AArch64, every core: the F16/int8 depthwise rows, GSPC and int8 csr templates over the neon vec.h */
extern const dlc_lowp_dw_family dlc_lowp_dw__neon;
extern const dlc_lowp_gspc_family dlc_lowp_gspc__neon;
extern const dlc_q8_csr_family dlc_q8_csr__neon;
/* The int8 gemm, csr and gspc families on vpdpwssd (x86_avx2/q8_gemm_tiles.h, template/q8_csr.h, template/lowp_gspc.h),
   where the compiler has the instruction: src/arch/x86_avx2/config.c and x86_avx512/config.c put them in the avx2 / avx512 table on
   CPUs with AVX-VNNI / AVX512-VNNI. */
extern const dlc_q8_gemm_family dlc_q8_gemm__avxvnni, dlc_q8_gemm__avx512vnni;
extern const dlc_q8_csr_family dlc_q8_csr__avxvnni, dlc_q8_csr__avx512vnni;
extern const dlc_q8d4_gemm_family dlc_q8d4_gemm__avx512vnni;
extern const dlc_q8_igemm_family dlc_q8_igemm__avx512vnni;
extern const dlc_q8_dwn_family dlc_q8_dwn__avx512vnni;
extern const dlc_q8_gcn_family dlc_q8_gcn__avx512vnni;
extern const dlc_q8_dw4_family dlc_q8_dw4__avx512vbmi;
/* fp32 NCHW with pixels in the lanes (template/f32_dnchw.h), AVX-512 only: 32 registers hold its tiles */
extern const dlc_f32_dnchw_family dlc_f32_dnchw__avx512;
extern const dlc_q8_dwc_family dlc_q8_dwc__avx512vbmi;
void dlc_q8_store_t__avx512vbmi(size_t np, size_t m, const int32_t *c, size_t ldc, const dlc_q8_params *q, size_t c0,
                                void *y, size_t ldy);
extern const dlc_lowp_gspc_family dlc_lowp_gspc__avxvnni, dlc_lowp_gspc__avx512vnni;
/* the same on 16 zmm lanes (the avx512 table's) */
extern const dlc_lowp_gspc_family dlc_lowp_gspc__avx512vnni_zmm;
extern const dlc_lowp_dw_family dlc_lowp_dw__generic, dlc_lowp_dw__avx2;
extern const dlc_lowp_gspc_family dlc_lowp_gspc__generic, dlc_lowp_gspc__avx2;
extern const dlc_q8_csr_family dlc_q8_csr__generic, dlc_q8_csr__avx2;

/* Each ISA's table (src/arch/<isa>/config.c): built on first use; call only when the CPU has the ISA. */
const dlc_isa_kernels *dlc_config_generic(void);
const dlc_isa_kernels *dlc_config_avx2(void);
const dlc_isa_kernels *dlc_config_avx512(void);
const dlc_isa_kernels *dlc_config_neon(void);

#endif
