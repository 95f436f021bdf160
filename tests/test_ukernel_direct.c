/* test_ukernel_direct.c - the direct micro-kernels (conv, dwc, dwp) of every ISA this machine runs,
 * at every tile edge (pixel count, channel count, tap rectangle, accumulate/store modes, layouts),
 * and the direct driver through the public API with every ISA forced, against naive
 * double-precision references written here and the oracle (tests/oracle.c). */
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
#include "quant/quant.h" /* dlc_f32_to_f16, dlc_f16_to_f32 */
#include "support/alloc.h"
#include "support/compare.h"
#include "support/fault.h"
#include "support/guard_pages.h"
#include "support/half.h"
#include "support/kernel_tables.h"
#include "support/layer.h"
#include "support/rng.h"
#include "support/skip.h"

#define GUARD 37
static const float SENTINEL = -7777.0f;

/* got agrees with ref within the float rounding of a k-term sum whose terms have magnitude sum mag
   (the direct kernels' sums run in a longer order than the GEMM's: 3e-7). */
static int close_direct(float got, double ref, double mag, size_t k) { return close_to_sum(got, ref, mag, k, 3e-7); }

static float *frand_buf(size_t n) {
  float *b = xalloc_slack(n * sizeof(float));
  for (size_t i = 0; i < n; i++) b[i] = frand();
  return b;
}
static float *sentinel_buf(size_t n) {
  float *b = xalloc_slack(n * sizeof(float));
  for (size_t i = 0; i < n; i++) b[i] = SENTINEL;
  return b;
}

static const dlc_f32_direct_family *family_of(dlconv_isa isa) {
  const dlc_isa_kernels *k = dlc_kernels_for(isa);
  return k ? k->direct : NULL;
}

/* ---------------------------------------------------------------------------------------------
 * Micro-kernel level. */

/* Tap rectangles (nky, nkx), including empty ones (the driver's init / flush calls). */
static const int TAPS[][2] = {{1, 1}, {2, 3}, {3, 2}, {0, 2}, {2, 0}, {1, 3}};
#define N_TAPS (sizeof TAPS / sizeof TAPS[0])

static const uint16_t SENTINEL_H = 0xD7D7; /* -125.4375 */

typedef struct kcase {
  size_t nv, nw, nc, nky, nkx, cin;
  int nchw_x, nchw_y, acc_in, acc_out, clamp, nan;
  int f16;            /* conv of an f16_out family, storing into yh (acc_out unset) */
  size_t m;           /* dwc: channel multiplier; 0 for conv */
  size_t tile;        /* dwc: channel tile index */
  int row_loops;      /* dwc: loops (1, ky, kx) as the driver passes them, tap stride 1 (and 2 at pixel
                         stride 2): the kernels' sliding-window cases, stride 1 and 2 */
} kcase;

/* Builds a random problem for conv (m == 0) or dwc (m >= 1), runs fn, checks against doubles. */
static void run_kernel_case(const dlc_f32_direct_family *f, dlc_f32_direct_fn fn, const kcase *k, const char *what) {
  const size_t vl = f->vl, lanes = k->nv * vl;
  /* Strides 1, 2 and 3 for every pixel count: kernels specialise the pixel stride 1 and 2. */
  const size_t sw = 1 + (k->nw + (size_t)k->nchw_y + 2 * (size_t)k->acc_in) % 3;
  const size_t dwx = k->row_loops ? (sw == 2 && (k->nky & 1) ? 2 : 1) : 1 + k->nkx % 2, dh = 1 + k->nky % 2;
  const size_t nky = k->nky, nkx = k->nkx;
  dlc_f32_direct_args a;
  memset(&a, 0, sizeof a);
  size_t C, cin, c_out = 0, oc0 = 0, nc = k->nc;
  int32_t perm[64];
  if (k->m) { /* dwc: channel tile k->tile of a layer with c_out = c_in * m */
    const size_t m = k->m;
    oc0 = k->tile * lanes;
    c_out = oc0 + nc + (nc == lanes ? (size_t)irand32(0, 5) * m : 0);
    c_out = (c_out + m - 1) / m * m;
    nc = c_out - oc0 < lanes ? c_out - oc0 : lanes;
    C = c_out / m;
    cin = 1;
    const size_t ic0 = oc0 / m;
    for (size_t v = 0; v < k->nv; v++) {
      const size_t first = oc0 + v * vl;
      const size_t last = (first + vl < c_out ? first + vl : c_out) - 1;
      a.x_v[v] = (ptrdiff_t)(first / m - ic0);
      a.n_in[v] = first < c_out ? (int32_t)(last / m - first / m + 1) : 0;
      for (size_t l = 0; l < vl; l++) perm[v * vl + l] = first + l < c_out ? (int32_t)((first + l) / m - first / m) : 0;
    }
    a.perm = m > 1 ? perm : NULL;
  } else {
    cin = k->cin;
    C = cin + 2;
  }
  const size_t W = (k->nw - 1) * sw + (nkx ? (nkx - 1) * dwx : 0) + 3, H = (nky ? (nky - 1) * dh : 0) + 2;
  const size_t nx = H * W * C + 4;
  float *x = frand_buf(nx);
  const int nchw_x = k->m ? 0 : k->nchw_x;
  size_t x0;
  ptrdiff_t x_c, x_ky, x_kx, w_c, w_ky, w_kx;
  if (nchw_x) {
    x_c = (ptrdiff_t)(H * W);
    a.x_pix = (ptrdiff_t)sw;
    x_kx = (ptrdiff_t)dwx;
    x_ky = (ptrdiff_t)(dh * W);
    x0 = W + 1;
  } else {
    x_c = 1;
    a.x_pix = (ptrdiff_t)(sw * C);
    x_kx = (ptrdiff_t)(dwx * C);
    x_ky = (ptrdiff_t)(dh * W * C);
    x0 = k->m ? C + oc0 / k->m : C + 1;
  }
  a.x = x + x0;
  if (k->nan && nky && nkx) x[x0 + (size_t)a.x_pix * (k->nw - 1)] = NAN;
  /* Weights: vl per (ky, kx, ic), in the order of the loops; a gap between the channel vectors. */
  const size_t nky1 = nky ? nky : 1, nkx1 = nkx ? nkx : 1;
  if (nchw_x) { /* loops (ic, ky, kx) */
    w_kx = (ptrdiff_t)vl;
    w_ky = (ptrdiff_t)(nkx1 * vl);
    w_c = (ptrdiff_t)(nky1 * nkx1 * vl);
    a.n[0] = cin, a.n[1] = nky, a.n[2] = nkx;
    a.x_s[0] = x_c, a.x_s[1] = x_ky, a.x_s[2] = x_kx;
    a.w_s[0] = w_c, a.w_s[1] = w_ky, a.w_s[2] = w_kx;
  } else { /* loops (ky, kx, ic) */
    w_c = (ptrdiff_t)vl;
    w_kx = (ptrdiff_t)(cin * vl);
    w_ky = (ptrdiff_t)(nkx1 * cin * vl);
    a.n[0] = nky, a.n[1] = nkx, a.n[2] = cin;
    a.x_s[0] = x_ky, a.x_s[1] = x_kx, a.x_s[2] = x_c;
    a.w_s[0] = w_ky, a.w_s[1] = w_kx, a.w_s[2] = w_c;
    if (k->row_loops && nky && nkx) { /* dwc, cin 1: the same sums as (1, ky, kx) */
      a.n[0] = 1, a.n[1] = nky, a.n[2] = nkx;
      a.x_s[0] = 0, a.x_s[1] = x_ky, a.x_s[2] = x_kx;
      a.w_s[0] = 0, a.w_s[1] = w_ky, a.w_s[2] = w_kx;
    }
  }
  a.w_v = (ptrdiff_t)(cin * nky1 * nkx1 * vl + 3 * vl);
  const size_t nwt = k->nv * (size_t)a.w_v;
  float *w = frand_buf(nwt);
  a.w = w;
  a.nc = nc;
  float *bias = frand_buf(nc);
  a.bias = bias;
  a.acc_ld = (ptrdiff_t)(lanes + (k->acc_in ? 1 : 0));
  const size_t nacc = k->nw * (size_t)a.acc_ld + GUARD;
  float *acc_in = frand_buf(nacc);
  float *acc_out = k->acc_in && k->acc_out && (k->nw & 1) ? acc_in : sentinel_buf(nacc); /* in place, sometimes */
  const float *acc_in_copy = NULL;
  float *saved = NULL;
  if (k->acc_in) {
    saved = xalloc_slack(nacc * sizeof(float));
    memcpy(saved, acc_in, nacc * sizeof(float));
    acc_in_copy = saved;
    a.acc_in = acc_in;
  }
  if (k->acc_out) a.acc_out = acc_out;
  const int nchw_y = k->m ? 0 : k->nchw_y;
  if (nchw_y) {
    a.y_pix = 1;
    a.y_c = (ptrdiff_t)(k->nw + 2);
  } else {
    a.y_pix = (ptrdiff_t)((k->m ? c_out : nc) + 3);
    a.y_c = 1;
  }
  const size_t ny = nchw_y ? nc * (size_t)a.y_c + GUARD : k->nw * (size_t)a.y_pix + GUARD;
  float *y = sentinel_buf(ny);
  a.y = y;
  uint16_t *yh = NULL;
  if (k->f16) {
    yh = xalloc_slack(ny * sizeof(uint16_t));
    for (size_t i = 0; i < ny; i++) yh[i] = SENTINEL_H;
    a.yh = yh;
  }
  a.out_min = k->clamp ? -0.6f : -INFINITY;
  a.out_max = k->clamp ? 0.7f : INFINITY;

  fn(k->nw, &a);

  char *touched = calloc(ny > nacc ? ny : nacc, 1);
  assert_non_null(touched);
  for (size_t p = 0; p < k->nw; p++)
    for (size_t c = 0; c < nc; c++) {
      const size_t v = c / vl, l = c % vl;
      double acc = k->acc_in ? acc_in_copy[p * (size_t)a.acc_ld + c] : bias[c];
      double mag = fabs(acc);
      for (size_t ky = 0; ky < nky; ky++)
        for (size_t kx = 0; kx < nkx; kx++)
          for (size_t ic = 0; ic < cin; ic++) {
            const float *wp = w + v * (size_t)a.w_v + ky * (size_t)w_ky + kx * (size_t)w_kx + ic * (size_t)w_c + l;
            size_t xi = x0 + p * (size_t)a.x_pix + ky * (size_t)x_ky + kx * (size_t)x_kx;
            if (k->m)
              xi += (oc0 + c) / k->m - oc0 / k->m;
            else
              xi += ic * (size_t)x_c;
            const double t = (double)*wp * x[xi];
            acc += t;
            mag += fabs(t);
          }
      float got;
      if (k->acc_out) {
        const size_t at = p * (size_t)a.acc_ld + c;
        got = acc_out[at];
        touched[at] = 1;
      } else {
        acc = clampd(acc, a.out_min, a.out_max);
        const size_t at = p * (size_t)a.y_pix + c * (size_t)a.y_c;
        assert_true(at < ny);
        got = k->f16 ? (float)half_value(yh[at]) : y[at];
        touched[at] = 1;
      }
      /* binary16 output: the fp32 sum's error, then one rounding to 11 significant bits (half an
         ulp: 2^-11 relative, 2^-25 among the subnormals) */
      const int ok = k->f16 ? isnan(acc) ? isnan(got)
                                        : fabs((double)got - acc) <= 3e-7 * (double)(nky * nkx * cin + 2) * mag +
                                                                         ldexp(fabs(acc), -11) + ldexp(1.0, -25)
                            : close_direct(got, acc, mag, nky * nkx * cin);
      if (!ok)
        fail_msg("%s %s nv=%zu nw=%zu nc=%zu taps=%zux%zu cin=%zu m=%zu x%s y%s in=%d out=%d clamp=%d: "
                 "pixel %zu channel %zu = %.9g, want %.9g%s",
                 f->name, what, k->nv, k->nw, nc, nky, nkx, cin, k->m, nchw_x ? "nchw" : "nhwc",
                 nchw_y ? "nchw" : "nhwc", k->acc_in, k->acc_out, k->clamp, p, c, got, acc, k->f16 ? " (binary16 out)" : "");
    }
  /* Nothing outside the tile's valid outputs is written (raw buffers: lanes beyond nc may be). */
  if (k->acc_out) {
    for (size_t i = k->nw * (size_t)a.acc_ld; i < nacc; i++)
      if (acc_out[i] != (acc_out == acc_in ? acc_in_copy[i] : SENTINEL))
        fail_msg("%s %s nw=%zu: acc_out[%zu] written past the tile", f->name, what, k->nw, i);
    for (size_t i = 0; i < ny; i++)
      if (y[i] != SENTINEL) fail_msg("%s %s: y written in raw mode", f->name, what);
  } else if (k->f16) {
    for (size_t i = 0; i < ny; i++) {
      if (y[i] != SENTINEL) fail_msg("%s %s: y written when storing into yh", f->name, what);
      if (!touched[i] && yh[i] != SENTINEL_H)
        fail_msg("%s %s nv=%zu nw=%zu nc=%zu y%s: yh[%zu] written outside the tile", f->name, what, k->nv, k->nw, nc,
                 nchw_y ? "nchw" : "nhwc", i);
    }
  } else {
    for (size_t i = 0; i < ny; i++)
      if (!touched[i] && y[i] != SENTINEL)
        fail_msg("%s %s nv=%zu nw=%zu nc=%zu y%s: y[%zu] written outside the tile", f->name, what, k->nv, k->nw, nc,
                 nchw_y ? "nchw" : "nhwc", i);
  }
  if (k->acc_in && acc_out != acc_in)
    for (size_t i = 0; i < nacc; i++)
      if (acc_in[i] != acc_in_copy[i]) fail_msg("%s %s: acc_in modified", f->name, what);
  free(touched);
  free(yh);
  free(x);
  free(w);
  free(bias);
  if (acc_out != acc_in) free(acc_out);
  free(acc_in);
  free(saved);
  free(y);
}

