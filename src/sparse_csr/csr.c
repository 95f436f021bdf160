/* csr.c - the sparse_csr algorithm: pruned weights as compressed sparse rows (rows = output
 * channels, columns = (ic*k_h + ky)*k_w + kx), so zero weights cost nothing.
 *
 * Per (image, group) the convolution is Y[oc][p] = bias[oc] + sum_k W[oc][k] * X[k][p], with
 * X[k][p] the input value output pixel p sees at filter column k. The micro-kernel
 * (csr_ukernel.h) broadcasts each nonzero and multiplies it into a row of pixels of X.
 *
 * X is gathered per job (image, group, block of output pixels) into the task's workspace slice,
 * in one of two layouts; each nonzero's place in it becomes an element offset at plan time.
 *  - Panels (1x1 unpadded stride-1 layers, strides > 1, near-dense weights): im2col restricted to the block and to
 *    the columns some nonzero of the group uses, padding written as zeros, as panels of the
 *    kernel's tile width (operand rows x NR pixels, contiguous). A panel is what one kernel call
 *    reads: it stays in L1/L2 with no cache-set conflicts between its rows and few pages. Even
 *    for 1x1 NCHW layers, where X is the input plane itself, the copy pays: read in place, rows
 *    a plane apart made the kernel TLB- and latency-bound (ResNet-50's 1x1 layers at 90%
 *    sparsity ran 10-30% slower than gather + panels on Zen 4).
 *  - Slabs (other stride-1 layers, density < 0.75): each used input channel's rows the
 *    block needs, zero-padded to width W_p = w_in + pad_l + pad_r. Output pixels are taken on
 *    that padded width (columns past w_out are computed and dropped), so every tap (ky, kx) of a
 *    channel is the same slab shifted by ky*dil_h*W_p + kx*dil_w: no im2col copy per tap (9x
 *    less data to gather for a 3x3 filter), as in direct sparse convolution (Park et al. 2017).
 * NCHW output of panels goes straight into y; NHWC output, and slabs' padded-width output, go
 * through a per-task tile (transposed for NHWC).
 * Tasks: the jobs split evenly over at most p->nthreads tasks, one workspace slice each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/plan.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "csr.h"
#include "csr_plan.h"

/* Gathered operand per job in floats (operand rows x pixels), sized for the L2 cache. */
#define CSR_OPERAND_FLOATS (64 * 1024)
#define CSR_MAX_BLOCK 1024   /* pixels per job; bounds the per-task workspace */
#define CSR_JOBS_PER_TASK 4  /* enough jobs per task for the split to balance */


void dlc_csr_data_free(csr_data *d) {
  if (!d) return;
  dlc_free(d->row_ptr);
  dlc_free(d->val16);
  dlc_free(d->zero_bias);
  dlc_free(d->nnz);
  dlc_free(d->val);
  dlc_free(d->off);
  dlc_free(d->used_ptr);
  dlc_free(d->used_k);
  dlc_free(d);
}

static void csr_destroy(dlconv_plan *p) {
  dlc_csr_data_free(p->algo_data);
  p->algo_data = NULL;
}

/* ---- planning ---------------------------------------------------------------------------- */

/* Per group, the operand rows some nonzero uses, in gather order: filter columns for panels,
   input channels for slabs. col_to_u (groups x k_total) maps a group's column to its operand
   row. With `all`, every column (channel). */
