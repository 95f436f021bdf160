/* csr_lowp.c - the sparse_csr driver for F16 and int8, NCHW and NHWC.
 *
 * The fp32 driver's plan (csr.c, csr_plan.h: the nonzeros as rows of CSR, the operand as panels
 * or slabs of the input, each nonzero's place in it an offset), with the operand widened while it
 * is gathered and the output written through the lowp GEMM families' store functions:
 *
 *   F16:  operand fp32, the nonzeros fp32 (exact), the fp32 family's spmm kernel into a tile
 *         with a zero bias and no clamp; the F16 store adds the bias, clamps and rounds. The
 *         values stay fp32 because each is broadcast once per tile of pixels, where a binary16
 *         value would cost a conversion per broadcast.
 *   int8: operand s16 (x - x_zero_point, 0 on padding), the s8 nonzeros as s16 with each row
 *         padded to an even count by a zero at a valid offset, the q8 family's spmm (pairs of
 *         nonzeros per vpmaddwd) into an exact s32 tile, then the exact requantising store.
 *
 * The tile holds a job's output channels x pixels; NCHW stores its rows (runs of pixels), NHWC
 * transposes it (the fp32 family's transpose moves 32-bit elements, s32 or fp32 alike) and stores
 * each pixel's run of channels. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/threading.h"
#include "../core/util.h"
#include "../quant/quant.h"
#include "csr.h"
#include "csr_plan.h"

typedef struct csrl_ws {
  size_t es;           /* operand element bytes: 4 (F16: fp32) or 2 (int8: s16) */
  size_t x_bytes;      /* per task: the operand, with the kernels' 16 elements of slack */
  size_t ldt;          /* tile row stride, in 32-bit elements */
  size_t t_bytes;      /* per task: the tile, cout_g x ldt */
  size_t tt_bytes;     /* per task, NHWC: the transposed tile */
  size_t slice;
} csrl_ws;

typedef struct csrl_data {
  csr_data *c;         /* first: csr_plan.h's layout, shared with csr.c */
  int q8;
  csrl_ws ws;
} csrl_data;

static void csrl_destroy(dlconv_plan *p) {
  csrl_data *d = p->algo_data;
  if (!d) return;
  dlc_csr_data_free(d->c);
  dlc_free(d);
  p->algo_data = NULL;
}

/* ---- planning ---------------------------------------------------------------------------- */

static int is_nonzero(const void *w, size_t i, int q8) {
  return q8 ? ((const int8_t *)w)[i] != 0 : (((const uint16_t *)w)[i] & 0x7fffu) != 0;
}

static dlconv_status csrl_plan(dlconv_plan *p, const void *w) {
  const dlc_conv_shape *s = &p->s;
  const int q8 = p->dtype != DLCONV_F16;
  const dlc_isa_kernels *k = p->kernels;
  if (!k->csr || (q8 ? !k->q8_csr || !k->q8_gemm : !k->f16_gemm))
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "sparse_csr: no %s micro-kernels for isa %s", q8 ? "int8" : "F16", k->name);
  const size_t rows = (size_t)s->c_out, k_total = (size_t)(s->cin_g * s->k_h * s->k_w);
  if (q8 && k_total > DLC_Q8_MAX_K)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED,
                    "sparse_csr: int8 reduction of %zu products per output could overflow the s32 accumulators "
                    "(at most %zu)", k_total, DLC_Q8_MAX_K);
  csr_data *c;
  dlconv_status st = dlc_csr_begin(p, &c, q8 ? k->q8_csr->nr : k->csr->nr, q8 ? k->q8_csr->name : k->csr->name);
  if (st != DLCONV_OK) return st;
  c->fam = k->csr;
  c->q8fam = q8 ? k->q8_csr : NULL;
  size_t nnz = 0, real = 0;
  for (size_t r = 0; r < rows; r++) {
    size_t n = 0;
    for (size_t i = 0; i < k_total; i++) n += (size_t)is_nonzero(w, r * k_total + i, q8);
    real += n;
    nnz += q8 ? n + (n & 1) : n;
  }
  int32_t *cols = dlc_malloc((nnz + 1) * sizeof(int32_t));
  if (q8)
    c->val16 = dlc_malloc((nnz + 1) * sizeof(int16_t));
  else
    c->val = dlc_malloc((nnz + 1) * sizeof(float)), c->zero_bias = dlc_calloc(rows * sizeof(float));
  if (!cols || (q8 ? !c->val16 : !c->val || !c->zero_bias)) {
    dlc_free(cols);
    dlc_csr_data_free(c);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "sparse_csr: out of memory packing %zu nonzeros", nnz);
  }
  size_t i = 0;
  for (size_t r = 0; r < rows; r++) {
    c->row_ptr[r] = i;
    for (size_t kk = 0; kk < k_total; kk++) {
      const size_t wi = r * k_total + kk;
      if (!is_nonzero(w, wi, q8)) continue;
      cols[i] = (int32_t)kk;
      if (q8)
        c->val16[i] = ((const int8_t *)w)[wi];
      else
        c->val[i] = dlc_f16_to_f32(((const uint16_t *)w)[wi]);
      i++;
    }
    if (q8 && (i - c->row_ptr[r]) % 2) { /* a zero partner at the row's last column */
      cols[i] = cols[i - 1];
      c->val16[i] = 0;
      i++;
    }
  }
  c->row_ptr[rows] = i;
  /* publishes c as p->algo_data, or frees it */
  st = dlc_csr_finish(p, c, cols, q8 ? sizeof(int16_t) : sizeof(float));
  if (st != DLCONV_OK) {
    p->algo_data = NULL;
    return st;
  }
  csrl_data *d = dlc_calloc(sizeof *d);
  if (!d) {
    dlc_csr_data_free(c);
    p->algo_data = NULL;
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "sparse_csr: out of memory");
  }
  d->c = c;
  d->q8 = q8;
  p->algo_data = d;
  p->weight_density = (double)real / ((double)rows * (double)k_total);
  if (!q8) p->packed_weight_bytes += rows * sizeof(float); /* the fp32 spmm's zero bias */
  /* The workspace: csr_finish sized it for fp32 operands and an fp32 tile only where needed. */
  csrl_ws *ws = &d->ws;
  ws->es = q8 ? 2 : 4;
  ws->x_bytes = dlc_round_up((c->xbuf_floats + 16) * ws->es, DLC_ALIGN);
  ws->ldt = dlc_round_up(c->pb, 16);
  ws->t_bytes = dlc_round_up((size_t)s->cout_g * ws->ldt * 4, DLC_ALIGN);
  ws->tt_bytes = s->layout == DLCONV_NHWC ? ws->t_bytes : 0;
  ws->slice = ws->x_bytes + ws->t_bytes + ws->tt_bytes;
  p->workspace_bytes = c->ntasks_max * ws->slice;
  return DLCONV_OK;
}

