/* reference.c - naive convolution at single output points, and the comparison (see reference.h). */
#include "reference.h"

#include <math.h>

#include "half.h"

#define FULL_CHECK_MACS 20000000LL
#define SAMPLE_POINTS 3000
#define QUICK_SAMPLE_POINTS 300

typedef struct opoint { int n, oc, oh, ow; } opoint;

static double ref_point(const bench_layer *l, const bench_data *d, opoint p) {
  int cig = l->c_in / l->groups, g = p.oc / (l->c_out / l->groups);
  double acc = d->b_ref ? d->b_ref[p.oc] : 0.0;
  for (int ic = 0; ic < cig; ic++) {
    const float *x = d->x_ref + ((size_t)p.n * l->c_in + (size_t)g * cig + ic) * l->h_in * l->w_in;
    const float *w = d->w_ref + ((size_t)p.oc * cig + ic) * l->k_h * l->k_w;
    for (int r = 0; r < l->k_h; r++) {
      int ih = p.oh * l->stride_h - l->pad_h + r * l->dil_h;
      if (ih < 0 || ih >= l->h_in) continue;
      for (int s = 0; s < l->k_w; s++) {
        int iw = p.ow * l->stride_w - l->pad_w + s * l->dil_w;
        if (iw >= 0 && iw < l->w_in) acc += (double)x[(size_t)ih * l->w_in + iw] * w[r * l->k_w + s];
      }
    }
  }
  return acc;
}

/* ONNX QLinearConv requantisation of an exact accumulator (bias included). */
static double requantise(const bench_data *d, double acc) {
  const dlconv_quant *q = &d->quant;
  double v = nearbyint(acc * q->x_scale * d->w_scale / q->y_scale) + q->y_zero_point;
  double lo = d->dtype == DLCONV_U8 ? 0 : -128, hi = d->dtype == DLCONV_U8 ? 255 : 127;
  return v < lo ? lo : v > hi ? hi : v;
}

static double output_at(const bench_layer *l, const bench_data *d, const void *y, dlconv_layout lay, opoint p) {
  size_t i = bench_index(lay, l->c_out, l->h_out, l->w_out, p.n, p.oc, p.oh, p.ow);
  switch (d->dtype) {
  case DLCONV_F16: return bench_f16_to_f32(((const uint16_t *)y)[i]);
  case DLCONV_U8: return ((const uint8_t *)y)[i];
  case DLCONV_S8: return ((const int8_t *)y)[i];
  default: return ((const float *)y)[i];
  }
}

/* The i-th point to check: all points in order, or corners then seeded random ones. */
static opoint point_at(const bench_layer *l, long i, int full, uint64_t *rng) {
  opoint p;
  if (full) {
    p.ow = (int)(i % l->w_out); i /= l->w_out;
    p.oh = (int)(i % l->h_out); i /= l->h_out;
    p.oc = (int)(i % l->c_out);
    p.n = (int)(i / l->c_out);
    return p;
  }
  if (i < 8) {
    p.n = i < 4 ? 0 : l->n - 1;
    p.oc = i % 2 ? l->c_out - 1 : 0;
    p.oh = (i / 2) % 2 ? l->h_out - 1 : 0;
    p.ow = (i % 4) == 1 || (i % 4) == 2 ? l->w_out - 1 : 0;
    return p;
  }
  *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
  uint64_t r = *rng >> 11;
  p.n = (int)(r % (uint64_t)l->n);
  p.oc = (int)((r >> 8) % (uint64_t)l->c_out);
  *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
  r = *rng >> 11;
  p.oh = (int)(r % (uint64_t)l->h_out);
  p.ow = (int)((r >> 20) % (uint64_t)l->w_out);
  return p;
}

void bench_check_output(const bench_layer *l, const bench_data *d, const void *y, dlconv_layout layout, int quick,
                        bench_check *c) {
  int full = l->macs <= (quick ? FULL_CHECK_MACS / 10 : FULL_CHECK_MACS);
  long count = full ? (long)bench_y_count(l) : quick ? QUICK_SAMPLE_POINTS : SAMPLE_POINTS;
  int int8 = d->dtype == DLCONV_U8 || d->dtype == DLCONV_S8;
  uint64_t rng = 0x5DEECE66Dull ^ (uint64_t)l->macs;
  double max_err = 0, max_ref = 0;
  for (long i = 0; i < count; i++) {
    opoint p = point_at(l, i, full, &rng);
    double r = ref_point(l, d, p), v = output_at(l, d, y, layout, p);
    if (int8) r = requantise(d, r);
    double e = fabs(v - r);
    if (!(e <= max_err)) max_err = isnan(e) ? INFINITY : e;
    if (fabs(r) > max_ref) max_ref = fabs(r);
  }
  double growth = sqrt(bench_reduction(l) / 256.0);
  c->points = count;
  c->err = int8 ? max_err : max_err / (max_ref > 1e-6 ? max_ref : 1e-6);
  c->tol = int8 ? 1.0 : (d->dtype == DLCONV_F16 ? 2e-3 : 1e-4) * (growth > 1 ? growth : 1);
  c->ok = c->err <= c->tol;
}
