/* f32 gspc micro-kernels, AArch64 Neon: the template src/arch/template/f32_gspc.h over this ISA's
 * vec.h. T_O = 4 lanes; up to 24 accumulators (with NV weight vectors and a broadcast they fit the
 * 32 q registers); a pixel's input is an LD1R of a float or a pair, or a load, for GPV 1, 2, 4.
 * Cost model: 2 FMLA and 2 loads per cycle, 4 cycles of FMLA latency (Cortex-A76 / Neoverse N1). */
#include "vec.h"

#define GSPC_MAX_PIX 16
#define GSPC_MAX_ACC 24
#define GSPC_MAX_NV 4

#include "../template/f32_gspc.h"
