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
 * "row mode": first layers of a few channels (3: RGB) with groups 1 and dilation_w 1, whose
 * window row is one run of k_w * c_in bytes of x (21 for a 7 x 7 RGB window): each kernel row is
 * then one tap of ceil(21 / 4) quads, the bytes past the run meeting zero weights, where a quad
 * per (tap, pixel) would read 4 bytes for 3 channels 49 times. Runs that cross the image's left
 * or right border, or that would read past the end of x, are copied into the task's scratch with
 * the zero point's byte in the padding. Other layers stay with the callers' other paths.
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
#include "../quant/lowp_vpos.h"

#define IGEMM_MAX_TAPS 64   /* the indirection tile lives on the stack */
#define IGEMM_BLOCK_BYTES ((size_t)256 * 1024)
#define ROW_MAX_BYTES 64    /* row mode: k_w * c_in at most (the scratch of a tile is on the stack) */
#define ROW_MAX_TAPS 16

typedef struct igemm_data {
  int rows;                 /* row mode: a tap is a kernel row, k_w * c_in bytes (see the top) */
  size_t ntaps, cin, kq;    /* taps, input channels per group, quads per tap */
  size_t tlen;              /* bytes of x a tap reads (cin, or k_w * cin in row mode) */
  ptrdiff_t toff[IGEMM_MAX_TAPS]; /* a tap's bytes past its window's origin, inside the image */
  size_t mr, nr, panels;    /* panels per group */
  size_t gstride;           /* bytes of a group's packed weights */
  int8_t *wpack;
  dlc_q8_params q4;         /* the requantisation with the zero point's correction in the bias */
  uint8_t *zrow;            /* cin bytes of x_zero_point: what padding taps read */
  uint8_t flip;
  size_t M, pblock, pblocks, psplit, njobs, ntasks;
} igemm_data;

static int row_mode(const dlc_conv_shape *s) {
  return s->cin_g % 4 != 0 && s->groups == 1 && s->dil_w == 1 && s->k_w * s->c_in <= ROW_MAX_BYTES &&
         s->k_h <= ROW_MAX_TAPS;
}

int dlc_igemm_q8_fits(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k) {
  return (dtype == DLCONV_U8 || dtype == DLCONV_S8) && k && k->q8_igemm && s->layout == DLCONV_NHWC &&
         (s->cin_g % 4 == 0 || row_mode(s)) && s->k_h * s->k_w <= IGEMM_MAX_TAPS &&
         (size_t)(dlc_round_up((size_t)(s->cin_g * s->k_w), 4) * (size_t)s->k_h) <= DLC_Q8_MAX_K;
}

int dlc_igemm_q8_applies(const dlconv_plan *p) { return dlc_igemm_q8_fits(&p->s, p->dtype, p->kernels); }

static void igemm_free(igemm_data *d) {
  if (!d) return;
  dlc_free(d->wpack);
  dlc_free(d->zrow);
  dlc_q8_d4_params_free(&d->q4);
  dlc_free(d);
}

static void igemm_destroy(dlconv_plan *p) { igemm_free(p->algo_data); }

