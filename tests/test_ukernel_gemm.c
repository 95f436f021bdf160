/* test_ukernel_gemm.c - the im2col_gemm micro-kernels of every ISA this machine runs, at every
 * tile edge, and the im2col_gemm driver through the public API with every ISA forced (blocking
 * edges, both layouts, groups, stride/dilation/padding, batch, threads): the kernels against a
 * naive double-precision reference written here, the driver against the oracle (tests/oracle.c). */
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
#include "quant/quant.h"
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

/* ================================================================ micro-kernel level */

enum { EP_NONE, EP_CLAMP_ONLY, EP_BIAS_ROW, EP_BIAS_COL, N_EP };

typedef struct uk_case {
  const dlc_f32_gemm_family *f;
  size_t m, n, kc, ldc;
  int accumulate, ep_kind;
  float lo, hi;
  int nan_row;   /* >= 0: A(nan_row, 0) is NaN, so that whole output row must be NaN */
  int ct;        /* test ukernel_ct: C(i, j) at c[j * ldc + i] */
  size_t ldb;    /* > 0: test ukernel_ldb (n = nr), B(k, j) at b[k * ldb + j], NaN between the rows;
                    with ct, ukernel_ct_ldb (n <= nr / 2), B ending at its last row's n-th float */
  int copy;      /* with ldb: pass ukernel_ldb a bcopy panel and check it holds B packed */
  size_t lda;    /* > 0: test ukernel_lda, A(i, k) at a[i * lda + k], NaN between the rows and
                    nothing past the last row's kc-th float */
} uk_case;

/* Runs one kernel call on random panels whose padding (rows >= m of A, columns >= n of B) holds
   NaN, so a kernel that lets padding leak into stored results fails; checks every float of C
   inside the tile against a double reference and every float around it against the sentinel. */
