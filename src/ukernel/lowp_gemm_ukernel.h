/* lowp_gemm_ukernel.h - the micro-kernel interface of im2col + GEMM for F16 and int8.
 *
 * Same register-tile contract as the f32 family (gemm_ukernel.h): the kernel computes one tile
 * C[m x n] (1 <= m <= mr, 1 <= n <= nr) of A * B from packed, zero-padded micro-panels and
 * reads or writes only the m x n corner of C, row-major with row stride ldc (elements). The
 * accumulator tile C is fp32 (F16) or s32 (int8); the driver keeps a block of it in the
 * workspace and the family's store function turns finished rows into the user's y (bias,
 * clamp, conversion or requantisation), so the kernels stay pure products.
 *
 * F16: A and B hold IEEE binary16, converted to fp32 in registers (F16C on x86), products
 * accumulated in fp32.
 *   A: kc x mr halves, k-major: element (i, k) at a[k * mr + i]
 *   B: kc x nr halves, k-major: element (k, j) at b[k * nr + j]
 *
 * int8: both operands are s16 in pairs along k, so that a pair of products and their sum are
 * exact in one vpmaddwd / smlal step: B holds x - x_zero_point (|v| <= 255, padding taps are 0)
 * and A the s8 weights (|w| <= 128); a pair sum is below 2^17 and C is exact while
 * K * 255 * 128 < 2^31 (the plan refuses larger K).
 *   kc is even (the driver pads K with zero pairs)
 *   A: (kc/2) x mr x 2:  element (i, k) at a[(k / 2) * 2 * mr + 2 * i + k % 2]
 *   B: (kc/2) x nr x 2:  element (k, j) at b[(k / 2) * 2 * nr + 2 * j + k % 2]
 */
#ifndef DLC_LOWP_GEMM_UKERNEL_H
#define DLC_LOWP_GEMM_UKERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "../quant/quant.h"

/* C = (accumulate ? C : 0) + A * B over kc steps. */
typedef void (*dlc_f16_gemm_ukernel_fn)(size_t m, size_t n, size_t kc, const uint16_t *a, const uint16_t *b,
                                        float *c, size_t ldc, int accumulate);
typedef void (*dlc_q8_gemm_ukernel_fn)(size_t m, size_t n, size_t kc, const int16_t *a, const int16_t *b,
                                       int32_t *c, size_t ldc, int accumulate);

/* One run of n finished accumulators to n outputs (contiguous in both):
 *   F16:  y[j] = f16(clamp(acc[j] + bias[c], out_min, out_max))     round to nearest even
 *   int8: y[j] = dlc_q8_requant1(acc[j] + q->bias[c], q->mult[c], q)    (quant.h, bit-exact)
 * with c = c0 + j when per_column (NHWC rows: channels along the run) and c = c0 otherwise
 * (NCHW rows: pixels of channel c0 along the run). NaN survives the F16 clamp. */
typedef void (*dlc_f16_store_fn)(size_t n, const float *acc, const float *bias, size_t c0, int per_column,
                                 float out_min, float out_max, uint16_t *y);
typedef void (*dlc_q8_store_fn)(size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, int per_column,
                                void *y);

/* int8 activation packing: n lanes of two reduction rows into s16 pairs, zero point removed:
 *   dst[2j] = a[j] - zp, dst[2j + 1] = b[j] - zp        for j < n
 * a and b hold u8 (is_signed == 0) or s8 values; reads n bytes of each, writes 2n s16. */
typedef void (*dlc_q8_pack_pairs_fn)(size_t n, const void *a, const void *b, int32_t zp, int is_signed, int16_t *dst);

/* int8 NHWC packing: a run of 2n channels of one pixel (adjacent in x) into n s16 pairs at a
 * stride, zero point removed:  dst[p * stride + t] = src[2p + t] - zp   for p < n, t = 0, 1.
 * Reads 2n bytes of src (u8 or s8 per is_signed); writes those 2n s16 only. */
typedef void (*dlc_q8_pack_pairs_strided_fn)(size_t n, const void *src, int32_t zp, int is_signed, int16_t *dst,
                                             size_t stride);

/* Optional pair (both or neither): the A micro-panel widened once by the driver, for all the
 * B panels of a sweep, instead of by every call of ukernel:
 *   widen_a:     af[t] = f32(a[t]) for t < kc * mr; af is 32-byte aligned with 8 floats of slack
 *   ukernel_a32: ukernel with A as kc x mr floats (k-major); the same results bit for bit */
