/* F16 and int8 gspc micro-kernels, AArch64 Neon: the template src/arch/template/lowp_gspc.h over
 * this ISA's vec.h. T_O = 4 lanes; F16 up to 16 pixels of one vector and 24 accumulators (as the
 * fp32 family), int8 up to 14 (pixel, vector) accumulators, each two q registers (SMLAL + SMLAL2
 * of a pair's halves, vi2): 28 with a weight vector and a broadcast of the 32 (the template's
 * defaults from DLC_NREGS and DLC_VI2_REGS). The input repack is the template's (NCHW rows and
 * NHWC channels in whole vectors), which leaves edges and other layouts to the generic family's.
 * Cost model: F16 2 FMLA per cycle at latency 4; int8 one SMLAL per cycle, two per vector product
 * (Cortex-A76 / Neoverse N1), latency 4. */
#include "vec.h"

#include "../families.h"

static void pack_f16(const dlc_lowp_gspc_pack_args *a) { dlc_lowp_gspc__generic.pack_f16(a); }
static void pack_q8(const dlc_lowp_gspc_pack_args *a) { dlc_lowp_gspc__generic.pack_q8(a); }

#define LOWP_GSPC_PACK_FALLBACK_F16 pack_f16
#define LOWP_GSPC_PACK_FALLBACK_Q8 pack_q8
#define LOWP_GSPC_MAC_Q8 0.5f
#define LOWP_GSPC_LAT_Q8 4.0f
#include "../template/lowp_gspc.h"
