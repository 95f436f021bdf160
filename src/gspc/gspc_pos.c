/* gspc_pos.c - GSPC's positions-in-lanes mode (gspc_ukernel.h), fp32 NCHW grouped layers.
 *
 * Groups in lanes (gspc.c) fills a vector with the output channels of several small groups, but
 * NCHW then needs a transpose of every tile at its store and a transposing repack, and a tile of
 * 18 reduction steps (2 channels per group, 3x3) spends as long in them as in its products. Here a
 * vector is VL neighbouring output pixels of one channel instead, as the planes already are:
 *
 * Plan: the weights as [group][oc block][C_PG][k_h*k_w][NO] (zero-padded to NO channels), the bias
 * as [group][oc block][NO], the tap offsets into the packed phase planes.
 *
 * Execute: jobs (group, image, position block, oc block), oc blocks fastest; a task repacks the
 * group's input of an image into its workspace slice (gspc_ukernel.h's phase planes, through the
 * family's repack, one stride phase of a padded row of all C_PG channels per call) when its jobs
 * reach the next (group, image), then every oc block of every position block reads it. */
#include "gspc_pos.h"

#include <stdio.h>
#include <string.h>

#include "../core/util.h"
#include "gspc_geom.h"

#define POS_MAX_NV 16

struct dlc_gspc_pos {
  const dlc_f32_gspc_family *fam;
  dlc_f32_gspc_pos_fn kern, tail; /* nv vectors; the last block's tail_nv (NULL: none) */
  size_t no, nv, tail_nv, n_ob, n_pb, nvec;
  size_t hq, wq;                  /* packed rows and columns of one phase plane */
  size_t ch_stride;               /* floats of one packed channel: its s_h*s_w planes and slack */
  size_t slab, ntasks, blk;       /* floats per task; tasks; floats of one (group, oc block) */
  float *w, *bias;
  ptrdiff_t *tap_off;
  dlc_f32_gspc_pos_params prm;
};

/* Positions in lanes where the groups-in-lanes tiles are short and spend their time on the NCHW
   transposes, and the virtual positions mostly are outputs: planes of more than 8 x 8 outputs
   (8 x 8 with padding 1: 80% of the lanes are outputs, 16 x 16 89%, 32 x 32 94%), up to 8 output
   channels per group, or up to 32 on planes of 32 x 32 and more. Zen 5, AVX-512, 1 thread,
   WRN-40-2 g2..g16 3x3 layers, ms per call with positions / groups in lanes:
     32 x 32 outputs: 2, 4, 8 channels per group 0.76, 0.63, 0.61; 16 0.79, 32 0.86;
       stride 2 (from 32 x 32 to 16 x 16), 2, 4, 8 channels 0.88, 0.80, 0.84; 16 0.85;
     16 x 16 outputs: 4, 8 channels 0.77, 0.89; 16 0.98, 32 1.05;
     8 x 8 outputs: 8, 16, 32 channels 1.09, 1.13, 1.21; stride 2 (16 x 16 to 8 x 8) 1.17-1.19.
   RGB stems (dlc_gspc_pos_stem) by the same bounds, ms per call, positions in lanes / direct /
   im2col + GEMM: 3x32x32>16 0.0050 / 0.0103 / 0.0082, 3x224x224>32 stride 2 0.131 / 0.187 /
   0.164, >24 0.103 / 0.183 / 0.141; AVX2 0.0100 / 0.0107 / 0.0142, 0.235 / 0.253 / 0.275, 0.182
   / 0.217 / 0.228. Not 64 channels: 3x224x224>64 stride 1 1.52 (GEMM 1.02), 7x7 stride 2 1.08
   (direct 1.13; AVX2 4.0 against 2.0). */
int dlc_gspc_pos_pays(const dlc_conv_shape *s, const dlc_f32_gspc_family *f) {
  const int64_t pixels = s->h_out * s->w_out;
  return f->get_pos && s->layout == DLCONV_NCHW && (s->groups > 1 || dlc_gspc_pos_stem(s)) && s->cin_g > 1 &&
         pixels > 64 && (s->cout_g <= 8 || (pixels >= 32 * 32 && s->cout_g <= 32));
}

