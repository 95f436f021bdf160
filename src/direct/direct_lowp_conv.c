/* direct_lowp_conv.c - the direct algorithm for F16 and int8 layers with several input channels
 * per group, NCHW, ISA-independent driver.
 *
 * The product is im2col + GEMM's (C[cout_g x P] = W_g * Xcol per image and group) without the
 * im2col matrix. x is copied once per image into padded planes in the kernels' element format
 * (int8: x - x_zero_point in s16, two channels interleaved per plane, so a pair of reduction
 * rows is one run of pairs; F16: halves as given), split by stride phase: for stride (sh, sw)
 * the padded plane becomes sh x sw sub-planes (only the phases some tap reads), so that every
 * tap reads a stride-1 run. Output (oy, ox) is then virtual position v = oy * wq + ox of a
 * sub-plane of width wq, and reduction row (channel unit, tap) of Xcol for 16 consecutive
 * positions is the 16 units at copy + v + offset(unit, tap): the kernels' ukernel_ib reads them
 * in place through a table of these offsets, computed at plan time. The wq - w_out virtual
 * columns per output row are computed and dropped when stored.
 *
 * Small planes ("packed" mode, int8): on a 14 x 14 output with padding 1, 224 virtual positions
 * are computed for 196 outputs, on 7 x 7 64 for 49 (the wq - w_out junk columns, then rounding
 * to whole tiles). There each job instead packs the B panels of its real outputs from the copy,
 * a run of units per output row and reduction unit (plain copies: padding and zero point are
 * already in the copy), and runs the family's packed ukernel, which ends rows at any column.
 *
 * Measured against im2col + GEMM's per-job gather on this code's first target (Zen 2): the
 * gather of the 3x3 layers of ResNet-50 cost 23-33% of their time, the 1x1 layers' interleave
 * 6-27%; the copy here touches each input element once per image.
 *
 * Small planes, int8, where the family has ukernel_t ("transposed" mode): the packed tiles
 * still round a plane's outputs up to whole vectors (a 7 x 7 plane computes 64 columns for 49).
 * ukernel_t makes positions the tile's rows instead and output channels its vector lanes: each
 * row is one real output, read in place from the copy through the same offset table and a table
 * of the outputs' virtual positions, so nothing is rounded, junk or packed. Its accumulators come
 * out transposed (position-major), and go back to channel rows (the family's transpose) once per
 * job before the stores.
 *
 * 1x1 layers without padding, int8 on the q8_d4 family ("local" mode): a position's input is one
 * unit of each channel quad, with no taps or padding to share, so there is no image copy: each job
 * interleaves the quads of its own positions from x into its slice (one pack_quads per quad at
 * stride 1, one per output row at stride 2), which the fused tiles then read from L1. That is one
 * pass over x fewer where the job's block was packed from the copy, and at two threads one fork
 * and join fewer per image (a 32 x 32 x 32 1x1 layer is about 5 us of work).
 *
 * Threads: per image, jobs (group, M block, N block) are split over contiguous ranges, each task
 * with its own accumulator block in the workspace and, where the tasks' jobs read different rows
 * (blocks of positions, or one task), its own copy of x, in which it copies only the sub-plane rows
 * its jobs read, at their places, in the same parallel pass: no pass over the image and barrier
 * before the tiles, and no rows copied on one core and read on another (WRN-40-2 u8, Zen 5,
 * 2 threads: 32 x 32 x 32 > 32 3x3 0.965 of the time). Where they would copy more than 5/4 of
 * the image between them (jobs split over output channels), the copy is one pass over the planes
 * before the jobs. */
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../ukernel/config.h"
#include "../core/plan.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "direct.h"
#include "lowp_vpos.h"

#include "../core/test_hooks.h"

#if defined(DLC_TEST_HOOKS)
static atomic_int packed_hook = -1;
void dlc_test_direct_lowp_packed(int mode) { atomic_store_explicit(&packed_hook, mode, memory_order_relaxed); }
#define PACKED_HOOK() atomic_load_explicit(&packed_hook, memory_order_relaxed)
#else
#define PACKED_HOOK() (-1)
#endif

typedef struct dlcv_data {
  dlc_lowp_vpos v;        /* phases, packed weights, tile, K chunk */
  size_t hq, planeq;      /* sub-plane rows and units (width v.wq) */
  size_t N;               /* virtual positions per plane, rounded up to nr */
  size_t group_units;     /* units of the copy per group */
  size_t copy_bytes;      /* the copy of one image incl. slack, multiple of 64 */
  ptrdiff_t *boff;        /* kunits offsets (int16 elements) from a group's base */
  size_t mc, nc, mblocks, nblocks, njobs, ntasks, copy_tasks, nplanes;
  size_t a32_bytes, ws_slice;
  int packed;             /* small planes: B panels of the real outputs packed per job (see the top) */
  int trans;              /* small planes, int8: ukernel_t, positions as rows (see the top) */
  size_t *pos;            /* trans: the virtual position of each output */
  size_t ldt;             /* trans: row stride of the position-major accumulators */
  size_t bpack_bytes;     /* packed: one K chunk x nc block of B panels, at the start of a slice */
  size_t rowt;            /* tiles per output row (0: tiles run on over row ends; see dlcv_plan) */
  int local;              /* 1x1 without padding: each job packs its positions' quads from x (see the top) */
  size_t ldl;             /* local: units between two channel quads of a job's block (nc rounded to nr) */
  ptrdiff_t *lboff;       /* local: the offset table of that block (int16 elements) */
  int fused;              /* each task copies the rows its jobs read into its own copy (see dlcv_plan) */
  size_t maxin;           /* the largest offset of a tap within its sub-plane (units) */
} dlcv_data;

