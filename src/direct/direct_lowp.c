/* direct_lowp.c - the direct algorithm for F16 and int8 depthwise layers (c_in/groups == 1),
 * ISA-independent driver: NCHW (any depth multiplier) and NHWC (multiplier 1).
 *
 * im2col + GEMM is the wrong shape for a depthwise layer: one output channel per group makes
 * every product a 1-row GEMM.
 *
 * NCHW, the usual path ("wide"): each input plane is widened to fp32 (int8: x - zp) and run
 * through the fp32 depthwise kernel of the direct family (direct_dwp.h: all taps of a register
 * tile of outputs in registers, strides and padding handled in the kernel), into an fp32 plane
 * that the gemm family's store then finishes (bias, clamp and binary16 rounding, or the exact
 * requantisation of quant.h). int8 stays exact: every product (x - zp) * w is an integer of at
 * most 255 * 128 in magnitude, so while taps * 255 * 128 <= 2^24 every partial sum, in whatever
 * order the kernel adds, is an integer fp32 holds exactly. The row kernels accumulate each tap's
 * run into memory instead (a load and a store of the accumulators per tap): on MobileNetV2's
 * depthwise layers they took 1.7-2.6x the time for F16, 1.2-1.8x for int8. F16 with stride_w 1
 * or 2 skips the widened planes where the family has the kernel's binary16 variant (dwp_f16: x
 * widened and y rounded in registers), which makes it cheaper than fp32 rather than dearer
 * (MobileNetV2's depthwise layers: 0.55-0.98x the fp32 time, where the planes through memory
 * took 1.05-1.59x; the 112 x 112 stride-1 layer 1.06x: there each input vector is widened once
 * per tap and row that reads it). int8 NCHW goes to the quads kernels first (dw4_plan, dwc_plan).
 *
 * NCHW otherwise (int8 past that many taps, or an ISA without the fp32 kernel): each (image,
 * channel) plane is computed row by row: for every tap that lands inside the image, the
 * family's row kernel adds the clipped run of the input row times the tap's weight into a row
 * of wide accumulators (fp32 for F16, exact s32 for int8) in the workspace, and the gemm
 * family's store finishes the row into y (bias, clamp and binary16 rounding, or the exact
 * requantisation of quant.h). Padding is never materialised.
 *
 * Layers with several input channels per group are direct.c's F16 conv path (F16, where the
 * direct family stores binary16) or direct_lowp_conv.c's (int8, and F16 elsewhere): entries of
 * their own in the implementation list (src/api/impl_list.c), so DIRECT is one algorithm for the
 * caller.
 *
 * NHWC (depth multiplier 1) goes row by row instead: each tap adds a run of all channels of
 * several output pixels (x contiguous along them with stride 1, weights transposed to taps x
 * c_out and repeated for those pixels at plan time; one pixel per call with larger strides) and
 * each pixel is stored in one call with per-channel bias and multipliers; the GEMM would make
 * every group a 1 x 1 product.
 *
 * Threads: the n * c_out planes (NCHW) or n * h_out output rows (NHWC) are split into
 * contiguous ranges, one per task. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../ukernel/config.h"
#include "../core/plan.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "../gemm_im2col/lowp_ind.h"
#include "direct.h"
#include "lowp_vpos.h"
#include "direct_dwp.h"

typedef struct dwl_data {
  int q8;
  float *wf;        /* F16, and int8 in wide mode: c_out x taps weights as fp32 */
  int32_t *wq;      /* int8 otherwise: c_out x taps weights */
  int wide;         /* NCHW through the fp32 kernel (see the top) */
  int half;         /* wide F16 on the kernel's binary16 variant (dwp_f16): no widened planes */
  size_t xf_bytes, yf_bytes; /* wide: a widened input plane and an fp32 output plane */
  size_t row_bytes; /* accumulators of a task, multiple of 64 */
  size_t ntasks;
  /* Flat mode (stride_h == stride_w): the plane is copied with its padding into the workspace
     (Hp x Wp, padding = zero point), and each tap is then ONE row-kernel call over the whole
     plane: output (oy, ox) is virtual pixel v = oy * Wp + ox, which reads padded[v * stride +
     tap offset]. The Wp - w_out virtual columns per row are computed and dropped. Per-row calls
     cost more than that on the 7 x 7 to 28 x 28 planes of mobile networks. */
  int nhwc;                 /* NHWC, depth multiplier 1: per output row, the channels of pixels as runs */
  size_t rep;               /* NHWC: output pixels per channel-kernel call (1 unless stride_w is 1) */
  int flat;
  size_t wp, hp, nvirt;     /* padded plane; virtual pixels computed per tap */
  size_t pad_bytes;         /* the padded plane, multiple of 64 */
  /* int8 NCHW on u8 x s8 quads (k->q8_dw4; see dw4_plan): the plane copied as u8 with its padding
     (flat as above, or rows of wp), taps in quads per kernel row, chunk_rows output rows a call */
  int dw4;
  int32_t *w4;              /* c_out x k_h x nq quads of s8 weights */
  size_t nq, chunk_rows;
  uint8_t idx[DLC_Q8_DW4_MAX_QUADS * 64];
  dlc_q8_params q4;         /* the plan's requantisation with zu * sum(w) out of the bias */
  uint8_t zu, flip;
  /* int8 NCHW on small planes, 16 channels in the lanes (k->q8_dwc; see dwc_plan): blocks of 16
     channels interleaved into a padded plane (xc_bytes a task), weights as 16-lane quads */
  int dwc;
  int32_t *w16;             /* ceil(c_out / 16) x k_h x nq x 16 quads of s8 weights */
  uint32_t *pos;            /* round_up(h_out * w_out, 16) byte offsets of the output pixels' windows */
  uint32_t *off;            /* h_in * w_in byte offsets of the input pixels in the padded plane */
  size_t xc_bytes;
  /* int8 NHWC in registers (k->q8_dwn; see dwn_plan): tiles of pixels read through pointers */
  int dwn;
  int8_t *wn;               /* ceil(c_out / 64) blocks of k_h * k_w x 4 x 64 bytes */
  dlc_q8_params ql;         /* q4 with bias and mult_f in the kernel's lane order (owned arrays) */
  dlc_nhwc_ind ind;
  /* Padded bands (dwn with run_s and padding): a band of up to band output rows of one image
     reads band_in input rows, copied with their padding (the zero point's byte) into the task's
     workspace, pw pixels a row, so that every tile of the band is strided (see dwl_task_dwn) */
  size_t band, band_in, pw, band_bytes;
} dwl_data;