/* The tile of least estimated time: every (no, nv) of the menu, the lanes of channels past
   cout_g and the vectors past the last position paid in full. */
static int choose(const dlc_conv_shape *s, const dlc_f32_gspc_family *f, size_t nvec, size_t *no_out,
                  size_t *nv_out) {
  const double steps = (double)(s->cin_g * s->k_h * s->k_w);
  double best = 1e300;
  for (size_t no = 1; no <= 8; no *= 2)
    for (size_t nv = 1; nv <= POS_MAX_NV && nv <= nvec; nv++) {
      if (!f->get_pos(no, nv)) continue;
      double cyc = (double)(no * nv) / f->fma_per_cycle;
      if ((double)(no + nv) / f->loads_per_cycle > cyc) cyc = (double)(no + nv) / f->loads_per_cycle;
      if (f->fma_latency > cyc) cyc = f->fma_latency;
      const double blocks = (double)dlc_div_up((size_t)s->cout_g, no) * (double)dlc_div_up(nvec, nv);
      const double c = blocks * (steps * (cyc + 0.5) + (double)(no * nv) * 2.0 * f->store_nchw + 10.0);
      if (c < best * 0.999) {
        best = c;
        *no_out = no;
        *nv_out = nv;
      }
    }
  return best < 1e300;
}