static void free_data(dlcv_data *d) {
  if (!d) return;
  dlc_free(d->boff);
  dlc_free(d->pos);
  dlc_free(d->lboff);
  dlc_lowp_vpos_free(&d->v);
  dlc_free(d);
}

static void dlcv_destroy(dlconv_plan *p) { free_data(p->algo_data); }

/* F16 where direct.c's F16 conv path runs is that path's (see the top of direct.c). */
int dlc_direct_lowp_conv_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k) {
  return s->cin_g > 1 && !dlc_direct_f16_conv_applies(s, dtype, k);
}

/* The virtual positions [*lo, *hi) of a group's sub-planes that N block nb's tiles start from
   (the rows they read then run on to (*hi - 1 + maxin) / wq). */
static void block_vrange(const dlcv_data *d, const dlc_conv_shape *s, size_t nb, size_t *lo, size_t *hi) {
  const size_t n0 = nb * d->nc, n1 = DLC_MIN(d->N, n0 + d->nc), wq = d->v.wq, wo = (size_t)s->w_out, nr = d->v.nr;
  if (d->trans || d->packed) { /* outputs n0 .. n1 - 1 */
    *lo = n0 / wo * wq + n0 % wo;
    *hi = (n1 - 1) / wo * wq + (n1 - 1) % wo + 1;
  } else if (d->rowt) { /* tiles n0 / nr .. (n1 - 1) / nr */
    const size_t t0 = n0 / nr, t1 = (n1 - 1) / nr;
    *lo = t0 / d->rowt * wq + t0 % d->rowt * nr;
    *hi = t1 / d->rowt * wq + t1 % d->rowt * nr + nr;
  } else {
    *lo = n0;
    *hi = n1;
  }
}

/* Calls fn(arg, g, y0, y1) once per group that jobs [begin, end) touch, with the sub-plane rows
   [y0, y1) their tiles read. */
static void task_rows(const dlcv_data *d, const dlc_conv_shape *s, size_t begin, size_t end,
                      void (*fn)(void *, size_t, size_t, size_t), void *arg) {
  size_t g = SIZE_MAX, lo = 0, hi = 0;
  for (size_t j = begin; j <= end; j++) {
    const size_t gj = j < end ? j / d->nblocks / d->mblocks : SIZE_MAX;
    if (gj != g && g != SIZE_MAX)
      fn(arg, g, lo / d->v.wq, (hi - 1 + d->maxin) / d->v.wq + 1);
    if (j == end) break;
    size_t l, h;
    block_vrange(d, s, j % d->nblocks, &l, &h);
    if (gj != g) {
      g = gj;
      lo = l;
      hi = h;
    } else {
      lo = DLC_MIN(lo, l);
      hi = DLC_MAX(hi, h);
    }
  }
}

static void count_rows(void *arg, size_t g, size_t y0, size_t y1) {
  (void)g;
  size_t *rows = arg; /* rows copied, rows of a plane */
  rows[0] += DLC_MIN(y1, rows[1]) - y0;
}