/* nc values at the edges of an nv-vector tile. */
static size_t channel_counts(size_t vl, size_t nv, size_t out[4]) {
  size_t n = 0;
  const size_t lo = (nv - 1) * vl + 1, hi = nv * vl;
  out[n++] = lo;
  if (lo + 1 < hi) out[n++] = lo + 1;
  if (hi - 1 > lo + 1) out[n++] = hi - 1;
  if (hi > lo) out[n++] = hi;
  return n;
}

static void test_conv_kernels(void **state) {
  (void)state;
  int tested = 0, tested_f16 = 0;
  const dlc_isa_kernels *kt;
  for (size_t i = 0; (kt = kernel_table(i)); i++) {
    const dlc_f32_direct_family *f = kt->direct;
    if (!f) continue;
    for (size_t nv = 1; nv <= 2; nv++) {
      if (!f->conv[nv - 1]) continue;
      assert_true(f->conv_tw[nv - 1] >= 1);
      size_t ncs[4];
      const size_t nnc = channel_counts(f->vl, nv, ncs);
      const size_t tw = f->conv_tw[nv - 1];
      for (size_t nw = 1; nw <= 2 * tw + 3; nw += nw < tw ? 1 : tw + 1)
        for (size_t ci = 0; ci < nnc; ci++)
          for (int mode = 0; mode < 8; mode++) {
            kcase k = {.nv = nv, .nw = nw, .nc = ncs[ci], .cin = (size_t)irand32(1, 6)};
            k.nchw_x = mode & 1;
            k.nchw_y = (mode >> 1) & 1;
            k.acc_in = (mode >> 2) & 1;
            k.acc_out = (int)((nw + ci) & 1);
            k.clamp = (int)((nw + mode) % 3 == 0);
            k.nan = (int)((nw * 7 + ci + (size_t)mode) % 11 == 0);
            const int *t = TAPS[(nw + ci + (size_t)mode) % N_TAPS];
            k.nky = (size_t)t[0];
            k.nkx = (size_t)t[1];
            run_kernel_case(f, f->conv[nv - 1], &k, "conv");
            tested++;
            if (f->f16_out && !k.acc_out) {
              k.f16 = 1;
              run_kernel_case(f, f->conv[nv - 1], &k, "conv");
              tested_f16++;
            }
          }
    }
  }
  assert_true(tested > 0);
  assert_true(tested_f16 > 0); /* generic stores binary16 everywhere */
  printf("conv: %d cases, %d of them again with binary16 output\n", tested, tested_f16);
}

static void test_dwc_kernels(void **state) {
  (void)state;
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t i = 0; (kt = kernel_table(i)); i++) {
    const dlc_f32_direct_family *f = kt->direct;
    if (!f) continue;
    for (size_t nv = 1; nv <= 2; nv++) {
      if (!f->dwc[nv - 1]) continue;
      size_t ncs[4];
      const size_t nnc = channel_counts(f->vl, nv, ncs);
      const size_t tw = f->dwc_tw[nv - 1];
      for (size_t nw = 1; nw <= 2 * tw + 3; nw += nw < tw ? 1 : tw + 2)
        for (size_t ci = 0; ci < nnc; ci++)
          for (size_t m = 1; m <= 3; m++)
            for (int mode = 0; mode < 4; mode++) {
              kcase k = {.nv = nv, .nw = nw, .nc = ncs[ci], .m = m, .tile = (size_t)(mode & 1)};
              k.acc_in = (mode >> 1) & 1;
              k.acc_out = (int)((nw + ci + m) & 1);
              k.clamp = (int)((nw + (size_t)mode) % 3 == 0);
              k.nan = (int)((nw * 5 + ci + m) % 13 == 0);
              const int *t = TAPS[(nw + ci + m + (size_t)mode) % N_TAPS];
              k.nky = (size_t)t[0];
              k.nkx = (size_t)t[1];
              run_kernel_case(f, f->dwc[nv - 1], &k, "dwc");
              tested++;
              /* the driver's loops over 3 and 5 taps a row */
              k.row_loops = 1;
              k.nky = 1 + (nw + (size_t)mode) % 3;
              k.nkx = (nw + ci + m) & 1 ? 5 : 3;
              run_kernel_case(f, f->dwc[nv - 1], &k, "dwc");
              tested++;
            }
    }
  }
  assert_true(tested > 0);
}