dlconv_status dlc_gspc_pos_plan(dlconv_plan *p, const dlc_f32_gspc_family *f, const float *w, dlc_gspc_pos **out) {
  const dlc_conv_shape *s = &p->s;
  const size_t sh = (size_t)s->stride_h, sw = (size_t)s->stride_w, ho = (size_t)s->h_out, wo = (size_t)s->w_out;
  const size_t cin = (size_t)s->cin_g, kpg = (size_t)s->cout_g, taps = (size_t)(s->k_h * s->k_w);
  const size_t groups = (size_t)s->groups, vl = f->t_o;
  dlc_gspc_pos *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "gspc: out of memory");
  *out = d;
  d->fam = f;
  const size_t w_used = (wo - 1) * sw + (size_t)(s->dil_w * (s->k_w - 1)) + 1;
  const size_t h_used = (ho - 1) * sh + (size_t)(s->dil_h * (s->k_h - 1)) + 1;
  d->wq = dlc_div_up(w_used, sw);
  d->hq = dlc_div_up(h_used, sh);
  d->nvec = dlc_div_up((ho - 1) * d->wq + wo, vl);
  if (!choose(s, f, d->nvec, &d->no, &d->nv))
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "gspc: no %s positions kernel", f->isa);
  d->kern = f->get_pos(d->no, d->nv);
  d->n_ob = dlc_div_up(kpg, d->no);
  d->n_pb = dlc_div_up(d->nvec, d->nv);
  d->tail_nv = d->nvec % d->nv;
  d->tail = d->tail_nv ? f->get_pos(d->no, d->tail_nv) : NULL;
  if (d->tail_nv && !d->tail)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "gspc: no %s positions kernel of %zu vectors", f->isa, d->tail_nv);
  /* the last vector reads up to vl - 1 floats past its channel's last plane, or 2 vl with taps
     in rows of 3 (the vector after the tile's last, loaded to shift columns 1 and 2 in) */
  const int rows3 = s->k_w == 3 && sw == 1 && s->dil_w == 1;
  d->ch_stride = dlc_round_up(sh * sw * d->hq * d->wq + (rows3 ? 2 : 1) * vl, DLC_ALIGN / sizeof(float));
  if ((double)d->ch_stride * (double)cin * sizeof(float) * (double)DLC_MAX(p->nthreads, 1) > (double)PTRDIFF_MAX / 2)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "gspc: the packed input of this shape exceeds the address space");
  d->slab = d->ch_stride * cin;

  d->tap_off = dlc_malloc(taps * sizeof *d->tap_off);
  d->blk = cin * taps * d->no;
  d->w = dlc_malloc(groups * d->n_ob * d->blk * sizeof(float));
  d->bias = dlc_malloc(groups * d->n_ob * d->no * sizeof(float));
  if (!d->tap_off || !d->w || !d->bias) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "gspc: out of memory packing weights");
  for (size_t ky = 0; ky < (size_t)s->k_h; ky++)
    for (size_t kx = 0; kx < (size_t)s->k_w; kx++) {
      const size_t r = ky * (size_t)s->dil_h, c = kx * (size_t)s->dil_w;
      d->tap_off[ky * (size_t)s->k_w + kx] =
          (ptrdiff_t)(((r % sh) * sw + c % sw) * d->hq * d->wq + (r / sh) * d->wq + c / sw);
    }
  float *dw = d->w, *db = d->bias;
  for (size_t g = 0; g < groups; g++)
    for (size_t ob = 0; ob < d->n_ob; ob++) {
      for (size_t o = 0; o < d->no; o++) {
        const size_t oc = ob * d->no + o;
        *db++ = oc < kpg ? p->bias[g * kpg + oc] : 0.0f;
      }
      for (size_t ic = 0; ic < cin; ic++)
        for (size_t t = 0; t < taps; t++)
          for (size_t o = 0; o < d->no; o++) {
            const size_t oc = ob * d->no + o;
            *dw++ = oc < kpg ? w[((g * kpg + oc) * cin + ic) * taps + t] : 0.0f;
          }
    }

  dlc_f32_gspc_pos_params *prm = &d->prm;
  prm->n_ic = cin;
  prm->n_tap = taps;
  prm->tap_off = d->tap_off;
  prm->in_c_stride = (ptrdiff_t)d->ch_stride;
  prm->wq = d->wq;
  prm->w_out = wo;
  prm->h_out = ho;
  prm->out_ch_stride = (ptrdiff_t)(ho * wo);
  prm->out_min = s->out_min;
  prm->out_max = s->out_max;
  prm->rows3 = rows3;
  prm->fast_rows = dlc_gspc_pos_fast_rows(d->wq, wo, ho, vl);

  const size_t jobs = groups * (size_t)s->n * d->n_pb * d->n_ob;
  d->ntasks = DLC_MAX((size_t)1, DLC_MIN((size_t)p->nthreads, jobs));
  p->workspace_bytes = d->ntasks * d->slab * sizeof(float);
  p->exec_tasks = d->ntasks;
  p->packed_weight_bytes = (groups * d->n_ob * (d->blk + d->no)) * sizeof(float) + taps * sizeof *d->tap_off;
  p->weight_density = 1.0;
  snprintf(p->kernel, sizeof p->kernel, "f32_gspc_%zux%zup__%s", d->no, d->nv * vl, f->isa);
  return DLCONV_OK;
}

/* The phase planes of group g of image n: padded row i*s_h + ry, column q*s_w + rx of each
   channel at ch*ch_stride + (ry*s_w + rx)*hq*wq + i*wq + q; zeros outside the image and in the
   slack after the planes. One repack call per channel and phase plane: its rows inside the image
   are the call's "channels" (s_h*w_in floats apart in x, wq in the plane), so that the calls'
   set-up is not paid per row (a call per row cost a third of a 32 x 32 layer with 2 channels per
   group). At stride_w 2, where the family can, one call per channel and phase row fills both
   column phases' planes in one pass over the rows (n_ph 2; one call per phase loaded every row
   twice, half of it dropped each time: the repack was half of WRN-40-2 g16's 32 x 32 stride-2
   layer, Zen 5). Only the plane rows [r0, r1) are written (the rows the task's positions read,
   see task_rows). The padding rows (outside the image) and the slack after the planes are the
   same zeros for every group and image, so they are written once, on a task's first repack
   (zero_pads), not per group: the memsets per channel and group cost as much as a small group's
   copy (Zen 5, WRN-40-2 g16 32 x 32: 2 channels of 34 x 34 floats). The row bounds of each phase
   row and each phase's columns are worked out once per call, not per channel. */
