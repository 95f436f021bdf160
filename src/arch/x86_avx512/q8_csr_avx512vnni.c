/* int8 csr micro-kernel, AVX512-VNNI (EVEX vpdpwssd on ymm, with AVX512-VL): the avx2 kernel with the pair product and its sum fused
 * into one instruction (../x86_avx2/q8_csr_tiles.h). src/arch/<isa>/config.c offers it where the CPU has it. */
#include <immintrin.h>
#include <string.h>

#include "../../ukernel/csr_ukernel.h"

#define Q8_ISA avx512vnni
#define Q8_DOT2(acc, a, b) _mm256_dpwssd_epi32((acc), (a), (b))
#include "../x86_avx2/q8_csr_tiles.h"
