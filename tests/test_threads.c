/* Concurrency: one plan executed from 8 pthreads at once (different x, y; workspace NULL and
 * caller workspaces), plans with 2 library threads or a caller pool used concurrently, plans
 * created concurrently, and the thread-locality of dlconv_last_error(). */
#include "test_common.h"

enum { NTH = 8, ITERS = 4 };

typedef struct shape_case {
  const char *name;
  dlconv_conv2d_desc d;
} shape_case;

static shape_case g_shapes[3];
static tpool *g_pool;

static void init_shapes(void) {
  dlconv_conv2d_desc *d = &g_shapes[0].d;
  g_shapes[0].name = "3x3 same NHWC";
  dlconv_conv2d_desc_init(d, 2, 17, 23, 19, 33, 3, 3);
  d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 1;
  d->layout = DLCONV_NHWC;
  d->out_min = 0; d->out_max = 6;

  d = &g_shapes[1].d;
  g_shapes[1].name = "grouped strided NCHW";
  dlconv_conv2d_desc_init(d, 3, 32, 30, 27, 64, 5, 3);
  d->groups = 4;
  d->stride_h = 2; d->stride_w = 1;
  d->pad_top = 2; d->pad_bottom = 1; d->pad_left = 0; d->pad_right = 2;

  d = &g_shapes[2].d;
  g_shapes[2].name = "depthwise x2 NHWC";
  dlconv_conv2d_desc_init(d, 1, 24, 41, 37, 48, 3, 3);
  d->groups = 24;
  d->dilation_h = d->dilation_w = 2;
  d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 2;
  d->layout = DLCONV_NHWC;
}

typedef struct worker {
  pthread_t th;
  int id;
  const dlconv_plan *plan;
  conv_data cd;            /* own x and oracle; w, bias equal to the plan's */
  run_cfg cfg;
  pthread_barrier_t *bar;
  int fails;
  char msg[1024];
} worker;

static void *worker_main(void *p) {
  worker *wk = p;
  pthread_barrier_wait(wk->bar);
  for (int it = 0; it < ITERS; it++) {
    run_cfg c = wk->cfg;
    c.ws_mode = (wk->id + it) & 1;
    c.y_shift = (size_t)(4 * ((wk->id + it) % 3));
    char m[1024] = "";
    if (execute_checked(&wk->cd, wk->plan, &c, NULL, m, sizeof m)) {
      if (!wk->fails) snprintf(wk->msg, sizeof wk->msg, "iter %d ws=%s: %s", it, c.ws_mode ? "caller" : "NULL", m);
      wk->fails++;
    }
  }
  return NULL;
}