/* ---- the operand ------------------------------------------------------------------------- */

/* n elements of x from src at a step (in elements), widened into dst (fp32 or s16). */
static inline void put_run(const dlconv_plan *p, int q8, void *dst, const void *src, size_t step, size_t n) {
  if (q8) {
    p->kernels->q8_gemm->widen_run(n, src, step, p->q8.x_zero_point, p->q8.is_signed, dst);
  } else {
    p->kernels->f16_gemm->widen_run(n, src, step, dst);
  }
}

static inline void zero_run(void *dst, size_t es, size_t n) { memset(dst, 0, n * es); }

/* As csr.c's gather_row: one operand row into the panels, for the np output pixels from p0, the
   input value at tap (ky, kx) of the channel whose data starts at src (elements of x), zero where
   the tap falls on padding; rs and ps are the input's row and pixel strides. */
static void gather_row(const dlconv_plan *p, int q8, const char *src, size_t rs, size_t ps, int64_t ky, int64_t kx,
                       size_t p0, size_t np, char *dst, size_t nr, size_t panel, size_t es) {
  const dlc_conv_shape *s = &p->s;
  const size_t xes = q8 ? 1 : 2;
  int64_t oy = (int64_t)(p0 / (size_t)s->w_out), ox = (int64_t)(p0 % (size_t)s->w_out);
  const int64_t sw = s->stride_w;
  size_t done = 0, in_panel = 0;
  while (done < np) {
    const size_t seg = DLC_MIN(DLC_MIN((size_t)(s->w_out - ox), np - done), nr - in_panel);
    char *o = dst + in_panel * es;
    const int64_t iy = oy * s->stride_h - s->pad_t + ky * s->dil_h;
    if (iy < 0 || iy >= s->h_in) {
      zero_run(o, es, seg);
    } else {
      const int64_t ix0 = ox * sw - s->pad_l + kx * s->dil_w;
      int64_t jlo = ix0 >= 0 ? 0 : (-ix0 + sw - 1) / sw;
      int64_t jhi = ix0 >= s->w_in ? 0 : (s->w_in - ix0 + sw - 1) / sw;
      jlo = DLC_MIN(jlo, (int64_t)seg);
      jhi = DLC_MAX(jlo, DLC_MIN(jhi, (int64_t)seg));
      zero_run(o, es, (size_t)jlo);
      if (jhi > jlo)
        put_run(p, q8, o + (size_t)jlo * es, src + ((size_t)iy * rs + (size_t)(ix0 + jlo * sw) * ps) * xes, ps * (size_t)sw,
                (size_t)(jhi - jlo));
      zero_run(o + (size_t)jhi * es, es, seg - (size_t)jhi);
    }
    done += seg;
    ox += (int64_t)seg;
    if (ox == s->w_out) ox = 0, oy++;
    in_panel += seg;
    if (in_panel == nr) in_panel = 0, dst += panel * es;
  }
}

