/* peer_onednn.c - oneDNN as a peer (see peer_onednn.h). */
#include "peer_onednn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dnnl.h>
#include <dnnl_debug.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "reference.h"

static dnnl_engine_t engine;
static dnnl_stream_t stream;

/* Everything one layer needs; NULL members are simply not there. */
typedef struct dnnl_layer {
  dnnl_primitive_desc_t pd;
  dnnl_primitive_t prim;
  dnnl_primitive_t to_prim, from_prim;   /* user <-> primitive layout, NULL when they agree */
  dnnl_memory_t u_src, u_wei, u_dst, bias, p_src, p_wei, p_dst;
  void *y;                               /* user-layout output */
  const char *impl;
} dnnl_layer;

/* The dims of a layer as oneDNN sees them, and the user's format tags. */
typedef struct dnnl_shape {
  int nd_act, nd_wei;
  dnnl_dims_t src, wei, dst, bias;
  dnnl_format_tag_t act_tag, wei_tag;
} dnnl_shape;

#define TRY(call)                      \
  do {                                 \
    dnnl_status_t s_ = (call);         \
    if (s_ != dnnl_success) return s_; \
  } while (0)

static const char *isa_name(dnnl_cpu_isa_t isa) {
  switch (isa) {
  case dnnl_cpu_isa_avx2: return "avx2";
  case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
  case dnnl_cpu_isa_avx512_core: return "avx512_core";
  case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
  case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
  case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
  default: return "other";
  }
}

static dnnl_status_t start(void) {
  if (engine) return dnnl_success;
  TRY(dnnl_engine_create(&engine, dnnl_cpu, 0));
  return dnnl_stream_create(&stream, engine, dnnl_stream_default_flags);
}

int bench_onednn_available(char *desc, size_t len) {
  dnnl_status_t s = start();
  if (s != dnnl_success) {
    snprintf(desc, len, "oneDNN cannot start: %s", dnnl_status2str(s));
    return 0;
  }
  const dnnl_version_t *v = dnnl_version();
  snprintf(desc, len, "oneDNN %d.%d.%d, isa %s", v->major, v->minor, v->patch, isa_name(dnnl_get_effective_cpu_isa()));
  return 1;
}

void bench_onednn_shutdown(void) {
  if (stream) dnnl_stream_destroy(stream);
  if (engine) dnnl_engine_destroy(engine);
  stream = NULL;
  engine = NULL;
}

static void shape_of(const bench_layer *l, dlconv_layout lay, dnnl_shape *s) {
  memset(s, 0, sizeof *s);
  s->bias[0] = l->c_out;
  if (l->is_dense) {
    s->nd_act = s->nd_wei = 2;
    s->src[0] = s->dst[0] = l->n;
    s->src[1] = s->wei[1] = l->c_in;
    s->dst[1] = s->wei[0] = l->c_out;
    s->act_tag = dnnl_nc;
    s->wei_tag = dnnl_oi;
    return;
  }
  s->nd_act = 4;
  dnnl_dim_t src[4] = {l->n, l->c_in, l->h_in, l->w_in}, dst[4] = {l->n, l->c_out, l->h_out, l->w_out};
  memcpy(s->src, src, sizeof src);
  memcpy(s->dst, dst, sizeof dst);
  s->act_tag = lay == DLCONV_NHWC ? dnnl_nhwc : dnnl_nchw;
  if (l->groups == 1) {
    dnnl_dim_t w[4] = {l->c_out, l->c_in, l->k_h, l->k_w};
    memcpy(s->wei, w, sizeof w);
    s->nd_wei = 4;
    s->wei_tag = dnnl_oihw;
  } else {   /* goihw: the same bytes as OIHW with the groups split out */
    dnnl_dim_t w[5] = {l->groups, l->c_out / l->groups, l->c_in / l->groups, l->k_h, l->k_w};
    memcpy(s->wei, w, sizeof w);
    s->nd_wei = 5;
    s->wei_tag = dnnl_goihw;
  }
}

static dnnl_status_t make_pd(const bench_layer *l, const dnnl_shape *s, dnnl_primitive_desc_t *pd) {
  dnnl_memory_desc_t src, wei, dst, bias;
  TRY(dnnl_memory_desc_init_by_tag(&src, s->nd_act, s->src, dnnl_f32, dnnl_format_tag_any));
  TRY(dnnl_memory_desc_init_by_tag(&wei, s->nd_wei, s->wei, dnnl_f32, dnnl_format_tag_any));
  TRY(dnnl_memory_desc_init_by_tag(&dst, s->nd_act, s->dst, dnnl_f32, dnnl_format_tag_any));
  TRY(dnnl_memory_desc_init_by_tag(&bias, 1, s->bias, dnnl_f32, dnnl_x));
  const dnnl_memory_desc_t *b = l->bias ? &bias : NULL;
  if (l->is_dense) {
    dnnl_inner_product_desc_t ip;
    TRY(dnnl_inner_product_forward_desc_init(&ip, dnnl_forward_inference, &src, &wei, b, &dst));
    return dnnl_primitive_desc_create(pd, &ip, NULL, engine, NULL);
  }
  dnnl_convolution_desc_t cd;
  dnnl_dims_t strides = {l->stride_h, l->stride_w}, dil = {l->dil_h - 1, l->dil_w - 1};
  dnnl_dims_t pad = {l->pad_h, l->pad_w};
  TRY(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_auto, &src, &wei, b,
                                                 &dst, strides, dil, pad, pad));
  return dnnl_primitive_desc_create(pd, &cd, NULL, engine, NULL);
}

