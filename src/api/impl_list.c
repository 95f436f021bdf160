/* The implementation list (docs/architecture.md, "Floors"; the idea of oneDNN's
   cpu_convolution_list.cpp): an ordered table of every implementation, each with the dtypes and
   layouts it serves and its own applies-check. A specialised implementation comes before the
   general one of its algorithm, which takes what the specialised ones leave or decline (their
   plan answering DLCONV_ERR_UNSUPPORTED, e.g. a bias their zero-point correction would overflow).
   A forced algorithm walks its entries in this order; AUTO (auto.c) orders the algorithms and
   each is walked the same way. Drivers never pick one another. */
#include "impl_list.h"

#include <string.h>

#include "../arch/cuda/cuda.h"
#include "../core/util.h"
#include "../direct/direct.h"
#include "../gemm_im2col/gemm.h"
#include "../gspc/gspc.h"
#include "../sparse_csr/csr.h"
#include "../spatial_pack/spack.h"
#include "names.h"

#define DT(t) (1u << (t))
#define F32 DT(DLCONV_F32)
#define F16 DT(DLCONV_F16)
#define INT8 (DT(DLCONV_U8) | DT(DLCONV_S8))
#define LOWP (F16 | INT8)
#define NCHW (1u << DLCONV_NCHW)
#define NHWC (1u << DLCONV_NHWC)
#define ANY_LAYOUT (NCHW | NHWC)

static const dlc_impl impls[] = {
    /* direct: fp32 NCHW at stride 1 with pixels in the lanes, no transpose of x or y */
    {"direct_nchw", DLCONV_ALGO_DIRECT, F32, NCHW, dlc_direct_nchw_applies, &dlc_direct_nchw_ops},
    {"direct", DLCONV_ALGO_DIRECT, F32, ANY_LAYOUT, NULL, &dlc_direct_ops},
    /* F16 with several input channels per group on the fp32 conv kernels, where the family stores
       binary16; elsewhere direct_lowp_conv (NCHW), as int8 */
    {"direct_f16_conv", DLCONV_ALGO_DIRECT, F16, ANY_LAYOUT, dlc_direct_f16_conv_applies, &dlc_direct_f16_conv_ops},
    {"direct_lowp_conv", DLCONV_ALGO_DIRECT, LOWP, NCHW, dlc_direct_lowp_conv_applies, &dlc_direct_lowp_conv_ops},
    /* depthwise: NCHW with any depth multiplier, NHWC with multiplier 1 (the driver refuses others) */
    {"direct_lowp_dw", DLCONV_ALGO_DIRECT, LOWP, ANY_LAYOUT, dlc_direct_lowp_dw_applies, &dlc_direct_lowp_dw_ops},
    /* im2col + GEMM */
    {"im2col_gemm", DLCONV_ALGO_IM2COL_GEMM, F32, ANY_LAYOUT, NULL, &dlc_gemm_ops},
    /* int8 dense layers at small batch: the weights stay s8, each streamed once (declines a bias
       whose zero point's correction leaves s32, as igemm_q8 does) */
    {"gemv_q8d4", DLCONV_ALGO_IM2COL_GEMM, INT8, NHWC, dlc_gemv_q8d4_applies, &dlc_gemv_q8d4_ops},
    /* int8 NHWC with quads of channels (or a few in row mode): x read in place by the indirect GEMM */
    {"igemm_q8", DLCONV_ALGO_IM2COL_GEMM, INT8, NHWC, dlc_igemm_q8_applies, &dlc_igemm_q8_ops},
    /* and NCHW grouped layers on it, x and y transposed in the workspace (gspc_q8t.c) */
    {"igemm_q8t", DLCONV_ALGO_IM2COL_GEMM, INT8, NCHW, dlc_igemm_q8t_applies, &dlc_igemm_q8t_ops},
    /* F16 dense layers at small batch, on the F16 family's gemv */
    {"gemv_f16", DLCONV_ALGO_IM2COL_GEMM, F16, NHWC, dlc_gemv_f16_applies, &dlc_gemv_f16_ops},
    /* every other F16 / int8 shape */
    {"im2col_gemm_lowp", DLCONV_ALGO_IM2COL_GEMM, LOWP, ANY_LAYOUT, NULL, &dlc_gemm_lowp_ops},
    /* spatial pack */
    {"spatial_pack", DLCONV_ALGO_SPATIAL_PACK, F32, ANY_LAYOUT, NULL, &dlc_spack_ops},
    {"spatial_pack_lowp", DLCONV_ALGO_SPATIAL_PACK, LOWP, ANY_LAYOUT, NULL, &dlc_spack_lowp_ops},
    /* GSPC */
    {"gspc", DLCONV_ALGO_GSPC, F32, ANY_LAYOUT, NULL, &dlc_gspc_ops},
    /* int8 NHWC with few channels per group: output channels in the lanes, x read in place */
    {"gspc_q8n", DLCONV_ALGO_GSPC, INT8, NHWC, dlc_gspc_q8n_applies, &dlc_gspc_q8n_ops},
    /* and NCHW on the same kernel, x and y transposed in the workspace */
    {"gspc_q8t", DLCONV_ALGO_GSPC, INT8, NCHW, dlc_gspc_q8t_applies, &dlc_gspc_q8t_ops},
    {"gspc_lowp", DLCONV_ALGO_GSPC, LOWP, ANY_LAYOUT, NULL, &dlc_gspc_lowp_ops},
    /* sparse CSR */
    {"sparse_csr", DLCONV_ALGO_SPARSE_CSR, F32, ANY_LAYOUT, NULL, &dlc_csr_ops},
    {"sparse_csr_lowp", DLCONV_ALGO_SPARSE_CSR, LOWP, ANY_LAYOUT, NULL, &dlc_csr_lowp_ops},
};

