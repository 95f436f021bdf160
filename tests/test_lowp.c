/* API-level tests of the low-precision paths: F16 and int8 (U8 / S8 x and y, S8 w, S32 bias)
 * convolution and dense layers, against oracles written here (independent of src/):
 *
 *  - F16: binary16 <-> double conversions of our own; the reference sum is computed in double from
 *    the exact fp16 inputs. Tolerance: fp32 accumulation (3e-7 x (K+1) x sum |terms|) plus the final
 *    rounding to fp16 (|ref| x 2^-11 + 2^-25).
 *  - int8: acc in int64, then exactly the contract's requantisation in IEEE double, this order:
 *      mult = (double)x_scale * (double)w_scale[oc] / (double)y_scale
 *      v    = (double)(acc + bias[oc]) * mult
 *      v    = min(max(v, (double)out_min / y_scale), (double)out_max / y_scale)
 *      y    = saturate(nearbyint(v) + y_zero_point)
 *    Results must be bit-exact.
 *
 * Only the public header is used, and one internal hook (src/core/test_hooks.h) that makes the
 * direct convolution path run both of its modes on every shape. Every run checks guard bytes around y (and that y's whole
 * extent is written), that x, w, bias and the scales are not modified, and dlconv_plan_query. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dlconv.h"
#include "core/test_hooks.h"
#include "oracle.h"
#include "support/canary.h"
#include "support/half.h"
#include "support/layer.h"
#include "support/names.h"
#include "support/rng.h"
#include "support/tally.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static long g_fails;        /* failures reported in the current test */
static long g_runs, g_unsupported;
static int g_verbose;

#define FAIL(...)                                     \
  do {                                                \
    g_fails++;                                        \
    if (g_fails <= 60) {                              \
      printf("FAIL: ");                               \
      printf(__VA_ARGS__);                            \
      printf("\n");                                   \
    }                                                 \
  } while (0)

/* ------------------------------------------------------------------------------------------ */
/* Seeded streams (support/rng.h), salted apart from the other API tests' */

static rng_t lowp_rng(uint64_t seed) { return rng_seed_salted(seed, 0x1234567); }

/* ------------------------------------------------------------------------------------------ */
/* Guarded buffers (support/canary.h)                                                           */

static void gb_fill(canary_buf *g, uint64_t seed) {
  rng_t r = lowp_rng(seed);
  unsigned char *p = g->p;
  for (size_t i = 0; i < g->bytes; i++) p[i] = (unsigned char)rng_next(&r);
}

/* ------------------------------------------------------------------------------------------ */
/* One layer: data, quantisation and reference                                                  */

typedef struct layer {
  int dense;                   /* 1: dlconv_plan_dense / dlconv_dense (d: n = batch, 1x1) */
  dlconv_conv2d_desc d;
  int64_t ho, wo;
  size_t xn, wn, yn, K;
  size_t es;                   /* element size of x and y: 2 (F16) or 1 */
  canary_buf xb, wb, bb;
  int has_bias;
  unsigned char *x0, *w0, *b0; /* pristine copies */
  /* int8 */
  dlconv_quant q;
  float *wsc, *wsc0;
  int32_t *bias32;             /* == bb.p when has_bias */
  /* references */
  double *ref, *mag;           /* F16 */
  int64_t *acc;                /* int8 acc without bias */
  int32_t *ref8;               /* int8 expected y */
  long ties, sat_lo, sat_hi, clamped;
  char name[400];
} layer;

static int is_q8(dlconv_dtype t) { return t == DLCONV_U8 || t == DLCONV_S8; }
static int32_t tmin(dlconv_dtype t) { return t == DLCONV_U8 ? 0 : -128; }
static int32_t tmax(dlconv_dtype t) { return t == DLCONV_U8 ? 255 : 127; }

static size_t x_index(const dlconv_conv2d_desc *d, int64_t n, int64_t c, int64_t h, int64_t w) {
  if (d->layout == DLCONV_NHWC) return (size_t)(((n * d->h_in + h) * d->w_in + w) * d->c_in + c);
  return (size_t)(((n * d->c_in + c) * d->h_in + h) * d->w_in + w);
}
static void y_coords(const layer *L, size_t i, int64_t *n, int64_t *c, int64_t *h, int64_t *w) {
  const int64_t co = L->d.c_out;
  if (L->d.layout == DLCONV_NHWC) {
    *c = (int64_t)i % co; i /= (size_t)co; *w = (int64_t)i % L->wo; i /= (size_t)L->wo;
    *h = (int64_t)i % L->ho; *n = (int64_t)i / L->ho;
  } else {
    *w = (int64_t)i % L->wo; i /= (size_t)L->wo; *h = (int64_t)i % L->ho; i /= (size_t)L->ho;
    *c = (int64_t)i % co; *n = (int64_t)i / co;
  }
}

static const char *bound_str(float v, char *b, size_t n) {
  if (isinf(v)) snprintf(b, n, "%sinf", v < 0 ? "-" : "");
  else snprintf(b, n, "%.9g", v);
  return b;
}

static void layer_name(layer *L) {
  const dlconv_conv2d_desc *d = &L->d;
  char lo[32], hi[32], qs[200] = "";
  if (is_q8(d->dtype))
    snprintf(qs, sizeof qs, " q{x_scale=%.9g x_zp=%d %s w_scale[0]=%.9g y_scale=%.9g y_zp=%d}", L->q.x_scale,
             L->q.x_zero_point, L->q.n_w_scales == 1 ? "per-tensor" : "per-channel", L->wsc[0], L->q.y_scale,
             L->q.y_zero_point);
  if (L->dense)
    snprintf(L->name, sizeof L->name, "dense %s batch=%d in=%d out=%d clamp=[%s,%s] bias=%s%s", dtype_name(d->dtype),
             d->n, d->c_in, d->c_out, bound_str(d->out_min, lo, 32), bound_str(d->out_max, hi, 32),
             L->has_bias ? "yes" : "NULL", qs);
  else
    snprintf(L->name, sizeof L->name,
             "conv %s %s n=%d c_in=%d %dx%d c_out=%d k=%dx%d s=%d,%d d=%d,%d pad(t,b,l,r)=%d,%d,%d,%d g=%d "
             "clamp=[%s,%s] bias=%s%s",
             dtype_name(d->dtype), d->layout == DLCONV_NHWC ? "NHWC" : "NCHW", d->n, d->c_in, d->h_in, d->w_in,
             d->c_out, d->k_h, d->k_w, d->stride_h, d->stride_w, d->dilation_h, d->dilation_w, d->pad_top,
             d->pad_bottom, d->pad_left, d->pad_right, d->groups, bound_str(d->out_min, lo, 32),
             bound_str(d->out_max, hi, 32), L->has_bias ? "yes" : "NULL", qs);
}

/* Allocate buffers for d (valid). Shifts put x, w, y off 64-byte alignment (natural alignment only). */
static void layer_alloc(layer *L, const dlconv_conv2d_desc *d, int dense, int has_bias, rng_t *r) {
  memset(L, 0, sizeof *L);
  L->dense = dense;
  L->d = *d;
  L->has_bias = has_bias;
  L->ho = oracle_out_dim(d->h_in, d->pad_top, d->pad_bottom, d->k_h, d->dilation_h, d->stride_h);
  L->wo = oracle_out_dim(d->w_in, d->pad_left, d->pad_right, d->k_w, d->dilation_w, d->stride_w);
  L->K = (size_t)(d->c_in / d->groups) * (size_t)d->k_h * (size_t)d->k_w;
  L->xn = (size_t)d->n * (size_t)d->c_in * (size_t)d->h_in * (size_t)d->w_in;
  L->wn = (size_t)d->c_out * L->K;
  L->yn = (size_t)d->n * (size_t)d->c_out * (size_t)L->ho * (size_t)L->wo;
  L->es = d->dtype == DLCONV_F16 ? 2 : 1;
  const size_t sh = L->es == 2 ? 2 * (size_t)rng_int(r, 0, 3) : (size_t)rng_int(r, 0, 7);
  canary_alloc(&L->xb, L->xn * L->es, sh);
  canary_alloc(&L->wb, L->wn * L->es, L->es == 2 ? 2 * (size_t)rng_int(r, 0, 3) : (size_t)rng_int(r, 0, 7));
  if (has_bias) canary_alloc(&L->bb, (size_t)d->c_out * (is_q8(d->dtype) ? 4 : 2), is_q8(d->dtype) ? 4 * (size_t)rng_int(r, 0, 1) : 2);
  L->ref = malloc(sizeof(double) * (L->yn + 1));
  L->mag = malloc(sizeof(double) * (L->yn + 1));
  L->acc = malloc(sizeof(int64_t) * (L->yn + 1));
  L->ref8 = malloc(sizeof(int32_t) * (L->yn + 1));
  L->wsc = malloc(sizeof(float) * (size_t)(d->c_out + 1));
  L->wsc0 = malloc(sizeof(float) * (size_t)(d->c_out + 1));
  if (is_q8(d->dtype) && has_bias) L->bias32 = L->bb.p;
}

static void layer_snapshot(layer *L) {
  free(L->x0); free(L->w0); free(L->b0);
  L->x0 = malloc(L->xb.bytes + 1);
  L->w0 = malloc(L->wb.bytes + 1);
  memcpy(L->x0, L->xb.p, L->xb.bytes);
  memcpy(L->w0, L->wb.p, L->wb.bytes);
  if (L->has_bias) {
    L->b0 = malloc(L->bb.bytes + 1);
    memcpy(L->b0, L->bb.p, L->bb.bytes);
  }
  if (is_q8(L->d.dtype)) memcpy(L->wsc0, L->wsc, sizeof(float) * (size_t)L->q.n_w_scales);
  layer_name(L);
}

static int layer_inputs_intact(const layer *L) {
  if (memcmp(L->x0, L->xb.p, L->xb.bytes) || memcmp(L->w0, L->wb.p, L->wb.bytes)) return 0;
  if (L->has_bias && memcmp(L->b0, L->bb.p, L->bb.bytes)) return 0;
  if (is_q8(L->d.dtype) && memcmp(L->wsc0, L->wsc, sizeof(float) * (size_t)L->q.n_w_scales)) return 0;
  return 1;
}

static void layer_free(layer *L) {
  canary_free(&L->xb);
  canary_free(&L->wb);
  if (L->has_bias) canary_free(&L->bb);
  free(L->x0); free(L->w0); free(L->b0);
  free(L->ref); free(L->mag); free(L->acc); free(L->ref8);
  free(L->wsc); free(L->wsc0);
  memset(L, 0, sizeof *L);
}

/* --- reference: the direct definition of the convolution (tests/oracle.c) --------------------- */

/* d without its clamp: the references clamp (and count) themselves. */
static dlconv_conv2d_desc unclamped(const dlconv_conv2d_desc *d) {
  dlconv_conv2d_desc u = *d;
  u.out_min = -INFINITY, u.out_max = INFINITY;
  return u;
}

/* F16: the oracle's double sums of the exact products of the halves (each half is a float). */
static void ref_conv_f16(layer *L) {
  const dlconv_conv2d_desc *d = &L->d, u = unclamped(d);
  const uint16_t *x = L->xb.p, *w = L->wb.p, *b = L->has_bias ? L->bb.p : NULL;
  float *xf = malloc(sizeof(float) * (L->xn + 1)), *wf = malloc(sizeof(float) * (L->wn + 1));
  float *bf = malloc(sizeof(float) * (size_t)(d->c_out + 1));
  for (size_t i = 0; i < L->xn; i++) xf[i] = (float)half_value(x[i]);
  for (size_t i = 0; i < L->wn; i++) wf[i] = (float)half_value(w[i]);
  for (int32_t i = 0; b && i < d->c_out; i++) bf[i] = (float)half_value(b[i]);
  oracle_conv2d(&u, xf, wf, b ? bf : NULL, L->ref, L->mag);
  L->clamped = 0;
  for (size_t i = 0; i < L->yn; i++) {
    double *s = &L->ref[i];
    if (isnan(*s)) continue;
    if (*s < (double)d->out_min) { *s = (double)d->out_min; L->clamped++; }
    if (*s > (double)d->out_max) { *s = (double)d->out_max; L->clamped++; }
  }
  free(xf);
  free(wf);
  free(bf);
}

/* int8 step 1: acc = sum (x - x_zero_point) * w (padding taps add nothing): the oracle's double
   sums of integer products, exact while every partial sum stays below 2^53 in magnitude (their
   magnitudes' sum, checked). */
static void ref_acc_q8(layer *L) {
  const dlconv_conv2d_desc *d = &L->d, u = unclamped(d);
  const int32_t xzp = L->q.x_zero_point;
  float *xf = malloc(sizeof(float) * (L->xn + 1)), *wf = malloc(sizeof(float) * (L->wn + 1));
  double *sum = malloc(sizeof(double) * (L->yn + 1)), *mag = malloc(sizeof(double) * (L->yn + 1));
  const int8_t *w = L->wb.p;
  for (size_t i = 0; i < L->xn; i++)
    xf[i] = (float)((d->dtype == DLCONV_U8 ? (int32_t)((const uint8_t *)L->xb.p)[i] : (int32_t)((const int8_t *)L->xb.p)[i]) - xzp);
  for (size_t i = 0; i < L->wn; i++) wf[i] = (float)w[i];
  oracle_conv2d(&u, xf, wf, NULL, sum, mag);
  for (size_t i = 0; i < L->yn; i++) {
    if (!(mag[i] < 0x1p53)) fail_msg("%s: int8 sums past 2^53, not exact in double", L->name);
    L->acc[i] = (int64_t)sum[i];
  }
  free(xf);
  free(wf);
  free(sum);
  free(mag);
}

/* int8 step 2: the contract's requantisation, exactly. */
static int32_t requant(int64_t acc_plus_bias, float x_scale, float w_scale, float y_scale, float out_min,
                       float out_max, int32_t y_zp, dlconv_dtype t, int *tie, int *clamped) {
  const double mult = (double)x_scale * (double)w_scale / (double)y_scale;
  double v = (double)acc_plus_bias * mult;
  const double lo = (double)out_min / (double)y_scale, hi = (double)out_max / (double)y_scale;
  if (clamped) *clamped = v < lo || v > hi;
  v = v < lo ? lo : v; /* max(v, lo) */
  v = v > hi ? hi : v; /* min(v, hi) */
  if (tie) *tie = fabs(v - trunc(v)) == 0.5;
  const double rr = nearbyint(v) + (double)y_zp;
  if (rr < (double)tmin(t)) return tmin(t);
  if (rr > (double)tmax(t)) return tmax(t);
  return (int32_t)rr;
}

