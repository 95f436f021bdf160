/* Dense weights as CSR (csr_build.h). */
#include "csr_build.h"

#include <string.h>

void csr_shuffle_row(int32_t *cols, float *vals, int32_t n, uint32_t (*below)(void *src, uint32_t m), void *src) {
  for (int32_t i = n - 1; i > 0; i--) {
    const int32_t j = (int32_t)below(src, (uint32_t)i + 1);
    const int32_t tc = cols[i];
    const float tv = vals[i];
    cols[i] = cols[j], vals[i] = vals[j];
    cols[j] = tc, vals[j] = tv;
  }
}

int32_t csr_from_dense(const float *w, int32_t rows, int32_t cols, int zeros_every3, int32_t *rowptr, int32_t *colidx,
                       float *vals, dlconv_csr *csr, uint32_t (*below)(void *src, uint32_t m), void *src) {
  int32_t k = 0;
  rowptr[0] = 0;
  for (int32_t o = 0; o < rows; o++) {
    const int32_t start = k;
    for (int32_t j = 0; j < cols; j++) {
      float v;
      memcpy(&v, &w[(size_t)o * (size_t)cols + (size_t)j], sizeof v);
      if (v != 0.0f || (zeros_every3 && j % 3 == 0)) colidx[k] = j, vals[k] = v, k++;
    }
    csr_shuffle_row(colidx + start, vals + start, k - start, below, src);
    rowptr[o + 1] = k;
  }
  *csr = (dlconv_csr){rows, cols, k, vals, colidx, rowptr};
  return k;
}
