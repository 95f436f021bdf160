/* The caller's weights: densifying a CSR (for the implementations that plan from dense weights,
   and every F16 / int8 one) and counting their density (for AUTO's sparse_csr rule). */
#include "weights.h"

#include <string.h>

#include "../core/util.h"
#include "validate.h"

size_t dlc_weight_elem_size(dlconv_dtype dtype) { return dtype == DLCONV_F32 ? 4 : dtype == DLCONV_F16 ? 2 : 1; }

void *dlc_densify(const dlconv_csr *c, const dlc_conv_shape *s, size_t es) {
  size_t cols = (size_t)(s->cin_g * s->k_h * s->k_w);
  char *w = dlc_calloc(dlc_w_elems(s) * es);
  if (!w) return NULL;
  const char *v = c->values;
  for (int32_t r = 0; r < c->rows; r++)
    for (int32_t i = c->row_ptr[r]; i < c->row_ptr[r + 1]; i++)
      memcpy(w + ((size_t)r * cols + (size_t)c->col_indices[i]) * es, v + (size_t)i * es, es);
  return w;
}

static double density_of(const float *w, size_t n) {
  size_t nz = 0;
  for (size_t i = 0; i < n; i++) nz += w[i] != 0.0f;
  return n ? (double)nz / (double)n : 1.0;
}

/* F16 (either zero) or S8 weights. */
static double density_lowp(const void *w, size_t n, int q8) {
  size_t nz = 0;
  for (size_t i = 0; i < n; i++) nz += q8 ? ((const int8_t *)w)[i] != 0 : (((const uint16_t *)w)[i] & 0x7fffu) != 0;
  return n ? (double)nz / (double)n : 1.0;
}

double dlc_weights_density(const dlc_weights *w, const dlc_conv_shape *s, dlconv_dtype dtype) {
  const size_t n = dlc_w_elems(s);
  if (dtype != DLCONV_F32) return density_lowp(w->dense, n, dtype != DLCONV_F16);
  return w->csr ? (double)w->csr->nnz / (double)n : density_of(w->dense, n);
}
