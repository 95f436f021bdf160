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
#include "gemv_rows.h"

typedef struct gemv_f16_data {
  size_t K;
  dlc_gemv_split sp; /* panels of mr output channels over the tasks; x widened to floats */
  uint16_t *wpack;   /* panels x K x mr */
} gemv_f16_data;

int dlc_gemv_f16_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k) {
  const dlc_f16_gemm_family *f = k ? k->f16_gemm : NULL;
  return dtype == DLCONV_F16 && f && f->gemv && dlc_gemv_takes(s);
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
  d->sp = dlc_gemv_split_of(p, f->gemv_mr, d->K * sizeof(float));
  const size_t mr = d->sp.mr, panel = d->K * mr;
  d->wpack = dlc_calloc(d->sp.panels * panel * sizeof(uint16_t)); /* rows past c_out: +0 */
  if (!d->wpack) {
    dlc_free(d);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory packing im2col_gemm weights");
  }
  for (size_t oc = 0; oc < co; oc++) {
    uint16_t *dst = d->wpack + oc / mr * panel + oc % mr;
    const uint16_t *row = (const uint16_t *)w + oc * d->K;
    for (size_t k = 0; k < d->K; k++) dst[k * mr] = row[k];
  }
  p->algo_data = d;
  p->packed_weight_bytes = d->sp.panels * panel * sizeof(uint16_t);
  p->workspace_bytes = d->sp.ntasks * d->sp.slice;
  p->exec_tasks = d->sp.ntasks;
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
  const size_t mr = d->sp.mr;
  void *xv, *accv;
  size_t begin, end;
  dlc_gemv_task_part(&d->sp, c->ws, t, &xv, &accv, &begin, &end);
  float *xf = xv, *acc = accv;
  if (f->widen_run)
    f->widen_run(n * d->K, x, 1, xf);
  else
    for (size_t i = 0; i < n * d->K; i++) xf[i] = dlc_f16_to_f32(x[i]);
  for (size_t pn = begin; pn < end; pn++) {
    const size_t oc0 = pn * mr, m = DLC_MIN(mr, co - oc0);
    const uint16_t *a = d->wpack + pn * d->K * mr;
    for (size_t r0 = 0; r0 < n; r0 += 4)
      f->gemv(m, DLC_MIN(4, n - r0), d->K, a, xf + r0 * d->K, d->K, acc + r0 * mr, mr);
    for (size_t r = 0; r < n; r++)
      f->store(m, acc + r * mr, p->bias, oc0, 1, p->s.out_min, p->s.out_max, y + r * co + oc0);
  }
}

const dlc_impl_ops dlc_gemv_f16_ops = {
    .plan = gemv_f16_plan,
    .task = gemv_f16_task,
    .destroy = gemv_f16_destroy,
};
