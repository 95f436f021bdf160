/* f32_spack.h - the f32 spatial-pack micro-kernels (src/ukernel/spack_ukernel.h), written once over
 * the vector layer; an ISA's f32_spack_<isa>.c includes its vec.h and then this file, which defines
 * dlc_f32_spack__<isa>.
 *
 * A vh x vw tile of output pixels x DLC_VL output channels, one accumulator per pixel. Per (input
 * channel, tap) the kernel loads one vector of weights and multiplies it into every pixel of the
 * tile with an FMA whose other operand is a broadcast of the packed input (folded into the FMA as
 * an embedded broadcast where the ISA has one): 1 + vh*vw loads for vh*vw FMAs. The main tiles
 * hold up to SPACK_MAX_ACC accumulators, enough independent FMAs to cover the FMA latency on
 * both FMA pipes.
 *
 * Knobs (set before the include, else the default for DLC_VL), literal numbers:
 *   SPACK_MAX_ACC  accumulators of the largest tile: the vector registers less the weight vector
 *                  and the broadcast temporaries, 12 of 16 at DLC_VL 8 (1x12, 2x6, 3x4), 28 of
 *                  32 at DLC_VL 16 (2x14, 4x7, ...)
 *   SPACK_VH       tile rows (1..4): 3 at DLC_VL 8, 4 at DLC_VL 16
 *   SPACK_VW       tile columns (1..16): 12 at DLC_VL 8, 14 at DLC_VL 16
 * Every tile vh <= SPACK_VH, vw <= SPACK_VW with vh*vw <= SPACK_MAX_ACC has a kernel. */
#include <stddef.h>
#include <stdint.h>

#include "../../ukernel/spack_ukernel.h"
#include "family.h"

#if DLC_VL == 8
#define SPACK_DEFAULT_VH 3
#define SPACK_DEFAULT_VW 12
#define SPACK_DEFAULT_MAX_ACC 12
#elif DLC_VL == 16
#define SPACK_DEFAULT_VH 4
#define SPACK_DEFAULT_VW 14
#define SPACK_DEFAULT_MAX_ACC 28
#endif
#ifndef SPACK_VH
#define SPACK_VH SPACK_DEFAULT_VH
#endif
#ifndef SPACK_VW
#define SPACK_VW SPACK_DEFAULT_VW
#endif
#ifndef SPACK_MAX_ACC
#define SPACK_MAX_ACC SPACK_DEFAULT_MAX_ACC
#endif
#define SPACK_VC DLC_VL
_Static_assert(SPACK_VH >= 1 && SPACK_VH <= 4 && SPACK_VW >= 1 && SPACK_VW <= 16, "SPACK_VH <= 4, SPACK_VW <= 16");

