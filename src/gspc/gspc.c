/* gspc.c - the grouped spatial pack convolution driver, fp32 (Gibson, thesis ch. 5, Algorithm 3).
 *
 * Plan: choose the register tile (groups per vector, vectors, rows, columns) with the family's
 * cost model, pack the weights 7D as [group block][oc block][C_PG/T_I][k_h][k_w][T_I][NV*T_O]
 * (zero-padded), the bias in lane order, and the tap offsets into the packed input.
 *
 * Execute: the work is the flat range (group block, image, row tile, oc block), group blocks
 * outermost; task i of the plan's threads takes a contiguous part of it. Inside one (group block,
 * image) the task repacks the input rows its row tiles read into its workspace slice, just
 * before the first tile that reads them (so they are still in cache), as
 *   [C_PG/T_I][H][T_I][s_w][Wq][GPV]
 * with the zero padding written by the repack; then every oc block of the row tile reuses them.
 * Row tiles come before oc blocks (unlike the thesis's loop order) so that one band of packed
 * input serves all output channels while it is hot, whatever the image size.
 *
 * Columns: every tile is W wide; the last tile of a row is shifted left to end at the last
 * column (its overlap is recomputed and stored twice with the same value, within one task).
 * Rows: the last row tile may extend below the image over zero rows; those rows are dropped.
 *
 * NCHW layers of few channels per group on planes of more than 64 outputs run the positions-in-
 * lanes mode instead (gspc_pos.c: a vector is neighbouring pixels of one channel). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/plan.h"
#include "../ukernel/config.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "gspc.h"
#include "gspc_geom.h"
#include "gspc_pos.h"

#define GSPC_MAX_NV 4
#define GSPC_MAX_R 4
#define GSPC_MAX_W 32
#define GSPC_MAX_LANES 64

typedef struct gspc_data {
  const dlc_f32_gspc_family *fam;
  dlc_f32_gspc_ukernel_fn kern;
  dlc_gspc_grid grid;           /* the tile and the blocking of the output */
  size_t row_stride;            /* floats per packed row: t_i * s_w * wq * gpv */
  size_t slab;                  /* floats of one task's workspace slice (64-byte multiple) */
  size_t blk;                   /* floats of one (group block, oc block) of weights */
  size_t ntasks;
  int direct;                   /* the kernel reads x itself: it already has the packed layout */
  int blocked;                  /* channel-blocked input layout (family get_blocked) */
  size_t diag;                  /* channels per group of the diagonal tiles (family get_diag), or 0 */
  size_t pxs;                   /* floats between two packed columns: gpv, or t_i when blocked */
  float *w;                     /* [n_gb][n_ocb][blk] */
  float *bias;                  /* [n_gb][n_ocb][nvl] */
  ptrdiff_t *tap_off;
  int32_t perm[GSPC_MAX_LANES];
  dlc_f32_gspc_params prm;
  dlc_gspc_pos *pos;            /* positions in lanes instead (gspc_pos.c); the rest unused */
} gspc_data;

typedef struct search_ctx {
  const dlc_f32_gspc_family *f;
  double store; /* cycles per product of a tile at its store (the layout's) */
} search_ctx;

static int has_tile(const void *ctx, size_t gpv, size_t nv, size_t rn, size_t wn) {
  return ((const search_ctx *)ctx)->f->get(gpv, nv, rn, wn) != NULL;
}

/* The tile's bias, clamp and store: per product at the layout's cost, and a fixed part. */
static double epilogue(const void *ctx, size_t nv, size_t np, size_t rn, size_t n_wt) {
  (void)rn, (void)n_wt;
  return (double)(nv * np) * ((const search_ctx *)ctx)->store + 20.0;
}

static int choose_tile(const dlc_conv_shape *s, const dlc_f32_gspc_family *f, gspc_data *d) {
  const search_ctx sc = {f, s->layout == DLCONV_NHWC ? f->store_nhwc : f->store_nchw};
  const dlc_gspc_tile_search ts = {f->t_o, f->max_gpv, GSPC_MAX_NV, GSPC_MAX_R, GSPC_MAX_W,
                                   (double)(s->cin_g * s->k_h * s->k_w), f->fma_per_cycle, f->loads_per_cycle,
                                   f->fma_latency, has_tile, epilogue, &sc};
  dlc_gspc_tile t;
  if (!dlc_gspc_choose_tile(s, &ts, &t)) return 0;
  d->grid = dlc_gspc_grid_of(s, t, f->t_o);
  d->kern = f->get(t.gpv, t.nv, t.rn, t.wn);
  /* NHWC becomes the channel-blocked layout by plain copies instead of transposes */
  if (d->kern && d->grid.gpv == 1 && s->layout == DLCONV_NHWC && f->get_blocked) {
    dlc_f32_gspc_ukernel_fn k = f->get_blocked(d->grid.nv, d->grid.rn, d->grid.wn);
    if (k) {
      d->kern = k;
      d->blocked = 1;
    }
  }
  return d->kern != NULL;
}

