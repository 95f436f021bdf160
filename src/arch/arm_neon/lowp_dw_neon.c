/* Depthwise F16 / int8 row kernels, Neon (armv8-a: FCVTL, FMLA, MUL / MLA): the template
 * src/arch/template/lowp_dw.h over this ISA's vec.h, 4 lanes a block. int8 multiplies 32-bit
 * lanes with MUL folded into MLA (the template's default): one instruction per 4 products, where
 * the s16 pairs (vi_dot2_s16) take SMULL + SMULL2 + ADDP + ADD, and exact for any zero point. */
#include "vec.h"
#include "../template/lowp_dw.h"
