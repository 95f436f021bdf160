/* test_ukernel_spack.c - the spatial_pack micro-kernels of every ISA this machine runs, at every
 * tile edge, against a naive double-precision reference written here, and the spatial_pack driver
 * through the public API with every ISA forced, against the oracle (tests/oracle.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arch/families.h"
#include "dlconv.h"
#include "oracle.h"
#include "support/alloc.h"
#include "support/compare.h"
#include "support/kernel_tables.h"
#include "support/layer.h"
#include "support/rng.h"
#include "support/skip.h"

#define GUARD 67
static const float SENTINEL = -7777.0f;

/* ---------------------------------------------------------------------------------------------
 * Micro-kernel level: every (vh, vw) tile of every family, every channel count nc, both
 * output layouts, clamp on and off; every element outside the tile must stay untouched. */

enum { K_CIN = 3, K_TAPS = 5 };

typedef struct ktest {
  const dlc_f32_spack_family *f;
  dlc_f32_spack_params prm;
  ptrdiff_t tap_off[K_TAPS];
  float *in, *w, *bias, *y;
  size_t nin, ny;
} ktest;

static void ktest_init(ktest *t, const dlc_f32_spack_family *f) {
  memset(t, 0, sizeof *t);
  t->f = f;
  /* Taps at irregular offsets over three rows, like a strided, dilated filter. */
  const size_t rs = f->vw + 7;
  const ptrdiff_t offs[K_TAPS] = {0, 1, 3, (ptrdiff_t)rs + 2, 2 * (ptrdiff_t)rs + 5};
  memcpy(t->tap_off, offs, sizeof offs);
  t->prm.cin = K_CIN;
  t->prm.ntaps = K_TAPS;
  t->prm.tap_off = t->tap_off;
  t->prm.in_row_stride = rs + 3;   /* rows of the tile further apart than the taps' rows */
  t->prm.in_ch_stride = (f->vh + 3) * t->prm.in_row_stride + 11;
  t->nin = K_CIN * t->prm.in_ch_stride;
  t->in = xalloc(t->nin * sizeof(float));
  t->w = xalloc(K_CIN * K_TAPS * f->vc * sizeof(float));
  t->bias = xalloc(f->vc * sizeof(float));
  for (size_t i = 0; i < t->nin; i++) t->in[i] = frand();
  for (size_t i = 0; i < K_CIN * K_TAPS * f->vc; i++) t->w[i] = frand();
  for (size_t i = 0; i < f->vc; i++) t->bias[i] = frand();
  t->ny = (f->vh + 2) * (f->vw + 3) * (f->vc + 3) + GUARD;
  t->y = xalloc(t->ny * sizeof(float));
}

static void ktest_free(ktest *t) { free(t->in), free(t->w), free(t->bias), free(t->y); }

static void set_layout(ktest *t, int nhwc) {
  const dlc_f32_spack_family *f = t->f;
  if (nhwc) {
    t->prm.y_ch_stride = 1;
    t->prm.y_col_stride = f->vc + 3;
    t->prm.y_row_stride = (f->vw + 1) * t->prm.y_col_stride + 2;
  } else {
    t->prm.y_col_stride = 1;
    t->prm.y_row_stride = f->vw + 2;
    t->prm.y_ch_stride = (f->vh + 1) * t->prm.y_row_stride + 1;
  }
}

static void check_tile(const ktest *t, size_t nvh, size_t nvw, size_t nc, const char *what) {
  const dlc_f32_spack_family *f = t->f;
  const dlc_f32_spack_params *p = &t->prm;
  char *inside = calloc(t->ny, 1);
  assert_non_null(inside);
  for (size_t vh = 0; vh < nvh; vh++)
    for (size_t vw = 0; vw < nvw; vw++)
      for (size_t c = 0; c < nc; c++) {
        double acc = t->bias[c], mag = fabs(t->bias[c]);
        for (size_t ic = 0; ic < K_CIN; ic++)
          for (size_t k = 0; k < K_TAPS; k++) {
            double v = (double)t->in[ic * p->in_ch_stride + (size_t)t->tap_off[k] +
                                     vh * p->in_row_stride + vw] *
                       t->w[(ic * K_TAPS + k) * f->vc + c];
            acc += v;
            mag += fabs(v);
          }
        acc = clampd(acc, p->out_min, p->out_max);
        size_t at = vh * p->y_row_stride + vw * p->y_col_stride + c * p->y_ch_stride;
        assert_true(at < t->ny);
        inside[at] = 1;
        if (!close_enough(t->y[at], acc, mag, K_CIN * K_TAPS))
          fail_msg("%s %s tile %zux%zu nc=%zu: y[%zu][%zu][%zu] = %.9g, want %.9g", f->name, what,
                   nvh, nvw, nc, vh, vw, c, (double)t->y[at], acc);
      }
  for (size_t i = 0; i < t->ny; i++)
    if (!inside[i] && t->y[i] != SENTINEL)
      fail_msg("%s %s tile %zux%zu nc=%zu wrote outside the tile at %zu", f->name, what, nvh, nvw,
               nc, i);
  free(inside);
}