/* Diagonal tiles (family get_diag): NHWC groups of c = 2, 4 or 8 input and output channels, t_o / c
   groups in a vector, at least half its lanes holding groups; c (else 0). In NCHW the t_o-channel
   columns cost log2(t_o) rounds of zips to pack and the tile a transpose to store: slower than
   groups in lanes or positions in lanes (Zen 5, WRN-40-2 g16 8 x 8 c = 8: 2.3x, g8 strided 1.9x). */
static size_t diag_channels(const dlc_conv_shape *s, const dlc_f32_gspc_family *f) {
  const size_t c = (size_t)s->cin_g;
  if (s->layout != DLCONV_NHWC || !f->get_diag || s->cout_g != s->cin_g || (c != 2 && c != 4 && c != 8) || 2 * c > f->t_o ||
      2 * c * (size_t)s->groups < f->t_o)
    return 0;
  return c;
}

/* The cheapest diagonal tile: per tap c*P products and P + c loads (the tap's c weight vectors
   and P pixels' inputs), at least the product latency; the epilogue rotates and adds the
   accumulators of a pixel and stores one vector. Of equal ones the tallest (Zen 5, 128x8x8 g16,
   groups of 8: 4x1 0.0058 ms, 1x4 0.0065; others within 3%). */
static int choose_diag(const dlc_conv_shape *s, const dlc_f32_gspc_family *f, size_t c, gspc_data *d) {
  const double taps = (double)(s->k_h * s->k_w);
  const double store = s->layout == DLCONV_NHWC ? f->store_nhwc : f->store_nchw;
  double best = INFINITY;
  size_t brn = 0, bwn = 0;
  for (size_t rn = DLC_MIN((size_t)GSPC_MAX_R, (size_t)s->h_out); rn >= 1; rn--)
    for (size_t wn = 1; wn <= GSPC_MAX_W && wn <= (size_t)s->w_out; wn++) {
      if (!f->get_diag(c, rn, wn)) continue;
      const double np = (double)(rn * wn), acc = (double)(c / DLC_GSPC_DIAG_COPIES(c));
      double cyc = (double)c * np / f->fma_per_cycle;
      cyc = fmax(cyc, (np + (double)c) / f->loads_per_cycle);
      cyc = fmax(cyc, f->fma_latency) + 0.5;
      const double epi = np * (acc - 1.0 + store) + 20.0;
      const double cost = (double)(dlc_div_up((size_t)s->h_out, rn) * dlc_div_up((size_t)s->w_out, wn)) * (taps * cyc + epi);
      if (cost < best * 0.999) {
        best = cost;
        brn = rn;
        bwn = wn;
      }
    }
  if (!brn) return 0;
  d->grid = dlc_gspc_grid_of(s, (dlc_gspc_tile){f->t_o / c, 1, brn, bwn}, f->t_o);
  d->kern = f->get_diag(c, brn, bwn);
  d->diag = c;
  return 1;
}

/* Diagonal tiles' weights [group block][tap][j][s][t_o] (gspc_ukernel.h): lane L (group
   gb*gpv + L/c), copy j of the input (rotated by j*a lanes), rotation s: the weight of input
   channel (L%c - j*a) mod c to output channel (L%c + s) % c; the bias in channel order. */
