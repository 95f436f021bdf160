/* spack.c - the spatial pack driver (TVM's spatial pack, Zheng & Chen), fp32.
 *
 * Plan: the weights of every group are packed as [c_out_g/VC][c_in_g][k_h][k_w][VC] (zero-padded
 * to VC), the register tile (VH x VW output pixels) is chosen from the shape, and the input strip
 * that one job packs is sized to stay in L2.
 *
 * Execute: a job is (image, group, band of VH output rows, block of TB tiles along the row, a
 * range of VC channel blocks). It copies the input window its tiles read, for every input
 * channel of the group, into its workspace slice with the zero padding written by the copy, so
 * the micro-kernels never test bounds; then for each channel block (weights reused over the
 * tiles) and each tile it calls the micro-kernel, which adds bias, clamps and stores into y in
 * the user layout. Edge tiles (fewer rows, columns or channels) use the family's smaller tiles. */
#include <stdio.h>
#include <string.h>

#include "../core/plan.h"
#include "../ukernel/config.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "spack.h"

/* Packed input strip budget of one job: the strip is re-read once per channel block and should
   stay in L2 next to one block of weights. */
#define SPACK_STRIP_BYTES (128u * 1024u)
/* With several threads, aim at this many jobs per thread so the split balances. */
#define SPACK_JOBS_PER_THREAD 4

typedef struct spack_data {
  const dlc_f32_spack_family *fam;
  size_t vh, vw, vc;           /* main tile */
  size_t ncb;                  /* channel blocks per group: ceil(cout_g / vc) */
  size_t nbands, ntw;          /* output row bands (of vh rows), tiles per output row (of vw) */
  size_t tb, nblk;             /* tiles per packed column block, blocks per row */
  size_t ncbj, cb_per_job;     /* channel-block ranges a band/block is split into for threads */
  size_t njobs, ntasks;
  size_t phase_len, rowlen;    /* packed row: s_w phases of phase_len floats */
  size_t plane, slice;         /* floats per input channel plane, per job's workspace slice */
  ptrdiff_t *tap_off;          /* k_h*k_w */
  float *w;                    /* [g][ncb][cin_g][k_h][k_w][vc] */
  float *bias;                 /* [g][ncb][vc] */
} spack_data;

static size_t div_up(size_t a, size_t b) { return (a + b - 1) / b; }

/* Input window (columns, rows) that out_cols / out_rows consecutive outputs read. */
static size_t window_cols(const dlc_conv_shape *s, size_t out_cols) {
  return (out_cols - 1) * (size_t)s->stride_w + (size_t)(s->dil_w * (s->k_w - 1)) + 1;
}
static size_t window_rows(const dlc_conv_shape *s, size_t out_rows) {
  return (out_rows - 1) * (size_t)s->stride_h + (size_t)(s->dil_h * (s->k_h - 1)) + 1;
}

/* n outputs along one axis in tiles of v: `full` tiles of v, then one of `edge` (0: none). */
typedef struct axis_split { size_t full, v, edge; } axis_split;
static axis_split split_axis(size_t n, size_t v) { return (axis_split){n / v, v, n % v}; }

/* Cycles (in FMA steps) one (input channel, tap) step of a whole output plane costs with main
   tile vh x vw: each tile call issues max(acc, min_acc) FMA slots (fewer accumulators leave the
   pipes waiting on latency) plus about one for its weight load and loop. */
static size_t plane_cost(const dlc_f32_spack_family *f, axis_split r, axis_split c) {
  const size_t rows[2] = {r.v, r.edge}, nr[2] = {r.full, r.edge ? 1 : 0};
  const size_t cols[2] = {c.v, c.edge}, ncl[2] = {c.full, c.edge ? 1 : 0};
  size_t cost = 0;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++)
      cost += nr[i] * ncl[j] * (DLC_MAX(rows[i] * cols[j], f->min_acc) + 1);
  return cost;
}

/* The main tile: the cheapest under plane_cost of every tile the family has; ties go to the
   wider tile (contiguous rows in the packed input and in NCHW output). */
static void choose_tile(const dlc_conv_shape *s, const dlc_f32_spack_family *f, size_t *vh,
                        size_t *vw) {
  const size_t ho = (size_t)s->h_out, wo = (size_t)s->w_out;
  size_t best = SIZE_MAX;
  *vh = *vw = 1;
  for (size_t w = DLC_MIN(f->vw, wo); w >= 1; w--)
    for (size_t h = 1; h <= DLC_MIN(f->vh, ho) && h * w <= f->max_acc; h++) {
      const size_t cost = plane_cost(f, split_axis(ho, h), split_axis(wo, w));
      if (cost < best) {
        best = cost;
        *vh = h;
        *vw = w;
      }
    }
}