static dlconv_status plan_used_columns(const dlconv_plan *p, csr_data *d, const int32_t *cols,
                                       int64_t k_total, int all, size_t *u_max, int32_t *col_to_u) {
  const dlc_conv_shape *s = &p->s;
  const size_t nnz_total = d->row_ptr[s->c_out];
  d->used_ptr = dlc_malloc(((size_t)s->groups + 1) * sizeof(size_t));
  d->used_k = dlc_malloc(((all ? (size_t)(s->groups * k_total) : DLC_MIN(nnz_total, (size_t)(s->groups * k_total))) + 1) *
                         sizeof(int32_t));
  uint8_t *mark = dlc_malloc((size_t)k_total);
  if (!d->used_ptr || !d->used_k || !mark) {
    dlc_free(mark);
    return DLCONV_ERR_OUT_OF_MEMORY;
  }
  const int64_t khw = s->k_h * s->k_w;
  size_t n_used = 0;
  *u_max = 0;
  d->used_ptr[0] = 0;
  for (int64_t g = 0; g < s->groups; g++) {
    memset(mark, all, (size_t)k_total);
    for (size_t i = d->row_ptr[g * s->cout_g]; i < d->row_ptr[(g + 1) * s->cout_g]; i++) mark[cols[i]] = 1;
    size_t u = 0;
    if (d->slabs) { /* a channel is used when any of its taps is */
      for (int64_t ic = 0; ic < s->cin_g; ic++) {
        int any = 0;
        for (int64_t t = 0; t < khw; t++) any |= mark[ic * khw + t];
        if (!any) continue;
        d->used_k[n_used + u] = (int32_t)ic;
        for (int64_t t = 0; t < khw; t++) col_to_u[g * k_total + ic * khw + t] = (int32_t)u;
        u++;
      }
    } else {
      /* Gather order: NCHW reads one input plane per channel, so channel-major; NHWC reads the
         channels of a pixel from one cache line, so tap-major with the channel fastest. */
      for (int64_t key = 0; key < k_total; key++) {
        const int64_t k = s->layout == DLCONV_NCHW ? key : (key % s->cin_g) * khw + key / s->cin_g;
        if (!mark[k]) continue;
        d->used_k[n_used + u] = (int32_t)k;
        col_to_u[g * k_total + k] = (int32_t)u;
        u++;
      }
    }
    n_used += u;
    d->used_ptr[g + 1] = n_used;
    *u_max = DLC_MAX(*u_max, u);
  }
  dlc_free(mark);
  return DLCONV_OK;
}

/* Pixels per job: a multiple of the kernel tile, the gathered operand within the cache budget,
   and enough jobs for every task to get several. */
static size_t choose_block(const dlconv_plan *p, size_t nr, size_t k_op, size_t pix) {
  size_t pb = CSR_OPERAND_FLOATS / DLC_MAX(k_op, 1) / nr * nr;
  pb = DLC_MAX(pb, nr);
  pb = DLC_MIN(pb, dlc_round_up(CSR_MAX_BLOCK, nr));
  pb = DLC_MIN(pb, dlc_round_up(pix, nr));
  if (p->nthreads > 1) {
    const size_t images = (size_t)(p->s.n * p->s.groups);
    const size_t want = (size_t)p->nthreads * CSR_JOBS_PER_TASK;
    if (images * dlc_div_up(pix, pb) < want) {
      const size_t blocks = dlc_div_up(want, images);
      pb = DLC_MAX(nr, dlc_round_up(dlc_div_up(pix, blocks), nr));
    }
  }
  /* Same job count, sizes evened out so the last job is not a sliver. */
  return dlc_round_up(dlc_div_up(pix, dlc_div_up(pix, pb)), nr);
}

/* Output rows per job for slabs: u_max slabs within the cache budget, enough jobs for the
   tasks; the offsets must fit 32 bits (u_max * slab floats). */
static size_t choose_slab_rows(const dlconv_plan *p, const csr_data *d, size_t u_max) {
  const dlc_conv_shape *s = &p->s;
  const size_t halo = (size_t)(s->dil_h * (s->k_h - 1)), h_out = (size_t)s->h_out;
  const size_t per_row = DLC_MAX(u_max, 1) * d->wp; /* floats one more output row costs */
  size_t rows = CSR_OPERAND_FLOATS / per_row;
  rows = rows > halo ? rows - halo : 1;
  rows = DLC_MIN(DLC_MAX(rows, 1), h_out);
  rows = DLC_MIN(rows, DLC_MAX(CSR_MAX_BLOCK / d->wp, 1));
  if (p->nthreads > 1) {
    const size_t images = (size_t)(s->n * s->groups);
    const size_t want = (size_t)p->nthreads * CSR_JOBS_PER_TASK;
    if (images * dlc_div_up(h_out, rows) < want) rows = DLC_MAX(1, h_out / dlc_div_up(want, images));
  }
  while (rows > 1 && (uint64_t)u_max * ((rows + halo) * d->wp + (size_t)(s->dil_w * (s->k_w - 1)) + 16) > INT32_MAX)
    rows /= 2;
  return dlc_div_up(h_out, dlc_div_up(h_out, rows)); /* evened out */
}

