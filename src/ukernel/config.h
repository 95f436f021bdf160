/* config.h - one ISA's micro-kernel table: which kernel of each family, with its tiles and
 * blocking in the family descriptor, this ISA runs.
 *
 * The only file that fills a table is src/arch/<isa>/config.c (once, from cpuid or HWCAP);
 * drivers read the plan's table and never name an ISA. A family an ISA does not (yet) have is
 * NULL: the driver then answers UNSUPPORTED for that ISA rather than silently running another
 * ISA's code. */
#ifndef DLC_UKERNEL_CONFIG_H
#define DLC_UKERNEL_CONFIG_H

#include "dlconv.h"
#include "csr_ukernel.h"
#include "direct_ukernel.h"
#include "dnchw_ukernel.h"
#include "gemm_ukernel.h"
#include "gspc_ukernel.h"
#include "lowp_dw_ukernel.h"
#include "lowp_gemm_ukernel.h"
#include "lowp_gspc_ukernel.h"
#include "spack_ukernel.h"

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
  /* int8 NHWC grouped convolutions of few channels per group in registers (same CPUs as q8_igemm) */
  const dlc_q8_gcn_family *q8_gcn;
  /* fp32 NCHW stride-1 convolutions with pixels in the lanes (NULL where an ISA has none) */
  const dlc_f32_dnchw_family *dnchw;
} dlc_isa_kernels;

/* The table for isa if this build has it and this CPU can run it, else NULL (src/arch/config.c). */
const dlc_isa_kernels *dlc_kernels_for(dlconv_isa isa);

#endif
