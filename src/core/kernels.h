/* kernels.h - the per-ISA micro-kernel table.
 *
 * One table per ISA (src/arch/<isa>/kernels_<isa>.c) points at one family descriptor per
 * algorithm. A family an ISA does not (yet) have is NULL: the driver then answers UNSUPPORTED
 * for that ISA rather than silently running another ISA's code. */
#ifndef DLC_KERNELS_H
#define DLC_KERNELS_H

#include "dlconv.h"
#include "../direct/direct_ukernel.h"
#include "../gemm_im2col/gemm_ukernel.h"
#include "../spatial_pack/spack_ukernel.h"
#include "../gspc/gspc_ukernel.h"
#include "../sparse_csr/csr_ukernel.h"
#include "../gemm_im2col/lowp_gemm_ukernel.h"
#include "../direct/lowp_dw_ukernel.h"
#include "../gspc/lowp_gspc_ukernel.h"

typedef struct dlc_isa_kernels {
  dlconv_isa isa;
  const char *name;                        /* "generic", "avx2", "avx512", "neon" */
  const dlc_f32_direct_family *direct;
  const dlc_f32_gemm_family *gemm;
  const dlc_f32_spack_family *spack;
  const dlc_f32_gspc_family *gspc;
  const dlc_f32_csr_family *csr;
  /* F16 and int8 (NULL where an ISA has none yet: those dtypes then run on another ISA) */
  const dlc_f16_gemm_family *f16_gemm;
  const dlc_q8_gemm_family *q8_gemm;
  const dlc_lowp_dw_family *lowp_dw;
  const dlc_lowp_gspc_family *lowp_gspc;
  const dlc_q8_csr_family *q8_csr;
  /* int8 on u8 x s8 dot products of four, where the CPU has them (NULL elsewhere): the direct and
     spatial pack drivers prefer it to q8_gemm, whose store they still use */
  const dlc_q8d4_gemm_family *q8_d4;
  /* int8 depthwise NCHW on the same quads (NULL where the CPU lacks them or a byte permute) */
  const dlc_q8_dw4_family *q8_dw4;
  /* int8 depthwise NCHW on small planes, 16 channels in the lanes (same CPUs as q8_dw4) */
  const dlc_q8_dwc_family *q8_dwc;
  /* with q8_d4's ukernel_t, on the same CPUs: its accumulators requantised straight to NCHW */
  dlc_q8_store_t_fn q8_store_t;
  /* int8 NHWC convolutions as indirect GEMMs on the same quads, x read in place (NULL elsewhere) */
  const dlc_q8_igemm_family *q8_igemm;
  /* int8 NHWC depthwise in registers, x read in place (same CPUs as q8_igemm) */
  const dlc_q8_dwn_family *q8_dwn;
} dlc_isa_kernels;

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
/* The int8 gemm, csr and gspc families on vpdpwssd (the *_tiles.h templates in src/arch/x86_avx2),
   where the compiler has the instruction: kernels.c swaps them into the avx2 / avx512 table on
   CPUs with AVX-VNNI / AVX512-VNNI. */
extern const dlc_q8_gemm_family dlc_q8_gemm__avxvnni, dlc_q8_gemm__avx512vnni;
extern const dlc_q8_csr_family dlc_q8_csr__avxvnni, dlc_q8_csr__avx512vnni;
extern const dlc_q8d4_gemm_family dlc_q8d4_gemm__avx512vnni;
extern const dlc_q8_igemm_family dlc_q8_igemm__avx512vnni;
extern const dlc_q8_dwn_family dlc_q8_dwn__avx512vnni;
extern const dlc_q8_dw4_family dlc_q8_dw4__avx512vbmi;
extern const dlc_q8_dwc_family dlc_q8_dwc__avx512vbmi;
void dlc_q8_store_t__avx512vbmi(size_t np, size_t m, const int32_t *c, size_t ldc, const dlc_q8_params *q, size_t c0,
                                void *y, size_t ldy);
extern const dlc_lowp_gspc_family dlc_lowp_gspc__avxvnni, dlc_lowp_gspc__avx512vnni;
extern const dlc_lowp_dw_family dlc_lowp_dw__generic, dlc_lowp_dw__avx2;
extern const dlc_lowp_gspc_family dlc_lowp_gspc__generic, dlc_lowp_gspc__avx2;
extern const dlc_q8_csr_family dlc_q8_csr__generic, dlc_q8_csr__avx2;

extern const dlc_isa_kernels dlc_kernels_generic;
extern const dlc_isa_kernels dlc_kernels_avx2;
extern const dlc_isa_kernels dlc_kernels_avx512;
extern const dlc_isa_kernels dlc_kernels_neon;

/* The table for isa if this build has it and this CPU can run it, else NULL. On x86 the avx2 and
   avx512 tables carry the int8 gemm family of this CPU's best dot-product instruction. */
const dlc_isa_kernels *dlc_kernels_for(dlconv_isa isa);

/* Test hook (core/kernel_hooks.c, turned on by dlc_test_corrupt_kernels in test_hooks.h): while
   on, dlc_kernels_for() returns dlc_kernel_hook_table(real), a copy whose micro-kernels perturb
   their output, so that tests can show DLCONV_VERIFY catching a wrong kernel. */
int dlc_kernel_hook_on(void);
const dlc_isa_kernels *dlc_kernel_hook_table(const dlc_isa_kernels *real);

#endif
