/* cuda_mma.cu - F16 implicit GEMM for large NHWC layers on the tensor cores through mma.sync
 * (m16n8k16, fp32 accumulation), with ldmatrix and cp.async.
 *
 * The GEMM of cuda_tc.cu (rows: output pixels, columns: one group's output channels, groups as
 * the grid's z) on a 128 x BN block tile (BN = 64 or 128), 32 deep, 8 warps of 64 x 32 or 32 x 32.
 * Each k step's tile of the virtual im2col matrix is copied straight from x into shared memory
 * by cp.async in 16-byte rows of 8 channels (8 | cin_g), padding taps zero-filled by the copy
 * itself, next to the packed weights' 32 x BN tile; two stages, so the copies of step k + 1 run
 * while the warps multiply step k. Fragments come from shared memory by ldmatrix (.trans for
 * the k x n weights); the epilogue adds the bias, clamps and rounds once to binary16 straight
 * from the accumulators. */
#include "cuda_common.cuh"

namespace dlc_cu {

constexpr int MM_BM = 128, MM_BK = 32, MM_THREADS = 256, MM_LDA = MM_BK + 8;

__device__ __forceinline__ unsigned smem_addr(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void cp_async16(void *dst, const void *src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void ldsm_x4(unsigned &r0, unsigned &r1, unsigned &r2, unsigned &r3, const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(smem_addr(p)));
}

__device__ __forceinline__ void ldsm_x4_t(unsigned &r0, unsigned &r1, unsigned &r2, unsigned &r3, const void *p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(smem_addr(p)));
}

__device__ __forceinline__ void mma16816(float *c, const unsigned *a, const unsigned *b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <int BN>
__global__ void __launch_bounds__(MM_THREADS) mma_kernel(const dlc_cu_conv c, const __half *__restrict__ x,
                                                         __half *__restrict__ y) {
  constexpr int WARPS_N = BN / 32, WARPS_M = 8 / WARPS_N, WM = MM_BM / WARPS_M, MI = WM / 16;
  constexpr int LDB = BN + 8, SA = MM_BM * MM_LDA, SB = MM_BK * LDB;
  constexpr int B_CHUNKS = MM_BK * BN / 8, B_PER_THREAD = (B_CHUNKS + MM_THREADS - 1) / MM_THREADS;
  __shared__ __align__(128) __half As[2 * SA];
  __shared__ __align__(128) __half Bs[2 * SB];
  __shared__ long long s_xoff[MM_BM], s_yoff[MM_BM];
  __shared__ int s_ih[MM_BM], s_iw[MM_BM];

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int g = blockIdx.z;
  const long long p0 = (long long)blockIdx.x * MM_BM;
  const int n0 = blockIdx.y * BN;
  const __half *wg = (const __half *)c.w + (long long)g * c.k_pad * c.n_pad + n0;
  if (tid < MM_BM) pixel_entry(c, p0 + tid, g, &s_xoff[tid], &s_ih[tid], &s_iw[tid], &s_yoff[tid]);
  __syncthreads();

  auto issue = [&](int stage, int k0) {
    __half *a = As + stage * SA, *b = Bs + stage * SB;
#pragma unroll
    for (int i = 0; i < 2; i++) {
      const int e = tid + MM_THREADS * i, p = e / 4, kq = (e % 4) * 8;
      int koff, ky, kx;
      k_entry(c, k0 + kq, &koff, &ky, &kx);
      const int h = s_ih[p] + ky, w = s_iw[p] + kx;
      const bool in = (unsigned)h < (unsigned)c.h_in && (unsigned)w < (unsigned)c.w_in;
      const __half *src = in ? x + s_xoff[p] + koff + ((long long)h * c.w_in + w) * c.c_in : x;
      cp_async16(&a[p * MM_LDA + kq], src, in);
    }
#pragma unroll
    for (int i = 0; i < B_PER_THREAD; i++) {
      const int e = tid + MM_THREADS * i;
      if (e < B_CHUNKS) {
        const int kk = e / (BN / 8), nn = (e % (BN / 8)) * 8;
        cp_async16(&b[kk * LDB + nn], wg + (long long)(k0 + kk) * c.n_pad + nn, true);
      }
    }
    asm volatile("cp.async.commit_group;\n" ::);
  };

  float acc[MI][4][4];
#pragma unroll
  for (int i = 0; i < MI; i++)
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
      for (int r = 0; r < 4; r++) acc[i][j][r] = 0.f;

  const int nk = c.k_pad / MM_BK;
  issue(0, 0);
  for (int kt = 0; kt < nk; kt++) {
    if (kt + 1 < nk) {
      issue((kt + 1) & 1, (kt + 1) * MM_BK);
      asm volatile("cp.async.wait_group 1;\n" ::);
    } else {
      asm volatile("cp.async.wait_group 0;\n" ::);
    }
    __syncthreads();
    const __half *a = As + (kt & 1) * SA, *b = Bs + (kt & 1) * SB;
#pragma unroll
    for (int kk = 0; kk < MM_BK; kk += 16) {
      unsigned af[MI][4], bf[4][2];
#pragma unroll
      for (int i = 0; i < MI; i++)
        ldsm_x4(af[i][0], af[i][1], af[i][2], af[i][3],
                &a[(wm * WM + i * 16 + lane % 16) * MM_LDA + kk + (lane / 16) * 8]);
#pragma unroll
      for (int j = 0; j < 2; j++)
        ldsm_x4_t(bf[2 * j][0], bf[2 * j][1], bf[2 * j + 1][0], bf[2 * j + 1][1],
                  &b[(kk + lane % 8 + ((lane / 8) % 2) * 8) * LDB + wn * 32 + j * 16 + (lane / 16) * 8]);
#pragma unroll
      for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < 4; j++) mma16816(acc[i][j], af[i], bf[j]);
    }
    __syncthreads();   /* the stage is consumed before the next step's copies overwrite it */
  }

  const long long P = (long long)c.n * c.h_out * c.w_out;
#pragma unroll
  for (int i = 0; i < MI; i++)
#pragma unroll
    for (int h = 0; h < 2; h++) {
      const int p = wm * WM + i * 16 + lane / 4 + h * 8;
      if (p0 + p >= P) continue;
#pragma unroll
      for (int j = 0; j < 4; j++)
#pragma unroll
        for (int q = 0; q < 2; q++) {
          const int nn = n0 + wn * 32 + j * 8 + (lane % 4) * 2 + q;
          if (nn >= c.cout_g) continue;
          const int oc = g * c.cout_g + nn;
          y[s_yoff[p] + oc] = __float2half_rn(clampf(acc[i][j][h * 2 + q] + c.bias[oc], c.out_min, c.out_max));
        }
    }
}

}  // namespace dlc_cu

