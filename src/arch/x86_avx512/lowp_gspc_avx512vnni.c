/* int8 gspc micro-kernels with AVX512-VNNI (EVEX vpdpwssd on ymm, with AVX512-VL), and the avx2
 * family's repack and F16 kernels (../x86_avx2/lowp_gspc_tiles.h, lowp_gspc_avx2.h). kernels.c
 * offers it where the CPU has it. */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../ukernel/lowp_gspc_ukernel.h"
#include "../x86_avx2/lowp_gspc_avx2.h"

#define LOWP_GSPC_Q8_ONLY
#define Q8_DOT2(acc, a, b) _mm256_dpwssd_epi32((acc), (a), (b))
#include "../x86_avx2/lowp_gspc_tiles.h"

const dlc_lowp_gspc_family dlc_lowp_gspc__avx512vnni = DLC_LOWP_GSPC_VNNI_FAMILY("avx512vnni", get_q8);