static void layout_strip(const dlc_conv_shape *s, spack_data *d) {
  const size_t sw = (size_t)s->stride_w;
  const size_t th = window_rows(s, d->vh);
  d->tb = d->ntw;
  for (;;) {
    d->phase_len = div_up(window_cols(s, d->tb * d->vw), sw);
    d->rowlen = sw * d->phase_len;
    d->plane = th * d->rowlen;
    d->slice = dlc_round_up((size_t)s->cin_g * d->plane, DLC_ALIGN / sizeof(float));
    if (d->tb == 1 || d->slice * sizeof(float) <= SPACK_STRIP_BYTES) break;
    d->tb--;
  }
  d->nblk = div_up(d->ntw, d->tb);
}

static void split_jobs(const dlconv_plan *p, spack_data *d) {
  const dlc_conv_shape *s = &p->s;
  const size_t base = (size_t)s->n * (size_t)s->groups * d->nbands * d->nblk;
  const size_t want = p->nthreads > 1 ? (size_t)p->nthreads * SPACK_JOBS_PER_THREAD : 1;
  d->ncbj = base >= want ? 1 : DLC_MIN(d->ncb, div_up(want, base));
  d->cb_per_job = div_up(d->ncb, d->ncbj);
  d->ncbj = div_up(d->ncb, d->cb_per_job);
  d->njobs = base * d->ncbj;
}

static void pack_weights(const dlc_conv_shape *s, const float *w, const float *bias, spack_data *d) {
  const size_t cin = (size_t)s->cin_g, cout = (size_t)s->cout_g, taps = (size_t)(s->k_h * s->k_w);
  const size_t vc = d->vc;
  float *dst = d->w;
  for (size_t g = 0; g < (size_t)s->groups; g++)
    for (size_t cb = 0; cb < d->ncb; cb++) {
      for (size_t ic = 0; ic < cin; ic++)
        for (size_t t = 0; t < taps; t++)
          for (size_t v = 0; v < vc; v++) {
            const size_t oc = cb * vc + v;
            *dst++ = oc < cout ? w[((g * cout + oc) * cin + ic) * taps + t] : 0.0f;
          }
      float *b = d->bias + (g * d->ncb + cb) * vc;
      for (size_t v = 0; v < vc; v++) b[v] = cb * vc + v < cout ? bias[g * cout + cb * vc + v] : 0.0f;
    }
}

static void spack_destroy(dlconv_plan *p) {
  spack_data *d = p->algo_data;
  if (!d) return;
  dlc_free(d->tap_off);
  dlc_free(d->w);
  dlc_free(d->bias);
  dlc_free(d);
  p->algo_data = NULL;
}