typedef void (*dlc_f16_widen_a_fn)(size_t kc, const uint16_t *a, float *af);
typedef void (*dlc_f16_gemm_a32_fn)(size_t m, size_t n, size_t kc, const float *a, const uint16_t *b, float *c,
                                    size_t ldc, int accumulate);

/* Optional, for the direct algorithm (src/direct/direct_lowp_conv.c): B read in place from the
 * driver's copy of x through a table of offsets (in elements of b) instead of from a packed
 * panel, always a full nr columns; C is the m x nr tile (1 <= m <= mr), A as for ukernel:
 *   int8:  element (k, j) of B at b[boff[k / 2] + 2 * j + k % 2]      (kc even)
 *   F16:   element (k, j) of B at b[boff[k] + j]; A given widened, kc x mr floats, k-major
 * The offsets are the im2col gather: consecutive columns are consecutive output positions of a
 * padded plane, each reduction row a (channel, tap) whose offset says where its run starts. */
typedef void (*dlc_q8_gemm_ib_fn)(size_t m, size_t kc, const int16_t *a, const int16_t *b, const ptrdiff_t *boff,
                                  int32_t *c, size_t ldc, int accumulate);
typedef void (*dlc_f16_gemm_ib_fn)(size_t m, size_t kc, const float *a, const uint16_t *b, const ptrdiff_t *boff,
                                   float *c, size_t ldc, int accumulate);

/* A run of n activations widened, for drivers that gather an operand (sparse_csr):
 *   F16:   dst[j] = f32(src[j * step])
 *   int8:  dst[j] = src[j * step] - zp     (src u8 or s8 per is_signed)
 * for j < n, step >= 1 (NHWC pixels, strided columns); reads nothing of src outside
 * [src[0], src[(n - 1) * step]], writes n of dst, no alignment needed. */
typedef void (*dlc_f16_widen_run_fn)(size_t n, const uint16_t *src, size_t step, float *dst);
typedef void (*dlc_q8_widen_run_fn)(size_t n, const void *src, size_t step, int32_t zp, int is_signed, int16_t *dst);

/* Optional: a B micro-panel of nr columns widened from a row-major matrix of halves (NCHW 1 x 1
 * layers, whose B rows are input channels, each a run of pixels), for the fp32 GEMM micro-kernel:
 *   dst[k * nr + j] = j < n ? f32(src[k * ld + j]) : 0      for k < kc, j < nr
 * reads no half of a row past its n-th. */
typedef void (*dlc_f16_pack_cols_f32_fn)(size_t kc, size_t n, const uint16_t *src, size_t ld, float *dst);

/* Optional: pack_quads over h rows at once (a plane of the direct copy, or a stride phase of it):
 * row y of channel r starts at rows[r] + y * ldx, and
 *   dst[4 * (y * ldd + j) + r] = rows[r][y * ldx + j * step] ^ flip      for y < h, j < n, r < 4
 * step 1 or 2; reads nothing of a row past rows[r][y * ldx + (n - 1) * step], writes those bytes
 * only (the units between two rows are left alone). Where the rows are contiguous (step 1,
 * ldx == n) it packs them as one run, stored row by row: a call per row of a small plane cost more
 * than its packing. */
typedef void (*dlc_q8d4_pack_plane_fn)(size_t h, size_t n, const uint8_t *r0, const uint8_t *r1, const uint8_t *r2,
                                       const uint8_t *r3, size_t ldx, size_t step, uint8_t flip, uint8_t *dst,
                                       size_t ldd);

/* Optional: dense layers with few rows of x (batch 1: a matrix-vector product, bound by the
 * stream of weights: 2 bytes a weight as binary16 where the GEMM path reads them as packed
 * panels and spends a register tile on one column). A is one panel of gemv_mr output channels,
 * k-major, rows past m zero: element (i, k) at a[k * gemv_mr + i]; B holds nb <= 4 rows of x
 * widened to fp32, ldb apart:
 *   c[r * ldc + i] = sum over k < kc of f32(A(i, k)) * b[r * ldb + k]      for i < m, r < nb
 * in fp32 (any order); writes those m x nb values of c only. */
typedef void (*dlc_f16_gemv_fn)(size_t m, size_t nb, size_t kc, const uint16_t *a, const float *b, size_t ldb,
                                float *c, size_t ldc);

