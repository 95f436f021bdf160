/* One fuzz input -> descriptors, options, data, CSR arrays, an execute mode -> libdlconv calls,
 * every result checked (see fuzz_check.h).
 *
 * Input layout: byte 0 picks the mode; the rest is read field by field by a byte reader that
 * yields zeros once the input is exhausted, so every input is valid and short inputs mean small,
 * plain layers:
 *   mode 0..4  structured conv2d (0, 3), conv2d from caller CSR (1, 4) or dense (2): sizes
 *              capped so that one input runs in a few milliseconds, then options, clamp, data
 *              (with NaN/Inf/denormal/huge specials), CSR corruptions and an execute mode that
 *              may be hostile (misaligned, aliasing, bad workspace, NULL pointers);
 *   mode 5     raw descriptor: every field a raw int32 (or a boundary value), for validation:
 *              an invalid one must be rejected by dlconv_conv2d_output_shape and planning alike,
 *              a valid small one runs like mode 0, a valid big one is only shape-queried;
 *   mode 6     wisdom import of the rest of the input as a file: all or nothing.
 *
 * Checks: an OK result matches the oracle (tests/oracle.c) within the API's tolerance, with the
 * non-finite cases classified exactly (a NaN must stay NaN through the clamp; where a NaN or
 * infinity meets a zero weight a kernel may multiply it (NaN) or skip it (CSR)); plan info is
 * consistent; inputs are never written; nothing is written outside y or the workspace; a second
 * execute is bitwise identical. Every error leaves y untouched (sentinel pattern) and *plan
 * NULL, and sets a fresh, non-empty dlconv_last_error(). A configuration the harness knows to be
 * valid must succeed. */
#include "fuzz_check.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dlconv.h"
#include "oracle.h"
#include "support/canary.h"
#include "support/csr_build.h"

/* ------------------------------------------------------------------------------------------ */
/* Byte reader                                                                                */

typedef struct rd {
  const uint8_t *p;
  size_t n, i;
} rd;

static unsigned u8(rd *r) { return r->i < r->n ? r->p[r->i++] : 0u; }
/* lo + byte % (hi - lo + 1); hi - lo < 256 */
static int pick(rd *r, int lo, int hi) { return lo + (int)(u8(r) % (unsigned)(hi - lo + 1)); }
static uint32_t u32(rd *r) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++) v = v << 8 | u8(r);
  return v;
}

/* ------------------------------------------------------------------------------------------ */
/* Failure messages                                                                           */

typedef struct report {
  char *msg;
  size_t len, used;
  int bad;
} report;

