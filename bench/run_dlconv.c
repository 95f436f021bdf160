/* run_dlconv.c - libdlconv measured through dlconv.h only. */
#include "run_dlconv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reference.h"

typedef struct exec_ctx {
  const dlconv_plan *plan;
  const void *x;
  void *y, *workspace;
  dlconv_status status;
} exec_ctx;

static int execute_once(void *arg) {
  exec_ctx *c = arg;
  c->status = dlconv_execute(c->plan, c->x, c->y, c->workspace);
  return c->status != DLCONV_OK;
}

static void describe_desc(const bench_layer *l, const bench_data *d, dlconv_conv2d_desc *desc) {
  dlconv_conv2d_desc_init(desc, l->n, l->c_in, l->h_in, l->w_in, l->c_out, l->k_h, l->k_w);
  desc->stride_h = l->stride_h;
  desc->stride_w = l->stride_w;
  desc->dilation_h = l->dil_h;
  desc->dilation_w = l->dil_w;
  desc->pad_top = desc->pad_bottom = l->pad_h;
  desc->pad_left = desc->pad_right = l->pad_w;
  desc->groups = l->groups;
  desc->dtype = d->dtype;
  desc->layout = d->layout;
}

dlconv_status bench_make_plan(dlconv_plan **p, const bench_layer *l, const bench_data *d, const dlconv_options *opt) {
  const dlconv_quant *q = d->dtype == DLCONV_U8 || d->dtype == DLCONV_S8 ? &d->quant : NULL;
  if (l->is_dense)
    return dlconv_plan_dense(p, l->n, l->c_in, l->c_out, d->dtype, d->w, d->b, -INFINITY, INFINITY, q, opt);
  dlconv_conv2d_desc desc;
  describe_desc(l, d, &desc);
  return dlconv_plan_conv2d(p, &desc, d->w, d->b, q, opt);
}

static void fail(bench_measure *m, bench_status s, const char *what, dlconv_status st) {
  m->status = s;
  snprintf(m->note, sizeof m->note, "%s: %s: %s", what, dlconv_status_string(st), dlconv_last_error());
}

/* Times the plan's execute and checks the result it leaves in y. */
static void time_and_check(const bench_layer *l, const bench_data *d, const dlconv_plan *plan,
                           const bench_options *o, const bench_timing *t, bench_measure *m) {
  size_t ws_bytes = dlconv_plan_workspace_size(plan);
  exec_ctx c = {plan, d->x, bench_alloc(d->y_bytes), ws_bytes ? bench_alloc(ws_bytes) : NULL, DLCONV_OK};
  if (!c.y || (ws_bytes && !c.workspace)) {
    m->status = BENCH_ERROR;
    snprintf(m->note, sizeof m->note, "bench: out of memory for y or the workspace");
  } else {
    memset(c.y, 0xff, d->y_bytes);   /* NaN in f32 and f16: a point never written fails */
    if (bench_time_calls(execute_once, &c, t, &m->ms, &m->runs)) {
      fail(m, BENCH_ERROR, "execute", c.status);
    } else {
      m->status = BENCH_OK;
      if (o->verify) {
        bench_check chk;
        bench_check_output(l, d, c.y, d->layout, o->quick, &chk);
        m->err = chk.err;
        m->tol = chk.tol;
        if (!chk.ok) m->status = BENCH_WRONG;
      }
    }
  }
  free(c.y);
  free(c.workspace);
}

void bench_run_dlconv(const bench_layer *l, const bench_data *d, dlconv_algo algo, int threads,
                      const bench_options *o, const bench_timing *t, bench_measure *m) {
  memset(m, 0, sizeof *m);
  m->err = -1;
  dlconv_options opt;
  dlconv_options_init(&opt);
  opt.algo = algo;
  opt.isa = o->isa;
  opt.num_threads = threads;
  if (o->measure) opt.flags |= DLCONV_PLAN_MEASURE;

  dlconv_plan *plan = NULL;
  double t0 = bench_now();
  dlconv_status st = bench_make_plan(&plan, l, d, &opt);
  m->plan_ms = 1e3 * (bench_now() - t0);
  if (st != DLCONV_OK) {
    fail(m, st == DLCONV_ERR_UNSUPPORTED ? BENCH_SKIPPED : BENCH_ERROR, "plan", st);
    return;
  }
  dlconv_plan_info info;
  if ((st = dlconv_plan_query(plan, &info)) != DLCONV_OK) {
    fail(m, BENCH_ERROR, "plan_query", st);
  } else {
    snprintf(m->impl, sizeof m->impl, "%s/%s", bench_algo_name(info.algo), bench_isa_name(info.isa));
    snprintf(m->kernel, sizeof m->kernel, "%s", info.kernel);
    time_and_check(l, d, plan, o, t, m);
  }
  dlconv_plan_destroy(plan);
}