static void pack_weights_diag(const dlc_conv_shape *s, const float *w, const float *bias, gspc_data *d) {
  const size_t c = d->diag, taps = (size_t)(s->k_h * s->k_w), gpv = d->grid.gpv, nvl = d->grid.nvl;
  const size_t k = DLC_GSPC_DIAG_COPIES(c), a = c / k;
  const size_t groups = (size_t)s->groups;
  for (size_t gb = 0; gb < d->grid.n_gb; gb++) {
    float *dst = d->w + gb * d->blk, *b = d->bias + gb * nvl;
    for (size_t l = 0; l < nvl; l++) {
      const size_t g = gb * gpv + l / c;
      b[l] = g < groups ? bias[g * c + l % c] : 0.0f;
    }
    for (size_t t = 0; t < taps; t++)
      for (size_t j = 0; j < k; j++)
        for (size_t r = 0; r < a; r++)
          for (size_t l = 0; l < nvl; l++) {
            const size_t g = gb * gpv + l / c, ic = (l % c + c - j * a) % c, oc = (l % c + r) % c;
            *dst++ = g < groups ? w[((g * c + oc) * c + ic) * taps + t] : 0.0f;
          }
  }
}

static void pack_weights(const dlc_conv_shape *s, const float *w, const float *bias, gspc_data *d) {
  const size_t cin = (size_t)s->cin_g, kpg = (size_t)s->cout_g, taps = (size_t)(s->k_h * s->k_w);
  const size_t ti_n = d->prm.t_i, gpv = d->grid.gpv, nvl = d->grid.nvl, groups = (size_t)s->groups;
  for (size_t gb = 0; gb < d->grid.n_gb; gb++)
    for (size_t ob = 0; ob < d->grid.n_ocb; ob++) {
      float *dst = d->w + (gb * d->grid.n_ocb + ob) * d->blk;
      float *b = d->bias + (gb * d->grid.n_ocb + ob) * nvl;
      for (size_t l = 0; l < nvl; l++) {
        const size_t g = gb * gpv + l % gpv, oc = ob * d->grid.opb + l / gpv;
        b[l] = g < groups && oc < kpg ? bias[g * kpg + oc] : 0.0f;
      }
      for (size_t ct = 0; ct < d->prm.n_ct; ct++)
        for (size_t t = 0; t < taps; t++)
          for (size_t ti = 0; ti < ti_n; ti++)
            for (size_t l = 0; l < nvl; l++) {
              const size_t g = gb * gpv + l % gpv, oc = ob * d->grid.opb + l / gpv, ic = ct * ti_n + ti;
              *dst++ = g < groups && oc < kpg && ic < cin ? w[((g * kpg + oc) * cin + ic) * taps + t] : 0.0f;
            }
    }
}

static void gspc_destroy(dlconv_plan *p) {
  gspc_data *d = p->algo_data;
  if (!d) return;
  dlc_gspc_pos_free(d->pos);
  dlc_free(d->tap_off);
  dlc_free(d->w);
  dlc_free(d->bias);
  dlc_free(d);
  p->algo_data = NULL;
}

