/* peer_onednn.c - oneDNN as a peer (see peer_onednn.h).
 *
 * dtypes: f32 as f32; u8/s8 as oneDNN int8 (src and dst u8 or s8, weights s8, bias s32) with
 * output scales x_scale * w_scale[oc] / y_scale (mask 0 or per dst channel) and the bench's
 * zero points as attributes, so its output is checked like ours. oneDNN 2.6's inner product
 * takes no zero points: there x's is folded into the bias and y's becomes a linear post-op.
 * Where a convolution refuses them, it runs with zero points 0, unchecked, and says so.
 * f16 is tried and reported as skipped when oneDNN has no such primitive here. */
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
  float *scales;                         /* int8 output scales, one or c_out */
  int32_t *fold_bias;                    /* inner product: bias - x_zero_point * sum of w per oc */
  const char *note;                      /* how the quantisation was given, when not as asked */
  int unchecked;                         /* the output cannot match the reference */
  int lossy;                             /* int8 without VNNI: oneDNN's sums may saturate */
} dnnl_layer;

/* The dims of a layer as oneDNN sees them, and the user's format tags. */
typedef struct dnnl_shape {
  int nd_act, nd_wei;
  dnnl_dims_t src, wei, dst, bias;
  dnnl_format_tag_t act_tag, wei_tag;
  dnnl_data_type_t act_dt, wei_dt, bias_dt;
} dnnl_shape;

/* How an int8 layer's zero points reach oneDNN, in the order they are tried. */
typedef enum zp_mode { ZP_ATTR, ZP_FOLD, ZP_NONE } zp_mode;

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

/* Without VNNI, oneDNN's int8 kernels add u8 x s8 pairs with vpmaddubsw, which saturates at
   int16 (s8 sources are shifted to u8; some kernels halve the weights instead), so on
   full-range data their output is off by several units. */
