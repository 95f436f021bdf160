/* Depthwise F16 / int8 row kernels, avx2 + FMA + F16C: the template src/arch/template/lowp_dw.h
 * over this ISA's vec.h, 8 lanes a block (AVX-512 lends this family: src/arch/x86_avx512/config.c).
 *
 * int8 multiplies with vpmaddwd rather than vpmulld (DLC_LOWP_DW_DOT2): on Zen 2 (measured) ymm
 * vpmaddwd issues one per cycle at latency 3, vpmulld one per two cycles at latency 4 (on Intel
 * cores two uops at latency 10); with vpmulld a long stride-1 row is bound by the multiply
 * (8 lanes / 2 cycles), with vpmaddwd by the loads and stores. */
#define DLC_LOWP_DW_DOT2 1
#include "vec.h"
#include "../template/lowp_dw.h"
