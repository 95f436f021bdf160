/* gspc_geom.h - the geometry both GSPC drivers (gspc.c for fp32, gspc_lowp.c for F16 / int8)
 * share: where the packed input's taps, stride phases and lanes are, and the search for the
 * register tile. Element counts are in the packed input's elements (floats, or s16 pairs), so
 * the same arithmetic serves both. */
#ifndef DLC_GSPC_GEOM_H
#define DLC_GSPC_GEOM_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "../core/plan.h"
#include "../core/util.h"

/* Offset of each tap (ky, kx) from the window origin in the packed input: rows row_stride apart,
   the stride phase (col % s_w) of its column at phase * wq columns, columns pxs elements apart. */
static inline void dlc_gspc_tap_offsets(const dlc_conv_shape *s, size_t row_stride, size_t wq, size_t pxs,
                                        ptrdiff_t *tap_off) {
  const size_t sw = (size_t)s->stride_w;
  for (size_t ky = 0; ky < (size_t)s->k_h; ky++)
    for (size_t kx = 0; kx < (size_t)s->k_w; kx++) {
      const size_t col = kx * (size_t)s->dil_w;
      tap_off[ky * (size_t)s->k_w + kx] =
          (ptrdiff_t)(ky * (size_t)s->dil_h * row_stride + ((col % sw) * wq + col / sw) * pxs);
    }
}

/* Groups in lanes: lane L holds (group L % gpv, channel L / gpv); stored channel j of the block
   is group j / kpg, channel j % kpg, so perm[j] = the lane holding it. Returns 1 when that is the
   identity (depthwise: lane j is channel j already). */
static inline int dlc_gspc_lane_perm(size_t nvl, size_t gpv, size_t kpg, int32_t *perm) {
  int identity = 1;
  for (size_t j = 0; j < nvl; j++) {
    perm[j] = j < gpv * kpg ? (int32_t)((j % kpg) * gpv + j / kpg) : (int32_t)j;
    identity &= perm[j] == (int32_t)j;
  }
  return identity;
}

/* Stride phase ph of a packed row of wq columns: padded column q*s_w + ph is image column
   q*s_w + *col0, and the columns inside the image are [*q_lo, *q_hi) (the rest is padding). */
static inline void dlc_gspc_phase_columns(const dlc_conv_shape *s, size_t ph, size_t wq, ptrdiff_t *col0,
                                          size_t *q_lo, size_t *q_hi) {
  const int64_t sw = s->stride_w, c0 = (int64_t)ph - s->pad_l;
  int64_t lo = c0 >= 0 ? 0 : (-c0 + sw - 1) / sw;
  int64_t hi = s->w_in - c0 <= 0 ? 0 : (s->w_in - c0 + sw - 1) / sw;
  lo = DLC_MIN(lo, (int64_t)wq);
  hi = DLC_MAX(lo, DLC_MIN(hi, (int64_t)wq));
  *col0 = (ptrdiff_t)c0;
  *q_lo = (size_t)lo;
  *q_hi = (size_t)hi;
}

/* The register-tile search both drivers run: the menu (has), the reduction step's rates and the
   epilogue's cost are the driver's; the walk over (gpv, nv, rn, wn) and the cost of a tile are
   shared. */
typedef struct dlc_gspc_tile_search {
  size_t t_o, max_gpv;                /* lanes per vector, most groups in lanes */
  size_t max_nv, max_r, max_w;        /* the menu's bounds */
  double steps;                       /* reduction steps of one tile */
  double mac_per_cycle, loads_per_cycle, latency;
  int (*has)(const void *ctx, size_t gpv, size_t nv, size_t rn, size_t wn);
  /* cycles of a tile's epilogue: nv vectors of np = rn x wn pixels, n_wt tiles per output row */
  double (*epilogue)(const void *ctx, size_t nv, size_t np, size_t rn, size_t n_wt);
  const void *ctx;
} dlc_gspc_tile_search;

typedef struct dlc_gspc_tile {
  size_t gpv, nv, rn, wn;
} dlc_gspc_tile;