static void ref_requant_q8(layer *L) {
  const dlconv_conv2d_desc *d = &L->d;
  L->ties = L->sat_lo = L->sat_hi = L->clamped = 0;
  for (size_t i = 0; i < L->yn; i++) {
    int64_t n, c, h, w;
    y_coords(L, i, &n, &c, &h, &w);
    const int64_t b = L->has_bias ? (int64_t)L->bias32[c] : 0;
    int tie, cl;
    const int32_t y = requant(L->acc[i] + b, L->q.x_scale, L->wsc[L->q.n_w_scales == 1 ? 0 : c], L->q.y_scale,
                              d->out_min, d->out_max, L->q.y_zero_point, d->dtype, &tie, &cl);
    L->ref8[i] = y;
    L->ties += tie;
    L->clamped += cl;
    const double v = (double)(L->acc[i] + b) * ((double)L->q.x_scale * (double)L->wsc[L->q.n_w_scales == 1 ? 0 : c] / (double)L->q.y_scale);
    if (y == tmin(d->dtype) && nearbyint(v) + L->q.y_zero_point < tmin(d->dtype)) L->sat_lo++;
    if (y == tmax(d->dtype) && nearbyint(v) + L->q.y_zero_point > tmax(d->dtype)) L->sat_hi++;
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Data generation                                                                              */

typedef struct gen_opts {
  int clamp_mode;     /* 0 none, 1 ReLU, 2 ReLU6-like, 3 two-sided, 4 degenerate lo == hi, -1: random */
  int has_bias;       /* -1 random */
  int per_channel;    /* int8: -1 random */
  int pow2;           /* int8: 1 power-of-two scales (exact ties), 0 random 0.02..0.2, -1 random */
  int xzp, yzp;       /* int8: INT32_MIN = random from the list */
  double spread;      /* int8: output std in units of y (0 = random) */
  int f16_exp;        /* F16: x magnitude 2^f16_exp (INT32_MIN = random) */
} gen_opts;

static const gen_opts GEN_RANDOM = {-1, -1, -1, -1, INT32_MIN, INT32_MIN, 0, INT32_MIN};

static void fill_f16(layer *L, rng_t *r, const gen_opts *o) {
  dlconv_conv2d_desc *d = &L->d;
  const int exps[] = {0, 0, 0, -9, 3};
  const int e = o->f16_exp != INT32_MIN ? o->f16_exp : rng_pick(r, exps, 5);
  uint16_t *x = L->xb.p, *w = L->wb.p;
  for (size_t i = 0; i < L->xn; i++) x[i] = rng_chance(r, 0.05) ? 0 : half_of(ldexp(rng_range(r, -1, 1), e));
  for (size_t i = 0; i < L->wn; i++) w[i] = rng_chance(r, 0.05) ? (rng_chance(r, 0.5) ? 0x8000 : 0) : half_of(rng_range(r, -1, 1));
  if (L->has_bias) {
    uint16_t *b = L->bb.p;
    for (int32_t i = 0; i < d->c_out; i++) b[i] = half_of(ldexp(rng_range(r, -1, 1), e) * sqrt((double)L->K) * 0.3);
  }
  int mode = o->clamp_mode >= 0 ? o->clamp_mode : rng_int(r, 0, 4);
  if (mode == 4 && rng_chance(r, 0.7)) mode = rng_int(r, 0, 3); /* rarer */
  const double m = ldexp(1.0, e) * sqrt((double)L->K) * 0.4;
  switch (mode) {
    case 0: d->out_min = -INFINITY; d->out_max = INFINITY; break;
    case 1: d->out_min = 0.0f; d->out_max = INFINITY; break;
    case 2: d->out_min = 0.0f; d->out_max = e == 0 && L->K > 20 ? 6.0f : (float)(m * rng_range(r, 0.3, 1.0)); break;
    case 3: d->out_min = (float)(-m * rng_range(r, 0.2, 1.0)); d->out_max = (float)(m * rng_range(r, 0.2, 1.0)); break;
    default: d->out_min = d->out_max = (float)(m * rng_range(r, -0.5, 0.5)); break;
  }
  ref_conv_f16(L);
}

static double rms_acc(const layer *L) {
  double s = 0;
  for (size_t i = 0; i < L->yn; i++) s += (double)L->acc[i] * (double)L->acc[i];
  return sqrt(s / (double)(L->yn ? L->yn : 1)) + 1.0;
}

static void fill_q8(layer *L, rng_t *r, const gen_opts *o) {
  dlconv_conv2d_desc *d = &L->d;
  const dlconv_dtype t = d->dtype;
  /* zero points */
  const int zu[] = {0, 128, 3, 255, 77, -1}, zs[] = {0, -7, 3, -128, 127, 100, -1};
  int xzp = o->xzp, yzp = o->yzp;
  if (xzp == INT32_MIN) xzp = t == DLCONV_U8 ? rng_pick(r, zu, 6) : rng_pick(r, zs, 7);
  if (xzp == -1 && t == DLCONV_U8) xzp = rng_int(r, 0, 255);
  if (yzp == INT32_MIN) yzp = t == DLCONV_U8 ? rng_pick(r, zu, 6) : rng_pick(r, zs, 7);
  if (yzp == -1 && t == DLCONV_U8) yzp = rng_int(r, 0, 255);
  /* x: full range, sometimes clustered around the zero point, some extremes */
  const int clustered = rng_chance(r, 0.25);
  for (size_t i = 0; i < L->xn; i++) {
    int v = clustered ? xzp + rng_int(r, -20, 20) : rng_int(r, tmin(t), tmax(t));
    if (rng_chance(r, 0.03)) v = rng_chance(r, 0.5) ? tmin(t) : tmax(t);
    v = v < tmin(t) ? tmin(t) : v > tmax(t) ? tmax(t) : v;
    if (t == DLCONV_U8) ((uint8_t *)L->xb.p)[i] = (uint8_t)v;
    else ((int8_t *)L->xb.p)[i] = (int8_t)v;
  }
  int8_t *w = L->wb.p;
  for (size_t i = 0; i < L->wn; i++) {
    int v = rng_int(r, -128, 127);
    if (rng_chance(r, 0.03)) v = rng_chance(r, 0.5) ? -128 : 127;
    if (rng_chance(r, 0.03)) v = 0;
    w[i] = (int8_t)v;
  }
  L->q.x_zero_point = xzp;
  L->q.y_zero_point = yzp;
  ref_acc_q8(L);
  const double rms = rms_acc(L);
  /* bias */
  if (L->has_bias) {
    const double bs[] = {0.3, 1.0, 3.0};
    const double s = bs[rng_int(r, 0, 2)];
    for (int32_t c = 0; c < d->c_out; c++) {
      double b = nearbyint(rng_range(r, -1, 1) * rms * s);
      b = b > 2147483647.0 ? 2147483647.0 : b < -2147483648.0 ? -2147483648.0 : b;
      L->bias32[c] = (int32_t)b;
    }
  }
  /* scales */
  const int per_channel = o->per_channel >= 0 ? o->per_channel : rng_chance(r, 0.5);
  const int pow2 = o->pow2 >= 0 ? o->pow2 : rng_chance(r, 0.35);
  const double spreads[] = {15, 50, 120, 400};
  const double spread = o->spread > 0 ? o->spread : spreads[rng_int(r, 0, 3)];
  L->q.n_w_scales = per_channel ? d->c_out : 1;
  L->q.w_scales = L->wsc;
  double wmean = 0;
  if (pow2) {
    L->q.x_scale = (float)ldexp(1.0, -rng_int(r, 2, 7));
    for (int32_t c = 0; c < L->q.n_w_scales; c++) {
      L->wsc[c] = (float)ldexp(1.0, -rng_int(r, 2, 7));
      wmean += L->wsc[c];
    }
    wmean /= L->q.n_w_scales;
    /* y_scale a power of two too, so that mult = 2^-s: acc values with the right residue are exact ties */
    int ey = (int)floor(log2((double)L->q.x_scale * wmean * rms / spread) + 0.5);
    L->q.y_scale = (float)ldexp(1.0, ey);
  } else {
    L->q.x_scale = (float)rng_range(r, 0.02, 0.2);
    for (int32_t c = 0; c < L->q.n_w_scales; c++) {
      L->wsc[c] = (float)rng_range(r, 0.02, 0.2);
      wmean += L->wsc[c];
    }
    wmean /= L->q.n_w_scales;
    L->q.y_scale = (float)((double)L->q.x_scale * wmean * rms / spread);
  }
  /* clamp, in real units */
  int mode = o->clamp_mode >= 0 ? o->clamp_mode : rng_int(r, 0, 4);
  if (mode == 4 && rng_chance(r, 0.7)) mode = rng_int(r, 0, 3);
  const double ys = L->q.y_scale;
  switch (mode) {
    case 0: d->out_min = -INFINITY; d->out_max = INFINITY; break;
    case 1: d->out_min = 0.0f; d->out_max = INFINITY; break;
    case 2: /* ReLU6-like: 0 .. a cap inside the output range (or literally 6 where that is) */
      d->out_min = 0.0f;
      d->out_max = (6.0 / ys > 5 && 6.0 / ys < 120) ? 6.0f : (float)(ys * rng_range(r, 5, 100));
      break;
    case 3: d->out_min = (float)(-ys * rng_range(r, 3, 80)); d->out_max = (float)(ys * rng_range(r, 3, 80)); break;
    default: d->out_min = d->out_max = (float)(ys * rng_range(r, -30, 30)); break;
  }
  ref_requant_q8(L);
}

static void layer_make(layer *L, const dlconv_conv2d_desc *d, int dense, rng_t *r, const gen_opts *o) {
  const int has_bias = o->has_bias >= 0 ? o->has_bias : rng_chance(r, 0.75);
  layer_alloc(L, d, dense, has_bias, r);
  if (d->dtype == DLCONV_F16) fill_f16(L, r, o);
  else fill_q8(L, r, o);
  layer_snapshot(L);
}

/* A random valid descriptor. */
static void gen_desc(rng_t *r, dlconv_conv2d_desc *d, dlconv_dtype t, int big) {
  const int cing[] = {1, 2, 3, 5, 7, 13, 33, 4, 8, 12}, coutg[] = {1, 3, 4, 5, 8, 9, 17, 23}, ks[] = {1, 1, 2, 3, 3, 5};
  for (;;) {
    /* 0-3 groups 1, 4 groups 2, 5 groups 3, 6 depthwise, 7 many small groups (GSPC's groups in lanes) */
    const int kind = rng_int(r, 0, 7);
    static const int many[] = {4, 5, 8, 16, 32, 64}, small[] = {1, 2, 3, 4, 5, 8};
    int groups, cin, cout;
    if (kind <= 3) { groups = 1; cin = rng_pick(r, cing, 10); cout = rng_pick(r, coutg, 8); }
    else if (kind <= 5) { groups = kind - 2; cin = groups * rng_pick(r, cing, 5); cout = groups * rng_pick(r, coutg, 6); }
    else if (kind == 6) { groups = rng_int(r, 1, 11); cin = groups; cout = groups * rng_int(r, 1, 2); }
    else {
      groups = rng_pick(r, many, 6);
      const int n = groups >= 32 ? 4 : 6;
      cin = groups * rng_pick(r, small, n);
      cout = groups * rng_pick(r, small, n);
    }
    const int h = big ? 23 : rng_int(r, 1, 9), w = big ? 19 : rng_int(r, 1, 9);
    dlconv_conv2d_desc_init(d, rng_int(r, 1, 2), cin, h, w, cout, rng_pick(r, ks, 6), rng_pick(r, ks, 6));
    d->groups = groups;
    d->stride_h = rng_chance(r, 0.3) ? 2 : 1;
    d->stride_w = rng_chance(r, 0.3) ? 2 : 1;
    if (rng_chance(r, 0.1)) d->stride_w = 3;
    d->dilation_h = rng_chance(r, 0.25) ? 2 : 1;
    d->dilation_w = rng_chance(r, 0.25) ? 2 : 1;
    d->pad_top = rng_int(r, 0, 2);
    d->pad_bottom = rng_int(r, 0, 2);
    d->pad_left = rng_int(r, 0, 2);
    d->pad_right = rng_int(r, 0, 2);
    d->dtype = t;
    d->layout = rng_chance(r, 0.5) ? DLCONV_NHWC : DLCONV_NCHW;
    int64_t ho = oracle_out_dim(h, d->pad_top, d->pad_bottom, d->k_h, d->dilation_h, d->stride_h);
    int64_t wo = oracle_out_dim(w, d->pad_left, d->pad_right, d->k_w, d->dilation_w, d->stride_w);
    if (ho >= 1 && wo >= 1) return;
  }
}

/* Fixed shapes every dtype runs (deterministic coverage of the brief's list). */
typedef struct fixed_shape {
  int n, cin, h, w, cout, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, g;
  dlconv_layout layout;
} fixed_shape;
static const fixed_shape FIXED[] = {
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, DLCONV_NCHW},      /* everything 1 */
    {1, 3, 1, 1, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, DLCONV_NHWC},      /* 1x1 image, 3x3 kernel: centre tap only */
    {2, 5, 23, 19, 7, 3, 3, 2, 2, 2, 2, 2, 1, 0, 3, 1, DLCONV_NCHW},    /* stride 2, dilation 2, asymmetric pad */
    {2, 5, 23, 19, 7, 3, 3, 2, 2, 2, 2, 2, 1, 0, 3, 1, DLCONV_NHWC},
    {2, 9, 7, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, DLCONV_NHWC},      /* groups 3 */
    {1, 6, 9, 8, 10, 5, 3, 2, 1, 1, 1, 0, 2, 1, 1, 2, DLCONV_NCHW},     /* groups 2, 5x3 */
    {2, 7, 23, 19, 7, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 7, DLCONV_NHWC},    /* depthwise */
    {2, 7, 23, 19, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 7, DLCONV_NCHW},
    {1, 5, 11, 10, 10, 5, 5, 1, 1, 2, 2, 4, 4, 4, 4, 5, DLCONV_NCHW},   /* depthwise x2, 5x5 dilated */
    {2, 67, 7, 5, 35, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, DLCONV_NHWC},    /* 1x1, many channels */
    {1, 33, 11, 13, 17, 3, 3, 1, 1, 1, 1, 1, 0, 2, 1, 1, DLCONV_NCHW},  /* K = 297 */
    {2, 3, 23, 19, 16, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1, DLCONV_NHWC},   /* stem-like */
    {2, 35, 9, 11, 35, 3, 3, 1, 1, 1, 1, 1, 0, 2, 1, 35, DLCONV_NHWC},  /* NHWC depthwise: vector runs + tail */
    {1, 16, 8, 7, 16, 3, 3, 2, 2, 1, 2, 1, 1, 1, 1, 16, DLCONV_NHWC},   /* NHWC depthwise, whole vectors */
    {2, 67, 7, 5, 35, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, DLCONV_NCHW},    /* 1x1, no padding: contiguous lanes, odd K */
    {1, 32, 7, 7, 18, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, DLCONV_NCHW},    /* the same, even K, 7 x 7 */
    {2, 12, 5, 6, 8, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, DLCONV_NCHW},     /* the same, groups 2 */
    {2, 5, 20, 21, 3, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, DLCONV_NCHW},    /* the same, 420 pixels: several N blocks */
    /* NCHW 1x1 without padding on whole quads: each job packs its own positions from x (int8 on
       the quad family), at stride 1 in one run (several N blocks, groups 2), at stride 2 and at
       row stride 2 a run per output row (odd widths, a short last tile, 32 quads, partial panels) */
    {2, 16, 20, 21, 12, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2, DLCONV_NCHW},
    {2, 16, 9, 11, 40, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, DLCONV_NCHW},
    {1, 128, 7, 9, 20, 1, 1, 2, 1, 1, 1, 0, 0, 0, 0, 1, DLCONV_NCHW},
    {1, 16, 9, 37, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, 4, DLCONV_NCHW},   /* small groups, wide rows at stride 2 */
    {2, 16, 6, 21, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, DLCONV_NHWC},   /* small groups per pixel, NHWC */
    {1, 16, 5, 40, 16, 3, 3, 1, 1, 1, 1, 1, 1, 2, 1, 2, DLCONV_NCHW},   /* 8 channels per group, wide rows */
    {1, 24, 5, 33, 24, 3, 3, 1, 2, 1, 1, 0, 1, 1, 2, 3, DLCONV_NHWC},   /* 8 per group, NHWC, stride 2 columns */
    /* NHWC with quads of channels per group (the indirect GEMM): panels of 64 with a tail, row
       tiles across images, padding and dilation, strided 1 x 1 */
    {2, 64, 7, 5, 72, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, DLCONV_NHWC},
    {2, 12, 9, 11, 100, 3, 3, 2, 2, 1, 1, 1, 0, 2, 1, 1, DLCONV_NHWC},
    {1, 20, 8, 9, 33, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, DLCONV_NHWC},
    {2, 32, 9, 9, 130, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1, DLCONV_NHWC},
    {1, 16, 6, 7, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, DLCONV_NHWC},
    /* NCHW padded rows of about 32 outputs: direct's int8 tiles start at each output row (32 x 5:
       5 tiles, not 6), one K chunk; 31 wide with 64 channels: two K chunks, a tile past the row */
    {2, 8, 5, 32, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, DLCONV_NCHW},
    {1, 64, 3, 31, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, DLCONV_NCHW},
    /* NHWC depthwise rows in even tiles (8 pixels up to 32 channels, 4 above), padded ones through
       pointers, the others strided: 16 and 32 channels at stride 1 (pairs in one load), odd widths
       and channels, stride 2 columns with dilated rows, dilated columns with wide pads, no tile
       inside the image, 1 and 70 channels, and a depth multiplier of 2 (another path) */
    {1, 16, 5, 32, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, DLCONV_NHWC},
    {2, 32, 4, 37, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32, DLCONV_NHWC},
    {1, 13, 7, 29, 13, 3, 5, 1, 2, 2, 1, 2, 1, 3, 0, 13, DLCONV_NHWC},
    {1, 16, 4, 21, 16, 5, 5, 1, 1, 1, 2, 2, 2, 4, 4, 16, DLCONV_NHWC},
    {1, 24, 3, 3, 24, 3, 5, 1, 1, 1, 1, 1, 1, 2, 2, 24, DLCONV_NHWC},
    {1, 1, 3, 40, 1, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, DLCONV_NHWC},
    {1, 70, 3, 19, 70, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 70, DLCONV_NHWC},
    {1, 16, 5, 32, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, DLCONV_NHWC},
    /* NHWC depthwise in padded bands of rows (about 64 KB of copied input rows each): several bands
       an image, the last one short, a task starting inside a band; strided and dilated with a pad
       on one side only */
    {1, 144, 19, 60, 144, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 144, DLCONV_NHWC},
    {2, 96, 31, 50, 96, 3, 3, 2, 2, 2, 2, 2, 1, 0, 3, 96, DLCONV_NHWC},
    /* NHWC grouped with 16 or more output channels per group (GSPC's in-register kernel broadcasts
       each vector's quad): 16 in / 16 out, at stride 2 with 4 groups, 4 in / 32 out (a second
       block of one group), 16 in / 16 out in a block of 3 vectors, tiles of 1 and 2 pixels; 8 in /
       24 out (groups across vectors: the permutes) */
    {1, 32, 6, 9, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, DLCONV_NHWC},
    {2, 64, 7, 9, 64, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 4, DLCONV_NHWC},
    {1, 12, 5, 6, 96, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, DLCONV_NHWC},
    {1, 48, 5, 1, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3, DLCONV_NHWC},
    {2, 32, 4, 2, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, DLCONV_NHWC},
    {1, 16, 5, 9, 48, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, DLCONV_NHWC},
    /* NHWC grouped with as many output as input channels per group, 4, 8 or 16, on 64 channels a
       block or 32 (the in-register kernel's lanes mode, two pixels a vector with 32): 8 per group
       on 64 and on 32 with odd widths, 4 per group in two blocks and on 32 at stride 2, 16 per group
       dilated, and 16 per group on 32 at stride 1 with an odd width (a pair in one load) */
    {1, 64, 5, 11, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8, DLCONV_NHWC},
    {2, 32, 5, 7, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4, DLCONV_NHWC},
    {1, 128, 4, 9, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32, DLCONV_NHWC},
    {1, 32, 7, 13, 32, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 8, DLCONV_NHWC},
    {1, 64, 6, 10, 64, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 4, DLCONV_NHWC},
    {1, 32, 9, 33, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, DLCONV_NHWC},
};

static void fixed_desc(const fixed_shape *f, dlconv_dtype t, dlconv_conv2d_desc *d) {
  dlconv_conv2d_desc_init(d, f->n, f->cin, f->h, f->w, f->cout, f->kh, f->kw);
  d->stride_h = f->sh; d->stride_w = f->sw;
  d->dilation_h = f->dh; d->dilation_w = f->dw;
  d->pad_top = f->pt; d->pad_bottom = f->pb; d->pad_left = f->pl; d->pad_right = f->pr;
  d->groups = f->g;
  d->dtype = t;
  d->layout = f->layout;
}

/* ------------------------------------------------------------------------------------------ */
/* Checking one output                                                                          */

/* Number of wrong points; the first few are printed with ctx. */
static size_t check_output(const layer *L, const void *y, const char *ctx) {
  size_t bad = 0;
  for (size_t i = 0; i < L->yn; i++) {
    int ok;
    double got, want, tol = 0;
    if (L->d.dtype == DLCONV_F16) {
      const uint16_t h = ((const uint16_t *)y)[i];
      got = half_value(h);
      want = L->ref[i];
      if (isnan(want)) ok = isnan(got);
      else if (isnan(got)) ok = 0;
      else {
        const double acc_err = 3e-7 * (double)(L->K + 1) * L->mag[i];
        tol = acc_err + (fabs(want) + acc_err) * 0x1p-11 + 0x1p-25;
        if (fabs(want) + tol >= 65520.0) ok = isinf(got) ? (got > 0) == (want > 0) : fabs(got - want) <= tol;
        else ok = !isinf(got) && fabs(got - want) <= tol;
      }
    } else {
      got = L->d.dtype == DLCONV_U8 ? (double)((const uint8_t *)y)[i] : (double)((const int8_t *)y)[i];
      want = (double)L->ref8[i];
      ok = got == want;
    }
    if (!ok) {
      if (bad < 4) {
        int64_t n, c, h, w;
        y_coords(L, i, &n, &c, &h, &w);
        if (L->d.dtype == DLCONV_F16)
          FAIL("%s: %s: y[%zu] (n=%lld c=%lld h=%lld w=%lld) = %.9g (0x%04x), want %.9g +- %.3g", L->name, ctx, i,
               (long long)n, (long long)c, (long long)h, (long long)w, got, ((const uint16_t *)y)[i], want, tol);
        else
          FAIL("%s: %s: y[%zu] (n=%lld c=%lld h=%lld w=%lld) = %d, want %d (acc=%lld, v=%.17g)", L->name, ctx, i,
               (long long)n, (long long)c, (long long)h, (long long)w, (int)got, (int)want, (long long)L->acc[i],
               (double)(L->acc[i] + (L->has_bias ? L->bias32[c] : 0)) *
                   ((double)L->q.x_scale * (double)L->wsc[L->q.n_w_scales == 1 ? 0 : c] / (double)L->q.y_scale));
      }
      bad++;
    }
  }
  if (bad > 4) FAIL("%s: %s: %zu of %zu outputs wrong in all", L->name, ctx, bad, L->yn);
  return bad;
}

/* ------------------------------------------------------------------------------------------ */
/* Plan / execute / check                                                                       */

static const dlconv_quant *layer_q(const layer *L) { return is_q8(L->d.dtype) ? &L->q : NULL; }
static const void *layer_bias(const layer *L) { return L->has_bias ? L->bb.p : NULL; }

static dlconv_status layer_plan(const layer *L, dlconv_plan **plan, const dlconv_options *o) {
  const dlconv_conv2d_desc *d = &L->d;
  if (L->dense)
    return dlconv_plan_dense(plan, d->n, d->c_in, d->c_out, d->dtype, L->wb.p, layer_bias(L), d->out_min, d->out_max,
                             layer_q(L), o);
  return dlconv_plan_conv2d(plan, d, L->wb.p, layer_bias(L), layer_q(L), o);
}

static dlconv_status layer_oneshot(const layer *L, void *y, const dlconv_options *o) {
  const dlconv_conv2d_desc *d = &L->d;
  if (L->dense)
    return dlconv_dense(d->n, d->c_in, d->c_out, d->dtype, L->xb.p, L->wb.p, layer_bias(L), y, d->out_min, d->out_max,
                        layer_q(L), o);
  return dlconv_conv2d(d, L->xb.p, L->wb.p, layer_bias(L), y, layer_q(L), o);
}

typedef enum { R_OK = 0, R_UNSUPPORTED = 1, R_FAIL = 2 } run_res;

/* Plan with (algo, isa, threads), execute twice (library and caller workspace, y pre-filled with
 * different garbage), optionally the one-shot call too; check everything. allow_unsupported: an
 * UNSUPPORTED plan is acceptable (then it must leave no trace). */
static run_res run_layer(const layer *L, dlconv_algo algo, dlconv_isa isa, int threads, int allow_unsupported,
                         int oneshot) {
  char ctx[160];
  snprintf(ctx, sizeof ctx, "algo=%s isa=%s threads=%d", algo_name(algo), isa_name(isa), threads);
  const long f0 = g_fails;
  g_runs++;
  dlconv_options o = forced_options(algo, isa, threads);
  canary_buf yb;
  canary_alloc(&yb, L->yn * L->es, L->es == 2 ? 2 * (size_t)(g_runs % 4) : (size_t)(g_runs % 8));
  dlconv_plan *plan = (dlconv_plan *)(uintptr_t)0x10;
  dlconv_status st = layer_plan(L, &plan, &o);
  if (st != DLCONV_OK) {
    const char *e = dlconv_last_error();
    if (st == DLCONV_ERR_UNSUPPORTED && allow_unsupported) {
      g_unsupported++;
      if (plan) FAIL("%s: %s: UNSUPPORTED plan left *plan non-NULL", L->name, ctx);
      if (!e || !e[0]) FAIL("%s: %s: UNSUPPORTED with an empty dlconv_last_error()", L->name, ctx);
      if (g_verbose) printf("  unsupported: %s: %s\n", ctx, e ? e : "");
      dlconv_status s2 = layer_oneshot(L, yb.p, &o);
      if (s2 != DLCONV_ERR_UNSUPPORTED)
        FAIL("%s: %s: plan UNSUPPORTED but the one-shot call answered %s", L->name, ctx, dlconv_status_string(s2));
      if (!canary_untouched(&yb)) FAIL("%s: %s: an UNSUPPORTED one-shot call wrote y", L->name, ctx);
      canary_free(&yb);
      return g_fails == f0 ? R_UNSUPPORTED : R_FAIL;
    }
    FAIL("%s: %s: plan -> %s (%s)", L->name, ctx, dlconv_status_string(st), e ? e : "(null)");
    canary_free(&yb);
    return R_FAIL;
  }
  /* plan_query */
  dlconv_plan_info info;
  memset(&info, 0x5a, sizeof info);
  st = dlconv_plan_query(plan, &info);
  if (st != DLCONV_OK) FAIL("%s: %s: plan_query -> %s", L->name, ctx, dlconv_status_string(st));
  else {
    if (info.dtype != L->d.dtype) FAIL("%s: %s: info.dtype = %d", L->name, ctx, (int)info.dtype);
    if (info.algo == DLCONV_ALGO_AUTO || (algo != DLCONV_ALGO_AUTO && info.algo != algo))
      FAIL("%s: %s: info.algo = %s", L->name, ctx, algo_name(info.algo));
    if (info.isa == DLCONV_ISA_AUTO || info.isa == DLCONV_ISA_CUDA || (isa != DLCONV_ISA_AUTO && info.isa != isa) ||
        dlconv_isa_available(info.isa) != 1)
      FAIL("%s: %s: info.isa = %s", L->name, ctx, isa_name(info.isa));
    const int64_t macs = (int64_t)L->yn * (int64_t)L->K;
    if (info.macs != macs) FAIL("%s: %s: info.macs = %lld, want %lld", L->name, ctx, (long long)info.macs, (long long)macs);
    if (info.workspace_bytes != dlconv_plan_workspace_size(plan))
      FAIL("%s: %s: info.workspace_bytes %zu != dlconv_plan_workspace_size %zu", L->name, ctx, info.workspace_bytes,
           dlconv_plan_workspace_size(plan));
    if (memchr(info.kernel, 0, sizeof info.kernel) == NULL) FAIL("%s: %s: info.kernel not terminated", L->name, ctx);
    else snprintf(ctx + strlen(ctx), sizeof ctx - strlen(ctx), " -> %s/%s/%s", algo_name(info.algo),
                  isa_name(info.isa), info.kernel);
  }
  /* execute 1: library workspace */
  gb_fill(&yb, (uint64_t)g_runs * 2 + 1);
  st = dlconv_execute(plan, L->xb.p, yb.p, NULL);
  if (st != DLCONV_OK) FAIL("%s: %s: execute -> %s (%s)", L->name, ctx, dlconv_status_string(st), dlconv_last_error());
  else {
    if (!canary_guards_ok(&yb)) FAIL("%s: %s: execute wrote outside y", L->name, ctx);
    check_output(L, yb.p, ctx);
  }
  /* execute 2: caller workspace, different garbage in y */
  const size_t wsz = dlconv_plan_workspace_size(plan);
  void *ws = wsz ? aligned_alloc(64, (wsz + 63) / 64 * 64) : NULL;
  if (ws) memset(ws, 0xCD, (wsz + 63) / 64 * 64);
  gb_fill(&yb, (uint64_t)g_runs * 2 + 2);
  st = dlconv_execute(plan, L->xb.p, yb.p, ws);
  if (st != DLCONV_OK) FAIL("%s: %s: execute(ws) -> %s (%s)", L->name, ctx, dlconv_status_string(st), dlconv_last_error());
  else {
    if (!canary_guards_ok(&yb)) FAIL("%s: %s: execute(ws) wrote outside y", L->name, ctx);
    char c2[200];
    snprintf(c2, sizeof c2, "%s caller-ws", ctx);
    check_output(L, yb.p, c2);
  }
  free(ws);
  dlconv_plan_destroy(plan);
  if (oneshot) {
    canary_reset(&yb);
    gb_fill(&yb, (uint64_t)g_runs * 2 + 3);
    st = layer_oneshot(L, yb.p, &o);
    if (st != DLCONV_OK) FAIL("%s: %s: one-shot -> %s (%s)", L->name, ctx, dlconv_status_string(st), dlconv_last_error());
    else {
      if (!canary_guards_ok(&yb)) FAIL("%s: %s: one-shot wrote outside y", L->name, ctx);
      char c2[200];
      snprintf(c2, sizeof c2, "%s one-shot", ctx);
      check_output(L, yb.p, c2);
    }
  }
  if (!layer_inputs_intact(L)) FAIL("%s: %s: x, w, bias or w_scales modified", L->name, ctx);
  canary_free(&yb);
  return g_fails == f0 ? R_OK : R_FAIL;
}

/* CPU ISAs to force, AUTO first. */
static int isa_list(dlconv_isa *out) {
  const dlconv_isa all[] = {DLCONV_ISA_GENERIC, DLCONV_ISA_AVX2, DLCONV_ISA_AVX512, DLCONV_ISA_NEON};
  int n = 0;
  out[n++] = DLCONV_ISA_AUTO;
  for (size_t i = 0; i < ARRAY_LEN(all); i++)
    if (dlconv_isa_available(all[i]) == 1) out[n++] = all[i];
  return n;
}

/* The implemented paths: AUTO, IM2COL_GEMM, SPARSE_CSR for every layer, SPATIAL_PACK, GSPC for every convolution and, for
   NCHW convolutions, NHWC depthwise ones with depth multiplier 1 and F16 NHWC convolutions, DIRECT x every ISA x 1, 2
   threads. */
/* test_f16_nan: leave sparse_csr out of run_all_configs */
static int g_skip_csr;

static void run_all_configs(const layer *L) {
  dlconv_isa isas[8];
  const int ni = isa_list(isas);
  const dlconv_algo algos[] = {DLCONV_ALGO_AUTO,        DLCONV_ALGO_IM2COL_GEMM, DLCONV_ALGO_SPATIAL_PACK,
                               DLCONV_ALGO_SPARSE_CSR, DLCONV_ALGO_GSPC,        DLCONV_ALGO_DIRECT};
  const int direct_ok = !L->dense && (L->d.layout == DLCONV_NCHW || (L->d.c_in == L->d.groups && L->d.c_out == L->d.groups));
  /* F16 convolutions run DIRECT in either layout on the fp32 conv kernels of the ISAs whose direct
     family stores binary16: all but neon, which AUTO may pick (NHWC: UNSUPPORTED there) */
  const int f16_conv = !L->dense && L->d.dtype == DLCONV_F16 && L->d.c_in != L->d.groups;
  int first = 1;
  for (size_t a = 0; a < ARRAY_LEN(algos) - (direct_ok || f16_conv ? 0 : 1); a++) {
    if (L->dense && (algos[a] == DLCONV_ALGO_SPATIAL_PACK || algos[a] == DLCONV_ALGO_GSPC)) continue;
    if (g_skip_csr && algos[a] == DLCONV_ALGO_SPARSE_CSR) continue;
    for (int i = 0; i < ni; i++)
      for (int t = 1; t <= 2; t++) {
        run_layer(L, algos[a], isas[i], t,
                  algos[a] == DLCONV_ALGO_DIRECT && !direct_ok && (isas[i] == DLCONV_ISA_AUTO || isas[i] == DLCONV_ISA_NEON),
                  first || (t == 2 && a == 0));
        first = 0;
      }
  }
  /* direct's convolutions every way: B read in place, packed and (int8 where the ISA has ukernel_t)
     transposed (its own pick is tested above) */
  if (direct_ok && L->d.c_in != L->d.groups)
    for (int mode = 0; mode <= 2; mode++) {
      dlc_test_direct_lowp_packed(mode);
      for (int i = 1; i < ni; i++) run_layer(L, DLCONV_ALGO_DIRECT, isas[i], 1 + (i & 1), 0, 0);
      dlc_test_direct_lowp_packed(-1);
    }
  /* F16 direct convolutions with bands of one and two output rows: x widened per band, several
     times per image */
  if (f16_conv)
    for (int rows = 1; rows <= 2; rows++) {
      dlc_test_direct_band_rows(rows);
      for (int i = 1; i < ni; i++)
        run_layer(L, DLCONV_ALGO_DIRECT, isas[i], 1 + (i & 1), !direct_ok && isas[i] == DLCONV_ISA_NEON, 0);
      dlc_test_direct_band_rows(0);
    }
  /* spatial pack with bands of one and two output rows: several strips per image */
  if (!L->dense)
    for (int rows = 1; rows <= 2; rows++) {
      dlc_test_spack_lowp_band_rows(rows);
      for (int i = 1; i < ni; i++) run_layer(L, DLCONV_ALGO_SPATIAL_PACK, isas[i], 1 + (i & 1), 0, 0);
      dlc_test_spack_lowp_band_rows(0);
    }
}

typedef struct stats {
  long cases, points, ties, sat_lo, sat_hi, clamped, per_channel, pow2, nhwc, nobias;
} stats;
static void stats_add(stats *s, const layer *L) {
  s->cases++;
  s->points += (long)L->yn;
  s->ties += L->ties;
  s->sat_lo += L->sat_lo;
  s->sat_hi += L->sat_hi;
  s->clamped += L->clamped;
  s->per_channel += is_q8(L->d.dtype) && L->q.n_w_scales > 1;
  s->nhwc += L->d.layout == DLCONV_NHWC;
  s->nobias += !L->has_bias;
}

/* ------------------------------------------------------------------------------------------ */
/* Tests                                                                                        */

static int setup_test(void **state) {
  (void)state;
  g_fails = 0;
  return 0;
}

/* The oracle's own binary16 conversions. */
static void test_oracle_f16(void **state) {
  (void)state;
  for (uint32_t h = 0; h < 65536; h++) {
    const double v = half_value((uint16_t)h);
    if (isnan(v)) continue;
    if (half_of(v) != h) fail_msg("half_of(half_value(0x%04x)) = 0x%04x", h, half_of(v));
  }
  assert_int_equal(half_of(1.0), 0x3c00);
  assert_int_equal(half_of(65504.0), 0x7bff);
  assert_int_equal(half_of(65519.99), 0x7bff);
  assert_int_equal(half_of(65520.0), 0x7c00);
  assert_int_equal(half_of(0x1p-24), 0x0001);
  assert_int_equal(half_of(0x1p-25), 0x0000);                 /* tie -> even (0) */
  assert_int_equal(half_of(0x1.8p-24), 0x0002);               /* 1.5 ulp -> 2 */
  assert_int_equal(half_of(0.1), 0x2e66);
  assert_int_equal(half_of(-2.0), 0xc000);
  assert_int_equal(half_of(1.0 + 0x1p-11), 0x3c00);           /* tie -> even */
  assert_int_equal(half_of(1.0 + 3 * 0x1p-11), 0x3c02);
  assert_true(half_value(0x7c00) == INFINITY && isnan(half_value(0x7e00)) && half_value(0x0400) == 0x1p-14);
  /* requant sanity: half to even, saturation */
  assert_int_equal(requant(5, 0.5f, 1.0f, 1.0f, -INFINITY, INFINITY, 0, DLCONV_S8, NULL, NULL), 2);
  assert_int_equal(requant(7, 0.5f, 1.0f, 1.0f, -INFINITY, INFINITY, 0, DLCONV_S8, NULL, NULL), 4);
  assert_int_equal(requant(-5, 0.5f, 1.0f, 1.0f, -INFINITY, INFINITY, 0, DLCONV_S8, NULL, NULL), -2);
  assert_int_equal(requant(-5, 0.5f, 1.0f, 1.0f, -INFINITY, INFINITY, 3, DLCONV_U8, NULL, NULL), 1);
  assert_int_equal(requant(-50, 0.5f, 1.0f, 1.0f, -INFINITY, INFINITY, 3, DLCONV_U8, NULL, NULL), 0);
  assert_int_equal(requant(1000, 0.5f, 1.0f, 1.0f, -INFINITY, INFINITY, 3, DLCONV_S8, NULL, NULL), 127);
  assert_int_equal(requant(-1000, 0.5f, 1.0f, 1.0f, 0.0f, INFINITY, 128, DLCONV_U8, NULL, NULL), 128);
}

static void conv_suite(dlconv_dtype t, uint64_t seed, int n_random) {
  const double t0 = now_s();
  const long r0 = g_runs;
  stats s = {0};
  rng_t r = lowp_rng(seed);
  for (size_t f = 0; f < ARRAY_LEN(FIXED); f++) {
    dlconv_conv2d_desc d;
    fixed_desc(&FIXED[f], t, &d);
    gen_opts o = GEN_RANDOM;
    o.clamp_mode = (int)(f % 4);
    o.has_bias = f % 3 != 2;
    o.per_channel = (int)(f % 2);
    o.pow2 = f % 3 == 1;
    layer L;
    layer_make(&L, &d, 0, &r, &o);
    if (g_verbose) printf("  %s\n", L.name);
    run_all_configs(&L);
    stats_add(&s, &L);
    layer_free(&L);
  }
  for (int i = 0; i < n_random; i++) {
    dlconv_conv2d_desc d;
    gen_desc(&r, &d, t, i % 6 == 5);
    layer L;
    layer_make(&L, &d, 0, &r, &GEN_RANDOM);
    if (g_verbose) printf("  %s\n", L.name);
    run_all_configs(&L);
    stats_add(&s, &L);
    layer_free(&L);
  }
  printf("%s conv: %ld layers, %ld runs, %ld output points, %ld NHWC, %ld without bias, %ld clamped points",
         dtype_name(t), s.cases, g_runs - r0, s.points, s.nhwc, s.nobias, s.clamped);
  if (is_q8(t))
    printf(", %ld per-channel, %ld exact .5 ties, %ld saturated low, %ld saturated high", s.per_channel, s.ties,
           s.sat_lo, s.sat_hi);
  printf(" (%.2f s)\n", now_s() - t0);
  if (is_q8(t)) {
    assert_true(s.ties > 0);
    assert_true(s.sat_lo > 0 && s.sat_hi > 0);
  }
  if (g_fails) fail_msg("%ld failures", g_fails);
}

static void test_conv_f16(void **state) { (void)state; conv_suite(DLCONV_F16, 101, 300); }
static void test_conv_u8(void **state) { (void)state; conv_suite(DLCONV_U8, 202, 300); }
static void test_conv_s8(void **state) { (void)state; conv_suite(DLCONV_S8, 303, 300); }

/* Dense: batch x in -> out, w out x in row-major. */
static void test_dense(void **state) {
  (void)state;
  const double t0 = now_s();
  const long r0 = g_runs;
  static const int shapes[][3] = {{1, 1, 1}, {2, 7, 5}, {3, 33, 17}, {5, 300, 9}, {1, 129, 64}, {4, 1000, 3},
                                  {7, 16, 33}, {2, 255, 1}, {9, 64, 24}, {1, 4099, 2},
                                  /* several panels of the gemv kernels (64 output channels), batch 1 to 8 */
                                  {1, 37, 130}, {5, 64, 65}, {8, 3, 200}, {3, 1001, 129}};
  const dlconv_dtype ts[] = {DLCONV_F16, DLCONV_U8, DLCONV_S8};
  rng_t r = lowp_rng(404);
  stats s = {0};
  for (size_t ti = 0; ti < ARRAY_LEN(ts); ti++)
    for (size_t i = 0; i < ARRAY_LEN(shapes); i++) {
      dlconv_conv2d_desc d;
      dlconv_conv2d_desc_init(&d, shapes[i][0], shapes[i][1], 1, 1, shapes[i][2], 1, 1);
      d.dtype = ts[ti];
      gen_opts o = GEN_RANDOM;
      o.clamp_mode = (int)(i % 4);
      o.has_bias = i % 3 != 1;
      layer L;
      layer_make(&L, &d, 1, &r, &o);
      if (g_verbose) printf("  %s\n", L.name);
      run_all_configs(&L);
      stats_add(&s, &L);
      layer_free(&L);
    }
  /* random shapes */
  for (int i = 0; i < 36; i++) {
    dlconv_conv2d_desc d;
    dlconv_conv2d_desc_init(&d, rng_int(&r, 1, 9), rng_int(&r, 1, i % 4 == 3 ? 2000 : 200), 1, 1, rng_int(&r, 1, 40), 1, 1);
    d.dtype = ts[i % 3];
    layer L;
    layer_make(&L, &d, 1, &r, &GEN_RANDOM);
    if (g_verbose) printf("  %s\n", L.name);
    run_all_configs(&L);
    stats_add(&s, &L);
    layer_free(&L);
  }
  printf("dense: %ld layers, %ld runs, %ld points, %ld ties, %ld/%ld saturated low/high (%.2f s)\n", s.cases,
         g_runs - r0, s.points, s.ties, s.sat_lo, s.sat_hi, now_s() - t0);
  if (g_fails) fail_msg("%ld failures", g_fails);
}

/* Exact .5 ties of every parity and sign: dense in=1 (acc = (x - zp) * w), mult = 1/2 and 1/4. */
static void test_q8_ties(void **state) {
  (void)state;
  const dlconv_dtype ts[] = {DLCONV_U8, DLCONV_S8};
  const float xsc[] = {0.5f, 0.25f, 1.0f};
  long ties = 0;
  for (size_t ti = 0; ti < ARRAY_LEN(ts); ti++)
    for (size_t k = 0; k < ARRAY_LEN(xsc); k++) {
      const dlconv_dtype t = ts[ti];
      dlconv_conv2d_desc d;
      dlconv_conv2d_desc_init(&d, 256, 1, 1, 1, 6, 1, 1);
      d.dtype = t;
      rng_t r = lowp_rng(500 + k);
      layer L;
      layer_alloc(&L, &d, 1, 1, &r);
      for (int i = 0; i < 256; i++) ((uint8_t *)L.xb.p)[i] = (uint8_t)i; /* every x value */
      const int8_t wv[6] = {1, -1, 3, 1, -1, 1};
      const int32_t bv[6] = {0, 0, 1, -1, 7, 1000};
      memcpy(L.wb.p, wv, 6);
      memcpy(L.bias32, bv, sizeof bv);
      L.q.x_zero_point = t == DLCONV_U8 ? 128 : 0;
      L.q.y_zero_point = t == DLCONV_U8 ? 128 : 0;
      L.q.x_scale = xsc[k];
      L.wsc[0] = 1.0f; L.wsc[1] = 1.0f; L.wsc[2] = 0.5f; L.wsc[3] = 1.0f; L.wsc[4] = 2.0f; L.wsc[5] = 0.125f;
      L.q.w_scales = L.wsc;
      L.q.n_w_scales = 6;
      L.q.y_scale = 1.0f;
      L.d.out_min = -INFINITY;
      L.d.out_max = INFINITY;
      ref_acc_q8(&L);
      ref_requant_q8(&L);
      layer_snapshot(&L);
      ties += L.ties;
      run_all_configs(&L);
      layer_free(&L);
    }
  printf("ties: %ld exact .5 ties checked\n", ties);
  assert_true(ties > 500);
  if (g_fails) fail_msg("%ld failures", g_fails);
}

/* Depthwise int8 sums near fp32's exact range: NCHW depthwise may widen to fp32 and sum there,
 * exact while every partial sum stays within 2^24. Every product here is +-255 * 127 = 32385
 * (odd), so with 2 x 257 = 514 taps the sum is just under 2^24 and with 2 x 300 = 600 taps every
 * odd partial sum past 518 products is one fp32 cannot hold: a path that summed those in fp32
 * would be off. The bias cancels the sum to +-5, so requantised with scale 1 an error of one
 * unit shows in y. */
static void test_q8_dw_exact_sums(void **state) {
  (void)state;
  const dlconv_dtype ts[] = {DLCONV_U8, DLCONV_S8};
  const int kws[] = {257, 300};
  for (size_t ti = 0; ti < ARRAY_LEN(ts); ti++)
    for (size_t k = 0; k < ARRAY_LEN(kws); k++) {
      const dlconv_dtype t = ts[ti];
      dlconv_conv2d_desc d;
      dlconv_conv2d_desc_init(&d, 1, 2, 2, kws[k] + 2, 2, 2, kws[k]);
      d.groups = 2;
      d.dtype = t;
      rng_t r = lowp_rng(550 + k);
      layer L;
      layer_alloc(&L, &d, 0, 1, &r);
      memset(L.xb.p, t == DLCONV_U8 ? 0 : 0x80, L.xn); /* x - zp = -255 */
      int8_t *w = L.wb.p;
      const int64_t taps = 2 * (int64_t)kws[k], sum = taps * 255 * 127;
      for (size_t i = 0; i < L.wn; i++) w[i] = (int8_t)(i < (size_t)taps ? -127 : 127);
      L.bias32[0] = (int32_t)(5 - sum);
      L.bias32[1] = (int32_t)(sum - 5);
      L.q = (dlconv_quant){.x_scale = 1.0f, .x_zero_point = t == DLCONV_U8 ? 255 : 127, .w_scales = L.wsc,
                           .n_w_scales = 1, .y_scale = 1.0f, .y_zero_point = t == DLCONV_U8 ? 100 : 0};
      L.wsc[0] = 1.0f;
      L.d.out_min = -INFINITY;
      L.d.out_max = INFINITY;
      ref_acc_q8(&L);
      ref_requant_q8(&L);
      layer_snapshot(&L);
      run_all_configs(&L);
      layer_free(&L);
    }
  if (g_fails) fail_msg("%ld failures", g_fails);
}

/* Int8 NCHW depthwise layers on larger planes, through DIRECT and AUTO on every ISA. On a CPU with
 * AVX512-VNNI + VBMI, direct plans these on the quads kernel (q8_dwconv_4x*, direct_lowp.c's
 * dw4_plan: k_w <= 8 and 15 * stride_w + (k_w - 1) * dil_w <= 63) in its two modes: one run of
 * virtual pixels over the padded plane ("flat": equal strides, where rows would be mostly junk
 * lanes) or chunks of whole output rows, at most 4096 outputs each; elsewhere (k_w 9, wide
 * windows, other ISAs) the other NCHW depthwise paths. Planes of at most 784 outputs of depth
 * multiplier 1 with dil_w 1 (or k_w 1) take the channel-lanes kernel instead (q8_dwconv_16x16*,
 * dwc_plan: blocks of 16 channels, 17 channels one full and one of 1). Planes 1x1 .. 112x9, k 1..9, strides 1..4,
 * dilations 1..3, asymmetric padding (as much as the kernel needs on small planes), depth
 * multiplier 1 and 2, batch 1 and 2, 3 / 16 / 17 channels, U8 and S8, per-tensor and per-channel
 * scales, mostly odd zero points. A seeded subset: every (plane, k_w, dtype) once in each of four
 * rounds, the rest of each layer drawn; plus planes of more than 4096 outputs that are not flat
 * (70 x 65 planes with 64 output columns among them), so that they take several chunks of rows.
 * Under a sanitizer only every third layer runs. */
typedef struct dwp_stats {
  long layers, quads, flat, chunked, auto_quads, lanes, auto_lanes;
} dwp_stats;

/* The kernel (info.kernel) a plan of L with (algo, isa) would run; "" where it does not plan. */
static void dwp_kernel(const layer *L, dlconv_algo algo, dlconv_isa isa, char kernel[64]) {
  const dlconv_options o = forced_options(algo, isa, 1);
  dlconv_plan *plan = NULL;
  dlconv_plan_info info;
  kernel[0] = 0;
  if (layer_plan(L, &plan, &o) != DLCONV_OK) return;
  if (dlconv_plan_query(plan, &info) == DLCONV_OK) snprintf(kernel, 64, "%s", info.kernel);
  dlconv_plan_destroy(plan);
}

static void dwp_run(const layer *L, dwp_stats *st) {
  dlconv_isa isas[8];
  const int ni = isa_list(isas);
  if (g_verbose) printf("  %s\n", L->name);
  /* which of the quads kernel's modes this layer takes (dw4_plan's rule), for the summary */
  char k[64];
  dwp_kernel(L, DLCONV_ALGO_DIRECT, DLCONV_ISA_AVX512, k);
  if (!strncmp(k, "q8_dwconv_4x", 12)) {
    const int64_t wp = L->d.w_in + L->d.pad_left + L->d.pad_right, nvirt = (L->ho - 1) * wp + L->wo;
    const int flat = L->d.stride_h == L->d.stride_w && (nvirt + 15) / 16 < L->ho * ((L->wo + 15) / 16);
    st->quads++;
    st->flat += flat;
    st->chunked += !flat && L->ho * L->wo > 4096;
    dwp_kernel(L, DLCONV_ALGO_AUTO, DLCONV_ISA_AUTO, k);
    st->auto_quads += !strncmp(k, "q8_dwconv_4x", 12);
  } else if (!strncmp(k, "q8_dwconv_16x16", 15)) { /* channels in the lanes (dwc_plan) */
    st->lanes++;
    dwp_kernel(L, DLCONV_ALGO_AUTO, DLCONV_ISA_AUTO, k);
    st->auto_lanes += !strncmp(k, "q8_dwconv_16x16", 15);
  }
  st->layers++;
  const dlconv_algo algos[] = {DLCONV_ALGO_DIRECT, DLCONV_ALGO_AUTO};
  int first = 1;
  for (size_t ai = 0; ai < ARRAY_LEN(algos); ai++)
    for (int i = 0; i < ni; i++)
      for (int t = 1; t <= 2; t++) {
        run_layer(L, algos[ai], isas[i], t, 0, first);
        first = 0;
      }
}

/* The larger sweeps run every third layer under a sanitizer (10-50x slower there). */
static int sanitized_every(void) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return 3;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
  return 3;
#else
  return 1;
#endif
#else
  return 1;
#endif
}

