/* f32_direct.h - the f32 direct micro-kernel family (ukernel/direct_ukernel.h says what each
 * kernel computes; src/arch/generic/f32_direct_generic.c is the readable specification), written
 * once over the vector layer and instantiated per ISA by src/arch/<isa>/f32_direct_<isa>.c, which
 * includes its vec.h, may set the knobs below, then includes this file.
 *
 * conv: up to CONV_TW2 pixels x 2 vectors of output channels (2 * CONV_TW2 accumulators, 2 weight
 * vectors, 1 broadcast: AVX2 6 x 16 in 16 ymm, AVX-512 14 x 32 in 32 zmm) or CONV_TW1 pixels x 1
 * vector; every (ky, kx, ic) step is nv weight loads + nw broadcasts for nv * nw FMAs. The three
 * reduction loops come from the driver (their order and merging suit the layout).
 * dwc: the same tiles (DWC_TW1, DWC_TW2 pixels), one x vector load per FMA.
 * dwp: up to DWP_VECS vectors of VL pixels x a few rows, kx outermost so the lane masks of a tap
 * column are made once per kx; stride 1 and 2 with contiguous loads, other strides gathered.
 * Tiles are compile-time shapes: one always-inline body instantiated per pixel count, so the
 * accumulators live in registers. NCHW output is stored through VL x VL in-register transposes.
 *
 * Knobs (macros the instantiating file may set before including this file; the tile widths are
 * literals, as they name the family):
 *   DLC_DIRECT_CONV_TW1, _TW2    conv: pixels of a tile of 1, 2 vectors (16 registers: 12, 6;
 *                                32 registers: 24, 14)
 *   DLC_DIRECT_DWC_TW1, _TW2     dwc: the same (16 registers: 12, 6; 32 registers: 24, 12)
 *   DLC_DIRECT_PF_STEPS          conv at NCHW stride 1 or 2: prefetch the tile's pixels this many
 *                                input channels ahead; 0 (default) for none
 *   DLC_DIRECT_DWP_NR            dwp: rows of a one-vector tile, a literal (default 8)
 *   DLC_DIRECT_DWP_ROWS(npv)     dwp: rows of a tile of npv pixel vectors (default 8, 4, 2, 2, 1...)
 *   DLC_DIRECT_DWP_FAST          1: dwp takes the fast path below for 3x3 and 5x5 kernels of stride
 *                                1 or 2 (one vector x DWP_NR rows, input rows loaded once per kx);
 *                                the family then promises DWP_NR rows per call for every npv
 *   DLC_DIRECT_DWP_S2_PAIR       1 (with DWP_FAST): at stride 2 the fast path takes tap columns kx and
 *                                kx + 1 from the same two loads per input row (v_evens, v_odds):
 *                                4 loads per row for 3 columns, not 6; 2 KH more weight registers
 *                                (default 0: 16 registers would spill)
 *   DLC_DIRECT_DWC_SLIDE         dwc rows that take dwc_slide_body, bits: 1 3 taps at stride 1, 2 5 taps
 *                                at stride 1, 4 3 taps at stride 2, 8 5 taps at stride 2 (default 11 with
 *                                32 registers, 0 with 16). Zen 5, 1 thread, against dwc_tile_body:
 *                                AVX-512 3x3 stride 1 0.71-0.92x, 5x5 stride 1 0.80-0.89x, 5x5 stride 2
 *                                0.75x (14x14 input) to 1.07x (56x56 input, 144 channels), 3x3 stride 2
 *                                0.82-0.93x on 7x7..28x28 outputs but 1.08-1.18x from 112x112 or 56x56
 *                                inputs; AVX2 (6 x 2 tile, its weight vectors spill) 3x3 no gain, 5x5
 *                                stride 1 0.85-0.93x, but with the 5x5 bodies in the tile functions
 *                                its 3x3 layers ran 1.03-1.07x slower
 *   DLC_DIRECT_DWC_SLIDE_WHOLE   bits 1 (stride 1), 2 (stride 2): the sliding rows load whole channel
 *                                vectors plainly too (default DLC_DIRECT_DWC_WHOLE for both). x86
 *                                folds a plain load into each FMA that uses it, KW loads of a pixel
 *                                again: AVX-512 1.10-1.14x slower on 7x7 planes, 1.4x at stride 2
 *   DLC_DIRECT_DWC_WHOLE         1: a dwc tile whose channel vectors are whole (n_in >= VL) loads
 *                                them plainly (an ISA without masked loads, where v_load_mask
 *                                tests its mask per load); default 0: every load masked
 *   DLC_DIRECT_DWP_F16           1: the family has dwp_f16 (binary16 x and y); the instantiating
 *                                file then defines dwp_load_f16(xr, ixb, w_in, v, m, SW): pixels
 *                                ixb + (v * VL + lane) * SW (SW 1 or 2) of the binary16 row xr,
 *                                lanes of m, widened and in order; and DLC_DIRECT_DWP_ROWS_F16(npv)
 *   DLC_DIRECT_DWP_F16_FAST      1 (with DWP_F16 and DWP_FAST): dwp_f16 takes the fast path too
 *                                (the F16 rows per tile are then DWP_NR); the instantiating file
 *                                also defines dwp_load_f16_whole(p, S): the binary16 p[lane * S],
 *                                all inside the row, widened
 *   DLC_DIRECT_DWF               1: the family has dwf (small planes flat in the lanes, see dwf_body)
 *                                for 7 x 7 and 14 x 14 planes, 3x3 and 5x5 kernels (default 0: with
 *                                fewer lanes a plane is more vectors than the registers hold) */
#include <stddef.h>
#include <stdint.h>

#include "../../ukernel/direct_ukernel.h"
#include "family.h"

#ifndef DLC_DIRECT_CONV_TW1
#if DLC_NREGS >= 32
#define DLC_DIRECT_CONV_TW1 24
#define DLC_DIRECT_CONV_TW2 14
#define DLC_DIRECT_DWC_TW1 24
#define DLC_DIRECT_DWC_TW2 12
#else
#define DLC_DIRECT_CONV_TW1 12
#define DLC_DIRECT_CONV_TW2 6
#define DLC_DIRECT_DWC_TW1 12
#define DLC_DIRECT_DWC_TW2 6
#endif
#endif
#ifndef DLC_DIRECT_PF_STEPS
#define DLC_DIRECT_PF_STEPS 0
#endif
#ifndef DLC_DIRECT_DWP_NR
#define DLC_DIRECT_DWP_NR 8
#endif
#ifndef DLC_DIRECT_DWP_ROWS
#define DLC_DIRECT_DWP_ROWS(npv) ((npv) == 1 ? DLC_DIRECT_DWP_NR : (npv) == 2 ? 4 : (npv) <= 4 ? 2 : 1)
#endif
#ifndef DLC_DIRECT_DWP_FAST
#define DLC_DIRECT_DWP_FAST 0
#endif
#ifndef DLC_DIRECT_DWP_F16
#define DLC_DIRECT_DWP_F16 0
#endif
#ifndef DLC_DIRECT_DWC_WHOLE
#define DLC_DIRECT_DWC_WHOLE 0
#endif
#ifndef DLC_DIRECT_DWC_SLIDE_WHOLE
#define DLC_DIRECT_DWC_SLIDE_WHOLE (DLC_DIRECT_DWC_WHOLE ? 3 : 0)
#endif
#ifndef DLC_DIRECT_DWC_SLIDE
#if DLC_NREGS >= 32
#define DLC_DIRECT_DWC_SLIDE 11
#else
#define DLC_DIRECT_DWC_SLIDE 0
#endif
#endif
#ifndef DLC_DIRECT_DWF
#define DLC_DIRECT_DWF 0
#endif
#ifndef DLC_DIRECT_DWP_F16_FAST
#define DLC_DIRECT_DWP_F16_FAST 0
#endif

