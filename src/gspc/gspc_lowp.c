/* gspc_lowp.c - the grouped spatial pack (GSPC) driver for F16 and int8, NCHW and NHWC.
 *
 * The fp32 driver's algorithm (gspc.c, Gibson thesis ch. 5, Algorithm 3) on the lowp kernel
 * family (lowp_gspc_ukernel.h): the same register-tile choice by cost model, the same weights
 * packed 7D at plan time (binary16, or s8 widened to s16 channel pairs), the same work split into
 * (group block, image, row tile, oc block) jobs with the input rows of a job's row tiles repacked
 * into the task's workspace slice just before the first tile that reads them. Groups in lanes
 * keep the vector full when a group has fewer output channels than a vector: ResNeXt's g32
 * layers (4-32 channels per group), depthwise layers.
 *
 * What differs: the repack widens (F16 to fp32, int8 to s16 pairs minus the zero point), and a
 * kernel leaves its accumulators in the task's tile buffer, from which the store functions of the
 * lowp GEMM family write y: one run of channels per pixel (NHWC) or of pixels per channel row
 * (NCHW), with the bias, clamp and conversion or exact requantisation of quant.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../ukernel/config.h"
#include "../core/plan.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "gspc.h"
#include "gspc_geom.h"
#include "../ukernel/lowp_gspc_ukernel.h"

#define GLP_MAX_NV 4
#define GLP_MAX_R 4
#define GLP_MAX_W 32
#define GLP_MAX_LANES 64

typedef struct glp_data {
  const dlc_lowp_gspc_family *fam;
  int q8;
  dlc_f16_gspc_ukernel_fn kf16;
  dlc_q8_gspc_ukernel_fn kq8;
  dlc_gspc_grid grid;           /* the tile and the blocking of the output */
  size_t cpt;                   /* input channels per packed channel: 1, or 2 (int8 pairs) */
  size_t row_stride;            /* elements per packed row: t_i * s_w * wq * gpv */
  size_t slab;                  /* bytes of one task's packed input (64-byte multiple) */
  size_t tile_bytes;            /* bytes of one task's accumulator buffer: a tile (NHWC), a row of
                                   tiles (NCHW, rows ldr apart, channels ldb apart) */
  size_t blk;                   /* weight elements of one (group block, oc block) */
  size_t ntasks;
  void *w;                      /* [n_gb][n_ocb][blk] halves or s16 */
  ptrdiff_t *tap_off;
  int32_t perm[GLP_MAX_LANES];
  dlc_lowp_gspc_params prm;
} glp_data;

typedef struct search_ctx {
  const glp_data *d;
  int nhwc;
} search_ctx;

static int has_tile(const void *ctx, size_t gpv, size_t nv, size_t r, size_t w) {
  const glp_data *d = ((const search_ctx *)ctx)->d;
  return d->q8 ? d->fam->get_q8(gpv, nv, r, w) != NULL : d->fam->get_f16(gpv, nv, r, w) != NULL;
}

/* The epilogue: a store of every product, and one store call per pixel (NHWC) or per channel row
   (NCHW) of the tile. */
static double epilogue(const void *ctx, size_t nv, size_t np, size_t rn, size_t n_wt) {
  const search_ctx *c = ctx;
  const size_t nvl = nv * c->d->fam->t_o;
  const double calls = c->nhwc ? (double)np : (double)(nvl * rn) / (double)n_wt;
  return (double)(np * nvl) + 12.0 * calls + 20.0;
}

static int choose_tile(const dlc_conv_shape *s, glp_data *d) {
  const dlc_lowp_gspc_family *f = d->fam;
  const search_ctx sc = {d, s->layout == DLCONV_NHWC};
  const dlc_gspc_tile_search ts = {f->t_o, f->max_gpv, GLP_MAX_NV, GLP_MAX_R, GLP_MAX_W,
                                   (double)(dlc_div_up((size_t)s->cin_g, d->cpt) * (size_t)(s->k_h * s->k_w)),
                                   d->q8 ? f->mac_per_cycle_q8 : f->mac_per_cycle_f16, f->loads_per_cycle,
                                   d->q8 ? f->latency_q8 : f->latency_f16, has_tile, epilogue, &sc};
  dlc_gspc_tile t;
  if (!dlc_gspc_choose_tile(s, &ts, &t)) return 0;
  d->grid = dlc_gspc_grid_of(s, t, f->t_o);
  if (d->q8)
    d->kq8 = f->get_q8(d->grid.gpv, d->grid.nv, d->grid.rn, d->grid.wn);
  else
    d->kf16 = f->get_f16(d->grid.gpv, d->grid.nv, d->grid.rn, d->grid.wn);
  return 1;
}

/* Weights OIHW of the dtype to [gb][ob][ct][tap][ti][lane] (int8: [lane][2], channel pairs),
   zeros for absent groups, channels and the high half past an odd channel count. */
