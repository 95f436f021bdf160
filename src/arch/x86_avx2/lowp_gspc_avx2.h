/* lowp_gspc_avx2.h - the parts of the avx2 F16/int8 gspc family its VNNI siblings share
 * (lowp_gspc_avx2.c; contracts in lowp_gspc_ukernel.h): the input repack and the F16 kernels.
 *
 * A VNNI family (lowp_gspc_avxvnni.c, ../x86_avx512/lowp_gspc_avx512vnni.c) is the template
 * src/arch/template/lowp_gspc.h over the avx2 vec.h compiled for its VNNI, so that vi_dot2_s16 is
 * vpdpwssd: its own int8 kernels, these F16 kernels and repack. vpdpwssd replaces vpmaddwd +
 * vpaddd: two per cycle at a latency of 5 cycles on the cores that have it (published instruction
 * tables for Ice Lake, Alder Lake, Zen 4 and 5; not measured here), which the driver's tile cost
 * model weighs against the accumulators. */
#ifndef DLC_LOWP_GSPC_AVX2_H
#define DLC_LOWP_GSPC_AVX2_H

#include "../../ukernel/lowp_gspc_ukernel.h"

dlc_f16_gspc_ukernel_fn dlc_lowp_gspc_get_f16__avx2(size_t gpv, size_t nv, size_t r, size_t w);
void dlc_lowp_gspc_pack_f16__avx2(const dlc_lowp_gspc_pack_args *a);
void dlc_lowp_gspc_pack_q8__avx2(const dlc_lowp_gspc_pack_args *a);

/* What a VNNI family (a file that names its family, LOWP_GSPC_ISA, before this include) takes
   from avx2, and its int8 cost model. */
#ifdef LOWP_GSPC_ISA
#define LOWP_GSPC_GET_F16 dlc_lowp_gspc_get_f16__avx2
#define LOWP_GSPC_PACK_F16 dlc_lowp_gspc_pack_f16__avx2
#define LOWP_GSPC_PACK_Q8 dlc_lowp_gspc_pack_q8__avx2
#define LOWP_GSPC_MAC_Q8 2.0f
#define LOWP_GSPC_LAT_Q8 5.0f
#endif

#endif
