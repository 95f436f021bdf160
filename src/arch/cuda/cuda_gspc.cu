/* cuda_gspc.cu - grouped convolution with few channels per group (GSPC on the GPU; depthwise
 * included): one thread per (run of output pixels, group, run of up to CO output channels), all the
 * groups of the layer in one launch.
 *
 * A thread computes a few neighbouring pixels of a row. Threads are numbered group fastest in
 * NHWC (a warp reads and writes neighbouring groups' channels) and pixel fastest in NCHW (a warp
 * reads neighbouring pixels of one group's planes).
 * The weights are packed at plan time as [k][co][g] (k = (ky * k_w + kx) * cin_g + c), so that
 * the lanes of an NHWC warp read neighbouring words; a thread keeps its CO fp32 accumulators in
 * registers and reads each input once per tap. */
#include "cuda_common.cuh"

namespace dlc_cu {

constexpr int GS_THREADS = 256;

/* Thread e's pixel run, group and channel run (see below), in I: 32-bit divisions where the
   thread count allows (64-bit ones cost several times more). */
template <typename I>
__device__ __forceinline__ void gspc_point(const dlc_cu_conv &c, I e, int runs, int wblocks, long long *n, int *g,
                                           int *run, int *oh, int *wb) {
  if (c.nhwc) {   /* e = (((n * h_out + oh) * wblocks + wb) * runs + run) * groups + g */
    *g = (int)(e % (I)c.groups);
    I t = e / (I)c.groups;
    *run = (int)(t % (I)runs);
    t /= (I)runs;
    *wb = (int)(t % (I)wblocks);
    t /= (I)wblocks;
    *oh = (int)(t % (I)c.h_out);
    *n = (long long)(t / (I)c.h_out);
  } else {        /* e = (((n * groups + g) * runs + run) * h_out + oh) * wblocks + wb */
    *wb = (int)(e % (I)wblocks);
    I t = e / (I)wblocks;
    *oh = (int)(t % (I)c.h_out);
    t /= (I)c.h_out;
    *run = (int)(t % (I)runs);
    t /= (I)runs;
    *g = (int)(t % (I)c.groups);
    *n = (long long)(t / (I)c.groups);
  }
}

/* PX neighbouring output pixels of a row per thread: each weight read feeds PX FMAs, each input
   read CO. */
template <typename T, int CO, int PX>
__global__ void __launch_bounds__(GS_THREADS) gspc_kernel(const dlc_cu_conv c, const T *__restrict__ x,
                                                          T *__restrict__ y, long long total, int runs) {
  const long long e = (long long)blockIdx.x * GS_THREADS + threadIdx.x;
  if (e >= total) return;
  const int wblocks = (c.w_out + PX - 1) / PX;
  long long n;
  int g, run, oh, wb;
  if (total <= 0xffffffffLL) gspc_point<unsigned>(c, (unsigned)e, runs, wblocks, &n, &g, &run, &oh, &wb);
  else gspc_point<unsigned long long>(c, (unsigned long long)e, runs, wblocks, &n, &g, &run, &oh, &wb);
  const int ow0 = wb * PX;
  const int ih0 = oh * c.stride_h - c.pad_t, iw0 = ow0 * c.stride_w - c.pad_l;
  const int co0 = run * CO, nco = min(CO, c.cout_g - co0);
  const long long plane = (long long)c.h_in * c.w_in;
  const T *xg = x + (c.nhwc ? n * plane * c.c_in + (long long)g * c.cin_g : (n * c.c_in + (long long)g * c.cin_g) * plane);
  const long long cstep = c.nhwc ? 1 : plane, wpos = c.nhwc ? c.c_in : 1;
  const T *w = (const T *)c.w;
  const long long wstep = (long long)c.cout_g * c.groups;   /* one k */
  float acc[PX][CO];
#pragma unroll
  for (int q = 0; q < PX; q++)
#pragma unroll
    for (int j = 0; j < CO; j++) acc[q][j] = 0.f;
  for (int ky = 0; ky < c.k_h; ky++) {
    const int h = ih0 + ky * c.dil_h;
    if ((unsigned)h >= (unsigned)c.h_in) continue;
    const T *xrow = xg + (long long)h * c.w_in * wpos;
    for (int kx = 0; kx < c.k_w; kx++) {
      const int wx0 = iw0 + kx * c.dil_w;
      bool in[PX];
#pragma unroll
      for (int q = 0; q < PX; q++) in[q] = (unsigned)(wx0 + q * c.stride_w) < (unsigned)c.w_in;
      const T *wk = w + (long long)((ky * c.k_w + kx) * c.cin_g) * wstep + (long long)co0 * c.groups + g;
      for (int ci = 0; ci < c.cin_g; ci++) {
        float xv[PX];
#pragma unroll
        for (int q = 0; q < PX; q++)
          xv[q] = in[q] ? load_f(xrow + (long long)(wx0 + q * c.stride_w) * wpos + ci * cstep) : 0.f;
        const T *wc = wk + ci * wstep;
#pragma unroll
        for (int j = 0; j < CO; j++) {
          if (j >= nco) break;
          const float wv = load_f(wc + (long long)j * c.groups);
#pragma unroll
          for (int q = 0; q < PX; q++) acc[q][j] = fmaf(xv[q], wv, acc[q][j]);
        }
      }
    }
  }
  const int hw = c.h_out * c.w_out;
  const long long ostride = c.nhwc ? 1 : hw;
#pragma unroll
  for (int q = 0; q < PX; q++) {
    const int ow = ow0 + q;
    if (ow >= c.w_out) break;
    const int r = oh * c.w_out + ow;
    const long long ybase = c.nhwc ? (n * hw + r) * c.c_out : n * c.c_out * hw + r;
#pragma unroll
    for (int j = 0; j < CO; j++) {
      if (j >= nco) break;
      const int oc = g * c.cout_g + co0 + j;
      store_f(y + ybase + oc * ostride, clampf(acc[q][j] + c.bias[oc], c.out_min, c.out_max));
    }
  }
}

template <typename T, int CO, int PX> static int launch(const dlc_cu_conv *c, const void *x, void *y, cudaStream_t s) {
  const int runs = (c->cout_g + CO - 1) / CO;
  const long long total = (long long)c->n * c->h_out * ((c->w_out + PX - 1) / PX) * c->groups * runs;
  const unsigned blocks = (unsigned)((total + GS_THREADS - 1) / GS_THREADS);
  gspc_kernel<T, CO, PX><<<blocks, GS_THREADS, 0, s>>>(*c, (const T *)x, (T *)y, total, runs);
  return (int)cudaGetLastError();
}

/* 4 pixels per thread (2 at 8 channels). Measured on WideResNet-40-2, batch 32, F16 NHWC, H200:
   one pixel per thread on the small layers lost to 4 (depthwise 64 x 8x8: 0.0114 ms against
   0.0058; 4 channels per group on 32x32: 0.038 against 0.025) more often than it won. */
template <typename T, int CO> static int pick_px(const dlc_cu_conv *c, const void *x, void *y, cudaStream_t s) {
  return launch<T, CO, (CO >= 8 ? 2 : 4)>(c, x, y, s);
}

template <typename T> static int pick(const dlc_cu_conv *c, const void *x, void *y, cudaStream_t s) {
  if (c->cout_g <= 1) return pick_px<T, 1>(c, x, y, s);
  if (c->cout_g <= 2) return pick_px<T, 2>(c, x, y, s);
  if (c->cout_g <= 4) return pick_px<T, 4>(c, x, y, s);
  return pick_px<T, 8>(c, x, y, s);
}

}  // namespace dlc_cu

extern "C" int dlc_cu_gspc(const dlc_cu_conv *c, const void *x, void *y, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  return c->dtype == DLC_CU_F16 ? dlc_cu::pick<__half>(c, x, y, s) : dlc_cu::pick<float>(c, x, y, s);
}
