/* csr_ukernel.h - the micro-kernel interface of the sparse_csr algorithm.
 *
 * One dlc_f32_csr_family per ISA (dlc_f32_csr__generic in src/arch/generic/, __avx2, __avx512,
 * ...): function pointers plus the register-block shapes the driver blocks its loops by.
 * The driver receives it through the kernel table (core/kernels.h) and never includes arch code.
 *
 * The kernel is a sparse x dense product vectorised over output pixels (as XNNPACK's SpMM and
 * Elsen et al., "Fast Sparse ConvNets"): one nonzero weight is broadcast and multiplied into a
 * row of pixels of the dense operand, so a zero weight costs nothing and every FMA is a full
 * vector whatever the sparsity pattern. */
#ifndef DLC_CSR_UKERNEL_H
#define DLC_CSR_UKERNEL_H

#include <stddef.h>
#include <stdint.h>

/* For r < rows and p < npix:
 *   y[r*ldy + p] = clamp(bias[r] + sum_{i < nnz[r]} val[i] * x[off[i] + p], lo, hi)
 * where val and off run through the nonzeros of all rows, row after row (row r's nonzeros follow
 * row r-1's). x is the dense operand: row k (a (channel, tap) of the filter) holds the input
 * values the output pixels see at that tap; off[i] is the element offset of nonzero i's row,
 * precomputed at plan time, so the kernel never multiplies an index. Loads of x stay within
 * [x + off[i], x + off[i] + npix): x may be the caller's tensor, nothing is read past it.
 * The clamp lets NaN through (max(lo, v) then min(hi, v), bound first). */
typedef void (*dlc_f32_csr_spmm_fn)(size_t rows, size_t npix, const float *x,
                                    const int32_t *nnz, const float *val, const int32_t *off,
                                    const float *bias, float *y, size_t ldy, float lo, float hi);

/* out[c*ldo + r] = in[r*ldi + c] for r < rows, c < cols. NHWC data is pixel-major where the
 * kernel works channel-major: this turns the input's pixels x channels into operand rows, and
 * the kernel's output rows into pixels x channels. */
typedef void (*dlc_f32_transpose_fn)(size_t rows, size_t cols, const float *in, size_t ldi,
                                     float *out, size_t ldo);

typedef struct dlc_f32_csr_family {
  const char *name;   /* micro-kernel and tile for dlconv_plan_info.kernel, e.g. "f32_csr_4x64__avx512" */
  size_t nr;          /* pixels of the full register tile: the driver blocks pixels by multiples of it */
  dlc_f32_csr_spmm_fn spmm;
  dlc_f32_transpose_fn transpose;
} dlc_f32_csr_family;

#endif
