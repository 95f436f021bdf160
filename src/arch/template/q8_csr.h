/* q8_csr.h - the int8 csr micro-kernel (dlc_q8_csr_spmm_fn, src/ukernel/csr_ukernel.h), written
 * once over the vector layer; an ISA's q8_csr_<isa>.c includes its vec.h and then this file, which
 * defines dlc_q8_csr__<isa>.
 *
 * Register tile: Q8_CSR_MR rows x Q8_CSR_NV vectors of 2 DLC_VL s16 pixels. A pair of a row's
 * nonzeros reads two operand rows, interleaves them (vi_zip16_lo / _hi: pixel k's two values side
 * by side, in the ISA's zip order) and multiplies them by the broadcast value pair (vi2_dot2_s16:
 * two exact products and their sum per pixel), into s32 accumulators: 2 x NV per row. As in the
 * fp32 kernel (f32_csr.h) the rows run in lockstep over the pairs they all have, and one loop
 * exit per MR rows. The zip order is undone at the store (vi_zip16_in_order). Tails run the same
 * tile on one vector at a time, reading and writing up to the next 2 DLC_VL pixels (the contract
 * lets them: up to the next 16).
 *
 * Knobs (set before the include, else the default), literal numbers:
 *   Q8_CSR_ISA  the token naming the family (dlc_q8_csr__<it>): DLC_VEC_ISA; a VNNI family over
 *               the avx2 vec.h names itself
 *   Q8_CSR_MR   rows in lockstep: 3 (2 x NV x MR accumulators, x DLC_VI2_REGS registers each)
 *   Q8_CSR_NV   vectors of pixels per row: 2
 *   Q8_CSR_NR   pixels per full tile, 2 * DLC_VL * Q8_CSR_NV (the family's name says it): 32 at
 *               DLC_VL 8, 16 at DLC_VL 4 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../ukernel/csr_ukernel.h"
#include "family.h"

#ifndef Q8_CSR_ISA
#define Q8_CSR_ISA DLC_VEC_ISA
#endif
#ifndef Q8_CSR_MR
#define Q8_CSR_MR 3
#endif
#ifndef Q8_CSR_NV
#define Q8_CSR_NV 2
#endif
#ifndef Q8_CSR_NR
#if DLC_VL == 8
#define Q8_CSR_NR 32
#elif DLC_VL == 4
#define Q8_CSR_NR 16
#endif
#endif
_Static_assert(Q8_CSR_NR == 2 * DLC_VL * Q8_CSR_NV && Q8_CSR_NV >= 1 && Q8_CSR_NV <= 4,
               "Q8_CSR_NR: Q8_CSR_NV (1 to 4) vectors of 2 DLC_VL pixels");
_Static_assert(2 * DLC_VL <= 16, "a tail vector reads and writes up to the next 2 DLC_VL pixels; the contract allows 16");

/* acc[2v], acc[2v+1] += pair (val[0], val[1]) x interleaved rows x0, x1, for v < nv. */
INLINE void q8_csr_madd_pair(const int nv, vi2 *acc, const int16_t *val, const int16_t *x0, const int16_t *x1) {
  int32_t w;
  memcpy(&w, val, 4);
  const vi wv = vi_set1(w);
  UNROLL
  for (int v = 0; v < nv; v++) {
    const vi a = vi_load((const int32_t *)(const void *)(x0 + 2 * DLC_VL * v));
    const vi b = vi_load((const int32_t *)(const void *)(x1 + 2 * DLC_VL * v));
    acc[2 * v] = vi2_dot2_s16(acc[2 * v], vi_zip16_lo(a, b), wv);
    acc[2 * v + 1] = vi2_dot2_s16(acc[2 * v + 1], vi_zip16_hi(a, b), wv);
  }
}

INLINE void q8_csr_store_row(const int nv, const vi2 *acc, int32_t *y) {
  UNROLL
  for (int v = 0; v < nv; v++) {
    const vi lo = vi2_sum(acc[2 * v]), hi = vi2_sum(acc[2 * v + 1]);
    vi_store(y + 2 * DLC_VL * v, vi_zip16_in_order(lo, hi, 0));
    vi_store(y + 2 * DLC_VL * v + DLC_VL, vi_zip16_in_order(lo, hi, 1));
  }
}

/* mr rows x nv vectors; *val and *off advance past the rows. */
INLINE void q8_csr_rows_tile(const int mr, const int nv, const int16_t *x, const int32_t *nnz, const int16_t **val,
                             const int32_t **off, int32_t *y, size_t ldy) {
  vi2 acc[Q8_CSR_MR][2 * Q8_CSR_NV];
  const int16_t *vr[Q8_CSR_MR];
  const int32_t *orow[Q8_CSR_MR];
  int32_t n[Q8_CSR_MR], common = nnz[0];
  UNROLL
  for (int q = 0; q < mr; q++) {
    UNROLL
    for (int v = 0; v < 2 * nv; v++) acc[q][v] = vi2_zero();
    n[q] = nnz[q];
    vr[q] = *val;
    orow[q] = *off;
    *val += n[q];
    *off += n[q];
    common = n[q] < common ? n[q] : common;
  }
  for (int32_t i = 0; i < common; i += 2) {
    UNROLL
    for (int q = 0; q < mr; q++) q8_csr_madd_pair(nv, acc[q], vr[q] + i, x + orow[q][i], x + orow[q][i + 1]);
  }
  UNROLL
  for (int q = 0; q < mr; q++) {
    for (int32_t i = common; i < n[q]; i += 2) q8_csr_madd_pair(nv, acc[q], vr[q] + i, x + orow[q][i], x + orow[q][i + 1]);
    q8_csr_store_row(nv, acc[q], y + (size_t)q * ldy);
  }
}

INLINE void q8_csr_column(const int nv, size_t rows, const int16_t *x, const int32_t *nnz, const int16_t *val,
                          const int32_t *off, int32_t *y, size_t ldy) {
  size_t r = 0;
  for (; r + Q8_CSR_MR <= rows; r += Q8_CSR_MR) q8_csr_rows_tile(Q8_CSR_MR, nv, x, nnz + r, &val, &off, y + r * ldy, ldy);
  for (; r < rows; r++) q8_csr_rows_tile(1, nv, x, nnz + r, &val, &off, y + r * ldy, ldy);
}

#define Q8_CSR_SPMM \
  DLC_CAT(DLC_CAT(DLC_CAT(q8_csr_spmm_, Q8_CSR_MR), DLC_CAT(x, Q8_CSR_NR)), DLC_CAT(c2__, Q8_CSR_ISA))
static void Q8_CSR_SPMM(size_t rows, size_t npix, const int16_t *x, const int32_t *nnz, const int16_t *val,
                        const int32_t *off, int32_t *y, size_t ldy) {
  size_t p = 0;
  for (; p + Q8_CSR_NR <= npix; p += Q8_CSR_NR) q8_csr_column(Q8_CSR_NV, rows, x + p, nnz, val, off, y + p, ldy);
  for (; p < npix; p += 2 * DLC_VL) q8_csr_column(1, rows, x + p, nnz, val, off, y + p, ldy);
}

const dlc_q8_csr_family DLC_CAT(dlc_q8_csr__, Q8_CSR_ISA) = {
    .name = "q8_csr_" DLC_STR(Q8_CSR_MR) "x" DLC_STR(Q8_CSR_NR) "c2__" DLC_STR(Q8_CSR_ISA),
    .nr = Q8_CSR_NR,
    .spmm = Q8_CSR_SPMM,
};