static dlconv_status gspc_plan(dlconv_plan *p, const void *weights) {
  const float *w = weights;
  const dlc_f32_gspc_family *f = p->kernels->gspc;
  if (!f) return dlc_fail(DLCONV_ERR_UNSUPPORTED, "gspc: no micro-kernels for isa %s", p->kernels->name);
  const dlc_conv_shape *s = &p->s;
  gspc_data *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "gspc: out of memory");
  p->algo_data = d;
  d->fam = f;
  if (dlc_gspc_pos_pays(s, f)) {
    const dlconv_status st = dlc_gspc_pos_plan(p, f, w, &d->pos);
    if (st == DLCONV_OK) return st;
    dlc_gspc_pos_free(d->pos); /* no tile for it: groups in lanes */
    d->pos = NULL;
    if (st != DLCONV_ERR_UNSUPPORTED) {
      gspc_destroy(p);
      return st;
    }
  }
  const size_t dc = diag_channels(s, f);
  if (!(dc && choose_diag(s, f, dc, d)) && !choose_tile(s, f, d)) {
    gspc_destroy(p);
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "gspc: no %s micro-kernel fits this shape", f->isa);
  }
  const size_t cin = (size_t)s->cin_g, kpg = (size_t)s->cout_g, taps = (size_t)(s->k_h * s->k_w);
  const size_t sw = (size_t)s->stride_w, sh = (size_t)s->stride_h, gpv = d->grid.gpv;
  dlc_f32_gspc_params *prm = &d->prm;
  prm->t_i = d->diag ? d->diag : DLC_MIN(f->t_i, cin);
  prm->n_ct = dlc_div_up(cin, prm->t_i);
  prm->ti_last = cin - (prm->n_ct - 1) * prm->t_i;
  prm->n_tap = taps;
  /* NCHW, one group per vector, unit column stride, no padding, and every row any tile reads
     inside the image: x already is [C_PG/T_I][H][T_I][W] with channel stride H*W, so the
     kernel reads it directly and the repack disappears (1x1 layers above all). */
  d->direct = s->layout == DLCONV_NCHW && gpv == 1 && sw == 1 && s->pad_l == 0 && s->pad_r == 0 &&
              s->pad_t == 0 && s->pad_b == 0 && d->grid.h_alloc <= (size_t)s->h_in;
  if (d->direct) {
    d->grid.wq = (size_t)s->w_in;
    d->row_stride = (size_t)s->w_in;
    prm->in_ti_stride = (ptrdiff_t)(s->h_in * s->w_in);
    prm->in_ct_stride = (ptrdiff_t)prm->t_i * prm->in_ti_stride;
    d->slab = 0;
  } else if (d->blocked || d->diag) {
    d->pxs = d->blocked ? f->t_i : f->t_o;
    d->row_stride = sw * d->grid.wq * d->pxs;
    prm->in_ti_stride = 1;
    prm->in_ct_stride = (ptrdiff_t)(d->grid.h_alloc * d->row_stride);
    d->slab = dlc_round_up(prm->n_ct * d->grid.h_alloc * d->row_stride, DLC_ALIGN / sizeof(float));
  } else {
    d->row_stride = prm->t_i * sw * d->grid.wq * gpv;
    prm->in_ti_stride = (ptrdiff_t)(sw * d->grid.wq * gpv);
    prm->in_ct_stride = (ptrdiff_t)(d->grid.h_alloc * d->row_stride);
    d->slab = dlc_round_up(prm->n_ct * d->grid.h_alloc * d->row_stride, DLC_ALIGN / sizeof(float));
  }
  /* Huge padding, strides or dilations can make the packed input window exceed the address
     space (its size in size_t arithmetic would wrap): refuse; direct and gemm handle such layers. */
  if (!d->direct && (double)prm->n_ct * (double)d->grid.h_alloc * (double)sw * (double)d->grid.wq *
                            (double)(d->blocked || d->diag ? d->pxs : prm->t_i * gpv) * sizeof(float) *
                            (double)DLC_MAX(p->nthreads, 1) > (double)PTRDIFF_MAX) {
    gspc_destroy(p);
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "gspc: the packed input window of this shape exceeds the address space");
  }
  prm->in_r_stride = (ptrdiff_t)(sh * d->row_stride);
  if (!d->blocked && !d->diag) d->pxs = gpv;
  if (s->layout == DLCONV_NCHW) {
    prm->out_ch_stride = (ptrdiff_t)(s->h_out * s->w_out);
    prm->out_pix_stride = 1;
    prm->out_r_stride = (ptrdiff_t)s->w_out;
  } else {
    prm->out_ch_stride = 1;
    prm->out_pix_stride = (ptrdiff_t)s->c_out;
    prm->out_r_stride = (ptrdiff_t)(s->w_out * s->c_out);
  }
  prm->out_min = s->out_min;
  prm->out_max = s->out_max;
  /* Groups in lanes: lane L holds (group L % gpv, channel L / gpv); stored channel j of the
     block is group j / kpg, channel j % kpg. */
  if (gpv > 1 && !d->diag) {
    const int identity = dlc_gspc_lane_perm(d->grid.nvl, gpv, kpg, d->perm);
    prm->perm = identity ? NULL : d->perm;   /* depthwise: lane j is channel j already */
  }

  d->blk = prm->n_ct * taps * prm->t_i * d->grid.nvl;
  const size_t wfloats = d->grid.n_gb * d->grid.n_ocb * d->blk, bfloats = d->grid.n_gb * d->grid.n_ocb * d->grid.nvl;
  d->tap_off = dlc_malloc(taps * sizeof *d->tap_off);
  d->w = dlc_malloc(wfloats * sizeof(float));
  d->bias = dlc_malloc(bfloats * sizeof(float));
  if (!d->tap_off || !d->w || !d->bias) {
    gspc_destroy(p);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "gspc: out of memory packing %zu weights", wfloats);
  }
  dlc_gspc_tap_offsets(s, d->row_stride, d->grid.wq, d->pxs, d->tap_off);
  prm->tap_off = d->tap_off;
  if (d->diag)
    pack_weights_diag(s, w, p->bias, d);
  else
    pack_weights(s, w, p->bias, d);

  const size_t jobs = dlc_gspc_njobs(&d->grid, (size_t)s->n);
  d->ntasks = DLC_MAX((size_t)1, DLC_MIN((size_t)p->nthreads, jobs));
  p->workspace_bytes = d->ntasks * d->slab * sizeof(float);
  p->exec_tasks = d->ntasks;
  p->packed_weight_bytes = (wfloats + bfloats) * sizeof(float) + taps * sizeof *d->tap_off;
  p->weight_density = 1.0;
  if (d->diag)
    snprintf(p->kernel, sizeof p->kernel, "f32_gspc_%zux%zux%zud%zu__%s", d->grid.rn, d->grid.wn, d->grid.nvl, d->diag, f->isa);
  else if (gpv > 1)
    snprintf(p->kernel, sizeof p->kernel, "f32_gspc_%zux%zux%zug%zu__%s", d->grid.rn, d->grid.wn, d->grid.nvl, gpv, f->isa);
  else
    snprintf(p->kernel, sizeof p->kernel, "f32_gspc_%zux%zux%zu%s__%s", d->grid.rn, d->grid.wn, d->grid.nvl, d->blocked ? "b" : "", f->isa);
  return DLCONV_OK;
}

