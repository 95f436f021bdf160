/* f32 csr micro-kernels, avx512: the template src/arch/template/f32_csr.h over this ISA's vec.h.
 * Register tile: 4 output rows x 4 zmm of 16 pixels, 16 accumulators: "f32_csr_4x64__avx512". */
#include "vec.h"
#include "../template/f32_csr.h"
