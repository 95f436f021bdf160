/* f32 gspc micro-kernels, AArch64 Neon: the template src/arch/template/f32_gspc.h over this ISA's
 * vec.h. T_O = 4 lanes; up to 24 accumulators (with NV weight vectors and a broadcast they fit the
 * 32 q registers); a pixel's input is an LD1R of a float or a pair, or a load, for GPV 1, 2, 4.
 * Cost model: 2 FMLA and 2 loads per cycle, 4 cycles of FMLA latency (Cortex-A76 / Neoverse N1). */
#include "vec.h"

#define GSPC_MAX_PIX 16
#define GSPC_MAX_ACC 24
#define GSPC_MAX_NV 4
/* positions in lanes: every tap loads its input. EXT takes a slot of the FMLA pipes where a load
   takes none, and a 16-byte load seldom crosses a line (llvm-mca, the 2 x 40 tile: cycles per
   FMLA with rows3 / per-tap loads, Neoverse N1 0.68 / 0.53, Cortex-A76 1.18 / 1.03; only the
   in-order Cortex-A55, load-bound, gains: 1.63 / 2.55). */
#define GSPC_POS_ROWS3 0

#include "../template/f32_gspc.h"
