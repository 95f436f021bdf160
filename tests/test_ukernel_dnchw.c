/* test_ukernel_dnchw.c - the fp32 NCHW pixels-in-lanes kernels (ukernel/dnchw_ukernel.h) of every
 * ISA table that has them, at every tile (nv, mr) with vectors of one to four row pieces whose
 * lane ranges start and end anywhere, and the direct_nchw driver through the public API (the
 * plan's kernel name says it ran) against the oracle: plane widths around the vector length and
 * the row pieces' limit, padding asymmetric and wider than the kernel's reach, groups, batches,
 * every oc block remainder, the clamp, threads. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/test_hooks.h"
#include "dlconv.h"
#include "oracle.h"
#include "support/alloc.h"
#include "support/compare.h"
#include "support/kernel_tables.h"
#include "support/layer.h"
#include "support/rng.h"
#include "support/skip.h"
#include "ukernel/config.h"

#define GUARD 37
static const float SENTINEL = -7777.0f;

static int close_dn(float got, double ref, double mag, size_t k) { return close_to_sum(got, ref, mag, k, 3e-7); }

static float *frand_buf(size_t n) {
  float *b = xalloc_slack(n * sizeof(float));
  for (size_t i = 0; i < n; i++) b[i] = frand();
  return b;
}

/* ---------------------------------------------------------------------------------------------
 * Micro-kernel level: random vectors of random row pieces into one "plane" of Y floats per output
 * channel; every float a piece stores is checked, every other one must keep its sentinel. */

#define Y_PLANE 160

/* Random pieces of a vector of vl lanes: disjoint lane ranges in order, each to its own part of
   the plane (distinct vectors of a tile write disjoint parts: vector v owns [v * 32, v * 32 + 32)). */
static void random_vec(dlc_dnchw_vec *d, size_t vl, size_t v, size_t xspan) {
  memset(d, 0, sizeof *d);
  d->x_off = (int32_t)irand32(0, (int)xspan);
  const int nseg = irand32(1, DLC_DNCHW_MAX_SEGS);
  int lane = irand32(0, (int)vl / 4);
  int yo = (int)(v * 32);
  for (int s = 0; s < nseg && lane < (int)vl; s++) {
    const int len = irand32(1, (int)vl - lane);
    d->lo[s] = (int8_t)lane;
    d->hi[s] = (int8_t)(lane + len);
    d->y_off[s] = yo;
    yo += len;
    d->nseg = s + 1;
    lane += len + irand32(0, 2);
  }
}

/* rows3: taps in rows of 3 (args.kw = 3, the kernel's constant-displacement loop), else any
   offsets from the table */
static void check_tile(const dlc_f32_dnchw_family *f, size_t nv, size_t mr, int clamp, int rows3) {
  const size_t vl = f->vl, n_ci = (size_t)irand32(1, 3);
  const size_t ntaps = rows3 ? 3 * (size_t)irand32(1, 2) : (size_t)irand32(1, 5);
  const int x_row = irand32(5, 20);
  const size_t xspan = 40, x_c = xspan + 64 + vl + 3;   /* room for x_off + tap + lanes */
  float *x = frand_buf(n_ci * x_c + vl);
  float *w = frand_buf(n_ci * ntaps * mr), *b = frand_buf(mr);
  int32_t tap[6];
  for (size_t t = 0; t < ntaps; t++) tap[t] = rows3 ? (int32_t)(t / 3) * x_row + (int32_t)(t % 3) : irand32(0, 64);
  dlc_dnchw_vec vecs[DLC_DNCHW_MAX_NV];
  for (size_t v = 0; v < nv; v++) random_vec(&vecs[v], vl, v, xspan);
  const size_t ny = mr * Y_PLANE;
  float *y = xalloc_slack((ny + GUARD) * sizeof(float));
  for (size_t i = 0; i < ny + GUARD; i++) y[i] = SENTINEL;
  const dlc_f32_dnchw_args a = {.x = x, .x_c = (ptrdiff_t)x_c, .n_ci = n_ci, .tap = tap, .ntaps = ntaps,
                                .kw = rows3 ? 3 : 0, .x_row = x_row, .w = w,
                                .bias = b, .y = y, .y_c = Y_PLANE, .vecs = vecs,
                                .out_min = clamp ? -0.4f : -INFINITY, .out_max = clamp ? 0.3f : INFINITY};
  f->kernel(nv, mr)(&a);
  char *want = calloc(ny, 1);
  assert_non_null(want);
  for (size_t v = 0; v < nv; v++)
    for (int s = 0; s < vecs[v].nseg; s++)
      for (int l = vecs[v].lo[s]; l < vecs[v].hi[s]; l++)
        for (size_t m = 0; m < mr; m++) {
          double acc = b[m], mag = fabs(b[m]);
          for (size_t ic = 0; ic < n_ci; ic++)
            for (size_t t = 0; t < ntaps; t++) {
              const double p = (double)w[(ic * ntaps + t) * mr + m] * x[ic * x_c + (size_t)tap[t] + (size_t)vecs[v].x_off + (size_t)l];
              acc += p;
              mag += fabs(p);
            }
          acc = clampd(acc, a.out_min, a.out_max);
          const size_t at = m * Y_PLANE + (size_t)(vecs[v].y_off[s] + l - vecs[v].lo[s]);
          want[at] = 1;
          if (!close_dn(y[at], acc, mag, n_ci * ntaps))
            fail_msg("%s nv=%zu mr=%zu rows3=%d vec %zu piece %d lane %d channel %zu: %.9g, want %.9g", f->name, nv, mr, rows3, v, s, l, m,
                     y[at], acc);
        }
  for (size_t i = 0; i < ny + GUARD; i++)
    if ((i >= ny || !want[i]) && y[i] != SENTINEL) fail_msg("%s nv=%zu mr=%zu: wrote y[%zu]", f->name, nv, mr, i);
  free(want);
  free(x), free(w), free(b), free(y);
}