/* One dwp call on a whose geometry (kernel, strides, dilations, input size, origin) is set. */
static void check_dwp(const dlc_f32_direct_family *f, dlc_f32_dwp_args a, size_t nw, size_t nr, int clamp) {
  const size_t nx = (size_t)(a.h_in * a.w_in);
  float *x = frand_buf(nx);
  float *w = frand_buf((size_t)(a.kh * a.kw));
  a.x = x;
  a.w = w;
  a.bias = frand();
  a.nr = nr;
  a.y_row = (ptrdiff_t)nw + irand32(0, 3);
  const size_t ny = nr * (size_t)a.y_row + GUARD;
  float *y = sentinel_buf(ny);
  a.y = y;
  a.out_min = clamp ? -0.5f : -INFINITY;
  a.out_max = clamp ? 0.4f : INFINITY;
  f->dwp(nw, &a);
  for (size_t i = 0; i < ny; i++) {
    const size_t r = i / (size_t)a.y_row, p = i % (size_t)a.y_row;
    if (r >= nr || p >= nw) {
      if (y[i] != SENTINEL) fail_msg("%s dwp nw=%zu nr=%zu: y[%zu] written outside the tile", f->dw_name, nw, nr, i);
      continue;
    }
    double acc = a.bias, mag = fabs(a.bias);
    for (ptrdiff_t ky = 0; ky < a.kh; ky++)
      for (ptrdiff_t kx = 0; kx < a.kw; kx++) {
        const ptrdiff_t iy = a.iy0 + (ptrdiff_t)r * a.sh + ky * a.dh, ix = a.ix0 + (ptrdiff_t)p * a.sw + kx * a.dw;
        if (iy < 0 || iy >= a.h_in || ix < 0 || ix >= a.w_in) continue;
        const double t = (double)w[ky * a.kw + kx] * x[iy * a.w_in + ix];
        acc += t;
        mag += fabs(t);
      }
    acc = clampd(acc, a.out_min, a.out_max);
    if (!close_direct(y[i], acc, mag, (size_t)(a.kh * a.kw)))
      fail_msg("%s dwp nw=%zu nr=%zu k=%tdx%td s=%td,%td d=%td,%td in=%tdx%td at=(%td,%td): row %zu px %zu = %.9g, want %.9g",
               f->dw_name, nw, nr, a.kh, a.kw, a.sh, a.sw, a.dh, a.dw, a.h_in, a.w_in, a.iy0, a.ix0, r, p, y[i], acc);
  }
  free(x);
  free(w);
  free(y);
}

static void run_dwp_case(const dlc_f32_direct_family *f, size_t nw, size_t nr, int clamp) {
  dlc_f32_dwp_args a;
  a.kh = irand32(1, 4);
  a.kw = irand32(1, 5);
  a.sh = irand32(1, 3);
  a.sw = irand32(1, 3);
  a.dh = irand32(1, 2);
  a.dw = irand32(1, 3);
  a.h_in = irand32(1, 12);
  a.w_in = irand32(1, (int)(nw * (size_t)a.sw) + 6);
  a.iy0 = irand32(-3, (int)a.h_in);
  a.ix0 = irand32(-4, 3);
  check_dwp(f, a, nw, nr, clamp);
}

/* The shapes of real layers (kernel 3, 5, 7, stride 1 or 2 both ways, no row dilation), which
   kernels may specialise: rows fully inside the input and clipped at the top or bottom, tap
   columns fully inside the row and clipped at either end (a padded row's own width, or a wider
   row with the tile in its middle), widths around multiples of the vector. */
static void test_dwp_layer_shapes(void **state) {
  (void)state;
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t i = 0; (kt = kernel_table(i)); i++) {
    const dlc_f32_direct_family *f = kt->direct;
    if (!f || !f->dwp) continue;
    const size_t vl = f->vl, maxw = f->dwp_vecs * vl;
    for (ptrdiff_t k = 3; k <= 7; k += 2)
      for (ptrdiff_t s = 1; s <= 2; s++)
        for (size_t nw = 1; nw <= maxw; nw += nw % vl == vl - 1 || nw % vl == 0 || nw % vl == 1 ? 1 : vl - 3) {
          const size_t npv = (nw + vl - 1) / vl, rows = f->dwp_rows[npv - 1];
          for (int rep = 0; rep < 8; rep++) {
            dlc_f32_dwp_args a;
            a.kh = k;
            a.kw = rep % 4 == 3 ? irand32(1, (int)k + 1) : k;
            a.sh = a.sw = s;
            a.dh = 1;
            a.dw = rep % 4 == 2 ? 2 : 1;
            const ptrdiff_t pad = (a.kw - 1) * a.dw / 2, span = ((ptrdiff_t)nw - 1) * s + (a.kw - 1) * a.dw + 1;
            /* rep 0, 1: the row the tile spans with padding 'pad' (a whole padded row); else a wider row
               with the tile at the left, middle or right. */
            a.w_in = rep < 2 ? span - 2 * pad + irand32(0, (int)s - 1) : span + irand32(0, 20);
            if (a.w_in < 1) a.w_in = 1;
            a.ix0 = rep < 2 ? -pad : irand32(-(int)pad, (int)(a.w_in - span + pad));
            const size_t nr = rep < 4 ? rows : (size_t)irand32(1, (int)rows);
            a.h_in = irand32(1, (int)((ptrdiff_t)nr * s + k + 4));
            a.iy0 = irand32(-(int)k, (int)a.h_in - 1);
            if (rep == 1) { /* all rows inside */
              a.h_in = (ptrdiff_t)nr * s + k + irand32(0, 3);
              a.iy0 = irand32(0, (int)(a.h_in - ((ptrdiff_t)nr - 1) * s - k));
            }
            check_dwp(f, a, nw, nr, rep % 3 == 0);
            tested++;
          }
        }
  }
  assert_true(tested > 0);
}

/* dwf: every plane size and kernel a family has a kernel for (probed over 1..32 x 1..32 planes,
   k 1..7, so a kernel added for a new size is reached), 1..19 channels, with and without the
   clamp; y checked in full, a guard of sentinels after the last plane (the kernel's masked last
   vector). */
static void test_dwf_kernels(void **state) {
  (void)state;
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t i = 0; (kt = kernel_table(i)); i++) {
    const dlc_f32_direct_family *f = kt->direct;
    if (!f || !f->dwf) continue;
    for (size_t h = 1; h <= 32; h++)
      for (size_t wd = 1; wd <= 32; wd++)
        for (size_t k = 1; k <= 7; k++) {
          const dlc_f32_dwf_fn fn = f->dwf(h, wd, k);
          if (!fn) continue;
          const ptrdiff_t pad = (ptrdiff_t)(k - 1) / 2, H = (ptrdiff_t)h, W = (ptrdiff_t)wd;
          for (size_t nc = 1; nc <= 19; nc += nc < 4 ? 1 : 5) {
            const size_t plane = h * wd, taps = k * k;
            float *x = frand_buf(nc * plane), *w = frand_buf(nc * taps), *b = frand_buf(nc);
            float *y = sentinel_buf(nc * plane + GUARD);
            const int clamp = (int)(nc % 2);
            const dlc_f32_dwf_args a = {.x = x, .w = w, .bias = b, .y = y, .nc = nc,
                                        .out_min = clamp ? -0.5f : -INFINITY, .out_max = clamp ? 0.4f : INFINITY};
            fn(&a);
            for (size_t c = 0; c < nc; c++)
              for (ptrdiff_t oy = 0; oy < H; oy++)
                for (ptrdiff_t ox = 0; ox < W; ox++) {
                  double acc = b[c], mag = fabs(b[c]);
                  for (ptrdiff_t ky = 0; ky < (ptrdiff_t)k; ky++)
                    for (ptrdiff_t kx = 0; kx < (ptrdiff_t)k; kx++) {
                      const ptrdiff_t iy = oy + ky - pad, ix = ox + kx - pad;
                      if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                      const double t = (double)w[c * taps + (size_t)ky * k + (size_t)kx] * x[c * plane + (size_t)(iy * W + ix)];
                      acc += t;
                      mag += fabs(t);
                    }
                  acc = clampd(acc, a.out_min, a.out_max);
                  const float got = y[c * plane + (size_t)(oy * W + ox)];
                  if (!close_direct(got, acc, mag, taps))
                    fail_msg("%s dwf %zux%zu k=%zu nc=%zu: channel %zu (%td, %td) = %.9g, want %.9g", f->dw_name, h, wd,
                             k, nc, c, oy, ox, got, acc);
                }
            for (size_t g = 0; g < GUARD; g++)
              if (y[nc * plane + g] != SENTINEL)
                fail_msg("%s dwf %zux%zu k=%zu nc=%zu: wrote past the last plane", f->dw_name, h, wd, k, nc);
            free(x);
            free(w);
            free(b);
            free(y);
            tested++;
          }
        }
  }
  printf("dwf: %d cases\n", tested);
  if (!tested) skip();
}

