/* f32 csr micro-kernels, generic: the readable specification of dlc_f32_csr_spmm_fn
 * (src/sparse_csr/csr_ukernel.h). A tile is one output row x NR pixels. */
#include "../../ukernel/csr_ukernel.h"

#define NR 32

/* GCC's unroll-and-jam (-O3) fuses two nonzeros per iteration and leaves the tile loop scalar,
   with the accumulators in memory: 5x slower. */
#if defined(__GNUC__) && !defined(__clang__)
#define KEEP_TILE_VECTOR __attribute__((optimize("no-loop-unroll-and-jam")))
#else
#define KEEP_TILE_VECTOR
#endif

static inline float clampf(float v, float lo, float hi) {
  v = v < lo ? lo : v;   /* comparisons, not fmaxf: a NaN stays NaN */
  return v > hi ? hi : v;
}

/* One row over NR pixels: the fixed-size loops over the tile become vector code with the
   accumulators in registers. */
KEEP_TILE_VECTOR static inline void row_full(int32_t n, const float *restrict val, const int32_t *restrict off,
                            const float *restrict x, float b, float *restrict y, float lo, float hi) {
  float acc[NR];
  for (int j = 0; j < NR; j++) acc[j] = b;
  for (int32_t i = 0; i < n; i++) {
    const float w = val[i];
    const float *restrict xr = x + off[i];
    for (int j = 0; j < NR; j++) acc[j] += w * xr[j];
  }
  for (int j = 0; j < NR; j++) y[j] = clampf(acc[j], lo, hi);
}

/* One row over np < NR pixels (the pixel remainder). */
KEEP_TILE_VECTOR static inline void row_part(size_t np, int32_t n, const float *restrict val, const int32_t *restrict off,
                            const float *restrict x, float b, float *restrict y, float lo, float hi) {
  float acc[NR];
  for (size_t j = 0; j < np; j++) acc[j] = b;
  for (int32_t i = 0; i < n; i++) {
    const float w = val[i];
    const float *restrict xr = x + off[i];
    for (size_t j = 0; j < np; j++) acc[j] += w * xr[j];
  }
  for (size_t j = 0; j < np; j++) y[j] = clampf(acc[j], lo, hi);
}

KEEP_TILE_VECTOR static void dlc_f32_csr_spmm_1x32__generic(size_t rows, size_t npix, const float *x,
                                           const int32_t *nnz, const float *val,
                                           const int32_t *off, const float *bias, float *y,
                                           size_t ldy, float lo, float hi) {
  size_t p = 0;
  for (; p + NR <= npix; p += NR) {
    const float *v = val;
    const int32_t *o = off;
    for (size_t r = 0; r < rows; r++) {
      row_full(nnz[r], v, o, x + p, bias[r], y + r * ldy + p, lo, hi);
      v += nnz[r];
      o += nnz[r];
    }
  }
  if (p < npix) {
    for (size_t r = 0; r < rows; r++) {
      row_part(npix - p, nnz[r], val, off, x + p, bias[r], y + r * ldy + p, lo, hi);
      val += nnz[r];
      off += nnz[r];
    }
  }
}

/* Blocks of TB x TB so that both the rows read and the rows written stay in L1. */
#define TB 16
static void dlc_f32_transpose__generic(size_t rows, size_t cols, const float *restrict in, size_t ldi,
                                       float *restrict out, size_t ldo) {
  for (size_t r0 = 0; r0 < rows; r0 += TB) {
    const size_t re = r0 + TB < rows ? r0 + TB : rows;
    for (size_t c0 = 0; c0 < cols; c0 += TB) {
      const size_t ce = c0 + TB < cols ? c0 + TB : cols;
      for (size_t c = c0; c < ce; c++)
        for (size_t r = r0; r < re; r++) out[c * ldo + r] = in[r * ldi + c];
    }
  }
}

const dlc_f32_csr_family dlc_f32_csr__generic = {
    .name = "f32_csr_1x32__generic",
    .nr = NR,
    .spmm = dlc_f32_csr_spmm_1x32__generic,
    .transpose = dlc_f32_transpose__generic,
};
