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
 * Threads: per image, the copy is split over the planes, then jobs (group, M block, N block)
 * over contiguous ranges, each task with its own accumulator block in the workspace. */
#include <stdint.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../core/kernels.h"
#include "../core/plan.h"
#include "../core/threading.h"
#include "../core/util.h"

#include "../core/test_hooks.h"

static atomic_int packed_hook = -1;
void dlc_test_direct_lowp_packed(int mode) { atomic_store_explicit(&packed_hook, mode, memory_order_relaxed); }

#define MAX_PHASES 64 /* sh x sw phases tracked; larger strides have at most k_h x k_w used ones */

typedef struct dlcv_data {
  int q8;
  size_t u;               /* int16 elements per unit: 2 (int8 pair) or 1 (half) */
  size_t cpg;             /* channel units per group (pairs or channels) */
  size_t kunits;          /* reduction units per group: cpg * taps (int8 pairs, F16 rows) */
  size_t nslot;           /* stride phases copied */
  int slot_py[MAX_PHASES], slot_px[MAX_PHASES];
  size_t hq, wq, planeq;  /* sub-plane (units) */
  size_t N;               /* virtual positions per plane, rounded up to nr */
  size_t group_units;     /* units of the copy per group */
  size_t copy_bytes;      /* the copy of one image incl. slack, multiple of 64 */
  ptrdiff_t *boff;        /* kunits offsets (int16 elements) from a group's base */
  int16_t *wpack;         /* groups x wpanels x kunits x mr units */
  size_t mr, nr, wpanels, kcu, mc, nc, mblocks, nblocks, njobs, ntasks, copy_tasks, nplanes;
  size_t a32_bytes, ws_slice;
  int packed;             /* small planes: B panels of the real outputs packed per job (see the top) */
  size_t bpack_bytes;     /* packed: one K chunk x nc block of B panels, at the start of a slice */
} dlcv_data;

static void free_data(dlcv_data *d) {
  if (!d) return;
  dlc_free(d->boff);
  dlc_free(d->wpack);
  dlc_free(d);
}

static void dlcv_destroy(dlconv_plan *p) { free_data(p->algo_data); }