static void dwl_destroy(dlconv_plan *p) {
  dwl_data *d = p->algo_data;
  if (!d) return;
  dlc_free(d->wf);
  dlc_free(d->wq);
  dlc_free(d->w4);
  dlc_free(d->w16);
  dlc_free(d->pos);
  dlc_free(d->off);
  dlc_free(d->wn);
  dlc_free(d->ql.bias);
  dlc_free(d->ql.mult_f);
  dlc_nhwc_ind_free(&d->ind);
  dlc_q8_d4_params_free(&d->q4);
  dlc_free(d);
}

/* Planes up to this many output pixels go to the channel-lanes kernel (k->q8_dwc) where it
   applies: measured on MobileNetV2's layers (see the commit that set it). */
#define DWC_MAX_PIXELS 784

/* int8 NCHW depthwise with 16 channels in the lanes (lowp_dw_ukernel.h, dlc_q8_dwc_family), for
   small planes of depth-multiplier-1 layers whose kernel rows' quads of taps are adjacent pixels
   (dil_w 1, k_w <= 8); d->q4 is already derived. *taken says whether it did. */
static dlconv_status dwc_plan(dlconv_plan *p, dwl_data *d, const void *w, int *taken) {
  const dlc_conv_shape *s = &p->s;
  *taken = 0;
  const size_t kh = (size_t)s->k_h, kw = (size_t)s->k_w, ho = (size_t)s->h_out, wo = (size_t)s->w_out;
  const size_t np = ho * wo;
  if (!p->kernels->q8_dwc || s->cout_g != 1 || (kw > 1 && s->dil_w != 1) || kw > 4 * DLC_Q8_DW4_MAX_QUADS ||
      np > DWC_MAX_PIXELS)
    return DLCONV_OK;
  const size_t L = DLC_Q8_DWC_LANES, co = (size_t)s->c_out, nb = dlc_div_up(co, L), nq = dlc_div_up(kw, 4);
  const size_t hi = (size_t)s->h_in, wi = (size_t)s->w_in;
  d->wp = wi + (size_t)(s->pad_l + s->pad_r);
  d->hp = hi + (size_t)(s->pad_t + s->pad_b);
  d->w16 = dlc_calloc(nb * kh * nq * L * sizeof(int32_t));
  d->pos = dlc_malloc(dlc_round_up(np, L) * sizeof(uint32_t));
  d->off = dlc_malloc(hi * wi * sizeof(uint32_t));
  if (!d->w16 || !d->pos || !d->off) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory packing direct weights");
  int8_t *wb = (int8_t *)d->w16;
  for (size_t oc = 0; oc < co; oc++) /* channel oc: lane oc % 16 of block oc / 16 */
    for (size_t ky = 0; ky < kh; ky++)
      for (size_t kx = 0; kx < kw; kx++)
        wb[((((oc / L) * kh + ky) * nq + kx / 4) * L + oc % L) * 4 + kx % 4] = ((const int8_t *)w)[(oc * kh + ky) * kw + kx];
  const size_t sh = (size_t)s->stride_h, sw = (size_t)s->stride_w;
  for (size_t i = 0; i < dlc_round_up(np, L); i++) /* past np: pixel 0's windows, read and dropped */
    d->pos[i] = i < np ? (uint32_t)(L * ((i / wo) * sh * d->wp + (i % wo) * sw)) : 0;
  for (size_t j = 0; j < hi * wi; j++)
    d->off[j] = (uint32_t)(L * ((j / wi + (size_t)s->pad_t) * d->wp + j % wi + (size_t)s->pad_l));
  /* the last byte a window reads: the last pixel's, last tap row's, last quad's 64 */
  const size_t reach = L * (((ho - 1) * sh + (kh - 1) * (size_t)s->dil_h) * d->wp + (wo - 1) * sw + 4 * nq);
  d->xc_bytes = dlc_round_up(DLC_MAX(d->hp * d->wp * L, reach), DLC_ALIGN);
  d->nq = nq;
  d->zu = dlc_q8_d4_zu(p);
  d->flip = dlc_q8_d4_flip(p);
  d->dwc = 1;
  d->q8 = 1;
  d->ntasks = DLC_MIN((size_t)p->nthreads, (size_t)s->n * nb);
  p->packed_weight_bytes = nb * kh * nq * L * sizeof(int32_t) + (dlc_round_up(np, L) + hi * wi) * sizeof(uint32_t);
  p->workspace_bytes = d->ntasks * d->xc_bytes;
  snprintf(p->kernel, sizeof p->kernel, "%s", p->kernels->q8_dwc->name);
  *taken = 1;
  return DLCONV_OK;
}

/* int8 NCHW depthwise on the quads kernel where it fits (a kernel row's taps of 16 pixels within
   one 64-byte window, k_w <= 8, the zero point's correction inside s32); *taken says whether it
   did. Output rows that are mostly junk lanes (7 x 7 planes: 7 of 16) go flat instead, as one run
   of virtual pixels over the padded plane, when that needs fewer blocks of 16. */