static dlconv_status dlcv_plan(dlconv_plan *p, const void *w) {
  const dlc_conv_shape *s = &p->s;
  dlcv_data *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning direct");
  dlconv_status st = dlc_lowp_vpos_plan(&d->v, p, w, "direct");
  if (st != DLCONV_OK) {
    free_data(d);
    return st;
  }
  const dlc_lowp_vpos *v = &d->v;
  const int q8 = v->q8;
  d->hq = dlc_div_up((size_t)(s->h_in + s->pad_t + s->pad_b), (size_t)s->stride_h);
  d->planeq = d->hq * v->wq;
  d->N = dlc_round_up((size_t)(s->h_out - 1) * v->wq + (size_t)s->w_out, v->nr); /* virtual positions */
  {
    /* int8: packed mode where the virtual positions exceed the outputs by more than 5% (measured
       on ResNet-50, u8: 3x3 layers on 28 x 28, 14 x 14 and 7 x 7 outputs 0.92-0.97 of the
       in-place time; 56 x 56 (3.6% junk) 1.06), and where a group has 64 output channels or
       more: a job's packing serves the group's rows only, and with fewer it cost more than the
       junk (ResNeXt-50's g32 layers, 4-32 per group: in place 0.81-0.92 of the packed time;
       WRN-40-2 g8 total 3.51 -> 3.18 ms). F16 stays in place: its packed runs were no faster
       there (0.95-1.03) and slower elsewhere, its copies being half as wide. */
    const size_t P = (size_t)(s->h_out * s->w_out);
    const int forced = PACKED_HOOK();
    /* and grouped layers of 4 or more output channels per group on the u8 x s8 quads: their
       virtual-column stores are runs of one output row of a few channels each, whose set-up cost
       as much as the requantisation (WRN-40-2 g2..g16 u8, Zen 5, 1 thread, packed / virtual
       columns: AVX-512 VNNI, 4 to 32 channels per group 0.78-0.92 on 8 x 8 to 32 x 32 planes,
       2 per group 1.00-1.05; AVX2 s16 pairs 1.00-1.32, left as they were) */
    /* ... except where the in-place tiles with ukernel_qv (running on over row ends, or starting at
       each output row, below) are at most 1/8 more than the packed ones: 32 x 32 outputs in tiles
       of 32, 16 x 16 in 9 tiles for 8 (WRN-40-2 g2 u8, 3x3: the packing took a quarter of the
       packed time on 32 x 32, a sixth on 16 x 16; 8 x 8 in 3 tiles for 2 stays packed) */
    const size_t nr = v->nr, rowt_n = (size_t)s->h_out * dlc_div_up((size_t)s->w_out, nr) * nr;
    const int rows_fit = v->d4 && p->kernels->q8_d4->ukernel_qv && 8 * DLC_MIN(rowt_n, d->N) <= 9 * dlc_round_up(P, nr);
    const int pays = q8 && (((20 * d->N > 21 * P || v->kunits < 16) && s->cout_g >= 64) ||
                            (v->d4 && s->groups > 1 && s->cout_g >= 4 && !rows_fit));
    d->packed = (forced < 0 ? pays : forced != 0) && (q8 || p->kernels->f16_gemm->ukernel_a32);
    /* transposed where the packed tiles would round the plane up by more than 5% (7 x 7: 64 for
       49, 14 x 14: 208 for 196), and for strided first layers, whose in-place columns it reads
       without packing them (with q8_store_t, u8: MobileNetV2 features.0.0 3 x 224 x 224 > 32 s2
       0.170 -> 0.146 ms, ResNet-50 conv1 7 x 7 s2 0.889 -> 0.834; VGG-16's stride-1 features.0
       0.96 -> 1.16 stays packed) */
    const dlc_q8d4_gemm_family *f4 = p->kernels->q8_d4;
    const size_t rounded = dlc_round_up(P, v->nr / 2);
    const int trans_pays =
        (s->cout_g >= 64 && ((v->taps > 1 && v->kunits >= 64) || (d->packed && 20 * rounded > 21 * P))) ||
        (s->cout_g >= 32 && v->taps > 1 && s->stride_w > 1 && p->kernels->q8_store_t);
    d->trans = v->d4 && f4->ukernel_t && (forced < 0 ? trans_pays : forced == 2);
    if (d->packed || d->trans) d->N = P;
    if (d->trans) {
      d->packed = 0;
      /* K in chunks of up to 1024 units: each chunk's accumulators go through memory once per
         tile (VGG-16 512 x 28 x 28 3x3: 8.39 ms at 128 units, 8.19 at 1024) */
      d->v.kcu = dlc_balanced_block(v->kunits, 1024, 1);
      st = dlc_lowp_vpos_pack(&d->v, p, w, f4->tm, "direct");
      d->pos = st == DLCONV_OK ? dlc_malloc(P * sizeof(size_t)) : NULL;
      if (!d->pos) {
        free_data(d);
        return st != DLCONV_OK ? st : dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning direct");
      }
      for (size_t q = 0; q < P; q++) d->pos[q] = q / (size_t)s->w_out * v->wq + q % (size_t)s->w_out;
    }
  }
  /* local mode (see the top), where the positions are not rows of ukernel_t: K in one chunk of at
     most 32 quads (a job's block of 256 positions stays within 32 KB), whole quads (a short one would need a padding row as long as the block) */
  if (v->d4 && !d->trans && p->kernels->q8_d4->ukernel_q && PACKED_HOOK() < 0 && v->taps == 1 && !s->pad_t && !s->pad_b &&
      !s->pad_l && !s->pad_r && s->stride_w <= 2 && s->cin_g % 4 == 0 && v->kunits <= 32 && v->kcu == v->kunits) {
    d->local = 1;
    d->packed = d->trans = 0;
    d->N = (size_t)(s->h_out * s->w_out);
  }
  const size_t n_virt = d->N;
  {
    /* in place with ukernel_qv: tiles that start at each output row instead of running on over
       row ends, where that makes fewer (32 x 32 outputs in rows of 34: 32 tiles, not 34; the copy's
       slack stays sized for the longer run). N then counts tiles x nr. */
    const size_t wo = (size_t)s->w_out, tpr = dlc_div_up(wo, v->nr), ho = (size_t)s->h_out;
    if (!d->local && !d->packed && !d->trans && v->d4 && p->kernels->q8_d4->ukernel_qv && v->wq != wo && ho * tpr * v->nr < d->N) {
      d->rowt = tpr;
      d->N = ho * tpr * v->nr;
    }
  }
  d->group_units = v->cpg * v->nslot * d->planeq;
  /* a tile past the last valid position reads up to N - 1 + the largest tap offset (< planeq)
     beyond a plane's start: the last plane of the copy needs N units of slack */
  const size_t groups = (size_t)s->groups;
  d->copy_bytes = dlc_round_up((groups * d->group_units + DLC_MAX(d->N, n_virt) + v->nr) * v->u * 2, DLC_ALIGN);
  d->nplanes = groups * v->cpg * v->nslot;
  d->boff = dlc_malloc(v->kunits * sizeof(ptrdiff_t));
  if (!d->boff) {
    free_data(d);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning direct");
  }
  dlc_lowp_vpos_offsets(v, s, d->planeq, d->boff);

  const size_t M = (size_t)s->cout_g;
  d->mc = dlc_balanced_block(M, 512, v->mr);
  d->nc = dlc_balanced_block(d->N, 256, v->nr);
  d->mblocks = dlc_div_up(M, d->mc);
  d->nblocks = dlc_div_up(d->N, d->nc);
  size_t jobs = groups * d->mblocks * d->nblocks, want = (size_t)p->nthreads;
  if (jobs < want) {
    size_t more = dlc_div_up(want, jobs);
    d->mc = dlc_balanced_block(M, DLC_MAX(v->mr, dlc_div_up(M, d->mblocks * more)), v->mr);
    d->mblocks = dlc_div_up(M, d->mc);
    jobs = groups * d->mblocks * d->nblocks;
    if (jobs < want) {
      more = dlc_div_up(want, jobs);
      d->nc = dlc_balanced_block(d->N, DLC_MAX(v->nr, dlc_div_up(d->N, d->nblocks * more)), v->nr);
      d->nblocks = dlc_div_up(d->N, d->nc);
    }
  }
  d->njobs = groups * d->mblocks * d->nblocks;
  d->ntasks = DLC_MIN((size_t)p->nthreads, d->njobs);
  d->copy_tasks = DLC_MIN((size_t)p->nthreads, d->nplanes);
  d->a32_bytes = q8 ? 0 : dlc_round_up((v->kcu * v->mr + 8) * 4, DLC_ALIGN);
  d->bpack_bytes = d->packed ? dlc_round_up(v->kcu * d->nc * v->u * 2, DLC_ALIGN) : 0;
  if (d->local) {
    d->ldl = dlc_round_up(d->nc, v->nr);
    d->lboff = dlc_malloc(v->kunits * sizeof(ptrdiff_t));
    if (!d->lboff) {
      free_data(d);
      return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning direct");
    }
    for (size_t k = 0; k < v->kunits; k++) d->lboff[k] = (ptrdiff_t)(k * d->ldl * v->u);
    d->bpack_bytes = dlc_round_up(v->kunits * d->ldl * 4, DLC_ALIGN);
    d->copy_bytes = 0;
    d->copy_tasks = 0;
  }
  /* every task copies the sub-plane rows its own jobs read into its own copy, in the compute pass:
     no pass over the whole image before it, and no rows written on one core and read on the other
     (unless the tasks would copy more than 5/4 of the image between them: jobs split over output
     channels rather than positions) */
  for (size_t k = 0; k < v->kunits; k++) d->maxin = DLC_MAX(d->maxin, (size_t)d->boff[k] / v->u % d->planeq);
  if (!d->local && d->ntasks > 0) {
    size_t rows[2] = {0, d->hq}; /* rows copied, rows of a plane */
    for (size_t t = 0; t < d->ntasks; t++) {
      size_t b, e;
      dlc_split_range(d->njobs, d->ntasks, t, &b, &e);
      task_rows(d, s, b, e, count_rows, rows);
    }
    d->fused = d->ntasks == 1 || 4 * rows[0] <= 5 * groups * d->hq;
  }
  d->ldt = dlc_round_up(d->mc, 16);
  d->ws_slice = d->bpack_bytes + dlc_round_up(d->mc * d->nc * 4, DLC_ALIGN) + d->a32_bytes +
                (d->trans ? dlc_round_up(d->nc * d->ldt * 4, DLC_ALIGN) : 0);
  p->algo_data = d;
  p->packed_weight_bytes = v->wpack_bytes;
  p->workspace_bytes = (d->fused ? d->ntasks : 1) * d->copy_bytes + d->ntasks * d->ws_slice;
  snprintf(p->kernel, sizeof p->kernel, "%s", d->trans ? p->kernels->q8_d4->t_name : dlc_lowp_vpos_kernel_name(v, p));
  return DLCONV_OK;
}