static void pack_group(const dlconv_plan *p, const dlc_gspc_pos *d, const float *x, size_t n, size_t g, size_t r0,
                       size_t r1, int zero_pads, float *slab) {
  const dlc_conv_shape *s = &p->s;
  const size_t sh = (size_t)s->stride_h, sw = (size_t)s->stride_w, cin = (size_t)s->cin_g, hq = d->hq, wq = d->wq;
  const size_t hw = (size_t)(s->h_in * s->w_in), plane = hq * wq, cs = d->ch_stride;
  const float *xg = x + (n * (size_t)s->c_in + g * cin) * hw;
  dlc_f32_gspc_pack_args a = {
      .dst_c_stride = wq,
      .dst_q_stride = 1,
      .src_c_stride = (ptrdiff_t)(sh * (size_t)s->w_in),
      .nq = wq,
      .gpv = 1,
      .ng = 1,
      .col_step = (ptrdiff_t)sw,
      .px_step = 1,
      .g_step = 0,
      .w_img = (ptrdiff_t)s->w_in,
      .ph_off = plane,
  };
  const int both = d->fam->pack_both_phases && sw == 2;
  for (size_t ry = 0; ry < sh; ry++) {
    /* plane rows i inside the image: 0 <= i*s_h + ry - pad_t < h_in */
    const int64_t first = (int64_t)ry - s->pad_t;
    const int64_t i_lo = first >= 0 ? 0 : (-first + (int64_t)sh - 1) / (int64_t)sh;
    int64_t i_hi = s->h_in - first <= 0 ? 0 : (s->h_in - first + (int64_t)sh - 1) / (int64_t)sh;
    if (i_hi > (int64_t)hq) i_hi = (int64_t)hq;
    const size_t lo_row = (size_t)DLC_MIN(i_lo, (int64_t)hq), hi_row = (size_t)DLC_MAX(i_hi, (int64_t)lo_row);
    if (zero_pads)
      for (size_t c = 0; c < cin; c++)
        for (size_t rx = 0; rx < sw; rx++) {
          float *pl = slab + c * cs + (ry * sw + rx) * plane;
          if (lo_row) memset(pl, 0, lo_row * wq * sizeof(float));
          if (hq > hi_row) memset(pl + hi_row * wq, 0, (hq - hi_row) * wq * sizeof(float));
        }
    /* the image's rows clipped to [r0, r1) */
    const size_t lo = DLC_MAX(lo_row, r0), hi = DLC_MIN(hi_row, r1);
    if (hi <= lo) continue;
    const float *src = xg + (ptrdiff_t)((int64_t)lo * (int64_t)sh + first) * (ptrdiff_t)s->w_in;
    a.n_c = hi - lo;
    if (both) {
      a.col0 = -(ptrdiff_t)s->pad_l;
      a.n_ph = 2;
      for (size_t c = 0; c < cin; c++) {
        a.dst = slab + c * cs + ry * sw * plane + lo * wq;
        a.src = src + c * hw;
        d->fam->pack(&a);
      }
      a.n_ph = 0;
      continue;
    }
    for (size_t rx = 0; rx < sw; rx++) {
      ptrdiff_t col0;
      dlc_gspc_phase_columns(s, rx, wq, &col0, &a.q_lo, &a.q_hi);
      a.col0 = col0;
      for (size_t c = 0; c < cin; c++) {
        a.dst = slab + c * cs + (ry * sw + rx) * plane + lo * wq;
        a.src = src + c * hw;
        d->fam->pack(&a);
      }
    }
  }
  if (zero_pads) {
    const size_t used = sh * sw * plane;
    for (size_t c = 0; c < cin; c++) memset(slab + c * cs + used, 0, (cs - used) * sizeof(float));
  }
}