/* d->row_ptr and d->val are filled, cols holds the columns (ascending within each row); this
   lays out the operand and the offsets, sizes the workspace and publishes d. Frees cols, and d
   on failure. */
dlconv_status dlc_csr_finish(dlconv_plan *p, csr_data *d, int32_t *cols, size_t value_bytes) {
  const dlc_conv_shape *s = &p->s;
  const int64_t k_total = s->cin_g * s->k_h * s->k_w;
  const size_t nnz_total = d->row_ptr[s->c_out];
  const size_t nr = d->nr_tile;
  dlconv_status st = DLCONV_ERR_OUT_OF_MEMORY;
  int32_t *col_to_u = NULL;
  size_t u_max = 0;

  d->pix = (size_t)(s->h_out * s->w_out);
  d->nr = nr;
  d->ldp = nr + 16;
  d->identity = s->k_h == 1 && s->k_w == 1 && s->stride_h == 1 && s->stride_w == 1 && s->pad_t == 0 &&
                s->pad_b == 0 && s->pad_l == 0 && s->pad_r == 0;
  /* Slabs read an operand spread over a few input rows per channel; near-dense weights read
     all of it for every row, where contiguous panels cache better (ResNet-50 3x3 layers on
     Zen 4: slabs 2x faster at density 0.1, even at 0.5, 25% slower at 1.0). */
  d->slabs = s->stride_h == 1 && s->stride_w == 1 && !d->identity &&
             (double)nnz_total < 0.75 * (double)s->c_out * (double)k_total;
  d->wp = (size_t)(s->w_in + s->pad_l + s->pad_r);
  d->nnz = dlc_malloc((size_t)s->c_out * sizeof(int32_t));
  d->off = dlc_malloc((nnz_total + 1) * sizeof(int32_t));
  col_to_u = dlc_malloc((size_t)(s->groups * k_total) * sizeof(int32_t));
  if (!d->nnz || !d->off || !col_to_u) goto fail;
  if (plan_used_columns(p, d, cols, k_total, 0, &u_max, col_to_u) != DLCONV_OK) goto fail;
  const size_t units = d->slabs ? (size_t)s->cin_g : (size_t)k_total;
  if (s->layout == DLCONV_NHWC && (d->identity || d->slabs) && u_max != units && 2 * u_max >= units) {
    /* Most channels used: gathering them all is one vector transposition, cheaper than
       picking channels one by one. */
    dlc_free(d->used_ptr);
    dlc_free(d->used_k);
    d->used_ptr = NULL;
    d->used_k = NULL;
    if (plan_used_columns(p, d, cols, k_total, 1, &u_max, col_to_u) != DLCONV_OK) goto fail;
  }
  size_t row_stride = d->ldp; /* of the operand rows */
  if (d->slabs) {
    d->rows_blk = choose_slab_rows(p, d, u_max);
    d->slab_floats = dlc_round_up(((d->rows_blk + (size_t)(s->dil_h * (s->k_h - 1))) * d->wp +
                                   (size_t)(s->dil_w * (s->k_w - 1))), 16);
    row_stride = d->slab_floats;
  }
  if ((uint64_t)u_max * row_stride > INT32_MAX) {
    st = DLCONV_ERR_UNSUPPORTED;
    dlc_set_error("sparse_csr: %zu operand rows of %zu floats overflow the 32-bit offsets", u_max, row_stride);
    goto fail;
  }
  for (int64_t oc = 0; oc < s->c_out; oc++) {
    const int32_t *map = col_to_u + (oc / s->cout_g) * k_total;
    d->nnz[oc] = (int32_t)(d->row_ptr[oc + 1] - d->row_ptr[oc]);
    for (size_t i = d->row_ptr[oc]; i < d->row_ptr[oc + 1]; i++) {
      size_t o = (size_t)map[cols[i]] * row_stride;
      if (d->slabs) { /* the tap's shift within the channel's slab */
        const int64_t t = cols[i] % (s->k_h * s->k_w);
        o += (size_t)((t / s->k_w) * s->dil_h) * d->wp + (size_t)((t % s->k_w) * s->dil_w);
      }
      d->off[i] = (int32_t)o;
    }
  }
  dlc_free(col_to_u);
  dlc_free(cols);

  if (d->slabs) {
    d->pb = d->rows_blk * d->wp;
    d->nblk = dlc_div_up((size_t)s->h_out, d->rows_blk);
    d->xbuf_floats = u_max * d->slab_floats;
    d->tbuf_floats = dlc_round_up((size_t)s->cout_g * d->pb, 16);
  } else {
    d->pb = choose_block(p, nr, u_max, d->pix);
    d->nblk = dlc_div_up(d->pix, d->pb);
    d->panel_floats = u_max * d->ldp;
    d->xbuf_floats = d->panel_floats * (d->pb / nr);
    d->tbuf_floats = s->layout == DLCONV_NHWC ? dlc_round_up((size_t)s->cout_g * d->pb, 16) : 0;
  }
  d->njobs = (size_t)(s->n * s->groups) * d->nblk;
  d->ntasks_max = DLC_MIN((size_t)p->nthreads, d->njobs);
  p->exec_tasks = d->ntasks_max;
  p->workspace_bytes = (d->xbuf_floats + d->tbuf_floats) * d->ntasks_max * sizeof(float);
  p->packed_weight_bytes = nnz_total * (value_bytes + sizeof(int32_t)) +
                           (size_t)s->c_out * (sizeof(size_t) + sizeof(int32_t)) +
                           ((size_t)s->groups + 1) * sizeof(size_t) + d->used_ptr[s->groups] * sizeof(int32_t);
  p->weight_density = (double)nnz_total / ((double)s->c_out * (double)k_total);
  snprintf(p->kernel, sizeof p->kernel, "%s", d->kernel_name);
  p->algo_data = d;
  return DLCONV_OK;

fail:
  dlc_free(col_to_u);
  dlc_free(cols);
  dlc_csr_data_free(d);
  if (st == DLCONV_ERR_OUT_OF_MEMORY)
    return dlc_fail(st, "sparse_csr: out of memory packing %zu nonzeros", nnz_total);
  return st;
}

