/* int8 gemm family, AVX512-VNNI (EVEX-encoded vpdpwssd on ymm, with AVX512-VL: Ice Lake and
 * later, Zen 4 and 5): the avx2 family with the pair product and its sum fused into one
 * instruction (../x86_avx2/q8_gemm_tiles.h). The tile stays 6 x 16c2 on ymm, so the same drivers'
 * blocking and the avx2 store and packing serve it. Compiled alone with -mavx512vnni; the x86 config.c files
 * offers it in the avx512 table when the CPU has it. */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../ukernel/config.h"
#include "../x86_avx2/q8_gemm_avx2.h"

#define Q8_ISA avx512vnni
#define Q8_DOT2(acc, a, b) _mm256_dpwssd_epi32((acc), (a), (b))
#include "../x86_avx2/q8_gemm_tiles.h"
#include "q8_store_avx512.h"

/* the requantising store on 16 lanes (q8_store_avx512.c): AVX512-VNNI CPUs have AVX512-BW/VL/DQ */
const dlc_q8_gemm_family dlc_q8_gemm__avx512vnni = DLC_Q8_GEMM_6X16C2_FAMILY_STORE(avx512vnni, dlc_q8_store__avx512);