#define VL DLC_VL
#define CONV_TW1 DLC_DIRECT_CONV_TW1
#define CONV_TW2 DLC_DIRECT_CONV_TW2
#define DWC_TW1 DLC_DIRECT_DWC_TW1
#define DWC_TW2 DLC_DIRECT_DWC_TW2
/* the widest tile of conv and dwc, in pixels: what tile_store's buffer holds */
#define TILE_PIX_MAX (CONV_TW1 > DWC_TW1 ? CONV_TW1 : DWC_TW1)
#define DWP_VECS 8 /* <= DLC_DIRECT_MAX_DWP_VECS */
#define DWP_NR DLC_DIRECT_DWP_NR

/* Start of a tile: acc_in, or the bias on the nc valid lanes. */
INLINE void tile_init(vf acc[][2], const int NW, const int NV, const dlc_f32_direct_args *a) {
  if (a->acc_in) {
    UNROLL
    for (int p = 0; p < NW; p++)
      UNROLL
      for (int v = 0; v < NV; v++) acc[p][v] = v_load(a->acc_in + p * a->acc_ld + v * VL);
  } else {
    UNROLL
    for (int v = 0; v < NV; v++) {
      const vf b = v_load_first(a->bias + v * VL, (ptrdiff_t)a->nc - v * VL);
      UNROLL
      for (int p = 0; p < NW; p++) acc[p][v] = b;
    }
  }
}

/* The first n lanes of v into y at element offset off, or (F16) into yh rounded to binary16. */
INLINE void put_first(const dlc_f32_direct_args *a, ptrdiff_t off, ptrdiff_t n, vf v, const int F16) {
  if (F16)
    v_store_f16_first(a->yh + off, n, v);
  else
    v_store_first(a->y + off, n, v);
}

/* The clamped tile, from buf (pixel p, vector v at buf + (p * 2 + v) * VL, vector-aligned), into
   y or (F16, a compile-time choice) into yh: NHWC rows, NCHW transposed VL pixels at a time, other
   strides one element at a time. Out of line and with run-time sizes: inlined into each of the
   226 register-tile instances of AVX-512 (with the binary16 twin) these stores made its file take
   173 s to compile (Zen 5; AVX2's 37 s); the detour through L1 costs a tile nw * nv stores and
   loads against its cin_g * taps * nw * nv FMAs. */
INLINE void tile_put_body(const float *buf, int nw, int nv, const dlc_f32_direct_args *a, const int F16) {
  if (a->y_c == 1) {
    for (int v = 0; v < nv; v++) {
      const ptrdiff_t n = (ptrdiff_t)a->nc - v * VL;
      for (int p = 0; p < nw; p++) put_first(a, p * a->y_pix + v * VL, n, v_load_aligned(buf + (p * 2 + v) * VL), F16);
    }
    return;
  }
  if (a->y_pix == 1) {
    for (int v = 0; v < nv; v++) {
      const int nch = (int)a->nc - v * VL < VL ? (int)a->nc - v * VL : VL;
      for (int p0 = 0; p0 < nw; p0 += VL) {
        vf r[VL];
        UNROLL
        for (int i = 0; i < VL; i++) r[i] = p0 + i < nw ? v_load_aligned(buf + ((p0 + i) * 2 + v) * VL) : v_zero();
        v_transpose(r);
        for (int c = 0; c < nch; c++) put_first(a, (v * VL + c) * a->y_c + p0, nw - p0, r[c], F16);
      }
    }
    return;
  }
  for (int v = 0; v < nv; v++) {
    uint16_t h[VL];
    for (int p = 0; p < nw; p++) {
      const float *t = buf + (p * 2 + v) * VL;
      if (F16) v_store_f16_first(h, VL, v_load_aligned(t));
      for (int c = 0; c < VL && v * VL + c < (int)a->nc; c++) {
        const ptrdiff_t at = p * a->y_pix + (v * VL + c) * a->y_c;
        if (F16)
          a->yh[at] = h[c];
        else
          a->y[at] = t[c];
      }
    }
  }
}

static __attribute__((noinline)) void tile_put_f32(const float *buf, int nw, int nv, const dlc_f32_direct_args *a) {
  tile_put_body(buf, nw, nv, a, 0);
}

static __attribute__((noinline)) void tile_put_f16(const float *buf, int nw, int nv, const dlc_f32_direct_args *a) {
  tile_put_body(buf, nw, nv, a, 1);
}

/* End of a tile: raw into acc_out, or clamped into y: NHWC rows of fp32 stored here (most stores
   whole vectors), every other output (NCHW, binary16 into yh, other strides) through tile_put_*.
   F16_OUT: the caller may set yh (conv); dwc never does. */
INLINE void tile_store(vf acc[][2], const int NW, const int NV, const dlc_f32_direct_args *a, const int F16_OUT) {
  if (a->acc_out) {
    UNROLL
    for (int p = 0; p < NW; p++)
      UNROLL
      for (int v = 0; v < NV; v++) v_store(a->acc_out + p * a->acc_ld + v * VL, acc[p][v]);
    return;
  }
  /* The bound is the first operand: max/min return the second when either is NaN. */
  const vf lo = v_set1(a->out_min), hi = v_set1(a->out_max);
  UNROLL
  for (int p = 0; p < NW; p++)
    UNROLL
    for (int v = 0; v < NV; v++) acc[p][v] = v_clamp(acc[p][v], lo, hi);
  if (a->y_c == 1 && !(F16_OUT && a->yh)) {
    UNROLL
    for (int v = 0; v < NV; v++) {
      const ptrdiff_t n = (ptrdiff_t)a->nc - v * VL;
      UNROLL
      for (int p = 0; p < NW; p++) v_store_first(a->y + p * a->y_pix + v * VL, n, acc[p][v]);
    }
    return;
  }
  __attribute__((aligned(VL * sizeof(float)))) float buf[TILE_PIX_MAX * 2 * VL];
  UNROLL
  for (int p = 0; p < NW; p++)
    UNROLL
    for (int v = 0; v < NV; v++) v_store_aligned(buf + (p * 2 + v) * VL, acc[p][v]);
  if (F16_OUT && a->yh)
    tile_put_f16(buf, NW, NV, a);
  else
    tile_put_f32(buf, NW, NV, a);
}

/* XP: the pixel stride x_pix when it is 1 or 2 (NCHW, stride 1 or 2), known at compile time so
   every broadcast addresses its pixel by an immediate offset; 0: read from the arguments (NHWC),
   where GCC has to keep nw pixel offsets in registers or on the stack. */