/* fp32: the family of this ISA. */
static dlconv_status csr_begin(dlconv_plan *p, csr_data **out) {
  *out = NULL;
  p->algo_data = NULL;
  const dlc_f32_csr_family *fam = p->kernels ? p->kernels->csr : NULL;
  if (!fam)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "sparse_csr: no f32 kernel for isa %s",
                    p->kernels ? p->kernels->name : "?");
  dlconv_status st = dlc_csr_begin(p, out, fam->nr, fam->name);
  if (st == DLCONV_OK) (*out)->fam = fam;
  return st;
}

dlconv_status dlc_csr_begin(dlconv_plan *p, csr_data **out, size_t nr_tile, const char *kernel_name) {
  *out = NULL;
  p->algo_data = NULL;
  const int64_t k_total = p->s.cin_g * p->s.k_h * p->s.k_w;
  if (k_total > INT32_MAX)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "sparse_csr: filter of %lld columns is too long", (long long)k_total);
  csr_data *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "sparse_csr: out of memory");
  d->nr_tile = nr_tile;
  d->kernel_name = kernel_name;
  d->row_ptr = dlc_malloc(((size_t)p->s.c_out + 1) * sizeof(size_t));
  if (!d->row_ptr) {
    dlc_csr_data_free(d);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "sparse_csr: out of memory");
  }
  *out = d;
  return DLCONV_OK;
}

