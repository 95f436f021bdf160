/* F16 gemm micro-kernels, AArch64 Neon (base armv8-a): binary16 widened in registers (FCVTL) into
 * fp32 FMLA, "f16_gemm_12x8__neon" (f16_gemm_neon.h). */
#define DLC_F16_FHM 0
#define DLC_F16_ISA neon
#include "f16_gemm_neon.h"