INLINE void conv_tile(const dlc_f32_direct_args *a, const int NW, const int NV, const int XP) {
  vf acc[CONV_TW1][2];
  tile_init(acc, NW, NV, a);
  const ptrdiff_t xp = XP ? XP : a->x_pix, wv = a->w_v, xs2 = a->x_s[2], ws2 = a->w_s[2];
  const size_t n2 = a->n[2];
  for (size_t i0 = 0; i0 < a->n[0]; i0++) {
    for (size_t i1 = 0; i1 < a->n[1]; i1++) {
      const float *xk = a->x + (ptrdiff_t)i0 * a->x_s[0] + (ptrdiff_t)i1 * a->x_s[1];
      const float *wk = a->w + (ptrdiff_t)i0 * a->w_s[0] + (ptrdiff_t)i1 * a->w_s[1];
      for (size_t i2 = 0; i2 < n2; i2++) {
        const vf w0 = v_load(wk);
        const vf w1 = NV > 1 ? v_load(wk + wv) : w0;
        if (XP && DLC_DIRECT_PF_STEPS) {
          /* NCHW: consecutive steps read other channel planes, a stride the hardware prefetchers
             do not follow past 2 KiB; fetch the tile's pixels PF_STEPS channels ahead. */
          v_prefetch(xk + DLC_DIRECT_PF_STEPS * xs2);
          if ((NW - 1) * XP >= 8) v_prefetch(xk + DLC_DIRECT_PF_STEPS * xs2 + (NW - 1) * XP);
        }
        UNROLL
        for (int p = 0; p < NW; p++) {
          const vf b = v_bcast(xk + p * xp);
          acc[p][0] = v_fma(w0, b, acc[p][0]);
          if (NV > 1) acc[p][1] = v_fma(w1, b, acc[p][1]);
        }
        xk += xs2;
        wk += ws2;
      }
    }
  }
  tile_store(acc, NW, NV, a, 1);
}

/* PERM: the channel multiplier is > 1 (a compile-time choice, so the loop body has no branch).
   WHOLE: every channel vector is whole, loaded plainly (DLC_DIRECT_DWC_WHOLE). */
INLINE void dwc_tile_body(const dlc_f32_direct_args *a, const int NW, const int NV, const int PERM, const int WHOLE) {
  vf acc[DWC_TW1][2];
  tile_init(acc, NW, NV, a);
  const vmask m0 = v_first(a->n_in[0]), m1 = v_first(a->n_in[1]);
  const vidx perm0 = PERM ? v_load_idx(a->perm) : (vidx){0};
  const vidx perm1 = PERM && NV > 1 ? v_load_idx(a->perm + VL) : perm0;
  /* Without the permute (channel multiplier 1) vector v reads the input channels at v * VL, an
     immediate offset: with the driver's x_v, the 12 x 2 tile of AVX-512 kept 24 pixel addresses
     live and reloaded most of them from the stack before each load. */
  const ptrdiff_t xo0 = PERM ? a->x_v[0] : 0, xo1 = PERM ? a->x_v[1] : VL, xp = a->x_pix, wv = a->w_v;
  const ptrdiff_t xs2 = a->x_s[2], ws2 = a->w_s[2];
  const size_t n2 = a->n[2];
  /* Pixel p is read at xb[p / 3] + (p % 3) * xp: a third of the tile's pixels as pointers, the
     others one or two pixel strides on (x86: base + index * 4 or 8), so the addresses stay in
     registers. */
  const float *xb[(DWC_TW1 + 2) / 3];
  for (size_t i0 = 0; i0 < a->n[0]; i0++) {
    for (size_t i1 = 0; i1 < a->n[1]; i1++) {
      const float *xk = a->x + (ptrdiff_t)i0 * a->x_s[0] + (ptrdiff_t)i1 * a->x_s[1];
      const float *wk = a->w + (ptrdiff_t)i0 * a->w_s[0] + (ptrdiff_t)i1 * a->w_s[1];
      UNROLL
      for (int j = 0; j < (NW + 2) / 3; j++) xb[j] = xk + 3 * j * xp;
      for (size_t i2 = 0; i2 < n2; i2++) {
        const vf w0 = v_load(wk);
        const vf w1 = NV > 1 ? v_load(wk + wv) : w0;
        UNROLL
        for (int p = 0; p < NW; p++) {
          const float *xq = xb[p / 3] + (p % 3) * xp;
          vf x0 = WHOLE ? v_load(xq + xo0) : v_load_mask(xq + xo0, m0);
          if (PERM) x0 = v_permute(x0, perm0);
          acc[p][0] = v_fma(x0, w0, acc[p][0]);
          if (NV > 1) {
            vf x1 = WHOLE ? v_load(xq + xo1) : v_load_mask(xq + xo1, m1);
            if (PERM) x1 = v_permute(x1, perm1);
            acc[p][1] = v_fma(x1, w1, acc[p][1]);
          }
        }
        UNROLL
        for (int j = 0; j < (NW + 2) / 3; j++) xb[j] += xs2;
        wk += ws2;
      }
    }
  }
  tile_store(acc, NW, NV, a, 0);
}

/* dwc over KW taps of a row at tap stride x_s[2] = x_pix / S, channel multiplier 1: each input
   pixel of a kernel row is loaded once and feeds the outputs that read it, instead of a load per tap
   ((NW - 1) * S + KW loads a row and vector, not NW * KW). Pixel p still sums its taps kx = 0..KW-1 in
   order, as dwc_tile_body does. WHOLE: plain loads (DLC_DIRECT_DWC_SLIDE_WHOLE). */
INLINE void dwc_slide_body(const dlc_f32_direct_args *a, const int NW, const int NV, const int KW, const int S,
                           const int WHOLE) {
  vf acc[DWC_TW1][2];
  tile_init(acc, NW, NV, a);
  const vmask m0 = v_first(a->n_in[0]), m1 = v_first(a->n_in[1]);
  const ptrdiff_t xs2 = a->x_s[2], wv = a->w_v, ws2 = a->w_s[2], xs1 = a->x_s[1], ws1 = a->w_s[1];
  const float *xk = a->x;
  const float *wk = a->w;
  for (size_t i1 = 0; i1 < a->n[1]; i1++) {
    vf w[5][2];
    UNROLL
    for (int k = 0; k < KW; k++) {
      w[k][0] = v_load(wk + k * ws2);
      w[k][1] = NV > 1 ? v_load(wk + k * ws2 + wv) : w[k][0];
    }
    UNROLL
    for (int j = 0; j < (NW - 1) * S + KW; j++) {
      const float *xq = xk + j * xs2;
      const vf x0 = WHOLE ? v_load(xq) : v_load_mask(xq, m0);
      const vf x1 = NV > 1 ? (WHOLE ? v_load(xq + VL) : v_load_mask(xq + VL, m1)) : x0;
      UNROLL
      for (int k = 0; k < KW; k++) {
        const int p = (j - k) / S;
        if (j < k || (j - k) % S || p >= NW) continue;
        acc[p][0] = v_fma(x0, w[k][0], acc[p][0]);
        if (NV > 1) acc[p][1] = v_fma(x1, w[k][1], acc[p][1]);
      }
    }
    xk += xs1;
    wk += ws1;
  }
  tile_store(acc, NW, NV, a, 0);
}

/* dwc_slide_body with KW taps at stride S, plain loads where allowed */
#define DWC_SLIDE(KW, S)                                                                             \
  do {                                                                                               \
    if ((DLC_DIRECT_DWC_SLIDE_WHOLE & (S)) && whole)                                                 \
      dwc_slide_body(a, NW, NV, KW, S, 1);                                                           \
    else                                                                                             \
      dwc_slide_body(a, NW, NV, KW, S, 0);                                                           \
    return;                                                                                          \
  } while (0)