static void test_dwp_kernels(void **state) {
  (void)state;
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t i = 0; (kt = kernel_table(i)); i++) {
    const dlc_f32_direct_family *f = kt->direct;
    if (!f || !f->dwp) continue;
    assert_true(f->dwp_vecs >= 1 && f->dwp_vecs <= DLC_DIRECT_MAX_DWP_VECS);
    for (size_t npv = 1; npv <= f->dwp_vecs; npv++) {
      const size_t vl = f->vl, rows = f->dwp_rows[npv - 1];
      assert_true(rows >= 1);
      const size_t nws[4] = {(npv - 1) * vl + 1, (npv - 1) * vl + (size_t)irand32(1, (int)vl), npv * vl - 1, npv * vl};
      for (size_t j = 0; j < 4; j++) {
        if (nws[j] == 0 || (nws[j] + vl - 1) / vl != npv) continue;
        for (size_t nr = 1; nr <= rows; nr++)
          for (int rep = 0; rep < 6; rep++) {
            run_dwp_case(f, nws[j], nr, rep % 3 == 0);
            tested++;
          }
      }
    }
  }
  assert_true(tested > 0);
}

/* ---------------------------------------------------------------------------------------------
 * dwp_f16: the dwp kernel on binary16 x and y (xh, yh), fp32 weights and arithmetic, stride_w 1
 * or 2. Reference: a double sum over the taps inside the plane of w * (the half widened), plus
 * the bias, clamped, rounded to binary16 by dlc_f32_to_f16. A result passes when it lies between
 * the binary16 roundings of the clamped reference minus and plus a bound on the fp32 sum's error
 * (2^-23 (taps + 1) sum |terms|; the rounding is monotonic, so that interval holds every result
 * an fp32 sum in any order can give). Where the sum is exact in fp32 in any order (the "exact"
 * and "tiny" value sets: few-bit weights, bias and inputs in a narrow exponent range) and for the
 * special values (NaN, an inf input, all-zero terms) the result must be the reference exactly:
 * NaN for NaN, the same inf, the ties rounded to even. The plane lies against a guard page
 * (ending at one, or starting right after one), so a read outside the plane faults; fp32 x and y
 * are NULL; the output tile sits among sentinel halves. */

/* Orders halves as their values (both zeros 0); not for NaN. */
static int half_key(uint16_t h) { return h & 0x8000 ? -(int)(h & 0x7fff) : (int)h; }

enum { H_RANDOM, H_MIX, H_BIG, H_EXACT, H_TINY, H_NEGZERO, H_NANPLANE, H_NMODES };
static const char *const H_MODE_NAMES[H_NMODES] = {"random", "mix", "big", "exact", "tiny", "negzero", "nanplane"};
/* The value sets whose fp32 sums are exact in any order (every partial sum a multiple of the
   smallest product's unit, under 2^24 of them). */
static int h_mode_exact(int mode) { return mode == H_EXACT || mode == H_TINY || mode == H_NEGZERO; }
enum { CL_NONE, CL_NARROW, CL_WIDE, CL_RELU6, CL_N };
static const char *const CL_NAMES[CL_N] = {"none", "narrow", "wide", "relu6"};

typedef struct dwp16_case {
  dlc_f32_dwp_args a;         /* geometry: h_in, w_in, iy0, ix0, sh, sw, dh, dw, kh, kw */
  size_t nw, nr;
  int mode, clamp, at_end;
  ptrdiff_t nan_at, inf_at;   /* an element of the plane made NaN / +-inf, or -1 */
  const uint16_t *x_preset;   /* h_in * w_in halves instead of the mode's, or NULL */
  const float *w_preset;      /* kh * kw weights, or NULL */
  const float *bias_preset;
} dwp16_case;

typedef struct dwp16_stats {
  long cases, pixels, exact_px, nan_px, inf_px, strict_negzero_px, subnormal_px, tie_px, clamped_px, stride2_cases,
      guard_end_cases;
  long per_sweep[4];
} dwp16_stats;
static dwp16_stats h16;

/* The case being run (fault_case), written to stderr if the kernel call faults (an out-of-plane
   read). */
#define h16_what fault_case

static uint16_t h_sign(void) { return (next_u32() & 1) ? 0x8000 : 0; }

static uint16_t h16_x(int mode) {
  switch (mode) {
    case H_MIX: {
      const int r = irand32(0, 19);
      if (r < 10) return dlc_f32_to_f16(4.0f * frand());
      if (r < 12) return h_sign();                                                  /* +-0 */
      if (r < 15) return h_sign() | (uint16_t)irand32(1, 1023);                      /* subnormal */
      if (r < 17) return h_sign() | dlc_f32_to_f16((float)irand32(1000, 65504));     /* large */
      if (r < 18) return h_sign() | 0x7bff;                                         /* 65504 */
      if (r < 19) return h_sign() | (uint16_t)(0x0400 + irand32(0, 1023));           /* smallest normals */
      return dlc_f32_to_f16(1e-3f * frand());
    }
    case H_BIG: return next_u32() % 8 == 0 ? 0x7bff : dlc_f32_to_f16((float)irand32(32768, 65504));
    case H_EXACT: /* +-[0.5, 1): units of 2^-11 */
      return irand32(0, 9) == 0 ? h_sign() : (uint16_t)(h_sign() | (0x3800 + irand32(0, 1023)));
    case H_TINY: /* subnormals and the smallest normals: units of 2^-24 below 2^-13 */
      return irand32(0, 4) == 0 ? (uint16_t)(h_sign() | (0x0400 + irand32(0, 1023))) : (uint16_t)(h_sign() | irand32(0, 1023));
    case H_NEGZERO: return 0x8000;
    case H_NANPLANE: { /* quiet and signalling payloads, both signs */
      static const uint16_t nans[] = {0x7e00, 0xfe00, 0x7c01, 0xfdff, 0x7fff, 0x7d55};
      return nans[next_u32() % 6];
    }
    default: return dlc_f32_to_f16(frand());
  }
}

static float h16_w(int mode, float sgn, int coarse) {
  switch (mode) {
    case H_BIG: return sgn * (1.5f + 0.5f * frand());
    case H_EXACT: return coarse ? (float)irand32(-4, 4) / 2.0f : (float)irand32(-16, 16) / 16.0f;
    case H_TINY: return (float)irand32(-16, 16) / 16.0f;
    case H_NEGZERO: return 0.25f + 0.75f * fabsf(frand());
    default: return frand();
  }
}

static float h16_bias(int mode, float sgn) {
  switch (mode) {
    case H_MIX: return 4.0f * frand();
    case H_BIG: return sgn * 100.0f * frand();
    case H_EXACT: return irand32(0, 9) == 0 ? (h_sign() ? -0.0f : 0.0f) : ldexpf((float)irand32(-32768, 32768), -15);
    case H_TINY: return irand32(0, 9) == 0 ? (h_sign() ? -0.0f : 0.0f) : ldexpf((float)irand32(-4096, 4096), -28);
    case H_NEGZERO: return -0.0f;
    default: return frand();
  }
}