/* 128-pixel tiles where the layer gives them about a wave of blocks (132 SMs). */
extern "C" int dlc_cu_mma_applies(const dlc_cu_conv *c) {
  const long long P = (long long)c->n * c->h_out * c->w_out;
  return c->nhwc && c->dtype == DLC_CU_F16 && c->cin_g % 8 == 0 && c->c_in % 8 == 0 && c->cout_g >= 48 &&
         ((P + 127) / 128) * ((c->cout_g + 127) / 128) * c->groups >= 100;
}

extern "C" int dlc_cu_mma(const dlc_cu_conv *c, int bn, const void *x, void *y, void *stream) {
  using namespace dlc_cu;
  cudaStream_t s = (cudaStream_t)stream;
  const long long P = (long long)c->n * c->h_out * c->w_out;
  dim3 grid((unsigned)((P + MM_BM - 1) / MM_BM), (unsigned)((c->cout_g + bn - 1) / bn), (unsigned)c->groups);
  if (bn == 128) mma_kernel<128><<<grid, MM_THREADS, 0, s>>>(*c, (const __half *)x, (__half *)y);
  else mma_kernel<64><<<grid, MM_THREADS, 0, s>>>(*c, (const __half *)x, (__half *)y);
  return (int)cudaGetLastError();
}