INLINE void dwc_tile(const dlc_f32_direct_args *a, const int NW, const int NV, const int PERM) {
  const int whole = DLC_DIRECT_DWC_WHOLE && a->n_in[0] >= VL && (NV == 1 || a->n_in[1] >= VL);
  if (!PERM && a->n[0] == 1) {
    const size_t nkx = a->n[2];
    if (a->x_s[2] == a->x_pix) {
      if ((DLC_DIRECT_DWC_SLIDE & 1) && nkx == 3) DWC_SLIDE(3, 1);
      if ((DLC_DIRECT_DWC_SLIDE & 2) && nkx == 5) DWC_SLIDE(5, 1);
    } else if (2 * a->x_s[2] == a->x_pix) {
      if ((DLC_DIRECT_DWC_SLIDE & 4) && nkx == 3) DWC_SLIDE(3, 2);
      if ((DLC_DIRECT_DWC_SLIDE & 8) && nkx == 5) DWC_SLIDE(5, 2);
    }
  }
  if (whole)
    dwc_tile_body(a, NW, NV, PERM, 1);
  else
    dwc_tile_body(a, NW, NV, PERM, 0);
}

/* Lanes of the row at columns [e, e + VL) that lie in [0, w_in). */
INLINE vmask row_mask(ptrdiff_t e, ptrdiff_t w_in) { return v_range(-e, w_in - e); }

/* The pixels [lo, hi) of an nw-pixel tile whose input column ixb + p*sw lies in [0, w_in); divides
   only at the borders of the row, as interior tiles are most of the work of a small kernel. */
INLINE void dwp_valid(ptrdiff_t ixb, ptrdiff_t sw, ptrdiff_t w_in, ptrdiff_t nw, ptrdiff_t *lo, ptrdiff_t *hi) {
  *lo = ixb >= 0 ? 0 : sw == 1 ? -ixb : (-ixb + sw - 1) / sw;
  const ptrdiff_t room = w_in - ixb;
  if (room <= 0)
    *hi = 0;
  else if ((nw - 1) * sw < room)
    *hi = nw;
  else
    *hi = sw == 1 ? room : (room + sw - 1) / sw;
}

/* dwp, the general path (any kernel, stride, dilation): rows [r0, r0 + nr) of the call's, nr <= NR,
   kx outermost. Stride 2 loads 2 * VL consecutive floats masked to the row (pixels outside it
   read zeros; lanes past nw are computed and not stored) and keeps the even ones with v_evens, in
   its evens order: the accumulators stay in that order and v_evens_in_order puts them right once,
   at the store (AVX2: no lane-crossing permute per load). Other strides gather. F16 (binary16 x
   and y, stride 1 or 2) loads through the ISA's dwp_load_f16, in order. */
INLINE void dwp_tile(size_t nw, const dlc_f32_dwp_args *a, size_t r0, size_t nr, const int NPV, const int NR,
                     const int SW, const int F16) {
  vf acc[DWP_NR][DWP_VECS];
  UNROLL
  for (int r = 0; r < NR; r++)
    UNROLL
    for (int v = 0; v < NPV; v++) acc[r][v] = v_set1(a->bias);
  /* the arguments in locals: read through a in the loops, GCC reloaded them on every row */
  const ptrdiff_t sw = SW ? SW : a->sw, w_in = a->w_in, h_in = a->h_in, sh = a->sh, dh = a->dh;
  const ptrdiff_t kh = a->kh, kw = a->kw, iy0 = a->iy0 + (ptrdiff_t)r0 * sh;
  const float *x = a->x;
  const int EVENS = SW == 2 && !F16;
  for (ptrdiff_t kx = 0; kx < kw; kx++) {
    const ptrdiff_t ixb = a->ix0 + kx * a->dw;
    ptrdiff_t lo, hi;
    dwp_valid(ixb, sw, w_in, (ptrdiff_t)nw, &lo, &hi);
    if (lo >= hi) continue;
    /* the pixels' lanes, or (EVENS) the row's lanes of each of the two loads per vector */
    vmask m[2 * DWP_VECS];
    UNROLL
    for (int v = 0; v < NPV; v++) {
      if (EVENS) {
        m[2 * v] = row_mask(ixb + 2 * v * VL, w_in);
        m[2 * v + 1] = row_mask(ixb + 2 * v * VL + VL, w_in);
      } else {
        m[v] = v_range(lo - v * VL, hi - v * VL);
      }
    }
    for (ptrdiff_t ky = 0; ky < kh; ky++) {
      const vf wv = v_set1(a->w[ky * kw + kx]);
      UNROLL
      for (int r = 0; r < NR; r++) {
        if ((size_t)r >= nr) break;
        const ptrdiff_t iy = iy0 + r * sh + ky * dh;
        if (iy < 0 || iy >= h_in) continue;
        UNROLL
        for (int v = 0; v < NPV; v++) {
          vf xv;
#if DLC_DIRECT_DWP_F16
          if (F16) {
            xv = dwp_load_f16(a->xh + iy * w_in, ixb, w_in, v, m[v], SW);
          } else
#endif
          {
            const float *xr = x + iy * w_in;
            if (SW == 1)
              xv = v_load_mask(xr + ixb + v * VL, m[v]);
            else if (EVENS)
              xv = v_evens(v_load_mask(xr + ixb + 2 * v * VL, m[2 * v]), v_load_mask(xr + ixb + 2 * v * VL + VL, m[2 * v + 1]));
            else
              xv = v_gather(xr + ixb + v * VL * sw, sw, m[v]);
          }
          acc[r][v] = v_fma(wv, xv, acc[r][v]);
        }
      }
    }
  }
  const vf lo = v_set1(a->out_min), hi = v_set1(a->out_max);
  UNROLL
  for (int r = 0; r < NR; r++) {
    if ((size_t)r >= nr) break;
    UNROLL
    for (int v = 0; v < NPV; v++) {
      const vf c = v_clamp(EVENS ? v_evens_in_order(acc[r][v]) : acc[r][v], lo, hi);
      const ptrdiff_t at = (ptrdiff_t)(r0 + r) * a->y_row + v * VL;
      if (F16)
        v_store_f16_first(a->yh + at, (ptrdiff_t)nw - v * VL, c);
      else
        v_store_first(a->y + at, (ptrdiff_t)nw - v * VL, c);
    }
  }
}

/* The call's rows in tiles of NR (one tile unless the family promises more rows per call than the
   general path's tile holds, as with DLC_DIRECT_DWP_FAST). */
INLINE void dwp_rows(size_t nw, const dlc_f32_dwp_args *a, const int NPV, const int NR, const int SW, const int F16) {
  const size_t nr = (size_t)NR;
  for (size_t r0 = 0; r0 < a->nr; r0 += nr) dwp_tile(nw, a, r0, a->nr - r0 < nr ? a->nr - r0 : nr, NPV, NR, SW, F16);
}

#if DLC_DIRECT_DWP_FAST
/* dwp, the fast path: kernel height KH and stride S (both directions) known at compile time, no
   row dilation; a tile of one vector x DWP_NR rows. Input row j of the tile is loaded once per kx
   and feeds every output row r with ky = j - r*S in range (3x3 stride 1: 10 loads for 24 FMAs,
   where one load per FMA was the bound). Per kx one branch picks plain loads when the tile's loads
   lie inside the row (all but the first and last tiles of a row), else masked loads with masks
   made once for the kx; row bounds cost one branch per tile unless the tile is clipped at the top
   or bottom. Rows past nr are computed (on clipped inputs, like any row) and not stored. On AVX2
   8 accumulators + KH weights + the loads and masks fit 16 ymm with no spills up to KH 5 stride
   2; 12 accumulators (4 rows x 3 vectors, 6 x 2) spilled and ran no faster on Zen 2. */