/* ISA_CUDA's list (src/arch/cuda/, docs/cuda.md), walked only for it: the implicit GEMMs (CUDA
   cores for fp32, tensor cores for F16), the grouped kernel, one thread per output (every dtype,
   int8 included), CSR rows. */
static const dlc_impl cuda_impls[] = {
#if defined(DLC_HAVE_CUDA)
    {"cuda_gemm", DLCONV_ALGO_IM2COL_GEMM, F32 | LOWP, ANY_LAYOUT, NULL, &dlc_cuda_gemm_ops},   /* int8: refused */
    {"cuda_gspc", DLCONV_ALGO_GSPC, F32 | LOWP, ANY_LAYOUT, NULL, &dlc_cuda_gspc_ops},           /* int8: refused */
    {"cuda_direct", DLCONV_ALGO_DIRECT, F32 | LOWP, ANY_LAYOUT, NULL, &dlc_cuda_direct_ops},
    {"cuda_csr", DLCONV_ALGO_SPARSE_CSR, F32 | LOWP, ANY_LAYOUT, NULL, &dlc_cuda_csr_ops},
#endif
    {NULL, DLCONV_ALGO_AUTO, 0, 0, NULL, NULL},   /* the end (and no empty array without CUDA) */
};

/* What an implementation's plan sets, cleared before each try. */
static void clear_outputs(dlconv_plan *p) {
  p->algo_data = NULL;
  p->packed_weight_bytes = p->workspace_bytes = p->exec_tasks = 0;
  p->weight_density = 1.0;
  p->kernel[0] = 0;
}

void dlc_impl_release(dlconv_plan *p) {
  if (p->ops && p->ops->destroy) p->ops->destroy(p);
  p->algo_data = NULL;
}

/* One entry's plan, from the caller's CSR where it plans from one, else from dense weights
   (densifying a caller's CSR once, for this and any later entry). */
static dlconv_status plan_entry(dlconv_plan *p, const dlc_impl *e, dlc_weights *w) {
  p->ops = e->ops;
  clear_outputs(p);
  dlconv_status st;
  if (w->csr && e->ops->plan_csr) {
    st = e->ops->plan_csr(p, w->csr);
  } else {
    if (!w->dense) {
      w->owned = dlc_densify(w->csr, &p->s, dlc_weight_elem_size(p->dtype));
      if (!w->owned) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory densifying csr weights");
      w->dense = w->owned;
    }
    st = e->ops->plan(p, w->dense);
  }
  if (st != DLCONV_OK) p->algo_data = NULL;
  return st;
}

static const char *dtype_word(dlconv_dtype t) {
  return t == DLCONV_F32 ? "fp32" : t == DLCONV_F16 ? "F16" : "int8";
}

dlconv_status dlc_impl_plan(dlconv_plan *p, dlconv_algo a, dlconv_isa isa, dlc_weights *w) {
  p->algo = a;
  p->isa = isa;
  const int cuda = isa == DLCONV_ISA_CUDA;
  p->kernels = cuda ? NULL : dlc_kernels_for(isa);
  p->ops = NULL;
  clear_outputs(p);
  if (cuda && !dlc_cuda_available()) return dlc_fail(DLCONV_ERR_UNSUPPORTED, "isa cuda: %s", dlc_cuda_why());
  if (!p->kernels && !cuda)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "isa %s is not available on this machine or build", dlc_isa_name(isa));
  dlconv_status st = DLCONV_ERR_UNSUPPORTED;
  int tried = 0;
  const dlc_impl *list = cuda ? cuda_impls : impls;
  const size_t n = cuda ? sizeof cuda_impls / sizeof cuda_impls[0] - 1 : sizeof impls / sizeof impls[0];
  for (size_t i = 0; i < n; i++) {
    const dlc_impl *e = &list[i];
    if (e->algo != a || !(e->dtypes & DT(p->dtype)) || !(e->layouts & (1u << p->s.layout))) continue;
    if (e->applies && !e->applies(&p->s, p->dtype, p->kernels)) continue;
    tried = 1;
    st = plan_entry(p, e, w);
    if (st != DLCONV_ERR_UNSUPPORTED) return st;
  }
  if (!tried)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "%s has no %s %s implementation for this shape (c_in/groups = %lld)",
                    dlc_algo_name(a), dtype_word(p->dtype), p->s.layout == DLCONV_NHWC ? "NHWC" : "NCHW",
                    (long long)p->s.cin_g);
  return st;
}