static dlconv_status dw4_plan(dlconv_plan *p, dwl_data *d, const void *w, int *taken) {
  const dlc_conv_shape *s = &p->s;
  const dlc_q8_dw4_family *f4 = p->kernels->q8_dw4;
  *taken = 0;
  const size_t kh = (size_t)s->k_h, kw = (size_t)s->k_w, sw = (size_t)s->stride_w, sh = (size_t)s->stride_h;
  const size_t dh = (size_t)s->dil_h, dw = (size_t)s->dil_w, ho = (size_t)s->h_out, wo = (size_t)s->w_out;
  if (!f4 || kw > 4 * DLC_Q8_DW4_MAX_QUADS || (DLC_Q8_DW4_LANES - 1) * sw + (kw - 1) * dw > 63) return DLCONV_OK;
  int ok;
  dlconv_status st = dlc_q8_d4_params(p, w, &d->q4, &ok);
  if (st != DLCONV_OK || !ok) return st;
  st = dwc_plan(p, d, w, taken);
  if (st != DLCONV_OK || *taken) return st;
  d->nq = dlc_div_up(kw, 4);
  const size_t co = (size_t)s->c_out, nw = co * kh * d->nq;
  d->w4 = dlc_calloc(nw * sizeof(int32_t));
  if (!d->w4) {
    dlc_q8_d4_params_free(&d->q4);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory packing direct weights");
  }
  int8_t *w4b = (int8_t *)d->w4;
  for (size_t r = 0; r < co * kh; r++) /* r = oc * kh + ky */
    for (size_t kx = 0; kx < kw; kx++) w4b[(r * d->nq + kx / 4) * 4 + kx % 4] = ((const int8_t *)w)[r * kw + kx];
  for (size_t q = 0; q < d->nq; q++)
    for (size_t j = 0; j < DLC_Q8_DW4_LANES; j++)
      for (size_t t = 0; t < 4; t++) /* taps past k_w have weight 0: any byte of the window does */
        d->idx[64 * q + 4 * j + t] = (uint8_t)(j * sw + DLC_MIN(4 * q + t, kw - 1) * dw);
  d->zu = dlc_q8_d4_zu(p);
  d->flip = dlc_q8_d4_flip(p);
  d->wp = (size_t)(s->w_in + s->pad_l + s->pad_r);
  d->hp = (size_t)(s->h_in + s->pad_t + s->pad_b);
  d->nvirt = (ho - 1) * d->wp + wo;
  const size_t L = DLC_Q8_DW4_LANES;
  d->flat = sh == sw && dlc_div_up(d->nvirt, L) < ho * dlc_div_up(wo, L);
  /* the last byte a call reads: 64 past the start of its last block of its last row and tap row */
  size_t reach;
  if (d->flat) {
    d->row_bytes = dlc_round_up(d->nvirt * 4, DLC_ALIGN);
    reach = (dlc_div_up(d->nvirt, L) - 1) * L * sw + (kh - 1) * dh * d->wp + 64;
  } else {
    const size_t rows = DLC_MAX((size_t)1, DLC_MIN(ho, 4096 / wo)); /* 16 KiB of accumulators */
    d->chunk_rows = rows >= 4 ? rows / 4 * 4 : rows;
    d->row_bytes = dlc_round_up(d->chunk_rows * wo * 4, DLC_ALIGN);
    reach = (ho - 1) * sh * d->wp + (kh - 1) * dh * d->wp + (dlc_div_up(wo, L) - 1) * L * sw + 64;
  }
  /* + 8: the row copy's last 8-byte store may end 8 bytes past a row's data (dwl_task_dw4) */
  d->pad_bytes = dlc_round_up(DLC_MAX(d->hp * d->wp + 8, reach), DLC_ALIGN);
  d->dw4 = 1;
  d->q8 = 1;
  d->ntasks = DLC_MIN((size_t)p->nthreads, (size_t)(s->n * s->c_out));
  p->packed_weight_bytes = nw * sizeof(int32_t);
  p->workspace_bytes = d->ntasks * (d->row_bytes + d->pad_bytes);
  snprintf(p->kernel, sizeof p->kernel, "%s", f4->name);
  *taken = 1;
  return DLCONV_OK;
}

/* int8 NHWC depthwise in registers (lowp_dw_ukernel.h, dlc_q8_dwn_family) where the CPU has it and
   the zero point's correction fits the s32 bias; *taken says whether it did. Tasks take contiguous
   ranges of tiles of pixels. */
/* pixels a tile of the family's for c channels */
static size_t dwn_mr(const dlc_q8_dwn_family *f, size_t c) {
  return c <= 16 && f->mr_quad ? f->mr_quad : c <= 32 && f->mr_narrow ? f->mr_narrow : f->mr;
}

static dlconv_status dwn_plan(dlconv_plan *p, dwl_data *d, const void *w, int *taken) {
  const dlc_conv_shape *s = &p->s;
  const dlc_q8_dwn_family *f = p->kernels->q8_dwn;
  *taken = 0;
  const size_t taps = (size_t)(s->k_h * s->k_w), co = (size_t)s->c_out, cr = dlc_round_up(co, 64);
  if (!f || s->cout_g != 1 || taps > DLC_IND_MAX_TAPS) return DLCONV_OK;
  int ok;
  dlconv_status st = dlc_q8_d4_params(p, w, &d->q4, &ok);
  if (st != DLCONV_OK || !ok) return st;
  d->wn = dlc_calloc(cr * taps * 4);
  d->ql = d->q4;
  d->ql.bias = dlc_calloc(cr * sizeof(int32_t));
  d->ql.mult_f = d->q4.mult_f ? dlc_calloc(cr * sizeof(float)) : NULL;
  if (!d->wn || !d->ql.bias || (d->q4.mult_f && !d->ql.mult_f))
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory packing direct weights");
  st = dlc_nhwc_ind_init(&d->ind, p, 0, co, dwn_mr(f, co));
  if (st != DLCONV_OK) return st;
  for (size_t c = 0; c < co; c++) {
    /* channel c = 64 b + 4 l + k: byte 4 l + k of vector k of each tap, entry 64 b + 16 k + l of ql */
    const size_t b = c / 64, l = c % 64 / 4, k = c % 4;
    for (size_t t = 0; t < taps; t++) d->wn[((b * taps + t) * 4 + k) * 64 + 4 * l + k] = ((const int8_t *)w)[c * taps + t];
    d->ql.bias[64 * b + 16 * k + l] = d->q4.bias[c];
    if (d->ql.mult_f) d->ql.mult_f[64 * b + 16 * k + l] = d->q4.mult_f[c];
  }
  d->flip = dlc_q8_d4_flip(p);
  d->dwn = 1;
  d->q8 = 1;
  d->ntasks = DLC_MIN((size_t)p->nthreads, (size_t)(s->n * s->h_out));
  p->packed_weight_bytes = cr * taps * 4 + cr * 8;
  p->workspace_bytes = 0;
  /* Where the copy costs less than the padded tiles' pointers: those are built per block of 64
     channels, the copy is a pass over x whose bytes a stride of 2 makes 4 an output pixel. Zen 5,
     1 thread, u8, bands / pointers: WRN-40-2 16 to 128 channels 0.60-0.82 (stride 2 too);
     MobileNetV2, EfficientNet-B0, ShuffleNetV2 stride 1 up to 232 channels 0.82-1.01, 384 and
     more 0.98-1.10, stride 2 above 64 channels 1.10-1.26. */
  const int band_pays = co <= 64 || (s->stride_h == 1 && s->stride_w == 1 && co <= 256);
  if (f->run_s && band_pays && (s->pad_t | s->pad_b | s->pad_l | s->pad_r)) {
    /* the pixels a padded row needs: those of output columns 0 .. w_out - 1's windows */
    d->pw = (size_t)((s->w_out - 1) * s->stride_w + (s->k_w - 1) * s->dil_w + 1);
    const size_t prow = d->pw * co, span = (size_t)((s->k_h - 1) * s->dil_h + 1), sh = (size_t)s->stride_h;
    /* a band's rows within about 64 KB (L2), at least one output row */
    const size_t rows_fit = DLC_MAX(span, ((size_t)64 << 10) / prow);
    d->band = DLC_MIN((size_t)s->h_out, (rows_fit - span) / sh + 1);
    d->band_in = (d->band - 1) * sh + span;
    d->band_bytes = dlc_round_up(d->band_in * prow, 64);
    p->workspace_bytes = d->ntasks * d->band_bytes;
  }
  snprintf(p->kernel, sizeof p->kernel, "%s", f->name);
  *taken = 1;
  return DLCONV_OK;
}

