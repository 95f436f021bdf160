/* test_ukernel_gspc.c - the grouped spatial pack (GSPC) micro-kernels of every ISA this machine
 * runs, at every tile edge, against a naive double-precision reference written here, and the GSPC
 * driver through the public API with every ISA forced, against the oracle (tests/oracle.c).
 *
 *   meson test -C <build> ukernel_gspc        (or run <build>/tests/test_ukernel_gspc)
 */
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

#define GUARD 37
static const float SENTINEL = -7777.0f;

static const dlc_f32_gspc_family *family_of(dlconv_isa isa) {
  const dlc_isa_kernels *k = dlc_kernels_for(isa);
  return k ? k->gspc : NULL;
}

/* ---------------------------------------------------------------------------------------------
 * Micro-kernel level: every tile (gpv, nv, r, w) a family has; channel-tile remainder
 * (ti_last < t_i), lane remainder (n_lanes < NV*T_O), row remainder (r_valid < R), both output
 * layouts, a lane permutation, clamp on and off. Everything outside the tile must stay put. */

enum { K_NCT = 2, K_TAPS = 3 };

typedef struct ktest {
  const dlc_f32_gspc_family *f;
  size_t gpv, nv, rn, wn, nvl, pxs;   /* pxs: floats between two input columns */
  dlc_f32_gspc_params prm;
  ptrdiff_t tap_off[K_TAPS];
  int32_t perm[128];
  float *in, *w, *bias, *out;
  size_t nin, nout;
} ktest;

static void ktest_setup(ktest *t, const dlc_f32_gspc_family *f, size_t gpv, size_t nv, size_t rn,
                        size_t wn, size_t t_i, size_t pxs) {
  memset(t, 0, sizeof *t);
  t->f = f;
  t->gpv = gpv;
  t->pxs = pxs;
  t->nv = nv;
  t->rn = rn;
  t->wn = wn;
  t->nvl = nv * f->t_o;
  dlc_f32_gspc_params *p = &t->prm;
  p->n_ct = K_NCT;
  p->t_i = t_i;
  p->ti_last = t_i;
  p->n_tap = K_TAPS;
  /* Irregular tap positions over three packed rows, offsets in whole gpv-pixels. */
  const size_t row = (wn + 5) * pxs;
  p->in_ti_stride = (ptrdiff_t)(3 * row + 2 * gpv);
  p->in_r_stride = (ptrdiff_t)(t_i * (size_t)p->in_ti_stride + gpv);
  p->in_ct_stride = (ptrdiff_t)(rn * (size_t)p->in_r_stride + 7 * gpv);
  t->tap_off[0] = 0;
  t->tap_off[1] = (ptrdiff_t)(3 * gpv);
  t->tap_off[2] = (ptrdiff_t)(2 * row + gpv);
  p->tap_off = t->tap_off;
  t->nin = K_NCT * (size_t)p->in_ct_stride + 4 * row;
  t->in = xalloc_slack(t->nin * sizeof(float));
  for (size_t i = 0; i < t->nin; i++) t->in[i] = frand();
  const size_t nw = K_NCT * K_TAPS * t_i * t->nvl;
  t->w = xalloc_slack(nw * sizeof(float));
  for (size_t i = 0; i < nw; i++) t->w[i] = frand();
  t->bias = xalloc_slack(t->nvl * sizeof(float));
  for (size_t i = 0; i < t->nvl; i++) t->bias[i] = frand();
  /* Room for both layouts with gaps between rows, pixels and channels. */
  t->nout = rn * (wn + 3) * (t->nvl + 5) + 2 * GUARD;
  t->out = xalloc_slack(t->nout * sizeof(float));
  p->out_min = -INFINITY;
  p->out_max = INFINITY;
}

static void ktest_free(ktest *t) { free(t->in), free(t->w), free(t->bias), free(t->out); }

static void set_layout(ktest *t, int nchw) {
  dlc_f32_gspc_params *p = &t->prm;
  if (nchw) {
    p->out_pix_stride = 1;
    p->out_r_stride = (ptrdiff_t)t->wn + 2;
    p->out_ch_stride = (ptrdiff_t)(t->rn * (size_t)p->out_r_stride + 1);
  } else {
    p->out_ch_stride = 1;
    p->out_pix_stride = (ptrdiff_t)t->nvl + 3;
    p->out_r_stride = (ptrdiff_t)(t->wn * (size_t)p->out_pix_stride + 2);
  }
}

