/* f32_csr.h - the f32 csr micro-kernels (dlc_f32_csr_spmm_fn and the NHWC transpose,
 * src/ukernel/csr_ukernel.h), written once over the vector layer; an ISA's f32_csr_<isa>.c includes
 * its vec.h and then this file, which defines dlc_f32_csr__<isa>.
 *
 * Register tile: CSR_MR output rows x CSR_NV vectors of DLC_VL pixels. Each nonzero is broadcast
 * once and FMA'd into its row's NV accumulators, each taking its operand straight from memory.
 * Unstructured sparsity gives two rows no operand to share, so the tile grows along pixels only
 * as far as the operand panel (operand rows x NR pixels) stays mostly in L1; the MR rows run in
 * lockstep for the nonzeros they all have (MR*NV independent FMA chains for 2 FMA pipes x 4
 * cycles of latency) and one loop exit per MR rows. A row's nonzeros past the shortest row's
 * count run on its own, rows left over (rows % MR) run one by one, and the pixel remainder runs
 * the same tile with fewer vectors, the last one masked.
 *
 * Knobs (set before the include, else the default for DLC_VL), literal numbers:
 *   CSR_MR  rows in lockstep: 3 at DLC_VL 8 (12 accumulators + the broadcast weight of 16
 *           registers), 4 at DLC_VL 16 (16 accumulators of 32)
 *   CSR_NV  vectors of pixels per row (1..16): 4
 *   CSR_NR  pixels per full tile, CSR_NV * DLC_VL (a literal: the family's name says it) */
#include <stddef.h>
#include <stdint.h>

#include "../../ukernel/csr_ukernel.h"
#include "family.h"

#if DLC_VL == 8
#define CSR_DEFAULT_MR 3
#define CSR_DEFAULT_NR 32
#elif DLC_VL == 16
#define CSR_DEFAULT_MR 4
#define CSR_DEFAULT_NR 64
#endif
#ifndef CSR_MR
#define CSR_MR CSR_DEFAULT_MR
#endif
#ifndef CSR_NV
#define CSR_NV 4
#endif
#ifndef CSR_NR
#define CSR_NR CSR_DEFAULT_NR
#endif
_Static_assert(CSR_NR == CSR_NV * DLC_VL && CSR_NV >= 1 && CSR_NV <= 16, "CSR_NR: CSR_NV (1 to 16) vectors");

/* acc[0..nv) += w * x[0 .. VL*nv), the last vector masked by m when `masked`. */
INLINE void csr_fma_nonzero(const int nv, const int masked, vmask m, vf *acc, float w, const float *xr) {
  const vf wv = v_set1(w);
  UNROLL
  for (int v = 0; v < nv; v++) {
    const vf xv = masked && v == nv - 1 ? v_load_mask(xr + DLC_VL * v, m) : v_load(xr + DLC_VL * v);
    acc[v] = v_fma(wv, xv, acc[v]);
  }
}

/* The last vector, when `masked`, stores the lanes of tail. */
INLINE void csr_store_clamped(const int nv, const int masked, vtail tail, const vf *acc, float *y, vf lo, vf hi) {
  UNROLL
  for (int v = 0; v < nv; v++) {
    const vf o = v_clamp(acc[v], lo, hi);
    if (masked && v == nv - 1)
      v_store_tail(y + DLC_VL * v, tail, o);
    else
      v_store(y + DLC_VL * v, o);
  }
}

/* mr rows (their nnz, bias and y rows) x nv vectors; *val and *off advance past the rows. */
INLINE void csr_rows_tile(const int mr, const int nv, const int masked, vmask m, vtail tail, const float *x,
                          const int32_t *nnz, const float **val, const int32_t **off, const float *bias, float *y,
                          size_t ldy, vf lo, vf hi) {
  vf acc[CSR_MR][CSR_NV];
  const float *vr[CSR_MR];
  const int32_t *orow[CSR_MR];
  int32_t n[CSR_MR], common = nnz[0];
  UNROLL
  for (int q = 0; q < mr; q++) {
    const vf b = v_set1(bias[q]);
    UNROLL
    for (int v = 0; v < nv; v++) acc[q][v] = b;
    n[q] = nnz[q];
    vr[q] = *val;
    orow[q] = *off;
    *val += n[q];
    *off += n[q];
    common = n[q] < common ? n[q] : common;
  }
  for (int32_t i = 0; i < common; i++) {
    UNROLL
    for (int q = 0; q < mr; q++) csr_fma_nonzero(nv, masked, m, acc[q], vr[q][i], x + orow[q][i]);
  }
  UNROLL
  for (int q = 0; q < mr; q++) {
    for (int32_t i = common; i < n[q]; i++) csr_fma_nonzero(nv, masked, m, acc[q], vr[q][i], x + orow[q][i]);
    csr_store_clamped(nv, masked, tail, acc[q], y + (size_t)q * ldy, lo, hi);
  }
}

