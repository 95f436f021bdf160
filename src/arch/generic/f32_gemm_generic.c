/* f32 gemm micro-kernels, generic.
 *
 * The readable specification of the gemm micro-kernel contract (src/gemm_im2col/gemm_ukernel.h)
 * and the fallback on any CPU. The whole MR x NR tile is always computed (the packed panels are
 * zero-padded) into a local accumulator with fixed trip counts, which the compiler keeps in
 * vector registers; only the m x n corner is read from or written to C. 6 x 8 fits the 16
 * registers of baseline x86-64 (12 accumulators) and of most other targets. */
#include <stddef.h>

#include "../../ukernel/config.h"
#include "../../core/util.h"

#define MR 6
#define NR 8
/* Fully unrolled tile loops: the compiler then vectorises across j and keeps the tile in
   registers (left to itself, GCC 12 vectorises the k loop instead and spills the tile). */
#define FOR_I _Pragma("GCC unroll 6") for (size_t i = 0; i < MR; i++)
#define FOR_J _Pragma("GCC unroll 8") for (size_t j = 0; j < NR; j++)

static void dlc_f32_gemm_6x8__generic(size_t m, size_t n, size_t kc, const float *restrict a,
                                      const float *restrict b, float *restrict c, size_t ldc,
                                      int accumulate, const dlc_f32_gemm_epilogue *ep) {
  float acc[MR][NR] = {{0}};
  for (size_t k = 0; k < kc; k++) {
    const float *restrict ak = a + k * MR, *restrict bk = b + k * NR;
    FOR_I FOR_J acc[i][j] += ak[i] * bk[j];
  }
  /* Full trip counts with the edge as a condition: every acc index is a constant, so acc stays
     in registers (a loop bounded by m or n would force it to memory). */
  FOR_I FOR_J {
    if (i < m && j < n) {
      float v = acc[i][j];
      if (accumulate) v += c[i * ldc + j];
      if (ep != NULL) {
        if (ep->bias != NULL) v += ep->bias_per_column ? ep->bias[j] : ep->bias[i];
        v = dlc_clamp(v, ep->out_min, ep->out_max);
      }
      c[i * ldc + j] = v;
    }
  }
}

/* C transposed: element (i, j) at c[j * ldc + i]. */
static void dlc_f32_gemm_6x8_ct__generic(size_t m, size_t n, size_t kc, const float *restrict a,
                                         const float *restrict b, float *restrict c, size_t ldc,
                                         int accumulate, const dlc_f32_gemm_epilogue *ep) {
  float acc[MR][NR] = {{0}};
  for (size_t k = 0; k < kc; k++) {
    const float *restrict ak = a + k * MR, *restrict bk = b + k * NR;
    FOR_I FOR_J acc[i][j] += ak[i] * bk[j];
  }
  FOR_I FOR_J {
    if (i < m && j < n) {
      float v = acc[i][j];
      if (accumulate) v += c[j * ldc + i];
      if (ep != NULL) {
        if (ep->bias != NULL) v += ep->bias_per_column ? ep->bias[j] : ep->bias[i];
        v = dlc_clamp(v, ep->out_min, ep->out_max);
      }
      c[j * ldc + i] = v;
    }
  }
}

static void dlc_f32_gemm_pack_rows_6__generic(size_t len, const float *const *rows, float *restrict dst) {
  for (size_t i = 0; i < MR; i++) {
    const float *restrict r = rows[i];
    for (size_t t = 0; t < len; t++) dst[t * MR + i] = r ? r[t] : 0.0f;
  }
}

static void dlc_f32_gemm_pack_cols_8__generic(size_t kc, size_t n, const float *restrict src, size_t ld,
                                              float *restrict dst) {
  for (size_t k = 0; k < kc; k++) {
    FOR_J dst[k * NR + j] = j < n ? src[k * ld + j] : 0.0f;
  }
}

static void dlc_f32_gemm_copy__generic(float *restrict dst, const float *restrict src, size_t len) {
  for (size_t t = 0; t < len; t++) dst[t] = src[t];
}

static void dlc_f32_gemm_copy_s2__generic(float *restrict dst, const float *restrict src, size_t len) {
  for (size_t t = 0; t < len; t++) dst[t] = src[2 * t];
}

const dlc_f32_gemm_family dlc_f32_gemm__generic = {
    .name = "f32_gemm_6x8__generic",
    .mr = MR,
    .nr = NR,
    .ukernel = dlc_f32_gemm_6x8__generic,
    .ukernel_ct = dlc_f32_gemm_6x8_ct__generic,
    .pack_rows = dlc_f32_gemm_pack_rows_6__generic,
    .pack_cols = dlc_f32_gemm_pack_cols_8__generic,
    .copy = dlc_f32_gemm_copy__generic,
    .copy_s2 = dlc_f32_gemm_copy_s2__generic,
};
