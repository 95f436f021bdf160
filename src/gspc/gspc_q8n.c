/* gspc_q8n.c - int8 NHWC grouped convolutions of few input channels per group, groups in the
 * lanes of the u8 x s8 quads, x read in place (the family dlc_q8_gcn_family, lowp_gspc_ukernel.h).
 *
 * The lowp GSPC driver (gspc_lowp.c) widens x to s16 pairs in a repacked copy and stores each
 * pixel's run of a group block through its own call: with 2 to 8 channels per group the repack and
 * the stores took three quarters of the layer (WRN-40-2 g16, u8 NHWC). Here a kernel reads each
 * tap of a tile of pixels through a pointer (lowp_ind.h: the zero point's row for padding), puts
 * each output channel's inputs in its lane by a permute of the pixel's channel run, and
 * requantises and stores every channel of its pixels itself. The plan packs the s8 weights by step
 * (a tap's quads, or two taps' channel pairs with 2 per group) and the permute indices per block of
 * 64 output channels. Tasks take contiguous ranges of output rows; a row is cut into tiles of at
 * most mr pixels, run with a pointer per tap where the tile lies inside the image. */
#include <stdio.h>
#include <string.h>

#include "../core/plan.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "../direct/lowp_vpos.h"
#include "../gemm_im2col/lowp_ind.h"
#include "gspc.h"

typedef struct gq_data {
  dlc_q8_params q4;  /* the plan's requantisation with zu * sum(w) out of the bias */
  dlc_q8_gcn_geom g;
  uint32_t *ib;
  int32_t *idx;
  int8_t *w;
  dlc_nhwc_ind ind;
  uint8_t flip;
  size_t ntasks;
} gq_data;

/* Bytes of a pixel's run the block of output channels [c0, c0 + nb) reads, from its first group's. */
static size_t block_span(const dlc_conv_shape *s, size_t c0, size_t nb) {
  const size_t kpg = (size_t)s->cout_g, cin = (size_t)s->cin_g;
  return ((c0 + nb - 1) / kpg - c0 / kpg + 1) * cin;
}

int dlc_gspc_q8n_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k) {
  if (!k || !k->q8_gcn || dtype == DLCONV_F16 || dtype == DLCONV_F32 || s->layout != DLCONV_NHWC) return 0;
  const size_t cin = (size_t)s->cin_g, co = (size_t)s->c_out;
  /* 2 per group (pairs), or 1, 2 or 4 quads a tap */
  if (s->groups == 1 || !(cin == 2 || ((cin == 4 || cin == 8 || cin == 16) && cin / 4 <= k->q8_gcn->max_nsteps))) return 0;
  if ((size_t)(s->k_h * s->k_w) > DLC_IND_MAX_TAPS) return 0;
  for (size_t c0 = 0; c0 < co; c0 += 64)
    if (block_span(s, c0, DLC_MIN((size_t)64, co - c0)) > 64) return 0;
  return 1;
}

static void gq_destroy(dlconv_plan *p) {
  gq_data *d = p->algo_data;
  if (!d) return;
  dlc_free(d->ib);
  dlc_free(d->idx);
  dlc_free(d->w);
  dlc_nhwc_ind_free(&d->ind);
  dlc_q8_d4_params_free(&d->q4);
  dlc_free(d);
  p->algo_data = NULL;
}

/* Weights OIHW s8 to the kernel's steps, and each block's first input byte and permute indices. */
static void pack(const dlc_conv_shape *s, const int8_t *w, gq_data *d) {
  const size_t cin = (size_t)s->cin_g, kpg = (size_t)s->cout_g, co = (size_t)s->c_out;
  const size_t taps = (size_t)(s->k_h * s->k_w), ns = d->g.nsteps, nk = d->g.nk;
  for (size_t b = 0, c0 = 0; c0 < co; b++, c0 += 64) {
    const size_t g0 = c0 / kpg;
    d->ib[b] = (uint32_t)(g0 * cin);
    int8_t *wb = d->w + b * nk * 256;
    int32_t *ix = d->idx + b * ns * 64;
    for (size_t j = 0; j < 64 && c0 + j < co; j++) {
      const size_t oc = c0 + j, v = j / 16, l = j % 16, gl = oc / kpg - g0; /* group from the block's first */
      const int8_t *wo = w + oc * cin * taps;                                /* [ic][tap] */
      if (d->g.pairs) {
        /* the kernel interleaves the two taps' loads by words (vpunpcklwd, vpunpckhwd): the group's
           pair, word gl of a load, is then dword 4 (gl / 8) + gl % 4 of the low (gl % 8 < 4) or the
           high result (16 more: the second table of vpermt2d) */
        ix[v * 16 + l] = (int32_t)((gl % 8 < 4 ? 0 : 16) + 4 * (gl / 8) + gl % 4);
        for (size_t k = 0; k < nk; k++)
          for (size_t e = 0; e < 4; e++) {
            const size_t t = 2 * k + e / 2;
            wb[(k * 4 + v) * 64 + 4 * l + e] = t < taps ? wo[(e % 2) * taps + t] : 0;
          }
      } else {
        for (size_t st = 0; st < ns; st++) ix[(st * 4 + v) * 16 + l] = (int32_t)(gl * cin / 4 + st);
        for (size_t t = 0; t < taps; t++)
          for (size_t st = 0; st < ns; st++)
            for (size_t e = 0; e < 4; e++)
              wb[((t * ns + st) * 4 + v) * 64 + 4 * l + e] = wo[(4 * st + e) * taps + t];
      }
    }
  }
}

