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


/* ---- the second generation: any tile, 3-stage pipeline, warp-split k, staged 16-byte stores ----
 *
 * A BM x BN block tile (BM = 32, 64 or 128; BN = 16, 32, 64 or 128) of warp tiles WTM x WTN,
 * optionally with the k step split across KS groups of warps (KS = 2: one group takes the first
 * 16 of each 32-deep step, the other the second; their sums meet in shared memory at the end),
 * so that small layers get many blocks without losing tensor-core work per warp. cp.async keeps
 * STAGES - 1 k steps in flight (VA: NHWC rows of 8 channels, 8 | cin_g and c_in); without VA, the
 * tile of x is gathered element by element through the plan's k table (c.ktab), any layout. The epilogue writes bias + clamp + binary16 rounding into a
 * shared-memory tile and stores it as 16-byte rows of 8 channels (where c_out, cout_g and y
 * allow; else element by element). Shared memory is dynamic (up to about 57 KB). */
template <int BM, int BN, int WTM, int WTN, int KS, int STAGES>
struct Mma2 {
  static constexpr int WARPS_M = BM / WTM, WARPS_N = BN / WTN, WARPS = WARPS_M * WARPS_N * KS;
  static constexpr int THREADS = 32 * WARPS, MI = WTM / 16, NJ = WTN / 8;
  static constexpr int LDA = MM_BK + 8, LDB = BN + 8, SA = BM * LDA, SB = MM_BK * LDB;
  static constexpr int PIPE = STAGES * (SA + SB) * 2;
  static constexpr int LDR = BN + 4, LDC = BN + 8;
  static constexpr int RED = KS > 1 ? BM * LDR * 4 : 0, EPI = RED + BM * LDC * 2;
  static constexpr int SMEM = PIPE > EPI ? PIPE : EPI;
  static_assert(NJ % 2 == 0, "warp tile n: pairs of n8 fragments");
};

