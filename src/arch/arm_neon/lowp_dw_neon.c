/* Depthwise F16 / int8 row kernels, Neon (armv8-a: FCVTL, FMLA, MUL / MLA): the template
 * src/arch/template/lowp_dw.h over this ISA's vec.h, 4 lanes a block. int8 multiplies 32-bit
 * lanes with MUL folded into MLA (the template's default): one instruction per 4 products, where
 * the s16 pairs (vi_dot2_s16) take SMULL + SMULL2 + ADDP + ADD, and exact for any zero point.
 * The int8 NHWC channel runs take two blocks a loop iteration: llvm-mca (scripts/mca_neon.py) put
 * the one-block loop at 6.1 cycles a block on Neoverse N1, the two-block one at 3.5 (the F16 one
 * stays at one block: GCC's two-block loop, on post-indexed loads, took 5.5 a block against 2.7). */
#define DLC_LOWP_DW_Q8_CH_PAIRS 1
#include "vec.h"
#include "../template/lowp_dw.h"
