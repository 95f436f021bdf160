/* data.c - test data (see data.h). */
#include "data.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"

typedef struct rng { uint64_t s; } rng;

static uint32_t rng_next(rng *r) {   /* xorshift64*: fast, and the same stream everywhere */
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return (uint32_t)((r->s * 0x2545F4914F6CDD1Dull) >> 32);
}
static float rng_sym(rng *r) { return (float)((double)rng_next(r) / 2147483648.0 - 1.0); }  /* [-1, 1) */
static int rng_int(rng *r, int lo, int hi) { return lo + (int)(rng_next(r) % (uint32_t)(hi - lo + 1)); }

size_t bench_dtype_size(dlconv_dtype t) {
  switch (t) {
  case DLCONV_F16: return 2;
  case DLCONV_U8: case DLCONV_S8: return 1;
  default: return 4;
  }
}

void *bench_alloc(size_t bytes) {
  void *p = NULL;
  if (posix_memalign(&p, 64, bytes ? (bytes + 63) / 64 * 64 : 64)) return NULL;
  return p;
}

static int is_int8(dlconv_dtype t) { return t == DLCONV_U8 || t == DLCONV_S8; }

/* Values in the reference's domain; for f16 already rounded to what f16 can hold. */
static void fill_ref(float *p, size_t count, float scale, dlconv_dtype t, int int_lo, int int_hi, rng *r) {
  for (size_t i = 0; i < count; i++) {
    if (is_int8(t)) p[i] = (float)rng_int(r, int_lo, int_hi);
    else if (t == DLCONV_F16) p[i] = bench_f16_to_f32(bench_f32_to_f16(scale * rng_sym(r)));
    else p[i] = scale * rng_sym(r);
  }
}

/* Zeroes a fraction of the weights; returns how many stay nonzero. */
static size_t sparsify(float *w, size_t count, double sparsity, rng *r) {
  size_t nz = 0;
  uint32_t cut = (uint32_t)(sparsity * 4294967295.0);
  for (size_t i = 0; i < count; i++) {
    if (sparsity > 0 && rng_next(r) < cut) w[i] = 0;
    nz += w[i] != 0;
  }
  return nz;
}

/* One element of the library's input from its reference value. */
static void store(void *dst, size_t i, dlconv_dtype t, float v, int zero_point) {
  switch (t) {
  case DLCONV_F16: ((uint16_t *)dst)[i] = bench_f32_to_f16(v); break;
  case DLCONV_U8: ((uint8_t *)dst)[i] = (uint8_t)((int)v + zero_point); break;
  case DLCONV_S8: ((int8_t *)dst)[i] = (int8_t)((int)v + zero_point); break;
  default: ((float *)dst)[i] = v; break;
  }
}

static void *typed_copy(const float *src, size_t count, dlconv_dtype t) {
  void *dst = bench_alloc(count * bench_dtype_size(t));
  if (dst)
    for (size_t i = 0; i < count; i++) store(dst, i, t, src[i], 0);
  return dst;
}

static void *user_input(const bench_layer *l, const bench_data *d) {
  if (d->dtype == DLCONV_F32 && d->layout == DLCONV_NCHW) return d->x_ref;
  void *x = bench_alloc(bench_x_count(l) * bench_dtype_size(d->dtype));
  if (!x) return NULL;
  size_t s = 0;
  for (int n = 0; n < l->n; n++)
    for (int c = 0; c < l->c_in; c++)
      for (int h = 0; h < l->h_in; h++)
        for (int w = 0; w < l->w_in; w++, s++)
          store(x, bench_index(d->layout, l->c_in, l->h_in, l->w_in, n, c, h, w), d->dtype, d->x_ref[s],
                d->quant.x_zero_point);
  return x;
}

/* Scales that keep int8 outputs spread over the range: the accumulator of K products of
   uniform 8-bit values has a standard deviation near 74 x 74 x sqrt(K x density). */
