/* direct.c - the direct convolution driver: a sliding window over the caller's x (no copy or
 * reshaping of the input), output-channel blocked so the innermost step is a vector FMA.
 *
 * Three paths, by shape and layout (direct_ukernel.h describes the kernels):
 *   conv: cin_g > 1. Weights packed [g][channel tile][k_h][k_w][cin_g][nv][vl] (nv vl-blocks per
 *         tile interleaved, last block zero padded): the kernel's reduction runs (ky, kx, ic),
 *         streaming one contiguous run of weights in its innermost loop over ic (over NHWC with
 *         groups 1, kx and ic merge into one run). With fewer input channels than horizontal taps
 *         (c_in 3, 7x7) the order is (ic, ky, kx) and the packing [g][tile][cin_g][k_h][k_w][nv][vl],
 *         so the inner loop is the long one. Rows are visited in bands (see BAND_BYTES).
 *   dwc:  depthwise (cin_g == 1, any channel multiplier), NHWC. Weights [c_out/vl][k_h][k_w][vl].
 *   dwp:  depthwise, NCHW: vectorised over output pixels; weights kept as [c_out][k_h*k_w].
 *   dwt:  depthwise, NCHW, small planes or strided (dwt_pays): channels in the lanes, the planes of
 *         a channel tile transposed channel-last and run through the dwc kernels (see dwt_plan);
 *         weights as dwc's.
 *   dwf:  depthwise, NCHW, stride 1 on the small planes the family has a dwf kernel for: a plane's
 *         pixels flat in the lanes, every tap a constant shift in registers; weights as dwp's.
 *
 * conv tiles each output row into runs of <= tile-width pixels. The consecutive tiles whose every
 * pixel sees every horizontal tap (the row's interior) are one kernel call, which covers them with
 * register tiles itself. A tile touching the left/right padding is covered by "passes": the taps
 * kx are grouped by the (contiguous) range of the tile's pixels they are valid for, and each group
 * is one call over that pixel sub-range and tap sub-range, accumulating through a small tile
 * buffer on the stack; a last call with no taps clamps and stores it. That keeps border tiles wide
 * (many accumulators), which matters when a call is long (cin_g x taps steps). Rows that see every
 * vertical tap avoid the passes where it pays: their border columns are calls down the rows
 * (conv_rows), and NCHW output is staged channel-last (STAGE_FLOATS). dwc calls are short,
 * so its border pixels are instead exact calls with their clipped tap range: down a border column
 * (one call for the column's pixels of every row that sees all k_h taps), or pixel runs of a row
 * with clipped ky. The vertical
 * padding is just a clipped [ky0, ky1) per row. Work is split over threads as (n, group, row,
 * channel tile) items for conv, (n, band of rows, channel tile) for dwc, (n, channel, row group)
 * for dwp, (n, channel tile) for dwt and (n, channel) for dwf.
 *
 * F16 conv (dlc_direct_f16_conv_ops, either layout) runs the same fp32 conv kernels: the packed
 * weights are binary16 (half the memory), and each task widens what its items read into its own
 * slice of the workspace: the input rows of the current band, channel-last (BAND_BYTES of floats,
 * the L2-sized unit the loop order already reuses), and the current channel tile's weights. The
 * kernels then round their clamped tiles to binary16 themselves (family f16_out). Converting in
 * the kernel instead cost more: weights widened by vcvtph2ps at every step ran ResNet-50's 3x3
 * layers 8-13% slower than fp32 on Zen 2 (two conversions per 12 FMAs), where a band's or a
 * tile's widening is amortised over all its rows. */
#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../core/plan.h"
#include "../ukernel/config.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "../quant/quant.h"
#include "direct.h"
#include "direct_dwp.h"

#include "../core/test_hooks.h"

enum direct_mode { MODE_CONV, MODE_DWC, MODE_DWP, MODE_DWT, MODE_DWF };

/* Largest tile buffer a family may need (pixels x lanes). */
#define TILE_BUF_FLOATS 2048

typedef struct direct_data {
  enum direct_mode mode;
  float *w;                 /* packed weights */
  int32_t *perm;            /* dwc with channel multiplier > 1: [channel tile][2*vl] */
  size_t nb;                /* conv: vl-blocks per group; dwc: vl-blocks of c_out */
  size_t nct;               /* conv: channel tiles per group; dwc: channel tiles of c_out */
  ptrdiff_t w_ky, w_kx, w_c; /* packed weight strides of one vl-block */
  int ic_outer;             /* conv: reduce in the order (ic, ky, kx), else (ky, kx, ic) */
  size_t band;              /* conv: output rows per band (see conv_task) */
  int x_nhwc;               /* conv: x read channel-last (NHWC data, or NCHW x transposed at execute) */
  int f16;                  /* F16 conv: weights in wh, x and y binary16 (see the top) */
  uint16_t *wh;             /* F16: packed weights, the layout of w */
  size_t xband_bytes;       /* F16: a band's input rows of one group, channel-last floats */
  size_t wtile_bytes;       /* F16: one channel tile's weights as floats */
  size_t ntasks;            /* F16, dwt: tasks of execute (a workspace slice each) */
  int flat;                 /* conv, fp32: a pointwise layer run as one row of h_out x w_out pixels */
  size_t dwt_xcl, dwt_ycl;  /* dwt: bytes of a channel tile's input, output planes channel-last (dwt_plan) */
  size_t dwt_nv;            /* dwt: vectors of channels a tile */
} direct_data;

/* conv loop order: output rows in bands whose input rows (all channels of the group) fit this
   budget, so they stay in L2 while every channel tile runs over the band's rows; each channel
   tile's packed weights are then read from memory once per band, not once per output row (for
   512x7x7 > 512, 3x3: 0.6 MB of weights per tile, re-read 7 times from L3 with rows outermost). */
#define BAND_BYTES (1024u * 1024u)

#if defined(DLC_TEST_HOOKS)
static atomic_int band_hook;
void dlc_test_direct_band_rows(int rows) { atomic_store_explicit(&band_hook, rows, memory_order_relaxed); }
#define BAND_HOOK() atomic_load_explicit(&band_hook, memory_order_relaxed)
#else
#define BAND_HOOK() 0
#endif

/* NCHW depthwise: -1 (the default) the plan picks dwp, dwt or dwf by shape; 0 dwp; 1 dwt, 2 dwf
   (where the shape allows it, else dwp). */
#if defined(DLC_TEST_HOOKS)
static atomic_int dw_hook = -1;
void dlc_test_direct_dw_mode(int mode) { atomic_store_explicit(&dw_hook, mode, memory_order_relaxed); }
#define DW_HOOK() atomic_load_explicit(&dw_hook, memory_order_relaxed)
#else
#define DW_HOOK() (-1)
#endif

static int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
static int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

/* ---------------------------------------------------------------------------------------------
 * Planning: weight packing. */

static size_t nv_max(const dlc_f32_direct_family *f, int dwc) {
  return (dwc ? f->dwc[1] : f->conv[1]) ? 2 : 1;
}

/* w: OIHW fp32, or binary16 when d->f16 (packed as given, into d->wh). */
static dlconv_status pack_conv(dlconv_plan *p, direct_data *d, const void *w) {
  const dlc_conv_shape *s = &p->s;
  const size_t vl = p->kernels->direct->vl;
  const size_t taps = (size_t)(s->k_h * s->k_w), cin = (size_t)s->cin_g, cout = (size_t)s->cout_g;
  d->nb = dlc_div_up(cout, vl);
  d->nct = dlc_div_up(d->nb, nv_max(p->kernels->direct, 0));
  const size_t n = (size_t)s->groups * d->nb * taps * cin * vl;
  const size_t es = d->f16 ? sizeof(uint16_t) : sizeof(float);
  if (d->f16)
    d->wh = dlc_calloc(n * es);
  else
    d->w = dlc_calloc(n * es);
  if (!d->w && !d->wh) return DLCONV_ERR_OUT_OF_MEMORY;
  /* The innermost loop should be the long one: ic, unless there are fewer input channels than
     horizontal taps (a first layer: c_in 3, 7x7) and kx cannot merge with ic (NHWC, groups 1,
     dilation 1 makes (kx, ic) one run). */
  /* NCHW x is read channel-last from a copy transposed at execute, unless the reduction runs ic
     outermost (a stem: the transpose would only interleave its 3 planes). Each step of the
     reduction then broadcasts from the same few cache lines for consecutive channels instead of a
     line of another h*w plane (Zen 2, 512x28x28>512 3x3: 76% of peak NCHW, 91% channel-last). */
  d->x_nhwc = s->layout == DLCONV_NHWC || s->cin_g >= s->k_w || d->f16;
  const int merges = d->x_nhwc && s->groups == 1 && s->dil_w == 1;
  d->ic_outer = s->cin_g < s->k_w && !merges;
  if (!d->ic_outer) {
    d->w_c = (ptrdiff_t)vl;
    d->w_kx = (ptrdiff_t)(cin * vl);
    d->w_ky = s->k_w * d->w_kx;
  } else {
    d->w_kx = (ptrdiff_t)vl;
    d->w_ky = s->k_w * d->w_kx;
    d->w_c = s->k_h * d->w_ky;
  }
  /* The nv vectors of a channel tile are interleaved per step ([..][nv][vl]), so the kernel
     streams one contiguous run of weights; strides below are per vector and scaled by the tile's
     nv at execute. */
  const size_t nvm = nv_max(p->kernels->direct, 0);
  for (size_t g = 0; g < (size_t)s->groups; g++)
    for (size_t oc = 0; oc < cout; oc++) {
      const size_t b = oc / vl, ct = b / nvm, nvt = DLC_MIN(nvm, d->nb - ct * nvm);
      const size_t wb = (g * d->nb + ct * nvm) * taps * cin * vl + (b - ct * nvm) * vl + oc % vl;
      for (size_t ic = 0; ic < cin; ic++)
        for (int64_t ky = 0; ky < s->k_h; ky++)
          for (int64_t kx = 0; kx < s->k_w; kx++) {
            const size_t to = wb + (size_t)(((ptrdiff_t)ic * d->w_c + ky * d->w_ky + kx * d->w_kx) * (ptrdiff_t)nvt);
            const size_t from = ((g * cout + oc) * cin + ic) * taps + (size_t)(ky * s->k_w + kx);
            if (d->f16)
              d->wh[to] = ((const uint16_t *)w)[from];
            else
              d->w[to] = ((const float *)w)[from];
          }
    }
  p->packed_weight_bytes = n * es;
  const size_t row_bytes = (size_t)(s->cin_g * s->w_in) * sizeof(float);
  const size_t rows_in = BAND_BYTES / DLC_MAX(row_bytes, (size_t)1);
  const size_t win = (size_t)((s->k_h - 1) * s->dil_h + 1);
  d->band = rows_in > win ? (rows_in - win) / (size_t)s->stride_h + 1 : 1;
  const int forced = BAND_HOOK();
  if (forced > 0) d->band = DLC_MIN(d->band, (size_t)forced);
  d->band = DLC_MAX((size_t)1, DLC_MIN(d->band, (size_t)s->h_out));
  return DLCONV_OK;
}