/* Dense OIHW weights: keep the nonzeros (exact zeros, either sign, are dropped). */
static dlconv_status csr_plan(dlconv_plan *p, const void *weights) {
  const float *w = weights;
  csr_data *d;
  dlconv_status st = csr_begin(p, &d);
  if (st != DLCONV_OK) return st;
  const size_t rows = (size_t)p->s.c_out, k_total = (size_t)(p->s.cin_g * p->s.k_h * p->s.k_w);
  size_t nnz = 0;
  for (size_t i = 0; i < rows * k_total; i++) nnz += w[i] != 0.0f;
  d->val = dlc_malloc((nnz + 1) * sizeof(float));
  int32_t *cols = dlc_malloc((nnz + 1) * sizeof(int32_t));
  if (!d->val || !cols) {
    dlc_free(cols);
    dlc_csr_data_free(d);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "sparse_csr: out of memory packing %zu nonzeros", nnz);
  }
  size_t i = 0;
  for (size_t r = 0; r < rows; r++) {
    d->row_ptr[r] = i;
    const float *wr = w + r * k_total;
    for (size_t k = 0; k < k_total; k++) {
      if (wr[k] == 0.0f) continue;
      d->val[i] = wr[k];
      cols[i] = (int32_t)k;
      i++;
    }
  }
  d->row_ptr[rows] = i;
  return dlc_csr_finish(p, d, cols, sizeof(float));
}

typedef struct csr_entry {
  int32_t col;
  float val;
} csr_entry;

static int entry_cmp(const void *a, const void *b) {
  const int32_t ca = ((const csr_entry *)a)->col, cb = ((const csr_entry *)b)->col;
  return (ca > cb) - (ca < cb);
}

/* The caller's CSR (validated by core: columns in range and unique within a row, any order):
   copied, each row's columns sorted so that a row walks its operand rows in memory order. */
static dlconv_status csr_plan_csr(dlconv_plan *p, const dlconv_csr *w) {
  csr_data *d;
  dlconv_status st = csr_begin(p, &d);
  if (st != DLCONV_OK) return st;
  const size_t rows = (size_t)p->s.c_out, nnz = (size_t)w->nnz;
  const float *wv = w->values;
  d->val = dlc_malloc((nnz + 1) * sizeof(float));
  int32_t *cols = dlc_malloc((nnz + 1) * sizeof(int32_t));
  csr_entry *tmp = NULL;
  if (!d->val || !cols) goto oom;
  for (size_t r = 0; r <= rows; r++) d->row_ptr[r] = (size_t)w->row_ptr[r];
  for (size_t r = 0; r < rows; r++) {
    const size_t b = d->row_ptr[r], e = d->row_ptr[r + 1];
    int sorted = 1;
    for (size_t i = b + 1; i < e && sorted; i++) sorted = w->col_indices[i - 1] < w->col_indices[i];
    if (sorted) {
      if (e > b) {
        memcpy(cols + b, w->col_indices + b, (e - b) * sizeof(int32_t));
        memcpy(d->val + b, wv + b, (e - b) * sizeof(float));
      }
      continue;
    }
    if (!tmp && !(tmp = dlc_malloc(nnz * sizeof(csr_entry)))) goto oom;
    for (size_t i = b; i < e; i++) tmp[i - b] = (csr_entry){w->col_indices[i], wv[i]};
    qsort(tmp, e - b, sizeof(csr_entry), entry_cmp);
    for (size_t i = b; i < e; i++) {
      cols[i] = tmp[i - b].col;
      d->val[i] = tmp[i - b].val;
    }
  }
  dlc_free(tmp);
  return dlc_csr_finish(p, d, cols, sizeof(float));

oom:
  dlc_free(tmp);
  dlc_free(cols);
  dlc_csr_data_free(d);
  return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "sparse_csr: out of memory packing %zu nonzeros", nnz);
}

/* ---- execution --------------------------------------------------------------------------- */

/* Short runs (a panel row, an image row): fixed-size chunks become vector moves, where a libc
   call per run would cost more than the copy. */
static inline void copy_run(float *restrict o, const float *restrict in, size_t n) {
  size_t j = 0;
  for (; j + 16 <= n; j += 16)
    for (size_t t = 0; t < 16; t++) o[j + t] = in[j + t];
  for (; j < n; j++) o[j] = in[j];
}