int dlc_direct_lowp_dw_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k) {
  (void)dtype;
  (void)k;
  return s->cin_g == 1;
}

static dlconv_status dwl_plan(dlconv_plan *p, const void *w) {
  const dlc_conv_shape *s = &p->s;
  const int q8 = p->dtype != DLCONV_F16;
  const int nhwc = s->layout == DLCONV_NHWC;
  if (nhwc && s->cout_g != 1)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED,
                    "direct has an F16/int8 NHWC depthwise path for depth multiplier 1 only (c_out/groups = %lld)",
                    (long long)s->cout_g);
  const dlc_lowp_dw_family *f = p->kernels->lowp_dw;
  if (!f || (q8 ? !p->kernels->q8_gemm : !p->kernels->f16_gemm) || (nhwc && (q8 ? !f->q8_ch : !f->f16_ch)))
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "direct has no %s depthwise kernel for isa %s", q8 ? "int8" : "F16",
                    p->kernels->name);
  dwl_data *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning direct");
  if (q8) {
    int taken;
    const dlconv_status st = nhwc ? dwn_plan(p, d, w, &taken) : dw4_plan(p, d, w, &taken);
    if (st != DLCONV_OK || taken) {
      p->algo_data = d;
      if (st != DLCONV_OK) { /* whatever the quads' plans allocated goes with d */
        dwl_destroy(p);
        p->algo_data = NULL;
      }
      return st;
    }
  }
  const size_t taps = (size_t)(s->k_h * s->k_w), n = (size_t)s->c_out * taps;
  /* NHWC, stride 1 along x: a tap's run over `rep` output pixels is one run of x and of the
     accumulators, so one channel-kernel call covers them with the tap's weights repeated rep
     times (32 channels: a call per pixel cost 3.5x the fp32 layer's time) */
  d->rep = nhwc && s->stride_w == 1 ? DLC_MAX(1, DLC_MIN((size_t)s->w_out, 512 / (size_t)s->c_out)) : 1;
  const size_t nalloc = n * d->rep;
  d->q8 = q8;
  d->wide = !nhwc && p->kernels->direct && p->kernels->direct->dwp && (q8 ? f->q8_widen != NULL : f->f16_widen != NULL) &&
            (!q8 || taps <= (1u << 24) / (255u * 128u));
  if (q8 && !d->wide)
    d->wq = dlc_malloc(nalloc * sizeof(int32_t));
  else
    d->wf = dlc_malloc(nalloc * sizeof(float));
  if (!d->wq && !d->wf) {
    dlc_free(d->wf);
    dlc_free(d->wq);
    dlc_free(d);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory packing direct weights");
  }
  /* NCHW: c_out x taps as given; NHWC: taps x (rep x c_out), a tap's weights along the channels */
  d->nhwc = nhwc;
  for (size_t i = 0; i < n; i++)
    for (size_t r = 0; r < d->rep; r++) {
      const size_t at = nhwc ? (i % taps * d->rep + r) * (size_t)s->c_out + i / taps : i;
      if (q8 && d->wide)
        d->wf[at] = (float)((const int8_t *)w)[i];
      else if (q8)
        d->wq[at] = ((const int8_t *)w)[i];
      else
        d->wf[at] = dlc_f16_to_f32(((const uint16_t *)w)[i]);
    }
  d->flat = !nhwc && !d->wide && s->stride_h == s->stride_w;
  d->half = !q8 && d->wide && p->kernels->direct->dwp_f16 && s->stride_w <= 2;
  if (d->half) {
    /* no workspace: the planes are read and written as binary16 by the kernel */
  } else if (d->wide) {
    d->xf_bytes = dlc_round_up((size_t)(s->h_in * s->w_in) * 4, DLC_ALIGN);
    d->yf_bytes = dlc_round_up((size_t)(s->h_out * s->w_out) * 4, DLC_ALIGN);
  } else if (nhwc) {
    d->row_bytes = dlc_round_up((size_t)(s->w_out * s->c_out) * 4, DLC_ALIGN);
    d->ntasks = DLC_MIN((size_t)p->nthreads, (size_t)(s->n * s->h_out));
  } else if (d->flat) {
    d->wp = (size_t)(s->w_in + s->pad_l + s->pad_r);
    d->hp = (size_t)(s->h_in + s->pad_t + s->pad_b);
    d->nvirt = (size_t)(s->h_out - 1) * d->wp + (size_t)s->w_out;
    d->row_bytes = dlc_round_up(d->nvirt * 4, DLC_ALIGN);
    d->pad_bytes = dlc_round_up(d->hp * d->wp * (q8 ? 1 : 2), DLC_ALIGN);
  } else {
    d->row_bytes = dlc_round_up((size_t)s->w_out * 4, DLC_ALIGN);
  }
  if (!nhwc) d->ntasks = DLC_MIN((size_t)p->nthreads, (size_t)(s->n * s->c_out));
  p->algo_data = d;
  p->packed_weight_bytes = nalloc * 4;
  p->workspace_bytes = d->ntasks * (d->row_bytes + d->pad_bytes + d->xf_bytes + d->yf_bytes);
  if (d->wide)
    snprintf(p->kernel, sizeof p->kernel, "%s+%s", q8 ? "q8" : d->half ? "f16_in_registers" : "f16",
             p->kernels->direct->dw_name ? p->kernels->direct->dw_name : "f32_dwconv");
  else
    snprintf(p->kernel, sizeof p->kernel, "%s", q8 ? f->q8_name : f->f16_name);
  return DLCONV_OK;
}

