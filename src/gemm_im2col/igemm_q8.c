/* igemm_q8.c - int8 NHWC convolutions as an indirect GEMM on the q8_igemm family, ISA-independent
 * driver (im2col + GEMM's plan hands them here: gemm_lowp.c).
 *
 * In NHWC the im2col matrix's row for an output pixel is, tap by tap, runs of cin_g input
 * channels that already lie contiguous in x. So instead of gathering and widening them per job
 * (gemm_lowp.c's NHWC path: x - x_zero_point as s16 pairs) or copying x into channel planes
 * (spatial pack), the kernel gets one pointer per (tap, pixel) and reads the bytes in place, four
 * channels at a time as the u8 side of vpdpbusd (XNNPACK's indirect GEMM). Padding taps point at
 * a row of the zero point's byte; the zero point's correction and the bias are the plan's s32 bias
 * (lowp_vpos.h's dlc_q8_d4_params), the accumulators start there, and the kernel requantises its
 * tile into y's rows of channels: x and y are each touched once, nothing is packed per call.
 *
 * Needs cin_g a multiple of 4 (a pixel's quad then never runs into the next pixel or past x), or
 * "row mode" (src/quant/lowp_ind.h, which builds the pointers): first layers of a few channels
 * (3: RGB) with groups 1 and dilation_w 1, whose window row is one run of k_w * c_in bytes of x
 * (21 for a 7 x 7 RGB window): each kernel row is then one tap of ceil(21 / 4) quads, the bytes
 * past the run meeting zero weights, where a quad per (tap, pixel) would read 4 bytes for 3
 * channels 49 times. Runs that cross the image's left or right border, or that would read past
 * the end of x, are copied into the task's scratch with the zero point's byte in the padding.
 * Other layers stay with the callers' other paths.
 *
 * Weights are packed at plan time per group into panels of nr output channels (the last one
 * narrower, rounded to 16), tap-major, then quads of input channels: a panel is read once per
 * tile of mr pixels. Jobs are (group, block of pixels, range of panels); in a job each panel
 * sweeps the block's tiles, so it stays in L1/L2 while the block's rows of x (sized to about
 * 256 KB) stream past it. The indirection pointers of a tile are rebuilt for every panel: a few
 * dozen adds against thousands of dot products. */
#include <stdio.h>
#include <string.h>

#include "../core/kernels.h"
#include "../core/plan.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "../quant/lowp_ind.h"
#include "../quant/lowp_vpos.h"

#define IGEMM_BLOCK_BYTES ((size_t)256 * 1024)
#define IGEMM_MAX_KINDS 16 /* kinds of output row in line mode */
/* A tile's cost beyond its dot products (bias, epilogue, pointers, call), in units of one pixel's
   dot products with one group of four channels of one tap: line mode's extra tiles against the
   kernel rows it skips. */
#define IGEMM_TILE_COST 64

typedef struct igemm_data {
  dlc_nhwc_ind ind;         /* the tiles' pointers (row mode: a tap is a kernel row, see the top) */
  size_t cin, kq;           /* input channels per group, quads per tap */
  size_t mr, nr, panels;    /* panels per group */
  size_t gstride;           /* bytes of a group's packed weights */
  int8_t *wpack;
  dlc_q8_params q4;         /* the requantisation with the zero point's correction in the bias */
  uint8_t flip;
  size_t M, pblock, pblocks, psplit, njobs, ntasks; /* M: pixels, or output rows in line mode */
  /* Line mode: tiles never cross an output row, and the kernel rows of a row's windows that lie
     wholly in the padding are skipped, their zero point's products moved into the bias of the
     row's kind (oneDNN's kernels skip them too; on a 14 x 14 plane they are a tenth of a 3 x 3
     layer's work). */
  int lines;
  size_t tpr, row_tiles;    /* taps per kernel row; tiles per output row */
  size_t nkinds;
  uint8_t *row_kind;        /* h_out: the kind of output row oy */
  size_t kind_ky0[IGEMM_MAX_KINDS], kind_ky1[IGEMM_MAX_KINDS];
  int32_t *kind_bias;       /* nkinds x c_out */
  dlc_q8_params kind_q[IGEMM_MAX_KINDS]; /* q4 with the kind's bias */
} igemm_data;

int dlc_igemm_q8_fits(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k) {
  return (dtype == DLCONV_U8 || dtype == DLCONV_S8) && k && k->q8_igemm && s->layout == DLCONV_NHWC &&
         (s->cin_g % 4 == 0 || dlc_nhwc_ind_row_mode(s)) && s->k_h * s->k_w <= DLC_IND_MAX_TAPS &&
         (size_t)(dlc_round_up((size_t)(s->cin_g * s->k_w), 4) * (size_t)s->k_h) <= DLC_Q8_MAX_K;
}