typedef struct dlcv_ctx {
  const dlconv_plan *p;
  const dlcv_data *d;
  const void *x;
  void *y;
  int16_t *copy;
  char *slices;
  size_t img;
} dlcv_ctx;

/* One sub-plane of the copy: channel unit cu of group g, phase slot. */
static void copy_plane(const dlcv_ctx *c, size_t plane) {
  const dlcv_data *d = c->d;
  const size_t nslot = d->v.nslot, slot = plane % nslot, cu = plane / nslot % d->v.cpg, g = plane / nslot / d->v.cpg;
  int16_t *dst = c->copy + plane * d->planeq * d->v.u;
  if (dlc_lowp_vpos_copy_plane_d4(c->p, &d->v, c->x, c->img, g, cu, slot, 0, d->hq, dst)) return;
  for (size_t yq = 0; yq < d->hq; yq++)
    dlc_lowp_vpos_copy_row_nchw(c->p, &d->v, c->x, c->img, g, cu, slot, yq, dst + yq * d->v.wq * d->v.u);
}

/* Rows [y0, y1) of every sub-plane of group g (y1 past the plane: junk positions of its last tiles
   read on into the next plane's first rows, which this task may not copy; those rows are filled
   with the padding first, so that every unit a kernel reads is a value x may hold). */
