/* cuda_igemm.cu - fp32-accumulating implicit GEMM on the CUDA cores, for F32 and F16: the
 * correctness backbone of the CUDA backend, every shape.
 *
 * Per group (the grid's z), the GEMM Y[pixel][oc] = sum_k A[pixel][k] * W[k][oc], where A is
 * the virtual im2col matrix: a 64 x 16 tile of it is gathered from x into shared memory through
 * the block's pixel table and the tile's k table (padding reads 0), next to the 16 x BN tile of
 * the packed weights. 256 threads each hold 4 x (BN / 16) accumulators. */
#include "cuda_common.cuh"

namespace dlc_cu {

constexpr int IG_BM = 64, IG_BK = 16, IG_THREADS = 256;

template <typename T, int BN>
__global__ void __launch_bounds__(IG_THREADS) igemm_kernel(const dlc_cu_conv c, const T *__restrict__ x,
                                                           T *__restrict__ y) {
  constexpr int TN = BN / 16;
  __shared__ float As[IG_BK][IG_BM];
  __shared__ float Bs[IG_BK][BN];
  __shared__ long long s_xoff[IG_BM], s_yoff[IG_BM];
  __shared__ int s_ih[IG_BM], s_iw[IG_BM];
  __shared__ int s_koff[IG_BK], s_ky[IG_BK], s_kx[IG_BK];

  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int g = blockIdx.z;
  const long long p0 = (long long)blockIdx.x * IG_BM;
  const int n0 = blockIdx.y * BN;
  const T *wg = (const T *)c.w + (long long)g * c.k_pad * c.n_pad + n0;

  if (tid < IG_BM) pixel_entry(c, p0 + tid, g, &s_xoff[tid], &s_ih[tid], &s_iw[tid], &s_yoff[tid]);

  float acc[4][TN];
#pragma unroll
  for (int i = 0; i < 4; i++)
#pragma unroll
    for (int j = 0; j < TN; j++) acc[i][j] = 0.f;

  for (int k0 = 0; k0 < c.k_pad; k0 += IG_BK) {
    __syncthreads();   /* the previous tile is consumed */
    if (tid < IG_BK) k_entry(c, k0 + tid, &s_koff[tid], &s_ky[tid], &s_kx[tid]);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 4; i++) {
      /* NHWC: neighbours read neighbouring channels; NCHW: neighbouring pixels */
      const int kk = c.nhwc ? tid % 16 : tid / 64 + 4 * i;
      const int p = c.nhwc ? tid / 16 + 16 * i : tid % 64;
      As[kk][p] = x_at(c, x, s_xoff[p], s_ih[p], s_iw[p], s_koff[kk], s_ky[kk], s_kx[kk]);
    }
#pragma unroll
    for (int e = tid; e < IG_BK * BN; e += IG_THREADS) {
      const int kk = e / BN, nn = e % BN;
      Bs[kk][nn] = load_f(wg + (long long)(k0 + kk) * c.n_pad + nn);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < IG_BK; kk++) {
      float a[4], b[TN];
#pragma unroll
      for (int i = 0; i < 4; i++) a[i] = As[kk][tx + 16 * i];
#pragma unroll
      for (int j = 0; j < TN; j++) b[j] = Bs[kk][ty + 16 * j];
#pragma unroll
      for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < TN; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  }

  const long long P = (long long)c.n * c.h_out * c.w_out;
  const long long ostride = c.nhwc ? 1 : (long long)c.h_out * c.w_out;
#pragma unroll
  for (int i = 0; i < 4; i++) {
    const int p = tx + 16 * i;
    if (p0 + p >= P) continue;
#pragma unroll
    for (int j = 0; j < TN; j++) {
      const int nn = n0 + ty + 16 * j;
      if (nn >= c.cout_g) continue;
      const int oc = g * c.cout_g + nn;
      store_f(y + s_yoff[p] + oc * ostride, clampf(acc[i][j] + c.bias[oc], c.out_min, c.out_max));
    }
  }
}

/* F32, large layers: a 128 x 128 block tile, 8 deep, each thread 8 x 8 outputs (two 4-wide
   strips in each direction, read as float4 from shared memory: 64 FMAs per 4 loads), two
   shared-memory stages with the next tile's global loads in flight in registers. */
constexpr int GB_BM = 128, GB_BN = 128, GB_BK = 8;

__global__ void __launch_bounds__(IG_THREADS) igemm_big_kernel(const dlc_cu_conv c, const float *__restrict__ x,
                                                               float *__restrict__ y) {
  __shared__ __align__(16) float As[2][GB_BK][GB_BM];
  __shared__ __align__(16) float Bs[2][GB_BK][GB_BN];
  __shared__ long long s_xoff[GB_BM], s_yoff[GB_BM];
  __shared__ int s_ih[GB_BM], s_iw[GB_BM];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int g = blockIdx.z;
  const long long p0 = (long long)blockIdx.x * GB_BM;
  const int n0 = blockIdx.y * GB_BN;
  const float *wg = (const float *)c.w + (long long)g * c.k_pad * c.n_pad + n0;
  if (tid < GB_BM) pixel_entry(c, p0 + tid, g, &s_xoff[tid], &s_ih[tid], &s_iw[tid], &s_yoff[tid]);
  __syncthreads();

  float ra[4];
  float4 rb;
  auto load = [&](int k0) {
#pragma unroll
    for (int i = 0; i < 4; i++) {
      /* NHWC: neighbours read neighbouring channels; NCHW: neighbouring pixels */
      const int kk = c.nhwc ? tid % 8 : tid / 128 + 2 * i, p = c.nhwc ? tid / 8 + 32 * i : tid % 128;
      int koff, ky, kx;
      k_entry(c, k0 + kk, &koff, &ky, &kx);
      ra[i] = x_at(c, x, s_xoff[p], s_ih[p], s_iw[p], koff, ky, kx);
    }
    rb = __ldg((const float4 *)(wg + (long long)(k0 + tid / 32) * c.n_pad + (tid % 32) * 4));
  };
  auto store = [&](int st) {
#pragma unroll
    for (int i = 0; i < 4; i++) {
      const int kk = c.nhwc ? tid % 8 : tid / 128 + 2 * i, p = c.nhwc ? tid / 8 + 32 * i : tid % 128;
      As[st][kk][p] = ra[i];
    }
    *(float4 *)&Bs[st][tid / 32][(tid % 32) * 4] = rb;
  };

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; i++)
#pragma unroll
    for (int j = 0; j < 8; j++) acc[i][j] = 0.f;
  const int nk = c.k_pad / GB_BK;
  load(0);
  store(0);
  __syncthreads();
  for (int kt = 0; kt < nk; kt++) {
    const int cur = kt & 1;
    if (kt + 1 < nk) load((kt + 1) * GB_BK);
#pragma unroll
    for (int kk = 0; kk < GB_BK; kk++) {
      const float4 a0 = *(const float4 *)&As[cur][kk][tx * 4], a1 = *(const float4 *)&As[cur][kk][64 + tx * 4];
      const float4 b0 = *(const float4 *)&Bs[cur][kk][ty * 4], b1 = *(const float4 *)&Bs[cur][kk][64 + ty * 4];
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if (kt + 1 < nk) store(cur ^ 1);
    __syncthreads();
  }
  const long long P = (long long)c.n * c.h_out * c.w_out;
  const long long ostride = c.nhwc ? 1 : (long long)c.h_out * c.w_out;
#pragma unroll
  for (int i = 0; i < 8; i++) {
    const int p = (i < 4 ? 0 : 64) + tx * 4 + (i & 3);
    if (p0 + p >= P) continue;
#pragma unroll
    for (int j = 0; j < 8; j++) {
      const int nn = n0 + (j < 4 ? 0 : 64) + ty * 4 + (j & 3);
      if (nn >= c.cout_g) continue;
      const int oc = g * c.cout_g + nn;
      y[s_yoff[p] + oc * ostride] = clampf(acc[i][j] + c.bias[oc], c.out_min, c.out_max);
    }
  }
}

/* The same tile reading each k's channel and tap from the plan's table (c.ktab, one 16-byte
   load instead of divisions), NCHW outputs with 4 | h_out * w_out as float4 (vec4)
   (DLCONV_CUDA_KTAB=1). Measured on an H200 (as one kernel with the table optional at run time):
   129 registers allow one block per SM instead of two, and it lost to igemm_big_kernel (ResNet-50
   NCHW batch 32, 1x1 256 > 128 on 56x56: 0.48 ms against 0.31 in an earlier run of the plain
   kernel). */
__global__ void __launch_bounds__(IG_THREADS) igemm_big_tab_kernel(const dlc_cu_conv c, const float *__restrict__ x,
                                                               float *__restrict__ y, int vec4) {
  __shared__ __align__(16) float As[2][GB_BK][GB_BM];
  __shared__ __align__(16) float Bs[2][GB_BK][GB_BN];
  __shared__ long long s_xoff[GB_BM], s_yoff[GB_BM];
  __shared__ int s_ih[GB_BM], s_iw[GB_BM];
  const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
  const int g = blockIdx.z;
  const long long p0 = (long long)blockIdx.x * GB_BM;
  const int n0 = blockIdx.y * GB_BN;
  const float *wg = (const float *)c.w + (long long)g * c.k_pad * c.n_pad + n0;
  if (tid < GB_BM) pixel_entry(c, p0 + tid, g, &s_xoff[tid], &s_ih[tid], &s_iw[tid], &s_yoff[tid]);
  __syncthreads();

  float ra[4];
  float4 rb;
  auto load = [&](int k0) {
#pragma unroll
    for (int i = 0; i < 4; i++) {
      /* NHWC: neighbours read neighbouring channels; NCHW: neighbouring pixels */
      const int kk = c.nhwc ? tid % 8 : tid / 128 + 2 * i, p = c.nhwc ? tid / 8 + 32 * i : tid % 128;
      int koff, ky, kx;
      if (c.ktab) {
        const int4 t = __ldg((const int4 *)c.ktab + k0 + kk);
        koff = t.x; ky = t.y; kx = t.z;
      } else {
        k_entry(c, k0 + kk, &koff, &ky, &kx);
      }
      ra[i] = x_at(c, x, s_xoff[p], s_ih[p], s_iw[p], koff, ky, kx);
    }
    rb = __ldg((const float4 *)(wg + (long long)(k0 + tid / 32) * c.n_pad + (tid % 32) * 4));
  };
  auto store = [&](int st) {
#pragma unroll
    for (int i = 0; i < 4; i++) {
      const int kk = c.nhwc ? tid % 8 : tid / 128 + 2 * i, p = c.nhwc ? tid / 8 + 32 * i : tid % 128;
      As[st][kk][p] = ra[i];
    }
    *(float4 *)&Bs[st][tid / 32][(tid % 32) * 4] = rb;
  };

  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; i++)
#pragma unroll
    for (int j = 0; j < 8; j++) acc[i][j] = 0.f;
  const int nk = c.k_pad / GB_BK;
  load(0);
  store(0);
  __syncthreads();
  for (int kt = 0; kt < nk; kt++) {
    const int cur = kt & 1;
    if (kt + 1 < nk) load((kt + 1) * GB_BK);
#pragma unroll
    for (int kk = 0; kk < GB_BK; kk++) {
      const float4 a0 = *(const float4 *)&As[cur][kk][tx * 4], a1 = *(const float4 *)&As[cur][kk][64 + tx * 4];
      const float4 b0 = *(const float4 *)&Bs[cur][kk][ty * 4], b1 = *(const float4 *)&Bs[cur][kk][64 + ty * 4];
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; i++)
#pragma unroll
        for (int j = 0; j < 8; j++) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    if (kt + 1 < nk) store(cur ^ 1);
    __syncthreads();
  }
  const long long P = (long long)c.n * c.h_out * c.w_out;
  const long long ostride = c.nhwc ? 1 : (long long)c.h_out * c.w_out;
  if (vec4) {   /* NCHW, 4 | h_out * w_out: a thread's 4 neighbouring pixels of a channel as one float4 */
#pragma unroll
    for (int ih = 0; ih < 2; ih++) {
      const int p = ih * 64 + tx * 4;
      if (p0 + p >= P) continue;
#pragma unroll
      for (int j = 0; j < 8; j++) {
        const int nn = n0 + (j < 4 ? 0 : 64) + ty * 4 + (j & 3);
        if (nn >= c.cout_g) continue;
        const int oc = g * c.cout_g + nn;
        const float b = c.bias[oc];
        float4 v;
        v.x = clampf(acc[ih * 4 + 0][j] + b, c.out_min, c.out_max);
        v.y = clampf(acc[ih * 4 + 1][j] + b, c.out_min, c.out_max);
        v.z = clampf(acc[ih * 4 + 2][j] + b, c.out_min, c.out_max);
        v.w = clampf(acc[ih * 4 + 3][j] + b, c.out_min, c.out_max);
        *(float4 *)(y + s_yoff[p] + oc * ostride) = v;
      }
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < 8; i++) {
    const int p = (i < 4 ? 0 : 64) + tx * 4 + (i & 3);
    if (p0 + p >= P) continue;
#pragma unroll
    for (int j = 0; j < 8; j++) {
      const int nn = n0 + (j < 4 ? 0 : 64) + ty * 4 + (j & 3);
      if (nn >= c.cout_g) continue;
      const int oc = g * c.cout_g + nn;
      y[s_yoff[p] + oc * ostride] = clampf(acc[i][j] + c.bias[oc], c.out_min, c.out_max);
    }
  }
}

template <typename T, int BN> static int launch(const dlc_cu_conv *c, const void *x, void *y, cudaStream_t s) {
  const long long P = (long long)c->n * c->h_out * c->w_out;
  dim3 grid((unsigned)((P + IG_BM - 1) / IG_BM), (unsigned)((c->cout_g + BN - 1) / BN), (unsigned)c->groups);
  igemm_kernel<T, BN><<<grid, IG_THREADS, 0, s>>>(*c, (const T *)x, (T *)y);
  return (int)cudaGetLastError();
}

}  // namespace dlc_cu

