/* weights.h - the caller's weights as planning sees them: dense, or CSR densified on demand. */
#ifndef DLC_WEIGHTS_H
#define DLC_WEIGHTS_H

#include <stddef.h>

#include "../core/plan.h"

typedef struct dlc_weights {
  const void *dense;        /* caller's dense weights, or densified CSR (owned when owned != NULL) */
  void *owned;
  const dlconv_csr *csr;    /* caller's CSR, or NULL */
} dlc_weights;

/* Bytes of one weight of a conv of dtype (S8 for U8/S8). */
size_t dlc_weight_elem_size(dlconv_dtype dtype);
/* Dense OIHW weights from a validated CSR of es-byte values; NULL when out of memory. */
void *dlc_densify(const dlconv_csr *c, const dlc_conv_shape *s, size_t es);
/* Fraction of nonzero weights (the CSR's nnz as given, else counted in the dense weights). */
double dlc_weights_density(const dlc_weights *w, const dlc_conv_shape *s, dlconv_dtype dtype);

#endif
