/* f32 direct micro-kernels, generic: the readable specification of every ISA's direct kernels
 * (direct_ukernel.h says what each computes). Plain C with fixed-size inner loops over the
 * register tile's lanes, so compilers vectorise them with whatever the baseline offers. */
#include "../../core/util.h"
#include "../../ukernel/direct_ukernel.h"
#include "../../quant/quant.h"

#define VL 8
#define CONV_TW1 8
#define CONV_TW2 4
#define DWC_TW 4
#define DWP_VECS 4
#define TWMAX 8

typedef float tile_t[TWMAX][2 * VL];

/* acc = acc_in, or the bias in the nc valid lanes (zero beyond). */
static inline void tile_init(tile_t acc, size_t nw, size_t lanes, const dlc_f32_direct_args *restrict a) {
  for (size_t p = 0; p < nw; p++)
    for (size_t c = 0; c < lanes; c++)
      acc[p][c] = a->acc_in ? a->acc_in[(ptrdiff_t)p * a->acc_ld + (ptrdiff_t)c] : (c < a->nc ? a->bias[c] : 0.0f);
}

/* Raw into acc_out, or clamped into the nc valid channels of y. */
static inline void tile_store(tile_t acc, size_t nw, size_t lanes, const dlc_f32_direct_args *restrict a) {
  if (a->acc_out) {
    for (size_t p = 0; p < nw; p++)
      for (size_t c = 0; c < lanes; c++) a->acc_out[(ptrdiff_t)p * a->acc_ld + (ptrdiff_t)c] = acc[p][c];
    return;
  }
  for (size_t p = 0; p < nw; p++)
    for (size_t c = 0; c < a->nc; c++) {
      const float v = dlc_clamp(acc[p][c], a->out_min, a->out_max);
      const ptrdiff_t at = (ptrdiff_t)p * a->y_pix + (ptrdiff_t)c * a->y_c;
      if (a->yh)
        a->yh[at] = dlc_f32_to_f16(v);
      else
        a->y[at] = v;
    }
}

static inline __attribute__((always_inline)) void conv_tile(size_t nw, const dlc_f32_direct_args *restrict a,
                                                            const size_t NV) {
  tile_t acc;
  tile_init(acc, nw, NV * VL, a);
  for (size_t i0 = 0; i0 < a->n[0]; i0++) {
    for (size_t i1 = 0; i1 < a->n[1]; i1++) {
      const float *restrict xk = a->x + (ptrdiff_t)i0 * a->x_s[0] + (ptrdiff_t)i1 * a->x_s[1];
      const float *restrict wk = a->w + (ptrdiff_t)i0 * a->w_s[0] + (ptrdiff_t)i1 * a->w_s[1];
      for (size_t i2 = 0; i2 < a->n[2]; i2++) {
        float wv[2 * VL];
        for (size_t v = 0; v < NV; v++)
          for (size_t l = 0; l < VL; l++) wv[v * VL + l] = wk[(ptrdiff_t)v * a->w_v + (ptrdiff_t)l];
        for (size_t p = 0; p < nw; p++) {
          const float xv = xk[(ptrdiff_t)p * a->x_pix];
          for (size_t c = 0; c < NV * VL; c++) acc[p][c] += xv * wv[c];
        }
        xk += a->x_s[2];
        wk += a->w_s[2];
      }
    }
  }
  tile_store(acc, nw, NV * VL, a);
}

static void conv_1v_tile(size_t nw, const dlc_f32_direct_args *a) { conv_tile(nw, a, 1); }
static void conv_2v_tile(size_t nw, const dlc_f32_direct_args *a) { conv_tile(nw, a, 2); }
static void conv_1v(size_t nw, const dlc_f32_direct_args *a) { dlc_f32_direct_split(nw, CONV_TW1, a, conv_1v_tile); }
static void conv_2v(size_t nw, const dlc_f32_direct_args *a) { dlc_f32_direct_split(nw, CONV_TW2, a, conv_2v_tile); }

/* Input channels of one channel vector, lane by lane: masked by n_in, permuted by perm. */
static inline void dwc_load(float xv[VL], const float *restrict xp, const dlc_f32_direct_args *restrict a, size_t v) {
  const float *restrict xs = xp + a->x_v[v];
  for (size_t l = 0; l < VL; l++) {
    const size_t i = a->perm ? (size_t)a->perm[v * VL + l] : l;
    xv[l] = (int32_t)i < a->n_in[v] ? xs[i] : 0.0f;
  }
}

