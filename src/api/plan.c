/* Planning entry points: validate, build the plan (threads, bias, quantisation), have choose.c
   pick the ISA and implementation that packs the weights, and say what was decided
   (DLCONV_VERBOSE). Plans are immutable afterwards. */
#include "../core/plan.h"

#include <stdio.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/env.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "choose.h"
#include "impl_list.h"
#include "names.h"
#include "validate.h"
#include "verify.h"
#include "weights.h"

void dlconv_plan_destroy(dlconv_plan *p) {
  if (!p) return;
  dlc_impl_release(p);
  dlc_free(p->verify_w);
  dlc_free(p->bias);
  dlc_free(p->q8.mult);
  dlc_free(p->q8_mult_f);
  dlc_free(p->q8.bias);
  dlc_free(p);
}

static void print_plan(const dlconv_plan *p, double ms) {
  const dlc_conv_shape *s = &p->s;
  fprintf(stderr,
          "dlconv: plan n=%lld c_in=%lld %lldx%lld c_out=%lld k=%lldx%lld s=%lldx%lld d=%lldx%lld "
          "pad=%lld,%lld,%lld,%lld g=%lld dtype=%s layout=%s algo=%s isa=%s kernel=%s threads=%d packed=%zuB ws=%zuB "
          "density=%.3f plan_ms=%.3f\n",
          (long long)s->n, (long long)s->c_in, (long long)s->h_in, (long long)s->w_in, (long long)s->c_out,
          (long long)s->k_h, (long long)s->k_w, (long long)s->stride_h, (long long)s->stride_w, (long long)s->dil_h,
          (long long)s->dil_w, (long long)s->pad_t, (long long)s->pad_b, (long long)s->pad_l, (long long)s->pad_r,
          (long long)s->groups, dlc_dtype_name(p->dtype), dlc_layout_name(s->layout), dlc_algo_name(p->algo), dlc_isa_name(p->isa),
          p->kernel, p->nthreads, p->packed_weight_bytes, p->workspace_bytes, p->weight_density, ms);
}

/* A planning entry point's result: under DLCONV_VERBOSE, a failure says so on stderr (what
   dlconv_status_string and dlconv_last_error would tell the caller). */
static dlconv_status plan_result(const char *entry, dlconv_status st) {
  if (st != DLCONV_OK && dlc_env()->verbose >= 1)
    fprintf(stderr, "dlconv: %s failed: %s: %s\n", entry, dlconv_status_string(st), dlconv_last_error());
  return st;
}

static int misaligned(const void *ptr, size_t align) { return ptr && ((uintptr_t)ptr % align) != 0; }

/* int8: the plan's own copy of q and the s32 bias, per channel (quant.h). */
static dlconv_status copy_quant(dlconv_plan *p, const dlconv_quant *q, const void *bias) {
  const int64_t co = p->s.c_out;
  dlc_q8_params *r = &p->q8;
  r->mult = dlc_malloc((size_t)co * sizeof(double));
  r->bias = dlc_calloc((size_t)co * sizeof(int32_t));
  p->q8_mult_f = dlc_malloc((size_t)co * sizeof(float));
  if (!r->mult || !r->bias || !p->q8_mult_f)
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory copying the quantisation");
  r->x_zero_point = q->x_zero_point;
  r->y_zero_point = q->y_zero_point;
  r->is_signed = p->dtype == DLCONV_S8;
  r->y_min = r->is_signed ? -128 : 0;
  r->y_max = r->is_signed ? 127 : 255;
  r->lo = (double)p->s.out_min / (double)q->y_scale;
  r->hi = (double)p->s.out_max / (double)q->y_scale;
  for (int64_t c = 0; c < co; c++)
    r->mult[c] = (double)q->x_scale * (double)q->w_scales[q->n_w_scales == 1 ? 0 : c] / (double)q->y_scale;
  if (bias) memcpy(r->bias, bias, (size_t)co * sizeof(int32_t));
  dlc_q8_derive(r, p->s.cin_g * p->s.k_h * p->s.k_w * 255 * 128, (size_t)co, p->q8_mult_f);
  return DLCONV_OK;
}