static void test_q8_dw_planes(void **state) {
  (void)state;
  const double t0 = now_s();
  const long r0 = g_runs;
  const int every = sanitized_every();
  static const int planes[][2] = {{1, 1}, {7, 7}, {14, 14}, {15, 17}, {28, 28}, {33, 31}, {56, 56}, {70, 65}, {112, 9}};
  static const int ks[] = {1, 2, 3, 5, 7, 8, 9}, chans[] = {3, 16, 17};
  static const int zu[] = {1, 3, 77, 127, 129, 255, 0, 128}, zs[] = {-127, -7, 3, 5, 127, -128, 0, -1};
  const int np = (int)ARRAY_LEN(planes), nk = (int)ARRAY_LEN(ks);
  rng_t r = lowp_rng(1300);
  dwp_stats st = {0};
  /* every (plane, k_w, dtype) once a round */
  const int rounds = 4;
  for (int i = 0; i < rounds * 2 * np * nk; i++) {
    const int h = planes[i % np][0], w = planes[i % np][1];
    const int kw = ks[i / np % nk], kh = rng_chance(&r, 0.6) ? kw : rng_pick(&r, ks, nk);
    const dlconv_dtype t = i / (np * nk) % 2 ? DLCONV_S8 : DLCONV_U8;
    const int c = rng_pick(&r, chans, 3), mult = rng_int(&r, 1, 2), batch = rng_int(&r, 1, 2);
    dlconv_conv2d_desc d;
    dlconv_conv2d_desc_init(&d, batch, c, h, w, c * mult, kh, kw);
    d.groups = c;
    d.dtype = t;
    d.layout = DLCONV_NCHW;
    d.stride_w = rng_int(&r, 1, 4);
    d.stride_h = rng_chance(&r, 0.5) ? d.stride_w : rng_int(&r, 1, 4);
    d.dilation_w = rng_int(&r, 1, 3);
    d.dilation_h = rng_chance(&r, 0.5) ? d.dilation_w : rng_int(&r, 1, 3);
    /* padding: each side on its own (asymmetric), then what a plane smaller than the dilated
       kernel lacks, on either side */
    const int eh = (kh - 1) * d.dilation_h, ew = (kw - 1) * d.dilation_w;
    d.pad_top = rng_int(&r, 0, eh / 2 + 1);
    d.pad_bottom = rng_int(&r, 0, eh / 2 + 1);
    d.pad_left = rng_int(&r, 0, ew / 2 + 1);
    d.pad_right = rng_int(&r, 0, ew / 2 + 1);
    const int lack_h = eh + 1 - (h + d.pad_top + d.pad_bottom), lack_w = ew + 1 - (w + d.pad_left + d.pad_right);
    if (lack_h > 0) {
      const int a = rng_int(&r, 0, lack_h);
      d.pad_top += a;
      d.pad_bottom += lack_h - a;
    }
    if (lack_w > 0) {
      const int a = rng_int(&r, 0, lack_w);
      d.pad_left += a;
      d.pad_right += lack_w - a;
    }
    const int keep = i % every == 0; /* the rng advances the same either way */
    gen_opts o = GEN_RANDOM;
    o.per_channel = (i + i / np) % 2;
    o.xzp = t == DLCONV_U8 ? rng_pick(&r, zu, (int)ARRAY_LEN(zu)) : rng_pick(&r, zs, (int)ARRAY_LEN(zs));
    if (!keep) continue;
    layer L;
    layer_make(&L, &d, 0, &r, &o);
    dwp_run(&L, &st);
    layer_free(&L);
  }
  /* planes of more than 4096 outputs that are not flat (64 or 1504 output columns waste no lanes,
     or unequal strides): several chunks of rows, the last of 4-row tiles and rows left over, or
     of 2 rows (1504 columns) */
  static const struct { int h, w, n, c, mult, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr; } chunked[] = {
      {70, 65, 1, 16, 1, 3, 3, 1, 1, 1, 1, 1, 1, 0, 1},  /* 70 x 64: 64 + 6 rows */
      {70, 65, 2, 3, 2, 8, 8, 1, 1, 1, 1, 3, 4, 2, 4},   /* two quads, 70 x 64 */
      {70, 65, 1, 17, 1, 2, 5, 1, 1, 1, 1, 0, 0, 0, 3},  /* 69 x 64: 64 + 5 */
      {70, 65, 1, 3, 2, 3, 3, 1, 1, 2, 2, 3, 0, 2, 1},   /* dilation 2, 69 x 64 */
      {150, 65, 1, 5, 1, 3, 3, 2, 1, 1, 1, 1, 1, 0, 1},  /* stride_h 2, 75 x 64: 64 + 11 */
      {5, 1504, 1, 3, 2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1},  /* 5 x 1504: chunks of 2 rows */
  };
  for (size_t i = 0; i < 2 * ARRAY_LEN(chunked); i++) {
    const size_t ci = i % ARRAY_LEN(chunked);
    dlconv_conv2d_desc d;
    dlconv_conv2d_desc_init(&d, chunked[ci].n, chunked[ci].c, chunked[ci].h, chunked[ci].w,
                            chunked[ci].c * chunked[ci].mult, chunked[ci].kh, chunked[ci].kw);
    d.groups = chunked[ci].c;
    d.dtype = i < ARRAY_LEN(chunked) ? DLCONV_U8 : DLCONV_S8;
    d.layout = DLCONV_NCHW;
    d.stride_h = chunked[ci].sh;
    d.stride_w = chunked[ci].sw;
    d.dilation_h = chunked[ci].dh;
    d.dilation_w = chunked[ci].dw;
    d.pad_top = chunked[ci].pt;
    d.pad_bottom = chunked[ci].pb;
    d.pad_left = chunked[ci].pl;
    d.pad_right = chunked[ci].pr;
    gen_opts o = GEN_RANDOM;
    o.per_channel = (int)(i % 2);
    o.xzp = d.dtype == DLCONV_U8 ? zu[i % ARRAY_LEN(zu)] : zs[i % ARRAY_LEN(zs)];
    layer L;
    layer_make(&L, &d, 0, &r, &o);
    assert_true(L.ho * L.wo > 4096 && L.wo % 16 == 0);
    if (i % every == 0) dwp_run(&L, &st);
    layer_free(&L);
  }
  printf("q8 dw planes: %ld layers, %ld runs; on the quads kernel (direct, avx512): %ld (%ld flat, %ld in chunks of "
         "rows), AUTO took it for %ld; on the channel-lanes kernel: %ld, AUTO took it for %ld (%.2f s)\n",
         st.layers, g_runs - r0, st.quads, st.flat, st.chunked, st.auto_quads, st.lanes, st.auto_lanes, now_s() - t0);
  if (g_fails) fail_msg("%ld failures", g_fails);
}

