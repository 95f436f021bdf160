/* f32 direct micro-kernels, AArch64 Neon: the family of src/arch/template/f32_direct.h for 32
 * registers (conv 14 pixels x 8 channels or 16 x 4, dwc 12 x 8 or 24 x 4), the fast depthwise
 * NCHW path for 3x3 and 5x5 kernels (16 rows of one vector, each input row loaded once per kx),
 * and depthwise NCHW on binary16 in and out (dwp_f16, fast path included). A pixel's broadcast is
 * a scalar load folded into FMLA by element. */
#include "vec.h"

/* conv of one vector: 16 pixels, not the 24 of AVX-512. An NHWC tile keeps a general register
   per pixel offset; with 24 GCC spilled offsets and an accumulator every step (llvm-mca, Neoverse
   N1: 69% of the FMLA rate), with 16 none (94%). 16 accumulators still cover 2 pipes x 4 cycles. */
#define DLC_DIRECT_CONV_TW1 16
#define DLC_DIRECT_CONV_TW2 14
#define DLC_DIRECT_DWC_TW1 24
#define DLC_DIRECT_DWC_TW2 12

/* depthwise NCHW 3x3 / 5x5 (the fast path): 16 rows of one vector a tile, not 8. A tap column
   costs its weight broadcasts and a few moves besides the FMLAs whatever the tile's height; with
   8 rows (24 FMLA per kx of a 3x3) llvm-mca put Neoverse N1 at 67% of its FMLA rate, with 16
   (48 FMLA, 18 row loads, 16 accumulators) at 92%. */
#define DLC_DIRECT_DWP_NR 16

#define DLC_DIRECT_DWP_FAST 1
/* no masked load on Neon: a dwc tile of whole channel vectors loads them plainly */
#define DLC_DIRECT_DWC_WHOLE 1
/* no sliding-window dwc rows: llvm-mca puts them below the per-tap loop (cycles per FMLA, Neoverse
   N1 / Cortex-A76: 3x3 0.81 / 1.26, 5x5 0.88 / 1.29, against 0.54 / 1.09; 24 accumulators and the
   row's weight vectors exceed the 32 registers, and no FMLA takes a memory operand) */
#define DLC_DIRECT_DWC_SLIDE 0

/* dwp_f16 (binary16 x and y, fp32 arithmetic), on the fast path as well: F16 depthwise NCHW
   layers then run the multi-tap kernel (3x3 stride 1: 18 widened row loads for 48 FMLA) rather
   than lowp_dw's rows, whose one tap per call loads and stores every accumulator (llvm-mca,
   Neoverse N1: 17-20% of the FMLA rate). The general path's tiles: 16, 8, 4, 4, 3, 3, 3, 3 rows
   for 1..8 vectors (taller tiles widen each input vector for more rows). */
#define DLC_DIRECT_DWP_F16 1
#define DLC_DIRECT_DWP_F16_FAST 1
#define DLC_DIRECT_DWP_ROWS_F16(npv) ((npv) == 1 ? 16 : (npv) == 2 ? 8 : (npv) <= 4 ? 4 : 3)

/* Pixels ixb + (v*4 + lane)*SW (SW 1 or 2) of the binary16 row xr, lanes of m, zero elsewhere;
   other pixels are not read. No masked load: all lanes in the row is one load (stride 2: halves
   0..6, the evens kept), else lane by lane (the edges of a row). */
INLINE vf dwp_load_f16(const uint16_t *xr, ptrdiff_t ixb, ptrdiff_t w_in, int v, vmask m, const int SW) {
  (void)w_in;
  const uint16_t *p = xr + ixb + v * DLC_VL * SW;
  if (vminvq_u32(m) != 0) return SW == 1 ? v_load_f16(p) : v_load_f16_evens(p);
  vf r = v_zero();
  UNROLL
  for (int l = 0; l < DLC_VL; l++)
    if (m[l]) r[l] = v_f16_to_f32(p[l * SW]);
  return r;
}
/* the fast path's loads inside the row: p[lane * S]. Stride 2 reads p[0 .. 8), inside the row
   there (the tile's 2 * VL columns are): one 16-byte load whose 32-bit lanes XTN narrows to their
   low halves, the evens (v_load_f16_evens, for rows that may end at p[6], is two loads, EXT and
   UZP1: 5 instructions a row against 3). */
INLINE vf dwp_load_f16_whole(const uint16_t *p, const int S) {
  if (S == 1) return v_load_f16(p);
  return vcvt_f32_f16(vreinterpret_f16_u16(vmovn_u32(vreinterpretq_u32_u16(vld1q_u16(p)))));
}

#include "../template/f32_direct.h"
