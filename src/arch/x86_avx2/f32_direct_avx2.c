/* f32 direct micro-kernels, AVX2 + FMA: the family of src/arch/template/f32_direct.h with its
 * defaults for 16 registers (conv 6 pixels x 16 channels or 12 x 8, dwc the same) and the fast
 * depthwise NCHW path for 3x3 and 5x5 kernels (8 rows of one vector, each input row loaded once
 * per kx, where one load per FMA was the bound). Partial stores are written in 4 + 2 + 1 pieces,
 * never with vmaskmovps (vec.h, avx2_store.h). */
#include "vec.h"

#define DLC_DIRECT_DWP_FAST 1

#include "../template/f32_direct.h"