#define DWP_KH_MAX 5
#ifndef DLC_DIRECT_DWP_S2_PAIR
#define DLC_DIRECT_DWP_S2_PAIR 0
#endif
#define DWP_S2_PAIR DLC_DIRECT_DWP_S2_PAIR
#ifndef DLC_DIRECT_DWP_S2_TRIPLE
#define DLC_DIRECT_DWP_S2_TRIPLE 0
#endif

/* Input rows j of the tile (row iy0 + j at xb + j*w_in, which points at column ixb); ROWCHK: only
   j in [jlo, jhi) are inside the input. F16: the binary16 rows xh + j*w_in from column 0 instead,
   MASKED on the lanes of m[0] (the pixels inside the row). */
INLINE void dwp_rows_pass(vf acc[DWP_NR], const float *xb, const uint16_t *xh, ptrdiff_t ixb, ptrdiff_t w_in,
                          ptrdiff_t jlo, ptrdiff_t jhi, const vf *wk, const vf *wk1, const vf *wk2, const vmask *m,
                          const int KH, const int S, const int MASKED, const int ROWCHK, const int F16, const int PAIR,
                          const int TRIPLE) {
  (void)wk2; /* TRIPLE only */
  (void)xh; /* F16 only */
  (void)ixb;
  const float *p = xb;
  /* F16: a pointer bumped by rows as p (indexing xh by j * w_in, GCC spent a shift and an add on
     each row's address) */
  const uint16_t *hr = xh;
  UNROLL
  for (int j = 0; j < (DWP_NR - 1) * S + KH; j++, p += F16 ? 0 : w_in, hr += F16 ? w_in : 0) {
    if (ROWCHK && (j < jlo || j >= jhi)) continue;
    vf xv;
#if DLC_DIRECT_DWP_F16_FAST
    if (F16) {
      xv = MASKED ? dwp_load_f16(hr, ixb, w_in, 0, m[0], S) : dwp_load_f16_whole(hr + ixb, S);
    } else
#endif
    if (S == 1) {
      xv = MASKED ? v_load_mask(p, m[0]) : v_load(p);
    } else if (TRIPLE) {
      /* columns kx + 1 and kx + 2: the evens and odds of the 2 VL floats from ixb + 1; column kx:
         the odds moved up a lane, x[ixb] (the last float of the VL before them) in lane 0 */
      const vf e = MASKED ? v_load_mask(p + 1, m[0]) : v_load(p + 1);
      const vf o = MASKED ? v_load_mask(p + 1 + VL, m[1]) : v_load(p + 1 + VL);
      const vf q = MASKED ? v_load_mask(p + 1 - VL, m[2]) : v_load(p + 1 - VL);
      const vf x1 = v_evens(e, o), x2 = v_odds(e, o);
      xv = v_shift_in(q, x2, VL - 1);
      UNROLL
      for (int r = 0; r < DWP_NR; r++) {
        const int ky = j - r * S;
        if (ky >= 0 && ky < KH) {
          acc[r] = v_fma(wk1[ky], x1, acc[r]);
          acc[r] = v_fma(wk2[ky], x2, acc[r]);
        }
      }
    } else {
      const vf e = MASKED ? v_load_mask(p, m[0]) : v_load(p);
      const vf o = MASKED ? v_load_mask(p + VL, m[1]) : v_load(p + VL);
      xv = v_evens(e, o);
      if (PAIR) {
        /* column kx + 1: the odd floats of the same two loads */
        const vf xo = v_odds(e, o);
        UNROLL
        for (int r = 0; r < DWP_NR; r++) {
          const int ky = j - r * S;
          if (ky >= 0 && ky < KH) acc[r] = v_fma(wk1[ky], xo, acc[r]);
        }
      }
    }
    UNROLL
    for (int r = 0; r < DWP_NR; r++) {
      const int ky = j - r * S;
      if (ky >= 0 && ky < KH) acc[r] = v_fma(wk[ky], xv, acc[r]);
    }
  }
}

/* nw <= VL pixels from input column ix0, rows from iy0; nr <= DWP_NR of them stored at y (F16:
   from xh, rounded into yh). */
INLINE void dwp_vec(const dlc_f32_dwp_args *a, ptrdiff_t iy0, ptrdiff_t ix0, float *y, uint16_t *yh, ptrdiff_t nw,
                    size_t nr, const int KH, const int S, const int F16) {
  vf acc[DWP_NR];
  UNROLL
  for (int r = 0; r < DWP_NR; r++) acc[r] = v_set1(a->bias);
  const ptrdiff_t w_in = a->w_in, kw = a->kw, span = VL * S, nj = (DWP_NR - 1) * S + KH;
  const ptrdiff_t jlo = iy0 < 0 ? -iy0 : 0, jhi = a->h_in - iy0 < nj ? a->h_in - iy0 : nj;
  const int rows_in = jlo == 0 && jhi == nj;
  const float *xr = F16 ? NULL : a->x + iy0 * w_in;
  const uint16_t *xh = F16 ? a->xh + iy0 * w_in : NULL;
  /* stride 2, undilated columns: kx and kx + 1 from the same loads (DLC_DIRECT_DWP_S2_PAIR) */
  const int can_pair = DWP_S2_PAIR && S == 2 && !F16 && a->dw == 1;
  for (ptrdiff_t kx = 0; kx < kw; kx++) {
    const ptrdiff_t ixb = ix0 + kx * a->dw;
    const int two = can_pair && kx + 1 < kw;
    vf wk[DWP_KH_MAX], wk1[DWP_KH_MAX];
    UNROLL
    for (int ky = 0; ky < KH; ky++) wk[ky] = v_set1(a->w[ky * kw + kx]);
    /* (set where unused too, dead code then, which GCC's warning cannot see) */
    UNROLL
    for (int ky = 0; ky < KH; ky++) wk1[ky] = v_set1(a->w[ky * kw + kx + two]);
#if DLC_DIRECT_DWP_S2_TRIPLE
    /* 3 columns from 3 loads (DLC_DIRECT_DWP_S2_TRIPLE), 3 rows of weights only: with 5, the 15
       weights, 14 accumulators and the loads would not fit 32 registers */
    if (KH == 3 && can_pair && kx + 2 < kw) {
      vf wk2[DWP_KH_MAX];
      UNROLL
      for (int ky = 0; ky < KH; ky++) wk2[ky] = v_set1(a->w[ky * kw + kx + 2]);
      const ptrdiff_t b = ixb + 1 - VL, e = ixb + 1 + 2 * VL;   /* the floats [b, e) the loads cover */
      if (b >= 0 && e <= w_in) {
        if (rows_in)
          dwp_rows_pass(acc, xr + ixb, NULL, ixb, w_in, jlo, jhi, wk, wk1, wk2, NULL, KH, S, 0, 0, 0, 0, 1);
        else
          dwp_rows_pass(acc, xr + ixb, NULL, ixb, w_in, jlo, jhi, wk, wk1, wk2, NULL, KH, S, 0, 1, 0, 0, 1);
      } else if (b < w_in && e > 0) {
        vmask m[3];
        m[0] = row_mask(ixb + 1, w_in);
        m[1] = row_mask(ixb + 1 + VL, w_in);
        m[2] = row_mask(b, w_in);
        dwp_rows_pass(acc, xr + ixb, NULL, ixb, w_in, jlo, jhi, wk, wk1, wk2, m, KH, S, 1, 1, 0, 0, 1);
      }
      kx += 2;
      continue;
    }
#endif
    /* the pair's loads cover [ixb, ixb + span), where the odd column's pixels lie too: the tests
       below hold for both columns (a window outside the row adds zeros to neither) */
    if (ixb >= 0 && ixb + span <= w_in) {
      if (two)
        (rows_in ? dwp_rows_pass(acc, xr + ixb, NULL, ixb, w_in, jlo, jhi, wk, wk1, NULL, NULL, KH, S, 0, 0, 0, 1, 0)
                 : dwp_rows_pass(acc, xr + ixb, NULL, ixb, w_in, jlo, jhi, wk, wk1, NULL, NULL, KH, S, 0, 1, 0, 1, 0));
      else if (rows_in)
        dwp_rows_pass(acc, F16 ? NULL : xr + ixb, xh, ixb, w_in, jlo, jhi, wk, NULL, NULL, NULL, KH, S, 0, 0, F16, 0, 0);
      else
        dwp_rows_pass(acc, F16 ? NULL : xr + ixb, xh, ixb, w_in, jlo, jhi, wk, NULL, NULL, NULL, KH, S, 0, 1, F16, 0, 0);
    } else if (ixb < w_in && ixb + span > 0) {
      vmask m[2];
      if (F16) {
        /* the pixels ixb + lane * S inside the row */
        ptrdiff_t lo, hi;
        dwp_valid(ixb, S, w_in, VL, &lo, &hi);
        m[0] = v_range(lo, hi);
      } else {
        UNROLL
        for (int i = 0; i < S; i++) m[i] = row_mask(ixb + i * VL, w_in);
      }
      if (two)
        dwp_rows_pass(acc, xr + ixb, NULL, ixb, w_in, jlo, jhi, wk, wk1, NULL, m, KH, S, 1, 1, 0, 1, 0);
      else
        dwp_rows_pass(acc, F16 ? NULL : xr + ixb, xh, ixb, w_in, jlo, jhi, wk, NULL, NULL, m, KH, S, 1, 1, F16, 0, 0);
    }
    kx += two;
  }
  const vf lo = v_set1(a->out_min), hi = v_set1(a->out_max);
  UNROLL
  for (int r = 0; r < DWP_NR; r++) {
    if ((size_t)r >= nr) break;
    /* F16: the accumulators are in order (dwp_load_f16 loads in order) */
    if (F16)
      v_store_f16_first(yh + r * a->y_row, nw, v_clamp(acc[r], lo, hi));
    else
      v_store_first(y + r * a->y_row, nw, v_clamp(S == 2 ? v_evens_in_order(acc[r]) : acc[r], lo, hi));
  }
}