/* Runs kernel k on the tile and checks every element of t->out. */
static void ktest_check(ktest *t, dlc_f32_gspc_ukernel_fn k, size_t n_lanes, size_t r_valid,
                        const char *what) {
  const dlc_f32_gspc_params *p = &t->prm;
  for (size_t i = 0; i < t->nout; i++) t->out[i] = SENTINEL;
  float *o = t->out + GUARD;
  k(p, t->in, t->w, t->bias, o, n_lanes, r_valid);
  char *want = calloc(t->nout, 1);
  assert_non_null(want);
  int bad = 0;
  for (size_t r = 0; r < r_valid; r++)
    for (size_t x = 0; x < t->wn; x++)
      for (size_t j = 0; j < n_lanes; j++) {
        const size_t l = p->perm ? (size_t)p->perm[j] : j;
        double acc = t->bias[l], mag = fabs(acc);
        size_t terms = 1;
        for (size_t ct = 0; ct < p->n_ct; ct++) {
          const size_t nti = ct + 1 < p->n_ct ? p->t_i : p->ti_last;
          for (size_t tap = 0; tap < p->n_tap; tap++)
            for (size_t ti = 0; ti < nti; ti++) {
              const float iv = t->in[(ptrdiff_t)ct * p->in_ct_stride + p->tap_off[tap] +
                                     (ptrdiff_t)ti * p->in_ti_stride + (ptrdiff_t)r * p->in_r_stride +
                                     (ptrdiff_t)(x * t->pxs + l % t->gpv)];
              const float wv = t->w[((ct * p->n_tap + tap) * p->t_i + ti) * t->nvl + l];
              acc += (double)iv * wv;
              mag += fabs((double)iv * wv);
              terms++;
            }
        }
        const double ref = clampd(acc, p->out_min, p->out_max);
        const ptrdiff_t pos = (ptrdiff_t)r * p->out_r_stride + (ptrdiff_t)x * p->out_pix_stride +
                              (ptrdiff_t)j * p->out_ch_stride;
        want[GUARD + pos] = 1;
        if (!close_enough(o[pos], ref, mag, terms) && bad++ < 3)
          print_error("%s: r=%zu x=%zu lane=%zu got %.7g want %.7g\n", what, r, x, j, (double)o[pos], ref);
      }
  for (size_t i = 0; i < t->nout; i++)
    if (!want[i] && t->out[i] != SENTINEL && bad++ < 6)
      print_error("%s: wrote outside the tile at %zd\n", what, (ptrdiff_t)i - GUARD);
  free(want);
  assert_int_equal(bad, 0);
}

static void ukernels_of(const dlc_f32_gspc_family *f) {
  size_t n_tested = 0;
  char what[160];
  /* gpv == 0 stands for the channel-blocked kernels (gpv 1, a column every t_i floats) */
  for (size_t gpv = 0; gpv <= f->max_gpv; gpv = gpv ? gpv * 2 : 1)
    for (size_t nv = 1; nv <= 4; nv++)
      for (size_t rn = 1; rn <= 4; rn++)
        for (size_t wn = 1; wn <= 32; wn++) {
          dlc_f32_gspc_ukernel_fn k = gpv ? f->get(gpv, nv, rn, wn) : f->get_blocked ? f->get_blocked(nv, rn, wn) : NULL;
          if (!k) continue;
          const size_t kg = gpv ? gpv : 1, pxs = gpv ? gpv : f->t_i;
          assert_true(kg == 1 || nv == 1);
          n_tested++;
          /* t_i 1 and the family's t_i; a remainder channel tile of 1 and of t_i - 1 */
          const size_t tis[2] = {1, f->t_i};
          for (int a = 0; a < 2; a++) {
            ktest t;
            ktest_setup(&t, f, kg, nv, rn, wn, tis[a], pxs);
            const size_t lanes[4] = {t.nvl, t.nvl - 1 ? t.nvl - 1 : 1, 1, t.nvl / 2 + 1};
            for (int nchw = 0; nchw < 2; nchw++) {
              set_layout(&t, nchw);
              for (int li = 0; li < 4; li++) {
                const size_t r_valid = li == 2 ? 1 : li == 3 ? (rn + 1) / 2 : rn;
                t.prm.ti_last = li == 1 && tis[a] > 1 ? tis[a] - 1 : li == 3 ? 1 : tis[a];
                t.prm.perm = NULL;
                if (li >= 2 && nv == 1) {
                  /* a fixed scramble of the lanes, as groups in lanes produce */
                  for (size_t j = 0; j < t.nvl; j++) t.perm[j] = (int32_t)((j * 5 + 3) % t.nvl);
                  if (t.nvl % 5 == 0)
                    for (size_t j = 0; j < t.nvl; j++) t.perm[j] = (int32_t)(t.nvl - 1 - j);
                  t.prm.perm = t.perm;
                }
                if (li == 3) {
                  t.prm.out_min = -0.25f;
                  t.prm.out_max = 0.5f;
                } else {
                  t.prm.out_min = -INFINITY;
                  t.prm.out_max = INFINITY;
                }
                snprintf(what, sizeof what, "%s gpv=%zu%s nv=%zu r=%zu w=%zu t_i=%zu ti_last=%zu lanes=%zu r_valid=%zu %s%s",
                         f->isa, kg, gpv ? "" : " blocked", nv, rn, wn, t.prm.t_i, t.prm.ti_last, lanes[li], r_valid,
                         nchw ? "nchw" : "nhwc", t.prm.perm ? " perm" : "");
                ktest_check(&t, k, lanes[li], r_valid, what);
                if (t.prm.perm) {
                  /* the same edges without the permutation (the NCHW epilogue of tiles without
                     one transposes in registers) */
                  t.prm.perm = NULL;
                  const size_t n = strlen(what);
                  if (n > 5) what[n - 5] = '\0'; /* drop " perm" */
                  ktest_check(&t, k, lanes[li], r_valid, what);
                }
              }
            }
            ktest_free(&t);
          }
        }
  assert_true(n_tested > 0);
  /* NaN in the input reaches the output through the clamp. */
  for (size_t gpv = 1; gpv <= f->max_gpv; gpv *= 2) {
    dlc_f32_gspc_ukernel_fn k = f->get(gpv, 1, 1, 1);
    if (!k) continue;
    ktest t;
    ktest_setup(&t, f, gpv, 1, 1, 1, 1, gpv);
    set_layout(&t, 0);
    for (size_t i = 0; i < t.nin; i++) t.in[i] = NAN;
    t.prm.out_min = 0.0f;
    t.prm.out_max = 6.0f;
    snprintf(what, sizeof what, "%s gpv=%zu NaN", f->isa, gpv);
    ktest_check(&t, k, t.nvl, 1, what);
    ktest_free(&t);
  }
}