static void test_kernels(void **state) {
  (void)state;
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t i = 0; (kt = kernel_table(i)); i++) {
    const dlc_f32_dnchw_family *f = kt->dnchw;
    if (!f) continue;
    assert_true(f->max_nv >= 1 && f->max_nv <= DLC_DNCHW_MAX_NV);
    for (size_t nv = 1; nv <= f->max_nv; nv++)
      for (size_t mr = 1; mr <= f->max_mr[nv - 1]; mr++)
        for (int rep = 0; rep < 8; rep++) {
          check_tile(f, nv, mr, rep & 1, (rep >> 1) & 1);
          tested++;
        }
  }
  printf("dnchw tiles: %d cases\n", tested);
  if (!tested) skip_test("kernels", "no table has the dnchw family");
}

/* ---------------------------------------------------------------------------------------------
 * Driver level, through the public API with the direct algorithm forced. */

static int run_layer(const layer_shape *c, dlconv_isa isa, int threads, int clamp) {
  dlconv_conv2d_desc d;
  const layer_sizes z = layer_desc(&d, c, DLCONV_NCHW, clamp ? -0.3f : -INFINITY, clamp ? 0.5f : INFINITY);
  float *x = frand_buf(z.x), *w = frand_buf(z.w), *b = frand_buf((size_t)c->c_out);
  float *y = xalloc_slack((z.y + GUARD) * sizeof(float));
  for (size_t i = 0; i < z.y + GUARD; i++) y[i] = SENTINEL;
  double *ref = malloc(z.y * sizeof(double)), *mag = malloc(z.y * sizeof(double));
  assert_non_null(ref);
  assert_non_null(mag);
  oracle_conv2d(&d, x, w, b, ref, mag);
  const dlconv_options opt = forced_options(DLCONV_ALGO_DIRECT, isa, threads);
  dlconv_plan *plan = NULL;
  dlconv_status st = dlconv_plan_conv2d(&plan, &d, w, b, NULL, &opt);
  if (st != DLCONV_OK) fail_msg("plan failed: %s (%s)", dlconv_status_string(st), dlconv_last_error());
  dlconv_plan_info info;
  assert_int_equal(dlconv_plan_query(plan, &info), DLCONV_OK);
  const int reached = strncmp(info.kernel, "f32_dnchw", 9) == 0;
  void *ws = info.workspace_bytes ? xalloc_slack(info.workspace_bytes) : NULL;
  /* a workspace of NaNs: the padding and slack the kernel reads must be written by the plan */
  if (ws)
    for (size_t i = 0; i < info.workspace_bytes / sizeof(float); i++) ((float *)ws)[i] = NAN;
  for (size_t i = 0; i < z.w; i++) w[i] = NAN;
  assert_int_equal(dlconv_execute(plan, x, y, ws), DLCONV_OK);
  const size_t kred = (size_t)(c->c_in / c->groups * c->kh * c->kw);
  for (size_t i = 0; i < z.y; i++)
    if (!close_dn(y[i], ref[i], mag[i], kred))
      fail_msg("%s cin=%d %dx%d cout=%d k=%dx%d pad=%d,%d,%d,%d g=%d n=%d threads=%d clamp=%d: y[%zu] = %.9g, want %.9g",
               info.kernel, c->c_in, c->h, c->w, c->c_out, c->kh, c->kw, c->pt, c->pb, c->pl, c->pr, c->groups, c->n,
               threads, clamp, i, y[i], ref[i]);
  for (size_t i = z.y; i < z.y + GUARD; i++)
    if (y[i] != SENTINEL) fail_msg("%s: guard y[%zu] overwritten", info.kernel, i);
  dlconv_plan_destroy(plan);
  free(ws), free(x), free(w), free(b), free(y), free(ref), free(mag);
  return reached;
}

