/* lowp_gspc_avx2.h - the parts of the avx2 F16/int8 gspc family its VNNI sibling shares
 * (lowp_gspc_avx2.c; contracts in lowp_gspc_ukernel.h): the input repack and the F16 kernels. */
#ifndef DLC_LOWP_GSPC_AVX2_H
#define DLC_LOWP_GSPC_AVX2_H

#include "../../ukernel/lowp_gspc_ukernel.h"

dlc_f16_gspc_ukernel_fn dlc_lowp_gspc_get_f16__avx2(size_t gpv, size_t nv, size_t r, size_t w);
void dlc_lowp_gspc_pack_f16__avx2(const dlc_lowp_gspc_pack_args *a);
void dlc_lowp_gspc_pack_q8__avx2(const dlc_lowp_gspc_pack_args *a);

/* A VNNI family: its own int8 kernels (get_q8 of its lowp_gspc_tiles.h instance), avx2's repack
   and F16 kernels. vpdpwssd replaces vpmaddwd + vpaddd: two per cycle at a latency of 5 cycles on
   the cores that have it (published instruction tables for Ice Lake, Alder Lake, Zen 4 and 5; not
   measured here), which the driver's tile cost model weighs against the accumulators. */
#define DLC_LOWP_GSPC_VNNI_FAMILY(isa_name, get_q8_fn)  \
  {                                                     \
      .isa = isa_name,                                  \
      .t_o = 8,                                         \
      .t_i_f16 = 16,                                    \
      .t_i_q8 = 8,                                      \
      .max_gpv = 8,                                     \
      .get_f16 = dlc_lowp_gspc_get_f16__avx2,           \
      .get_q8 = get_q8_fn,                              \
      .pack_f16 = dlc_lowp_gspc_pack_f16__avx2,         \
      .pack_q8 = dlc_lowp_gspc_pack_q8__avx2,           \
      .mac_per_cycle_f16 = 2.0f,                        \
      .mac_per_cycle_q8 = 2.0f,                         \
      .loads_per_cycle = 2.0f,                          \
      .latency_f16 = 4.0f,                              \
      .latency_q8 = 5.0f,                               \
  }

#endif
