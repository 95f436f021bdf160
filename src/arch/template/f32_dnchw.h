/* f32_dnchw.h - the f32 NCHW direct family with pixels in the lanes (ukernel/dnchw_ukernel.h says
 * what a kernel computes), written once over the vector layer and instantiated per ISA by
 * src/arch/<isa>/f32_dnchw_<isa>.c, which includes its vec.h, then this file.
 *
 * A tile is mr output channels x nv vectors of flat output positions: every (input channel, tap)
 * step is nv input vector loads (unaligned, from the driver's zero-padded planes) and mr weight
 * broadcasts for nv * mr FMAs, so the channels of the output are registers, not lanes, and y is
 * written in place as NCHW rows: no transpose of x or y. One always-inline body per (nv, mr)
 * keeps the accumulators in registers.
 *
 * Knobs (macros the instantiating file may set before including this file):
 *   DLC_DNCHW_MR1 .. _MR5   the most output channels of a tile of 1 .. 5 vectors (32 registers:
 *                           16, 14, 8, 6, 5: nv * mr accumulators and nv inputs in the file, the
 *                           broadcast folded into the FMA or in one more; 16 registers: 12, 6,
 *                           4, 3, 2) */
#include <stddef.h>
#include <stdint.h>

#include "../../ukernel/dnchw_ukernel.h"
#include "family.h"

#ifndef DLC_DNCHW_MR1
#if DLC_NREGS >= 32
#define DLC_DNCHW_MR1 16
#define DLC_DNCHW_MR2 14
#define DLC_DNCHW_MR3 8
#define DLC_DNCHW_MR4 6
#define DLC_DNCHW_MR5 5
#else
#define DLC_DNCHW_MR1 12
#define DLC_DNCHW_MR2 6
#define DLC_DNCHW_MR3 4
#define DLC_DNCHW_MR4 3
#define DLC_DNCHW_MR5 2
#endif
#endif

/* the arrays' bounds are literals: sized by NV and MR (constants only once inlined) they were
   variable-length arrays to the compiler, on the stack */
#define DNCHW_MR_MAX (DLC_DNCHW_MR1 > DLC_DNCHW_MR2 ? DLC_DNCHW_MR1 : DLC_DNCHW_MR2)

/* One (input channel, tap) step: nv input vectors at offset o, mr broadcast weights at w. */
INLINE void dnchw_step(vf acc[][DLC_DNCHW_MAX_NV], const float *const *xv, ptrdiff_t o, const float *w, const int NV,
                       const int MR) {
  vf xi[DLC_DNCHW_MAX_NV];
  UNROLL
  for (int v = 0; v < NV; v++) xi[v] = v_load(xv[v] + o);
  UNROLL
  for (int m = 0; m < MR; m++) {
    const vf wb = v_bcast(w + m);
    UNROLL
    for (int v = 0; v < NV; v++) acc[m][v] = v_fma(xi[v], wb, acc[m][v]);
  }
}

INLINE void dnchw_body(const dlc_f32_dnchw_args *a, const int NV, const int MR) {
  vf acc[DNCHW_MR_MAX][DLC_DNCHW_MAX_NV];
  UNROLL
  for (int m = 0; m < MR; m++) {
    const vf b = v_bcast(a->bias + m);
    UNROLL
    for (int v = 0; v < NV; v++) acc[m][v] = b;
  }
  const float *xv[DLC_DNCHW_MAX_NV];
  UNROLL
  for (int v = 0; v < NV; v++) xv[v] = a->x + a->vecs[v].x_off;
  const float *w = a->w;
  if (a->kw == 3) {
    /* rows of 3 taps: their offsets and weights at constant displacements, no tap table */
    const ptrdiff_t xr = a->x_row;
    const size_t kh = a->ntaps / 3;
    for (size_t ic = 0; ic < a->n_ci; ic++) {
      for (size_t ky = 0; ky < kh; ky++) {
        const ptrdiff_t o = (ptrdiff_t)ky * xr;
        UNROLL
        for (int kx = 0; kx < 3; kx++) dnchw_step(acc, xv, o + kx, w + kx * MR, NV, MR);
        w += 3 * MR;
      }
      UNROLL
      for (int v = 0; v < NV; v++) xv[v] += a->x_c;
    }
  } else {
    const int32_t *tap = a->tap;
    const size_t nt = a->ntaps;
    for (size_t ic = 0; ic < a->n_ci; ic++) {
      for (size_t t = 0; t < nt; t++) {
        dnchw_step(acc, xv, tap[t], w, NV, MR);
        w += MR;
      }
      UNROLL
      for (int v = 0; v < NV; v++) xv[v] += a->x_c;
    }
  }
  const vf lo = v_set1(a->out_min), hi = v_set1(a->out_max);
  UNROLL
  for (int v = 0; v < NV; v++) {
    const dlc_dnchw_vec *d = &a->vecs[v];
    for (int s = 0; s < d->nseg; s++) {
      const vmask k = v_range(d->lo[s], d->hi[s]);
      float *yp = a->y + d->y_off[s] - d->lo[s];
      UNROLL
      for (int m = 0; m < MR; m++) v_store_mask(yp + m * a->y_c, k, v_clamp(acc[m][v], lo, hi));
    }
  }
}

