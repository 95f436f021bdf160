/* direct_nchw.c - fp32 NCHW convolutions at stride 1 with pixels in the lanes and output
 * channels in registers (ukernel/dnchw_ukernel.h): no transpose of x or y.
 *
 * direct.c reads NCHW x channel-last (a transpose of every input row) and stages its output
 * channel-last (a transpose back), which on WRN-40-2's 3x3 layers cost about a tenth of the time
 * NHWC takes for the same products. Here every input plane is copied once per image into a
 * zero-padded plane (a memcpy per row), and a tile is mr output channels x nv vectors of output
 * pixels in the flat order of the padded plane, written to y as NCHW rows.
 *
 * Padded planes: rows x_row = w_in + max(pad_l, pad_r) floats apart, input (iy, ix) at
 * (iy + pad_t) * x_row + ix + pad_l; the columns right of a row's data and left of the next row's
 * are the same zeros (a tap past the right edge reads the next row's left padding), so output
 * rows of 8 pixels and padding 1 fill 8 of 9 lanes, not 8 of 10. One more zero row below the
 * bottom padding takes the last row's wrap; slack after the last plane takes the lanes past it.
 *
 * Vectors: the plane's output positions are covered greedily in flat order, a vector starting at
 * the first position not yet covered (rows of 32 take 2 vectors each, rows of 16 one, 8 x 8 five
 * for the plane); each vector lists the row pieces it stores. A tile is nv consecutive vectors.
 *
 * Plan: weights as [group][oc block][ic][tap][mr], blocks of balanced sizes up to the family's
 * mr for the chosen nv. Execute, per image: pass 1 pads the planes (channels split over tasks),
 * pass 2 runs the tiles (group, band of tiles, oc block, tile), tiles fastest so a block's
 * weights stay in L1, bands so the input rows stay in L2 across the blocks. */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../core/plan.h"
#include "../core/test_hooks.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "../ukernel/config.h"
#include "direct.h"

/* A group's padded input up to this size is one band (see dnchw_plan); Zen 5 has 1 MiB of L2. */
#define BAND_BYTES (384u * 1024u)

typedef struct dnchw_data {
  const dlc_f32_dnchw_family *f;
  size_t x_row, rows;         /* padded plane: row length, rows */
  size_t x_c;                 /* floats between padded planes */
  size_t slack;               /* floats after the last plane */
  size_t nvec, nv, ntile;     /* vectors of a plane; vectors per tile (tiles balanced) */
  size_t nb;                  /* oc blocks per group */
  size_t band;                /* tiles per band: every oc block runs over a band before the next */
  size_t ntaps;
  size_t ntasks;              /* of the compute pass */
  dlc_dnchw_vec *vecs;
  int32_t *tap;
  size_t *blk_c0;             /* nb + 1 channel bounds of the blocks */
  float *w;                   /* packed weights */
} dnchw_data;

static size_t balanced(size_t n, size_t parts, size_t i) { return i * (n / parts) + (i < n % parts ? i : n % parts); }

/* Columns of the padded rows, 0 where the shape does not fit the scheme (see the file comment). */
static size_t row_len(const dlc_conv_shape *s) {
  if (DLC_MIN(s->pad_l, s->pad_r) > s->k_w - 1) return 0;
  return (size_t)(s->w_in + DLC_MAX(s->pad_l, s->pad_r));
}

/* The greedy cover of the output plane; NULL when a vector would store more pieces than
   DLC_DNCHW_MAX_SEGS (rows much shorter than a vector) or on no memory. */
static dlc_dnchw_vec *cover(const dlc_conv_shape *s, size_t x_row, size_t vl, size_t *nvec) {
  const size_t w = (size_t)s->w_out, h = (size_t)s->h_out;
  const size_t cap = h * dlc_div_up(w, vl) + h;   /* at most one vector per row piece */
  dlc_dnchw_vec *v = dlc_calloc(cap * sizeof *v);
  if (!v) return NULL;
  size_t n = 0, oy = 0, ox = 0;   /* the first position not yet covered */
  while (oy < h) {
    if (n == cap) {   /* not reached: vectors starting in one row are vl apart */
      dlc_free(v);
      return NULL;
    }
    dlc_dnchw_vec *d = &v[n++];
    const size_t q0 = oy * x_row + ox;
    d->x_off = (int32_t)q0;
    /* row pieces of [q0, q0 + vl) */
    while (oy < h) {
      const size_t q = oy * x_row + ox;
      if (q >= q0 + vl) break;
      const size_t run = DLC_MIN(w - ox, q0 + vl - q);
      if (d->nseg == DLC_DNCHW_MAX_SEGS) {
        dlc_free(v);
        return NULL;
      }
      d->y_off[d->nseg] = (int32_t)(oy * w + ox);
      d->lo[d->nseg] = (int8_t)(q - q0);
      d->hi[d->nseg] = (int8_t)(q - q0 + run);
      d->nseg++;
      ox += run;
      if (ox == w) ox = 0, oy++;
    }
  }
  *nvec = n;
  return v;
}

