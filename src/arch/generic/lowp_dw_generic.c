/* Depthwise F16 / int8 row kernels, generic: the readable specification of
 * src/direct/lowp_dw_ukernel.h and the fallback on any CPU. */
#include <stddef.h>

#include "../../ukernel/config.h"

static void f16_row(size_t n, const uint16_t *x, size_t stride, float w, float *acc) {
  for (size_t j = 0; j < n; j++) acc[j] += dlc_f16_to_f32(x[j * stride]) * w;
}

static void q8_row(size_t n, const void *x, size_t stride, int32_t w, int32_t zp, int is_signed, int32_t *acc) {
  if (is_signed) {
    const int8_t *p = x;
    for (size_t j = 0; j < n; j++) acc[j] += ((int32_t)p[j * stride] - zp) * w;
  } else {
    const uint8_t *p = x;
    for (size_t j = 0; j < n; j++) acc[j] += ((int32_t)p[j * stride] - zp) * w;
  }
}

static void f16_ch(size_t n, const uint16_t *x, const float *w, float *acc) {
  for (size_t j = 0; j < n; j++) acc[j] += dlc_f16_to_f32(x[j]) * w[j];
}

static void q8_ch(size_t n, const void *x, const int32_t *w, int32_t zp, int is_signed, int32_t *acc) {
  if (is_signed) {
    const int8_t *p = x;
    for (size_t j = 0; j < n; j++) acc[j] += ((int32_t)p[j] - zp) * w[j];
  } else {
    const uint8_t *p = x;
    for (size_t j = 0; j < n; j++) acc[j] += ((int32_t)p[j] - zp) * w[j];
  }
}

static void f16_widen(size_t n, const uint16_t *x, float *dst) {
  for (size_t j = 0; j < n; j++) dst[j] = dlc_f16_to_f32(x[j]);
}

static void q8_widen(size_t n, const void *x, int32_t zp, int is_signed, float *dst) {
  if (is_signed) {
    const int8_t *p = x;
    for (size_t j = 0; j < n; j++) dst[j] = (float)((int32_t)p[j] - zp);
  } else {
    const uint8_t *p = x;
    for (size_t j = 0; j < n; j++) dst[j] = (float)((int32_t)p[j] - zp);
  }
}

const dlc_lowp_dw_family dlc_lowp_dw__generic = {
    .f16_name = "f16_dwconv_row__generic",
    .q8_name = "q8_dwconv_row__generic",
    .f16_row = f16_row,
    .q8_row = q8_row,
    .f16_ch = f16_ch,
    .q8_ch = q8_ch,
    .f16_widen = f16_widen,
    .q8_widen = q8_widen,
};
