/* int8 gspc micro-kernels with AVX-VNNI (VEX vpdpwssd on ymm): the template
 * src/arch/template/lowp_gspc.h over the avx2 vec.h, with the avx2 family's repack and F16 kernels
 * (lowp_gspc_avx2.h). src/arch/<isa>/config.c offers it where the CPU has it. */
#include "vec.h"

#define LOWP_GSPC_ISA avxvnni
#include "lowp_gspc_avx2.h"
#include "../template/lowp_gspc.h"