static int has_vnni(dnnl_cpu_isa_t isa) {
  return isa == dnnl_cpu_isa_avx2_vnni || isa == dnnl_cpu_isa_avx512_core_vnni ||
         isa == dnnl_cpu_isa_avx512_core_bf16 || isa == dnnl_cpu_isa_avx512_core_amx;
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

static int is_int8(dlconv_dtype t) { return t == DLCONV_U8 || t == DLCONV_S8; }

/* The bench's dtype in oneDNN's terms: 0 when there is no counterpart. Weights and bias
   follow data.c: int8 weights are always s8, the int8 bias s32. */
static int types_of(dlconv_dtype t, dnnl_shape *s) {
  switch (t) {
  case DLCONV_F32: s->act_dt = s->wei_dt = s->bias_dt = dnnl_f32; return 1;
  case DLCONV_F16: s->act_dt = s->wei_dt = s->bias_dt = dnnl_f16; return 1;
  case DLCONV_U8: s->act_dt = dnnl_u8; break;
  case DLCONV_S8: s->act_dt = dnnl_s8; break;
  default: return 0;
  }
  s->wei_dt = dnnl_s8;
  s->bias_dt = dnnl_s32;
  return 1;
}

static void shape_of(const bench_layer *l, dlconv_layout lay, dnnl_shape *s) {
  dnnl_data_type_t act = s->act_dt, wei = s->wei_dt, bias = s->bias_dt;
  memset(s, 0, sizeof *s);
  s->act_dt = act, s->wei_dt = wei, s->bias_dt = bias;
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

static int has_bias(const bench_layer *l, const dnnl_layer *L) { return l->bias || L->fold_bias; }

static dnnl_status_t make_pd(const bench_layer *l, const dnnl_shape *s, const dnnl_layer *L,
                             const_dnnl_primitive_attr_t attr, dnnl_primitive_desc_t *pd) {
  dnnl_memory_desc_t src, wei, dst, bias;
  TRY(dnnl_memory_desc_init_by_tag(&src, s->nd_act, s->src, s->act_dt, dnnl_format_tag_any));
  TRY(dnnl_memory_desc_init_by_tag(&wei, s->nd_wei, s->wei, s->wei_dt, dnnl_format_tag_any));
  TRY(dnnl_memory_desc_init_by_tag(&dst, s->nd_act, s->dst, s->act_dt, dnnl_format_tag_any));
  TRY(dnnl_memory_desc_init_by_tag(&bias, 1, s->bias, s->bias_dt, dnnl_x));
  const dnnl_memory_desc_t *b = has_bias(l, L) ? &bias : NULL;
  if (l->is_dense) {
    dnnl_inner_product_desc_t ip;
    TRY(dnnl_inner_product_forward_desc_init(&ip, dnnl_forward_inference, &src, &wei, b, &dst));
    return dnnl_primitive_desc_create(pd, &ip, attr, engine, NULL);
  }
  dnnl_convolution_desc_t cd;
  dnnl_dims_t strides = {l->stride_h, l->stride_w}, dil = {l->dil_h - 1, l->dil_w - 1};
  dnnl_dims_t pad = {l->pad_h, l->pad_w};
  TRY(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_auto, &src, &wei, b,
                                                 &dst, strides, dil, pad, pad));
  return dnnl_primitive_desc_create(pd, &cd, attr, engine, NULL);
}

/* Attributes for one try: output scales, and the zero points as `mode` gives them. */
static dnnl_status_t make_attr(const bench_data *d, const dnnl_layer *L, zp_mode mode, dnnl_primitive_attr_t *attr) {
  const dlconv_quant *q = &d->quant;
  TRY(dnnl_primitive_attr_create(attr));
  int per_oc = q->n_w_scales > 1;
  TRY(dnnl_primitive_attr_set_output_scales(*attr, per_oc ? q->n_w_scales : 1, per_oc ? 1 << 1 : 0, L->scales));
  if (mode == ZP_ATTR) {
    if (q->x_zero_point) TRY(dnnl_primitive_attr_set_zero_points(*attr, DNNL_ARG_SRC, 1, 0, &q->x_zero_point));
    if (q->y_zero_point) TRY(dnnl_primitive_attr_set_zero_points(*attr, DNNL_ARG_DST, 1, 0, &q->y_zero_point));
  } else if (mode == ZP_FOLD && q->y_zero_point) {
    /* applied after the scales and before rounding: round(v + zp) = round(v) + zp */
    dnnl_post_ops_t po;
    TRY(dnnl_post_ops_create(&po));
    dnnl_status_t s = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_linear, 1.0f, (float)q->y_zero_point);
    if (s == dnnl_success) s = dnnl_primitive_attr_set_post_ops(*attr, po);
    dnnl_post_ops_destroy(po);
    return s;
  }
  return dnnl_success;
}

/* bias - x_zero_point * sum_i w[oc][i], exact in s32: what x's zero point takes off each output. */
static int32_t *folded_bias(const bench_layer *l, const bench_data *d) {
  int32_t *fb = bench_alloc((size_t)l->c_out * sizeof *fb);
  if (!fb) return NULL;
  const int8_t *w = d->w;
  for (int oc = 0; oc < l->c_out; oc++) {
    int64_t sum = 0;
    for (int i = 0; i < l->c_in; i++) sum += w[(size_t)oc * l->c_in + i];
    fb[oc] = (int32_t)((l->bias ? ((const int32_t *)d->b)[oc] : 0) - (int64_t)d->quant.x_zero_point * sum);
  }
  return fb;
}

/* The int8 primitive descriptor: zero points as attributes, else (inner product) folded,
   else left out and the output unchecked. */
static dnnl_status_t make_int8_pd(const bench_layer *l, const bench_data *d, const dnnl_shape *s, dnnl_layer *L) {
  const dlconv_quant *q = &d->quant;
  if (!(L->scales = bench_alloc((size_t)q->n_w_scales * sizeof *L->scales))) return dnnl_out_of_memory;
  for (int i = 0; i < q->n_w_scales; i++) L->scales[i] = (float)((double)q->x_scale * q->w_scales[i] / q->y_scale);
  int has_zp = q->x_zero_point || q->y_zero_point;
  dnnl_status_t st = dnnl_unimplemented;
  for (zp_mode mode = ZP_ATTR; mode <= ZP_NONE && st == dnnl_unimplemented; mode++) {
    if (mode > ZP_ATTR && !has_zp) break;
    if (mode == ZP_FOLD && !l->is_dense) continue;   /* padding taps make a fold inexact */
    free(L->fold_bias);
    L->fold_bias = NULL;
    if (mode == ZP_FOLD && q->x_zero_point && !(L->fold_bias = folded_bias(l, d))) return dnnl_out_of_memory;
    dnnl_primitive_attr_t attr;
    TRY(make_attr(d, L, mode, &attr));
    st = make_pd(l, s, L, attr, &L->pd);
    dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success) continue;
    if (mode == ZP_FOLD) L->note = "zero points: x's folded into the s32 bias, y's a linear post-op (no zp attr)";
    if (mode == ZP_NONE) {
      L->note = "oneDNN refused the zero points: ran with 0, output not checked";
      L->unchecked = 1;
    }
  }
  return st;
}

