/* f32 spatial-pack micro-kernels, AArch64 Neon: the template src/arch/template/f32_spack.h over
 * this ISA's vec.h. 4 output channels per tile, up to 28 q accumulators (2x14, 4x7, ...); the input
 * broadcast is a scalar load folded into FMLA by element. */
#include "vec.h"

#define SPACK_VH 4
#define SPACK_VW 14
#define SPACK_MAX_ACC 28

#include "../template/f32_spack.h"
