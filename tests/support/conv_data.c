/* One layer's test data (conv_data.h). */
#include "conv_data.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "csr_build.h"
#include "oracle.h"

/* rng_int(r, 0, m - 1): the draw build_csr always made */
static uint32_t rng_below(void *r, uint32_t m) { return (uint32_t)rng_int(r, 0, (int)m - 1); }

void build_csr(conv_data *cd, rng_t *r) {
  const int32_t rows = cd->d.c_out;
  const int32_t cols = (int32_t)(cd->w_len / (size_t)rows);
  cd->csr_rowptr = xmalloc(sizeof(int32_t) * (size_t)(rows + 1));
  cd->csr_cols = xmalloc(sizeof(int32_t) * (cd->nnz + 1));
  cd->csr_vals = xmalloc(sizeof(float) * (cd->nnz + 1));
  const int32_t k =
      csr_from_dense(cd->w, rows, cols, 0, cd->csr_rowptr, cd->csr_cols, cd->csr_vals, &cd->csr, rng_below, r);
  cd->csr_vals0 = dup_floats(cd->csr_vals, (size_t)k);
  cd->csr_cols0 = xmalloc(sizeof(int32_t) * (size_t)(k + 1));
  memcpy(cd->csr_cols0, cd->csr_cols, sizeof(int32_t) * (size_t)k);
  cd->csr_rowptr0 = xmalloc(sizeof(int32_t) * (size_t)(rows + 1));
  memcpy(cd->csr_rowptr0, cd->csr_rowptr, sizeof(int32_t) * (size_t)(rows + 1));
}

void cd_init(conv_data *cd, case_kind kind, const dlconv_conv2d_desc *d, rng_t *r, const data_opts *o) {
  memset(cd, 0, sizeof *cd);
  cd->kind = kind;
  cd->d = *d;
  cd->h_out = oracle_out_dim(d->h_in, d->pad_top, d->pad_bottom, d->k_h, d->dilation_h, d->stride_h);
  cd->w_out = oracle_out_dim(d->w_in, d->pad_left, d->pad_right, d->k_w, d->dilation_w, d->stride_w);
  const size_t cin_g = (size_t)(d->c_in / d->groups);
  cd->K = cin_g * (size_t)d->k_h * (size_t)d->k_w;
  cd->x_len = (size_t)d->n * d->c_in * d->h_in * d->w_in;
  cd->w_len = (size_t)d->c_out * cd->K;
  cd->y_len = (size_t)d->n * d->c_out * (size_t)cd->h_out * (size_t)cd->w_out;
  if (o->fence) {
    canary_alloc_fenced(&cd->xb, cd->x_len * 4, o->fence);
    canary_alloc_fenced(&cd->wb, cd->w_len * 4, o->fence);
  } else {
    canary_alloc(&cd->xb, cd->x_len * 4, o->shift);
    canary_alloc(&cd->wb, cd->w_len * 4, o->shift);
  }
  cd->x = cd->xb.p;
  cd->w = cd->wb.p;
  for (size_t i = 0; i < cd->x_len; i++) cd->x[i] = rng_float(r, -1.0f, 1.0f);
  for (int32_t oc = 0; oc < d->c_out; oc++) {
    const int empty = o->empty_row_frac > 0 && rng_chance(r, o->empty_row_frac);
    for (size_t i = 0; i < cd->K; i++) {
      float v = rng_float(r, -1.0f, 1.0f);
      if (empty || (o->zero_frac > 0 && rng_chance(r, o->zero_frac)) || v == 0.0f)
        v = 0.0f;
      else
        cd->nnz++;
      cd->w[(size_t)oc * cd->K + i] = v;
    }
  }
  if (o->bias) {
    canary_alloc(&cd->bb, (size_t)d->c_out * 4, o->shift);
    cd->bias = cd->bb.p;
    for (int32_t i = 0; i < d->c_out; i++) cd->bias[i] = rng_float(r, -1.0f, 1.0f);
    cd->b0 = dup_floats(cd->bias, (size_t)d->c_out);
  }
  cd->x0 = dup_floats(cd->x, cd->x_len);
  cd->w0 = dup_floats(cd->w, cd->w_len);
  cd->ref = xmalloc(sizeof(double) * (cd->y_len + 1));
  cd->mag = xmalloc(sizeof(double) * (cd->y_len + 1));
  oracle_conv2d(&cd->d, cd->x, cd->w, cd->bias, cd->ref, cd->mag);
  if (kind == KIND_CSR) build_csr(cd, r);
}