INLINE void dwp_fast(size_t nw, const dlc_f32_dwp_args *a, const int KH, const int S, const int F16) {
  for (size_t r0 = 0; r0 < a->nr; r0 += DWP_NR) {
    const size_t nr = a->nr - r0 < DWP_NR ? a->nr - r0 : DWP_NR;
    const ptrdiff_t iy0 = a->iy0 + (ptrdiff_t)r0 * S;
    float *y = F16 ? NULL : a->y + (ptrdiff_t)r0 * a->y_row;
    uint16_t *yh = F16 ? a->yh + (ptrdiff_t)r0 * a->y_row : NULL;
    for (size_t p0 = 0; p0 < nw; p0 += VL)
      dwp_vec(a, iy0, a->ix0 + (ptrdiff_t)p0 * S, F16 ? NULL : y + p0, F16 ? yh + p0 : NULL,
              (ptrdiff_t)(nw - p0 < VL ? nw - p0 : VL), nr, KH, S, F16);
  }
}

static void dwp_k3s1(size_t nw, const dlc_f32_dwp_args *a) { dwp_fast(nw, a, 3, 1, 0); }
static void dwp_k3s2(size_t nw, const dlc_f32_dwp_args *a) { dwp_fast(nw, a, 3, 2, 0); }
static void dwp_k5s1(size_t nw, const dlc_f32_dwp_args *a) { dwp_fast(nw, a, 5, 1, 0); }
static void dwp_k5s2(size_t nw, const dlc_f32_dwp_args *a) { dwp_fast(nw, a, 5, 2, 0); }
#if DLC_DIRECT_DWP_F16_FAST
static void dwp_f16_k3s1(size_t nw, const dlc_f32_dwp_args *a) { dwp_fast(nw, a, 3, 1, 1); }
static void dwp_f16_k3s2(size_t nw, const dlc_f32_dwp_args *a) { dwp_fast(nw, a, 3, 2, 1); }
static void dwp_f16_k5s1(size_t nw, const dlc_f32_dwp_args *a) { dwp_fast(nw, a, 5, 1, 1); }
static void dwp_f16_k5s2(size_t nw, const dlc_f32_dwp_args *a) { dwp_fast(nw, a, 5, 2, 1); }
#endif
#endif

/* One instantiation per pixel count up to TW: case N: F(a, N). */
#define TILE_CASE(N, F) \
  case N: F(a, N); break;
#define TILE_SWITCH(TW, F) \
  switch (nw) { DLC_REPEAT(TW, TILE_CASE, F) default: break; }