/* Plan once with cfg, run NTH threads x ITERS executes; returns the number of failing threads. */
static int run_concurrent(const shape_case *sc, run_cfg cfg, uint64_t seed, tally *t) {
  rng_t r = rng_seed(seed);
  data_opts o = {.bias = 1};
  conv_data base;
  cd_init(&base, KIND_CONV, &sc->d, &r, &o);
  dlconv_options opt;
  cfg_options(&cfg, &opt);
  dlconv_plan *plan = NULL;
  dlconv_status st = dlconv_plan_conv2d(&plan, &sc->d, base.w, base.bias, NULL, &opt);
  char cs[160];
  cfg_str(&cfg, cs, sizeof cs);
  if (st == DLCONV_ERR_UNSUPPORTED && cfg.isa != DLCONV_ISA_GENERIC && cfg.algo != DLCONV_ALGO_AUTO) {
    printf("  %s, %s: UNSUPPORTED, retrying on GENERIC\n", sc->name, cs);
    cfg.isa = DLCONV_ISA_GENERIC;
    cfg_options(&cfg, &opt);
    st = dlconv_plan_conv2d(&plan, &sc->d, base.w, base.bias, NULL, &opt);
    cfg_str(&cfg, cs, sizeof cs);
  }
  if (st != DLCONV_OK) {
    tally_fail(t, "%s, %s: plan -> %s (%s)", sc->name, cs, dlconv_status_string(st), dlconv_last_error());
    cd_free(&base);
    return 1;
  }
  dlconv_plan_info info;
  dlconv_plan_query(plan, &info);
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, NTH);
  worker *wk = calloc(NTH, sizeof *wk);
  for (int i = 0; i < NTH; i++) {
    rng_t ri = rng_seed(seed * 100 + (uint64_t)i + 1);
    cd_init(&wk[i].cd, KIND_CONV, &sc->d, &ri, &o);
    memcpy(wk[i].cd.w, base.w, base.w_len * 4);
    memcpy(wk[i].cd.bias, base.bias, (size_t)sc->d.c_out * 4);
    cd_refresh(&wk[i].cd);
    wk[i].id = i;
    wk[i].plan = plan;
    wk[i].cfg = cfg;
    wk[i].bar = &bar;
  }
  long calls0 = g_pool ? atomic_load(&g_pool->calls) : 0;
  for (int i = 0; i < NTH; i++) pthread_create(&wk[i].th, NULL, worker_main, &wk[i]);
  int bad = 0;
  for (int i = 0; i < NTH; i++) {
    pthread_join(wk[i].th, NULL);
    if (wk[i].fails) {
      bad++;
      tally_fail(t, "%s, %s (plan %s/%s %s), thread %d: %d of %d executes wrong: %s", sc->name, cs,
                 algo_name(info.algo), isa_name(info.isa), info.kernel, i, wk[i].fails, ITERS, wk[i].msg);
    }
    cd_free(&wk[i].cd);
  }
  long pool_calls = g_pool ? atomic_load(&g_pool->calls) - calls0 : 0;
  printf("  %-22s %-55s -> %s/%s %-28s %s%s\n", sc->name, cs, algo_name(info.algo), isa_name(info.isa), info.kernel,
         bad ? "FAIL" : "ok", cfg.pool && pool_calls == 0 ? " (note: caller pool never called)" : "");
  free(wk);
  pthread_barrier_destroy(&bar);
  dlconv_plan_destroy(plan);
  cd_free(&base);
  return bad;
}

static void test_one_plan_many_threads(void **state) {
  (void)state;
  tally t = {0};
  for (size_t s = 0; s < ARRAY_LEN(g_shapes); s++)
    for (int a = 0; a < N_ALGOS; a++) {
      run_cfg c = {.algo = (dlconv_algo)a, .isa = DLCONV_ISA_AUTO, .num_threads = 1};
      run_concurrent(&g_shapes[s], c, 1000 + s * 10 + (uint64_t)a, &t);
      c.isa = DLCONV_ISA_GENERIC;
      run_concurrent(&g_shapes[s], c, 2000 + s * 10 + (uint64_t)a, &t);
    }
  assert_int_equal(t.fails, 0);
}

static void test_threaded_plans_concurrently(void **state) {
  (void)state;
  tally t = {0};
  for (size_t s = 0; s < ARRAY_LEN(g_shapes); s++)
    for (int a = 0; a < N_ALGOS; a++) {
      run_cfg c = {.algo = (dlconv_algo)a, .isa = DLCONV_ISA_AUTO, .num_threads = 2};
      run_concurrent(&g_shapes[s], c, 3000 + s * 10 + (uint64_t)a, &t);
      c.pool = g_pool;
      run_concurrent(&g_shapes[s], c, 4000 + s * 10 + (uint64_t)a, &t);
    }
  assert_int_equal(t.fails, 0);
}

