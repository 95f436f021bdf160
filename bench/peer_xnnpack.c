/* peer_xnnpack.c - XNNPACK as a peer (see peer_xnnpack.h). */
#include "peer_xnnpack.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthreadpool.h>
#include <xnnpack.h>

#include "reference.h"

/* The errors allowed to XNNPACK's own arithmetic (see bench_xnnpack_run). */
#define LOOSE_INT8_UNITS 4.0
#define LOOSE_F16_REL 0.05

static int started;                /* 1: xnn_initialize succeeded; -1: it failed */
static pthreadpool_t pool;         /* NULL for one thread */
static int pool_threads = 1;

static const char *status_name(enum xnn_status s) {
  switch (s) {
  case xnn_status_success: return "success";
  case xnn_status_uninitialized: return "uninitialized";
  case xnn_status_invalid_parameter: return "invalid parameter";
  case xnn_status_invalid_state: return "invalid state";
  case xnn_status_unsupported_parameter: return "unsupported parameter";
  case xnn_status_unsupported_hardware: return "unsupported hardware";
  case xnn_status_out_of_memory: return "out of memory";
  default: return "failure";
  }
}

static int start(void) {
  if (!started) started = xnn_initialize(NULL) == xnn_status_success ? 1 : -1;
  return started == 1;
}

int bench_xnnpack_available(char *desc, size_t len) {
  if (!start()) {
    snprintf(desc, len, "XNNPACK cannot start on this CPU (xnn_initialize failed)");
    return 0;
  }
  snprintf(desc, len, "XNNPACK (libXNNPACK, NHWC operators, pthreadpool)");
  return 1;
}

/* Each pool thread pins itself to one CPU; the spin keeps a thread from taking a second item
   before every item has started, so the threads and CPUs pair up one to one. */
static int pin_arrived, pin_total;
static void pin_item(void *arg, size_t i) {
  (void)arg;
  cpu_set_t cs;
  CPU_ZERO(&cs);
  CPU_SET((int)i, &cs);
  pthread_setaffinity_np(pthread_self(), sizeof cs, &cs);
  __atomic_add_fetch(&pin_arrived, 1, __ATOMIC_SEQ_CST);
  double t0 = bench_now();
  while (__atomic_load_n(&pin_arrived, __ATOMIC_SEQ_CST) < pin_total && bench_now() - t0 < 1.0) {
  }
}

static pthreadpool_t pool_for(int threads) {
  if (threads == pool_threads) return pool;
  if (pool) pthreadpool_destroy(pool);
  pool = NULL;
  pool_threads = threads;
  if (threads > 1 && (pool = pthreadpool_create((size_t)threads))) {
    pin_arrived = 0;
    pin_total = threads;
    pthreadpool_parallelize_1d(pool, pin_item, NULL, (size_t)threads, 0);
  }
  return pool;
}

void bench_xnnpack_shutdown(void) {
  if (pool) pthreadpool_destroy(pool);
  pool = NULL;
  pool_threads = 1;
  if (started == 1) xnn_deinitialize();
  started = 0;
}

/* The layer's operator and its buffers. */
typedef struct xnn_layer {
  xnn_operator_t op;
  void *x, *w, *y;     /* x: NHWC (NULL: d->x is already); w: XNNPACK's weight order */
  const char *kind;    /* "f32", "qu8", "qs8", "f16" */
} xnn_layer;

/* d->x in NHWC: itself, or a transposed copy made here. */
static const void *input_nhwc(const bench_layer *l, const bench_data *d, xnn_layer *L) {
  if (d->layout == DLCONV_NHWC || l->is_dense || (l->h_in == 1 && l->w_in == 1)) return d->x;
  size_t es = bench_dtype_size(d->dtype);
  if (!(L->x = bench_alloc(bench_x_count(l) * es + 64))) return NULL;
  const char *src = d->x;
  char *dst = L->x;
  for (int n = 0; n < l->n; n++)
    for (int c = 0; c < l->c_in; c++)
      for (int h = 0; h < l->h_in; h++)
        for (int w = 0; w < l->w_in; w++)
          memcpy(dst + es * bench_index(DLCONV_NHWC, l->c_in, l->h_in, l->w_in, n, c, h, w),
                 src + es * bench_index(DLCONV_NCHW, l->c_in, l->h_in, l->w_in, n, c, h, w), es);
  return L->x;
}

