/* f32 gspc micro-kernels, AVX2 + FMA: the template src/arch/template/f32_gspc.h over this ISA's
 * vec.h. T_O = 8 lanes; up to 12 accumulators (R x W x NV <= 12: with NV weight vectors and a
 * broadcast they fit the 16 ymm registers); a pixel's input is a vbroadcastss, or a vbroadcastsd
 * / 128-bit broadcast / full load of GPV groups' inputs. */
#include "vec.h"
#include "../template/f32_gspc.h"