static void pack_weights(const dlc_conv_shape *s, const void *w, glp_data *d) {
  const size_t cin = (size_t)s->cin_g, kpg = (size_t)s->cout_g, taps = (size_t)(s->k_h * s->k_w);
  const size_t t_i = d->prm.t_i, gpv = d->grid.gpv, nvl = d->grid.nvl, groups = (size_t)s->groups, cpt = d->cpt;
  uint16_t *dst = d->w;
  for (size_t gb = 0; gb < d->grid.n_gb; gb++)
    for (size_t ob = 0; ob < d->grid.n_ocb; ob++)
      for (size_t ct = 0; ct < d->prm.n_ct; ct++)
        for (size_t t = 0; t < taps; t++)
          for (size_t ti = 0; ti < t_i; ti++)
            for (size_t l = 0; l < nvl; l++)
              for (size_t h = 0; h < cpt; h++) {
                const size_t g = gb * gpv + l % gpv, oc = ob * d->grid.opb + l / gpv, ic = (ct * t_i + ti) * cpt + h;
                const int in = g < groups && oc < kpg && ic < cin;
                const size_t src = ((g * kpg + oc) * cin + ic) * taps + t;
                if (d->q8)
                  *dst++ = in ? (uint16_t)(int16_t)((const int8_t *)w)[src] : 0;
                else
                  *dst++ = in ? ((const uint16_t *)w)[src] : 0;
              }
}

static void glp_destroy(dlconv_plan *p) {
  glp_data *d = p->algo_data;
  if (!d) return;
  dlc_free(d->tap_off);
  dlc_free(d->w);
  dlc_free(d);
  p->algo_data = NULL;
}

static dlconv_status glp_plan(dlconv_plan *p, const void *w) {
  const dlc_lowp_gspc_family *f = p->kernels->lowp_gspc;
  if (!f || !p->kernels->f16_gemm || !p->kernels->q8_gemm)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "gspc: no F16/int8 micro-kernels for isa %s", p->kernels->name);
  const dlc_conv_shape *s = &p->s;
  const int q8 = p->dtype != DLCONV_F16;
  const size_t cin = (size_t)s->cin_g, kpg = (size_t)s->cout_g, taps = (size_t)(s->k_h * s->k_w);
  if (q8 && cin * taps > DLC_Q8_MAX_K)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED,
                    "gspc: int8 reduction of %zu products per output could overflow the s32 accumulators "
                    "(at most %zu)", cin * taps, DLC_Q8_MAX_K);
  glp_data *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "gspc: out of memory");
  p->algo_data = d;
  d->fam = f;
  d->q8 = q8;
  d->cpt = q8 ? 2 : 1;
  if (!choose_tile(s, d)) {
    glp_destroy(p);
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "gspc: no %s %s micro-kernel fits this shape", f->isa, q8 ? "int8" : "F16");
  }
  const size_t sw = (size_t)s->stride_w, sh = (size_t)s->stride_h, gpv = d->grid.gpv;
  dlc_lowp_gspc_params *prm = &d->prm;
  const size_t units = dlc_div_up(cin, d->cpt); /* packed channels of a group */
  prm->t_i = DLC_MIN(q8 ? f->t_i_q8 : f->t_i_f16, units);
  prm->n_ct = dlc_div_up(units, prm->t_i);
  prm->ti_last = units - (prm->n_ct - 1) * prm->t_i;
  prm->n_tap = taps;
  /* Huge padding, strides or dilations can make the packed window exceed the address space (its
     size in size_t arithmetic would wrap): refuse; direct and gemm handle such layers. */
  if ((double)prm->n_ct * (double)d->grid.h_alloc * (double)sw * (double)d->grid.wq * (double)(prm->t_i * gpv) * 4.0 *
          (double)DLC_MAX(p->nthreads, 1) > (double)PTRDIFF_MAX / 2) {
    glp_destroy(p);
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "gspc: the packed input window of this shape exceeds the address space");
  }
  d->row_stride = prm->t_i * sw * d->grid.wq * gpv;
  prm->in_ti_stride = (ptrdiff_t)(sw * d->grid.wq * gpv);
  prm->in_ct_stride = (ptrdiff_t)(d->grid.h_alloc * d->row_stride);
  prm->in_r_stride = (ptrdiff_t)(sh * d->row_stride);
  d->slab = dlc_round_up(prm->n_ct * d->grid.h_alloc * d->row_stride * 4, DLC_ALIGN);
  const size_t np = d->grid.rn * d->grid.wn;
  prm->channel_major = s->layout == DLCONV_NCHW;
  /* NCHW: a row of tiles fills rows of wo outputs per channel, stored as one run each; the last
     tile may write 7 junk columns past them */
  prm->ldr = dlc_round_up((size_t)s->w_out + 7, 8);
  prm->ldb = prm->channel_major ? d->grid.rn * prm->ldr : d->grid.nvl;
  d->tile_bytes = dlc_round_up(d->grid.nvl * (prm->channel_major ? prm->ldb : np) * 4, DLC_ALIGN);
  /* Groups in lanes: lane L holds (group L % gpv, channel L / gpv); stored channel j of the
     block is group j / kpg, channel j % kpg. */
  if (gpv > 1) {
    const int identity = dlc_gspc_lane_perm(d->grid.nvl, gpv, kpg, d->perm);
    prm->perm = identity ? NULL : d->perm; /* depthwise: lane j is channel j already */
  }

  d->blk = prm->n_ct * taps * prm->t_i * d->grid.nvl * d->cpt;
  const size_t welems = d->grid.n_gb * d->grid.n_ocb * d->blk;
  d->tap_off = dlc_malloc(taps * sizeof *d->tap_off);
  d->w = dlc_malloc(welems * 2 + DLC_ALIGN);
  if (!d->tap_off || !d->w) {
    glp_destroy(p);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "gspc: out of memory packing %zu weights", welems);
  }
  dlc_gspc_tap_offsets(s, d->row_stride, d->grid.wq, gpv, d->tap_off);
  prm->tap_off = d->tap_off;
  pack_weights(s, w, d);

  const size_t jobs = dlc_gspc_njobs(&d->grid, (size_t)s->n);
  d->ntasks = DLC_MAX((size_t)1, DLC_MIN((size_t)p->nthreads, jobs));
  p->workspace_bytes = d->ntasks * (d->slab + d->tile_bytes);
  p->exec_tasks = d->ntasks;
  p->packed_weight_bytes = welems * 2 + taps * sizeof *d->tap_off;
  p->weight_density = 1.0;
  const char *dt = q8 ? "q8" : "f16";
  if (gpv > 1)
    snprintf(p->kernel, sizeof p->kernel, "%s_gspc_%zux%zux%zug%zu__%s", dt, d->grid.rn, d->grid.wn, d->grid.nvl, gpv, f->isa);
  else
    snprintf(p->kernel, sizeof p->kernel, "%s_gspc_%zux%zux%zu__%s", dt, d->grid.rn, d->grid.wn, d->grid.nvl, f->isa);
  return DLCONV_OK;
}