int dlc_igemm_q8_applies(const dlconv_plan *p) { return dlc_igemm_q8_fits(&p->s, p->dtype, p->kernels); }

static void igemm_free(igemm_data *d) {
  if (!d) return;
  dlc_free(d->wpack);
  dlc_free(d->row_kind);
  dlc_free(d->kind_bias);
  dlc_nhwc_ind_free(&d->ind);
  dlc_q8_d4_params_free(&d->q4);
  dlc_free(d);
}

static void igemm_destroy(dlconv_plan *p) { igemm_free(p->algo_data); }

/* Columns of panel pn of a group: nr, or the rest rounded up to whole vectors of 16. */
static size_t panel_width(const igemm_data *d, size_t cog, size_t pn) {
  return DLC_MIN(d->nr, dlc_round_up(cog - pn * d->nr, 16));
}

/* Line mode where it pays (see igemm_data): the kinds of output row and their biases, bias[oc] +
   zu x the weights of the skipped kernel rows, what their taps at the zero point's row would have
   added. Stays off where a kind's bias leaves s32 (the exact store adds it as it is). Only running
   out of memory fails. */
static dlconv_status plan_lines(igemm_data *d, const dlconv_plan *p, const int8_t *w) {
  const dlc_conv_shape *s = &p->s;
  const size_t ho = (size_t)s->h_out, wo = (size_t)s->w_out, co = (size_t)s->c_out, kh = (size_t)s->k_h;
  const size_t kw = (size_t)s->k_w, cin = d->cin, nt = dlc_div_up(wo, d->mr);
  d->tpr = dlc_nhwc_ind_taps_per_row(&d->ind, s);
  d->row_tiles = nt;
  if (kh < 2 || s->pad_t + s->pad_b == 0) return DLCONV_OK;
  d->row_kind = dlc_malloc(ho);
  if (!d->row_kind) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning im2col_gemm");
  size_t skipped = 0; /* kernel rows skipped over all output rows */
  for (size_t oy = 0; oy < ho; oy++) {
    size_t ky0, ky1, k = 0;
    dlc_nhwc_ind_row_taps(s, oy, &ky0, &ky1);
    skipped += kh - (ky1 - ky0);
    while (k < d->nkinds && (d->kind_ky0[k] != ky0 || d->kind_ky1[k] != ky1)) k++;
    if (k == d->nkinds) {
      if (k == IGEMM_MAX_KINDS) return DLCONV_OK;
      d->kind_ky0[k] = ky0;
      d->kind_ky1[k] = ky1;
      d->nkinds++;
    }
    d->row_kind[oy] = (uint8_t)k;
  }
  /* per image: the dot products the skipped rows save against the extra tiles */
  const size_t saved = skipped * wo * d->tpr * d->kq;
  const size_t extra = ho * nt > dlc_div_up(ho * wo, d->mr) ? ho * nt - dlc_div_up(ho * wo, d->mr) : 0;
  if (saved <= extra * IGEMM_TILE_COST) return DLCONV_OK;
  d->kind_bias = dlc_malloc(d->nkinds * co * sizeof(int32_t));
  if (!d->kind_bias) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning im2col_gemm");
  const int64_t zu = dlc_q8_d4_zu(p);
  for (size_t k = 0; k < d->nkinds; k++)
    for (size_t oc = 0; oc < co; oc++) {
      int64_t sum = 0;
      for (size_t ky = 0; ky < kh; ky++)
        if (ky < d->kind_ky0[k] || ky >= d->kind_ky1[k])
          for (size_t ic = 0; ic < cin; ic++)
            for (size_t kx = 0; kx < kw; kx++) sum += w[((oc * cin + ic) * kh + ky) * kw + kx];
      const int64_t b = (int64_t)d->q4.bias[oc] + zu * sum;
      if (b < INT32_MIN || b > INT32_MAX) return DLCONV_OK;
      d->kind_bias[k * co + oc] = (int32_t)b;
    }
  for (size_t k = 0; k < d->nkinds; k++) {
    d->kind_q[k] = d->q4;
    d->kind_q[k].bias = d->kind_bias + k * co;
  }
  d->lines = 1;
  return DLCONV_OK;
}