static inline void zero_run(float *restrict o, size_t n) {
  for (size_t j = 0; j < n; j++) o[j] = 0.0f;
}

/* One operand row into the panels: for the np output pixels from p0, the input value at tap
   (ky, kx) of the channel whose data starts at src, zero where the tap falls on padding. rs and
   ps are the input's row and pixel strides in floats. Pixel j goes to
   dst[(j / nr) * panel + j % nr]; segments end at output rows and at panel edges. */
static void gather_row(const dlc_conv_shape *s, const float *src, size_t rs, size_t ps, int64_t ky,
                       int64_t kx, size_t p0, size_t np, float *dst, size_t nr, size_t panel) {
  int64_t oy = (int64_t)(p0 / (size_t)s->w_out), ox = (int64_t)(p0 % (size_t)s->w_out);
  const int64_t sw = s->stride_w;
  size_t done = 0, in_panel = 0;
  while (done < np) {
    const size_t seg = DLC_MIN(DLC_MIN((size_t)(s->w_out - ox), np - done), nr - in_panel);
    float *restrict o = dst + in_panel;
    const int64_t iy = oy * s->stride_h - s->pad_t + ky * s->dil_h;
    if (iy < 0 || iy >= s->h_in) {
      zero_run(o, seg);
    } else {
      /* Pixels j of the segment read ix = ix0 + j*sw; those in [0, w_in) are [jlo, jhi). */
      const int64_t ix0 = ox * sw - s->pad_l + kx * s->dil_w;
      int64_t jlo = ix0 >= 0 ? 0 : (-ix0 + sw - 1) / sw;
      int64_t jhi = ix0 >= s->w_in ? 0 : (s->w_in - ix0 + sw - 1) / sw;
      jlo = DLC_MIN(jlo, (int64_t)seg);
      jhi = DLC_MAX(jlo, DLC_MIN(jhi, (int64_t)seg));
      const float *row = src + (size_t)iy * rs;
      zero_run(o, (size_t)jlo);
      if (jhi == jlo) {
        /* the whole segment falls on padding */
      } else if (ps == 1 && sw == 1) {
        copy_run(o + jlo, row + (ix0 + jlo), (size_t)(jhi - jlo));
      } else {
        const size_t step = ps * (size_t)sw;
        const float *restrict in = row + (size_t)(ix0 + jlo * sw) * ps;
        for (int64_t j = jlo; j < jhi; j++, in += step) o[j] = *in;
      }
      zero_run(o + jhi, seg - (size_t)jhi);
    }
    done += seg;
    ox += (int64_t)seg;
    if (ox == s->w_out) ox = 0, oy++;
    in_panel += seg;
    if (in_panel == nr) in_panel = 0, dst += panel;
  }
}

/* X for (image n, group g, pixels [p0, p0 + np)): one row per column the group uses, as panels
   of nr pixels. */