static dlconv_status spack_plan(dlconv_plan *p, const void *weights) {
  const float *w = weights;
  const dlc_f32_spack_family *f = p->kernels->spack;
  if (!f)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "spatial_pack: no micro-kernels for isa %s",
                    p->kernels->name);
  const dlc_conv_shape *s = &p->s;
  spack_data *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "spatial_pack: out of memory");
  p->algo_data = d;
  d->fam = f;
  d->vc = f->vc;
  d->ncb = div_up((size_t)s->cout_g, d->vc);
  choose_tile(s, f, &d->vh, &d->vw);
  d->nbands = div_up((size_t)s->h_out, d->vh);
  d->ntw = div_up((size_t)s->w_out, d->vw);
  layout_strip(s, d);
  split_jobs(p, d);
  /* Huge padding, strides or dilations can make the packed input window exceed the address
     space (its size in size_t arithmetic would wrap): refuse; direct and gemm handle such layers. */
  if ((double)window_rows(s, d->vh) * (double)d->rowlen * (double)s->cin_g * sizeof(float) *
          (double)DLC_MAX(p->nthreads, 1) > (double)PTRDIFF_MAX) {
    spack_destroy(p);
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "spatial_pack: the packed input window of this shape exceeds the address space");
  }

  const size_t taps = (size_t)(s->k_h * s->k_w);
  const size_t wfloats = (size_t)s->groups * d->ncb * (size_t)s->cin_g * taps * d->vc;
  const size_t bfloats = (size_t)s->groups * d->ncb * d->vc;
  d->tap_off = dlc_malloc(taps * sizeof *d->tap_off);
  d->w = dlc_malloc(wfloats * sizeof(float));
  d->bias = dlc_malloc(bfloats * sizeof(float));
  if (!d->tap_off || !d->w || !d->bias) {
    spack_destroy(p);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "spatial_pack: out of memory packing %zu weights",
                    wfloats);
  }
  /* Tap (ky, kx) reads window row ky*dil_h and column kx*dil_w, i.e. phase (kx*dil_w) % s_w. */
  const size_t sw = (size_t)s->stride_w;
  for (size_t ky = 0; ky < (size_t)s->k_h; ky++)
    for (size_t kx = 0; kx < (size_t)s->k_w; kx++) {
      const size_t col = kx * (size_t)s->dil_w;
      d->tap_off[ky * (size_t)s->k_w + kx] =
          (ptrdiff_t)(ky * (size_t)s->dil_h * d->rowlen + (col % sw) * d->phase_len + col / sw);
    }
  pack_weights(s, w, p->bias, d);

  d->ntasks = DLC_MIN((size_t)p->nthreads, d->njobs);
  p->workspace_bytes = d->ntasks * d->slice * sizeof(float);
  p->exec_tasks = d->ntasks;
  p->packed_weight_bytes = (wfloats + bfloats) * sizeof(float) + taps * sizeof *d->tap_off;
  p->weight_density = 1.0;
  snprintf(p->kernel, sizeof p->kernel, "f32_spack_%zux%zux%zu__%s", d->vh, d->vw, d->vc,
           p->kernels->name);
  return DLCONV_OK;
}

/* One packed row: window columns [0, tw) starting at input column iw0, source elements `step`
   floats apart; column j goes to (j % sw)*phase_len + j / sw, zeros outside the image. */
static void pack_row(const float *restrict src, size_t step, int64_t iw0, int64_t w_in, size_t tw,
                     size_t sw, size_t phase_len, float *restrict dst) {
  /* Window columns [lo, hi) lie inside the image. */
  const size_t lo = (size_t)DLC_MIN((int64_t)tw, DLC_MAX(0, -iw0));
  const size_t hi = (size_t)DLC_MAX((int64_t)lo, DLC_MIN((int64_t)tw, w_in - iw0));
  for (size_t ph = 0; ph < sw && ph < tw; ph++) {
    /* This phase holds columns ph + k*sw for k < n; those with k in [k_lo, k_hi) are inside. */
    const size_t n = div_up(tw - ph, sw);
    const size_t k_lo = lo > ph ? div_up(lo - ph, sw) : 0;
    const size_t k_hi = DLC_MAX(k_lo, hi > ph ? div_up(hi - ph, sw) : 0);
    float *restrict dp = dst + ph * phase_len;
    memset(dp, 0, k_lo * sizeof(float));
    if (k_hi > k_lo) {
      const float *restrict sp = src + (iw0 + (int64_t)(ph + k_lo * sw)) * (int64_t)step;
      const size_t m = k_hi - k_lo, sstep = sw * step;
      if (sstep == 1)
        memcpy(dp + k_lo, sp, m * sizeof(float));
      else
        for (size_t k = 0; k < m; k++) dp[k_lo + k] = sp[k * sstep];
    }
    memset(dp + k_hi, 0, (n - k_hi) * sizeof(float));
  }
}

/* The window of rows [ih0, ih0+th) x columns [iw0, iw0+tw) of every input channel of group g
   of image n, one plane per channel. */
static void pack_strip(const dlc_conv_shape *s, const spack_data *d, const float *x, size_t n,
                       size_t g, int64_t ih0, size_t th, int64_t iw0, size_t tw, float *dst) {
  const size_t cin = (size_t)s->cin_g, ci0 = g * cin;
  const int64_t h_in = s->h_in, w_in = s->w_in;
  const size_t sw = (size_t)s->stride_w;
  for (size_t ic = 0; ic < cin; ic++) {
    float *dp = dst + ic * d->plane;
    for (size_t r = 0; r < th; r++) {
      float *drow = dp + r * d->rowlen;
      const int64_t ih = ih0 + (int64_t)r;
      if (ih < 0 || ih >= h_in) {
        for (size_t ph = 0; ph < sw; ph++)
          memset(drow + ph * d->phase_len, 0, div_up(tw > ph ? tw - ph : 0, sw) * sizeof(float));
        continue;
      }
      const float *src;
      size_t step;
      if (s->layout == DLCONV_NCHW) {
        src = x + (((int64_t)n * s->c_in + (int64_t)(ci0 + ic)) * h_in + ih) * w_in;
        step = 1;
      } else {
        src = x + (((int64_t)n * h_in + ih) * w_in) * s->c_in + (int64_t)(ci0 + ic);
        step = (size_t)s->c_in;
      }
      pack_row(src, step, iw0, w_in, tw, sw, d->phase_len, drow);
    }
  }
}

