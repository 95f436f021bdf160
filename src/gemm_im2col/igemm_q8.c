/* igemm_q8.c - int8 NHWC convolutions as an indirect GEMM on the q8_igemm family, ISA-independent
 * driver: an entry of im2col + GEMM ahead of gemm_lowp.c in the implementation list.
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
 * dozen adds against thousands of dot products; a tile whose pixels lie evenly spaced in x (along
 * a row inside the image, or a 1 x 1 layer's) takes ukernel_s and a pointer per tap instead.
 *
 * Where padding rows cost more than the extra tiles, line mode (igemm_data) keeps tiles within an
 * output row and skips the kernel rows and columns wholly in the padding, as oneDNN's kernels do:
 * the zero point's products they would have added go into a bias per kind of row or column. */
#include <stdio.h>
#include <string.h>

#include "../ukernel/config.h"
#include "../core/plan.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "../direct/lowp_vpos.h"
#include "gemm.h"
#include "lowp_ind.h"

#define IGEMM_BLOCK_BYTES ((size_t)256 * 1024)
#define IGEMM_MAX_KINDS 16 /* kinds of output row in line mode */
#define IGEMM_MAX_BORDER 8 /* border columns in line mode */
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
  size_t tpr;               /* taps per kernel row */
  size_t nkinds;
  uint8_t *row_kind;        /* h_out: the kind of output row oy */
  size_t kind_ky0[IGEMM_MAX_KINDS], kind_ky1[IGEMM_MAX_KINDS];
  int32_t *kind_bias;       /* nkinds x c_out */
  dlc_q8_params kind_q[IGEMM_MAX_KINDS]; /* q4 with the kind's bias */
  /* Border columns (line mode, not row mode): the output columns at the left and right whose
     windows have kernel columns in the padding. In rows of the full kind they are not in their
     row's tiles but in tiles of up to mr consecutive rows of one column, which skip those kernel
     columns: with their own weights (the taps of the column's kernel columns only, packed as
     wpack) and bias. A 28 x 28 3 x 3 layer's border columns are 1/14 of its pixels, a third of
     their taps padding. */
  size_t nborder, full_kind; /* border columns; the kind of the rows they leave */
  size_t left;               /* border columns at the left: border column b is output column b
                                for b < left, w_out - nborder + b after */
  size_t col_kx0[IGEMM_MAX_BORDER], col_kx1[IGEMM_MAX_BORDER];
  size_t col_gstride[IGEMM_MAX_BORDER];
  int8_t *col_wpack[IGEMM_MAX_BORDER];
  int32_t *col_bias;         /* nborder x c_out */
  dlc_q8_params col_q[IGEMM_MAX_BORDER];
  /* Padded rows (row mode outside line mode): per output row, its k_h windows' rows of x copied
     with their padding into the task's workspace, pw pixels each, prow bytes apart (ws_bytes a
     task), and every tile of the row strided in the copy (see padded_rows) */
  size_t pw, prow, ws_bytes;
} igemm_data;

int dlc_igemm_q8_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k) {
  return (dtype == DLCONV_U8 || dtype == DLCONV_S8) && k && k->q8_igemm && s->layout == DLCONV_NHWC &&
         (s->cin_g % 4 == 0 || dlc_nhwc_ind_row_mode(s)) && s->k_h * s->k_w <= DLC_IND_MAX_TAPS &&
         (size_t)(dlc_round_up((size_t)(s->cin_g * s->k_w), 4) * (size_t)s->k_h) <= DLC_Q8_MAX_K;
}

static void igemm_free(igemm_data *d) {
  if (!d) return;
  dlc_free(d->wpack);
  dlc_free(d->row_kind);
  dlc_free(d->kind_bias);
  for (size_t b = 0; b < IGEMM_MAX_BORDER; b++) dlc_free(d->col_wpack[b]);
  dlc_free(d->col_bias);
  dlc_nhwc_ind_free(&d->ind);
  dlc_q8_d4_params_free(&d->q4);
  dlc_free(d);
}

static void igemm_destroy(dlconv_plan *p) { igemm_free(p->algo_data); }

/* Columns of panel pn of a group: nr, or the rest rounded up to whole vectors of 16. */
static size_t panel_width(const igemm_data *d, size_t cog, size_t pn) {
  return DLC_MIN(d->nr, dlc_round_up(cog - pn * d->nr, 16));
}

/* Packs the weights of the taps (ky, kx), ky < k_h, kx0 <= kx < kx1 (not row mode) as panels of nr
   columns, tap-major, then quads of input channels, per group gstride bytes apart (see the top). */
