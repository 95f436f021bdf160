/* Shared helpers of the API-level tests: seeded RNG, guarded buffers, a caller thread pool,
 * test data + oracle results for one layer, and one "plan, execute, check everything" runner.
 *
 * Header-only (static inline) so every test is one .c file plus oracle.c. Only the public
 * header is used: these tests see the library exactly as a user does. */
#ifndef DLCONV_TEST_COMMON_H
#define DLCONV_TEST_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "dlconv.h"
#include "oracle.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------------------------------ */
/* Names                                                                                       */

static const char *const ALGO_NAMES[] = {"auto", "direct", "im2col", "spack", "gspc", "csr"};
static const char *const ISA_NAMES[] = {"auto", "generic", "avx2", "avx512", "neon", "cuda"};
enum { N_ALGOS = 6, N_ISAS = 6 };

static inline const char *algo_name(int a) { return (a >= 0 && a < N_ALGOS) ? ALGO_NAMES[a] : "?"; }
static inline const char *isa_name(int i) { return (i >= 0 && i < N_ISAS) ? ISA_NAMES[i] : "?"; }

static inline int algo_from_name(const char *s) {
  for (int a = 0; a < N_ALGOS; a++)
    if (!strcmp(s, ALGO_NAMES[a])) return a;
  return -1;
}

/* The CPU ISAs this machine has, GENERIC first. */
static inline int cpu_isas(dlconv_isa *out) {
  const dlconv_isa all[] = {DLCONV_ISA_GENERIC, DLCONV_ISA_AVX2, DLCONV_ISA_AVX512, DLCONV_ISA_NEON};
  int n = 0;
  for (size_t i = 0; i < ARRAY_LEN(all); i++)
    if (dlconv_isa_available(all[i]) == 1) out[n++] = all[i];
  return n;
}

/* An explicit (algorithm, ISA) pair must plan (never UNSUPPORTED) where this says 1. Generic C
 * does every algorithm; AUTO algorithm works with every available ISA; ISA AUTO with an explicit
 * algorithm picks an ISA that has it. Flip an entry to 1 once that ISA's family has landed, so a
 * kernel family that silently disappears fails the suite instead of hiding in the skip counts. */
static inline int pair_required(int algo, int isa) {
  static const int REQUIRED[N_ALGOS][N_ISAS] = {
      /*                          auto generic avx2 avx512 neon cuda */
      [DLCONV_ALGO_AUTO] =         {1, 1, 1, 1, 1, 0},
      [DLCONV_ALGO_DIRECT] =       {1, 1, 1, 1, 0, 0},
      [DLCONV_ALGO_IM2COL_GEMM] =  {1, 1, 1, 1, 0, 0},
      [DLCONV_ALGO_SPATIAL_PACK] = {1, 1, 1, 1, 0, 0},
      [DLCONV_ALGO_GSPC] =         {1, 1, 1, 1, 0, 0},
      [DLCONV_ALGO_SPARSE_CSR] =   {1, 1, 1, 1, 0, 0},
  };
  if (algo < 0 || algo >= N_ALGOS || isa < 0 || isa >= N_ISAS) return 0;
  return REQUIRED[algo][isa] && (isa == DLCONV_ISA_AUTO || dlconv_isa_available((dlconv_isa)isa) == 1);
}

/* ------------------------------------------------------------------------------------------ */
/* Seeded RNG (splitmix64): every case is reproducible from its seed.                         */

typedef struct rng_t { uint64_t s; } rng_t;

