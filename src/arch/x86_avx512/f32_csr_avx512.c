/* f32 csr micro-kernels, avx512: dlc_f32_csr_spmm_fn (src/sparse_csr/csr_ukernel.h).
 *
 * Register tile: MR = 4 output rows x NV = 4 zmm of 16 pixels, 16 accumulators. Each nonzero is
 * broadcast once and FMA'd into its row's NV accumulators, each taking its operand straight from
 * memory. Unstructured sparsity gives two rows no operand to share, so the tile grows along
 * pixels only as far as the operand panel (operand rows x NR pixels) stays mostly in L1; the
 * four rows run in lockstep for the nonzeros they all have, giving 16 independent FMA chains
 * (2 FMA pipes x 4 cycles of latency, with room) and one loop exit per four rows. A row's
 * nonzeros past the shortest row's count run on its own. Rows left over (rows % 4) run one by
 * one; the pixel remainder runs the same tile with fewer vectors, the last one masked. */
#include <immintrin.h>

#include "../../ukernel/csr_ukernel.h"

#define MR 4            /* rows in lockstep */
#define NV 4            /* vectors of 16 pixels per row */
#define NR (16 * NV)    /* pixels per full tile */

#define AI static inline __attribute__((always_inline))

/* acc[0..nv) += w * x[0 .. 16*nv), the last vector masked by m when `masked`. */
AI void fma_nonzero(const int nv, const int masked, __mmask16 m, __m512 *acc, float w,
                    const float *xr) {
  const __m512 wv = _mm512_set1_ps(w);
#pragma GCC unroll 16
  for (int v = 0; v < nv; v++) {
    const __m512 xv = masked && v == nv - 1 ? _mm512_maskz_loadu_ps(m, xr + 16 * v)
                                            : _mm512_loadu_ps(xr + 16 * v);
    acc[v] = _mm512_fmadd_ps(wv, xv, acc[v]);
  }
}

AI void store_clamped(const int nv, const int masked, __mmask16 m, const __m512 *acc, float *y,
                      __m512 lo, __m512 hi) {
#pragma GCC unroll 16
  for (int v = 0; v < nv; v++) {
    /* Bound first: max/min return the second operand when one is NaN, so NaN survives. */
    const __m512 o = _mm512_min_ps(hi, _mm512_max_ps(lo, acc[v]));
    if (masked && v == nv - 1)
      _mm512_mask_storeu_ps(y + 16 * v, m, o);
    else
      _mm512_storeu_ps(y + 16 * v, o);
  }
}

/* mr rows (their nnz, bias and y rows) x nv vectors; *val and *off advance past the rows. */
AI void rows_tile(const int mr, const int nv, const int masked, __mmask16 m, const float *x,
                  const int32_t *nnz, const float **val, const int32_t **off, const float *bias,
                  float *y, size_t ldy, __m512 lo, __m512 hi) {
  __m512 acc[MR][NV];
  const float *vr[MR];
  const int32_t *orow[MR];
  int32_t n[MR], common = nnz[0];
#pragma GCC unroll 8
  for (int q = 0; q < mr; q++) {
    const __m512 b = _mm512_set1_ps(bias[q]);
#pragma GCC unroll 16
    for (int v = 0; v < nv; v++) acc[q][v] = b;
    n[q] = nnz[q];
    vr[q] = *val;
    orow[q] = *off;
    *val += n[q];
    *off += n[q];
    common = n[q] < common ? n[q] : common;
  }
  for (int32_t i = 0; i < common; i++) {
#pragma GCC unroll 8
    for (int q = 0; q < mr; q++) fma_nonzero(nv, masked, m, acc[q], vr[q][i], x + orow[q][i]);
  }
#pragma GCC unroll 8
  for (int q = 0; q < mr; q++) {
    for (int32_t i = common; i < n[q]; i++) fma_nonzero(nv, masked, m, acc[q], vr[q][i], x + orow[q][i]);
    store_clamped(nv, masked, m, acc[q], y + (size_t)q * ldy, lo, hi);
  }
}

