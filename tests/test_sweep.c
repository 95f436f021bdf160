/* Seeded sweep of conv2d and dense shapes against the double-precision oracle.
 *
 *   test_sweep ALGO [--shapes N] [--dense N] [--seed S] [--only I] [--max-macs M]
 *
 * ALGO is auto, direct, im2col, spack, gspc or csr; every shape runs with that algorithm on every
 * ISA the machine has (plus ISA AUTO), single-threaded, and some also with 2 threads, the default
 * thread count and a caller pool. A failure prints the shape index: `--only I` reruns just it. */
#include "test_common.h"
#include "core/test_hooks.h"

static int g_algo = -1;
static int g_shapes = 1000, g_dense = 150, g_only = -1;
static int64_t g_max_macs = 0;   /* > 0: skip conv shapes above this many MACs (emulated runs) */
static uint64_t g_seed = 20240601;

static long g_unsupported[N_ALGOS][N_ISAS], g_pass[N_ALGOS][N_ISAS];
static long g_chosen_algo[N_ALGOS];
static tpool *g_pool;

static const int CHANNELS[] = {3, 5, 13, 17, 33, 63, 129};
/* channels per group: the first 6 up to 8 (groups >= 8), the first 4 (groups >= 32) */
static const int PER_GROUP[] = {1, 2, 3, 4, 5, 8, 12, 13, 16, 17, 24, 33};
static const int GROUPS[] = {2, 3, 4, 8, 16, 32, 64};

static int64_t desc_macs(const dlconv_conv2d_desc *d) {
  int64_t ho = oracle_out_dim(d->h_in, d->pad_top, d->pad_bottom, d->k_h, d->dilation_h, d->stride_h);
  int64_t wo = oracle_out_dim(d->w_in, d->pad_left, d->pad_right, d->k_w, d->dilation_w, d->stride_w);
  return (int64_t)d->n * d->c_out * ho * wo * (d->c_in / d->groups) * d->k_h * d->k_w;
}

static int skewed(rng_t *r, int lo, int hi) {   /* small values more likely */
  int a = rng_int(r, lo, hi), b = rng_int(r, lo, hi);
  return a < b ? a : b;
}

static void gen_kernel(rng_t *r, dlconv_conv2d_desc *d) {
  switch (rng_int(r, 0, 5)) {
    case 0: case 1: d->k_h = d->k_w = rng_int(r, 1, 7); break;
    case 2: d->k_h = 1; d->k_w = rng_int(r, 2, 7); break;
    case 3: d->k_w = 1; d->k_h = rng_int(r, 2, 7); break;
    case 4: d->k_h = d->k_w = rng_pick(r, (const int[]){1, 3}, 2); break;
    default: d->k_h = rng_int(r, 1, 7); d->k_w = rng_int(r, 1, 7); break;
  }
  d->stride_h = skewed(r, 1, 3);
  d->stride_w = rng_chance(r, 0.7) ? d->stride_h : skewed(r, 1, 3);
  d->dilation_h = rng_chance(r, 0.7) ? 1 : rng_int(r, 1, 3);
  d->dilation_w = rng_chance(r, 0.7) ? d->dilation_h : rng_int(r, 1, 3);
}

static void gen_padding(rng_t *r, dlconv_conv2d_desc *d) {
  const int sh = d->dilation_h * (d->k_h - 1), sw = d->dilation_w * (d->k_w - 1);
  switch (rng_int(r, 0, 3)) {
    case 0: d->pad_top = d->pad_bottom = d->pad_left = d->pad_right = 0; break;
    case 1:   /* "same"-style, asymmetric when the span is odd */
      d->pad_top = sh / 2; d->pad_bottom = sh - sh / 2; d->pad_left = sw / 2; d->pad_right = sw - sw / 2; break;
    case 2:
      d->pad_top = rng_int(r, 0, 3); d->pad_bottom = rng_int(r, 0, 3);
      d->pad_left = rng_int(r, 0, 3); d->pad_right = rng_int(r, 0, 3); break;
    default:  /* up to the whole span: some outputs see only padding */
      d->pad_top = rng_int(r, 0, sh + 1); d->pad_bottom = rng_int(r, 0, sh + 1);
      d->pad_left = rng_int(r, 0, sw + 1); d->pad_right = rng_int(r, 0, sw + 1); break;
  }
}