static void pack_taps(const igemm_data *d, const dlconv_plan *p, const int8_t *w, size_t kx0, size_t kx1,
                      size_t gstride, int8_t *dst) {
  const dlc_conv_shape *s = &p->s;
  const size_t cog = (size_t)s->cout_g, G = (size_t)s->groups, kw = (size_t)s->k_w;
  const size_t khw = (size_t)(s->k_h * s->k_w), tw = kx1 - kx0, tap_units = (size_t)s->k_h * tw * d->kq * 4;
  for (size_t g = 0; g < G; g++)
    for (size_t oc = 0; oc < cog; oc++) {
      const size_t pn = oc / d->nr, j = oc % d->nr, nw = panel_width(d, cog, pn);
      int8_t *panel = dst + g * gstride + pn * d->nr * tap_units;
      const int8_t *row = w + (g * cog + oc) * d->cin * khw; /* OIHW: (ic, ky, kx) */
      for (size_t ic = 0; ic < d->cin; ic++)
        for (size_t r = 0; r < khw; r++) {
          const size_t kx = r % kw;
          if (kx < kx0 || kx >= kx1) continue;
          const size_t t = r / kw * tw + (kx - kx0);
          panel[((t * d->kq + ic / 4) * nw + j) * 4 + ic % 4] = row[ic * khw + r];
        }
    }
}

/* Line mode's border columns (see igemm_data), where the layer has them, not in row mode, and
   rows of the full kind to take them from. Stays off where a bias leaves s32 or there are more
   than IGEMM_MAX_BORDER of them. Only running out of memory fails. */
static dlconv_status plan_columns(igemm_data *d, const dlconv_plan *p, const int8_t *w) {
  const dlc_conv_shape *s = &p->s;
  const size_t wo = (size_t)s->w_out, kw = (size_t)s->k_w, kh = (size_t)s->k_h, co = (size_t)s->c_out;
  const size_t cin = d->cin, G = (size_t)s->groups, cog = (size_t)s->cout_g;
  if (d->ind.rows || kw < 2 || s->pad_l + s->pad_r == 0) return DLCONV_OK;
  size_t full = 0;
  while (full < d->nkinds && (d->kind_ky0[full] != 0 || d->kind_ky1[full] != kh)) full++;
  if (full == d->nkinds) return DLCONV_OK;
  /* the kernel columns [kx0, kx1) of output column ox inside the image */
  size_t kx0[IGEMM_MAX_BORDER + 1], kx1[IGEMM_MAX_BORDER + 1], nb = 0, left = 0;
  for (int side = 0; side < 2; side++)
    for (size_t j = 0; j < wo; j++) {
      const size_t ox = side ? wo - 1 - j : j;
      const int64_t ix0 = (int64_t)ox * s->stride_w - s->pad_l;
      int64_t a = 0, b = s->k_w;
      while (a < b && ix0 + a * s->dil_w < 0) a++;
      while (b > a && ix0 + (b - 1) * s->dil_w >= s->w_in) b--;
      if (a == 0 && b == s->k_w) break;
      if (a == b || nb == IGEMM_MAX_BORDER) return DLCONV_OK; /* a window wholly in the padding: not worth it */
      kx0[nb] = (size_t)a, kx1[nb] = (size_t)b, nb++;
      if (!side) left = nb;
    }
  if (nb == 0 || nb >= wo) return DLCONV_OK;
  /* right border columns in increasing ox */
  for (size_t i = left, j = nb - 1; i < j; i++, j--) {
    size_t t;
    t = kx0[i], kx0[i] = kx0[j], kx0[j] = t;
    t = kx1[i], kx1[i] = kx1[j], kx1[j] = t;
  }
  d->col_bias = dlc_malloc(nb * co * sizeof(int32_t));
  if (!d->col_bias) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning im2col_gemm");
  const int64_t zu = dlc_q8_d4_zu(p);
  for (size_t b = 0; b < nb; b++)
    for (size_t oc = 0; oc < co; oc++) {
      int64_t sum = 0;
      for (size_t ic = 0; ic < cin; ic++)
        for (size_t ky = 0; ky < kh; ky++)
          for (size_t kx = 0; kx < kw; kx++)
            if (kx < kx0[b] || kx >= kx1[b]) sum += w[((oc * cin + ic) * kh + ky) * kw + kx];
      const int64_t v = (int64_t)d->q4.bias[oc] + zu * sum;
      if (v < INT32_MIN || v > INT32_MAX) return DLCONV_OK;
      d->col_bias[b * co + oc] = (int32_t)v;
    }
  for (size_t b = 0; b < nb; b++) {
    d->col_gstride[b] = dlc_round_up(cog, 16) * kh * (kx1[b] - kx0[b]) * d->kq * 4;
    d->col_wpack[b] = dlc_calloc(G * d->col_gstride[b]);
    if (!d->col_wpack[b]) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory packing im2col_gemm weights");
    pack_taps(d, p, w, kx0[b], kx1[b], d->col_gstride[b], d->col_wpack[b]);
    d->col_kx0[b] = kx0[b], d->col_kx1[b] = kx1[b];
    d->col_q[b] = d->q4;
    d->col_q[b].bias = d->col_bias + b * co;
  }
  d->full_kind = full;
  d->left = left;
  d->nborder = nb;
  return DLCONV_OK;
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
  return plan_columns(d, p, w);
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
  for (size_t b = 0; b < d->nborder; b++) p->packed_weight_bytes += G * d->col_gstride[b]; /* border columns' taps */
  p->workspace_bytes = 0;
  if (rows && !d->lines && f->ukernel_s && (s->pad_t | s->pad_b | s->pad_l | s->pad_r)) {
    d->pw = (size_t)((s->w_out - 1) * s->stride_w + s->k_w); /* dilation_w 1 in row mode */
    d->prow = d->pw * d->cin;
    /* the last run of the last row reads kq * 4 bytes from its start */
    d->ws_bytes = dlc_round_up((size_t)s->k_h * d->prow + d->kq * 4, 64);
    p->workspace_bytes = d->ntasks * d->ws_bytes;
  }
  p->exec_tasks = d->ntasks;
  snprintf(p->kernel, sizeof p->kernel, "%s", f->name);
  return DLCONV_OK;
}

