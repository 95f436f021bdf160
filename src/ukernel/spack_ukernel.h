/* spack_ukernel.h - the micro-kernel interface of the spatial_pack algorithm.
 *
 * One dlc_f32_spack_family per ISA (dlc_f32_spack__generic in src/arch/generic/, __avx2, __avx512,
 * ...): function pointers plus the register-block shapes the driver blocks its loops by.
 * The driver receives it through the kernel table (ukernel/config.h) and never includes arch code.
 *
 * Spatial pack (TVM, Zheng & Chen): the weights are packed once, at plan time, as
 *   [group][c_out_g / VC][c_in_g][k_h][k_w][VC]        (VC output channels per vector tile)
 * and at execute the input window of a strip of output tiles is copied, padding included, into
 * a dense buffer, one plane per input channel. A micro-kernel then computes one register tile of
 * VH output rows x VW output columns x VC output channels with no bounds checks:
 *   acc[vh][vw][c] = bias[c] + sum_{ic, t} in[ic*in_ch_stride + tap_off[t] + vh*in_row_stride + vw]
 *                                          * w[(ic*ntaps + t)*VC + c]
 *   y[vh*y_row_stride + vw*y_col_stride + c*y_ch_stride] = clamp(acc[vh][vw][c])   for c < nc
 * The driver stores the columns of each packed row split by stride phase (input column j of the
 * window at (j % s_w)*P + j / s_w), so for every tap the VW inputs of a tile row are contiguous
 * whatever the stride and dilation: the kernel reads in[... + vw] with a constant step of one. */
#ifndef DLC_SPACK_UKERNEL_H
#define DLC_SPACK_UKERNEL_H

#include <stddef.h>
#include <stdint.h>

/* What stays the same for every tile of one execute (built once per task by the driver). */
typedef struct dlc_f32_spack_params {
  size_t cin;                /* input channels of the group: the outer reduction loop */
  size_t ntaps;              /* k_h * k_w */
  const ptrdiff_t *tap_off;  /* ntaps offsets (floats) of each tap within one packed channel plane */
  size_t in_ch_stride;       /* floats between the planes of two input channels */
  size_t in_row_stride;      /* floats between the inputs of output rows vh and vh+1 */
  /* Output element (vh, vw, c) is at y + vh*y_row_stride + vw*y_col_stride + c*y_ch_stride.
     Either y_ch_stride == 1 (NHWC) or y_col_stride == 1 (NCHW): SIMD kernels store vectors of
     channels in the first case and transpose the tile in the second. */
  size_t y_row_stride, y_col_stride, y_ch_stride;
  float out_min, out_max;    /* fused clamp; NaN passes through it */
} dlc_f32_spack_params;

/* One register tile. in: packed input at the tile's first column; w: packed weights of one
   VC block (c_in_g * ntaps * VC floats); bias: VC floats (zero-padded); y: output element
   (0, 0, 0) of the tile; nc: output channels to store, 1..VC (the rest are computed and dropped). */
typedef void (*dlc_f32_spack_ukernel_fn)(const dlc_f32_spack_params *prm, const float *in,
                                         const float *w, const float *bias, float *y, size_t nc);

typedef struct dlc_f32_spack_family {
  const char *name;   /* micro-kernel family for dlconv_plan_info.kernel, e.g. "f32_spack__avx512" */
  size_t vh, vw;      /* largest tile rows and columns */
  size_t vc;          /* output channels per tile (the vector width, or a multiple of it) */
  size_t max_acc;     /* largest vh*vw the register file holds: the driver's main-tile budget */
  size_t min_acc;     /* accumulators that keep the FMA pipes busy (pipes x latency): a tile with
                         fewer runs latency-bound, as slowly per step as one with min_acc */
  /* ukernels[(vh-1)*vw_max + (vw-1)] computes a vh x vw tile; non-NULL for every vh <= vh_max,
     vw <= vw_max with vh*vw <= max_acc, so any smaller edge tile of a valid tile exists. */
  const dlc_f32_spack_ukernel_fn *ukernels;
} dlc_f32_spack_family;

static inline dlc_f32_spack_ukernel_fn dlc_spack_ukernel(const dlc_f32_spack_family *f, size_t vh,
                                                         size_t vw) {
  return f->ukernels[(vh - 1) * f->vw + (vw - 1)];
}

#endif