#define DNCHW_FN(MR, NV) static void dnchw_##NV##x##MR(const dlc_f32_dnchw_args *a) { dnchw_body(a, NV, MR); }
DLC_REPEAT(DLC_DNCHW_MR1, DNCHW_FN, 1)
DLC_REPEAT(DLC_DNCHW_MR2, DNCHW_FN, 2)
DLC_REPEAT(DLC_DNCHW_MR3, DNCHW_FN, 3)
DLC_REPEAT(DLC_DNCHW_MR4, DNCHW_FN, 4)
DLC_REPEAT(DLC_DNCHW_MR5, DNCHW_FN, 5)
#define DNCHW_REF(MR, NV) dnchw_##NV##x##MR,
static const dlc_f32_dnchw_fn dnchw_nv1[] = {DLC_REPEAT(DLC_DNCHW_MR1, DNCHW_REF, 1)};
static const dlc_f32_dnchw_fn dnchw_nv2[] = {DLC_REPEAT(DLC_DNCHW_MR2, DNCHW_REF, 2)};
static const dlc_f32_dnchw_fn dnchw_nv3[] = {DLC_REPEAT(DLC_DNCHW_MR3, DNCHW_REF, 3)};
static const dlc_f32_dnchw_fn dnchw_nv4[] = {DLC_REPEAT(DLC_DNCHW_MR4, DNCHW_REF, 4)};
static const dlc_f32_dnchw_fn dnchw_nv5[] = {DLC_REPEAT(DLC_DNCHW_MR5, DNCHW_REF, 5)};

static dlc_f32_dnchw_fn dnchw_kernel(size_t nv, size_t mr) {
  static const dlc_f32_dnchw_fn *const by_nv[] = {dnchw_nv1, dnchw_nv2, dnchw_nv3, dnchw_nv4, dnchw_nv5};
  return by_nv[nv - 1][mr - 1];
}

INLINE void dnchw_zero(float *d, size_t n) {
  const vf z = v_zero();
  size_t i = 0;
  for (; i + DLC_VL <= n; i += DLC_VL) v_store(d + i, z);
  if (i < n) v_store_first(d + i, (ptrdiff_t)(n - i), z);
}

/* Vector loads and stores, each zero written once (a library memcpy and memset per row of 32
   floats took as long as the first 5% of the convolution; zeroing the plane before the rows,
   2 / 3 of it). */
static void dnchw_pad(const float *x, size_t h, size_t w, size_t pt, size_t pl, size_t x_row, size_t x_c, float *dst) {
  dnchw_zero(dst, pt * x_row + pl);
  for (size_t iy = 0; iy < h; iy++) {
    const float *s = x + iy * w;
    float *d = dst + (pt + iy) * x_row + pl;
    size_t ix = 0;
    for (; ix + DLC_VL <= w; ix += DLC_VL) v_store(d + ix, v_load(s + ix));
    if (ix < w) v_store_first(d + ix, (ptrdiff_t)(w - ix), v_load_first(s + ix, (ptrdiff_t)(w - ix)));
    dnchw_zero(d + w, x_row - w);   /* this row's right padding, the next one's left */
  }
  const size_t done = (pt + h) * x_row + pl;
  dnchw_zero(dst + done, x_c - done);
}

const dlc_f32_dnchw_family DLC_FAMILY_NAME(f32_dnchw) = {
    .name = "f32_dnchw__" DLC_ISA_STR,
    .vl = DLC_VL,
    .max_nv = 5,
    .max_mr = {DLC_DNCHW_MR1, DLC_DNCHW_MR2, DLC_DNCHW_MR3, DLC_DNCHW_MR4, DLC_DNCHW_MR5},
    .kernel = dnchw_kernel,
    .pad = dnchw_pad,
};