static void gather_operand(const dlconv_plan *p, const csr_data *d, const float *x, size_t n,
                           size_t g, size_t p0, size_t np, float *xb) {
  const dlc_conv_shape *s = &p->s;
  const size_t hw = (size_t)(s->h_in * s->w_in), c_in = (size_t)s->c_in, nr = d->nr;
  const int32_t *used = d->used_k + d->used_ptr[g];
  const size_t nu = d->used_ptr[g + 1] - d->used_ptr[g];
  if (s->layout == DLCONV_NCHW) {
    const float *base = x + (n * c_in + g * (size_t)s->cin_g) * hw;
    if (d->identity) { /* a row is a run of its input plane */
      for (size_t u = 0; u < nu; u++) {
        const float *in = base + (size_t)used[u] * hw + p0;
        float *o = xb + u * d->ldp;
        for (size_t q = 0; q < np; q += nr, o += d->panel_floats) copy_run(o, in + q, DLC_MIN(nr, np - q));
      }
      return;
    }
    const int64_t khw = s->k_h * s->k_w;
    for (size_t u = 0; u < nu; u++) {
      const int64_t k = used[u], ic = k / khw, ky = (k % khw) / s->k_w, kx = k % s->k_w;
      gather_row(s, base + (size_t)ic * hw, (size_t)s->w_in, 1, ky, kx, p0, np, xb + u * d->ldp, nr, d->panel_floats);
    }
    return;
  }
  const float *base = x + n * hw * c_in + g * (size_t)s->cin_g;
  if (d->identity && nu == (size_t)s->cin_g) {
    /* Every channel is an operand row, in order: the panels are the transposed pixels. */
    for (size_t q = 0; q < np; q += nr)
      d->fam->transpose(DLC_MIN(nr, np - q), nu, base + (p0 + q) * c_in, c_in,
                        xb + q / nr * d->panel_floats, d->ldp);
    return;
  }
  if (d->identity) {
    /* Some channels only: the reads stream through the pixels' channel vectors in memory order;
       the nu panel lines being written stay in L1. */
    const float *in = base + p0 * c_in;
    for (size_t pp = 0; pp < np; pp++, in += c_in) {
      float *o = xb + pp / nr * d->panel_floats + pp % nr;
      for (size_t u = 0; u < nu; u++) o[u * d->ldp] = in[used[u]];
    }
    return;
  }
  const int64_t khw = s->k_h * s->k_w;
  for (size_t u = 0; u < nu; u++) {
    const int64_t k = used[u], ic = k / khw, ky = (k % khw) / s->k_w, kx = k % s->k_w;
    gather_row(s, base + ic, (size_t)s->w_in * c_in, c_in, ky, kx, p0, np, xb + u * d->ldp, nr, d->panel_floats);
  }
}

/* Slabs for (image n, group g, output rows [oy0, oy0 + rows)): per used channel, the padded
   input rows those output rows read, wp wide, then zeros to the slab's end. */
static void gather_slabs(const dlconv_plan *p, const csr_data *d, const float *x, size_t n, size_t g,
                         size_t oy0, size_t rows, float *xb) {
  const dlc_conv_shape *s = &p->s;
  const size_t w_in = (size_t)s->w_in, c_in = (size_t)s->c_in, wp = d->wp, pl = (size_t)s->pad_l;
  const size_t srows = rows + (size_t)(s->dil_h * (s->k_h - 1)), S = d->slab_floats;
  const int32_t *used = d->used_k + d->used_ptr[g];
  const size_t nu = d->used_ptr[g + 1] - d->used_ptr[g];
  const int all = s->layout == DLCONV_NHWC && nu == (size_t)s->cin_g;
  /* No nonzero weight in the group: nothing to gather (and srows may be ~2^31 for a huge
     dilation, whose slab is then 0 floats: the loops below would only spin). */
  if (nu == 0) return;
  for (size_t j = 0; j < srows; j++) {
    const int64_t iy = (int64_t)(oy0 + j) - s->pad_t;
    const int inside = iy >= 0 && iy < s->h_in;
    if (inside && all) /* every channel's row at once: the pixels x channels transposed */
      d->fam->transpose(w_in, nu, x + ((n * (size_t)s->h_in + (size_t)iy) * w_in) * c_in + g * (size_t)s->cin_g,
                        c_in, xb + j * wp + pl, S);
    for (size_t u = 0; u < nu; u++) {
      float *o = xb + u * S + j * wp;
      if (!inside) {
        zero_run(o, wp);
        continue;
      }
      zero_run(o, pl);
      zero_run(o + pl + w_in, wp - pl - w_in);
      if (all) continue;
      if (s->layout == DLCONV_NCHW) {
        copy_run(o + pl, x + ((n * c_in + g * (size_t)s->cin_g + (size_t)used[u]) * (size_t)s->h_in + (size_t)iy) * w_in, w_in);
      } else {
        const float *in = x + ((n * (size_t)s->h_in + (size_t)iy) * w_in) * c_in + g * (size_t)s->cin_g + (size_t)used[u];
        for (size_t ix = 0; ix < w_in; ix++) o[pl + ix] = in[ix * c_in];
      }
    }
  }
  for (size_t u = 0; u < nu; u++) zero_run(xb + u * S + srows * wp, S - srows * wp);
}

/* A slab job: the kernel over the padded-width pixels of `rows` output rows into the tile,
   then the w_out valid columns of each row into y. */