/* The NHWC int8 sweeps below share their layers' making and running. */
typedef struct nhwc_sweep {
  rng_t r;
  long layers, on_kernel, auto_kernel;
} nhwc_sweep;

/* Batch 1..3, NHWC, strides 1..2 (stride_w 1..3 a third of the time), dilation 2 one time in five
   each way, each side padded up to half the dilated window and one more, and what a plane smaller
   than the window lacks added at the bottom and right (lack_end) or the top and left. */
static void nhwc_sweep_desc(nhwc_sweep *sw, dlconv_conv2d_desc *d, dlconv_dtype t, int cin, int h, int w, int cout,
                            int kh, int kw, int groups, int lack_end) {
  rng_t *r = &sw->r;
  dlconv_conv2d_desc_init(d, rng_int(r, 1, 3), cin, h, w, cout, kh, kw);
  d->groups = groups;
  d->dtype = t;
  d->layout = DLCONV_NHWC;
  d->stride_h = rng_int(r, 1, 2);
  d->stride_w = rng_chance(r, 0.7) ? d->stride_h : rng_int(r, 1, 3);
  d->dilation_h = rng_chance(r, 0.2) ? 2 : 1;
  d->dilation_w = rng_chance(r, 0.2) ? 2 : 1;
  const int eh = (kh - 1) * d->dilation_h, ew = (kw - 1) * d->dilation_w;
  d->pad_top = rng_int(r, 0, eh / 2 + 1);
  d->pad_bottom = rng_int(r, 0, eh / 2 + 1);
  d->pad_left = rng_int(r, 0, ew / 2 + 1);
  d->pad_right = rng_int(r, 0, ew / 2 + 1);
  const int lack_h = eh + 1 - (h + d->pad_top + d->pad_bottom), lack_w = ew + 1 - (w + d->pad_left + d->pad_right);
  if (lack_h > 0) *(lack_end ? &d->pad_bottom : &d->pad_top) += lack_h;
  if (lack_w > 0) *(lack_end ? &d->pad_right : &d->pad_left) += lack_w;
}