typedef struct dlc_f16_gemm_family {
  const char *name; /* e.g. "f16_gemm_6x16__avx2" */
  size_t mr, nr;    /* mr <= DLC_LOWP_MR_MAX, nr <= DLC_LOWP_NR_MAX */
  dlc_f16_gemm_ukernel_fn ukernel;
  dlc_f16_store_fn store;
  dlc_f16_widen_a_fn widen_a;
  dlc_f16_gemm_a32_fn ukernel_a32;
  dlc_f16_gemm_ib_fn ukernel_ib; /* optional */
  dlc_f16_widen_run_fn widen_run;
  dlc_f16_pack_cols_f32_fn pack_cols_f32; /* optional */
  size_t gemv_mr;   /* rows of a gemv panel (0: no gemv) */
  dlc_f16_gemv_fn gemv;
  const char *gemv_name;
} dlc_f16_gemm_family;

typedef struct dlc_q8_gemm_family {
  const char *name; /* e.g. "q8_gemm_6x16c2__avx2" */
  size_t mr, nr;
  dlc_q8_gemm_ukernel_fn ukernel;
  dlc_q8_store_fn store;
  dlc_q8_pack_pairs_fn pack_pairs;
  dlc_q8_pack_pairs_strided_fn pack_pairs_strided;
  dlc_q8_gemm_ib_fn ukernel_ib; /* optional */
  dlc_q8_widen_run_fn widen_run;
} dlc_q8_gemm_family;

/* int8 on u8 x s8 dot products of four (vpdpbusd: four products and their sum in one s32 lane of
 * one instruction, twice the work per instruction of the s16 pairs above). The operands keep
 * their bytes; the zero point comes out afterwards:
 *   B holds xu = x (U8) or x + 128 = x ^ 0x80 (S8), padding taps zu = x_zero_point (+ 128 for S8),
 *     so that xu - zu is x - x_zero_point, and 0 on padding;
 *   A holds the s8 weights; C = A * B, exact in s32 while K * 255 * 128 < 2^31. The caller
 *     subtracts zu * (sum over k of A(i, k)) from row i (plans fold it into the bias).
 *   kc is a multiple of 4 (the driver pads K with zero weights; B there may hold anything)
 *   A: (kc/4) x mr x 4 s8:  element (i, k) at a[(k / 4) * 4 * mr + 4 * i + k % 4]
 *   B: (kc/4) x nr x 4 u8:  element (k, j) at b[(k / 4) * 4 * nr + 4 * j + k % 4]
 * A unit (4 bytes) is the size of an s16 pair, so the drivers' copies, offsets and panels keep
 * their geometry in int16 elements. ukernel_ib reads B in place, always nr columns, from the
 * same kind of offset table: element (k, j) at b[2 * boff[k / 4] + 4 * j + k % 4]. */
typedef void (*dlc_q8d4_gemm_ukernel_fn)(size_t m, size_t n, size_t kc, const int8_t *a, const uint8_t *b,
                                         int32_t *c, size_t ldc, int accumulate);
typedef void (*dlc_q8d4_gemm_ib_fn)(size_t m, size_t kc, const int8_t *a, const uint8_t *b, const ptrdiff_t *boff,
                                    int32_t *c, size_t ldc, int accumulate);

/* Optional: the last K chunk of ukernel (boff NULL: B packed) or of ukernel_ib (B in place through
 * boff, nr columns read) with the family's requantising store fused, for outputs that are runs of
 * a channel's plane: the accumulators go to y as bytes while in registers instead of through C
 * and a store call per row.
 *   y[i * ldy + j] = dlc_q8_requant1(C'(i, j) + q->bias[c0 + i], q->mult[c0 + i], q)
 *   for i < m, j < n (1 <= n <= nr), C' = (accumulate ? c : 0) + A * B;
 * u8 or s8 outputs per q->is_signed. c is read when accumulate (its m x n corner), never written;
 * writes those y bytes only. */
typedef void (*dlc_q8d4_gemm_q_fn)(size_t m, size_t n, size_t kc, const int8_t *a, const uint8_t *b,
                                   const ptrdiff_t *boff, const int32_t *c, size_t ldc, int accumulate,
                                   const dlc_q8_params *q, size_t c0, void *y, size_t ldy);