/* Rows of a tile through ukernel_s for a panel of n columns: taller where the family has room for
   them (its accumulators for a narrow panel). */
static size_t tile_rows_s(const igemm_data *d, const dlc_q8_igemm_family *f, size_t n) {
  return f->ukernel_s && n <= d->nr / 2 && f->mr_s_narrow > d->mr ? f->mr_s_narrow : d->mr;
}

/* The tiles of border column b over the rows of the full kind in [r0, r1): runs of up to mr
   consecutive rows of one image, their windows pstep = stride_h rows of x apart. */
static void border_column(const dlc_exec *c, size_t b, size_t g, size_t c0, size_t n, size_t n0, size_t r0, size_t r1,
                          const uint8_t **tap) {
  const igemm_data *d = c->p->algo_data;
  const dlc_conv_shape *s = &c->p->s;
  const dlc_q8_igemm_family *f = c->p->kernels->q8_igemm;
  const size_t ho = (size_t)s->h_out, wo = (size_t)s->w_out, co = (size_t)s->c_out, cin_all = (size_t)s->c_in;
  const size_t kw = (size_t)s->k_w, kh = (size_t)s->k_h, kx0 = d->col_kx0[b], kx1 = d->col_kx1[b];
  const size_t ntaps = kh * (kx1 - kx0), ox = b < d->left ? b : wo - d->nborder + b;
  const size_t img_bytes = (size_t)(s->h_in * s->w_in) * cin_all;
  const ptrdiff_t pstep = (ptrdiff_t)((size_t)s->stride_h * (size_t)s->w_in * cin_all);
  const int8_t *wb = d->col_wpack[b] + g * d->col_gstride[b] + n0 * ntaps * d->kq * 4;
  for (size_t r = r0; r < r1;) {
    if (d->row_kind[r % ho] != d->full_kind) {
      r++;
      continue;
    }
    size_t m = 1;
    /* (a run cannot reach into the next image: a layer whose first and last rows are of the full
       kind has only that kind, and no line mode) */
    while (m < d->mr && r + m < r1 && (r + m) % ho != 0 && d->row_kind[(r + m) % ho] == d->full_kind) m++;
    const size_t img = r / ho, oy = r % ho;
    const int64_t iy0 = (int64_t)oy * s->stride_h - s->pad_t, ix0 = (int64_t)ox * s->stride_w - s->pad_l;
    const uint8_t *base = (const uint8_t *)c->x + img * img_bytes + g * d->cin;
    const ptrdiff_t o = (ptrdiff_t)(iy0 * s->w_in + ix0) * (ptrdiff_t)cin_all;
    for (size_t ky = 0, j = 0; ky < kh; ky++)
      for (size_t kx = kx0; kx < kx1; kx++, j++) tap[j] = base + (o + d->ind.toff[ky * kw + kx]);
    f->ukernel_s(m, n, ntaps, d->kq, tap, pstep, wb, d->flip, &d->col_q[b], c0, (uint8_t *)c->y + (r * wo + ox) * co + c0,
                 wo * co);
    r += m;
  }
}