template <int BM, int BN, int WTM, int WTN, int KS, int STAGES, bool VA>
__global__ void __launch_bounds__(Mma2<BM, BN, WTM, WTN, KS, STAGES>::THREADS)
    mma2_kernel(const dlc_cu_conv c, const __half *__restrict__ x, __half *__restrict__ y, int vec_out) {
  using T = Mma2<BM, BN, WTM, WTN, KS, STAGES>;
  constexpr int THREADS = T::THREADS, MI = T::MI, NJ = T::NJ, LDA = T::LDA, LDB = T::LDB, SA = T::SA, SB = T::SB;
  extern __shared__ __align__(128) unsigned char smem[];
  __half *As = (__half *)smem, *Bs = As + STAGES * SA;
  __shared__ long long s_xoff[BM], s_yoff[BM];
  __shared__ int s_ih[BM], s_iw[BM];

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int ks = warp / (T::WARPS_M * T::WARPS_N), wmn = warp % (T::WARPS_M * T::WARPS_N);
  const int wm = wmn / T::WARPS_N, wn = wmn % T::WARPS_N;
  const int g = blockIdx.z;
  const long long p0 = (long long)blockIdx.x * BM;
  const int n0 = blockIdx.y * BN;
  const __half *wg = (const __half *)c.w + (long long)g * c.k_pad * c.n_pad + n0;
  for (int i = tid; i < BM; i += THREADS) pixel_entry(c, p0 + i, g, &s_xoff[i], &s_ih[i], &s_iw[i], &s_yoff[i]);
  __syncthreads();

  auto issue = [&](int stage, int k0) {
    __half *a = As + stage * SA, *b = Bs + stage * SB;
    static_assert(BM * (MM_BK / 8) % THREADS == 0, "whole rows of A per thread");
    if constexpr (VA) {
#pragma unroll
      for (int i = 0; i < BM * (MM_BK / 8) / THREADS; i++) {
        const int e = tid + i * THREADS, p = e / (MM_BK / 8), kq = (e % (MM_BK / 8)) * 8;
        int koff, ky, kx;
        k_entry(c, k0 + kq, &koff, &ky, &kx);
        const int h = s_ih[p] + ky, w = s_iw[p] + kx;
        const bool in = (unsigned)h < (unsigned)c.h_in && (unsigned)w < (unsigned)c.w_in;
        const __half *src = in ? x + s_xoff[p] + koff + ((long long)h * c.w_in + w) * c.c_in : x;
        cp_async16(&a[p * LDA + kq], src, in);
      }
    } else {
      /* element by element through the k table (NHWC: neighbours read neighbouring channels;
         NCHW: neighbouring pixels); plain stores into a stage no warp reads until a later barrier */
      float v[BM * MM_BK / THREADS];   /* all of a thread's loads in flight before its stores */
#pragma unroll
      for (int i = 0; i < BM * MM_BK / THREADS; i++) {
        const int e = tid + i * THREADS, p = c.nhwc ? e / MM_BK : e % BM, kk = c.nhwc ? e % MM_BK : e / BM;
        const int4 t = __ldg((const int4 *)c.ktab + k0 + kk);
        v[i] = x_at(c, x, s_xoff[p], s_ih[p], s_iw[p], t.x, t.y, t.z);
      }
#pragma unroll
      for (int i = 0; i < BM * MM_BK / THREADS; i++) {
        const int e = tid + i * THREADS, p = c.nhwc ? e / MM_BK : e % BM, kk = c.nhwc ? e % MM_BK : e / BM;
        a[p * LDA + kk] = __float2half_rn(v[i]);
      }
    }
#pragma unroll
    for (int e = tid; e < MM_BK * (BN / 8); e += THREADS) {
      const int kk = e / (BN / 8), nn = (e % (BN / 8)) * 8;
      cp_async16(&b[kk * LDB + nn], wg + (long long)(k0 + kk) * c.n_pad + nn, true);
    }
  };

  float acc[MI][NJ][4];
#pragma unroll
  for (int i = 0; i < MI; i++)
#pragma unroll
    for (int j = 0; j < NJ; j++)
#pragma unroll
      for (int r = 0; r < 4; r++) acc[i][j][r] = 0.f;

  const int nk = c.k_pad / MM_BK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; s++) {
    if (s < nk) issue(s, s * MM_BK);
    asm volatile("cp.async.commit_group;\n" ::);
  }
  for (int kt = 0; kt < nk; kt++) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
    __syncthreads();   /* step kt is in; every warp is done with step kt - 1's stage */
    if (kt + STAGES - 1 < nk) issue((kt + STAGES - 1) % STAGES, (kt + STAGES - 1) * MM_BK);
    asm volatile("cp.async.commit_group;\n" ::);
    const __half *a = As + (kt % STAGES) * SA, *b = Bs + (kt % STAGES) * SB;