/* Runs one dwp_f16 call and checks every half of the output buffer. */
static void check_dwp_f16(const dlc_f32_direct_family *f, const dwp16_case *k, const char *sweep) {
  dlc_f32_dwp_args a = k->a;
  const size_t nw = k->nw, nr = k->nr;
  const size_t nx = (size_t)(a.h_in * a.w_in), nk = (size_t)(a.kh * a.kw);
  assert_true(nx >= 1 && nk >= 1 && (a.sw == 1 || a.sw == 2) && nr >= 1);
  gbuf gx;
  uint16_t *xh = gbuf_open(&gx, nx * sizeof(uint16_t), k->at_end);
  for (size_t i = 0; i < nx; i++) xh[i] = k->x_preset ? k->x_preset[i] : h16_x(k->mode);
  if (k->nan_at >= 0 && (size_t)k->nan_at < nx) xh[k->nan_at] = (uint16_t)(h_sign() | 0x7e00 | (next_u32() & 0x1ff));
  if (k->inf_at >= 0 && (size_t)k->inf_at < nx) xh[k->inf_at] = (uint16_t)(h_sign() | 0x7c00);
  const float sgn = next_u32() % 4 == 0 ? -1.0f : 1.0f;
  const int coarse = irand32(0, 2) == 0;
  float *w = xalloc_slack(nk * sizeof(float));
  for (size_t i = 0; i < nk; i++) w[i] = k->w_preset ? k->w_preset[i] : h16_w(k->mode, sgn, coarse);
  a.x = NULL;
  a.y = NULL;
  a.xh = xh;
  a.w = w;
  a.bias = k->bias_preset ? *k->bias_preset : h16_bias(k->mode, sgn);
  a.nr = nr;
  a.y_row = (ptrdiff_t)nw + irand32(0, 3);
  static const float cl_lo[CL_N] = {-INFINITY, -0.5f, -1e6f, 0.0f}, cl_hi[CL_N] = {INFINITY, 0.4f, 1e6f, 6.0f};
  a.out_min = cl_lo[k->clamp];
  a.out_max = cl_hi[k->clamp];
  if (k->mode == H_TINY && k->clamp == CL_NARROW) { /* a clamp at the scale of the values */
    a.out_min = -5e-5f;
    a.out_max = 4e-5f;
  }
  const size_t ny = GUARD + nr * (size_t)a.y_row + GUARD;
  uint16_t *ybuf = xalloc_slack(ny * sizeof(uint16_t));
  for (size_t i = 0; i < ny; i++) ybuf[i] = SENTINEL_H;
  a.yh = ybuf + GUARD;
  snprintf(h16_what, sizeof h16_what,
           "%s %s mode=%s clamp=%s guard=%s nw=%zu nr=%zu k=%tdx%td s=%td,%td d=%td,%td in=%tdx%td at=(%td,%td) "
           "y_row=%td",
           f->dw_name, sweep, H_MODE_NAMES[k->mode], CL_NAMES[k->clamp], k->at_end ? "end" : "start", nw, nr, a.kh, a.kw,
           a.sh, a.sw, a.dh, a.dw, a.h_in, a.w_in, a.iy0, a.ix0, a.y_row);

  fault_names_case("\ndwp_f16 faulted (a read outside the plane?) in: ", 1);
  f->dwp_f16(nw, &a);
  fault_names_case(NULL, 0);

  const int exact = h_mode_exact(k->mode);
  for (size_t i = 0; i < ny; i++) {
    const uint16_t got = ybuf[i];
    const ptrdiff_t t = (ptrdiff_t)i - GUARD;
    const size_t r = t < 0 ? nr : (size_t)t / (size_t)a.y_row, p = t < 0 ? 0 : (size_t)t % (size_t)a.y_row;
    if (r >= nr || p >= nw) {
      if (got != SENTINEL_H)
        fail_msg("%s: yh[%td] (row %td of y_row, px %td) written outside the %zux%zu tile: 0x%04x", h16_what, t,
                 t < 0 ? -1 : (ptrdiff_t)r, t < 0 ? t : (ptrdiff_t)p, nr, nw, got);
      continue;
    }
    double v = a.bias, mag = fabs(a.bias);
    int pad = 0;
    for (ptrdiff_t ky = 0; ky < a.kh; ky++)
      for (ptrdiff_t kx = 0; kx < a.kw; kx++) {
        const ptrdiff_t iy = a.iy0 + (ptrdiff_t)r * a.sh + ky * a.dh, ix = a.ix0 + (ptrdiff_t)p * a.sw + kx * a.dw;
        if (iy < 0 || iy >= a.h_in || ix < 0 || ix >= a.w_in) {
          pad = 1;
          continue;
        }
        const double term = (double)w[ky * a.kw + kx] * (double)dlc_f16_to_f32(xh[iy * a.w_in + ix]);
        v += term;
        mag += fabs(term);
      }
    h16.pixels++;
    int ok;
    uint16_t want = 0, lo_h = 0, hi_h = 0;
    const double c = clampd(v, a.out_min, a.out_max);
    if (isnan(v)) {
      ok = half_is_nan(got);
      want = lo_h = hi_h = 0x7e00;
      h16.nan_px++;
    } else if (exact || mag == 0 || isinf(v)) {
      want = dlc_f32_to_f16((float)c);
      /* The sign of a zero: exact when every term is a zero of the plane (the kernel adds w * +0
         on padded lanes of some taps) and no clamp bound is zero. */
      const int strict_zero = mag == 0 && !pad && a.out_min != 0.0f && a.out_max != 0.0f;
      ok = c == 0 ? got == want || (!strict_zero && (got & 0x7fff) == 0) : got == want;
      lo_h = hi_h = want;
      h16.exact_px++;
      if (strict_zero && want == 0x8000) h16.strict_negzero_px++;
      if (c != 0 && !isinf(c) && (float)c == c) { /* a tie between two halves, rounded to even? */
        const float fa = dlc_f16_to_f32(want);
        if ((double)fa != c && (want & 0x7fff) != 0) {
          const uint16_t nb = fabs(c) > fabs((double)fa) ? (uint16_t)(want + 1) : (uint16_t)(want - 1);
          if (fabs(c - fa) == fabs((double)dlc_f16_to_f32(nb) - c)) h16.tie_px++;
        }
      }
    } else {
      const double err = ldexp(mag, -23) * (double)(nk + 1);
      want = dlc_f32_to_f16((float)c);
      lo_h = dlc_f32_to_f16((float)clampd(v - err, a.out_min, a.out_max));
      hi_h = dlc_f32_to_f16((float)clampd(v + err, a.out_min, a.out_max));
      ok = !half_is_nan(got) && half_key(lo_h) <= half_key(got) && half_key(got) <= half_key(hi_h);
      if (lo_h == hi_h) h16.exact_px++;
    }
    if (ok && (got & 0x7fff) == 0x7c00) h16.inf_px++;
    if (ok && (got & 0x7c00) == 0 && (got & 0x3ff)) h16.subnormal_px++;
    if (ok && !isnan(v) && c != v) h16.clamped_px++;
    if (!ok)
      fail_msg("%s: row %zu px %zu = 0x%04x (%.9g), want 0x%04x (%.9g; accepted 0x%04x..0x%04x), sum %.17g |terms| %.9g%s",
               h16_what, r, p, got, (double)dlc_f16_to_f32(got), want, (double)dlc_f16_to_f32(want), lo_h, hi_h, v, mag,
               pad ? ", padded taps" : "");
  }
  h16.cases++;
  if (a.sw == 2) h16.stride2_cases++;
  if (k->at_end) h16.guard_end_cases++;
  gbuf_close(&gx);
  free(w);
  free(ybuf);
}

/* A random geometry around an nw x nr tile at stride_w sw: kernels to 7x7 (asymmetric ones),
   strides_h and dilations 1..3, origins above, left of and past the plane. */
/* dwp_f16's rows per tile for npv pixel vectors: its own table where the family has one. */
static size_t h16_rows(const dlc_f32_direct_family *f, size_t npv) {
  return f->dwp_rows_f16[npv - 1] ? f->dwp_rows_f16[npv - 1] : f->dwp_rows[npv - 1];
}

static void h16_random_geometry(dlc_f32_dwp_args *a, size_t nw, ptrdiff_t sw) {
  memset(a, 0, sizeof *a);
  a->kh = irand32(1, 7);
  a->kw = irand32(1, 7);
  a->sh = irand32(1, 3);
  a->sw = sw;
  a->dh = irand32(1, 3);
  a->dw = irand32(1, 3);
  a->h_in = irand32(1, 12);
  a->w_in = irand32(1, (int)(nw * (size_t)sw) + 6);
  a->iy0 = irand32(-(int)((a->kh - 1) * a->dh) - 2, (int)a->h_in + 1);
  a->ix0 = irand32(-(int)((a->kw - 1) * a->dw) - 3, 3);
}

/* The value set, clamp, guard placement, NaN and inf of the case numbered i. */
static void h16_vary(dwp16_case *k, size_t i) {
  k->mode = (int)(i % H_NMODES);
  k->clamp = (int)((i / H_NMODES + i) % CL_N);
  k->at_end = (int)((i / 2) & 1);
  const size_t nx = (size_t)(k->a.h_in * k->a.w_in);
  k->nan_at = (k->mode == H_RANDOM || k->mode == H_MIX) && i % 3 == 0 ? (ptrdiff_t)(next_u32() % nx) : -1;
  k->inf_at = k->mode == H_MIX && i % 5 == 1 ? (ptrdiff_t)(next_u32() % nx) : -1;
}

/* Every pixel-vector count, widths at its tails, every row count, stride_w 1 and 2. */
static void h16_sweep_tiles(const dlc_f32_direct_family *f) {
  size_t i = 0;
  for (size_t npv = 1; npv <= f->dwp_vecs; npv++) {
    const size_t vl = f->vl, rows = h16_rows(f, npv);
    assert_true(rows >= 1);
    const size_t nws[5] = {(npv - 1) * vl + 1, (npv - 1) * vl + 2, (npv - 1) * vl + (size_t)irand32(1, (int)vl),
                           npv * vl - 1, npv * vl};
    for (size_t j = 0; j < 5; j++) {
      if (nws[j] == 0 || (nws[j] + vl - 1) / vl != npv) continue;
      for (size_t nr = 1; nr <= rows; nr++)
        for (int rep = 0; rep < 8; rep++, i++) {
          dwp16_case k = {.nw = nws[j], .nr = nr};
          h16_random_geometry(&k.a, nws[j], 1 + rep % 2);
          h16_vary(&k, i);
          check_dwp_f16(f, &k, "tiles");
          h16.per_sweep[0]++;
        }
    }
  }
}

/* The shapes of real layers, as test_dwp_layer_shapes: kernels 3, 5, 7, stride 1 or 2 both ways. */
static void h16_sweep_layers(const dlc_f32_direct_family *f) {
  const size_t vl = f->vl, maxw = f->dwp_vecs * vl;
  size_t i = 0;
  for (ptrdiff_t kk = 3; kk <= 7; kk += 2)
    for (ptrdiff_t s = 1; s <= 2; s++)
      for (size_t nw = 1; nw <= maxw; nw += nw % vl == vl - 1 || nw % vl == 0 || nw % vl == 1 ? 1 : vl - 3) {
        const size_t npv = (nw + vl - 1) / vl, rows = h16_rows(f, npv);
        for (int rep = 0; rep < 6; rep++, i++) {
          dwp16_case k = {.nw = nw};
          dlc_f32_dwp_args *a = &k.a;
          a->kh = kk;
          a->kw = rep % 4 == 3 ? irand32(1, (int)kk + 1) : kk;
          a->sh = a->sw = s;
          a->dh = 1;
          a->dw = rep % 4 == 2 ? 2 : 1;
          const ptrdiff_t pad = (a->kw - 1) * a->dw / 2, span = ((ptrdiff_t)nw - 1) * s + (a->kw - 1) * a->dw + 1;
          a->w_in = rep < 2 ? span - 2 * pad + irand32(0, (int)s - 1) : span + irand32(0, 20);
          if (a->w_in < 1) a->w_in = 1;
          a->ix0 = rep < 2 ? -pad : irand32(-(int)pad, (int)(a->w_in - span + pad));
          k.nr = rep < 4 ? rows : (size_t)irand32(1, (int)rows);
          a->h_in = irand32(1, (int)((ptrdiff_t)k.nr * s + kk + 4));
          a->iy0 = irand32(-(int)kk, (int)a->h_in - 1);
          if (rep == 1) { /* all rows inside */
            a->h_in = (ptrdiff_t)k.nr * s + kk + irand32(0, 3);
            a->iy0 = irand32(0, (int)(a->h_in - ((ptrdiff_t)k.nr - 1) * s - kk));
          }
          h16_vary(&k, i);
          check_dwp_f16(f, &k, "layers");
          h16.per_sweep[1]++;
        }
      }
}