/* Packed rows [hp0, hp1) of group block gb, image n, at slab row (hp - base). Element
   (ct, hp, ti, ph, q, gl) is packed channel ct*t_i + ti of group gb*gpv + gl at padded row hp and
   padded column q*s_w + ph; zeros outside the image and for groups past the last. */
static void pack_rows(const dlconv_plan *p, const glp_data *d, const void *x, size_t n, size_t gb, size_t hp0,
                      size_t hp1, size_t base, int32_t *slab) {
  const dlc_conv_shape *s = &p->s;
  const dlc_lowp_gspc_params *prm = &d->prm;
  const size_t gpv = d->grid.gpv, sw = (size_t)s->stride_w, wq = d->grid.wq, cin = (size_t)s->cin_g, es = d->q8 ? 1 : 2;
  const int64_t h_in = s->h_in, w_in = s->w_in;
  const int nchw = s->layout == DLCONV_NCHW;
  const ptrdiff_t px_step = nchw ? 1 : (ptrdiff_t)s->c_in;
  const ptrdiff_t ch_step = nchw ? (ptrdiff_t)(h_in * w_in) : 1;
  const char *ximg = (const char *)x + n * (size_t)(s->c_in * h_in * w_in) * es;
  dlc_lowp_gspc_pack_args a = {
      .dst_c_stride = (size_t)prm->in_ti_stride,
      .src_c_stride = ch_step,
      .nq = wq,
      .gpv = gpv,
      .ng = DLC_MIN(gpv, (size_t)s->groups - gb * gpv),
      .col_step = (ptrdiff_t)sw,
      .px_step = px_step,
      .g_step = (ptrdiff_t)cin * ch_step,
      .zp = p->q8.x_zero_point,
      .is_signed = p->q8.is_signed,
  };
  const dlc_lowp_gspc_pack_fn pack = d->q8 ? d->fam->pack_q8 : d->fam->pack_f16;
  for (size_t ct = 0; ct < prm->n_ct; ct++) {
    a.n_c = ct + 1 < prm->n_ct ? prm->t_i : prm->ti_last;
    const size_t ch0 = ct * prm->t_i * d->cpt; /* first input channel of the tile in its group */
    a.n_src_c = DLC_MIN(a.n_c * d->cpt, cin - ch0);
    const size_t c0 = gb * gpv * cin + ch0;
    for (size_t hp = hp0; hp < hp1; hp++) {
      int32_t *row = slab + ct * (size_t)prm->in_ct_stride + (hp - base) * d->row_stride;
      const int64_t ih = (int64_t)hp - s->pad_t;
      const int inside = ih >= 0 && ih < h_in;
      a.src = ximg + (inside ? ((ptrdiff_t)c0 * ch_step + (ptrdiff_t)ih * (ptrdiff_t)w_in * px_step) * (ptrdiff_t)es : 0);
      for (size_t ph = 0; ph < sw; ph++) {
        ptrdiff_t col0;
        size_t lo, hi;
        dlc_gspc_phase_columns(s, ph, wq, &col0, &lo, &hi);
        a.dst = row + ph * wq * gpv;
        a.col0 = col0;
        a.q_lo = inside ? lo : 0;
        a.q_hi = inside ? hi : 0;
        pack(&a);
      }
    }
  }
}

