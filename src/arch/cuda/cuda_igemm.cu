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
  if (c->dtype == DLC_CU_F16)
    return bn == 16 ? launch<__half, 16>(c, x, y, s) : launch<__half, 64>(c, x, y, s);
  return bn == 16 ? launch<float, 16>(c, x, y, s) : launch<float, 64>(c, x, y, s);
}
