/* cuda_gspc.cu - grouped convolution with few channels per group (GSPC on the GPU; depthwise
 * included): one thread per (output pixel, group, run of up to CO output channels), all the
 * groups of the layer in one launch.
 *
 * Threads are numbered group fastest in NHWC (a warp reads and writes neighbouring groups'
 * channels) and pixel fastest in NCHW (a warp reads neighbouring pixels of one group's planes).
 * The weights are packed at plan time as [k][co][g] (k = (ky * k_w + kx) * cin_g + c), so that
 * the lanes of an NHWC warp read neighbouring words; a thread keeps its CO fp32 accumulators in
 * registers and reads each input once per tap. */
#include "cuda_common.cuh"

namespace dlc_cu {

constexpr int GS_THREADS = 256;

template <typename T, int CO>
__global__ void __launch_bounds__(GS_THREADS) gspc_kernel(const dlc_cu_conv c, const T *__restrict__ x,
                                                          T *__restrict__ y, long long total, int runs) {
  const long long e = (long long)blockIdx.x * GS_THREADS + threadIdx.x;
  if (e >= total) return;
  const int hw = c.h_out * c.w_out;
  long long n;
  int g, run, r;
  if (c.nhwc) {   /* e = ((n * hw + r) * runs + run) * groups + g */
    g = (int)(e % c.groups);
    long long t = e / c.groups;
    run = (int)(t % runs);
    t /= runs;
    r = (int)(t % hw);
    n = t / hw;
  } else {        /* e = ((n * groups + g) * runs + run) * hw + r */
    r = (int)(e % hw);
    long long t = e / hw;
    run = (int)(t % runs);
    t /= runs;
    g = (int)(t % c.groups);
    n = t / c.groups;
  }
  const int oh = r / c.w_out, ow = r - oh * c.w_out;
  const int ih0 = oh * c.stride_h - c.pad_t, iw0 = ow * c.stride_w - c.pad_l;
  const int co0 = run * CO, nco = min(CO, c.cout_g - co0);
  const long long plane = (long long)c.h_in * c.w_in;
  const T *xg = x + (c.nhwc ? n * plane * c.c_in + (long long)g * c.cin_g : (n * c.c_in + (long long)g * c.cin_g) * plane);
  const long long cstep = c.nhwc ? 1 : plane;
  const T *w = (const T *)c.w;
  const long long wstep = (long long)c.cout_g * c.groups;   /* one k */
  float acc[CO];
#pragma unroll
  for (int j = 0; j < CO; j++) acc[j] = 0.f;
  for (int ky = 0; ky < c.k_h; ky++) {
    const int h = ih0 + ky * c.dil_h;
    if ((unsigned)h >= (unsigned)c.h_in) continue;
    for (int kx = 0; kx < c.k_w; kx++) {
      const int wx = iw0 + kx * c.dil_w;
      if ((unsigned)wx >= (unsigned)c.w_in) continue;
      const long long pos = (long long)h * c.w_in + wx;
      const T *xp = xg + (c.nhwc ? pos * c.c_in : pos);
      const T *wk = w + (long long)((ky * c.k_w + kx) * c.cin_g) * wstep + (long long)co0 * c.groups + g;
      for (int ci = 0; ci < c.cin_g; ci++) {
        const float xv = load_f(xp + ci * cstep);
        const T *wc = wk + ci * wstep;
#pragma unroll
        for (int j = 0; j < CO; j++)
          if (j < nco) acc[j] = fmaf(xv, load_f(wc + (long long)j * c.groups), acc[j]);
      }
    }
  }
  const long long ostride = c.nhwc ? 1 : hw;
  const long long ybase = c.nhwc ? (n * hw + r) * c.c_out : n * c.c_out * hw + r;
#pragma unroll
  for (int j = 0; j < CO; j++) {
    if (j >= nco) break;
    const int oc = g * c.cout_g + co0 + j;
    store_f(y + ybase + oc * ostride, clampf(acc[j] + c.bias[oc], c.out_min, c.out_max));
  }
}

template <typename T, int CO> static int launch(const dlc_cu_conv *c, const void *x, void *y, cudaStream_t s) {
  const int runs = (c->cout_g + CO - 1) / CO;
  const long long total = (long long)c->n * c->h_out * c->w_out * c->groups * runs;
  const unsigned blocks = (unsigned)((total + GS_THREADS - 1) / GS_THREADS);
  gspc_kernel<T, CO><<<blocks, GS_THREADS, 0, s>>>(*c, (const T *)x, (T *)y, total, runs);
  return (int)cudaGetLastError();
}

template <typename T> static int pick(const dlc_cu_conv *c, const void *x, void *y, cudaStream_t s) {
  if (c->cout_g <= 1) return launch<T, 1>(c, x, y, s);
  if (c->cout_g <= 2) return launch<T, 2>(c, x, y, s);
  if (c->cout_g <= 4) return launch<T, 4>(c, x, y, s);
  return launch<T, 8>(c, x, y, s);
}

}  // namespace dlc_cu

extern "C" int dlc_cu_gspc(const dlc_cu_conv *c, const void *x, void *y, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  return c->dtype == DLC_CU_F16 ? dlc_cu::pick<__half>(c, x, y, s) : dlc_cu::pick<float>(c, x, y, s);
}