static void run_uk_case(const uk_case *t) {
  const size_t mr = t->f->mr, nr = t->f->nr, m = t->m, n = t->n, kc = t->kc, ldc = t->ldc;
  const size_t ldb = t->ldb ? t->ldb : nr;
  /* in place: exactly the floats up to the last row's nr-th, so nothing past it is there to read */
  const size_t blast = t->ldb && t->ct ? n : nr;
  float *a = xalloc(kc * mr * sizeof(float)), *b = xalloc(((kc - 1) * ldb + blast) * sizeof(float));
  for (size_t k = 0; k < kc; k++) {
    for (size_t i = 0; i < mr; i++) a[k * mr + i] = i < m ? frand() : NAN;
    for (size_t j = 0; j < (k + 1 < kc ? ldb : blast); j++) b[k * ldb + j] = j < n ? frand() : NAN;
  }
  if (t->nan_row >= 0) a[(size_t)t->nan_row] = NAN;
  float *a_rows = NULL;
  if (t->lda) {
    size_t len = (m - 1) * t->lda + kc;
    a_rows = xalloc(len * sizeof(float));
    for (size_t q = 0; q < len; q++) a_rows[q] = q % t->lda < kc ? a[(q % t->lda) * mr + q / t->lda] : NAN;
  }
  float bias[DLC_GEMM_NR_MAX + DLC_GEMM_MR_MAX];
  for (size_t i = 0; i < sizeof bias / sizeof bias[0]; i++) bias[i] = frand();
  /* C sits GUARD floats into its buffer; the row stride leaves a gap after each row. With ct the
     "rows" of the buffer are the tile's columns. */
  size_t crows = t->ct ? n : m, ccols = t->ct ? m : n;
#define CIDX(i, j) (t->ct ? (j) * ldc + (i) : (i) * ldc + (j))
  size_t total = GUARD + crows * ldc + GUARD;
  float *buf = xalloc(total * sizeof(float)), *c0 = xalloc(m * n * sizeof(float));
  for (size_t i = 0; i < total; i++) buf[i] = SENTINEL;
  float *c = buf + GUARD;
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) c[CIDX(i, j)] = c0[i * n + j] = frand();
  }
  dlc_f32_gemm_epilogue ep = {NULL, t->ep_kind == EP_BIAS_COL, t->lo, t->hi, NULL, 0};
  if (t->ep_kind == EP_BIAS_ROW || t->ep_kind == EP_BIAS_COL) ep.bias = bias;
  float *bcopy = NULL;
  if (t->copy) {
    bcopy = xalloc((kc * nr + GUARD) * sizeof(float));
    for (size_t i = 0; i < kc * nr + GUARD; i++) bcopy[i] = SENTINEL;
  }
  if (t->ldb && t->ct)
    t->f->ukernel_ct_ldb(m, n, kc, a, b, ldb, c, ldc, t->accumulate, t->ep_kind == EP_NONE ? NULL : &ep);
  else if (t->lda)
    t->f->ukernel_lda(m, n, kc, a_rows, t->lda, b, c, ldc, t->accumulate, t->ep_kind == EP_NONE ? NULL : &ep);
  else if (t->ldb)
    t->f->ukernel_ldb(m, kc, a, b, ldb, bcopy, c, ldc, t->accumulate, t->ep_kind == EP_NONE ? NULL : &ep);
  else
    (t->ct ? t->f->ukernel_ct : t->f->ukernel)(m, n, kc, a, b, c, ldc, t->accumulate,
                                               t->ep_kind == EP_NONE ? NULL : &ep);

  if (bcopy) {
    for (size_t i = 0; i < kc * nr + GUARD; i++) {
      float want = i < kc * nr ? b[i / nr * ldb + i % nr] : SENTINEL;
      if (memcmp(&bcopy[i], &want, sizeof want) != 0)
        fail_msg("%s ldb=%zu m=%zu kc=%zu: bcopy[%zu] = %g, want %g", t->f->name, ldb, m, kc, i, (double)bcopy[i],
                 (double)want);
    }
    free(bcopy);
  }
  for (size_t i = 0; i < total; i++) {
    size_t off = i - GUARD;
    int inside = i >= GUARD && off / ldc < crows && off % ldc < ccols;
    if (!inside && !(buf[i] == SENTINEL)) {
      fail_msg("%s ct=%d m=%zu n=%zu kc=%zu: wrote outside the tile at offset %td", t->f->name, t->ct, m, n,
               kc, (ptrdiff_t)i - GUARD);
    }
  }
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      double ref = 0, mag = 0;
      for (size_t k = 0; k < kc; k++) {
        double p = (double)a[k * mr + i] * (double)b[k * ldb + j];
        ref += p;
        mag += fabs(p);
      }
      if (t->accumulate) ref += c0[i * n + j], mag += fabs(c0[i * n + j]);
      if (ep.bias) {
        float bv = t->ep_kind == EP_BIAS_COL ? bias[j] : bias[i];
        ref += bv;
        mag += fabs(bv);
      }
      if (t->ep_kind != EP_NONE) ref = clampd(ref, t->lo, t->hi);
      float got = c[CIDX(i, j)];
      if ((int)i == t->nan_row) {
        if (!isnan(got))
          fail_msg("%s m=%zu n=%zu kc=%zu ep=%d: NaN of row %zu lost (got %g)", t->f->name, m, n, kc,
                   t->ep_kind, i, (double)got);
      } else if (!close_enough(got, ref, mag, kc)) {
        fail_msg("%s ct=%d m=%zu n=%zu kc=%zu acc=%d ep=%d: C[%zu][%zu] = %.9g, want %.9g", t->f->name, t->ct,
                 m, n, kc, t->accumulate, t->ep_kind, i, j, (double)got, ref);
      }
    }
  }
  /* Families with f16_out: the same call with the epilogue's yh writes the tile to yh as
     binary16, each value the rounding of what C got above (same arithmetic, one rounding more),
     and leaves C and everything around the tile in yh alone. */
  if (!t->ct && !t->ldb && !t->lda && t->ep_kind != EP_NONE && t->f->f16_out) {
    float *cfirst = xalloc(m * n * sizeof(float));
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < n; j++) cfirst[i * n + j] = c[CIDX(i, j)], c[CIDX(i, j)] = c0[i * n + j];
    const size_t ldyh = n + (m + kc) % 4, ytotal = GUARD + m * ldyh + GUARD;
    uint16_t *ybuf = xalloc(ytotal * sizeof(uint16_t));
    for (size_t i = 0; i < ytotal; i++) ybuf[i] = 0x5A5A;
    ep.yh = ybuf + GUARD;
    ep.ldyh = ldyh;
    t->f->ukernel(m, n, kc, a, b, c, ldc, t->accumulate, &ep);
    for (size_t i = 0; i < total; i++) {
      const size_t off = i - GUARD;
      const int inside = i >= GUARD && off / ldc < crows && off % ldc < ccols;
      const float want = inside ? c0[(off / ldc) * n + off % ldc] : SENTINEL;
      if (!(buf[i] == want))
        fail_msg("%s m=%zu n=%zu kc=%zu: with yh, C changed at offset %td", t->f->name, m, n, kc, (ptrdiff_t)i - GUARD);
    }
    for (size_t i = 0; i < ytotal; i++) {
      const size_t off = i - GUARD;
      const int inside = i >= GUARD && off / ldyh < m && off % ldyh < n;
      if (!inside) {
        if (ybuf[i] != 0x5A5A)
          fail_msg("%s m=%zu n=%zu kc=%zu: yh written outside the tile at %td", t->f->name, m, n, kc,
                   (ptrdiff_t)i - GUARD);
        continue;
      }
      const float f = cfirst[(off / ldyh) * n + off % ldyh];
      const uint16_t want = dlc_f32_to_f16(f), got = ybuf[i];
      const int both_nan = isnan(f) && (got & 0x7c00u) == 0x7c00u && (got & 0x3ffu);
      if (got != want && !both_nan)
        fail_msg("%s m=%zu n=%zu kc=%zu acc=%d ep=%d: yh[%zu][%zu] = 0x%04x, want 0x%04x (of %.9g)", t->f->name, m, n,
                 kc, t->accumulate, t->ep_kind, off / ldyh, off % ldyh, got, want, (double)f);
    }
    free(ybuf);
    free(cfirst);
  }
  free(a);
  free(a_rows);
  free(b);
  free(buf);
  free(c0);
