/* Argument validation: a precise message for every rejected field. */
#include "validate.h"

#include <math.h>
#include <stdint.h>

#include "../core/util.h"

#define BAD(...) dlc_fail(DLCONV_ERR_INVALID_ARG, __VA_ARGS__)

size_t dlc_dtype_size(dlconv_dtype t) {
  switch (t) {
    case DLCONV_F32: case DLCONV_S32: return 4;
    case DLCONV_F16: return 2;
    case DLCONV_U8: case DLCONV_S8: return 1;
    default: return 0;
  }
}

size_t dlc_x_elems(const dlc_conv_shape *s) { return (size_t)(s->n * s->c_in * s->h_in * s->w_in); }
size_t dlc_w_elems(const dlc_conv_shape *s) { return (size_t)(s->c_out * s->cin_g * s->k_h * s->k_w); }
size_t dlc_y_elems(const dlc_conv_shape *s) { return (size_t)(s->n * s->c_out * s->h_out * s->w_out); }

/* a*b*c*d*elsize without overflowing; 0 on overflow (every factor is >= 1 here). */
static size_t bytes_of(int64_t a, int64_t b, int64_t c, int64_t d, size_t elsize) {
  size_t r = elsize;
  int64_t f[4] = {a, b, c, d};
  for (int i = 0; i < 4; i++)
    if (__builtin_mul_overflow(r, (size_t)f[i], &r)) return 0;
  /* the drivers index with signed 64-bit arithmetic, so stay below PTRDIFF_MAX too */
  return r > (size_t)PTRDIFF_MAX ? 0 : r;
}

dlconv_status dlc_validate_clamp(float out_min, float out_max) {
  if (isnan(out_min) || isnan(out_max)) return BAD("clamp bound is NaN (out_min=%g, out_max=%g)", out_min, out_max);
  if (out_min > out_max) return BAD("out_min (%g) > out_max (%g)", out_min, out_max);
  return DLCONV_OK;
}