/* The positions-in-lanes kernels (get_pos): every (no, nv) of the menu, every channel count up to
   no, rows narrower than a vector, about one and about two vectors wide, a tile starting at a row
   and inside one, the last rows cut by h_out, clamp on and off; taps of any offsets, and 3 x 3 taps
   in rows of 3 (rows3: the loads shifted in lanes, reading the vector after the tile's last, which
   the channel stride leaves just room for); vectors stored masked row by row, and whole below
   fast_rows (the lanes past a row stored again later). Everything else must stay put. */
static void pos_check(const dlc_f32_gspc_family *f, dlc_f32_gspc_pos_fn k, size_t no, size_t nv, size_t wq,
                      size_t w_out, size_t p0, size_t n_oc, int clamp, int rows3, int fast) {
  enum { NIC = 3 };
  const size_t vl = f->t_o, end = p0 + nv * vl, ntap = rows3 ? 9 : 3;
  const ptrdiff_t w = (ptrdiff_t)wq;
  const ptrdiff_t tap_off[9] = {0, 1, 2, w, w + 1, w + 2, 2 * w, 2 * w + 1, 2 * w + 2};
  const ptrdiff_t tap_any[3] = {0, 1, w + 2};
  dlc_f32_gspc_pos_params prm = {0};
  prm.n_ic = NIC;
  prm.n_tap = ntap;
  prm.tap_off = rows3 ? tap_off : tap_any;
  prm.rows3 = rows3;
  prm.in_c_stride = (ptrdiff_t)(rows3 ? end + 2 * wq + vl : end + wq + 9);
  prm.wq = wq;
  prm.w_out = w_out;
  prm.h_out = (end - 1) / wq; /* the row the tile ends in is dropped (when it has outputs) */
  if (prm.h_out == 0) prm.h_out = 1;
  prm.out_ch_stride = (ptrdiff_t)(prm.h_out * w_out + 3);
  prm.fast_rows = fast ? dlc_gspc_pos_fast_rows(wq, w_out, prm.h_out, vl) : 0;
  prm.out_min = clamp ? -0.25f : -INFINITY;
  prm.out_max = clamp ? 0.5f : INFINITY;
  const size_t nin = NIC * (size_t)prm.in_c_stride, nw = NIC * ntap * no, nout = no * (size_t)prm.out_ch_stride + 2 * GUARD;
  float *in = xalloc_slack(nin * sizeof(float)), *wt = xalloc_slack(nw * sizeof(float));
  float *bias = xalloc_slack(no * sizeof(float)), *out = xalloc_slack(nout * sizeof(float));
  for (size_t i = 0; i < nin; i++) in[i] = frand();
  for (size_t i = 0; i < nw; i++) wt[i] = frand();
  for (size_t i = 0; i < no; i++) bias[i] = frand();
  for (size_t i = 0; i < nout; i++) out[i] = SENTINEL;
  float *o = out + GUARD;
  k(&prm, in, wt, bias, o, p0, n_oc);
  char *want = calloc(nout, 1);
  assert_non_null(want);
  int bad = 0;
  for (size_t oc = 0; oc < n_oc; oc++)
    for (size_t p = p0; p < end; p++) {
      const size_t oh = p / wq, ow = p % wq;
      if (ow >= w_out || oh >= prm.h_out) continue;
      double acc = bias[oc], mag = fabs(acc);
      for (size_t ic = 0; ic < NIC; ic++)
        for (size_t t = 0; t < ntap; t++) {
          const double v = (double)in[ic * (size_t)prm.in_c_stride + (size_t)prm.tap_off[t] + p] * wt[(ic * ntap + t) * no + oc];
          acc += v;
          mag += fabs(v);
        }
      const double ref = clampd(acc, prm.out_min, prm.out_max);
      const size_t pos = oc * (size_t)prm.out_ch_stride + oh * w_out + ow;
      want[GUARD + pos] = 1;
      if (!close_enough(o[pos], ref, mag, NIC * ntap + 1) && bad++ < 3)
        print_error("%s pos no=%zu nv=%zu wq=%zu w_out=%zu p0=%zu n_oc=%zu rows3=%d: oc=%zu (%zu,%zu) got %.7g want %.7g\n",
                    f->isa, no, nv, wq, w_out, p0, n_oc, rows3, oc, oh, ow, (double)o[pos], ref);
    }
  for (size_t i = 0; i < nout; i++)
    if (!want[i] && out[i] != SENTINEL && bad++ < 6)
      print_error("%s pos no=%zu nv=%zu wq=%zu w_out=%zu p0=%zu n_oc=%zu: wrote outside at %zd\n", f->isa, no, nv, wq,
                  w_out, p0, n_oc, (ptrdiff_t)i - GUARD);
  free(want);
  free(in), free(wt), free(bias), free(out);
  assert_int_equal(bad, 0);
}

