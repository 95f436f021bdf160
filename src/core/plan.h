/* plan.h - what a plan holds, and the interface every implementation of a convolution offers.
 *
 * The top floor (src/api/) validates the call and normalises it into a dlc_conv_shape (64-bit
 * sizes, the clamp, the layout), picks an ISA (a kernel table) and an entry of its implementation
 * list (src/api/impl_list.c), whose ops->plan packs the weights. A dense layer arrives here as a
 * 1x1 NHWC convolution with n = batch, h = w = 1. */
#ifndef DLC_PLAN_H
#define DLC_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "dlconv.h"
#include "../quant/quant.h"
#include "threading.h"

typedef struct dlc_conv_shape {
  int64_t n, c_in, h_in, w_in;
  int64_t c_out, k_h, k_w;
  int64_t stride_h, stride_w, dil_h, dil_w;
  int64_t pad_t, pad_b, pad_l, pad_r;
  int64_t groups, cin_g, cout_g;   /* channels per group */
  int64_t h_out, w_out;
  dlconv_layout layout;            /* of x and y */
  float out_min, out_max;          /* clamp; -INFINITY/INFINITY when none (apply with dlc_clamp) */
} dlc_conv_shape;

struct dlc_impl_ops;

struct dlconv_plan {
  dlc_conv_shape s;
  dlconv_dtype dtype;
  dlconv_algo algo;                /* concrete, never AUTO */
  dlconv_isa isa;                  /* concrete, never AUTO */
  const struct dlc_isa_kernels *kernels; /* micro-kernel table of isa (src/ukernel/config.h) */
  int nthreads;                    /* >= 1: tasks a parallel region is split into */
  dlconv_parallel_for_fn parallel_for;  /* caller's pool, or NULL (OpenMP or serial) */
  void *pool;
  void *cuda_stream;               /* ISA_CUDA: the caller's cudaStream_t (NULL: the default stream) */
  float *bias;                     /* c_out values, always allocated (zeros when the caller gave none);
                                      F16 plans keep the caller's halves here widened to fp32 */
  int has_bias;
  const struct dlc_impl_ops *ops;  /* the implementation that planned it (set by the top floor) */
  void *algo_data;                 /* the implementation's packed weights etc., freed by ops->destroy */
  size_t packed_weight_bytes;      /* set by ops->plan */
  size_t workspace_bytes;          /* set by ops->plan: what one execute needs (all threads together) */
  size_t exec_tasks;               /* set by ops->plan where ops->task runs the execute: its tasks */
  double weight_density;           /* set by ops->plan: 1.0 for dense algorithms */
  int64_t macs;
  char kernel[64];                 /* set by ops->plan: micro-kernel name and tile */
  float *verify_w;                 /* OIHW weights kept for DLCONV_VERIFY (F16/S8 widened exactly), else NULL */
  dlc_q8_params q8;                /* int8 plans: the copied quantisation (mult and bias owned here) */
  float *q8_mult_f;                /* int8 plans: the buffer q8.mult_f points into when set (owned) */
};

/* One implementation: a driver's functions for the dtypes and shapes its entry of the
 * implementation list serves. All functions may assume the shape is valid (validated by the top
 * floor) and that the entry's applies-check holds. Tensors are of p->dtype: float (F32), uint16_t
 * halves (F16), bytes with p->q8 (U8/S8; weights S8). */
typedef struct dlc_impl_ops {
  /* w: OIHW weights (c_out x cin_g x k_h x k_w), never NULL. Uses p->s, p->kernels, p->nthreads;
     sets algo_data, packed_weight_bytes, workspace_bytes, weight_density, kernel, and exec_tasks
     where the implementation offers task in place of execute. Returns DLCONV_OK,
     DLCONV_ERR_UNSUPPORTED (with dlc_error message, e.g. the family has no kernel for this ISA:
     the list then tries its next entry) or DLCONV_ERR_OUT_OF_MEMORY; on failure it frees what it
     allocated and leaves algo_data NULL. */
  dlconv_status (*plan)(dlconv_plan *p, const void *w);
  /* x, y in the user layout p->s.layout; workspace: >= p->workspace_bytes, 64-byte aligned
     (NULL when workspace_bytes == 0). Must not allocate, must not fail, must not write to the plan. */
  void (*execute)(const dlconv_plan *p, const void *x, void *y, void *workspace);
  /* In place of execute (NULL then) where an execute is one parallel region: its task, run for
     t in [0, p->exec_tasks) with the call's dlc_exec (core/threading.h) as arg. */
  dlconv_task_fn task;
  void (*destroy)(dlconv_plan *p); /* frees algo_data (may be NULL) */
  /* Optional (NULL where the top floor densifies a caller's CSR instead): plan from the caller's
     CSR directly. It has been validated (rows, cols, row_ptr monotone and ending at nnz, every
     column in range and unique within its row) but columns may be in any order. */
  dlconv_status (*plan_csr)(dlconv_plan *p, const dlconv_csr *w);
} dlc_impl_ops;

/* Runs the plan's implementation on x -> y. */
static inline void dlc_plan_run(const dlconv_plan *p, const void *x, void *y, void *workspace) {
  if (p->ops->execute)
    p->ops->execute(p, x, y, workspace);
  else
    dlc_exec_tasks(p, p->exec_tasks, p->ops->task, x, y, workspace);
}

#endif
