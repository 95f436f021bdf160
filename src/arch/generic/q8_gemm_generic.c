/* int8 gemm micro-kernel and requantising store, generic: the readable specification of the
 * int8 contract in src/gemm_im2col/lowp_gemm_ukernel.h (s16 operands in pairs along k, s32
 * accumulators) and the fallback on any CPU. */
#include <stddef.h>

#include "../../ukernel/config.h"

#define MR 4
#define NR 8
#define FOR_I _Pragma("GCC unroll 4") for (size_t i = 0; i < MR; i++)
#define FOR_J _Pragma("GCC unroll 8") for (size_t j = 0; j < NR; j++)

static void dlc_q8_gemm_4x8c2__generic(size_t m, size_t n, size_t kc, const int16_t *restrict a,
                                       const int16_t *restrict b, int32_t *restrict c, size_t ldc, int accumulate) {
  /* Sums wrap modulo 2^32 like the vector kernels' (unsigned: defined in C): the contract keeps
     the m x n results in range, but the padding lanes of the tile may hold anything. */
  uint32_t acc[MR][NR] = {{0}};
  for (size_t k2 = 0; k2 < kc / 2; k2++) {
    const int16_t *ak = a + k2 * 2 * MR, *bk = b + k2 * 2 * NR;
    FOR_I FOR_J acc[i][j] += (uint32_t)((int32_t)ak[2 * i] * bk[2 * j]) + (uint32_t)((int32_t)ak[2 * i + 1] * bk[2 * j + 1]);
  }
  FOR_I FOR_J {
    if (i < m && j < n) c[i * ldc + j] = (int32_t)(accumulate ? (uint32_t)c[i * ldc + j] + acc[i][j] : acc[i][j]);
  }
}

static void dlc_q8_gemm_ib_4x8c2__generic(size_t m, size_t kc, const int16_t *restrict a, const int16_t *restrict b,
                                          const ptrdiff_t *restrict boff, int32_t *restrict c, size_t ldc,
                                          int accumulate) {
  uint32_t acc[MR][NR] = {{0}};
  for (size_t k2 = 0; k2 < kc / 2; k2++) {
    const int16_t *ak = a + k2 * 2 * MR, *bk = b + boff[k2];
    FOR_I FOR_J acc[i][j] += (uint32_t)((int32_t)ak[2 * i] * bk[2 * j]) + (uint32_t)((int32_t)ak[2 * i + 1] * bk[2 * j + 1]);
  }
  FOR_I FOR_J {
    if (i < m) c[i * ldc + j] = (int32_t)(accumulate ? (uint32_t)c[i * ldc + j] + acc[i][j] : acc[i][j]);
  }
}

static void dlc_q8_store__generic(size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, int per_column,
                                  void *y) {
  for (size_t j = 0; j < n; j++) {
    size_t c = per_column ? c0 + j : c0;
    int32_t v = dlc_q8_requant1((int64_t)acc[j] + q->bias[c], q->mult[c], q);
    if (q->is_signed)
      ((int8_t *)y)[j] = (int8_t)v;
    else
      ((uint8_t *)y)[j] = (uint8_t)v;
  }
}

static void dlc_q8_pack_pairs__generic(size_t n, const void *a, const void *b, int32_t zp, int is_signed,
                                       int16_t *dst) {
  for (size_t j = 0; j < n; j++) {
    int32_t va = is_signed ? ((const int8_t *)a)[j] : ((const uint8_t *)a)[j];
    int32_t vb = is_signed ? ((const int8_t *)b)[j] : ((const uint8_t *)b)[j];
    dst[2 * j] = (int16_t)(va - zp);
    dst[2 * j + 1] = (int16_t)(vb - zp);
  }
}

static void dlc_q8_widen_run__generic(size_t n, const void *src, size_t step, int32_t zp, int is_signed,
                                      int16_t *dst) {
  for (size_t j = 0; j < n; j++)
    dst[j] = (int16_t)((is_signed ? ((const int8_t *)src)[j * step] : ((const uint8_t *)src)[j * step]) - zp);
}

static void dlc_q8_pack_pairs_strided__generic(size_t n, const void *src, int32_t zp, int is_signed, int16_t *dst,
                                               size_t stride) {
  for (size_t p = 0; p < n; p++)
    for (size_t t = 0; t < 2; t++) {
      const int32_t v = is_signed ? ((const int8_t *)src)[2 * p + t] : ((const uint8_t *)src)[2 * p + t];
      dst[p * stride + t] = (int16_t)(v - zp);
    }
}

const dlc_q8_gemm_family dlc_q8_gemm__generic = {
    .name = "q8_gemm_4x8c2__generic",
    .mr = MR,
    .nr = NR,
    .ukernel = dlc_q8_gemm_4x8c2__generic,
    .store = dlc_q8_store__generic,
    .pack_pairs = dlc_q8_pack_pairs__generic,
    .pack_pairs_strided = dlc_q8_pack_pairs_strided__generic,
    .widen_run = dlc_q8_widen_run__generic,
    .ukernel_ib = dlc_q8_gemm_ib_4x8c2__generic,
};
