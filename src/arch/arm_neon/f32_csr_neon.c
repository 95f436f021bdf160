/* f32 csr micro-kernels, AArch64 Neon: the template src/arch/template/f32_csr.h over this ISA's
 * vec.h. Register tile: 3 output rows x 8 q registers of 4 pixels, 24 accumulators:
 * "f32_csr_3x32__neon". FMLA takes no memory operand, so each FMA has its own load of x: per
 * nonzero 8 loads of x, the weight and its offset for 8 FMLA; eight vectors a row keep the two
 * scalar loads to a fifth of the load pipes' work. */
#include "vec.h"

#define CSR_MR 3
#define CSR_NV 8
#define CSR_NR 32

#include "../template/f32_csr.h"