static void set_quant(bench_data *d, const bench_layer *l) {
  double acc_sd = 74.0 * 74.0 * sqrt((double)bench_reduction(l) * (d->density > 0 ? d->density : 1e-3));
  d->w_scale = 1.0f / 128;
  d->quant.x_scale = 1.0f / 64;
  d->quant.x_zero_point = d->dtype == DLCONV_U8 ? 128 : 0;
  d->quant.w_scales = &d->w_scale;
  d->quant.n_w_scales = 1;
  d->quant.y_scale = (float)(4.0 * acc_sd * d->quant.x_scale * d->w_scale / 127.0);
  d->quant.y_zero_point = d->dtype == DLCONV_U8 ? 128 : 0;
}

static void fill_bias(bench_data *d, const bench_layer *l, rng *r) {
  if (!is_int8(d->dtype)) {
    fill_ref(d->b_ref, (size_t)l->c_out, 0.1f, d->dtype, 0, 0, r);
    return;
  }
  int span = (int)(0.5 * d->quant.y_scale / (d->quant.x_scale * d->w_scale) * 127.0 / 4.0);
  fill_ref(d->b_ref, (size_t)l->c_out, 0, d->dtype, -span, span, r);
}

static int make(bench_data *d, const bench_layer *l, double sparsity, rng *r) {
  size_t xc = bench_x_count(l), wc = bench_w_count(l);
  d->x_ref = bench_alloc(xc * sizeof(float));
  d->w_ref = bench_alloc(wc * sizeof(float));
  if (l->bias) d->b_ref = bench_alloc((size_t)l->c_out * sizeof(float));
  if (!d->x_ref || !d->w_ref || (l->bias && !d->b_ref)) return -1;
  fill_ref(d->x_ref, xc, 1.0f, d->dtype, -128, 127, r);
  fill_ref(d->w_ref, wc, 1.0f / sqrtf((float)bench_reduction(l)), d->dtype, -127, 127, r);
  d->density = (double)sparsify(d->w_ref, wc, sparsity, r) / (double)wc;
  if (is_int8(d->dtype)) set_quant(d, l);
  if (l->bias) fill_bias(d, l, r);

  d->x = user_input(l, d);
  d->w = d->dtype == DLCONV_F32 ? d->w_ref : typed_copy(d->w_ref, wc, is_int8(d->dtype) ? DLCONV_S8 : d->dtype);
  if (l->bias) {
    dlconv_dtype bt = is_int8(d->dtype) ? DLCONV_S32 : d->dtype;
    d->b = bt == DLCONV_F32 ? (void *)d->b_ref : NULL;
    if (bt == DLCONV_S32 && (d->b = bench_alloc((size_t)l->c_out * 4)))
      for (int i = 0; i < l->c_out; i++) ((int32_t *)d->b)[i] = (int32_t)d->b_ref[i];
    if (bt == DLCONV_F16) d->b = typed_copy(d->b_ref, (size_t)l->c_out, bt);
  }
  d->y_bytes = bench_y_count(l) * bench_dtype_size(d->dtype);
  return d->x && d->w && (!l->bias || d->b) ? 0 : -1;
}

int bench_data_make(bench_data *d, const bench_layer *l, dlconv_dtype dtype, dlconv_layout layout,
                    double sparsity, uint64_t seed) {
  memset(d, 0, sizeof *d);
  d->dtype = dtype;
  d->layout = layout;
  rng r = {seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull};
  if (make(d, l, sparsity, &r)) {
    bench_data_free(d);
    return -1;
  }
  return 0;
}

void bench_data_free(bench_data *d) {
  if (d->x != d->x_ref) free(d->x);
  if (d->w != d->w_ref) free(d->w);
  if (d->b != d->b_ref) free(d->b);
  free(d->x_ref);
  free(d->w_ref);
  free(d->b_ref);
  memset(d, 0, sizeof *d);
}