/* make sure h_out, w_out >= 1 by growing the input */
static void fix_output(dlconv_conv2d_desc *d) {
  const int sh = d->dilation_h * (d->k_h - 1) + 1, sw = d->dilation_w * (d->k_w - 1) + 1;
  if (d->h_in + d->pad_top + d->pad_bottom < sh) d->h_in = sh - d->pad_top - d->pad_bottom;
  if (d->w_in + d->pad_left + d->pad_right < sw) d->w_in = sw - d->pad_left - d->pad_right;
}

static void gen_channels(rng_t *r, dlconv_conv2d_desc *d, int cat) {
  if (cat == 1) {            /* depthwise, channel multiplier 1 or 2 */
    d->c_in = rng_chance(r, 0.5) ? rng_pick(r, CHANNELS, ARRAY_LEN(CHANNELS)) : rng_int(r, 1, 40);
    d->groups = d->c_in;
    d->c_out = d->c_in * rng_int(r, 1, 2);
  } else if (cat == 2) {     /* grouped */
    d->groups = rng_pick(r, GROUPS, ARRAY_LEN(GROUPS));
    const size_t np = d->groups >= 32 ? 4 : d->groups >= 8 ? 6 : ARRAY_LEN(PER_GROUP);
    d->c_in = d->groups * rng_pick(r, PER_GROUP, np);
    d->c_out = d->groups * rng_pick(r, PER_GROUP, np);
  } else {
    d->groups = 1;
    d->c_in = rng_chance(r, 0.6) ? rng_pick(r, CHANNELS, ARRAY_LEN(CHANNELS)) : rng_int(r, 1, 48);
    d->c_out = rng_chance(r, 0.6) ? rng_pick(r, CHANNELS, ARRAY_LEN(CHANNELS)) : rng_int(r, 1, 48);
  }
}

static void gen_clamp(rng_t *r, dlconv_conv2d_desc *d) {
  switch (rng_int(r, 0, 19)) {
    case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7: break;              /* none */
    case 8: case 9: case 10: case 11: d->out_min = 0; d->out_max = INFINITY; break;     /* ReLU */
    case 12: case 13: case 14: d->out_min = 0; d->out_max = 6; break;                   /* ReLU6 */
    case 15: d->out_min = d->out_max = rng_float(r, -0.5f, 0.5f); break;                /* degenerate */
    case 16: d->out_min = -INFINITY; d->out_max = rng_float(r, -0.5f, 1.0f); break;
    default: d->out_min = rng_float(r, -1.5f, 0.5f); d->out_max = d->out_min + rng_float(r, 0.0f, 2.0f); break;
  }
}

static void gen_data_opts(rng_t *r, data_opts *o) {
  o->bias = rng_chance(r, 0.7);
  int z = rng_int(r, 0, 19);
  o->zero_frac = z < 13 ? 0.0 : z < 16 ? 0.5 : z < 19 ? 0.9 : 1.0;
  o->empty_row_frac = rng_chance(r, 0.1) ? 0.3 : 0.0;
  o->shift = rng_chance(r, 0.3) ? (size_t)(4 * rng_int(r, 1, 15)) : 0;
  o->fence = rng_int(r, 0, 2);
}