#undef CIDX
}

/* Every (m, n) edge, a few kc (1, 2, 3, odd, one past an unroll of 4, large), accumulate or not,
   every epilogue kind, a clamp that bites, and NaN through the clamp. */
static void test_ukernel_edges(void **state) {
  (void)state;
  static const size_t kcs[] = {1, 2, 3, 5, 17, 300};
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    if (!kt->gemm) continue;
    const dlc_f32_gemm_family *f = kt->gemm;
    assert_true(f->mr >= 1 && f->mr <= DLC_GEMM_MR_MAX);
    assert_true(f->nr >= 1 && f->nr <= DLC_GEMM_NR_MAX);
    assert_non_null(f->name);
    assert_non_null(f->ukernel_ct);
    tested++;
    for (size_t m = 1; m <= f->mr; m++)
      for (size_t n = 1; n <= f->nr; n++)
        for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++)
          for (int acc = 0; acc <= 1; acc++)
            for (int ep = 0; ep < N_EP; ep++) {
              /* The largest kc only on a subset, to keep the test quick. */
              if (kcs[ki] > 100 && (ep != EP_BIAS_COL || acc == 0) && m != f->mr && n != f->nr) continue;
              for (int ct = 0; ct <= 1; ct++) {
                size_t cols = ct ? m : n;
                uk_case t = {f, m, n, kcs[ki], cols + (m * 7 + n) % 5, acc, ep, -INFINITY, INFINITY, -1, ct, 0, 0, 0};
                if ((m + n + ki) % 3 == 0) t.lo = -0.5f, t.hi = 0.25f;
                if (ep != EP_NONE && (m + n + ki) % 4 == 1) t.nan_row = (int)((n + ki) % m);
                run_uk_case(&t);
              }
            }
  }
  assert_true(tested >= 1);
}

/* ukernel_ldb (B read in place, an NCHW 1x1 layer's input rows): every m, the kcs above, row
   strides from just past nr (unaligned) to a whole plane, accumulate or not, every epilogue,
   with and without the packed copy of B. */
static void test_ukernel_ldb(void **state) {
  (void)state;
  static const size_t kcs[] = {1, 2, 3, 5, 17, 300};
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    if (!kt->gemm || !kt->gemm->ukernel_ldb) continue;
    const dlc_f32_gemm_family *f = kt->gemm;
    tested++;
    for (size_t m = 1; m <= f->mr; m++)
      for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++)
        for (int acc = 0; acc <= 1; acc++)
          for (int ep = 0; ep < N_EP; ep++) {
            size_t ldb = ki == 4 ? 1024 + m : f->nr + (m * 3 + ki + (size_t)ep) % 7;
            uk_case t = {f, m, f->nr, kcs[ki], f->nr + 1 + m % 3, acc, ep, -INFINITY, INFINITY, -1, 0, ldb, 0, 0};
            if ((m + ki) % 3 == 0) t.lo = -0.5f, t.hi = 0.25f;
            if (ep != EP_NONE && (m + ki) % 4 == 1) t.nan_row = (int)(ki % m);
            run_uk_case(&t);
            t.copy = 1;
            run_uk_case(&t);
          }
  }
  printf("ukernel_ldb: %d families\n", tested);
}

/* ukernel_lda (A read in place, an NHWC 1x1 layer's pixels): every (m, n) edge, the kcs above, row
   strides from just past kc (unaligned) to a 4 KB plane row, accumulate or not, every epilogue. */
