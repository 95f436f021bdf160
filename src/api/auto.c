/* The AUTO heuristic (tier 1 of ARCHITECTURE.md's three): a shape-driven order of algorithms.
   Tier 2 (DLCONV_PLAN_MEASURE) times these candidates; tier 3 (wisdom) replays such timings. */
#include "auto.h"

#include "../core/env.h"
#include "../ukernel/config.h"

int dlc_auto_isas(dlconv_isa out[DLC_MAX_CANDIDATES]) {
  static const dlconv_isa order[] = {DLCONV_ISA_AVX512, DLCONV_ISA_AVX2, DLCONV_ISA_NEON, DLCONV_ISA_GENERIC};
  dlconv_isa cap = dlc_env()->isa_cap;
  int n = 0, capped = cap != DLCONV_ISA_AUTO;
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
    if (capped && order[i] != cap) continue; /* skip ISAs better than the cap */
    capped = 0;
    if (dlc_kernels_for(order[i])) out[n++] = order[i];
  }
  if (n == 0) out[n++] = DLCONV_ISA_GENERIC; /* a cap naming an ISA this machine lacks */
  return n;
}

static int push(dlconv_algo *out, int n, dlconv_algo a) {
  for (int i = 0; i < n; i++)
    if (out[i] == a) return n;
  out[n] = a;
  return n + 1;
}

/* The first choice for a dense-weight shape on a vector ISA. Measured with dlconv-bench over
   every layer of the bench/layers suites, one thread, NCHW, AVX-512 (scripts/auto_report.py lists
   where AUTO and the fastest explicit algorithm part): the register-blocked direct kernels win
   most layers outright once their weights are packed; GEMM wins where its long N dimension
   (pixels) amortises packing; GSPC's groups-in-lanes layout wins where there is too little work
   per group for direct's channel tiles (large depthwise windows, tiny planes, few channels per
   group) and on 1x1-pixel (fully connected) layers. */
static dlconv_algo vector_first_choice(const dlc_conv_shape *s, dlconv_isa isa) {
  int64_t pixels = s->h_out * s->w_out;
  int64_t window = s->k_h * s->k_w;
  int pointwise = window == 1;
  if (s->cin_g == 1) { /* depthwise (any channel multiplier) */
    /* The AVX2 NCHW depthwise kernel (row reuse, 8 x 8 tiles) beats GSPC on every depthwise layer
       of the suites, 3x3 and 5x5, 7x7 to 112x112 (Zen 2: 1.2-6x). */
    if (isa == DLCONV_ISA_AVX2 && s->layout == DLCONV_NCHW) return DLCONV_ALGO_DIRECT;
    return window >= 25 || pixels <= 64 ? DLCONV_ALGO_GSPC : DLCONV_ALGO_DIRECT;
  }
  int strided = s->stride_h > 1 || s->stride_w > 1;
  /* GEMM runs an NCHW strided 1x1 layer without padding as a pointwise one on a subsampled copy
     of x (gemm.c): for the choice below it is not strided. */
  int unpadded = s->pad_t == 0 && s->pad_b == 0 && s->pad_l == 0 && s->pad_r == 0;
  int subsampled = pointwise && unpadded && s->layout == DLCONV_NCHW;
  if (s->groups > 1) return s->cin_g < (strided ? 8 : 16) ? DLCONV_ALGO_GSPC : DLCONV_ALGO_DIRECT;
  if (pointwise) {
    if (pixels == 1) return DLCONV_ALGO_GSPC;
    /* GEMM needs enough of a weight matrix to amortise packing the pixels; below that, and
       on few pixels when the layer projects down (c_out < c_in), direct wins. */
    int64_t weights = s->c_in * s->c_out;
    if (strided && !subsampled && weights < 128 * 1024) return DLCONV_ALGO_DIRECT;
    /* The AVX2 GEMM (6x16 tile, as direct's) keeps up with direct on few pixels from about half a
       million weights on (Zen 2: 2048x7x7>512 gemm 1.39 ms, direct 1.62; 992x7x7>128 direct 0.18,
       gemm 0.27). */
    int64_t direct_below = isa == DLCONV_ISA_AVX2 ? 512 * 1024 : 2048 * 1024;
    if ((!strided || subsampled) && pixels <= 196 && s->c_out < s->c_in && weights < direct_below)
      return DLCONV_ALGO_DIRECT;
    return DLCONV_ALGO_IM2COL_GEMM;
  }
  /* An RGB stem at stride 1: too few input channels for direct's reduction, GEMM's K = 27
     columns pack densely. */
  if (s->cin_g <= 4 && s->stride_h == 1 && s->stride_w == 1) return DLCONV_ALGO_IM2COL_GEMM;
  return DLCONV_ALGO_DIRECT;
}

/* The portable C kernels: the compiler vectorises GEMM's and GSPC's inner loops well, direct's
   sliding window poorly (measured: generic direct 8x slower than generic GEMM on resnet50). */
static dlconv_algo generic_first_choice(const dlc_conv_shape *s) {
  return s->cin_g == 1 ? DLCONV_ALGO_GSPC : DLCONV_ALGO_IM2COL_GEMM;
}

int dlc_auto_algos(const dlc_conv_shape *s, double density, dlconv_isa isa, dlconv_algo out[DLC_MAX_CANDIDATES]) {
  int n = 0;
  /* Pruned weights: below this density the zero-skipping kernel wins even against dense
     kernels running near peak (thesis ch. 4: CSR pays off at high sparsity only). */
  if (density < 0.2) n = push(out, n, DLCONV_ALGO_SPARSE_CSR);
  n = push(out, n, isa == DLCONV_ISA_GENERIC ? generic_first_choice(s) : vector_first_choice(s, isa));
  /* Fallbacks, should the first choice not take the shape. */
  n = push(out, n, DLCONV_ALGO_DIRECT);
  n = push(out, n, DLCONV_ALGO_IM2COL_GEMM);
  n = push(out, n, DLCONV_ALGO_SPATIAL_PACK);
  n = push(out, n, DLCONV_ALGO_GSPC);
  n = push(out, n, DLCONV_ALGO_SPARSE_CSR);
  return n;
}