/* The output columns [lo, hi) of a tap whose input column ox * stride_w + off (off: the tap's
   dil_w * kx - pad_l) lies inside x. */
static void tap_columns(const dlc_conv_shape *s, int64_t off, size_t *lo, size_t *hi) {
  const int64_t sw = s->stride_w;
  *lo = off >= 0 ? 0 : (size_t)((-off + sw - 1) / sw);
  *hi = off >= s->w_in ? 0 : DLC_MIN((size_t)s->w_out, (size_t)((s->w_in - 1 - off) / sw) + 1);
}

/* The outputs among the flat path's virtual positions [v0, v0 + n) (rows of wv, of which wo
   are outputs, ho rows) moved to the front of acc: they are consecutive outputs of the plane, so
   one store call covers them (int8 store calls of 7 or 14 outputs, one per row, cost as much as
   the taps on the small planes of mobile networks). */
static size_t compact_virtual(void *acc, size_t v0, size_t n, size_t wv, size_t wo, size_t ho,
                              size_t *first) {
  char *a = acc;
  size_t cnt = 0;
  for (size_t oy = v0 / wv; oy < ho && oy * wv < v0 + n; oy++) {
    const size_t f0 = v0 > oy * wv ? v0 : oy * wv, f1 = v0 + n < oy * wv + wo ? v0 + n : oy * wv + wo;
    if (f0 >= f1) continue;
    if (!cnt) *first = oy * wo + (f0 - oy * wv);
    if (cnt != f0 - v0) { /* forward, to a lower address: an element loop is safe (and no call for 7) */
      int32_t *dst = (int32_t *)(void *)(a + cnt * 4);
      const int32_t *src = (const int32_t *)(const void *)(a + (f0 - v0) * 4);
      for (size_t i = 0; i < f1 - f0; i++) dst[i] = src[i];
    }
    cnt += f1 - f0;
  }
  return cnt;
}


static void dwl_task(void *arg, size_t t) {
  const dlc_exec *c = arg;
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const dwl_data *d = p->algo_data;
  const dlc_lowp_dw_family *f = p->kernels->lowp_dw;
  const size_t es = d->q8 ? 1 : 2, wo = (size_t)s->w_out, ho = (size_t)s->h_out, taps = (size_t)(s->k_h * s->k_w);
  const size_t plane_in = (size_t)(s->h_in * s->w_in), sw = (size_t)s->stride_w;
  const int is_signed = p->dtype == DLCONV_S8;
  void *acc = c->ws + t * (d->row_bytes + d->pad_bytes);
  char *padded = (char *)acc + d->row_bytes;
  size_t begin, end;
  dlc_split_range((size_t)(s->n * s->c_out), d->ntasks, t, &begin, &end);
  size_t padded_ic = SIZE_MAX; /* the (image, input channel) now in padded */
  for (size_t pl = begin; pl < end; pl++) {
    const size_t img = pl / (size_t)s->c_out, oc = pl % (size_t)s->c_out;
    const size_t ic = oc / (size_t)s->cout_g; /* depth multiplier: cout_g outputs per input */
    const char *xp = (const char *)c->x + (img * (size_t)s->c_in + ic) * plane_in * es;
    char *yp = (char *)c->y + pl * ho * wo * es;
    if (d->flat) {
      if (padded_ic != img * (size_t)s->c_in + ic) {
        padded_ic = img * (size_t)s->c_in + ic;
        if (d->q8)
          memset(padded, (int)(uint8_t)p->q8.x_zero_point, d->hp * d->wp); /* x - zp = 0 there */
        else
          memset(padded, 0, d->hp * d->wp * 2);
        for (int64_t iy = 0; iy < s->h_in; iy++)
          memcpy(padded + (((size_t)(iy + s->pad_t)) * d->wp + (size_t)s->pad_l) * es,
                 xp + (size_t)iy * (size_t)s->w_in * es, (size_t)s->w_in * es);
      }
      memset(acc, 0, d->nvirt * 4);
      for (int64_t ky = 0; ky < s->k_h; ky++)
        for (int64_t kx = 0; kx < s->k_w; kx++) {
          const size_t wi = oc * taps + (size_t)ky * (size_t)s->k_w + (size_t)kx;
          const char *xs = padded + ((size_t)(ky * s->dil_h) * d->wp + (size_t)(kx * s->dil_w)) * es;
          if (d->q8)
            f->q8_row(d->nvirt, xs, sw, d->wq[wi], p->q8.x_zero_point, is_signed, acc);
          else
            f->f16_row(d->nvirt, (const uint16_t *)xs, sw, d->wf[wi], acc);
        }
      size_t first = 0;
      const size_t cnt = compact_virtual(acc, 0, d->nvirt, d->wp, wo, ho, &first); /* all ho x wo */
      if (d->q8)
        p->kernels->q8_gemm->store(cnt, acc, &p->q8, oc, 0, yp + first);
      else
        p->kernels->f16_gemm->store(cnt, acc, p->bias, oc, 0, s->out_min, s->out_max, (uint16_t *)yp + first);
      continue;
    }
    for (size_t oy = 0; oy < ho; oy++) {
      memset(acc, 0, wo * 4);
      for (int64_t ky = 0; ky < s->k_h; ky++) {
        const int64_t iy = (int64_t)oy * s->stride_h - s->pad_t + ky * s->dil_h;
        if (iy < 0 || iy >= s->h_in) continue;
        const char *xrow = xp + (size_t)iy * (size_t)s->w_in * es;
        for (int64_t kx = 0; kx < s->k_w; kx++) {
          const int64_t ix0 = kx * s->dil_w - s->pad_l;
          size_t lo, hi;
          tap_columns(s, ix0, &lo, &hi);
          if (lo >= hi) continue;
          const size_t wi = oc * taps + (size_t)ky * (size_t)s->k_w + (size_t)kx;
          const char *xs = xrow + (size_t)(ix0 + (int64_t)(lo * sw)) * es;
          if (d->q8)
            f->q8_row(hi - lo, xs, sw, d->wq[wi], p->q8.x_zero_point, is_signed, (int32_t *)acc + lo);
          else
            f->f16_row(hi - lo, (const uint16_t *)xs, sw, d->wf[wi], (float *)acc + lo);
        }
      }
      if (d->q8)
        p->kernels->q8_gemm->store(wo, acc, &p->q8, oc, 0, yp + oy * wo);
      else
        p->kernels->f16_gemm->store(wo, acc, p->bias, oc, 0, s->out_min, s->out_max, (uint16_t *)yp + oy * wo);
    }
  }
}