static dnnl_status_t user_memory(dnnl_memory_t *m, int nd, const dnnl_dims_t dims, dnnl_format_tag_t tag,
                                 void *data) {
  dnnl_memory_desc_t md;
  TRY(dnnl_memory_desc_init_by_tag(&md, nd, dims, dnnl_f32, tag));
  return dnnl_memory_create(m, &md, engine, data);
}

static dnnl_status_t prim_memory(dnnl_memory_t *m, const dnnl_layer *L, dnnl_query_t what) {
  return dnnl_memory_create(m, dnnl_primitive_desc_query_md(L->pd, what, 0), engine, DNNL_MEMORY_ALLOCATE);
}

static const dnnl_memory_desc_t *md_of(dnnl_memory_t m) {
  const dnnl_memory_desc_t *md = NULL;
  dnnl_memory_get_memory_desc(m, &md);
  return md;
}

/* A reorder primitive from one memory's layout to another's; NULL when they are the same. */
static dnnl_status_t make_reorder(dnnl_primitive_t *r, dnnl_memory_t from, dnnl_memory_t to) {
  *r = NULL;
  if (dnnl_memory_desc_equal(md_of(from), md_of(to))) return dnnl_success;
  dnnl_primitive_desc_t rpd;
  TRY(dnnl_reorder_primitive_desc_create(&rpd, md_of(from), engine, md_of(to), engine, NULL));
  dnnl_status_t s = dnnl_primitive_create(r, rpd);
  dnnl_primitive_desc_destroy(rpd);
  return s;
}

static dnnl_status_t run_reorder(dnnl_primitive_t r, dnnl_memory_t from, dnnl_memory_t to) {
  dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
  return dnnl_primitive_execute(r, stream, 2, args);
}

/* Copies between layouts once, outside any timing. */
static dnnl_status_t reorder_once(dnnl_memory_t from, dnnl_memory_t to) {
  dnnl_primitive_t r;
  TRY(make_reorder(&r, from, to));
  if (!r) {
    void *a, *b;
    TRY(dnnl_memory_get_data_handle(from, &a));
    TRY(dnnl_memory_get_data_handle(to, &b));
    memcpy(b, a, dnnl_memory_desc_get_size(md_of(from)));
    return dnnl_success;
  }
  dnnl_status_t s = run_reorder(r, from, to);
  if (s == dnnl_success) s = dnnl_stream_wait(stream);
  dnnl_primitive_destroy(r);
  return s;
}

static dnnl_status_t setup(const bench_layer *l, const bench_data *d, dnnl_layer *L) {
  dnnl_shape s;
  shape_of(l, d->layout, &s);
  TRY(make_pd(l, &s, &L->pd));
  L->impl = "?";
  dnnl_primitive_desc_query(L->pd, dnnl_query_impl_info_str, 0, &L->impl);
  if (!(L->y = bench_alloc(d->y_bytes))) return dnnl_out_of_memory;
  TRY(user_memory(&L->u_src, s.nd_act, s.src, s.act_tag, d->x));
  TRY(user_memory(&L->u_wei, s.nd_wei, s.wei, s.wei_tag, d->w));
  TRY(user_memory(&L->u_dst, s.nd_act, s.dst, s.act_tag, L->y));
  if (l->bias) TRY(user_memory(&L->bias, 1, s.bias, dnnl_x, d->b));
  TRY(prim_memory(&L->p_src, L, dnnl_query_src_md));
  TRY(prim_memory(&L->p_wei, L, dnnl_query_weights_md));
  TRY(prim_memory(&L->p_dst, L, dnnl_query_dst_md));
  TRY(reorder_once(L->u_wei, L->p_wei));
  TRY(dnnl_primitive_create(&L->prim, L->pd));
  TRY(make_reorder(&L->to_prim, L->u_src, L->p_src));
  return make_reorder(&L->from_prim, L->p_dst, L->u_dst);
}