/* All rows over one column of nv vectors of pixels. */
AI void spmm_column(const int nv, const int masked, __mmask16 m, size_t rows, const float *x,
                    const int32_t *nnz, const float *val, const int32_t *off, const float *bias,
                    float *y, size_t ldy, __m512 lo, __m512 hi) {
  size_t r = 0;
  for (; r + MR <= rows; r += MR)
    rows_tile(MR, nv, masked, m, x, nnz + r, &val, &off, bias + r, y + r * ldy, ldy, lo, hi);
  for (; r < rows; r++)
    rows_tile(1, nv, masked, m, x, nnz + r, &val, &off, bias + r, y + r * ldy, ldy, lo, hi);
}

#define TAIL_CASE(k) \
  case k: spmm_column(k, 1, m, rows, x, nnz, val, off, bias, y, ldy, vlo, vhi); break;

static void dlc_f32_csr_spmm_4x64__avx512(size_t rows, size_t npix, const float *x,
                                          const int32_t *nnz, const float *val,
                                          const int32_t *off, const float *bias, float *y,
                                          size_t ldy, float lo, float hi) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  size_t p = 0;
  for (; p + NR <= npix; p += NR)
    spmm_column(NV, 0, 0, rows, x + p, nnz, val, off, bias, y + p, ldy, vlo, vhi);
  const size_t rem = npix - p;
  if (rem == 0) return;
  x += p;
  y += p;
  const __mmask16 m = (__mmask16)(0xFFFFu >> ((16 - rem % 16) % 16));
  _Static_assert(NV == 4, "one TAIL_CASE per vector count below NV + 1");
  switch ((rem + 15) / 16) {
    TAIL_CASE(1)
    TAIL_CASE(2)
    TAIL_CASE(3)
    TAIL_CASE(4)
    default: break;
  }
}

/* ---- transposition (NHWC) ---------------------------------------------------------------- */

/* r[i] <- column i of the 16x16 block r: unpack pairs, then 2x2 of pairs, then 128-bit lanes
   in two steps. */
AI void transpose16x16(__m512 *r) {
  __m512 t[16];
#pragma GCC unroll 8
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
#pragma GCC unroll 4
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
#pragma GCC unroll 4
  for (int i = 0; i < 4; i++) {
    t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xdd);
    t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xdd);
  }
#pragma GCC unroll 8
  for (int i = 0; i < 8; i++) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
  }
}

/* Blocks of 16 x 16 through registers; partial blocks load with a column mask (rows past the
   end read as zeros, never loaded) and store with a row mask. */
static void dlc_f32_transpose_16x16__avx512(size_t rows, size_t cols, const float *in, size_t ldi,
                                            float *out, size_t ldo) {
  for (size_t r0 = 0; r0 < rows; r0 += 16) {
    const size_t nr = rows - r0 < 16 ? rows - r0 : 16;
    const __mmask16 mr = (__mmask16)(0xFFFFu >> (16 - nr));
    for (size_t c0 = 0; c0 < cols; c0 += 16) {
      const size_t nc = cols - c0 < 16 ? cols - c0 : 16;
      const __mmask16 mc = (__mmask16)(0xFFFFu >> (16 - nc));
      __m512 v[16];
#pragma GCC unroll 16
      for (size_t i = 0; i < 16; i++)
        v[i] = i < nr ? _mm512_maskz_loadu_ps(mc, in + (r0 + i) * ldi + c0) : _mm512_setzero_ps();
      transpose16x16(v);
      for (size_t j = 0; j < nc; j++) _mm512_mask_storeu_ps(out + (c0 + j) * ldo + r0, mr, v[j]);
    }
  }
}

const dlc_f32_csr_family dlc_f32_csr__avx512 = {
    .name = "f32_csr_4x64__avx512",
    .nr = NR,
    .spmm = dlc_f32_csr_spmm_4x64__avx512,
    .transpose = dlc_f32_transpose_16x16__avx512,
};