/* NCHW int8 on the quads kernel: per plane, the input copied as u8 with its padding (once per
   input channel), the kernel over chunks of output rows (or the flat run), each chunk stored. */
static void dwl_task_dw4(void *arg, size_t t) {
  const dlc_exec *c = arg;
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const dwl_data *d = p->algo_data;
  const dlc_q8_dw4_fn run = p->kernels->q8_dw4->run;
  const size_t wo = (size_t)s->w_out, ho = (size_t)s->h_out, wi = (size_t)s->w_in, wp = d->wp;
  const size_t plane_in = (size_t)s->h_in * wi, sw = (size_t)s->stride_w, sh = (size_t)s->stride_h;
  const size_t kh = (size_t)s->k_h, ky_step = (size_t)s->dil_h * wp;
  const size_t pl = (size_t)s->pad_l;
  int32_t *acc = (int32_t *)(c->ws + t * (d->row_bytes + d->pad_bytes));
  uint8_t *padded = (uint8_t *)acc + d->row_bytes;
  /* The borders (padding rows and columns) and the slack past the plane (it only feeds lanes
     and taps that are dropped) hold the zero point's byte for every plane: set once per task,
     so that each plane then copies its rows only (a 7 x 7 plane's memset calls cost more than
     its products). */
  memset(padded, d->zu, d->pad_bytes);
  size_t begin, end;
  dlc_split_range((size_t)(s->n * s->c_out), d->ntasks, t, &begin, &end);
  size_t padded_ic = SIZE_MAX; /* the (image, input channel) now in padded */
  for (size_t pi = begin; pi < end; pi++) {
    const size_t img = pi / (size_t)s->c_out, oc = pi % (size_t)s->c_out;
    const size_t xc = img * (size_t)s->c_in + oc / (size_t)s->cout_g;
    uint8_t *yp = (uint8_t *)c->y + pi * ho * wo;
    if (padded_ic != xc) {
      padded_ic = xc;
      const uint8_t *xp = (const uint8_t *)c->x + xc * plane_in;
      /* Rows in 8-byte pieces, the last piece of a row running on into the next row's bytes
         (read within the plane only, x ends there): what it writes past the row's data lands
         in the border, which one 8-byte store of the zero point's byte then restores, or in
         the next row's data, which that row's copy then writes. */
      const uint64_t flip8 = 0x0101010101010101ull * d->flip, zu8 = 0x0101010101010101ull * d->zu;
      for (size_t iy = 0; iy < (size_t)s->h_in; iy++) {
        uint8_t *dst = padded + (iy + (size_t)s->pad_t) * wp + pl;
        const uint8_t *src = xp + iy * wi;
        const size_t room = plane_in - iy * wi; /* bytes of the plane from src on */
        size_t i = 0;
        /* 16 bytes a step first (one SSE2 load, xor and store: the 8-byte steps had been a third
           of a 32 x 32 x 32 layer's time) */
        for (; i + 16 <= wi; i += 16) {
          uint64_t v[2];
          memcpy(v, src + i, 16);
          v[0] ^= flip8, v[1] ^= flip8;
          memcpy(dst + i, v, 16);
        }
        for (; i + 8 <= wi; i += 8) {
          uint64_t v;
          memcpy(&v, src + i, 8);
          v ^= flip8;
          memcpy(dst + i, &v, 8);
        }
        if (i < wi && i + 8 <= room) {
          uint64_t v;
          memcpy(&v, src + i, 8);
          v ^= flip8;
          memcpy(dst + i, &v, 8);
          memcpy(dst + wi, &zu8, 8);
          i = wi;
        }
        for (; i < wi; i++) dst[i] = src[i] ^ d->flip;
      }
    }
    const int32_t *w4 = d->w4 + oc * kh * d->nq;
    if (d->flat) {
      run(1, d->nvirt, padded, 0, sw, kh, ky_step, d->nq, d->idx, w4, acc, 0);
      size_t first = 0;
      const size_t cnt = compact_virtual(acc, 0, d->nvirt, wp, wo, ho, &first);
      p->kernels->q8_gemm->store(cnt, acc, &d->q4, oc, 0, yp + first);
      continue;
    }
    for (size_t r0 = 0; r0 < ho; r0 += d->chunk_rows) {
      const size_t rows = DLC_MIN(d->chunk_rows, ho - r0);
      run(rows, wo, padded + r0 * sh * wp, sh * wp, sw, kh, ky_step, d->nq, d->idx, w4, acc, wo);
      p->kernels->q8_gemm->store(rows * wo, acc, &d->q4, oc, 0, yp + r0 * wo);
    }
  }
}

/* NCHW int8 on the channel-lanes kernel: per (image, block of 16 channels), the block's planes
   interleaved into the padded plane, then the whole output plane of the 16 channels in one call. */
static void dwl_task_dwc(void *arg, size_t t) {
  const dlc_exec *c = arg;
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const dwl_data *d = p->algo_data;
  const dlc_q8_dwc_family *f = p->kernels->q8_dwc;
  const size_t L = DLC_Q8_DWC_LANES, co = (size_t)s->c_out, nb = dlc_div_up(co, L);
  const size_t plane_in = (size_t)(s->h_in * s->w_in), np = (size_t)(s->h_out * s->w_out), kh = (size_t)s->k_h;
  uint8_t *xc = (uint8_t *)c->ws + t * d->xc_bytes;
  /* the padding (and the slack past the plane) holds the zero point's byte in every lane, set
     once: each block then writes the image's pixels only */
  memset(xc, d->zu, d->xc_bytes);
  size_t begin, end;
  dlc_split_range((size_t)s->n * nb, d->ntasks, t, &begin, &end);
  for (size_t u = begin; u < end; u++) {
    const size_t img = u / nb, c0 = u % nb * L, nc = DLC_MIN(L, co - c0);
    f->pack(nc, plane_in, (const uint8_t *)c->x + (img * co + c0) * plane_in, plane_in, d->flip, d->off, xc);
    f->run(np, xc, d->pos, kh, L * (size_t)s->dil_h * d->wp, d->nq, d->w16 + c0 * kh * d->nq, &d->q4, c0, nc,
           (uint8_t *)c->y + (img * co + c0) * np, np);
  }
}

