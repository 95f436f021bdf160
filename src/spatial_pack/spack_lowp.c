/* spack_lowp.c - the spatial pack driver for F16 and int8, NCHW and NHWC, ISA-independent.
 *
 * As the fp32 driver (spack.c) does, a job packs the input window of a band of output rows into
 * its workspace slice, with the padding written by the copy, and then runs every output channel
 * of its group over it while it is in cache; the weights were packed at plan time, channel
 * blocks of mr outermost. The packed window is a strip of the virtual-position copy of
 * src/quant/lowp_vpos.h (int8: x - x_zero_point as s16 channel pairs; F16: halves), split by
 * stride phase, so the family's ukernel_ib reads each tap's run in place, and the band is sized
 * so that the strip stays in L2 (the direct driver copies whole images instead).
 *
 * The layout is the caller's at both ends: the strip is packed from NCHW rows or transposed from
 * NHWC pixels, and the accumulators (output channels x positions) are stored as runs of pixels
 * (NCHW) or, through a column gather, as runs of channels (NHWC).
 *
 * Jobs are (image, group, band[, channel block]); channel blocks only split a band when there
 * are fewer bands than threads (each block then packs its own strip). NHWC jobs take a block of
 * groups instead: the strip is transposed from longer runs of each pixel, and each pixel is
 * stored as one run of the block's channels (ResNeXt-50's g32 layers have 4-32 channels per
 * group, whose per-group stores and strips cost more than the products). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../ukernel/config.h"
#include "../core/plan.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "../direct/lowp_vpos.h"

#include "../core/test_hooks.h"
#include "spack.h"

#if defined(DLC_TEST_HOOKS)
static atomic_int band_hook = 0;
void dlc_test_spack_lowp_band_rows(int rows) { atomic_store_explicit(&band_hook, rows, memory_order_relaxed); }
#define BAND_HOOK() atomic_load_explicit(&band_hook, memory_order_relaxed)
#else
#define BAND_HOOK() 0
#endif

/* Strip budget: half of a 512 KB L2, next to the accumulators and an A panel. */
#define SPLP_STRIP_BYTES (192u * 1024u)
/* Positions per band at most (run in blocks of 256): longer bands save little halo. */
#define SPLP_MAX_POSITIONS 2048u
/* NHWC grouped layers: a job's block of groups has up to this many output channels (ResNeXt-50's
   g32 layers, u8, against one group per job: 0.40-0.98 of the time; blocks of 32 or 128
   channels: 0.98-1.24 of this one's). */
#define SPLP_GROUP_CHANNELS 64u

typedef struct splp_data {
  dlc_lowp_vpos v;
  int nhwc;
  size_t gblk, ngb;         /* groups per job (NHWC: a block, see the top), group blocks */
  size_t bh, nbands;        /* output rows per band, bands per image */
  size_t hqb, planeq;       /* sub-plane rows and units of a strip */
  size_t N;                 /* virtual positions of a band, rounded up to nr */
  size_t group_units;       /* units of one group's strip: cpg * nslot * planeq */
  size_t strip_units;       /* gblk * group_units */
  size_t strip_bytes;       /* with the slack junk positions read past the last sub-plane */
  ptrdiff_t *boff;
  size_t nc;                /* positions per block of the accumulators */
  size_t mc, mblocks, njobs, ntasks;
  size_t acc_bytes, a32_bytes, col_bytes, ws_slice;
} splp_data;

static void free_data(splp_data *d) {
  if (!d) return;
  dlc_free(d->boff);
  dlc_lowp_vpos_free(&d->v);
  dlc_free(d);
}

static void splp_destroy(dlconv_plan *p) { free_data(p->algo_data); }

static size_t strip_rows(const dlc_conv_shape *s, size_t bh) {
  return bh - 1 + (size_t)(s->dil_h * (s->k_h - 1)) / (size_t)s->stride_h + 1;
}

/* The band: the most rows whose strip fits the budget and whose positions stay under the cap
   (at least one row), then evened out over the bands; fewer rows when the bands of all images
   and groups would leave threads idle. */