dlconv_status dlc_validate_desc(const dlconv_conv2d_desc *d, dlc_conv_shape *s) {
  if (!d) return BAD("desc is NULL");
  const struct { const char *name; int32_t v; int32_t min; } f[] = {
      {"n", d->n, 1},          {"c_in", d->c_in, 1},         {"h_in", d->h_in, 1},
      {"w_in", d->w_in, 1},    {"c_out", d->c_out, 1},       {"k_h", d->k_h, 1},
      {"k_w", d->k_w, 1},      {"stride_h", d->stride_h, 1}, {"stride_w", d->stride_w, 1},
      {"dilation_h", d->dilation_h, 1}, {"dilation_w", d->dilation_w, 1},
      {"pad_top", d->pad_top, 0}, {"pad_bottom", d->pad_bottom, 0},
      {"pad_left", d->pad_left, 0}, {"pad_right", d->pad_right, 0}, {"groups", d->groups, 1},
  };
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
    if (f[i].v < f[i].min) return BAD("desc->%s = %d, must be >= %d", f[i].name, f[i].v, f[i].min);
  if ((unsigned)d->dtype > DLCONV_S8) return BAD("desc->dtype = %d is not F32, F16, U8 or S8", (int)d->dtype);
  if ((unsigned)d->layout > DLCONV_NHWC) return BAD("desc->layout = %d is not NCHW or NHWC", (int)d->layout);
  if (d->c_in % d->groups) return BAD("desc->groups = %d does not divide c_in = %d", d->groups, d->c_in);
  if (d->c_out % d->groups) return BAD("desc->groups = %d does not divide c_out = %d", d->groups, d->c_out);
  dlconv_status st = dlc_validate_clamp(d->out_min, d->out_max);
  if (st) return st;

  dlc_conv_shape t;
  t.n = d->n; t.c_in = d->c_in; t.h_in = d->h_in; t.w_in = d->w_in;
  t.c_out = d->c_out; t.k_h = d->k_h; t.k_w = d->k_w;
  t.stride_h = d->stride_h; t.stride_w = d->stride_w; t.dil_h = d->dilation_h; t.dil_w = d->dilation_w;
  t.pad_t = d->pad_top; t.pad_b = d->pad_bottom; t.pad_l = d->pad_left; t.pad_r = d->pad_right;
  t.groups = d->groups; t.cin_g = d->c_in / d->groups; t.cout_g = d->c_out / d->groups;
  t.layout = d->layout; t.out_min = d->out_min; t.out_max = d->out_max;
  int64_t span_h = t.dil_h * (t.k_h - 1) + 1, span_w = t.dil_w * (t.k_w - 1) + 1;
  int64_t room_h = t.h_in + t.pad_t + t.pad_b - span_h, room_w = t.w_in + t.pad_l + t.pad_r - span_w;
  if (room_h < 0)
    return BAD("output height < 1: h_in %d + pads %d+%d smaller than the dilated kernel %lld", d->h_in,
               d->pad_top, d->pad_bottom, (long long)span_h);
  if (room_w < 0)
    return BAD("output width < 1: w_in %d + pads %d+%d smaller than the dilated kernel %lld", d->w_in,
               d->pad_left, d->pad_right, (long long)span_w);
  t.h_out = room_h / t.stride_h + 1;
  t.w_out = room_w / t.stride_w + 1;
  if (t.h_out > INT32_MAX || t.w_out > INT32_MAX)
    return BAD("output size %lldx%lld exceeds INT32_MAX", (long long)t.h_out, (long long)t.w_out);
  size_t es = dlc_dtype_size(d->dtype);
  if (!bytes_of(t.n, t.c_in, t.h_in, t.w_in, es))
    return BAD("x byte count overflows (n=%d c_in=%d h_in=%d w_in=%d)", d->n, d->c_in, d->h_in, d->w_in);
  if (!bytes_of(t.c_out, t.cin_g, t.k_h, t.k_w, 4))
    return BAD("w byte count overflows (c_out=%d c_in/groups=%lld k=%dx%d)", d->c_out, (long long)t.cin_g, d->k_h, d->k_w);
  if (!bytes_of(t.n, t.c_out, t.h_out, t.w_out, 4))
    return BAD("y byte count overflows (n=%d c_out=%d h_out=%lld w_out=%lld)", d->n, d->c_out, (long long)t.h_out,
               (long long)t.w_out);
  /* dlconv_plan_info.macs is an int64_t: a layer with more multiply-accumulates cannot be described */
  int64_t macs;
  if (__builtin_mul_overflow(t.n * t.c_out * t.h_out * t.w_out, t.cin_g * t.k_h * t.k_w, &macs))
    return BAD("multiply-accumulate count overflows int64 (y elements %lld x reduction %lld)",
               (long long)(t.n * t.c_out * t.h_out * t.w_out), (long long)(t.cin_g * t.k_h * t.k_w));
  if (s) *s = t;
  return DLCONV_OK;
}

dlconv_status dlc_validate_options(const dlconv_options *o) {
  if (!o) return DLCONV_OK;
  if ((unsigned)o->algo > DLCONV_ALGO_SPARSE_CSR) return BAD("options->algo = %d is not a dlconv_algo", (int)o->algo);
  if ((unsigned)o->isa > DLCONV_ISA_CUDA) return BAD("options->isa = %d is not a dlconv_isa", (int)o->isa);
  if (o->num_threads < 0) return BAD("options->num_threads = %d, must be >= 0", o->num_threads);
  if (o->flags & ~(uint32_t)DLCONV_PLAN_MEASURE) return BAD("options->flags = 0x%x has unknown bits", o->flags);
  return DLCONV_OK;
}

static int zero_point_ok(int32_t zp, dlconv_dtype t) {
  return t == DLCONV_U8 ? (zp >= 0 && zp <= 255) : (zp >= -128 && zp <= 127);
}
static int scale_ok(float s) { return isfinite(s) && s > 0; }

