/* test_ukernel_direct.c - the direct micro-kernels (conv, dwc, dwp) of every ISA this machine runs,
 * at every tile edge (pixel count, channel count, tap rectangle, accumulate/store modes, layouts),
 * and the direct driver through the public API with every ISA forced, both against naive
 * double-precision references written here. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/kernels.h"
#include "dlconv.h"

#define GUARD 37
static const float SENTINEL = -7777.0f;

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint32_t next_u32(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 32);
}
static float frand(void) { return (float)(next_u32() >> 8) / 8388608.0f - 1.0f; }
static int irand(int lo, int hi) { return lo + (int)(next_u32() % (uint32_t)(hi - lo + 1)); }

static double clampd(double v, double lo, double hi) {
  v = v < lo ? lo : v;
  return v > hi ? hi : v;
}

/* got agrees with ref within the float rounding of a k-term sum whose terms have magnitude sum mag. */
static int close_enough(float got, double ref, double mag, size_t k) {
  if (isnan(ref)) return isnan(got);
  return fabs((double)got - ref) <= 3e-7 * (double)(k + 2) * mag + 1e-30;
}

static void *xalloc(size_t bytes) {
  void *p = aligned_alloc(64, (bytes + 64) / 64 * 64);
  assert_non_null(p);
  return p;
}
static float *frand_buf(size_t n) {
  float *b = xalloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++) b[i] = frand();
  return b;
}
static float *sentinel_buf(size_t n) {
  float *b = xalloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++) b[i] = SENTINEL;
  return b;
}

static const dlconv_isa all_isas[] = {DLCONV_ISA_GENERIC, DLCONV_ISA_AVX2, DLCONV_ISA_AVX512, DLCONV_ISA_NEON};
#define N_ISAS (sizeof all_isas / sizeof all_isas[0])

static const dlc_f32_direct_family *family_of(dlconv_isa isa) {
  const dlc_isa_kernels *k = dlc_kernels_for(isa);
  return k ? k->direct : NULL;
}

/* ---------------------------------------------------------------------------------------------
 * Micro-kernel level. */

/* Tap rectangles (nky, nkx), including empty ones (the driver's init / flush calls). */
static const int TAPS[][2] = {{1, 1}, {2, 3}, {3, 2}, {0, 2}, {2, 0}, {1, 3}};
#define N_TAPS (sizeof TAPS / sizeof TAPS[0])

/* binary16 -> float, written here from the format's definition (the oracle's own). */
static float half_to_float(uint16_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const double mag = e == 31 ? (m ? NAN : INFINITY) : e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
  return (float)((h & 0x8000) ? -mag : mag);
}
static const uint16_t SENTINEL_H = 0xD7D7; /* -125.4375 */

typedef struct kcase {
  size_t nv, nw, nc, nky, nkx, cin;
  int nchw_x, nchw_y, acc_in, acc_out, clamp, nan;
  int f16;            /* conv of an f16_out family, storing into yh (acc_out unset) */
  size_t m;           /* dwc: channel multiplier; 0 for conv */
  size_t tile;        /* dwc: channel tile index */
} kcase;