static dlconv_status dlcv_plan(dlconv_plan *p, const void *w) {
  const dlc_conv_shape *s = &p->s;
  const int q8 = p->dtype != DLCONV_F16;
  if (s->layout != DLCONV_NCHW)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "direct has F16/int8 paths for NCHW only (NHWC: im2col_gemm)");
  if (q8 ? !p->kernels->q8_gemm || !p->kernels->q8_gemm->ukernel_ib
         : !p->kernels->f16_gemm || !p->kernels->f16_gemm->ukernel_ib)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "direct has no %s kernel for isa %s", q8 ? "int8" : "F16",
                    p->kernels->name);
  const size_t taps = (size_t)(s->k_h * s->k_w), cin = (size_t)s->cin_g;
  if (q8 && cin * taps > DLC_Q8_MAX_K)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED,
                    "int8 reduction length (c_in/groups)*k_h*k_w = %zu could overflow the s32 accumulators "
                    "(at most %zu)", cin * taps, DLC_Q8_MAX_K);
  /* the stride phases the taps read (1x1 stride 2: one of four) */
  const int64_t sh = s->stride_h, sw = s->stride_w;
  int nslot = 0, slot_py[MAX_PHASES], slot_px[MAX_PHASES];
  for (int64_t ky = 0; ky < s->k_h; ky++)
    for (int64_t kx = 0; kx < s->k_w; kx++) {
      const int64_t py = ky * s->dil_h % sh, px = kx * s->dil_w % sw;
      int found = -1;
      for (int i = 0; i < nslot; i++)
        if (slot_py[i] == py && slot_px[i] == px) found = i;
      if (found < 0) {
        if (nslot == MAX_PHASES)
          return dlc_fail(DLCONV_ERR_UNSUPPORTED, "direct: more than %d stride phases", MAX_PHASES);
        slot_py[nslot] = (int)py;
        slot_px[nslot] = (int)px;
        nslot++;
      }
    }
  dlcv_data *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning direct");
  d->q8 = q8;
  d->u = q8 ? 2 : 1;
  d->cpg = q8 ? dlc_div_up(cin, 2) : cin;
  d->kunits = d->cpg * taps;
  d->nslot = (size_t)nslot;
  memcpy(d->slot_py, slot_py, sizeof(int) * (size_t)nslot);
  memcpy(d->slot_px, slot_px, sizeof(int) * (size_t)nslot);
  const size_t hp = (size_t)(s->h_in + s->pad_t + s->pad_b), wp = (size_t)(s->w_in + s->pad_l + s->pad_r);
  d->hq = dlc_div_up(hp, (size_t)sh);
  d->wq = dlc_div_up(wp, (size_t)sw);
  d->planeq = d->hq * d->wq;
  d->mr = q8 ? p->kernels->q8_gemm->mr : p->kernels->f16_gemm->mr;
  d->nr = q8 ? p->kernels->q8_gemm->nr : p->kernels->f16_gemm->nr;
  d->N = dlc_round_up((size_t)(s->h_out - 1) * d->wq + (size_t)s->w_out, d->nr); /* virtual positions */
  {
    /* int8: packed mode where the virtual positions exceed the outputs by more than 5% (measured
       on ResNet-50, u8: 3x3 layers on 28 x 28, 14 x 14 and 7 x 7 outputs 0.92-0.97 of the
       in-place time; 56 x 56 (3.6% junk) 1.06). F16 stays in place: its packed runs were no
       faster there (0.95-1.03) and slower elsewhere, its copies being half as wide. */
    const size_t P = (size_t)(s->h_out * s->w_out);
    const int forced = atomic_load_explicit(&packed_hook, memory_order_relaxed);
    d->packed = (forced < 0 ? q8 && 20 * d->N > 21 * P : forced) && (q8 || p->kernels->f16_gemm->ukernel_a32);
    if (d->packed) d->N = P;
  }
  d->group_units = d->cpg * d->nslot * d->planeq;
  /* a tile past the last valid position reads up to N - 1 + the largest tap offset (< planeq)
     beyond a plane's start: the last plane of the copy needs N units of slack */
  const size_t groups = (size_t)s->groups;
  d->copy_bytes = dlc_round_up((groups * d->group_units + d->N + d->nr) * d->u * 2, DLC_ALIGN);
  d->nplanes = groups * d->cpg * d->nslot;

  d->boff = dlc_malloc(d->kunits * sizeof(ptrdiff_t));
  const size_t cog = (size_t)s->cout_g;
  d->wpanels = dlc_div_up(cog, d->mr);
  const size_t per_group = d->wpanels * d->kunits * d->mr * d->u;
  d->wpack = dlc_calloc(groups * per_group * 2);
  if (!d->boff || !d->wpack) {
    free_data(d);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory packing direct weights");
  }
  /* reduction unit ku = cu * taps + tap: a channel unit's taps are consecutive, so the runs a
     K block reads stay within a few planes */
  for (size_t cu = 0; cu < d->cpg; cu++)
    for (size_t t = 0; t < taps; t++) {
      const int64_t ky = (int64_t)(t / (size_t)s->k_w), kx = (int64_t)(t % (size_t)s->k_w);
      const int py = (int)(ky * s->dil_h % sh), px = (int)(kx * s->dil_w % sw);
      size_t slot = 0;
      while (d->slot_py[slot] != py || d->slot_px[slot] != px) slot++;
      const size_t toff = (size_t)(ky * s->dil_h / sh) * d->wq + (size_t)(kx * s->dil_w / sw);
      d->boff[cu * taps + t] = (ptrdiff_t)(((cu * d->nslot + slot) * d->planeq + toff) * d->u);
    }
  for (size_t g = 0; g < groups; g++)
    for (size_t oc = 0; oc < cog; oc++)
      for (size_t ic = 0; ic < cin; ic++)
        for (size_t t = 0; t < taps; t++) {
          const size_t src = ((g * cog + oc) * cin + ic) * taps + t;
          const size_t cu = q8 ? ic / 2 : ic, ku = cu * taps + t;
          int16_t *panel = d->wpack + g * per_group + oc / d->mr * d->kunits * d->mr * d->u;
          if (q8)
            panel[ku * 2 * d->mr + 2 * (oc % d->mr) + ic % 2] = ((const int8_t *)w)[src];
          else
            memcpy(panel + ku * d->mr + oc % d->mr, (const uint16_t *)w + src, 2);
        }

  /* K blocks of 128 pairs (int8) or 256 rows (F16): with 256 positions per N block the runs a
     block reads stay in L2, as im2col + GEMM's packed 128 KB block did */
  d->kcu = dlc_balanced_block(d->kunits, q8 ? 128 : 256, 1);
  const size_t M = cog;
  d->mc = dlc_balanced_block(M, 512, d->mr);
  d->nc = dlc_balanced_block(d->N, 256, d->nr);
  d->mblocks = dlc_div_up(M, d->mc);
  d->nblocks = dlc_div_up(d->N, d->nc);
  size_t jobs = groups * d->mblocks * d->nblocks, want = (size_t)p->nthreads;
  if (jobs < want) {
    size_t more = dlc_div_up(want, jobs);
    d->mc = dlc_balanced_block(M, DLC_MAX(d->mr, dlc_div_up(M, d->mblocks * more)), d->mr);
    d->mblocks = dlc_div_up(M, d->mc);
    jobs = groups * d->mblocks * d->nblocks;
    if (jobs < want) {
      more = dlc_div_up(want, jobs);
      d->nc = dlc_balanced_block(d->N, DLC_MAX(d->nr, dlc_div_up(d->N, d->nblocks * more)), d->nr);
      d->nblocks = dlc_div_up(d->N, d->nc);
    }
  }
  d->njobs = groups * d->mblocks * d->nblocks;
  d->ntasks = DLC_MIN((size_t)p->nthreads, d->njobs);
  d->copy_tasks = DLC_MIN((size_t)p->nthreads, d->nplanes);
  d->a32_bytes = q8 ? 0 : dlc_round_up((d->kcu * d->mr + 8) * 4, DLC_ALIGN);
  d->bpack_bytes = d->packed ? dlc_round_up(d->kcu * d->nc * d->u * 2, DLC_ALIGN) : 0;
  d->ws_slice = d->bpack_bytes + dlc_round_up(d->mc * d->nc * 4, DLC_ALIGN) + d->a32_bytes;
  p->algo_data = d;
  p->packed_weight_bytes = groups * per_group * 2;
  p->workspace_bytes = d->copy_bytes + d->ntasks * d->ws_slice;
  snprintf(p->kernel, sizeof p->kernel, "%s", q8 ? p->kernels->q8_gemm->name : p->kernels->f16_gemm->name);
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

