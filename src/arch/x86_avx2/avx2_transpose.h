/* avx2_transpose.h - the register shuffles several avx2 kernel families share: an 8 x 8 transpose
 * (NHWC <-> NCHW tiles, pixel-major accumulators to channel rows) and the groups-in-lanes
 * broadcast of the gspc kernels. */
#ifndef DLC_AVX2_TRANSPOSE_H
#define DLC_AVX2_TRANSPOSE_H

#include <immintrin.h>
#include <stddef.h>
#include <string.h>

/* r[i][j] <-> r[j][i]: unpack pairs of rows, shuffle 2 x 2 blocks, swap 128-bit halves. */
static inline __attribute__((always_inline)) void dlc_avx2_transpose8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* The gpv (1, 2, 4 or 8) consecutive 32-bit elements at p repeated across the vector: one input
   pixel of gpv groups for the groups-in-lanes gspc kernels. */
static inline __attribute__((always_inline)) __m256 dlc_avx2_bcast_groups(const void *p, const size_t gpv) {
  if (gpv == 1) return _mm256_broadcast_ss((const float *)p);
  if (gpv == 2) {
    double d;
    memcpy(&d, p, sizeof d);
    return _mm256_castpd_ps(_mm256_set1_pd(d));
  }
  if (gpv == 4) return _mm256_broadcast_ps((const __m128 *)p);
  return _mm256_loadu_ps((const float *)p);
}

#endif