INLINE void spack_tile(const dlc_f32_spack_params *prm, const float *in, const float *w, const float *bias, float *y,
                       size_t nc, const size_t nvh, const size_t nvw) {
  vf acc[SPACK_VH][SPACK_VW];
  const vf b = v_load(bias);
  UNROLL
  for (size_t vh = 0; vh < nvh; vh++)
    UNROLL
    for (size_t vw = 0; vw < nvw; vw++) acc[vh][vw] = b;

  const size_t ntaps = prm->ntaps, rs = prm->in_row_stride, ics = prm->in_ch_stride;
  const ptrdiff_t *tap_off = prm->tap_off;
  for (size_t ic = 0; ic < prm->cin; ic++, in += ics) {
    for (size_t t = 0; t < ntaps; t++, w += SPACK_VC) {
      const vf wv = v_load(w);
      const float *x = in + tap_off[t];
      UNROLL
      for (size_t vh = 0; vh < nvh; vh++, x += rs)
        UNROLL
        for (size_t vw = 0; vw < nvw; vw++) acc[vh][vw] = v_fma(v_bcast(x + vw), wv, acc[vh][vw]);
    }
  }

  const vf lo = v_set1(prm->out_min), hi = v_set1(prm->out_max);
  UNROLL
  for (size_t vh = 0; vh < nvh; vh++)
    UNROLL
    for (size_t vw = 0; vw < nvw; vw++) acc[vh][vw] = v_clamp(acc[vh][vw], lo, hi);

  if (prm->y_ch_stride == 1) {
    /* NHWC: each pixel's channels are contiguous. */
    const vtail t = v_tail((ptrdiff_t)nc);
    UNROLL
    for (size_t vh = 0; vh < nvh; vh++)
      UNROLL
      for (size_t vw = 0; vw < nvw; vw++)
        v_store_tail(y + vh * prm->y_row_stride + vw * prm->y_col_stride, t, acc[vh][vw]);
    return;
  }
  /* NCHW: transpose each tile row in registers, VL pixels at a time (pixels x channels ->
     channels x pixels), then one store of up to VL contiguous pixels per channel. */
  UNROLL
  for (size_t vh = 0; vh < nvh; vh++) {
    float *yr = y + vh * prm->y_row_stride;
    UNROLL
    for (size_t j = 0; j < nvw; j += DLC_VL) {
      const size_t np = nvw - j < DLC_VL ? nvw - j : DLC_VL;
      vf r[DLC_VL];
      UNROLL
      for (size_t i = 0; i < DLC_VL; i++) r[i] = i < np ? acc[vh][j + i < SPACK_VW ? j + i : 0] : v_zero();
      v_transpose(r);
      const vtail t = v_tail((ptrdiff_t)np);
      UNROLL
      for (size_t c = 0; c < SPACK_VC; c++) {
        if (c >= nc) break;
        v_store_tail(yr + c * prm->y_ch_stride + j, t, r[c]);
      }
    }
  }
}

/* One kernel per tile shape; the table holds those with H <= SPACK_VH and H*W <= SPACK_MAX_ACC.
   The kernels are static inline so that the others, never referenced, are never compiled (a
   plain static function is emitted at -O0 even when unused). */
#define SPACK_FN(H, W) DLC_CAT(DLC_CAT(DLC_CAT(spack_, H), DLC_CAT(x, W)), DLC_CAT(x, DLC_VL))
#define SPACK_KERNEL(H, W)                                                                            \
  static inline void SPACK_FN(H, W)(const dlc_f32_spack_params *prm, const float *in, const float *w, \
                                    const float *bias, float *y, size_t nc) {                         \
    spack_tile(prm, in, w, bias, y, nc, H, W);                                                        \
  }
#define SPACK_IN_MENU(H, W) ((H) <= SPACK_VH && (H) * (W) <= SPACK_MAX_ACC)
#define SPACK_ENTRY(H, W) [((H) - 1) * SPACK_VW + (W) - 1] = SPACK_IN_MENU(H, W) ? SPACK_FN(H, W) : NULL,
#define SPACK_ROW(X, H) DLC_UPTO(SPACK_VW, X, H)
#define SPACK_TILES(X) SPACK_ROW(X, 1) SPACK_ROW(X, 2) SPACK_ROW(X, 3) SPACK_ROW(X, 4)

SPACK_TILES(SPACK_KERNEL)

/* rows past SPACK_VH only pad the table (the driver reads rows <= vh) */
static const dlc_f32_spack_ukernel_fn spack_ukernels[4 * SPACK_VW] = {SPACK_TILES(SPACK_ENTRY)};

const dlc_f32_spack_family DLC_FAMILY_NAME(f32_spack) = {
    .name = "f32_spack__" DLC_ISA_STR,
    .vh = SPACK_VH,
    .vw = SPACK_VW,
    .vc = SPACK_VC,
    .max_acc = SPACK_MAX_ACC,
    .min_acc = 8, /* 2 FMA pipes x 4 cycles */
    .ukernels = spack_ukernels,
};