/* Estimated cycles of one image with this tile: tiles x (reduction steps x cycles per step +
   epilogue). The reduction step does nv*P products and nv + P loads; it cannot beat the product
   latency (each accumulator depends on itself). Wasted lanes, groups and recomputed columns
   and rows are paid for in full, which is what steers the choice. */
static inline double dlc_gspc_tile_cost(const dlc_conv_shape *s, const dlc_gspc_tile_search *ts, size_t gpv,
                                        size_t nv, size_t rn, size_t wn) {
  const size_t nvl = nv * ts->t_o, opb = nvl / gpv, np = rn * wn;
  const size_t n_gb = dlc_div_up((size_t)s->groups, gpv), n_ocb = dlc_div_up((size_t)s->cout_g, opb);
  const size_t n_rt = dlc_div_up((size_t)s->h_out, rn), n_wt = dlc_div_up((size_t)s->w_out, wn);
  const double mac = (double)(nv * np), loads = (double)(nv + np);
  double cyc = mac / ts->mac_per_cycle;
  if (loads / ts->loads_per_cycle > cyc) cyc = loads / ts->loads_per_cycle;
  if (ts->latency > cyc) cyc = ts->latency;
  cyc += 0.5; /* loop control per step */
  const double epi = ts->epilogue(ts->ctx, nv, np, rn, n_wt);
  return (double)(n_gb * n_ocb * n_rt * n_wt) * (ts->steps * cyc + epi);
}

/* The cheapest tile of the menu (the first of equal ones, within 0.1%); 0 when it has none. */
static inline int dlc_gspc_choose_tile(const dlc_conv_shape *s, const dlc_gspc_tile_search *ts, dlc_gspc_tile *out) {
  double best = INFINITY;
  const size_t kpg = (size_t)s->cout_g;
  *out = (dlc_gspc_tile){0, 0, 0, 0};
  for (size_t gpv = 1; gpv <= ts->max_gpv && gpv <= ts->t_o; gpv *= 2) {
    /* groups in lanes only when one vector holds all output channels of each of its groups,
       and not more group slots than twice the groups there are */
    if (gpv > 1 && (ts->t_o / gpv < kpg || gpv / 2 >= (size_t)s->groups)) continue;
    for (size_t nv = 1; nv <= (gpv == 1 ? ts->max_nv : 1); nv++)
      for (size_t rn = 1; rn <= ts->max_r && rn <= (size_t)s->h_out; rn++)
        for (size_t wn = 1; wn <= ts->max_w && wn <= (size_t)s->w_out; wn++) {
          if (!ts->has(ts->ctx, gpv, nv, rn, wn)) continue;
          const double c = dlc_gspc_tile_cost(s, ts, gpv, nv, rn, wn);
          if (c < best * 0.999) {
            best = c;
            *out = (dlc_gspc_tile){gpv, nv, rn, wn};
          }
        }
  }
  return best < INFINITY;
}

/* The blocking of a layer both drivers derive from the chosen tile: the tile, its lanes, how many
   group blocks, oc blocks, row tiles and column tiles cover the output, and the packed input's
   columns per stride phase and rows. */
typedef struct dlc_gspc_grid {
  size_t gpv, nv, rn, wn;       /* tile: groups per vector, vectors, rows, columns */
  size_t nvl, opb;              /* lanes per tile, output channels per group per oc block */
  size_t n_gb, n_ocb, n_rt, n_wt;
  size_t wq;                    /* packed columns per stride phase */
  size_t h_alloc;               /* packed rows (row tiles may read past the image) */
} dlc_gspc_grid;