static void slab_job(const dlconv_plan *p, const csr_data *d, const float *x, float *y, size_t n,
                     size_t g, size_t blk, float *xbuf, float *tbuf) {
  const dlc_conv_shape *s = &p->s;
  const size_t oy0 = blk * d->rows_blk, rows = DLC_MIN(d->rows_blk, (size_t)s->h_out - oy0);
  const size_t cout_g = (size_t)s->cout_g, oc0 = g * cout_g, nz0 = d->row_ptr[oc0];
  const size_t w_out = (size_t)s->w_out, c_out = (size_t)s->c_out, ldt = d->pb;
  gather_slabs(p, d, x, n, g, oy0, rows, xbuf);
  d->fam->spmm(cout_g, rows * d->wp, xbuf, d->nnz + oc0, d->val + nz0, d->off + nz0, p->bias + oc0,
               tbuf, ldt, s->out_min, s->out_max);
  if (s->layout == DLCONV_NCHW) {
    for (size_t oc = 0; oc < cout_g; oc++)
      for (size_t r = 0; r < rows; r++)
        copy_run(y + (n * c_out + oc0 + oc) * d->pix + (oy0 + r) * w_out, tbuf + oc * ldt + r * d->wp, w_out);
  } else {
    for (size_t r = 0; r < rows; r++)
      d->fam->transpose(cout_g, w_out, tbuf + r * d->wp, ldt,
                        y + ((n * (size_t)s->h_out + oy0 + r) * w_out) * c_out + oc0, c_out);
  }
}

static void csr_job(const dlc_exec *a, size_t job, float *xbuf, float *tbuf) {
  const dlconv_plan *p = a->p;
  const csr_data *d = p->algo_data;
  const dlc_conv_shape *s = &p->s;
  const size_t pix = d->pix;
  size_t n, g, blk;
  dlc_csr_job_coords(d, s, job, &n, &g, &blk);
  if (d->slabs) {
    slab_job(p, d, a->x, a->y, n, g, blk, xbuf, tbuf);
    return;
  }
  const size_t p0 = blk * d->pb, np = DLC_MIN(d->pb, pix - p0);
  const size_t cout_g = (size_t)s->cout_g, oc0 = g * cout_g, nz0 = d->row_ptr[oc0];
  gather_operand(p, d, a->x, n, g, p0, np, xbuf);
  float *yb = tbuf;
  size_t ldy = d->pb;
  if (s->layout == DLCONV_NCHW) {
    yb = (float *)a->y + (n * (size_t)s->c_out + oc0) * pix + p0;
    ldy = pix;
  }
  const float *panel = xbuf;
  for (size_t q = 0; q < np; q += d->nr, panel += d->panel_floats)
    d->fam->spmm(cout_g, DLC_MIN(d->nr, np - q), panel, d->nnz + oc0, d->val + nz0, d->off + nz0,
                 p->bias + oc0, yb + q, ldy, s->out_min, s->out_max);
  if (s->layout == DLCONV_NHWC) /* the tile's rows x pixels into y's pixels x channels */
    d->fam->transpose(cout_g, np, tbuf, d->pb, (float *)a->y + (n * pix + p0) * (size_t)s->c_out + oc0, (size_t)s->c_out);
}

static void csr_task(void *arg, size_t t) {
  const dlc_exec *a = arg;
  const csr_data *d = a->p->algo_data;
  /* No workspace at all when the layer has no nonzeros and writes NCHW. */
  float *xbuf = a->ws ? (float *)(void *)a->ws + t * (d->xbuf_floats + d->tbuf_floats) : NULL;
  float *tbuf = a->ws ? xbuf + d->xbuf_floats : NULL;
  size_t b, e;
  dlc_split_range(d->njobs, d->ntasks_max, t, &b, &e);
  for (size_t j = b; j < e; j++) csr_job(a, j, xbuf, tbuf);
}

const dlc_impl_ops dlc_csr_ops = {
    .plan = csr_plan,
    .task = csr_task,
    .destroy = csr_destroy,
    .plan_csr = csr_plan_csr,
};
