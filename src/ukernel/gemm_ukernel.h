/* gemm_ukernel.h - the micro-kernel interface of the gemm_im2col algorithm.
 *
 * One dlc_f32_gemm_family per ISA (dlc_f32_gemm__generic in src/arch/generic/, __avx2, __avx512,
 * ...): function pointers plus the register-block shapes the driver blocks its loops by.
 * The driver receives it through the kernel table (ukernel/config.h) and never includes arch code.
 *
 * The micro-kernel computes one register tile C[m x n] (m <= mr, n <= nr) of C = A * B:
 *   A: a packed micro-panel of kc x mr floats, k-major: element (i, k) at a[k * mr + i];
 *   B: a packed micro-panel of kc x nr floats, k-major: element (k, j) at b[k * nr + j];
 *   C: row-major, unit column stride, row stride ldc (floats).
 * Rows i >= m of A and columns j >= n of B must be readable (the driver zero-pads the packed
 * panels to full mr/nr) but only the m x n corner of C is read or written, so a tile can sit at
 * the bottom-right edge of the output without touching a float past it.
 *
 * The driver blocks K in chunks of kc: every chunk but the first accumulates into C, and the
 * last one applies the epilogue (bias, then the clamp) in registers before its store, so C is
 * written exactly once with its final value when K fits one chunk. */
#ifndef DLC_GEMM_UKERNEL_H
#define DLC_GEMM_UKERNEL_H

#include <stddef.h>
#include <stdint.h>

/* What the last K chunk does to the accumulated tile before storing it:
 *   c[i][j] = clamp(c[i][j] + bias[i or j], out_min, out_max)
 * NaN in c survives the clamp (the bound is the first operand of max/min). */
typedef struct dlc_f32_gemm_epilogue {
  const float *bias;    /* NULL: no bias; else the tile's m (per row) or n (per column) values */
  int bias_per_column;  /* 0: bias[i] per row (NCHW: rows are channels); 1: bias[j] per column (NHWC) */
  float out_min, out_max;
  /* Families with f16_out only (NULL elsewhere): the finished tile to yh[i * ldyh + j] rounded to
     binary16 (nearest even, as the F16 stores), C not written; ukernel only, not ukernel_ct. The
     F16 GEMM's last K chunk writes y this way instead of through its accumulators and a store. */
  uint16_t *yh;
  size_t ldyh;
} dlc_f32_gemm_epilogue;

/* C[m x n] = (accumulate ? C : 0) + A * B, then the epilogue when ep != NULL.
 * 1 <= m <= mr, 1 <= n <= nr, kc >= 1. */
typedef void (*dlc_f32_gemm_ukernel_fn)(size_t m, size_t n, size_t kc,
                                        const float *a, const float *b,
                                        float *c, size_t ldc, int accumulate,
                                        const dlc_f32_gemm_epilogue *ep);

/* Packs len columns of an A micro-panel from mr row pointers (a transpose):
 *   dst[t * mr + i] = rows[i] ? rows[i][t] : 0      for t < len, i < mr.
 * Writes exactly len * mr floats. NHWC layers use it: their A rows are pixels, each a run of
 * contiguous channels in x. */
typedef void (*dlc_f32_gemm_pack_rows_fn)(size_t len, const float *const *rows, float *dst);

/* Packs a B micro-panel from a row-major matrix (a transpose-free copy):
 *   dst[k * nr + j] = j < n ? src[k * ld + j] : 0      for k < kc, j < nr.
 * Writes exactly kc * nr floats and reads no float of a row past its n-th. NCHW 1x1 layers use
 * it: their B rows are input channels, each a contiguous run of pixels in x. */
typedef void (*dlc_f32_gemm_pack_cols_fn)(size_t kc, size_t n, const float *src, size_t ld, float *dst);

/* dst[t] = src[t] for t < len; reads and writes nothing else (no alignment assumed). The NCHW
 * im2col packing copies runs of at most a few dozen floats, one per k and output row of a panel:
 * a libc memcpy call per run cost as much as the copy. */
