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
 * most mr pixels, run with a pointer per tap where the tile lies inside the image. In lanes mode
 * (as many output as input channels per group, 4, 8 or 16; c_out 32 or a multiple of 64) the
 * weights and the requantisation's bias and multipliers follow the kernel's lane order, and every
 * tile runs strided: one at the image's border with a mask of the pixels each tap reads (building a
 * pointer per pixel and tap there took a quarter of WRN-40-2 g2's 32 x 32 layer). */
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
  dlc_q8_params ql;  /* lanes mode: q4 with bias and mult_f in the kernel's lane order (owned arrays) */
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

int dlc_gspc_q8n_lanes(const dlc_conv_shape *s) {
  const size_t cin = (size_t)s->cin_g, co = (size_t)s->c_out;
  return (cin == 4 || cin == 8 || cin == 16) && (size_t)s->cout_g == cin && (co % 64 == 0 || co == 32);
}

static void gq_destroy(dlconv_plan *p) {
  gq_data *d = p->algo_data;
  if (!d) return;
  dlc_free(d->ib);
  dlc_free(d->idx);
  dlc_free(d->w);
  dlc_free(d->ql.bias);
  dlc_free(d->ql.mult_f);
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
      if (d->g.lanes) {
        /* channel c0 + 4 l + k in lane l of vector k (with 32 channels also in lane l + 8), its quad
           at step st the inputs 4 st .. 4 st + 3 of its group */
        const size_t k = j % 4, l = j / 4;
        for (size_t t = 0; t < taps; t++)
          for (size_t st = 0; st < ns; st++)
            for (size_t e = 0; e < 4; e++)
              for (size_t h = 0; h < (co == 32 ? 2u : 1u); h++)
                wb[((t * ns + st) * 4 + k) * 64 + 4 * (l + 8 * h) + e] = wo[(4 * st + e) * taps + t];
        d->ql.bias[64 * b + 16 * k + l] = d->q4.bias[oc];
        if (d->ql.mult_f) d->ql.mult_f[64 * b + 16 * k + l] = d->q4.mult_f[oc];
      } else if (d->g.pairs) {
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
  /* lanes: WRN-40-2 g2..g8's layers of 4, 8 and 16 channels per group (one load and in-lane shuffles
     a pixel and tap, where the broadcasts take a load per product and the permutes a shuffle) */
  d->g.lanes = dlc_gspc_q8n_lanes(s);
  d->g.nk = cin == 2 ? dlc_div_up(taps, 2) : taps * d->g.nsteps;
  d->ib = dlc_calloc(nblk * sizeof *d->ib);
  d->idx = dlc_calloc(nblk * d->g.nsteps * 64 * sizeof *d->idx);
  d->w = dlc_calloc(nblk * d->g.nk * 256);
  int ok_l = 1;
  if (d->g.lanes) {
    d->ql = d->q4;
    d->ql.bias = dlc_calloc(nblk * 64 * sizeof(int32_t));
    d->ql.mult_f = d->q4.mult_f ? dlc_calloc(nblk * 64 * sizeof(float)) : NULL;
    ok_l = d->ql.bias && (!d->q4.mult_f || d->ql.mult_f);
  }
  st = d->ib && d->idx && d->w && ok_l ? dlc_nhwc_ind_init(&d->ind, p, 0, (size_t)s->c_in, f->mr)
                               : dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "gspc: out of memory packing weights");
  if (st != DLCONV_OK) {
    gq_destroy(p);
    return st;
  }
  pack(s, w, d);
  d->g.ib = d->ib;
  d->g.idx = d->idx;
  d->g.ql = &d->ql;
  d->g.zp = d->ind.zp;
  d->flip = dlc_q8_d4_flip(p);
  d->ntasks = DLC_MAX((size_t)1, DLC_MIN((size_t)p->nthreads, (size_t)(s->n * s->h_out)));
  p->exec_tasks = d->ntasks;
  p->workspace_bytes = 0;
  p->packed_weight_bytes = nblk * (d->g.nk * 256 + d->g.nsteps * 256 + 4) + co * 8;
  p->weight_density = 1.0;
  snprintf(p->kernel, sizeof p->kernel, "%s", f->name);
  return DLCONV_OK;
}