/* Shape i of the sweep (categories: plain, depthwise, grouped, wide channels, big image). */
static void gen_shape(int idx, dlconv_conv2d_desc *d, data_opts *o) {
  rng_t r = rng_seed(g_seed * 1000003u + (uint64_t)idx);
  for (int attempt = 0;; attempt++) {
    dlconv_conv2d_desc_init(d, 1, 1, 1, 1, 1, 1, 1);
    d->layout = rng_chance(&r, 0.5) ? DLCONV_NHWC : DLCONV_NCHW;
    int64_t budget = 3000000;
    if (idx % 40 == 7) {          /* wide: 512 / 1024 channels (reduction 4608 with 3x3) */
      d->c_in = rng_chance(&r, 0.6) ? 512 : 1024;
      d->c_out = rng_pick(&r, (const int[]){5, 16, 33, 64, 129}, 5);
      d->groups = rng_chance(&r, 0.2) ? 32 : 1;
      d->c_out = (d->c_out + d->groups - 1) / d->groups * d->groups;
      d->k_h = d->k_w = rng_chance(&r, 0.6) ? 3 : 1;
      d->h_in = rng_int(&r, 1, 9); d->w_in = rng_int(&r, 1, 9);
      d->n = rng_int(&r, 1, 2);
      gen_padding(&r, d);
      budget = 12000000;
    } else if (idx % 40 == 17) {  /* big enough to cross cache-blocking boundaries (GEMM MC/NC/KC, ...) */
      d->c_in = rng_int(&r, 60, 300);
      d->c_out = rng_int(&r, 60, 200);
      d->h_in = rng_int(&r, 20, 72);
      d->w_in = rng_int(&r, 20, 72);
      d->k_h = d->k_w = rng_chance(&r, 0.5) ? 1 : 3;
      d->stride_h = d->stride_w = rng_chance(&r, 0.8) ? 1 : 2;
      if (rng_chance(&r, 0.2)) { d->groups = 2; d->c_in &= ~1; d->c_out &= ~1; }
      gen_padding(&r, d);
      budget = 25000000;
    } else if (idx % 40 == 27) {  /* big image, few channels */
      d->c_in = rng_pick(&r, (const int[]){1, 3, 4}, 3);
      d->c_out = rng_pick(&r, (const int[]){5, 8, 16}, 3);
      d->h_in = rng_chance(&r, 0.5) ? 224 : rng_int(&r, 100, 224);
      d->w_in = rng_chance(&r, 0.5) ? d->h_in : rng_int(&r, 64, 224);
      d->k_h = d->k_w = rng_pick(&r, (const int[]){3, 5, 7}, 3);
      d->stride_h = d->stride_w = rng_int(&r, 1, 2);
      gen_padding(&r, d);
      budget = 16000000;
    } else if (idx % 40 == 33) {  /* NCHW grouped, few channels per group, stride 2 across: GSPC's
                                     positions in lanes or groups in lanes, both column phases
                                     packed in one pass */
      d->layout = DLCONV_NCHW;
      d->groups = rng_pick(&r, (const int[]){4, 8, 16}, 3);
      d->c_in = d->groups * rng_int(&r, 2, 8);
      d->c_out = d->groups * rng_int(&r, 1, 8);
      /* a third on planes of at most 8 x 8 outputs: groups in lanes, whose stride-2 rows are
         packed both phases in one pass too */
      const int small = rng_chance(&r, 0.33);
      d->h_in = small ? rng_int(&r, 8, 16) : rng_int(&r, 18, 40);
      d->w_in = small ? rng_int(&r, 8, 16) : rng_int(&r, 18, 40);
      d->k_h = d->k_w = 3;
      d->stride_w = 2;
      d->stride_h = rng_int(&r, 1, 2);
      gen_padding(&r, d);
      d->n = rng_int(&r, 1, 2);
      budget = 8000000;
    } else if (idx % 40 == 37) {  /* an RGB stem: 2 to 4 input channels, a 3x3 to 7x7 window, odd sizes */
      d->c_in = rng_pick(&r, (const int[]){2, 3, 3, 4}, 4);
      d->c_out = rng_pick(&r, (const int[]){5, 16, 24, 32, 33, 64}, 6);
      d->h_in = rng_int(&r, 9, 70);
      d->w_in = rng_chance(&r, 0.5) ? d->h_in : rng_int(&r, 9, 70);
      d->k_h = d->k_w = rng_pick(&r, (const int[]){3, 3, 5, 7}, 4);
      d->stride_h = d->stride_w = rng_int(&r, 1, 2);
      gen_padding(&r, d);
      d->n = rng_int(&r, 1, 3);
      budget = 8000000;
    } else {
      const int cat = idx % 5 == 1 ? 1 : idx % 5 == 2 ? 2 : 0;
      gen_channels(&r, d, cat);
      gen_kernel(&r, d);
      gen_padding(&r, d);
      int big = rng_chance(&r, 0.15);
      d->h_in = big ? rng_int(&r, 16, 56) : skewed(&r, 1, 20);
      d->w_in = rng_chance(&r, 0.6) ? d->h_in : (big ? rng_int(&r, 16, 56) : skewed(&r, 1, 20));
      int nb = rng_int(&r, 0, 9);
      d->n = nb < 5 ? 1 : nb < 7 ? 2 : rng_int(&r, 3, 5);
    }
    gen_clamp(&r, d);
    fix_output(d);
    if (desc_macs(d) <= budget || attempt > 200) break;
  }
  gen_data_opts(&r, o);
}