/* The grid of tile t on a family of t_o lanes per vector. */
static inline dlc_gspc_grid dlc_gspc_grid_of(const dlc_conv_shape *s, dlc_gspc_tile t, size_t t_o) {
  dlc_gspc_grid g = {.gpv = t.gpv, .nv = t.nv, .rn = t.rn, .wn = t.wn};
  const size_t sw = (size_t)s->stride_w, sh = (size_t)s->stride_h;
  g.nvl = t.nv * t_o;
  g.opb = g.nvl / t.gpv;
  g.n_gb = dlc_div_up((size_t)s->groups, t.gpv);
  g.n_ocb = dlc_div_up((size_t)s->cout_g, g.opb);
  g.n_rt = dlc_div_up((size_t)s->h_out, t.rn);
  g.n_wt = dlc_div_up((size_t)s->w_out, t.wn);
  /* Columns the windows read, split into s_w phases; rows down to the last row tile's end. */
  const size_t w_used = ((size_t)s->w_out - 1) * sw + (size_t)(s->dil_w * (s->k_w - 1)) + 1;
  g.wq = dlc_div_up(w_used, sw);
  g.h_alloc = (g.n_rt * t.rn - 1) * sh + (size_t)(s->dil_h * (s->k_h - 1)) + 1;
  return g;
}

/* Jobs of one execute: (group block, image, row tile, oc block), in that order, oc blocks fastest. */
static inline size_t dlc_gspc_njobs(const dlc_gspc_grid *g, size_t n_img) {
  return g->n_gb * n_img * g->n_rt * g->n_ocb;
}

/* Job `job` of that order as (oc block, row tile, image, group block). */
static inline void dlc_gspc_job_at(const dlc_gspc_grid *g, size_t n_img, size_t job, size_t *ob, size_t *rt,
                                   size_t *n, size_t *gb) {
  *ob = job % g->n_ocb;
  *rt = job / g->n_ocb % g->n_rt;
  *n = job / (g->n_ocb * g->n_rt) % n_img;
  *gb = job / (g->n_ocb * g->n_rt * n_img);
}

/* The job after (ob, rt, n, gb), stepped without divisions. */
static inline void dlc_gspc_next_job(const dlc_gspc_grid *g, size_t n_img, size_t *ob, size_t *rt, size_t *n,
                                     size_t *gb) {
  if (++*ob < g->n_ocb) return;
  *ob = 0;
  if (++*rt < g->n_rt) return;
  *rt = 0;
  if (++*n < n_img) return;
  *n = 0;
  ++*gb;
}

/* The packed rows a task holds in its slab: rows [base, packed) of (group block, image) owner,
   numbered gb * n_img + n. The row tiles of one (group block, image) come one after another and
   overlap by the kernel's halo: each packs only the rows below those already there. */
typedef struct dlc_gspc_slab {
  size_t owner, base, packed;
} dlc_gspc_slab;

#define DLC_GSPC_SLAB_EMPTY ((dlc_gspc_slab){(size_t)-1, 0, 0})

/* Makes rows [r0, r1) of owner available: returns 1 when rows [*from, r1) must be packed now (at
   slab row hp - base), 0 when all of them are there. */
static inline int dlc_gspc_slab_need(dlc_gspc_slab *h, size_t owner, size_t r0, size_t r1, size_t *from) {
  if (owner != h->owner) {
    h->owner = owner;
    h->base = h->packed = r0;
  }
  if (r1 <= h->packed) return 0;
  *from = DLC_MAX(h->packed, r0);
  h->packed = r1;
  return 1;
}

/* First and one-past-last packed row that row tile rt reads. */
static inline void dlc_gspc_tile_rows(const dlc_conv_shape *s, const dlc_gspc_grid *g, size_t rt, size_t *r0,
                                      size_t *r1) {
  const size_t sh = (size_t)s->stride_h;
  *r0 = rt * g->rn * sh;
  *r1 = (rt * g->rn + g->rn - 1) * sh + (size_t)(s->dil_h * (s->k_h - 1)) + 1;
}

/* The first output channel of block (gb, ob), and how many of its lanes hold output channels. */
static inline size_t dlc_gspc_first_channel(const dlc_conv_shape *s, const dlc_gspc_grid *g, size_t gb, size_t ob) {
  return gb * g->gpv * (size_t)s->cout_g + ob * g->opb;
}
static inline size_t dlc_gspc_lanes_used(const dlc_conv_shape *s, const dlc_gspc_grid *g, size_t gb, size_t ob) {
  const size_t kpg = (size_t)s->cout_g;
  return g->gpv > 1 ? DLC_MIN(g->gpv, (size_t)s->groups - gb * g->gpv) * kpg : DLC_MIN(g->nvl, kpg - ob * g->opb);
}

#endif