/* -1 (the default): where it pays; 0 never; 1 wherever it applies (test_hooks.h). */
#if defined(DLC_TEST_HOOKS)
static atomic_int mode_hook = -1;
void dlc_test_direct_nchw_mode(int mode) { atomic_store_explicit(&mode_hook, mode, memory_order_relaxed); }
#define MODE_HOOK() atomic_load_explicit(&mode_hook, memory_order_relaxed)
#else
#define MODE_HOOK() (-1)
#endif

static int fits(const dlc_conv_shape *s, const dlc_isa_kernels *k) {
  return k && k->dnchw && s->layout == DLCONV_NCHW && s->stride_h == 1 && s->stride_w == 1 && s->dil_h == 1 &&
         s->dil_w == 1 && s->cin_g > 1 && s->k_h * s->k_w > 1 && row_len(s) > 0 &&
         (size_t)(s->h_in + s->pad_t + s->pad_b + 1) * row_len(s) * (size_t)s->c_in < ((size_t)1 << 30);
}

/* Where it ran faster than direct.c's transposing path (and than GSPC on grouped layers, which
   AUTO then sends here): Zen 5, AVX-512, 1 thread, ms per call, this / direct.c (/ GSPC):
     32 x 32 planes: 16>32 0.0394 / 0.0434, 32>32 0.0761 / 0.0799, 64>64 0.298 / 0.316; 56 x 56
     64>64 1.016 / 1.047; 28 x 28 32>32 0.0627 / 0.0619; 16 x 16 64>64 0.0753 / 0.0702, 32>32
     0.0194 / 0.0195; 8 x 8 128>128 0.093 / 0.064 (a fifth of the lanes are row ends);
     grouped, 2 groups: 16>16 32 x 32 0.0105 / - / 0.0119, 32>32 0.0394 / - / 0.0434, 64>64 16 x 16
     0.0384 / - / 0.0405, 128>128 8 x 8 0.049 / 0.034.
   So: planes of at least 32 columns (16 when grouped), at least 9 of 10 lanes outputs, up to 64
   input channels a group (an oc block's weights in L1; 128x28x28>128 ran 1.10x), 8 or more output
   channels a group when grouped (GSPC's positions in lanes has tiles for fewer), and a group's
   padded input up to 2 bands (VGG-16's 64x224x224>64 and 64x112x112>128, in bands, ran 0.79-1.12x
   direct.c's time on a machine too loaded to tell). */
int dlc_direct_nchw_pays(const dlc_conv_shape *s, const dlc_isa_kernels *k) {
  if (!fits(s, k)) return 0;
  const size_t vl = k->dnchw->vl, w = (size_t)s->w_out, x_row = row_len(s);
  /* lanes of the greedy cover (cover()) without building it: rows of whole vectors need
     ceil(w / vl) each; rows that share vectors (w + the padding < vl) about (h x_row) / vl */
  const size_t plane = (size_t)(s->h_out * s->w_out);
  const size_t vecs = w >= vl ? (size_t)s->h_out * dlc_div_up(w, vl) : dlc_div_up((size_t)s->h_out * x_row, vl);
  const int grouped = s->groups > 1;
  const size_t in_bytes = (size_t)s->cin_g * (size_t)(s->h_in + s->pad_t + s->pad_b + 1) * x_row * sizeof(float);
  return w >= (grouped ? 16u : 32u) && plane * 10 >= vecs * vl * 9 && s->cin_g <= 64 && (!grouped || s->cout_g >= 8) &&
         in_bytes <= 2 * BAND_BYTES;
}

int dlc_direct_nchw_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k) {
  (void)dtype;
  const int mode = MODE_HOOK();
  if (mode == 0) return 0;
  return mode == 1 ? fits(s, k) : dlc_direct_nchw_pays(s, k);
}