#define CONV1(a, NW) conv_tile(a, NW, 1, 0)
#define CONV2(a, NW) conv_tile(a, NW, 2, 0)
#define CONV1X1(a, NW) conv_tile(a, NW, 1, 1)
#define CONV2X1(a, NW) conv_tile(a, NW, 2, 1)
#define CONV1X2(a, NW) conv_tile(a, NW, 1, 2)
#define CONV2X2(a, NW) conv_tile(a, NW, 2, 2)
#define DWC1(a, NW) dwc_tile(a, NW, 1, 0)
#define DWC2(a, NW) dwc_tile(a, NW, 2, 0)
#define DWC1P(a, NW) dwc_tile(a, NW, 1, 1)
#define DWC2P(a, NW) dwc_tile(a, NW, 2, 1)
/* conv tiles of NV vectors, pixel stride 1 or 2 as a compile-time constant */
#define CONV_TILES(TW, NV)             \
  if (a->x_pix == 1) {                 \
    TILE_SWITCH(TW, CONV##NV##X1)      \
  } else if (a->x_pix == 2) {          \
    TILE_SWITCH(TW, CONV##NV##X2)      \
  } else {                             \
    TILE_SWITCH(TW, CONV##NV)          \
  }
/* dwc tiles of NV vectors, the channel permute as a compile-time choice */
#define DWC_TILES(TW, NV)              \
  if (a->perm) {                       \
    TILE_SWITCH(TW, DWC##NV##P)        \
  } else {                             \
    TILE_SWITCH(TW, DWC##NV)           \
  }

static void conv_1v_tile(size_t nw, const dlc_f32_direct_args *a) { CONV_TILES(DLC_DIRECT_CONV_TW1, 1) }
static void conv_2v_tile(size_t nw, const dlc_f32_direct_args *a) { CONV_TILES(DLC_DIRECT_CONV_TW2, 2) }
static void dwc_1v_tile(size_t nw, const dlc_f32_direct_args *a) { DWC_TILES(DLC_DIRECT_DWC_TW1, 1) }
static void dwc_2v_tile(size_t nw, const dlc_f32_direct_args *a) { DWC_TILES(DLC_DIRECT_DWC_TW2, 2) }

/* Whole runs of pixels, in balanced register tiles. */
static void conv_1v(size_t nw, const dlc_f32_direct_args *a) { dlc_f32_direct_split(nw, CONV_TW1, a, conv_1v_tile); }
static void conv_2v(size_t nw, const dlc_f32_direct_args *a) { dlc_f32_direct_split(nw, CONV_TW2, a, conv_2v_tile); }
static void dwc_1v(size_t nw, const dlc_f32_direct_args *a) { dlc_f32_direct_split(nw, DWC_TW1, a, dwc_1v_tile); }
static void dwc_2v(size_t nw, const dlc_f32_direct_args *a) { dlc_f32_direct_split(nw, DWC_TW2, a, dwc_2v_tile); }

/* npv pixel vectors a row, ROWS(npv) rows a tile. */
#define DWP_CASES(SW, F16, ROWS)                                   \
  switch ((nw + VL - 1) / VL) {                                    \
    case 1: dwp_rows(nw, a, 1, ROWS(1), SW, F16); break;           \
    case 2: dwp_rows(nw, a, 2, ROWS(2), SW, F16); break;           \
    case 3: dwp_rows(nw, a, 3, ROWS(3), SW, F16); break;           \
    case 4: dwp_rows(nw, a, 4, ROWS(4), SW, F16); break;           \
    case 5: dwp_rows(nw, a, 5, ROWS(5), SW, F16); break;           \
    case 6: dwp_rows(nw, a, 6, ROWS(6), SW, F16); break;           \
    case 7: dwp_rows(nw, a, 7, ROWS(7), SW, F16); break;           \
    case 8: dwp_rows(nw, a, 8, ROWS(8), SW, F16); break;           \
    default: break;                                                \
  }

static void dwp(size_t nw, const dlc_f32_dwp_args *a) {
#if DLC_DIRECT_DWP_FAST
  if (a->dh == 1 && a->sh == a->sw && (a->sw == 1 || a->sw == 2) && (a->kh == 3 || a->kh == 5)) {
    if (a->kh == 3)
      (a->sw == 1 ? dwp_k3s1 : dwp_k3s2)(nw, a);
    else
      (a->sw == 1 ? dwp_k5s1 : dwp_k5s2)(nw, a);
    return;
  }
#endif
  if (a->sw == 1) {
    DWP_CASES(1, 0, DLC_DIRECT_DWP_ROWS)
  } else if (a->sw == 2) {
    DWP_CASES(2, 0, DLC_DIRECT_DWP_ROWS)
  } else {
    DWP_CASES(0, 0, DLC_DIRECT_DWP_ROWS)
  }
}

#if DLC_DIRECT_DWP_F16
/* F16 in and out, stride_w 1 or 2 (direct_ukernel.h), DLC_DIRECT_DWP_ROWS_F16 rows per tile. */
static void dwp_f16(size_t nw, const dlc_f32_dwp_args *a) {
#if DLC_DIRECT_DWP_F16_FAST
  if (a->dh == 1 && a->sh == a->sw && (a->kh == 3 || a->kh == 5)) {
    if (a->kh == 3)
      (a->sw == 1 ? dwp_f16_k3s1 : dwp_f16_k3s2)(nw, a);
    else
      (a->sw == 1 ? dwp_f16_k5s1 : dwp_f16_k5s2)(nw, a);
    return;
  }
#endif
  if (a->sw == 1) {
    DWP_CASES(1, 1, DLC_DIRECT_DWP_ROWS_F16)
  } else {
    DWP_CASES(2, 1, DLC_DIRECT_DWP_ROWS_F16)
  }
}
#endif

#if DLC_DIRECT_DWF
/* dwf (direct_ukernel.h): a small plane's pixels run flat through the lanes (a 7 x 7 plane is 4
   vectors, not 7 rows of VL lanes of which 7 are used; channels stay in their NCHW planes, so
   there is no transpose either way, unlike dwt). Tap (ky, kx) of output pixel q reads input pixel
   q + (ky - p) * W + kx - p: a constant shift of the flat plane, taken from two of the plane's
   vectors with v_shift_in, so every load is one of the plane's own vectors and no load crosses a
   row at an offset (a flat-plane kernel with a load per tap at its offset ran 1.0-1.25x dwt's time
   on Zen 5, its loads crossing cache lines). Rows above and below the plane read zero vectors; a
   tap that wraps across a row end reads the neighbouring row, so each kernel column kx sums into
   its own accumulator, masked once to the output columns where that column's taps are inside the
   row. */
#define DWF_SHIFT_CASE(n) \
  case n: return v_shift_in(a, b, (n) % VL);
INLINE vf dwf_shift(vf a, vf b, const int s) {
  switch (s) {
    DWF_SHIFT_CASE(1) DWF_SHIFT_CASE(2) DWF_SHIFT_CASE(3) DWF_SHIFT_CASE(4) DWF_SHIFT_CASE(5)
    DWF_SHIFT_CASE(6) DWF_SHIFT_CASE(7) DWF_SHIFT_CASE(8) DWF_SHIFT_CASE(9) DWF_SHIFT_CASE(10)
    DWF_SHIFT_CASE(11) DWF_SHIFT_CASE(12) DWF_SHIFT_CASE(13) DWF_SHIFT_CASE(14) DWF_SHIFT_CASE(15)
    default: return a;
  }
}
#undef DWF_SHIFT_CASE

/* the largest plane and kernel of dwf_for */
#define DWF_NV_MAX ((14 * 14 + VL - 1) / VL)
#define DWF_K_MAX 5

/* Vector i of a plane of NV vectors (REM floats in the last, 0: whole), zeros outside it. */
INLINE vf dwf_in(const float *x, const int i, const int NV, const int REM) {
  if (i < 0 || i >= NV) return v_zero();
  if (i == NV - 1 && REM) return v_load_first(x + i * VL, REM);
  return v_load(x + i * VL);
}

INLINE void dwf_body(const dlc_f32_dwf_args *a, const int H, const int W, const int K) {
  const int P = H * W, NV = (P + VL - 1) / VL, REM = P % VL, PAD = (K - 1) / 2, FAR = 64 * VL;
  /* column masks: lane l of vector j, kernel column kx, where output column ox reads a column of
     the row (ox + kx - PAD in [0, W)) */
  int32_t mk[DWF_NV_MAX][DWF_K_MAX][VL] __attribute__((aligned(64)));
  for (int j = 0; j < NV; j++)
    for (int kx = 0; kx < K; kx++)
      for (int l = 0; l < VL; l++) {
        const int ix = (j * VL + l) % W + kx - PAD;
        mk[j][kx][l] = ix >= 0 && ix < W ? -1 : 0;
      }
  const vf lo = v_set1(a->out_min), hi = v_set1(a->out_max);
  for (size_t c = 0; c < a->nc; c++) {
    const float *x = a->x + c * P, *w = a->w + c * K * K;
    float *y = a->y + c * P;
    const vf bias = v_set1(a->bias[c]);
    UNROLL
    for (int j = 0; j < NV; j++) {
      vf acc[K];
      UNROLL
      for (int kx = 0; kx < K; kx++) acc[kx] = kx == PAD ? bias : v_zero();
      UNROLL
      for (int ky = 0; ky < K; ky++) {
        UNROLL
        for (int kx = 0; kx < K; kx++) {
          /* input vector b and lanes from s on: floor division of the (possibly negative) offset */
          const int o = j * VL + (ky - PAD) * W + kx - PAD, b = (o + FAR) / VL - FAR / VL, s = o + FAR - (b * VL + FAR);
          const vf v0 = dwf_in(x, b, NV, REM);
          const vf xv = s == 0 ? v0 : dwf_shift(v0, dwf_in(x, b + 1, NV, REM), s);
          acc[kx] = v_fma(v_bcast(w + ky * K + kx), xv, acc[kx]);
        }
      }
      vf r = acc[PAD];
      UNROLL
      for (int kx = 0; kx < K; kx++)
        if (kx != PAD) r = v_add(r, vi_as_vf(vi_and(v_as_vi(acc[kx]), vi_load_aligned(mk[j][kx]))));
      r = v_clamp(r, lo, hi);
      if (j == NV - 1 && REM)
        v_store_first(y + j * VL, REM, r);
      else
        v_store(y + j * VL, r);
    }
  }
}

static void dwf_7x7_k3(const dlc_f32_dwf_args *a) { dwf_body(a, 7, 7, 3); }
static void dwf_7x7_k5(const dlc_f32_dwf_args *a) { dwf_body(a, 7, 7, 5); }
static void dwf_14x14_k3(const dlc_f32_dwf_args *a) { dwf_body(a, 14, 14, 3); }
static void dwf_14x14_k5(const dlc_f32_dwf_args *a) { dwf_body(a, 14, 14, 5); }

static dlc_f32_dwf_fn dwf_for(size_t h, size_t w, size_t k) {
  if (h == 7 && w == 7) return k == 3 ? dwf_7x7_k3 : k == 5 ? dwf_7x7_k5 : NULL;
  if (h == 14 && w == 14) return k == 3 ? dwf_14x14_k3 : k == 5 ? dwf_14x14_k5 : NULL;
  return NULL;
}
#endif

/* NCHW rows to channel-last: VL channels x VL pixels at a time, VL row loads masked at the row's
   end (binary16 widened on the way), the in-register transpose, a store of the block's channels
   per pixel. (AVX-512 once borrowed AVX2's 8 x 8 binary16 version, a short row of halves through
   a zeroed copy: 26% of an F16 960x7x7>160 layer's time.) */
INLINE void to_channel_last_body(const void *src, size_t plane, size_t w, size_t ci, float *dst, const int F16) {
  for (size_t c0 = 0; c0 < ci; c0 += VL) {
    const size_t nc = ci - c0 < VL ? ci - c0 : VL;
    for (size_t x0 = 0; x0 < w; x0 += VL) {
      const size_t nx = w - x0 < VL ? w - x0 : VL;
      vf r[VL];
      UNROLL
      for (size_t i = 0; i < VL; i++) {
        if (i >= nc) {
          r[i] = v_zero();
        } else if (F16) {
          r[i] = v_load_f16_first((const uint16_t *)src + (c0 + i) * plane + x0, (ptrdiff_t)nx);
        } else {
          const float *s = (const float *)src + (c0 + i) * plane + x0;
          r[i] = nx == VL ? v_load(s) : v_load_first(s, (ptrdiff_t)nx);
        }
      }
      v_transpose(r);
      for (size_t j = 0; j < nx; j++) v_store_first(dst + (x0 + j) * ci + c0, (ptrdiff_t)nc, r[j]);
    }
  }
}

static void to_channel_last(const float *src, size_t plane, size_t w, size_t ci, float *dst) {
  to_channel_last_body(src, plane, w, ci, dst, 0);
}

static void to_channel_last_f16(const uint16_t *src, size_t plane, size_t w, size_t ci, float *dst) {
  to_channel_last_body(src, plane, w, ci, dst, 1);
}

/* to_channel_last's inverse, for the NCHW conv's channel-last staging: VL pixels x VL channels at
   a time, VL pixel loads (zeros past the last pixel), the in-register transpose, a store of the
   block's pixels per channel plane (whole vectors where the run has VL pixels). */
static void to_channel_first(const float *src, size_t ld, size_t w, size_t ci, float *dst, size_t plane) {
  for (size_t c0 = 0; c0 < ci; c0 += VL) {
    const size_t nc = ci - c0 < VL ? ci - c0 : VL;
    for (size_t x0 = 0; x0 < w; x0 += VL) {
      const size_t nx = w - x0 < VL ? w - x0 : VL;
      vf r[VL];
      UNROLL
      for (size_t i = 0; i < VL; i++) {
        const float *s = src + (x0 + i) * ld + c0;
        r[i] = i >= nx ? v_zero() : nc == VL ? v_load(s) : v_load_first(s, (ptrdiff_t)nc);
      }
      v_transpose(r);
      float *d = dst + c0 * plane + x0;
      if (nx == VL)
        for (size_t c = 0; c < nc; c++) v_store(d + c * plane, r[c]);
      else
        for (size_t c = 0; c < nc; c++) v_store_first(d + c * plane, (ptrdiff_t)nx, r[c]);
    }
  }
}

const dlc_f32_direct_family DLC_FAMILY_NAME(f32_direct) = {
    .name = "f32_direct_" DLC_STR(DLC_DIRECT_CONV_TW2) "x" DLC_STR(DLC_VL_X2) "__" DLC_ISA_STR,
    .dw_name = "f32_dwconv_" DLC_STR(DLC_DIRECT_DWC_TW2) "x" DLC_STR(DLC_VL_X2) "c_" DLC_STR(DLC_DIRECT_DWP_NR) "x" DLC_STR(
        DLC_VL) "p__" DLC_ISA_STR,
    .vl = VL,
    .conv_tw = {CONV_TW1, CONV_TW2},
    .conv = {conv_1v, conv_2v},
    .dwc_tw = {DWC_TW1, DWC_TW2},
    .dwc = {dwc_1v, dwc_2v},
    .dwp_vecs = DWP_VECS,
#if DLC_DIRECT_DWP_FAST
    .dwp_rows = {DWP_NR, DWP_NR, DWP_NR, DWP_NR, DWP_NR, DWP_NR, DWP_NR, DWP_NR},
#else
    .dwp_rows = {DLC_DIRECT_DWP_ROWS(1), DLC_DIRECT_DWP_ROWS(2), DLC_DIRECT_DWP_ROWS(3), DLC_DIRECT_DWP_ROWS(4),
                 DLC_DIRECT_DWP_ROWS(5), DLC_DIRECT_DWP_ROWS(6), DLC_DIRECT_DWP_ROWS(7), DLC_DIRECT_DWP_ROWS(8)},
#endif
    .dwp = dwp,
#if DLC_DIRECT_DWP_F16_FAST
    .dwp_f16 = dwp_f16,
    .dwp_rows_f16 = {DWP_NR, DWP_NR, DWP_NR, DWP_NR, DWP_NR, DWP_NR, DWP_NR, DWP_NR},
#elif DLC_DIRECT_DWP_F16
    .dwp_f16 = dwp_f16,
    .dwp_rows_f16 = {DLC_DIRECT_DWP_ROWS_F16(1), DLC_DIRECT_DWP_ROWS_F16(2), DLC_DIRECT_DWP_ROWS_F16(3),
                     DLC_DIRECT_DWP_ROWS_F16(4), DLC_DIRECT_DWP_ROWS_F16(5), DLC_DIRECT_DWP_ROWS_F16(6),
                     DLC_DIRECT_DWP_ROWS_F16(7), DLC_DIRECT_DWP_ROWS_F16(8)},
#endif
    .f16_out = 1,
    .to_channel_last = to_channel_last,
    .to_channel_last_f16 = to_channel_last_f16,
    .to_channel_first = to_channel_first,
#if DLC_DIRECT_DWF
    .dwf = dwf_for,
    .dwf_name = "f32_dwconv_flat_" DLC_STR(DLC_VL) "p__" DLC_ISA_STR,
#endif
};
