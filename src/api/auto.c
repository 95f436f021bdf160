/* The AUTO heuristic (tier 1 of docs/architecture.md's "AUTO, MEASURE and wisdom"), for every dtype: a shape-driven order
   of algorithms, each of which the implementation list (impl_list.c) then walks. Tier 2
   (DLCONV_PLAN_MEASURE, measure.c) times these candidates; tier 3 (wisdom) replays such timings. */
#include "auto.h"

#include <stdatomic.h>
#include <stdio.h>

#include "../core/env.h"
#include "../gemm_im2col/gemm.h"
#include "../gspc/gspc.h"
#include "../direct/direct.h"
#include "../gspc/gspc_pos.h"
#include "../ukernel/config.h"
#include "names.h"

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
  if (cap != DLCONV_ISA_AUTO && !dlc_kernels_for(cap) && dlc_env()->verbose >= 1) {
    static atomic_int said;
    if (!atomic_exchange(&said, 1))
      fprintf(stderr, "dlconv: DLCONV_ISA=%s: not available on this machine or build; AUTO picks from %s down\n",
              dlc_isa_name(cap), dlc_isa_name(out[0]));
  }
  return n;
}

/* out[0..n) plus a, unless it is there already. */
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
    /* AVX-512 NCHW: direct too, since small planes run with channels in the lanes (direct.c, dwt):
       Zen 5, 1 thread, the models' layers, direct (with dwt) / GSPC: 7 x 7 outputs 0.32-0.83,
       5x5 windows 0.55-0.72, the others 0.5-0.8. */
    if (isa == DLCONV_ISA_AVX512 && s->layout == DLCONV_NCHW) return DLCONV_ALGO_DIRECT;
    /* NHWC: direct but at stride 1 with windows larger than 5x5 on x86, 5x5 and larger elsewhere
       (not measured off x86). Zen 5, 1 thread, direct / GSPC over the depthwise layers of
       mobilenet_v2, efficientnet_b0 and shufflenet_v2: AVX-512 (sliding-window rows) 3x3 stride 1
       0.52-0.69, stride 2 0.33-0.55, 5x5 stride 1 0.58-0.86 (7x7 0.86), stride 2 0.41-0.53; AVX2
       5x5 stride 1 0.76-0.92. */
    if (s->layout == DLCONV_NHWC) {
      const int64_t big = isa == DLCONV_ISA_AVX2 || isa == DLCONV_ISA_AVX512 ? 25 : 24;
      return window > big && s->stride_h == 1 && s->stride_w == 1 ? DLCONV_ALGO_GSPC : DLCONV_ALGO_DIRECT;
    }
    return window >= 25 || pixels <= 64 ? DLCONV_ALGO_GSPC : DLCONV_ALGO_DIRECT;
  }
  int strided = s->stride_h > 1 || s->stride_w > 1;
  /* GEMM runs an NCHW strided 1x1 layer without padding as a pointwise one on a subsampled copy
     of x (gemm.c): for the choice below it is not strided. */
  int unpadded = s->pad_t == 0 && s->pad_b == 0 && s->pad_l == 0 && s->pad_r == 0;
  int subsampled = pointwise && unpadded && s->layout == DLCONV_NCHW;
  /* NHWC too where the pointwise layer then reads its pixels in place; x86, Zen 5, 1 thread, GEMM
     / direct: WRN-40-2 32x32x32>64 /2 AVX-512 0.69 (AVX2 0.71), 64x16x16>128 /2 0.77 (0.69). */
  const int x86_isa = isa == DLCONV_ISA_AVX2 || isa == DLCONV_ISA_AVX512;
  if (pointwise && unpadded && s->layout == DLCONV_NHWC && x86_isa && s->groups == 1)
    subsampled = dlc_gemm_nhwc_a_in_place(s, dlc_kernels_for(isa));
  /* Grouped: GSPC up to 32 input channels per group (x86 NHWC: 16); when strided, 16 on AVX-512
     (NCHW: 32), else 8.
     NCHW, Zen 5, 1 thread, GSPC / direct (its repack by loads, zips and evens): WRN-40-2 g2..g16
     layers, AVX-512: 16 per group 0.81-0.98, 32 0.92-0.97, 64 1.04; stride 2, 8 per group
     0.55-0.61; AVX2 16 and 32 per group 0.81-0.99. ResNeXt-50 g32: AVX-512 16 per group 0.69,
     32 0.97; AVX2 16 0.86, 32 0.92, stride 2 with 8 0.73 (a 32 x 32 WRN layer 1.17, 0.004 ms),
     with 16 and 32 1.08. Stride 2 with 16 per group, AVX-512 (the stride-2 repack by masked
     loads and evens), NCHW / NHWC: ResNeXt 512x28x28 0.73 / 0.80, WRN 64x16x16 g4 0.90 / 0.84,
     WRN 32x32x32 g2 1.02 / 0.93; with 32 (ResNeXt 1024x14x14, WRN 64x16x16 g2) 1.13-1.17 then. AVX2
     keeps 8 when strided: with 16 (the same three layers) 0.97-1.28 NCHW, 1.22-2.36 NHWC.
     NHWC at stride 1 with 32 per group on x86: direct, whose tiles caught up. Zen 5, GSPC /
     direct, best of 2-12 runs, AVX-512 1 / 2 threads: WRN-40-2 g2 64x16x16 1.06 / 1.10, g4
     128x8x8 1.09 / 1.03, ResNeXt-50 1024x7x7 1.04 / 1.05; AVX2, 1 thread: 1.10, 1.24, 1.34.
     Not NCHW: there direct is ahead on 1 thread (AVX-512 1.02-1.10) but far behind on 2
     (0.61-0.85: the same three layers). For the same reason NCHW strided layers with 32 per group
     go to GSPC on AVX-512: GSPC / direct, 1 / 2 threads, ResNeXt-50 1024x14x14 0.96 / 0.87,
     WRN-40-2 g2 64x16x16 1.04 / 0.78 (NHWC stays on direct: 1.14, 1.12 on 1 thread). */
  if (s->groups > 1) {
    const int x86 = isa == DLCONV_ISA_AVX2 || isa == DLCONV_ISA_AVX512;
    const int64_t strided_max = isa == DLCONV_ISA_AVX512 ? (s->layout == DLCONV_NCHW ? 32 : 16) : 8;
    if (!strided && s->cin_g > 16 && x86 && s->layout == DLCONV_NHWC) return DLCONV_ALGO_DIRECT;
    /* NCHW at stride 1 where direct runs it with pixels in the lanes (direct_nchw.c, which says
       where that beats GSPC) */
    if (!strided && s->layout == DLCONV_NCHW && dlc_direct_nchw_pays(s, dlc_kernels_for(isa))) return DLCONV_ALGO_DIRECT;
    return s->cin_g <= (strided ? strided_max : 32) ? DLCONV_ALGO_GSPC : DLCONV_ALGO_DIRECT;
  }
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
    /* NHWC projections read each pixel's channels as one run in place, where GEMM packs them
       first: direct on any plane (Zen 5, AVX-512, 1 thread, direct / GEMM, best of 3 runs, the
       stride-1 pointwise layers of mobilenet_v2, efficientnet_b0, shufflenet_v2, resnet50,
       resnext50, densenet121 and resnet18: 0.85-1.02 on 784 to 12544 pixels, 0.92-1.04 on 196;
       the AVX2 kernels on the same machine, 28 x 28 and larger: 0.44-1.07, median 0.95). */
    int any_plane = s->layout == DLCONV_NHWC;
    /* But GEMM reads them in place too now (ukernel_lda): AVX-512 on 28 x 28 planes and larger,
       Zen 5, 1 thread, GEMM / direct, best of 3: mobilenet_v2 32x112x112>16 0.82, 96..192 > 24..32
       0.97-0.99, efficientnet_b0 144..240x28x28>40 0.90-0.91, resnext50 256x56x56>128 and
       512x28x28>256 1.00; 14 x 14 and smaller 0.98-1.03 stay on direct, as does AVX2 (0.92-1.04). */
    if (any_plane && isa == DLCONV_ISA_AVX512 && pixels >= 28 * 28 && dlc_gemm_nhwc_a_in_place(s, dlc_kernels_for(isa)))
      any_plane = 0;
    /* NCHW 14 x 14 projections stay on GEMM on x86 (Zen 5, 1 thread, direct / GEMM, best of 5-6:
       AVX-512 mobilenet_v2 and efficientnet_b0 192..672 > 64..112 1.03-1.14, densenet121
       256..640 > 128 1.01-1.03, resnext50 1024 > 512 1.05; AVX2 mobilenet_v2 and efficientnet_b0
       1.03-1.08). */
    int x86 = isa == DLCONV_ISA_AVX2 || isa == DLCONV_ISA_AVX512;
    int small_plane = pixels <= (x86 ? 49 : 196);
    if ((!strided || subsampled) && (small_plane || any_plane) && s->c_out < s->c_in && weights < direct_below)
      return DLCONV_ALGO_DIRECT;
    /* NCHW planes of up to 7 x 7, where direct runs a pointwise layer as one row of 49 pixels
       (direct.c): direct / GEMM, Zen 5, 1 thread, best of 2: 232x7x7>232 AVX-512 0.86-0.89, AVX2
       0.86-0.87; expansions from 224 or more input channels on AVX-512 320>1280 0.96-0.97,
       464>1024 0.94-0.95, 512>2048 0.93-0.95 (AVX2 0.91-1.08), from fewer 160>960 1.01-1.02,
       192>1152 1.01-1.03: those stay on GEMM. */
    int small_plane_direct = s->c_out <= s->c_in || (isa == DLCONV_ISA_AVX512 && s->c_in >= 224);
    if (!strided && s->layout == DLCONV_NCHW && pixels <= 49 && small_plane_direct && weights < direct_below)
      return DLCONV_ALGO_DIRECT;
    return DLCONV_ALGO_IM2COL_GEMM;
  }
  /* RGB stems (c_in/groups up to 4). Zen 5, 1 thread, ms per call (AVX-512; AVX2):
     - NCHW, x86: GSPC where it runs them with positions in lanes (gspc_pos.h: 3 x 3 up to 32
       output channels), which neither transposes x to channel-last nor stages y, as direct does:
       GSPC / direct / GEMM 3x32x32>16 0.0050 / 0.0103 / 0.0082 (0.0100 / 0.0107 / 0.0142),
       3x224x224>32 stride 2 0.131 / 0.187 / 0.164 (0.235 / 0.253 / 0.275), >24 0.103 / 0.183 /
       0.141 (0.182 / 0.217 / 0.228). Else GEMM at stride 1, whose K = 27 columns pack densely
       (3x224x224>64 1.02 / 3.10 direct), direct at stride 2 (7x7 >64: 1.11 / 1.30 GEMM, AVX2
       6.17 / 6.42), its 147-long reduction keeping direct's tile busy;
     - NHWC: direct, which reads the pixels' channels in place (3x224x224>32 stride 2 0.111 /
       0.256 GEMM; 3x224x224>64 1.11 / 3.29 GEMM); but GSPC on AVX-512 on planes up to 64 x 64 at
       stride 1 (GSPC / direct 3x32x32>16 0.0061 / 0.0070 (GEMM 0.0246), >64 0.0170 / 0.0205,
       3x64x64>16 0.0227 / 0.0251; 3x112x112>16 0.0717 / 0.0678; AVX2 3x32x32>16 0.0092 /
       0.0091, 3x64x64>16 0.0349 / 0.0331).
     The NCHW stems GSPC does not take as positions: GEMM at stride 1, and on x86 at stride 2 with
     windows up to 3x3, whose NCHW runs GEMM gathers with vector evens. Off x86 (not measured
     there): GEMM at stride 1 in either layout, direct else. */
  if (s->cin_g <= 4) {
    const int x86 = isa == DLCONV_ISA_AVX2 || isa == DLCONV_ISA_AVX512;
    const int s1 = s->stride_h == 1 && s->stride_w == 1, s2 = s->stride_h == 2 && s->stride_w == 2;
    if (x86 && s->layout == DLCONV_NHWC)
      return isa == DLCONV_ISA_AVX512 && s1 && pixels <= 64 * 64 ? DLCONV_ALGO_GSPC : DLCONV_ALGO_DIRECT;
    const dlc_isa_kernels *k = dlc_kernels_for(isa);
    if (x86 && k && k->gspc && dlc_gspc_pos_pays(s, k->gspc)) return DLCONV_ALGO_GSPC;
    return s1 || (x86 && s2 && window <= 9) ? DLCONV_ALGO_IM2COL_GEMM : DLCONV_ALGO_DIRECT;
  }
  return DLCONV_ALGO_DIRECT;
}