static void test_family_tiles(const dlc_f32_spack_family *f) {
  assert_true(f->vh >= 1 && f->vw >= 1 && f->vc >= 1 && f->max_acc >= 1);
  assert_true(f->max_acc <= f->vh * f->vw);
  ktest t;
  ktest_init(&t, f);
  static const float clamps[2][2] = {{-INFINITY, INFINITY}, {-0.4f, 0.7f}};
  for (int nhwc = 0; nhwc < 2; nhwc++) {
    set_layout(&t, nhwc);
    for (size_t vh = 1; vh <= f->vh; vh++)
      for (size_t vw = 1; vw <= f->vw && vh * vw <= f->max_acc; vw++) {
        dlc_f32_spack_ukernel_fn k = dlc_spack_ukernel(f, vh, vw);
        if (!k) fail_msg("%s: no kernel for tile %zux%zu", f->name, vh, vw);
        for (size_t nc = 1; nc <= f->vc; nc++)
          for (int cl = 0; cl < 2; cl++) {
            t.prm.out_min = clamps[cl][0];
            t.prm.out_max = clamps[cl][1];
            for (size_t i = 0; i < t.ny; i++) t.y[i] = SENTINEL;
            k(&t.prm, t.in, t.w, t.bias, t.y, nc);
            check_tile(&t, vh, vw, nc, nhwc ? "nhwc" : "nchw");
          }
      }
  }
  /* A NaN input survives a ReLU6 clamp in every channel of the pixel that reads it. */
  t.prm.out_min = 0.0f;
  t.prm.out_max = 6.0f;
  t.in[0] = NAN;
  for (int nhwc = 0; nhwc < 2; nhwc++) {
    set_layout(&t, nhwc);
    for (size_t i = 0; i < t.ny; i++) t.y[i] = SENTINEL;
    dlc_spack_ukernel(f, 1, 1)(&t.prm, t.in, t.w, t.bias, t.y, f->vc);
    for (size_t c = 0; c < f->vc; c++) assert_true(isnan(t.y[c * t.prm.y_ch_stride]));
  }
  ktest_free(&t);
}

static void test_ukernels_every_isa(void **state) {
  (void)state;
  int tested = 0;
  const dlc_isa_kernels *k;
  for (size_t i = 0; (k = kernel_table(i)); i++)
    if (k->spack) test_family_tiles(k->spack), tested++;
  assert_true(tested >= 1);   /* generic always */
}

/* ---------------------------------------------------------------------------------------------
 * Driver level, through the public API. */

typedef layer_shape shape;

/* Checks y against the oracle (tests/oracle.c); returns the number of mismatches. */
static int check_conv(const dlconv_conv2d_desc *d, const float *x, const float *w, const float *bias, const float *y,
                      const char *what) {
  const layer_sizes z = layer_sizes_of(d);
  const size_t ny = z.y, k = z.k;
  double *ref = xalloc(ny * sizeof(double)), *mag = xalloc(ny * sizeof(double));
  oracle_conv2d(d, x, w, bias, ref, mag);
  int bad = 0;
  for (size_t i = 0; i < ny; i++)
    if (!close_enough(y[i], ref[i], mag[i], k) && bad++ < 3)
      print_error("%s: y[%zu] = %.9g, want %.9g\n", what, i, (double)y[i], ref[i]);
  free(ref), free(mag);
  return bad;
}

