/* q8_store_avx512.h - the AVX-512 int8 requantising store (q8_store_avx512.c), which kernels with
 * a fused epilogue also call for what their fp32 screen cannot settle: the q8 store contract of
 * lowp_gemm_ukernel.h (dlc_q8_store_fn), exact per quant.h. */
#ifndef DLC_Q8_STORE_AVX512_H
#define DLC_Q8_STORE_AVX512_H

#include <stddef.h>
#include <stdint.h>

#include "../../quant/quant.h"

void dlc_q8_store__avx512(size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, int per_column, void *y);

#endif
