/* int8 gspc micro-kernels with AVX512-VNNI (EVEX vpdpwssd on ymm, with AVX512-VL): the template
 * src/arch/template/lowp_gspc.h over the avx2 vec.h (8 lanes), with the avx2 family's repack and
 * F16 kernels (../x86_avx2/lowp_gspc_avx2.h). src/arch/x86_avx512/config.c offers it where the
 * CPU has it. */
#include "../x86_avx2/vec.h"

#define LOWP_GSPC_ISA avx512vnni
#include "../x86_avx2/lowp_gspc_avx2.h"
#include "../template/lowp_gspc.h"