static void print_tables(void) {
  printf("\n%-8s", "pass");
  for (int i = 0; i < N_ISAS; i++) printf(" %8s", isa_name(i));
  printf("      UNSUPPORTED skips:");
  for (int i = 0; i < N_ISAS; i++) printf(" %8s", isa_name(i));
  printf("\n");
  for (int a = 0; a < N_ALGOS; a++) {
    long any = 0;
    for (int i = 0; i < N_ISAS; i++) any += g_pass[a][i] + g_unsupported[a][i];
    if (!any) continue;
    printf("%-8s", algo_name(a));
    for (int i = 0; i < N_ISAS; i++) printf(" %8ld", g_pass[a][i]);
    printf("      %-18s", "");
    for (int i = 0; i < N_ISAS; i++) printf(" %8ld", g_unsupported[a][i]);
    printf("\n");
  }
  if (g_algo == DLCONV_ALGO_AUTO) {
    printf("AUTO chose:");
    for (int a = 1; a < N_ALGOS; a++) printf(" %s=%ld", algo_name(a), g_chosen_algo[a]);
    printf("\n");
  }
  fflush(stdout);
}

/* one run with the status rules applied */
static void run_one(tally *t, const conv_data *cd, const run_cfg *c, const char *what) {
  run_result res;
  run_outcome out = run_case(cd, c, &res);
  t->runs++;
  char ds[320], cs[160];
  if (out == RUN_PASS) {
    g_pass[c->algo][c->isa]++;
    if (c->algo == DLCONV_ALGO_AUTO && res.info.algo > 0 && (int)res.info.algo < N_ALGOS) g_chosen_algo[res.info.algo]++;
    return;
  }
  if (out == RUN_UNSUPPORTED && !pair_required(c->algo, c->isa)) {
    g_unsupported[c->algo][c->isa]++;
    return;
  }
  tally_fail(t, "%s %s %s: %s%s", what, desc_str(&cd->d, ds, sizeof ds), cfg_str(c, cs, sizeof cs),
             out == RUN_UNSUPPORTED ? "UNSUPPORTED but required: " : "", res.msg);
}

static void run_all_configs(tally *t, const conv_data *cd, int idx, const char *what) {
  dlconv_isa isas[8];
  int n = cpu_isas(isas + 1) + 1;
  isas[0] = DLCONV_ISA_AUTO;
  rng_t r = rng_seed((uint64_t)idx * 7919u + 17u);
  size_t y_shift = rng_chance(&r, 0.3) ? (size_t)(4 * rng_int(&r, 1, 15)) : 0;
  for (int i = 0; i < n; i++) {
    run_cfg c = {.algo = (dlconv_algo)g_algo, .isa = isas[i], .num_threads = 1,
                 .ws_mode = (idx + i) & 1, .y_shift = y_shift, .repeat = idx % 3 == 0};
    run_one(t, cd, &c, what);
  }
  /* threaded variants on one ISA picked at random */
  run_cfg c = {.algo = (dlconv_algo)g_algo, .isa = isas[rng_int(&r, 0, n - 1)], .num_threads = 2,
               .ws_mode = rng_int(&r, 0, 1), .y_shift = y_shift};
  switch (idx % 4) {
    case 1: run_one(t, cd, &c, what); break;                                   /* library threads */
    case 3: c.pool = g_pool; c.num_threads = rng_int(&r, 2, 3); run_one(t, cd, &c, what); break;
    default:
      if (idx % 8 == 2) { c.num_threads = 0; run_one(t, cd, &c, what); }      /* library default */
      if (idx % 8 == 6) { c.num_threads = rng_int(&r, 3, 16); run_one(t, cd, &c, what); }  /* oversubscribed */
      if (idx % 40 == 4) { c.num_threads = 1; c.flags = DLCONV_PLAN_MEASURE; run_one(t, cd, &c, what); }
      break;
  }
}

