/* int8 gspc micro-kernels with AVX-VNNI (VEX vpdpwssd on ymm), and the avx2 family's repack and
 * F16 kernels (lowp_gspc_tiles.h, lowp_gspc_avx2.h). kernels.c offers it where the CPU has it. */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../gspc/lowp_gspc_ukernel.h"
#include "lowp_gspc_avx2.h"

#define LOWP_GSPC_Q8_ONLY
#define Q8_DOT2(acc, a, b) _mm256_dpwssd_avx_epi32((acc), (a), (b))
#include "lowp_gspc_tiles.h"

/* vpdpwssd in place of vpmaddwd + vpaddd: two per cycle at a latency of 5 cycles on the cores that
   have it (Alder Lake, Zen 5; published instruction tables, not measured here). */
const dlc_lowp_gspc_family dlc_lowp_gspc__avxvnni = {
    .isa = "avxvnni",
    .t_o = TO,
    .t_i_f16 = 16,
    .t_i_q8 = 8,
    .max_gpv = TO,
    .get_f16 = dlc_lowp_gspc_get_f16__avx2,
    .get_q8 = get_q8,
    .pack_f16 = dlc_lowp_gspc_pack_f16__avx2,
    .pack_q8 = dlc_lowp_gspc_pack_q8__avx2,
    .mac_per_cycle_f16 = 2.0f,
    .mac_per_cycle_q8 = 2.0f,
    .loads_per_cycle = 2.0f,
    .latency_f16 = 4.0f,
    .latency_q8 = 5.0f,
};