static dlconv_status igemm_plan(dlconv_plan *p, const void *w) {
  const dlc_conv_shape *s = &p->s;
  const dlc_q8_igemm_family *f = p->kernels->q8_igemm;
  igemm_data *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning im2col_gemm");
  int ok;
  const dlconv_status st = dlc_q8_d4_params(p, w, &d->q4, &ok);
  if (st != DLCONV_OK || !ok) {
    igemm_free(d);
    return st != DLCONV_OK ? st : dlc_fail(DLCONV_ERR_UNSUPPORTED, "int8 indirect gemm: a bias with the zero "
                                                                   "point's correction leaves s32");
  }
  const size_t cog = (size_t)s->cout_g, G = (size_t)s->groups;
  const size_t kw = (size_t)s->k_w, khw = (size_t)(s->k_h * s->k_w);
  const int rows = dlc_nhwc_ind_row_mode(s);
  d->cin = (size_t)s->cin_g;
  d->kq = dlc_div_up(rows ? kw * d->cin : d->cin, 4);
  d->mr = f->mr;
  d->nr = f->nr;
  d->panels = dlc_div_up(cog, d->nr);
  const size_t ntaps = rows ? (size_t)s->k_h : khw, tap_units = ntaps * d->kq * 4; /* a column's bytes in a panel */
  d->gstride = dlc_round_up(cog, 16) * tap_units;
  d->flip = dlc_q8_d4_flip(p);
  d->wpack = dlc_calloc(G * d->gstride);
  if (!d->wpack || dlc_nhwc_ind_init(&d->ind, p, rows, d->kq * 4, d->mr) != DLCONV_OK) {
    igemm_free(d);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory packing im2col_gemm weights");
  }
  const int8_t *wi = w;
  for (size_t g = 0; g < G; g++)
    for (size_t oc = 0; oc < cog; oc++) {
      const size_t pn = oc / d->nr, j = oc % d->nr, nw = panel_width(d, cog, pn);
      int8_t *panel = d->wpack + g * d->gstride + pn * d->nr * tap_units;
      const int8_t *row = wi + (g * cog + oc) * d->cin * khw; /* OIHW: (ic, ky, kx) */
      for (size_t ic = 0; ic < d->cin; ic++)
        for (size_t r = 0; r < khw; r++) {
          /* tap t, byte k of its run: (ky, kx) and ic, or in row mode ky and kx * cin + ic */
          const size_t t = rows ? r / kw : r, k = rows ? r % kw * d->cin + ic : ic;
          panel[((t * d->kq + k / 4) * nw + j) * 4 + k % 4] = row[ic * khw + r];
        }
    }

  const dlconv_status stl = plan_lines(d, p, w);
  if (stl != DLCONV_OK) {
    igemm_free(d);
    return stl;
  }

  /* blocks of pixels (line mode: of output rows) whose rows of x stay in L2 while every panel
     sweeps them */
  const size_t unit = d->lines ? (size_t)s->w_out : 1, grain = d->lines ? 1 : d->mr;
  d->M = (size_t)s->n * (size_t)(s->h_out * s->w_out) / unit;
  const size_t per_unit = (size_t)(s->c_in * s->stride_h * s->stride_w) * unit;
  d->pblock = dlc_balanced_block(d->M, DLC_MAX(grain, IGEMM_BLOCK_BYTES / per_unit), grain);
  d->pblocks = dlc_div_up(d->M, d->pblock);
  /* too few jobs for the threads: split the panels first (a small plane's few tiles divide
     unevenly), then the pixels */
  const size_t want = (size_t)p->nthreads;
  d->psplit = 1;
  if (G * d->pblocks < want) d->psplit = DLC_MIN(d->panels, dlc_div_up(want, G * d->pblocks));
  if (G * d->pblocks * d->psplit < want) {
    d->pblock = dlc_balanced_block(d->M, DLC_MAX(grain, dlc_div_up(d->M, dlc_div_up(want, G * d->psplit))), grain);
    d->pblocks = dlc_div_up(d->M, d->pblock);
  }
  d->njobs = G * d->pblocks * d->psplit;
  d->ntasks = DLC_MIN(want, d->njobs);
  p->algo_data = d;
  p->packed_weight_bytes = G * d->gstride;
  p->workspace_bytes = 0;
  snprintf(p->kernel, sizeof p->kernel, "%s", f->name);
  return DLCONV_OK;
}

typedef struct igemm_ctx {
  const dlconv_plan *p;
  const igemm_data *d;
  const uint8_t *x;
  uint8_t *y;
} igemm_ctx;

