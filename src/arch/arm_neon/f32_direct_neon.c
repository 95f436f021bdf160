/* f32 direct micro-kernels, AArch64 Neon: the family of src/arch/template/f32_direct.h with its
 * defaults for 32 registers (conv 14 pixels x 8 channels or 24 x 4, dwc 12 x 8 or 24 x 4) and the
 * fast depthwise NCHW path for 3x3 and 5x5 kernels (8 rows of one vector, each input row loaded
 * once per kx). A pixel's broadcast is a scalar load folded into FMLA by element. */
#include "vec.h"

#define DLC_DIRECT_DWP_FAST 1
/* no masked load on Neon: a dwc tile of whole channel vectors loads them plainly */
#define DLC_DIRECT_DWC_WHOLE 1

#include "../template/f32_direct.h"
