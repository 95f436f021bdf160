/* gemv_q8d4.c - int8 dense layers with few rows (batch <= 8) on the q8_d4 family's gemv,
 * ISA-independent driver: an entry of im2col + GEMM ahead of gemm_lowp.c in the implementation list.
 *
 * A dense layer at batch 1 is a matrix-vector product: every weight is used once, so its time
 * is the time to stream the weights. The GEMM path packs them as s16 pairs (2 bytes a weight)
 * and spends a 16-column register tile on one column; here they stay s8 (1 byte a weight) in
 * panels of gemv_mr output channels x groups of 4 k, and each panel meets up to 4 rows of x per
 * pass. x is flipped to u8 bytes (x ^ 0x80 for S8) with K padded to a multiple of 4 by the zero
 * point's byte, and the zero point's correction sits in the plan's bias (lowp_vpos.h's
 * dlc_q8_d4_params), so the kernel is a plain u8 x s8 product.
 *
 * Threads: the panels are split into contiguous ranges, one per task; each task flips x into
 * its slice (K bytes per row: nothing next to the weights), then runs its panels and stores each
 * panel's outputs while they are in cache. */
#include <stdio.h>
#include <string.h>

#include "../ukernel/config.h"
#include "../core/plan.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "../direct/lowp_vpos.h"
#include "gemm.h"
#include "gemv_rows.h"

typedef struct gemv_data {
  size_t K, Kp;
  dlc_gemv_split sp;     /* panels of mr output channels over the tasks; x as Kp bytes a row */
  int8_t *wpack;         /* panels x (Kp / 4) x mr x 4 */
  dlc_q8_params q4;      /* the plan's requantisation with the zero point's correction in the bias */
  uint8_t zu, flip;
} gemv_data;

int dlc_gemv_q8d4_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k) {
  const dlc_q8d4_gemm_family *f = k ? k->q8_d4 : NULL;
  return (dtype == DLCONV_U8 || dtype == DLCONV_S8) && f && f->gemv && dlc_gemv_takes(s) &&
         (size_t)s->c_in <= DLC_Q8_MAX_K;
}

static void gemv_free(gemv_data *d) {
  if (!d) return;
  dlc_free(d->wpack);
  dlc_q8_d4_params_free(&d->q4);
  dlc_free(d);
}

static void gemv_destroy(dlconv_plan *p) { gemv_free(p->algo_data); }

static dlconv_status gemv_plan(dlconv_plan *p, const void *w) {
  const dlc_conv_shape *s = &p->s;
  const dlc_q8d4_gemm_family *f = p->kernels->q8_d4;
  gemv_data *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning im2col_gemm");
  int ok;
  dlconv_status st = dlc_q8_d4_params(p, w, &d->q4, &ok);
  if (st != DLCONV_OK || !ok) {
    gemv_free(d);
    return st != DLCONV_OK ? st : dlc_fail(DLCONV_ERR_UNSUPPORTED, "int8 gemv: a bias with the zero point's "
                                                                   "correction leaves s32");
  }
  const size_t co = (size_t)s->c_out;
  d->K = (size_t)s->c_in;
  d->Kp = dlc_round_up(d->K, 4);
  d->sp = dlc_gemv_split_of(p, f->gemv_mr, d->Kp);
  const size_t mr = d->sp.mr;
  d->zu = dlc_q8_d4_zu(p);
  d->flip = dlc_q8_d4_flip(p);
  const size_t panel_bytes = d->Kp * mr;
  d->wpack = dlc_calloc(d->sp.panels * panel_bytes);
  if (!d->wpack) {
    gemv_free(d);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory packing im2col_gemm weights");
  }
  for (size_t oc = 0; oc < co; oc++) {
    int8_t *panel = d->wpack + oc / mr * panel_bytes + 4 * (oc % mr);
    const int8_t *row = (const int8_t *)w + oc * d->K;
    for (size_t k = 0; k < d->K; k++) panel[k / 4 * 4 * mr + k % 4] = row[k];
  }
  p->algo_data = d;
  p->packed_weight_bytes = d->sp.panels * panel_bytes;
  p->workspace_bytes = d->sp.ntasks * d->sp.slice;
  p->exec_tasks = d->sp.ntasks;
  snprintf(p->kernel, sizeof p->kernel, "%s", f->gemv_name);
  return DLCONV_OK;
}

static void gemv_task(void *arg, size_t t) {
  const dlc_exec *c = arg;
  const dlconv_plan *p = c->p;
  const gemv_data *d = p->algo_data;
  const uint8_t *x = c->x;
  uint8_t *y = c->y;
  const size_t n = (size_t)p->s.n, co = (size_t)p->s.c_out;
  const size_t mr = d->sp.mr;
  void *xv, *accv;
  size_t begin, end;
  dlc_gemv_task_part(&d->sp, c->ws, t, &xv, &accv, &begin, &end);
  uint8_t *xq = xv;
  int32_t *acc = accv;
  for (size_t r = 0; r < n; r++) {
    for (size_t k = 0; k < d->K; k++) xq[r * d->Kp + k] = x[r * d->K + k] ^ d->flip;
    for (size_t k = d->K; k < d->Kp; k++) xq[r * d->Kp + k] = d->zu;
  }
  for (size_t pn = begin; pn < end; pn++) {
    const size_t oc0 = pn * mr, m = DLC_MIN(mr, co - oc0);
    const int8_t *a = d->wpack + pn * d->Kp * mr;
    for (size_t r0 = 0; r0 < n; r0 += 4) {
      const size_t nb = DLC_MIN(4, n - r0);
      p->kernels->q8_d4->gemv(m, nb, d->Kp, a, xq + r0 * d->Kp, d->Kp, acc + r0 * mr, mr);
    }
    for (size_t r = 0; r < n; r++)
      p->kernels->q8_gemm->store(m, acc + r * mr, &d->q4, oc0, 1, y + r * co + oc0);
  }
}

const dlc_impl_ops dlc_gemv_q8d4_ops = {
    .plan = gemv_plan,
    .task = gemv_task,
    .destroy = gemv_destroy,
};
