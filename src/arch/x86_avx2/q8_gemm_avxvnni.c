/* int8 gemm family, AVX-VNNI (VEX-encoded vpdpwssd on ymm: Alder Lake and later, Zen 5): the
 * avx2 family with the pair product and its sum fused into one instruction (q8_gemm_tiles.h).
 * Compiled alone with -mavxvnni; src/arch/<isa>/config.c offers it in the avx2 table when the CPU has it. */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../ukernel/config.h"
#include "q8_gemm_avx2.h"

#define Q8_ISA avxvnni
#define Q8_DOT2(acc, a, b) _mm256_dpwssd_avx_epi32((acc), (a), (b))
#include "q8_gemm_tiles.h"

const dlc_q8_gemm_family dlc_q8_gemm__avxvnni = DLC_Q8_GEMM_6X16C2_FAMILY(avxvnni);
