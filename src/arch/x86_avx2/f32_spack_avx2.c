/* f32 spatial-pack micro-kernels, AVX2 + FMA: the template src/arch/template/f32_spack.h over this
 * ISA's vec.h. 8 output channels per tile, up to 12 ymm accumulators (1x12, 2x6, 3x4): with the
 * weight vector and the broadcast temporaries they fill the 16 registers without spilling. */
#include "vec.h"
#include "../template/f32_spack.h"
