/* int8 csr micro-kernel, AVX512-VNNI (EVEX vpdpwssd on ymm, with AVX512-VL): the template
 * src/arch/template/q8_csr.h over the avx2 vec.h (8 lanes) compiled for AVX512-VNNI, so that the
 * pair product and its sum are one instruction. src/arch/x86_avx512/config.c offers it where the
 * CPU has it. */
#include "../x86_avx2/vec.h"

#define Q8_CSR_ISA avx512vnni
#include "../template/q8_csr.h"