#pragma unroll
    for (int kb = 0; kb < MM_BK; kb += 16 * KS) {
      const int kk = kb + 16 * ks;
      unsigned af[MI][4], bf[NJ][2];
#pragma unroll
      for (int i = 0; i < MI; i++)
        ldsm_x4(af[i][0], af[i][1], af[i][2], af[i][3], &a[(wm * WTM + i * 16 + lane % 16) * LDA + kk + (lane / 16) * 8]);
#pragma unroll
      for (int j = 0; j < NJ / 2; j++)
        ldsm_x4_t(bf[2 * j][0], bf[2 * j][1], bf[2 * j + 1][0], bf[2 * j + 1][1],
                  &b[(kk + lane % 8 + ((lane / 8) % 2) * 8) * LDB + wn * WTN + j * 16 + (lane / 16) * 8]);
#pragma unroll
      for (int i = 0; i < MI; i++)
#pragma unroll
        for (int j = 0; j < NJ; j++) mma16816(acc[i][j], af[i], bf[j]);
    }
  }
  asm volatile("cp.async.wait_group 0;\n" ::);
  __syncthreads();   /* the pipeline's shared memory is free for the epilogue */

  float *red = (float *)smem;
  __half *Cs = (__half *)(smem + T::RED);
  if (KS > 1 && ks > 0) {
#pragma unroll
    for (int i = 0; i < MI; i++)
#pragma unroll
      for (int j = 0; j < NJ; j++)
#pragma unroll
        for (int r = 0; r < 4; r++)
          red[(wm * WTM + i * 16 + lane / 4 + (r / 2) * 8) * T::LDR + wn * WTN + j * 8 + (lane % 4) * 2 + r % 2] =
              acc[i][j][r];
  }
  if (KS > 1) __syncthreads();
  if (ks == 0) {
#pragma unroll
    for (int j = 0; j < NJ; j++) {
      const int col = wn * WTN + j * 8 + (lane % 4) * 2, nn = n0 + col;
      const float b0 = nn < c.cout_g ? c.bias[g * c.cout_g + nn] : 0.f;
      const float b1 = nn + 1 < c.cout_g ? c.bias[g * c.cout_g + nn + 1] : 0.f;
#pragma unroll
      for (int i = 0; i < MI; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
          const int row = wm * WTM + i * 16 + lane / 4 + h * 8;
          float v0 = acc[i][j][2 * h], v1 = acc[i][j][2 * h + 1];
          if (KS > 1) {
            v0 += red[row * T::LDR + col];
            v1 += red[row * T::LDR + col + 1];
          }
          v0 += b0;
          v1 += b1;
          /* each rounded once to binary16, to nearest even */
          *(__half2 *)&Cs[row * T::LDC + col] =
              __floats2half2_rn(clampf(v0, c.out_min, c.out_max), clampf(v1, c.out_min, c.out_max));
        }
    }
  }
  __syncthreads();
  const long long P = (long long)c.n * c.h_out * c.w_out;
  if (!c.nhwc) {   /* NCHW: neighbours write neighbouring pixels of a channel */
    const long long hw = (long long)c.h_out * c.w_out;
    for (int e = tid; e < BM * BN; e += THREADS) {
      const int p = e % BM, nn = e / BM;
      if (p0 + p >= P || n0 + nn >= c.cout_g) continue;
      y[s_yoff[p] + ((long long)g * c.cout_g + n0 + nn) * hw] = Cs[p * T::LDC + nn];
    }
    return;
  }
  for (int e = tid; e < BM * (BN / 8); e += THREADS) {
    const int p = e / (BN / 8), nn = (e % (BN / 8)) * 8;
    if (p0 + p >= P || n0 + nn >= c.cout_g) continue;
    __half *dst = y + s_yoff[p] + (long long)g * c.cout_g + n0 + nn;
    const __half *src = &Cs[p * T::LDC + nn];
    if (vec_out) {
      *(uint4 *)dst = *(const uint4 *)src;
    } else {
      const int m = c.cout_g - (n0 + nn) < 8 ? c.cout_g - (n0 + nn) : 8;
      for (int q = 0; q < m; q++) dst[q] = src[q];
    }
  }
}

/* The tiles of mma2_kernel, by index (cuda_kernels.h's dlc_cu_mma2_tile). */
#define DLC_MMA2_TILES(X)        \
  X(0, 128, 128, 64, 32, 1, 3)   \
  X(1, 128, 64, 32, 32, 1, 3)    \
  X(2, 64, 64, 32, 32, 2, 3)     \
  X(3, 64, 32, 32, 32, 2, 3)     \
  X(4, 32, 32, 32, 32, 2, 3)     \
  X(5, 64, 16, 32, 16, 2, 3)     \
  X(6, 32, 16, 32, 16, 2, 3)

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

/* ---- mma2 ---- */

static const int g_mma2_shape[][2] = {{128, 128}, {128, 64}, {64, 64}, {64, 32}, {32, 32}, {64, 16}, {32, 16}};

/* The tile for c: the channel tile is cout_g rounded up to 16, 32, 64 or 128, or narrower; of
   the tiles that fit it, largest first, the first that gives min_blocks blocks (132, one per SM
   of an H100 or H200, measured best overall against 264 and 528), else the smallest. */