/* The row borders, where the loads are masked (stride 2: 32 halves under a 32-bit mask): short
   rows and rows ending around multiples of the vector, 1-3 rows so the tile reads the plane's
   first and last rows, tiles starting left of the row (ix0 < 0), ending around its last element,
   spanning all of it or lying wholly outside it. */
static void h16_sweep_borders(const dlc_f32_direct_family *f) {
  static const ptrdiff_t W_IN[] = {1, 2, 3, 4, 5, 6, 7, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 95, 97, 130};
  const size_t vl = f->vl, maxw = f->dwp_vecs * vl;
  size_t i = 0;
  for (size_t wi = 0; wi < sizeof W_IN / sizeof W_IN[0]; wi++)
    for (ptrdiff_t sw = 1; sw <= 2; sw++)
      for (int rep = 0; rep < 24; rep++, i++) {
        dwp16_case k;
        memset(&k, 0, sizeof k);
        dlc_f32_dwp_args *a = &k.a;
        a->w_in = W_IN[wi];
        a->sw = sw;
        a->kw = irand32(1, 7);
        a->dw = irand32(1, 3);
        a->kh = irand32(1, 3);
        a->dh = irand32(1, 2);
        a->sh = irand32(1, 3);
        a->h_in = irand32(1, 3);
        const ptrdiff_t reach = (a->kw - 1) * a->dw; /* the taps' span past a pixel's first column */
        const int kind = rep % 4;
        /* small tiles most often: the tails of the first vectors */
        size_t nw = irand32(0, 2) ? (size_t)irand32(1, (int)(2 * vl + 2)) : (size_t)irand32(1, (int)maxw);
        if (kind == 2) /* spanning the whole row from left of it */
          nw = (size_t)((a->w_in + reach) / sw + irand32(1, 3));
        if (nw > maxw) nw = maxw;
        k.nw = nw;
        const ptrdiff_t last = ((ptrdiff_t)nw - 1) * sw + reach; /* last column read, from ix0 */
        if (kind == 0) /* at the left border */
          a->ix0 = -irand32(0, (int)(reach + 2 * sw + 1));
        else if (kind == 1) /* the last pixel's last tap around the row's last element */
          a->ix0 = a->w_in - 1 - last + irand32(-2, (int)(2 * sw + 2));
        else if (kind == 2)
          a->ix0 = -irand32(0, (int)reach + 1);
        else /* anywhere, wholly outside sometimes */
          a->ix0 = irand32(-(int)last - 3, (int)a->w_in + 2);
        const size_t rows = h16_rows(f, (nw + vl - 1) / vl);
        k.nr = (size_t)irand32(1, (int)rows);
        /* rows at the top or the bottom of the plane */
        a->iy0 = rep & 4 ? a->h_in - 1 - irand32(0, (int)((a->kh - 1) * a->dh)) - ((ptrdiff_t)k.nr - 1) * a->sh * irand32(0, 1)
                         : -irand32(0, (int)((a->kh - 1) * a->dh));
        h16_vary(&k, i);
        k.at_end = (int)(rep & 1); /* both placements for every border kind */
        check_dwp_f16(f, &k, "borders");
        h16.per_sweep[2]++;
      }
}

/* Exact values: binary16 ties (bias 1 + w x with w x at half of 1's ulp, subnormal halves times
   1/2), negative zero through interior taps, an all-NaN plane, overflow of a sum of 65504s to
   +-inf (no clamp, and a clamp beyond the binary16 range), through both strides. */
static void h16_sweep_specials(const dlc_f32_direct_family *f) {
  const size_t maxw = f->dwp_vecs * f->vl;
  for (ptrdiff_t sw = 1; sw <= 2; sw++)
    for (int at_end = 0; at_end < 2; at_end++) {
      /* 1x1 kernel over one row: y[p] = f16(bias + w x[p*sw]). */
      const ptrdiff_t w_in = (ptrdiff_t)maxw * sw;
      uint16_t *xs = xalloc_slack((size_t)w_in * sizeof(uint16_t));
      for (int variant = 0; variant < 4; variant++) {
        float wt = 1.0f, bias = 0.0f;
        for (ptrdiff_t j = 0; j < w_in; j++) {
          const int m = (int)(j % 1024);
          switch (variant) {
            case 0: /* odd subnormals m 2^-24 times 1/2: ties at (m/2) 2^-24 */
              xs[j] = (uint16_t)(h_sign() | (m | 1)), wt = 0.5f, bias = 0.0f;
              break;
            case 1: /* 1 +- i 2^-11: ties above 1 (units 2^-10) at odd i, exact below it */
              xs[j] = (uint16_t)(h_sign() | dlc_f32_to_f16(ldexpf((float)(j % 16), -11))), wt = 1.0f, bias = 1.0f;
              break;
            case 2: /* [1, 2) times 1/2 on -0: exact halves */
              xs[j] = (uint16_t)(h_sign() | (0x3c00 + m)), wt = 0.5f, bias = -0.0f;
              break;
            default: /* (1, 2, 3) 2^-24 times 3/4: 0.75, 1.5 (a tie), 2.25 units */
              xs[j] = (uint16_t)(1 + j % 3), wt = 0.75f, bias = 0.0f;
              break;
          }
        }
        dwp16_case k;
        memset(&k, 0, sizeof k);
        k.a.h_in = 1, k.a.w_in = w_in, k.a.kh = k.a.kw = 1, k.a.sh = 1, k.a.sw = sw, k.a.dh = k.a.dw = 1;
        k.nw = maxw - (size_t)variant, k.nr = 1, k.mode = H_EXACT, k.clamp = CL_NONE, k.at_end = at_end;
        k.nan_at = k.inf_at = -1;
        k.x_preset = xs, k.w_preset = &wt, k.bias_preset = &bias;
        check_dwp_f16(f, &k, "specials ties");
        h16.per_sweep[3]++;
      }
      free(xs);
      /* Negative zero, NaN planes, overflow: 3x3 and 5x2 kernels over a plane that holds the tile. */
      for (int what = 0; what < 7; what++) {
        dwp16_case k;
        memset(&k, 0, sizeof k);
        dlc_f32_dwp_args *a = &k.a;
        a->kh = what & 1 ? 5 : 3, a->kw = what & 1 ? 2 : 3, a->sh = 1 + what % 2, a->sw = sw, a->dh = 1, a->dw = 1 + what % 2;
        /* partial widths within the family's rows (Neon's 8 vectors of 4 hold 32 pixels) */
        k.nw = what < 3 ? maxw : (size_t)(17 + what * 5) <= maxw ? (size_t)(17 + what * 5) : maxw - (size_t)what;
        k.nr = h16_rows(f, (k.nw + f->vl - 1) / f->vl);
        a->h_in = (ptrdiff_t)k.nr * a->sh + a->kh * a->dh + 2, a->w_in = (ptrdiff_t)k.nw * sw + a->kw * a->dw + 3;
        a->iy0 = what == 2 ? -1 : 0, a->ix0 = what == 2 ? -1 : 0;
        k.nan_at = k.inf_at = -1;
        k.at_end = at_end;
        static const int modes[7] = {H_NEGZERO, H_NEGZERO, H_NANPLANE, H_NANPLANE, H_BIG, H_BIG, H_BIG};
        static const int clamps[7] = {CL_NONE, CL_NARROW, CL_RELU6, CL_NONE, CL_NONE, CL_WIDE, CL_NARROW};
        k.mode = modes[what], k.clamp = clamps[what];
        const long infs = h16.inf_px, negz = h16.strict_negzero_px, nans = h16.nan_px;
        check_dwp_f16(f, &k, "specials");
        h16.per_sweep[3]++;
        if (k.mode == H_NEGZERO && what == 0 && h16.strict_negzero_px == negz) fail_msg("%s: no interior -0 checked", h16_what);
        if (k.mode == H_NANPLANE && h16.nan_px == nans) fail_msg("%s: no NaN checked", h16_what);
        if (k.mode == H_BIG && k.clamp != CL_NARROW && h16.inf_px == infs) fail_msg("%s: no inf checked", h16_what);
      }
    }
}