/* Layer i of a sweep: per-channel scales every other pair, power-of-two scales (exact ties) every
   third, x zero points from the lists; made unless skip (the rng advances the same either way),
   then counted (its plan under algo on avx512, and AUTO's, on a kernel whose name starts with
   kernel) and run through algo and AUTO on every ISA, 1 and 2 threads. */
static void nhwc_sweep_run(nhwc_sweep *sw, const dlconv_conv2d_desc *d, int i, int skip, dlconv_algo algo,
                           const char *kernel) {
  static const int zu[] = {0, 128, 1, 77, 255}, zs[] = {0, -128, 127, -7, 5};
  gen_opts o = GEN_RANDOM;
  o.per_channel = i / 2 % 2;
  o.pow2 = i % 3 == 0;
  o.xzp = d->dtype == DLCONV_U8 ? rng_pick(&sw->r, zu, (int)ARRAY_LEN(zu)) : rng_pick(&sw->r, zs, (int)ARRAY_LEN(zs));
  if (skip) return;
  layer L;
  layer_make(&L, d, 0, &sw->r, &o);
  char k[64];
  const size_t klen = strlen(kernel);
  dwp_kernel(&L, algo, DLCONV_ISA_AVX512, k);
  if (!strncmp(k, kernel, klen)) {
    sw->on_kernel++;
    dwp_kernel(&L, DLCONV_ALGO_AUTO, DLCONV_ISA_AUTO, k);
    sw->auto_kernel += !strncmp(k, kernel, klen);
  }
  sw->layers++;
  dlconv_isa isas[8];
  const int ni = isa_list(isas);
  const dlconv_algo algos[] = {algo, DLCONV_ALGO_AUTO};
  int first = 1;
  for (size_t ai = 0; ai < ARRAY_LEN(algos); ai++)
    for (int j = 0; j < ni; j++)
      for (int th = 1; th <= 2; th++) {
        run_layer(&L, algos[ai], isas[j], th, 0, first);
        first = 0;
      }
  layer_free(&L);
}

/* Int8 NCHW convolutions through direct, whose copy of x is made by each task for the rows its jobs
 * read (one plane's rows packed in one call where the channels are whole quads and the rows
 * contiguous): planes whose rows are shorter than, as long as, and longer than a 16-unit vector
 * (a run across rows stored in pieces), widths that do and do not divide 64, pads 0..2, strides 1
 * and 2, 4..68 input channels (whole quads and a short last one), groups 1..2, batches 1..2, 1, 2
 * and 3 threads (tasks with different rows, the halo rows copied by both), and the three modes
 * forced (in place, packed, transposed). Every ISA. */
static void test_q8_direct_nchw_rows(void **state) {
  (void)state;
  const double t0 = now_s();
  const long r0 = g_runs;
  static const int hw[][2] = {{8, 8}, {16, 16}, {32, 32}, {7, 7}, {14, 14}, {5, 13}, {11, 20}, {3, 17}, {9, 4}, {6, 33}};
  static const int cins[] = {4, 8, 16, 32, 12, 5, 68};
  rng_t r = lowp_rng(1600);
  dlconv_isa isas[8];
  const int ni = isa_list(isas);
  long layers = 0;
  for (int i = 0; i < 40; i++) {
    const int h = hw[i % 10][0], w = hw[i % 10][1], cin = cins[i % 7], groups = i % 5 == 4 && cin % 2 == 0 ? 2 : 1;
    const int cout = groups * rng_int(&r, 1, 40), k = i % 9 == 8 ? 1 : 3;
    dlconv_conv2d_desc d;
    dlconv_conv2d_desc_init(&d, 1 + (i % 7 == 3), cin, h, w, cout, k, k);
    d.groups = groups;
    d.dtype = i % 2 ? DLCONV_S8 : DLCONV_U8;
    d.layout = DLCONV_NCHW;
    d.stride_h = d.stride_w = i % 4 == 3 ? 2 : 1;
    const int pad = k == 1 ? 0 : i % 6 == 5 ? 0 : i % 6 == 4 ? 2 : 1;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = pad;
    if (h + 2 * pad < k || w + 2 * pad < k) continue;
    gen_opts o = GEN_RANDOM;
    o.pow2 = i % 3 == 0;
    layer L;
    layer_make(&L, &d, 0, &r, &o);
    layers++;
    for (int j = 0; j < ni; j++)
      for (int th = 1; th <= 3; th++) run_layer(&L, DLCONV_ALGO_DIRECT, isas[j], th, 0, th == 1 && j == 0);
    for (int mode = 0; mode <= 2; mode++) {
      dlc_test_direct_lowp_packed(mode);
      for (int j = 1; j < ni; j++)
        for (int th = 1; th <= 3; th += 2) run_layer(&L, DLCONV_ALGO_DIRECT, isas[j], th, 0, 0);
      dlc_test_direct_lowp_packed(-1);
    }
    layer_free(&L);
  }
  printf("q8 NCHW direct rows: %ld layers, %ld runs (%.2f s)\n", layers, g_runs - r0, now_s() - t0);
  if (g_fails) fail_msg("%ld failures", g_fails);
}

/* Int8 NHWC depthwise layers (depth multiplier 1), which direct runs in registers where the CPU
 * has AVX512-VNNI (q8_dwconv_nhwc: tiles of 4 pixels x blocks of 64 channels, two pixels a vector
 * for blocks of at most 32, x read in place, padding taps on the zero point's row): channels
 * 1..200 (every 16-lane tail, several blocks), windows 1..7 with strides, dilations and asymmetric
 * padding, planes 1x1..21x19, batches 1..3, power-of-two scales (exact ties) and random ones. Each
 * layer through DIRECT and AUTO on every ISA, 1 and 2 threads; the summary counts the plans on
 * the kernel. */
static void test_q8_dw_nhwc(void **state) {
  (void)state;
  const double t0 = now_s();
  const long r0 = g_runs;
  static const int chans[] = {1, 3, 16, 17, 40, 64, 65, 96, 144, 200}, ks[] = {1, 2, 3, 3, 3, 5, 7};
  nhwc_sweep sw = {.r = lowp_rng(1500)};
  rng_t *r = &sw.r;
  for (int i = 0; i < 60; i++) {
    const dlconv_dtype t = i % 2 ? DLCONV_S8 : DLCONV_U8;
    const int c = chans[i % ARRAY_LEN(chans)];
    const int kh = rng_pick(r, ks, (int)ARRAY_LEN(ks)), kw = rng_chance(r, 0.7) ? kh : rng_pick(r, ks, (int)ARRAY_LEN(ks));
    const int h = rng_int(r, 1, 21), w = rng_int(r, 1, 19);
    dlconv_conv2d_desc d;
    nhwc_sweep_desc(&sw, &d, t, c, h, w, c, kh, kw, c, 0);
    nhwc_sweep_run(&sw, &d, i, 0, DLCONV_ALGO_DIRECT, "q8_dwconv_nhwc");
  }
  printf("q8 NHWC depthwise: %ld layers, %ld runs; on the in-register kernel (direct, avx512): %ld, AUTO took it for "
         "%ld (%.2f s)\n", sw.layers, g_runs - r0, sw.on_kernel, sw.auto_kernel, now_s() - t0);
}

/* Int8 NHWC convolutions with a multiple of 4 input channels per group, which im2col + GEMM hands
 * to the indirect GEMM where the CPU has AVX512-VNNI (igemm_q8.c: x read in place through per-tap
 * pointers, padding taps on a row of the zero point): output channels 1..150 (panels of 64 and
 * every tail of 16-lane vectors), input channels 4..72, and a quarter of the layers with 1..9
 * input channels (row mode where k_w * c_in <= 64 and dilation_w is 1: runs copied at the
 * image's borders and at the end of x), windows 1..7 with strides, dilations and
 * asymmetric padding, groups 1..3, batches 1..3 (row tiles across images), planes 1x1..19x17,
 * power-of-two scales (exact ties, the kernel's exact fallback) and random ones, clamps. Each layer
 * through IM2COL_GEMM and AUTO on every ISA, 1 and 2 threads; the summary counts the plans on the
 * indirect GEMM. Under a sanitizer only every third layer runs. */
static void test_q8_igemm_nhwc(void **state) {
  (void)state;
  const double t0 = now_s();
  const long r0 = g_runs;
  const int every = sanitized_every();
  static const int couts[] = {1, 7, 16, 17, 33, 48, 64, 65, 100, 128, 150}, cins[] = {4, 8, 12, 20, 64, 72};
  static const int row_cins[] = {1, 2, 3, 3, 5, 6, 9}; /* groups 1: row mode where k_w * c_in <= 64 */
  static const int ks[] = {1, 1, 2, 3, 3, 5};
  nhwc_sweep sw = {.r = lowp_rng(1400)};
  rng_t *r = &sw.r;
  for (int i = 0; i < 96; i++) {
    const dlconv_dtype t = i % 2 ? DLCONV_S8 : DLCONV_U8;
    const int groups = rng_chance(r, 0.7) ? 1 : rng_int(r, 2, 3);
    const int rows = groups == 1 && i % 4 == 1;
    const int cin = rows ? rng_pick(r, row_cins, (int)ARRAY_LEN(row_cins)) : groups * rng_pick(r, cins, (int)ARRAY_LEN(cins));
    const int cout = groups * couts[i % ARRAY_LEN(couts)];
    const int kh = rows && i % 8 == 1 ? 7 : rng_pick(r, ks, (int)ARRAY_LEN(ks));
    const int kw = rng_chance(r, 0.7) ? kh : rng_pick(r, ks, (int)ARRAY_LEN(ks));
    const int h = rng_int(r, 1, 19), w = rng_int(r, 1, 17);
    dlconv_conv2d_desc d;
    nhwc_sweep_desc(&sw, &d, t, cin, h, w, cout, kh, kw, groups, 1);
    nhwc_sweep_run(&sw, &d, i, i % every != 0, DLCONV_ALGO_IM2COL_GEMM, "q8_igemm");
  }
  printf("q8 NHWC quads: %ld layers, %ld runs; on the indirect GEMM (im2col_gemm, avx512): %ld, AUTO took it for %ld "
         "(%.2f s)\n", sw.layers, g_runs - r0, sw.on_kernel, sw.auto_kernel, now_s() - t0);
}

/* Int8 NHWC grouped convolutions of 2, 4, 8 or 16 input channels per group, which GSPC runs in
 * registers where the CPU has AVX512-VNNI (gspc_q8n.c, q8_gspc_nhwc: output channels in the lanes,
 * each lane's quad gathered from a pixel's channel run by a permute, two taps a quad with 2 per
 * group; x read in place, padding taps on the zero point's row): every mode (2: pairs with an odd
 * and an even number of taps; 4, 8, 16: 1, 2, 4 quads a tap), output channels per group 1..33 so
 * that blocks of 64 channels end in every vector (1..4 of 16 lanes, partial ones) and span one or
 * several blocks, groups 2..40, widths 1..19 and 1..5 (tiles of 1..8 pixels, the last of a row shorter; 16 or
 * more output channels per group: broadcasts, tiles of 8 pixels up to 2 vectors, else two tiles),
 * windows 1..5 with strides, dilations and asymmetric padding (tiles with and without padding taps:
 * both kernel entries), batches 1..3, power-of-two scales (exact ties, the exact fallback of the
 * in-register store) and random ones. Each layer through GSPC and AUTO on every ISA, 1 and 2
 * threads; the summary counts the plans on the kernel. Under a sanitizer only every third layer
 * runs. */
