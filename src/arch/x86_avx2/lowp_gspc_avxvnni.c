/* int8 gspc micro-kernels with AVX-VNNI (VEX vpdpwssd on ymm), and the avx2 family's repack and
 * F16 kernels (lowp_gspc_tiles.h, lowp_gspc_avx2.h). src/arch/<isa>/config.c offers it where the CPU has it. */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../ukernel/lowp_gspc_ukernel.h"
#include "lowp_gspc_avx2.h"

#define LOWP_GSPC_Q8_ONLY
#define Q8_DOT2(acc, a, b) _mm256_dpwssd_avx_epi32((acc), (a), (b))
#include "lowp_gspc_tiles.h"

const dlc_lowp_gspc_family dlc_lowp_gspc__avxvnni = DLC_LOWP_GSPC_VNNI_FAMILY("avxvnni", get_q8);
