/* F16 and int8 gspc micro-kernels on zmm (16 lanes; int8 on EVEX vpdpwssd): the template
 * src/arch/template/lowp_gspc.h over the avx512 vec.h, with the avx2 family's input repack
 * (../x86_avx2/lowp_gspc_avx2.h), which handles up to 8 groups per vector. Up to 16 pixels of
 * one vector and 24 accumulators of 32 registers. */
#include "vec.h"

#include "../x86_avx2/lowp_gspc_avx2.h"

#define LOWP_GSPC_ISA avx512vnni_zmm
#define LOWP_GSPC_MAX_GPV 8
#define LOWP_GSPC_PACK_F16 dlc_lowp_gspc_pack_f16__avx2
#define LOWP_GSPC_PACK_Q8 dlc_lowp_gspc_pack_q8__avx2
#define LOWP_GSPC_MAC_Q8 2.0f
#define LOWP_GSPC_LAT_Q8 5.0f
#include "../template/lowp_gspc.h"
