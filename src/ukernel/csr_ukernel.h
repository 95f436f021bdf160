/* csr_ukernel.h - the micro-kernel interface of the sparse_csr algorithm.
 *
 * One dlc_f32_csr_family per ISA (dlc_f32_csr__generic in src/arch/generic/, __avx2, __avx512,
 * ...): function pointers plus the register-block shapes the driver blocks its loops by.
 * The driver receives it through the kernel table (ukernel/config.h) and never includes arch code.
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

/* int8 (sparse_csr for U8/S8, src/sparse_csr/csr.c): the same product in exact s32, with the
 * operand x as s16 (x - x_zero_point, 0 on padding) and each row's nonzeros taken in pairs, so
 * that one vpmaddwd / smlal step multiplies two of them into a pixel's accumulator. For r < rows,
 * p < npix:
 *   y[r*ldy + p] = sum_{i < nnz[r]} val[i] * x[off[i] + p]
 * where nnz[r] is even (the plan pads a row with a zero value at a valid offset), val holds s8
 * values as s16 and off element offsets, both running through all rows as for fp32. A pair's
 * values val[2k], val[2k + 1] are adjacent (one 32-bit broadcast). The kernel may read x up to
 * x + off[i] + round_up(npix, 16) and write y up to y + r*ldy + round_up(npix, 16): the driver
 * pads its operand and tile buffers for that (the extra lanes are junk and never stored). Bias,
 * requantisation and the output layout are the driver's, through the q8 GEMM family's store. */
typedef void (*dlc_q8_csr_spmm_fn)(size_t rows, size_t npix, const int16_t *x, const int32_t *nnz,
                                   const int16_t *val, const int32_t *off, int32_t *y, size_t ldy);

typedef struct dlc_q8_csr_family {
  const char *name;   /* e.g. "q8_csr_3x32c2__avx2" */
  size_t nr;          /* pixels of the full register tile */
  dlc_q8_csr_spmm_fn spmm;
} dlc_q8_csr_family;

#endif
