/* direct.h - what the direct drivers offer the implementation list (src/api/impl_list.c): their
 * implementations and the applies-check of each that serves only some shapes. */
#ifndef DLC_DIRECT_H
#define DLC_DIRECT_H

#include "../core/plan.h"
#include "../ukernel/config.h"

/* direct.c: fp32, both layouts, on the family's conv, dwc (NHWC depthwise) or dwp (NCHW
   depthwise) kernels. */
extern const dlc_impl_ops dlc_direct_ops;

/* direct_nchw.c: fp32 NCHW at stride 1 with pixels in the lanes, where the table has the family. */
extern const dlc_impl_ops dlc_direct_nchw_ops;
int dlc_direct_nchw_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k);
/* Whether it runs the layer faster than direct.c (and, grouped, than GSPC): AUTO asks. */
int dlc_direct_nchw_pays(const dlc_conv_shape *s, const dlc_isa_kernels *k);

/* direct.c: F16 with c_in/groups > 1, both layouts, on the fp32 conv kernels where the family
   stores binary16 (f16_out) and the F16 family widens runs of halves. */
extern const dlc_impl_ops dlc_direct_f16_conv_ops;
int dlc_direct_f16_conv_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k);

/* direct_lowp_conv.c: F16 and int8 NCHW with c_in/groups > 1 over virtual positions, where
   dlc_direct_f16_conv_ops does not apply. */
extern const dlc_impl_ops dlc_direct_lowp_conv_ops;
int dlc_direct_lowp_conv_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k);

/* direct_lowp.c: F16 and int8 depthwise (c_in/groups == 1); NHWC with depth multiplier 1. */
extern const dlc_impl_ops dlc_direct_lowp_dw_ops;
int dlc_direct_lowp_dw_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k);

#endif