/* direct's NCHW depthwise paths every way, whatever the plan would pick: pixels of a row in the
   lanes (dwp), channel tiles in the lanes (dwt), a small plane's pixels flat in the lanes (dwf,
   where it applies, else dwp) */
static void run_nchw_dw_modes(tally *t, const conv_data *cd, const dlconv_conv2d_desc *d, int idx, const char *what) {
  if (!(g_algo == DLCONV_ALGO_DIRECT && d->layout == DLCONV_NCHW && d->groups == d->c_in && d->c_out == d->c_in))
    return;
  for (int mode = 0; mode <= 2; mode++) {
    dlc_test_direct_dw_mode(mode);
    dlconv_isa isas[8];
    const int ni = cpu_isas(isas);
    for (int i = 0; i < ni; i++) {
      run_cfg c = {.algo = DLCONV_ALGO_DIRECT, .isa = isas[i], .num_threads = 1 + ((idx + i) & 1),
                   .ws_mode = (idx + i) & 1};
      run_one(t, cd, &c, what);
    }
    dlc_test_direct_dw_mode(-1);
  }
}

/* NCHW RGB stems on GSPC with 2 and 3 threads on every ISA: with positions in lanes, tasks that
   share the stem's one group each pack only the input rows their positions read (gspc_pos.c) */
static void run_stem_threads(tally *t, const conv_data *cd, const dlconv_conv2d_desc *d, int idx, const char *what) {
  if (!(idx % 40 == 37 && d->layout == DLCONV_NCHW && (g_algo == DLCONV_ALGO_GSPC || g_algo == DLCONV_ALGO_AUTO)))
    return;
  dlconv_isa isas[8];
  const int ni = cpu_isas(isas);
  for (int i = 0; i < ni; i++)
    for (int nt = 2; nt <= 3; nt++) {
      run_cfg c = {.algo = (dlconv_algo)g_algo, .isa = isas[i], .num_threads = nt, .ws_mode = (idx + i + nt) & 1};
      run_one(t, cd, &c, what);
    }
}

static void test_conv_sweep(void **state) {
  (void)state;
  tally t = {0};
  double t0 = now_s(), worst_t = 0;
  int worst_i = -1;
  for (int idx = 0; idx < g_shapes; idx++) {
    if (g_only >= 0 && idx != g_only) continue;
    dlconv_conv2d_desc d;
    data_opts o;
    gen_shape(idx, &d, &o);
    if (g_max_macs > 0 && desc_macs(&d) > g_max_macs) continue;
    double ts = now_s();
    rng_t r = rng_seed(g_seed ^ ((uint64_t)idx << 20));
    /* the public shape query must agree with the formula */
    int32_t ho = -1, wo = -1;
    dlconv_status st = dlconv_conv2d_output_shape(&d, &ho, &wo);
    if (st != DLCONV_OK || ho != oracle_out_dim(d.h_in, d.pad_top, d.pad_bottom, d.k_h, d.dilation_h, d.stride_h) ||
        wo != oracle_out_dim(d.w_in, d.pad_left, d.pad_right, d.k_w, d.dilation_w, d.stride_w)) {
      char ds[320];
      tally_fail(&t, "shape #%d %s: output_shape -> %d, %dx%d", idx, desc_str(&d, ds, sizeof ds), (int)st, ho, wo);
    }
    conv_data cd;
    cd_init(&cd, KIND_CONV, &d, &r, &o);
    char what[64];
    snprintf(what, sizeof what, "shape #%d (zero_frac %.1f, bias %d)", idx, o.zero_frac, o.bias);
    run_all_configs(&t, &cd, idx, what);
    run_nchw_dw_modes(&t, &cd, &d, idx, what);
    run_stem_threads(&t, &cd, &d, idx, what);
    cd_free(&cd);
    if (idx % 6 == 3) {   /* the same layer from caller CSR weights */
      rng_t rc = rng_seed(g_seed ^ ((uint64_t)idx << 20));
      cd_init(&cd, KIND_CSR, &d, &rc, &o);
      snprintf(what, sizeof what, "shape #%d via CSR (nnz %d)", idx, cd.csr.nnz);
      dlconv_isa isas[8];
      int ni = cpu_isas(isas);
      run_cfg c = {.algo = (dlconv_algo)g_algo, .isa = isas[idx % ni], .num_threads = 1 + (idx & 1), .ws_mode = 1};
      run_one(&t, &cd, &c, what);
      cd_free(&cd);
    }
    double dt = now_s() - ts;
    if (dt > worst_t) { worst_t = dt; worst_i = idx; }
  }
  printf("conv sweep [%s]: %d shapes, %ld runs, %ld failures, %.1f s (slowest shape #%d: %.2f s)\n",
         algo_name(g_algo), g_only >= 0 ? 1 : g_shapes, t.runs, t.fails, now_s() - t0, worst_i, worst_t);
  fflush(stdout);
  assert_int_equal(t.fails, 0);
}

