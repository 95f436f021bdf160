/* f16 gemm micro-kernel and store, generic: the readable specification of the F16 contract in
 * src/gemm_im2col/lowp_gemm_ukernel.h and the fallback on any CPU. Halves are widened with the
 * exact software conversion of quant.h; the whole tile is accumulated in fp32 locals with fixed
 * trip counts (kept in registers), only the m x n corner touches C. */
#include <stddef.h>

#include "../../ukernel/config.h"
#include "../../core/util.h"

#define MR 4
#define NR 8
#define FOR_I _Pragma("GCC unroll 4") for (size_t i = 0; i < MR; i++)
#define FOR_J _Pragma("GCC unroll 8") for (size_t j = 0; j < NR; j++)

static void dlc_f16_gemm_4x8__generic(size_t m, size_t n, size_t kc, const uint16_t *restrict a,
                                      const uint16_t *restrict b, float *restrict c, size_t ldc, int accumulate) {
  float acc[MR][NR] = {{0}};
  for (size_t k = 0; k < kc; k++) {
    float ak[MR], bk[NR];
    FOR_I ak[i] = dlc_f16_to_f32(a[k * MR + i]);
    FOR_J bk[j] = dlc_f16_to_f32(b[k * NR + j]);
    FOR_I FOR_J acc[i][j] += ak[i] * bk[j];
  }
  FOR_I FOR_J {
    if (i < m && j < n) c[i * ldc + j] = accumulate ? c[i * ldc + j] + acc[i][j] : acc[i][j];
  }
}

static void dlc_f16_gemm_ib_4x8__generic(size_t m, size_t kc, const float *restrict a, const uint16_t *restrict b,
                                         const ptrdiff_t *restrict boff, float *restrict c, size_t ldc, int accumulate) {
  float acc[MR][NR] = {{0}};
  for (size_t k = 0; k < kc; k++) {
    float bk[NR];
    FOR_J bk[j] = dlc_f16_to_f32(b[boff[k] + (ptrdiff_t)j]);
    FOR_I FOR_J acc[i][j] += a[k * MR + i] * bk[j];
  }
  FOR_I FOR_J {
    if (i < m) c[i * ldc + j] = accumulate ? c[i * ldc + j] + acc[i][j] : acc[i][j];
  }
}

static void dlc_f16_store__generic(size_t n, const float *acc, const float *bias, size_t c0, int per_column,
                                   float out_min, float out_max, uint16_t *y) {
  for (size_t j = 0; j < n; j++)
    y[j] = dlc_f32_to_f16(dlc_clamp(acc[j] + bias[per_column ? c0 + j : c0], out_min, out_max));
}

static void dlc_f16_widen_run__generic(size_t n, const uint16_t *src, size_t step, float *dst) {
  for (size_t j = 0; j < n; j++) dst[j] = dlc_f16_to_f32(src[j * step]);
}

static void dlc_f16_pack_cols_f32__generic(size_t kc, size_t n, const uint16_t *src, size_t ld, float *dst) {
  for (size_t k = 0; k < kc; k++)
    for (size_t j = 0; j < NR; j++) dst[k * NR + j] = j < n ? dlc_f16_to_f32(src[k * ld + j]) : 0.0f;
}

const dlc_f16_gemm_family dlc_f16_gemm__generic = {
    .name = "f16_gemm_4x8__generic",
    .mr = MR,
    .nr = NR,
    .ukernel = dlc_f16_gemm_4x8__generic,
    .store = dlc_f16_store__generic,
    .ukernel_ib = dlc_f16_gemm_ib_4x8__generic,
    .widen_run = dlc_f16_widen_run__generic,
    .pack_cols_f32 = dlc_f16_pack_cols_f32__generic,
};