static dlconv_status pack_dwc(dlconv_plan *p, direct_data *d, const float *w) {
  const dlc_conv_shape *s = &p->s;
  const size_t vl = p->kernels->direct->vl, nvm = nv_max(p->kernels->direct, 1);
  const size_t taps = (size_t)(s->k_h * s->k_w), cout = (size_t)s->c_out, m = (size_t)s->cout_g;
  d->nb = dlc_div_up(cout, vl);
  d->nct = dlc_div_up(d->nb, nvm);
  const size_t n = d->nb * taps * vl;
  d->w = dlc_calloc(n * sizeof(float));
  if (!d->w) return DLCONV_ERR_OUT_OF_MEMORY;
  for (size_t oc = 0; oc < cout; oc++)
    for (size_t t = 0; t < taps; t++) d->w[((oc / vl) * taps + t) * vl + oc % vl] = w[oc * taps + t];
  d->w_kx = (ptrdiff_t)vl;
  d->w_ky = s->k_w * d->w_kx;
  d->w_c = 0;
  p->packed_weight_bytes = n * sizeof(float);
  if (m == 1) return DLCONV_OK;
  /* Lane l of vector v of tile t is output channel oc = t*nvm*vl + v*vl + l; it reads input channel
     oc/m, counted from the first input channel of its vector. */
  d->perm = dlc_calloc(d->nct * 2 * vl * sizeof(int32_t));
  if (!d->perm) return DLCONV_ERR_OUT_OF_MEMORY;
  for (size_t t = 0; t < d->nct; t++)
    for (size_t v = 0; v < nvm; v++)
      for (size_t l = 0; l < vl; l++) {
        const size_t oc0 = (t * nvm + v) * vl, oc = oc0 + l;
        d->perm[(t * 2 + v) * vl + l] = oc < cout ? (int32_t)(oc / m - oc0 / m) : 0;
      }
  p->packed_weight_bytes += d->nct * 2 * vl * sizeof(int32_t);
  return DLCONV_OK;
}

static dlconv_status pack_dwp(dlconv_plan *p, direct_data *d, const float *w) {
  const size_t n = (size_t)(p->s.c_out * p->s.k_h * p->s.k_w);
  d->w = dlc_malloc(n * sizeof(float));
  if (!d->w) return DLCONV_ERR_OUT_OF_MEMORY;
  memcpy(d->w, w, n * sizeof(float));
  p->packed_weight_bytes = n * sizeof(float);
  return DLCONV_OK;
}

static void direct_destroy(dlconv_plan *p) {
  direct_data *d = p->algo_data;
  if (!d) return;
  dlc_free(d->w);
  dlc_free(d->wh);
  dlc_free(d->perm);
  dlc_free(d);
  p->algo_data = NULL;
}

/* dwt: NCHW depthwise with channels in the lanes. Per block of VL channels (the last one may be
   narrower), the block's input planes are transposed channel-last into the task's slice of the
   workspace (VL pixels at a time across rows: a 7 x 7 plane is 4 transposes, not 7), the NHWC dwc
   kernels run over it as dwc_rows runs an NHWC layer (sliding-window rows, border columns a
   call each), into a channel-last output plane, which is transposed back to the block's NCHW
   planes. Against dwp, which vectorises over a row's pixels, small planes fill whole vectors (a
   7 x 7 plane is 7 pixels x 16 channels a tile, not rows of 16 lanes of which 7 are used) and
   stride 2 needs no de-interleaving. */
static int dwt_applies(const dlc_conv_shape *s, const dlc_f32_direct_family *f) {
  return s->cout_g == 1 && f->dwc[0] && s->layout == DLCONV_NCHW;
}

/* Where dwt beats dwp (Zen 5, 1 thread, the 26 depthwise layers of mobilenet_v2, efficientnet_b0
   and shufflenet_v2, dwt / dwp): 16 lanes (AVX-512, sliding-window dwc rows) where a row's outputs
   fill a two-vector tile (w_out <= 12) on outputs of up to 14 x 14: 7 x 7 outputs 0.41-0.62,
   512 channels of 9 x 9 .. 12 x 12 3x3 0.56-0.74, 5x5 0.67-0.87; on 14 x 14 outputs (one vector
   of channels) dwp is faster: 3x3 1.01-1.15, 5x5 1.18-1.24, 3x3 stride 2 from 28 x 28 1.37-1.54
   (its three columns from 3 loads a row); 28 x 28 5x5 1.1-1.28; 8 lanes (AVX2,
   no sliding rows) only 7 x 7 outputs at stride 2: 0.77-0.84 (models A/B), 5x5 on 28 x 28 at
   stride 2 1.0, 3x3 on 14 x 14 and more 1.2-1.4, stride 1 1.02-2.5. Neon (4 lanes, not measured)
   takes AVX2's rule. */
static int dwt_pays(const dlc_conv_shape *s, const dlc_f32_direct_family *f) {
  const int64_t out = s->h_out * s->w_out;
  const int strided = s->stride_h > 1 || s->stride_w > 1;
  if (f->vl >= 16) return out <= 196 && (size_t)s->w_out * 2 <= f->dwc_tw[0];
  return strided && out <= 49;
}

/* A task's slice: the channel tile's input planes and output planes, channel-last. */
static void dwt_plan(dlconv_plan *p, direct_data *d) {
  const dlc_conv_shape *s = &p->s;
  const dlc_f32_direct_family *f = p->kernels->direct;
  /* Two vectors of channels where a one-vector tile would hold half its pixels or fewer: a 7-pixel
     row is then 14 accumulators, not 7 chains too few for two FMA pipes (Zen 5, 1 thread, 7 x 7
     outputs: 0.78-0.84x the time of one vector; 14 x 14 outputs, 12 + 2 pixels a row: 1.1x). */
  d->dwt_nv = nv_max(f, 1) > 1 && (size_t)s->w_out * 2 <= f->dwc_tw[0] ? 2 : 1;
  d->nct = dlc_div_up(d->nb, d->dwt_nv);
  const size_t tile = f->vl * d->dwt_nv;
  d->dwt_xcl = dlc_round_up((size_t)(s->h_in * s->w_in) * tile * sizeof(float), DLC_ALIGN);
  d->dwt_ycl = dlc_round_up((size_t)(s->h_out * s->w_out) * tile * sizeof(float), DLC_ALIGN);
  const size_t items = (size_t)s->n * d->nct;
  d->ntasks = DLC_MAX((size_t)1, DLC_MIN((size_t)DLC_MAX(p->nthreads, 1), items));
  p->workspace_bytes = d->ntasks * (d->dwt_xcl + d->dwt_ycl);
}

/* dwf: NCHW depthwise at stride 1 on planes that keep their size, with the family's kernel for
   the plane (see dwf_body in the template): each plane flat in the lanes, no transpose. */
static int dwf_applies(const dlc_conv_shape *s, const dlc_f32_direct_family *f) {
  const int64_t k = s->k_h, pad = (k - 1) / 2;
  return s->cout_g == 1 && s->layout == DLCONV_NCHW && f->dwf && s->k_w == k && s->stride_h == 1 &&
         s->stride_w == 1 && s->dil_h == 1 && s->dil_w == 1 && s->pad_t == pad && s->pad_b == pad &&
         s->pad_l == pad && s->pad_r == pad && f->dwf((size_t)s->h_in, (size_t)s->w_in, (size_t)k) != NULL;
}

/* Where dwf beats dwt and dwp: wherever the family has a kernel (Zen 5, 1 thread, against the path
   picked before: 3x3 on 14 x 14 planes 0.54-0.56x (dwp), on 7 x 7 0.57x (dwt); 5x5 on 7 x 7 0.61x
   (dwt), on 14 x 14 0.90-0.93x (dwp)). */
static int dwf_pays(const dlc_conv_shape *s, const dlc_f32_direct_family *f) {
  (void)s;
  (void)f;
  return 1;
}

/* The plan's data for mode, attached to p, once the family's tiles are known to fit the border
   buffer. */
static dlconv_status new_data(dlconv_plan *p, const dlc_f32_direct_family *f, enum direct_mode mode, direct_data **out) {
  for (size_t i = 0; i < 2; i++)
    if (f->conv_tw[i] * (i + 1) * f->vl > TILE_BUF_FLOATS)
      return dlc_fail(DLCONV_ERR_UNSUPPORTED, "direct: %s tile exceeds the border buffer", f->name);
  direct_data *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "direct: out of memory");
  d->mode = mode;
  p->algo_data = d;
  *out = d;
  return DLCONV_OK;
}

/* NCHW x read channel-last: a slice of the workspace for each of up to this many tasks (one image
   each, xt_task), or the whole batch when execute runs more tasks (one pass transposes it). */
static size_t xt_slices(const dlconv_plan *p) { return (size_t)DLC_MAX(p->nthreads, 1); }
/* ... with several tasks, only on images of up to this many bytes: where the tasks split the
   channel tiles or the groups of an image (a pointwise layer run as one row: always), each
   transposes all of it, and a large image then costs more than the pass and its join (2 threads,
   Zen 5, pointwise: 1024x14x14>512 (784 KiB) and 480x14x14>80 (368 KiB) 1.07x slower, 320x7x7>1280
   (61 KiB) 0.73x; timings noisy, the machine loaded). */