/* One run of n accumulators to y through the family's store. */
static inline void store_run(const dlconv_plan *p, const glp_data *d, size_t n, const void *acc, size_t c0,
                             int per_column, char *y) {
  if (d->q8)
    p->kernels->q8_gemm->store(n, acc, &p->q8, c0, per_column, y);
  else
    p->kernels->f16_gemm->store(n, acc, p->bias, c0, per_column, p->s.out_min, p->s.out_max, (uint16_t *)(void *)y);
}

static void glp_task(void *arg, size_t task) {
  const dlc_exec *c = arg;
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const glp_data *d = p->algo_data;
  const size_t n_img = (size_t)s->n, ho = (size_t)s->h_out, wo = (size_t)s->w_out;
  const size_t es = d->q8 ? 1 : 2, co = (size_t)s->c_out;
  char *ws = c->ws + task * (d->slab + d->tile_bytes);
  int32_t *slab = (int32_t *)(void *)ws;
  void *buf = ws + d->slab;
  const size_t ldb = d->prm.ldb;
  size_t begin, end;
  dlc_split_range(dlc_gspc_njobs(&d->grid, n_img), d->ntasks, task, &begin, &end);
  dlc_gspc_slab held = DLC_GSPC_SLAB_EMPTY;
  size_t ob, rt, n, gb;
  dlc_gspc_job_at(&d->grid, n_img, begin, &ob, &rt, &n, &gb);
  for (size_t job = begin; job < end; job++) {
    size_t r0, r1, from;
    dlc_gspc_tile_rows(s, &d->grid, rt, &r0, &r1);
    if (dlc_gspc_slab_need(&held, gb * n_img + n, r0, r1, &from))
      pack_rows(p, d, c->x, n, gb, from, r1, held.base, slab);
    const int32_t *in_row = slab + (r0 - held.base) * d->row_stride;
    const size_t oh0 = rt * d->grid.rn, r_valid = DLC_MIN(d->grid.rn, ho - oh0);
    const size_t c0 = dlc_gspc_first_channel(s, &d->grid, gb, ob), n_lanes = dlc_gspc_lanes_used(s, &d->grid, gb, ob);
    const void *w = (const uint16_t *)d->w + (gb * d->grid.n_ocb + ob) * d->blk;
    char *y = c->y;
    const int nchw = s->layout == DLCONV_NCHW;
    for (size_t wt = 0; wt < d->grid.n_wt; wt++) {
      /* the last tile of a row is shifted left to end at the last column */
      const size_t ow0 = DLC_MIN(wt * d->grid.wn, wo - d->grid.wn);
      int32_t *tb = (int32_t *)buf + (nchw ? ow0 : 0);
      if (d->q8)
        d->kq8(&d->prm, in_row + ow0 * d->grid.gpv, w, tb);
      else
        d->kf16(&d->prm, (const float *)(const void *)(in_row + ow0 * d->grid.gpv), w, (float *)(void *)tb);
      if (!nchw)
        for (size_t r = 0; r < r_valid; r++)
          for (size_t x = 0; x < d->grid.wn; x++)
            store_run(p, d, n_lanes, tb + (r * d->grid.wn + x) * ldb, c0, 1,
                      y + (((n * ho + oh0 + r) * wo + ow0 + x) * co + c0) * es);
    }
    if (nchw)
      for (size_t j = 0; j < n_lanes; j++)
        for (size_t r = 0; r < r_valid; r++)
          store_run(p, d, wo, (const int32_t *)buf + j * ldb + r * d->prm.ldr, c0 + j, 0,
                    y + (((n * co + c0 + j) * ho + oh0 + r) * wo) * es);
    dlc_gspc_next_job(&d->grid, n_img, &ob, &rt, &n, &gb);
  }
}

const dlc_impl_ops dlc_gspc_lowp_ops = {
    .plan = glp_plan,
    .task = glp_task,
    .destroy = glp_destroy,
};