/* Plans and runs s with spatial_pack forced on isa; returns 0 when the ISA has no spack family. */
static int run_case(dlconv_isa isa, const shape *s, dlconv_layout layout, int clamp, int threads,
                    int with_bias) {
  dlconv_conv2d_desc d;
  const layer_sizes z = layer_desc(&d, s, layout, clamp ? -0.5f : -INFINITY, clamp ? 0.75f : INFINITY);
  const size_t nx = z.x, nw = z.w, ny = z.y;
  float *x = xalloc(nx * sizeof(float)), *w = xalloc(nw * sizeof(float));
  float *bias = xalloc((size_t)s->c_out * sizeof(float)), *y = xalloc((ny + GUARD) * sizeof(float));
  for (size_t i = 0; i < nx; i++) x[i] = frand();
  for (size_t i = 0; i < nw; i++) w[i] = frand();
  for (int i = 0; i < s->c_out; i++) bias[i] = frand();
  for (size_t i = 0; i < ny + GUARD; i++) y[i] = SENTINEL;

  const dlconv_options opt = forced_options(DLCONV_ALGO_SPATIAL_PACK, isa, threads);
  dlconv_plan *plan = NULL;
  dlconv_status st = dlconv_plan_conv2d(&plan, &d, w, with_bias ? bias : NULL, NULL, &opt);
  const dlc_isa_kernels *k = dlc_kernels_for(isa);
  int ran = 0;
  char what[256];
  snprintf(what, sizeof what,
           "%s %s n=%d c=%d->%d %dx%d k=%dx%d s=%d,%d d=%d,%d pad=%d,%d,%d,%d g=%d clamp=%d thr=%d",
           isa_label(isa), layout == DLCONV_NHWC ? "nhwc" : "nchw", s->n, s->c_in, s->c_out, s->h,
           s->w, s->kh, s->kw, s->sh, s->sw, s->dh, s->dw, s->pt, s->pb, s->pl, s->pr, s->groups, clamp,
           threads);
  if (!k || !k->spack) {
    if (st != DLCONV_ERR_UNSUPPORTED) fail_msg("%s: status %d, want UNSUPPORTED", what, (int)st);
    assert_null(plan);
  } else {
    if (st != DLCONV_OK) fail_msg("%s: plan failed: %s", what, dlconv_last_error());
    dlconv_plan_info info;
    assert_int_equal(dlconv_plan_query(plan, &info), DLCONV_OK);
    assert_int_equal(info.algo, DLCONV_ALGO_SPATIAL_PACK);
    assert_int_equal(info.isa, isa);
    assert_true(strncmp(info.kernel, "f32_spack_", 10) == 0);
    assert_true(strstr(info.kernel, isa_label(isa)) != NULL);
    /* Library-allocated workspace, then the caller's. */
    assert_int_equal(dlconv_execute(plan, x, y, NULL), DLCONV_OK);
    if (check_conv(&d, x, w, with_bias ? bias : NULL, y, what)) fail_msg("%s: wrong result", what);
    size_t wsb = dlconv_plan_workspace_size(plan);
    void *ws = wsb ? xalloc(wsb) : NULL;
    for (size_t i = 0; i < ny; i++) y[i] = SENTINEL;
    assert_int_equal(dlconv_execute(plan, x, y, ws), DLCONV_OK);
    if (check_conv(&d, x, w, with_bias ? bias : NULL, y, what))
      fail_msg("%s: wrong result with the caller's workspace", what);
    free(ws);
    for (size_t i = ny; i < ny + GUARD; i++)
      if (y[i] != SENTINEL) fail_msg("%s: wrote past y at +%zu", what, i - ny);
    ran = 1;
  }
  dlconv_plan_destroy(plan);
  free(x);
  free(w);
  free(bias);
  free(y);
  return ran;
}

/*                 n cin  h   w cout kh kw sh sw dh dw pt pb pl pr  g */
static const shape shapes[] = {
    {1, 3, 5, 7, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},         /* basic 3x3 pad 1 */
    {2, 5, 9, 11, 17, 3, 3, 2, 2, 1, 1, 1, 0, 2, 1, 1},       /* batch, odd channels, asym pad */
    {1, 4, 13, 13, 6, 3, 3, 3, 3, 1, 1, 0, 2, 1, 0, 2},       /* stride 3, 2 groups */
    {1, 6, 12, 15, 9, 3, 3, 1, 2, 2, 3, 2, 1, 3, 2, 3},       /* dilation 2x3, 3 groups */
    {2, 16, 10, 10, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16},    /* depthwise */
    {1, 8, 9, 14, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 8},       /* depthwise, multiplier 2 */
    {1, 5, 11, 6, 15, 5, 5, 2, 1, 2, 1, 4, 3, 2, 4, 5},       /* depthwise, multiplier 3, 5x5 */
    {1, 7, 1, 1, 19, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},        /* 1x1 image, 1x1 kernel */
    {2, 3, 1, 1, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},         /* 1x1 image, 3x3 pad 1 */
    {1, 33, 7, 9, 35, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},       /* 1x1 conv */
    {1, 300, 4, 40, 20, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},     /* strip split into column blocks */
    {1, 2, 20, 23, 3, 5, 7, 2, 1, 3, 2, 4, 5, 6, 0, 1},       /* 5x7 kernel, dilation, big pad */
    {1, 2, 4, 5, 3, 3, 3, 1, 1, 1, 1, 4, 3, 5, 2, 1},         /* windows wholly in the padding */
    {1, 4, 37, 3, 8, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1},        /* tall, thin: row bands and edges */
    {1, 3, 3, 61, 7, 1, 3, 1, 1, 1, 1, 0, 0, 1, 1, 1},        /* wide: column tiles and edges */
    {1, 64, 14, 14, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},     /* ResNet-like */
    {1, 3, 11, 11, 5, 2, 2, 3, 3, 1, 1, 0, 0, 0, 0, 1},       /* stride larger than the kernel */
    {1, 5, 17, 19, 7, 3, 3, 3, 3, 3, 3, 2, 1, 1, 2, 1},       /* stride 3 and dilation 3 */
    {3, 12, 7, 7, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4},       /* 7x7, groups 4, batch 3 */
    {1, 20, 30, 30, 33, 3, 3, 2, 2, 1, 1, 0, 1, 0, 1, 1},     /* odd c_out, stride 2 */
};
#define N_SHAPES (sizeof shapes / sizeof shapes[0])