extern "C" int dlc_cu_mma2_tile(const dlc_cu_conv *c, int min_blocks) {
  const long long P = (long long)c->n * c->h_out * c->w_out;
  /* more than 64 channels: 128 x 128, else 64 x 64 split (ResNet-50, batch 32, H200: 3x3 256 on
     14x14 0.073 ms at 64 x 64 split against 0.094 at 128 x 64; 1x1 512 > 2048 on 7x7 0.028 at
     128 x 128 with 208 blocks against 0.046 at 128 x 64 with 416) */
  static const int by_bn[4][5] = {{5, 6, -1, -1, -1}, {3, 4, -1, -1, -1}, {1, 2, 3, 4, -1}, {0, 2, 4, -1, -1}};
  const int w = c->cout_g <= 16 ? 0 : c->cout_g <= 32 ? 1 : c->cout_g <= 64 ? 2 : 3;
  int pick = -1;
  for (int i = 0; i < 5; i++) {
    const int t = by_bn[w][i];
    if (t < 0) continue;
    pick = t;
    const long long blocks = ((P + g_mma2_shape[t][0] - 1) / g_mma2_shape[t][0]) *
                             ((c->cout_g + g_mma2_shape[t][1] - 1) / g_mma2_shape[t][1]) * c->groups;
    if (blocks >= min_blocks) break;
  }
  return pick;
}

extern "C" int dlc_cu_mma2_bn(int tile) { return g_mma2_shape[tile][1]; }

extern "C" const char *dlc_cu_mma2_name(int tile) {
  static const char *names[] = {"cuda_mma2_f16_128x128x32_s3",   "cuda_mma2_f16_128x64x32_s3",
                                "cuda_mma2_f16_64x64x32_s3_ks2", "cuda_mma2_f16_64x32x32_s3_ks2",
                                "cuda_mma2_f16_32x32x32_s3_ks2", "cuda_mma2_f16_64x16x32_s3_ks2",
                                "cuda_mma2_f16_32x16x32_s3_ks2"};
  return names[tile];
}

extern "C" int dlc_cu_mma2_setup(void) {
  using namespace dlc_cu;
  cudaError_t e = cudaSuccess;
#define DLC_MMA2_SETUP(I, BM, BN, WTM, WTN, KS, ST)                                                         \
  if (e == cudaSuccess)                                                                                     \
    e = cudaFuncSetAttribute(mma2_kernel<BM, BN, WTM, WTN, KS, ST, true>,                                   \
                             cudaFuncAttributeMaxDynamicSharedMemorySize, Mma2<BM, BN, WTM, WTN, KS, ST>::SMEM); \
  if (e == cudaSuccess)                                                                                     \
    e = cudaFuncSetAttribute(mma2_kernel<BM, BN, WTM, WTN, KS, ST, false>,                                  \
                             cudaFuncAttributeMaxDynamicSharedMemorySize, Mma2<BM, BN, WTM, WTN, KS, ST>::SMEM);
  DLC_MMA2_TILES(DLC_MMA2_SETUP)
#undef DLC_MMA2_SETUP
  return (int)e;
}

extern "C" int dlc_cu_mma2(const dlc_cu_conv *c, int tile, int va, const void *x, void *y, void *stream) {
  using namespace dlc_cu;
  cudaStream_t s = (cudaStream_t)stream;
  const long long P = (long long)c->n * c->h_out * c->w_out;
  const int vec = c->nhwc && c->c_out % 8 == 0 && c->cout_g % 8 == 0 && (uintptr_t)y % 16 == 0;
  switch (tile) {
#define DLC_MMA2_CASE(I, BM, BN, WTM, WTN, KS, ST)                                                    \
  case I: {                                                                                           \
    using T = Mma2<BM, BN, WTM, WTN, KS, ST>;                                                         \
    dim3 grid((unsigned)((P + BM - 1) / BM), (unsigned)((c->cout_g + BN - 1) / BN), (unsigned)c->groups); \
    if (va) mma2_kernel<BM, BN, WTM, WTN, KS, ST, true><<<grid, T::THREADS, T::SMEM, s>>>(*c, (const __half *)x, (__half *)y, vec); \
    else mma2_kernel<BM, BN, WTM, WTN, KS, ST, false><<<grid, T::THREADS, T::SMEM, s>>>(*c, (const __half *)x, (__half *)y, vec); \
    break;                                                                                            \
  }
    DLC_MMA2_TILES(DLC_MMA2_CASE)
#undef DLC_MMA2_CASE
    default: return (int)cudaErrorInvalidValue;
  }
  return (int)cudaGetLastError();
}
