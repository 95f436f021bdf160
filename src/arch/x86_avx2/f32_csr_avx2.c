/* f32 csr micro-kernels, avx2: dlc_f32_csr_spmm_fn (src/sparse_csr/csr_ukernel.h).
 *
 * Register tile: MR = 3 output rows x NV = 4 ymm of 8 pixels, 12 accumulators (of 16 registers:
 * one more holds the broadcast weight). Same scheme as the avx512 kernel: each nonzero is
 * broadcast once and FMA'd into its row's NV accumulators straight from memory; the three rows
 * run in lockstep for the nonzeros they all have (12 independent FMA chains for 2 pipes x 4
 * cycles), a row's extra nonzeros run on its own, rows left over run one by one, and the pixel
 * remainder runs the same tile with fewer vectors, the last one masked (vmaskmov). */
#include <immintrin.h>

#include "../../ukernel/csr_ukernel.h"
#include "avx2_store.h"
#include "avx2_transpose.h"

#define MR 3            /* rows in lockstep */
#define NV 4            /* vectors of 8 pixels per row */
#define NR (8 * NV)     /* pixels per full tile */

#define AI static inline __attribute__((always_inline))

/* acc[0..nv) += w * x[0 .. 8*nv), the last vector masked by m when `masked`. */
AI void fma_nonzero(const int nv, const int masked, __m256i m, __m256 *acc, float w, const float *xr) {
  const __m256 wv = _mm256_set1_ps(w);
#pragma GCC unroll 16
  for (int v = 0; v < nv; v++) {
    const __m256 xv = masked && v == nv - 1 ? _mm256_maskload_ps(xr + 8 * v, m) : _mm256_loadu_ps(xr + 8 * v);
    acc[v] = _mm256_fmadd_ps(wv, xv, acc[v]);
  }
}

AI void store_clamped(const int nv, const int masked, __m256i m, const __m256 *acc, float *y,
                      float lo, float hi) {
  const __m256 vlo = _mm256_set1_ps(lo), vhi = _mm256_set1_ps(hi);
#pragma GCC unroll 16
  for (int v = 0; v < nv; v++) {
    /* Bound first: max/min return the second operand when one is NaN, so NaN survives. */
    const __m256 o = _mm256_min_ps(vhi, _mm256_max_ps(vlo, acc[v]));
    if (masked && v == nv - 1) /* no vmaskmovps (avx2_store.h) */
      dlc_avx2_store_first(y + 8 * v, __builtin_popcount((unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(m))), o);
    else
      _mm256_storeu_ps(y + 8 * v, o);
  }
}

/* mr rows (their nnz, bias and y rows) x nv vectors; *val and *off advance past the rows. */
AI void rows_tile(const int mr, const int nv, const int masked, __m256i m, const float *x,
                  const int32_t *nnz, const float **val, const int32_t **off, const float *bias,
                  float *y, size_t ldy, float lo, float hi) {
  __m256 acc[MR][NV];
  const float *vr[MR];
  const int32_t *orow[MR];
  int32_t n[MR], common = nnz[0];
#pragma GCC unroll 8
  for (int q = 0; q < mr; q++) {
    const __m256 b = _mm256_set1_ps(bias[q]);
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
AI void spmm_column(const int nv, const int masked, __m256i m, size_t rows, const float *x,
                    const int32_t *nnz, const float *val, const int32_t *off, const float *bias,
                    float *y, size_t ldy, float lo, float hi) {
  size_t r = 0;
  for (; r + MR <= rows; r += MR)
    rows_tile(MR, nv, masked, m, x, nnz + r, &val, &off, bias + r, y + r * ldy, ldy, lo, hi);
  for (; r < rows; r++)
    rows_tile(1, nv, masked, m, x, nnz + r, &val, &off, bias + r, y + r * ldy, ldy, lo, hi);
}

#define TAIL_CASE(k) \
  case k: spmm_column(k, 1, m, rows, x, nnz, val, off, bias, y, ldy, lo, hi); break;

static void dlc_f32_csr_spmm_3x32__avx2(size_t rows, size_t npix, const float *x,
                                        const int32_t *nnz, const float *val, const int32_t *off,
                                        const float *bias, float *y, size_t ldy, float lo,
                                        float hi) {
  size_t p = 0;
  for (; p + NR <= npix; p += NR)
    spmm_column(NV, 0, _mm256_setzero_si256(), rows, x + p, nnz, val, off, bias, y + p, ldy, lo, hi);
  const size_t rem = npix - p;
  if (rem == 0) return;
  x += p;
  y += p;
  /* Lanes below the pixel count of the last vector. */
  const int last = (int)((rem - 1) % 8) + 1;
  const __m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(last), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  _Static_assert(NV == 4, "one TAIL_CASE per vector count below NV + 1");
  switch ((rem + 7) / 8) {
    TAIL_CASE(1)
    TAIL_CASE(2)
    TAIL_CASE(3)
    TAIL_CASE(4)
    default: break;
  }
}

/* ---- transposition (NHWC) ---------------------------------------------------------------- */

/* Lanes below n (1..8). */
AI __m256i lanes_below(size_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Blocks of 8 x 8 through registers. Partial blocks load with a column mask (rows past the
   end read as zeros, never loaded) and store with a row mask; full blocks use plain moves,
   since vmaskmovps stores are microcoded and slow on AMD cores. */
static void dlc_f32_transpose_8x8__avx2(size_t rows, size_t cols, const float *in, size_t ldi,
                                        float *out, size_t ldo) {
  for (size_t r0 = 0; r0 < rows; r0 += 8) {
    const size_t nr = rows - r0 < 8 ? rows - r0 : 8;
    for (size_t c0 = 0; c0 < cols; c0 += 8) {
      const size_t nc = cols - c0 < 8 ? cols - c0 : 8;
      __m256 v[8];
      if (nr == 8 && nc == 8) {
#pragma GCC unroll 8
        for (size_t i = 0; i < 8; i++) v[i] = _mm256_loadu_ps(in + (r0 + i) * ldi + c0);
        dlc_avx2_transpose8(v);
#pragma GCC unroll 8
        for (size_t j = 0; j < 8; j++) _mm256_storeu_ps(out + (c0 + j) * ldo + r0, v[j]);
        continue;
      }
      const __m256i mc = lanes_below(nc);
#pragma GCC unroll 8
      for (size_t i = 0; i < 8; i++)
        v[i] = i < nr ? _mm256_maskload_ps(in + (r0 + i) * ldi + c0, mc) : _mm256_setzero_ps();
      dlc_avx2_transpose8(v);
      for (size_t j = 0; j < nc; j++) dlc_avx2_store_first(out + (c0 + j) * ldo + r0, (ptrdiff_t)nr, v[j]);
    }
  }
}

const dlc_f32_csr_family dlc_f32_csr__avx2 = {
    .name = "f32_csr_3x32__avx2",
    .nr = NR,
    .spmm = dlc_f32_csr_spmm_3x32__avx2,
    .transpose = dlc_f32_transpose_8x8__avx2,
};