/* Shared by every planning entry point: the descriptor is validated, w is dense or csr. */
static dlconv_status plan_validated(dlconv_plan **out, const dlc_conv_shape *s, dlconv_dtype dtype, const void *dense,
                                    const dlconv_csr *csr, const void *bias, const dlconv_quant *q,
                                    const dlconv_options *opt) {
  dlconv_status st = dlc_validate_options(opt);
  if (st) return st;
  if ((st = dlc_validate_quant(q, dtype, s->c_out))) return st;
  size_t es = dlc_dtype_size(dtype == DLCONV_U8 || dtype == DLCONV_S8 ? DLCONV_S32 : dtype);
  if (misaligned(bias, es)) return dlc_fail(DLCONV_ERR_INVALID_ARG, "bias is not aligned to its element size %zu", es);
  if (dense && misaligned(dense, dlc_weight_elem_size(dtype)))
    return dlc_fail(DLCONV_ERR_INVALID_ARG, "w is not aligned to its element size");
  if (csr && csr->nnz > 0 && misaligned(csr->values, dlc_weight_elem_size(dtype)))
    return dlc_fail(DLCONV_ERR_INVALID_ARG, "csr->values is not aligned to its element size");
  if (csr && (st = dlc_validate_csr(csr, s))) return st;

  dlconv_options defaults;
  if (!opt) {
    dlconv_options_init(&defaults);
    opt = &defaults;
  }
  double t0 = dlc_now_s();
  dlconv_plan *p = dlc_calloc(sizeof *p);
  if (!p) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory allocating the plan");
  p->s = *s;
  p->dtype = dtype;
  p->macs = s->n * s->c_out * s->h_out * s->w_out * s->cin_g * s->k_h * s->k_w;
  p->parallel_for = opt->parallel_for;
  p->pool = opt->pool;
  p->cuda_stream = opt->cuda_stream;
  p->nthreads = opt->num_threads > 0 ? opt->num_threads : dlc_default_threads();
#if !defined(DLC_HAVE_OPENMP)
  if (!p->parallel_for) p->nthreads = 1; /* no way to run tasks concurrently: do not split work */
#endif
  p->bias = dlc_calloc((size_t)s->c_out * sizeof(float));
  if (!p->bias) {
    dlc_free(p);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory copying the bias");
  }
  if (bias && dtype == DLCONV_F32) memcpy(p->bias, bias, (size_t)s->c_out * sizeof(float));
  if (bias && dtype == DLCONV_F16)
    for (int64_t c = 0; c < s->c_out; c++) p->bias[c] = dlc_f16_to_f32(((const uint16_t *)bias)[c]);
  p->has_bias = bias != NULL;
  if (q && (st = copy_quant(p, q, bias)) != DLCONV_OK) {
    dlconv_plan_destroy(p);
    return st;
  }

  dlc_weights w = {dense, NULL, csr};
  if (csr && dtype != DLCONV_F32) {
    w.dense = w.owned = dlc_densify(csr, s, dlc_weight_elem_size(dtype));
    w.csr = NULL;
    if (!w.dense) {
      dlconv_plan_destroy(p);
      return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory densifying csr weights");
    }
  }
  st = dlc_choose_and_plan(p, opt, &w);
  if (st == DLCONV_OK && dlc_env()->verify) {
    if (!w.dense) w.dense = w.owned = dlc_densify(csr, s, dlc_weight_elem_size(dtype));
    st = w.dense ? dlc_verify_keep_weights(p, w.dense)
                 : dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory densifying csr weights");
  }
  dlc_free(w.owned);
  if (st != DLCONV_OK) {
    dlconv_plan_destroy(p);
    return st;
  }
  if (dlc_env()->verbose >= 1) print_plan(p, (dlc_now_s() - t0) * 1e3);
  *out = p;
  return DLCONV_OK;
}

static dlconv_status plan_conv2d(dlconv_plan **plan, const dlconv_conv2d_desc *d, const void *w, const void *bias,
                                 const dlconv_quant *q, const dlconv_options *opt) {
  if (!plan) return dlc_fail(DLCONV_ERR_INVALID_ARG, "plan (output pointer) is NULL");
  *plan = NULL;
  dlc_conv_shape s;
  dlconv_status st = dlc_validate_desc(d, &s);
  if (st) return st;
  if (!w) return dlc_fail(DLCONV_ERR_INVALID_ARG, "w is NULL");
  return plan_validated(plan, &s, d->dtype, w, NULL, bias, q, opt);
}

dlconv_status dlconv_plan_conv2d(dlconv_plan **plan, const dlconv_conv2d_desc *d, const void *w, const void *bias,
                                 const dlconv_quant *q, const dlconv_options *opt) {
  return plan_result("plan_conv2d", plan_conv2d(plan, d, w, bias, q, opt));
}