static void choose_band(const dlconv_plan *p, splp_data *d) {
  const dlc_conv_shape *s = &p->s;
  const dlc_lowp_vpos *v = &d->v;
  const size_t ho = (size_t)s->h_out, unit_row = d->gblk * v->cpg * v->nslot * v->wq * v->u * 2;
  size_t bh = 1;
  while (bh < ho && strip_rows(s, bh + 1) * unit_row <= SPLP_STRIP_BYTES &&
         bh * v->wq + (size_t)s->w_out <= SPLP_MAX_POSITIONS)
    bh++;
  const int forced = BAND_HOOK();
  if (forced > 0) bh = DLC_MIN(bh, (size_t)forced);
  size_t nbands = dlc_div_up(ho, bh);
  const size_t per_band = (size_t)s->n * d->ngb;
  if (per_band * nbands < (size_t)p->nthreads) nbands = DLC_MIN(ho, dlc_div_up((size_t)p->nthreads, per_band));
  d->bh = dlc_div_up(ho, nbands);
  d->nbands = dlc_div_up(ho, d->bh);
}

static dlconv_status splp_plan(dlconv_plan *p, const void *w) {
  const dlc_conv_shape *s = &p->s;
  splp_data *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning spatial_pack");
  dlconv_status st = dlc_lowp_vpos_plan(&d->v, p, w, "spatial_pack");
  if (st != DLCONV_OK) {
    free_data(d);
    return st;
  }
  const dlc_lowp_vpos *v = &d->v;
  d->nhwc = s->layout == DLCONV_NHWC;
  d->gblk = 1;
  if (d->nhwc)
    for (size_t gb = 2; gb <= (size_t)s->groups && gb * (size_t)s->cout_g <= SPLP_GROUP_CHANNELS; gb++)
      if ((size_t)s->groups % gb == 0) d->gblk = gb;
  d->ngb = (size_t)s->groups / d->gblk;
  choose_band(p, d);
  d->hqb = strip_rows(s, d->bh);
  d->planeq = d->hqb * v->wq;
  d->N = dlc_round_up((d->bh - 1) * v->wq + (size_t)s->w_out, v->nr);
  d->group_units = v->cpg * v->nslot * d->planeq;
  d->strip_units = d->gblk * d->group_units;
  /* the last tile of a band reads up to N - 1 + the largest tap offset (< planeq) past the start
     of the last sub-plane */
  d->strip_bytes = dlc_round_up((d->strip_units + d->N + v->nr) * v->u * 2, DLC_ALIGN);
  d->boff = dlc_malloc(v->kunits * sizeof(ptrdiff_t));
  if (!d->boff) {
    free_data(d);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning spatial_pack");
  }
  dlc_lowp_vpos_offsets(v, s, d->planeq, d->boff);

  const size_t M = (size_t)s->cout_g, bands = (size_t)s->n * d->ngb * d->nbands;
  d->mblocks = bands < (size_t)p->nthreads && d->gblk == 1 ? DLC_MIN(v->wpanels, dlc_div_up((size_t)p->nthreads, bands))
                                                           : 1;
  d->mc = dlc_round_up(dlc_div_up(M, d->mblocks), v->mr);
  d->mblocks = dlc_div_up(M, d->mc);
  d->njobs = bands * d->mblocks;
  d->ntasks = DLC_MIN((size_t)p->nthreads, d->njobs);
  d->nc = dlc_balanced_block(d->N, 256, v->nr);
  if (d->gblk > 1) d->mc = M; /* the groups' rows follow each other */
  d->acc_bytes = dlc_round_up(d->gblk * d->mc * d->nc * 4, DLC_ALIGN);
  d->a32_bytes = v->q8 ? 0 : dlc_round_up((v->kcu * v->mr + 8) * 4, DLC_ALIGN);
  d->col_bytes = d->nhwc ? dlc_round_up(d->gblk * d->mc * 4, DLC_ALIGN) : 0;
  d->ws_slice = d->strip_bytes + d->acc_bytes + d->a32_bytes + d->col_bytes;
  p->algo_data = d;
  p->packed_weight_bytes = v->wpack_bytes;
  p->workspace_bytes = d->ntasks * d->ws_slice;
  p->exec_tasks = d->ntasks;
  snprintf(p->kernel, sizeof p->kernel, "%s", dlc_lowp_vpos_kernel_name(v, p));
  return DLCONV_OK;
}