/* n, c_in, h, w, c_out, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, groups */
static const layer_shape SHAPES[] = {
    {1, 16, 32, 32, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},    /* WRN-40-2's layers */
    {1, 32, 32, 32, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 64, 16, 16, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 128, 8, 8, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 32, 32, 32, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},    /* grouped */
    {1, 128, 8, 8, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4},
    {2, 6, 7, 7, 29, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},       /* batch, odd channels */
    {1, 5, 5, 17, 15, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1},      /* 5x5 */
    {1, 4, 6, 9, 7, 2, 3, 1, 1, 1, 1, 0, 1, 2, 0, 1},        /* asymmetric padding */
    {1, 3, 5, 11, 9, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},       /* no padding, 3x1 */
    {1, 3, 4, 6, 33, 1, 3, 1, 1, 1, 1, 2, 3, 3, 1, 3},       /* padding wider than the reach */
    {1, 8, 3, 40, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},      /* rows of 2.5 vectors */
    {1, 6, 9, 4, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},       /* short rows: several pieces a vector */
    {3, 2, 2, 16, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
    {1, 64, 40, 40, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},    /* inputs past the band size: bands of tiles */
    {2, 128, 37, 44, 34, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},
};
#define N_SHAPES (sizeof SHAPES / sizeof SHAPES[0])

static void test_api(void **state) {
  (void)state;
  int tested = 0, reached = 0;
  dlc_test_direct_nchw_mode(1);   /* every layer it can run, not only where it pays */
  const dlc_isa_kernels *kt;
  for (size_t i = 0; (kt = kernel_table(i)); i++) {
    if (!kt->dnchw) continue;
    for (size_t k = 0; k < N_SHAPES; k++) {
      reached += run_layer(&SHAPES[k], kt->isa, 1 + (int)(k % 3), (int)(k % 2));
      tested++;
    }
    /* every oc block count and remainder for the tile each plane width picks */
    for (int w = 1; w <= 40; w += w < 20 ? 1 : 7)
      for (int co = 1; co <= 35; co += co < 18 ? 1 : 4) {
        const layer_shape c = {1 + (co % 5 == 0), 3, 1 + (w + co) % 6, w, co, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1};
        reached += run_layer(&c, kt->isa, 1 + (w + co) % 2, co % 3 == 0);
        tested++;
      }
  }
  dlc_test_direct_nchw_mode(-1);
  printf("dnchw api: %d layers, %d on the dnchw kernels\n", tested, reached);
  if (!tested) skip_test("api", "no table has the dnchw family");
  /* the layers above whose rows fit the vectors' row pieces must all run on it */
  assert_true(reached * 10 >= tested * 8);
}

/* By default it takes WRN-40-2's 32 x 32 layers and its grouped 16 x 16 ones under AUTO, not 8 x 8
   planes (a fifth of the lanes would be row ends). */
static void test_pays(void **state) {
  (void)state;
  const dlc_isa_kernels *kt = dlc_kernels_for(DLCONV_ISA_AVX512);
  if (!kt || !kt->dnchw) {
    skip_test("pays", "no avx512 table with the dnchw family");
    return;
  }
  static const struct {
    layer_shape s;
    int want;
  } cases[] = {
      {{1, 32, 32, 32, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 1},
      {{1, 64, 16, 16, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2}, 1},
      {{1, 128, 8, 8, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 0},
      {{1, 32, 32, 32, 64, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1}, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    dlconv_conv2d_desc d;
    const layer_sizes z = layer_desc(&d, &cases[i].s, DLCONV_NCHW, -INFINITY, INFINITY);
    float *w = frand_buf(z.w);
    dlconv_options opt = forced_options(DLCONV_ALGO_AUTO, DLCONV_ISA_AVX512, 1);
    dlconv_plan *plan = NULL;
    assert_int_equal(dlconv_plan_conv2d(&plan, &d, w, NULL, NULL, &opt), DLCONV_OK);
    dlconv_plan_info info;
    assert_int_equal(dlconv_plan_query(plan, &info), DLCONV_OK);
    if ((strncmp(info.kernel, "f32_dnchw", 9) == 0) != cases[i].want)
      fail_msg("case %zu: AUTO ran %s", i, info.kernel);
    dlconv_plan_destroy(plan);
    free(w);
  }
}

int main(void) {
  rng_state = 0x9E3779B97F4A7C15ull;
  return RUN_TESTS(test_kernels, test_api, test_pays);
}