static void test_dense_sweep(void **state) {
  (void)state;
  static const int FEATS[] = {1, 3, 5, 13, 17, 33, 63, 129, 512, 1024};
  tally t = {0};
  double t0 = now_s();
  for (int idx = 0; idx < g_dense; idx++) {
    if (g_only >= 0 && idx != g_only) continue;
    rng_t r = rng_seed(g_seed * 31u + 100000u + (uint64_t)idx);
    int batch = rng_int(&r, 1, 5);
    int in_f = rng_chance(&r, 0.6) ? rng_pick(&r, FEATS, ARRAY_LEN(FEATS)) : rng_int(&r, 1, 300);
    int out_f = rng_chance(&r, 0.6) ? rng_pick(&r, FEATS, ARRAY_LEN(FEATS)) : rng_int(&r, 1, 300);
    dlconv_conv2d_desc d;
    dense_desc(&d, batch, in_f, out_f, -INFINITY, INFINITY);
    gen_clamp(&r, &d);
    data_opts o;
    gen_data_opts(&r, &o);
    conv_data cd;
    cd_init(&cd, KIND_DENSE, &d, &r, &o);
    char what[96];
    snprintf(what, sizeof what, "dense #%d (batch %d, in %d, out %d, zero_frac %.1f, bias %d)", idx, batch, in_f,
             out_f, o.zero_frac, o.bias);
    run_all_configs(&t, &cd, idx, what);
    run_nchw_dw_modes(&t, &cd, &d, idx, what);
    cd_free(&cd);
  }
  printf("dense sweep [%s]: %d layers, %ld runs, %ld failures, %.1f s\n", algo_name(g_algo),
         g_only >= 0 ? 1 : g_dense, t.runs, t.fails, now_s() - t0);
  fflush(stdout);
  assert_int_equal(t.fails, 0);
}

/* ISAs the machine or build lacks: UNSUPPORTED, *plan NULL, message set. */
static void test_unavailable_isas(void **state) {
  (void)state;
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 1, 4, 5, 5, 4, 3, 3);
  data_opts o = {.bias = 1};
  rng_t r = rng_seed(5);
  conv_data cd;
  cd_init(&cd, KIND_CONV, &d, &r, &o);
  int checked = 0;
  for (int isa = DLCONV_ISA_GENERIC; isa <= DLCONV_ISA_CUDA; isa++) {
    if (dlconv_isa_available((dlconv_isa)isa)) continue;
    run_cfg c = {.algo = (dlconv_algo)g_algo, .isa = (dlconv_isa)isa, .num_threads = 1};
    run_result res;
    run_outcome out = run_case(&cd, &c, &res);
    if (out != RUN_UNSUPPORTED) print_error("isa %s unavailable but plan gave %s: %s\n", isa_name(isa), dlconv_status_string(res.plan_status), res.msg);
    assert_int_equal(out, RUN_UNSUPPORTED);
    checked++;
  }
  printf("%d unavailable ISAs correctly refused for algo %s\n", checked, algo_name(g_algo));
  cd_free(&cd);
}