static void test_dwp_f16_kernels(void **state) {
  (void)state;
  memset(&h16, 0, sizeof h16);
  int families = 0;
  /* Where this machine runs AVX-512 its direct family has the binary16 variant. */
  if (dlc_kernels_for(DLCONV_ISA_AVX512)) {
    assert_non_null(family_of(DLCONV_ISA_AVX512));
    assert_non_null(family_of(DLCONV_ISA_AVX512)->dwp_f16);
  }
  const dlc_isa_kernels *kt;
  for (size_t i = 0; (kt = kernel_table(i)); i++) {
    const dlc_f32_direct_family *f = kt->direct;
    if (!f || !f->dwp_f16) continue;
    assert_non_null(f->dwp); /* the same tile shapes: dwp_vecs, dwp_rows */
    assert_true(f->dwp_vecs >= 1 && f->dwp_vecs <= DLC_DIRECT_MAX_DWP_VECS);
    families++;
    h16_sweep_specials(f);
    h16_sweep_tiles(f);
    h16_sweep_layers(f);
    h16_sweep_borders(f);
  }
  if (families) { /* the value sets reached what they are for */
    assert_true(h16.nan_px > 0 && h16.inf_px > 0 && h16.strict_negzero_px > 0 && h16.subnormal_px > 0);
    assert_true(h16.tie_px > 0 && h16.clamped_px > 0);
  }
  printf("dwp_f16: %d families, %ld cases (%ld tiles, %ld layers, %ld borders, %ld specials; %ld stride 2, %ld against "
         "the end guard), %ld pixels (%ld exact: %ld NaN, %ld inf, %ld -0, %ld subnormal, %ld ties; %ld clamped)\n",
         families, h16.cases, h16.per_sweep[0], h16.per_sweep[1], h16.per_sweep[2], h16.per_sweep[3], h16.stride2_cases,
         h16.guard_end_cases, h16.pixels, h16.exact_px, h16.nan_px, h16.inf_px, h16.strict_negzero_px, h16.subnormal_px,
         h16.tie_px, h16.clamped_px);
}

/* ---------------------------------------------------------------------------------------------
 * Driver level, through the public API. */

typedef layer_shape api_case;

static const api_case API_CASES[] = {
    /* n  cin h   w  cout kh kw sh sw dh dw pt pb pl pr g */
    {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},          /* tiny */
    {1, 5, 5, 9, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},          /* odd 3x3 */
    {1, 16, 8, 8, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},        /* ResNet-like */
    {1, 3, 13, 15, 17, 7, 7, 2, 2, 1, 1, 3, 3, 3, 3, 1},       /* first layer, stride 2 */
    {2, 4, 11, 12, 9, 3, 3, 3, 3, 2, 2, 0, 2, 1, 3, 1},        /* stride 3 dilation 2 asym pad */
    {1, 6, 9, 10, 5, 3, 2, 1, 2, 3, 3, 3, 1, 2, 0, 1},         /* dilation 3 */
    {1, 6, 7, 7, 10, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2},         /* groups 2 */
    {1, 12, 6, 9, 80, 3, 3, 2, 1, 1, 2, 1, 0, 2, 2, 4},        /* groups 4, cout_g 20 */
    {1, 19, 10, 11, 19, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 19},     /* depthwise */
    {1, 5, 9, 9, 10, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 5},         /* depthwise multiplier 2 */
    {1, 7, 6, 8, 21, 3, 3, 1, 2, 1, 1, 1, 0, 0, 1, 7},         /* depthwise multiplier 3 */
    {2, 33, 7, 45, 33, 3, 3, 3, 1, 2, 2, 2, 2, 2, 2, 33},      /* depthwise stride 3 dil 2 */
    {1, 3, 4, 150, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},        /* depthwise wide rows */
    {3, 8, 5, 6, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},         /* batch 3 */
    {1, 4, 3, 3, 6, 3, 3, 1, 1, 1, 1, 4, 4, 4, 4, 1},          /* pad > kernel: bias-only pixels */
    {1, 3, 3, 37, 40, 1, 5, 1, 1, 1, 1, 0, 0, 2, 2, 1},        /* wide row, 1x5 */
    {1, 1, 6, 7, 24, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},         /* cin 1: multiplier 24 */
    {1, 20, 5, 5, 33, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1},        /* 1x1 stride 2 */
    {1, 9, 1, 1, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},         /* 1x1 image, 3x3 pad 1 */
    {1, 7, 3, 3, 5, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 1},          /* kernel as big as the padded input */
    {1, 24, 14, 30, 40, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},      /* several pixel tiles per row */
    {1, 8, 6, 20, 8, 3, 3, 1, 1, 1, 1, 0, 0, 9, 9, 8},         /* depthwise, wide left/right padding */
    /* depthwise on the planes of the family's dwf kernels (where it has them), channel runs across
       images */
    {2, 37, 7, 7, 37, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 37},       /* 7 x 7, 3x3, batch 2 */
    {1, 18, 7, 7, 18, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 18},       /* 7 x 7, 5x5 */
    {3, 17, 14, 14, 17, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 17},     /* 14 x 14, 3x3, batch 3 */
    {1, 21, 14, 14, 21, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2, 21},     /* 14 x 14, 5x5 */
    /* pointwise layers run as one row of all their pixels (tiles across row ends) */
    {2, 20, 7, 7, 40, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},        /* 7 x 7, batch 2 */
    {1, 30, 5, 9, 70, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},        /* 45 pixels, a channel edge */
    {1, 12, 6, 5, 24, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 2},        /* groups 2 */
    {4, 9, 3, 11, 64, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},        /* enough channel tiles for threads */
    {4, 9, 3, 11, 64, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},        /* the same at the next variant */
};
#define N_API (sizeof API_CASES / sizeof API_CASES[0])

static void run_api_case(const api_case *c, dlconv_layout lay, dlconv_isa isa, int threads, int clamp, int bias) {
  dlconv_conv2d_desc d;
  const layer_sizes z = layer_desc(&d, c, lay, clamp ? -0.3f : -INFINITY, clamp ? 0.5f : INFINITY);
  const size_t nx = z.x, nwt = z.w, ny = z.y;
  float *x = frand_buf(nx), *w = frand_buf(nwt), *b = frand_buf((size_t)c->c_out);
  float *y = sentinel_buf(ny + GUARD);
  double *ref = malloc(ny * sizeof(double)), *mag = malloc(ny * sizeof(double));
  assert_non_null(ref);
  assert_non_null(mag);
  oracle_conv2d(&d, x, w, bias ? b : NULL, ref, mag);

  const dlconv_options opt = forced_options(DLCONV_ALGO_DIRECT, isa, threads);
  dlconv_plan *plan = NULL;
  dlconv_status st = dlconv_plan_conv2d(&plan, &d, w, bias ? b : NULL, NULL, &opt);
  if (st != DLCONV_OK) fail_msg("plan failed on isa %d: %s (%s)", (int)isa, dlconv_status_string(st), dlconv_last_error());
  dlconv_plan_info info;
  assert_int_equal(dlconv_plan_query(plan, &info), DLCONV_OK);
  assert_int_equal(info.algo, DLCONV_ALGO_DIRECT);
  assert_int_equal(info.isa, isa);
  void *ws = info.workspace_bytes ? xalloc_slack(info.workspace_bytes) : NULL;
  /* The caller's weights may be freed after planning. */
  for (size_t i = 0; i < nwt; i++) w[i] = NAN;
  st = dlconv_execute(plan, x, y, ws);
  assert_int_equal(st, DLCONV_OK);
  const int kred = c->c_in / c->groups * c->kh * c->kw;
  for (size_t i = 0; i < ny; i++)
    if (!close_direct(y[i], ref[i], mag[i], (size_t)kred))
      fail_msg("%s isa=%d %s case cin=%d %dx%d cout=%d k=%dx%d s=%d,%d d=%d,%d pad=%d,%d,%d,%d g=%d n=%d threads=%d "
               "clamp=%d bias=%d: y[%zu] = %.9g, want %.9g",
               info.kernel, (int)isa, lay == DLCONV_NCHW ? "nchw" : "nhwc", c->c_in, c->h, c->w, c->c_out, c->kh, c->kw,
               c->sh, c->sw, c->dh, c->dw, c->pt, c->pb, c->pl, c->pr, c->groups, c->n, threads, clamp, bias, i, y[i],
               ref[i]);
  for (size_t i = ny; i < ny + GUARD; i++)
    if (y[i] != SENTINEL) fail_msg("%s: guard y[%zu] overwritten", info.kernel, i);
  dlconv_plan_destroy(plan);
  free(ws), free(x), free(w), free(b), free(y), free(ref), free(mag);
}

static void test_api_shapes(void **state) {
  (void)state;
  const dlc_isa_kernels *kt;
  for (size_t i = 0; (kt = kernel_table(i)); i++) {
    const dlconv_isa isa = kt->isa;
    if (!kt->direct) continue;
    for (size_t k = 0; k < N_API; k++)
      for (int lay = 0; lay < 2; lay++) {
        const int variant = (int)(k + (size_t)lay);
        run_api_case(&API_CASES[k], (dlconv_layout)lay, isa, 1 + variant % 3, variant % 2, variant % 4 != 3);
      }
  }
}

