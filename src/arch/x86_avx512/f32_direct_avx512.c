/* f32 direct micro-kernels, AVX-512: the family of src/arch/template/f32_direct.h with its
 * defaults for 32 registers (conv 14 pixels x 32 channels or 24 x 16, dwc 12 x 32 or 24 x 16),
 * the NCHW input prefetch, and depthwise NCHW on binary16 in and out (dwp_f16). */
#include "vec.h"

/* dwc tiles whose channel vectors are whole load them plainly, so each load folds into its FMA
   (Zen 5, 1 thread, NHWC: stride-2 depthwise layers 0.87-0.95x the time of masked loads; the
   sliding-window rows keep masked loads: see DLC_DIRECT_DWC_SLIDE_WHOLE) */
#define DLC_DIRECT_DWC_WHOLE 1
#define DLC_DIRECT_DWC_SLIDE_WHOLE 0

/* conv at NCHW stride 1 or 2: consecutive steps read other channel planes, a stride the hardware
   prefetchers do not follow past 2 KiB; fetch the tile's pixels 6 channels ahead. */
#ifndef DLC_DIRECT_PF_STEPS
#define DLC_DIRECT_PF_STEPS 6
#endif

/* dwp_f16: each input vector is widened once per tap and tile, so taller tiles widen less per
   output row (MobileNetV2's 32x112x112 layer, 7 vectors a row: 1 row a tile 1.06x fp32's time):
   8, 4, 4, 4, 3, 3, 3, 3 rows for 1..8 vectors. */
#define DLC_DIRECT_DWP_F16 1
/* the fast depthwise NCHW path for 3x3 and 5x5 kernels (one vector x 8 rows, input rows loaded
   once per kx), as on AVX2: without it, AVX-512's general dwp ran MobileNetV2's 3x3 layers slower
   than AVX2's fast path (Zen 5, 1 thread: 144x56x56 0.166 ms against 0.100, 192x28x28 0.056
   against 0.045) */
#define DLC_DIRECT_DWP_FAST 1
/* stride 2: columns kx, kx + 1 from the same loads (Zen 5, 1 thread, NCHW 3x3 stride 2: 96x112x112
   0.94x, 144x56x56 0.89x, 58x56x56 0.88x the time of one pair of loads per column) */
#define DLC_DIRECT_DWP_S2_PAIR 1
/* stride 2, 3 columns: all three from the 2 VL floats after column 0 (evens, odds) and the float
   before them (one more load), so a row at a 64-byte boundary (a 112-float row) loads whole cache
   lines: a load crossing a line costs Zen 5 about twice a whole one */
#define DLC_DIRECT_DWP_S2_TRIPLE 1
/* 14 rows a dwp tile (14 accumulators, 5 + 5 weights and the loads fit 32 registers): fewer loads
   per FMA and the tile's setup (weights, masks, branches) over more rows, and 14 divides 28, 56 and
   112 (Zen 5, 1 thread, NCHW 3x3 stride 1 on 112x112, 56x56, 28x28: 0.74-0.81x the time of 8 rows;
   16 rows ran the same in total, 1.05x at stride 2) */
#define DLC_DIRECT_DWP_NR 14
/* NCHW depthwise 3x3 and 5x5 at stride 1 on 7 x 7 and 14 x 14 planes, flat in the lanes (dwf): a
   14 x 14 plane is 13 vectors, every tap two of them in registers and one valignd */
#define DLC_DIRECT_DWF 1
#define DLC_DIRECT_DWP_ROWS_F16(npv) ((npv) == 1 ? 8 : (npv) <= 4 ? 4 : 3)

/* Pixels ixb + (v*16 + lane)*SW (SW 1 or 2) of the binary16 row xr, lanes of m, widened in
   registers: at stride 2 one load of 32 halves masked to the row, whose even halves vpmovdw
   keeps. */
INLINE vf dwp_load_f16(const uint16_t *xr, ptrdiff_t ixb, ptrdiff_t w_in, int v, vmask m, const int SW) {
  if (SW == 1) return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, xr + ixb + v * DLC_VL));
  const ptrdiff_t base = ixb + 2 * v * DLC_VL;
  /* lanes [lo, hi) of 32, in 32-bit arithmetic: built from two 16-bit masks, the compiler spilled
     one as 16 bits and reloaded 32, a store-forwarding stall that tripled the layer's time */
  const ptrdiff_t lo = -base, hi = w_in - base;
  const uint32_t below_hi = hi <= 0 ? 0u : hi >= 32 ? ~0u : (1u << hi) - 1u;
  const uint32_t below_lo = lo <= 0 ? 0u : lo >= 32 ? ~0u : (1u << lo) - 1u;
  const __mmask32 r = _cvtu32_mask32(below_hi & ~below_lo);
  return _mm512_maskz_cvtph_ps(m, _mm512_cvtepi32_epi16(_mm512_maskz_loadu_epi16(r, xr + base)));
}

#include "../template/f32_direct.h"