static void pos_ukernels_of(const dlc_f32_gspc_family *f) {
  if (!f->get_pos) return;
  size_t n_tested = 0;
  const size_t vl = f->t_o;
  for (size_t no = 1; no <= 8; no *= 2)
    for (size_t nv = 1; nv <= 16; nv++) {
      dlc_f32_gspc_pos_fn k = f->get_pos(no, nv);
      if (!k) continue;
      n_tested++;
      const size_t shapes[4][2] = {{7, 5}, {vl + 3, vl + 1}, {2 * vl + 1, 2 * vl}, {vl, vl}}; /* wq, w_out */
      for (int sh = 0; sh < 4; sh++)
        for (size_t p0 = 0; p0 <= 3 * vl; p0 += 3 * vl)
          for (size_t n_oc = 1; n_oc <= no; n_oc++)
            for (int rows3 = 0; rows3 <= 1; rows3++)
              for (int fast = 0; fast <= 1; fast++)
                pos_check(f, k, no, nv, shapes[sh][0], shapes[sh][1], p0, n_oc, (int)((n_oc + sh + rows3) % 2), rows3,
                          fast);
    }
  assert_true(n_tested > 0);
  assert_null(f->get_pos(3, 1));
  assert_null(f->get_pos(1, 0));
}

/* The diagonal kernels (get_diag): every (c, r, w) of the menu; lane, row remainders, both
   output layouts, clamp. Lane L of an input column is channel L%c of group L/c; output lane L is
   channel L%c of group L/c, the sum over taps and the group's c inputs d of the input times the
   weight wt[(tap*c + s)*t_o + L/c*c + d], s = (L%c - d) mod c. */
static void diag_check(const dlc_f32_gspc_family *f, dlc_f32_gspc_ukernel_fn k, size_t c, size_t rn, size_t wn,
                       size_t n_lanes, size_t r_valid, int nchw, int clamp) {
  const size_t vl = f->t_o;
  dlc_f32_gspc_params p;
  memset(&p, 0, sizeof p);
  ptrdiff_t tap_off[K_TAPS];
  const size_t row = (wn + 5) * vl;
  p.n_ct = 1;
  p.t_i = p.ti_last = c;
  p.n_tap = K_TAPS;
  p.in_ti_stride = 1;
  p.in_r_stride = (ptrdiff_t)(3 * row + vl);
  tap_off[0] = 0;
  tap_off[1] = (ptrdiff_t)(2 * vl);
  tap_off[2] = (ptrdiff_t)(2 * row + vl);
  p.tap_off = tap_off;
  const size_t nin = rn * (size_t)p.in_r_stride + 4 * row, nw = K_TAPS * c * vl;
  float *in = xalloc_slack(nin * sizeof(float)), *w = xalloc_slack(nw * sizeof(float));
  float *bias = xalloc_slack(vl * sizeof(float));
  for (size_t i = 0; i < nin; i++) in[i] = frand();
  for (size_t i = 0; i < nw; i++) w[i] = frand();
  for (size_t i = 0; i < vl; i++) bias[i] = frand();
  if (nchw) {
    p.out_pix_stride = 1;
    p.out_r_stride = (ptrdiff_t)wn + 2;
    p.out_ch_stride = (ptrdiff_t)(rn * (size_t)p.out_r_stride + 1);
  } else {
    p.out_ch_stride = 1;
    p.out_pix_stride = (ptrdiff_t)vl + 3;
    p.out_r_stride = (ptrdiff_t)(wn * (size_t)p.out_pix_stride + 2);
  }
  p.out_min = clamp ? -0.25f : -INFINITY;
  p.out_max = clamp ? 0.5f : INFINITY;
  const size_t nout = rn * (wn + 3) * (vl + 5) + 2 * GUARD;
  float *out = xalloc_slack(nout * sizeof(float));
  char *want = calloc(nout, 1);
  assert_non_null(want);
  for (size_t i = 0; i < nout; i++) out[i] = SENTINEL;
  float *o = out + GUARD;
  k(&p, in, w, bias, o, n_lanes, r_valid);
  int bad = 0;
  for (size_t r = 0; r < r_valid; r++)
    for (size_t x = 0; x < wn; x++)
      for (size_t l = 0; l < n_lanes; l++) {
        double acc = bias[l], mag = fabs(acc);
        const size_t g0 = l - l % c;
        for (size_t t = 0; t < K_TAPS; t++)
          for (size_t dd = 0; dd < c; dd++) {
            /* input dd reaches output l%c through rotation s; with two copies, rotation s >= a is
               copy 1's vector a + (s - a), at the lane holding dd after the copy's rotation by a */
            const size_t s = (l % c + c - dd) % c, a = c / DLC_GSPC_DIAG_COPIES(c);
            const size_t lane = s < a || a == c ? dd : (dd + a) % c;
            const double v = (double)in[tap_off[t] + (ptrdiff_t)r * p.in_r_stride + (ptrdiff_t)(x * vl + g0 + dd)] *
                             w[(t * c + s) * vl + g0 + lane];
            acc += v;
            mag += fabs(v);
          }
        const double ref = clampd(acc, p.out_min, p.out_max);
        const ptrdiff_t pos = (ptrdiff_t)r * p.out_r_stride + (ptrdiff_t)x * p.out_pix_stride + (ptrdiff_t)l * p.out_ch_stride;
        want[GUARD + pos] = 1;
        if (!close_enough(o[pos], ref, mag, K_TAPS * c + 1) && bad++ < 3)
          print_error("%s diag c=%zu r=%zu w=%zu lanes=%zu r_valid=%zu %s: r=%zu x=%zu lane=%zu got %.7g want %.7g\n",
                      f->isa, c, rn, wn, n_lanes, r_valid, nchw ? "nchw" : "nhwc", r, x, l, (double)o[pos], ref);
      }
  for (size_t i = 0; i < nout; i++)
    if (!want[i] && out[i] != SENTINEL && bad++ < 6)
      print_error("%s diag c=%zu r=%zu w=%zu: wrote outside the tile at %zd\n", f->isa, c, rn, wn, (ptrdiff_t)i - GUARD);
  free(want);
  free(in), free(w), free(bias), free(out);
  assert_int_equal(bad, 0);
}