static void test_q8_gspc_nhwc(void **state) {
  (void)state;
  const double t0 = now_s();
  const long r0 = g_runs;
  const int every = sanitized_every();
  static const int cins[] = {2, 4, 8, 16, 2, 4}, kpgs[] = {1, 2, 3, 4, 5, 8, 9, 16, 17, 33, 2, 4};
  static const int ks[] = {1, 2, 3, 3, 3, 5};
  nhwc_sweep sw = {.r = lowp_rng(1600)};
  rng_t *r = &sw.r;
  for (int i = 0; i < 144; i++) {
    const dlconv_dtype t = i % 2 ? DLCONV_S8 : DLCONV_U8;
    const int cin = cins[i % ARRAY_LEN(cins)], kpg = kpgs[(i / 2) % ARRAY_LEN(kpgs)];
    /* enough groups for several blocks of 64 channels now and then, few enough to keep it short */
    const int groups = rng_chance(r, 0.3) ? rng_int(r, 2, 4) : rng_int(r, 2, kpg >= 16 ? 8 : cin >= 8 ? 16 : 40);
    const int kh = rng_pick(r, ks, (int)ARRAY_LEN(ks));
    const int kw = rng_chance(r, 0.7) ? kh : rng_pick(r, ks, (int)ARRAY_LEN(ks));
    /* a quarter of the rows 1..5 wide: tiles of 1 and 2 pixels, some inside the image */
    const int h = rng_int(r, 1, 11), w = i % 4 == 3 ? rng_int(r, 1, 5) : rng_int(r, 1, 19);
    dlconv_conv2d_desc d;
    nhwc_sweep_desc(&sw, &d, t, groups * cin, h, w, groups * kpg, kh, kw, groups, i % 3 != 0);
    nhwc_sweep_run(&sw, &d, i, i % every != 0, DLCONV_ALGO_GSPC, "q8_gspc_nhwc");
  }
  /* and every (mode, vectors of a block, tile width) once through each entry of the kernel: 3 x 3
     windows, one output row of m pixels, unpadded (the pointer-per-tap entry) and padded */
  static const int modes[] = {2, 4, 8, 16};
  for (int i = 0; i < 128; i++) {
    const int cin = modes[i / 32], nv = i / 8 % 4 + 1, m = i / 2 % 4 + 1, pad = i % 2;
    const int groups = 16 * nv / cin > 2 ? 16 * nv / cin : 2, kpg = 16 * nv / groups; /* c_out 16 nv */
    const int h = pad ? 1 : 3, w = pad ? m : m + 2;
    dlconv_conv2d_desc d;
    dlconv_conv2d_desc_init(&d, 1, groups * cin, h, w, groups * kpg, 3, 3);
    d.groups = groups;
    d.dtype = i % 4 < 2 ? DLCONV_U8 : DLCONV_S8;
    d.layout = DLCONV_NHWC;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = pad;
    nhwc_sweep_run(&sw, &d, i, i % every != 0, DLCONV_ALGO_GSPC, "q8_gspc_nhwc");
  }
  /* the broadcasts (16 output channels per group): each quads mode, 2..5 groups (blocks of 2, 3, 4
     vectors, and 4 then 1), one output row of 1..8 pixels (two tiles of at most 4 with 3 or 4
     vectors), both entries */
  for (int i = 0; i < 192; i++) {
    const int cin = 4 << (i / 64), groups = i / 16 % 4 + 2, m = i / 2 % 8 + 1, pad = i % 2;
    const int h = pad ? 1 : 3, w = pad ? m : m + 2;
    dlconv_conv2d_desc d;
    dlconv_conv2d_desc_init(&d, 1, groups * cin, h, w, groups * 16, 3, 3);
    d.groups = groups;
    d.dtype = (i / 2 + i / 16) % 2 ? DLCONV_S8 : DLCONV_U8;
    d.layout = DLCONV_NHWC;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = pad;
    nhwc_sweep_run(&sw, &d, i, i % every != 0, DLCONV_ALGO_GSPC, "q8_gspc_nhwc");
  }
  /* lanes mode (as many output as input channels per group, 4, 8, 16: 1, 2, 4 steps; 32 channels
     two pixels a vector, 64 one block, 128 two): one output row of 1..8 pixels (two tiles above 4
     without pairs), strided unpadded (3 rows, 1 output row) and across the padding (2 output rows:
     a padded kernel row each, both columns at the ends), at stride 1 (pairs in one load) and 2 */
  for (int i = 0; i < 144; i++) {
    const int cin = 4 << (i % 3), co = 32 << (i / 3 % 3), m = i / 9 % 8 + 1, pad = i / 72, st = i % 4 == 3 ? 2 : 1;
    const int h = pad ? st + 1 : 3, w = st * (m - 1) + (pad ? 1 : 3);
    dlconv_conv2d_desc d;
    dlconv_conv2d_desc_init(&d, 1, co, h, w, co, 3, 3);
    d.groups = co / cin;
    d.stride_h = d.stride_w = st;
    d.dtype = (i / 2 + i / 9) % 2 ? DLCONV_S8 : DLCONV_U8;
    d.layout = DLCONV_NHWC;
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = pad;
    nhwc_sweep_run(&sw, &d, i, i % every != 0, DLCONV_ALGO_GSPC, "q8_gspc_nhwc");
  }
  printf("q8 NHWC grouped in registers: %ld layers, %ld runs; on the kernel (gspc, avx512): %ld, AUTO took it for %ld "
         "(%.2f s)\n", sw.layers, g_runs - r0, sw.on_kernel, sw.auto_kernel, now_s() - t0);
}

/* Int8 NCHW grouped convolutions, which GSPC runs on the NHWC in-register kernel where it takes
 * the layer's NHWC twin (gspc_q8t.c: x transposed channel-last into the workspace, the output
 * transposed back; 16 x 16 byte blocks and the rest element by element): input channels per group
 * 1..33 (2, 4, 8, 16 on the kernel, the others on the other GSPC driver), output channels per
 * group 1..33, groups 2..64, planes 1x1..37x35 (block edges both ways, odd sizes), windows 1..5
 * with strides 1..3, dilations and asymmetric padding, batches 1..3, power-of-two scales (exact
 * ties) and random ones; then grouped layers of quads of channels per group (4..64) on the
 * indirect GEMM the same way. Each layer through GSPC (IM2COL_GEMM) and AUTO on every ISA, 1 and 2
 * threads; the summaries count the plans on the kernel. Under a sanitizer only every third layer
 * runs. */
static void test_q8_gspc_nchw(void **state) {
  (void)state;
  const double t0 = now_s();
  const long r0 = g_runs;
  const int every = sanitized_every();
  static const int cins[] = {2, 4, 8, 16, 2, 4, 8, 16, 1, 3, 5, 12, 24, 33};
  static const int kpgs[] = {1, 2, 3, 4, 5, 8, 9, 16, 17, 33, 2, 4, 12};
  static const int ks[] = {1, 2, 3, 3, 3, 5};
  nhwc_sweep sw = {.r = lowp_rng(1700)};
  rng_t *r = &sw.r;
  for (int i = 0; i < 112; i++) {
    const dlconv_dtype t = i % 2 ? DLCONV_S8 : DLCONV_U8;
    const int cin = cins[i % ARRAY_LEN(cins)], kpg = kpgs[(i / 2) % ARRAY_LEN(kpgs)];
    const int groups = rng_chance(r, 0.3) ? rng_int(r, 2, 4) : rng_int(r, 2, kpg >= 16 || cin >= 12 ? 8 : cin >= 8 ? 16 : 64);
    const int kh = rng_pick(r, ks, (int)ARRAY_LEN(ks));
    const int kw = rng_chance(r, 0.7) ? kh : rng_pick(r, ks, (int)ARRAY_LEN(ks));
    /* a quarter of the planes 16 x 16 or more: whole blocks of the transposes */
    const int big = i % 4 == 2;
    const int h = big ? rng_int(r, 16, 37) : rng_int(r, 1, 11), w = big ? rng_int(r, 16, 35) : rng_int(r, 1, 19);
    dlconv_conv2d_desc d;
    nhwc_sweep_desc(&sw, &d, t, groups * cin, h, w, groups * kpg, kh, kw, groups, i % 3 != 0);
    d.layout = DLCONV_NCHW;
    nhwc_sweep_run(&sw, &d, i, i % every != 0, DLCONV_ALGO_GSPC, "q8_gspc_nhwc");
  }
  printf("q8 NCHW grouped on the NHWC kernel: %ld layers, %ld runs; on the kernel (gspc, avx512): %ld, AUTO took it "
         "for %ld (%.2f s)\n", sw.layers, g_runs - r0, sw.on_kernel, sw.auto_kernel, now_s() - t0);
  /* and on the indirect GEMM (gspc_q8t.c's other entry: IM2COL_GEMM, quads of channels per group) */
  static const int qcins[] = {4, 8, 12, 16, 20, 32, 64};
  nhwc_sweep sq = {.r = lowp_rng(1710)};
  r = &sq.r;
  for (int i = 0; i < 32; i++) {
    const dlconv_dtype t = i % 2 ? DLCONV_S8 : DLCONV_U8;
    const int cin = qcins[i % ARRAY_LEN(qcins)], kpg = kpgs[(i / 2) % ARRAY_LEN(kpgs)];
    const int groups = rng_int(r, 2, cin >= 32 ? 3 : 6);
    const int kh = rng_pick(r, ks, (int)ARRAY_LEN(ks));
    const int kw = rng_chance(r, 0.7) ? kh : rng_pick(r, ks, (int)ARRAY_LEN(ks));
    const int big = i % 4 == 2;
    const int h = big ? rng_int(r, 16, 21) : rng_int(r, 1, 11), w = big ? rng_int(r, 16, 19) : rng_int(r, 1, 19);
    dlconv_conv2d_desc d;
    nhwc_sweep_desc(&sq, &d, t, groups * cin, h, w, groups * kpg, kh, kw, groups, i % 3 != 0);
    d.layout = DLCONV_NCHW;
    nhwc_sweep_run(&sq, &d, i, i % every != 0, DLCONV_ALGO_IM2COL_GEMM, "q8_igemm");
  }
  printf("q8 NCHW grouped on the indirect GEMM: %ld layers; on it (im2col_gemm, avx512): %ld, AUTO took it for %ld "
         "(%.2f s)\n", sq.layers, sq.on_kernel, sq.auto_kernel, now_s() - t0);
}

/* Requantisation order: points where the contract's double arithmetic rounds differently from
 * common shortcuts (mult in float, v in float, a different association), and clamp bounds whose
 * float and double quotients round differently. Dense in=1, w=1, x = every value, one channel
 * per found (w_scale, bias). */
static void test_q8_requant_order(void **state) {
  (void)state;
  const dlconv_dtype ts[] = {DLCONV_U8, DLCONV_S8};
  long found_total = 0;
  for (size_t ti = 0; ti < ARRAY_LEN(ts); ti++) {
    const dlconv_dtype t = ts[ti];
    rng_t r = lowp_rng(600 + ti);
    const int32_t xzp = t == DLCONV_U8 ? 131 : -3, yzp = t == DLCONV_U8 ? 125 : 1;
    const float xs = (float)rng_range(&r, 0.01, 0.3), ys = (float)rng_range(&r, 0.01, 0.3);
    enum { CH = 24 };
    float wsc[CH];
    int32_t bias[CH];
    int found = 0;
    for (long tries = 0; tries < 400000 && found < CH; tries++) {
      const double b = nearbyint(rng_range(&r, -1, 1) * ldexp(1.0, rng_int(&r, 8, 30)));
      const double target = rng_range(&r, 20, 110); /* |v| around the middle of the range */
      const float ws = (float)(target / fabs(b + 1) * (double)ys / (double)xs);
      if (!(ws > 0) || !isfinite(ws)) continue;
      const double mult = (double)xs * (double)ws / (double)ys;
      const float multf = xs * ws / ys;
      int hit = 0;
      for (int x = tmin(t); x <= tmax(t) && !hit; x++) {
        const int64_t a = (int64_t)(x - xzp) + (int64_t)b;
        const double v = (double)a * mult;
        const double alts[4] = {(double)a * (double)multf, (double)((float)a * (float)mult),
                                (double)a * (double)xs * (double)ws / (double)ys,
                                (double)a * ((double)xs * ((double)ws / (double)ys))};
        for (int k = 0; k < 4; k++)
          if (nearbyint(alts[k]) != nearbyint(v)) hit = 1;
      }
      if (hit) {
        wsc[found] = ws;
        bias[found] = (int32_t)b;
        found++;
      }
    }
    found_total += found;
    if (found == 0) continue;
    /* clamp bounds whose float quotient rounds differently from the double one */
    float omin = -INFINITY, omax = INFINITY;
    for (long tries = 0; tries < 2000000; tries++) {
      const float c = (float)(rng_range(&r, 20, 100) * (double)ys);
      const double qd = (double)c / (double)ys, qf = (double)(c / ys);
      if (nearbyint(qd) != nearbyint(qf)) {
        if (omax == INFINITY) omax = c;
        else if (omin == -INFINITY) { omin = -c; break; }
      }
    }
    dlconv_conv2d_desc d;
    dlconv_conv2d_desc_init(&d, tmax(t) - tmin(t) + 1, 1, 1, 1, found, 1, 1);
    d.dtype = t;
    for (int pass = 0; pass < 2; pass++) {
      layer L;
      layer_alloc(&L, &d, 1, 1, &r);
      for (int i = 0; i <= tmax(t) - tmin(t); i++) ((uint8_t *)L.xb.p)[i] = (uint8_t)(i + tmin(t));
      memset(L.wb.p, 1, (size_t)found);
      memcpy(L.bias32, bias, sizeof(int32_t) * (size_t)found);
      memcpy(L.wsc, wsc, sizeof(float) * (size_t)found);
      L.q = (dlconv_quant){.x_scale = xs, .x_zero_point = xzp, .w_scales = L.wsc, .n_w_scales = found,
                           .y_scale = ys, .y_zero_point = yzp};
      if (pass == 1) { L.d.out_min = omin; L.d.out_max = omax; }
      else { L.d.out_min = -INFINITY; L.d.out_max = INFINITY; }
      ref_acc_q8(&L);
      ref_requant_q8(&L);
      layer_snapshot(&L);
      run_all_configs(&L);
      layer_free(&L);
    }
    printf("requant order %s: %d sensitive channels, clamp [%.9g, %.9g]\n", dtype_name(t), found, omin, omax);
  }
  assert_true(found_total > 0);
  if (g_fails) fail_msg("%ld failures", g_fails);
}

/* F16: a NaN input stays NaN through the clamp; zeros with bias only. Pass 1 gives output
   channel 0 only zero weights: the dense algorithms must still carry the NaN (0 x NaN = NaN);
   sparse_csr is left out there, as a weight it does not store multiplies nothing. */
static void test_f16_nan(void **state) {
  (void)state;
  rng_t r = lowp_rng(700);
  for (int run = 0; run < 6; run++) {
    const int mode = run % 3, zeros = run / 3;
    dlconv_conv2d_desc d;
    dlconv_conv2d_desc_init(&d, 1, 3, 6, 5, 5, 3, 3);
    d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
    d.layout = mode == 1 ? DLCONV_NHWC : DLCONV_NCHW;
    d.dtype = DLCONV_F16;
    gen_opts o = GEN_RANDOM;
    o.clamp_mode = mode; /* none, ReLU, ReLU6-like */
    o.has_bias = 1;
    o.f16_exp = 0;
    layer L;
    layer_alloc(&L, &d, 0, 1, &r);
    fill_f16(&L, &r, &o);
    /* no zero weights: sparse_csr drops them (docs/api.md: nnz == 0 gives the bias), so only present
       weights meet the NaN, and every algorithm must carry it */
    for (size_t i = 0; i < L.wn; i++)
      if ((((uint16_t *)L.wb.p)[i] & 0x7fff) == 0) ((uint16_t *)L.wb.p)[i] = 0x3c00;
    /* output channel 0's weights come first in both weight layouts */
    if (zeros) memset(L.wb.p, 0, (size_t)(d.c_in * d.k_h * d.k_w) * 2);
    ((uint16_t *)L.xb.p)[x_index(&d, 0, 1, 2, 3)] = 0x7e00;
    ref_conv_f16(&L);
    layer_snapshot(&L);
    long nans = 0;
    for (size_t i = 0; i < L.yn; i++) nans += isnan(L.ref[i]);
    assert_true(nans == 9 * 5);
    g_skip_csr = zeros;
    run_all_configs(&L);
    g_skip_csr = 0;
    layer_free(&L);
  }
  if (g_fails) fail_msg("%ld failures", g_fails);
}

/* Explicit algorithms without a low-precision path: UNSUPPORTED (leaving no trace), or, if one
 * ever plans, exact. Also CSR weights in F16 / S8. */
