/* gemm.h - what the im2col + GEMM drivers offer the implementation list (src/api/impl_list.c):
 * their implementations and the applies-check of each that serves only some shapes. */
#ifndef DLC_GEMM_H
#define DLC_GEMM_H

#include "../core/plan.h"
#include "../ukernel/config.h"

/* gemm.c: fp32, every shape. */
extern const dlc_impl_ops dlc_gemm_ops;
/* Whether gemm.c reads an NHWC pointwise layer's pixels (A rows, c_in floats apart) in place with
   the family's ukernel_lda, rather than packing them; k may be NULL (then 0). */
int dlc_gemm_nhwc_a_in_place(const dlc_conv_shape *s, const dlc_isa_kernels *k);

/* gemv_q8d4.c: int8 dense layers (NHWC 1 x 1 on 1 x 1 pixels) of at most 8 rows on the q8_d4
   family's gemv. k may be NULL (AUTO asking about an ISA the build lacks). */
extern const dlc_impl_ops dlc_gemv_q8d4_ops;
int dlc_gemv_q8d4_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k);

/* igemm_q8.c: int8 NHWC convolutions with cin_g a multiple of 4 (or in row mode) as an indirect
   GEMM on the q8_igemm family, x read in place. k may be NULL. */
extern const dlc_impl_ops dlc_igemm_q8_ops;
int dlc_igemm_q8_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k);

/* gemv_f16.c: F16 dense layers of at most 8 rows on the F16 family's gemv. k may be NULL. */
extern const dlc_impl_ops dlc_gemv_f16_ops;
int dlc_gemv_f16_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k);

/* gemm_lowp.c: F16 and int8, every shape (what the ones above leave or decline). */
extern const dlc_impl_ops dlc_gemm_lowp_ops;

#endif