static void test_ukernel_lda(void **state) {
  (void)state;
  static const size_t kcs[] = {1, 2, 3, 5, 17, 300};
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    if (!kt->gemm || !kt->gemm->ukernel_lda) continue;
    const dlc_f32_gemm_family *f = kt->gemm;
    tested++;
    for (size_t m = 1; m <= f->mr; m++)
      for (size_t n = 1; n <= f->nr; n++)
        for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++)
          for (int acc = 0; acc <= 1; acc++)
            for (int ep = 0; ep < N_EP; ep++) {
              if (kcs[ki] > 100 && (ep != EP_BIAS_COL || acc == 0) && m != f->mr && n != f->nr) continue;
              size_t lda = ki == 4 ? 1024 : kcs[ki] + (m * 3 + n + ki + (size_t)ep) % 7;
              uk_case t = {f, m, n, kcs[ki], n + (m * 7 + n) % 5, acc, ep, -INFINITY, INFINITY, -1, 0, 0, 0, lda};
              if ((m + n + ki) % 3 == 0) t.lo = -0.5f, t.hi = 0.25f;
              if (ep != EP_NONE && (m + n + ki) % 4 == 1) t.nan_row = (int)((n + ki) % m);
              run_uk_case(&t);
            }
  }
  printf("ukernel_lda: %d families\n", tested);
}

/* ukernel_ct_ldb (an NCHW 1x1 layer's last few pixels against A panels of weights read as B):
   every m, every n of one vector, the kcs above, B row strides of mr (the driver's) and others,
   accumulate or not, every epilogue, a clamp that bites, NaN through it. */
static void test_ukernel_ct_ldb(void **state) {
  (void)state;
  static const size_t kcs[] = {1, 2, 3, 5, 17, 300};
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    if (!kt->gemm || !kt->gemm->ukernel_ct_ldb) continue;
    const dlc_f32_gemm_family *f = kt->gemm;
    tested++;
    for (size_t m = 1; m <= f->mr; m++)
      for (size_t n = 1; n <= f->nr / 2; n++)
        for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++)
          for (int acc = 0; acc <= 1; acc++)
            for (int ep = 0; ep < N_EP; ep++) {
              if (kcs[ki] > 100 && (ep != EP_BIAS_COL || acc == 0) && m != f->mr && n != f->nr / 2) continue;
              size_t ldb = (m + n + ki) % 2 ? f->mr : n + (m * 3 + ki + (size_t)ep) % 7;
              if (ldb < n) ldb = n;
              uk_case t = {f, m, n, kcs[ki], m + (m * 7 + n) % 5, acc, ep, -INFINITY, INFINITY, -1, 1, ldb, 0, 0};
              if ((m + n + ki) % 3 == 0) t.lo = -0.5f, t.hi = 0.25f;
              if (ep != EP_NONE && (m + n + ki) % 4 == 1) t.nan_row = (int)((n + ki) % m);
              run_uk_case(&t);
            }
  }
  printf("ukernel_ct_ldb: %d families\n", tested);
}

/* A row stride much larger than the tile (NCHW output rows are a whole image apart). */
static void test_ukernel_wide_ldc(void **state) {
  (void)state;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    if (!kt->gemm) continue;
    const dlc_f32_gemm_family *f = kt->gemm;
    for (int ct = 0; ct <= 1; ct++) {
      uk_case t = {f, f->mr, f->nr, 64, 3137, 1, EP_BIAS_ROW, 0.0f, 6.0f, -1, ct, 0, 0, 0};
      run_uk_case(&t);
      t.m = f->mr - 1 > 0 ? f->mr - 1 : 1;
      t.n = f->nr / 2 + 1;
      t.accumulate = 0;
      t.ep_kind = EP_BIAS_COL;
      run_uk_case(&t);
    }
  }
}

/* pack_rows: every length around the vector widths, NULL rows (padding) read as zeros, and not
   one float written past len * mr. */
static void test_pack_rows(void **state) {
  (void)state;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    if (!kt->gemm) continue;
    const dlc_f32_gemm_family *f = kt->gemm;
    assert_non_null(f->pack_rows);
    const size_t mr = f->mr, maxlen = 70;
    float *src = xalloc(mr * maxlen * sizeof(float));
    for (size_t i = 0; i < mr * maxlen; i++) src[i] = frand();
    float *buf = xalloc((maxlen * mr + 2 * GUARD) * sizeof(float)), *dst = buf + GUARD;
    for (size_t len = 1; len <= maxlen; len++) {
      for (int pattern = 0; pattern < 3; pattern++) {
        const float *rows[DLC_GEMM_MR_MAX];
        for (size_t i = 0; i < mr; i++) {
          int null = pattern == 1 ? (i % 3 == 1) : pattern == 2 ? (i + 1 == mr || i == 0) : 0;
          rows[i] = null ? NULL : src + i * maxlen;
        }
        for (size_t i = 0; i < len * mr + 2 * GUARD; i++) buf[i] = SENTINEL;
        f->pack_rows(len, rows, dst);
        for (size_t i = 0; i < GUARD; i++) {
          if (!(buf[i] == SENTINEL) || !(dst[len * mr + i] == SENTINEL))
            fail_msg("%s pack_rows len=%zu: wrote outside the panel", f->name, len);
        }
        for (size_t t = 0; t < len; t++) {
          for (size_t i = 0; i < mr; i++) {
            float want = rows[i] ? rows[i][t] : 0.0f;
            if (!(dst[t * mr + i] == want))
              fail_msg("%s pack_rows len=%zu: [%zu][%zu] = %g, want %g", f->name, len, t, i,
                       (double)dst[t * mr + i], (double)want);
          }
        }
      }
    }
    free(src), free(buf);
  }
}

