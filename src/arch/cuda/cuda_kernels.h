/* cuda_kernels.h - the CUDA kernels' launchers, a plain C interface between the backend's glue
 * (cuda.c, which plans, packs and checks) and the .cu files (which only launch).
 *
 * One struct describes a convolution on the device: the shape, the packed weights and the
 * epilogue. Every launcher returns the cudaError_t of its launch (0 = cudaSuccess) and runs on
 * the given stream (a cudaStream_t, NULL = the default stream). x and y are in the user layout. */
#ifndef DLC_CUDA_KERNELS_H
#define DLC_CUDA_KERNELS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Element types of x, w and y on the device. */
enum { DLC_CU_F32 = 0, DLC_CU_F16 = 1, DLC_CU_U8 = 2, DLC_CU_S8 = 3 };

typedef struct dlc_cu_conv {
  int n, c_in, h_in, w_in;
  int c_out, h_out, w_out;
  int k_h, k_w, stride_h, stride_w, dil_h, dil_w, pad_t, pad_l;
  int groups, cin_g, cout_g;
  int nhwc;                  /* layout of x and y */
  int dtype;                 /* DLC_CU_* */
  int K;                     /* reduction length cin_g * k_h * k_w */
  /* GEMM kernels: weights packed per group as a K_pad x N_pad matrix (row k, column = output
     channel of the group), zero beyond K and cout_g. Row k is the tap (ky, kx) and channel c of
     the group in the order x is read fastest: NHWC k = (ky * k_w + kx) * cin_g + c, NCHW
     k = (c * k_h + ky) * k_w + kx. */
  int k_pad, n_pad;
  const void *w;             /* device: GEMM packing, or OIHW for direct (int8: s8) */
  const float *bias;         /* device: c_out fp32 (zeros when none) */
  float out_min, out_max;    /* clamp (fp kernels) */
  /* int8: the requantisation of src/quant/quant.h, the same double formula */
  int x_zp, y_zp, y_min, y_max;
  double lo, hi;
  const double *mult;        /* device: c_out */
  const int *qbias;          /* device: c_out s32 */
  /* int8 direct on quads (NHWC, 4 | cin_g and c_in; NULL where not packed): the s8 weights as
     [oc][ky][kx][c] and, per output channel and tap, the sum of its weights over the channels */
  const void *w_taps;
  const int *tap_sum;
  /* CSR: rows = c_out, nonzeros sorted by column; columns as OIHW (ic * k_h + ky) * k_w + kx */
  const int *row_ptr, *col;
  /* F32 128 x 128 GEMM (NULL: computed in the kernel) and the F16 mma2 GEMM gathering x element
     by element: per k of k_pad, 4 ints {channel offset in
     x, tap row offset, tap column offset, 0}, as k_entry in cuda_common.cuh gives them */
  const int *ktab;
  const void *val;           /* nnz values of the dtype (int8: s8) */
} dlc_cu_conv;

/* fp32-accumulating implicit GEMM on the CUDA cores (F32 and F16), shared-memory tiles of the
   virtual im2col matrix, groups as the grid's z dimension; bn: output-channel tile 16 or 64, or
   128 (F32 only): the 128 x 128 two-stage tile for large layers (n_pad a multiple of 128). */
int dlc_cu_igemm(const dlc_cu_conv *c, int bn, const void *x, void *y, void *stream);
/* F16 implicit GEMM on the tensor cores (WMMA 16x16x16, fp32 accumulation), groups in the grid;
   bn: 16, 32 or 64; vec: 1 where NHWC rows of 8 channels can be read as 16 bytes (cin_g and
   c_in multiples of 8). */
int dlc_cu_tc(const dlc_cu_conv *c, int bn, int vec, const void *x, void *y, void *stream);
/* 1 where dlc_cu_tc with bn 64 and vec runs the big tile (128 x 64, two stages) on c. */
int dlc_cu_tc_big(const dlc_cu_conv *c);
/* F16 implicit GEMM for large NHWC layers with 8 | cin_g and c_in (x 16-byte aligned) through
   mma.sync m16n8k16 with ldmatrix and cp.async: 128 x bn tiles, bn = 64 or 128 (n_pad a
   multiple of it). dlc_cu_mma_applies: 1 where the layer suits it. */
int dlc_cu_mma_applies(const dlc_cu_conv *c);
int dlc_cu_mma(const dlc_cu_conv *c, int bn, const void *x, void *y, void *stream);
/* F16 implicit GEMM on the tensor cores for every layer: mma.sync m16n8k16 on one of several
   block tiles (128 x 128 down to 32 x 16; the small ones split each k step across two groups of
   warps), outputs staged through shared memory and stored 16 bytes at a time (NHWC). va: x read
   as NHWC rows of 8 channels (8 | cin_g and c_in, x 16-byte aligned) by cp.async, three stages;
   else gathered element by element through c->ktab (required then), any layout. dlc_cu_mma2_tile: the tile for c (n_pad a multiple of
   dlc_cu_mma2_bn(tile)); dlc_cu_mma2_name: its kernel name; dlc_cu_mma2_setup: once before the
   first launch (the tiles' dynamic shared memory limit). */
int dlc_cu_mma2_tile(const dlc_cu_conv *c, int min_blocks);
int dlc_cu_mma2_bn(int tile);
const char *dlc_cu_mma2_name(int tile);
int dlc_cu_mma2_setup(void);
int dlc_cu_mma2(const dlc_cu_conv *c, int tile, int va, const void *x, void *y, void *stream);
/* Grouped convolution with few channels per group, depthwise included (F32 and F16): one thread
   per output pixel, group and run of up to 8 output channels; c->w packed as [k][co][g] with
   k = (ky * k_w + kx) * cin_g + c. */
int dlc_cu_gspc(const dlc_cu_conv *c, const void *x, void *y, void *stream);
/* F16 NHWC grouped convolution with cin_g == cout_g of 2, 4, 8 or 16 (c->w packed as for
   dlc_cu_gspc; x and y 16-byte aligned): a block of pixels per group, the group's weights in
   shared memory, vector loads and stores of a pixel's channels. dlc_cu_gspc2_applies: 1 where
   it runs c. */
int dlc_cu_gspc2_applies(const dlc_cu_conv *c);
int dlc_cu_gspc2(const dlc_cu_conv *c, const void *x, void *y, void *stream);
/* One thread per output: every dtype and shape (int8 with the exact requantisation; with dp4a
   on quads of channels where c->w_taps is packed and x is 4-byte aligned); c->w OIHW. */
int dlc_cu_direct(const dlc_cu_conv *c, const void *x, void *y, void *stream);
/* CSR sparse: one thread per output, over the nonzeros of its channel's row. */
int dlc_cu_csr(const dlc_cu_conv *c, const void *x, void *y, void *stream);

#ifdef __cplusplus
}
#endif
#endif