static void copy_rows(void *arg, size_t g, size_t y0, size_t y1) {
  const dlcv_ctx *c = arg;
  const dlcv_data *d = c->d;
  const size_t per = d->v.cpg * d->v.nslot, ubytes = d->v.u * 2;
  if (y1 > d->hq)
    for (size_t pl = g * per + 1; pl <= (g + 1) * per; pl++) {
      const size_t at = pl * d->planeq * ubytes, len = DLC_MIN((y1 - d->hq) * d->v.wq * ubytes, d->copy_bytes - at);
      memset((char *)c->copy + at, d->v.d4 ? d->v.zu : 0, len);
    }
  y1 = DLC_MIN(y1, d->hq);
  for (size_t cu = 0; cu < d->v.cpg; cu++)
    for (size_t slot = 0; slot < d->v.nslot; slot++) {
      int16_t *dst = c->copy + ((g * d->v.cpg + cu) * d->v.nslot + slot) * d->planeq * d->v.u;
      if (dlc_lowp_vpos_copy_plane_d4(c->p, &d->v, c->x, c->img, g, cu, slot, y0, y1, dst)) continue;
      for (size_t yq = y0; yq < y1; yq++)
        dlc_lowp_vpos_copy_row_nchw(c->p, &d->v, c->x, c->img, g, cu, slot, yq, dst + yq * d->v.wq * d->v.u);
    }
}

static void copy_task(void *arg, size_t t) {
  const dlcv_ctx *c = arg;
  size_t begin, end;
  dlc_split_range(c->d->nplanes, c->d->copy_tasks, t, &begin, &end);
  for (size_t pl = begin; pl < end; pl++) copy_plane(c, pl);
}

/* Rows [i0, i1) of a job's accumulators to y: each output row's w_out valid positions. */
static void store_rows(const dlcv_ctx *c, size_t g, size_t m0, size_t n0, size_t nlen, void *acc, size_t i0,
                       size_t i1) {
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const dlcv_data *d = c->d;
  const size_t wo = (size_t)s->w_out, P = (size_t)(s->h_out * s->w_out), es = d->v.q8 ? 1 : 2;
  const size_t oy0 = n0 / d->v.wq, oy1 = DLC_MIN((size_t)s->h_out, dlc_div_up(n0 + nlen, d->v.wq));
  for (size_t i = i0; i < i1; i++) {
    const size_t oc = g * (size_t)s->cout_g + m0 + i;
    char *yplane = (char *)c->y + (c->img * (size_t)s->c_out + oc) * P * es;
    if (d->v.wq == wo || d->packed || d->trans) {
      /* no virtual columns (packed, or no padding and stride 1 along x): one run */
      const size_t f1 = DLC_MIN(n0 + nlen, P);
      if (d->v.q8)
        p->kernels->q8_gemm->store(f1 - n0, (const int32_t *)acc + i * d->nc, dlc_lowp_vpos_q8(&d->v, p), oc, 0, yplane + n0);
      else
        p->kernels->f16_gemm->store(f1 - n0, (const float *)acc + i * d->nc, p->bias, oc, 0, s->out_min, s->out_max,
                                    (uint16_t *)yplane + n0);
      continue;
    }
    if (d->v.q8) {
      /* int8: the rows' outputs moved together in the accumulators (each row's run lands at or
         before where it was), then one store for all of them, which are consecutive in y: a
         store per row of a few channels cost as much in its set-up as the requantisation */
      int32_t *a = (int32_t *)acc + i * d->nc;
      size_t cnt = 0, first = 0;
      for (size_t oy = oy0; oy < oy1; oy++) {
        const size_t f0 = DLC_MAX(n0, oy * d->v.wq), f1 = DLC_MIN(n0 + nlen, oy * d->v.wq + wo);
        if (f0 >= f1) continue;
        if (cnt == 0) first = oy * wo + (f0 - oy * d->v.wq);
        if (cnt != f0 - n0) memmove(a + cnt, a + (f0 - n0), (f1 - f0) * sizeof *a);
        cnt += f1 - f0;
      }
      if (cnt) p->kernels->q8_gemm->store(cnt, a, dlc_lowp_vpos_q8(&d->v, p), oc, 0, yplane + first);
      continue;
    }
    for (size_t oy = oy0; oy < oy1; oy++) {
      const size_t f0 = DLC_MAX(n0, oy * d->v.wq), f1 = DLC_MIN(n0 + nlen, oy * d->v.wq + wo);
      if (f0 >= f1) continue;
      char *yo = yplane + (oy * wo + (f0 - oy * d->v.wq)) * es;
      if (d->v.q8)
        p->kernels->q8_gemm->store(f1 - f0, (const int32_t *)acc + i * d->nc + (f0 - n0), dlc_lowp_vpos_q8(&d->v, p), oc, 0, yo);
      else
        p->kernels->f16_gemm->store(f1 - f0, (const float *)acc + i * d->nc + (f0 - n0), p->bias, oc, 0, s->out_min,
                                    s->out_max, (uint16_t *)yo);
    }
  }
}