/* Builds a random problem for conv (m == 0) or dwc (m >= 1), runs fn, checks against doubles. */
static void run_kernel_case(const dlc_f32_direct_family *f, dlc_f32_direct_fn fn, const kcase *k, const char *what) {
  const size_t vl = f->vl, lanes = k->nv * vl;
  /* Strides 1, 2 and 3 for every pixel count: kernels specialise the pixel stride 1 and 2. */
  const size_t sw = 1 + (k->nw + (size_t)k->nchw_y + 2 * (size_t)k->acc_in) % 3, dwx = 1 + k->nkx % 2, dh = 1 + k->nky % 2;
  const size_t nky = k->nky, nkx = k->nkx;
  dlc_f32_direct_args a;
  memset(&a, 0, sizeof a);
  size_t C, cin, c_out = 0, oc0 = 0, nc = k->nc;
  int32_t perm[64];
  if (k->m) { /* dwc: channel tile k->tile of a layer with c_out = c_in * m */
    const size_t m = k->m;
    oc0 = k->tile * lanes;
    c_out = oc0 + nc + (nc == lanes ? (size_t)irand(0, 5) * m : 0);
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
    saved = xalloc(nacc * sizeof(float));
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
    yh = xalloc(ny * sizeof(uint16_t));
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
        got = k->f16 ? half_to_float(yh[at]) : y[at];
        touched[at] = 1;
      }
      /* binary16 output: the fp32 sum's error, then one rounding to 11 significant bits (half an
         ulp: 2^-11 relative, 2^-25 among the subnormals) */
      const int ok = k->f16 ? isnan(acc) ? isnan(got)
                                        : fabs((double)got - acc) <= 3e-7 * (double)(nky * nkx * cin + 2) * mag +
                                                                         ldexp(fabs(acc), -11) + ldexp(1.0, -25)
                            : close_enough(got, acc, mag, nky * nkx * cin);
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
  for (size_t i = 0; i < N_ISAS; i++) {
    const dlc_f32_direct_family *f = family_of(all_isas[i]);
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
            kcase k = {.nv = nv, .nw = nw, .nc = ncs[ci], .cin = (size_t)irand(1, 6)};
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
  for (size_t i = 0; i < N_ISAS; i++) {
    const dlc_f32_direct_family *f = family_of(all_isas[i]);
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
  a.y_row = (ptrdiff_t)nw + irand(0, 3);
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
    if (!close_enough(y[i], acc, mag, (size_t)(a.kh * a.kw)))
      fail_msg("%s dwp nw=%zu nr=%zu k=%tdx%td s=%td,%td d=%td,%td in=%tdx%td at=(%td,%td): row %zu px %zu = %.9g, want %.9g",
               f->dw_name, nw, nr, a.kh, a.kw, a.sh, a.sw, a.dh, a.dw, a.h_in, a.w_in, a.iy0, a.ix0, r, p, y[i], acc);
  }
  free(x);
  free(w);
  free(y);
}

static void run_dwp_case(const dlc_f32_direct_family *f, size_t nw, size_t nr, int clamp) {
  dlc_f32_dwp_args a;
  a.kh = irand(1, 4);
  a.kw = irand(1, 5);
  a.sh = irand(1, 3);
  a.sw = irand(1, 3);
  a.dh = irand(1, 2);
  a.dw = irand(1, 3);
  a.h_in = irand(1, 12);
  a.w_in = irand(1, (int)(nw * (size_t)a.sw) + 6);
  a.iy0 = irand(-3, (int)a.h_in);
  a.ix0 = irand(-4, 3);
  check_dwp(f, a, nw, nr, clamp);
}

/* The shapes of real layers (kernel 3, 5, 7, stride 1 or 2 both ways, no row dilation), which
   kernels may specialise: rows fully inside the input and clipped at the top or bottom, tap
   columns fully inside the row and clipped at either end (a padded row's own width, or a wider
   row with the tile in its middle), widths around multiples of the vector. */
static void test_dwp_layer_shapes(void **state) {
  (void)state;
  int tested = 0;
  for (size_t i = 0; i < N_ISAS; i++) {
    const dlc_f32_direct_family *f = family_of(all_isas[i]);
    if (!f || !f->dwp) continue;
    const size_t vl = f->vl, maxw = f->dwp_vecs * vl;
    for (ptrdiff_t k = 3; k <= 7; k += 2)
      for (ptrdiff_t s = 1; s <= 2; s++)
        for (size_t nw = 1; nw <= maxw; nw += nw % vl == vl - 1 || nw % vl == 0 || nw % vl == 1 ? 1 : vl - 3) {
          const size_t npv = (nw + vl - 1) / vl, rows = f->dwp_rows[npv - 1];
          for (int rep = 0; rep < 8; rep++) {
            dlc_f32_dwp_args a;
            a.kh = k;
            a.kw = rep % 4 == 3 ? irand(1, (int)k + 1) : k;
            a.sh = a.sw = s;
            a.dh = 1;
            a.dw = rep % 4 == 2 ? 2 : 1;
            const ptrdiff_t pad = (a.kw - 1) * a.dw / 2, span = ((ptrdiff_t)nw - 1) * s + (a.kw - 1) * a.dw + 1;
            /* rep 0, 1: the row the tile spans with padding 'pad' (a whole padded row); else a wider row
               with the tile at the left, middle or right. */
            a.w_in = rep < 2 ? span - 2 * pad + irand(0, (int)s - 1) : span + irand(0, 20);
            if (a.w_in < 1) a.w_in = 1;
            a.ix0 = rep < 2 ? -pad : irand(-(int)pad, (int)(a.w_in - span + pad));
            const size_t nr = rep < 4 ? rows : (size_t)irand(1, (int)rows);
            a.h_in = irand(1, (int)((ptrdiff_t)nr * s + k + 4));
            a.iy0 = irand(-(int)k, (int)a.h_in - 1);
            if (rep == 1) { /* all rows inside */
              a.h_in = (ptrdiff_t)nr * s + k + irand(0, 3);
              a.iy0 = irand(0, (int)(a.h_in - ((ptrdiff_t)nr - 1) * s - k));
            }
            check_dwp(f, a, nw, nr, rep % 3 == 0);
            tested++;
          }
        }
  }
  assert_true(tested > 0);
}

static void test_dwp_kernels(void **state) {
  (void)state;
  int tested = 0;
  for (size_t i = 0; i < N_ISAS; i++) {
    const dlc_f32_direct_family *f = family_of(all_isas[i]);
    if (!f || !f->dwp) continue;
    assert_true(f->dwp_vecs >= 1 && f->dwp_vecs <= DLC_DIRECT_MAX_DWP_VECS);
    for (size_t npv = 1; npv <= f->dwp_vecs; npv++) {
      const size_t vl = f->vl, rows = f->dwp_rows[npv - 1];
      assert_true(rows >= 1);
      const size_t nws[4] = {(npv - 1) * vl + 1, (npv - 1) * vl + (size_t)irand(1, (int)vl), npv * vl - 1, npv * vl};
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
 * Driver level, through the public API. */

typedef struct api_case {
  int n, c_in, h, w, c_out, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, groups;
} api_case;

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
};
#define N_API (sizeof API_CASES / sizeof API_CASES[0])

static void reference(const api_case *c, dlconv_layout lay, int ho, int wo, const float *x, const float *w,
                      const float *b, float lo, float hi, double *ref, double *mag) {
  const int cin_g = c->c_in / c->groups, cout_g = c->c_out / c->groups;
  for (int n = 0; n < c->n; n++)
    for (int oc = 0; oc < c->c_out; oc++)
      for (int oy = 0; oy < ho; oy++)
        for (int ox = 0; ox < wo; ox++) {
          const int g = oc / cout_g;
          double acc = b ? b[oc] : 0.0, m = fabs(acc);
          for (int icg = 0; icg < cin_g; icg++)
            for (int ky = 0; ky < c->kh; ky++)
              for (int kx = 0; kx < c->kw; kx++) {
                const int iy = oy * c->sh - c->pt + ky * c->dh, ix = ox * c->sw - c->pl + kx * c->dw;
                if (iy < 0 || iy >= c->h || ix < 0 || ix >= c->w) continue;
                const int ic = g * cin_g + icg;
                const size_t xi = lay == DLCONV_NCHW ? (((size_t)n * c->c_in + ic) * c->h + iy) * c->w + ix
                                                     : (((size_t)n * c->h + iy) * c->w + ix) * c->c_in + ic;
                const double t = (double)w[(((size_t)oc * cin_g + icg) * c->kh + ky) * c->kw + kx] * x[xi];
                acc += t;
                m += fabs(t);
              }
          const size_t yi = lay == DLCONV_NCHW ? (((size_t)n * c->c_out + oc) * ho + oy) * wo + ox
                                               : (((size_t)n * ho + oy) * wo + ox) * c->c_out + oc;
          ref[yi] = clampd(acc, lo, hi);
          mag[yi] = m;
        }
}

static void run_api_case(const api_case *c, dlconv_layout lay, dlconv_isa isa, int threads, int clamp, int bias) {
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, c->n, c->c_in, c->h, c->w, c->c_out, c->kh, c->kw);
  d.stride_h = c->sh;
  d.stride_w = c->sw;
  d.dilation_h = c->dh;
  d.dilation_w = c->dw;
  d.pad_top = c->pt;
  d.pad_bottom = c->pb;
  d.pad_left = c->pl;
  d.pad_right = c->pr;
  d.groups = c->groups;
  d.layout = lay;
  d.out_min = clamp ? -0.3f : -INFINITY;
  d.out_max = clamp ? 0.5f : INFINITY;
  int32_t ho, wo;
  assert_int_equal(dlconv_conv2d_output_shape(&d, &ho, &wo), DLCONV_OK);
  const size_t nx = (size_t)c->n * c->c_in * c->h * c->w;
  const size_t nwt = (size_t)c->c_out * (c->c_in / c->groups) * c->kh * c->kw;
  const size_t ny = (size_t)c->n * c->c_out * ho * wo;
  float *x = frand_buf(nx), *w = frand_buf(nwt), *b = frand_buf((size_t)c->c_out);
  float *y = sentinel_buf(ny + GUARD);
  double *ref = malloc(ny * sizeof(double)), *mag = malloc(ny * sizeof(double));
  assert_non_null(ref);
  assert_non_null(mag);
  reference(c, lay, ho, wo, x, w, bias ? b : NULL, d.out_min, d.out_max, ref, mag);

  dlconv_options opt;
  dlconv_options_init(&opt);
  opt.algo = DLCONV_ALGO_DIRECT;
  opt.isa = isa;
  opt.num_threads = threads;
  dlconv_plan *plan = NULL;
  dlconv_status st = dlconv_plan_conv2d(&plan, &d, w, bias ? b : NULL, NULL, &opt);
  if (st != DLCONV_OK) fail_msg("plan failed on isa %d: %s (%s)", (int)isa, dlconv_status_string(st), dlconv_last_error());
  dlconv_plan_info info;
  assert_int_equal(dlconv_plan_query(plan, &info), DLCONV_OK);
  assert_int_equal(info.algo, DLCONV_ALGO_DIRECT);
  assert_int_equal(info.isa, isa);
  void *ws = info.workspace_bytes ? xalloc(info.workspace_bytes) : NULL;
  /* The caller's weights may be freed after planning. */
  for (size_t i = 0; i < nwt; i++) w[i] = NAN;
  st = dlconv_execute(plan, x, y, ws);
  assert_int_equal(st, DLCONV_OK);
  const int kred = c->c_in / c->groups * c->kh * c->kw;
  for (size_t i = 0; i < ny; i++)
    if (!close_enough(y[i], ref[i], mag[i], (size_t)kred))
      fail_msg("%s isa=%d %s case cin=%d %dx%d cout=%d k=%dx%d s=%d,%d d=%d,%d pad=%d,%d,%d,%d g=%d n=%d threads=%d "
               "clamp=%d bias=%d: y[%zu] = %.9g, want %.9g",
               info.kernel, (int)isa, lay == DLCONV_NCHW ? "nchw" : "nhwc", c->c_in, c->h, c->w, c->c_out, c->kh, c->kw,
               c->sh, c->sw, c->dh, c->dw, c->pt, c->pb, c->pl, c->pr, c->groups, c->n, threads, clamp, bias, i, y[i],
               ref[i]);
  for (size_t i = ny; i < ny + GUARD; i++)
    if (y[i] != SENTINEL) fail_msg("%s: guard y[%zu] overwritten", info.kernel, i);
  dlconv_plan_destroy(plan);
  free(ws);
  free(x);
  free(w);
  free(b);
  free(y);
  free(ref);
  free(mag);
}

static void test_api_shapes(void **state) {
  (void)state;
  for (size_t i = 0; i < N_ISAS; i++) {
    const dlconv_isa isa = all_isas[i];
    if (dlconv_isa_available(isa) != 1 || !family_of(isa)) continue;
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
  for (size_t i = 0; i < N_ISAS; i++) {
    const dlconv_isa isa = all_isas[i];
    if (dlconv_isa_available(isa) != 1 || !family_of(isa)) continue;
    for (int rep = 0; rep < 60; rep++) {
      api_case c;
      c.n = irand(1, 2);
      const int kind = irand(0, 2); /* dense, grouped, depthwise */
      c.groups = kind == 0 ? 1 : irand(2, 5);
      const int cin_g = kind == 2 ? 1 : irand(1, 9), cout_g = kind == 2 ? irand(1, 3) : irand(1, 37);
      c.c_in = cin_g * c.groups;
      c.c_out = cout_g * c.groups;
      c.kh = irand(1, 4);
      c.kw = irand(1, 5);
      c.sh = irand(1, 3);
      c.sw = irand(1, 3);
      c.dh = irand(1, 3);
      c.dw = irand(1, 3);
      c.pt = irand(0, 3);
      c.pb = irand(0, 3);
      c.pl = irand(0, 4);
      c.pr = irand(0, 4);
      c.h = irand(1, 9);
      c.w = irand(1, 33);
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
  for (size_t i = 0; i < N_ISAS; i++) {
    const dlconv_isa isa = all_isas[i];
    if (dlconv_isa_available(isa) != 1 || !family_of(isa)) continue;
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
        dlconv_options opt;
        dlconv_options_init(&opt);
        opt.algo = DLCONV_ALGO_DIRECT;
        opt.isa = isa;
        opt.num_threads = 1;
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
  for (size_t i = 0; i < N_ISAS; i++) {
    const dlconv_isa isa = all_isas[i];
    if (dlconv_isa_available(isa) != 1 || family_of(isa)) continue;
    dlconv_options opt;
    dlconv_options_init(&opt);
    opt.algo = DLCONV_ALGO_DIRECT;
    opt.isa = isa;
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
  for (size_t s = 0; s < N_ISAS; s++) {
    const dlc_f32_direct_family *f = family_of(all_isas[s]);
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

/* to_channel_last_f16: the same sweep from halves (any bit pattern: subnormals, infinities and
   NaNs included), widened exactly; plane == w on odd widths, so the last row ends at the end of
   the allocation and an over-read shows under ASan. */
static void test_to_channel_last_f16(void **state) {
  (void)state;
  int tested = 0;
  for (size_t s = 0; s < N_ISAS; s++) {
    const dlc_f32_direct_family *f = family_of(all_isas[s]);
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
              t >= 0 && (size_t)t < n ? half_to_float(src[((size_t)t % ci) * plane + (size_t)t / ci]) : SENTINEL;
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
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_conv_kernels),   cmocka_unit_test(test_dwc_kernels),
      cmocka_unit_test(test_dwp_kernels),    cmocka_unit_test(test_dwp_layer_shapes),
      cmocka_unit_test(test_api_shapes),
      cmocka_unit_test(test_api_random),     cmocka_unit_test(test_api_nan),
      cmocka_unit_test(test_api_unsupported),  cmocka_unit_test(test_to_channel_last),
      cmocka_unit_test(test_to_channel_last_f16),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
