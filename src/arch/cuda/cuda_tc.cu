/* cuda_tc.cu - F16 implicit GEMM on the tensor cores (WMMA 16x16x16, fp32 accumulation).
 *
 * The same GEMM as cuda_igemm.cu (rows: output pixels, columns: the output channels of one
 * group, groups as the grid's z), on a 64 x BN block tile with a 32-deep k step: the 64 x 32
 * tile of the virtual im2col matrix is gathered into shared memory element by element
 * (tc_kernel), or as 16-byte rows of 8 channels where NHWC allows (tc_pipe_kernel, two stages),
 * the packed weights' 32 x BN tile next to it; 4 warps each own a part of the tile. The fp32 results pass through shared memory to the epilogue (bias, clamp, one
 * rounding to binary16), which writes them in the user layout. BN = 16, 32 or 64 fits the
 * group's channel count (grouped layers with few channels per group waste less). */
#include <mma.h>

#include "cuda_common.cuh"

namespace dlc_cu {

constexpr int TC_BM = 64, TC_BK = 32, TC_THREADS = 128;

template <int BN>
__global__ void __launch_bounds__(TC_THREADS) tc_kernel(const dlc_cu_conv c, const __half *__restrict__ x,
                                                        __half *__restrict__ y) {
  using namespace nvcuda;
  constexpr int WARPS_M = BN == 64 ? 2 : 4, WARPS_N = 4 / WARPS_M;
  constexpr int WM = TC_BM / WARPS_M, WN = BN / WARPS_N, FM = WM / 16, FN = WN / 16;
  constexpr int LDA = TC_BK + 8, LDB = BN + 8, LDC = BN + 4;
  __shared__ __align__(32) __half As[TC_BM * LDA];
  __shared__ __align__(32) __half Bs[TC_BK * LDB];
  __shared__ __align__(32) float Cs[TC_BM * LDC];
  __shared__ long long s_xoff[TC_BM], s_yoff[TC_BM];
  __shared__ int s_ih[TC_BM], s_iw[TC_BM];
  __shared__ int s_koff[TC_BK], s_ky[TC_BK], s_kx[TC_BK];

  const int tid = threadIdx.x, warp = tid / 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int g = blockIdx.z;
  const long long p0 = (long long)blockIdx.x * TC_BM;
  const int n0 = blockIdx.y * BN;
  const __half *wg = (const __half *)c.w + (long long)g * c.k_pad * c.n_pad + n0;

  if (tid < TC_BM) pixel_entry(c, p0 + tid, g, &s_xoff[tid], &s_ih[tid], &s_iw[tid], &s_yoff[tid]);

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
  for (int i = 0; i < FM; i++)
#pragma unroll
    for (int j = 0; j < FN; j++) wmma::fill_fragment(acc[i][j], 0.f);

  for (int k0 = 0; k0 < c.k_pad; k0 += TC_BK) {
    __syncthreads();
    if (tid < TC_BK) k_entry(c, k0 + tid, &s_koff[tid], &s_ky[tid], &s_kx[tid]);
    __syncthreads();
#pragma unroll 4
    for (int i = 0; i < TC_BM * TC_BK / TC_THREADS; i++) {
      /* NHWC: neighbours read neighbouring channels; NCHW: neighbouring pixels */
      const int kk = c.nhwc ? tid % 32 : tid / 64 + 2 * i;
      const int p = c.nhwc ? tid / 32 + 4 * i : tid % 64;
      As[p * LDA + kk] = __float2half_rn(x_at(c, x, s_xoff[p], s_ih[p], s_iw[p], s_koff[kk], s_ky[kk], s_kx[kk]));
    }
    for (int e = tid; e < TC_BK * BN / 8; e += TC_THREADS) {
      const int kk = e / (BN / 8), nn = (e % (BN / 8)) * 8;
      *(uint4 *)&Bs[kk * LDB + nn] = __ldg((const uint4 *)(wg + (long long)(k0 + kk) * c.n_pad + nn));
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < TC_BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[FM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b[FN];
#pragma unroll
      for (int i = 0; i < FM; i++) wmma::load_matrix_sync(a[i], &As[(wm * WM + 16 * i) * LDA + kk], LDA);
#pragma unroll
      for (int j = 0; j < FN; j++) wmma::load_matrix_sync(b[j], &Bs[kk * LDB + wn * WN + 16 * j], LDB);
#pragma unroll
      for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
  }
#pragma unroll
  for (int i = 0; i < FM; i++)
#pragma unroll
    for (int j = 0; j < FN; j++)
      wmma::store_matrix_sync(&Cs[(wm * WM + 16 * i) * LDC + wn * WN + 16 * j], acc[i][j], LDC, wmma::mem_row_major);
  __syncthreads();

  const long long P = (long long)c.n * c.h_out * c.w_out;
  const long long ostride = c.nhwc ? 1 : (long long)c.h_out * c.w_out;
  for (int e = tid; e < TC_BM * BN; e += TC_THREADS) {
    /* NHWC: neighbours write neighbouring channels; NCHW: neighbouring pixels */
    const int p = c.nhwc ? e / BN : e % TC_BM, nn = c.nhwc ? e % BN : e / TC_BM;
    if (p0 + p >= P || n0 + nn >= c.cout_g) continue;
    const int oc = g * c.cout_g + n0 + nn;
    y[s_yoff[p] + oc * ostride] = __float2half_rn(clampf(Cs[p * LDC + nn] + c.bias[oc], c.out_min, c.out_max));
  }
}

/* The 64 x BN tile of tc_kernel for NHWC with 8 | cin_g, pipelined as the big tile below: two
   shared-memory stages, the next tile's 16-byte loads in flight in registers while the warps
   multiply, one barrier per k step, k decoded in registers (no table). */
template <int BN>
__global__ void __launch_bounds__(TC_THREADS) tc_pipe_kernel(const dlc_cu_conv c, const __half *__restrict__ x,
                                                             __half *__restrict__ y) {
  using namespace nvcuda;
  constexpr int WARPS_M = BN == 64 ? 2 : 4, WARPS_N = 4 / WARPS_M;
  constexpr int WM = TC_BM / WARPS_M, WN = BN / WARPS_N, FM = WM / 16, FN = WN / 16;
  constexpr int LDA = TC_BK + 8, LDB = BN + 8, LDC = BN + 4;
  constexpr int SA = TC_BM * LDA, SB = TC_BK * LDB;
  constexpr int SMEM = 2 * (SA + SB) * 2 > TC_BM * LDC * 4 ? 2 * (SA + SB) * 2 : TC_BM * LDC * 4;
  constexpr int NB = TC_BK * BN / 8, RB = (NB + TC_THREADS - 1) / TC_THREADS;
  __shared__ __align__(128) unsigned char smem[SMEM];
  __shared__ long long s_xoff[TC_BM], s_yoff[TC_BM];
  __shared__ int s_ih[TC_BM], s_iw[TC_BM];
  __half *As = (__half *)smem, *Bs = As + 2 * SA;
  float *Cs = (float *)smem;

  const int tid = threadIdx.x, warp = tid / 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int g = blockIdx.z;
  const long long p0 = (long long)blockIdx.x * TC_BM;
  const int n0 = blockIdx.y * BN;
  const __half *wg = (const __half *)c.w + (long long)g * c.k_pad * c.n_pad + n0;
  if (tid < TC_BM) pixel_entry(c, p0 + tid, g, &s_xoff[tid], &s_ih[tid], &s_iw[tid], &s_yoff[tid]);
  __syncthreads();

  uint4 ra[2], rb[RB];
  auto load = [&](int k0) {
#pragma unroll
    for (int i = 0; i < 2; i++) {
      const int e = tid + TC_THREADS * i, p = e / 4, kk = (e % 4) * 8;
      int koff, ky, kx;
      k_entry(c, k0 + kk, &koff, &ky, &kx);
      const int h = s_ih[p] + ky, w = s_iw[p] + kx;
      ra[i] = make_uint4(0, 0, 0, 0);
      if ((unsigned)h < (unsigned)c.h_in && (unsigned)w < (unsigned)c.w_in)
        ra[i] = __ldg((const uint4 *)(x + s_xoff[p] + koff + ((long long)h * c.w_in + w) * c.c_in));
    }
#pragma unroll
    for (int i = 0; i < RB; i++) {
      const int e = tid + TC_THREADS * i;
      if (e < NB) rb[i] = __ldg((const uint4 *)(wg + (long long)(k0 + e / (BN / 8)) * c.n_pad + (e % (BN / 8)) * 8));
    }
  };
  auto store = [&](int st) {
    __half *a = As + st * SA, *b = Bs + st * SB;
#pragma unroll
    for (int i = 0; i < 2; i++) {
      const int e = tid + TC_THREADS * i;
      *(uint4 *)&a[(e / 4) * LDA + (e % 4) * 8] = ra[i];
    }
#pragma unroll
    for (int i = 0; i < RB; i++) {
      const int e = tid + TC_THREADS * i;
      if (e < NB) *(uint4 *)&b[(e / (BN / 8)) * LDB + (e % (BN / 8)) * 8] = rb[i];
    }
  };

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
  for (int i = 0; i < FM; i++)
#pragma unroll
    for (int j = 0; j < FN; j++) wmma::fill_fragment(acc[i][j], 0.f);
  const int nk = c.k_pad / TC_BK;
  load(0);
  store(0);
  __syncthreads();
  for (int kt = 0; kt < nk; kt++) {
    const int cur = kt & 1;
    if (kt + 1 < nk) load((kt + 1) * TC_BK);
    const __half *a = As + cur * SA, *b = Bs + cur * SB;
#pragma unroll
    for (int kk = 0; kk < TC_BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[FM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[FN];
#pragma unroll
      for (int i = 0; i < FM; i++) wmma::load_matrix_sync(fa[i], &a[(wm * WM + 16 * i) * LDA + kk], LDA);
#pragma unroll
      for (int j = 0; j < FN; j++) wmma::load_matrix_sync(fb[j], &b[kk * LDB + wn * WN + 16 * j], LDB);
#pragma unroll
      for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    if (kt + 1 < nk) store(cur ^ 1);
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < FM; i++)
#pragma unroll
    for (int j = 0; j < FN; j++)
      wmma::store_matrix_sync(&Cs[(wm * WM + 16 * i) * LDC + wn * WN + 16 * j], acc[i][j], LDC, wmma::mem_row_major);
  __syncthreads();
  const long long P = (long long)c.n * c.h_out * c.w_out;
  for (int e = tid; e < TC_BM * BN; e += TC_THREADS) {
    const int p = e / BN, nn = e % BN;
    if (p0 + p >= P || n0 + nn >= c.cout_g) continue;
    const int oc = g * c.cout_g + n0 + nn;
    y[s_yoff[p] + oc] = __float2half_rn(clampf(Cs[p * LDC + nn] + c.bias[oc], c.out_min, c.out_max));
  }
}

/* The big tile for large NHWC layers with 8 | cin_g: 128 x 64 x 32, 8 warps of 32 x 32, two
   shared-memory stages: the next tile's global loads are in flight (in registers) while the
   warps multiply the current one; one barrier per k step. The fp32 results reuse the stages'
   memory on their way to the epilogue. */
constexpr int TB_BM = 128, TB_BN = 64, TB_THREADS = 256;
constexpr int TB_LDA = TC_BK + 8, TB_LDB = TB_BN + 8, TB_LDC = TB_BN + 4;
constexpr int TB_A = TB_BM * TB_LDA, TB_B = TC_BK * TB_LDB;   /* halves per stage */
constexpr int TB_SMEM = (2 * (TB_A + TB_B) * 2 > TB_BM * TB_LDC * 4) ? 2 * (TB_A + TB_B) * 2 : TB_BM * TB_LDC * 4;

__global__ void __launch_bounds__(TB_THREADS) tc_big_kernel(const dlc_cu_conv c, const __half *__restrict__ x,
                                                            __half *__restrict__ y) {
  using namespace nvcuda;
  __shared__ __align__(128) unsigned char smem[TB_SMEM];
  __shared__ long long s_xoff[TB_BM], s_yoff[TB_BM];
  __shared__ int s_ih[TB_BM], s_iw[TB_BM];
  __half *As = (__half *)smem, *Bs = As + 2 * TB_A;
  float *Cs = (float *)smem;

  const int tid = threadIdx.x, warp = tid / 32, wm = warp / 2, wn = warp % 2;
  const int g = blockIdx.z;
  const long long p0 = (long long)blockIdx.x * TB_BM;
  const int n0 = blockIdx.y * TB_BN;
  const __half *wg = (const __half *)c.w + (long long)g * c.k_pad * c.n_pad + n0;
  if (tid < TB_BM) pixel_entry(c, p0 + tid, g, &s_xoff[tid], &s_ih[tid], &s_iw[tid], &s_yoff[tid]);
  __syncthreads();

  uint4 ra[2], rb;
  auto load = [&](int k0) {
#pragma unroll
    for (int i = 0; i < 2; i++) {
      const int e = tid + TB_THREADS * i, p = e / 4, kk = (e % 4) * 8;
      int koff, ky, kx;
      k_entry(c, k0 + kk, &koff, &ky, &kx);
      const int h = s_ih[p] + ky, w = s_iw[p] + kx;
      ra[i] = make_uint4(0, 0, 0, 0);
      if ((unsigned)h < (unsigned)c.h_in && (unsigned)w < (unsigned)c.w_in)
        ra[i] = __ldg((const uint4 *)(x + s_xoff[p] + koff + ((long long)h * c.w_in + w) * c.c_in));
    }
    const int kk = tid / 8, nn = (tid % 8) * 8;
    rb = __ldg((const uint4 *)(wg + (long long)(k0 + kk) * c.n_pad + nn));
  };
  auto store = [&](int stage) {
    __half *a = As + stage * TB_A, *b = Bs + stage * TB_B;
#pragma unroll
    for (int i = 0; i < 2; i++) {
      const int e = tid + TB_THREADS * i, p = e / 4, kk = (e % 4) * 8;
      *(uint4 *)&a[p * TB_LDA + kk] = ra[i];
    }
    *(uint4 *)&b[(tid / 8) * TB_LDB + (tid % 8) * 8] = rb;
  };

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; i++)
#pragma unroll
    for (int j = 0; j < 2; j++) wmma::fill_fragment(acc[i][j], 0.f);

  const int nk = c.k_pad / TC_BK;
  load(0);
  store(0);
  __syncthreads();
  for (int kt = 0; kt < nk; kt++) {
    const int cur = kt & 1;
    if (kt + 1 < nk) load((kt + 1) * TC_BK);
    const __half *a = As + cur * TB_A, *b = Bs + cur * TB_B;
#pragma unroll
    for (int kk = 0; kk < TC_BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb[2];
#pragma unroll
      for (int i = 0; i < 2; i++) wmma::load_matrix_sync(fa[i], &a[(wm * 32 + 16 * i) * TB_LDA + kk], TB_LDA);
#pragma unroll
      for (int j = 0; j < 2; j++) wmma::load_matrix_sync(fb[j], &b[kk * TB_LDB + wn * 32 + 16 * j], TB_LDB);
#pragma unroll
      for (int i = 0; i < 2; i++)
#pragma unroll
        for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    if (kt + 1 < nk) store(cur ^ 1);
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 2; i++)
#pragma unroll
    for (int j = 0; j < 2; j++)
      wmma::store_matrix_sync(&Cs[(wm * 32 + 16 * i) * TB_LDC + wn * 32 + 16 * j], acc[i][j], TB_LDC,
                              wmma::mem_row_major);
  __syncthreads();
  const long long P = (long long)c.n * c.h_out * c.w_out;
  for (int e = tid; e < TB_BM * TB_BN; e += TB_THREADS) {
    const int p = e / TB_BN, nn = e % TB_BN;
    if (p0 + p >= P || n0 + nn >= c.cout_g) continue;
    const int oc = g * c.cout_g + n0 + nn;
    y[s_yoff[p] + oc] = __float2half_rn(clampf(Cs[p * TB_LDC + nn] + c.bias[oc], c.out_min, c.out_max));
  }
}

template <int BN, bool VEC> static int launch(const dlc_cu_conv *c, const void *x, void *y, cudaStream_t s) {
  const long long P = (long long)c->n * c->h_out * c->w_out;
  dim3 grid((unsigned)((P + TC_BM - 1) / TC_BM), (unsigned)((c->cout_g + BN - 1) / BN), (unsigned)c->groups);
  if (VEC) tc_pipe_kernel<BN><<<grid, TC_THREADS, 0, s>>>(*c, (const __half *)x, (__half *)y);
  else tc_kernel<BN><<<grid, TC_THREADS, 0, s>>>(*c, (const __half *)x, (__half *)y);
  return (int)cudaGetLastError();
}

}  // namespace dlc_cu

/* The big tile where it still fills the GPU twice over (about 2 x 132 blocks). */
extern "C" int dlc_cu_tc_big(const dlc_cu_conv *c) {
  const long long P = (long long)c->n * c->h_out * c->w_out;
  return c->nhwc && c->cin_g % 8 == 0 && ((P + 127) / 128) * ((c->cout_g + 63) / 64) * c->groups >= 264;
}

extern "C" int dlc_cu_tc(const dlc_cu_conv *c, int bn, int vec, const void *x, void *y, void *stream) {
  using namespace dlc_cu;
  cudaStream_t s = (cudaStream_t)stream;
  if (vec && bn == 64 && dlc_cu_tc_big(c)) {
    const long long P = (long long)c->n * c->h_out * c->w_out;
    dim3 grid((unsigned)((P + TB_BM - 1) / TB_BM), (unsigned)((c->cout_g + TB_BN - 1) / TB_BN), (unsigned)c->groups);
    tc_big_kernel<<<grid, TB_THREADS, 0, s>>>(*c, (const __half *)x, (__half *)y);
    return (int)cudaGetLastError();
  }
  if (vec) return bn == 16 ? launch<16, true>(c, x, y, s) : bn == 32 ? launch<32, true>(c, x, y, s) : launch<64, true>(c, x, y, s);
  return bn == 16 ? launch<16, false>(c, x, y, s) : bn == 32 ? launch<32, false>(c, x, y, s) : launch<64, false>(c, x, y, s);
}