#define XT_TASK_MAX_BYTES (256u * 1024u)
static size_t xt_image_floats(const dlconv_plan *p) {
  return dlc_round_up((size_t)(p->s.c_in * p->s.h_in * p->s.w_in), DLC_ALIGN / sizeof(float));
}

static dlconv_status direct_plan(dlconv_plan *p, const void *weights) {
  const float *w = weights;
  const dlc_f32_direct_family *f = p->kernels->direct;
  if (!f) return dlc_fail(DLCONV_ERR_UNSUPPORTED, "direct: no f32 kernels for isa %s", p->kernels->name);
  const int depthwise = p->s.cin_g == 1;
  enum direct_mode mode = !depthwise ? MODE_CONV : p->s.layout == DLCONV_NHWC ? MODE_DWC : MODE_DWP;
  if (mode == MODE_DWP) {
    const int forced = DW_HOOK();
    if (dwf_applies(&p->s, f) && (forced == 2 || (forced < 0 && dwf_pays(&p->s, f))))
      mode = MODE_DWF;
    else if (dwt_applies(&p->s, f) && (forced == 1 || (forced < 0 && dwt_pays(&p->s, f))))
      mode = MODE_DWT;
  }
  if ((mode == MODE_CONV && !f->conv[0]) || (mode == MODE_DWC && !f->dwc[0]) || (mode == MODE_DWP && !f->dwp))
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "direct: isa %s lacks the %s kernel", p->kernels->name,
                    mode == MODE_CONV ? "conv" : "depthwise");
  direct_data *d = NULL;
  dlconv_status st = new_data(p, f, mode, &d);
  if (st != DLCONV_OK) return st;
  st = mode == MODE_CONV                     ? pack_conv(p, d, w)
       : mode == MODE_DWP || mode == MODE_DWF ? pack_dwp(p, d, w)
                                              : pack_dwc(p, d, w);
  if (st != DLCONV_OK) {
    direct_destroy(p);
    return dlc_fail(st, "direct: out of memory packing weights");
  }
  /* A 1x1 layer at stride 1 without padding reads and writes its planes as one row each (either
     layout), so it runs as a single row of all its pixels: tiles then span row ends (a 7 x 7
     plane is 14 + 14 + 14 + 7 pixels, not 7 rows of 7) and one call covers the plane. Zen 5,
     AVX-512, 1 thread, NCHW: 960x7x7>160 0.0695 -> 0.0643 ms, 960x7x7>320 0.130 -> 0.125,
     576x14x14>96 0.102 -> 0.094. The threads' items are then channel tiles only: with several
     threads, only where there are enough of them. */
  const dlc_conv_shape *sh = &p->s;
  const int pointwise = sh->k_h == 1 && sh->k_w == 1 && sh->stride_h == 1 && sh->stride_w == 1 && sh->pad_t == 0 &&
                        sh->pad_b == 0 && sh->pad_l == 0 && sh->pad_r == 0;
  const size_t nthreads = (size_t)DLC_MAX(p->nthreads, 1);
  if (mode == MODE_CONV && pointwise && (nthreads == 1 || (size_t)(sh->n * sh->groups) * d->nct >= 4 * nthreads)) {
    d->flat = 1;
    d->band = 1;
  }
  p->workspace_bytes = 0;
  if (mode == MODE_CONV && d->x_nhwc && p->s.layout == DLCONV_NCHW)   /* the transposed x (direct_execute) */
    p->workspace_bytes = DLC_MAX(xt_slices(p), (size_t)p->s.n) * xt_image_floats(p) * sizeof(float);
  if (mode == MODE_DWT) dwt_plan(p, d);
  p->weight_density = 1.0;
  const char *name = mode == MODE_CONV ? f->name : mode == MODE_DWF ? f->dwf_name : f->dw_name;
  strncpy(p->kernel, name ? name : "f32_direct", sizeof p->kernel - 1);
  p->kernel[sizeof p->kernel - 1] = 0;
  return DLCONV_OK;
}

int dlc_direct_f16_conv_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k) {
  const dlc_f32_direct_family *f = k->direct;
  return dtype == DLCONV_F16 && s->cin_g > 1 && f && f->conv[0] && f->f16_out && k->f16_gemm && k->f16_gemm->widen_run;
}

/* Input rows [*lo, *hi) that output rows [oy0, oy1) read (empty when all of them are padding). */
static void band_rows_in(const dlc_conv_shape *s, int64_t oy0, int64_t oy1, int64_t *lo, int64_t *hi) {
  *lo = DLC_MAX(0, oy0 * s->stride_h - s->pad_t);
  *hi = DLC_MAX(*lo, DLC_MIN(s->h_in, (oy1 - 1) * s->stride_h - s->pad_t + (s->k_h - 1) * s->dil_h + 1));
}

static dlconv_status direct_f16_plan(dlconv_plan *p, const void *w) {
  const dlc_conv_shape *s = &p->s;
  if (!dlc_direct_f16_conv_applies(s, p->dtype, p->kernels))
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "direct: isa %s has no F16 conv kernels", p->kernels->name);
  const dlc_f32_direct_family *f = p->kernels->direct;
  direct_data *d = NULL;
  const dlconv_status st = new_data(p, f, MODE_CONV, &d);
  if (st != DLCONV_OK) return st;
  d->f16 = 1;
  if (pack_conv(p, d, w) != DLCONV_OK) {
    direct_destroy(p);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "direct: out of memory packing weights");
  }
  /* the most input rows a band reads: its first band's output rows, or any band's, when clipped
     by no padding, read (band - 1) * stride + the kernel's extent */
  int64_t lo, hi;
  band_rows_in(s, 0, (int64_t)d->band, &lo, &hi);
  const size_t rows = DLC_MIN((size_t)s->h_in, DLC_MAX((size_t)(hi - lo),
                                  (d->band - 1) * (size_t)s->stride_h + (size_t)((s->k_h - 1) * s->dil_h + 1)));
  d->xband_bytes = dlc_round_up(rows * (size_t)(s->w_in * s->cin_g) * sizeof(float), DLC_ALIGN);
  d->wtile_bytes = dlc_round_up((size_t)(s->k_h * s->k_w * s->cin_g) * nv_max(f, 0) * f->vl * sizeof(float), DLC_ALIGN);
  const size_t items = (size_t)(s->n * s->groups * s->h_out) * d->nct;
  d->ntasks = DLC_MAX((size_t)1, DLC_MIN((size_t)DLC_MAX(p->nthreads, 1), items));
  p->workspace_bytes = d->ntasks * (d->xband_bytes + d->wtile_bytes);
  p->weight_density = 1.0;
  snprintf(p->kernel, sizeof p->kernel, "f16+%s", f->name);
  return DLCONV_OK;
}

/* ---------------------------------------------------------------------------------------------
 * Execute: conv and dwc, one output row of one channel tile at a time. */

/* One dimension of the reduction: count, x stride, weight stride. */
typedef struct loop_dim {
  size_t n;
  ptrdiff_t xs, ws;
} loop_dim;

typedef struct row_job {
  dlc_f32_direct_fn fn;
  dlc_f32_direct_args a;    /* pixel stride, channels, output, clamp; loops, x, w, y filled per call */
  loop_dim ky, kx, ic;      /* ky.n: the row's clipped ky range; kx.n set per call; ic: (1, 0, 0) for dwc */
  int ic_outer;             /* conv NCHW: reduce in the order (ic, ky, kx) */
  const float *xrow;        /* x at the tile's channel base, input row of ky0, column 0 */
  int64_t x_row0;           /* the input row at which x starts (F16: the band's first row) */
  const float *wrow;        /* packed weights of the tile's first vector at (ky0, kx 0) */
  float *yrow;              /* y at the tile's channel base, output row, column 0 */
  int64_t y_row0;           /* the output row at which y starts (NCHW staging: the staged rows' first) */
  uint16_t *ych, *yrowh;    /* F16: y at the tile's channel base, and at the output row */
  ptrdiff_t x_col, y_col;   /* floats between input columns / output pixels */
  int64_t in_lo, in_hi;     /* output columns [in_lo, in_hi) see every horizontal tap */
  struct row_plan *rec;     /* conv: record the row's calls here instead of making them (see row_plan) */
} row_job;

/* conv: the calls that cover an output row (tiles, their passes over border taps, the tile buffer's
   use) depend on the columns alone, so a task records them once per tile width and replays them on
   each row that sees at least one vertical tap. Worked out a row at a time, the tiling's divisions
   (several per tap of each border tile) cost as much as a short call: 3% of a 64x16x16>64 3x3
   layer's time (Zen 5, its rows two border tiles of 8 pixels). */
#define ROW_PLAN_CALLS 48

typedef struct row_call {
  int32_t p0, nw, kx0, nkx;
  int32_t in, out;          /* the tile buffer's float offset accumulated from / into, -1: none */
} row_call;

typedef struct row_plan {
  size_t tw;                /* the tile width recorded for, 0: none */
  int n;                    /* calls, or -1: more than ROW_PLAN_CALLS (rows then work them out) */
  row_call c[ROW_PLAN_CALLS];
} row_plan;

/* The kernel's three loops, outer to inner, with count-1 loops moved out and loops that continue
   one another (outer stride == inner count x inner stride, for x and w) merged, so the innermost
   loop is as long as possible (NHWC, groups 1: kx and ic become one run of nkx*cin). The loops
   come by pointer and the function is inlined: passed by value (24-byte structs, on the stack) the
   copies were read back as 16-byte loads spanning two 8-byte stores, a failed store forwarding that
   waited for the store queue (the previous tile's NCHW output) to drain; 7% of a 32x32x32>32 3x3
   layer's time sat on that load (Zen 5). */
static inline void set_loops(dlc_f32_direct_args *a, const loop_dim *l0, const loop_dim *l1, const loop_dim *l2) {
  loop_dim L[3] = {*l0, *l1, *l2};
  const loop_dim one = {1, 0, 0};
  if (l0->n == 0 || l1->n == 0 || l2->n == 0) {
    L[0] = L[1] = L[2] = one;
    L[0].n = 0;
  } else {
    for (int pass = 0; pass < 2; pass++)
      for (int j = 1; j >= 0; j--) {
        loop_dim *o = &L[j], *in = &L[j + 1];
        if (o->n == 1) continue;
        if (in->n == 1) {
          *in = *o;
          *o = one;
        } else if (o->xs == (ptrdiff_t)in->n * in->xs && o->ws == (ptrdiff_t)in->n * in->ws) {
          in->n *= o->n;
          *o = one;
        }
      }
  }
  for (int j = 0; j < 3; j++) {
    a->n[j] = L[j].n;
    a->x_s[j] = L[j].xs;
    a->w_s[j] = L[j].ws;
  }
}