static void diag_ukernels_of(const dlc_f32_gspc_family *f) {
  if (!f->get_diag) return;
  size_t n_tested = 0;
  for (size_t c = 2; c <= 8; c *= 2)
    for (size_t rn = 1; rn <= 4; rn++)
      for (size_t wn = 1; wn <= 32; wn++) {
        dlc_f32_gspc_ukernel_fn k = f->get_diag(c, rn, wn);
        if (!k) continue;
        assert_true(2 * c <= f->t_o);
        n_tested++;
        const size_t lanes[3] = {f->t_o, f->t_o - 1, c};
        for (int nchw = 0; nchw < 2; nchw++)
          for (int li = 0; li < 3; li++)
            diag_check(f, k, c, rn, wn, lanes[li], li == 1 ? (rn + 1) / 2 : rn, nchw, li == 2);
      }
  assert_true(n_tested > 0);
  assert_null(f->get_diag(3, 1, 1));
  assert_null(f->get_diag(16, 1, 1));
  assert_null(f->get_diag(2, 0, 1));
}

static void test_ukernels(void **state) {
  (void)state;
  const dlc_isa_kernels *kt;
  for (size_t i = 0; (kt = kernel_table(i)); i++)
    if (kt->gspc) {
      ukernels_of(kt->gspc);
      pos_ukernels_of(kt->gspc);
      diag_ukernels_of(kt->gspc);
    }
}

/* ---------------------------------------------------------------------------------------------
 * Driver level, through the public API with opt.algo = GSPC and every ISA forced. */

typedef struct conv_case {
  layer_shape s;
  float lo, hi;
  int bias;
} conv_case;

/* Plans case c with GSPC on isa (layout, threads), runs it and compares with the reference.
   Returns 0 when the ISA has no GSPC family (the plan must then say UNSUPPORTED). */