static void teardown(dnnl_layer *L) {
  dnnl_primitive_t prims[] = {L->prim, L->to_prim, L->from_prim};
  dnnl_memory_t mems[] = {L->u_src, L->u_wei, L->u_dst, L->bias, L->p_src, L->p_wei, L->p_dst};
  for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
    if (prims[i]) dnnl_primitive_destroy(prims[i]);
  for (size_t i = 0; i < sizeof mems / sizeof mems[0]; i++)
    if (mems[i]) dnnl_memory_destroy(mems[i]);
  if (L->pd) dnnl_primitive_desc_destroy(L->pd);
  free(L->y);
  memset(L, 0, sizeof *L);
}

/* One timed call: optional input reorder, the primitive, optional output reorder, wait. */
typedef struct dnnl_call {
  const dnnl_layer *L;
  dnnl_primitive_t before, after;
  dnnl_memory_t src, dst;
} dnnl_call;

static int call_once(void *arg) {
  const dnnl_call *c = arg;
  const dnnl_layer *L = c->L;
  dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, c->src}, {DNNL_ARG_WEIGHTS, L->p_wei}, {DNNL_ARG_DST, c->dst},
                             {DNNL_ARG_BIAS, L->bias}};
  if (c->before && run_reorder(c->before, L->u_src, L->p_src) != dnnl_success) return 1;
  if (dnnl_primitive_execute(L->prim, stream, L->bias ? 4 : 3, args) != dnnl_success) return 1;
  if (c->after && run_reorder(c->after, L->p_dst, L->u_dst) != dnnl_success) return 1;
  return dnnl_stream_wait(stream) != dnnl_success;
}

static void finish(const bench_layer *l, const bench_data *d, const bench_options *o, const dnnl_layer *L,
                   bench_measure *m) {
  snprintf(m->impl, sizeof m->impl, "%s", L->impl);
  m->status = BENCH_OK;
  if (!o->verify) return;
  bench_check chk;
  bench_check_output(l, d, L->y, d->layout, o->quick, &chk);
  m->err = chk.err;
  m->tol = chk.tol;
  if (!chk.ok) m->status = BENCH_WRONG;
}

static void time_blocked(const bench_layer *l, const bench_data *d, const bench_options *o, const bench_timing *t,
                         dnnl_layer *L, bench_measure *m) {
  dnnl_call c = {L, NULL, NULL, L->p_src, L->p_dst};
  memset(L->y, 0xff, d->y_bytes);
  if (reorder_once(L->u_src, L->p_src) != dnnl_success || bench_time_calls(call_once, &c, t, &m->ms, &m->runs) ||
      reorder_once(L->p_dst, L->u_dst) != dnnl_success) {
    m->status = BENCH_ERROR;
    snprintf(m->note, sizeof m->note, "oneDNN failed while running");
    return;
  }
  finish(l, d, o, L, m);
}

static void time_user(const bench_layer *l, const bench_data *d, const bench_options *o, const bench_timing *t,
                      dnnl_layer *L, bench_measure *m) {
  dnnl_call c = {L, L->to_prim, L->from_prim, L->to_prim ? L->p_src : L->u_src, L->from_prim ? L->p_dst : L->u_dst};
  memset(L->y, 0xff, d->y_bytes);
  if (bench_time_calls(call_once, &c, t, &m->ms, &m->runs)) {
    m->status = BENCH_ERROR;
    snprintf(m->note, sizeof m->note, "oneDNN failed while running");
    return;
  }
  finish(l, d, o, L, m);
}

static void set_all(bench_measure *a, bench_measure *b, bench_status s, const char *note) {
  a->status = b->status = s;
  snprintf(a->note, sizeof a->note, "%s", note);
  snprintf(b->note, sizeof b->note, "%s", note);
}

void bench_onednn_run(const bench_layer *l, const bench_data *d, int threads, const bench_options *o,
                      const bench_timing *t, bench_measure *blocked, bench_measure *user) {
  memset(blocked, 0, sizeof *blocked);
  memset(user, 0, sizeof *user);
  blocked->err = user->err = -1;
  if (d->dtype != DLCONV_F32) {
    set_all(blocked, user, BENCH_SKIPPED, "the oneDNN peer runs f32 only");
    return;
  }
  if (start() != dnnl_success) {
    set_all(blocked, user, BENCH_SKIPPED, "oneDNN cannot start");
    return;
  }
#ifdef _OPENMP
  omp_set_num_threads(threads);   /* before the primitive: oneDNN blocks its work for this count */
#else
  (void)threads;
#endif
  dnnl_layer L;
  memset(&L, 0, sizeof L);
  double t0 = bench_now();
  dnnl_status_t s = setup(l, d, &L);
  blocked->plan_ms = user->plan_ms = 1e3 * (bench_now() - t0);
  if (s != dnnl_success) {
    char note[128];
    snprintf(note, sizeof note, "oneDNN: %s", dnnl_status2str(s));
    set_all(blocked, user, s == dnnl_unimplemented ? BENCH_SKIPPED : BENCH_ERROR, note);
  } else {
    time_blocked(l, d, o, t, &L, blocked);
    time_user(l, d, o, t, &L, user);
  }
  teardown(&L);
}
