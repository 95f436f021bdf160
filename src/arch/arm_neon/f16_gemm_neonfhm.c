/* F16 gemm micro-kernels, AArch64 Neon with FEAT_FHM (asimdfhm): FMLAL / FMLAL2 on halves,
 * "f16_gemm_12x8__neonfhm" (f16_gemm_neon.h); the neon table takes it where getauxval says so. */
#define DLC_F16_FHM 1
#define DLC_F16_ISA neonfhm
#include "f16_gemm_neon.h"
