/* Execution: check the pointers, find scratch memory, run the plan's algorithm. */
#include <stdio.h>

#include "../arch/cuda/cuda.h"
#include "../core/clock.h"
#include "../core/env.h"
#include "../core/fpenv.h"
#include "../core/plan.h"
#include "../core/util.h"
#include "names.h"
#include "validate.h"
#include "verify.h"

static int overlap(const void *a, size_t na, const void *b, size_t nb) {
  uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
  return x < y + nb && y < x + na;
}

dlconv_status dlconv_execute(const dlconv_plan *p, const void *x, void *y, void *workspace) {
  if (!p) return dlc_fail(DLCONV_ERR_INVALID_ARG, "plan is NULL");
  if (!x) return dlc_fail(DLCONV_ERR_INVALID_ARG, "x is NULL");
  if (!y) return dlc_fail(DLCONV_ERR_INVALID_ARG, "y is NULL");
  size_t es = dlc_dtype_size(p->dtype);
  if ((uintptr_t)x % es) return dlc_fail(DLCONV_ERR_INVALID_ARG, "x is not aligned to its element size %zu", es);
  if ((uintptr_t)y % es) return dlc_fail(DLCONV_ERR_INVALID_ARG, "y is not aligned to its element size %zu", es);
  size_t xb = dlc_x_elems(&p->s) * es, yb = dlc_y_elems(&p->s) * es;
  if (overlap(x, xb, y, yb)) return dlc_fail(DLCONV_ERR_INVALID_ARG, "x and y overlap");
  if (workspace && (uintptr_t)workspace % DLC_ALIGN)
    return dlc_fail(DLCONV_ERR_INVALID_ARG, "workspace is not 64-byte aligned");
  if (workspace && (overlap(workspace, p->workspace_bytes, x, xb) || overlap(workspace, p->workspace_bytes, y, yb)))
    return dlc_fail(DLCONV_ERR_INVALID_ARG, "workspace overlaps x or y");
  /* device memory, the plan's stream, no host workspace and no DLCONV_VERIFY (docs/cuda.md) */
  if (p->isa == DLCONV_ISA_CUDA) return dlc_cuda_execute(p, x, y, workspace);
  void *owned = NULL;
  if (!workspace && p->workspace_bytes) {
    owned = workspace = dlc_malloc(p->workspace_bytes);
    if (!owned) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory allocating %zu bytes of workspace", p->workspace_bytes);
  }
  int verbose = dlc_env()->verbose >= 2;
  const double t0 = verbose ? dlc_now_s() : 0.0;
  dlc_fpmode fpmode = dlc_fpmode_enter();  /* the calling thread; pool/OpenMP workers: threading.c */
  dlc_plan_run(p, x, y, workspace);
  dlc_fpmode_leave(fpmode);
  if (verbose) {
    const double ms = (dlc_now_s() - t0) * 1e3;
    fprintf(stderr, "dlconv: execute %s kernel=%s macs=%lld ms=%.4f gflops=%.2f\n", dlc_algo_name(p->algo), p->kernel,
            (long long)p->macs, ms, ms > 0 ? 2e-6 * (double)p->macs / ms : 0.0);
  }
  dlc_free(owned);
  if (p->verify_w) return dlc_verify_output(p, x, y);
  return DLCONV_OK;
}
