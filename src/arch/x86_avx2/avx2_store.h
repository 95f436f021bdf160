/* avx2_store.h - partial vector stores without vmaskmovps.
 *
 * On AMD cores up to Zen 3 a vmaskmovps store is microcoded (some 12-20 cycles each, measured
 * here on Zen 2 as a third of a 6x16 GEMM tile's time at K = 64), while plain stores issue one
 * per cycle. A tile that stores its first n lanes therefore writes them as 4 + 2 + 1 float pieces;
 * with n known at compile time (an unrolled tile) the pieces fold to straight-line stores. Masked
 * loads stay as they are: they are fast everywhere. */
#ifndef DLC_AVX2_STORE_H
#define DLC_AVX2_STORE_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* p[i] = v[i] for i < min(n, 8); nothing else is written. */
static inline __attribute__((always_inline)) void dlc_avx2_store_first(float *p, ptrdiff_t n, __m256 v) {
  if (n >= 8) {
    _mm256_storeu_ps(p, v);
    return;
  }
  if (n <= 0) return;
  __m128 x = _mm256_castps256_ps128(v);
  if (n & 4) {
    _mm_storeu_ps(p, x);
    x = _mm256_extractf128_ps(v, 1);
    p += 4;
  }
  if (n & 2) {
    _mm_storel_pi((__m64 *)p, x);
    x = _mm_movehl_ps(x, x);
    p += 2;
  }
  if (n & 1) _mm_store_ss(p, x);
}

/* The same for 8 binary16 values (a vcvtps2ph result): p[i] = h[i] for i < min(n, 8). */
static inline __attribute__((always_inline)) void dlc_avx2_store_first_f16(uint16_t *p, ptrdiff_t n, __m128i h) {
  if (n >= 8) {
    _mm_storeu_si128((__m128i *)p, h);
    return;
  }
  if (n <= 0) return;
  if (n & 4) {
    _mm_storel_epi64((__m128i *)p, h);
    h = _mm_srli_si128(h, 8);
    p += 4;
  }
  if (n & 2) {
    const int32_t w = _mm_cvtsi128_si32(h);
    memcpy(p, &w, 4);
    h = _mm_srli_si128(h, 4);
    p += 2;
  }
  if (n & 1) {
    const uint16_t w = (uint16_t)_mm_cvtsi128_si32(h);
    memcpy(p, &w, 2);
  }
}

#endif