/* Random shapes: every combination the descriptor allows, small enough to check exhaustively. */
static void test_api_random(void **state) {
  (void)state;
  const dlc_isa_kernels *kt;
  for (size_t i = 0; (kt = kernel_table(i)); i++) {
    const dlconv_isa isa = kt->isa;
    if (!kt->direct) continue;
    for (int rep = 0; rep < 60; rep++) {
      api_case c;
      c.n = irand32(1, 2);
      const int kind = irand32(0, 2); /* dense, grouped, depthwise */
      c.groups = kind == 0 ? 1 : irand32(2, 5);
      const int cin_g = kind == 2 ? 1 : irand32(1, 9), cout_g = kind == 2 ? irand32(1, 3) : irand32(1, 37);
      c.c_in = cin_g * c.groups;
      c.c_out = cout_g * c.groups;
      c.kh = irand32(1, 4);
      c.kw = irand32(1, 5);
      c.sh = irand32(1, 3);
      c.sw = irand32(1, 3);
      c.dh = irand32(1, 3);
      c.dw = irand32(1, 3);
      c.pt = irand32(0, 3);
      c.pb = irand32(0, 3);
      c.pl = irand32(0, 4);
      c.pr = irand32(0, 4);
      c.h = irand32(1, 9);
      c.w = irand32(1, 33);
      if (c.h + c.pt + c.pb < c.dh * (c.kh - 1) + 1) c.h = c.dh * (c.kh - 1) + 1;
      if (c.w + c.pl + c.pr < c.dw * (c.kw - 1) + 1) c.w = c.dw * (c.kw - 1) + 1;
      run_api_case(&c, (dlconv_layout)(rep % 2), isa, 1 + rep % 2, rep % 3 == 0, rep % 5 != 0);
    }
  }
}

/* A NaN in x must reach y through the clamp, on every path. */
static void test_api_nan(void **state) {
  (void)state;
  const api_case cases[] = {
      {1, 4, 5, 6, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {1, 6, 5, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 6},
  };
  const dlc_isa_kernels *kt;
  for (size_t i = 0; (kt = kernel_table(i)); i++) {
    const dlconv_isa isa = kt->isa;
    if (!kt->direct) continue;
    for (size_t k = 0; k < 2; k++)
      for (int lay = 0; lay < 2; lay++) {
        const api_case *c = &cases[k];
        dlconv_conv2d_desc d;
        dlconv_conv2d_desc_init(&d, c->n, c->c_in, c->h, c->w, c->c_out, c->kh, c->kw);
        d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
        d.groups = c->groups;
        d.layout = (dlconv_layout)lay;
        d.out_min = 0.0f;
        d.out_max = 6.0f;
        const size_t nx = (size_t)c->c_in * c->h * c->w, nwt = (size_t)c->c_out * (c->c_in / c->groups) * 9;
        const size_t ny = (size_t)c->c_out * c->h * c->w;
        float *x = frand_buf(nx), *w = frand_buf(nwt), *y = sentinel_buf(ny);
        for (size_t j = 0; j < nx; j++) x[j] = NAN; /* every output sees a NaN */
        const dlconv_options opt = forced_options(DLCONV_ALGO_DIRECT, isa, 1);
        dlconv_plan *plan = NULL;
        assert_int_equal(dlconv_plan_conv2d(&plan, &d, w, NULL, NULL, &opt), DLCONV_OK);
        assert_int_equal(dlconv_execute(plan, x, y, NULL), DLCONV_OK);
        for (size_t j = 0; j < ny; j++)
          if (!isnan(y[j])) fail_msg("isa %d case %zu layout %d: y[%zu] = %g, NaN lost", (int)isa, k, lay, j, y[j]);
        dlconv_plan_destroy(plan);
        free(x);
        free(w);
        free(y);
      }
  }
}

/* A forced ISA without direct kernels is refused, never silently replaced. */
static void test_api_unsupported(void **state) {
  (void)state;
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 1, 4, 5, 5, 4, 3, 3);
  float w[4 * 4 * 9] = {0};
  const dlc_isa_kernels *kt;
  for (size_t i = 0; (kt = kernel_table(i)); i++) {
    const dlconv_isa isa = kt->isa;
    if (kt->direct) continue;
    const dlconv_options opt = forced_options(DLCONV_ALGO_DIRECT, isa, 0);
    dlconv_plan *plan = (dlconv_plan *)&d;
    assert_int_equal(dlconv_plan_conv2d(&plan, &d, w, NULL, NULL, &opt), DLCONV_ERR_UNSUPPORTED);
    assert_null(plan);
  }
}

/* to_channel_last: every family that has it, channel counts and row widths around multiples of the
   vector (1..19 x 1..19, plus 64 x 37), a plane stride wider than the row; exact values, nothing
   written outside the ci * w floats. */
static void test_to_channel_last(void **state) {
  (void)state;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    const dlc_f32_direct_family *f = kt->direct;
    if (!f || !f->to_channel_last) continue;
    for (size_t ci = 1; ci <= 64; ci = ci < 19 ? ci + 1 : (ci == 19 ? 64 : 65))
      for (size_t w = 1; w <= 37; w = w < 19 ? w + 1 : (w == 19 ? 37 : 38)) {
        const size_t plane = w + 5, n = ci * w;
        float *src = frand_buf(ci * plane);
        float *buf = sentinel_buf(n + 2 * GUARD);
        f->to_channel_last(src, plane, w, ci, buf + GUARD);
        for (size_t i = 0; i < n + 2 * GUARD; i++) {
          const ptrdiff_t t = (ptrdiff_t)i - GUARD;
          const float want = t >= 0 && (size_t)t < n ? src[((size_t)t % ci) * plane + (size_t)t / ci] : SENTINEL;
          if (!(buf[i] == want))
            fail_msg("%s to_channel_last ci=%zu w=%zu: float %td is %g, want %g", f->name, ci, w, t, (double)buf[i],
                     (double)want);
        }
        free(src);
        free(buf);
      }
  }
}

/* to_channel_first (the NCHW conv's staged output back to planes): every family that has it, the
   same channel counts and run lengths, a pixel stride ld of ci or more and a plane stride wider than
   the run; exact values, nothing written outside the ci runs of w floats. */
static void test_to_channel_first(void **state) {
  (void)state;
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    const dlc_f32_direct_family *f = kt->direct;
    if (!f || !f->to_channel_first) continue;
    for (size_t ci = 1; ci <= 64; ci = ci < 19 ? ci + 1 : (ci == 19 ? 64 : 65))
      for (size_t w = 1; w <= 37; w = w < 19 ? w + 1 : (w == 19 ? 37 : 38)) {
        const size_t ld = ci + (ci & 3), plane = w + 5, n = ci * plane;
        float *src = frand_buf(w * ld);
        float *buf = sentinel_buf(n + 2 * GUARD);
        f->to_channel_first(src, ld, w, ci, buf + GUARD, plane);
        for (size_t i = 0; i < n + 2 * GUARD; i++) {
          const ptrdiff_t t = (ptrdiff_t)i - GUARD;
          const int in = t >= 0 && (size_t)t < n && (size_t)t % plane < w;
          const float want = in ? src[((size_t)t % plane) * ld + (size_t)t / plane] : SENTINEL;
          if (!(buf[i] == want))
            fail_msg("%s to_channel_first ci=%zu w=%zu: float %td is %g, want %g", f->name, ci, w, t, (double)buf[i],
                     (double)want);
        }
        free(src);
        free(buf);
        tested++;
      }
  }
  assert_true(tested > 0);
}

/* to_channel_last_f16: the same sweep from halves (any bit pattern: subnormals, infinities and
   NaNs included), widened exactly; plane == w on odd widths, so the last row ends at the end of
   the allocation and an over-read shows under ASan. */
static void test_to_channel_last_f16(void **state) {
  (void)state;
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    const dlc_f32_direct_family *f = kt->direct;
    if (!f || !f->to_channel_last_f16) continue;
    for (size_t ci = 1; ci <= 64; ci = ci < 19 ? ci + 1 : (ci == 19 ? 64 : 65))
      for (size_t w = 1; w <= 37; w = w < 19 ? w + 1 : (w == 19 ? 37 : 38)) {
        const size_t plane = w & 1 ? w : w + 5, n = ci * w;
        uint16_t *src = malloc(ci * plane * sizeof(uint16_t));
        assert_non_null(src);
        for (size_t i = 0; i < ci * plane; i++) src[i] = (uint16_t)next_u32();
        float *buf = sentinel_buf(n + 2 * GUARD);
        f->to_channel_last_f16(src, plane, w, ci, buf + GUARD);
        for (size_t i = 0; i < n + 2 * GUARD; i++) {
          const ptrdiff_t t = (ptrdiff_t)i - GUARD;
          const float want =
              t >= 0 && (size_t)t < n ? (float)half_value(src[((size_t)t % ci) * plane + (size_t)t / ci]) : SENTINEL;
          if (!(buf[i] == want || (isnan(want) && isnan(buf[i]))))
            fail_msg("%s to_channel_last_f16 ci=%zu w=%zu: float %td is %g, want %g", f->name, ci, w, t,
                     (double)buf[i], (double)want);
        }
        free(src);
        free(buf);
        tested++;
      }
  }
  assert_true(tested > 0);
}

int main(void) {
  rng_state = 0x243F6A8885A308D3ull;
  return RUN_TESTS(test_conv_kernels, test_dwc_kernels, test_dwp_kernels, test_dwf_kernels, test_dwp_layer_shapes, test_dwp_f16_kernels,
                   test_api_shapes, test_api_random, test_api_nan, test_api_unsupported, test_to_channel_last,
                   test_to_channel_last_f16, test_to_channel_first);
}