/* NHWC: each output row accumulates, per in-image tap, the run of output pixels whose input is
   in the image (rep pixels x c_out channels per call with stride 1 along x, one pixel otherwise),
   then each pixel is stored in one call with per-channel bias and multipliers. Tasks take ranges
   of output rows. */
static void dwl_task_nhwc(void *arg, size_t t) {
  const dlc_exec *c = arg;
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const dwl_data *d = p->algo_data;
  const dlc_lowp_dw_family *f = p->kernels->lowp_dw;
  const size_t es = d->q8 ? 1 : 2, C = (size_t)s->c_out, wo = (size_t)s->w_out, ho = (size_t)s->h_out;
  const int64_t sw = s->stride_w;
  const int is_signed = p->dtype == DLCONV_S8;
  char *acc = c->ws + t * d->row_bytes;
  size_t begin, end;
  dlc_split_range((size_t)s->n * ho, d->ntasks, t, &begin, &end);
  for (size_t r = begin; r < end; r++) {
    const size_t img = r / ho, oy = r % ho;
    memset(acc, 0, wo * C * 4);
    for (int64_t ky = 0; ky < s->k_h; ky++) {
      const int64_t iy = (int64_t)oy * s->stride_h - s->pad_t + ky * s->dil_h;
      if (iy < 0 || iy >= s->h_in) continue;
      const char *xrow = (const char *)c->x + (img * (size_t)s->h_in + (size_t)iy) * (size_t)s->w_in * C * es;
      for (int64_t kx = 0; kx < s->k_w; kx++) {
        const int64_t off = kx * s->dil_w - s->pad_l;
        size_t lo, hi;
        tap_columns(s, off, &lo, &hi);
        const size_t tap = (size_t)(ky * s->k_w + kx);
        for (size_t ox = lo; ox < hi; ox += d->rep) {
          const size_t n = DLC_MIN(d->rep, hi - ox) * C;
          const char *xs = xrow + (size_t)((int64_t)ox * sw + off) * C * es;
          if (d->q8)
            f->q8_ch(n, xs, d->wq + tap * d->rep * C, p->q8.x_zero_point, is_signed, (int32_t *)acc + ox * C);
          else
            f->f16_ch(n, (const uint16_t *)xs, d->wf + tap * d->rep * C, (float *)acc + ox * C);
        }
      }
    }
    for (size_t ox = 0; ox < wo; ox++) {
      char *yp = (char *)c->y + (r * wo + ox) * C * es;
      if (d->q8)
        p->kernels->q8_gemm->store(C, (const int32_t *)acc + ox * C, &p->q8, 0, 1, yp);
      else
        p->kernels->f16_gemm->store(C, (const float *)acc + ox * C, p->bias, 0, 1, s->out_min, s->out_max,
                                    (uint16_t *)yp);
    }
  }
}

/* NCHW, wide mode: per (image, channel) plane, widen the input plane (once per input channel),
   run the fp32 kernel over the whole plane with no bias or clamp, then store. */
static void dwl_task_wide(void *arg, size_t t) {
  const dlc_exec *c = arg;
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const dwl_data *d = p->algo_data;
  const dlc_lowp_dw_family *f = p->kernels->lowp_dw;
  const size_t es = d->q8 ? 1 : 2, taps = (size_t)(s->k_h * s->k_w);
  const size_t plane_in = (size_t)(s->h_in * s->w_in), plane_out = (size_t)(s->h_out * s->w_out);
  const size_t nrg = dlc_direct_dwp_row_groups(p);
  const int is_signed = p->dtype == DLCONV_S8;
  float *xf = (float *)(c->ws + t * (d->xf_bytes + d->yf_bytes));
  float *yf = (float *)((char *)xf + d->xf_bytes);
  size_t begin, end;
  dlc_split_range((size_t)(s->n * s->c_out), d->ntasks, t, &begin, &end);
  size_t widened = SIZE_MAX; /* the (image, input channel) now in xf */
  for (size_t pl = begin; pl < end; pl++) {
    const size_t img = pl / (size_t)s->c_out, oc = pl % (size_t)s->c_out;
    const size_t xc = img * (size_t)s->c_in + oc / (size_t)s->cout_g; /* depth multiplier cout_g */
    const char *xp = (const char *)c->x + xc * plane_in * es;
    char *yp = (char *)c->y + pl * plane_out * es;
    if (widened != xc) {
      widened = xc;
      if (d->q8)
        f->q8_widen(plane_in, xp, p->q8.x_zero_point, is_signed, xf);
      else
        f->f16_widen(plane_in, (const uint16_t *)xp, xf);
    }
    dlc_direct_dwp_run(p, xf, d->wf + oc * taps, 0.0f, -INFINITY, INFINITY, yf, 0, nrg);
    if (!d->q8) {
      p->kernels->f16_gemm->store(plane_out, yf, p->bias, oc, 0, s->out_min, s->out_max, (uint16_t *)yp);
      continue;
    }
    /* the sums are integers held exactly (see the top): to s32 a chunk at a time for the store */
    int32_t acc[1024];
    for (size_t j0 = 0; j0 < plane_out; j0 += 1024) {
      const size_t m = DLC_MIN((size_t)1024, plane_out - j0);
      for (size_t j = 0; j < m; j++) acc[j] = (int32_t)yf[j0 + j];
      p->kernels->q8_gemm->store(m, acc, &p->q8, oc, 0, yp + j0);
    }
  }
}

/* Padded bands: the band's input rows copied with their padding, then every tile strided in the
   copy. A tile with a padding tap through the pointers had cost as much as its products again
   (building a pointer per tap and pixel), and on rows of 32 or fewer every row has two such tiles
   (WRN-40-2 32 x 32 x 32: half the tiles). The copy is one pass over the band's input. */