/* A caller pool plan run from the main thread only: every result checked, pool used. */
static void test_caller_pool(void **state) {
  (void)state;
  tally t = {0};
  for (size_t s = 0; s < ARRAY_LEN(g_shapes); s++)
    for (int a = 0; a < N_ALGOS; a++)
      for (int nt = 2; nt <= 4; nt++) {
        rng_t r = rng_seed(5000 + s * 10 + (uint64_t)a);
        data_opts o = {.bias = (a & 1), .zero_frac = a == DLCONV_ALGO_SPARSE_CSR ? 0.7 : 0.0};
        conv_data cd;
        cd_init(&cd, KIND_CONV, &g_shapes[s].d, &r, &o);
        run_cfg c = {.algo = (dlconv_algo)a, .isa = DLCONV_ISA_GENERIC, .num_threads = nt, .pool = g_pool,
                     .ws_mode = nt & 1, .repeat = 1};
        long calls0 = atomic_load(&g_pool->calls);
        run_result res;
        run_outcome out = run_case(&cd, &c, &res);
        char cs[160];
        if (out != RUN_PASS) tally_fail(&t, "%s, %s: %s", g_shapes[s].name, cfg_str(&c, cs, sizeof cs), res.msg);
        else if (atomic_load(&g_pool->calls) == calls0)
          printf("  note: %s, %s never called the caller pool\n", g_shapes[s].name, cfg_str(&c, cs, sizeof cs));
        cd_free(&cd);
      }
  assert_int_equal(t.fails, 0);
}

/* Plans created (and used) concurrently: planning touches shared state (cpu detection, wisdom). */
typedef struct planner {
  pthread_t th;
  int id;
  pthread_barrier_t *bar;
  int fails;
  char msg[1200];
} planner;

static void *planner_main(void *p) {
  planner *pl = p;
  const shape_case *sc = &g_shapes[pl->id % ARRAY_LEN(g_shapes)];
  rng_t r = rng_seed(7000 + (uint64_t)pl->id);
  data_opts o = {.bias = 1};
  conv_data cd;
  cd_init(&cd, KIND_CONV, &sc->d, &r, &o);
  pthread_barrier_wait(pl->bar);
  for (int a = 0; a < N_ALGOS; a++) {
    run_cfg c = {.algo = (dlconv_algo)((a + pl->id) % N_ALGOS), .isa = DLCONV_ISA_GENERIC, .num_threads = 1, .ws_mode = a & 1};
    if (c.algo == DLCONV_ALGO_AUTO) c.isa = DLCONV_ISA_AUTO;
    run_result res;
    if (run_case(&cd, &c, &res) != RUN_PASS) {
      if (!pl->fails) snprintf(pl->msg, sizeof pl->msg, "%s algo %s: %s", sc->name, algo_name(c.algo), res.msg);
      pl->fails++;
    }
  }
  cd_free(&cd);
  return NULL;
}

static void test_concurrent_planning(void **state) {
  (void)state;
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, NTH);
  planner pl[NTH];
  memset(pl, 0, sizeof pl);
  for (int i = 0; i < NTH; i++) {
    pl[i].id = i;
    pl[i].bar = &bar;
    pthread_create(&pl[i].th, NULL, planner_main, &pl[i]);
  }
  tally t = {0};
  for (int i = 0; i < NTH; i++) {
    pthread_join(pl[i].th, NULL);
    if (pl[i].fails) tally_fail(&t, "planner thread %d: %s", i, pl[i].msg);
  }
  pthread_barrier_destroy(&bar);
  assert_int_equal(t.fails, 0);
}

/* dlconv_last_error() is per thread: another thread's failure does not change ours. */
static void *fail_in_thread(void *p) {
  (void)p;
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 1, 1, 1, 1, 1, 1, 1);
  d.stride_h = 0;
  int32_t ho, wo;
  (void)dlconv_conv2d_output_shape(&d, &ho, &wo);
  return NULL;
}

static void test_last_error_thread_local(void **state) {
  (void)state;
  dlconv_plan_info info;
  assert_int_not_equal(dlconv_plan_query(NULL, &info), DLCONV_OK);
  char before[512];
  snprintf(before, sizeof before, "%s", dlconv_last_error());
  assert_true(before[0] != 0);
  pthread_t th;
  pthread_create(&th, NULL, fail_in_thread, NULL);
  pthread_join(th, NULL);
  assert_string_equal(before, dlconv_last_error());
}

int main(void) {
  init_shapes();
  g_pool = tpool_create(2);
  int rc = RUN_GROUP("threads", test_last_error_thread_local, test_one_plan_many_threads,
                     test_threaded_plans_concurrently, test_caller_pool, test_concurrent_planning);
  tpool_destroy(g_pool);
  return rc;
}