/* One kernel call over output pixels [p0, p0+nw) and taps [kx0, kx0+nkx) of the row. */
static void call(const dlconv_plan *p, row_job *r, int64_t p0, size_t nw, int64_t kx0, size_t nkx,
                 const float *acc_in, float *acc_out) {
  const dlc_conv_shape *s = &p->s;
  dlc_f32_direct_args *a = &r->a;
  loop_dim kx = r->kx;
  kx.n = nkx;
  if (r->ic_outer)
    set_loops(a, &r->ic, &r->ky, &kx);
  else
    set_loops(a, &r->ky, &kx, &r->ic);
  a->x = a->n[0] ? r->xrow + (p0 * s->stride_w - s->pad_l + kx0 * s->dil_w) * r->x_col : r->xrow;
  a->w = r->wrow + kx0 * r->kx.ws;
  if (r->ych)
    a->yh = r->yrowh + p0 * r->y_col;
  else
    a->y = r->yrow + p0 * r->y_col;
  a->acc_in = acc_in;
  a->acc_out = acc_out;
  r->fn(nw, a);
}

/* call() for dwc, which never accumulates through a buffer: the reduction is (ky, kx), so its
   loops are set directly, as (1, ky, kx) (the sums run in the order set_loops would give them).
   Through set_loops and its loop_dim copies, a 14 x 14 x 384 layer spent a quarter of its time
   in the call setup of its short (1-pixel border, 12-pixel interior) calls (Zen 5). */
static void call_dwc(const dlconv_plan *p, row_job *r, int64_t p0, size_t nw, int64_t kx0, size_t nkx) {
  const dlc_conv_shape *s = &p->s;
  dlc_f32_direct_args *a = &r->a;
  if (r->ky.n && nkx) {
    a->n[0] = 1;
    a->n[1] = r->ky.n;
    a->n[2] = nkx;
    a->x_s[1] = r->ky.xs;
    a->w_s[1] = r->ky.ws;
    a->x_s[2] = r->kx.xs;
    a->w_s[2] = r->kx.ws;
    a->x = r->xrow + (p0 * s->stride_w - s->pad_l + kx0 * s->dil_w) * r->x_col;
  } else {
    a->n[0] = 0;
    a->n[1] = a->n[2] = 1;
    a->x_s[1] = a->w_s[1] = a->x_s[2] = a->w_s[2] = 0;
    a->x = r->xrow;
  }
  a->x_s[0] = a->w_s[0] = 0;
  a->w = r->wrow + kx0 * r->kx.ws;
  a->y = r->yrow + p0 * r->y_col;
  r->fn(nw, a);
}

/* call(), or (r->rec) its record, with acc_in / acc_out as offsets into the tile buffer buf. */
static void emit(const dlconv_plan *p, row_job *r, const float *buf, int64_t p0, size_t nw, int64_t kx0, size_t nkx,
                 const float *acc_in, float *acc_out) {
  row_plan *rp = r->rec;
  if (!rp) {
    call(p, r, p0, nw, kx0, nkx, acc_in, acc_out);
    return;
  }
  if (rp->n < 0) return;
  if (rp->n == ROW_PLAN_CALLS) {
    rp->n = -1;
    return;
  }
  rp->c[rp->n++] = (row_call){(int32_t)p0, (int32_t)nw, (int32_t)kx0, (int32_t)nkx,
                              acc_in ? (int32_t)(acc_in - buf) : -1, acc_out ? (int32_t)(acc_out - buf) : -1};
}

/* The tile [p0, p1) of the row: one call when no tap is clipped, else passes (see top of file). */
static void run_tile(const dlconv_plan *p, row_job *r, int64_t p0, int64_t p1, float *buf) {
  const dlc_conv_shape *s = &p->s;
  const int64_t full = p1 - p0;
  if (p0 >= r->in_lo && p1 <= r->in_hi && r->ky.n) {
    emit(p, r, buf, p0, (size_t)full, 0, (size_t)s->k_w, NULL, NULL);
    return;
  }
  int64_t ngroups = 0, full_kx0 = -1, full_nkx = 0;
  int64_t lo_prev = -1, hi_prev = -1;
  for (int64_t kx = 0; kx < s->k_w; kx++) {
    const int64_t lo = DLC_MAX(p0, ceil_div(s->pad_l - kx * s->dil_w, s->stride_w));
    const int64_t hi = DLC_MIN(p1, floor_div(s->w_in - 1 + s->pad_l - kx * s->dil_w, s->stride_w) + 1);
    if (lo >= hi) continue;
    if (lo != lo_prev || hi != hi_prev) ngroups++;
    if (hi - lo == full) {
      if (full_kx0 < 0) full_kx0 = kx;
      full_nkx++;
    }
    lo_prev = lo;
    hi_prev = hi;
  }
  if (r->ky.n == 0 || ngroups == 0) {
    emit(p, r, buf, p0, (size_t)full, 0, 0, NULL, NULL);
    return;
  }
  if (ngroups == 1 && full_kx0 >= 0) {
    emit(p, r, buf, p0, (size_t)full, full_kx0, (size_t)full_nkx, NULL, NULL);
    return;
  }
  const ptrdiff_t ld = r->a.acc_ld;
  if (full_kx0 >= 0)
    emit(p, r, buf, p0, (size_t)full, full_kx0, (size_t)full_nkx, NULL, buf);
  else
    emit(p, r, buf, p0, (size_t)full, 0, 0, NULL, buf);
  int64_t kx = 0;
  while (kx < s->k_w) {
    const int64_t lo = DLC_MAX(p0, ceil_div(s->pad_l - kx * s->dil_w, s->stride_w));
    const int64_t hi = DLC_MIN(p1, floor_div(s->w_in - 1 + s->pad_l - kx * s->dil_w, s->stride_w) + 1);
    int64_t kx1 = kx + 1;
    while (kx1 < s->k_w && DLC_MAX(p0, ceil_div(s->pad_l - kx1 * s->dil_w, s->stride_w)) == lo &&
           DLC_MIN(p1, floor_div(s->w_in - 1 + s->pad_l - kx1 * s->dil_w, s->stride_w) + 1) == hi)
      kx1++;
    if (lo < hi && hi - lo != full) {
      float *t = buf + (lo - p0) * ld;
      emit(p, r, buf, lo, (size_t)(hi - lo), kx, (size_t)(kx1 - kx), t, t);
    }
    kx = kx1;
  }
  emit(p, r, buf, p0, (size_t)full, 0, 0, buf, NULL);
}

/* The horizontal taps [*kx0, *kx1) that output column ox sees (empty when *kx0 >= *kx1). */
static void kx_range(const dlc_conv_shape *s, int64_t ox, int64_t *kx0, int64_t *kx1) {
  const int64_t ix0 = ox * s->stride_w - s->pad_l;
  *kx0 = DLC_MAX(0, ceil_div(-ix0, s->dil_w));
  *kx1 = DLC_MIN(s->k_w, floor_div(s->w_in - 1 - ix0, s->dil_w) + 1);
}

/* Border columns [b, e) pixel-exactly: runs of columns with the same clipped tap range are one call
   each. For dwc, whose calls are cheap, this beats the passes (3x3, pad 1: one 1-pixel call per
   side instead of four calls over a full tile). */
static void run_border(const dlconv_plan *p, row_job *r, int64_t b, int64_t e) {
  const dlc_conv_shape *s = &p->s;
  while (b < e) {
    int64_t k0, k1, n0, n1;
    kx_range(s, b, &k0, &k1);
    int64_t b2 = b + 1;
    while (b2 < e) {
      kx_range(s, b2, &n0, &n1);
      if (n0 != k0 || n1 != k1) break;
      b2++;
    }
    if (k1 > k0 && r->ky.n)
      call_dwc(p, r, b, (size_t)(b2 - b), k0, (size_t)(k1 - k0));
    else
      call_dwc(p, r, b, (size_t)(b2 - b), 0, 0);
    b = b2;
  }
}

/* dwc row: left border, the interior in one call, right border. */
static void run_row_exact(const dlconv_plan *p, row_job *r) {
  const int64_t w = p->s.w_out;
  const int64_t lo = DLC_MIN(w, DLC_MAX(0, r->in_lo)), hi = DLC_MAX(lo, DLC_MIN(w, r->in_hi));
  if (!r->ky.n) {
    call_dwc(p, r, 0, (size_t)w, 0, 0);
    return;
  }
  run_border(p, r, 0, lo);
  if (hi > lo) call_dwc(p, r, lo, (size_t)(hi - lo), 0, (size_t)p->s.k_w);
  run_border(p, r, hi, w);
}

static void row_tiles(const dlconv_plan *p, row_job *r, size_t tw, float *buf);

/* Output row oy of the job: the clipped ky range, then the row's pixel tiles (tw == 0: exact
   borders, see run_row_exact). */
static void run_row(const dlconv_plan *p, row_job *r, const float *xc, float *yc, const float *wb, int64_t oy,
                    size_t tw) {
  const dlc_conv_shape *s = &p->s;
  const int64_t iy0 = oy * s->stride_h - s->pad_t;
  const int64_t ky0 = DLC_MAX(0, ceil_div(-iy0, s->dil_h));
  const int64_t ky1 = DLC_MIN(s->k_h, floor_div(s->h_in - 1 - iy0, s->dil_h) + 1);
  r->ky.n = ky1 > ky0 ? (size_t)(ky1 - ky0) : 0;
  r->xrow = r->ky.n ? xc + (iy0 + ky0 * s->dil_h - r->x_row0) * s->w_in * r->x_col : xc;
  r->wrow = wb + (r->ky.n ? ky0 : 0) * r->ky.ws;
  if (r->ych)
    r->yrowh = r->ych + oy * s->w_out * r->y_col;
  else
    r->yrow = yc + (oy - r->y_row0) * s->w_out * r->y_col;
  if (tw == 0) {
    run_row_exact(p, r);
    return;
  }
  alignas(64) float buf[TILE_BUF_FLOATS];
  row_plan *rp = r->rec;
  r->rec = NULL; /* the calls below are made, not recorded */
  if (rp && r->ky.n && rp->tw != tw) {
    rp->tw = tw;
    rp->n = 0;
    r->rec = rp;
    row_tiles(p, r, tw, buf);
    r->rec = NULL;
  }
  if (rp && r->ky.n && rp->n >= 0)
    for (int i = 0; i < rp->n; i++) {
      const row_call *c = &rp->c[i];
      call(p, r, c->p0, (size_t)c->nw, c->kx0, (size_t)c->nkx, c->in >= 0 ? buf + c->in : NULL,
           c->out >= 0 ? buf + c->out : NULL);
    }
  else
    row_tiles(p, r, tw, buf);
  r->rec = rp;
}