/* The operand of (image n, group g, pixels [p0, p0 + np)) as panels: one row per used column. */
static void gather_panels(const dlconv_plan *p, const csrl_data *d, const void *x, size_t n, size_t g, size_t p0,
                          size_t np, char *xb) {
  const dlc_conv_shape *s = &p->s;
  const csr_data *c = d->c;
  const size_t hw = (size_t)(s->h_in * s->w_in), c_in = (size_t)s->c_in, nr = c->nr, es = d->ws.es;
  const size_t xes = d->q8 ? 1 : 2;
  const int32_t *used = c->used_k + c->used_ptr[g];
  const size_t nu = c->used_ptr[g + 1] - c->used_ptr[g];
  const int64_t khw = s->k_h * s->k_w;
  const int nchw = s->layout == DLCONV_NCHW;
  const char *base = (const char *)x + (nchw ? (n * c_in + g * (size_t)s->cin_g) * hw : n * hw * c_in + g * (size_t)s->cin_g) * xes;
  for (size_t u = 0; u < nu; u++) {
    const int64_t kk = used[u], ic = kk / khw, ky = (kk % khw) / s->k_w, kx = kk % s->k_w;
    char *o = xb + u * c->ldp * es;
    if (c->identity) { /* output pixel j reads input pixel j */
      const char *in = base + (nchw ? (size_t)ic * hw + p0 : p0 * c_in + (size_t)ic) * xes;
      const size_t ps = nchw ? 1 : c_in;
      for (size_t q = 0; q < np; q += nr, o += c->panel_floats * es)
        put_run(p, d->q8, o, in + q * ps * xes, ps, DLC_MIN(nr, np - q));
      continue;
    }
    if (nchw)
      gather_row(p, d->q8, base + (size_t)ic * hw * xes, (size_t)s->w_in, 1, ky, kx, p0, np, o, nr, c->panel_floats, es);
    else
      gather_row(p, d->q8, base + (size_t)ic * xes, (size_t)s->w_in * c_in, c_in, ky, kx, p0, np, o, nr,
                 c->panel_floats, es);
  }
}

/* The operand of (image n, group g, output rows [oy0, oy0 + rows)) as slabs: per used channel,
   the padded input rows those output rows read, wp wide, then zeros to the slab's end. */
static void gather_slabs(const dlconv_plan *p, const csrl_data *d, const void *x, size_t n, size_t g, size_t oy0,
                         size_t rows, char *xb) {
  const dlc_conv_shape *s = &p->s;
  const csr_data *c = d->c;
  const size_t w_in = (size_t)s->w_in, c_in = (size_t)s->c_in, wp = c->wp, pl = (size_t)s->pad_l, es = d->ws.es;
  const size_t xes = d->q8 ? 1 : 2, S = c->slab_floats;
  const size_t srows = rows + (size_t)(s->dil_h * (s->k_h - 1));
  const int32_t *used = c->used_k + c->used_ptr[g];
  const size_t nu = c->used_ptr[g + 1] - c->used_ptr[g];
  if (nu == 0) return;
  for (size_t u = 0; u < nu; u++) {
    char *slab = xb + u * S * es;
    const size_t ch = g * (size_t)s->cin_g + (size_t)used[u];
    for (size_t j = 0; j < srows; j++) {
      char *o = slab + j * wp * es;
      const int64_t iy = (int64_t)(oy0 + j) - s->pad_t;
      if (iy < 0 || iy >= s->h_in) {
        zero_run(o, es, wp);
        continue;
      }
      zero_run(o, es, pl);
      zero_run(o + (pl + w_in) * es, es, wp - pl - w_in);
      if (s->layout == DLCONV_NCHW)
        put_run(p, d->q8, o + pl * es, (const char *)x + ((n * c_in + ch) * (size_t)s->h_in + (size_t)iy) * w_in * xes, 1,
                w_in);
      else
        put_run(p, d->q8, o + pl * es, (const char *)x + (((n * (size_t)s->h_in + (size_t)iy) * w_in) * c_in + ch) * xes,
                c_in, w_in);
    }
    zero_run(slab + srows * wp * es, es, S - srows * wp);
  }
}

/* ---- execution --------------------------------------------------------------------------- */