/* pack_cols: every n from 1 to nr (a full panel and every masked edge), several kc, a row stride
   wider than the panel; columns past n are zeros (the source holds NaN there, which must not
   leak into the panel) and nothing past kc * nr is written. */
static void test_pack_cols(void **state) {
  (void)state;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    if (!kt->gemm) continue;
    const dlc_f32_gemm_family *f = kt->gemm;
    assert_non_null(f->pack_cols);
    static const size_t kcs[] = {1, 2, 3, 5, 9, 64};
    const size_t nr = f->nr, ld = nr + 13;
    for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++) {
      size_t kc = kcs[ki];
      float *src = xalloc((kc * ld + GUARD) * sizeof(float));
      float *buf = xalloc((kc * nr + 2 * GUARD) * sizeof(float)), *dst = buf + GUARD;
      for (size_t n = 1; n <= nr; n++) {
        for (size_t k = 0; k < kc; k++)
          for (size_t j = 0; j < ld; j++) src[k * ld + j] = j < n ? frand() : NAN;
        for (size_t i = 0; i < kc * nr + 2 * GUARD; i++) buf[i] = SENTINEL;
        f->pack_cols(kc, n, src, ld, dst);
        for (size_t i = 0; i < GUARD; i++) {
          if (!(buf[i] == SENTINEL) || !(dst[kc * nr + i] == SENTINEL))
            fail_msg("%s pack_cols kc=%zu n=%zu: wrote outside the panel", f->name, kc, n);
        }
        for (size_t k = 0; k < kc; k++) {
          for (size_t j = 0; j < nr; j++) {
            float want = j < n ? src[k * ld + j] : 0.0f;
            if (!(dst[k * nr + j] == want))
              fail_msg("%s pack_cols kc=%zu n=%zu: [%zu][%zu] = %g, want %g", f->name, kc, n, k, j,
                       (double)dst[k * nr + j], (double)want);
          }
        }
      }
      free(src), free(buf);
    }
  }
}

/* copy: every length up to a few vectors, at unaligned offsets; nothing outside [0, len) written. */
static void test_copy(void **state) {
  (void)state;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    if (!kt->gemm) continue;
    const dlc_f32_gemm_family *f = kt->gemm;
    assert_non_null(f->copy);
    const size_t maxlen = 100;
    float *src = xalloc((maxlen + 8) * sizeof(float));
    float *buf = xalloc((maxlen + 8 + 2 * GUARD) * sizeof(float));
    for (size_t i = 0; i < maxlen + 8; i++) src[i] = frand();
    for (size_t len = 0; len <= maxlen; len++) {
      for (size_t off = 0; off < 3; off++) {
        float *dst = buf + GUARD + off;
        for (size_t i = 0; i < maxlen + 8 + 2 * GUARD; i++) buf[i] = SENTINEL;
        f->copy(dst, src + 2 * off + 1, len);
        for (size_t i = 0; i < maxlen + 8 + 2 * GUARD; i++) {
          ptrdiff_t t = (ptrdiff_t)i - (ptrdiff_t)(GUARD + off);
          float want = t >= 0 && (size_t)t < len ? src[2 * off + 1 + (size_t)t] : SENTINEL;
          if (!(buf[i] == want)) fail_msg("%s copy len=%zu off=%zu: float %td wrong", f->name, len, off, t);
        }
      }
    }
    free(src), free(buf);
  }
}

/* copy_s2: every length up to a few vectors, at unaligned offsets; nothing outside [0, len)
   written. */
