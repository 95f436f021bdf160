/* int8 csr micro-kernel, AVX-VNNI (VEX vpdpwssd on ymm): the avx2 kernel with the pair product and its sum fused
 * into one instruction (q8_csr_tiles.h). src/arch/<isa>/config.c offers it where the CPU has it. */
#include <immintrin.h>
#include <string.h>

#include "../../ukernel/csr_ukernel.h"

#define Q8_ISA avxvnni
#define Q8_DOT2(acc, a, b) _mm256_dpwssd_avx_epi32((acc), (a), (b))
#include "q8_csr_tiles.h"