static void test_other_algos(void **state) {
  (void)state;
  const dlconv_dtype ts[] = {DLCONV_F16, DLCONV_U8, DLCONV_S8};
  const dlconv_algo algos[] = {DLCONV_ALGO_DIRECT, DLCONV_ALGO_SPATIAL_PACK, DLCONV_ALGO_GSPC, DLCONV_ALGO_SPARSE_CSR};
  const size_t fixed_pick[] = {2, 4, 6, 9};
  dlconv_isa isas[8];
  const int ni = isa_list(isas);
  rng_t r = lowp_rng(800);
  long ok = 0, unsup = 0;
  for (size_t ti = 0; ti < ARRAY_LEN(ts); ti++)
    for (size_t f = 0; f < ARRAY_LEN(fixed_pick); f++) {
      dlconv_conv2d_desc d;
      fixed_desc(&FIXED[fixed_pick[f]], ts[ti], &d);
      layer L;
      layer_make(&L, &d, 0, &r, &GEN_RANDOM);
      for (size_t a = 0; a < ARRAY_LEN(algos); a++)
        for (int i = 0; i < ni; i++) {
          run_res res = run_layer(&L, algos[a], isas[i], 1, 1, 0);
          ok += res == R_OK;
          unsup += res == R_UNSUPPORTED;
        }
      /* CSR weights of the conv dtype */
      {
        const int32_t rows = d.c_out, cols = (int32_t)L.K;
        int32_t *rp = malloc(sizeof(int32_t) * (size_t)(rows + 1)), *ci = malloc(sizeof(int32_t) * (L.wn + 1));
        unsigned char *vals = malloc(L.wn * L.es + 2);
        int32_t k = 0;
        rp[0] = 0;
        for (int32_t row = 0; row < rows; row++) {
          for (int32_t c = 0; c < cols; c++) {
            const size_t wi = (size_t)row * (size_t)cols + (size_t)c;
            const int nz = L.es == 2 ? (((const uint16_t *)L.wb.p)[wi] & 0x7fff) != 0 : ((const int8_t *)L.wb.p)[wi] != 0;
            if (!nz) continue;
            memcpy(vals + (size_t)k * L.es, (const unsigned char *)L.wb.p + wi * L.es, L.es);
            ci[k++] = c;
          }
          rp[row + 1] = k;
        }
        const dlconv_csr csr = {.rows = rows, .cols = cols, .nnz = k, .values = vals, .col_indices = ci, .row_ptr = rp};
        for (int i = 0; i < ni; i++) {
          dlconv_options o;
          dlconv_options_init(&o);
          o.isa = isas[i];
          o.num_threads = 1;
          dlconv_plan *plan = (dlconv_plan *)(uintptr_t)0x10;
          dlconv_status st = dlconv_plan_conv2d_csr(&plan, &L.d, &csr, layer_bias(&L), layer_q(&L), &o);
          char ctx[96];
          snprintf(ctx, sizeof ctx, "plan_conv2d_csr isa=%s", isa_name(isas[i]));
          g_runs++;
          if (st == DLCONV_ERR_UNSUPPORTED) {
            unsup++;
            if (plan) FAIL("%s: %s: UNSUPPORTED left *plan non-NULL", L.name, ctx);
            if (!dlconv_last_error()[0]) FAIL("%s: %s: empty last_error", L.name, ctx);
          } else if (st != DLCONV_OK) {
            FAIL("%s: %s: -> %s (%s)", L.name, ctx, dlconv_status_string(st), dlconv_last_error());
          } else {
            ok++;
            canary_buf yb;
            canary_alloc(&yb, L.yn * L.es, 0);
            gb_fill(&yb, 77);
            st = dlconv_execute(plan, L.xb.p, yb.p, NULL);
            if (st != DLCONV_OK) FAIL("%s: %s: execute -> %s", L.name, ctx, dlconv_status_string(st));
            else {
              if (!canary_guards_ok(&yb)) FAIL("%s: %s: wrote outside y", L.name, ctx);
              check_output(&L, yb.p, ctx);
            }
            canary_free(&yb);
            dlconv_plan_destroy(plan);
          }
        }
        free(rp); free(ci); free(vals);
      }
      layer_free(&L);
    }
  printf("explicit direct/spack/gspc/csr on F16/U8/S8: %ld planned (checked exact), %ld UNSUPPORTED\n", ok, unsup);
  if (g_fails) fail_msg("%ld failures", g_fails);
}

/* The plan copies w, bias and q (w_scales included): scribbling over them after planning changes nothing. */
static void test_plan_copies(void **state) {
  (void)state;
  const dlconv_dtype ts[] = {DLCONV_F16, DLCONV_U8, DLCONV_S8};
  dlconv_isa isas[8];
  const int ni = isa_list(isas);
  rng_t r = lowp_rng(1200);
  for (size_t ti = 0; ti < ARRAY_LEN(ts); ti++)
    for (int dense = 0; dense < 2; dense++) {
      dlconv_conv2d_desc d;
      if (dense) {
        dlconv_conv2d_desc_init(&d, 3, 37, 1, 1, 19, 1, 1);
        d.dtype = ts[ti];
      } else {
        fixed_desc(&FIXED[5], ts[ti], &d);
      }
      gen_opts o = GEN_RANDOM;
      o.has_bias = 1;
      o.per_channel = 1;
      o.clamp_mode = 3;
      layer L;
      layer_make(&L, &d, dense, &r, &o);
      for (int i = 0; i < ni; i++) {
        dlconv_options op;
        dlconv_options_init(&op);
        op.isa = isas[i];
        op.num_threads = 1;
        dlconv_plan *plan = NULL;
        dlconv_status st = layer_plan(&L, &plan, &op);
        char ctx[96];
        snprintf(ctx, sizeof ctx, "plan copies, isa=%s", isa_name(isas[i]));
        g_runs++;
        if (st != DLCONV_OK) {
          FAIL("%s: %s: plan -> %s (%s)", L.name, ctx, dlconv_status_string(st), dlconv_last_error());
          continue;
        }
        const dlconv_quant q0 = L.q;
        memset(L.wb.p, 0x5b, L.wb.bytes);
        memset(L.bb.p, 0x7d, L.bb.bytes);
        for (int32_t c = 0; c < d.c_out; c++) L.wsc[c] = 1e30f;
        L.q.x_scale = 1e-30f; L.q.y_scale = 3.0f; L.q.x_zero_point = 1; L.q.y_zero_point = 2; L.q.n_w_scales = 1;
        canary_buf yb;
        canary_alloc(&yb, L.yn * L.es, L.es == 2 ? 2 : 1);
        gb_fill(&yb, 5);
        st = dlconv_execute(plan, L.xb.p, yb.p, NULL);
        memcpy(L.wb.p, L.w0, L.wb.bytes);
        memcpy(L.bb.p, L.b0, L.bb.bytes);
        L.q = q0;
        if (is_q8(d.dtype)) memcpy(L.wsc, L.wsc0, sizeof(float) * (size_t)L.q.n_w_scales);
        if (st != DLCONV_OK) FAIL("%s: %s: execute -> %s", L.name, ctx, dlconv_status_string(st));
        else {
          if (!canary_guards_ok(&yb)) FAIL("%s: %s: wrote outside y", L.name, ctx);
          check_output(&L, yb.p, ctx);
        }
        canary_free(&yb);
        dlconv_plan_destroy(plan);
      }
      layer_free(&L);
    }
  if (g_fails) fail_msg("%ld failures", g_fails);
}

/* F16 results beyond the binary16 range become +-inf (unless clamped); the rest stay finite. */
static void test_f16_overflow(void **state) {
  (void)state;
  rng_t r = lowp_rng(1300);
  const float clamps[][2] = {{-INFINITY, INFINITY}, {0.0f, 6.0f}, {-70000.0f, 70000.0f}, {-60000.0f, INFINITY}};
  long infs = 0;
  for (size_t c = 0; c < ARRAY_LEN(clamps); c++) {
    dlconv_conv2d_desc d;
    dlconv_conv2d_desc_init(&d, 16, 8, 1, 1, 5, 1, 1);
    d.dtype = DLCONV_F16;
    layer L;
    layer_alloc(&L, &d, 1, 1, &r);
    uint16_t *x = L.xb.p, *w = L.wb.p, *b = L.bb.p;
    for (size_t i = 0; i < L.xn; i++) x[i] = half_of(rng_range(&r, 100, 250) * (rng_chance(&r, 0.2) ? -1 : 1));
    for (size_t i = 0; i < L.wn; i++) w[i] = half_of(rng_range(&r, 10, 100) * (i / 8 % 2 ? -1 : 1));
    for (int32_t i = 0; i < d.c_out; i++) b[i] = half_of(rng_range(&r, -1000, 1000));
    L.d.out_min = clamps[c][0];
    L.d.out_max = clamps[c][1];
    ref_conv_f16(&L);
    layer_snapshot(&L);
    for (size_t i = 0; i < L.yn; i++) infs += fabs(L.ref[i]) > 70000;
    run_all_configs(&L);
    layer_free(&L);
  }
  printf("f16 overflow: %ld reference points beyond the fp16 range\n", infs);
  assert_true(infs > 0);
  if (g_fails) fail_msg("%ld failures", g_fails);
}

/* --- invalid quantisation ------------------------------------------------------------------- */

static char g_reset_msg[512];
static void reset_last_error(void) {
  (void)dlconv_plan_query(NULL, NULL);
  const char *e = dlconv_last_error();
  snprintf(g_reset_msg, sizeof g_reset_msg, "%s", e ? e : "");
}

/* Both entry points (plan, one-shot) answer `want`, leave *plan NULL and y untouched, and say why. */
static void expect_status(const char *what, const layer *L, const dlconv_quant *q, float omin, float omax,
                          dlconv_status want) {
  const dlconv_conv2d_desc *d0 = &L->d;
  dlconv_conv2d_desc d = *d0;
  d.out_min = omin;
  d.out_max = omax;
  canary_buf yb;
  canary_alloc(&yb, L->yn * L->es + 1, 0);
  for (int entry = 0; entry < 2; entry++) {
    reset_last_error();
    dlconv_status st;
    dlconv_plan *plan = (dlconv_plan *)(uintptr_t)0x10;
    if (entry == 0)
      st = L->dense ? dlconv_plan_dense(&plan, d.n, d.c_in, d.c_out, d.dtype, L->wb.p, layer_bias(L), omin, omax, q, NULL)
                    : dlconv_plan_conv2d(&plan, &d, L->wb.p, layer_bias(L), q, NULL);
    else {
      plan = NULL;
      st = L->dense ? dlconv_dense(d.n, d.c_in, d.c_out, d.dtype, L->xb.p, L->wb.p, layer_bias(L), yb.p, omin, omax, q, NULL)
                    : dlconv_conv2d(&d, L->xb.p, L->wb.p, layer_bias(L), yb.p, q, NULL);
    }
    const char *e = dlconv_last_error();
    const char *en = entry ? "one-shot" : "plan";
    if (g_verbose) printf("  %-44s %-8s %s -> %s \"%s\"\n", what, en, L->dense ? "dense" : "conv", dlconv_status_string(st), e ? e : "");
    if (st != want) {
      FAIL("%s (%s %s, %s): %s, want %s (%s)", what, dtype_name(d.dtype), L->dense ? "dense" : "conv", en,
           dlconv_status_string(st), dlconv_status_string(want), e ? e : "");
      if (st == DLCONV_OK && entry == 0) dlconv_plan_destroy(plan);
    } else {
      if (plan) FAIL("%s (%s): *plan not NULL", what, en);
      if (!e || !e[0] || !strcmp(e, g_reset_msg)) FAIL("%s (%s): dlconv_last_error() empty or stale: \"%s\"", what, en, e ? e : "");
    }
    if (!canary_untouched(&yb)) {
      FAIL("%s (%s): y written", what, en);
      canary_reset(&yb);
    }
  }
  canary_free(&yb);
}

static void test_bad_quant(void **state) {
  (void)state;
  const float bad_scales[] = {0.0f, -0.0f, -0.1f, NAN, INFINITY, -INFINITY};
  const char *bad_names[] = {"0", "-0", "-0.1", "NaN", "inf", "-inf"};
  const dlconv_dtype ts[] = {DLCONV_U8, DLCONV_S8};
  rng_t r = lowp_rng(900);
  long cases = 0;
  for (size_t ti = 0; ti < ARRAY_LEN(ts); ti++)
    for (int dense = 0; dense < 2; dense++) {
      const dlconv_dtype t = ts[ti];
      dlconv_conv2d_desc d;
      if (dense) {
        dlconv_conv2d_desc_init(&d, 2, 9, 1, 1, 5, 1, 1);
      } else {
        fixed_desc(&FIXED[4], t, &d); /* groups 3, c_out 6 */
      }
      d.dtype = t;
      gen_opts o = GEN_RANDOM;
      o.per_channel = 1;
      o.clamp_mode = 0;
      layer L;
      layer_make(&L, &d, dense, &r, &o);
      const int32_t co = d.c_out;
      /* the valid baseline plans */
      assert_int_equal(run_layer(&L, DLCONV_ALGO_AUTO, DLCONV_ISA_AUTO, 1, 0, 1), R_OK);
      char what[96];
      dlconv_quant q;
      float ws[64];
      expect_status("q NULL", &L, NULL, -INFINITY, INFINITY, DLCONV_ERR_INVALID_ARG), cases++;
      for (size_t b = 0; b < ARRAY_LEN(bad_scales); b++) {
        q = L.q; q.x_scale = bad_scales[b];
        snprintf(what, sizeof what, "x_scale = %s", bad_names[b]);
        expect_status(what, &L, &q, -INFINITY, INFINITY, DLCONV_ERR_INVALID_ARG), cases++;
        q = L.q; q.y_scale = bad_scales[b];
        snprintf(what, sizeof what, "y_scale = %s", bad_names[b]);
        expect_status(what, &L, &q, -INFINITY, INFINITY, DLCONV_ERR_INVALID_ARG), cases++;
        for (int which = 0; which < 3; which++) {
          q = L.q;
          memcpy(ws, L.wsc, sizeof(float) * (size_t)co);
          const int idx = which == 0 ? 0 : which == 1 ? co - 1 : co / 2;
          ws[idx] = bad_scales[b];
          q.w_scales = ws;
          snprintf(what, sizeof what, "w_scales[%d] = %s (per-channel)", idx, bad_names[b]);
          expect_status(what, &L, &q, -INFINITY, INFINITY, DLCONV_ERR_INVALID_ARG), cases++;
        }
        q = L.q; ws[0] = bad_scales[b]; q.w_scales = ws; q.n_w_scales = 1;
        snprintf(what, sizeof what, "w_scales[0] = %s (per-tensor)", bad_names[b]);
        expect_status(what, &L, &q, -INFINITY, INFINITY, DLCONV_ERR_INVALID_ARG), cases++;
      }
      q = L.q; q.w_scales = NULL;
      expect_status("w_scales NULL", &L, &q, -INFINITY, INFINITY, DLCONV_ERR_INVALID_ARG), cases++;
      const int32_t bad_n[] = {0, -1, co + 1, co - 1, 2 == co ? 3 : 2, INT32_MIN, INT32_MAX};
      for (size_t b = 0; b < ARRAY_LEN(bad_n); b++) {
        if (bad_n[b] == 1 || bad_n[b] == co) continue;
        q = L.q;
        q.n_w_scales = bad_n[b];
        snprintf(what, sizeof what, "n_w_scales = %d (c_out %d)", bad_n[b], co);
        expect_status(what, &L, &q, -INFINITY, INFINITY, DLCONV_ERR_INVALID_ARG), cases++;
      }
      const int32_t bad_zp_u8[] = {256, -1, 1000, INT32_MIN}, bad_zp_s8[] = {128, -129, 255, INT32_MAX};
      const int32_t *bz = t == DLCONV_U8 ? bad_zp_u8 : bad_zp_s8;
      for (int b = 0; b < 4; b++) {
        q = L.q; q.x_zero_point = bz[b];
        snprintf(what, sizeof what, "x_zero_point = %d", bz[b]);
        expect_status(what, &L, &q, -INFINITY, INFINITY, DLCONV_ERR_INVALID_ARG), cases++;
        q = L.q; q.y_zero_point = bz[b];
        snprintf(what, sizeof what, "y_zero_point = %d", bz[b]);
        expect_status(what, &L, &q, -INFINITY, INFINITY, DLCONV_ERR_INVALID_ARG), cases++;
      }
      /* clamp: min > max, NaN */
      expect_status("out_min > out_max", &L, &L.q, 1.0f, -1.0f, DLCONV_ERR_INVALID_ARG), cases++;
      expect_status("out_min NaN", &L, &L.q, NAN, INFINITY, DLCONV_ERR_INVALID_ARG), cases++;
      /* the extremes of the valid ranges are accepted */
      {
        q = L.q;
        q.x_zero_point = tmin(t); q.y_zero_point = tmax(t);
        dlconv_plan *plan = NULL;
        dlconv_status st = L.dense ? dlconv_plan_dense(&plan, d.n, d.c_in, d.c_out, t, L.wb.p, layer_bias(&L), -INFINITY, INFINITY, &q, NULL)
                                   : dlconv_plan_conv2d(&plan, &L.d, L.wb.p, layer_bias(&L), &q, NULL);
        if (st != DLCONV_OK) FAIL("zero points %d / %d (the range ends) rejected: %s", tmin(t), tmax(t), dlconv_last_error());
        dlconv_plan_destroy(plan);
      }
      layer_free(&L);
    }
  /* F16 (and the F32 sanity case) with q: INVALID_ARG; F16 without q plans */
  {
    dlconv_conv2d_desc d;
    fixed_desc(&FIXED[4], DLCONV_F16, &d);
    gen_opts o = GEN_RANDOM;
    o.clamp_mode = 0;
    const float ws1 = 0.5f;
    const dlconv_quant q = {.x_scale = 0.1f, .x_zero_point = 0, .w_scales = &ws1, .n_w_scales = 1, .y_scale = 0.1f, .y_zero_point = 0};
    for (int dense = 0; dense < 2; dense++) {
      if (dense) dlconv_conv2d_desc_init(&d, 2, 9, 1, 1, 5, 1, 1), d.dtype = DLCONV_F16;
      layer L;
      layer_make(&L, &d, dense, &r, &o);
      expect_status("F16 with q", &L, &q, -INFINITY, INFINITY, DLCONV_ERR_INVALID_ARG), cases++;
      expect_status("F16 out_min > out_max", &L, NULL, 2.0f, 1.0f, DLCONV_ERR_INVALID_ARG), cases++;
      layer_free(&L);
    }
  }
  printf("bad quantisation: %ld cases x {plan, one-shot}\n", cases);
  if (g_fails) fail_msg("%ld failures", g_fails);
}