/* One run of n accumulators of channel(s) from c0 into y. */
static inline void store_run(const dlconv_plan *p, int q8, size_t n, const void *acc, size_t c0, int per_column,
                             char *y) {
  if (q8)
    p->kernels->q8_gemm->store(n, acc, &p->q8, c0, per_column, y);
  else
    p->kernels->f16_gemm->store(n, acc, p->bias, c0, per_column, p->s.out_min, p->s.out_max, (uint16_t *)(void *)y);
}

/* The kernel over np pixels of the operand at x into the tile rows of channels oc0.. (ldt apart). */
static void spmm(const dlconv_plan *p, const csrl_data *d, size_t oc0, size_t np, const char *x, void *t) {
  const csr_data *c = d->c;
  const size_t nz0 = c->row_ptr[oc0], cout_g = (size_t)p->s.cout_g;
  if (d->q8)
    c->q8fam->spmm(cout_g, np, (const int16_t *)(const void *)x, c->nnz + oc0, c->val16 + nz0, c->off + nz0, t, d->ws.ldt);
  else
    c->fam->spmm(cout_g, np, (const float *)(const void *)x, c->nnz + oc0, c->val + nz0, c->off + nz0, c->zero_bias,
                 t, d->ws.ldt, -INFINITY, INFINITY);
}

static void csrl_job(const dlc_exec *a, size_t job, char *xb, int32_t *tb, int32_t *tt) {
  const dlconv_plan *p = a->p;
  const csrl_data *d = p->algo_data;
  char *y = a->y;
  const csr_data *c = d->c;
  const dlc_conv_shape *s = &p->s;
  const size_t pix = c->pix, cout_g = (size_t)s->cout_g, c_out = (size_t)s->c_out;
  const size_t yes = d->q8 ? 1 : 2, ldt = d->ws.ldt, w_out = (size_t)s->w_out;
  const int nchw = s->layout == DLCONV_NCHW;
  size_t n, g, blk;
  dlc_csr_job_coords(c, s, job, &n, &g, &blk);
  const size_t oc0 = g * cout_g;
  if (c->slabs) {
    const size_t oy0 = blk * c->rows_blk, rows = DLC_MIN(c->rows_blk, (size_t)s->h_out - oy0);
    gather_slabs(p, d, a->x, n, g, oy0, rows, xb);
    spmm(p, d, oc0, rows * c->wp, xb, tb);
    for (size_t r = 0; r < rows; r++) {
      const size_t pixel0 = (oy0 + r) * w_out;
      if (nchw) {
        for (size_t oc = 0; oc < cout_g; oc++)
          store_run(p, d->q8, w_out, tb + oc * ldt + r * c->wp, oc0 + oc, 0, y + ((n * c_out + oc0 + oc) * pix + pixel0) * yes);
      } else {
        c->fam->transpose(cout_g, w_out, (const float *)(const void *)(tb + r * c->wp), ldt, (float *)(void *)tt, cout_g);
        for (size_t j = 0; j < w_out; j++)
          store_run(p, d->q8, cout_g, tt + j * cout_g, oc0, 1, y + ((n * pix + pixel0 + j) * c_out + oc0) * yes);
      }
    }
    return;
  }
  const size_t p0 = blk * c->pb, np = DLC_MIN(c->pb, pix - p0);
  gather_panels(p, d, a->x, n, g, p0, np, xb);
  for (size_t q = 0; q < np; q += c->nr)
    spmm(p, d, oc0, DLC_MIN(c->nr, np - q), xb + q / c->nr * c->panel_floats * d->ws.es, tb + q);
  if (nchw) {
    for (size_t oc = 0; oc < cout_g; oc++)
      store_run(p, d->q8, np, tb + oc * ldt, oc0 + oc, 0, y + ((n * c_out + oc0 + oc) * pix + p0) * yes);
  } else {
    c->fam->transpose(cout_g, np, (const float *)(const void *)tb, ldt, (float *)(void *)tt, cout_g);
    for (size_t j = 0; j < np; j++)
      store_run(p, d->q8, cout_g, tt + j * cout_g, oc0, 1, y + ((n * pix + p0 + j) * c_out + oc0) * yes);
  }
}

static void csrl_task(void *arg, size_t t) {
  const dlc_exec *a = arg;
  const csrl_data *d = a->p->algo_data;
  const csrl_ws *w = &d->ws;
  char *slice = a->ws + t * w->slice;
  char *xb = slice;
  int32_t *tb = (int32_t *)(void *)(slice + w->x_bytes), *tt = (int32_t *)(void *)(slice + w->x_bytes + w->t_bytes);
  size_t b, e;
  dlc_split_range(d->c->njobs, d->c->ntasks_max, t, &b, &e);
  for (size_t j = b; j < e; j++) csrl_job(a, j, xb, tb, tt);
}

const dlc_impl_ops dlc_csr_lowp_ops = {
    .plan = csrl_plan,
    .task = csrl_task,
    .destroy = csrl_destroy,
};