static void run_job(const dlc_exec *c, const dlc_f32_spack_params *prm, size_t job, float *strip) {
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const spack_data *d = c->p->algo_data;
  size_t j = job;
  const size_t cbj = j % d->ncbj;
  j /= d->ncbj;
  const size_t blk = j % d->nblk;
  j /= d->nblk;
  const size_t band = j % d->nbands;
  j /= d->nbands;
  const size_t g = j % (size_t)s->groups;
  const size_t n = j / (size_t)s->groups;

  const size_t oh0 = band * d->vh, nvh = DLC_MIN(d->vh, (size_t)s->h_out - oh0);
  const size_t ow0 = blk * d->tb * d->vw;
  const size_t ncols = DLC_MIN(d->tb * d->vw, (size_t)s->w_out - ow0);
  pack_strip(s, d, c->x, n, g, (int64_t)oh0 * s->stride_h - s->pad_t, window_rows(s, nvh),
             (int64_t)ow0 * s->stride_w - s->pad_l, window_cols(s, ncols), strip);

  const size_t cin = (size_t)s->cin_g, taps = (size_t)(s->k_h * s->k_w), vc = d->vc;
  const size_t cb_end = DLC_MIN(d->ncb, (cbj + 1) * d->cb_per_job);
  for (size_t cb = cbj * d->cb_per_job; cb < cb_end; cb++) {
    const size_t gcb = g * d->ncb + cb;
    const float *w = d->w + gcb * cin * taps * vc;
    const float *bias = d->bias + gcb * vc;
    const size_t oc0 = g * (size_t)s->cout_g + cb * vc;
    const size_t nc = DLC_MIN(vc, (size_t)s->cout_g - cb * vc);
    for (size_t col = 0; col < ncols; col += d->vw) {
      const size_t nvw = DLC_MIN(d->vw, ncols - col), ow = ow0 + col;
      float *yt;
      if (s->layout == DLCONV_NCHW)
        yt = (float *)c->y + ((n * (size_t)s->c_out + oc0) * (size_t)s->h_out + oh0) * (size_t)s->w_out + ow;
      else
        yt = (float *)c->y + ((n * (size_t)s->h_out + oh0) * (size_t)s->w_out + ow) * (size_t)s->c_out + oc0;
      dlc_spack_ukernel(d->fam, nvh, nvw)(prm, strip + col, w, bias, yt, nc);
    }
  }
}

static void spack_task(void *arg, size_t i) {
  const dlc_exec *c = arg;
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const spack_data *d = c->p->algo_data;
  dlc_f32_spack_params prm = {
      .cin = (size_t)s->cin_g,
      .ntaps = (size_t)(s->k_h * s->k_w),
      .tap_off = d->tap_off,
      .in_ch_stride = d->plane,
      .in_row_stride = (size_t)s->stride_h * d->rowlen,
      .out_min = s->out_min,
      .out_max = s->out_max,
  };
  if (s->layout == DLCONV_NCHW) {
    prm.y_row_stride = (size_t)s->w_out;
    prm.y_col_stride = 1;
    prm.y_ch_stride = (size_t)(s->h_out * s->w_out);
  } else {
    prm.y_row_stride = (size_t)(s->w_out * s->c_out);
    prm.y_col_stride = (size_t)s->c_out;
    prm.y_ch_stride = 1;
  }
  float *strip = (float *)(c->ws + i * d->slice * sizeof(float));
  size_t begin, end;
  dlc_split_range(d->njobs, d->ntasks, i, &begin, &end);
  for (size_t job = begin; job < end; job++) run_job(c, &prm, job, strip);
}

const dlc_impl_ops dlc_spack_ops = {
    .plan = spack_plan,
    .task = spack_task,
    .destroy = spack_destroy,
};