static void test_copy_s2(void **state) {
  (void)state;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    if (!kt->gemm) continue;
    const dlc_f32_gemm_family *f = kt->gemm;
    assert_non_null(f->copy_s2);
    const size_t maxlen = 100;
    float *src = xalloc((2 * maxlen + 8) * sizeof(float));
    float *buf = xalloc((maxlen + 8 + 2 * GUARD) * sizeof(float));
    for (size_t len = 0; len <= maxlen; len++) {
      for (size_t off = 0; off < 3; off++) {
        const float *from = src + off;
        for (size_t i = 0; i < 2 * maxlen + 8; i++) src[i] = frand();
        float *dst = buf + GUARD + off;
        for (size_t i = 0; i < maxlen + 8 + 2 * GUARD; i++) buf[i] = SENTINEL;
        f->copy_s2(dst, from, len);
        for (size_t i = 0; i < maxlen + 8 + 2 * GUARD; i++) {
          ptrdiff_t t = (ptrdiff_t)i - (ptrdiff_t)(GUARD + off);
          float want = t >= 0 && (size_t)t < len ? from[2 * (size_t)t] : SENTINEL;
          if (!(buf[i] == want)) fail_msg("%s copy_s2 len=%zu off=%zu: float %td wrong", f->name, len, off, t);
        }
      }
    }
    free(src), free(buf);
  }
}

/* ================================================================ driver level, public API */

typedef struct conv_case {
  const char *what;
  layer_shape s;
  float lo, hi;
} conv_case;