/* The stride-2 copy of channel pairs (ResNet's strided layers) with a constant stride, which the
   compiler turns into vector deinterleaves; the general loop stays scalar. */
static void pairs_stride2(size_t n, const uint8_t *a, const uint8_t *b, int32_t zp, int is_signed, int16_t *o) {
  if (is_signed) {
    const int8_t *sa = (const int8_t *)a, *sb = (const int8_t *)b;
    for (size_t i = 0; i < n; i++) {
      o[2 * i] = (int16_t)((int32_t)sa[2 * i] - zp);
      o[2 * i + 1] = (int16_t)((int32_t)sb[2 * i] - zp);
    }
    return;
  }
  for (size_t i = 0; i < n; i++) {
    o[2 * i] = (int16_t)((int32_t)a[2 * i] - zp);
    o[2 * i + 1] = (int16_t)((int32_t)b[2 * i] - zp);
  }
}

/* One sub-plane of the copy: channel unit cu of group g, phase slot. Rows and columns that fall
   into the padding are zeros (x - zp = 0 for int8). */
static void copy_plane(const dlcv_ctx *c, size_t plane) {
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const dlcv_data *d = c->d;
  const size_t slot = plane % d->nslot, cu = plane / d->nslot % d->cpg, g = plane / d->nslot / d->cpg;
  const int64_t sh = s->stride_h, sw = s->stride_w, py = d->slot_py[slot], px = d->slot_px[slot];
  int16_t *dst = c->copy + plane * d->planeq * d->u;
  const size_t rowb = d->wq * d->u * 2;
  /* the columns xq whose padded column xq * sw + px lies inside x */
  const int64_t first = s->pad_l - px, last = s->w_in - 1 + s->pad_l - px;
  const size_t xlo = first <= 0 ? 0 : DLC_MIN(d->wq, (size_t)((first + sw - 1) / sw));
  const size_t xhi = last < 0 ? 0 : DLC_MIN(d->wq, (size_t)(last / sw) + 1);
  const size_t ic0 = g * (size_t)s->cin_g + (d->q8 ? 2 * cu : cu);
  const int pair2 = d->q8 && 2 * cu + 1 < (size_t)s->cin_g;
  const size_t plane_in = (size_t)(s->h_in * s->w_in);
  const int is_signed = p->dtype == DLCONV_S8;
  const int32_t zp = p->q8.x_zero_point;
  for (size_t yq = 0; yq < d->hq; yq++) {
    int16_t *drow = dst + yq * d->wq * d->u;
    const int64_t iy = (int64_t)yq * sh + py - s->pad_t;
    if (iy < 0 || iy >= s->h_in || xlo >= xhi) {
      memset(drow, 0, rowb);
      continue;
    }
    if (xlo) memset(drow, 0, xlo * d->u * 2);
    if (xhi < d->wq) memset(drow + xhi * d->u, 0, (d->wq - xhi) * d->u * 2);
    const int64_t ix0 = (int64_t)xlo * sw + px - s->pad_l;
    const size_t n = xhi - xlo, off = (c->img * (size_t)s->c_in + ic0) * plane_in + (size_t)iy * (size_t)s->w_in;
    if (!d->q8) {
      const uint16_t *src = (const uint16_t *)c->x + off + ix0;
      uint16_t *o = (uint16_t *)drow + xlo;
      if (sw == 1)
        memcpy(o, src, n * 2);
      else if (sw == 2) /* a constant stride: vector deinterleaves */
        for (size_t i = 0; i < n; i++) o[i] = src[2 * i];
      else
        for (size_t i = 0; i < n; i++) o[i] = src[(int64_t)i * sw];
      continue;
    }
    const uint8_t *a = (const uint8_t *)c->x + off + ix0, *b = pair2 ? a + plane_in : NULL;
    int16_t *o = drow + 2 * xlo;
    if (sw == 1 && b) {
      p->kernels->q8_gemm->pack_pairs(n, a, b, zp, is_signed, o);
      continue;
    }
    if (sw == 2 && b) {
      pairs_stride2(n, a, b, zp, is_signed, o);
      continue;
    }
    for (size_t i = 0; i < n; i++) {
      const int64_t at = (int64_t)i * sw;
      o[2 * i] = (int16_t)((is_signed ? (int32_t)(int8_t)a[at] : (int32_t)a[at]) - zp);
      o[2 * i + 1] = b ? (int16_t)((is_signed ? (int32_t)(int8_t)b[at] : (int32_t)b[at]) - zp) : 0;
    }
  }
}