static dnnl_status_t user_memory(dnnl_memory_t *m, int nd, const dnnl_dims_t dims, dnnl_data_type_t dt,
                                 dnnl_format_tag_t tag, void *data) {
  dnnl_memory_desc_t md;
  TRY(dnnl_memory_desc_init_by_tag(&md, nd, dims, dt, tag));
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
  types_of(d->dtype, &s);
  shape_of(l, d->layout, &s);
  if (is_int8(d->dtype)) TRY(make_int8_pd(l, d, &s, L));
  else TRY(make_pd(l, &s, L, NULL, &L->pd));
  L->impl = "?";
  dnnl_primitive_desc_query(L->pd, dnnl_query_impl_info_str, 0, &L->impl);
  L->lossy = is_int8(d->dtype) && !has_vnni(dnnl_get_effective_cpu_isa());
  if (!(L->y = bench_alloc(d->y_bytes))) return dnnl_out_of_memory;
  TRY(user_memory(&L->u_src, s.nd_act, s.src, s.act_dt, s.act_tag, d->x));
  TRY(user_memory(&L->u_wei, s.nd_wei, s.wei, s.wei_dt, s.wei_tag, d->w));
  TRY(user_memory(&L->u_dst, s.nd_act, s.dst, s.act_dt, s.act_tag, L->y));
  if (has_bias(l, L)) TRY(user_memory(&L->bias, 1, s.bias, s.bias_dt, dnnl_x, L->fold_bias ? L->fold_bias : d->b));
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
  free(L->scales);
  free(L->fold_bias);
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
  snprintf(m->impl, sizeof m->impl, "%s%s", L->impl, L->unchecked ? " (zp 0)" : "");   /* the CSV has no note */
  if (L->note) snprintf(m->note, sizeof m->note, "%s", L->note);
  m->status = BENCH_OK;
  if (!o->verify || L->unchecked) return;
  bench_check chk;
  bench_check_output(l, d, L->y, d->layout, o->quick, &chk);
  m->err = chk.err;
  m->tol = chk.tol;
  if (chk.ok) return;
  if (!L->lossy) {
    m->status = BENCH_WRONG;
    return;
  }
  /* oneDNN's accuracy is not what is measured here: keep err in the CSV, say why, carry on */
  snprintf(m->note, sizeof m->note,
           "%s%sno VNNI: oneDNN int8 adds u8*s8 pairs in int16 (saturating, or with halved weights): err not held to tol",
           L->note ? L->note : "", L->note ? "; " : "");
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
  dnnl_shape types;
  if (!types_of(d->dtype, &types)) {
    set_all(blocked, user, BENCH_SKIPPED, "the oneDNN peer has no counterpart for this dtype");
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
    char note[160];
    const dnnl_version_t *v = dnnl_version();
    if (s == dnnl_unimplemented)   /* e.g. f16: oneDNN 2.6.3 answers this on AVX2 (checked) */
      snprintf(note, sizeof note, "oneDNN %d.%d has no %s %s on this CPU (isa %s)", v->major, v->minor,
               bench_dtype_name(d->dtype), l->is_dense ? "inner product" : "convolution",
               isa_name(dnnl_get_effective_cpu_isa()));
    else
      snprintf(note, sizeof note, "oneDNN: %s", dnnl_status2str(s));
    set_all(blocked, user, s == dnnl_unimplemented ? BENCH_SKIPPED : BENCH_ERROR, note);
  } else {
    time_blocked(l, d, o, t, &L, blocked);
    time_user(l, d, o, t, &L, user);
  }
  teardown(&L);
}