/* The row's pixel tiles (or, r->rec, their record): balanced tiles; a run of consecutive interior
   tiles is one call (the kernel tiles it again). */
static void row_tiles(const dlconv_plan *p, row_job *r, size_t tw, float *buf) {
  const dlc_conv_shape *s = &p->s;
  const size_t ntiles = dlc_div_up((size_t)s->w_out, tw);
  size_t t = 0;
  while (t < ntiles) {
    size_t b, e;
    dlc_split_range((size_t)s->w_out, ntiles, t++, &b, &e);
    if (r->ky.n && (int64_t)b >= r->in_lo && (int64_t)e <= r->in_hi) {
      size_t b2, e2;
      while (t < ntiles) {
        dlc_split_range((size_t)s->w_out, ntiles, t, &b2, &e2);
        if ((int64_t)e2 > r->in_hi) break;
        e = e2;
        t++;
      }
      emit(p, r, buf, (int64_t)b, e - b, 0, (size_t)s->k_w, NULL, NULL);
    } else {
      run_tile(p, r, (int64_t)b, (int64_t)e, buf);
    }
  }
}

typedef struct exec_ctx {
  const dlconv_plan *p;
  const float *x;
  float *y;
  size_t items, ntasks;
  const uint16_t *xh;       /* F16 */
  uint16_t *yh;
  char *ws;
  const float *xn;          /* fp32 conv, NCHW x read channel-last per task (xt_task): the caller's x */
  size_t xt_floats;         /* ... and the floats of each task's slice of ws (one image channel-last) */
} exec_ctx;

/* Strides and clamp shared by every call of one channel tile. */
static void job_common(const dlconv_plan *p, row_job *r, size_t nv) {
  const dlc_conv_shape *s = &p->s;
  const direct_data *d = p->algo_data;
  const int nhwc = s->layout == DLCONV_NHWC;
  r->x_col = d->f16 ? s->cin_g : nhwc || (d->mode == MODE_CONV && d->x_nhwc) ? s->c_in : 1;
  r->x_row0 = 0;
  r->y_row0 = 0;
  r->rec = NULL;
  r->ych = r->yrowh = NULL;
  r->y_col = nhwc ? s->c_out : 1;
  memset(&r->a, 0, sizeof r->a);
  r->ky = (loop_dim){0, s->dil_h * s->w_in * r->x_col, d->w_ky};
  r->kx = (loop_dim){0, s->dil_w * r->x_col, d->w_kx};
  r->ic = (loop_dim){1, 0, 0};
  r->ic_outer = 0;
  r->a.x_pix = s->stride_w * r->x_col;
  r->a.y_pix = r->y_col;
  r->a.y_c = nhwc ? 1 : s->h_out * s->w_out;
  r->a.acc_ld = (ptrdiff_t)(nv * p->kernels->direct->vl);
  r->a.out_min = s->out_min;
  r->a.out_max = s->out_max;
  r->in_lo = ceil_div(s->pad_l, s->stride_w);
  r->in_hi = floor_div(s->w_in - 1 + s->pad_l - (s->k_w - 1) * s->dil_w, s->stride_w) + 1;
}

/* F16: input rows [lo, hi) of image n, group g, widened into dst channel-last (row-major, cin_g
   floats per pixel). */
static void widen_band(const dlconv_plan *p, const uint16_t *x, size_t n, size_t g, int64_t lo, int64_t hi, float *dst) {
  const dlc_conv_shape *s = &p->s;
  const dlc_f16_direct_to_channel_last_fn tcl = p->kernels->direct->to_channel_last_f16;
  const dlc_f16_widen_run_fn widen = p->kernels->f16_gemm->widen_run;
  const size_t ci = (size_t)s->cin_g, cin = (size_t)s->c_in, w = (size_t)s->w_in, h = (size_t)s->h_in, icg = g * ci;
  for (size_t iy = (size_t)lo; iy < (size_t)hi; iy++, dst += w * ci) {
    if (s->layout == DLCONV_NCHW) {
      const uint16_t *src = x + ((n * cin + icg) * h + iy) * w;
      if (tcl) {
        tcl(src, h * w, w, ci, dst);
        continue;
      }
      for (size_t ix = 0; ix < w; ix++)
        for (size_t ic = 0; ic < ci; ic++) dst[ix * ci + ic] = dlc_f16_to_f32(src[ic * h * w + ix]);
    } else {
      const uint16_t *src = x + (n * h + iy) * w * cin + icg;
      if (s->groups == 1)
        widen(w * ci, src, 1, dst);
      else
        for (size_t ix = 0; ix < w; ix++) widen(ci, src + ix * cin, 1, dst + ix * ci);
    }
  }
}

/* NCHW fp32 output is staged: a task's consecutive rows of one channel tile are stored channel-last
   (the kernels' plain NHWC stores) into a buffer of this many floats on its stack, then written to
   the nc channel planes a run of whole rows at a time (to_channel_first). Stored by each register
   tile, an NCHW tile is nc runs of a few pixels in nc planes; on planes of a power-of-two size
   (32 x 32: 4 KiB) those runs share L1 sets, and each output line was fetched and evicted several
   times, the kernels' stores a third of the time the 32x32x32>32 3x3 layer spent outside its FMA
   loops (Zen 5). Staged, each plane's run is written once, in whole vectors, and the transposes
   work on full blocks of VL pixels (an 8 x 8 plane's 64 pixels in one run, not 8 runs of 8). 32 KiB:
   8 rows of a 32-pixel plane with 32 channels (a run long enough for its border columns,
   conv_rows); 4, 8 and 16 K floats ran within 3% of one another on ResNet's and WRN-40-2's 3x3
   layers (Zen 5). */
#define STAGE_FLOATS 8192

static void unstage(const dlconv_plan *p, const float *stage, size_t ld, size_t rows, size_t nc, float *y) {
  const dlc_conv_shape *s = &p->s;
  const size_t w = rows * (size_t)s->w_out, plane = (size_t)(s->h_out * s->w_out);
  const dlc_f32_direct_to_channel_first_fn fn = p->kernels->direct->to_channel_first;
  if (fn) {
    fn(stage, ld, w, nc, y, plane);
    return;
  }
  for (size_t c = 0; c < nc; c++)
    for (size_t x = 0; x < w; x++) y[c * plane + x] = stage[x * ld + c];
}

/* fp32 conv: consecutive output rows of one channel tile, as a task's items give them. */
typedef struct row_run {
  size_t key, n;            /* (n, g, channel tile); rows */
  int64_t oy0;              /* the first row */
  const float *xc, *wb;     /* x and the packed weights at the tile's channels */
  float *yc;                /* y at the tile's channels (NCHW: their planes) */
  size_t tw, ld, nc;        /* tile width; floats a staged pixel; channels */
} row_run;

/* Below this many accumulators a register tile is latency-bound (2 FMA pipes x 4 cycles on Zen 4
   and 5): where the columns' tiles or the interiors' would be smaller (short runs; AVX2's 6-pixel
   tiles on a 7-pixel interior: 4 + 3, 1.05x the rows' time on 64x16x16>128 stride 2, Zen 5), the
   border tiles stay in the rows. */
#define COLUMN_MIN_ACC 8

/* The smallest tile of n pixels split into balanced tiles of at most tw. */
static size_t min_tile(size_t n, size_t tw) { return n / dlc_div_up(n, tw); }
/* Every register tile streams its channel tile's weights once; the columns add tiles (a 7 x 7 plane:
   5 interior tiles of 5 pixels + 2 columns, where the rows had 5 tiles of 7 with passes). Where
   those weights outgrow half of a 1 MiB L2 the extra streams cost more than the passes: 512x7x7>512
   3x3 (576 KiB a tile) ran 1.04x slower with columns, 256x14x14>512 stride 2 (288 KiB) 0.98x,
   128x8x8>128 0.955x (Zen 5, NCHW). */
#define COLUMN_MAX_WEIGHT_BYTES (512u * 1024u)

/* Output rows [oy0, oy1) of one channel tile (r set up for it, y at yc from row r->y_row0). As
   dwc_rows: the rows that see every vertical tap run their interior, the columns that see every
   horizontal tap, as one call a row, and each border column is one call down those rows (pixel
   stride one row), exact in its taps; the other rows go through run_row. A row's border tiles
   would instead take passes through the tile buffer: on 16-pixel rows (two tiles of 8, each a
   full call, a call over its clipped taps and a store) 64x16x16>64 3x3 NHWC ran 1.07x oneDNN's
   time where the same layer unpadded (one interior call a row) ran 1.0x (Zen 5). */