/* --stats: what the generator covers (to keep the sweep honest when it is edited) */
static void print_stats(void) {
  long n = 0, grouped = 0, dw = 0, dw2 = 0, wide = 0, big = 0, batch = 0, nhwc = 0, strided = 0, dil = 0,
       asym = 0, k1xk = 0, s1x1 = 0, clampn = 0, zeros = 0, nobias = 0, shifted = 0, k[8] = {0};
  int64_t macs = 0, maxmacs = 0;
  for (int idx = 0; idx < g_shapes; idx++) {
    dlconv_conv2d_desc d;
    data_opts o;
    gen_shape(idx, &d, &o);
    n++;
    grouped += d.groups > 1 && d.groups != d.c_in;
    dw += d.groups == d.c_in && d.c_in > 1 && d.c_out == d.c_in;
    dw2 += d.groups == d.c_in && d.c_in > 1 && d.c_out == 2 * d.c_in;
    wide += d.c_in >= 512;
    big += d.h_in >= 100;
    batch += d.n > 1;
    nhwc += d.layout == DLCONV_NHWC;
    strided += d.stride_h > 1 || d.stride_w > 1;
    dil += d.dilation_h > 1 || d.dilation_w > 1;
    asym += d.pad_top != d.pad_bottom || d.pad_left != d.pad_right;
    k1xk += (d.k_h == 1) != (d.k_w == 1);
    s1x1 += d.k_h == 1 && d.k_w == 1 && (d.stride_h > 1 || d.stride_w > 1) && !d.pad_top && !d.pad_bottom &&
            !d.pad_left && !d.pad_right;
    clampn += !isinf(d.out_min) || !isinf(d.out_max);
    zeros += o.zero_frac > 0 || o.empty_row_frac > 0;
    nobias += !o.bias;
    shifted += o.shift != 0;
    k[d.k_h < 8 ? d.k_h : 0]++;
    int64_t m = desc_macs(&d);
    macs += m;
    if (m > maxmacs) maxmacs = m;
  }
  printf("%ld shapes: grouped %ld, depthwise x1 %ld, x2 %ld, c_in>=512 %ld, h>=100 %ld, batch>1 %ld, NHWC %ld, "
         "strided %ld, dilated %ld, asym pad %ld, 1xK/Kx1 %ld, unpadded strided 1x1 %ld, clamped %ld, zero weights %ld, no bias %ld, "
         "shifted buffers %ld; k_h 1..7: %ld %ld %ld %ld %ld %ld %ld; MACs total %.3g, max %.3g\n",
         n, grouped, dw, dw2, wide, big, batch, nhwc, strided, dil, asym, k1xk, s1x1, clampn, zeros, nobias, shifted,
         k[1], k[2], k[3], k[4], k[5], k[6], k[7], (double)macs, (double)maxmacs);
}

static int usage(void) {
  fprintf(stderr, "usage: test_sweep auto|direct|im2col|spack|gspc|csr [--shapes N] [--dense N] [--seed S] [--only I] [--max-macs M]\n");
  return 2;
}

int main(int argc, char **argv) {
  if (argc < 2 || (g_algo = algo_from_name(argv[1])) < 0) return usage();
  for (int i = 2; i < argc; i++) {
    if (i + 1 >= argc && strcmp(argv[i], "--stats")) return usage();
    if (!strcmp(argv[i], "--shapes")) g_shapes = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--dense")) g_dense = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seed")) g_seed = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--only")) g_only = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--max-macs")) g_max_macs = strtoll(argv[++i], NULL, 0);
    else if (!strcmp(argv[i], "--stats")) { print_stats(); return 0; }
    else return usage();
  }
  g_pool = tpool_create(2);
  int rc = RUN_GROUP(algo_name(g_algo), test_unavailable_isas, test_conv_sweep, test_dense_sweep);
  print_tables();
  tpool_destroy(g_pool);
  return rc;
}