static void dnchw_destroy(dlconv_plan *p) {
  dnchw_data *d = p->algo_data;
  if (!d) return;
  dlc_free(d->vecs);
  dlc_free(d->tap);
  dlc_free(d->blk_c0);
  dlc_free(d->w);
  dlc_free(d);
  p->algo_data = NULL;
}

/* The (nv, mr) of most FMAs per tile on average, the tiles and blocks balanced. */
static void choose(const dlc_f32_dnchw_family *f, size_t nvec, size_t cout_g, size_t *nv_out, size_t *nb_out) {
  double best = -1;
  for (size_t nv = 1; nv <= f->max_nv && nv <= nvec; nv++) {
    const size_t nb = dlc_div_up(cout_g, f->max_mr[nv - 1]);
    const size_t nt = dlc_div_up(nvec, nv);
    const double score = ((double)cout_g / (double)nb) * ((double)nvec / (double)nt);
    if (score > best + 1e-9) best = score, *nv_out = nv, *nb_out = nb;
  }
}

static dlconv_status dnchw_plan(dlconv_plan *p, const void *wv) {
  const dlc_conv_shape *s = &p->s;
  const dlc_f32_dnchw_family *f = p->kernels->dnchw;
  dnchw_data *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory");
  p->algo_data = d;
  d->f = f;
  d->x_row = row_len(s);
  d->rows = (size_t)(s->h_in + s->pad_t + s->pad_b + 1);
  d->x_c = dlc_div_up(d->rows * d->x_row, 16) * 16;
  d->slack = d->x_row + 2 * f->vl;
  d->vecs = cover(s, d->x_row, f->vl, &d->nvec);
  if (!d->vecs) {
    dnchw_destroy(p);
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "direct nchw: rows too short for the vectors");
  }
  const size_t cin_g = (size_t)s->cin_g, cout_g = (size_t)s->cout_g, g = (size_t)s->groups;
  choose(f, d->nvec, cout_g, &d->nv, &d->nb);
  d->ntile = dlc_div_up(d->nvec, d->nv);
  d->ntaps = (size_t)(s->k_h * s->k_w);
  d->tap = dlc_malloc(d->ntaps * sizeof *d->tap);
  d->blk_c0 = dlc_malloc((d->nb + 1) * sizeof *d->blk_c0);
  d->w = dlc_malloc(g * cout_g * cin_g * d->ntaps * sizeof(float));
  if (!d->tap || !d->blk_c0 || !d->w) {
    dnchw_destroy(p);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory");
  }
  for (size_t ky = 0, t = 0; ky < (size_t)s->k_h; ky++)
    for (size_t kx = 0; kx < (size_t)s->k_w; kx++) d->tap[t++] = (int32_t)(ky * d->x_row + kx);
  for (size_t b = 0; b <= d->nb; b++) d->blk_c0[b] = balanced(cout_g, d->nb, b);
  /* [group][block][ic][tap][mr]: the group's blocks one after another, channel order kept */
  const float *w = wv;
  float *o = d->w;
  for (size_t gi = 0; gi < g; gi++)
    for (size_t b = 0; b < d->nb; b++) {
      const size_t c0 = d->blk_c0[b], mr = d->blk_c0[b + 1] - c0;
      for (size_t ic = 0; ic < cin_g; ic++)
        for (size_t t = 0; t < d->ntaps; t++)
          for (size_t m = 0; m < mr; m++) *o++ = w[((gi * cout_g + c0 + m) * cin_g + ic) * d->ntaps + t];
    }
  /* Bands of tiles whose input rows stay in L2 while every oc block runs over them: with the
     tiles of a block fastest over a whole plane, each block streamed a 224 x 224 layer's input
     from memory again (64x224x224>64: 1.05x direct.c's time). */
  const size_t in_bytes = cin_g * d->x_c * sizeof(float);
  d->band = in_bytes <= BAND_BYTES ? d->ntile : DLC_MAX((size_t)1, d->ntile * BAND_BYTES / in_bytes);
  const size_t items = g * d->nb * d->ntile;
  d->ntasks = DLC_MIN((size_t)DLC_MAX(p->nthreads, 1), items);
  p->packed_weight_bytes = g * cout_g * cin_g * d->ntaps * sizeof(float);
  p->workspace_bytes = ((size_t)s->c_in * d->x_c + d->slack) * sizeof(float);
  p->weight_density = 1.0;
  const char *isa = strstr(f->name, "__");
  snprintf(p->kernel, sizeof p->kernel, "f32_dnchw_%zux%zup%s", f->max_mr[d->nv - 1], d->nv * f->vl, isa ? isa : "");
  return DLCONV_OK;
}