dlconv_status dlc_validate_quant(const dlconv_quant *q, dlconv_dtype dtype, int64_t c_out) {
  int quantised = dtype == DLCONV_U8 || dtype == DLCONV_S8;
  if (!quantised) return q ? BAD("q must be NULL for a floating-point dtype") : DLCONV_OK;
  if (!q) return BAD("q is NULL but dtype is %s", dtype == DLCONV_U8 ? "U8" : "S8");
  if (!scale_ok(q->x_scale)) return BAD("q->x_scale = %g, must be finite and > 0", q->x_scale);
  if (!scale_ok(q->y_scale)) return BAD("q->y_scale = %g, must be finite and > 0", q->y_scale);
  if (!zero_point_ok(q->x_zero_point, dtype)) return BAD("q->x_zero_point = %d out of range of x's type", q->x_zero_point);
  if (!zero_point_ok(q->y_zero_point, dtype)) return BAD("q->y_zero_point = %d out of range of y's type", q->y_zero_point);
  if (q->n_w_scales != 1 && q->n_w_scales != c_out)
    return BAD("q->n_w_scales = %d, must be 1 or c_out = %lld", q->n_w_scales, (long long)c_out);
  if (!q->w_scales) return BAD("q->w_scales is NULL");
  for (int32_t i = 0; i < q->n_w_scales; i++)
    if (!scale_ok(q->w_scales[i])) return BAD("q->w_scales[%d] = %g, must be finite and > 0", i, q->w_scales[i]);
  return DLCONV_OK;
}

dlconv_status dlc_validate_csr(const dlconv_csr *c, const dlc_conv_shape *s) {
  if (!c) return BAD("csr weights are NULL");
  int64_t cols = s->cin_g * s->k_h * s->k_w;
  if (c->rows != s->c_out) return BAD("csr->rows = %d, must be c_out = %lld", c->rows, (long long)s->c_out);
  if (c->cols != cols) return BAD("csr->cols = %d, must be (c_in/groups)*k_h*k_w = %lld", c->cols, (long long)cols);
  if (c->nnz < 0) return BAD("csr->nnz = %d is negative", c->nnz);
  if (c->nnz > cols * (int64_t)c->rows) return BAD("csr->nnz = %d exceeds rows*cols", c->nnz);
  if (!c->row_ptr) return BAD("csr->row_ptr is NULL");
  if (c->nnz > 0 && (!c->values || !c->col_indices)) return BAD("csr->values or csr->col_indices is NULL");
  if ((uintptr_t)c->row_ptr % sizeof(int32_t) || (c->nnz > 0 && (uintptr_t)c->col_indices % sizeof(int32_t)))
    return BAD("csr->row_ptr or csr->col_indices is not aligned to 4 bytes");
  if (c->row_ptr[0] != 0) return BAD("csr->row_ptr[0] = %d, must be 0", c->row_ptr[0]);
  for (int32_t r = 0; r < c->rows; r++)
    if (c->row_ptr[r + 1] < c->row_ptr[r])
      return BAD("csr->row_ptr decreases at row %d (%d -> %d)", r, c->row_ptr[r], c->row_ptr[r + 1]);
  if (c->row_ptr[c->rows] != c->nnz) return BAD("csr->row_ptr[rows] = %d, must be nnz = %d", c->row_ptr[c->rows], c->nnz);
  /* range and uniqueness per row: a bitmap of the row's columns */
  uint8_t *seen = dlc_calloc((size_t)cols);
  if (!seen) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory validating csr");
  dlconv_status st = DLCONV_OK;
  for (int32_t r = 0; r < c->rows && !st; r++) {
    for (int32_t i = c->row_ptr[r]; i < c->row_ptr[r + 1]; i++) {
      int32_t col = c->col_indices[i];
      if (col < 0 || col >= cols) { st = BAD("csr->col_indices[%d] = %d out of range [0, %lld) in row %d", i, col, (long long)cols, r); break; }
      if (seen[col]) { st = BAD("csr column %d appears twice in row %d", col, r); break; }
      seen[col] = 1;
    }
    for (int32_t i = c->row_ptr[r]; i < c->row_ptr[r + 1]; i++) {
      int32_t col = c->col_indices[i];
      if (col >= 0 && col < cols) seen[col] = 0;
    }
  }
  dlc_free(seen);
  return st;
}