static dlconv_status plan_conv2d_csr(dlconv_plan **plan, const dlconv_conv2d_desc *d, const dlconv_csr *w,
                                     const void *bias, const dlconv_quant *q, const dlconv_options *opt) {
  if (!plan) return dlc_fail(DLCONV_ERR_INVALID_ARG, "plan (output pointer) is NULL");
  *plan = NULL;
  dlc_conv_shape s;
  dlconv_status st = dlc_validate_desc(d, &s);
  if (st) return st;
  if (!w) return dlc_fail(DLCONV_ERR_INVALID_ARG, "csr weights are NULL");
  return plan_validated(plan, &s, d->dtype, NULL, w, bias, q, opt);
}

dlconv_status dlconv_plan_conv2d_csr(dlconv_plan **plan, const dlconv_conv2d_desc *d, const dlconv_csr *w,
                                     const void *bias, const dlconv_quant *q, const dlconv_options *opt) {
  return plan_result("plan_conv2d_csr", plan_conv2d_csr(plan, d, w, bias, q, opt));
}

/* A dense layer is a 1x1 NHWC convolution over n = batch images of 1x1 pixels: every
   algorithm then serves it, and W (out x in, row-major) is already OIHW. */
static dlconv_status dense_desc(dlconv_conv2d_desc *d, int32_t batch, int32_t in, int32_t out, dlconv_dtype dtype,
                                float out_min, float out_max) {
  if (batch < 1) return dlc_fail(DLCONV_ERR_INVALID_ARG, "batch = %d, must be >= 1", batch);
  if (in < 1) return dlc_fail(DLCONV_ERR_INVALID_ARG, "in_features = %d, must be >= 1", in);
  if (out < 1) return dlc_fail(DLCONV_ERR_INVALID_ARG, "out_features = %d, must be >= 1", out);
  dlconv_conv2d_desc_init(d, batch, in, 1, 1, out, 1, 1);
  d->dtype = dtype;
  d->layout = DLCONV_NHWC;
  d->out_min = out_min;
  d->out_max = out_max;
  return DLCONV_OK;
}

static dlconv_status plan_dense(dlconv_plan **plan, int32_t batch, int32_t in_features, int32_t out_features,
                                dlconv_dtype dtype, const void *w, const void *bias, float out_min, float out_max,
                                const dlconv_quant *q, const dlconv_options *opt) {
  if (!plan) return dlc_fail(DLCONV_ERR_INVALID_ARG, "plan (output pointer) is NULL");
  *plan = NULL;
  dlconv_conv2d_desc d;
  dlconv_status st = dense_desc(&d, batch, in_features, out_features, dtype, out_min, out_max);
  if (st) return st;
  return plan_conv2d(plan, &d, w, bias, q, opt);
}

dlconv_status dlconv_plan_dense(dlconv_plan **plan, int32_t batch, int32_t in_features, int32_t out_features,
                                dlconv_dtype dtype, const void *w, const void *bias, float out_min, float out_max,
                                const dlconv_quant *q, const dlconv_options *opt) {
  return plan_result("plan_dense", plan_dense(plan, batch, in_features, out_features, dtype, w, bias, out_min, out_max,
                                              q, opt));
}

dlconv_status dlconv_conv2d(const dlconv_conv2d_desc *d, const void *x, const void *w, const void *bias, void *y,
                            const dlconv_quant *q, const dlconv_options *opt) {
  dlconv_plan *p;
  if (!x) return dlc_fail(DLCONV_ERR_INVALID_ARG, "x is NULL");
  if (!y) return dlc_fail(DLCONV_ERR_INVALID_ARG, "y is NULL");
  dlconv_status st = dlconv_plan_conv2d(&p, d, w, bias, q, opt);
  if (st) return st;
  st = dlconv_execute(p, x, y, NULL);
  dlconv_plan_destroy(p);
  return st;
}

dlconv_status dlconv_dense(int32_t batch, int32_t in_features, int32_t out_features, dlconv_dtype dtype, const void *x,
                           const void *w, const void *bias, void *y, float out_min, float out_max,
                           const dlconv_quant *q, const dlconv_options *opt) {
  dlconv_plan *p;
  if (!x) return dlc_fail(DLCONV_ERR_INVALID_ARG, "x is NULL");
  if (!y) return dlc_fail(DLCONV_ERR_INVALID_ARG, "y is NULL");
  dlconv_status st = dlconv_plan_dense(&p, batch, in_features, out_features, dtype, w, bias, out_min, out_max, q, opt);
  if (st) return st;
  st = dlconv_execute(p, x, y, NULL);
  dlconv_plan_destroy(p);
  return st;
}
