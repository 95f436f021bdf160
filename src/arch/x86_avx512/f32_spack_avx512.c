/* f32 spatial-pack micro-kernels, AVX-512F: the template src/arch/template/f32_spack.h over this
 * ISA's vec.h. 16 output channels per tile, up to 28 zmm accumulators (2x14, 4x7, ...); the input
 * broadcast folds into the FMA ({1to16}). */
#include "vec.h"
#include "../template/f32_spack.h"
