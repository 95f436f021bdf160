/* f32 GEMM micro-kernels, AArch64 Neon: the family of src/arch/template/f32_gemm.h with a 12 x 8
 * tile: 24 of the 32 q registers hold accumulators, 2 hold the B row. Per k step 2 q loads of B,
 * 12 scalar loads of A (folded into FMLA by element) and 24 FMLA. No B prefetch for tiles of
 * three rows or more (the driver streams B sequentially, which the cores' prefetchers follow;
 * unmeasured on hardware), a DRAM latency ahead for the one- and two-row tiles (dense, batch 1). */
#include "vec.h"

#define DLC_GEMM_MR 12
#define DLC_GEMM_B_PREFETCH_STEPS(M) ((M) <= 2 ? 64 : 0)

#include "../template/f32_gemm.h"
