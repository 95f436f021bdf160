/* int8 csr micro-kernel, AVX-VNNI (VEX vpdpwssd on ymm): the template src/arch/template/q8_csr.h
 * over the avx2 vec.h compiled with -mavxvnni, so that the pair product and its sum are one
 * instruction. src/arch/<isa>/config.c offers it where the CPU has it. */
#include "vec.h"

#define Q8_CSR_ISA avxvnni
#include "../template/q8_csr.h"