const dlconv_conv2d_desc *cd_init_same3x3(conv_data *cd, case_kind kind, int32_t c_in, int32_t h, int32_t w,
                                          int32_t c_out, uint64_t seed, const data_opts *o) {
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 1, c_in, h, w, c_out, 3, 3);
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
  rng_t r = rng_seed(seed);
  cd_init(cd, kind, &d, &r, o);
  return &cd->d;
}

void cd_refresh(conv_data *cd) {
  memcpy(cd->x0, cd->x, cd->x_len * 4);
  memcpy(cd->w0, cd->w, cd->w_len * 4);
  if (cd->bias) memcpy(cd->b0, cd->bias, (size_t)cd->d.c_out * 4);
  oracle_conv2d(&cd->d, cd->x, cd->w, cd->bias, cd->ref, cd->mag);
}

void cd_free(conv_data *cd) {
  canary_free(&cd->xb);
  canary_free(&cd->wb);
  if (cd->bias) canary_free(&cd->bb);
  free(cd->x0);
  free(cd->w0);
  free(cd->b0);
  free(cd->ref);
  free(cd->mag);
  free(cd->csr_vals);
  free(cd->csr_cols);
  free(cd->csr_rowptr);
  free(cd->csr_vals0);
  free(cd->csr_cols0);
  free(cd->csr_rowptr0);
  memset(cd, 0, sizeof *cd);
}

void dense_desc(dlconv_conv2d_desc *d, int32_t batch, int32_t in_f, int32_t out_f, float out_min, float out_max) {
  dlconv_conv2d_desc_init(d, batch, in_f, 1, 1, out_f, 1, 1);
  d->out_min = out_min;
  d->out_max = out_max;
}

static void fmt_bound(char *b, size_t n, float v) {
  if (isinf(v))
    snprintf(b, n, "%sinf", v < 0 ? "-" : "");
  else
    snprintf(b, n, "%.9g", v);
}

const char *desc_str(const dlconv_conv2d_desc *d, char *buf, size_t n) {
  char lo[32], hi[32];
  fmt_bound(lo, sizeof lo, d->out_min);
  fmt_bound(hi, sizeof hi, d->out_max);
  snprintf(buf, n,
           "{n=%d c_in=%d h_in=%d w_in=%d c_out=%d k=%dx%d stride=%d,%d dil=%d,%d pad(t,b,l,r)=%d,%d,%d,%d "
           "groups=%d %s clamp=[%s,%s]}",
           d->n, d->c_in, d->h_in, d->w_in, d->c_out, d->k_h, d->k_w, d->stride_h, d->stride_w, d->dilation_h,
           d->dilation_w, d->pad_top, d->pad_bottom, d->pad_left, d->pad_right, d->groups,
           d->layout == DLCONV_NHWC ? "NHWC" : "NCHW", lo, hi);
  return buf;
}

size_t check_y(const conv_data *cd, const float *y, char *msg, size_t len) {
  const double scale = 2e-6 * sqrt((double)(cd->K ? cd->K : 1));
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < cd->y_len; i++) {
    const double r = cd->ref[i], v = (double)y[i], tol = scale * cd->mag[i] + 1e-30;
    int ok = isnan(r) ? isnan(v) : isinf(r) ? v == r : (!isnan(v) && fabs(v - r) <= tol);
    if (!ok) {
      if (!bad) first = i;
      bad++;
      double e = isnan(v) || isnan(r) ? INFINITY : fabs(v - r) / tol;
      if (e > worst) worst = e;
    }
  }
  if (bad && msg) {
    const dlconv_conv2d_desc *d = &cd->d;
    const size_t ho = (size_t)cd->h_out, wo = (size_t)cd->w_out, co = (size_t)d->c_out;
    const int nhwc = d->layout == DLCONV_NHWC;
    /* y's extents, fastest first: (c, w, h) in NHWC, (w, h, c) in NCHW; the batch last */
    const size_t ext[3] = {nhwc ? co : wo, nhwc ? wo : ho, nhwc ? ho : co};
    size_t at[3], i = first;
    for (int k = 0; k < 3; k++) at[k] = i % ext[k], i /= ext[k];
    const size_t b = i, c = nhwc ? at[0] : at[2], w = nhwc ? at[1] : at[0], h = nhwc ? at[2] : at[1];
    snprintf(msg, len, "%zu of %zu outputs wrong (worst %.3g x tol); first y[n=%zu,c=%zu,h=%zu,w=%zu] = %.9g, ref %.9g",
             bad, cd->y_len, worst, b, c, h, w, (double)y[first], cd->ref[first]);
  }
  return bad;
}
