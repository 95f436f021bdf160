/* q8_neondot.h - the optional members of the SDOT quad family (dlc_q8d4_gemm__neondot,
 * q8_gemm_neondot.c) that live in files of their own: the gemv (q8_gemv_neondot.c) and the
 * transposed tile with its transpose (q8_gemm_t_neondot.c). Contracts: lowp_gemm_ukernel.h. */
#ifndef DLC_Q8_NEONDOT_H
#define DLC_Q8_NEONDOT_H

#include <stddef.h>
#include <stdint.h>

#define DLC_Q8_NEONDOT_GEMV_MR 16
#define DLC_Q8_NEONDOT_TR 6
#define DLC_Q8_NEONDOT_TM 16

void dlc_q8d4_gemv_16c4__neondot(size_t m, size_t nb, size_t kc, const int8_t *a, const uint8_t *b, size_t ldb,
                                 int32_t *c, size_t ldc);
void dlc_q8d4_gemm_t_6x16c4__neondot(size_t np, size_t m, size_t kc, const int8_t *a, const uint8_t *b,
                                     const size_t *pos, const ptrdiff_t *boff, int32_t *c, size_t ldc, int accumulate);
void dlc_s32_transpose__neon(size_t rows, size_t cols, const int32_t *src, size_t lds, int32_t *dst, size_t ldd);

#endif