static inline uint64_t rng_next(rng_t *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static inline rng_t rng_seed(uint64_t seed) { rng_t r = {seed * 0x2545F4914F6CDD1Dull + 1}; rng_next(&r); return r; }
/* uniform integer in [lo, hi] */
static inline int rng_int(rng_t *r, int lo, int hi) { return lo + (int)(rng_next(r) % (uint64_t)(hi - lo + 1)); }
static inline double rng_unit(rng_t *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }
static inline float rng_float(rng_t *r, float lo, float hi) { return lo + (float)rng_unit(r) * (hi - lo); }
static inline int rng_pick(rng_t *r, const int *v, int n) { return v[rng_int(r, 0, n - 1)]; }
static inline int rng_chance(rng_t *r, double p) { return rng_unit(r) < p; }

/* ------------------------------------------------------------------------------------------ */
/* Guarded buffers: a canary pattern before and after the payload must survive every call.    */

#define GUARD_BYTES 128   /* a multiple of 64 so an unshifted payload is 64-byte aligned */

typedef struct gbuf {
  unsigned char *raw;
  size_t total, pre, bytes;
  void *p;
  int fenced;   /* mmap'ed with an inaccessible page right after (1) or before (2) the payload */
} gbuf;

static inline unsigned char canary_byte(size_t i) { return (unsigned char)(0xC3u ^ (i * 0x9Du) ^ (i >> 8)); }

/* payload of `bytes` bytes at offset GUARD_BYTES + shift from a 64-byte aligned block */
static inline void gbuf_alloc(gbuf *g, size_t bytes, size_t shift) {
  g->fenced = 0;
  g->pre = GUARD_BYTES + shift;
  g->bytes = bytes;
  g->total = (g->pre + bytes + GUARD_BYTES + 63) / 64 * 64;
  g->raw = aligned_alloc(64, g->total);
  if (!g->raw) { fprintf(stderr, "test: out of memory (%zu bytes)\n", g->total); exit(2); }
  for (size_t i = 0; i < g->total; i++) g->raw[i] = canary_byte(i);
  g->p = g->raw + g->pre;
}

/* Input buffers for catching over-reads: the payload touches a PROT_NONE page on one side, so a
 * kernel that reads even one float past the end (or before the start) of x or w faults. */
static inline void gbuf_alloc_fenced(gbuf *g, size_t bytes, int side) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  const size_t span = (bytes + page - 1) / page * page;
  memset(g, 0, sizeof *g);
  g->total = span + 2 * page;
  g->raw = mmap(NULL, g->total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (g->raw == MAP_FAILED) { fprintf(stderr, "test: mmap failed\n"); exit(2); }
  mprotect(g->raw, page, PROT_NONE);
  mprotect(g->raw + page + span, page, PROT_NONE);
  g->fenced = side;
  g->bytes = bytes;
  g->pre = side == 1 ? page + span - bytes : page;
  g->p = g->raw + g->pre;
}

static inline void gbuf_free(gbuf *g) {
  if (g->fenced) munmap(g->raw, g->total);
  else free(g->raw);
  memset(g, 0, sizeof *g);
}

/* 1 if both guards hold the canary */
static inline int gbuf_guards_ok(const gbuf *g) {
  if (g->fenced) return 1;   /* the fence pages guard it */
  for (size_t i = 0; i < g->pre; i++)
    if (g->raw[i] != canary_byte(i)) return 0;
  for (size_t i = g->pre + g->bytes; i < g->total; i++)
    if (g->raw[i] != canary_byte(i)) return 0;
  return 1;
}

/* 1 if the payload still holds the canary too (nothing was written at all) */
static inline int gbuf_untouched(const gbuf *g) {
  if (g->fenced) return 1;
  for (size_t i = 0; i < g->total; i++)
    if (g->raw[i] != canary_byte(i)) return 0;
  return 1;
}

/* A quiet NaN with a payload: an output point the library never writes stays NaN and fails. */
static inline float sentinel_nan(void) {
  uint32_t u = 0x7FC5A5A5u;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static inline void fill_nan(void *p, size_t bytes) {
  float s = sentinel_nan();
  for (size_t i = 0; i + 4 <= bytes; i += 4) memcpy((char *)p + i, &s, 4);
}

/* ------------------------------------------------------------------------------------------ */
/* Caller thread pool (dlconv_parallel_for_fn): nw workers plus the calling thread. Calls from   */
/* several threads are serialised, so one pool can serve concurrent executes.                   */

#define TPOOL_MAX 16

typedef struct tpool {
  pthread_t th[TPOOL_MAX];
  int nw;
  pthread_mutex_t call_mu, mu;
  pthread_cond_t cv, done_cv;
  uint64_t gen;
  int stop, busy;
  dlconv_task_fn task;
  void *arg;
  size_t n;
  atomic_size_t next;
  atomic_long calls, tasks_run;
} tpool;

static inline void tpool_drain(tpool *tp) {
  size_t i;
  while ((i = atomic_fetch_add(&tp->next, 1)) < tp->n) {
    tp->task(tp->arg, i);
    atomic_fetch_add(&tp->tasks_run, 1);
  }
}

static inline void *tpool_worker(void *p) {
  tpool *tp = p;
  uint64_t seen = 0;
  pthread_mutex_lock(&tp->mu);
  for (;;) {
    while (!tp->stop && tp->gen == seen) pthread_cond_wait(&tp->cv, &tp->mu);
    if (tp->stop) break;
    seen = tp->gen;
    pthread_mutex_unlock(&tp->mu);
    tpool_drain(tp);
    pthread_mutex_lock(&tp->mu);
    if (--tp->busy == 0) pthread_cond_signal(&tp->done_cv);
  }
  pthread_mutex_unlock(&tp->mu);
  return NULL;
}

static inline tpool *tpool_create(int nw) {
  tpool *tp = calloc(1, sizeof *tp);
  if (nw > TPOOL_MAX) nw = TPOOL_MAX;
  tp->nw = nw;
  pthread_mutex_init(&tp->call_mu, NULL);
  pthread_mutex_init(&tp->mu, NULL);
  pthread_cond_init(&tp->cv, NULL);
  pthread_cond_init(&tp->done_cv, NULL);
  for (int i = 0; i < nw; i++) pthread_create(&tp->th[i], NULL, tpool_worker, tp);
  return tp;
}

static inline void tpool_parallel_for(void *pool, dlconv_task_fn task, void *arg, size_t n) {
  tpool *tp = pool;
  pthread_mutex_lock(&tp->call_mu);
  pthread_mutex_lock(&tp->mu);
  tp->task = task;
  tp->arg = arg;
  tp->n = n;
  atomic_store(&tp->next, 0);
  tp->busy = tp->nw;
  tp->gen++;
  pthread_cond_broadcast(&tp->cv);
  pthread_mutex_unlock(&tp->mu);
  tpool_drain(tp);
  pthread_mutex_lock(&tp->mu);
  while (tp->busy > 0) pthread_cond_wait(&tp->done_cv, &tp->mu);
  pthread_mutex_unlock(&tp->mu);
  atomic_fetch_add(&tp->calls, 1);
  pthread_mutex_unlock(&tp->call_mu);
}

static inline void tpool_destroy(tpool *tp) {
  if (!tp) return;
  pthread_mutex_lock(&tp->mu);
  tp->stop = 1;
  pthread_cond_broadcast(&tp->cv);
  pthread_mutex_unlock(&tp->mu);
  for (int i = 0; i < tp->nw; i++) pthread_join(tp->th[i], NULL);
  pthread_mutex_destroy(&tp->call_mu);
  pthread_mutex_destroy(&tp->mu);
  pthread_cond_destroy(&tp->cv);
  pthread_cond_destroy(&tp->done_cv);
  free(tp);
}

/* ------------------------------------------------------------------------------------------ */
/* One layer's test data, its oracle result and error scale.                                  */

typedef enum case_kind { KIND_CONV = 0, KIND_DENSE = 1, KIND_CSR = 2 } case_kind;

typedef struct conv_data {
  case_kind kind;
  dlconv_conv2d_desc d;      /* KIND_DENSE: n = batch, c_in = in, c_out = out, 1x1 everything */
  int64_t h_out, w_out;
  size_t x_len, w_len, y_len, K, nnz;
  gbuf xb, wb, bb;           /* caller buffers (possibly shifted off 64-byte alignment) */
  float *x, *w, *bias;       /* bias NULL when the case has none */
  float *x0, *w0, *b0;       /* pristine copies: the library must not write its inputs */
  double *ref, *mag;
  /* KIND_CSR: the same weights as w, rows in random column order */
  dlconv_csr csr;
  float *csr_vals;
  int32_t *csr_cols, *csr_rowptr;
  float *csr_vals0;
  int32_t *csr_cols0, *csr_rowptr0;
} conv_data;

typedef struct data_opts {
  int bias;               /* 1: random bias, 0: NULL */
  double zero_frac;       /* probability of an exact 0.0f weight */
  double empty_row_frac;  /* probability that a whole output channel's weights are zero */
  size_t shift;           /* byte shift of x, w, bias off 64-byte alignment (multiple of 4) */
  int fence;              /* x and w against an inaccessible page: 1 after the end, 2 before the start */
} data_opts;

static inline float *dup_floats(const float *p, size_t n) {
  float *q = malloc(n * sizeof(float) + 4);
  if (n) memcpy(q, p, n * sizeof(float));
  return q;
}

static inline void build_csr(conv_data *cd, rng_t *r) {
  const int32_t rows = cd->d.c_out;
  const int32_t cols = (int32_t)(cd->w_len / (size_t)rows);
  cd->csr_rowptr = malloc(sizeof(int32_t) * (size_t)(rows + 1));
  cd->csr_cols = malloc(sizeof(int32_t) * (cd->nnz + 1));
  cd->csr_vals = malloc(sizeof(float) * (cd->nnz + 1));
  int32_t k = 0;
  cd->csr_rowptr[0] = 0;
  for (int32_t o = 0; o < rows; o++) {
    const int32_t start = k;
    for (int32_t c = 0; c < cols; c++) {
      float v = cd->w[(size_t)o * cols + c];
      if (v != 0.0f) { cd->csr_cols[k] = c; cd->csr_vals[k] = v; k++; }
    }
    /* shuffle the row: the plan must accept columns in any order */
    for (int32_t i = k - 1; i > start; i--) {
      int32_t j = start + rng_int(r, 0, i - start);
      int32_t tc = cd->csr_cols[i]; cd->csr_cols[i] = cd->csr_cols[j]; cd->csr_cols[j] = tc;
      float tv = cd->csr_vals[i]; cd->csr_vals[i] = cd->csr_vals[j]; cd->csr_vals[j] = tv;
    }
    cd->csr_rowptr[o + 1] = k;
  }
  cd->csr.rows = rows;
  cd->csr.cols = cols;
  cd->csr.nnz = k;
  cd->csr.values = cd->csr_vals;
  cd->csr.col_indices = cd->csr_cols;
  cd->csr.row_ptr = cd->csr_rowptr;
  cd->csr_vals0 = dup_floats(cd->csr_vals, (size_t)k);
  cd->csr_cols0 = malloc(sizeof(int32_t) * (size_t)(k + 1));
  memcpy(cd->csr_cols0, cd->csr_cols, sizeof(int32_t) * (size_t)k);
  cd->csr_rowptr0 = malloc(sizeof(int32_t) * (size_t)(rows + 1));
  memcpy(cd->csr_rowptr0, cd->csr_rowptr, sizeof(int32_t) * (size_t)(rows + 1));
}

/* Random data for the layer d (already valid), oracle output included. */
static inline void cd_init(conv_data *cd, case_kind kind, const dlconv_conv2d_desc *d, rng_t *r,
                           const data_opts *o) {
  memset(cd, 0, sizeof *cd);
  cd->kind = kind;
  cd->d = *d;
  cd->h_out = oracle_out_dim(d->h_in, d->pad_top, d->pad_bottom, d->k_h, d->dilation_h, d->stride_h);
  cd->w_out = oracle_out_dim(d->w_in, d->pad_left, d->pad_right, d->k_w, d->dilation_w, d->stride_w);
  const size_t cin_g = (size_t)(d->c_in / d->groups);
  cd->K = cin_g * (size_t)d->k_h * (size_t)d->k_w;
  cd->x_len = (size_t)d->n * d->c_in * d->h_in * d->w_in;
  cd->w_len = (size_t)d->c_out * cd->K;
  cd->y_len = (size_t)d->n * d->c_out * (size_t)cd->h_out * (size_t)cd->w_out;
  if (o->fence) {
    gbuf_alloc_fenced(&cd->xb, cd->x_len * 4, o->fence);
    gbuf_alloc_fenced(&cd->wb, cd->w_len * 4, o->fence);
  } else {
    gbuf_alloc(&cd->xb, cd->x_len * 4, o->shift);
    gbuf_alloc(&cd->wb, cd->w_len * 4, o->shift);
  }
  cd->x = cd->xb.p;
  cd->w = cd->wb.p;
  for (size_t i = 0; i < cd->x_len; i++) cd->x[i] = rng_float(r, -1.0f, 1.0f);
  for (int32_t oc = 0; oc < d->c_out; oc++) {
    const int empty = o->empty_row_frac > 0 && rng_chance(r, o->empty_row_frac);
    for (size_t i = 0; i < cd->K; i++) {
      float v = rng_float(r, -1.0f, 1.0f);
      if (empty || (o->zero_frac > 0 && rng_chance(r, o->zero_frac)) || v == 0.0f) v = 0.0f;
      else cd->nnz++;
      cd->w[(size_t)oc * cd->K + i] = v;
    }
  }
  if (o->bias) {
    gbuf_alloc(&cd->bb, (size_t)d->c_out * 4, o->shift);
    cd->bias = cd->bb.p;
    for (int32_t i = 0; i < d->c_out; i++) cd->bias[i] = rng_float(r, -1.0f, 1.0f);
    cd->b0 = dup_floats(cd->bias, (size_t)d->c_out);
  }
  cd->x0 = dup_floats(cd->x, cd->x_len);
  cd->w0 = dup_floats(cd->w, cd->w_len);
  cd->ref = malloc(sizeof(double) * (cd->y_len + 1));
  cd->mag = malloc(sizeof(double) * (cd->y_len + 1));
  oracle_conv2d(&cd->d, cd->x, cd->w, cd->bias, cd->ref, cd->mag);
  if (kind == KIND_CSR) build_csr(cd, r);
}

/* Recompute the oracle after a test edited x, w or bias in place (and refresh the copies). */
static inline void cd_refresh(conv_data *cd) {
  memcpy(cd->x0, cd->x, cd->x_len * 4);
  memcpy(cd->w0, cd->w, cd->w_len * 4);
  if (cd->bias) memcpy(cd->b0, cd->bias, (size_t)cd->d.c_out * 4);
  oracle_conv2d(&cd->d, cd->x, cd->w, cd->bias, cd->ref, cd->mag);
}

static inline void cd_free(conv_data *cd) {
  gbuf_free(&cd->xb);
  gbuf_free(&cd->wb);
  if (cd->bias) gbuf_free(&cd->bb);
  free(cd->x0); free(cd->w0); free(cd->b0);
  free(cd->ref); free(cd->mag);
  free(cd->csr_vals); free(cd->csr_cols); free(cd->csr_rowptr);
  free(cd->csr_vals0); free(cd->csr_cols0); free(cd->csr_rowptr0);
  memset(cd, 0, sizeof *cd);
}

/* A dense layer as the equivalent 1x1 conv on a 1x1 image (x: batch x in, y: batch x out). */
static inline void dense_desc(dlconv_conv2d_desc *d, int32_t batch, int32_t in_f, int32_t out_f,
                              float out_min, float out_max) {
  dlconv_conv2d_desc_init(d, batch, in_f, 1, 1, out_f, 1, 1);
  d->out_min = out_min;
  d->out_max = out_max;
}

/* ------------------------------------------------------------------------------------------ */
/* Printing a case so a failure message is a reproducer.                                      */

static inline void fmt_bound(char *b, size_t n, float v) {
  if (isinf(v)) snprintf(b, n, "%sinf", v < 0 ? "-" : "");
  else snprintf(b, n, "%.9g", v);
}

static inline const char *desc_str(const dlconv_conv2d_desc *d, char *buf, size_t n) {
  char lo[32], hi[32];
  fmt_bound(lo, sizeof lo, d->out_min);
  fmt_bound(hi, sizeof hi, d->out_max);
  snprintf(buf, n,
           "{n=%d c_in=%d h_in=%d w_in=%d c_out=%d k=%dx%d stride=%d,%d dil=%d,%d pad(t,b,l,r)=%d,%d,%d,%d "
           "groups=%d %s clamp=[%s,%s]}",
           d->n, d->c_in, d->h_in, d->w_in, d->c_out, d->k_h, d->k_w, d->stride_h, d->stride_w,
           d->dilation_h, d->dilation_w, d->pad_top, d->pad_bottom, d->pad_left, d->pad_right, d->groups,
           d->layout == DLCONV_NHWC ? "NHWC" : "NCHW", lo, hi);
  return buf;
}

/* Compare y with the oracle: |y - ref| <= 2e-6 * sqrt(K) * sum|x*w|+|b| + 1e-30, NaN only where
 * the reference is NaN. Returns the number of bad points; describes the first in msg. */
static inline size_t check_y(const conv_data *cd, const float *y, char *msg, size_t len) {
  const double scale = 2e-6 * sqrt((double)(cd->K ? cd->K : 1));
  size_t bad = 0, first = 0;
  double worst = 0;
  for (size_t i = 0; i < cd->y_len; i++) {
    const double r = cd->ref[i], v = (double)y[i], tol = scale * cd->mag[i] + 1e-30;
    int ok = isnan(r) ? isnan(v) : isinf(r) ? v == r : (!isnan(v) && fabs(v - r) <= tol);
    if (!ok) {
      if (!bad) first = i;
      bad++;
      double e = isnan(v) || isnan(r) ? INFINITY : fabs(v - r) / tol;
      if (e > worst) worst = e;
    }
  }
  if (bad && msg) {
    const dlconv_conv2d_desc *d = &cd->d;
    size_t i = first, b, c, h, w;
    const size_t ho = (size_t)cd->h_out, wo = (size_t)cd->w_out, co = (size_t)d->c_out;
    if (d->layout == DLCONV_NHWC) { c = i % co; i /= co; w = i % wo; i /= wo; h = i % ho; b = i / ho; }
    else { w = i % wo; i /= wo; h = i % ho; i /= ho; c = i % co; b = i / co; }
    snprintf(msg, len, "%zu of %zu outputs wrong (worst %.3g x tol); first y[n=%zu,c=%zu,h=%zu,w=%zu] = %.9g, ref %.9g",
             bad, cd->y_len, worst, b, c, h, w, (double)y[first], cd->ref[first]);
  }
  return bad;
}

/* ------------------------------------------------------------------------------------------ */
/* Plan + execute + every check.                                                              */

typedef struct run_cfg {
  dlconv_algo algo;
  dlconv_isa isa;
  int num_threads;
  tpool *pool;        /* non-NULL: options.parallel_for = the caller pool */
  int ws_mode;        /* 0: workspace NULL; 1: caller workspace of exactly the size, NaN-filled */
  size_t y_shift;     /* y payload shifted by this many bytes off 64-byte alignment */
  int repeat;         /* execute a second time into a fresh buffer: bits must be identical */
  uint32_t flags;     /* options.flags (DLCONV_PLAN_MEASURE) */
} run_cfg;

typedef enum run_outcome { RUN_PASS = 0, RUN_UNSUPPORTED = 1, RUN_FAIL = 2 } run_outcome;

typedef struct run_result {
  dlconv_status plan_status;
  dlconv_plan_info info;
  char msg[1024];
} run_result;

static inline const char *cfg_str(const run_cfg *c, char *buf, size_t n) {
  snprintf(buf, n, "algo=%s isa=%s threads=%d%s ws=%s y_shift=%zu%s", algo_name(c->algo), isa_name(c->isa),
           c->num_threads, c->pool ? " caller-pool" : "", c->ws_mode ? "caller" : "NULL", c->y_shift,
           c->flags & DLCONV_PLAN_MEASURE ? " MEASURE" : "");
  return buf;
}

static inline void cfg_options(const run_cfg *c, dlconv_options *o) {
  dlconv_options_init(o);
  o->algo = c->algo;
  o->isa = c->isa;
  o->num_threads = c->num_threads;
  o->flags = c->flags;
  if (c->pool) {
    o->parallel_for = tpool_parallel_for;
    o->pool = c->pool;
  }
}

static inline dlconv_status cd_plan(const conv_data *cd, dlconv_plan **plan, const dlconv_options *o) {
  const dlconv_conv2d_desc *d = &cd->d;
  switch (cd->kind) {
    case KIND_DENSE:
      return dlconv_plan_dense(plan, d->n, d->c_in, d->c_out, DLCONV_F32, cd->w, cd->bias, d->out_min,
                               d->out_max, NULL, o);
    case KIND_CSR: return dlconv_plan_conv2d_csr(plan, d, &cd->csr, cd->bias, NULL, o);
    default: return dlconv_plan_conv2d(plan, d, cd->w, cd->bias, NULL, o);
  }
}

/* Checks of dlconv_plan_query against what was asked; appends problems to msg. */
static inline int check_info(const conv_data *cd, const run_cfg *c, const dlconv_plan *plan,
                             dlconv_plan_info *info, char *msg, size_t len) {
  const dlconv_conv2d_desc *d = &cd->d;
  int bad = 0;
  size_t used = strlen(msg);
#define INFO_BAD(...) do { bad = 1; if (used < len) used += (size_t)snprintf(msg + used, len - used, __VA_ARGS__); } while (0)
  memset(info, 0x5A, sizeof *info);
  dlconv_status st = dlconv_plan_query(plan, info);
  if (st != DLCONV_OK) { INFO_BAD("plan_query -> %d; ", (int)st); return bad; }
  if (info->algo < DLCONV_ALGO_DIRECT || info->algo > DLCONV_ALGO_SPARSE_CSR) INFO_BAD("info.algo=%d not concrete; ", (int)info->algo);
  if (c->algo != DLCONV_ALGO_AUTO && info->algo != c->algo) INFO_BAD("info.algo=%s but %s was forced; ", algo_name(info->algo), algo_name(c->algo));
  if (info->isa < DLCONV_ISA_GENERIC || info->isa > DLCONV_ISA_NEON) INFO_BAD("info.isa=%d not a concrete CPU ISA; ", (int)info->isa);
  else if (dlconv_isa_available(info->isa) != 1) INFO_BAD("info.isa=%s not available; ", isa_name(info->isa));
  if (c->isa != DLCONV_ISA_AUTO && info->isa != c->isa) INFO_BAD("info.isa=%s but %s was forced; ", isa_name(info->isa), isa_name(c->isa));
  if (info->dtype != DLCONV_F32) INFO_BAD("info.dtype=%d; ", (int)info->dtype);
  const int64_t macs = (int64_t)d->n * d->c_out * cd->h_out * cd->w_out * (int64_t)cd->K;
  if (info->macs != macs) INFO_BAD("info.macs=%lld, dense formula %lld; ", (long long)info->macs, (long long)macs);
  const size_t ws = dlconv_plan_workspace_size(plan);
  if (info->workspace_bytes != ws) INFO_BAD("info.workspace_bytes=%zu != plan_workspace_size %zu; ", info->workspace_bytes, ws);
  if (!memchr(info->kernel, 0, sizeof info->kernel) || !info->kernel[0]) INFO_BAD("info.kernel empty or unterminated; ");
  const double density = (double)cd->nnz / (double)cd->w_len;
  if (!(info->weight_density >= 0.0 && info->weight_density <= 1.0)) INFO_BAD("info.weight_density=%g; ", info->weight_density);
  else if (info->algo == DLCONV_ALGO_SPARSE_CSR) {
    if (fabs(info->weight_density - density) > 1e-9) INFO_BAD("info.weight_density=%.9g, nonzeros/total=%.9g; ", info->weight_density, density);
  } else if (info->weight_density != 1.0) INFO_BAD("dense algorithm reports weight_density=%g; ", info->weight_density);
#undef INFO_BAD
  return bad;
}

static inline int inputs_unchanged(const conv_data *cd) {
  if (memcmp(cd->x, cd->x0, cd->x_len * 4) || memcmp(cd->w, cd->w0, cd->w_len * 4)) return 0;
  if (!gbuf_guards_ok(&cd->xb) || !gbuf_guards_ok(&cd->wb)) return 0;
  if (cd->bias && (memcmp(cd->bias, cd->b0, (size_t)cd->d.c_out * 4) || !gbuf_guards_ok(&cd->bb))) return 0;
  if (cd->kind == KIND_CSR) {
    const size_t nnz = (size_t)cd->csr.nnz;
    if (memcmp(cd->csr_vals, cd->csr_vals0, nnz * 4) || memcmp(cd->csr_cols, cd->csr_cols0, nnz * 4) ||
        memcmp(cd->csr_rowptr, cd->csr_rowptr0, (size_t)(cd->csr.rows + 1) * 4))
      return 0;
  }
  return 1;
}

/* Execute into a fresh guarded, NaN-filled y; 0 if all checks pass, else msg says why. */
static inline int execute_checked(const conv_data *cd, const dlconv_plan *plan, const run_cfg *c,
                                  float **y_keep, char *msg, size_t len) {
  gbuf yb, wsb = {0};
  int bad = 0;
  size_t used = strlen(msg);
#define EXE_BAD(...) do { bad = 1; if (used < len) used += (size_t)snprintf(msg + used, len - used, __VA_ARGS__); } while (0)
  gbuf_alloc(&yb, cd->y_len * 4, c->y_shift);
  fill_nan(yb.p, yb.bytes);
  void *ws = NULL;
  if (c->ws_mode) {
    gbuf_alloc(&wsb, dlconv_plan_workspace_size(plan), 0);
    fill_nan(wsb.p, wsb.bytes);   /* a kernel must not rely on a zeroed workspace */
    ws = wsb.p;
  }
  dlconv_status st = dlconv_execute(plan, cd->x, yb.p, ws);
  if (st != DLCONV_OK) {
    EXE_BAD("execute -> %s (%s); ", dlconv_status_string(st), dlconv_last_error());
  } else {
    char m[400] = "";
    if (check_y(cd, yb.p, m, sizeof m)) EXE_BAD("%s; ", m);
  }
  if (!gbuf_guards_ok(&yb)) EXE_BAD("y guard bytes overwritten; ");
  if (c->ws_mode && !gbuf_guards_ok(&wsb)) EXE_BAD("workspace overrun (wrote past dlconv_plan_workspace_size=%zu); ", wsb.bytes);
  if (!inputs_unchanged(cd)) EXE_BAD("x, w, bias or csr arrays modified; ");
  if (c->ws_mode) gbuf_free(&wsb);
  if (y_keep) {
    *y_keep = malloc(cd->y_len * 4 + 4);
    memcpy(*y_keep, yb.p, cd->y_len * 4);
  }
  gbuf_free(&yb);
#undef EXE_BAD
  return bad;
}

/* Plan with cfg, check plan_info, execute (twice with repeat), check output and buffers.
 * RUN_UNSUPPORTED: planning answered DLCONV_ERR_UNSUPPORTED properly (plan NULL, message set);
 * whether that is allowed is the caller's decision. */
static inline run_outcome run_case(const conv_data *cd, const run_cfg *c, run_result *res) {
  dlconv_options o;
  cfg_options(c, &o);
  memset(res, 0, sizeof *res);
  dlconv_plan *plan = (dlconv_plan *)(uintptr_t)0x10;   /* must come back NULL on failure */
  dlconv_status st = cd_plan(cd, &plan, &o);
  res->plan_status = st;
  if (st != DLCONV_OK) {
    const char *e = dlconv_last_error();
    int fine = plan == NULL && e && e[0];
    if (st == DLCONV_ERR_UNSUPPORTED && fine) {
      snprintf(res->msg, sizeof res->msg, "%s", e);
      return RUN_UNSUPPORTED;
    }
    snprintf(res->msg, sizeof res->msg, "plan -> %s (last_error \"%s\")%s; ", dlconv_status_string(st),
             e ? e : "(null)", plan ? ", *plan not set to NULL" : "");
    return RUN_FAIL;
  }
  int bad = check_info(cd, c, plan, &res->info, res->msg, sizeof res->msg);
  float *y1 = NULL, *y2 = NULL;
  bad |= execute_checked(cd, plan, c, c->repeat ? &y1 : NULL, res->msg, sizeof res->msg);
  if (c->repeat && !bad) {
    bad |= execute_checked(cd, plan, c, &y2, res->msg, sizeof res->msg);
    if (!bad && memcmp(y1, y2, cd->y_len * 4)) {
      bad = 1;
      size_t u = strlen(res->msg);
      snprintf(res->msg + u, sizeof res->msg - u, "second execute of the same plan differs bitwise; ");
    }
  }
  free(y1);
  free(y2);
  dlconv_plan_destroy(plan);
  return bad ? RUN_FAIL : RUN_PASS;
}

/* ------------------------------------------------------------------------------------------ */
/* Failure tally: print the first few in full, count the rest, assert once at the end.        */

typedef struct tally {
  long fails, printed, runs;
} tally;

#define TALLY_PRINT_MAX 40

static inline void tally_fail(tally *t, const char *fmt, ...) {
  t->fails++;
  if (t->printed >= TALLY_PRINT_MAX) return;
  t->printed++;
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL: ");
  vprintf(fmt, ap);
  printf("\n");
  fflush(stdout);
  va_end(ap);
}

static inline double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif /* DLCONV_TEST_COMMON_H */
