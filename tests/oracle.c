/* Naive double-precision conv2d / dense reference (see oracle.h). */
#include "oracle.h"

#include <math.h>

int64_t oracle_out_dim(int64_t in, int64_t pad_a, int64_t pad_b, int64_t k, int64_t dil, int64_t stride) {
  int64_t room = in + pad_a + pad_b - dil * (k - 1) - 1;
  if (room < 0 || stride < 1) return 0;
  return room / stride + 1;
}

double oracle_clamp(double v, double lo, double hi) {
  if (isnan(v)) return v;
  if (v < lo) v = lo;
  if (v > hi) v = hi;
  return v;
}

static size_t x_index(const dlconv_conv2d_desc *d, int64_t b, int64_t c, int64_t h, int64_t w) {
  if (d->layout == DLCONV_NHWC) return (size_t)(((b * d->h_in + h) * d->w_in + w) * d->c_in + c);
  return (size_t)(((b * d->c_in + c) * d->h_in + h) * d->w_in + w);
}

static size_t y_index(const dlconv_conv2d_desc *d, int64_t ho, int64_t wo, int64_t b, int64_t c,
                      int64_t h, int64_t w) {
  if (d->layout == DLCONV_NHWC) return (size_t)(((b * ho + h) * wo + w) * d->c_out + c);
  return (size_t)(((b * d->c_out + c) * ho + h) * wo + w);
}

void oracle_conv2d(const dlconv_conv2d_desc *d, const float *x, const float *w, const float *bias,
                   double *y, double *abs_sum) {
  const int64_t ho = oracle_out_dim(d->h_in, d->pad_top, d->pad_bottom, d->k_h, d->dilation_h, d->stride_h);
  const int64_t wo = oracle_out_dim(d->w_in, d->pad_left, d->pad_right, d->k_w, d->dilation_w, d->stride_w);
  const int64_t cin_g = d->c_in / d->groups, cout_g = d->c_out / d->groups;
  for (int64_t b = 0; b < d->n; b++)
    for (int64_t oc = 0; oc < d->c_out; oc++) {
      const int64_t g = oc / cout_g;
      const double bv = bias ? (double)bias[oc] : 0.0;
      for (int64_t oh = 0; oh < ho; oh++)
        for (int64_t ow = 0; ow < wo; ow++) {
          double acc = 0.0, mag = 0.0;
          for (int64_t icg = 0; icg < cin_g; icg++) {
            const int64_t ic = g * cin_g + icg;
            for (int64_t ky = 0; ky < d->k_h; ky++) {
              const int64_t ih = oh * d->stride_h - d->pad_top + ky * d->dilation_h;
              if (ih < 0 || ih >= d->h_in) continue;
              for (int64_t kx = 0; kx < d->k_w; kx++) {
                const int64_t iw = ow * d->stride_w - d->pad_left + kx * d->dilation_w;
                if (iw < 0 || iw >= d->w_in) continue;
                const double p = (double)x[x_index(d, b, ic, ih, iw)] *
                                 (double)w[((oc * cin_g + icg) * d->k_h + ky) * d->k_w + kx];
                acc += p;
                mag += fabs(p);
              }
            }
          }
          acc += bv;
          mag += fabs(bv);
          const size_t i = y_index(d, ho, wo, b, oc, oh, ow);
          if (y) y[i] = oracle_clamp(acc, d->out_min, d->out_max);
          if (abs_sum) abs_sum[i] = mag;
        }
    }
}

void oracle_dense(int32_t batch, int32_t in_f, int32_t out_f, const float *x, const float *w,
                  const float *bias, float out_min, float out_max, double *y, double *abs_sum) {
  for (int64_t b = 0; b < batch; b++)
    for (int64_t o = 0; o < out_f; o++) {
      double acc = bias ? (double)bias[o] : 0.0, mag = fabs(acc);
      for (int64_t i = 0; i < in_f; i++) {
        const double p = (double)x[b * in_f + i] * (double)w[o * in_f + i];
        acc += p;
        mag += fabs(p);
      }
      if (y) y[b * out_f + o] = oracle_clamp(acc, out_min, out_max);
      if (abs_sum) abs_sum[b * out_f + o] = mag;
    }
}