static void conv_rows(const dlconv_plan *p, row_job *r, const float *xc, float *yc, const float *wb, int64_t oy0,
                      int64_t oy1, size_t tw, size_t nv) {
  const dlc_conv_shape *s = &p->s;
  int64_t fa = ceil_div(s->pad_t, s->stride_h);
  int64_t fb = floor_div(s->h_in - 1 + s->pad_t - (s->k_h - 1) * s->dil_h, s->stride_h) + 1;
  fa = DLC_MIN(DLC_MAX(fa, oy0), oy1);
  fb = DLC_MIN(DLC_MAX(fb, fa), oy1);
  const int64_t w = s->w_out;
  const int64_t lo = DLC_MIN(w, DLC_MAX(0, r->in_lo)), hi = DLC_MAX(lo, DLC_MIN(w, r->in_hi));
  const size_t wbytes = (size_t)(s->k_h * s->k_w * s->cin_g) * nv * p->kernels->direct->vl * sizeof(float);
  if (hi == lo || (lo == 0 && hi == w) || fb == fa || min_tile((size_t)(fb - fa), tw) * nv < COLUMN_MIN_ACC ||
      min_tile((size_t)(hi - lo), tw) * nv < COLUMN_MIN_ACC || wbytes > COLUMN_MAX_WEIGHT_BYTES) {
    for (int64_t oy = oy0; oy < oy1; oy++) run_row(p, r, xc, yc, wb, oy, tw);
    return;
  }
  for (int64_t oy = oy0; oy < fa; oy++) run_row(p, r, xc, yc, wb, oy, tw);
  const ptrdiff_t xrow = (ptrdiff_t)(s->w_in * r->x_col), yrow = (ptrdiff_t)(w * r->y_col);
  r->ky.n = (size_t)s->k_h;
  r->wrow = wb;
  for (int64_t oy = fa; oy < fb; oy++) {
    r->xrow = xc + (oy * s->stride_h - s->pad_t - r->x_row0) * xrow;
    r->yrow = yc + (oy - r->y_row0) * yrow;
    call(p, r, lo, (size_t)(hi - lo), 0, (size_t)s->k_w, NULL, NULL);
  }
  r->xrow = xc + (fa * s->stride_h - s->pad_t - r->x_row0) * xrow;
  r->yrow = yc + (fa - r->y_row0) * yrow;
  const ptrdiff_t x_pix = r->a.x_pix, y_pix = r->a.y_pix;
  r->a.x_pix = s->stride_h * xrow;
  r->a.y_pix = yrow;
  for (int64_t col = 0; col < w; col++) {
    if (col == lo) col = hi;
    if (col >= w) break;
    int64_t k0, k1;
    kx_range(s, col, &k0, &k1);
    call(p, r, col, (size_t)(fb - fa), k1 > k0 ? k0 : 0, k1 > k0 ? (size_t)(k1 - k0) : 0, NULL, NULL);
  }
  r->a.x_pix = x_pix;
  r->a.y_pix = y_pix;
  for (int64_t oy = fb; oy < oy1; oy++) run_row(p, r, xc, yc, wb, oy, tw);
}

/* The run's rows, then (stage) its staged rows into their planes. */
static void run_flush(const dlconv_plan *p, row_job *r, const row_run *ru, float *stage) {
  conv_rows(p, r, ru->xc, stage ? stage : ru->yc, ru->wb, ru->oy0, ru->oy0 + (int64_t)ru->n, ru->tw, ru->ld / p->kernels->direct->vl);
  if (stage) unstage(p, stage, ru->ld, ru->n, ru->nc, ru->yc + ru->oy0 * p->s.w_out);
}

static void transpose_rows(const dlconv_plan *p, const float *x, size_t n, size_t lo, size_t hi, float *dst);

/* NCHW x, fp32 conv, several tasks: each task transposes the input rows of image n that its items
   [i, end) read (from item i on, within image n) into its own slice xt, channel-last, as it reaches
   the image; so the threads start on their rows at once, with no separate pass over x and wait
   for it (at 2 threads that pass and its join were 8-15% of WRN-40-2's 32 x 32 3x3 layers, Zen
   5). Items of one (n, g), band and channel tile read the rows of their output rows; a task
   whose items span channel tiles, bands or groups of the image reads those bands' or all rows. */
static void xt_task(const dlconv_plan *p, const float *x, size_t n, size_t i, size_t end, float *xt) {
  const dlc_conv_shape *s = &p->s;
  const direct_data *d = p->algo_data;
  const size_t per_img = d->nct * (size_t)s->h_out, per_n = (size_t)s->groups * per_img;
  const size_t last = DLC_MIN(end, (n + 1) * per_n) - 1;
  size_t o[2][4];   /* (q, band, channel tile, output row) of items i and last */
  for (int k = 0; k < 2; k++) {
    const size_t it = k ? last : i, q = it / per_img, rb = it % per_img;
    const size_t band = rb / (d->nct * d->band), rr = rb % (d->nct * d->band);
    const size_t nrows = DLC_MIN(d->band, (size_t)s->h_out - band * d->band);
    o[k][0] = q;
    o[k][1] = band;
    o[k][2] = rr / nrows;
    o[k][3] = band * d->band + rr % nrows;
  }
  int64_t oy0 = 0, oy1 = s->h_out;
  if (o[0][0] == o[1][0] && o[0][1] == o[1][1]) {
    oy0 = (int64_t)(o[0][1] * d->band);
    oy1 = (int64_t)DLC_MIN((o[0][1] + 1) * d->band, (size_t)s->h_out);
    if (o[0][2] == o[1][2]) {
      oy0 = (int64_t)o[0][3];
      oy1 = (int64_t)o[1][3] + 1;
    }
  }
  int64_t lo, hi;
  band_rows_in(s, oy0, oy1, &lo, &hi);
  transpose_rows(p, x, n, (size_t)lo, (size_t)hi, xt);
}

static void conv_task(void *arg, size_t task) {
  const exec_ctx *c = arg;
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const direct_data *d = p->algo_data;
  const dlc_f32_direct_family *f = p->kernels->direct;
  const size_t vl = f->vl, nvm = nv_max(f, 0), taps = (size_t)(s->k_h * s->k_w);
  const int nhwc = s->layout == DLCONV_NHWC;
  size_t i, end;
  dlc_split_range(c->items, c->ntasks, task, &i, &end);
  row_job r;
  const size_t per_img = d->nct * (size_t)s->h_out;
  /* F16: the task's slice, and the band and channel tile it last widened there */
  float *xb = NULL, *wt = NULL;
  size_t xkey = SIZE_MAX, wkey = SIZE_MAX;
  if (d->f16) {
    xb = (float *)(c->ws + task * (d->xband_bytes + d->wtile_bytes));
    wt = (float *)((char *)xb + d->xband_bytes);
  }
  /* fp32: the pending run of rows; NCHW rows staged channel-last (see STAGE_FLOATS) */
  alignas(64) float stage[STAGE_FLOATS];
  const int staged = !nhwc && !d->f16 && (size_t)s->w_out * nvm * vl <= STAGE_FLOATS;
  row_run ru = {0};
  row_plan plans[2];        /* per nv */
  plans[0].tw = plans[1].tw = 0;
  float *xt = c->xn ? (float *)c->ws + task * c->xt_floats : NULL;
  size_t xt_img = SIZE_MAX;
  for (; i < end; i++) {
    /* Item i: (n, g), then band, then channel tile, then the row within the band. */
    const size_t q = i / per_img, rb = i % per_img;
    const size_t g = q % (size_t)s->groups, n = q / (size_t)s->groups;
    const size_t band = rb / (d->nct * d->band), rr = rb % (d->nct * d->band);
    const size_t nrows = DLC_MIN(d->band, (size_t)s->h_out - band * d->band);
    const size_t ct = rr / nrows;
    const int64_t oy = (int64_t)(band * d->band + rr % nrows);
    const size_t b0 = ct * nvm, nv = DLC_MIN(nvm, d->nb - b0);
    const size_t oc0 = b0 * vl;
    /* fp32: consecutive rows of one channel tile gather into a run (as many as the stage holds) */
    const size_t key = q * d->nct + ct, cap = staged ? STAGE_FLOATS / ((size_t)s->w_out * nv * vl) : SIZE_MAX;
    if (ru.n && (key != ru.key || oy != ru.oy0 + (int64_t)ru.n || ru.n == cap)) {
      run_flush(p, &r, &ru, staged ? stage : NULL);
      ru.n = 0;
    }
    job_common(p, &r, nv);
    r.rec = &plans[nv - 1];
    r.fn = f->conv[nv - 1];
    r.ic = (loop_dim){(size_t)s->cin_g, d->x_nhwc ? 1 : s->h_in * s->w_in, d->w_c * (ptrdiff_t)nv};
    r.ky.ws *= (ptrdiff_t)nv;
    r.kx.ws *= (ptrdiff_t)nv;
    r.ic_outer = d->ic_outer;
    r.a.w_v = (ptrdiff_t)vl;
    r.a.nc = DLC_MIN(nv * vl, (size_t)s->cout_g - oc0);
    r.a.bias = p->bias + g * (size_t)s->cout_g + oc0;
    const size_t ocg = g * (size_t)s->cout_g + oc0, icg = g * (size_t)s->cin_g;
    if (d->f16) {
      int64_t lo, hi;
      band_rows_in(s, (int64_t)(band * d->band), (int64_t)(band * d->band + nrows), &lo, &hi);
      if (q * (size_t)s->h_out + band != xkey) {
        xkey = q * (size_t)s->h_out + band;
        widen_band(p, c->xh, n, g, lo, hi, xb);
      }
      if (g * d->nct + ct != wkey) {
        wkey = g * d->nct + ct;
        const size_t nw = taps * (size_t)s->cin_g * nv * vl;
        p->kernels->f16_gemm->widen_run(nw, d->wh + (g * d->nb + b0) * taps * (size_t)s->cin_g * vl, 1, wt);
      }
      r.x_row0 = lo;
      r.ych = c->yh + (nhwc ? n * (size_t)(s->h_out * s->w_out * s->c_out) + ocg
                            : (n * (size_t)s->c_out + ocg) * (size_t)(s->h_out * s->w_out));
      run_row(p, &r, xb, NULL, wt, oy, f->conv_tw[nv - 1]);
      continue;
    }
    if (xt && n != xt_img) {
      if (ru.n) {   /* the pending run reads the slice's previous image */
        run_flush(p, &r, &ru, staged ? stage : NULL);
        ru.n = 0;
      }
      xt_task(p, c->xn, n, i, end, xt);
      xt_img = n;
    }
    const float *xc = xt ? xt + icg
                         : c->x + (d->x_nhwc ? n * (size_t)(s->h_in * s->w_in * s->c_in) + icg
                                             : (n * (size_t)s->c_in + icg) * (size_t)(s->h_in * s->w_in));
    float *yc = c->y + (nhwc ? n * (size_t)(s->h_out * s->w_out * s->c_out) + ocg
                             : (n * (size_t)s->c_out + ocg) * (size_t)(s->h_out * s->w_out));
    if (staged) {
      r.y_col = (ptrdiff_t)(nv * vl);
      r.a.y_pix = (ptrdiff_t)(nv * vl);
      r.a.y_c = 1;
      r.y_row0 = oy - (int64_t)ru.n;
    }
    if (!ru.n) {
      ru.key = key;
      ru.oy0 = oy;
      ru.xc = xc;
      ru.yc = yc;
      ru.wb = d->w + (g * d->nb + b0) * taps * (size_t)s->cin_g * vl;
      ru.tw = f->conv_tw[nv - 1];
      ru.ld = nv * vl;
      ru.nc = r.a.nc;
    }
    ru.n++;
  }
  if (ru.n) run_flush(p, &r, &ru, staged ? stage : NULL);
}