/* Packed mode: the B panels of outputs [n0, n0 + nlen) for reduction units [pc, pc + kcu), in the
   packed ukernel's layout (unit (k, j) of a panel at (k * nr + j) * u); lanes past nlen zeros. */
static void pack_b(const dlcv_ctx *c, size_t g, size_t n0, size_t nlen, size_t pc, size_t kcu, int16_t *dst) {
  const dlcv_data *d = c->d;
  const size_t wo = (size_t)c->p->s.w_out, nr = d->v.nr, u = d->v.u, panel = kcu * nr * u;
  const int16_t *gbase = c->copy + g * d->group_units * u;
  if (nlen % nr)
    for (size_t k = 0; k < kcu; k++)
      memset(dst + (nlen / nr) * panel + (k * nr + nlen % nr) * u, 0, (nr - nlen % nr) * u * 2);
  for (size_t l = 0; l < nlen;) {
    /* a run of lanes: within one output row and one panel */
    const size_t q = n0 + l, oy = q / wo, ox = q % wo;
    const size_t run = DLC_MIN(wo - ox, DLC_MIN(nlen - l, nr - l % nr));
    const int16_t *src = gbase + (oy * d->v.wq + ox) * u;
    int16_t *o = dst + (l / nr) * panel + (l % nr) * u;
    /* the usual run lengths (whole rows of 8 x 8 and 16 x 16 outputs, whole tiles) as fixed-size
       copies, which the compiler inlines: a call each cost a fifth of a strided grouped layer */
    const size_t bytes = run * u * 2;
    if (bytes == 32)
      for (size_t k = 0; k < kcu; k++) memcpy(o + k * nr * u, src + d->boff[pc + k], 32);
    else if (bytes == 64)
      for (size_t k = 0; k < kcu; k++) memcpy(o + k * nr * u, src + d->boff[pc + k], 64);
    else if (bytes == 128)
      for (size_t k = 0; k < kcu; k++) memcpy(o + k * nr * u, src + d->boff[pc + k], 128);
    else
      for (size_t k = 0; k < kcu; k++) memcpy(o + k * nr * u, src + d->boff[pc + k], bytes);
    l += run;
  }
}

/* Local mode: the quads of outputs [n0, n0 + nlen) of group g from x, quad cu's run at
   dst + 4 * cu * ldl; the units up to the last tile's end are zeros (only junk lanes read them). */
static void pack_local(const dlcv_ctx *c, size_t g, size_t n0, size_t nlen, uint8_t *dst) {
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const dlcv_data *d = c->d;
  const size_t plane = (size_t)(s->h_in * s->w_in), wi = (size_t)s->w_in, wo = (size_t)s->w_out;
  const size_t sh = (size_t)s->stride_h, sw = (size_t)s->stride_w, ldl = d->ldl;
  const size_t tail = dlc_round_up(nlen, d->v.nr) - nlen;
  const uint8_t *x0 = (const uint8_t *)c->x + (c->img * (size_t)s->c_in + g * (size_t)s->cin_g) * plane;
  const dlc_q8d4_pack_quads_fn pack = p->kernels->q8_d4->pack_quads;
  const uint8_t flip = d->v.flip;
  for (size_t cu = 0; cu < d->v.cpg; cu++) {
    const uint8_t *r = x0 + 4 * cu * plane;
    uint8_t *o = dst + 4 * cu * ldl;
    if (sh == 1 && sw == 1) /* outputs are x's positions: one run */
      pack(nlen, r + n0, r + plane + n0, r + 2 * plane + n0, r + 3 * plane + n0, 1, flip, o);
    else
      for (size_t l = 0; l < nlen;) {
        const size_t q = n0 + l, oy = q / wo, ox = q % wo, run = DLC_MIN(wo - ox, nlen - l);
        const uint8_t *src = r + oy * sh * wi + ox * sw;
        pack(run, src, src + plane, src + 2 * plane, src + 3 * plane, sw, flip, o + 4 * l);
        l += run;
      }
    if (tail) memset(o + 4 * nlen, 0, 4 * tail);
  }
}

/* Transposed mode: per K chunk and panel of tm channels, tiles of tr outputs (measured against
   the panels inner: the same within 1-2%), then the job's accumulators back to channel rows
   and to y. */
