/* f32 gspc micro-kernels, AVX2 + FMA: the template src/arch/template/f32_gspc.h over this ISA's
 * vec.h. T_O = 8 lanes; up to 12 accumulators (R x W x NV <= 12: with NV weight vectors and a
 * broadcast they fit the 16 ymm registers); a pixel's input is a vbroadcastss, or a vbroadcastsd
 * / 128-bit broadcast / full load of GPV groups' inputs. */
#include "vec.h"
/* positions in lanes: every tap loads its input. The shift is two shuffles here (vperm2f128,
   vpalignr), the weights' broadcasts are loads, and a 32-byte load crosses a line only every other
   time (Zen 5, WRN-40-2 g16 NCHW 3x3 layers with rows3: 32 x 32 5% and 16 x 16 27% slower). */
#define GSPC_POS_ROWS3 0
#include "../template/f32_gspc.h"