/* A tile of m <= 8 pixels of output row oy (image img) from column ox0, strided even where it reaches
   into the padding (lanes mode, the family's vm): a pointer per tap for its first pixel, where the
   window may start outside the image (never read there), per tap the pixels that read x, and the
   pixels' spacing to *pstep. Returns whether every tap of every pixel lies in the image. */
static int edge_row(const dlc_conv_shape *s, const uint8_t *x, size_t img, size_t oy, size_t ox0, size_t m,
                    const uint8_t **tap, uint8_t *vm, ptrdiff_t *pstep) {
  const int64_t cin = s->c_in, wi = s->w_in, sw = s->stride_w, ix0 = (int64_t)ox0 * sw - s->pad_l;
  const int64_t iy0 = (int64_t)oy * s->stride_h - s->pad_t, mm = (int64_t)m;
  const uintptr_t base = (uintptr_t)(x + img * (size_t)(s->h_in * wi * cin));
  const unsigned all = (1u << m) - 1;
  unsigned full = all, cols[DLC_IND_MAX_TAPS];
  for (int64_t kx = 0; kx < s->k_w; kx++) {
    /* pixels i with 0 <= ix + i sw < w_in: [lo, hi) */
    const int64_t ix = ix0 + kx * s->dil_w;
    const int64_t lo = ix >= 0 ? 0 : DLC_MIN(mm, (-ix + sw - 1) / sw);
    const int64_t hi = ix >= wi ? 0 : DLC_MIN(mm, (wi - ix + sw - 1) / sw);
    cols[kx] = hi > lo ? (all >> (mm - hi)) & ~((1u << lo) - 1) : 0;
  }
  for (int64_t ky = 0, t = 0; ky < s->k_h; ky++) {
    const int64_t iy = iy0 + ky * s->dil_h;
    const int row_in = iy >= 0 && iy < s->h_in;
    for (int64_t kx = 0; kx < s->k_w; kx++, t++) {
      const unsigned bits = row_in ? cols[kx] : 0;
      vm[t] = (uint8_t)bits;
      full &= bits;
      /* in integers: the address may lie outside x (its pixels are not read there) */
      tap[t] = (const uint8_t *)(base + (uintptr_t)((iy * wi + ix0 + kx * s->dil_w) * cin));
    }
  }
  *pstep = (ptrdiff_t)(sw * cin);
  return full == all;
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
  const size_t nh = dlc_div_up(wo, f->mr / 2), per = d->g.bcast || d->g.lanes ? 2 : 1;
  const uint8_t *ind[DLC_IND_MAX_TAPS * 16];
  size_t begin, end;
  dlc_split_range((size_t)s->n * ho, d->ntasks, t, &begin, &end);
  for (size_t r = begin; r < end; r++) {
    const size_t img = r / ho, oy = r % ho;
    for (size_t tt = 0; tt < nh; tt += per) {
      const size_t ox0 = tt * wo / nh, m = DLC_MIN(tt + per, nh) * wo / nh - ox0;
      uint8_t *y = (uint8_t *)c->y + (r * wo + ox0) * co;
      ptrdiff_t pstep;
      if (d->g.lanes) {
        uint8_t vm[DLC_IND_MAX_TAPS];
        const int inside = edge_row(s, c->x, img, oy, ox0, m, ind, vm, &pstep);
        f->run(m, d->ind.ntaps, ind, pstep, 1, inside ? NULL : vm, &d->g, d->w, d->flip, &d->q4, y, co);
        continue;
      }
      if (dlc_nhwc_ind_strided_row(&d->ind, s, c->x, 0, img, oy, ox0, m, 0, kh, ind, &pstep)) {
        f->run(m, d->ind.ntaps, ind, pstep, 1, NULL, &d->g, d->w, d->flip, &d->q4, y, co);
        continue;
      }
      dlc_nhwc_ind_build(&d->ind, s, c->x, 0, r * wo + ox0, m, ind, NULL);
      f->run(m, d->ind.ntaps, ind, 0, 0, NULL, &d->g, d->w, d->flip, &d->q4, y, co);
    }
  }
}

const dlc_impl_ops dlc_gspc_q8n_ops = {
    .plan = gq_plan,
    .task = gq_task,
    .destroy = gq_destroy,
};