extern "C" int dlc_cu_igemm(const dlc_cu_conv *c, int bn, const void *x, void *y, void *stream) {
  using namespace dlc_cu;
  cudaStream_t s = (cudaStream_t)stream;
  if (bn == 128 && c->dtype == DLC_CU_F32) {
    const long long P = (long long)c->n * c->h_out * c->w_out;
    dim3 grid((unsigned)((P + GB_BM - 1) / GB_BM), (unsigned)((c->cout_g + GB_BN - 1) / GB_BN), (unsigned)c->groups);
    /* with the plan's k table (DLCONV_CUDA_KTAB=1): float4 stores where NCHW rows allow */
    const int vec4 = c->ktab && !c->nhwc && (c->h_out * c->w_out) % 4 == 0 && (uintptr_t)y % 16 == 0;
    if (c->ktab) igemm_big_tab_kernel<<<grid, IG_THREADS, 0, s>>>(*c, (const float *)x, (float *)y, vec4);
    else igemm_big_kernel<<<grid, IG_THREADS, 0, s>>>(*c, (const float *)x, (float *)y);
    return (int)cudaGetLastError();
  }
  if (c->dtype == DLC_CU_F16)
    return bn == 16 ? launch<__half, 16>(c, x, y, s) : launch<__half, 64>(c, x, y, s);
  return bn == 16 ? launch<float, 16>(c, x, y, s) : launch<float, 64>(c, x, y, s);
}