static void run_job_t(const dlcv_ctx *c, size_t g, size_t m0, size_t mlen, size_t n0, size_t nlen, char *slice) {
  const dlcv_data *d = c->d;
  const dlc_lowp_vpos *v = &d->v;
  const dlc_q8d4_gemm_family *f = c->p->kernels->q8_d4;
  int32_t *acc = (int32_t *)slice;
  int32_t *acct = (int32_t *)(slice + d->ws_slice - dlc_round_up(d->nc * d->ldt * 4, DLC_ALIGN));
  const uint8_t *b = (const uint8_t *)(c->copy + g * d->group_units * v->u);
  for (size_t pc = 0; pc < v->kunits; pc += v->kcu) {
    const size_t kcu = DLC_MIN(v->kcu, v->kunits - pc);
    /* tiles of even height (49: 6 x 5 + 4 x 6, not 8 x 6 + 1): a short tile streams the same
       panels for a fraction of the work */
    const size_t tiles = dlc_div_up(nlen, f->tr), base = nlen / tiles, taller = nlen % tiles;
    for (size_t i0 = 0; i0 < mlen; i0 += f->tm) {
      const int8_t *a = (const int8_t *)(v->wpack + ((g * v->wpanels + (m0 + i0) / f->tm) * v->kunits + pc) * f->tm * 2);
      for (size_t t = 0, r0 = 0; t < tiles; t++) {
        const size_t np = base + (t < taller);
        f->ukernel_t(np, DLC_MIN(f->tm, mlen - i0), 4 * kcu, a, b, d->pos + n0 + r0, d->boff + pc,
                     acct + r0 * d->ldt + i0, d->ldt, pc > 0);
        r0 += np;
      }
    }
  }
  const dlc_q8_store_t_fn store_t = c->p->kernels->q8_store_t;
  if (store_t) { /* N is the plane here (no virtual columns): channel rows of y at P apart */
    const size_t P = (size_t)(c->p->s.h_out * c->p->s.w_out), oc = g * (size_t)c->p->s.cout_g + m0;
    store_t(nlen, mlen, acct, d->ldt, dlc_lowp_vpos_q8(v, c->p), oc,
            (uint8_t *)c->y + (c->img * (size_t)c->p->s.c_out + oc) * P + n0, P);
    return;
  }
  f->transpose(nlen, mlen, acct, d->ldt, acc, d->nc);
  store_rows(c, g, m0, n0, nlen, acc, 0, mlen);
}

/* Row tiles (d->rowt): tile t of the job's N block reads the nr virtual positions from
   (t / rowt) * wq + (t % rowt) * nr on; the last K chunk goes to y through ukernel_qv. */
static void run_job_rows(const dlcv_ctx *c, size_t g, size_t m0, size_t mlen, size_t n0, size_t nlen, char *slice) {
  const dlcv_data *d = c->d;
  const dlc_lowp_vpos *v = &d->v;
  const dlconv_plan *p = c->p;
  const dlc_q8d4_gemm_family *f4 = p->kernels->q8_d4;
  const size_t nr = v->nr, wq = v->wq, wo = (size_t)p->s.w_out, P = (size_t)(p->s.h_out * p->s.w_out);
  const size_t nv = ((size_t)p->s.h_out - 1) * wq + wo;
  int32_t *acc = (int32_t *)slice;
  const int16_t *b = c->copy + g * d->group_units * v->u;
  for (size_t pc = 0; pc < v->kunits; pc += v->kcu) {
    const size_t kcu = DLC_MIN(v->kcu, v->kunits - pc);
    const int last = pc + kcu == v->kunits;
    for (size_t ir = 0; ir < mlen; ir += v->mr) {
      const size_t m = DLC_MIN(v->mr, mlen - ir), oc = g * (size_t)p->s.cout_g + m0 + ir;
      const int8_t *a = (const int8_t *)(v->wpack + ((g * v->wpanels + (m0 + ir) / v->mr) * v->kunits + pc) * v->mr * v->u);
      uint8_t *yc = (uint8_t *)c->y + (c->img * (size_t)p->s.c_out + oc) * P;
      for (size_t jr = 0; jr < nlen; jr += nr) {
        const size_t t = (n0 + jr) / nr, vp = t / d->rowt * wq + t % d->rowt * nr;
        const uint8_t *bt = (const uint8_t *)(b + vp * v->u);
        int32_t *ct = acc + ir * d->nc + jr;
        if (last)
          f4->ukernel_qv(m, 4 * kcu, a, bt, d->boff + pc, ct, d->nc, pc > 0, dlc_lowp_vpos_q8(v, p), oc, yc, P, vp, nv,
                         wq, wo);
        else
          f4->ukernel_ib(m, 4 * kcu, a, bt, d->boff + pc, ct, d->nc, pc > 0);
      }
    }
  }
}

