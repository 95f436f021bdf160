/* The self-check behind DLCONV_VERIFY. Independent of every algorithm: a direct loop nest in
   double precision over the caller's tensors and the plan's own copy of the OIHW weights. */
#include "verify.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/util.h"
#include "../ukernel/config.h"
#include "names.h"
#include "validate.h"

dlconv_status dlc_verify_keep_weights(dlconv_plan *p, const void *w) {
  size_t n = dlc_w_elems(&p->s);
  p->verify_w = dlc_malloc(n * sizeof(float));
  if (!p->verify_w) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory keeping weights for DLCONV_VERIFY");
  if (p->dtype == DLCONV_F32)
    memcpy(p->verify_w, w, n * sizeof(float));
  else if (p->dtype == DLCONV_F16)
    for (size_t i = 0; i < n; i++) p->verify_w[i] = dlc_f16_to_f32(((const uint16_t *)w)[i]);
  else
    for (size_t i = 0; i < n; i++) p->verify_w[i] = ((const int8_t *)w)[i];
  return DLCONV_OK;
}

/* x[i] as a real number; int8: x - x_zero_point, so that padding (a skipped tap) is exactly 0. */
static double x_value(const dlconv_plan *p, const void *x, size_t i) {
  switch (p->dtype) {
    case DLCONV_F16: return dlc_f16_to_f32(((const uint16_t *)x)[i]);
    case DLCONV_U8: return (double)((const uint8_t *)x)[i] - p->q8.x_zero_point;
    case DLCONV_S8: return (double)((const int8_t *)x)[i] - p->q8.x_zero_point;
    default: return ((const float *)x)[i];
  }
}

static double y_value(const dlconv_plan *p, const void *y, size_t i) {
  switch (p->dtype) {
    case DLCONV_F16: return dlc_f16_to_f32(((const uint16_t *)y)[i]);
    case DLCONV_U8: return ((const uint8_t *)y)[i];
    case DLCONV_S8: return ((const int8_t *)y)[i];
    default: return ((const float *)y)[i];
  }
}

static size_t x_index(const dlc_conv_shape *s, int64_t n, int64_t c, int64_t h, int64_t w) {
  return s->layout == DLCONV_NHWC ? (size_t)(((n * s->h_in + h) * s->w_in + w) * s->c_in + c)
                                  : (size_t)(((n * s->c_in + c) * s->h_in + h) * s->w_in + w);
}

static size_t y_index(const dlc_conv_shape *s, int64_t n, int64_t c, int64_t h, int64_t w) {
  return s->layout == DLCONV_NHWC ? (size_t)(((n * s->h_out + h) * s->w_out + w) * s->c_out + c)
                                  : (size_t)(((n * s->c_out + c) * s->h_out + h) * s->w_out + w);
}

/* The unclamped reference at one output point over the taps with a nonzero weight (a zero
   weight contributes nothing, as in the CSR kernels, which never multiply it), the sum of
   |terms| that bounds its rounding error, and whether a term left out could have made a kernel's
   result NaN: a zero weight against a non-finite x (dense kernels compute NaN*0 = NaN), or a
   non-finite weight against zero padding (kernels that materialise the padding compute 0*Inf).
   Both ways of computing are right; verify must not call either one wrong. */
static double reference(const dlconv_plan *p, const void *x, int64_t n, int64_t oc, int64_t oh, int64_t ow,
                        double *abs_sum, double *flush, int *maybe_nan) {
  const dlc_conv_shape *s = &p->s;
  int64_t g = oc / s->cout_g;
  double acc = p->bias[oc], mag = fabs(acc), wsum = 0, xsum = 0;
  int skipped_nonfinite = 0;
  for (int64_t ic = 0; ic < s->cin_g; ic++)
    for (int64_t ky = 0; ky < s->k_h; ky++) {
      int64_t ih = oh * s->stride_h - s->pad_t + ky * s->dil_h;
      int row_in = ih >= 0 && ih < s->h_in;
      for (int64_t kx = 0; kx < s->k_w; kx++) {
        double wv = p->verify_w[((oc * s->cin_g + ic) * s->k_h + ky) * s->k_w + kx];
        int64_t iw = ow * s->stride_w - s->pad_l + kx * s->dil_w;
        if (!row_in || iw < 0 || iw >= s->w_in) {
          skipped_nonfinite |= !isfinite(wv);
          continue;
        }
        double xv = x_value(p, x, x_index(s, n, g * s->cin_g + ic, ih, iw));
        if (wv == 0) {
          skipped_nonfinite |= !isfinite(xv);
          continue;
        }
        double t = xv * wv;
        acc += t;
        mag += fabs(t);
        if (isfinite(wv)) wsum += fabs(wv);
        if (isfinite(xv)) xsum += fabs(xv);
      }
    }
  *abs_sum = mag;
  /* the kernels run with flush-to-zero and denormals-are-zero (fpenv.h): an operand or partial
     result below FLT_MIN may count as 0 (a denormal x times its weight, a denormal weight times
     its x, a denormal partial sum), which moves the result by at most this much */
  *flush = (double)FLT_MIN * (wsum + xsum + (double)(s->cin_g * s->k_h * s->k_w) + 2.0);
  *maybe_nan = skipped_nonfinite;
  return acc;
}