static void dwn_bands(const dlc_exec *c, size_t t, size_t begin, size_t end) {
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const dwl_data *d = p->algo_data;
  const dlc_q8_dwn_family *f = p->kernels->q8_dwn;
  const size_t co = (size_t)s->c_out, ho = (size_t)s->h_out, wo = (size_t)s->w_out, wi = (size_t)s->w_in;
  const size_t kh = (size_t)s->k_h, kw = (size_t)s->k_w, prow = d->pw * co;
  const size_t nt = dlc_div_up(wo, dwn_mr(f, co)); /* tiles per row */
  const ptrdiff_t pstep = (ptrdiff_t)((size_t)s->stride_w * co);
  uint8_t *ws = (uint8_t *)c->ws + t * d->band_bytes;
  const uint8_t zp = d->ind.zp;
  /* a padded row: pl pixels of padding, nin pixels of x, the rest padding */
  const size_t pl = (size_t)DLC_MIN(s->pad_l, (int64_t)d->pw);
  const size_t nin = DLC_MIN(wi, d->pw - pl), pr = d->pw - pl - nin;
  const uint8_t *tap[DLC_IND_MAX_TAPS];
  for (size_t r = begin; r < end;) {
    const size_t img = r / ho, oy0 = r % ho;
    const size_t nb = DLC_MIN(d->band, DLC_MIN(ho - oy0, end - r));
    const int64_t iy0 = (int64_t)oy0 * s->stride_h - s->pad_t;
    const size_t rows_in = (nb - 1) * (size_t)s->stride_h + (kh - 1) * (size_t)s->dil_h + 1;
    const uint8_t *xi = (const uint8_t *)c->x + img * (size_t)s->h_in * wi * co;
    for (size_t j = 0; j < rows_in; j++) {
      const int64_t iy = iy0 + (int64_t)j;
      const int in = iy >= 0 && iy < s->h_in;
      dlc_ind_pad_row(ws + j * prow, in ? xi + (size_t)iy * wi * co : NULL, pl, nin, pr, co, zp);
    }
    for (size_t b = 0; b < nb; b++) {
      const uint8_t *row = ws + b * (size_t)s->stride_h * prow;
      uint8_t *yr = (uint8_t *)c->y + (r + b) * wo * co;
      for (size_t tt = 0; tt < nt; tt++) {
        const size_t ox0 = tt * wo / nt, m = (tt + 1) * wo / nt - ox0;
        const uint8_t *o = row + ox0 * (size_t)s->stride_w * co;
        for (size_t ky = 0; ky < kh; ky++)
          for (size_t kx = 0; kx < kw; kx++)
            tap[ky * kw + kx] = o + ky * (size_t)s->dil_h * prow + kx * (size_t)s->dil_w * co;
        f->run_s(m, co, kh * kw, tap, pstep, d->wn, d->flip, &d->q4, &d->ql, yr + ox0 * co, co);
      }
    }
    r += nb;
  }
}

/* int8 NHWC in registers, tiles within an output row: one along a row of x inside the image goes to run_s with a pointer
   per tap (most of them), the others to run with a pointer per tap and pixel. (Cutting a row at its padded ends, so
   that only those pixels take the pointers, made more calls than it saved: no faster on rows of 32, 5 to 15 %
   slower on rows of 16 and 8.) */
static void dwl_task_dwn(void *arg, size_t t) {
  const dlc_exec *c = arg;
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const dwl_data *d = p->algo_data;
  const dlc_q8_dwn_family *f = p->kernels->q8_dwn;
  const size_t co = (size_t)s->c_out, ho = (size_t)s->h_out, wo = (size_t)s->w_out, kh = (size_t)s->k_h;
  const size_t nt = dlc_div_up(wo, dwn_mr(f, co)); /* tiles per row */
  const uint8_t *ind[DLC_IND_MAX_TAPS * DLC_LOWP_MR_MAX];
  size_t begin, end;
  dlc_split_range((size_t)s->n * ho, d->ntasks, t, &begin, &end);
  if (d->band) {
    dwn_bands(c, t, begin, end);
    return;
  }
  for (size_t r = begin; r < end; r++) {
    const size_t img = r / ho, oy = r % ho;
    for (size_t tt = 0; tt < nt; tt++) {
      const size_t ox0 = tt * wo / nt, m = (tt + 1) * wo / nt - ox0;
      uint8_t *y = (uint8_t *)c->y + (r * wo + ox0) * co;
      ptrdiff_t pstep;
      if (f->run_s && dlc_nhwc_ind_strided_row(&d->ind, s, c->x, 0, img, oy, ox0, m, 0, kh, ind, &pstep)) {
        f->run_s(m, co, d->ind.ntaps, ind, pstep, d->wn, d->flip, &d->q4, &d->ql, y, co);
        continue;
      }
      dlc_nhwc_ind_build(&d->ind, s, c->x, 0, r * wo + ox0, m, ind, NULL);
      f->run(m, co, d->ind.ntaps, ind, d->wn, d->flip, &d->q4, &d->ql, y, co);
    }
  }
}

/* NCHW F16 on the fp32 kernel's binary16 variant: per (image, channel) plane, one call over all
   its row groups, x widened and y rounded in registers. */
static void dwl_task_half(void *arg, size_t t) {
  const dlc_exec *c = arg;
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const dwl_data *d = p->algo_data;
  const size_t taps = (size_t)(s->k_h * s->k_w), nrg = dlc_direct_dwp_row_groups(p);
  const size_t plane_in = (size_t)(s->h_in * s->w_in), plane_out = (size_t)(s->h_out * s->w_out);
  size_t begin, end;
  dlc_split_range((size_t)(s->n * s->c_out), d->ntasks, t, &begin, &end);
  for (size_t pl = begin; pl < end; pl++) {
    const size_t img = pl / (size_t)s->c_out, oc = pl % (size_t)s->c_out;
    const size_t xc = img * (size_t)s->c_in + oc / (size_t)s->cout_g;
    dlc_direct_dwp_run_f16(p, (const uint16_t *)c->x + xc * plane_in, d->wf + oc * taps, p->bias[oc], s->out_min,
                           s->out_max, (uint16_t *)c->y + pl * plane_out, 0, nrg);
  }
}

static void dwl_execute(const dlconv_plan *p, const void *x, void *y, void *workspace) {
  const dwl_data *d = p->algo_data;
  dlc_exec_tasks(p, d->ntasks,
                   d->dwn   ? dwl_task_dwn
                   : d->dwc ? dwl_task_dwc
                   : d->dw4 ? dwl_task_dw4
                   : d->nhwc ? dwl_task_nhwc
                   : d->half ? dwl_task_half
                   : d->wide ? dwl_task_wide
                             : dwl_task,
                 x, y, workspace);
}

const dlc_impl_ops dlc_direct_lowp_dw_ops = {
    .plan = dwl_plan,
    .execute = dwl_execute,
    .destroy = dwl_destroy,
};
