/* cuda_direct.cu - one thread per output point: the direct convolution (every dtype and shape;
 * the depthwise kernel of the backend, where NHWC neighbours read neighbouring channels) and
 * the CSR sparse convolution (one output channel's row of nonzeros per thread).
 *
 * Threads are numbered in y's layout, so neighbours write neighbours. fp: fp32 accumulation in
 * the order of the taps, bias, clamp, one rounding. int8: exact s32 sums of (x - x_zero_point) * w
 * and quant.h's requantisation, bit for bit the CPU's. */
#include "cuda_common.cuh"

namespace dlc_cu {

constexpr int DT_THREADS = 256;

template <typename T> struct elem { using acc = float; };
template <> struct elem<uint8_t> { using acc = int; };
template <> struct elem<int8_t> { using acc = int; };

template <typename T> __device__ __forceinline__ typename elem<T>::acc xval(const T *p, int zp) { return load_f(p); }
template <> __device__ __forceinline__ int xval<uint8_t>(const uint8_t *p, int zp) { return (int)__ldg(p) - zp; }
template <> __device__ __forceinline__ int xval<int8_t>(const int8_t *p, int zp) { return (int)__ldg(p) - zp; }

/* weights: the dtype's element (int8: s8) */
template <typename T> struct welem { using type = T; };
template <> struct welem<uint8_t> { using type = int8_t; };

template <typename W> __device__ __forceinline__ float wval_f(const W *p) { return load_f(p); }
__device__ __forceinline__ int wval_i(const int8_t *p) { return (int)__ldg(p); }

template <typename T> __device__ __forceinline__ void put(const dlc_cu_conv &c, T *y, long long i, int oc, float v) {
  store_f(y + i, clampf(v + c.bias[oc], c.out_min, c.out_max));
}
template <typename T> __device__ __forceinline__ void put_q(const dlc_cu_conv &c, T *y, long long i, int oc, int acc) {
  y[i] = (T)requant(acc, c.qbias[oc], c.mult[oc], c);
}

/* Output point e (y's layout) as image, channel and pixel, in I (32-bit divisions where the
   output allows). */
template <typename I>
__device__ __forceinline__ void out_point_i(const dlc_cu_conv &c, I e, long long *n, int *oc, int *oh, int *ow) {
  if (c.nhwc) {
    *oc = (int)(e % (I)c.c_out);
    I r = e / (I)c.c_out;
    *ow = (int)(r % (I)c.w_out);
    r /= (I)c.w_out;
    *oh = (int)(r % (I)c.h_out);
    *n = (long long)(r / (I)c.h_out);
  } else {
    *ow = (int)(e % (I)c.w_out);
    I r = e / (I)c.w_out;
    *oh = (int)(r % (I)c.h_out);
    r /= (I)c.h_out;
    *oc = (int)(r % (I)c.c_out);
    *n = (long long)(r / (I)c.c_out);
  }
}

__device__ __forceinline__ void out_point(const dlc_cu_conv &c, long long e, long long total, long long *n, int *oc,
                                          int *oh, int *ow) {
  if (total <= 0xffffffffLL) out_point_i<unsigned>(c, (unsigned)e, n, oc, oh, ow);
  else out_point_i<unsigned long long>(c, (unsigned long long)e, n, oc, oh, ow);
}

/* x's offset of image n, channel ch, pixel (h, w) */
__device__ __forceinline__ long long x_index(const dlc_cu_conv &c, long long n, int ch, int h, int w) {
  return c.nhwc ? ((n * c.h_in + h) * c.w_in + w) * c.c_in + ch : ((n * c.c_in + ch) * c.h_in + h) * (long long)c.w_in + w;
}

template <typename T, bool Q>
__global__ void __launch_bounds__(DT_THREADS) direct_kernel(const dlc_cu_conv c, const T *__restrict__ x,
                                                            T *__restrict__ y, long long total) {
  using W = typename welem<T>::type;
  const long long e = (long long)blockIdx.x * DT_THREADS + threadIdx.x;
  if (e >= total) return;
  long long n;
  int oc, oh, ow;
  out_point(c, e, total, &n, &oc, &oh, &ow);
  const int g = oc / c.cout_g;
  const int ih0 = oh * c.stride_h - c.pad_t, iw0 = ow * c.stride_w - c.pad_l;
  const W *w = (const W *)c.w + (long long)oc * c.K;
  typename elem<T>::acc acc = 0;
  for (int ci = 0; ci < c.cin_g; ci++) {
    const int ch = g * c.cin_g + ci;
    for (int ky = 0; ky < c.k_h; ky++) {
      const int h = ih0 + ky * c.dil_h;
      if ((unsigned)h >= (unsigned)c.h_in) continue;
      for (int kx = 0; kx < c.k_w; kx++) {
        const int wx = iw0 + kx * c.dil_w;
        if ((unsigned)wx >= (unsigned)c.w_in) continue;
        const auto xv = xval(x + x_index(c, n, ch, h, wx), c.x_zp);
        const W *wp = w + (ci * c.k_h + ky) * c.k_w + kx;
        if constexpr (Q) acc += xv * wval_i((const int8_t *)wp);
        else acc = fmaf(xv, wval_f(wp), acc);
      }
    }
  }
  if constexpr (Q) put_q(c, y, e, oc, acc);
  else put(c, y, e, oc, acc);
}

template <typename T, bool Q>
__global__ void __launch_bounds__(DT_THREADS) csr_kernel(const dlc_cu_conv c, const T *__restrict__ x,
                                                         T *__restrict__ y, long long total) {
  using W = typename welem<T>::type;
  const long long e = (long long)blockIdx.x * DT_THREADS + threadIdx.x;
  if (e >= total) return;
  long long n;
  int oc, oh, ow;
  out_point(c, e, total, &n, &oc, &oh, &ow);
  const int g = oc / c.cout_g;
  const int ih0 = oh * c.stride_h - c.pad_t, iw0 = ow * c.stride_w - c.pad_l;
  const int taps = c.k_h * c.k_w;
  typename elem<T>::acc acc = 0;
  for (int j = __ldg(c.row_ptr + oc), end = __ldg(c.row_ptr + oc + 1); j < end; j++) {
    const int col = __ldg(c.col + j);
    const int ci = col / taps, t = col - ci * taps, ky = t / c.k_w, kx = t - ky * c.k_w;
    const int h = ih0 + ky * c.dil_h, wx = iw0 + kx * c.dil_w;
    if ((unsigned)h >= (unsigned)c.h_in || (unsigned)wx >= (unsigned)c.w_in) continue;
    const auto xv = xval(x + x_index(c, n, g * c.cin_g + ci, h, wx), c.x_zp);
    const W *wp = (const W *)c.val + j;
    if constexpr (Q) acc += xv * wval_i((const int8_t *)wp);
    else acc = fmaf(xv, wval_f(wp), acc);
  }
  if constexpr (Q) put_q(c, y, e, oc, acc);
  else put(c, y, e, oc, acc);
}

/* int8 NHWC with 4 | cin_g: 4 channels per dp4a. The bytes of u8 x are moved to s8 (x ^ 0x80 =
   x - 128) so that both operands are signed; the zero point and that shift come back exactly per
   valid tap: sum (x - zp) w = sum (x - 128) w + (128 - zp) sum w (s8 x: sum x w - zp sum w). */
template <bool U8>
__global__ void __launch_bounds__(DT_THREADS) q8_dp4a_kernel(const dlc_cu_conv c, const uint8_t *__restrict__ x,
                                                             uint8_t *__restrict__ y, long long total) {
  const long long e = (long long)blockIdx.x * DT_THREADS + threadIdx.x;
  if (e >= total) return;
  long long n;
  int oc, oh, ow;
  out_point(c, e, total, &n, &oc, &oh, &ow);
  const int g = oc / c.cout_g;
  const int ih0 = oh * c.stride_h - c.pad_t, iw0 = ow * c.stride_w - c.pad_l;
  const int taps = c.k_h * c.k_w, quads = c.cin_g / 4;
  const int *w = (const int *)c.w_taps + (long long)oc * taps * quads;
  const int *ts = c.tap_sum + (long long)oc * taps;
  const int shift = U8 ? 128 - c.x_zp : -c.x_zp;
  unsigned acc = 0;   /* mod 2^32: the exact sum fits s32 (DLC_Q8_MAX_K), its parts need not */
  for (int ky = 0; ky < c.k_h; ky++) {
    const int h = ih0 + ky * c.dil_h;
    if ((unsigned)h >= (unsigned)c.h_in) continue;
    for (int kx = 0; kx < c.k_w; kx++) {
      const int wx = iw0 + kx * c.dil_w;
      if ((unsigned)wx >= (unsigned)c.w_in) continue;
      const int t = ky * c.k_w + kx;
      const int *xq = (const int *)(x + x_index(c, n, g * c.cin_g, h, wx));
      const int *wq = w + t * quads;
      int s = 0;
      for (int q = 0; q < quads; q++) {
        int xv = __ldg(xq + q);
        if (U8) xv ^= (int)0x80808080u;
        s = __dp4a(xv, __ldg(wq + q), s);
      }
      acc += (unsigned)s + (unsigned)(shift * __ldg(ts + t));
    }
  }
  y[e] = (uint8_t)requant((int)acc, c.qbias[oc], c.mult[oc], c);
}

template <typename T, bool Q> static int launch(const dlc_cu_conv *c, int csr, const void *x, void *y, cudaStream_t s) {
  const long long total = (long long)c->n * c->c_out * c->h_out * c->w_out;
  const unsigned blocks = (unsigned)((total + DT_THREADS - 1) / DT_THREADS);
  if (csr) csr_kernel<T, Q><<<blocks, DT_THREADS, 0, s>>>(*c, (const T *)x, (T *)y, total);
  else direct_kernel<T, Q><<<blocks, DT_THREADS, 0, s>>>(*c, (const T *)x, (T *)y, total);
  return (int)cudaGetLastError();
}

static int run(const dlc_cu_conv *c, int csr, const void *x, void *y, void *stream) {
  cudaStream_t s = (cudaStream_t)stream;
  if (!csr && c->w_taps && (uintptr_t)x % 4 == 0) {
    const long long total = (long long)c->n * c->c_out * c->h_out * c->w_out;
    const unsigned blocks = (unsigned)((total + DT_THREADS - 1) / DT_THREADS);
    if (c->dtype == DLC_CU_U8) q8_dp4a_kernel<true><<<blocks, DT_THREADS, 0, s>>>(*c, (const uint8_t *)x, (uint8_t *)y, total);
    else q8_dp4a_kernel<false><<<blocks, DT_THREADS, 0, s>>>(*c, (const uint8_t *)x, (uint8_t *)y, total);
    return (int)cudaGetLastError();
  }
  switch (c->dtype) {
    case DLC_CU_F16: return launch<__half, false>(c, csr, x, y, s);
    case DLC_CU_U8: return launch<uint8_t, true>(c, csr, x, y, s);
    case DLC_CU_S8: return launch<int8_t, true>(c, csr, x, y, s);
    default: return launch<float, false>(c, csr, x, y, s);
  }
}

}  // namespace dlc_cu

extern "C" int dlc_cu_direct(const dlc_cu_conv *c, const void *x, void *y, void *stream) {
  return dlc_cu::run(c, 0, x, y, stream);
}
extern "C" int dlc_cu_csr(const dlc_cu_conv *c, const void *x, void *y, void *stream) {
  return dlc_cu::run(c, 1, x, y, stream);
}