typedef void (*dlc_f32_gemm_copy_fn)(float *dst, const float *src, size_t len);

/* dst[t] = src[2 * t] for t < len; reads src[0 .. 2 * len - 1) only (the last float read is the
   last even one) and writes nothing else. The NCHW im2col packing of a layer at stride 2 (an RGB
   stem) gathers its runs with it: a scalar strided copy took more time than the stem's FMAs. */
typedef void (*dlc_f32_gemm_copy_s2_fn)(float *dst, const float *src, size_t len);

/* ukernel for a full tile (n = nr) whose B is read in place, row k at b + k * ldb, instead of from
 * a packed panel: an NCHW 1x1 layer's input channel rows. bcopy NULL or a packed panel that also
 * receives the rows it reads: bcopy[k * nr + j] = b[k * ldb + j] for k < kc, j < nr (the copy
 * for the tiles below, made in the shadow of this tile's FMAs). Optional (NULL: the driver packs). */
typedef void (*dlc_f32_gemm_ukernel_ldb_fn)(size_t m, size_t kc, const float *a, const float *b, size_t ldb,
                                            float *bcopy, float *c, size_t ldc, int accumulate,
                                            const dlc_f32_gemm_epilogue *ep);

/* ukernel_ct with B read in place, row k at b + k * ldb, only its first n floats (masked loads):
 * element (i, j) of the tile at c[j * ldc + i], 1 <= m <= mr, 1 <= n <= nr / 2 (one vector).
 * NCHW pointwise layers use it for the few pixels past the last full B panel (196 = 6 x 32 + 4 on
 * AVX-512): the pixels are the m rows, and an A panel of weights (ldb = mr) the n columns, so
 * output channels fill the vectors where the pixel tile would use 4 of 16 lanes. Optional. */
typedef void (*dlc_f32_gemm_ukernel_ct_ldb_fn)(size_t m, size_t n, size_t kc, const float *a, const float *b,
                                               size_t ldb, float *c, size_t ldc, int accumulate,
                                               const dlc_f32_gemm_epilogue *ep);

/* ukernel with A read in place, row i at a + i * lda (k along the row), instead of from a packed
 * panel: an NHWC 1x1 layer's pixels, each a contiguous run of input channels. 1 <= m <= mr,
 * 1 <= n <= nr; reads a[i * lda + k] for i < m, k < kc only. Optional (NULL: the driver packs). */
typedef void (*dlc_f32_gemm_ukernel_lda_fn)(size_t m, size_t n, size_t kc, const float *a, size_t lda,
                                            const float *b, float *c, size_t ldc, int accumulate,
                                            const dlc_f32_gemm_epilogue *ep);

typedef struct dlc_f32_gemm_family {
  const char *name;   /* micro-kernel and tile for dlconv_plan_info.kernel, e.g. "f32_gemm_14x32__avx512" */
  size_t mr, nr;      /* register tile; nr <= DLC_GEMM_NR_MAX, mr <= DLC_GEMM_MR_MAX */
  dlc_f32_gemm_ukernel_fn ukernel;
  /* The same product with C transposed: element (i, j) of the tile at c[j * ldc + i] (ldc is the
     column stride). NCHW layers with few pixels (7 x 7) use it to put output channels, not
     pixels, along the vectors: Y^T = X^T W^T. */
  dlc_f32_gemm_ukernel_fn ukernel_ct;
  dlc_f32_gemm_pack_rows_fn pack_rows;
  dlc_f32_gemm_pack_cols_fn pack_cols;
  dlc_f32_gemm_copy_fn copy;
  dlc_f32_gemm_copy_s2_fn copy_s2;
  dlc_f32_gemm_ukernel_ldb_fn ukernel_ldb;
  dlc_f32_gemm_ukernel_ct_ldb_fn ukernel_ct_ldb;
  int f16_out;        /* ukernel honours the epilogue's yh (binary16 output) */
  dlc_f32_gemm_ukernel_lda_fn ukernel_lda;
} dlc_f32_gemm_family;

#define DLC_GEMM_MR_MAX 32
#define DLC_GEMM_NR_MAX 64

#endif
