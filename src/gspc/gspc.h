/* gspc.h - what the GSPC drivers offer the implementation list (src/api/impl_list.c). */
#ifndef DLC_GSPC_H
#define DLC_GSPC_H

#include "../core/plan.h"
#include "../ukernel/config.h"

extern const dlc_impl_ops dlc_gspc_ops;        /* gspc.c: fp32 */
extern const dlc_impl_ops dlc_gspc_lowp_ops;   /* gspc_lowp.c: F16 and int8 */
extern const dlc_impl_ops dlc_gspc_q8n_ops;    /* gspc_q8n.c: int8 NHWC, few channels per group */
/* Whether gspc_q8n.c takes the layer: int8 NHWC, 2, 4, 8 or 16 channels per group,
   a block of 64 output channels reading at most 64 input channels, on a table with k->q8_gcn. */
int dlc_gspc_q8n_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k);
/* Whether it runs the layer in its lanes mode (as many output as input channels per group, 4, 8 or
   16, c_out a multiple of 64 or 32: a load and in-lane shuffles per pixel and tap). */
int dlc_gspc_q8n_lanes(const dlc_conv_shape *s);
extern const dlc_impl_ops dlc_gspc_q8t_ops;    /* gspc_q8t.c: int8 NCHW on gspc_q8n.c, x and y transposed */
/* Whether gspc_q8t.c takes the layer: int8 NCHW that gspc_q8n.c takes in NHWC. */
int dlc_gspc_q8t_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k);
/* The same for the indirect GEMM (igemm_q8.c), grouped layers only (algorithm IM2COL_GEMM). */
extern const dlc_impl_ops dlc_igemm_q8t_ops;
int dlc_igemm_q8t_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k);

#endif