static void failf(report *rp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void failf(report *rp, const char *fmt, ...) {
  rp->bad = 1;
  if (!rp->msg || rp->used + 1 >= rp->len) return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(rp->msg + rp->used, rp->len - rp->used, fmt, ap);
  va_end(ap);
  if (k > 0) rp->used += (size_t)k < rp->len - rp->used ? (size_t)k : rp->len - rp->used - 1;
  if (rp->used + 3 < rp->len) {
    rp->msg[rp->used++] = ';';
    rp->msg[rp->used++] = ' ';
    rp->msg[rp->used] = 0;
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Error protocol: a fresh, non-empty message                                                 */

static const char *STALE = "desc is NULL";   /* what the probe call below sets */

static void stale_error(void) { (void)dlconv_conv2d_output_shape(NULL, NULL, NULL); }

static void check_error(report *rp, const char *what, dlconv_status st) {
  const char *e = dlconv_last_error();
  if ((int)st < DLCONV_ERR_INVALID_ARG || (int)st > DLCONV_ERR_INTERNAL)
    failf(rp, "%s: status %d is not a dlconv_status", what, (int)st);
  if (!e || !e[0]) failf(rp, "%s failed (%s) with an empty dlconv_last_error()", what, dlconv_status_string(st));
  else if (!strcmp(e, STALE)) failf(rp, "%s failed (%s) without setting dlconv_last_error()", what, dlconv_status_string(st));
}

/* ------------------------------------------------------------------------------------------ */
/* The case                                                                                   */

enum kind { K_CONV = 0, K_CSR = 1, K_DENSE = 2 };

enum exec_mode {
  X_NORMAL, X_CALLER_WS, X_Y_MISALIGNED, X_X_MISALIGNED, X_ALIAS, X_OVERLAP, X_WS_MISALIGNED,
  X_WS_OVERLAP, X_NULL_X, X_NULL_PLAN, N_EXEC_MODES
};

typedef struct fcase {
  int kind;
  dlconv_conv2d_desc d;
  int64_t h_out, w_out;
  int valid;                 /* the harness's own verdict: planning must succeed */
  /* options */
  int opt_null, pool;
  dlconv_options o;
  /* data */
  int has_bias, w_misalign, bias_misalign;
  size_t x_shift, w_shift, b_shift, y_shift;
  int csr_bad;               /* 0: valid CSR; else which corruption */
  int csr_zeros;             /* store some explicit zero values in the CSR */
  int exec;
  int no_measure;            /* raw mode, huge pads/strides/dilations: see run_raw */
  int raw;                   /* decoded by run_raw */
  size_t K, x_len, w_len, y_len;
} fcase;

/* Serial "pool" that runs the tasks in reverse order: tasks must not depend on their order. */
static long pool_calls;
static void reverse_pool(void *pool, dlconv_task_fn task, void *arg, size_t n) {
  (void)pool;
  pool_calls++;
  for (size_t i = n; i-- > 0;) task(arg, i);
}

static int isa_runs(int isa) { return isa == DLCONV_ISA_AUTO || (isa >= 1 && isa <= 4 && dlconv_isa_available((dlconv_isa)isa) == 1); }

/* ISA_CUDA forced on a machine with a GPU: it plans (or refuses a shape), and its execute must
   refuse the harness's host buffers (docs/cuda.md); elsewhere it is an ISA that does not run. */
static int cuda_here(const fcase *c) {
  return !c->opt_null && c->o.isa == DLCONV_ISA_CUDA && dlconv_isa_available(DLCONV_ISA_CUDA) == 1;
}

static void decode_options(rd *r, fcase *c) {
  dlconv_options_init(&c->o);
  unsigned b = u8(r);
  c->opt_null = (b & 7) == 7;
  int algo = pick(r, 0, 15);
  c->o.algo = (dlconv_algo)(algo < 14 ? algo % 6 : algo - 8);   /* 14, 15 -> 6, 7: invalid */
  int isa = pick(r, 0, 15);
  c->o.isa = (dlconv_isa)(isa < 12 ? isa % 4 : isa == 12 ? DLCONV_ISA_NEON : isa == 13 ? DLCONV_ISA_CUDA : isa == 14 ? 9 : 0);
  int th = pick(r, 0, 15);
  c->o.num_threads = th < 14 ? th % 4 : th == 14 ? -1 : 7;
  int fl = pick(r, 0, 31);
  c->o.flags = fl == 0 && !c->no_measure ? DLCONV_PLAN_MEASURE : fl == 1 ? 0x80u : 0u;
  c->pool = (b >> 3) & 1;
  if (c->pool) {
    c->o.parallel_for = reverse_pool;
    c->o.pool = &pool_calls;
  }
}

static void decode_clamp(rd *r, dlconv_conv2d_desc *d) {
  switch (pick(r, 0, 15)) {
    case 0: case 1: case 2: case 3: case 4: case 5: break;
    case 6: case 7: case 8: d->out_min = 0; d->out_max = INFINITY; break;
    case 9: case 10: d->out_min = 0; d->out_max = 6; break;
    case 11: d->out_min = d->out_max = (float)pick(r, -4, 4) * 0.25f; break;
    case 12: d->out_min = (float)pick(r, -8, 0) * 0.25f; d->out_max = d->out_min + (float)pick(r, 0, 8) * 0.25f; break;
    case 13: d->out_min = -INFINITY; d->out_max = (float)pick(r, -4, 8) * 0.25f; break;
    case 14: d->out_min = 1; d->out_max = -1; break;           /* invalid: min > max */
    default: d->out_min = NAN; break;                          /* invalid: NaN bound */
  }
}

/* Structured shape, capped. */
static void decode_shape(rd *r, fcase *c) {
  dlconv_conv2d_desc *d = &c->d;
  if (c->kind == K_DENSE) {
    int batch = pick(r, 1, 4), in = pick(r, 1, 80), out = pick(r, 1, 70);
    dlconv_conv2d_desc_init(d, batch, in, 1, 1, out, 1, 1);
    d->layout = DLCONV_NHWC;
    return;
  }
  unsigned g = u8(r);
  int groups, cin_g, cout_g;
  if ((g & 7) == 7) {                    /* depthwise, multiplier 1 or 2 */
    groups = pick(r, 1, 24);
    cin_g = 1;
    cout_g = pick(r, 1, 2);
  } else {
    groups = (g & 7) < 4 ? 1 : (int)(g & 7) - 2;   /* 1, 2, 3, 4 */
    cin_g = pick(r, 1, 12);
    cout_g = pick(r, 1, 12);
  }
  int n = pick(r, 1, 3);
  int h = pick(r, 1, 16), w = pick(r, 1, 16);
  int kh = pick(r, 1, 5), kw = pick(r, 1, 5);
  dlconv_conv2d_desc_init(d, n, groups * cin_g, h, w, groups * cout_g, kh, kw);
  d->groups = groups;
  d->layout = (g >> 3) & 1 ? DLCONV_NHWC : DLCONV_NCHW;
  unsigned sd = u8(r);
  d->stride_h = 1 + (int)(sd & 3) % 3;
  d->stride_w = (sd >> 2) & 1 ? d->stride_h : 1 + (int)((sd >> 3) & 3) % 3;
  d->dilation_h = (sd >> 5) & 1 ? 1 + (int)(u8(r) % 3) : 1;
  d->dilation_w = (sd >> 6) & 1 ? 1 + (int)(u8(r) % 3) : d->dilation_h;
  unsigned pb = u8(r);
  if (pb & 1) {
    d->pad_top = pick(r, 0, 5); d->pad_bottom = pick(r, 0, 5);
    d->pad_left = pick(r, 0, 5); d->pad_right = pick(r, 0, 5);
  } else if (pb & 2) {                   /* "same" */
    int sh = d->dilation_h * (d->k_h - 1), sw = d->dilation_w * (d->k_w - 1);
    d->pad_top = sh / 2; d->pad_bottom = sh - sh / 2; d->pad_left = sw / 2; d->pad_right = sw - sw / 2;
  }
  /* grow the input so the output exists, unless the input asks for the error path */
  if (!(pb & 4)) {
    int sh = d->dilation_h * (d->k_h - 1) + 1, sw = d->dilation_w * (d->k_w - 1) + 1;
    if (d->h_in + d->pad_top + d->pad_bottom < sh) d->h_in = sh - d->pad_top - d->pad_bottom;
    if (d->w_in + d->pad_left + d->pad_right < sw) d->w_in = sw - d->pad_left - d->pad_right;
  }
}

static int64_t out_dim(int64_t in, int64_t pa, int64_t pb, int64_t k, int64_t dil, int64_t s) {
  return oracle_out_dim(in, pa, pb, k, dil, s);
}

#define MACS_CAP 120000
#define WS_RUN_MAX ((size_t)16 << 20)
#define ELEMS_CAP 40000

/* Shrinks a structured shape until it fits the caps (the image first, then batch, channels). */
static void cap_shape(fcase *c) {
  dlconv_conv2d_desc *d = &c->d;
  for (int it = 0; it < 64; it++) {
    int64_t ho = out_dim(d->h_in, d->pad_top, d->pad_bottom, d->k_h, d->dilation_h, d->stride_h);
    int64_t wo = out_dim(d->w_in, d->pad_left, d->pad_right, d->k_w, d->dilation_w, d->stride_w);
    if (ho < 1) ho = 1;
    if (wo < 1) wo = 1;
    int64_t macs = (int64_t)d->n * d->c_out * ho * wo * (d->c_in / d->groups) * d->k_h * d->k_w;
    int64_t xe = (int64_t)d->n * d->c_in * d->h_in * d->w_in, ye = (int64_t)d->n * d->c_out * ho * wo;
    if (macs <= MACS_CAP && xe <= ELEMS_CAP && ye <= ELEMS_CAP) return;
    if (d->n > 1) d->n--;
    else if (d->h_in > 4 && d->h_in >= d->w_in) d->h_in -= 2;
    else if (d->w_in > 4) d->w_in -= 2;
    else if (d->k_h > 1 && d->h_in > 1) d->h_in--;
    else if (d->groups > 1 && d->c_in / d->groups == 1) { d->c_in -= 1; d->c_out = d->c_in * (d->c_out / (d->c_in + 1)); d->groups = d->c_in; }
    else return;   /* cannot shrink further: the caps are generous for what remains */
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Data                                                                                       */

static float value_from(uint32_t h) {
  static const float nice[] = {0.25f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 0.125f, 0.75f};
  if ((h & 3) == 0) return (h & 4 ? -1.0f : 1.0f) * nice[(h >> 3) & 7];
  return (float)((int32_t)(h >> 8) % 2001) * 1e-3f;   /* [-2, 2], 1e-3 steps */
}

static uint32_t mix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return (uint32_t)((z ^ (z >> 31)) >> 16);
}
/* mix(seed) % m: the draw the CSR row shuffle always made */
static uint32_t mix_below(void *seed, uint32_t m) { return mix(seed) % m; }

static const float SPECIALS[] = {NAN, INFINITY, -INFINITY, 1e-40f, -1e-42f, -0.0f, 1e15f, -1e15f, FLT_MIN, 3e-39f};
#define N_SPECIALS (sizeof SPECIALS / sizeof SPECIALS[0])

typedef struct data {
  canary_buf xb, wb, bb;
  float *x, *w, *bias;
  float *x0, *w0, *b0;
  /* csr */
  float *vals, *vals0;
  int32_t *cols, *cols0, *rowptr, *rowptr0;
  dlconv_csr csr;
  int nonfinite;            /* some x or bias value is NaN or infinite */
} data;

static void data_free(data *t) {
  canary_free(&t->xb);
  canary_free(&t->wb);
  if (t->bb.raw) canary_free(&t->bb);
  free(t->x0); free(t->w0); free(t->b0);
  free(t->vals); free(t->vals0); free(t->cols); free(t->cols0); free(t->rowptr); free(t->rowptr0);
  memset(t, 0, sizeof *t);
}

static float *dupf(const float *p, size_t n) {
  float *q = malloc(n * 4 + 4);
  if (n) memcpy(q, p, n * 4);
  return q;
}

static int32_t *dupi(const int32_t *p, size_t n) {
  int32_t *q = malloc(n * 4 + 4);
  if (n) memcpy(q, p, n * 4);
  return q;
}

static void decode_data(rd *r, fcase *c, data *t) {
  const dlconv_conv2d_desc *d = &c->d;
  unsigned a = u8(r);
  c->has_bias = !(a & 1);
  int zero_mode = (a >> 1) & 3;      /* weights exactly zero: none, 50%, 90%, all */
  c->x_shift = 4 * (size_t)((a >> 3) & 3);
  c->w_shift = 4 * (size_t)((a >> 5) & 1) * 3;
  c->b_shift = 4 * (size_t)((a >> 6) & 1);
  unsigned m = u8(r);
  c->w_misalign = (m & 31) == 31 ? 1 + (int)(m >> 5) % 3 : 0;
  c->bias_misalign = (m & 31) == 30 && c->has_bias ? 1 + (int)(m >> 5) % 3 : 0;
  uint64_t seed = u8(r);
  seed |= (uint64_t)u8(r) << 8;

  canary_alloc(&t->xb, c->x_len * 4, c->x_shift);
  canary_alloc(&t->wb, c->w_len * 4 + 4, c->w_misalign ? (size_t)c->w_misalign : c->w_shift);
  t->x = t->xb.p;
  t->w = t->wb.p;
  for (size_t i = 0; i < c->x_len; i++) t->x[i] = value_from(mix(&seed));
  for (size_t i = 0; i < c->w_len; i++) {
    uint32_t h = mix(&seed);
    int zero = zero_mode == 3 || (zero_mode == 1 && (h & 1)) || (zero_mode == 2 && (h % 10) != 0);
    float v = zero ? 0.0f : value_from(h >> 4);
    memcpy(&t->w[i], &v, 4);   /* w may be misaligned on purpose */
  }
  if (c->has_bias) {
    canary_alloc(&t->bb, (size_t)d->c_out * 4 + 4, c->bias_misalign ? (size_t)c->bias_misalign : c->b_shift);
    t->bias = t->bb.p;
    for (int i = 0; i < d->c_out; i++) {
      float v = value_from(mix(&seed));
      memcpy(&t->bias[i], &v, 4);
    }
  }
  /* specials: up to 4 (target, index, value) */
  int ns = pick(r, 0, 7);
  ns = ns > 4 ? 0 : ns;
  for (int s = 0; s < ns; s++) {
    unsigned tg = u8(r);
    uint32_t idx = (uint32_t)u8(r) << 8;
    idx |= u8(r);
    float v = SPECIALS[u8(r) % N_SPECIALS];
    if ((tg & 3) == 3 && c->has_bias && !c->bias_misalign) {
      t->bias[idx % (uint32_t)d->c_out] = v;
      if (!isfinite(v)) t->nonfinite = 1;
    } else if ((tg & 3) == 2 && !c->w_misalign) {
      if (isfinite(v)) t->w[idx % c->w_len] = v;       /* weights: finite specials only (see header) */
    } else {
      t->x[idx % c->x_len] = v;
      if (!isfinite(v)) t->nonfinite = 1;
    }
  }
  t->x0 = dupf(t->x, c->x_len);
  t->w0 = malloc(c->w_len * 4 + 4);
  memcpy(t->w0, t->w, c->w_len * 4);
  if (c->has_bias) {
    t->b0 = malloc((size_t)d->c_out * 4 + 4);
    memcpy(t->b0, t->bias, (size_t)d->c_out * 4);
  }
}

/* CSR from the dense weights (rows in an input-chosen column order), possibly corrupted. */
static void build_csr(rd *r, fcase *c, data *t) {
  const int32_t rows = c->d.c_out, cols = (int32_t)c->K;
  unsigned b = u8(r);
  c->csr_zeros = (b & 7) == 1;
  c->csr_bad = (b >> 3) % 16;            /* 0..9: valid; 10..15: a corruption */
  c->csr_bad = c->csr_bad < 10 ? 0 : c->csr_bad - 9;
  t->rowptr = malloc(4 * (size_t)(rows + 1));
  t->cols = malloc(4 * (c->w_len + 1));
  t->vals = malloc(4 * (c->w_len + 1));
  uint64_t seed = b;
  const int32_t k =
      csr_from_dense(t->w, rows, cols, c->csr_zeros, t->rowptr, t->cols, t->vals, &t->csr, mix_below, &seed);
  switch (c->csr_bad) {
    case 1: if (k > 0) t->cols[k - 1] = cols; else c->csr_bad = 0; break;              /* out of range */
    case 2: if (k > 0) t->cols[0] = -1; else c->csr_bad = 0; break;                    /* negative */
    case 3: t->csr.nnz = k + 1; break;                                                 /* row_ptr[rows] != nnz */
    case 4: if (rows > 1 && t->rowptr[1] > 0) t->rowptr[1] = t->rowptr[2] + 1; else c->csr_bad = 0; break;  /* decreasing */
    case 5: t->csr.cols = cols + 1; break;
    case 6: { /* a duplicate column within a row */
      int dup = 0;
      for (int32_t o = 0; o < rows && !dup; o++)
        if (t->rowptr[o + 1] - t->rowptr[o] >= 2) { t->cols[t->rowptr[o] + 1] = t->cols[t->rowptr[o]]; dup = 1; }
      if (!dup) c->csr_bad = 0;
      break;
    }
    default: break;
  }
  t->vals0 = dupf(t->vals, (size_t)k);
  t->cols0 = dupi(t->cols, (size_t)k);
  t->rowptr0 = dupi(t->rowptr, (size_t)rows + 1);
}

static int inputs_unchanged(const fcase *c, const data *t) {
  if (memcmp(t->x, t->x0, c->x_len * 4) || memcmp(t->w, t->w0, c->w_len * 4)) return 0;
  if (!canary_guards_ok(&t->xb) || !canary_guards_ok(&t->wb)) return 0;
  if (c->has_bias && (memcmp(t->bias, t->b0, (size_t)c->d.c_out * 4) || !canary_guards_ok(&t->bb))) return 0;
  if (t->vals) {
    size_t nnz = 0;
    for (int32_t o = 0; o < t->csr.rows; o++) nnz = (size_t)t->rowptr0[o + 1];
    if (memcmp(t->vals, t->vals0, nnz * 4) || memcmp(t->cols, t->cols0, nnz * 4) ||
        memcmp(t->rowptr, t->rowptr0, 4 * (size_t)(t->csr.rows + 1)))
      return 0;
  }
  return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* Expected output                                                                            */

typedef struct expect {
  double *ref, *mag;      /* finite reference (non-finite inputs zeroed) and its error scale */
  unsigned char *cls;     /* 0 finite, 1 NaN, 2 +Inf, 3 -Inf (before the clamp) */
  unsigned char *maybe;   /* 1: a NaN/Inf input met a zero (or denormal) weight here: a kernel may
                             give NaN (NaN*0 in dense kernels, Inf*denormal under DAZ) or +-Inf
                             (Inf*denormal in IEEE) as well as the value without that term */
  const float *w_abs_src; /* the weights the plan was given (for the flush allowance) */
  const float *x_src;     /* and x */
} expect;

static void expect_free(expect *e) {
  free(e->ref); free(e->mag); free(e->cls); free(e->maybe);
  memset(e, 0, sizeof *e);
}

/* oracle of indicator tensors: out[i] = sum over in-image taps of fx(x) * fw(w) */
static void indicator(const fcase *c, const float *x, const float *w, float (*fx)(float), float (*fw)(float),
                      double *out) {
  size_t nx = c->x_len, nw = c->w_len;
  float *xi = malloc(nx * 4 + 4), *wi = malloc(nw * 4 + 4);
  for (size_t i = 0; i < nx; i++) xi[i] = fx(x[i]);
  for (size_t i = 0; i < nw; i++) {
    float v;
    memcpy(&v, &w[i], 4);
    wi[i] = fw(v);
  }
  dlconv_conv2d_desc d = c->d;
  d.out_min = -INFINITY;
  d.out_max = INFINITY;
  oracle_conv2d(&d, xi, wi, NULL, out, NULL);
  free(xi);
  free(wi);
}

/* A weight below FLT_MIN counts as "maybe zero": the kernels run with denormals-are-zero
   (src/core/fpenv.h), so +-Inf times a denormal weight comes out NaN there (IEEE: +-Inf). */
static float is_nan(float v) { return isnan(v) ? 1.0f : 0.0f; }
static float is_pinf(float v) { return v == INFINITY ? 1.0f : 0.0f; }
static float is_ninf(float v) { return v == -INFINITY ? 1.0f : 0.0f; }
static float not_finite(float v) { return isfinite(v) ? 0.0f : 1.0f; }
static float nonzero(float v) { return fabsf(v) >= FLT_MIN ? 1.0f : 0.0f; }
static float positive(float v) { return v >= FLT_MIN ? 1.0f : 0.0f; }
static float negative(float v) { return v <= -FLT_MIN ? 1.0f : 0.0f; }
static float is_zero(float v) { return fabsf(v) < FLT_MIN ? 1.0f : 0.0f; }

/* Weights as the plan sees them (the CSR's stored values, zeros included, when planned from CSR). */
static void expected(const fcase *c, const data *t, const float *w_eff, expect *e) {
  const dlconv_conv2d_desc *d = &c->d;
  size_t ny = c->y_len;
  e->ref = malloc(ny * 8 + 8);
  e->mag = malloc(ny * 8 + 8);
  e->cls = calloc(ny + 1, 1);
  e->maybe = calloc(ny + 1, 1);
  e->w_abs_src = w_eff;
  e->x_src = t->x;
  float *xz = dupf(t->x, c->x_len), *bz = NULL;
  for (size_t i = 0; i < c->x_len; i++)
    if (!isfinite(xz[i])) xz[i] = 0.0f;
  if (c->has_bias) {
    bz = malloc((size_t)d->c_out * 4 + 4);
    for (int i = 0; i < d->c_out; i++) bz[i] = isfinite(t->bias[i]) ? t->bias[i] : 0.0f;
  }
  float *wl = malloc(c->w_len * 4 + 4);
  memcpy(wl, w_eff, c->w_len * 4);
  oracle_conv2d(d, xz, wl, bz, e->ref, e->mag);
  if (t->nonfinite) {
    double *nan_t = malloc(ny * 8 + 8), *pos = malloc(ny * 8 + 8), *neg = malloc(ny * 8 + 8), *tmp = malloc(ny * 8 + 8),
           *mb = malloc(ny * 8 + 8);
    indicator(c, t->x, wl, is_nan, nonzero, nan_t);
    indicator(c, t->x, wl, is_pinf, positive, pos);
    indicator(c, t->x, wl, is_ninf, negative, tmp);
    for (size_t i = 0; i < ny; i++) pos[i] += tmp[i];
    indicator(c, t->x, wl, is_pinf, negative, neg);
    indicator(c, t->x, wl, is_ninf, positive, tmp);
    for (size_t i = 0; i < ny; i++) neg[i] += tmp[i];
    indicator(c, t->x, wl, not_finite, is_zero, mb);
    size_t hw = (size_t)(c->h_out * c->w_out);
    for (size_t i = 0; i < ny; i++) {
      int oc = d->layout == DLCONV_NHWC ? (int)(i % (size_t)d->c_out) : (int)((i / hw) % (size_t)d->c_out);
      double nn = nan_t[i], p = pos[i], q = neg[i];
      if (c->has_bias) {
        float b = t->bias[oc];
        nn += isnan(b);
        p += b == INFINITY;
        q += b == -INFINITY;
      }
      e->cls[i] = nn > 0 || (p > 0 && q > 0) ? 1 : p > 0 ? 2 : q > 0 ? 3 : 0;
      e->maybe[i] = mb[i] > 0;
    }
    free(nan_t); free(pos); free(neg); free(tmp); free(mb);
  }
  free(xz);
  free(bz);
  free(wl);
}

static double clampd(double v, double lo, double hi) { return oracle_clamp(v, lo, hi); }

/* Compares y with the expectation; describes the first bad point. */
static void check_output(report *rp, const fcase *c, const expect *e, const float *y) {
  const dlconv_conv2d_desc *d = &c->d;
  const double scale = 2e-6 * sqrt((double)(c->K ? c->K : 1));
  /* The kernels run with flush-to-zero and denormals-are-zero (src/core/fpenv.h): an operand or
     a partial result below FLT_MIN may count as 0. That moves a result by at most FLT_MIN per
     term and per addition, times the largest other factor: far below any other tolerance, but an
     output whose only contributions are denormal (relative error 1) would otherwise fail. */
  double wmax = 0;
  for (size_t i = 0; i < c->w_len; i++) {
    float v;
    memcpy(&v, &e->w_abs_src[i], 4);
    if (isfinite(v) && fabs(v) > wmax) wmax = fabs(v);
  }
  double xmax = 0;   /* a denormal weight times x is lost the same way */
  for (size_t i = 0; i < c->x_len; i++)
    if (isfinite(e->x_src[i]) && fabs(e->x_src[i]) > xmax) xmax = fabs(e->x_src[i]);
  const double flush = (double)FLT_MIN * (double)(c->K + 2) * (1.0 + wmax + xmax);
  for (size_t i = 0; i < c->y_len; i++) {
    double v = y[i], want;
    int ok;
    switch (e->cls[i]) {
      case 1: want = NAN; ok = isnan(v); break;
      case 2: want = clampd(INFINITY, d->out_min, d->out_max); ok = v == want || (e->maybe[i] && isnan(v)); break;
      case 3: want = clampd(-INFINITY, d->out_min, d->out_max); ok = v == want || (e->maybe[i] && isnan(v)); break;
      default:
        want = e->ref[i];
        ok = (!isnan(v) && fabs(v - want) <= scale * e->mag[i] + flush) ||
             (e->maybe[i] && (isnan(v) || v == clampd(INFINITY, d->out_min, d->out_max) ||
                              v == clampd(-INFINITY, d->out_min, d->out_max)));
        break;
    }
    if (!ok) {
      failf(rp, "y[%zu] = %.9g, expected %.9g (class %d%s, tol %.3g)", i, v, want, e->cls[i],
            e->maybe[i] ? ", NaN allowed" : "", scale * e->mag[i]);
      return;
    }
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Running one case                                                                           */

static void describe(const fcase *c, char *buf, size_t n) {
  const dlconv_conv2d_desc *d = &c->d;
  snprintf(buf, n,
           "[%s n=%d c_in=%d %dx%d c_out=%d k=%dx%d s=%d,%d dil=%d,%d pad=%d,%d,%d,%d g=%d %s clamp=[%g,%g] "
           "opt=%s algo=%d isa=%d threads=%d flags=0x%x pool=%d bias=%d exec=%d csr_bad=%d csr_zeros=%d "
           "w_misalign=%d bias_misalign=%d]",
           c->kind == K_CSR ? "csr" : c->kind == K_DENSE ? "dense" : "conv", d->n, d->c_in, d->h_in, d->w_in,
           d->c_out, d->k_h, d->k_w, d->stride_h, d->stride_w, d->dilation_h, d->dilation_w, d->pad_top,
           d->pad_bottom, d->pad_left, d->pad_right, d->groups, d->layout == DLCONV_NHWC ? "NHWC" : "NCHW",
           (double)d->out_min, (double)d->out_max, c->opt_null ? "NULL" : "set", (int)c->o.algo, (int)c->o.isa,
           c->o.num_threads, c->o.flags, c->pool, c->has_bias, c->exec, c->csr_bad, c->csr_zeros, c->w_misalign,
           c->bias_misalign);
}

/* The harness's own verdict on whether planning must succeed. */
static int config_valid(const fcase *c) {
  const dlconv_conv2d_desc *d = &c->d;
  if (c->h_out < 1 || c->w_out < 1) return 0;
  if (isnan(d->out_min) || isnan(d->out_max) || d->out_min > d->out_max) return 0;
  if (!c->opt_null) {
    if ((unsigned)c->o.algo > DLCONV_ALGO_SPARSE_CSR || c->o.num_threads < 0) return 0;
    if (c->o.flags & ~(uint32_t)DLCONV_PLAN_MEASURE) return 0;
    if (!isa_runs((int)c->o.isa) && !cuda_here(c)) return 0;
  }
  if ((c->w_misalign && c->kind != K_CSR) || c->bias_misalign || c->csr_bad) return 0;
  return 1;
}

static dlconv_status plan_it(const fcase *c, data *t, dlconv_plan **plan) {
  const dlconv_conv2d_desc *d = &c->d;
  const dlconv_options *o = c->opt_null ? NULL : &c->o;
  switch (c->kind) {
    case K_CSR: return dlconv_plan_conv2d_csr(plan, d, &t->csr, t->bias, NULL, o);
    case K_DENSE:
      return dlconv_plan_dense(plan, d->n, d->c_in, d->c_out, DLCONV_F32, t->w, t->bias, d->out_min, d->out_max, NULL, o);
    default: return dlconv_plan_conv2d(plan, d, t->w, t->bias, NULL, o);
  }
}

static void check_info(report *rp, const fcase *c, const dlconv_plan *plan) {
  dlconv_plan_info info;
  memset(&info, 0x5A, sizeof info);
  if (dlconv_plan_query(plan, &info) != DLCONV_OK) {
    failf(rp, "plan_query failed");
    return;
  }
  const dlconv_options *o = c->opt_null ? NULL : &c->o;
  if (info.algo < DLCONV_ALGO_DIRECT || info.algo > DLCONV_ALGO_SPARSE_CSR) failf(rp, "info.algo = %d", (int)info.algo);
  if (o && o->algo != DLCONV_ALGO_AUTO && info.algo != o->algo) failf(rp, "algo %d forced, plan has %d", (int)o->algo, (int)info.algo);
  if (info.isa < DLCONV_ISA_GENERIC || (info.isa > DLCONV_ISA_NEON && !cuda_here(c)) || dlconv_isa_available(info.isa) != 1)
    failf(rp, "info.isa = %d", (int)info.isa);
  if (o && o->isa != DLCONV_ISA_AUTO && info.isa != o->isa) failf(rp, "isa %d forced, plan has %d", (int)o->isa, (int)info.isa);
  int64_t macs = (int64_t)c->d.n * c->d.c_out * c->h_out * c->w_out * (int64_t)c->K;
  if (info.macs != macs) failf(rp, "info.macs = %lld, expected %lld", (long long)info.macs, (long long)macs);
  if (info.workspace_bytes != dlconv_plan_workspace_size(plan)) failf(rp, "info.workspace_bytes != workspace_size");
  if (!memchr(info.kernel, 0, sizeof info.kernel) || !info.kernel[0]) failf(rp, "info.kernel empty");
  if (!(info.weight_density >= 0 && info.weight_density <= 1)) failf(rp, "info.weight_density = %g", info.weight_density);
  if (info.dtype != DLCONV_F32) failf(rp, "info.dtype = %d", (int)info.dtype);
}

static const float Y_SENTINEL_BITS = -31415.926f;

static void fill_sentinel(float *y, size_t n) {
  for (size_t i = 0; i < n; i++) y[i] = Y_SENTINEL_BITS;
}

/* A hostile execute: must fail with INVALID_ARG and touch nothing. */
static void execute_hostile(report *rp, const fcase *c, data *t, const dlconv_plan *plan) {
  size_t wsb = dlconv_plan_workspace_size(plan);
  size_t span = (c->x_len > c->y_len ? c->x_len : c->y_len) * 2 + 16;
  canary_buf buf;
  canary_alloc(&buf, span * 4, 0);
  float *base = buf.p;
  fill_sentinel(base, span);
  memcpy(base, t->x, c->x_len * 4);
  unsigned char *snap = malloc(buf.total);
  memcpy(snap, buf.raw, buf.total);
  const void *x = base;
  void *y = base + c->x_len + 4, *ws = NULL;
  const dlconv_plan *p = plan;
  canary_buf wsbuf = {0};
  int must_fail = 1;
  switch (c->exec) {
    case X_Y_MISALIGNED: y = (char *)y + 1 + (c->x_len % 3); break;
    case X_X_MISALIGNED: x = (char *)base + 1 + (c->y_len % 3); y = base + c->x_len + 8; break;
    case X_ALIAS: y = base; break;
    case X_OVERLAP: y = base + c->x_len / 2; break;
    case X_WS_MISALIGNED:
      canary_alloc(&wsbuf, wsb + 64, 0);
      ws = (char *)wsbuf.p + 4 * (1 + c->K % 15);
      break;
    case X_WS_OVERLAP:
      ws = base;   /* 64-byte aligned, overlaps x */
      must_fail = wsb > 0;
      break;
    case X_NULL_X: x = NULL; break;
    case X_NULL_PLAN: p = NULL; break;
    default: break;
  }
  stale_error();
  dlconv_status st = dlconv_execute(p, x, y, ws);
  if (must_fail) {
    if (st != DLCONV_ERR_INVALID_ARG) failf(rp, "hostile execute mode %d -> %s, expected INVALID_ARG", c->exec, dlconv_status_string(st));
    else check_error(rp, "hostile execute", st);
    if (memcmp(snap, buf.raw, buf.total)) failf(rp, "hostile execute mode %d wrote to x/y memory", c->exec);
  } else if (st != DLCONV_OK) {
    failf(rp, "execute with a workspace of size 0 at x -> %s (%s)", dlconv_status_string(st), dlconv_last_error());
  }
  if (wsbuf.raw) canary_free(&wsbuf);
  free(snap);
  canary_free(&buf);
}

static void run_case(report *rp, fcase *c, data *t) {
  const dlconv_conv2d_desc *d = &c->d;
  c->valid = config_valid(c);
  if (getenv("DLCONV_FUZZ_VERBOSE")) {   /* the case before running it: for crashes */
    char desc[600];
    describe(c, desc, sizeof desc);
    fprintf(stderr, "fuzz case %s valid=%d\n", desc, c->valid);
  }
  dlconv_plan *plan = (dlconv_plan *)(uintptr_t)0x20;
  stale_error();
  dlconv_status st = plan_it(c, t, &plan);
  if (!inputs_unchanged(c, t)) failf(rp, "planning wrote to x, w, bias or the CSR arrays");
  if (st != DLCONV_OK) {
    if (plan) failf(rp, "failed plan left *plan = %p", (void *)plan);
    check_error(rp, "plan", st);
    /* An explicit algorithm may answer UNSUPPORTED (docs/api.md); for the small structured layers the
       suite requires every family to plan (as the sweeps do), for raw ones (huge pads, strides,
       dilations: packed windows beyond the address space) refusing is right. */
    int refusal_ok = c->raw && st == DLCONV_ERR_UNSUPPORTED && !c->opt_null && c->o.algo != DLCONV_ALGO_AUTO;
    refusal_ok |= cuda_here(c) && st == DLCONV_ERR_UNSUPPORTED;
    if (c->valid && !refusal_ok)
      failf(rp, "valid configuration but plan -> %s (%s)", dlconv_status_string(st), dlconv_last_error());
    return;
  }
  if (!c->valid) {
    failf(rp, "invalid configuration accepted by planning");
    dlconv_plan_destroy(plan);
    return;
  }
  check_info(rp, c, plan);
  /* Huge paddings/strides/dilations (raw mode) can make a packed-window algorithm ask for
     gigabytes of workspace for a tiny layer: honest, but too slow to run per input. */
  if (dlconv_plan_workspace_size(plan) > WS_RUN_MAX) {
    dlconv_plan_destroy(plan);
    return;
  }
  if (c->exec >= X_Y_MISALIGNED) {
    execute_hostile(rp, c, t, plan);
    dlconv_plan_destroy(plan);
    return;
  }
  if (cuda_here(c)) {   /* host x and y: INVALID_ARG, y untouched */
    canary_buf hy;
    canary_alloc(&hy, c->y_len * 4, c->y_shift);
    fill_sentinel(hy.p, c->y_len);
    stale_error();
    st = dlconv_execute(plan, t->x, hy.p, NULL);
    if (st != DLCONV_ERR_INVALID_ARG) failf(rp, "isa cuda execute on host memory -> %s, expected INVALID_ARG", dlconv_status_string(st));
    else check_error(rp, "isa cuda execute on host memory", st);
    for (size_t i = 0; i < c->y_len; i++)
      if (memcmp(&((float *)hy.p)[i], &Y_SENTINEL_BITS, 4)) {
        failf(rp, "isa cuda execute on host memory wrote y");
        break;
      }
    canary_free(&hy);
    dlconv_plan_destroy(plan);
    return;
  }
  /* the expectation, with the weights the plan was given */
  const float *w_eff = t->w;
  float *w_csr = NULL;
  if (c->kind == K_CSR) {
    w_csr = calloc(c->w_len + 1, 4);
    for (int32_t o = 0; o < t->csr.rows; o++)
      for (int32_t i = t->rowptr[o]; i < t->rowptr[o + 1]; i++) w_csr[(size_t)o * c->K + (size_t)t->cols[i]] = t->vals[i];
    w_eff = w_csr;
  }
  expect e;
  expected(c, t, w_eff, &e);
  size_t wsb = dlconv_plan_workspace_size(plan);
  canary_buf yb, yb2, wsbuf = {0};
  canary_alloc(&yb, c->y_len * 4, c->y_shift);
  fill_sentinel(yb.p, c->y_len);
  void *ws = NULL;
  if (c->exec == X_CALLER_WS) {
    canary_alloc(&wsbuf, wsb, 0);
    for (size_t i = 0; i + 4 <= wsb; i += 4) memcpy((char *)wsbuf.p + i, &(float){NAN}, 4);
    ws = wsb ? wsbuf.p : NULL;
  }
  stale_error();
  st = dlconv_execute(plan, t->x, yb.p, ws);
  if (st != DLCONV_OK) {
    failf(rp, "execute -> %s (%s)", dlconv_status_string(st), dlconv_last_error());
  } else {
    check_output(rp, c, &e, yb.p);
    if (!canary_guards_ok(&yb)) failf(rp, "execute wrote outside y");
    if (ws && !canary_guards_ok(&wsbuf)) failf(rp, "execute wrote past dlconv_plan_workspace_size = %zu", wsb);
    if (!inputs_unchanged(c, t)) failf(rp, "execute wrote to its inputs");
    /* again, with the other workspace mode: bitwise the same */
    canary_alloc(&yb2, c->y_len * 4, 4 * (c->y_len % 16));
    fill_sentinel(yb2.p, c->y_len);
    canary_buf ws2 = {0};
    if (!ws && wsb) canary_alloc(&ws2, wsb, 0);
    st = dlconv_execute(plan, t->x, yb2.p, ws ? NULL : (wsb ? ws2.p : NULL));
    if (st != DLCONV_OK) failf(rp, "second execute -> %s (%s)", dlconv_status_string(st), dlconv_last_error());
    else if (memcmp(yb.p, yb2.p, c->y_len * 4)) failf(rp, "second execute differs bitwise");
    if (ws2.raw) canary_free(&ws2);
    canary_free(&yb2);
  }
  (void)d;
  canary_free(&yb);
  if (wsbuf.raw) canary_free(&wsbuf);
  expect_free(&e);
  free(w_csr);
  dlconv_plan_destroy(plan);
}

static void fill_sizes(fcase *c) {
  const dlconv_conv2d_desc *d = &c->d;
  c->h_out = out_dim(d->h_in, d->pad_top, d->pad_bottom, d->k_h, d->dilation_h, d->stride_h);
  c->w_out = out_dim(d->w_in, d->pad_left, d->pad_right, d->k_w, d->dilation_w, d->stride_w);
  c->K = (size_t)(d->c_in / d->groups) * (size_t)d->k_h * (size_t)d->k_w;
  c->x_len = (size_t)d->n * d->c_in * d->h_in * d->w_in;
  c->w_len = (size_t)d->c_out * c->K;
  c->y_len = c->h_out > 0 && c->w_out > 0 ? (size_t)d->n * d->c_out * (size_t)c->h_out * (size_t)c->w_out : 0;
}

/* Everything after the shape: clamp, options, data, CSR, execute mode; then run. */
static void decode_rest_and_run(rd *r, fcase *c, report *rp) {
  if (c->kind != K_DENSE || (u8(r) & 1)) decode_clamp(r, &c->d);
  decode_options(r, c);
  fill_sizes(c);
  unsigned ex = u8(r);
  c->exec = ex % 32 < 21 ? X_NORMAL : ex % 32 < 24 ? X_CALLER_WS : X_Y_MISALIGNED + (int)(ex % 32 - 24);
  c->y_shift = 4 * (size_t)((ex >> 5) & 7);
  data t;
  memset(&t, 0, sizeof t);
  decode_data(r, c, &t);
  if (c->kind == K_CSR) build_csr(r, c, &t);
  run_case(rp, c, &t);
  data_free(&t);
}

/* ------------------------------------------------------------------------------------------ */
/* Mode 5: raw descriptor fields                                                              */

static int32_t raw_field(rd *r) {
  unsigned s = u8(r);
  switch (s % 16) {
    case 0: return INT32_MAX;
    case 1: return INT32_MIN;
    case 2: return (int32_t)u32(r);
    case 3: return 1 << (u8(r) % 31);
    case 4: return -(int32_t)(u8(r) % 4);
    case 5: return 46341;                   /* its square overflows int32 */
    case 6: return 65536;
    default: return (int32_t)(s % 16) - 6;  /* 1..9 */
  }
}

static void run_raw(rd *r, report *rp) {
  fcase c;
  memset(&c, 0, sizeof c);
  c.kind = K_CONV;
  c.raw = 1;
  dlconv_conv2d_desc *d = &c.d;
  dlconv_conv2d_desc_init(d, 1, 1, 1, 1, 1, 1, 1);
  int32_t *f[] = {&d->n, &d->c_in, &d->h_in, &d->w_in, &d->c_out, &d->k_h, &d->k_w, &d->stride_h, &d->stride_w,
                  &d->dilation_h, &d->dilation_w, &d->pad_top, &d->pad_bottom, &d->pad_left, &d->pad_right, &d->groups};
  unsigned which = u8(r);                  /* fields set from the input; the rest stay 1 (pads 0) */
  which |= u8(r) << 8;
  for (int i = 0; i < 16; i++)
    if (which & (1u << i)) *f[i] = raw_field(r);
  unsigned m = u8(r);
  d->dtype = (dlconv_dtype)((m & 7) < 5 ? DLCONV_F32 : (m & 7) - 4);   /* F16, U8, S8 */
  if ((m & 0x38) == 0x38) d->dtype = (dlconv_dtype)(5 + (m >> 6));     /* invalid */
  d->layout = (m & 0x40) ? DLCONV_NHWC : DLCONV_NCHW;
  decode_clamp(r, d);

  /* own verdict, in 128-bit arithmetic */
  int sizes_ok = d->n >= 1 && d->c_in >= 1 && d->h_in >= 1 && d->w_in >= 1 && d->c_out >= 1 && d->k_h >= 1 &&
                 d->k_w >= 1 && d->stride_h >= 1 && d->stride_w >= 1 && d->dilation_h >= 1 && d->dilation_w >= 1 &&
                 d->pad_top >= 0 && d->pad_bottom >= 0 && d->pad_left >= 0 && d->pad_right >= 0 && d->groups >= 1;
  int valid = sizes_ok && (unsigned)d->dtype <= DLCONV_S8 && d->c_in % d->groups == 0 && d->c_out % d->groups == 0 &&
              !isnan(d->out_min) && !isnan(d->out_max) && d->out_min <= d->out_max;
  int gray = 0;
  int64_t ho = 0, wo = 0;
  if (valid) {
    ho = out_dim(d->h_in, d->pad_top, d->pad_bottom, d->k_h, d->dilation_h, d->stride_h);
    wo = out_dim(d->w_in, d->pad_left, d->pad_right, d->k_w, d->dilation_w, d->stride_w);
    valid = ho >= 1 && wo >= 1 && ho <= INT32_MAX && wo <= INT32_MAX;
  }
  if (valid) {
    unsigned __int128 es = d->dtype == DLCONV_F16 ? 2 : d->dtype == DLCONV_F32 ? 4 : 1;
    unsigned __int128 K = (unsigned __int128)(d->c_in / d->groups) * (unsigned)d->k_h * (unsigned)d->k_w;
    unsigned __int128 xb = (unsigned __int128)d->n * (unsigned)d->c_in * (unsigned)d->h_in * (unsigned)d->w_in * es;
    unsigned __int128 wb = (unsigned __int128)(unsigned)d->c_out * K * 4;
    unsigned __int128 yb = (unsigned __int128)(unsigned)d->n * (unsigned)d->c_out * (uint64_t)ho * (uint64_t)wo * 4;
    unsigned __int128 macs = yb / 4 * K;
    if (xb > SIZE_MAX || wb > SIZE_MAX || yb > SIZE_MAX) valid = 0;
    /* beyond PTRDIFF_MAX bytes, or more MACs than int64_t holds: rejecting is allowed too */
    else if (xb > PTRDIFF_MAX || wb > PTRDIFF_MAX || yb > PTRDIFF_MAX || macs > INT64_MAX) gray = 1;
  }
  char desc[600];
  c.o.algo = DLCONV_ALGO_AUTO;
  c.opt_null = 1;
  if (valid) fill_sizes(&c);
  describe(&c, desc, sizeof desc);
  int32_t qh = -7, qw = -7;
  stale_error();
  dlconv_status st = dlconv_conv2d_output_shape(d, &qh, &qw);
  if (st == DLCONV_OK) {
    if (!valid && !gray) failf(rp, "output_shape accepted an invalid descriptor %s", desc);
    else if (qh != ho || qw != wo) failf(rp, "output_shape %dx%d, expected %lldx%lld", qh, qw, (long long)ho, (long long)wo);
  } else {
    check_error(rp, "output_shape", st);
    if (valid && !gray) failf(rp, "output_shape rejected a valid descriptor %s: %s", desc, dlconv_last_error());
  }
  /* planning rejects what the shape query rejects, before reading w */
  float dummy[4] = {0};
  dlconv_plan *plan = (dlconv_plan *)(uintptr_t)0x30;
  /* valid F16 (it needs no q): planning reads all of w, so give it a whole one */
  if (st == DLCONV_OK && d->dtype == DLCONV_F16) {
    if (!valid || gray || c.w_len > ELEMS_CAP) return;
    uint16_t *wh = calloc(c.w_len ? c.w_len : 1, sizeof *wh);
    if (!wh) return;
    stale_error();
    dlconv_status ps = dlconv_plan_conv2d(&plan, d, wh, NULL, NULL, NULL);
    if (ps == DLCONV_OK)
      dlconv_plan_destroy(plan);
    else if (ps != DLCONV_ERR_UNSUPPORTED && ps != DLCONV_ERR_OUT_OF_MEMORY)
      failf(rp, "F16 plan of a valid %s -> %d: %s", desc, (int)ps, dlconv_last_error());
    free(wh);
    return;
  }
  if (st != DLCONV_OK || d->dtype != DLCONV_F32) {
    stale_error();
    dlconv_status ps = dlconv_plan_conv2d(&plan, d, dummy, NULL, NULL, NULL);
    if (ps == DLCONV_OK) {
      failf(rp, "planning accepted %s", desc);
      dlconv_plan_destroy(plan);
    } else {
      check_error(rp, "raw plan", ps);
      if (plan) failf(rp, "failed raw plan left *plan set");
      if (st != DLCONV_OK && ps != st) failf(rp, "output_shape -> %d but plan -> %d for %s", (int)st, (int)ps, desc);
    }
    return;
  }
  /* valid F32: run it when small */
  if (!valid || gray) return;
  int64_t macs = (int64_t)d->n * d->c_out * ho * wo * (int64_t)c.K;
  if (macs > MACS_CAP || c.x_len > ELEMS_CAP || c.y_len > ELEMS_CAP || c.w_len > ELEMS_CAP) return;
  /* MEASURE times every candidate, and the packed-window ones may want gigabytes of workspace
     for a tiny layer with huge pads, strides or dilations: honest but minutes per input */
  for (int i = 7; i < 15; i++) c.no_measure |= *f[i] > 64;
  decode_rest_and_run(r, &c, rp);
}

/* ------------------------------------------------------------------------------------------ */
/* Mode 6: wisdom import                                                                       */

static int read_file(const char *path, char **out, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t cap = 4096, n = 0;
  char *b = malloc(cap);
  size_t k;
  while ((k = fread(b + n, 1, cap - n, f)) > 0) {
    n += k;
    if (n == cap) b = realloc(b, cap *= 2);
  }
  fclose(f);
  *out = b;
  *len = n;
  return 1;
}

static void run_wisdom(rd *r, report *rp) {
  char in[96], before[96], after[96];
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  snprintf(in, sizeof in, "%s/dlconv_fuzz_%d_in", dir, (int)getpid());
  snprintf(before, sizeof before, "%s/dlconv_fuzz_%d_a", dir, (int)getpid());
  snprintf(after, sizeof after, "%s/dlconv_fuzz_%d_b", dir, (int)getpid());
  FILE *f = fopen(in, "wb");
  if (!f) return;
  /* a valid header most of the time, so the fuzzer reaches the lines */
  if (u8(r) & 1) fputs("# libdlconv wisdom 1\n", f);
  if (r->i < r->n) fwrite(r->p + r->i, 1, r->n - r->i, f);
  fclose(f);
  dlconv_wisdom_forget();
  char *a = NULL, *b = NULL;
  size_t na = 0, nb = 0;
  if (dlconv_wisdom_export(before) != DLCONV_OK) failf(rp, "wisdom export failed: %s", dlconv_last_error());
  stale_error();
  dlconv_status st = dlconv_wisdom_import(in);
  if (st != DLCONV_OK) {
    if (st != DLCONV_ERR_IO) failf(rp, "wisdom import -> %s, expected OK or IO", dlconv_status_string(st));
    check_error(rp, "wisdom import", st);
    if (dlconv_wisdom_export(after) != DLCONV_OK) failf(rp, "wisdom export failed: %s", dlconv_last_error());
    if (!read_file(before, &a, &na) || !read_file(after, &b, &nb) || na != nb || memcmp(a, b, na))
      failf(rp, "a rejected wisdom file changed the wisdom");
  } else {
    /* round trip: what was imported exports and re-imports to the same text */
    if (dlconv_wisdom_export(before) != DLCONV_OK) failf(rp, "wisdom export failed: %s", dlconv_last_error());
    dlconv_wisdom_forget();
    if (dlconv_wisdom_import(before) != DLCONV_OK) failf(rp, "re-import of exported wisdom failed: %s", dlconv_last_error());
    if (dlconv_wisdom_export(after) != DLCONV_OK) failf(rp, "wisdom export failed: %s", dlconv_last_error());
    if (!read_file(before, &a, &na) || !read_file(after, &b, &nb) || na != nb || memcmp(a, b, na))
      failf(rp, "wisdom does not round-trip");
  }
  free(a);
  free(b);
  remove(in);
  remove(before);
  remove(after);
  dlconv_wisdom_forget();
}

/* ------------------------------------------------------------------------------------------ */

int dlconv_fuzz_one(const uint8_t *data_in, size_t size, char *msg, size_t msg_len) {
  report rp = {msg, msg_len, 0, 0};
  if (msg && msg_len) msg[0] = 0;
  rd r = {data_in, size, 0};
  unsigned mode = u8(&r) % 7;
  dlconv_wisdom_forget();   /* no state carried from one input to the next (MEASURE remembers) */
  if (mode == 6) {
    run_wisdom(&r, &rp);
    return rp.bad;
  }
  if (mode == 5) {
    run_raw(&r, &rp);
    return rp.bad;
  }
  fcase c;
  memset(&c, 0, sizeof c);
  c.kind = mode == 2 ? K_DENSE : mode == 1 || mode == 4 ? K_CSR : K_CONV;
  decode_shape(&r, &c);
  cap_shape(&c);
  decode_rest_and_run(&r, &c, &rp);
  if (rp.bad && msg) {
    char desc[600];
    describe(&c, desc, sizeof desc);
    size_t u = strlen(msg);
    snprintf(msg + u, msg_len - u, "case %s", desc);
  }
  dlconv_wisdom_forget();
  return rp.bad;
}
