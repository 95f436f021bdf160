/* f32 direct micro-kernels, AArch64 Neon: the family of src/arch/template/f32_direct.h for 32
 * registers (conv 14 pixels x 8 channels or 16 x 4, dwc 12 x 8 or 24 x 4) and the fast depthwise
 * NCHW path for 3x3 and 5x5 kernels (16 rows of one vector, each input row loaded once per kx). A
 * pixel's broadcast is a scalar load folded into FMLA by element. */
#include "vec.h"

/* conv of one vector: 16 pixels, not the 24 of AVX-512. An NHWC tile keeps a general register
   per pixel offset; with 24 GCC spilled offsets and an accumulator every step (llvm-mca, Neoverse
   N1: 69% of the FMLA rate), with 16 none (94%). 16 accumulators still cover 2 pipes x 4 cycles. */
#define DLC_DIRECT_CONV_TW1 16
#define DLC_DIRECT_CONV_TW2 14
#define DLC_DIRECT_DWC_TW1 24
#define DLC_DIRECT_DWC_TW2 12

/* depthwise NCHW 3x3 / 5x5 (the fast path): 16 rows of one vector a tile, not 8. A tap column
   costs its weight broadcasts and a few moves besides the FMLAs whatever the tile's height; with
   8 rows (24 FMLA per kx of a 3x3) llvm-mca put Neoverse N1 at 67% of its FMLA rate, with 16
   (48 FMLA, 18 row loads, 16 accumulators) at 92%. */
#define DLC_DIRECT_DWP_NR 16

#define DLC_DIRECT_DWP_FAST 1
/* no masked load on Neon: a dwc tile of whole channel vectors loads them plainly */
#define DLC_DIRECT_DWC_WHOLE 1
/* no sliding-window dwc rows: llvm-mca puts them below the per-tap loop (cycles per FMLA, Neoverse
   N1 / Cortex-A76: 3x3 0.81 / 1.26, 5x5 0.88 / 1.29, against 0.54 / 1.09; 24 accumulators and the
   row's weight vectors exceed the 32 registers, and no FMLA takes a memory operand) */
#define DLC_DIRECT_DWC_SLIDE 0

#include "../template/f32_direct.h"
