/* f32 spatial-pack micro-kernels, AVX2+FMA: a vh x vw tile of output pixels x 8 output
 * channels, one ymm accumulator per pixel. Per (input channel, tap): one load of 8 weights, then
 * per pixel a broadcast of its packed input and an FMA. The main tiles hold up to 12
 * accumulators (1x12, 2x6, 3x4), which with the weight vector and the broadcast temporaries
 * fill the 16 ymm registers without spilling. Contract: src/spatial_pack/spack_ukernel.h. */
#include <immintrin.h>

#include "../../ukernel/spack_ukernel.h"
#include "avx2_store.h"
#include "avx2_transpose.h"

#define VH 3
#define VW 12
#define VC 8
#define MAX_ACC 12

/* The bound is the first operand so a NaN accumulator is what max/min return. */
static inline __m256 clamp8(__m256 v, __m256 lo, __m256 hi) {
  return _mm256_min_ps(hi, _mm256_max_ps(lo, v));
}

/* Lanes [0, n) set, n <= 8. */
static inline __m256i lane_mask(size_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

static inline __attribute__((always_inline)) void spack_tile(
    const dlc_f32_spack_params *prm, const float *in, const float *w, const float *bias,
    float *y, size_t nc, const size_t nvh, const size_t nvw) {
  __m256 acc[VH][VW];
  const __m256 b = _mm256_loadu_ps(bias);
#pragma GCC unroll 3
  for (size_t vh = 0; vh < nvh; vh++)
#pragma GCC unroll 12
    for (size_t vw = 0; vw < nvw; vw++) acc[vh][vw] = b;

  const size_t ntaps = prm->ntaps, rs = prm->in_row_stride, ics = prm->in_ch_stride;
  const ptrdiff_t *tap_off = prm->tap_off;
  for (size_t ic = 0; ic < prm->cin; ic++, in += ics) {
    for (size_t t = 0; t < ntaps; t++, w += VC) {
      const __m256 wv = _mm256_loadu_ps(w);
      const float *x = in + tap_off[t];
#pragma GCC unroll 3
      for (size_t vh = 0; vh < nvh; vh++, x += rs)
#pragma GCC unroll 12
        for (size_t vw = 0; vw < nvw; vw++)
          acc[vh][vw] = _mm256_fmadd_ps(_mm256_broadcast_ss(x + vw), wv, acc[vh][vw]);
    }
  }

  const __m256 lo = _mm256_set1_ps(prm->out_min), hi = _mm256_set1_ps(prm->out_max);
#pragma GCC unroll 3
  for (size_t vh = 0; vh < nvh; vh++)
#pragma GCC unroll 12
    for (size_t vw = 0; vw < nvw; vw++) acc[vh][vw] = clamp8(acc[vh][vw], lo, hi);

  if (prm->y_ch_stride == 1) {
    /* NHWC: each pixel's channels are contiguous. */
#pragma GCC unroll 3
    for (size_t vh = 0; vh < nvh; vh++)
#pragma GCC unroll 12
      for (size_t vw = 0; vw < nvw; vw++) {
        float *yp = y + vh * prm->y_row_stride + vw * prm->y_col_stride;
        dlc_avx2_store_first(yp, (ptrdiff_t)nc, acc[vh][vw]);  /* no vmaskmovps: slow on AMD */
      }
    return;
  }
  /* NCHW: transpose each tile row in registers, 8 pixels at a time (pixels x channels ->
     channels x pixels), then one store of up to 8 contiguous pixels per channel. */
#pragma GCC unroll 3
  for (size_t vh = 0; vh < nvh; vh++) {
    float *yr = y + vh * prm->y_row_stride;
#pragma GCC unroll 2
    for (size_t j = 0; j < nvw; j += 8) {
      const size_t np = nvw - j < 8 ? nvw - j : 8;
      __m256 r[8];
#pragma GCC unroll 8
      for (size_t i = 0; i < 8; i++) r[i] = i < np ? acc[vh][j + i < VW ? j + i : 0] : _mm256_setzero_ps();
      dlc_avx2_transpose8(r);
#pragma GCC unroll 8
      for (size_t c = 0; c < VC; c++) {
        if (c >= nc) break;
        dlc_avx2_store_first(yr + c * prm->y_ch_stride + j, (ptrdiff_t)np, r[c]);
      }
    }
  }
}

#define SPACK_KERNEL(H, W)                                                                     \
  static void dlc_f32_spack_##H##x##W##x8__avx2(const dlc_f32_spack_params *prm,              \
                                                const float *in, const float *w,               \
                                                const float *bias, float *y, size_t nc) {      \
    spack_tile(prm, in, w, bias, y, nc, H, W);                                                 \
  }
#define SPACK_ENTRY(H, W) [((H) - 1) * VW + (W) - 1] = dlc_f32_spack_##H##x##W##x8__avx2,

/* Every tile with vh*vw <= MAX_ACC. */
#define COLS4(X, H) X(H, 1) X(H, 2) X(H, 3) X(H, 4)
#define COLS6(X, H) COLS4(X, H) X(H, 5) X(H, 6)
#define COLS12(X, H) COLS6(X, H) X(H, 7) X(H, 8) X(H, 9) X(H, 10) X(H, 11) X(H, 12)
#define SPACK_TILES(X) COLS12(X, 1) COLS6(X, 2) COLS4(X, 3)

SPACK_TILES(SPACK_KERNEL)

static const dlc_f32_spack_ukernel_fn ukernels[VH * VW] = {SPACK_TILES(SPACK_ENTRY)};

const dlc_f32_spack_family dlc_f32_spack__avx2 = {
    .name = "f32_spack__avx2",
    .vh = VH,
    .vw = VW,
    .vc = VC,
    .max_acc = MAX_ACC,
    .min_acc = 8,   /* 2 FMA pipes x 4 cycles */
    .ukernels = ukernels,
};