/* Packed rows [hp0, hp1) of group block gb, image n, at slab row (hp - base). Element
   (ct, hp, ti, ph, q, gl) is input channel (gb*gpv + gl)*C_PG + ct*t_i + ti at padded row hp
   and padded column q*s_w + ph; zeros outside the image and for groups past the last. */
static void pack_rows(const dlconv_plan *p, const gspc_data *d, const float *x, size_t n, size_t gb,
                      size_t hp0, size_t hp1, size_t base, float *slab) {
  const dlc_conv_shape *s = &p->s;
  const dlc_f32_gspc_params *prm = &d->prm;
  const size_t gpv = d->grid.gpv, sw = (size_t)s->stride_w, wq = d->grid.wq, cin = (size_t)s->cin_g;
  const int64_t h_in = s->h_in, w_in = s->w_in;
  const int nchw = s->layout == DLCONV_NCHW;
  const ptrdiff_t px_step = nchw ? 1 : (ptrdiff_t)s->c_in;
  const ptrdiff_t ch_step = nchw ? (ptrdiff_t)(h_in * w_in) : 1;
  const float *ximg = x + n * (size_t)(s->c_in * h_in * w_in);
  const size_t ng = DLC_MIN(gpv, (size_t)s->groups - gb * gpv);
  /* every field set one by one: an initializer zeroes the struct first, which the compiler does
     with a rep stos whose start-up was a quarter of this function on a row of 16 channels (Zen 5,
     WRN-40-2 g4 64x16x16, a row per call) */
  dlc_f32_gspc_pack_args a;
  a.dst = NULL;
  a.dst_c_stride = (size_t)prm->in_ti_stride;
  a.dst_q_stride = d->pxs;
  a.src = NULL;
  a.src_c_stride = ch_step;
  a.n_c = 0;
  a.nq = wq;
  a.gpv = gpv;
  a.ng = ng;
  a.col0 = 0;
  a.col_step = (ptrdiff_t)sw;
  a.px_step = px_step;
  a.g_step = (ptrdiff_t)cin * ch_step;
  a.q_lo = a.q_hi = 0;
  a.n_ph = 0;
  a.w_img = (ptrdiff_t)w_in;
  /* NCHW stride 2: both phases of a row at once where the family can, up to 8 groups in lanes
     (16, whose loads of both phases do not fit the registers, the family packs a phase a time:
     the call's detour was 1.14x the time of a 64x14x14 depthwise stride-2 layer, Zen 5) */
  const int both = d->fam->pack_both_phases && sw == 2 && gpv <= 8 && nchw && !d->blocked && !d->diag;
  if (d->diag) {
    /* NHWC (diag_channels): a column is the t_o channels of the block's groups, one copy */
    a.dst_q_stride = d->pxs;
    a.dst_c_stride = 1;
    a.gpv = a.ng = 1;
    a.n_c = ng * cin;
  }
  for (size_t ct = 0; ct < prm->n_ct; ct++) {
    if (!d->diag) a.n_c = ct + 1 < prm->n_ct ? prm->t_i : prm->ti_last;
    const size_t c0 = gb * gpv * cin + ct * prm->t_i;
    for (size_t hp = hp0; hp < hp1; hp++) {
      float *row = slab + ct * (size_t)prm->in_ct_stride + (hp - base) * d->row_stride;
      const int64_t ih = (int64_t)hp - s->pad_t;
      const int inside = ih >= 0 && ih < h_in;
      a.src = ximg + (inside ? (ptrdiff_t)c0 * ch_step + (ptrdiff_t)ih * (ptrdiff_t)w_in * px_step : 0);
      if (both && inside) {
        /* the two stride phases in one pass over the row (gspc_ukernel.h, n_ph) */
        a.dst = row;
        a.col0 = -(ptrdiff_t)s->pad_l;
        a.n_ph = 2;
        a.ph_off = wq * d->pxs;
        d->fam->pack(&a);
        a.n_ph = 0;
        continue;
      }
      for (size_t ph = 0; ph < sw; ph++) {
        ptrdiff_t col0;
        size_t lo, hi;
        dlc_gspc_phase_columns(s, ph, wq, &col0, &lo, &hi);
        a.dst = row + ph * wq * d->pxs;
        a.col0 = col0;
        a.q_lo = inside ? lo : 0;
        a.q_hi = inside ? hi : 0;
        d->fam->pack(&a);
      }
    }
  }
}

