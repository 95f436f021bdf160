/* Hostile inputs: sizes at and beyond the limits, workspaces beyond the address space,
 * misaligned and aliasing pointers, NaN/Inf propagation through every kernel and clamp, and the
 * cost of denormal inputs.
 *
 *   test_hostile [denormals]    (no argument: everything but the timing test)
 *
 * Only the public header: the library as a user sees it (docs/api.md, "Limits", "Alignment",
 * "Clamp"). */
#include "test_common.h"

#include <float.h>

static const dlconv_algo ALGOS[] = {DLCONV_ALGO_AUTO, DLCONV_ALGO_DIRECT, DLCONV_ALGO_IM2COL_GEMM,
                                    DLCONV_ALGO_SPATIAL_PACK, DLCONV_ALGO_GSPC, DLCONV_ALGO_SPARSE_CSR};

static dlconv_options opts(dlconv_algo a, dlconv_isa i) {
  dlconv_options o;
  dlconv_options_init(&o);
  o.algo = a;
  o.isa = i;
  o.num_threads = 1;
  return o;
}

/* a failing call: the status, a message, *plan NULL */
static int failed_cleanly(dlconv_status st, dlconv_status want, const dlconv_plan *plan) {
  const char *e = dlconv_last_error();
  return st == want && e && e[0] && plan == NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Sizes                                                                                      */

/* Byte counts of x, w or y that overflow size_t: INVALID_ARG from the shape query and from
   every planning entry point, with a message, before anything is read. */
static void test_overflowing_sizes_rejected(void **state) {
  (void)state;
  typedef struct { const char *name; dlconv_conv2d_desc d; } c_t;
  c_t c[8];
  int n = 0;
  c[n].name = "x: n*c_in*h*w = (2^31-1)^4";
  dlconv_conv2d_desc_init(&c[n++].d, INT32_MAX, INT32_MAX, INT32_MAX, INT32_MAX, 1, 1, 1);
  c[n].name = "w: c_out*c_in*k_h*k_w ~ 2^92";
  dlconv_conv2d_desc_init(&c[n].d, 1, 1 << 30, 1, 1, 1 << 30, 1 << 16, 1 << 16);
  c[n].d.pad_top = c[n].d.pad_bottom = c[n].d.pad_left = c[n].d.pad_right = 1 << 15;
  n++;
  c[n].name = "y: (2^30+1)^2 pixels x 16 channels";
  dlconv_conv2d_desc_init(&c[n].d, 1, 1, 1, 1, 16, 1, 1);
  c[n].d.pad_top = c[n].d.pad_bottom = c[n].d.pad_left = c[n].d.pad_right = 1 << 29;
  n++;
  c[n].name = "output height above INT32_MAX";
  dlconv_conv2d_desc_init(&c[n].d, 1, 1, 1, 1, 1, 1, 1);
  c[n].d.pad_top = c[n].d.pad_bottom = INT32_MAX;
  n++;
  c[n].name = "x via NHWC batch: 2^31-1 images of 2^31-1 channels";
  dlconv_conv2d_desc_init(&c[n].d, INT32_MAX, INT32_MAX, 1, 1, 1, 1, 1);
  c[n].d.layout = DLCONV_NHWC;
  n++;
  float w[4] = {0};
  for (int i = 0; i < n; i++) {
    int32_t ho = -5, wo = -5;
    dlconv_status st = dlconv_conv2d_output_shape(&c[i].d, &ho, &wo);
    if (st != DLCONV_ERR_INVALID_ARG) print_error("%s: output_shape -> %d\n", c[i].name, (int)st);
    assert_int_equal(st, DLCONV_ERR_INVALID_ARG);
    assert_true(dlconv_last_error()[0] != 0);
    dlconv_plan *p = (dlconv_plan *)(uintptr_t)0x8;
    st = dlconv_plan_conv2d(&p, &c[i].d, w, NULL, NULL, NULL);
    if (!failed_cleanly(st, DLCONV_ERR_INVALID_ARG, p)) print_error("%s: plan -> %d (%s)\n", c[i].name, (int)st, dlconv_last_error());
    assert_true(failed_cleanly(st, DLCONV_ERR_INVALID_ARG, p));
    printf("  %-50s rejected: %s\n", c[i].name, dlconv_last_error());
  }
  /* dense: batch * in_features overflowing */
  dlconv_plan *p = (dlconv_plan *)(uintptr_t)0x8;
  dlconv_status st = dlconv_plan_dense(&p, INT32_MAX, INT32_MAX, INT32_MAX, DLCONV_F32, w, NULL, -INFINITY, INFINITY, NULL, NULL);
  assert_true(failed_cleanly(st, DLCONV_ERR_INVALID_ARG, p));
  float y[4];
  st = dlconv_dense(INT32_MAX, INT32_MAX, 1, DLCONV_F32, w, w, NULL, y, -INFINITY, INFINITY, NULL, NULL);
  assert_int_equal(st, DLCONV_ERR_INVALID_ARG);
}

/* Products that overflow int32 but not int64: valid. The plan reports the exact MAC count
   (no wrap-around) for a layer whose weights are small (caller CSR with no nonzeros, so that
   nothing big has to be allocated), and a layer whose MAC count would overflow int64 is
   rejected rather than reported wrapped. */
static void test_int32_products(void **state) {
  (void)state;
  /* 1 x 65536 x 1 x 1 input, 65536 -> 64 channels 1x1: x has 2^16 elements, macs 2^22; with
     pads of 2^15 the output is (2^16+1)^2 pixels: y elements 2^38, macs 2^38 * 2^16 = 2^54 */
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 1, 1 << 16, 1, 1, 64, 1, 1);
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1 << 15;
  int32_t ho, wo;
  assert_int_equal(dlconv_conv2d_output_shape(&d, &ho, &wo), DLCONV_OK);
  assert_int_equal(ho, (1 << 16) + 1);
  int32_t *row_ptr = calloc(65, sizeof(int32_t));
  dlconv_csr csr = {.rows = 64, .cols = 1 << 16, .nnz = 0, .row_ptr = row_ptr};
  dlconv_options o = opts(DLCONV_ALGO_SPARSE_CSR, DLCONV_ISA_AUTO);
  dlconv_plan *p = NULL;
  dlconv_status st = dlconv_plan_conv2d_csr(&p, &d, &csr, NULL, NULL, &o);
  if (st != DLCONV_OK) print_error("plan -> %s (%s)\n", dlconv_status_string(st), dlconv_last_error());
  assert_int_equal(st, DLCONV_OK);
  dlconv_plan_info info;
  assert_int_equal(dlconv_plan_query(p, &info), DLCONV_OK);
  const int64_t macs = (int64_t)64 * ho * wo * (1 << 16);
  assert_true(macs == info.macs);
  printf("  2^16 channels, (2^16+1)^2 pixels: macs %lld exact, workspace %zu bytes\n", (long long)info.macs,
         info.workspace_bytes);
  dlconv_plan_destroy(p);

  /* 2^24 input channels, (2^20+1)^2 output pixels: 2^64 MACs do not fit int64 */
  dlconv_conv2d_desc_init(&d, 1, 1 << 24, 1, 1, 1, 1, 1);
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1 << 19;
  csr = (dlconv_csr){.rows = 1, .cols = 1 << 24, .nnz = 0, .row_ptr = row_ptr};
  p = (dlconv_plan *)(uintptr_t)0x8;
  st = dlconv_plan_conv2d_csr(&p, &d, &csr, NULL, NULL, &o);
  if (st == DLCONV_OK) {
    dlconv_plan_query(p, &info);
    print_error("a layer of 2^64 MACs was planned, info.macs = %lld\n", (long long)info.macs);
    dlconv_plan_destroy(p);
  }
  assert_true(failed_cleanly(st, DLCONV_ERR_INVALID_ARG, p));
  assert_int_equal(dlconv_conv2d_output_shape(&d, &ho, &wo), DLCONV_ERR_INVALID_ARG);
  printf("  2^64 MACs rejected: %s\n", dlconv_last_error());
  free(row_ptr);
}