static void run_case(const conv_case *c, dlconv_layout layout, dlconv_isa isa, int threads) {
  dlconv_conv2d_desc d;
  const layer_sizes z = layer_desc(&d, &c->s, layout, c->lo, c->hi);
  const layer_shape *sh = &c->s;
  const size_t nx = z.x, nw = z.w, ny = z.y;
  float *x = xalloc_slack(nx * sizeof(float)), *w = xalloc_slack(nw * sizeof(float));
  float *b = xalloc_slack((size_t)sh->c_out * sizeof(float)), *y = xalloc_slack((ny + 2 * GUARD) * sizeof(float));
  double *ref = xalloc_slack(ny * sizeof(double)), *mag = xalloc_slack(ny * sizeof(double));
  for (size_t i = 0; i < nx; i++) x[i] = frand();
  for (size_t i = 0; i < nw; i++) w[i] = frand();
  for (int32_t i = 0; i < sh->c_out; i++) b[i] = frand();
  for (size_t i = 0; i < ny + 2 * GUARD; i++) y[i] = SENTINEL;

  const dlconv_options o = forced_options(DLCONV_ALGO_GSPC, isa, threads);
  dlconv_plan *plan = NULL;
  dlconv_status st = dlconv_plan_conv2d(&plan, &d, w, c->bias ? b : NULL, NULL, &o);
  if (!family_of(isa)) {
    assert_int_equal(st, DLCONV_ERR_UNSUPPORTED);
    assert_null(plan);
    goto done;
  }
  if (st != DLCONV_OK) print_error("plan failed: %s\n", dlconv_last_error());
  assert_int_equal(st, DLCONV_OK);
  dlconv_plan_info info;
  assert_int_equal(dlconv_plan_query(plan, &info), DLCONV_OK);
  assert_int_equal(info.algo, DLCONV_ALGO_GSPC);
  assert_int_equal(info.isa, isa);
  assert_non_null(strstr(info.kernel, "gspc"));
  /* caller-provided workspace, and NULL (the library allocates) */
  const size_t wsb = dlconv_plan_workspace_size(plan);
  void *ws = wsb ? xalloc_slack(wsb) : NULL;
  assert_int_equal(dlconv_execute(plan, x, y + GUARD, ws), DLCONV_OK);
  oracle_conv2d(&d, x, w, c->bias ? b : NULL, ref, mag);
  const size_t k = (size_t)(sh->c_in / sh->groups) * sh->kh * sh->kw;
  int bad = 0;
  for (size_t i = 0; i < ny; i++)
    if (!close_enough(y[GUARD + i], ref[i], mag[i], k) && bad++ < 3)
      print_error("%s %s g=%d n=%d cin=%d %dx%d cout=%d k=%dx%d s=%d,%d d=%d,%d p=%d,%d,%d,%d t=%d: y[%zu]=%.7g want %.7g (%s)\n",
                  isa_label(isa), layout == DLCONV_NCHW ? "nchw" : "nhwc", sh->groups, sh->n, sh->c_in, sh->h,
                  sh->w, sh->c_out, sh->kh, sh->kw, sh->sh, sh->sw, sh->dh, sh->dw, sh->pt, sh->pb, sh->pl, sh->pr,
                  threads, i, (double)y[GUARD + i], ref[i], info.kernel);
  for (size_t i = 0; i < GUARD; i++)
    if ((y[i] != SENTINEL || y[GUARD + ny + i] != SENTINEL) && bad++ < 6)
      print_error("%s: guard value %zu overwritten (%s)\n", isa_label(isa), i, info.kernel);
  /* a second run, library-allocated workspace, must give the same bits */
  float *y2 = xalloc_slack(ny * sizeof(float));
  assert_int_equal(dlconv_execute(plan, x, y2, NULL), DLCONV_OK);
  if (memcmp(y2, y + GUARD, ny * sizeof(float)) != 0 && bad++ < 7)
    print_error("%s: second execute differs (%s)\n", isa_label(isa), info.kernel);
  free(y2);
  free(ws);
  assert_int_equal(bad, 0);
done:
  dlconv_plan_destroy(plan);
  free(x), free(w), free(b), free(y), free(ref), free(mag);
}

