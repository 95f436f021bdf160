/* int8 csr micro-kernel, generic C: the readable specification of dlc_q8_csr_spmm_fn
 * (src/sparse_csr/csr_ukernel.h). Rows one at a time over blocks of NR pixels, whose s32
 * accumulators stay in a local array the compiler can keep in vector registers. */
#include <stddef.h>
#include <stdint.h>

#include "../../ukernel/csr_ukernel.h"

#define NR 16

static void dlc_q8_csr_spmm__generic(size_t rows, size_t npix, const int16_t *x, const int32_t *nnz,
                                     const int16_t *val, const int32_t *off, int32_t *y, size_t ldy) {
  for (size_t r = 0; r < rows; r++) {
    const int32_t n = nnz[r];
    for (size_t p0 = 0; p0 < npix; p0 += NR) {
      const size_t np = npix - p0 < NR ? npix - p0 : NR;
      int32_t acc[NR] = {0};
      for (int32_t i = 0; i < n; i++) {
        const int32_t v = val[i];
        const int16_t *xr = x + off[i] + p0;
        for (size_t p = 0; p < np; p++) acc[p] += v * (int32_t)xr[p];
      }
      for (size_t p = 0; p < np; p++) y[r * ldy + p0 + p] = acc[p];
    }
    val += n;
    off += n;
  }
}

const dlc_q8_csr_family dlc_q8_csr__generic = {
    .name = "q8_csr_1x16__generic",
    .nr = NR,
    .spmm = dlc_q8_csr_spmm__generic,
};