/* --- reductions too long for s32 ------------------------------------------------------------ */

/* K * 255 * 128 >= 2^31 (K >= 65794) must be UNSUPPORTED; K = 65793 with the extreme values must be exact. */
/* AUTO hands int8 dense layers of few rows to the gemv wherever the explicit GEMM plan takes it
   (a layout-driven candidate list once put spatial pack first for them: 12x slower). */
static void test_q8_dense_auto_gemv(void **state) {
  (void)state;
  rng_t r = lowp_rng(1100);
  dlconv_isa isas[8];
  const int ni = isa_list(isas);
  const dlconv_dtype ts[] = {DLCONV_U8, DLCONV_S8};
  const int rows[] = {1, 3, 8};
  long checked = 0;
  for (size_t ti = 0; ti < ARRAY_LEN(ts); ti++)
    for (size_t ri = 0; ri < ARRAY_LEN(rows); ri++)
      for (int i = 0; i < ni; i++) {
        dlconv_conv2d_desc d;
        dlconv_conv2d_desc_init(&d, rows[ri], 1280, 1, 1, 100, 1, 1);
        d.dtype = ts[ti];
        layer L;
        layer_make(&L, &d, 1, &r, &GEN_RANDOM);
        char kernel[2][64];
        for (int a = 0; a < 2; a++) {
          dlconv_options op;
          dlconv_options_init(&op);
          op.algo = a ? DLCONV_ALGO_AUTO : DLCONV_ALGO_IM2COL_GEMM;
          op.isa = isas[i];
          dlconv_plan *plan = NULL;
          dlconv_plan_info info;
          kernel[a][0] = 0;
          if (layer_plan(&L, &plan, &op) == DLCONV_OK && dlconv_plan_query(plan, &info) == DLCONV_OK)
            snprintf(kernel[a], sizeof kernel[a], "%s", info.kernel);
          dlconv_plan_destroy(plan);
        }
        if (strstr(kernel[0], "gemv")) {
          checked++;
          if (strcmp(kernel[0], kernel[1]))
            FAIL("%s isa=%s: AUTO runs %s, the gemv (%s) is there", L.name, isa_name(isas[i]), kernel[1], kernel[0]);
        }
        layer_free(&L);
      }
  print_message("[ dense auto ] %ld plans on a gemv\n", checked);
  if (g_fails) fail_msg("%ld failures", g_fails);
}

static void test_q8_long_reduction(void **state) {
  (void)state;
  rng_t r = lowp_rng(1000);
  dlconv_isa isas[8];
  const int ni = isa_list(isas);
  const dlconv_dtype ts[] = {DLCONV_U8, DLCONV_S8};
  for (size_t ti = 0; ti < ARRAY_LEN(ts); ti++) {
    const dlconv_dtype t = ts[ti];
    /* too long: dense in 70000 and 65794; conv 7311 x 3 x 3 = 65799; grouped conv with per-group K 65799 */
    struct { int dense, n, cin, h, w, cout, k, g; } big[] = {
        {1, 1, 70000, 1, 1, 2, 1, 1}, {1, 2, 65794, 1, 1, 3, 1, 1}, {0, 1, 7311, 3, 3, 2, 3, 1}, {0, 1, 2 * 7311, 3, 3, 2, 3, 2}};
    for (size_t b = 0; b < ARRAY_LEN(big); b++) {
      dlconv_conv2d_desc d;
      dlconv_conv2d_desc_init(&d, big[b].n, big[b].cin, big[b].h, big[b].w, big[b].cout, big[b].k, big[b].k);
      d.groups = big[b].g;
      d.dtype = t;
      gen_opts o = GEN_RANDOM;
      o.clamp_mode = 0;
      o.spread = 50;
      layer L;
      layer_make(&L, &d, big[b].dense, &r, &o);
      const dlconv_algo algos[] = {DLCONV_ALGO_AUTO, DLCONV_ALGO_IM2COL_GEMM};
      for (size_t a = 0; a < ARRAY_LEN(algos); a++)
        for (int i = 0; i < ni; i++) {
          dlconv_options op;
          dlconv_options_init(&op);
          op.algo = algos[a];
          op.isa = isas[i];
          canary_buf yb;
          canary_alloc(&yb, L.yn, 0);
          dlconv_plan *plan = (dlconv_plan *)(uintptr_t)0x10;
          dlconv_status st = layer_plan(&L, &plan, &op);
          if (st != DLCONV_ERR_UNSUPPORTED) {
            FAIL("%s (K=%zu) algo=%s isa=%s: plan -> %s, want UNSUPPORTED (%s)", L.name, L.K, algo_name(algos[a]),
                 isa_name(isas[i]), dlconv_status_string(st), dlconv_last_error());
            if (st == DLCONV_OK) {
              /* then at least the result must be right */
              if (dlconv_execute(plan, L.xb.p, yb.p, NULL) == DLCONV_OK) check_output(&L, yb.p, "K too long, planned anyway");
              dlconv_plan_destroy(plan);
            }
          } else {
            if (plan) FAIL("%s: *plan not NULL", L.name);
            if (!dlconv_last_error()[0]) FAIL("%s: empty last_error", L.name);
          }
          canary_reset(&yb);
          st = layer_oneshot(&L, yb.p, &op);
          if (st != DLCONV_ERR_UNSUPPORTED) {
            FAIL("%s (K=%zu) algo=%s isa=%s: one-shot -> %s, want UNSUPPORTED", L.name, L.K, algo_name(algos[a]),
                 isa_name(isas[i]), dlconv_status_string(st));
            if (st == DLCONV_OK) check_output(&L, yb.p, "K too long, one-shot anyway");
          } else if (!canary_untouched(&yb)) {
            FAIL("%s: UNSUPPORTED one-shot wrote y", L.name);
          }
          canary_free(&yb);
        }
      layer_free(&L);
    }
    /* the longest allowed reduction, with every term at its extreme: |acc| = 65793*255*128 = 2^31 - 128 */
    {
      dlconv_conv2d_desc d;
      dlconv_conv2d_desc_init(&d, 3, 65793, 1, 1, 4, 1, 1);
      d.dtype = t;
      layer L;
      layer_alloc(&L, &d, 1, 1, &r);
      const int32_t xzp = t == DLCONV_U8 ? 0 : 127;
      for (size_t i = 0; i < L.xn; i++) {
        const int row = (int)(i / 65793);
        int v = row == 0 ? tmax(t) : row == 1 ? tmin(t) : rng_int(&r, tmin(t), tmax(t));
        if (t == DLCONV_U8) ((uint8_t *)L.xb.p)[i] = (uint8_t)v; else ((int8_t *)L.xb.p)[i] = (int8_t)v;
      }
      int8_t *w = L.wb.p;
      for (size_t i = 0; i < L.wn; i++) {
        const int row = (int)(i / 65793);
        w[i] = (int8_t)(row == 0 ? -128 : row == 1 ? -128 : row == 2 ? 127 : rng_int(&r, -128, 127));
      }
      /* biases keep acc + bias within s32 here: -128 brings -(2^31 - 128) to exactly INT32_MIN */
      const int32_t bv[4] = {-128, 127, -5, 0};
      memcpy(L.bias32, bv, sizeof bv);
      L.wsc[0] = 1.0f;
      L.q = (dlconv_quant){.x_scale = 1.0f, .x_zero_point = xzp, .w_scales = L.wsc, .n_w_scales = 1,
                           .y_scale = (float)ldexp(1.0, 25), .y_zero_point = t == DLCONV_U8 ? 128 : 0};
      L.d.out_min = -INFINITY;
      L.d.out_max = INFINITY;
      ref_acc_q8(&L);
      ref_requant_q8(&L);
      layer_snapshot(&L);
      int64_t mx = 0;
      for (size_t i = 0; i < L.yn; i++) mx = llabs(L.acc[i]) > mx ? llabs(L.acc[i]) : mx;
      assert_true(mx == 2147483520LL);
      run_all_configs(&L);
      layer_free(&L);
    }
  }
  if (g_fails) fail_msg("%ld failures", g_fails);
}

/* S32 biases near the ends of their range: acc + bias leaves s32 and must not wrap. */
static void test_q8_bias_extremes(void **state) {
  (void)state;
  rng_t r = lowp_rng(1100);
  const dlconv_dtype ts[] = {DLCONV_U8, DLCONV_S8};
  for (size_t ti = 0; ti < ARRAY_LEN(ts); ti++) {
    const dlconv_dtype t = ts[ti];
    dlconv_conv2d_desc d;
    dlconv_conv2d_desc_init(&d, 8, 40, 1, 1, 4, 1, 1);
    d.dtype = t;
    layer L;
    layer_alloc(&L, &d, 1, 1, &r);
    for (size_t i = 0; i < L.xn; i++) {
      const int v = rng_int(&r, tmin(t), tmax(t));
      if (t == DLCONV_U8) ((uint8_t *)L.xb.p)[i] = (uint8_t)v; else ((int8_t *)L.xb.p)[i] = (int8_t)v;
    }
    int8_t *w = L.wb.p;
    for (size_t i = 0; i < L.wn; i++) {
      const int row = (int)(i / 40);
      w[i] = (int8_t)(row % 2 == 0 ? rng_int(&r, 60, 127) : rng_int(&r, -128, -60));
    }
    const int32_t bv[4] = {INT32_MAX - 1000, INT32_MIN + 1000, INT32_MAX, INT32_MIN};
    memcpy(L.bias32, bv, sizeof bv);
    /* mult ~ 100 / 2^31: outputs around +-100, so a wrapped sum shows */
    L.q = (dlconv_quant){.x_scale = 0.001f, .x_zero_point = t == DLCONV_U8 ? 0 : -128, .w_scales = L.wsc,
                         .n_w_scales = 1, .y_scale = (float)(0.001 * 0.001 * 2147483648.0 / 100.0), .y_zero_point = 0};
    L.wsc[0] = 0.001f;
    if (t == DLCONV_U8) L.q.y_zero_point = 128;
    L.d.out_min = -INFINITY;
    L.d.out_max = INFINITY;
    ref_acc_q8(&L);
    ref_requant_q8(&L);
    layer_snapshot(&L);
    long outside = 0;
    for (size_t i = 0; i < L.yn; i++) {
      const int64_t s = L.acc[i] + (int64_t)L.bias32[i % 4];
      outside += s > INT32_MAX || s < INT32_MIN;
    }
    printf("bias extremes %s: %ld of %zu outputs have acc + bias outside s32\n", dtype_name(t), outside, L.yn);
    assert_true(outside > 0);
    run_all_configs(&L);
    layer_free(&L);
  }
  if (g_fails) fail_msg("%ld failures", g_fails);
}

/* Every allocation of every F16/int8 plan (and of its execution) failing in turn: the call
   answers OUT_OF_MEMORY with *plan NULL and nothing left allocated, or succeeds (an optional
   allocation) with exact results; a plan that succeeds frees everything it holds. */
static void test_alloc_failures(void **state) {
  (void)state;
  rng_t r = lowp_rng(1200);
  const dlconv_algo algos[] = {DLCONV_ALGO_AUTO, DLCONV_ALGO_DIRECT, DLCONV_ALGO_IM2COL_GEMM,
                               DLCONV_ALGO_SPATIAL_PACK, DLCONV_ALGO_GSPC, DLCONV_ALGO_SPARSE_CSR};
  const dlconv_dtype ts[] = {DLCONV_F16, DLCONV_U8};
  const size_t pick[] = {4, 5, 19, 20}; /* grouped NHWC / NCHW, small groups both layouts */
  long points = 0, oom = 0;
  for (size_t ti = 0; ti < ARRAY_LEN(ts); ti++)
    for (size_t f = 0; f < ARRAY_LEN(pick); f++) {
      dlconv_conv2d_desc d;
      fixed_desc(&FIXED[pick[f]], ts[ti], &d);
      layer L;
      layer_make(&L, &d, 0, &r, &GEN_RANDOM);
      for (size_t a = 0; a < ARRAY_LEN(algos); a++) {
        dlconv_options o;
        dlconv_options_init(&o);
        o.algo = algos[a];
        o.num_threads = 2;
        dlconv_plan *plan = NULL;
        dlc_test_alloc_arm(0);
        dlconv_status st = layer_plan(&L, &plan, &o);
        const long n_alloc = dlc_test_alloc_count();
        dlc_test_alloc_disarm();
        if (st == DLCONV_ERR_UNSUPPORTED) continue;
        assert_int_equal(st, DLCONV_OK);
        dlconv_plan_destroy(plan);
        for (long k = 1; k <= n_alloc; k++) {
          plan = (dlconv_plan *)(uintptr_t)0x10;
          dlc_test_alloc_arm(k);
          st = layer_plan(&L, &plan, &o);
          const int fired = dlc_test_alloc_fired();
          canary_buf yb;
          canary_alloc(&yb, L.yn * L.es, 0);
          if (st == DLCONV_OK) {
            const dlconv_status se = dlconv_execute(plan, L.xb.p, yb.p, NULL);
            if (se == DLCONV_OK) check_output(&L, yb.p, "alloc failure");
            else if (se != DLCONV_ERR_OUT_OF_MEMORY) FAIL("%s: %s: execute after failed allocation %ld -> %s", L.name, algo_name(algos[a]), k, dlconv_status_string(se));
            dlconv_plan_destroy(plan);
          } else if (st == DLCONV_ERR_OUT_OF_MEMORY) {
            oom++;
            if (plan) FAIL("%s: %s: OUT_OF_MEMORY left *plan non-NULL", L.name, algo_name(algos[a]));
          } else {
            FAIL("%s: %s: allocation %ld failing -> %s (%s)", L.name, algo_name(algos[a]), k, dlconv_status_string(st),
                 dlconv_last_error());
          }
          const long live = dlc_test_alloc_live();
          dlc_test_alloc_disarm();
          canary_free(&yb);
          if (!fired) FAIL("%s: %s: allocation %ld of %ld never happened", L.name, algo_name(algos[a]), k, n_alloc);
          if (live != 0) FAIL("%s: %s: allocation %ld failing leaves %ld allocations", L.name, algo_name(algos[a]), k, live);
          points++;
        }
      }
      layer_free(&L);
    }
  printf("allocation failures: %ld injected, %ld answered OUT_OF_MEMORY\n", points, oom);
  assert_true(oom > 0);
  if (g_fails) fail_msg("%ld failures", g_fails);
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  setvbuf(stdout, NULL, _IOLBF, 0); /* FAIL lines and cmocka's stderr stay in order */
  g_verbose = getenv("TEST_VERBOSE") != NULL;
  const double t0 = now_s();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup(test_oracle_f16, setup_test),
      cmocka_unit_test_setup(test_conv_f16, setup_test),
      cmocka_unit_test_setup(test_conv_u8, setup_test),
      cmocka_unit_test_setup(test_conv_s8, setup_test),
      cmocka_unit_test_setup(test_dense, setup_test),
      cmocka_unit_test_setup(test_q8_ties, setup_test),
      cmocka_unit_test_setup(test_q8_dw_exact_sums, setup_test),
      cmocka_unit_test_setup(test_q8_dw_planes, setup_test),
      cmocka_unit_test_setup(test_q8_igemm_nhwc, setup_test),
      cmocka_unit_test_setup(test_q8_gspc_nhwc, setup_test),
      cmocka_unit_test_setup(test_q8_gspc_nchw, setup_test),
      cmocka_unit_test_setup(test_q8_dw_nhwc, setup_test),
      cmocka_unit_test_setup(test_q8_direct_nchw_rows, setup_test),
      cmocka_unit_test_setup(test_q8_requant_order, setup_test),
      cmocka_unit_test_setup(test_f16_nan, setup_test),
      cmocka_unit_test_setup(test_f16_overflow, setup_test),
      cmocka_unit_test_setup(test_plan_copies, setup_test),
      cmocka_unit_test_setup(test_other_algos, setup_test),
      cmocka_unit_test_setup(test_bad_quant, setup_test),
      cmocka_unit_test_setup(test_q8_dense_auto_gemv, setup_test),
      cmocka_unit_test_setup(test_q8_long_reduction, setup_test),
      cmocka_unit_test_setup(test_q8_bias_extremes, setup_test),
      cmocka_unit_test_setup(test_alloc_failures, setup_test),
  };
  int rc = cmocka_run_group_tests_name("lowp", tests, NULL, NULL);
  printf("test_lowp: %ld runs (%ld UNSUPPORTED where allowed), %.2f s\n", g_runs, g_unsupported, now_s() - t0);
  return rc;
}