static void test_driver_isa(dlconv_isa isa) {
  for (size_t i = 0; i < N_SHAPES; i++)
    for (int layout = 0; layout < 2; layout++)
      run_case(isa, &shapes[i], layout ? DLCONV_NHWC : DLCONV_NCHW, (int)((i + layout) % 2),
               (i % 3 == 0) ? 3 : 1, i % 4 != 3);
}

/* Random small shapes: every parameter varied together. */
static void test_driver_random_isa(dlconv_isa isa) {
  for (int it = 0; it < 60; it++) {
    shape s;
    s.groups = irand32(0, 3) == 0 ? irand32(2, 4) : 1;
    s.c_in = s.groups * irand32(1, 9);
    s.c_out = s.groups * irand32(1, 21);
    s.n = irand32(1, 2);
    s.kh = irand32(1, 4);
    s.kw = irand32(1, 4);
    s.sh = irand32(1, 3);
    s.sw = irand32(1, 3);
    s.dh = irand32(1, 3);
    s.dw = irand32(1, 3);
    s.pt = irand32(0, 3);
    s.pb = irand32(0, 3);
    s.pl = irand32(0, 3);
    s.pr = irand32(0, 3);
    s.h = irand32(1, 20);
    s.w = irand32(1, 33);
    /* Grow the image until the output is at least one pixel. */
    while (s.h + s.pt + s.pb < s.dh * (s.kh - 1) + 1) s.h++;
    while (s.w + s.pl + s.pr < s.dw * (s.kw - 1) + 1) s.w++;
    run_case(isa, &s, irand32(0, 1) ? DLCONV_NHWC : DLCONV_NCHW, irand32(0, 1), irand32(1, 4), irand32(0, 3) != 0);
  }
}

/* Every table's ISA forced, those without a spack family too (they must answer UNSUPPORTED). */
static void test_driver_every_isa(void **state) {
  (void)state;
  const dlc_isa_kernels *k;
  for (size_t i = 0; (k = kernel_table(i)); i++) test_driver_isa(k->isa);
}

static void test_random_every_isa(void **state) {
  (void)state;
  const dlc_isa_kernels *k;
  for (size_t i = 0; (k = kernel_table(i)); i++) test_driver_random_isa(k->isa);
}

/* A NaN in x survives the clamp through the whole driver. */
static void test_driver_nan(void **state) {
  (void)state;
  const dlc_isa_kernels *k;
  for (size_t i = 0; (k = kernel_table(i)); i++) {
    if (!k->spack) continue;
    for (int layout = 0; layout < 2; layout++) {
      dlconv_conv2d_desc d;
      dlconv_conv2d_desc_init(&d, 1, 2, 3, 3, 3, 1, 1);
      d.layout = layout ? DLCONV_NHWC : DLCONV_NCHW;
      d.out_min = 0.0f;
      d.out_max = 6.0f;
      float x[18], w[6] = {1, 1, 1, 1, 1, 1}, y[27];
      for (int j = 0; j < 18; j++) x[j] = 1.0f;
      x[0] = NAN;   /* channel 0 of pixel (0,0) in both layouts */
      const dlconv_options opt = forced_options(DLCONV_ALGO_SPATIAL_PACK, k->isa, 0);
      assert_int_equal(dlconv_conv2d(&d, x, w, NULL, y, NULL, &opt), DLCONV_OK);
      for (int c = 0; c < 3; c++) {
        assert_true(isnan(y[layout ? c : c * 9]));
        assert_true(y[layout ? 3 + c : c * 9 + 1] == 2.0f);
      }
    }
  }
}

int main(void) {
  rng_state = 0x9E3779B97F4A7C15ull;
  return RUN_TESTS(test_ukernels_every_isa, test_driver_every_isa, test_random_every_isa, test_driver_nan);
}
