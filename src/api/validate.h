/* validate.h - every check a public entry point makes before touching data. Each failing check
   sets a message naming the field and its value and returns DLCONV_ERR_INVALID_ARG. */
#ifndef DLC_VALIDATE_H
#define DLC_VALIDATE_H

#include "../core/plan.h"

/* Descriptor -> normalised shape (also computes h_out, w_out and checks byte counts). */
dlconv_status dlc_validate_desc(const dlconv_conv2d_desc *d, dlc_conv_shape *s);
dlconv_status dlc_validate_options(const dlconv_options *o);
/* q must be NULL for F32/F16 and valid for U8/S8. */
dlconv_status dlc_validate_quant(const dlconv_quant *q, dlconv_dtype dtype, int64_t c_out);
dlconv_status dlc_validate_csr(const dlconv_csr *c, const dlc_conv_shape *s);
dlconv_status dlc_validate_clamp(float out_min, float out_max);

size_t dlc_dtype_size(dlconv_dtype t);
/* Element counts of x, w, y (validated not to overflow size_t in bytes). */
size_t dlc_x_elems(const dlc_conv_shape *s);
size_t dlc_w_elems(const dlc_conv_shape *s);
size_t dlc_y_elems(const dlc_conv_shape *s);

#endif
