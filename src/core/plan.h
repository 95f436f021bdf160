/* plan.h - what a plan holds, and the interface every algorithm driver implements.
 *
 * core validates the call and normalises it into a dlc_conv_shape (64-bit sizes, the clamp,
 * the layout), picks an ISA (a kernel table) and asks an algorithm's ops->plan to pack the
 * weights. A dense layer arrives here as a 1x1 NHWC convolution with n = batch, h = w = 1. */
#ifndef DLC_PLAN_H
#define DLC_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "dlconv.h"
#include "../ukernel/config.h"
#include "../quant/quant.h"

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

struct dlc_algo_ops;

struct dlconv_plan {
  dlc_conv_shape s;
  dlconv_dtype dtype;
  dlconv_algo algo;                /* concrete, never AUTO */
  dlconv_isa isa;                  /* concrete, never AUTO */
  const dlc_isa_kernels *kernels;  /* micro-kernel table of isa */
  int nthreads;                    /* >= 1: tasks a parallel region is split into */
  dlconv_parallel_for_fn parallel_for;  /* caller's pool, or NULL (OpenMP or serial) */
  void *pool;
  float *bias;                     /* c_out values, always allocated (zeros when the caller gave none);
                                      F16 plans keep the caller's halves here widened to fp32 */
  int has_bias;
  const struct dlc_algo_ops *ops;
  void *algo_data;                 /* the algorithm's packed weights etc., freed by ops->destroy */
  size_t packed_weight_bytes;      /* set by ops->plan */
  size_t workspace_bytes;          /* set by ops->plan: what one execute needs (all threads together) */
  double weight_density;           /* set by ops->plan: 1.0 for dense algorithms */
  int64_t macs;
  char kernel[64];                 /* set by ops->plan: micro-kernel name and tile */
  float *verify_w;                 /* OIHW weights kept for DLCONV_VERIFY (F16/S8 widened exactly), else NULL */
  dlc_q8_params q8;                /* int8 plans: the copied quantisation (mult and bias owned here) */
  float *q8_mult_f;                /* int8 plans: the buffer q8.mult_f points into when set (owned) */
};

/* One algorithm (one folder under src/). All functions may assume the shape is valid
 * (validated by core). plan/execute serve F32 plans; an algorithm with a low-precision path has
 * a second ops value (dlc_algo_ops_for_dtype) whose plan_lowp/execute_lowp take the typed
 * tensors of p->dtype (F16: uint16_t halves; U8/S8: bytes with p->q8). */
typedef struct dlc_algo_ops {
  dlconv_algo algo;
  const char *name;                /* "direct", "im2col_gemm", "spatial_pack", "gspc", "sparse_csr" */
  /* w: OIHW fp32 weights (c_out x cin_g x k_h x k_w), never NULL. Uses p->s, p->kernels,
     p->nthreads; sets algo_data, packed_weight_bytes, workspace_bytes, weight_density, kernel.
     Returns DLCONV_OK, DLCONV_ERR_UNSUPPORTED (with dlc_error message, e.g. the family has no
     kernel for this ISA) or DLCONV_ERR_OUT_OF_MEMORY; on failure it frees what it allocated
     and leaves algo_data NULL. */
  dlconv_status (*plan)(dlconv_plan *p, const float *w);
  /* x, y in the user layout p->s.layout; workspace: >= p->workspace_bytes, 64-byte aligned
     (NULL when workspace_bytes == 0). Must not allocate, must not fail, must not write to the plan. */
  void (*execute)(const dlconv_plan *p, const float *x, float *y, void *workspace);
  void (*destroy)(dlconv_plan *p); /* frees algo_data (may be NULL) */
  /* Optional (NULL for dense algorithms, which get the CSR densified by core): plan from the
     caller's CSR directly. core has validated it (rows, cols, row_ptr monotone and ending at
     nnz, every column in range and unique within its row) but columns may be in any order. */
  dlconv_status (*plan_csr)(dlconv_plan *p, const dlconv_csr *w);
  /* Low-precision path (NULL in F32 ops): w is OIHW of the dtype (S8 for int8), x/y as above. */
  dlconv_status (*plan_lowp)(dlconv_plan *p, const void *w);
  void (*execute_lowp)(const dlconv_plan *p, const void *x, void *y, void *workspace);
} dlc_algo_ops;

/* Runs the plan's algorithm on x -> y (either path). */
static inline void dlc_plan_run(const dlconv_plan *p, const void *x, void *y, void *workspace) {
  if (p->dtype == DLCONV_F32)
    p->ops->execute(p, x, y, workspace);
  else
    p->ops->execute_lowp(p, x, y, workspace);
}

extern const dlc_algo_ops dlc_direct_ops;       /* src/direct/ */
extern const dlc_algo_ops dlc_gemm_ops;         /* src/gemm_im2col/ */
extern const dlc_algo_ops dlc_spack_ops;        /* src/spatial_pack/ */
extern const dlc_algo_ops dlc_gspc_ops;         /* src/gspc/ */
extern const dlc_algo_ops dlc_csr_ops;          /* src/sparse_csr/ */
extern const dlc_algo_ops dlc_gemm_lowp_ops;    /* src/gemm_im2col/gemm_lowp.c: F16 and int8 */
/* src/gemm_im2col/gemv_q8d4.c: int8 dense layers of at most 8 rows on the q8_d4 family's gemv,
   which dlc_gemm_lowp_ops hands them to where dlc_gemv_q8d4_applies */
extern const dlc_algo_ops dlc_gemv_q8d4_ops;
int dlc_gemv_q8d4_applies(const dlconv_plan *p);
int dlc_gemv_q8d4_fits(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k); /* before a plan has kernels */
/* src/gemm_im2col/igemm_q8.c: int8 NHWC convolutions with cin_g a multiple of 4 as an indirect
   GEMM on the q8_igemm family, which dlc_gemm_lowp_ops hands them to where dlc_igemm_q8_applies */
extern const dlc_algo_ops dlc_igemm_q8_ops;
int dlc_igemm_q8_applies(const dlconv_plan *p);
int dlc_igemm_q8_fits(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k); /* before a plan has kernels */
/* src/gemm_im2col/gemv_f16.c: F16 dense layers of at most 8 rows on the F16 family's gemv,
   likewise (dlc_gemv_f16_applies) */
extern const dlc_algo_ops dlc_gemv_f16_ops;
int dlc_gemv_f16_applies(const dlconv_plan *p);
extern const dlc_algo_ops dlc_direct_lowp_ops;  /* src/direct/direct_lowp.c: F16 and int8 depthwise */
extern const dlc_algo_ops dlc_spack_lowp_ops;   /* src/spatial_pack/spack_lowp.c: F16 and int8 */
extern const dlc_algo_ops dlc_gspc_lowp_ops;    /* src/gspc/gspc_lowp.c: F16 and int8 */
extern const dlc_algo_ops dlc_csr_lowp_ops;     /* src/sparse_csr/csr_lowp.c: F16 and int8 */
/* src/direct/direct_lowp_conv.c: F16 and int8 NCHW, c_in/groups > 1 (dlc_direct_lowp_ops hands
   such plans over to it) */
extern const dlc_algo_ops dlc_direct_lowp_conv_ops;
/* src/direct/direct.c: F16, c_in/groups > 1, both layouts, on the fp32 conv kernels where the
   family stores binary16 (dlc_direct_f16_conv_runs); dlc_direct_lowp_ops hands such plans to it */
extern const dlc_algo_ops dlc_direct_f16_conv_ops;
int dlc_direct_f16_conv_runs(const dlconv_plan *p);

#endif