/* dwc items are (image, band of rows, channel tile): bands of at most this many rows, so that a
   border column of a band is one call with a tile's worth of pixels (see dwc_rows). */
#define DWC_BAND_ROWS 16

static size_t dwc_bands(const dlc_conv_shape *s) { return dlc_div_up((size_t)s->h_out, DWC_BAND_ROWS); }

/* dwc, output rows [oy0, oy1) of one channel tile. Rows that see every vertical tap run their
   interior a call a row, and their border columns a column at a time: one call down the column
   (pixel stride one row), the column's pixels a register tile's accumulators. A call per border
   pixel (run_row_exact) had 1 x nv accumulators chained over the pixel's taps, latency-bound: on
   14 x 14 planes the two border pixels of a row took about as long as its 12 interior ones. The
   rows with clipped ky (top and bottom) go through run_row. Each output sums its taps in the same
   order either way. */
static void dwc_rows(const dlconv_plan *p, row_job *r, const float *xc, float *yc, const float *wb, int64_t oy0,
                     int64_t oy1) {
  const dlc_conv_shape *s = &p->s;
  int64_t fa = ceil_div(s->pad_t, s->stride_h);
  int64_t fb = floor_div(s->h_in - 1 + s->pad_t - (s->k_h - 1) * s->dil_h, s->stride_h) + 1;
  fa = DLC_MIN(DLC_MAX(fa, oy0), oy1);
  fb = DLC_MIN(DLC_MAX(fb, fa), oy1);
  for (int64_t oy = oy0; oy < fa; oy++) run_row(p, r, xc, yc, wb, oy, 0);
  if (fa < fb) {
    const int64_t w = s->w_out, nrow = fb - fa;
    const int64_t lo = DLC_MIN(w, DLC_MAX(0, r->in_lo)), hi = DLC_MAX(lo, DLC_MIN(w, r->in_hi));
    const ptrdiff_t xrow = (ptrdiff_t)(s->w_in * r->x_col), yrow = (ptrdiff_t)(w * r->y_col);
    r->ky.n = (size_t)s->k_h;
    r->wrow = wb;
    if (hi > lo)
      for (int64_t oy = fa; oy < fb; oy++) {
        r->xrow = xc + (oy * s->stride_h - s->pad_t) * xrow;
        r->yrow = yc + oy * yrow;
        call_dwc(p, r, lo, (size_t)(hi - lo), 0, (size_t)s->k_w);
      }
    r->xrow = xc + (fa * s->stride_h - s->pad_t) * xrow;
    r->yrow = yc + fa * yrow;
    const ptrdiff_t x_pix = r->a.x_pix, y_pix = r->a.y_pix;
    r->a.x_pix = s->stride_h * xrow;
    r->a.y_pix = yrow;
    for (int64_t col = 0; col < w; col++) {
      if (col == lo && hi > lo) col = hi;
      if (col >= w) break;
      int64_t k0, k1;
      kx_range(s, col, &k0, &k1);
      if (k1 > k0)
        call_dwc(p, r, col, (size_t)nrow, k0, (size_t)(k1 - k0));
      else
        call_dwc(p, r, col, (size_t)nrow, 0, 0);
    }
    r->a.x_pix = x_pix;
    r->a.y_pix = y_pix;
  }
  for (int64_t oy = fb; oy < oy1; oy++) run_row(p, r, xc, yc, wb, oy, 0);
}

static void dwc_task(void *arg, size_t task) {
  const exec_ctx *c = arg;
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const direct_data *d = p->algo_data;
  const dlc_f32_direct_family *f = p->kernels->direct;
  const size_t vl = f->vl, nvm = nv_max(f, 1), taps = (size_t)(s->k_h * s->k_w);
  const size_t m = (size_t)s->cout_g, cout = (size_t)s->c_out;
  size_t i, end;
  dlc_split_range(c->items, c->ntasks, task, &i, &end);
  row_job r;
  /* what no item changes, once a task (acc_ld, which depends on nv, is unused: no buffers) */
  job_common(p, &r, nvm);
  r.a.w_v = (ptrdiff_t)(taps * vl);
  for (; i < end; i++) {
    const size_t ct = i % d->nct;
    const size_t q = i / d->nct, nbands = dwc_bands(s);
    size_t oy0, oy1;
    dlc_split_range((size_t)s->h_out, nbands, q % nbands, &oy0, &oy1);
    const size_t n = q / nbands;
    const size_t b0 = ct * nvm, nv = DLC_MIN(nvm, d->nb - b0);
    const size_t oc0 = b0 * vl, ic0 = oc0 / m;
    r.fn = f->dwc[nv - 1];
    r.a.nc = DLC_MIN(nv * vl, cout - oc0);
    r.a.bias = p->bias + oc0;
    for (size_t v = 0; v < nv; v++) {
      const size_t first = oc0 + v * vl, last = DLC_MIN(first + vl, cout) - 1;
      r.a.x_v[v] = (ptrdiff_t)(first / m - ic0);
      r.a.n_in[v] = (int32_t)(last / m - first / m + 1);
    }
    r.a.perm = d->perm ? d->perm + ct * 2 * vl : NULL;
    const float *xc = c->x + n * (size_t)(s->h_in * s->w_in * s->c_in) + ic0;
    float *yc = c->y + n * (size_t)(s->h_out * s->w_out) * cout + oc0;
    dwc_rows(p, &r, xc, yc, d->w + b0 * taps * vl, (int64_t)oy0, (int64_t)oy1);
  }
}

/* dwp: row segments of <= dwp_vecs vectors, rows grouped so the tile has several accumulators. */
typedef struct dwp_geom {
  size_t nseg, rows, nrg;
} dwp_geom;

static dwp_geom dwp_geometry(const dlconv_plan *p) {
  const dlc_f32_direct_family *f = p->kernels->direct;
  const size_t wo = (size_t)p->s.w_out, seg_max = f->dwp_vecs * f->vl;
  dwp_geom g;
  g.nseg = dlc_div_up(wo, seg_max);
  const size_t npv = dlc_div_up(dlc_div_up(wo, g.nseg), f->vl);
  const int f16 = p->dtype == DLCONV_F16 && f->dwp_rows_f16[npv - 1];
  g.rows = DLC_MAX((size_t)1, f16 ? f->dwp_rows_f16[npv - 1] : f->dwp_rows[npv - 1]);
  g.nrg = dlc_div_up((size_t)p->s.h_out, g.rows);
  return g;
}

size_t dlc_direct_dwp_row_groups(const dlconv_plan *p) { return dwp_geometry(p).nrg; }

/* x, y: fp32 planes, or binary16 through the family's dwp_f16 (f16) */
static void dwp_run(const dlconv_plan *p, const void *x, const float *w, float bias, float out_min, float out_max,
                    void *y, size_t rg_begin, size_t rg_end, int f16) {
  const dlc_conv_shape *s = &p->s;
  const dlc_f32_direct_family *f = p->kernels->direct;
  const dwp_geom gm = dwp_geometry(p);
  dlc_f32_dwp_args a;
  a.x = f16 ? NULL : x;
  a.xh = f16 ? x : NULL;
  a.h_in = s->h_in;
  a.w_in = s->w_in;
  a.sh = s->stride_h;
  a.sw = s->stride_w;
  a.dh = s->dil_h;
  a.dw = s->dil_w;
  a.kh = s->k_h;
  a.kw = s->k_w;
  a.w = w;
  a.bias = bias;
  a.y_row = s->w_out;
  a.out_min = out_min;
  a.out_max = out_max;
  a.y = NULL;
  a.yh = NULL;
  for (size_t rg = rg_begin; rg < rg_end; rg++) {
    const size_t oy0 = rg * gm.rows;
    a.nr = DLC_MIN(gm.rows, (size_t)s->h_out - oy0);
    a.iy0 = (ptrdiff_t)oy0 * s->stride_h - s->pad_t;
    for (size_t sg = 0; sg < gm.nseg; sg++) {
      size_t b, e;
      dlc_split_range((size_t)s->w_out, gm.nseg, sg, &b, &e);
      a.ix0 = (ptrdiff_t)b * s->stride_w - s->pad_l;
      const size_t at = oy0 * (size_t)s->w_out + b;
      if (f16) {
        a.yh = (uint16_t *)y + at;
        f->dwp_f16(e - b, &a);
      } else {
        a.y = (float *)y + at;
        f->dwp(e - b, &a);
      }
    }
  }
}

void dlc_direct_dwp_run(const dlconv_plan *p, const float *x, const float *w, float bias, float out_min,
                        float out_max, float *y, size_t rg_begin, size_t rg_end) {
  dwp_run(p, x, w, bias, out_min, out_max, y, rg_begin, rg_end, 0);
}

void dlc_direct_dwp_run_f16(const dlconv_plan *p, const uint16_t *x, const float *w, float bias, float out_min,
                            float out_max, uint16_t *y, size_t rg_begin, size_t rg_end) {
  dwp_run(p, x, w, bias, out_min, out_max, y, rg_begin, rg_end, 1);
}

static void dwp_task(void *arg, size_t task) {
  const exec_ctx *c = arg;
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const direct_data *d = p->algo_data;
  const size_t nrg = dlc_direct_dwp_row_groups(p);
  const size_t taps = (size_t)(s->k_h * s->k_w), m = (size_t)s->cout_g;
  const size_t plane_in = (size_t)(s->h_in * s->w_in), plane_out = (size_t)(s->h_out * s->w_out);
  size_t i, end;
  dlc_split_range(c->items, c->ntasks, task, &i, &end);
  while (i < end) {
    /* the run of row groups of one (image, channel) plane */
    const size_t q = i / nrg, rg0 = i % nrg, rg1 = DLC_MIN(nrg, rg0 + (end - i));
    const size_t oc = q % (size_t)s->c_out, n = q / (size_t)s->c_out;
    dlc_direct_dwp_run(p, c->x + (n * (size_t)s->c_in + oc / m) * plane_in, d->w + oc * taps, p->bias[oc],
                       s->out_min, s->out_max, c->y + (n * (size_t)s->c_out + oc) * plane_out, rg0, rg1);
    i += rg1 - rg0;
  }
}