/* Output rows [r0, r1) of the n x h_out, one panel of group g (n columns from channel c0, n0 in
   the group). */
static void lines_panel(const dlc_exec *c, size_t g, size_t c0, size_t n, size_t n0, const int8_t *wp, size_t r0,
                        size_t r1, const uint8_t **ind, uint8_t *scratch) {
  const igemm_data *d = c->p->algo_data;
  const dlc_conv_shape *s = &c->p->s;
  const dlc_q8_igemm_family *f = c->p->kernels->q8_igemm;
  const size_t ho = (size_t)s->h_out, wo = (size_t)s->w_out, co = (size_t)s->c_out;
  const size_t tap_bytes = d->kq * 4 * dlc_round_up(n, 16); /* one tap of the panel */
  const size_t mr_s = tile_rows_s(d, f, n);
  for (size_t r = r0; r < r1; r++) {
    const size_t img = r / ho, oy = r % ho, k = d->row_kind[oy];
    const size_t ky0 = d->kind_ky0[k], ky1 = d->kind_ky1[k];
    const int8_t *wk = wp + ky0 * d->tpr * tap_bytes;
    /* the row's columns in its tiles: all, or between the border columns */
    const int cols = d->nborder && k == d->full_kind;
    const size_t lo = cols ? d->left : 0, hi = cols ? wo - (d->nborder - d->left) : wo;
    const size_t nt = dlc_div_up(hi - lo, mr_s);
    for (size_t tt = 0; tt < nt; tt++) {
      const size_t ox0 = lo + tt * (hi - lo) / nt, m = lo + (tt + 1) * (hi - lo) / nt - ox0;
      uint8_t *y = (uint8_t *)c->y + (r * wo + ox0) * co + c0;
      ptrdiff_t pstep;
      if (f->ukernel_s && dlc_nhwc_ind_strided_row(&d->ind, s, c->x, g, img, oy, ox0, m, ky0, ky1, ind, &pstep)) {
        f->ukernel_s(m, n, (ky1 - ky0) * d->tpr, d->kq, ind, pstep, wk, d->flip, &d->kind_q[k], c0, y, co);
        continue;
      }
      for (size_t i = 0; i < m; i += d->mr) { /* a tall tile through ukernel's mr rows at a time */
        const size_t mi = DLC_MIN(d->mr, m - i);
        dlc_nhwc_ind_build_row(&d->ind, s, c->x, g, img, oy, ox0 + i, mi, ky0, ky1, ind, scratch);
        f->ukernel(mi, n, (ky1 - ky0) * d->tpr, d->kq, ind, wk, d->flip, &d->kind_q[k], c0, y + i * co, co);
      }
    }
  }
  for (size_t b = 0; b < d->nborder; b++) border_column(c, b, g, c0, n, n0, r0, r1, ind);
}

/* Row mode's padded rows: per output row (or the part of one in [q_begin, q_end)), the k_h rows of
   x its windows read, copied with the zero point's byte as padding (k_h x w_in x c_in bytes: an RGB
   3 x 3 stem's 300 a row), then its tiles, as even as mr_s allows, strided in the copy. Through
   pointers, the tiles at the image's border (with the runs they copy) and those crossing a row end
   had taken two thirds of a 3x32x32>16 stem's time. */