/* The bench's weights ([c_out][c_in/g][k_h][k_w]) in XNNPACK's [c_out][k_h][k_w][c_in/g], each
   element of es bytes; u8_shift: s8 weights made u8 by adding 128. */
static void *weights_ohwi(const bench_layer *l, const bench_data *d, int u8_shift) {
  size_t es = bench_dtype_size(d->dtype == DLCONV_U8 || d->dtype == DLCONV_S8 ? DLCONV_S8 : d->dtype);
  int cig = l->c_in / l->groups;
  char *w = bench_alloc(bench_w_count(l) * es);
  if (!w) return NULL;
  const char *src = d->w;
  for (int oc = 0; oc < l->c_out; oc++)
    for (int ic = 0; ic < cig; ic++)
      for (int r = 0; r < l->k_h; r++)
        for (int s = 0; s < l->k_w; s++) {
          size_t from = (((size_t)oc * cig + ic) * l->k_h + r) * l->k_w + s;
          size_t to = (((size_t)oc * l->k_h + r) * l->k_w + s) * cig + ic;
          memcpy(w + to * es, src + from * es, es);
          if (u8_shift) w[to] = (char)(uint8_t)((int)((const int8_t *)src)[from] + 128);
        }
  return w;
}

static enum xnn_status create_f32(const bench_layer *l, const bench_data *d, xnn_layer *L) {
  const float *b = l->bias ? d->b : NULL;
  if (l->is_dense)
    return xnn_create_fully_connected_nc_f32(l->c_in, l->c_out, l->c_in, l->c_out, L->w, b, -INFINITY, INFINITY, 0,
                                             &L->op);
  return xnn_create_convolution2d_nhwc_f32(l->pad_h, l->pad_w, l->pad_h, l->pad_w, l->k_h, l->k_w, l->stride_h,
                                           l->stride_w, l->dil_h, l->dil_w, l->groups, l->c_in / l->groups,
                                           l->c_out / l->groups, l->c_in, l->c_out, L->w, b, -INFINITY, INFINITY, 0,
                                           &L->op);
}

static enum xnn_status create_f16(const bench_layer *l, const bench_data *d, xnn_layer *L) {
  const void *b = l->bias ? d->b : NULL;
  if (l->is_dense)
    return xnn_create_fully_connected_nc_f16(l->c_in, l->c_out, l->c_in, l->c_out, L->w, b, -INFINITY, INFINITY, 0,
                                             &L->op);
  return xnn_create_convolution2d_nhwc_f16(l->pad_h, l->pad_w, l->pad_h, l->pad_w, l->k_h, l->k_w, l->stride_h,
                                           l->stride_w, l->dil_h, l->dil_w, l->groups, l->c_in / l->groups,
                                           l->c_out / l->groups, l->c_in, l->c_out, L->w, b, -INFINITY, INFINITY, 0,
                                           &L->op);
}

static enum xnn_status create_qu8(const bench_layer *l, const bench_data *d, xnn_layer *L) {
  const dlconv_quant *q = &d->quant;
  const int32_t *b = l->bias ? d->b : NULL;
  uint8_t xz = (uint8_t)q->x_zero_point, yz = (uint8_t)q->y_zero_point;
  if (l->is_dense)
    return xnn_create_fully_connected_nc_qu8(l->c_in, l->c_out, l->c_in, l->c_out, xz, q->x_scale, 128,
                                             q->w_scales[0], L->w, b, yz, q->y_scale, 0, 255, 0, &L->op);
  return xnn_create_convolution2d_nhwc_qu8(l->pad_h, l->pad_w, l->pad_h, l->pad_w, l->k_h, l->k_w, l->stride_h,
                                           l->stride_w, l->dil_h, l->dil_w, l->groups, l->c_in / l->groups,
                                           l->c_out / l->groups, l->c_in, l->c_out, xz, q->x_scale, 128,
                                           q->w_scales[0], L->w, b, yz, q->y_scale, 0, 255, 0, &L->op);
}

