/* f32 spatial-pack micro-kernels, AVX-512F: a vh x vw tile of output pixels x 16 output
 * channels, one zmm accumulator per pixel. Per (input channel, tap) the kernel loads one vector
 * of 16 weights and multiplies it into every pixel of the tile with an FMA whose input operand
 * is an embedded broadcast of the packed input: 1 + vh*vw loads for vh*vw FMAs. The main tiles
 * hold up to 28 accumulators (2x14, 4x7, ...), enough independent FMAs to cover the FMA latency
 * on both FMA pipes. Contract: src/spatial_pack/spack_ukernel.h. */
#include <immintrin.h>

#include "../../ukernel/spack_ukernel.h"

#define VH 4
#define VW 14
#define VC 16
#define MAX_ACC 28

/* The fused clamp: the bound is the first operand so a NaN accumulator is what max/min return. */
static inline __m512 clamp16(__m512 v, __m512 lo, __m512 hi) {
  return _mm512_min_ps(hi, _mm512_max_ps(lo, v));
}

/* r[i][j] <-> r[j][i]: unpack pairs of rows, then shuffle 2x2 blocks, then 128-bit lanes twice. */
static inline __attribute__((always_inline)) void transpose16x16(__m512 r[16]) {
  __m512 t[16], u[16];
#pragma GCC unroll 8
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 16; i += 4) {
    u[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
#pragma GCC unroll 2
  for (int i = 0; i < 16; i += 8)
#pragma GCC unroll 4
    for (int j = 0; j < 4; j++) {
      t[i + j] = _mm512_shuffle_f32x4(u[i + j], u[i + j + 4], 0x88);
      t[i + j + 4] = _mm512_shuffle_f32x4(u[i + j], u[i + j + 4], 0xDD);
    }
#pragma GCC unroll 8
  for (int j = 0; j < 8; j++) {
    r[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
    r[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xDD);
  }
}

static inline __attribute__((always_inline)) void spack_tile(
    const dlc_f32_spack_params *prm, const float *in, const float *w, const float *bias,
    float *y, size_t nc, const size_t nvh, const size_t nvw) {
  __m512 acc[VH][VW];
  const __m512 b = _mm512_loadu_ps(bias);
#pragma GCC unroll 4
  for (size_t vh = 0; vh < nvh; vh++)
#pragma GCC unroll 14
    for (size_t vw = 0; vw < nvw; vw++) acc[vh][vw] = b;

  const size_t ntaps = prm->ntaps, rs = prm->in_row_stride, ics = prm->in_ch_stride;
  const ptrdiff_t *tap_off = prm->tap_off;
  for (size_t ic = 0; ic < prm->cin; ic++, in += ics) {
    for (size_t t = 0; t < ntaps; t++, w += VC) {
      const __m512 wv = _mm512_loadu_ps(w);
      const float *x = in + tap_off[t];
#pragma GCC unroll 4
      for (size_t vh = 0; vh < nvh; vh++, x += rs)
#pragma GCC unroll 14
        for (size_t vw = 0; vw < nvw; vw++)
          acc[vh][vw] = _mm512_fmadd_ps(_mm512_set1_ps(x[vw]), wv, acc[vh][vw]);
    }
  }

  const __m512 lo = _mm512_set1_ps(prm->out_min), hi = _mm512_set1_ps(prm->out_max);
#pragma GCC unroll 4
  for (size_t vh = 0; vh < nvh; vh++)
#pragma GCC unroll 14
    for (size_t vw = 0; vw < nvw; vw++) acc[vh][vw] = clamp16(acc[vh][vw], lo, hi);

  if (prm->y_ch_stride == 1) {
    /* NHWC: each pixel's channels are contiguous. */
    const __mmask16 m = _cvtu32_mask16((1u << nc) - 1u);
#pragma GCC unroll 4
    for (size_t vh = 0; vh < nvh; vh++)
#pragma GCC unroll 14
      for (size_t vw = 0; vw < nvw; vw++)
        _mm512_mask_storeu_ps(y + vh * prm->y_row_stride + vw * prm->y_col_stride, m, acc[vh][vw]);
    return;
  }
  /* NCHW: transpose each tile row in registers (pixels x channels -> channels x pixels), then
     one masked store of nvw contiguous pixels per channel. */
  const __mmask16 mw = _cvtu32_mask16((1u << nvw) - 1u);
#pragma GCC unroll 4
  for (size_t vh = 0; vh < nvh; vh++) {
    __m512 r[16];
#pragma GCC unroll 16
    for (size_t i = 0; i < 16; i++) r[i] = i < nvw ? acc[vh][i < VW ? i : 0] : _mm512_setzero_ps();
    transpose16x16(r);
    float *yr = y + vh * prm->y_row_stride;
#pragma GCC unroll 16
    for (size_t c = 0; c < VC; c++)
      if (c < nc) _mm512_mask_storeu_ps(yr + c * prm->y_ch_stride, mw, r[c]);
  }
}

#define SPACK_KERNEL(H, W)                                                                      \
  static void dlc_f32_spack_##H##x##W##x16__avx512(const dlc_f32_spack_params *prm,           \
                                                   const float *in, const float *w,            \
                                                   const float *bias, float *y, size_t nc) {   \
    spack_tile(prm, in, w, bias, y, nc, H, W);                                                 \
  }
#define SPACK_ENTRY(H, W) [((H) - 1) * VW + (W) - 1] = dlc_f32_spack_##H##x##W##x16__avx512,

/* Every tile with vh*vw <= MAX_ACC. */
#define COLS7(X, H) X(H, 1) X(H, 2) X(H, 3) X(H, 4) X(H, 5) X(H, 6) X(H, 7)
#define COLS9(X, H) COLS7(X, H) X(H, 8) X(H, 9)
#define COLS14(X, H) COLS9(X, H) X(H, 10) X(H, 11) X(H, 12) X(H, 13) X(H, 14)
#define SPACK_TILES(X) COLS14(X, 1) COLS14(X, 2) COLS9(X, 3) COLS7(X, 4)

SPACK_TILES(SPACK_KERNEL)

static const dlc_f32_spack_ukernel_fn ukernels[VH * VW] = {SPACK_TILES(SPACK_ENTRY)};

const dlc_f32_spack_family dlc_f32_spack__avx512 = {
    .name = "f32_spack__avx512",
    .vh = VH,
    .vw = VW,
    .vc = VC,
    .max_acc = MAX_ACC,
    .min_acc = 8,   /* 2 FMA pipes x 4 cycles */
    .ukernels = ukernels,
};