/* Layers that are small to compute but whose index arithmetic reaches 2^31..2^62 (huge
   padding, strides, dilations), and whose packed input windows (spatial pack, GSPC) would
   exceed the address space or overflow size_t. For every algorithm and ISA: planning either
   fails cleanly, or the plan works: its workspace size is honest (execute with a caller
   workspace of exactly that size stays inside it and is right; with workspace NULL it is right
   or answers OUT_OF_MEMORY cleanly). */
#define WS_EXECUTE_MAX ((size_t)64 << 20)

static void test_huge_windows(void **state) {
  (void)state;
  typedef struct { const char *name; dlconv_conv2d_desc d; } c_t;
  c_t c[6];
  int n = 0;
  c[n].name = "pad 2^30, stride 2^22: 512x512 output of 3 pixels";
  dlconv_conv2d_desc_init(&c[n].d, 1, 3, 1, 1, 2, 3, 3);
  c[n].d.pad_top = c[n].d.pad_bottom = c[n].d.pad_left = c[n].d.pad_right = 1 << 30;
  c[n].d.stride_h = c[n].d.stride_w = 1 << 22;
  n++;
  c[n].name = "dilation 2^30 over pad 2^30";
  dlconv_conv2d_desc_init(&c[n].d, 1, 2, 1, 3, 2, 2, 2);
  c[n].d.pad_top = 1 << 30;
  c[n].d.dilation_h = 1 << 30;
  n++;
  c[n].name = "window of 2^62 floats (wraps to 0 bytes)";
  dlconv_conv2d_desc_init(&c[n].d, 1, 16, 1, 1, 16, 2, 1);
  c[n].d.dilation_h = INT32_MAX;
  c[n].d.pad_top = INT32_MAX;
  c[n].d.stride_w = 1 << 20;
  c[n].d.pad_right = 127 << 20;
  n++;
  c[n].name = "the same, NHWC";
  c[n].d = c[n - 1].d;
  c[n].d.layout = DLCONV_NHWC;
  n++;
  c[n].name = "depthwise, stride 2^24 and pad 2^30, NHWC";
  dlconv_conv2d_desc_init(&c[n].d, 1, 8, 2, 2, 8, 3, 3);
  c[n].d.groups = 8;
  c[n].d.pad_top = c[n].d.pad_left = 1 << 30;
  c[n].d.pad_bottom = c[n].d.pad_right = 1 << 30;
  c[n].d.stride_h = c[n].d.stride_w = 1 << 24;
  c[n].d.layout = DLCONV_NHWC;
  n++;
  pair ps[64];
  int np = all_pairs(ps);
  tally t = {0};
  for (int i = 0; i < n; i++) {
    rng_t r = rng_seed(31 + (uint64_t)i);
    data_opts o = {.bias = 1};
    conv_data cd;
    cd_init(&cd, KIND_CONV, &c[i].d, &r, &o);
    printf("  %s (%zu outputs)\n", c[i].name, cd.y_len);
    for (int k = 0; k < np; k++) {
      dlconv_options op = opts(ps[k].algo, ps[k].isa);
      dlconv_plan *p = (dlconv_plan *)(uintptr_t)0x8;
      dlconv_status st = dlconv_plan_conv2d(&p, &c[i].d, cd.w, cd.bias, NULL, &op);
      if (st != DLCONV_OK) {
        if (p != NULL || !dlconv_last_error()[0] || st == DLCONV_ERR_INTERNAL)
          tally_fail(&t, "%s %s/%s: plan failed uncleanly (%s)", c[i].name, algo_name(ps[k].algo), isa_name(ps[k].isa),
                     dlconv_status_string(st));
        else if (ps[k].isa == DLCONV_ISA_AUTO && ps[k].algo == DLCONV_ALGO_AUTO)
          tally_fail(&t, "%s: AUTO/AUTO refused a layer direct can do: %s", c[i].name, dlconv_last_error());
        else
          printf("    %-7s %-8s refused: %s: %s\n", algo_name(ps[k].algo), isa_name(ps[k].isa), dlconv_status_string(st),
                 dlconv_last_error());
        continue;
      }
      dlconv_plan_info info;
      dlconv_plan_query(p, &info);
      size_t ws = info.workspace_bytes;
      char msg[600] = "";
      if (ws <= WS_EXECUTE_MAX) {
        run_cfg cfg = {.algo = ps[k].algo, .isa = ps[k].isa, .num_threads = 1, .ws_mode = 1};
        if (execute_checked(&cd, p, &cfg, NULL, msg, sizeof msg))
          tally_fail(&t, "%s %s/%s (%s, workspace %zu): %s", c[i].name, algo_name(ps[k].algo), isa_name(ps[k].isa),
                     info.kernel, ws, msg);
        cfg.ws_mode = 0;
        msg[0] = 0;
        if (execute_checked(&cd, p, &cfg, NULL, msg, sizeof msg))
          tally_fail(&t, "%s %s/%s (%s, workspace NULL): %s", c[i].name, algo_name(ps[k].algo), isa_name(ps[k].isa),
                     info.kernel, msg);
      } else if (ws > (size_t)PTRDIFF_MAX) {
        tally_fail(&t, "%s %s/%s (%s): workspace %zu bytes exceeds PTRDIFF_MAX", c[i].name, algo_name(ps[k].algo),
                   isa_name(ps[k].isa), info.kernel, ws);
      } else if (ws > ((size_t)1 << 40)) {
        /* beyond any machine: execute must say OUT_OF_MEMORY and leave y alone */
        canary_buf yb;
        canary_alloc(&yb, cd.y_len * 4, 0);
        dlconv_status es = dlconv_execute(p, cd.x, yb.p, NULL);
        if (es != DLCONV_ERR_OUT_OF_MEMORY || !dlconv_last_error()[0] || !canary_untouched(&yb))
          tally_fail(&t, "%s %s/%s: workspace %zu bytes, execute -> %s, y %s", c[i].name, algo_name(ps[k].algo),
                     isa_name(ps[k].isa), ws, dlconv_status_string(es), canary_untouched(&yb) ? "untouched" : "written");
        canary_free(&yb);
      }
      printf("    %-7s %-8s %-28s workspace %zu%s\n", algo_name(ps[k].algo), isa_name(ps[k].isa), info.kernel, ws,
             ws <= WS_EXECUTE_MAX ? "" : ws > ((size_t)1 << 40) ? " (execute: OUT_OF_MEMORY)" : " (not executed)");
      dlconv_plan_destroy(p);
    }
    cd_free(&cd);
  }
  assert_int_equal(t.fails, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Pointers                                                                                   */

/* docs/api.md: x, y, w and bias need their element type's alignment (4 bytes for F32). Pointers
   off by 1, 2 or 3 bytes are refused with INVALID_ARG and a message, touching nothing (this
   library refuses them rather than reading floats across their alignment); pointers off
   64-byte alignment by any multiple of 4 work for every algorithm and ISA. */
static void test_misaligned_pointers(void **state) {
  (void)state;
  const data_opts o = {.bias = 1, .zero_frac = 0.3};
  conv_data cd;
  dlconv_conv2d_desc d = *cd_init_same3x3(&cd, KIND_CSR, 5, 7, 9, 11, 5, &o);
  dlconv_plan *p = NULL;
  assert_int_equal(dlconv_plan_conv2d(&p, &d, cd.w, cd.bias, NULL, NULL), DLCONV_OK);
  size_t xb = cd.x_len * 4, yb = cd.y_len * 4, wb = cd.w_len * 4;
  unsigned char *buf = aligned_alloc(64, (8192 + xb + yb + wb + 63) / 64 * 64);
  for (int off = 1; off <= 3; off++) {
    /* x */
    unsigned char *xm = buf + off, *ym = buf + 4096 + xb;
    memcpy(xm, cd.x, xb);
    memset(ym, 0x77, yb);
    dlconv_status st = dlconv_execute(p, xm, ym, NULL);
    assert_int_equal(st, DLCONV_ERR_INVALID_ARG);
    assert_non_null(strstr(dlconv_last_error(), "x"));
    for (size_t i = 0; i < yb; i++) assert_int_equal(ym[i], 0x77);
    /* y */
    ym = buf + 4096 + xb + (size_t)off;
    memset(ym, 0x77, yb);
    st = dlconv_execute(p, cd.x, ym, NULL);
    assert_int_equal(st, DLCONV_ERR_INVALID_ARG);
    assert_non_null(strstr(dlconv_last_error(), "y"));
    for (size_t i = 0; i < yb; i++) assert_int_equal(ym[i], 0x77);
    /* one-shot: same refusals */
    st = dlconv_conv2d(&d, cd.x, cd.w, cd.bias, ym, NULL, NULL);
    assert_int_equal(st, DLCONV_ERR_INVALID_ARG);
    for (size_t i = 0; i < yb; i++) assert_int_equal(ym[i], 0x77);
    /* w, bias */
    unsigned char *wm = buf + off;
    memcpy(wm, cd.w, wb);
    dlconv_plan *q = (dlconv_plan *)(uintptr_t)0x8;
    st = dlconv_plan_conv2d(&q, &d, wm, cd.bias, NULL, NULL);
    assert_true(failed_cleanly(st, DLCONV_ERR_INVALID_ARG, q));
    q = (dlconv_plan *)(uintptr_t)0x8;
    memcpy(wm, cd.bias, (size_t)d.c_out * 4);
    st = dlconv_plan_conv2d(&q, &d, cd.w, wm, NULL, NULL);
    assert_true(failed_cleanly(st, DLCONV_ERR_INVALID_ARG, q));
    /* CSR arrays */
    for (int which = 0; which < 3; which++) {
      dlconv_csr c = cd.csr;
      size_t bytes = which == 0 ? (size_t)c.nnz * 4 : which == 1 ? (size_t)c.nnz * 4 : (size_t)(c.rows + 1) * 4;
      memcpy(wm, which == 0 ? (const void *)c.values : which == 1 ? (const void *)c.col_indices : (const void *)c.row_ptr,
             bytes);
      if (which == 0) c.values = wm;
      else if (which == 1) c.col_indices = (const int32_t *)(const void *)wm;
      else c.row_ptr = (const int32_t *)(const void *)wm;
      q = (dlconv_plan *)(uintptr_t)0x8;
      st = dlconv_plan_conv2d_csr(&q, &d, &c, cd.bias, NULL, NULL);
      if (!failed_cleanly(st, DLCONV_ERR_INVALID_ARG, q))
        print_error("csr %s misaligned by %d: plan -> %s (%s)\n", which == 0 ? "values" : which == 1 ? "col_indices" : "row_ptr",
                    off, dlconv_status_string(st), dlconv_last_error());
      assert_true(failed_cleanly(st, DLCONV_ERR_INVALID_ARG, q));
    }
  }
  printf("  x, y, w, bias, csr arrays off by 1..3 bytes: refused with INVALID_ARG (\"%s\")\n", dlconv_last_error());
  dlconv_plan_destroy(p);
  free(buf);
  cd_free(&cd);

  /* 4-byte aligned but not 64: every algorithm, every ISA, x/w/bias/y shifted by 4..60 bytes */
  pair ps[64];
  int np = all_pairs(ps);
  tally t = {0};
  for (int s = 0; s < 4; s++) {
    dlconv_conv2d_desc_init(&d, 1, 6, 6, 7, 10, 3, 3);
    d.pad_top = d.pad_left = 1;
    d.layout = s & 1 ? DLCONV_NHWC : DLCONV_NCHW;
    if (s == 2) d.groups = 2;
    if (s == 3) { d.groups = 6; d.c_out = 12; }
    rng_t rr = rng_seed(50 + (uint64_t)s);
    data_opts oo = {.bias = 1, .shift = (size_t)(4 + 20 * s)};
    cd_init(&cd, KIND_CONV, &d, &rr, &oo);
    for (int k = 0; k < np; k++) {
      run_cfg cfg = {.algo = ps[k].algo, .isa = ps[k].isa, .num_threads = 1, .ws_mode = k & 1,
                     .y_shift = (size_t)(4 * (1 + (k + s) % 15))};
      run_result res;
      run_outcome out = run_case(&cd, &cfg, &res);
      if (out == RUN_FAIL || (out == RUN_UNSUPPORTED && pair_required(cfg.algo, cfg.isa)))
        tally_fail(&t, "shift case %d %s/%s: %s", s, algo_name(cfg.algo), isa_name(cfg.isa), res.msg);
    }
    cd_free(&cd);
  }
  assert_int_equal(t.fails, 0);
}

/* x and y must not overlap (nor the workspace either of them): INVALID_ARG, memory untouched. */
static void test_aliasing(void **state) {
  (void)state;
  /* a 3x3 window over a padded input: y is as big as x */
  const data_opts o = {.bias = 1};
  conv_data cd;
  dlconv_conv2d_desc d = *cd_init_same3x3(&cd, KIND_CONV, 4, 6, 6, 4, 8, &o);
  pair ps[64];
  int np = all_pairs(ps);
  const size_t xl = cd.x_len, yl = cd.y_len;
  for (int k = 0; k < np; k++) {
    dlconv_options op = opts(ps[k].algo, ps[k].isa);
    dlconv_plan *p = NULL;
    dlconv_status st = dlconv_plan_conv2d(&p, &d, cd.w, cd.bias, NULL, &op);
    if (st == DLCONV_ERR_UNSUPPORTED && !pair_required(ps[k].algo, ps[k].isa)) continue;
    assert_int_equal(st, DLCONV_OK);
    size_t ws = dlconv_plan_workspace_size(p);
    /* room for x, y and a workspace placed anywhere over them without leaving the buffer */
    const size_t y_off = (xl + 64) / 16 * 16, span = y_off + yl + 64 + ws / 4 + 64;
    float *buf = aligned_alloc(64, (span * 4 + 63) / 64 * 64);
    float *snap = malloc(span * 4);
    const struct { const char *what; size_t x_at, y_at; long ws_at; } cases[] = {
        {"y == x", 0, 0, -1},
        {"y inside x", 0, xl / 2, -1},
        {"x inside y", yl / 2, 0, -1},
        {"y ends where x starts + 1", 1, 0, -1},
        {"workspace over x", 0, y_off, 0},
        {"workspace over y", 0, y_off, (long)(y_off + (yl / 2 & ~(size_t)15))},
    };
    for (size_t c = 0; c < ARRAY_LEN(cases); c++) {
      if (cases[c].ws_at >= 0 && ws == 0) continue;   /* no workspace: nothing to overlap */
      for (size_t i = 0; i < span; i++) buf[i] = (float)i;
      memcpy(buf + cases[c].x_at, cd.x, xl * 4);
      memcpy(snap, buf, span * 4);
      void *wsp = cases[c].ws_at >= 0 ? (void *)(buf + cases[c].ws_at) : NULL;
      st = dlconv_execute(p, buf + cases[c].x_at, buf + cases[c].y_at, wsp);
      if (st != DLCONV_ERR_INVALID_ARG || memcmp(buf, snap, span * 4) || !dlconv_last_error()[0])
        print_error("%s/%s %s: execute -> %s (%s)%s\n", algo_name(ps[k].algo), isa_name(ps[k].isa), cases[c].what,
                    dlconv_status_string(st), dlconv_last_error(), memcmp(buf, snap, span * 4) ? ", memory written" : "");
      assert_int_equal(st, DLCONV_ERR_INVALID_ARG);
      assert_memory_equal(buf, snap, span * 4);
    }
    free(buf);
    free(snap);
    dlconv_plan_destroy(p);
  }
  const size_t span = xl + yl + 64;
  float *buf = aligned_alloc(64, (span * 4 + 63) / 64 * 64);
  float *snap = malloc(span * 4);
  /* one-shot and dense: x == y */
  for (size_t i = 0; i < span; i++) buf[i] = (float)i;
  memcpy(buf, cd.x, xl * 4);
  memcpy(snap, buf, span * 4);
  assert_int_equal(dlconv_conv2d(&d, buf, cd.w, cd.bias, buf, NULL, NULL), DLCONV_ERR_INVALID_ARG);
  assert_int_equal(dlconv_dense(2, 8, 8, DLCONV_F32, buf, cd.w, NULL, buf + 4, -INFINITY, INFINITY, NULL, NULL),
                   DLCONV_ERR_INVALID_ARG);
  assert_memory_equal(buf, snap, span * 4);
  free(buf);
  free(snap);
  cd_free(&cd);
}

/* ------------------------------------------------------------------------------------------ */
/* NaN and Inf                                                                                */

/* NaN and +-Inf in x (and NaN/Inf in bias, NaN in a weight of an unpadded layer) reach exactly
   the outputs that depend on them, through every algorithm, ISA and clamp: a NaN is never
   clamped away (docs/api.md, "Clamp"), +-Inf clamps to the bound, Inf + -Inf is NaN, every other
   output is finite and right. All weights nonzero, so "depends on" is unambiguous. */
static void test_nan_inf_propagation(void **state) {
  (void)state;
  static const float clamps[][2] = {{-INFINITY, INFINITY}, {0, INFINITY}, {0, 6}, {-1, 1}, {-INFINITY, 0.5f}};
  typedef struct { const char *name; case_kind kind; dlconv_conv2d_desc d; int weight_nan; } c_t;
  c_t c[8];
  int n = 0;
  c[n] = (c_t){.name = "3x3 pad NCHW", .kind = KIND_CONV};
  dlconv_conv2d_desc_init(&c[n].d, 1, 5, 9, 8, 7, 3, 3);
  c[n].d.pad_top = c[n].d.pad_bottom = c[n].d.pad_left = c[n].d.pad_right = 1;
  n++;
  c[n] = (c_t){.name = "5x3 stride 2 NHWC batch 2", .kind = KIND_CONV};
  dlconv_conv2d_desc_init(&c[n].d, 2, 6, 11, 9, 17, 5, 3);
  c[n].d.stride_h = c[n].d.stride_w = 2;
  c[n].d.pad_top = 2; c[n].d.pad_left = 1;
  c[n].d.layout = DLCONV_NHWC;
  n++;
  c[n] = (c_t){.name = "depthwise x2 NCHW", .kind = KIND_CONV};
  dlconv_conv2d_desc_init(&c[n].d, 1, 8, 10, 10, 16, 3, 3);
  c[n].d.groups = 8;
  c[n].d.pad_top = c[n].d.pad_bottom = c[n].d.pad_left = c[n].d.pad_right = 1;
  n++;
  c[n] = (c_t){.name = "depthwise NHWC", .kind = KIND_CONV};
  dlconv_conv2d_desc_init(&c[n].d, 1, 16, 7, 7, 16, 3, 3);
  c[n].d.groups = 16;
  c[n].d.pad_top = c[n].d.pad_bottom = c[n].d.pad_left = c[n].d.pad_right = 1;
  c[n].d.layout = DLCONV_NHWC;
  n++;
  c[n] = (c_t){.name = "grouped 1x1 NCHW, NaN weight", .kind = KIND_CONV, .weight_nan = 1};
  dlconv_conv2d_desc_init(&c[n].d, 1, 12, 5, 6, 20, 1, 1);
  c[n].d.groups = 4;
  n++;
  c[n] = (c_t){.name = "3x3 unpadded NHWC via CSR, NaN weight", .kind = KIND_CSR, .weight_nan = 1};
  dlconv_conv2d_desc_init(&c[n].d, 1, 7, 8, 8, 9, 3, 3);
  c[n].d.layout = DLCONV_NHWC;
  n++;
  c[n] = (c_t){.name = "dense 3x70->40", .kind = KIND_DENSE};
  dense_desc(&c[n].d, 3, 70, 40, -INFINITY, INFINITY);
  n++;
  pair ps[64];
  int np = all_pairs(ps);
  tally t = {0};
  long runs = 0, nan_out = 0, inf_out = 0;
  for (int i = 0; i < n; i++)
    for (size_t cl = 0; cl < ARRAY_LEN(clamps); cl++) {
      dlconv_conv2d_desc d = c[i].d;
      d.out_min = clamps[cl][0];
      d.out_max = clamps[cl][1];
      rng_t r = rng_seed(1000 + (uint64_t)i * 10 + cl);
      data_opts o = {.bias = 1};
      conv_data cd;
      cd_init(&cd, c[i].kind, &d, &r, &o);
      for (size_t k = 0; k < cd.w_len; k++)
        if (cd.w[k] == 0.0f) cd.w[k] = 0.5f;
      /* x: a NaN, a +Inf and a -Inf apart, and a +Inf next to a -Inf (their sum is NaN) */
      const size_t xl = cd.x_len;
      cd.x[xl / 7] = NAN;
      cd.x[xl / 3] = INFINITY;
      cd.x[(2 * xl) / 3] = -INFINITY;
      cd.x[xl - 1] = INFINITY;
      cd.x[xl - 1 - (size_t)(d.layout == DLCONV_NHWC ? d.c_in : 1)] = -INFINITY;
      if (cd.bias) {
        cd.bias[d.c_out / 2] = NAN;
        cd.bias[d.c_out - 1] = d.c_out > 2 ? -INFINITY : cd.bias[d.c_out - 1];
      }
      if (c[i].weight_nan) cd.w[cd.K + 1] = NAN;   /* second output channel, second tap */
      cd_refresh(&cd);
      if (c[i].kind == KIND_CSR) {   /* the CSR holds the same (all nonzero) weights */
        free(cd.csr_vals); free(cd.csr_cols); free(cd.csr_rowptr);
        free(cd.csr_vals0); free(cd.csr_cols0); free(cd.csr_rowptr0);
        cd.nnz = cd.w_len;
        build_csr(&cd, &r);
      }
      for (size_t k = 0; k < cd.y_len; k++) {
        nan_out += isnan(cd.ref[k]) != 0;
        inf_out += isinf(cd.ref[k]) != 0;
      }
      for (int k = 0; k < np; k++) {
        run_cfg cfg = {.algo = ps[k].algo, .isa = ps[k].isa, .num_threads = 1 + (k & 1), .ws_mode = k & 1};
        run_result res;
        run_outcome out = run_case(&cd, &cfg, &res);
        runs++;
        if (out == RUN_FAIL || (out == RUN_UNSUPPORTED && pair_required(cfg.algo, cfg.isa)))
          tally_fail(&t, "%s clamp [%g, %g] %s/%s (%s): %s", c[i].name, (double)d.out_min, (double)d.out_max,
                     algo_name(cfg.algo), isa_name(cfg.isa), res.info.kernel, res.msg);
      }
      cd_free(&cd);
    }
  printf("  %ld runs; reference outputs: %ld NaN, %ld infinite (after the clamp)\n", runs, nan_out, inf_out);
  assert_true(nan_out > 0 && inf_out > 0);
  assert_int_equal(t.fails, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Denormals                                                                                  */

/* Denormal inputs must not slow execution down by more than 2x: x all denormal (products and
   sums denormal or underflowing) against the same layer with normal x, the best of interleaved
   repeated trials each, for every ISA and algorithm. On this project's Xeon (AVX-512) a vector
   FMA with a denormal operand or result takes a microcode assist: before the kernels ran with
   FTZ/DAZ (set per task and restored, src/core/fpenv.h) direct, spatial pack and GSPC were
   245-330x slower on denormal x with AVX2 and AVX-512, im2col and CSR unaffected. */
static double time_exec(const dlconv_plan *p, const float *x, float *y, void *ws, int reps) {
  double best = INFINITY;
  for (int r = 0; r < reps; r++) {
    double t0 = now_s();
    dlconv_execute(p, x, y, ws);
    double dt = now_s() - t0;
    if (dt < best) best = dt;
  }
  return best;
}

static void test_denormal_speed(void **state) {
  (void)state;
  const data_opts o = {.bias = 0};
  conv_data cd;
  dlconv_conv2d_desc d = *cd_init_same3x3(&cd, KIND_CONV, 32, 20, 20, 32, 77, &o);
  float *xd = malloc(cd.x_len * 4), *y = malloc(cd.y_len * 4);
  for (size_t i = 0; i < cd.x_len; i++) xd[i] = cd.x[i] * 1e-38f;   /* |x| < FLT_MIN: denormal */
  size_t denorm = 0;
  for (size_t i = 0; i < cd.x_len; i++) denorm += xd[i] != 0 && fabsf(xd[i]) < FLT_MIN;
  assert_true(denorm > cd.x_len * 9 / 10);
  dlconv_isa isas[8];
  int ni = cpu_isas(isas);
  tally t = {0};
  printf("  %-8s %-7s %12s %12s %7s\n", "isa", "algo", "normal us", "denormal us", "ratio");
  for (int i = 0; i < ni; i++)
    for (size_t a = 1; a < ARRAY_LEN(ALGOS); a++) {
      dlconv_options op = opts(ALGOS[a], isas[i]);
      dlconv_plan *p = NULL;
      if (dlconv_plan_conv2d(&p, &d, cd.w, NULL, NULL, &op) != DLCONV_OK) continue;
      size_t wsb = dlconv_plan_workspace_size(p);
      void *ws = wsb ? aligned_alloc(64, (wsb + 63) / 64 * 64) : NULL;
      double tn = INFINITY, td = INFINITY;
      for (int trial = 0; trial < 7; trial++) {   /* interleaved, so load changes hit both alike */
        double a1 = time_exec(p, cd.x, y, ws, 3), b1 = time_exec(p, xd, y, ws, 3);
        if (a1 < tn) tn = a1;
        if (b1 < td) td = b1;
      }
      double ratio = td / tn;
      printf("  %-8s %-7s %12.1f %12.1f %7.2f\n", isa_name(isas[i]), algo_name(ALGOS[a]), tn * 1e6, td * 1e6, ratio);
      if (ratio > 2.0)
        tally_fail(&t, "%s/%s: denormal x %.2fx slower than normal x", isa_name(isas[i]), algo_name(ALGOS[a]), ratio);
      free(ws);
      dlconv_plan_destroy(p);
    }
  free(xd);
  free(y);
  cd_free(&cd);
  assert_int_equal(t.fails, 0);
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "denormals")) {
    return RUN_GROUP("hostile_denormals", test_denormal_speed);
  }
  return RUN_GROUP("hostile", test_overflowing_sizes_rejected, test_int32_products, test_huge_windows,
                   test_misaligned_pointers, test_aliasing, test_nan_inf_propagation);
}
