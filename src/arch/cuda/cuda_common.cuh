/* cuda_common.cuh - what the CUDA kernels share: element loads and stores of each dtype, the fp
 * epilogue (bias, NaN-preserving clamp, one rounding to the storage type), the int8
 * requantisation (src/quant/quant.h's formula, operation for operation), and the per-block
 * tables of the implicit GEMMs (where each output pixel and each reduction index k reads x). */
#ifndef DLC_CUDA_COMMON_CUH
#define DLC_CUDA_COMMON_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "cuda_kernels.h"

namespace dlc_cu {

template <typename T> __device__ __forceinline__ float load_f(const T *p);
template <> __device__ __forceinline__ float load_f<float>(const float *p) { return __ldg(p); }
template <> __device__ __forceinline__ float load_f<__half>(const __half *p) { return __half2float(__ldg(p)); }

template <typename T> __device__ __forceinline__ void store_f(T *p, float v);
template <> __device__ __forceinline__ void store_f<float>(float *p, float v) { *p = v; }
/* one rounding of the fp32 result to binary16, to nearest even */
template <> __device__ __forceinline__ void store_f<__half>(__half *p, float v) { *p = __float2half_rn(v); }

/* the contract's clamp: NaN stays NaN, else min(max(v, lo), hi) */
__device__ __forceinline__ float clampf(float v, float lo, float hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

/* quant.h's dlc_q8_requant1: (double)(acc + bias) * mult, clamped to [lo, hi], rounded half to
   even (rint in the default mode), + zero point, saturated. */
__device__ __forceinline__ int requant(int acc, int bias, double mult, const dlc_cu_conv &c) {
  double v = (double)((long long)acc + (long long)bias) * mult;
  v = v < c.lo ? c.lo : v;
  v = v > c.hi ? c.hi : v;
  double t = rint(v) + (double)c.y_zp;
  if (t < (double)c.y_min) return c.y_min;
  if (t > (double)c.y_max) return c.y_max;
  return (int)t;
}

/* An invalid pixel or k: any tap added stays far below 0, so the bounds check rejects it. */
#define DLC_CU_FAR (-(1 << 29))

/* Fills the row table of output pixel p (of n * h_out * w_out) for group g: the offset of its
   image and group in x, its first input row and column, its offset in y. */
__device__ __forceinline__ void pixel_entry(const dlc_cu_conv &c, long long pix, int g, long long *xoff, int *ih,
                                            int *iw, long long *yoff) {
  const long long P = (long long)c.n * c.h_out * c.w_out;
  if (pix >= P) {
    *xoff = 0; *ih = DLC_CU_FAR; *iw = DLC_CU_FAR; *yoff = 0;
    return;
  }
  const int hw = c.h_out * c.w_out;
  const long long n = pix / hw;
  const int r = (int)(pix - n * hw);
  const int oh = r / c.w_out, ow = r - (r / c.w_out) * c.w_out;
  *ih = oh * c.stride_h - c.pad_t;
  *iw = ow * c.stride_w - c.pad_l;
  const long long plane = (long long)c.h_in * c.w_in;
  *xoff = c.nhwc ? n * plane * c.c_in + (long long)g * c.cin_g : (n * c.c_in + (long long)g * c.cin_g) * plane;
  *yoff = c.nhwc ? pix * c.c_out : n * c.c_out * hw + r;
}

/* Fills the column table of reduction index k: the channel's offset in x and the tap's row and
   column offsets (k >= K: far, so every read of it is padding). */
__device__ __forceinline__ void k_entry(const dlc_cu_conv &c, int k, int *koff, int *ky, int *kx) {
  if (k >= c.K) {
    *koff = 0; *ky = DLC_CU_FAR; *kx = DLC_CU_FAR;
    return;
  }
  int ch, y, x;
  if (c.nhwc) {
    ch = k % c.cin_g;
    const int t = k / c.cin_g;
    y = t / c.k_w;
    x = t - y * c.k_w;
    *koff = ch;
  } else {
    x = k % c.k_w;
    const int t = k / c.k_w;
    y = t % c.k_h;
    ch = t / c.k_h;
    *koff = ch * c.h_in * c.w_in;
  }
  *ky = y * c.dil_h;
  *kx = x * c.dil_w;
}

/* The element of x at pixel (xoff, ih, iw) + tap (koff, ky, kx), 0 in the padding. */
template <typename T>
__device__ __forceinline__ float x_at(const dlc_cu_conv &c, const T *x, long long xoff, int ih, int iw, int koff,
                                      int ky, int kx) {
  const int h = ih + ky, w = iw + kx;
  if ((unsigned)h >= (unsigned)c.h_in || (unsigned)w >= (unsigned)c.w_in) return 0.f;
  const long long pos = (long long)h * c.w_in + w;
  return load_f(x + xoff + koff + (c.nhwc ? pos * c.c_in : pos));
}

}  // namespace dlc_cu

#endif
