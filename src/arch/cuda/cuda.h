/* cuda.h - the CUDA backend as the top floor sees it (docs/cuda.md).
 *
 * ISA_CUDA plans pack the caller's host weights and bias and upload them at plan time; execute
 * reads x and writes y in device memory on the plan's stream (options.cuda_stream), without
 * waiting for the kernel. Built where meson finds nvcc (DLC_HAVE_CUDA); otherwise cuda_none.c
 * answers that CUDA is not in the build. */
#ifndef DLC_ARCH_CUDA_H
#define DLC_ARCH_CUDA_H

#include "../../core/plan.h"

/* 1 when this build has the backend and the machine a GPU it runs on (compute capability 8.0 or
   newer); asked once, then remembered. */
int dlc_cuda_available(void);
/* Why dlc_cuda_available() is 0 (or "" when it is 1). */
const char *dlc_cuda_why(void);

/* The algorithms an AUTO algorithm tries on ISA_CUDA, best first; returns their count (<= 4). */
int dlc_cuda_auto_algos(const dlc_conv_shape *s, dlconv_dtype dtype, dlconv_algo out[4]);

/* dlconv_execute of an ISA_CUDA plan (its pointers already checked against NULL, alignment and
   overlap): x, y and workspace must be device memory (DLCONV_ERR_INVALID_ARG otherwise); a
   failed launch is DLCONV_ERR_DEVICE with CUDA's message. */
dlconv_status dlc_cuda_execute(const dlconv_plan *p, const void *x, void *y, void *workspace);

#if defined(DLC_HAVE_CUDA)
/* The implementation list's CUDA entries (src/api/impl_list.c). */
extern const dlc_impl_ops dlc_cuda_gemm_ops;   /* F32 CUDA-core implicit GEMM, F16 tensor cores */
extern const dlc_impl_ops dlc_cuda_gspc_ops;   /* the same GEMMs, channel tile fitted to the group */
extern const dlc_impl_ops dlc_cuda_direct_ops; /* one thread per output (depthwise; every dtype) */
extern const dlc_impl_ops dlc_cuda_csr_ops;    /* CSR rows of nonzeros (every dtype) */
#endif

#endif