/* Optional: ukernel_q's in-place form for outputs with virtual columns (direct's copy: output
 * rows wq positions apart, of which the first wo are outputs, nv = (h_out - 1) * wq + wo positions
 * in all). The tile's nr columns are the virtual positions v0 + j; the outputs among them go to
 * their places in the channels' planes:
 *   y[i * ldy + (v / wq) * wo + v % wq] = dlc_q8_requant1(C'(i, j) + q->bias[c0 + i], q->mult[c0 + i], q)
 *   for i < m, j < nr, v = v0 + j < nv with v % wq < wo; C' = (accumulate ? c : 0) + A * B (c's m x
 *   nr corner read when accumulate, never written), B read in place as ukernel_ib reads it;
 * writes those y bytes only. */
typedef void (*dlc_q8d4_gemm_qv_fn)(size_t m, size_t kc, const int8_t *a, const uint8_t *b, const ptrdiff_t *boff,
                                    const int32_t *c, size_t ldc, int accumulate, const dlc_q8_params *q, size_t c0,
                                    void *y, size_t ldy, size_t v0, size_t nv, size_t wq, size_t wo);

/* Four rows of bytes at a column step of 1 or 2 (stride-2 layers) into n units of four, flipped to
 * u8 (flip: 0x80 for S8, 0 for U8):
 *   dst[4j + r] = rows[r][j * step] ^ flip      for j < n, r < 4
 * reads nothing of a row past rows[r][(n - 1) * step], writes 4n bytes, no alignment needed. */
typedef void (*dlc_q8d4_pack_quads_fn)(size_t n, const uint8_t *r0, const uint8_t *r1, const uint8_t *r2,
                                       const uint8_t *r3, size_t step, uint8_t flip, uint8_t *dst);

/* Optional: dense layers with few rows of x (batch 1: a matrix-vector product that streams the
 * weights once per nb <= 4 rows), A one panel of gemv_mr rows in the A layout above (mr = gemv_mr,
 * rows past m zero), B nb rows of kc u8 bytes ldb apart:
 *   c[r * ldc + i] = sum over k < kc of A(i, k) * b[r * ldb + k]      for i < m, r < nb
 * kc a multiple of 4; writes those m x nb values of c only. */
typedef void (*dlc_q8d4_gemv_fn)(size_t m, size_t nb, size_t kc, const int8_t *a, const uint8_t *b, size_t ldb,
                                 int32_t *c, size_t ldc);

/* Optional: C transposed, one row per output position (small planes: a 7 x 7 plane is 49 rows
 * here where the column tiles above compute 64), B read in place like ukernel_ib. A is one panel
 * of tm rows in the A layout above (mr = tm, rows past m zero); row r of C is the position whose
 * units start pos[r] units past b:
 *   c[r * ldc + i] (+)= sum over k < kc of A(i, k) * b[2 * boff[k / 4] + 4 * pos[r] + k % 4]
 *   for r < np (1 <= np <= tr), i < m (1 <= m <= tm); kc a multiple of 4; writes (accumulate:
 *   adds to) those np x m values of c only. */
typedef void (*dlc_q8d4_gemm_t_fn)(size_t np, size_t m, size_t kc, const int8_t *a, const uint8_t *b,
                                   const size_t *pos, const ptrdiff_t *boff, int32_t *c, size_t ldc, int accumulate);

/* With ukernel_t: its transposed C back to rows of output channels,
 *   dst[j * ldd + i] = src[i * lds + j]      for i < rows, j < cols; writes those values only. */
typedef void (*dlc_s32_transpose_fn)(size_t rows, size_t cols, const int32_t *src, size_t lds, int32_t *dst,
                                     size_t ldd);

/* Optional, with ukernel_t, where the CPU has a byte permute (dlc_isa_kernels.q8_store_t): its
 * transposed C straight to NCHW outputs, requantised with channels in the lanes and transposed
 * as bytes, where transpose and a store call per channel row pass over the accumulators twice:
 *   y[i * ldy + r] = dlc_q8_requant1(c[r * ldc + i] + q->bias[c0 + i], q->mult[c0 + i], q)
 *   for r < np, i < m (u8 or s8 outputs per q->is_signed); reads those c values only and writes
 *   those y bytes only. */
typedef void (*dlc_q8_store_t_fn)(size_t np, size_t m, const int32_t *c, size_t ldc, const dlc_q8_params *q,
                                  size_t c0, void *y, size_t ldy);