/* The strip of band rows [oy0, oy0 + bh) of (img, groups [g0, g0 + gblk)): strip row r is
   sub-plane row oy0 + r. */
static void pack_strip(const dlc_exec *c, size_t img, size_t g0, size_t oy0, int16_t *strip) {
  const splp_data *d = c->p->algo_data;
  const dlc_lowp_vpos *v = &d->v;
  const size_t plane_stride = v->nslot * d->planeq * v->u;
  for (size_t gi = 0; gi < d->gblk; gi++)
    for (size_t slot = 0; slot < v->nslot; slot++)
      for (size_t r = 0; r < d->hqb; r++) {
        int16_t *row = strip + (gi * d->group_units + slot * d->planeq + r * v->wq) * v->u;
        if (d->nhwc) {
          dlc_lowp_vpos_copy_rows_nhwc(c->p, v, c->x, img, g0 + gi, slot, oy0 + r, row, plane_stride);
          continue;
        }
        for (size_t cu = 0; cu < v->cpg; cu++)
          dlc_lowp_vpos_copy_row_nchw(c->p, v, c->x, img, g0 + gi, cu, slot, oy0 + r, row + cu * plane_stride);
      }
}

/* Runs the statement block given last for each stretch [f0, f1) of valid virtual positions in
   [n0, n0 + nlen) that lies within output row r of a band of `rows` rows. */
#define FOR_EACH_RUN(d, wo, rows, n0, nlen, ...)                                                       \
  do {                                                                                                  \
    const size_t wq_ = (d)->v.wq, end_ = (n0) + (nlen);                                                 \
    for (size_t r = (n0) / wq_; r < (rows) && r * wq_ < end_; r++) {                                     \
      const size_t f0 = DLC_MAX((n0), r * wq_), f1 = DLC_MIN(end_, r * wq_ + (wo));                     \
      if (f0 < f1) __VA_ARGS__                                                                          \
    }                                                                                                   \
  } while (0)

/* NCHW: accumulator rows [i0, i1) (channels m0 + i; positions n0.. of the band at oy0) to y. */
static void store_nchw(const dlc_exec *c, size_t img, size_t g, size_t m0, size_t oy0, size_t rows, size_t n0,
                       size_t nlen, const void *acc, size_t i0, size_t i1) {
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const splp_data *d = c->p->algo_data;
  const size_t wo = (size_t)s->w_out, wq = d->v.wq, P = (size_t)(s->h_out * s->w_out), es = d->v.q8 ? 1 : 2;
  for (size_t i = i0; i < i1; i++) {
    const size_t oc = g * (size_t)s->cout_g + m0 + i;
    char *yband = (char *)c->y + ((img * (size_t)s->c_out + oc) * P + oy0 * wo) * es;
    if (wq == wo) { /* no virtual columns: one run */
      const size_t f1 = DLC_MIN(n0 + nlen, rows * wo);
      if (d->v.q8)
        p->kernels->q8_gemm->store(f1 - n0, (const int32_t *)acc + i * d->nc, dlc_lowp_vpos_q8(&d->v, p), oc, 0, yband + n0);
      else
        p->kernels->f16_gemm->store(f1 - n0, (const float *)acc + i * d->nc, p->bias, oc, 0, s->out_min, s->out_max,
                                    (uint16_t *)yband + n0);
      continue;
    }
    FOR_EACH_RUN(d, wo, rows, n0, nlen, {
      const size_t a = i * d->nc + f0 - n0, o = r * wo + f0 - r * wq;
      if (d->v.q8)
        p->kernels->q8_gemm->store(f1 - f0, (const int32_t *)acc + a, dlc_lowp_vpos_q8(&d->v, p), oc, 0, yband + o);
      else
        p->kernels->f16_gemm->store(f1 - f0, (const float *)acc + a, p->bias, oc, 0, s->out_min, s->out_max,
                                    (uint16_t *)yband + o);
    });
  }
}

/* NHWC: each valid position of [n0, n0 + nlen), its mlen channels gathered from the accumulator
   column into col and stored as one run. */