/* The plane rows [*r0, *r1) that position blocks [pb0, pb1) read: from their first position's
   row to the row of their last position's furthest tap within a phase plane, plus the vector a
   tile reads past its last (rows3) or the VL - 1 floats its last vector spans. With several tasks
   on one group (an RGB stem: one group, one image) each packs only its share of the rows, not the
   whole input (at 2 threads the 3x224x224 > 32 stem's repack was done twice, once a thread). */
static void task_rows(const dlconv_plan *p, const dlc_gspc_pos *d, size_t pb0, size_t pb1, size_t *r0, size_t *r1) {
  const dlc_conv_shape *s = &p->s;
  const size_t vl = d->fam->t_o;
  const size_t reach = (size_t)((s->k_h - 1) * s->dil_h / s->stride_h) * d->wq +
                       (size_t)((s->k_w - 1) * s->dil_w / s->stride_w) + (d->prm.rows3 ? 2 : 1) * vl;
  const size_t pos0 = pb0 * d->nv * vl, pos1 = DLC_MIN(pb1 * d->nv, d->nvec) * vl;
  *r0 = DLC_MIN(pos0 / d->wq, d->hq);
  *r1 = DLC_MIN((pos1 + reach) / d->wq + 1, d->hq);
}

/* The jobs' indices (group, image, position block, oc block) stepped from one job to the next
   rather than divided out of the job number per job (four divisions a job were a tenth of the
   driver's time on WRN-40-2 g16's 2-channel groups, Zen 5). */
void dlc_gspc_pos_task(const dlc_exec *c, const dlc_gspc_pos *d, size_t task) {
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const size_t n_img = (size_t)s->n, kpg = (size_t)s->cout_g, vl = d->fam->t_o;
  const size_t plane_out = (size_t)(s->h_out * s->w_out), n_ob = d->n_ob, n_pb = d->n_pb, per_gn = n_pb * n_ob;
  float *slab = (float *)(c->ws + task * d->slab * sizeof(float));
  size_t begin, end;
  dlc_split_range((size_t)s->groups * n_img * per_gn, d->ntasks, task, &begin, &end);
  if (begin >= end) return;
  size_t gn = begin / per_gn, pb = begin % per_gn / n_ob, ob = begin % n_ob;
  size_t n = gn % n_img, g = gn / n_img;
  int packed = 0;
  for (size_t job = begin; job < end;) {
    /* the task's position blocks [pb, pb_end) of this (group, image) */
    const size_t gn_end = DLC_MIN(end, (gn + 1) * per_gn), pb_end = (gn_end - 1 - gn * per_gn) / n_ob + 1;
    size_t r0, r1;
    task_rows(p, d, pb, pb_end, &r0, &r1);
    pack_group(p, d, c->x, n, g, r0, r1, !packed, slab);
    packed = 1;
    float *y_gn = (float *)c->y + (n * (size_t)s->c_out + g * kpg) * plane_out;
    const float *w_g = d->w + g * n_ob * d->blk, *b_g = d->bias + g * n_ob * d->no;
    for (; job < gn_end; job++) {
      const size_t oc0 = ob * d->no, n_oc = DLC_MIN(d->no, kpg - oc0);
      const dlc_f32_gspc_pos_fn k = pb + 1 == n_pb && d->tail ? d->tail : d->kern;
      k(&d->prm, slab, w_g + ob * d->blk, b_g + ob * d->no, y_gn + oc0 * plane_out, pb * d->nv * vl, n_oc);
      if (++ob == n_ob) {
        ob = 0;
        pb++;
      }
    }
    pb = 0;
    gn++;
    if (++n == n_img) {
      n = 0;
      g++;
    }
  }
}

void dlc_gspc_pos_free(dlc_gspc_pos *d) {
  if (!d) return;
  dlc_free(d->tap_off);
  dlc_free(d->w);
  dlc_free(d->bias);
  dlc_free(d);
}