/* How far got is from the reference acc (unclamped), in units of the rounding-error bound mag;
   0 when they agree, INFINITY when they cannot be reconciled. A NaN in the reference must come
   out as NaN (the clamp never hides one); a NaN in the kernel's result is fine where a term the
   reference left out (see reference()) or an infinite reference explains it; an infinity in
   the kernel's result is fine where the reference overflows float. */
static double deviation(const dlc_conv_shape *s, double acc, double mag, double flush, int maybe_nan, double got) {
  double ref = acc;
  if (!isnan(ref)) {
    if (ref < s->out_min) ref = s->out_min;
    if (ref > s->out_max) ref = s->out_max;
  }
  if (isnan(got)) return isnan(ref) || maybe_nan || isinf(acc) ? 0 : INFINITY;
  if (isnan(ref)) return INFINITY;
  if (isinf(got) || isinf(ref)) {
    if (got == ref) return 0;
    /* float overflow where double does not: same sign, beyond FLT_MAX, then clamped alike */
    double big = acc > 0 ? INFINITY : -INFINITY, big_c = big;
    if (big_c < s->out_min) big_c = s->out_min;
    if (big_c > s->out_max) big_c = s->out_max;
    return fabs(acc) > 3.4028234663852886e38 && got == big_c ? 0 : INFINITY;
  }
  double d = fabs(got - ref) - flush;
  return d <= 0 ? 0 : d / (mag > 1e-30 ? mag : 1e-30);
}

static uint64_t next(uint64_t *state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return *state;
}

dlconv_status dlc_verify_output(const dlconv_plan *p, const void *x, const void *y) {
  const dlc_conv_shape *s = &p->s;
  size_t total = dlc_y_elems(s);
  int64_t k = s->cin_g * s->k_h * s->k_w;
  /* every point while that costs about as much as a small layer, else a fixed sample */
  size_t samples = (size_t)p->macs <= (size_t)1 << 22 ? total : 4096;
  double tol = 4e-6 * sqrt((double)k);
  double worst = 0;
  int64_t wn = 0, wc = 0, wh = 0, ww = 0;
  double wy = 0, wref = 0;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < samples; i++) {
    size_t idx = samples == total ? i : (size_t)(next(&state) % total);
    int64_t n, c, h, w;
    if (s->layout == DLCONV_NHWC) {
      c = (int64_t)(idx % (size_t)s->c_out); idx /= (size_t)s->c_out;
      w = (int64_t)(idx % (size_t)s->w_out); idx /= (size_t)s->w_out;
      h = (int64_t)(idx % (size_t)s->h_out); n = (int64_t)(idx / (size_t)s->h_out);
    } else {
      w = (int64_t)(idx % (size_t)s->w_out); idx /= (size_t)s->w_out;
      h = (int64_t)(idx % (size_t)s->h_out); idx /= (size_t)s->h_out;
      c = (int64_t)(idx % (size_t)s->c_out); n = (int64_t)(idx / (size_t)s->c_out);
    }
    double mag, flush;
    int maybe_nan;
    double acc = reference(p, x, n, c, h, w, &mag, &flush, &maybe_nan);
    double got = y_value(p, y, y_index(s, n, c, h, w)), err, ref;
    if (p->dtype == DLCONV_U8 || p->dtype == DLCONV_S8) {
      /* exact: acc is an integer below 2^31 in magnitude (K is bounded at plan) */
      ref = dlc_q8_requant1((int64_t)acc + p->q8.bias[c], p->q8.mult[c], &p->q8);
      err = got == ref ? 0 : INFINITY;
    } else {
      ref = isnan(acc) ? acc : acc < s->out_min ? s->out_min : acc > s->out_max ? s->out_max : acc;
      if (p->dtype == DLCONV_F16 && isinf(got) && !isnan(ref) && fabs(ref) >= 65504.0 && (got > 0) == (ref > 0))
        err = 0; /* rounds past the largest half */
      else
        /* F16: the result's own rounding to binary16, half an ulp (2^-11 relative, 2^-25 absolute) */
        err = deviation(s, acc, mag, p->dtype == DLCONV_F16 ? flush + fabs(ref) * 0x1p-11 + 0x1p-25 : flush,
                        maybe_nan, got);
    }
    if (err > worst) {
      worst = err; wn = n; wc = c; wh = h; ww = w; wy = got; wref = ref;
    }
  }
  if (worst <= tol) return DLCONV_OK;
  char msg[400];
  snprintf(msg, sizeof msg,
           "DLCONV_VERIFY mismatch: %s/%s kernel %s shape n=%lld c_in=%lld %lldx%lld c_out=%lld k=%lldx%lld g=%lld: "
           "y[n=%lld,c=%lld,h=%lld,w=%lld] = %.9g, reference %.9g (relative error %.3g > %.3g)",
           dlc_algo_name(p->algo), p->kernels->name, p->kernel, (long long)s->n, (long long)s->c_in, (long long)s->h_in,
           (long long)s->w_in, (long long)s->c_out, (long long)s->k_h, (long long)s->k_w, (long long)s->groups,
           (long long)wn, (long long)wc, (long long)wh, (long long)ww, wy, wref, worst, tol);
  fprintf(stderr, "dlconv: %s\n", msg);
  return dlc_fail(DLCONV_ERR_INTERNAL, "%s", msg);
}
