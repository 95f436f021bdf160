/* f32 spatial-pack micro-kernels, generic: the readable specification of
 * dlc_f32_spack_ukernel_fn (src/spatial_pack/spack_ukernel.h). One body, instantiated for
 * every tile size up to VH x VW so that all loops over the register tile have constant trip
 * counts and the compiler keeps the tile in vector registers. */
#include "../../ukernel/spack_ukernel.h"

#define VH 2
#define VW 4
#define VC 8

static inline float clampf(float v, float lo, float hi) {
  v = v < lo ? lo : v;   /* comparisons, not fmaxf: a NaN stays NaN */
  return v > hi ? hi : v;
}

static inline __attribute__((always_inline)) void spack_tile(
    const dlc_f32_spack_params *prm, const float *restrict in, const float *restrict w,
    const float *restrict bias, float *restrict y, size_t nc, const size_t nvh, const size_t nvw) {
  float acc[VH][VW][VC];
  for (size_t vh = 0; vh < nvh; vh++)
    for (size_t vw = 0; vw < nvw; vw++)
      for (size_t c = 0; c < VC; c++) acc[vh][vw][c] = bias[c];

  const size_t ntaps = prm->ntaps, rs = prm->in_row_stride;
  const ptrdiff_t *restrict tap_off = prm->tap_off;
  for (size_t ic = 0; ic < prm->cin; ic++) {
    const float *restrict plane = in + ic * prm->in_ch_stride;
    for (size_t t = 0; t < ntaps; t++, w += VC) {
      const float *restrict x = plane + tap_off[t];
      for (size_t vh = 0; vh < nvh; vh++)
        for (size_t vw = 0; vw < nvw; vw++) {
          const float xv = x[vh * rs + vw];
          for (size_t c = 0; c < VC; c++) acc[vh][vw][c] += xv * w[c];
        }
    }
  }

  const float lo = prm->out_min, hi = prm->out_max;
  for (size_t vh = 0; vh < nvh; vh++)
    for (size_t vw = 0; vw < nvw; vw++) {
      float *restrict yp = y + vh * prm->y_row_stride + vw * prm->y_col_stride;
      for (size_t c = 0; c < nc; c++) yp[c * prm->y_ch_stride] = clampf(acc[vh][vw][c], lo, hi);
    }
}

#define SPACK_KERNEL(H, W)                                                                      \
  static void dlc_f32_spack_##H##x##W##x8__generic(const dlc_f32_spack_params *prm,           \
                                                   const float *in, const float *w,            \
                                                   const float *bias, float *y, size_t nc) {   \
    spack_tile(prm, in, w, bias, y, nc, H, W);                                                 \
  }
#define SPACK_ENTRY(H, W) [((H) - 1) * VW + (W) - 1] = dlc_f32_spack_##H##x##W##x8__generic,
#define SPACK_TILES(X) X(1, 1) X(1, 2) X(1, 3) X(1, 4) X(2, 1) X(2, 2) X(2, 3) X(2, 4)

SPACK_TILES(SPACK_KERNEL)

static const dlc_f32_spack_ukernel_fn ukernels[VH * VW] = {SPACK_TILES(SPACK_ENTRY)};

const dlc_f32_spack_family dlc_f32_spack__generic = {
    .name = "f32_spack__generic",
    .vh = VH,
    .vw = VW,
    .vc = VC,
    .max_acc = VH * VW,
    .min_acc = 4,
    .ukernels = ukernels,
};