typedef struct dnchw_run {
  const dlconv_plan *p;
  const float *x;   /* image n */
  float *y;         /* image n */
  float *xp;        /* padded planes */
  size_t pad_tasks;
} dnchw_run;

/* Pass 1: the padded planes of this task's input channels (and, last task, the slack). */
static void pad_task(void *arg, size_t task) {
  const dnchw_run *r = arg;
  const dlconv_plan *p = r->p;
  const dnchw_data *d = p->algo_data;
  const dlc_conv_shape *s = &p->s;
  size_t c0, c1;
  dlc_split_range((size_t)s->c_in, r->pad_tasks, task, &c0, &c1);
  for (size_t c = c0; c < c1; c++)
    d->f->pad(r->x + c * (size_t)(s->h_in * s->w_in), (size_t)s->h_in, (size_t)s->w_in, (size_t)s->pad_t,
              (size_t)s->pad_l, d->x_row, d->x_c, r->xp + c * d->x_c);
  if (task == r->pad_tasks - 1) memset(r->xp + (size_t)s->c_in * d->x_c, 0, d->slack * sizeof(float));
}

/* Pass 2: items (group, block, tile) of this task, tiles fastest. */
static void conv_task(void *arg, size_t task) {
  const dnchw_run *r = arg;
  const dlconv_plan *p = r->p;
  const dnchw_data *d = p->algo_data;
  const dlc_conv_shape *s = &p->s;
  const size_t cin_g = (size_t)s->cin_g, cout_g = (size_t)s->cout_g;
  const size_t plane = (size_t)(s->h_out * s->w_out);
  const size_t items = (size_t)s->groups * d->nb * d->ntile;
  size_t i0, i1;
  dlc_split_range(items, d->ntasks, task, &i0, &i1);
  dlc_f32_dnchw_args a = {
      .x_c = (ptrdiff_t)d->x_c,
      .n_ci = cin_g,
      .tap = d->tap,
      .ntaps = d->ntaps,
      .kw = s->k_w == 3 ? 3 : 0,
      .x_row = (ptrdiff_t)d->x_row,
      .y_c = (ptrdiff_t)plane,
      .out_min = s->out_min,
      .out_max = s->out_max,
  };
  for (size_t i = i0; i < i1; i++) {
    /* (group, band, block, tile of the band) */
    const size_t per_g = d->ntile * d->nb, g = i / per_g, ri = i % per_g;
    const size_t k = ri / (d->band * d->nb), len = DLC_MIN(d->band, d->ntile - k * d->band);
    const size_t rr = ri - k * d->band * d->nb, b = rr / len, tile = k * d->band + rr % len;
    const size_t c0 = d->blk_c0[b], mr = d->blk_c0[b + 1] - c0;
    const size_t v0 = balanced(d->nvec, d->ntile, tile), nv = balanced(d->nvec, d->ntile, tile + 1) - v0;
    a.x = r->xp + g * cin_g * d->x_c;
    a.w = d->w + (g * cout_g + c0) * cin_g * d->ntaps;
    a.bias = p->bias + g * cout_g + c0;
    a.y = r->y + (g * cout_g + c0) * plane;
    a.vecs = d->vecs + v0;
    d->f->kernel(nv, mr)(&a);
  }
}

static void dnchw_execute(const dlconv_plan *p, const void *xv, void *yv, void *ws) {
  const dlc_conv_shape *s = &p->s;
  const dnchw_data *d = p->algo_data;
  const size_t x_img = (size_t)(s->c_in * s->h_in * s->w_in), y_img = (size_t)(s->c_out * s->h_out * s->w_out);
  dnchw_run r = {.p = p, .xp = ws, .pad_tasks = DLC_MIN((size_t)DLC_MAX(p->nthreads, 1), (size_t)s->c_in)};
  for (size_t n = 0; n < (size_t)s->n; n++) {
    r.x = (const float *)xv + n * x_img;
    r.y = (float *)yv + n * y_img;
    const dlc_pass pass[2] = {{r.pad_tasks, pad_task, &r}, {d->ntasks, conv_task, &r}};
    dlc_parallel_passes(p, pass, 2);
  }
}

const dlc_impl_ops dlc_direct_nchw_ops = {
    .plan = dnchw_plan,
    .execute = dnchw_execute,
    .destroy = dnchw_destroy,
};
