/* gemv_f16.c - F16 dense layers with few rows (batch <= 8) on the F16 gemm family's gemv,
 * ISA-independent driver: an entry of im2col + GEMM ahead of gemm_lowp.c in the implementation list.
 *
 * A dense layer at batch 1 is a matrix-vector product: every weight is used once, so its time
 * is the time to stream the weights, and binary16 weights are half the stream of fp32 ones only
 * if nothing widens them on the way: the GEMM path widens each A panel into a buffer and spends a
 * register tile on one column of x. Here the weights stay binary16 in panels of gemv_mr output
 * channels (k-major), widened in registers, and x (a few rows) is widened once per call.
 *
 * Threads: the panels are split into contiguous ranges, one per task; each task widens x into
 * its slice, then runs its panels and stores each panel's outputs (bias, clamp, binary16
 * rounding: the family's store) while they are in cache. */
#include <stdio.h>
#include <string.h>

#include "../ukernel/config.h"
#include "../core/plan.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "../quant/quant.h"
#include "gemm.h"

#define GEMV_MAX_ROWS 8 /* beyond, the GEMM's register tile pays for its packing */

typedef struct gemv_f16_data {
  size_t K, mr, panels, ntasks;
  uint16_t *wpack; /* panels x K x mr */
  size_t xf_bytes, ws_slice;
} gemv_f16_data;

int dlc_gemv_f16_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k) {
  const dlc_f16_gemm_family *f = k ? k->f16_gemm : NULL;
  return dtype == DLCONV_F16 && f && f->gemv && s->layout == DLCONV_NHWC && s->groups == 1 && s->h_in == 1 &&
         s->w_in == 1 && s->k_h == 1 && s->k_w == 1 && s->h_out == 1 && s->w_out == 1 && s->n <= GEMV_MAX_ROWS;
}

static void gemv_f16_destroy(dlconv_plan *p) {
  gemv_f16_data *d = p->algo_data;
  if (!d) return;
  dlc_free(d->wpack);
  dlc_free(d);
}

static dlconv_status gemv_f16_plan(dlconv_plan *p, const void *w) {
  const dlc_conv_shape *s = &p->s;
  const dlc_f16_gemm_family *f = p->kernels->f16_gemm;
  gemv_f16_data *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning im2col_gemm");
  const size_t co = (size_t)s->c_out;
  d->K = (size_t)s->c_in;
  d->mr = f->gemv_mr;
  d->panels = dlc_div_up(co, d->mr);
  const size_t panel = d->K * d->mr;
  d->wpack = dlc_calloc(d->panels * panel * sizeof(uint16_t)); /* rows past c_out: +0 */
  if (!d->wpack) {
    dlc_free(d);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory packing im2col_gemm weights");
  }
  for (size_t oc = 0; oc < co; oc++) {
    uint16_t *dst = d->wpack + oc / d->mr * panel + oc % d->mr;
    const uint16_t *row = (const uint16_t *)w + oc * d->K;
    for (size_t k = 0; k < d->K; k++) dst[k * d->mr] = row[k];
  }
  d->ntasks = DLC_MIN((size_t)p->nthreads, d->panels);
  d->xf_bytes = dlc_round_up((size_t)s->n * d->K * sizeof(float), DLC_ALIGN);
  d->ws_slice = d->xf_bytes + dlc_round_up((size_t)s->n * d->mr * sizeof(float), DLC_ALIGN);
  p->algo_data = d;
  p->packed_weight_bytes = d->panels * panel * sizeof(uint16_t);
  p->workspace_bytes = d->ntasks * d->ws_slice;
  snprintf(p->kernel, sizeof p->kernel, "%s", f->gemv_name);
  return DLCONV_OK;
}

static void gemv_f16_task(void *arg, size_t t) {
  const dlc_exec *c = arg;
  const dlconv_plan *p = c->p;
  const gemv_f16_data *d = p->algo_data;
  const uint16_t *x = c->x;
  uint16_t *y = c->y;
  const dlc_f16_gemm_family *f = p->kernels->f16_gemm;
  const size_t n = (size_t)p->s.n, co = (size_t)p->s.c_out;
  float *xf = (float *)(c->ws + t * d->ws_slice);
  float *acc = (float *)(c->ws + t * d->ws_slice + d->xf_bytes);
  if (f->widen_run)
    f->widen_run(n * d->K, x, 1, xf);
  else
    for (size_t i = 0; i < n * d->K; i++) xf[i] = dlc_f16_to_f32(x[i]);
  size_t begin, end;
  dlc_split_range(d->panels, d->ntasks, t, &begin, &end);
  for (size_t pn = begin; pn < end; pn++) {
    const size_t oc0 = pn * d->mr, m = DLC_MIN(d->mr, co - oc0);
    const uint16_t *a = d->wpack + pn * d->K * d->mr;
    for (size_t r0 = 0; r0 < n; r0 += 4)
      f->gemv(m, DLC_MIN(4, n - r0), d->K, a, xf + r0 * d->K, d->K, acc + r0 * d->mr, d->mr);
    for (size_t r = 0; r < n; r++)
      f->store(m, acc + r * d->mr, p->bias, oc0, 1, p->s.out_min, p->s.out_max, y + r * co + oc0);
  }
}

static void gemv_f16_execute(const dlconv_plan *p, const void *x, void *y, void *workspace) {
  const gemv_f16_data *d = p->algo_data;
  dlc_exec_tasks(p, d->ntasks, gemv_f16_task, x, y, workspace);
}

const dlc_impl_ops dlc_gemv_f16_ops = {
    .plan = gemv_f16_plan,
    .execute = gemv_f16_execute,
    .destroy = gemv_f16_destroy,
};