static enum xnn_status create_qs8(const bench_layer *l, const bench_data *d, xnn_layer *L) {
  const dlconv_quant *q = &d->quant;
  const int32_t *b = l->bias ? d->b : NULL;
  int8_t xz = (int8_t)q->x_zero_point, yz = (int8_t)q->y_zero_point;
  if (l->is_dense)
    return xnn_create_fully_connected_nc_qs8(l->c_in, l->c_out, l->c_in, l->c_out, xz, q->x_scale, q->w_scales[0],
                                             L->w, b, yz, q->y_scale, -128, 127, 0, &L->op);
  return xnn_create_convolution2d_nhwc_qs8(l->pad_h, l->pad_w, l->pad_h, l->pad_w, l->k_h, l->k_w, l->stride_h,
                                           l->stride_w, l->dil_h, l->dil_w, l->groups, l->c_in / l->groups,
                                           l->c_out / l->groups, l->c_in, l->c_out, xz, q->x_scale, q->w_scales[0],
                                           L->w, b, yz, q->y_scale, -128, 127, 0, &L->op);
}

static enum xnn_status setup_op(const bench_layer *l, const bench_data *d, const void *x, xnn_layer *L,
                                pthreadpool_t tp) {
  size_t n = (size_t)l->n;
  switch (d->dtype) {
  case DLCONV_F32:
    return l->is_dense ? xnn_setup_fully_connected_nc_f32(L->op, n, x, L->y, tp)
                       : xnn_setup_convolution2d_nhwc_f32(L->op, n, l->h_in, l->w_in, x, L->y, tp);
  case DLCONV_F16:
    return l->is_dense ? xnn_setup_fully_connected_nc_f16(L->op, n, x, L->y, tp)
                       : xnn_setup_convolution2d_nhwc_f16(L->op, n, l->h_in, l->w_in, x, L->y, tp);
  case DLCONV_U8:
    return l->is_dense ? xnn_setup_fully_connected_nc_qu8(L->op, n, x, L->y, tp)
                       : xnn_setup_convolution2d_nhwc_qu8(L->op, n, l->h_in, l->w_in, x, L->y, tp);
  case DLCONV_S8:
    return l->is_dense ? xnn_setup_fully_connected_nc_qs8(L->op, n, x, L->y, tp)
                       : xnn_setup_convolution2d_nhwc_qs8(L->op, n, l->h_in, l->w_in, x, L->y, tp);
  default: return xnn_status_unsupported_parameter;
  }
}

typedef struct xnn_call {
  xnn_operator_t op;
  pthreadpool_t tp;
} xnn_call;

static int call_once(void *arg) {
  const xnn_call *c = arg;
  return xnn_run_operator(c->op, c->tp) != xnn_status_success;
}

static void teardown(xnn_layer *L) {
  if (L->op) xnn_delete_operator(L->op);
  free(L->x);
  free(L->w);
  free(L->y);
  memset(L, 0, sizeof *L);
}