/* dwt: nc planes of src (plane floats apart) to channel-last dst (pixel stride ci), or back:
   dst[ix * ci + ic] = src[ic * plane + ix], ix < w, ic < ci (to_channel_last's contract). */
static void dwt_transpose(const dlconv_plan *p, const float *src, size_t plane, size_t w, size_t ci, float *dst) {
  const dlc_f32_direct_to_channel_last_fn tcl = p->kernels->direct->to_channel_last;
  if (tcl) {
    tcl(src, plane, w, ci, dst);
    return;
  }
  for (size_t ix = 0; ix < w; ix++)
    for (size_t ic = 0; ic < ci; ic++) dst[ix * ci + ic] = src[ic * plane + ix];
}

/* Items: (image, channel tile of up to two blocks of VL channels); see dwt_plan. */
static void dwt_task(void *arg, size_t task) {
  const exec_ctx *c = arg;
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const direct_data *d = p->algo_data;
  const dlc_f32_direct_family *f = p->kernels->direct;
  const size_t vl = f->vl, nvm = d->dwt_nv, taps = (size_t)(s->k_h * s->k_w), cout = (size_t)s->c_out;
  const size_t plane_in = (size_t)(s->h_in * s->w_in), plane_out = (size_t)(s->h_out * s->w_out);
  float *xcl = (float *)(c->ws + task * (d->dwt_xcl + d->dwt_ycl));
  float *ycl = (float *)((char *)xcl + d->dwt_xcl);
  row_job r;
  job_common(p, &r, nvm);
  r.a.y_c = 1;
  r.a.w_v = (ptrdiff_t)(taps * vl);
  size_t i, end;
  dlc_split_range(c->items, c->ntasks, task, &i, &end);
  for (; i < end; i++) {
    const size_t ct = i % d->nct, n = i / d->nct, b0 = ct * nvm, nv = DLC_MIN(nvm, d->nb - b0);
    const size_t c0 = b0 * vl, nc = DLC_MIN(nv * vl, cout - c0);
    /* x channel-last with pixel stride nc: the tile's planes as one row of plane_in pixels */
    dwt_transpose(p, c->x + (n * (size_t)s->c_in + c0) * plane_in, plane_in, plane_in, nc, xcl);
    r.fn = f->dwc[nv - 1];
    r.x_col = (ptrdiff_t)nc;
    r.ky.xs = s->dil_h * s->w_in * r.x_col;
    r.kx.xs = s->dil_w * r.x_col;
    r.a.x_pix = s->stride_w * r.x_col;
    r.y_col = r.a.y_pix = (ptrdiff_t)nc;
    r.a.nc = nc;
    r.a.bias = p->bias + c0;
    r.a.x_v[0] = 0;
    r.a.x_v[1] = (ptrdiff_t)vl;
    r.a.n_in[0] = (int32_t)DLC_MIN(vl, nc);
    r.a.n_in[1] = (int32_t)(nc > vl ? nc - vl : 0);
    dwc_rows(p, &r, xcl, ycl, d->w + b0 * taps * vl, 0, s->h_out);
    /* back: ycl[pix * nc + ch] to y[ch * plane_out + pix] */
    dwt_transpose(p, ycl, nc, nc, plane_out, c->y + (n * cout + c0) * plane_out);
  }
}

/* Items: (image, channel); a task's run of channels is one call per image it spans. */
static void dwf_task(void *arg, size_t task) {
  const exec_ctx *c = arg;
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const direct_data *d = p->algo_data;
  const dlc_f32_dwf_fn fn = p->kernels->direct->dwf((size_t)s->h_in, (size_t)s->w_in, (size_t)s->k_h);
  const size_t cout = (size_t)s->c_out, plane = (size_t)(s->h_in * s->w_in), taps = (size_t)(s->k_h * s->k_w);
  size_t i, end;
  dlc_split_range(c->items, c->ntasks, task, &i, &end);
  while (i < end) {
    const size_t oc = i % cout, nc = DLC_MIN(end - i, cout - oc);
    const dlc_f32_dwf_args a = {.x = c->x + i * plane, .w = d->w + oc * taps, .bias = p->bias + oc,
                                .y = c->y + i * plane, .nc = nc, .out_min = s->out_min, .out_max = s->out_max};
    fn(&a);
    i += nc;
  }
}

/* NCHW x -> channel-last copy, rows [begin, end) of all images (row = image * h_in + iy), in
   blocks of 8 channels x 64 pixels so both sides stream through a few cache lines. */
typedef struct transpose_ctx {
  const dlconv_plan *p;
  const float *x;
  float *xt;
  size_t ntasks;
} transpose_ctx;

static void transpose_task(void *arg, size_t task) {
  const transpose_ctx *c = arg;
  const dlc_conv_shape *s = &c->p->s;
  const size_t ci = (size_t)s->c_in, h = (size_t)s->h_in, w = (size_t)s->w_in;
  size_t row, end;
  dlc_split_range((size_t)s->n * h, c->ntasks, task, &row, &end);
  while (row < end) {
    const size_t n = row / h, iy = row % h, iy1 = DLC_MIN(h, iy + (end - row));
    transpose_rows(c->p, c->x, n, iy, iy1, c->xt + n * h * w * ci);
    row += iy1 - iy;
  }
}

/* Rows [lo, hi) of image n of NCHW x into dst (the image channel-last). */
static void transpose_rows(const dlconv_plan *p, const float *x, size_t n, size_t lo, size_t hi, float *dst) {
  const dlc_conv_shape *s = &p->s;
  const dlc_f32_direct_to_channel_last_fn fn = p->kernels->direct->to_channel_last;
  const size_t ci = (size_t)s->c_in, h = (size_t)s->h_in, w = (size_t)s->w_in;
  for (size_t iy = lo; iy < hi; iy++) {
    const float *src = x + n * ci * h * w + iy * w;
    float *dr = dst + iy * w * ci;
    if (fn) {
      fn(src, h * w, w, ci, dr);
      continue;
    }
    for (size_t x0 = 0; x0 < w; x0 += 64)
      for (size_t c0 = 0; c0 < ci; c0 += 8) {
        const size_t x1 = DLC_MIN(w, x0 + 64), c1 = DLC_MIN(ci, c0 + 8);
        for (size_t ix = x0; ix < x1; ix++)
          for (size_t ic = c0; ic < c1; ic++) dr[ix * ci + ic] = src[ic * h * w + ix];
      }
  }
}

static void direct_execute(const dlconv_plan *p, const void *xv, void *yv, void *workspace) {
  const float *x = xv;
  float *y = yv;
  const dlc_conv_shape *s = &p->s;
  const direct_data *d = p->algo_data;
  exec_ctx c = {.p = p, .x = x, .y = y};
  dlconv_task_fn fn;
  dlconv_plan flat;   /* d->flat: the plan with its planes seen as one row (see direct_plan) */
  switch (d->mode) {
    case MODE_CONV:
      if (d->flat) {
        flat = *p;
        flat.s.w_in = flat.s.w_out = s->h_out * s->w_out;
        flat.s.h_in = flat.s.h_out = 1;
        c.p = &flat;
      }
      c.items = (size_t)(s->n * s->groups * c.p->s.h_out) * d->nct;
      fn = conv_task;
      break;
    case MODE_DWC:
      c.items = (size_t)s->n * dwc_bands(s) * d->nct;
      fn = dwc_task;
      break;
    case MODE_DWF:
      c.items = (size_t)(s->n * s->c_out);
      fn = dwf_task;
      break;
    case MODE_DWT:
      c.items = (size_t)s->n * d->nct;
      c.ws = workspace;
      fn = dwt_task;
      break;
    default:
      c.items = (size_t)(s->n * s->c_out) * dwp_geometry(p).nrg;
      fn = dwp_task;
      break;
  }
  c.ntasks = DLC_MIN((size_t)DLC_MAX(p->nthreads, 1), c.items);
  if (d->mode == MODE_DWT) c.ntasks = d->ntasks; /* a workspace slice each */
  int transposed = 0;   /* x transposed whole, a pass of its own before conv's, in the same region */
  transpose_ctx t = {0};
  if (d->mode == MODE_CONV && d->x_nhwc && s->layout == DLCONV_NCHW) {
    if (c.ntasks <= xt_slices(p) &&
        (c.ntasks == 1 || xt_image_floats(p) * sizeof(float) <= XT_TASK_MAX_BYTES)) {   /* xt_task */
      c.xn = x;
      c.ws = workspace;
      c.xt_floats = xt_image_floats(p);
    } else {
      t = (transpose_ctx){p, x, workspace, DLC_MIN((size_t)DLC_MAX(p->nthreads, 1), (size_t)(s->n * s->h_in))};
      c.x = workspace;
      transposed = 1;
    }
  }
  const dlc_pass pass[2] = {{t.ntasks, transpose_task, &t}, {c.ntasks, fn, &c}};
  dlc_parallel_passes(p, pass + !transposed, 1 + (size_t)transposed);
}

static void direct_f16_execute(const dlconv_plan *p, const void *x, void *y, void *workspace) {
  const dlc_conv_shape *s = &p->s;
  const direct_data *d = p->algo_data;
  exec_ctx c = {.p = p, .xh = x, .yh = y, .ws = workspace, .ntasks = d->ntasks};
  c.items = (size_t)(s->n * s->groups * s->h_out) * d->nct;
  dlc_parallel_for(p, c.ntasks, conv_task, &c);
}

const dlc_impl_ops dlc_direct_f16_conv_ops = {
    .plan = direct_f16_plan,
    .execute = direct_f16_execute,
    .destroy = direct_destroy,
};

const dlc_impl_ops dlc_direct_ops = {
    .plan = direct_plan,
    .execute = direct_execute,
    .destroy = direct_destroy,
};