/* Output rows [r0, r1) of the n x h_out, one panel of group g (n columns from channel c0). */
static void lines_panel(const igemm_ctx *c, size_t g, size_t c0, size_t n, const int8_t *wp, size_t r0, size_t r1,
                        const uint8_t **ind, uint8_t *scratch) {
  const igemm_data *d = c->d;
  const dlc_conv_shape *s = &c->p->s;
  const dlc_q8_igemm_family *f = c->p->kernels->q8_igemm;
  const size_t ho = (size_t)s->h_out, wo = (size_t)s->w_out, co = (size_t)s->c_out, nt = d->row_tiles;
  const size_t tap_bytes = d->kq * 4 * dlc_round_up(n, 16); /* one tap of the panel */
  for (size_t r = r0; r < r1; r++) {
    const size_t img = r / ho, oy = r % ho, k = d->row_kind[oy];
    const size_t ky0 = d->kind_ky0[k], ky1 = d->kind_ky1[k];
    const int8_t *wk = wp + ky0 * d->tpr * tap_bytes;
    for (size_t tt = 0; tt < nt; tt++) {
      const size_t ox0 = tt * wo / nt, m = (tt + 1) * wo / nt - ox0;
      uint8_t *y = c->y + (r * wo + ox0) * co + c0;
      ptrdiff_t pstep;
      if (f->ukernel_s && dlc_nhwc_ind_strided_row(&d->ind, s, c->x, g, img, oy, ox0, m, ky0, ky1, ind, &pstep)) {
        f->ukernel_s(m, n, (ky1 - ky0) * d->tpr, d->kq, ind, pstep, wk, d->flip, &d->kind_q[k], c0, y, co);
        continue;
      }
      dlc_nhwc_ind_build_row(&d->ind, s, c->x, g, img, oy, ox0, m, ky0, ky1, ind, scratch);
      f->ukernel(m, n, (ky1 - ky0) * d->tpr, d->kq, ind, wk, d->flip, &d->kind_q[k], c0, y, co);
    }
  }
}

static void igemm_task(void *arg, size_t t) {
  const igemm_ctx *c = arg;
  const igemm_data *d = c->d;
  const dlc_conv_shape *s = &c->p->s;
  const dlc_q8_igemm_family *f = c->p->kernels->q8_igemm;
  const size_t cog = (size_t)s->cout_g, co = (size_t)s->c_out;
  const uint8_t *ind[DLC_IND_MAX_TAPS * DLC_LOWP_MR_MAX];
  uint8_t scratch[DLC_IND_SCRATCH_BYTES]; /* row mode's copied runs */
  size_t begin, end;
  dlc_split_range(d->njobs, d->ntasks, t, &begin, &end);
  for (size_t j = begin; j < end; j++) {
    const size_t ps = j % d->psplit, pb = j / d->psplit % d->pblocks, g = j / d->psplit / d->pblocks;
    size_t pn0, pn1;
    dlc_split_range(d->panels, d->psplit, ps, &pn0, &pn1);
    const size_t q_begin = pb * d->pblock, q_end = DLC_MIN(d->M, q_begin + d->pblock);
    for (size_t pn = pn0; pn < pn1; pn++) {
      const size_t n0 = pn * d->nr, n = DLC_MIN(d->nr, cog - n0), c0 = g * cog + n0;
      const int8_t *wp = d->wpack + g * d->gstride + n0 * d->ind.ntaps * d->kq * 4;
      if (d->lines) {
        lines_panel(c, g, c0, n, wp, q_begin, q_end, ind, scratch);
        continue;
      }
      for (size_t q0 = q_begin; q0 < q_end; q0 += d->mr) {
        const size_t m = DLC_MIN(d->mr, q_end - q0);
        uint8_t *y = c->y + q0 * co + c0;
        ptrdiff_t pstep;
        if (f->ukernel_s && dlc_nhwc_ind_strided(&d->ind, s, c->x, g, q0, m, ind, &pstep)) {
          f->ukernel_s(m, n, d->ind.ntaps, d->kq, ind, pstep, wp, d->flip, &d->q4, c0, y, co);
          continue;
        }
        dlc_nhwc_ind_build(&d->ind, s, c->x, g, q0, m, ind, scratch);
        f->ukernel(m, n, d->ind.ntaps, d->kq, ind, wp, d->flip, &d->q4, c0, y, co);
      }
    }
  }
}

static void igemm_execute(const dlconv_plan *p, const void *x, void *y, void *workspace) {
  (void)workspace;
  const igemm_data *d = p->algo_data;
  igemm_ctx c = {p, d, x, y};
  dlc_parallel_for(p, d->ntasks, igemm_task, &c);
}

const dlc_algo_ops dlc_igemm_q8_ops = {
    .algo = DLCONV_ALGO_IM2COL_GEMM,
    .name = "im2col_gemm",
    .destroy = igemm_destroy,
    .plan_lowp = igemm_plan,
    .execute_lowp = igemm_execute,
};