/* Everything up to the timing: 0, or the failing status with m's note set. */
static enum xnn_status setup(const bench_layer *l, const bench_data *d, pthreadpool_t tp, xnn_layer *L,
                             bench_measure *m) {
  const int int8 = d->dtype == DLCONV_U8 || d->dtype == DLCONV_S8;
  if (int8 && d->quant.n_w_scales != 1) {
    snprintf(m->note, sizeof m->note, "XNNPACK's qu8/qs8 take one weight scale; the bench gave one per channel");
    return xnn_status_unsupported_parameter;
  }
  const void *x = input_nhwc(l, d, L);
  L->w = weights_ohwi(l, d, d->dtype == DLCONV_U8);
  L->y = bench_alloc(d->y_bytes + 64);
  if (!x || !L->w || !L->y) return xnn_status_out_of_memory;
  enum xnn_status s;
  switch (d->dtype) {
  case DLCONV_F32: L->kind = "f32"; s = create_f32(l, d, L); break;
  case DLCONV_F16: L->kind = "f16"; s = create_f16(l, d, L); break;
  case DLCONV_U8: L->kind = "qu8"; s = create_qu8(l, d, L); break;
  case DLCONV_S8: L->kind = "qs8"; s = create_qs8(l, d, L); break;
  default: return xnn_status_unsupported_parameter;
  }
  if (s == xnn_status_success) s = setup_op(l, d, x, L, tp);
  if (s != xnn_status_success)
    snprintf(m->note, sizeof m->note, "XNNPACK %s %s: %s", L->kind ? L->kind : "?",
             l->is_dense ? "fully connected" : "convolution", status_name(s));
  return s;
}

void bench_xnnpack_run(const bench_layer *l, const bench_data *d, int threads, const bench_options *o,
                       const bench_timing *t, bench_measure *m) {
  memset(m, 0, sizeof *m);
  m->err = -1;
  if (!start()) {
    m->status = BENCH_SKIPPED;
    snprintf(m->note, sizeof m->note, "XNNPACK cannot start on this CPU");
    return;
  }
  pthreadpool_t tp = pool_for(threads);
  xnn_layer L;
  memset(&L, 0, sizeof L);
  double t0 = bench_now();
  enum xnn_status s = setup(l, d, tp, &L, m);
  m->plan_ms = 1e3 * (bench_now() - t0);
  if (s != xnn_status_success) {
    /* what XNNPACK cannot do here is skipped; anything else is an error */
    m->status = s == xnn_status_unsupported_hardware || s == xnn_status_unsupported_parameter ? BENCH_SKIPPED
                                                                                              : BENCH_ERROR;
    teardown(&L);
    return;
  }
  snprintf(m->impl, sizeof m->impl, "xnnpack_%s", L.kind);
  memset(L.y, 0xff, d->y_bytes);   /* NaN (f32, f16) or 255 / -1: a missed output shows */
  xnn_call c = {L.op, tp};
  if (bench_time_calls(call_once, &c, t, &m->ms, &m->runs)) {
    m->status = BENCH_ERROR;
    snprintf(m->note, sizeof m->note, "XNNPACK failed while running");
    teardown(&L);
    return;
  }
  m->status = BENCH_OK;
  if (o->verify) {
    bench_check chk;
    bench_check_output(l, d, L.y, l->is_dense ? d->layout : DLCONV_NHWC, o->quick, &chk);
    m->err = chk.err;
    m->tol = chk.tol;
    /* XNNPACK's int8 requantisation and its f16 arithmetic (f16 sums) are its own: a small
       excess over the bench's tolerance is reported, a wrong setup (errors of the size of the
       outputs) is not */
    const int int8 = d->dtype == DLCONV_U8 || d->dtype == DLCONV_S8;
    const double loose = int8 ? LOOSE_INT8_UNITS : d->dtype == DLCONV_F16 ? LOOSE_F16_REL : chk.tol;
    if (!chk.ok && chk.err <= loose)
      snprintf(m->note, sizeof m->note, "XNNPACK %s %s: err %.3g reported, held to %.3g instead of %.3g", L.kind,
               int8 ? "requantises its own way" : "sums in f16", chk.err, loose, chk.tol);
    else if (!chk.ok)
      m->status = BENCH_WRONG;
  }
  teardown(&L);
}
