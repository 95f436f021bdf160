/* One API test case, run and checked (run_case.h). */
#include "run_case.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "names.h"
#include "sentinel.h"

/* Appends a problem to msg (len bytes in all) and marks the run bad. */
static void problem(char *msg, size_t len, int *bad, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void problem(char *msg, size_t len, int *bad, const char *fmt, ...) {
  *bad = 1;
  const size_t used = strlen(msg);
  if (used >= len) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg + used, len - used, fmt, ap);
  va_end(ap);
}
#define PROBLEM(...) problem(msg, len, &bad, __VA_ARGS__)

const char *cfg_str(const run_cfg *c, char *buf, size_t n) {
  snprintf(buf, n, "algo=%s isa=%s threads=%d%s ws=%s y_shift=%zu%s", algo_name(c->algo), isa_name(c->isa),
           c->num_threads, c->pool ? " caller-pool" : "", c->ws_mode ? "caller" : "NULL", c->y_shift,
           c->flags & DLCONV_PLAN_MEASURE ? " MEASURE" : "");
  return buf;
}

void cfg_options(const run_cfg *c, dlconv_options *o) {
  dlconv_options_init(o);
  o->algo = c->algo;
  o->isa = c->isa;
  o->num_threads = c->num_threads;
  o->flags = c->flags;
  if (c->pool) {
    o->parallel_for = tpool_parallel_for;
    o->pool = c->pool;
  }
}

dlconv_status cd_plan(const conv_data *cd, dlconv_plan **plan, const dlconv_options *o) {
  const dlconv_conv2d_desc *d = &cd->d;
  switch (cd->kind) {
    case KIND_DENSE:
      return dlconv_plan_dense(plan, d->n, d->c_in, d->c_out, DLCONV_F32, cd->w, cd->bias, d->out_min, d->out_max, NULL,
                               o);
    case KIND_CSR: return dlconv_plan_conv2d_csr(plan, d, &cd->csr, cd->bias, NULL, o);
    default: return dlconv_plan_conv2d(plan, d, cd->w, cd->bias, NULL, o);
  }
}

int check_info(const conv_data *cd, const run_cfg *c, const dlconv_plan *plan, dlconv_plan_info *info, char *msg,
               size_t len) {
  const dlconv_conv2d_desc *d = &cd->d;
  int bad = 0;
  memset(info, 0x5A, sizeof *info);
  dlconv_status st = dlconv_plan_query(plan, info);
  if (st != DLCONV_OK) {
    PROBLEM("plan_query -> %d; ", (int)st);
    return bad;
  }
  if (info->algo < DLCONV_ALGO_DIRECT || info->algo > DLCONV_ALGO_SPARSE_CSR)
    PROBLEM("info.algo=%d not concrete; ", (int)info->algo);
  if (c->algo != DLCONV_ALGO_AUTO && info->algo != c->algo)
    PROBLEM("info.algo=%s but %s was forced; ", algo_name(info->algo), algo_name(c->algo));
  if (info->isa < DLCONV_ISA_GENERIC || info->isa > DLCONV_ISA_NEON)
    PROBLEM("info.isa=%d not a concrete CPU ISA; ", (int)info->isa);
  else if (dlconv_isa_available(info->isa) != 1)
    PROBLEM("info.isa=%s not available; ", isa_name(info->isa));
  if (c->isa != DLCONV_ISA_AUTO && info->isa != c->isa)
    PROBLEM("info.isa=%s but %s was forced; ", isa_name(info->isa), isa_name(c->isa));
  if (info->dtype != DLCONV_F32) PROBLEM("info.dtype=%d; ", (int)info->dtype);
  const int64_t macs = (int64_t)d->n * d->c_out * cd->h_out * cd->w_out * (int64_t)cd->K;
  if (info->macs != macs) PROBLEM("info.macs=%lld, dense formula %lld; ", (long long)info->macs, (long long)macs);
  const size_t ws = dlconv_plan_workspace_size(plan);
  if (info->workspace_bytes != ws)
    PROBLEM("info.workspace_bytes=%zu != plan_workspace_size %zu; ", info->workspace_bytes, ws);
  if (!memchr(info->kernel, 0, sizeof info->kernel) || !info->kernel[0])
    PROBLEM("info.kernel empty or unterminated; ");
  const double density = (double)cd->nnz / (double)cd->w_len;
  if (!(info->weight_density >= 0.0 && info->weight_density <= 1.0))
    PROBLEM("info.weight_density=%g; ", info->weight_density);
  else if (info->algo == DLCONV_ALGO_SPARSE_CSR) {
    if (fabs(info->weight_density - density) > 1e-9)
      PROBLEM("info.weight_density=%.9g, nonzeros/total=%.9g; ", info->weight_density, density);
  } else if (info->weight_density != 1.0)
    PROBLEM("dense algorithm reports weight_density=%g; ", info->weight_density);
  return bad;
}

