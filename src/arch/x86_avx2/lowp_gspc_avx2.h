/* lowp_gspc_avx2.h - the parts of the avx2 F16/int8 gspc family its VNNI sibling shares
 * (lowp_gspc_avx2.c; contracts in lowp_gspc_ukernel.h): the input repack and the F16 kernels. */
#ifndef DLC_LOWP_GSPC_AVX2_H
#define DLC_LOWP_GSPC_AVX2_H

#include "../../gspc/lowp_gspc_ukernel.h"

dlc_f16_gspc_ukernel_fn dlc_lowp_gspc_get_f16__avx2(size_t gpv, size_t nv, size_t r, size_t w);
void dlc_lowp_gspc_pack_f16__avx2(const dlc_lowp_gspc_pack_args *a);
void dlc_lowp_gspc_pack_q8__avx2(const dlc_lowp_gspc_pack_args *a);

#endif