static void padded_rows(const dlc_exec *c, size_t t, size_t c0, size_t n, const int8_t *wp, size_t q_begin,
                        size_t q_end) {
  const igemm_data *d = c->p->algo_data;
  const dlc_conv_shape *s = &c->p->s;
  const dlc_q8_igemm_family *f = c->p->kernels->q8_igemm;
  const size_t co = (size_t)s->c_out, wo = (size_t)s->w_out, P = (size_t)(s->h_out * s->w_out);
  const size_t kh = (size_t)s->k_h, wi = (size_t)s->w_in, cin = d->cin, prow = d->prow;
  const size_t mr_s = tile_rows_s(d, f, n);
  uint8_t *ws = (uint8_t *)c->ws + t * d->ws_bytes;
  const uint8_t zp = d->ind.zp;
  /* a padded row: pl pixels of padding, nin pixels of x, the rest padding */
  const size_t pl = (size_t)DLC_MIN(s->pad_l, (int64_t)d->pw);
  const size_t nin = DLC_MIN(wi, d->pw - pl), pr = d->pw - pl - nin;
  const ptrdiff_t pstep = (ptrdiff_t)((size_t)s->stride_w * cin);
  const uint8_t *tap[DLC_IND_ROW_MAX_TAPS];
  memset(ws + kh * prow, zp, d->ws_bytes - kh * prow);
  for (size_t q0 = q_begin; q0 < q_end;) {
    const size_t img = q0 / P, oy = q0 % P / wo, ox_a = q0 % wo, ox_b = DLC_MIN(wo, ox_a + (q_end - q0));
    const uint8_t *xi = (const uint8_t *)c->x + img * (size_t)s->h_in * wi * cin;
    for (size_t ky = 0; ky < kh; ky++) {
      const int64_t iy = (int64_t)oy * s->stride_h - s->pad_t + (int64_t)ky * s->dil_h;
      const int in = iy >= 0 && iy < s->h_in;
      uint8_t *dst = ws + ky * prow;
      tap[ky] = dst;
      dlc_ind_pad_row(dst, in ? xi + (size_t)iy * wi * cin : NULL, pl, nin, pr, cin, zp);
    }
    const size_t len = ox_b - ox_a, nt = dlc_div_up(len, mr_s);
    for (size_t tt = 0; tt < nt; tt++) {
      const size_t o0 = ox_a + tt * len / nt, m = ox_a + (tt + 1) * len / nt - o0;
      const uint8_t *tp[DLC_IND_ROW_MAX_TAPS];
      for (size_t ky = 0; ky < kh; ky++) tp[ky] = tap[ky] + (ptrdiff_t)o0 * pstep;
      f->ukernel_s(m, n, kh, d->kq, tp, pstep, wp, d->flip, &d->q4, c0, (uint8_t *)c->y + (q0 - ox_a + o0) * co + c0,
                   co);
    }
    q0 += len;
  }
}

static void igemm_task(void *arg, size_t t) {
  const dlc_exec *c = arg;
  const igemm_data *d = c->p->algo_data;
  const dlc_conv_shape *s = &c->p->s;
  const dlc_q8_igemm_family *f = c->p->kernels->q8_igemm;
  const size_t cog = (size_t)s->cout_g, co = (size_t)s->c_out, kh = (size_t)s->k_h;
  const size_t ho = (size_t)s->h_out, wo = (size_t)s->w_out, P = ho * wo;
  const int flat = dlc_nhwc_ind_flat(&d->ind, s);
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
        lines_panel(c, g, c0, n, n0, wp, q_begin, q_end, ind, scratch);
        continue;
      }
      if (d->ws_bytes) {
        padded_rows(c, t, c0, n, wp, q_begin, q_end);
        continue;
      }
      /* the tile's first pixel (image, row, column) steps along (three divisions per tile were a
         tenth of an RGB stem's short tiles) */
      size_t img = q_begin / P, oy = q_begin % P / wo, ox = q_begin % wo;
      const size_t mr_s = tile_rows_s(d, f, n);
      for (size_t q0 = q_begin, m; q0 < q_end; q0 += m) {
        uint8_t *y = (uint8_t *)c->y + q0 * co + c0;
        ptrdiff_t pstep;
        m = DLC_MIN(mr_s, q_end - q0);
        const int strided = f->ukernel_s && (flat ? dlc_nhwc_ind_strided(&d->ind, s, c->x, g, q0, m, ind, &pstep)
                                                  : ox + m <= wo && dlc_nhwc_ind_strided_row(&d->ind, s, c->x, g, img, oy,
                                                                                             ox, m, 0, kh, ind, &pstep));
        if (strided) {
          f->ukernel_s(m, n, d->ind.ntaps, d->kq, ind, pstep, wp, d->flip, &d->q4, c0, y, co);
        } else {
          m = DLC_MIN(d->mr, q_end - q0);
          dlc_nhwc_ind_build(&d->ind, s, c->x, g, q0, m, ind, scratch);
          f->ukernel(m, n, d->ind.ntaps, d->kq, ind, wp, d->flip, &d->q4, c0, y, co);
        }
        for (ox += m; ox >= wo; ox -= wo)
          if (++oy == ho) oy = 0, img++;
      }
    }
  }
}

const dlc_impl_ops dlc_igemm_q8_ops = {
    .plan = igemm_plan,
    .task = igemm_task,
    .destroy = igemm_destroy,
};