/* All rows over one column of nv vectors of pixels. */
INLINE void csr_column(const int nv, const int masked, vmask m, vtail tail, size_t rows, const float *x,
                       const int32_t *nnz, const float *val, const int32_t *off, const float *bias, float *y,
                       size_t ldy, vf lo, vf hi) {
  size_t r = 0;
  for (; r + CSR_MR <= rows; r += CSR_MR)
    csr_rows_tile(CSR_MR, nv, masked, m, tail, x, nnz + r, &val, &off, bias + r, y + r * ldy, ldy, lo, hi);
  for (; r < rows; r++)
    csr_rows_tile(1, nv, masked, m, tail, x, nnz + r, &val, &off, bias + r, y + r * ldy, ldy, lo, hi);
}

#define CSR_TAIL_CASE(unused, k)                                                            \
  case k: csr_column(k, 1, m, tail, rows, x, nnz, val, off, bias, y, ldy, vlo, vhi); break;

static void csr_spmm(size_t rows, size_t npix, const float *x, const int32_t *nnz, const float *val,
                     const int32_t *off, const float *bias, float *y, size_t ldy, float lo, float hi) {
  const vf vlo = v_set1(lo), vhi = v_set1(hi);
  size_t p = 0;
  for (; p + CSR_NR <= npix; p += CSR_NR)
    csr_column(CSR_NV, 0, v_first(0), v_tail(0), rows, x + p, nnz, val, off, bias, y + p, ldy, vlo, vhi);
  const size_t rem = npix - p;
  if (rem == 0) return;
  x += p;
  y += p;
  /* the pixels of the last vector */
  const ptrdiff_t last = (ptrdiff_t)((rem - 1) % DLC_VL) + 1;
  const vmask m = v_first(last);
  const vtail tail = v_tail(last);
  switch ((rem + DLC_VL - 1) / DLC_VL) {
    DLC_UPTO(CSR_NV, CSR_TAIL_CASE, )
    default: break;
  }
}

/* ---- transposition (NHWC) ---------------------------------------------------------------- */

/* Blocks of VL x VL through registers. Partial blocks load with a column mask (rows past the
   end read as zeros, never loaded) and store the first rows of each column; full blocks use
   plain moves. */
static void csr_transpose(size_t rows, size_t cols, const float *in, size_t ldi, float *out, size_t ldo) {
  for (size_t r0 = 0; r0 < rows; r0 += DLC_VL) {
    const size_t nr = rows - r0 < DLC_VL ? rows - r0 : DLC_VL;
    for (size_t c0 = 0; c0 < cols; c0 += DLC_VL) {
      const size_t nc = cols - c0 < DLC_VL ? cols - c0 : DLC_VL;
      vf v[DLC_VL];
      if (nr == DLC_VL && nc == DLC_VL) {
        UNROLL
        for (size_t i = 0; i < DLC_VL; i++) v[i] = v_load(in + (r0 + i) * ldi + c0);
        v_transpose(v);
        UNROLL
        for (size_t j = 0; j < DLC_VL; j++) v_store(out + (c0 + j) * ldo + r0, v[j]);
        continue;
      }
      const vmask mc = v_first((ptrdiff_t)nc);
      UNROLL
      for (size_t i = 0; i < DLC_VL; i++) v[i] = i < nr ? v_load_mask(in + (r0 + i) * ldi + c0, mc) : v_zero();
      v_transpose(v);
      const vtail tr = v_tail((ptrdiff_t)nr);
      for (size_t j = 0; j < nc; j++) v_store_tail(out + (c0 + j) * ldo + r0, tr, v[j]);
    }
  }
}

const dlc_f32_csr_family DLC_FAMILY_NAME(f32_csr) = {
    .name = "f32_csr_" DLC_STR(CSR_MR) "x" DLC_STR(CSR_NR) "__" DLC_ISA_STR,
    .nr = CSR_NR,
    .spmm = csr_spmm,
    .transpose = csr_transpose,
};