static void store_nhwc(const dlc_exec *c, size_t img, size_t g, size_t m0, size_t mlen, size_t oy0, size_t rows,
                       size_t n0, size_t nlen, const void *acc, void *col) {
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const splp_data *d = c->p->algo_data;
  const size_t wo = (size_t)s->w_out, co = (size_t)s->c_out, es = d->v.q8 ? 1 : 2, c0 = g * (size_t)s->cout_g + m0;
  const uint32_t *a = acc;
  uint32_t *t = col;
  FOR_EACH_RUN(d, wo, rows, n0, nlen, {
    for (size_t q = f0; q < f1; q++) {
      for (size_t i = 0; i < mlen; i++) t[i] = a[i * d->nc + q - n0];
      char *yo = (char *)c->y + (((img * (size_t)s->h_out + oy0 + r) * wo + q - r * d->v.wq) * co + c0) * es;
      if (d->v.q8)
        p->kernels->q8_gemm->store(mlen, col, dlc_lowp_vpos_q8(&d->v, p), c0, 1, yo);
      else
        p->kernels->f16_gemm->store(mlen, col, p->bias, c0, 1, s->out_min, s->out_max, (uint16_t *)yo);
    }
  });
}

static void run_job(const dlc_exec *c, size_t job, char *slice) {
  const dlconv_plan *p = c->p;
  const splp_data *d = c->p->algo_data;
  const dlc_lowp_vpos *v = &d->v;
  const size_t mb = job % d->mblocks, band = job / d->mblocks % d->nbands;
  const size_t g0 = job / d->mblocks / d->nbands % d->ngb * d->gblk, img = job / d->mblocks / d->nbands / d->ngb;
  const size_t oy0 = band * d->bh, rows = DLC_MIN(d->bh, (size_t)p->s.h_out - oy0);
  const size_t m0 = mb * d->mc, mlen = DLC_MIN(d->mc, (size_t)p->s.cout_g - m0);
  int16_t *strip = (int16_t *)slice;
  char *acc = slice + d->strip_bytes;
  float *a32 = v->q8 ? NULL : (float *)(acc + d->acc_bytes);
  void *col = acc + d->acc_bytes + d->a32_bytes;
  pack_strip(c, img, g0, oy0, strip);
  /* blocks of nc positions: the K chunk of B that every A panel re-reads stays in L2 */
  const size_t nvalid = (rows - 1) * v->wq + (size_t)p->s.w_out;
  for (size_t n0 = 0; n0 < nvalid; n0 += d->nc) {
    const size_t nlen = DLC_MIN(d->nc, d->N - n0);
    for (size_t gi = 0; gi < d->gblk; gi++)
      for (size_t pc = 0; pc < v->kunits; pc += v->kcu) {
        const size_t kcu = DLC_MIN(v->kcu, v->kunits - pc);
        const int last = pc + kcu == v->kunits;
        const int16_t *b = strip + (gi * d->group_units + n0) * v->u;
        for (size_t ir = 0; ir < mlen; ir += v->mr) {
          const size_t m = DLC_MIN(v->mr, mlen - ir);
          dlc_lowp_vpos_panel(p, v, g0 + gi, m0 + ir, m, pc, kcu, b, d->boff, 0, nlen,
                              acc + (gi * d->mc + ir) * d->nc * 4, d->nc, a32);
          /* NCHW rows are final here: to y while they are in cache */
          if (last && !d->nhwc) store_nchw(c, img, g0, m0, oy0, rows, n0, nlen, acc, ir, ir + m);
        }
      }
    if (d->nhwc) store_nhwc(c, img, g0, m0, d->gblk * mlen, oy0, rows, n0, nlen, acc, col);
  }
}

static void splp_task(void *arg, size_t t) {
  const dlc_exec *c = arg;
  const splp_data *d = c->p->algo_data;
  char *slice = c->ws + t * d->ws_slice;
  /* the slack past the last sub-plane: only junk positions read it, zero keeps it deterministic */
  const size_t used = d->strip_units * d->v.u * 2;
  memset(slice + used, 0, d->strip_bytes - used);
  size_t begin, end;
  dlc_split_range(d->njobs, d->ntasks, t, &begin, &end);
  for (size_t j = begin; j < end; j++) run_job(c, j, slice);
}

const dlc_impl_ops dlc_spack_lowp_ops = {
    .plan = splp_plan,
    .task = splp_task,
    .destroy = splp_destroy,
};