static void run_job(const dlcv_ctx *c, size_t g, size_t mb, size_t nb, char *slice) {
  const dlcv_data *d = c->d;
  const dlc_lowp_vpos *v = &d->v;
  const size_t M = (size_t)c->p->s.cout_g;
  const size_t m0 = mb * d->mc, mlen = DLC_MIN(d->mc, M - m0);
  const size_t n0 = nb * d->nc, nlen = DLC_MIN(d->nc, d->N - n0);
  if (d->trans) {
    run_job_t(c, g, m0, mlen, n0, nlen, slice);
    return;
  }
  if (d->rowt) {
    run_job_rows(c, g, m0, mlen, n0, nlen, slice);
    return;
  }
  int16_t *bpack = (int16_t *)slice;
  void *acc = slice + d->bpack_bytes;
  float *a32 = v->q8 ? NULL : (float *)(slice + d->ws_slice - d->a32_bytes);
  const int16_t *b = d->packed || d->local ? bpack : c->copy + (g * d->group_units + n0) * v->u;
  const ptrdiff_t *boff = d->local ? d->lboff : d->boff;
  if (d->local) pack_local(c, g, n0, nlen, (uint8_t *)bpack);
  /* outputs that are runs of each channel's plane (no virtual columns): the last chunk's
     accumulators go to y from the kernel's registers (ukernel_q) */
  const int fused = v->d4 && c->p->kernels->q8_d4->ukernel_q && (d->packed || d->local || v->wq == (size_t)c->p->s.w_out);
  /* in place with virtual columns: the same from registers, a masked run per output row a tile
     crosses (ukernel_qv; 32 x 32 3x3 u8, Zen 5: the s32 round trip, compaction and store calls
     took 17% of the layer) */
  const int fused_v = !fused && v->d4 && !d->packed && c->p->kernels->q8_d4->ukernel_qv;
  const size_t P = (size_t)(c->p->s.h_out * c->p->s.w_out);
  for (size_t pc = 0; pc < v->kunits; pc += v->kcu) {
    const size_t kcu = DLC_MIN(v->kcu, v->kunits - pc);
    if (d->packed) pack_b(c, g, n0, nlen, pc, kcu, bpack);
    for (size_t ir = 0; ir < mlen; ir += v->mr) {
      const size_t m = DLC_MIN(v->mr, mlen - ir);
      if (fused && pc + kcu == v->kunits) {
        const size_t oc = g * (size_t)c->p->s.cout_g + m0 + ir;
        dlc_lowp_vpos_panel_q(c->p, v, g, m0 + ir, m, pc, kcu, b, boff, d->packed, DLC_MIN(nlen, P - n0),
                              (const int32_t *)acc + ir * d->nc, d->nc, dlc_lowp_vpos_q8(v, c->p), oc,
                              (uint8_t *)c->y + (c->img * (size_t)c->p->s.c_out + oc) * P + n0, P);
        continue;
      }
      if (fused_v && pc + kcu == v->kunits) {
        const size_t oc = g * (size_t)c->p->s.cout_g + m0 + ir, wo = (size_t)c->p->s.w_out;
        const size_t nv = ((size_t)c->p->s.h_out - 1) * v->wq + wo;
        const dlc_q8d4_gemm_family *f4 = c->p->kernels->q8_d4;
        const int8_t *a = (const int8_t *)(v->wpack + ((g * v->wpanels + (m0 + ir) / v->mr) * v->kunits + pc) * v->mr * v->u);
        for (size_t jr = 0; jr < nlen; jr += v->nr)
          f4->ukernel_qv(m, 4 * kcu, a, (const uint8_t *)(b + jr * 2), d->boff + pc, (const int32_t *)acc + ir * d->nc + jr,
                         d->nc, pc > 0, dlc_lowp_vpos_q8(v, c->p), oc,
                         (uint8_t *)c->y + (c->img * (size_t)c->p->s.c_out + oc) * P, P, n0 + jr, nv, v->wq, wo);
        continue;
      }
      dlc_lowp_vpos_panel(c->p, v, g, m0 + ir, m, pc, kcu, b, boff, d->packed, nlen,
                          (char *)acc + ir * d->nc * 4, d->nc, a32);
      /* these rows are final: to y while their accumulators are still in cache */
      if (pc + kcu == v->kunits) store_rows(c, g, m0, n0, nlen, acc, ir, ir + m);
    }
  }
}

static void compute_task(void *arg, size_t t) {
  const dlcv_ctx *c = arg;
  const dlcv_data *d = c->d;
  size_t begin, end;
  dlc_split_range(d->njobs, d->ntasks, t, &begin, &end);
  dlcv_ctx own;
  if (d->fused) { /* this task's copy: the rows its jobs read; the slack past the last plane zero */
    own = *c;
    own.copy = (int16_t *)((char *)c->copy + t * d->copy_bytes);
    const size_t used = (size_t)c->p->s.groups * d->group_units * d->v.u * 2;
    memset((char *)own.copy + used, 0, d->copy_bytes - used);
    task_rows(d, &c->p->s, begin, end, copy_rows, &own);
    c = &own;
  }
  for (size_t j = begin; j < end; j++) {
    const size_t nb = j % d->nblocks, mb = j / d->nblocks % d->mblocks, g = j / d->nblocks / d->mblocks;
    run_job(c, g, mb, nb, c->slices + t * d->ws_slice);
  }
}

static void dlcv_execute(const dlconv_plan *p, const void *x, void *y, void *workspace) {
  const dlcv_data *d = p->algo_data;
  dlcv_ctx c = {p, d, x, y, workspace, (char *)workspace + (d->fused ? d->ntasks : 1) * d->copy_bytes, 0};
  /* the slack past the last plane: only junk positions read it, zero keeps it deterministic */
  const size_t used = (size_t)p->s.groups * d->group_units * d->v.u * 2;
  if (!d->local && !d->fused) memset((char *)c.copy + used, 0, d->copy_bytes - used);
  for (size_t img = 0; img < (size_t)p->s.n; img++) {
    c.img = img;
    const dlc_pass pass[2] = {{d->copy_tasks, copy_task, &c}, {d->ntasks, compute_task, &c}};
    if (d->fused)
      dlc_parallel_passes(p, pass + 1, 1);
    else
      dlc_parallel_passes(p, pass, 2);
  }
}

const dlc_impl_ops dlc_direct_lowp_conv_ops = {
    .plan = dlcv_plan,
    .execute = dlcv_execute,
    .destroy = dlcv_destroy,
};