/* Columns of panel pn of a group: nr, or the rest rounded up to whole vectors of 16. */
static size_t panel_width(const igemm_data *d, size_t cog, size_t pn) {
  return DLC_MIN(d->nr, dlc_round_up(cog - pn * d->nr, 16));
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
  const size_t kw = (size_t)s->k_w, khw = (size_t)(s->k_h * s->k_w), row_bytes = (size_t)(s->w_in * s->c_in);
  d->rows = row_mode(s);
  d->cin = (size_t)s->cin_g;
  d->ntaps = d->rows ? (size_t)s->k_h : khw;
  d->tlen = d->rows ? kw * d->cin : d->cin;
  d->kq = dlc_div_up(d->tlen, 4);
  for (size_t t = 0; t < d->ntaps; t++)
    d->toff[t] = d->rows ? (ptrdiff_t)(t * (size_t)s->dil_h * row_bytes)
                         : (ptrdiff_t)(t / kw * (size_t)s->dil_h * row_bytes + t % kw * (size_t)(s->dil_w * s->c_in));
  d->mr = f->mr;
  d->nr = f->nr;
  d->panels = dlc_div_up(cog, d->nr);
  const size_t tap_units = d->ntaps * d->kq * 4; /* a column's bytes in a panel */
  d->gstride = dlc_round_up(cog, 16) * tap_units;
  d->flip = dlc_q8_d4_flip(p);
  d->wpack = dlc_calloc(G * d->gstride);
  d->zrow = dlc_malloc(dlc_round_up(d->kq * 4, 64));
  if (!d->wpack || !d->zrow) {
    igemm_free(d);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory packing im2col_gemm weights");
  }
  memset(d->zrow, (uint8_t)p->q8.x_zero_point, dlc_round_up(d->kq * 4, 64));
  const int8_t *wi = w;
  for (size_t g = 0; g < G; g++)
    for (size_t oc = 0; oc < cog; oc++) {
      const size_t pn = oc / d->nr, j = oc % d->nr, nw = panel_width(d, cog, pn);
      int8_t *panel = d->wpack + g * d->gstride + pn * d->nr * tap_units;
      const int8_t *row = wi + (g * cog + oc) * d->cin * khw; /* OIHW: (ic, ky, kx) */
      for (size_t ic = 0; ic < d->cin; ic++)
        for (size_t r = 0; r < khw; r++) {
          /* tap t, byte k of its run: (ky, kx) and ic, or in row mode ky and kx * cin + ic */
          const size_t t = d->rows ? r / kw : r, k = d->rows ? r % kw * d->cin + ic : ic;
          panel[((t * d->kq + k / 4) * nw + j) * 4 + k % 4] = row[ic * khw + r];
        }
    }

  /* blocks of pixels whose rows of x stay in L2 while every panel sweeps them */
  d->M = (size_t)s->n * (size_t)(s->h_out * s->w_out);
  const size_t per_pixel = (size_t)(s->c_in * s->stride_h * s->stride_w);
  d->pblock = dlc_balanced_block(d->M, DLC_MAX(d->mr, IGEMM_BLOCK_BYTES / per_pixel), d->mr);
  d->pblocks = dlc_div_up(d->M, d->pblock);
  /* too few jobs for the threads: split the panels first (a small plane's few tiles divide
     unevenly), then the pixels */
  const size_t want = (size_t)p->nthreads;
  d->psplit = 1;
  if (G * d->pblocks < want) d->psplit = DLC_MIN(d->panels, dlc_div_up(want, G * d->pblocks));
  if (G * d->pblocks * d->psplit < want) {
    d->pblock = dlc_balanced_block(d->M, DLC_MAX(d->mr, dlc_div_up(d->M, dlc_div_up(want, G * d->psplit))), d->mr);
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

/* A run of x that the kernel may not read in place (row mode: across the left or right border,
   or up to the end of x): its tlen bytes, x where the window is inside the row, the zero point's
   byte elsewhere and in the quads' tail, into dst. */
static const uint8_t *copy_run(const igemm_ctx *c, const uint8_t *row, int64_t ix0, uint8_t *dst) {
  const dlc_conv_shape *s = &c->p->s;
  const igemm_data *d = c->d;
  const size_t cin = (size_t)s->c_in;
  memset(dst, (uint8_t)c->p->q8.x_zero_point, d->kq * 4);
  for (int64_t kx = 0; kx < s->k_w; kx++) {
    const int64_t ix = ix0 + kx;
    if (ix >= 0 && ix < s->w_in) memcpy(dst + (size_t)kx * cin, row + (size_t)ix * cin, cin);
  }
  return dst;
}

/* The pointers of pixels [q0, q0 + m) of group g, tap-major with row stride mr. The pixel's
   position steps along the row (a division per pixel was a tenth of a 1 x 1 layer's time); a
   window inside the image takes its taps' fixed offsets. */
static void build_ind(const igemm_ctx *c, size_t g, size_t q0, size_t m, const uint8_t **ind, uint8_t *scratch) {
  const dlc_conv_shape *s = &c->p->s;
  const igemm_data *d = c->d;
  const size_t P = (size_t)(s->h_out * s->w_out), wo = (size_t)s->w_out, cin_all = (size_t)s->c_in;
  const size_t img_bytes = (size_t)(s->h_in * s->w_in) * cin_all;
  size_t img = q0 / P, oy = q0 % P / wo, ox = q0 % wo;
  if (s->k_h == 1 && s->k_w == 1 && s->stride_h == 1 && s->stride_w == 1 &&
      !(s->pad_t | s->pad_b | s->pad_l | s->pad_r) && !d->rows) {
    /* the plane's pixels in order: one run of x per image */
    for (size_t i = 0; i < m; i++) {
      const size_t q = q0 + i;
      ind[i] = c->x + q / P * img_bytes + (q % P) * cin_all + g * d->cin;
    }
    return;
  }
  const int64_t span_h = (s->k_h - 1) * s->dil_h, span_w = (s->k_w - 1) * s->dil_w;
  const uint8_t *x_end = c->x + (size_t)s->n * img_bytes;
  const size_t need = d->kq * 4; /* what the kernel reads of a run */
  for (size_t i = 0; i < m; i++) {
    const uint8_t *base = c->x + img * img_bytes + g * d->cin;
    const uint8_t **it = ind + i;
    const int64_t iy0 = (int64_t)oy * s->stride_h - s->pad_t, ix0 = (int64_t)ox * s->stride_w - s->pad_l;
    const int inside = iy0 >= 0 && iy0 + span_h < s->h_in && ix0 >= 0 && ix0 + span_w < s->w_in;
    const uint8_t *o = inside ? base + ((size_t)iy0 * (size_t)s->w_in + (size_t)ix0) * cin_all : NULL;
    if (inside && (!d->rows || (size_t)(x_end - (o + d->toff[d->ntaps - 1])) >= need)) {
      for (size_t t = 0; t < d->ntaps; t++) it[t * d->mr] = o + d->toff[t];
    } else if (d->rows) {
      for (int64_t ky = 0; ky < s->k_h; ky++, it += d->mr) {
        const int64_t iy = iy0 + ky * s->dil_h;
        if (iy < 0 || iy >= s->h_in) {
          *it = d->zrow;
          continue;
        }
        const uint8_t *row = base + (size_t)iy * (size_t)s->w_in * cin_all;
        const uint8_t *run = row + ix0 * (int64_t)cin_all;
        const int in_row = ix0 >= 0 && ix0 + span_w < s->w_in;
        *it = in_row && (size_t)(x_end - run) >= need ? run
                                                      : copy_run(c, row, ix0, scratch + (i * ROW_MAX_TAPS + (size_t)ky) * ROW_MAX_BYTES);
      }
    } else {
      for (int64_t ky = 0; ky < s->k_h; ky++) {
        const int64_t iy = iy0 + ky * s->dil_h;
        const int row_in = iy >= 0 && iy < s->h_in;
        for (int64_t kx = 0; kx < s->k_w; kx++, it += d->mr) {
          const int64_t ix = ix0 + kx * s->dil_w;
          *it = row_in && ix >= 0 && ix < s->w_in ? base + ((size_t)iy * (size_t)s->w_in + (size_t)ix) * cin_all
                                                  : d->zrow;
        }
      }
    }
    if (++ox == wo) {
      ox = 0;
      if (++oy == (size_t)s->h_out) {
        oy = 0;
        img++;
      }
    }
  }
}

static void igemm_task(void *arg, size_t t) {
  const igemm_ctx *c = arg;
  const igemm_data *d = c->d;
  const dlc_conv_shape *s = &c->p->s;
  const dlc_q8_igemm_family *f = c->p->kernels->q8_igemm;
  const size_t cog = (size_t)s->cout_g, co = (size_t)s->c_out;
  const uint8_t *ind[IGEMM_MAX_TAPS * DLC_LOWP_MR_MAX];
  uint8_t scratch[DLC_LOWP_MR_MAX * ROW_MAX_TAPS * ROW_MAX_BYTES]; /* row mode's copied runs */
  size_t begin, end;
  dlc_split_range(d->njobs, d->ntasks, t, &begin, &end);
  for (size_t j = begin; j < end; j++) {
    const size_t ps = j % d->psplit, pb = j / d->psplit % d->pblocks, g = j / d->psplit / d->pblocks;
    size_t pn0, pn1;
    dlc_split_range(d->panels, d->psplit, ps, &pn0, &pn1);
    const size_t q_begin = pb * d->pblock, q_end = DLC_MIN(d->M, q_begin + d->pblock);
    for (size_t pn = pn0; pn < pn1; pn++) {
      const size_t n0 = pn * d->nr, n = DLC_MIN(d->nr, cog - n0), c0 = g * cog + n0;
      const int8_t *wp = d->wpack + g * d->gstride + n0 * d->ntaps * d->kq * 4;
      for (size_t q0 = q_begin; q0 < q_end; q0 += d->mr) {
        const size_t m = DLC_MIN(d->mr, q_end - q0);
        build_ind(c, g, q0, m, ind, scratch);
        f->ukernel(m, n, d->ntaps, d->kq, ind, wp, d->flip, &d->q4, c0, c->y + q0 * co + c0, co);
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