static void copy_task(void *arg, size_t t) {
  const dlcv_ctx *c = arg;
  size_t begin, end;
  dlc_split_range(c->d->nplanes, c->d->copy_tasks, t, &begin, &end);
  for (size_t pl = begin; pl < end; pl++) copy_plane(c, pl);
}

/* Rows [i0, i1) of a job's accumulators to y: each output row's w_out valid positions. */
static void store_rows(const dlcv_ctx *c, size_t g, size_t m0, size_t n0, size_t nlen, const void *acc, size_t i0,
                       size_t i1) {
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const dlcv_data *d = c->d;
  const size_t wo = (size_t)s->w_out, P = (size_t)(s->h_out * s->w_out), es = d->q8 ? 1 : 2;
  const size_t oy0 = n0 / d->wq, oy1 = DLC_MIN((size_t)s->h_out, dlc_div_up(n0 + nlen, d->wq));
  for (size_t i = i0; i < i1; i++) {
    const size_t oc = g * (size_t)s->cout_g + m0 + i;
    char *yplane = (char *)c->y + (c->img * (size_t)s->c_out + oc) * P * es;
    if (d->wq == wo || d->packed) {
      /* no virtual columns (packed, or no padding and stride 1 along x): one run */
      const size_t f1 = DLC_MIN(n0 + nlen, P);
      if (d->q8)
        p->kernels->q8_gemm->store(f1 - n0, (const int32_t *)acc + i * d->nc, &p->q8, oc, 0, yplane + n0);
      else
        p->kernels->f16_gemm->store(f1 - n0, (const float *)acc + i * d->nc, p->bias, oc, 0, s->out_min, s->out_max,
                                    (uint16_t *)yplane + n0);
      continue;
    }
    for (size_t oy = oy0; oy < oy1; oy++) {
      const size_t f0 = DLC_MAX(n0, oy * d->wq), f1 = DLC_MIN(n0 + nlen, oy * d->wq + wo);
      if (f0 >= f1) continue;
      char *yo = yplane + (oy * wo + (f0 - oy * d->wq)) * es;
      if (d->q8)
        p->kernels->q8_gemm->store(f1 - f0, (const int32_t *)acc + i * d->nc + (f0 - n0), &p->q8, oc, 0, yo);
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
  const size_t wo = (size_t)c->p->s.w_out, nr = d->nr, u = d->u, panel = kcu * nr * u;
  const int16_t *gbase = c->copy + g * d->group_units * u;
  if (nlen % nr)
    for (size_t k = 0; k < kcu; k++)
      memset(dst + (nlen / nr) * panel + (k * nr + nlen % nr) * u, 0, (nr - nlen % nr) * u * 2);
  for (size_t l = 0; l < nlen;) {
    /* a run of lanes: within one output row and one panel */
    const size_t q = n0 + l, oy = q / wo, ox = q % wo;
    const size_t run = DLC_MIN(wo - ox, DLC_MIN(nlen - l, nr - l % nr));
    const int16_t *src = gbase + (oy * d->wq + ox) * u;
    int16_t *o = dst + (l / nr) * panel + (l % nr) * u;
    for (size_t k = 0; k < kcu; k++) memcpy(o + k * nr * u, src + d->boff[pc + k], run * u * 2);
    l += run;
  }
}

static void run_job(const dlcv_ctx *c, size_t g, size_t mb, size_t nb, char *slice) {
  const dlconv_plan *p = c->p;
  const dlcv_data *d = c->d;
  const size_t M = (size_t)p->s.cout_g;
  const size_t m0 = mb * d->mc, mlen = DLC_MIN(d->mc, M - m0);
  const size_t n0 = nb * d->nc, nlen = DLC_MIN(d->nc, d->N - n0);
  int16_t *bpack = (int16_t *)slice;
  void *acc = slice + d->bpack_bytes;
  float *a32 = d->q8 ? NULL : (float *)(slice + d->ws_slice - d->a32_bytes);
  const int16_t *bbase = c->copy + (g * d->group_units + n0) * d->u;
  const int16_t *wgroup = d->wpack + g * d->wpanels * d->kunits * d->mr * d->u;
  for (size_t pc = 0; pc < d->kunits; pc += d->kcu) {
    const size_t kcu = DLC_MIN(d->kcu, d->kunits - pc);
    const int last = pc + kcu == d->kunits;
    if (d->packed) pack_b(c, g, n0, nlen, pc, kcu, bpack);
    for (size_t ir = 0; ir < mlen; ir += d->mr) {
      const size_t m = DLC_MIN(d->mr, mlen - ir);
      const int16_t *a = wgroup + ((m0 + ir) / d->mr * d->kunits + pc) * d->mr * d->u;
      if (a32) {
        if (p->kernels->f16_gemm->widen_a)
          p->kernels->f16_gemm->widen_a(kcu, (const uint16_t *)a, a32);
        else
          for (size_t t = 0; t < kcu * d->mr; t++) a32[t] = dlc_f16_to_f32(((const uint16_t *)a)[t]);
      }
      for (size_t jr = 0; jr < nlen && d->packed; jr += d->nr) {
        const size_t n = DLC_MIN(d->nr, nlen - jr);
        const int16_t *b = bpack + jr * kcu * d->u;
        if (d->q8)
          p->kernels->q8_gemm->ukernel(m, n, 2 * kcu, a, b, (int32_t *)acc + ir * d->nc + jr, d->nc, pc > 0);
        else
          p->kernels->f16_gemm->ukernel_a32(m, n, kcu, a32, (const uint16_t *)b, (float *)acc + ir * d->nc + jr,
                                            d->nc, pc > 0);
      }
      for (size_t jr = 0; jr < nlen && !d->packed; jr += d->nr) {
        if (d->q8)
          p->kernels->q8_gemm->ukernel_ib(m, 2 * kcu, a, bbase + jr * d->u, d->boff + pc,
                                          (int32_t *)acc + ir * d->nc + jr, d->nc, pc > 0);
        else
          p->kernels->f16_gemm->ukernel_ib(m, kcu, a32, (const uint16_t *)bbase + jr, d->boff + pc,
                                           (float *)acc + ir * d->nc + jr, d->nc, pc > 0);
      }
      /* these rows are final: to y while their accumulators are still in cache */
      if (last) store_rows(c, g, m0, n0, nlen, acc, ir, ir + m);
    }
  }
}

static void compute_task(void *arg, size_t t) {
  const dlcv_ctx *c = arg;
  const dlcv_data *d = c->d;
  size_t begin, end;
  dlc_split_range(d->njobs, d->ntasks, t, &begin, &end);
  for (size_t j = begin; j < end; j++) {
    const size_t nb = j % d->nblocks, mb = j / d->nblocks % d->mblocks, g = j / d->nblocks / d->mblocks;
    run_job(c, g, mb, nb, c->slices + t * d->ws_slice);
  }
}

static void dlcv_execute(const dlconv_plan *p, const void *x, void *y, void *workspace) {
  const dlcv_data *d = p->algo_data;
  dlcv_ctx c = {p, d, x, y, workspace, (char *)workspace + d->copy_bytes, 0};
  /* the slack past the last plane: only junk positions read it, zero keeps it deterministic */
  const size_t used = (size_t)p->s.groups * d->group_units * d->u * 2;
  memset((char *)c.copy + used, 0, d->copy_bytes - used);
  for (size_t img = 0; img < (size_t)p->s.n; img++) {
    c.img = img;
    dlc_parallel_for(p, d->copy_tasks, copy_task, &c);
    dlc_parallel_for(p, d->ntasks, compute_task, &c);
  }
}

const dlc_algo_ops dlc_direct_lowp_conv_ops = {
    .algo = DLCONV_ALGO_DIRECT,
    .name = "direct",
    .destroy = dlcv_destroy,
    .plan_lowp = dlcv_plan,
    .execute_lowp = dlcv_execute,
};