typedef struct dlc_q8d4_gemm_family {
  const char *name; /* e.g. "q8_gemm_8x32c4__avx512vnni" */
  size_t mr, nr;    /* mr <= DLC_LOWP_MR_MAX, nr <= DLC_LOWP_NR_MAX */
  dlc_q8d4_gemm_ukernel_fn ukernel;
  dlc_q8d4_gemm_ib_fn ukernel_ib;
  dlc_q8d4_gemm_q_fn ukernel_q; /* optional */
  dlc_q8d4_gemm_qv_fn ukernel_qv; /* optional */
  dlc_q8d4_pack_quads_fn pack_quads;
  dlc_q8d4_pack_plane_fn pack_plane; /* optional */
  size_t gemv_mr;   /* rows of a gemv panel (0: no gemv) */
  dlc_q8d4_gemv_fn gemv;
  const char *gemv_name;
  size_t tr, tm;    /* ukernel_t's tile: positions x output channels (0: no ukernel_t) */
  dlc_q8d4_gemm_t_fn ukernel_t;
  dlc_s32_transpose_fn transpose;
  const char *t_name;
} dlc_q8d4_gemm_family;

/* int8 NHWC convolution as an indirect GEMM (src/gemm_im2col/igemm_q8.c): C[pixels x output
 * channels] with the pixels' input channels as the reduction, read in place from x. In NHWC a
 * tap's cin_g input channels of a pixel are one run of bytes, so each row of the tile (one output
 * pixel) reads, per tap, the run an indirection pointer gives (the zero point's row for padding
 * taps), four channels at a time broadcast as one dword against a vector of 16 output channels x
 * four s8 weights: the u8 x s8 dot products of four of the q8_d4 family, with the activation the
 * unsigned side. Nothing of x is copied or packed.
 *   ind:  ntaps x mr pointers, tap-major: row i (< m) of tap t reads the 4 * kq bytes at
 *         ind[t * mr + i], each xor flip (0x80 for S8: x + 128), so the zero point's row holds
 *         x_zero_point's byte and the plan's bias the correction (lowp_vpos.h's dlc_q8_d4_params)
 *   w:    ntaps x kq units of nw = 16 * ceil(n / 16) columns x 4 s8: weight (k = 4 u + b, column
 *         j) of tap t at w[((t * kq + u) * nw + j) * 4 + b]; columns past n are zero
 *   y[i * ldy + j] = dlc_q8_requant1(C(i, j) + q->bias[c0 + j], q->mult[c0 + j], q)
 *         for i < m (1 <= m <= mr), j < n (1 <= n <= nr), u8 or s8 per q->is_signed; C is the
 *         exact product (s32 while ntaps * 4 * kq <= DLC_Q8_MAX_K); writes those bytes only. */
typedef void (*dlc_q8_igemm_fn)(size_t m, size_t n, size_t ntaps, size_t kq, const uint8_t *const *ind,
                                const int8_t *w, uint8_t flip, const dlc_q8_params *q, size_t c0, void *y,
                                size_t ldy);

/* The same where the tile's rows are evenly spaced in x: row i of tap t reads at tap[t] + i * pstep
 * (ntaps pointers instead of ntaps x mr; a tile of pixels along a row of x, or a 1 x 1 layer's
 * consecutive pixels). Otherwise as dlc_q8_igemm_fn, but for m: up to the family's mr_s_narrow
 * where n <= nr / 2 (a taller tile where there are fewer columns to hold). */
typedef void (*dlc_q8_igemm_s_fn)(size_t m, size_t n, size_t ntaps, size_t kq, const uint8_t *const *tap,
                                  ptrdiff_t pstep, const int8_t *w, uint8_t flip, const dlc_q8_params *q, size_t c0,
                                  void *y, size_t ldy);

typedef struct dlc_q8_igemm_family {
  const char *name; /* e.g. "q8_igemm_6x64c4__avx512vnni" */
  size_t mr, nr;    /* nr a multiple of 16 */
  dlc_q8_igemm_fn ukernel;
  dlc_q8_igemm_s_fn ukernel_s;
  size_t mr_s_narrow; /* ukernel_s's rows where n <= nr / 2 (>= mr) */
} dlc_q8_igemm_family;

#define DLC_LOWP_MR_MAX 16
#define DLC_LOWP_NR_MAX 64

#endif