int inputs_unchanged(const conv_data *cd) {
  if (memcmp(cd->x, cd->x0, cd->x_len * 4) || memcmp(cd->w, cd->w0, cd->w_len * 4)) return 0;
  if (!canary_guards_ok(&cd->xb) || !canary_guards_ok(&cd->wb)) return 0;
  if (cd->bias && (memcmp(cd->bias, cd->b0, (size_t)cd->d.c_out * 4) || !canary_guards_ok(&cd->bb))) return 0;
  if (cd->kind == KIND_CSR) {
    const size_t nnz = (size_t)cd->csr.nnz;
    if (memcmp(cd->csr_vals, cd->csr_vals0, nnz * 4) || memcmp(cd->csr_cols, cd->csr_cols0, nnz * 4) ||
        memcmp(cd->csr_rowptr, cd->csr_rowptr0, (size_t)(cd->csr.rows + 1) * 4))
      return 0;
  }
  return 1;
}

int execute_checked(const conv_data *cd, const dlconv_plan *plan, const run_cfg *c, float **y_keep, char *msg,
                    size_t len) {
  canary_buf yb, wsb = {0};
  int bad = 0;
  canary_alloc(&yb, cd->y_len * 4, c->y_shift);
  fill_nan(yb.p, yb.bytes);
  void *ws = NULL;
  if (c->ws_mode) {
    canary_alloc(&wsb, dlconv_plan_workspace_size(plan), 0);
    fill_nan(wsb.p, wsb.bytes); /* a kernel must not rely on a zeroed workspace */
    ws = wsb.p;
  }
  dlconv_status st = dlconv_execute(plan, cd->x, yb.p, ws);
  if (st != DLCONV_OK) {
    PROBLEM("execute -> %s (%s); ", dlconv_status_string(st), dlconv_last_error());
  } else {
    char m[400] = "";
    if (check_y(cd, yb.p, m, sizeof m)) PROBLEM("%s; ", m);
  }
  if (!canary_guards_ok(&yb)) PROBLEM("y guard bytes overwritten; ");
  if (c->ws_mode && !canary_guards_ok(&wsb))
    PROBLEM("workspace overrun (wrote past dlconv_plan_workspace_size=%zu); ", wsb.bytes);
  if (!inputs_unchanged(cd)) PROBLEM("x, w, bias or csr arrays modified; ");
  if (c->ws_mode) canary_free(&wsb);
  if (y_keep) {
    *y_keep = xmalloc(cd->y_len * 4 + 4);
    memcpy(*y_keep, yb.p, cd->y_len * 4);
  }
  canary_free(&yb);
  return bad;
}

run_outcome run_case(const conv_data *cd, const run_cfg *c, run_result *res) {
  dlconv_options o;
  cfg_options(c, &o);
  memset(res, 0, sizeof *res);
  dlconv_plan *plan = (dlconv_plan *)(uintptr_t)0x10; /* must come back NULL on failure */
  dlconv_status st = cd_plan(cd, &plan, &o);
  res->plan_status = st;
  if (st != DLCONV_OK) {
    const char *e = dlconv_last_error();
    int fine = plan == NULL && e && e[0];
    if (st == DLCONV_ERR_UNSUPPORTED && fine) {
      snprintf(res->msg, sizeof res->msg, "%s", e);
      return RUN_UNSUPPORTED;
    }
    snprintf(res->msg, sizeof res->msg, "plan -> %s (last_error \"%s\")%s; ", dlconv_status_string(st),
             e ? e : "(null)", plan ? ", *plan not set to NULL" : "");
    return RUN_FAIL;
  }
  int bad = check_info(cd, c, plan, &res->info, res->msg, sizeof res->msg);
  float *y1 = NULL, *y2 = NULL;
  bad |= execute_checked(cd, plan, c, c->repeat ? &y1 : NULL, res->msg, sizeof res->msg);
  if (c->repeat && !bad) {
    bad |= execute_checked(cd, plan, c, &y2, res->msg, sizeof res->msg);
    if (!bad && memcmp(y1, y2, cd->y_len * 4)) {
      bad = 1;
      size_t u = strlen(res->msg);
      snprintf(res->msg + u, sizeof res->msg - u, "second execute of the same plan differs bitwise; ");
    }
  }
  free(y1);
  free(y2);
  dlconv_plan_destroy(plan);
  return bad ? RUN_FAIL : RUN_PASS;
}