static inline __attribute__((always_inline)) void dwc_tile(size_t nw, const dlc_f32_direct_args *restrict a,
                                                           const size_t NV) {
  tile_t acc;
  tile_init(acc, nw, NV * VL, a);
  for (size_t i0 = 0; i0 < a->n[0]; i0++) {
    for (size_t i1 = 0; i1 < a->n[1]; i1++) {
      for (size_t i2 = 0; i2 < a->n[2]; i2++) {
        const ptrdiff_t xo = (ptrdiff_t)i0 * a->x_s[0] + (ptrdiff_t)i1 * a->x_s[1] + (ptrdiff_t)i2 * a->x_s[2];
        const ptrdiff_t wo = (ptrdiff_t)i0 * a->w_s[0] + (ptrdiff_t)i1 * a->w_s[1] + (ptrdiff_t)i2 * a->w_s[2];
        for (size_t p = 0; p < nw; p++) {
          for (size_t v = 0; v < NV; v++) {
            float xv[VL];
            dwc_load(xv, a->x + xo + (ptrdiff_t)p * a->x_pix, a, v);
            for (size_t l = 0; l < VL; l++) acc[p][v * VL + l] += xv[l] * a->w[wo + (ptrdiff_t)v * a->w_v + (ptrdiff_t)l];
          }
        }
      }
    }
  }
  tile_store(acc, nw, NV * VL, a);
}

static void dwc_1v_tile(size_t nw, const dlc_f32_direct_args *a) { dwc_tile(nw, a, 1); }
static void dwc_2v_tile(size_t nw, const dlc_f32_direct_args *a) { dwc_tile(nw, a, 2); }
static void dwc_1v(size_t nw, const dlc_f32_direct_args *a) { dlc_f32_direct_split(nw, DWC_TW, a, dwc_1v_tile); }
static void dwc_2v(size_t nw, const dlc_f32_direct_args *a) { dlc_f32_direct_split(nw, DWC_TW, a, dwc_2v_tile); }

/* Depthwise NCHW: taps that fall on padding are skipped pixel by pixel. */
static void dwp(size_t nw, const dlc_f32_dwp_args *a) {
  for (size_t r = 0; r < a->nr; r++) {
    const ptrdiff_t iy0 = a->iy0 + (ptrdiff_t)r * a->sh;
    float acc[DWP_VECS * VL];
    for (size_t p = 0; p < nw; p++) acc[p] = a->bias;
    for (ptrdiff_t ky = 0; ky < a->kh; ky++) {
      const ptrdiff_t iy = iy0 + ky * a->dh;
      if (iy < 0 || iy >= a->h_in) continue;
      const float *restrict xr = a->x + iy * a->w_in;
      for (ptrdiff_t kx = 0; kx < a->kw; kx++) {
        const float wv = a->w[ky * a->kw + kx];
        for (size_t p = 0; p < nw; p++) {
          const ptrdiff_t ix = a->ix0 + (ptrdiff_t)p * a->sw + kx * a->dw;
          if (ix >= 0 && ix < a->w_in) acc[p] += wv * xr[ix];
        }
      }
    }
    float *restrict yr = a->y + (ptrdiff_t)r * a->y_row;
    for (size_t p = 0; p < nw; p++) yr[p] = dlc_clamp(acc[p], a->out_min, a->out_max);
  }
}

static void to_channel_last(const float *src, size_t plane, size_t w, size_t ci, float *dst) {
  for (size_t ix = 0; ix < w; ix++)
    for (size_t ic = 0; ic < ci; ic++) dst[ix * ci + ic] = src[ic * plane + ix];
}

static void to_channel_last_f16(const uint16_t *src, size_t plane, size_t w, size_t ci, float *dst) {
  for (size_t ix = 0; ix < w; ix++)
    for (size_t ic = 0; ic < ci; ic++) dst[ix * ci + ic] = dlc_f16_to_f32(src[ic * plane + ix]);
}

static void to_channel_first(const float *src, size_t ld, size_t w, size_t ci, float *dst, size_t plane) {
  for (size_t ic = 0; ic < ci; ic++)
    for (size_t ix = 0; ix < w; ix++) dst[ic * plane + ix] = src[ix * ld + ic];
}

const dlc_f32_direct_family dlc_f32_direct__generic = {
    .name = "f32_direct_4x16__generic",
    .dw_name = "f32_dwconv_4x16c_4x8p__generic",
    .vl = VL,
    .conv_tw = {CONV_TW1, CONV_TW2},
    .conv = {conv_1v, conv_2v},
    .dwc_tw = {DWC_TW, DWC_TW},
    .dwc = {dwc_1v, dwc_2v},
    .dwp_vecs = DWP_VECS,
    .dwp_rows = {1, 1, 1, 1},
    .dwp = dwp,
    .to_channel_last = to_channel_last,
    .f16_out = 1,
    .to_channel_last_f16 = to_channel_last_f16,
    .to_channel_first = to_channel_first,
};