static void gspc_task(void *arg, size_t task) {
  const dlc_exec *c = arg;
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const gspc_data *d = p->algo_data;
  if (d->pos) {
    dlc_gspc_pos_task(c, d->pos, task);
    return;
  }
  const float *x = c->x;
  float *y = c->y;
  const size_t n_img = (size_t)s->n, ho = (size_t)s->h_out, wo = (size_t)s->w_out;
  float *slab = d->slab ? (float *)(c->ws + task * d->slab * sizeof(float)) : NULL;
  size_t begin, end;
  dlc_split_range(dlc_gspc_njobs(&d->grid, n_img), d->ntasks, task, &begin, &end);
  dlc_gspc_slab held = DLC_GSPC_SLAB_EMPTY;
  size_t ob, rt, n, gb;
  dlc_gspc_job_at(&d->grid, n_img, begin, &ob, &rt, &n, &gb);
  for (size_t job = begin; job < end; job++) {
    size_t r0, r1, from;
    dlc_gspc_tile_rows(s, &d->grid, rt, &r0, &r1);
    const float *in_row;
    if (d->direct) {
      in_row = x + (n * (size_t)s->c_in + gb * (size_t)s->cin_g) * (size_t)(s->h_in * s->w_in) + r0 * d->row_stride;
    } else {
      if (dlc_gspc_slab_need(&held, gb * n_img + n, r0, r1, &from))
        pack_rows(p, d, x, n, gb, from, r1, held.base, slab);
      in_row = slab + (r0 - held.base) * d->row_stride;
    }
    const size_t oh0 = rt * d->grid.rn, r_valid = DLC_MIN(d->grid.rn, ho - oh0);
    const size_t c0 = dlc_gspc_first_channel(s, &d->grid, gb, ob), n_lanes = dlc_gspc_lanes_used(s, &d->grid, gb, ob);
    const float *w = d->w + (gb * d->grid.n_ocb + ob) * d->blk;
    const float *bias = d->bias + (gb * d->grid.n_ocb + ob) * d->grid.nvl;
    float *y_row;
    if (s->layout == DLCONV_NCHW)
      y_row = y + ((n * (size_t)s->c_out + c0) * ho + oh0) * wo;
    else
      y_row = y + ((n * ho + oh0) * wo) * (size_t)s->c_out + c0;
    for (size_t wt = 0; wt < d->grid.n_wt; wt++) {
      const size_t ow0 = DLC_MIN(wt * d->grid.wn, wo - d->grid.wn);
      d->kern(&d->prm, in_row + ow0 * d->pxs, w, bias, y_row + (ptrdiff_t)ow0 * d->prm.out_pix_stride,
              n_lanes, r_valid);
    }
    dlc_gspc_next_job(&d->grid, n_img, &ob, &rt, &n, &gb);
  }
}

const dlc_impl_ops dlc_gspc_ops = {
    .plan = gspc_plan,
    .task = gspc_task,
    .destroy = gspc_destroy,
};