#define NOCLAMP -INFINITY, INFINITY
static const conv_case cases[] = {
    /*  n  cin  h   w cout kh kw sh sw dh dw pt pb pl pr  g    clamp        bias */
    {{1, 3, 9, 11, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, NOCLAMP, 1},            /* first layer */
    {{2, 16, 7, 13, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2}, 0.0f, INFINITY, 1},   /* g2, K_PG 8 */
    {{1, 9, 6, 10, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3}, NOCLAMP, 1},           /* g3: 3 in, 4 out */
    {{1, 32, 8, 8, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4}, NOCLAMP, 0},           /* g4: 8 in, 10 out */
    {{1, 16, 9, 9, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 8}, 0.0f, 6.0f, 1},        /* g8: 2 in, 3 out */
    {{1, 64, 5, 7, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 32}, NOCLAMP, 1},          /* g32: 2 in, 2 out */
    {{2, 37, 7, 9, 37, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 37}, NOCLAMP, 1},          /* depthwise, odd */
    {{1, 19, 8, 6, 38, 3, 3, 2, 1, 1, 1, 0, 2, 1, 0, 19}, -0.5f, 0.5f, 1},      /* depthwise x2, asym pad */
    {{1, 24, 12, 12, 48, 5, 5, 3, 3, 1, 1, 2, 2, 2, 2, 24}, NOCLAMP, 1},        /* depthwise x2 5x5 s3 */
    {{1, 38, 10, 13, 45, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, NOCLAMP, 1},         /* channel tile + lane remainders */
    {{3, 20, 9, 21, 70, 3, 3, 1, 2, 2, 1, 2, 1, 0, 3, 2}, 0.0f, INFINITY, 1},   /* g2, 10 in, 35 out */
    {{1, 12, 14, 15, 18, 3, 2, 2, 3, 3, 2, 3, 0, 2, 1, 3}, NOCLAMP, 1},         /* stride 2,3 dilation 3,2 */
    {{1, 8, 11, 17, 8, 3, 3, 3, 1, 1, 3, 1, 2, 3, 3, 8}, NOCLAMP, 0},           /* depthwise, dilated w */
    {{2, 6, 1, 1, 9, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 3}, NOCLAMP, 1},             /* 1x1 image */
    {{1, 4, 1, 1, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4}, NOCLAMP, 1},             /* 1x1 image, padded 3x3 */
    {{1, 33, 1, 40, 17, 1, 5, 1, 1, 1, 1, 0, 0, 2, 2, 1}, NOCLAMP, 1},          /* one row, wide */
    {{1, 128, 4, 4, 10, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, NOCLAMP, 1},          /* dense-like */
    {{2, 32, 16, 16, 64, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1}, NOCLAMP, 0},         /* 1x1 stride 2 */
    {{1, 96, 6, 6, 96, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2}, NOCLAMP, 1},           /* 48 in, 48 out */
    {{1, 12, 33, 35, 12, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 4}, NOCLAMP, 1},         /* g4: 3 in, 3 out */
    {{1, 64, 6, 9, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16}, NOCLAMP, 1},         /* g16: 4 in, 8 out */
    {{1, 10, 5, 5, 5, 2, 2, 1, 1, 1, 1, 0, 1, 1, 0, 5}, NOCLAMP, 1},            /* 2 in, 1 out */
    {{2, 40, 9, 10, 48, 3, 3, 1, 1, 1, 2, 0, 0, 0, 0, 2}, NOCLAMP, 1},          /* unpadded: NCHW read in place */
    {{1, 64, 8, 8, 64, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, 0.0f, 6.0f, 1},        /* 1x1, 8x8 */
    /* NCHW planes of more than 64 outputs, few channels per group: positions in lanes */
    {{1, 16, 19, 23, 24, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 8}, 0.0f, 6.0f, 1},      /* g8: 2 in, 3 out, stride 2 */
    {{2, 64, 12, 12, 128, 3, 3, 1, 1, 1, 1, 1, 0, 2, 1, 16}, NOCLAMP, 1},       /* g16: 4 in, 8 out, asym pad */
    {{1, 32, 17, 15, 48, 3, 2, 3, 1, 2, 3, 2, 1, 0, 3, 8}, NOCLAMP, 0},         /* stride 3,1 dilation 2,3 */
    {{1, 64, 32, 32, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 4}, NOCLAMP, 1},        /* g4: 16 in, 32 out, 32 x 32 */
    {{1, 10, 11, 9, 35, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 5}, -0.5f, 0.5f, 1},      /* 2 in, 7 out (oc remainder), 5x5 */
    /* RGB stems (one group of 2 to 4 input channels, gspc_pos.h): positions in lanes too */
    {{1, 3, 33, 37, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, 0.0f, 6.0f, 1},       /* 3 in, 16 out, stride 1 */
    {{2, 3, 67, 71, 30, 3, 3, 2, 2, 1, 1, 1, 0, 1, 2, 1}, NOCLAMP, 1},          /* stride 2, odd sizes, asym pad */
    {{1, 4, 21, 17, 8, 5, 5, 2, 2, 1, 1, 2, 1, 2, 2, 1}, NOCLAMP, 0},           /* 4 in, 8 out, 5x5 */
    {{1, 3, 67, 64, 32, 7, 7, 2, 2, 1, 1, 3, 3, 3, 2, 1}, -1.0f, 1.0f, 1},      /* 7x7 stride 2 */
    {{1, 2, 12, 40, 7, 3, 3, 1, 2, 1, 1, 1, 1, 0, 1, 1}, NOCLAMP, 1},           /* 2 in, 7 out, strides 1, 2 */
    /* c in = c out = 2, 4, 8: the diagonal tiles in NHWC; a last group block of fewer groups */
    {{1, 10, 9, 13, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 5}, 0.0f, 6.0f, 1},       /* g5: 2 in, 2 out */
    {{2, 36, 11, 10, 36, 3, 3, 2, 2, 1, 1, 1, 0, 0, 1, 9}, NOCLAMP, 1},         /* g9: 4 in, 4 out, stride 2 */
    {{1, 24, 7, 19, 24, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 3}, NOCLAMP, 0},          /* g3: 8 in, 8 out, dilated */
    {{1, 128, 8, 8, 128, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16}, NOCLAMP, 1},        /* g16: 8 in, 8 out */
};
#define N_CASES (sizeof cases / sizeof cases[0])

static void test_driver(void **state) {
  (void)state;
  const dlc_isa_kernels *kt;
  for (size_t i = 0; (kt = kernel_table(i)); i++) {
    for (size_t c = 0; c < N_CASES; c++)
      for (int layout = 0; layout < 2; layout++)
        run_case(&cases[c], layout ? DLCONV_NHWC : DLCONV_NCHW, kt->isa, 1);
  }
}

/* Several tasks: the split of (group block, image, row tile, oc block) over threads. */
static void test_driver_threads(void **state) {
  (void)state;
  const dlc_isa_kernels *kt;
  for (size_t i = 0; (kt = kernel_table(i)); i++) {
    for (size_t c = 0; c < N_CASES; c += 3)
      for (int layout = 0; layout < 2; layout++)
        for (int t = 2; t <= 5; t += 3) run_case(&cases[c], layout ? DLCONV_NHWC : DLCONV_NCHW, kt->isa, t);
  }
}

/* Random shapes around the corners: small sizes, every stride/dilation/padding mix. */
static void test_driver_random(void **state) {
  (void)state;
  static const int32_t gs[] = {1, 2, 3, 4, 8, 32};
  for (int it = 0; it < 60; it++) {
    conv_case c;
    memset(&c, 0, sizeof c);
    const int32_t g = gs[next_u32() % 6];
    const int dw = next_u32() % 3 == 0;
    c.s.groups = g;
    c.s.c_in = g * (dw ? 1 : 1 + (int32_t)(next_u32() % 5));
    c.s.c_out = g * (dw ? 1 + (int32_t)(next_u32() % 2) : 1 + (int32_t)(next_u32() % 20));
    c.s.n = 1 + (int32_t)(next_u32() % 2);
    c.s.kh = 1 + (int32_t)(next_u32() % 3);
    c.s.kw = 1 + (int32_t)(next_u32() % 3);
    c.s.sh = 1 + (int32_t)(next_u32() % 3);
    c.s.sw = 1 + (int32_t)(next_u32() % 3);
    c.s.dh = 1 + (int32_t)(next_u32() % 3);
    c.s.dw = 1 + (int32_t)(next_u32() % 3);
    c.s.pt = (int32_t)(next_u32() % 3);
    c.s.pb = (int32_t)(next_u32() % 3);
    c.s.pl = (int32_t)(next_u32() % 3);
    c.s.pr = (int32_t)(next_u32() % 3);
    c.s.h = 1 + (int32_t)(next_u32() % 12);
    c.s.w = 1 + (int32_t)(next_u32() % 24);
    /* the window must fit the padded input */
    while (c.s.h + c.s.pt + c.s.pb < c.s.dh * (c.s.kh - 1) + 1) c.s.h++;
    while (c.s.w + c.s.pl + c.s.pr < c.s.dw * (c.s.kw - 1) + 1) c.s.w++;
    c.lo = next_u32() % 2 ? 0.0f : -INFINITY;
    c.hi = next_u32() % 3 ? INFINITY : 0.5f;
    c.bias = (int)(next_u32() % 2);
    const dlc_isa_kernels *kt;
    for (size_t i = 0; (kt = kernel_table(i)); i++)
      run_case(&c, next_u32() % 2 ? DLCONV_NHWC : DLCONV_NCHW, kt->isa, 1 + (int)(next_u32() % 3));
  }
}

/* A NaN input reaches exactly the outputs whose window covers it, through a ReLU clamp. */
static void test_driver_nan(void **state) {
  (void)state;
  const dlc_isa_kernels *kt;
  for (size_t i = 0; (kt = kernel_table(i)); i++) {
    const dlconv_isa isa = kt->isa;
    if (!family_of(isa)) continue;
    for (int layout = 0; layout < 2; layout++)
      for (int32_t g = 1; g <= 16; g *= 4) {
        dlconv_conv2d_desc d;
        dlconv_conv2d_desc_init(&d, 1, 16, 6, 6, 16, 3, 3);
        d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
        d.groups = g;
        d.layout = layout ? DLCONV_NHWC : DLCONV_NCHW;
        d.out_min = 0.0f;
        d.out_max = INFINITY;
        float x[16 * 36], w[16 * 16 * 9], y[16 * 36];
        for (size_t k = 0; k < 16 * 36; k++) x[k] = frand();
        for (size_t k = 0; k < 16 * 16 * 9; k++) w[k] = 1.0f;
        /* channel 0 at (2, 3) */
        x[layout ? (2 * 6 + 3) * 16 : 2 * 6 + 3] = NAN;
        const dlconv_options o = forced_options(DLCONV_ALGO_GSPC, isa, 1);
        assert_int_equal(dlconv_conv2d(&d, x, w, NULL, y, NULL, &o), DLCONV_OK);
        const int32_t coutg = 16 / g;
        for (int32_t oc = 0; oc < 16; oc++)
          for (int32_t oh = 0; oh < 6; oh++)
            for (int32_t ow = 0; ow < 6; ow++) {
              const float v = layout ? y[(oh * 6 + ow) * 16 + oc] : y[(oc * 6 + oh) * 6 + ow];
              const int hit = oc / coutg == 0 && abs(oh - 2) <= 1 && abs(ow - 3) <= 1;
              if (hit != (isnan(v) != 0)) print_error("%s g=%d oc=%d (%d,%d): %g\n", isa_label(isa), g, oc, oh, ow, (double)v);
              assert_int_equal(hit, isnan(v) != 0);
            }
      }
  }
}

int main(void) {
  rng_state = 0x2545F4914F6CDD1Dull;
  return RUN_TESTS(test_ukernels, test_driver, test_driver_threads, test_driver_random, test_driver_nan);
}
