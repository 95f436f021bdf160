/* f32 gspc micro-kernels, AVX-512 (F, DQ): the template src/arch/template/f32_gspc.h over this
 * ISA's vec.h. T_O = 16 lanes; up to 24 accumulators (with NV weight vectors and a broadcast they
 * fit the 32 zmm registers); a pixel's input is folded into the FMA as {1to16} for GPV = 1, else
 * a vbroadcastsd / f32x4 / f32x8 or a full load. t_i = 16 = T_O: kernels for the channel-blocked
 * input too. */
#include "vec.h"
#include "../template/f32_gspc.h"