static dlconv_status gq_plan(dlconv_plan *p, const void *w) {
  const dlc_conv_shape *s = &p->s;
  if (!dlc_gspc_q8n_applies(s, p->dtype, p->kernels))
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "gspc: no int8 NHWC grouped kernel in registers for this shape on isa %s",
                    p->kernels->name);
  const dlc_q8_gcn_family *f = p->kernels->q8_gcn;
  gq_data *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "gspc: out of memory");
  p->algo_data = d;
  int ok;
  dlconv_status st = dlc_q8_d4_params(p, w, &d->q4, &ok);
  if (st != DLCONV_OK || !ok) {
    gq_destroy(p);
    return st != DLCONV_OK ? st
                           : dlc_fail(DLCONV_ERR_UNSUPPORTED, "gspc: the zero point's correction leaves the s32 bias");
  }
  const size_t cin = (size_t)s->cin_g, co = (size_t)s->c_out, taps = (size_t)(s->k_h * s->k_w);
  const size_t nblk = dlc_div_up(co, 64);
  d->g.c_in = (size_t)s->c_in;
  d->g.c_out = co;
  d->g.pairs = cin == 2;
  d->g.nsteps = cin == 2 ? 1 : cin / 4;
  d->g.bcast = cin != 2 && (size_t)s->cout_g % 16 == 0;
  d->g.nk = cin == 2 ? dlc_div_up(taps, 2) : taps * d->g.nsteps;
  d->ib = dlc_calloc(nblk * sizeof *d->ib);
  d->idx = dlc_calloc(nblk * d->g.nsteps * 64 * sizeof *d->idx);
  d->w = dlc_calloc(nblk * d->g.nk * 256);
  st = d->ib && d->idx && d->w ? dlc_nhwc_ind_init(&d->ind, p, 0, (size_t)s->c_in, f->mr)
                               : dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "gspc: out of memory packing weights");
  if (st != DLCONV_OK) {
    gq_destroy(p);
    return st;
  }
  pack(s, w, d);
  d->g.ib = d->ib;
  d->g.idx = d->idx;
  d->flip = dlc_q8_d4_flip(p);
  d->ntasks = DLC_MAX((size_t)1, DLC_MIN((size_t)p->nthreads, (size_t)(s->n * s->h_out)));
  p->exec_tasks = d->ntasks;
  p->workspace_bytes = 0;
  p->packed_weight_bytes = nblk * (d->g.nk * 256 + d->g.nsteps * 256 + 4) + co * 8;
  p->weight_density = 1.0;
  snprintf(p->kernel, sizeof p->kernel, "%s", f->name);
  return DLCONV_OK;
}

static void gq_task(void *arg, size_t t) {
  const dlc_exec *c = arg;
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const gq_data *d = p->algo_data;
  const dlc_q8_gcn_family *f = p->kernels->q8_gcn;
  const size_t co = (size_t)s->c_out, ho = (size_t)s->h_out, wo = (size_t)s->w_out, kh = (size_t)s->k_h;
  /* tiles of at most mr / 2 pixels per row, as even as they come; two a call with the broadcasts
     (the kernel runs a call as two halves; cutting rows into calls of mr made 28 pixels 4 calls of
     4 + 3). Zen 5, u8: two a call 0.88-0.94 of one a call on the broadcasts' WRN-40-2 and ResNeXt-50
     layers, 1.02-1.04 on the permutes' ResNeXt-50 28 x 28 ones. */
  const size_t nh = dlc_div_up(wo, f->mr / 2), per = d->g.bcast ? 2 : 1;
  const uint8_t *ind[DLC_IND_MAX_TAPS * 16];
  size_t begin, end;
  dlc_split_range((size_t)s->n * ho, d->ntasks, t, &begin, &end);
  for (size_t r = begin; r < end; r++) {
    const size_t img = r / ho, oy = r % ho;
    for (size_t tt = 0; tt < nh; tt += per) {
      const size_t ox0 = tt * wo / nh, m = DLC_MIN(tt + per, nh) * wo / nh - ox0;
      uint8_t *y = (uint8_t *)c->y + (r * wo + ox0) * co;
      ptrdiff_t pstep;
      if (dlc_nhwc_ind_strided_row(&d->ind, s, c->x, 0, img, oy, ox0, m, 0, kh, ind, &pstep)) {
        f->run(m, d->ind.ntaps, ind, pstep, 1, &d->g, d->w, d->flip, &d->q4, y, co);
        continue;
      }
      dlc_nhwc_ind_build(&d->ind, s, c->x, 0, r * wo + ox0, m, ind, NULL);
      f->run(m, d->ind.ntaps, ind, 0, 0, &d->g, d->w, d->flip, &d->q4, y, co);
    }
  }
}

const dlc_impl_ops dlc_gspc_q8n_ops = {
    .plan = gq_plan,
    .task = gq_task,
    .destroy = gq_destroy,
};