/* The portable C kernels: the compiler vectorises GEMM's and GSPC's inner loops well, direct's
   sliding window poorly (measured: generic direct 8x slower than generic GEMM on resnet50). */
static dlconv_algo generic_first_choice(const dlc_conv_shape *s) {
  return s->cin_g == 1 ? DLCONV_ALGO_GSPC : DLCONV_ALGO_IM2COL_GEMM;
}

static int fp32_algos(const dlc_conv_shape *s, double density, dlconv_isa isa, dlconv_algo *out) {
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

/* direct_lowp_conv.c computes (h_out - 1) x wq + w_out virtual positions per plane, in tiles of
   16, for h_out x w_out outputs (wq: the padded width over the stride): worth it when at least
   60% of them are outputs (7 x 7 outputs with padding 1: 77%; 1 x 1 outputs: 6%), 80% for 1 x 1
   kernels, whose im2col is a mere interleave (measured on ResNet-50's 7 x 7 1 x 1 layers: GEMM
   2-5% faster at 77%). A 1 x 1 kernel with stride 1 and no padding packs for GEMM as whole runs
   of each plane (gemm_lowp.c): there GEMM wins on small planes, int8 up to 28 x 28 (0.80-0.98 of
   direct's time on ResNet-50 / MobileNetV2, 1.01 at K = 32), F16 up to 14 x 14 (0.89-1.03; 28 x 28:
   1.0-1.10). */
static int direct_lowp_positions_pay(const dlc_conv_shape *s, int q8) {
  const int64_t wq = (s->w_in + s->pad_l + s->pad_r + s->stride_w - 1) / s->stride_w;
  const int64_t nvirt = (s->h_out - 1) * wq + s->w_out, tiles = (nvirt + 15) / 16;
  const int64_t P = s->h_out * s->w_out;
  const int contiguous_1x1 = s->k_h * s->k_w == 1 && s->stride_h == 1 && s->stride_w == 1 &&
                             !(s->pad_t | s->pad_b | s->pad_l | s->pad_r);
  if (contiguous_1x1 && P <= (q8 ? 28 * 28 : 14 * 14)) return 0;
  return 10 * P >= (s->k_h * s->k_w == 1 ? 8 : 6) * 16 * tiles;
}

/* NHWC F16/int8 convolutions: spatial pack (a strip per band of rows, transposed to channel
   planes; spack_lowp.c) against im2col + GEMM (pixels as rows, whose gather copies runs of c_in/g
   channels per tap). Measured on Zen 2, 1 thread, spack / GEMM time: short runs favour the strip,
   c_in/g = 3: 0.31-0.71, 64: 0.83-0.98, 128 at stride 1 on planes of 28 x 28 and more: 0.92-1.00;
   grouped 3 x 3 layers (ResNeXt-50 g32, WRN-40-2 g8): 0.2-0.8, one F16 layer 1.07. Wide
   reductions favour GEMM: 256 and more 1.00-1.23, stride 2 1.02-1.31; so do 1 x 1 layers, grouped
   ones too (1.02-1.12), whose GEMM reads whole pixels' channel runs. */
static int spack_lowp_nhwc_pays(const dlc_conv_shape *s) {
  if (s->k_h * s->k_w == 1) return 0;
  return s->groups > 1 || s->cin_g <= 64 ||
         (s->cin_g <= 128 && s->stride_h == 1 && s->stride_w == 1 && s->h_out * s->w_out >= 28 * 28);
}

/* F16/int8 grouped convolutions (not depthwise: direct's channel kernels are 1.4-8x faster there):
   GSPC (gspc_lowp.c, groups in lanes) against the best of direct, spatial pack and GEMM.
   First measured on ResNeXt-50 and WRN-40-2 g2..g16, Zen 2, 1 thread (GSPC / best):
     F16 NHWC: 0.46-0.97 on every layer of 64 and more pixels (one of 30 at 1.02), 1.03-1.08 below;
     int8 NHWC: 0.68-0.89 with 16 or more channels per group in at most 16 groups;
     int8 NCHW: 0.87-0.96 with 32 or more channels per group on planes up to 14 x 14, 0.94-1.42
       elsewhere (vpmaddwd bounds both GSPC and GEMM; the repack and the stores decide).
   With the u8 x s8 quads (d4: AVX512-VNNI), direct's quad kernels beat GSPC's s16 pairs on every
   NCHW grouped layer: WRN-40-2 g2..g16, Zen 5, 1 thread, GSPC / direct 1.7-3.8 on the 8 x 8 and
   16 x 16 layers GSPC took (64 channels per group 3.8, 32 2.0, 8 1.7), and still 1.4-1.9 with
   the 16-lane zmm family.
   Few channels per group (Zen 5, 1 thread, ResNeXt-50 g32 and WRN-40-2 g4 / g16, the AVX-512
   table with the zmm GSPC family and the AVX2 one, GSPC / the other's time):
     F16 NCHW, 2-8 channels per group at stride 1: AVX-512 0.25-0.56, AVX2 0.16-0.88; 16: 0.97-1.03
       (AVX2 0.93); 32: 1.32-1.51 (AVX2 0.95-0.99); strided, 2 per group: 0.22-0.35, 4: 1.0-1.2,
       8 and more 1.5-2.5;
     int8 NHWC against GEMM's indirect quads (d4): 2-8 per group at stride 1 0.34-0.90 (one 8 at
       1.04), 16 and 32 1.5-3.8 (WRN-40-2 g2: 1.8-2.6, where the s16-pair rule below, from before
       the quads, had put the whole model at 1.7x the time of S); strided 2-4 0.21-0.78, 8 1.6; against AVX2's spatial pack: 2 per group 0.44-0.76,
       4 and 8 1.1-1.3.
   With the in-register kernel of AVX512-VNNI (gspc_q8n.c: 2, 4, 8 or 16 channels per group), NHWC
   int8 goes to GSPC wherever that kernel takes the layer (Zen 5, 1 thread, its time / the indirect
   GEMM's: WRN-40-2 g2..g16 at stride 1 with 2-8 per group 0.11-0.83, 16 per group 0.55 on 8 x 8,
   0.99 on 16 x 16, 1.02 on 32 x 32; strided 0.21-0.89; ResNeXt-50 g32 4 and 8 per group 0.14-0.30,
   16 per group 0.56-0.65). */
/* int8 NCHW grouped layers on the NHWC kernels that read x in place, x and y transposed around
   them (gspc_q8t.c): the in-register GSPC kernel where it takes the layer (gemm 0), else the
   indirect GEMM (gemm 1), against direct's quad kernels. Zen 5, 1 thread, WRN-40-2 g2..g16 u8,
   their time / direct's: GSPC strided 0.19-0.62, stride 1 on 16 x 16 and 8 x 8 planes 0.45-0.93,
   on 32 x 32 with 2 per group and 32 channels out 0.78, with fewer channels out (a block of 64
   lanes part empty) or more per group 1.3-2.4; the indirect GEMM (32 and 64 per group) strided
   0.46, on 16 x 16 and 8 x 8 0.55-0.81, on 32 x 32 with 16 per group 1.3. ResNeXt-50 g32 (128
   channels out and more): GSPC 4 and 8 per group on 56 x 56 and 28 x 28 0.66-0.69, 16 per group
   0.46-0.63; the indirect GEMM 32 per group 0.50-0.56. Since the direct quad kernels keep grouped
   layers in place (direct_lowp_conv.c), direct wins back the stride-1 layers with 16 or more per
   group on planes above 8 x 8 (GSPC / direct: WRN-40-2 g4 64x16x16 1.10, ResNeXt-50 512x14x14 g32
   1.09; 128x8x8 with 16 per group stays GSPC, 0.82), but for the in-register kernel's lanes mode
   up to 16 x 16 (WRN-40-2 g4 64x16x16: 0.81; on 32 x 32 with 32 channels direct stays ahead, GSPC /
   direct 1.2 with 4, 8 and 16 per group). */
static int nchw_on_nhwc_pays(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k, int gemm) {
  const int strided = s->stride_h > 1 || s->stride_w > 1;
  const int64_t pixels = s->h_out * s->w_out;
  if (s->layout != DLCONV_NCHW || s->groups == 1 || s->cin_g == 1) return 0;
  if (dlc_gspc_q8t_applies(s, dtype, k)) {
    if (!strided && s->cin_g >= 16 && pixels > 8 * 8 && !(dlc_gspc_q8n_lanes(s) && pixels <= 16 * 16)) return 0;
    return !gemm && (strided || pixels <= 16 * 16 || s->c_out >= 64 || (s->cin_g == 2 && s->c_out >= 32));
  }
  return gemm && dlc_igemm_q8t_applies(s, dtype, k) && s->cin_g >= 32 && (strided || pixels <= 16 * 16);
}

static int gspc_lowp_pays(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k) {
  const int q8 = dtype != DLCONV_F16, d4 = q8 && k && k->q8_d4;
  if (s->groups == 1 || s->cin_g == 1) return 0;
  const int64_t pixels = s->h_out * s->w_out;
  const int strided = s->stride_h > 1 || s->stride_w > 1;
  if (s->layout == DLCONV_NHWC) {
    if (!q8) return pixels >= 64;
    if (dlc_gspc_q8n_applies(s, dtype, k)) return 1;
    if (d4) return s->cin_g <= (strided ? 4 : 8);
    return (s->groups <= 16 && s->cout_g >= 16) || s->cin_g <= (strided ? 4 : 2);
  }
  if (!q8) return s->cin_g <= (strided ? 2 : 16);
  if (nchw_on_nhwc_pays(s, dtype, k, 0)) return 1;
  return !d4 && pixels <= 14 * 14 && s->cout_g >= 32;
}

/* F16 convolutions (c_in/groups > 1) on an ISA whose direct family stores binary16 (direct.c's
   F16 path, the fp32 conv kernels): the first choice among direct, im2col + GEMM and spatial pack.
   Measured on Zen 2, 1 thread, ResNet-50 and MobileNetV2 (% of fp32 peak):
     NCHW: direct wins every layer with a window (3x3 and 7x7: 76-90% against 51-79%); GEMM every
       1 x 1 layer but one (52-91%, with its B panels widened for the fp32 micro-kernel,
       gemm_lowp.c; spatial pack 49-79%, direct 57-80%);
     NHWC: direct wins almost everywhere (3x3 85-93% against 54-77%, 1 x 1 with more channels in
       than out 54-86% against 15-76%), GEMM on 7 x 7 outputs (77-78% against 60-66%) and in 1 x 1
       expansions on 28 x 28 and less (75-81% against 52-77%). */
static dlconv_algo f16_conv_first_choice(const dlc_conv_shape *s) {
  const int64_t pixels = s->h_out * s->w_out;
  const int pointwise = s->k_h * s->k_w == 1;
  if (s->layout == DLCONV_NHWC) {
    if (pixels <= 7 * 7 || (pointwise && s->c_out > s->c_in && pixels <= 28 * 28)) return DLCONV_ALGO_IM2COL_GEMM;
    return DLCONV_ALGO_DIRECT;
  }
  /* NCHW pointwise: GEMM, but on 7 x 7 planes its 49 columns round up to 64 and each widened
     A panel serves two B panels; direct there (F16, Zen 4, 1 thread, direct / GEMM: ResNet-50
     layer4 0.76-0.88, MobileNetV2 0.85-1.07, 0.94 summed). An RGB stem at stride 1: GEMM, as
     fp32 (vector_first_choice), its B panels widened as they are gathered (VGG-16 features.0: 2.37 ms direct). */
  if (!pointwise && s->cin_g <= 4 && s->stride_h == 1 && s->stride_w == 1) return DLCONV_ALGO_IM2COL_GEMM;
  return pointwise && pixels > 7 * 7 ? DLCONV_ALGO_IM2COL_GEMM : DLCONV_ALGO_DIRECT;
}

/* F16 and int8: GSPC for the grouped layers where it pays (above), direct for depthwise (a GEMM
   of one row per group wastes the register tile; NHWC: depth multiplier 1) and for other NCHW
   layers (it reads x in place where im2col + GEMM gathers it per job) unless most of its virtual
   positions would be junk; im2col + GEMM for every shape. F16 convolutions where the direct family
   stores binary16 follow f16_conv_first_choice instead. */
static int lowp_algos(const dlc_conv_shape *s, dlconv_dtype dtype, double density, dlconv_isa isa,
                      dlconv_algo *out) {
  int n = 0;
  const int q8 = dtype != DLCONV_F16;
  /* pruned weights: sparse_csr below these densities (resnet50, Zen 2, 1 thread, model totals
     csr / dense AUTO: int8 0.86 at density 0.5, 0.76 at 0.4; F16 1.09 at 0.5, 0.90 at 0.4; both
     0.3-0.4 at 0.1) */
  if (density < (q8 ? 0.5 : 0.4)) out[n++] = DLCONV_ALGO_SPARSE_CSR;
  const dlc_isa_kernels *k = dlc_kernels_for(isa);
  if (gspc_lowp_pays(s, dtype, k)) out[n++] = DLCONV_ALGO_GSPC;
  if (!q8 && s->cin_g > 1 && k && k->direct && k->direct->f16_out) {
    /* F16 on the fp32 conv kernels (grouped layers too, after GSPC where it pays), the others as
       fallbacks */
    n = push(out, n, s->groups > 1 ? DLCONV_ALGO_DIRECT : f16_conv_first_choice(s));
    n = push(out, n, DLCONV_ALGO_DIRECT);
    n = push(out, n, DLCONV_ALGO_IM2COL_GEMM);
    n = push(out, n, DLCONV_ALGO_SPATIAL_PACK);
    return n;
  }
  /* int8 on u8 x s8 quads (k->q8_d4), which direct and spatial pack run and GEMM does not: direct
     on every NCHW layer (ResNet-50 u8, Zen 4, 1 thread: direct / GEMM 0.53-0.68 on the 1 x 1
     layers of 28 x 28 and less that GEMM took with s16 pairs) */
  const int d4 = q8 && k && k->q8_d4;
  if (q8 && nchw_on_nhwc_pays(s, dtype, k, 1)) out[n++] = DLCONV_ALGO_IM2COL_GEMM; /* NCHW via igemm_q8 */
  if (s->layout == DLCONV_NCHW ? s->cin_g == 1 || d4 || direct_lowp_positions_pay(s, q8)
                               : s->cin_g == 1 && s->cout_g == 1)
    out[n++] = DLCONV_ALGO_DIRECT;
  const int nhwc_conv = s->layout == DLCONV_NHWC && s->cin_g > 1;
  /* NHWC with the u8 x s8 quads: spatial pack's copy keeps the bytes, GEMM widens to s16 pairs
     (ResNet-50 u8 NHWC, Zen 4, 1 thread, spack / GEMM: 0.49-0.70 on layers with a window and on
     1 x 1 layers of 256 and more channels in; 1.04-1.32 on 1 x 1 layers of 64 and 128, whose
     per-pixel copy of few channels costs more); not where GEMM's entries that read the bytes as
     they are (gemv_q8d4, igemm_q8) take the shape */
  const int spack_first = nhwc_conv && !dlc_gemv_q8d4_applies(s, dtype, k) && !dlc_igemm_q8_applies(s, dtype, k) &&
                          (d4 ? s->k_h * s->k_w > 1 || s->cin_g >= 256 : spack_lowp_nhwc_pays(s));
  if (spack_first) out[n++] = DLCONV_ALGO_SPATIAL_PACK;
  n = push(out, n, DLCONV_ALGO_IM2COL_GEMM);
  if (nhwc_conv && !spack_first) out[n++] = DLCONV_ALGO_SPATIAL_PACK;
  return n;
}

int dlc_auto_algos(const dlc_conv_shape *s, dlconv_dtype dtype, double density, dlconv_isa isa,
                   dlconv_algo out[DLC_MAX_CANDIDATES]) {
  return dtype == DLCONV_F32 ? fp32_algos(s, density, isa, out) : lowp_algos(s, dtype, density, isa, out);
}