static const conv_case conv_cases[] = {
    /* K = 693 and N = 420 exceed one K chunk and one N block of every family */
    {"big K and N, pad 1", {2, 77, 20, 21, 19, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, -INFINITY, INFINITY},
    {"groups 2, stride 2, dilation 2, asym pad, 5x3", {2, 6, 13, 11, 10, 5, 3, 2, 2, 2, 2, 1, 0, 2, 1, 2},
     -INFINITY, INFINITY},
    {"stride (1,3), dilation (3,1), relu6", {1, 5, 17, 19, 29, 3, 2, 1, 3, 3, 1, 2, 3, 0, 1, 1}, 0.0f, 6.0f},
    {"depthwise, multiplier 2", {2, 8, 9, 10, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 8}, -INFINITY, INFINITY},
    {"pointwise, K > kc", {3, 700, 9, 11, 33, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, -INFINITY, INFINITY},
    {"pointwise, groups 4, relu", {2, 12, 7, 5, 20, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 4}, 0.0f, INFINITY},
    {"1x1 strided (not pointwise)", {1, 9, 8, 9, 7, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1}, -INFINITY, INFINITY},
    {"1x1 image, 3x3 pad 1", {4, 3, 1, 1, 37, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, -INFINITY, INFINITY},
    {"one channel in and out", {1, 1, 6, 40, 1, 2, 2, 1, 1, 1, 1, 0, 1, 1, 0, 1}, -INFINITY, INFINITY},
    {"wide row, many panels", {1, 3, 3, 131, 15, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, -0.3f, 0.3f},
    /* 7 x 7 outputs: NCHW computes these transposed (pixels as rows, C-transposed micro-kernel) */
    {"7x7 output, groups 2, 3x3 pad 1", {2, 16, 7, 7, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2}, -INFINITY, INFINITY},
    {"7x7 pointwise, K > kc, relu6", {1, 1100, 7, 7, 70, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, 0.0f, 6.0f},
    /* transposed, K is cut only where the pixels' panels and a weight panel outgrow L2 (1 MB: past
       some 2200 on AVX-512, 2800 on AVX2); 49 pixels in tiles of 13 + 13 + 13 + 10 on AVX-512 */
    {"7x7 pointwise, K > transposed kc", {1, 3000, 7, 7, 48, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, -INFINITY, INFINITY},
    {"7x7 output, stride 2, 5x5 pad 2", {3, 5, 13, 14, 35, 5, 5, 2, 2, 1, 1, 2, 2, 2, 2, 1}, -INFINITY, INFINITY},
    /* an RGB stem at stride 2 (the packing's stride-2 copy, runs cut by the padding); 30 and 16
       output channels, which NCHW splits into equal tiles below mr (AVX-512: 10 + 10 + 10, 8 + 8) */
    {"stem, stride 2, pad 1, 30 out", {2, 3, 23, 37, 30, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1}, 0.0f, 6.0f},
    /* a 32 x 32 plane (rows 4 KB apart): NCHW's first M tile reads B in place and packs it for
       the others (B_COPY_FIRST); stride 2 on a 64 x 64 plane reads the subsampled copy in place */
    {"pointwise, 32x32 plane, 2 M tiles", {2, 40, 32, 32, 20, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, 0.0f, INFINITY},
    {"1x1 stride 2, 64x64 plane", {1, 24, 64, 64, 17, 1, 1, 2, 2, 1, 1, 0, 0, 0, 0, 1}, -INFINITY, INFINITY},
    {"pointwise, 16 out, K > kc", {2, 600, 9, 13, 16, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, -INFINITY, INFINITY},
    /* NHWC pointwise reads the pixels in place (ukernel_lda) but where their rows are 4 KB apart
       (1024 channels), which it packs */
    {"pointwise, rows 4 KB apart", {2, 1024, 3, 5, 37, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1}, -INFINITY, INFINITY},
    {"kernel larger than image with padding", {1, 2, 3, 4, 5, 5, 6, 1, 1, 1, 1, 2, 2, 3, 2, 1}, -INFINITY,
     INFINITY},
};
#define N_CONV_CASES (sizeof conv_cases / sizeof conv_cases[0])

/* Plans c with algo IM2COL_GEMM and isa forced, runs it into a y full of NaN with guard floats
   on both sides, and checks every output and every guard. */
static void check_conv(const conv_case *c, dlconv_layout layout, dlconv_isa isa, int threads) {
  const layer_shape *sh = &c->s;
  dlconv_conv2d_desc d;
  const layer_sizes z = layer_desc(&d, sh, layout, c->lo, c->hi);
  const size_t nx = z.x, nw = z.w, ny = z.y;
  float *x = xalloc(nx * sizeof(float)), *w = xalloc(nw * sizeof(float));
  float *bias = xalloc((size_t)sh->c_out * sizeof(float));
  float *ybuf = xalloc((ny + 2 * GUARD) * sizeof(float)), *y = ybuf + GUARD;
  double *ref = xalloc(ny * sizeof(double)), *mag = xalloc(ny * sizeof(double));
  for (size_t i = 0; i < nx; i++) x[i] = frand();
  for (size_t i = 0; i < nw; i++) w[i] = frand();
  for (int i = 0; i < sh->c_out; i++) bias[i] = frand();
  for (size_t i = 0; i < ny + 2 * GUARD; i++) ybuf[i] = i < GUARD || i >= GUARD + ny ? SENTINEL : NAN;

  const dlconv_options opt = forced_options(DLCONV_ALGO_IM2COL_GEMM, isa, threads);
  dlconv_plan *p = NULL;
  dlconv_status st = dlconv_plan_conv2d(&p, &d, w, bias, NULL, &opt);
  if (st != DLCONV_OK) fail_msg("%s: plan failed: %s", c->what, dlconv_last_error());
  dlconv_plan_info info;
  assert_int_equal(dlconv_plan_query(p, &info), DLCONV_OK);
  assert_int_equal(info.algo, DLCONV_ALGO_IM2COL_GEMM);
  assert_int_equal(info.isa, isa);
  assert_non_null(strstr(info.kernel, "f32_gemm_"));
  assert_int_equal(dlconv_execute(p, x, y, NULL), DLCONV_OK);
  /* With the caller's exact-size workspace too, placed right after a guard. */
  size_t wsb = dlconv_plan_workspace_size(p);
  assert_int_equal(wsb, info.workspace_bytes);
  float *y2 = xalloc(ny * sizeof(float));
  char *ws = xalloc(wsb + 64);
  assert_int_equal(dlconv_execute(p, x, y2, wsb ? ws : NULL), DLCONV_OK);
  dlconv_plan_destroy(p);

  oracle_conv2d(&d, x, w, bias, ref, mag);
  size_t K = (size_t)(sh->c_in / sh->groups) * sh->kh * sh->kw;
  for (size_t i = 0; i < GUARD; i++) {
    if (!(ybuf[i] == SENTINEL) || !(ybuf[GUARD + ny + i] == SENTINEL))
      fail_msg("%s layout=%d isa=%d: guard float %zu overwritten", c->what, layout, isa, i);
  }
  for (size_t i = 0; i < ny; i++) {
    if (!close_enough(y[i], ref[i], mag[i], K))
      fail_msg("%s layout=%d isa=%d threads=%d: y[%zu] = %.9g, want %.9g", c->what, layout, isa, threads, i,
               (double)y[i], ref[i]);
    if (memcmp(&y[i], &y2[i], sizeof(float)) != 0)
      fail_msg("%s layout=%d isa=%d: caller workspace gives a different y[%zu]", c->what, layout, isa, i);
  }
  free(x), free(w), free(bias), free(ybuf), free(ref), free(mag), free(y2), free(ws);
}

static void test_driver_conv(void **state) {
  (void)state;
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    if (!kt->gemm) continue;
    tested++;
    for (size_t i = 0; i < N_CONV_CASES; i++) {
      for (int layout = 0; layout <= 1; layout++) {
        check_conv(&conv_cases[i], (dlconv_layout)layout, kt->isa, 1);
        check_conv(&conv_cases[i], (dlconv_layout)layout, kt->isa, 3);
      }
    }
  }
  assert_true(tested >= 1);
}

/* Dense layers arrive as 1x1 NHWC convolutions: batch 1 (a one-row GEMM), batch > 1, and a
   long K that a small batch cuts into long chunks. */
static void test_driver_dense(void **state) {
  (void)state;
  static const int32_t shapes[][3] = {{1, 1000, 37}, {5, 700, 65}, {17, 33, 1}, {3, 1, 40}, {2, 5000, 20}};
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    if (!kt->gemm) continue;
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
      int32_t bt = shapes[t][0], in = shapes[t][1], out = shapes[t][2];
      float *x = xalloc((size_t)bt * in * sizeof(float)), *w = xalloc((size_t)out * in * sizeof(float));
      float *bias = xalloc((size_t)out * sizeof(float));
      float *ybuf = xalloc(((size_t)bt * out + 2 * GUARD) * sizeof(float)), *y = ybuf + GUARD;
      for (size_t i = 0; i < (size_t)bt * in; i++) x[i] = frand();
      for (size_t i = 0; i < (size_t)out * in; i++) w[i] = frand();
      for (int32_t i = 0; i < out; i++) bias[i] = frand();
      for (size_t i = 0; i < (size_t)bt * out + 2 * GUARD; i++) ybuf[i] = SENTINEL;
      for (int threads = 1; threads <= 2; threads++) {
        const dlconv_options opt = forced_options(DLCONV_ALGO_IM2COL_GEMM, kt->isa, threads);
        dlconv_plan *p = NULL;
        if (dlconv_plan_dense(&p, bt, in, out, DLCONV_F32, w, bias, -2.0f, INFINITY, NULL, &opt) != DLCONV_OK)
          fail_msg("dense %d x %d -> %d: %s", bt, in, out, dlconv_last_error());
        assert_int_equal(dlconv_execute(p, x, y, NULL), DLCONV_OK);
        dlconv_plan_destroy(p);
        for (int32_t b = 0; b < bt; b++) {
          for (int32_t o = 0; o < out; o++) {
            double r = bias[o], m = fabs(bias[o]);
            for (int32_t i = 0; i < in; i++) {
              double pr = (double)x[(size_t)b * in + i] * w[(size_t)o * in + i];
              r += pr, m += fabs(pr);
            }
            r = clampd(r, -2.0, INFINITY);
            if (!close_enough(y[(size_t)b * out + o], r, m, (size_t)in))
              fail_msg("dense %d x %d -> %d isa=%d: y[%d][%d] = %.9g, want %.9g", bt, in, out, kt->isa, b, o,
                       (double)y[(size_t)b * out + o], r);
          }
        }
        for (size_t i = 0; i < GUARD; i++)
          assert_true(ybuf[i] == SENTINEL && ybuf[GUARD + (size_t)bt * out + i] == SENTINEL);
      }
      free(x), free(w), free(bias), free(ybuf);
    }
  }
}

/* A NaN in x reaches exactly the outputs whose window covers it, through the clamp. */
static void test_driver_nan(void **state) {
  (void)state;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    if (!kt->gemm) continue;
    for (int layout = 0; layout <= 1; layout++) {
      dlconv_conv2d_desc d;
      dlconv_conv2d_desc_init(&d, 1, 3, 6, 7, 4, 3, 3);
      d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = 1;
      d.layout = (dlconv_layout)layout;
      d.out_min = 0.0f, d.out_max = 6.0f;
      float x[3 * 6 * 7], w[4 * 3 * 9], y[4 * 6 * 7];
      for (size_t i = 0; i < sizeof x / sizeof x[0]; i++) x[i] = frand();
      for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) w[i] = frand();
      /* channel 1, pixel (2, 3) */
      x[layout ? (2 * 7 + 3) * 3 + 1 : (1 * 6 + 2) * 7 + 3] = NAN;
      const dlconv_options opt = forced_options(DLCONV_ALGO_IM2COL_GEMM, kt->isa, 1);
      assert_int_equal(dlconv_conv2d(&d, x, w, NULL, y, NULL, &opt), DLCONV_OK);
      for (int oc = 0; oc < 4; oc++) {
        for (int oy = 0; oy < 6; oy++) {
          for (int ox = 0; ox < 7; ox++) {
            float v = y[layout ? (oy * 7 + ox) * 4 + oc : (oc * 6 + oy) * 7 + ox];
            int hit = abs(oy - 2) <= 1 && abs(ox - 3) <= 1;
            if (hit != !!isnan(v)) fail_msg("isa=%d layout=%d: y(%d,%d,%d) = %g", kt->isa, layout, oc, oy, ox, (double)v);
            if (!hit) assert_true(v >= 0.0f && v <= 6.0f);
          }
        }
      }
    }
  }
}

int main(void) {
  rng_state = 0x2545F4914F6CDD1Dull;
  return RUN_TESTS(test_ukernel_edges, test_ukernel_ldb, test_ukernel_lda, test_ukernel_ct_ldb, test_ukernel_wide_ldc, test_pack_rows, test_pack_cols, test_copy, test_copy_s2,
                   test_driver_conv, test_driver_dense, test_driver_nan);
}
