/* test_ukernel_f16_gemm.c - the F16 gemm micro-kernel and store of every ISA this machine runs
 * (src/gemm_im2col/lowp_gemm_ukernel.h), against references written here: binary16 decoding and
 * round-to-nearest-even encoding done in double arithmetic (not quant.h), the tile product in
 * double at every (m, n) edge with guards around C (ukernel_ib too, B in place through an offset
 * table, its operands against guard pages), and the store bit for bit with guards after y.
 * Everything runs in the library's floating-point mode (flush-to-zero, denormals-are-zero). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/fpenv.h"
#include "arch/families.h"
#include "core/util.h"
#include "dlconv.h"
#include "support/alloc.h"
#include "support/compare.h"
#include "support/guard_pages.h"
#include "support/half.h"
#include "support/kernel_tables.h"
#include "support/rng.h"
#include "support/skip.h"

#define GUARD 37
static const float SENTINEL = -7777.0f;
#define HALF_SENTINEL ((uint16_t)0xBEEF)
#define HALF_NAN ((uint16_t)0x7E00)

/* ---------------------------------------------------------------- families */

/* The distinct F16 families of the tables under test. */
static size_t families(const dlc_f16_gemm_family *out[MAX_FAMILIES]) {
  size_t nf = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) ADD_FAMILY(out, nf, kt->f16_gemm);
  return nf;
}

/* The binary16 references (support/half.c) must themselves be right: spot values. */
static void test_reference_codec(void **state) {
  (void)state;
  static const struct { double v; uint16_t h; } cases[] = {
      {0.0, 0x0000},        {-0.0, 0x8000},         {1.0, 0x3C00},          {-2.0, 0xC000},
      {65504.0, 0x7BFF},    {65519.0, 0x7BFF},      {65520.0, 0x7C00},      {1e9, 0x7C00},
      {0x1p-24, 0x0001},    {0x1p-25, 0x0000},      {0x1.8p-25, 0x0001},    {0x3p-25, 0x0002},
      {0x1p-14, 0x0400},    {0x1.ff8p-15, 0x03FF},  {0x1.ffap-15, 0x03FF},  {0x1.ffcp-15, 0x0400},  {1.0 + 0x1p-11, 0x3C00},
      {1.0 + 0x3p-11, 0x3C02}, {0.1, 0x2E66},       {-INFINITY, 0xFC00},    {0x1.ffdp-1, 0x3BFF},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    if (half_of(cases[i].v) != cases[i].h)
      fail_msg("half_of(%a) = 0x%04x, want 0x%04x", cases[i].v, half_of(cases[i].v), cases[i].h);
  }
  assert_true(half_is_nan(half_of(NAN)));
  for (uint32_t h = 0; h < 0x10000; h++) { /* every half is its own encoding */
    if (half_is_nan((uint16_t)h)) continue;
    assert_int_equal(half_of(half_value((uint16_t)h)), h);
  }
}

/* ---------------------------------------------------------------- micro-kernel */

typedef struct uk_case {
  const dlc_f16_gemm_family *f;
  size_t m, n, kc, ldc;
  int accumulate;
  int nan_row; /* >= 0: A(nan_row, 0) is NaN, so that whole row of C must be NaN, no other */
  size_t skew; /* A and B start this many halves past an aligned address */
} uk_case;

/* Random halves in [-1, 1] inside the tile; the padding rows of A and columns of B hold NaN, so
   a kernel that lets padding into a stored result fails. Every float of C around the m x n
   corner must keep its sentinel. */
static void run_uk_case(const uk_case *t) {
  const size_t mr = t->f->mr, nr = t->f->nr, m = t->m, n = t->n, kc = t->kc, ldc = t->ldc;
  uint16_t *abuf = xalloc((kc * mr + t->skew) * 2), *bbuf = xalloc((kc * nr + t->skew) * 2);
  uint16_t *a = abuf + t->skew, *b = bbuf + t->skew;
  for (size_t k = 0; k < kc; k++) {
    for (size_t i = 0; i < mr; i++) a[k * mr + i] = i < m ? half_of(frand()) : HALF_NAN;
    for (size_t j = 0; j < nr; j++) b[k * nr + j] = j < n ? half_of(frand()) : HALF_NAN;
  }
  if (t->nan_row >= 0) a[t->nan_row] = HALF_NAN;
  size_t total = GUARD + m * ldc + GUARD;
  float *buf = xalloc(total * sizeof(float)), *c0 = xalloc(m * n * sizeof(float));
  for (size_t i = 0; i < total; i++) buf[i] = SENTINEL;
  float *c = buf + GUARD;
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) c[i * ldc + j] = c0[i * n + j] = frand();

  t->f->ukernel(m, n, kc, a, b, c, ldc, t->accumulate);

  for (size_t i = 0; i < total; i++) {
    size_t off = i - GUARD;
    int inside = i >= GUARD && off / ldc < m && off % ldc < n;
    if (!inside && !(buf[i] == SENTINEL))
      fail_msg("%s m=%zu n=%zu kc=%zu ldc=%zu: wrote outside the tile at offset %td", t->f->name, m, n, kc, ldc,
               (ptrdiff_t)i - GUARD);
  }
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      double ref = 0, mag = 0;
      for (size_t k = 0; k < kc; k++) {
        double p = half_value(a[k * mr + i]) * half_value(b[k * nr + j]);
        ref += p;
        mag += fabs(p);
      }
      if (t->accumulate) ref += c0[i * n + j], mag += fabs(c0[i * n + j]);
      float got = c[i * ldc + j];
      if ((int)i == t->nan_row) {
        if (!isnan(got))
          fail_msg("%s m=%zu n=%zu kc=%zu: NaN of row %zu lost (C[%zu][%zu] = %g)", t->f->name, m, n, kc, i, i, j,
                   (double)got);
      } else if (!close_enough(got, ref, mag, kc)) {
        fail_msg("%s m=%zu n=%zu kc=%zu acc=%d: C[%zu][%zu] = %.9g, want %.9g", t->f->name, m, n, kc,
                 t->accumulate, i, j, (double)got, ref);
      }
    }
  }
  free(abuf);
  free(bbuf);
  free(buf);
  free(c0);
}

/* Every (m, n) edge, kc from 1 to past the avx2 kernel's 256-step chunk, accumulate or not, a
   gap after every row of C, and a NaN row now and then. */
static void test_ukernel_edges(void **state) {
  (void)state;
  static const size_t kcs[] = {1, 2, 3, 7, 64, 257};
  const dlc_f16_gemm_family *fams[MAX_FAMILIES];
  size_t nf = families(fams);
  assert_true(nf >= 1);
  dlc_fpmode saved = dlc_fpmode_enter();
  for (size_t fi = 0; fi < nf; fi++) {
    const dlc_f16_gemm_family *f = fams[fi];
    assert_non_null(f->name);
    assert_non_null(f->ukernel);
    assert_non_null(f->store);
    assert_true(f->mr >= 1 && f->mr <= DLC_LOWP_MR_MAX);
    assert_true(f->nr >= 1 && f->nr <= DLC_LOWP_NR_MAX);
    for (size_t m = 1; m <= f->mr; m++)
      for (size_t n = 1; n <= f->nr; n++)
        for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++)
          for (int acc = 0; acc <= 1; acc++) {
            uk_case t = {f, m, n, kcs[ki], n + 1 + (m * 7 + n + ki) % 5, acc, -1, (m + n + ki) % 3};
            if ((m + n + ki + (size_t)acc) % 4 == 1) t.nan_row = (int)((n + ki) % m);
            run_uk_case(&t);
          }
  }
  dlc_fpmode_leave(saved);
}

/* A row stride far larger than the tile (NCHW rows of a whole image). */
static void test_ukernel_wide_ldc(void **state) {
  (void)state;
  const dlc_f16_gemm_family *fams[MAX_FAMILIES];
  size_t nf = families(fams);
  dlc_fpmode saved = dlc_fpmode_enter();
  for (size_t fi = 0; fi < nf; fi++) {
    uk_case t = {fams[fi], fams[fi]->mr, fams[fi]->nr, 64, 3137, 1, -1, 0};
    run_uk_case(&t);
    t.m = fams[fi]->mr > 1 ? fams[fi]->mr - 1 : 1;
    t.n = fams[fi]->nr / 2 + 1;
    t.accumulate = 0;
    t.nan_row = 0;
    run_uk_case(&t);
  }
  dlc_fpmode_leave(saved);
}

/* One k step over the special halves: a single product of two halves is exact in fp32, so every
   C(i, j) must equal A(i) * B(j) exactly, which checks the widening of zeros of both signs,
   subnormals, the extreme normals and infinities (inf * 0 is NaN). */
static void test_ukernel_special_halves(void **state) {
  (void)state;
  static const uint16_t specials[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0200, 0x0400, 0x8400,
                                      0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x3C00, 0x3555, 0xC7FF, 0x1234,
                                      0x0155, 0x83FF, 0x5BFF, 0x2001, 0x7BFE, 0x0003, 0x3C01, 0xB800};
  const size_t ns = sizeof specials / sizeof specials[0];
  const dlc_f16_gemm_family *fams[MAX_FAMILIES];
  size_t nf = families(fams);
  dlc_fpmode saved = dlc_fpmode_enter();
  for (size_t fi = 0; fi < nf; fi++) {
    const dlc_f16_gemm_family *f = fams[fi];
    const size_t mr = f->mr, nr = f->nr;
    uint16_t *a = xalloc(mr * 2), *b = xalloc(nr * 2);
    float *c = xalloc(mr * nr * sizeof(float));
    for (size_t off = 0; off < ns; off++) {
      for (size_t i = 0; i < mr; i++) a[i] = specials[(off + i) % ns];
      for (size_t j = 0; j < nr; j++) b[j] = specials[(off * 5 + j * 7) % ns];
      f->ukernel(mr, nr, 1, a, b, c, nr, 0);
      for (size_t i = 0; i < mr; i++)
        for (size_t j = 0; j < nr; j++) {
          double want = half_value(a[i]) * half_value(b[j]);
          float got = c[i * nr + j];
          /* == only: the sign of a zero product is lost to the +0 the accumulator starts from */
          if (isnan(want) ? !isnan(got) : !((double)got == want))
            fail_msg("%s: 0x%04x * 0x%04x = %a, want %a", f->name, a[i], b[j], (double)got, want);
        }
    }
    free(a);
    free(b);
    free(c);
  }
  dlc_fpmode_leave(saved);
}

/* ---------------------------------------------------------------- ukernel_ib (B read in place) */

/* How the offset table looks: random starts of either sign; all negative (b just past the last
   run); a few starts repeated (or all the same); all odd (vectors unaligned); one element apart,
   descending (runs overlapping by all but one element, non-monotonic). */
enum { OFF_RANDOM, OFF_NEGATIVE, OFF_REPEATED, OFF_ODD, OFF_SLIDE, N_OFF_KINDS };

typedef struct ib_case {
  const dlc_f16_gemm_family *f;
  size_t m, kc, ldc;
  int accumulate, off_kind, at_end;
  int a_f32;   /* A any float in [-4, 4), not only widened halves (products then round in fp32) */
  int nan_row; /* >= 0: A(nan_row, kc / 2) is NaN, so that whole row of C must be NaN, no other */
} ib_case;

/* Starts of the kc runs, from the start of the used span (the smallest is 0), and b's place. */
static void ib_starts(int off_kind, size_t kc, size_t row, ptrdiff_t *p, ptrdiff_t *base) {
  const ptrdiff_t span = (ptrdiff_t)(next_u32() % (3 * row + kc + 1));
  const ptrdiff_t pool[3] = {(ptrdiff_t)(next_u32() % (span + 1)), (ptrdiff_t)(next_u32() % (span + 1)),
                             (ptrdiff_t)(next_u32() % (span + 1))};
  const size_t npool = 1 + next_u32() % 3;
  ptrdiff_t lo = PTRDIFF_MAX, hi = PTRDIFF_MIN;
  for (size_t k = 0; k < kc; k++) {
    switch (off_kind) {
      case OFF_REPEATED: p[k] = pool[next_u32() % npool]; break;
      case OFF_ODD: p[k] = 2 * (ptrdiff_t)(next_u32() % (span / 2 + 1)) + 1; break;
      case OFF_SLIDE: p[k] = (ptrdiff_t)(kc - 1 - k); break;
      default: p[k] = (ptrdiff_t)(next_u32() % (span + 1)); break;
    }
    if (p[k] < lo) lo = p[k];
    if (p[k] > hi) hi = p[k];
  }
  for (size_t k = 0; k < kc; k++) p[k] -= lo;
  hi -= lo;
  if (off_kind == OFF_NEGATIVE) *base = hi + 1;
  else if (off_kind == OFF_ODD) *base = hi >= 1 ? 2 * (ptrdiff_t)(next_u32() % ((hi - 1) / 2 + 1)) + 1 : 1; /* p all even */
  else *base = (ptrdiff_t)(next_u32() % (hi + 1));
}

/* One call: A, boff and the span of B each against a guard page; the halves of B outside every
   run are NaN; C's tile (all mr rows, ldc columns) between guards, the m x nr corner random
   (accumulate) or NaN (not), all else a sentinel that must stay. */
static void run_ib_case(const ib_case *t) {
  const size_t mr = t->f->mr, nr = t->f->nr, m = t->m, kc = t->kc, ldc = t->ldc;
  ptrdiff_t *p = xalloc(kc * sizeof(ptrdiff_t)), base;
  ib_starts(t->off_kind, kc, nr, p, &base);
  if (t->off_kind == OFF_ODD)
    for (size_t k = 0; k < kc; k++) assert_true(((p[k] - base) & 1) != 0);
  ptrdiff_t hi = 0;
  for (size_t k = 0; k < kc; k++) hi = p[k] > hi ? p[k] : hi;
  const size_t span = (size_t)hi + nr;

  gbuf ga, go, gb;
  float *a = gbuf_open(&ga, kc * mr * sizeof(float), t->at_end);
  ptrdiff_t *boff = gbuf_open(&go, kc * sizeof(ptrdiff_t), !t->at_end);
  uint16_t *bspan = gbuf_open(&gb, span * sizeof(uint16_t), t->at_end), *b = bspan + base;
  for (size_t k = 0; k < kc; k++)
    for (size_t i = 0; i < mr; i++)
      a[k * mr + i] = i >= m ? NAN : t->a_f32 ? 4.0f * frand() : (float)half_value(half_of(4.0f * frand()));
  if (t->nan_row >= 0) a[(kc / 2) * mr + (size_t)t->nan_row] = NAN;
  for (size_t e = 0; e < span; e++) bspan[e] = HALF_NAN;
  for (size_t k = 0; k < kc; k++) {
    boff[k] = p[k] - base;
    for (size_t j = 0; j < nr; j++) bspan[p[k] + (ptrdiff_t)j] = half_of(frand());
  }
  float *a_copy = xalloc(kc * mr * sizeof(float));
  uint16_t *b_copy = xalloc(span * sizeof(uint16_t));
  ptrdiff_t *o_copy = xalloc(kc * sizeof(ptrdiff_t));
  memcpy(a_copy, a, kc * mr * sizeof(float));
  memcpy(b_copy, bspan, span * sizeof(uint16_t));
  memcpy(o_copy, boff, kc * sizeof(ptrdiff_t));

  const size_t total = GUARD + mr * ldc + GUARD;
  float *buf = xalloc(total * sizeof(float)), *c0 = xalloc(m * nr * sizeof(float));
  for (size_t i = 0; i < total; i++) buf[i] = SENTINEL;
  float *c = buf + GUARD;
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < nr; j++) c[i * ldc + j] = c0[i * nr + j] = t->accumulate ? frand() : NAN;

  t->f->ukernel_ib(m, kc, a, b, boff, c, ldc, t->accumulate);

  if (memcmp(a, a_copy, kc * mr * sizeof(float)) || memcmp(bspan, b_copy, span * sizeof(uint16_t)) ||
      memcmp(boff, o_copy, kc * sizeof(ptrdiff_t)))
    fail_msg("%s ukernel_ib m=%zu kc=%zu: wrote to an operand", t->f->name, m, kc);
  for (size_t i = 0; i < total; i++) {
    size_t off = i - GUARD;
    int inside = i >= GUARD && off / ldc < m && off % ldc < nr;
    if (!inside && !(buf[i] == SENTINEL))
      fail_msg("%s ukernel_ib m=%zu kc=%zu ldc=%zu: wrote outside the tile at offset %td", t->f->name, m, kc, ldc,
               (ptrdiff_t)i - GUARD);
  }
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < nr; j++) {
      double ref = 0, mag = 0;
      for (size_t k = 0; k < kc; k++) {
        double pr = (double)a_copy[k * mr + i] * half_value(b_copy[p[k] + (ptrdiff_t)j]);
        ref += pr;
        mag += fabs(pr);
      }
      if (t->accumulate) ref += c0[i * nr + j], mag += fabs(c0[i * nr + j]);
      float got = c[i * ldc + j];
      if ((int)i == t->nan_row) {
        if (!isnan(got))
          fail_msg("%s ukernel_ib m=%zu kc=%zu: NaN of row %zu lost (C[%zu][%zu] = %g)", t->f->name, m, kc, i, i, j,
                   (double)got);
      } else if (!close_enough(got, ref, mag, kc)) {
        fail_msg("%s ukernel_ib m=%zu kc=%zu acc=%d offsets=%d a_f32=%d: C[%zu][%zu] = %.9g, want %.9g", t->f->name,
                 m, kc, t->accumulate, t->off_kind, t->a_f32, i, j, (double)got, ref);
      }
    }
  }
  gbuf_close(&ga), gbuf_close(&go), gbuf_close(&gb);
  free(p), free(a_copy), free(b_copy), free(o_copy), free(buf), free(c0);
}

/* Every m, kc from 1 past the unroll to past 256, accumulate or not, every kind of offset table,
   A from halves or any float, a NaN row now and then, A / boff / B against guard pages on either
   side, ldc past nr (and a wide one, and exactly nr). */
static void test_ukernel_ib(void **state) {
  (void)state;
  static const size_t kcs[] = {1, 2, 3, 5, 7, 256, 300};
  const dlc_f16_gemm_family *fams[MAX_FAMILIES];
  const size_t nf = families(fams);
  assert_true(nf >= 1);
  dlc_fpmode saved = dlc_fpmode_enter();
  for (size_t fi = 0; fi < nf; fi++) {
    const dlc_f16_gemm_family *f = fams[fi];
    if (!f->ukernel_ib) continue;
    for (size_t m = 1; m <= f->mr; m++)
      for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++)
        for (int acc = 0; acc <= 1; acc++)
          for (int ok = 0; ok < N_OFF_KINDS; ok++)
            for (int af = 0; af <= 1; af++) {
              const size_t v = m + ki + (size_t)ok + (size_t)af;
              ib_case t = {f, m, kcs[ki], f->nr + 1 + (m * 3 + ki + (size_t)ok) % 7, acc, ok, (int)(v & 1), af, -1};
              if ((v + (size_t)acc) % 5 == 0) t.nan_row = (int)((ki + (size_t)ok) % m);
              run_ib_case(&t);
            }
    for (int acc = 0; acc <= 1; acc++) {
      ib_case t = {f, f->mr, 64, 3137, acc, OFF_RANDOM, acc, 0, -1};
      run_ib_case(&t);
      t.m = 1, t.ldc = f->nr, t.off_kind = OFF_ODD;
      run_ib_case(&t);
    }
  }
  dlc_fpmode_leave(saved);
  /* the generic family always has one; where this build has written AVX2's, it must be there */
  const dlc_isa_kernels *kg = dlc_kernels_for(DLCONV_ISA_GENERIC);
  assert_true(kg && kg->f16_gemm && kg->f16_gemm->ukernel_ib);
#if defined(__x86_64__) || defined(__i386__)
  if (dlconv_isa_available(DLCONV_ISA_AVX2) == 1) {
    const dlc_isa_kernels *kx = dlc_kernels_for(DLCONV_ISA_AVX2);
    assert_true(kx && kx->f16_gemm && kx->f16_gemm->ukernel_ib);
  }
#endif
}

/* ---------------------------------------------------------------- store */

enum { CLAMP_NONE, CLAMP_RELU, CLAMP_RELU6, N_CLAMP };
static const float clamp_lo[N_CLAMP] = {-INFINITY, 0.0f, 0.0f}, clamp_hi[N_CLAMP] = {INFINITY, INFINITY, 6.0f};

/* Accumulators that exercise every path of the conversion: ordinary values, overflow past 65504
   (and the last values that stay finite), half subnormals with ties, infinities, NaN, signed
   zeros and ties between normal halves. Scaled so that the store's bias cannot hide them when
   the bias is zero. */
static float special_acc(uint32_t r) {
  switch (r % 16) {
    case 0: return NAN;
    case 1: return (r & 16) ? INFINITY : -INFINITY;
    case 2: return (r & 16 ? 1 : -1) * (65504.0f + (float)(r >> 8 & 31)); /* 65504 .. 65535: inf from 65520 */
    case 3: return (r & 16 ? 1 : -1) * (70000.0f + (float)(r >> 8));
    case 4: return ldexpf((float)(r >> 8 & 0x7FF), -25 - (int)(r >> 20 & 3)); /* half subnormal, ties */
    case 5: return -ldexpf((float)(r >> 8 & 0x3FF), -24) * 0.75f;
    case 6: return ldexpf(1.0f + ldexpf((float)(2 * (r >> 8 & 0x3FF) + 1), -11), (int)(r >> 20 & 15) - 7); /* tie */
    case 7: return (r & 16) ? -0.0f : 0.0f;
    case 8: return ldexpf(1.0f, -14) * (1.0f - ldexpf(1.0f, -12)); /* rounds up to the smallest normal */
    case 9: return ldexpf((float)(r >> 8 & 0xFFFF), -40); /* far below half precision: +-0 or tiny */
    default: return frand() * 8.0f;
  }
}

typedef struct st_case {
  const dlc_f16_gemm_family *f;
  size_t n, c0;
  int per_column, clamp, zero_bias, random_bits;
} st_case;

static void run_st_case(const st_case *t) {
  const size_t n = t->n, nb = t->c0 + n + 1;
  float *acc = xalloc(n * sizeof(float)), *bias = xalloc(nb * sizeof(float));
  uint16_t *ybuf = xalloc((n + 2 * GUARD + 1) * 2), *y = ybuf + GUARD + (n & 1); /* not 16-byte aligned */
  for (size_t j = 0; j < n; j++) {
    uint32_t r = next_u32();
    if (t->random_bits) { /* any float but denormals (flushed by the library's mode) */
      uint32_t bits = next_u32();
      if ((bits & 0x7F800000u) == 0) bits &= 0x80000000u;
      memcpy(&acc[j], &bits, 4);
    } else {
      acc[j] = (r >> 28) < 6 ? special_acc(r) : frand() * 10.0f;
    }
  }
  for (size_t c = 0; c < nb; c++) bias[c] = t->zero_bias ? (c & 1 ? -0.0f : 0.0f) : frand();
  for (size_t i = 0; i < n + 2 * GUARD + 1; i++) ybuf[i] = HALF_SENTINEL;
  const float lo = clamp_lo[t->clamp], hi = clamp_hi[t->clamp];

  t->f->store(n, acc, bias, t->c0, t->per_column, lo, hi, y);

  for (size_t i = 0; i < n + 2 * GUARD + 1; i++) {
    if (ybuf + i >= y && ybuf + i < y + n) continue;
    if (ybuf[i] != HALF_SENTINEL)
      fail_msg("%s n=%zu: half at %td from y overwritten", t->f->name, n, (ptrdiff_t)(ybuf + i - y));
  }
  for (size_t j = 0; j < n; j++) {
    float bv = bias[t->per_column ? t->c0 + j : t->c0];
    double v = (double)(float)((double)acc[j] + (double)bv); /* the fp32 sum, exactly rounded */
    if (!isnan(v)) {
      if (v < lo) v = lo;
      if (v > hi) v = hi;
    }
    uint16_t want = half_of(v), got = y[j];
    if (half_is_nan(want) ? !half_is_nan(got) : got != want)
      fail_msg("%s n=%zu col=%d clamp=%d: y[%zu] = 0x%04x for %a + %a, want 0x%04x", t->f->name, n, t->per_column,
               t->clamp, j, got, (double)acc[j], (double)bv, want);
  }
  free(acc);
  free(bias);
  free(ybuf);
}

/* Every length to 40 (vector bodies and every tail), a few long runs, both bias layouts, every
   clamp, with a zero bias (the special accumulators reach the conversion as they are) and a
   random one, and random float bit patterns. */
static void test_store(void **state) {
  (void)state;
  static const size_t longs[] = {63, 64, 65, 100, 257};
  const dlc_f16_gemm_family *fams[MAX_FAMILIES];
  size_t nf = families(fams);
  dlc_fpmode saved = dlc_fpmode_enter();
  for (size_t fi = 0; fi < nf; fi++) {
    for (size_t ni = 0; ni < 40 + sizeof longs / sizeof longs[0]; ni++) {
      size_t n = ni < 40 ? ni + 1 : longs[ni - 40];
      for (int pc = 0; pc <= 1; pc++)
        for (int cl = 0; cl < N_CLAMP; cl++)
          for (int zb = 0; zb <= 1; zb++)
            for (int rb = 0; rb <= 1; rb++)
              for (int rep = 0; rep < 3; rep++) {
                st_case t = {fams[fi], n, (n * 3 + (size_t)rep) % 7, pc, cl, zb, rb};
                run_st_case(&t);
              }
    }
  }
  dlc_fpmode_leave(saved);
}

/* NaN through every clamp and both bias layouts, at every position of a vector and a tail. */
static void test_store_nan(void **state) {
  (void)state;
  const dlc_f16_gemm_family *fams[MAX_FAMILIES];
  size_t nf = families(fams);
  dlc_fpmode saved = dlc_fpmode_enter();
  float acc[19], bias[40];
  uint16_t y[19];
  for (size_t c = 0; c < 40; c++) bias[c] = frand();
  for (size_t fi = 0; fi < nf; fi++)
    for (size_t at = 0; at < 19; at++)
      for (int pc = 0; pc <= 1; pc++)
        for (int cl = 0; cl < N_CLAMP; cl++) {
          for (size_t j = 0; j < 19; j++) acc[j] = j == at ? NAN : frand() * 4.0f;
          fams[fi]->store(19, acc, bias, 3, pc, clamp_lo[cl], clamp_hi[cl], y);
          for (size_t j = 0; j < 19; j++)
            if (half_is_nan(y[j]) != (j == at))
              fail_msg("%s col=%d clamp=%d NaN at %zu: y[%zu] = 0x%04x", fams[fi]->name, pc, cl, at, j, y[j]);
        }
  dlc_fpmode_leave(saved);
}

/* pack_cols_f32 (where a family has it): every n in 1..nr, kc 0..5, rows of any bit pattern
   (subnormals, infinities, NaNs) widened exactly, zeros past n, nothing written past kc * nr; the
   last row ends at the end of its allocation, so an over-read shows under ASan / valgrind. */
static void test_pack_cols_f32(void **state) {
  (void)state;
  const dlc_f16_gemm_family *fams[MAX_FAMILIES];
  size_t nf = families(fams), tested = 0;
  for (size_t fi = 0; fi < nf; fi++) {
    const dlc_f16_gemm_family *f = fams[fi];
    if (!f->pack_cols_f32) continue;
    for (size_t kc = 0; kc <= 5; kc++)
      for (size_t n = 1; n <= f->nr; n++) {
        const size_t ld = n + (kc + n) % 3;
        const size_t nsrc = kc ? (kc - 1) * ld + n : 1;
        uint16_t *src = malloc(nsrc * sizeof(uint16_t));
        assert_non_null(src);
        for (size_t i = 0; i < nsrc; i++) src[i] = (uint16_t)next_u32();
        const size_t ndst = kc * f->nr + 11;
        float *dst = xalloc(ndst * sizeof(float));
        for (size_t i = 0; i < ndst; i++) dst[i] = SENTINEL;
        f->pack_cols_f32(kc, n, src, ld, dst);
        for (size_t i = 0; i < ndst; i++) {
          const size_t k = i / f->nr, j = i % f->nr;
          const double want = i >= kc * f->nr ? SENTINEL : j < n ? half_value(src[k * ld + j]) : 0.0;
          if (!(dst[i] == want || (isnan(want) && isnan(dst[i]))))
            fail_msg("%s pack_cols_f32 kc=%zu n=%zu ld=%zu: dst[%zu] = %g, want %g", f->name, kc, n, ld, i,
                     (double)dst[i], want);
        }
        free(src);
        free(dst);
        tested++;
      }
  }
  assert_true(tested > 0);
}

/* widen_a + ukernel_a32 (where a family has them): the same bits as ukernel for every tile edge,
   kc around the kernel's A chunk, accumulate on and off; widen_a exact and within its bound. */
static void test_ukernel_a32(void **state) {
  (void)state;
  const dlc_f16_gemm_family *fams[MAX_FAMILIES];
  const size_t nf = families(fams);
  static const size_t kcs[] = {1, 2, 7, 64, 256};
  for (size_t fi = 0; fi < nf; fi++) {
    const dlc_f16_gemm_family *f = fams[fi];
    assert_true(!f->widen_a == !f->ukernel_a32);
    if (!f->ukernel_a32) continue;
    for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++) {
      const size_t kc = kcs[ki], ldc = f->nr + 3;
      uint16_t *a = malloc(kc * f->mr * 2), *b = malloc(kc * f->nr * 2);
      float *af = aligned_alloc(32, dlc_round_up((kc * f->mr + 8 + 8) * 4, 32));
      float *c1 = malloc(f->mr * ldc * 4), *c2 = malloc(f->mr * ldc * 4);
      assert_true(a && b && af && c1 && c2);
      for (size_t t = 0; t < kc * f->mr; t++) a[t] = dlc_f32_to_f16(frand() * 4.0f);
      for (size_t t = 0; t < kc * f->nr; t++) b[t] = dlc_f32_to_f16(frand());
      for (size_t t = 0; t < kc * f->mr + 16; t++) af[t] = -1234.5f;
      f->widen_a(kc, a, af);
      for (size_t t = 0; t < kc * f->mr; t++)
        if (af[t] != dlc_f16_to_f32(a[t])) fail_msg("%s widen_a kc=%zu: af[%zu] = %g", f->name, kc, t, (double)af[t]);
      for (size_t t = kc * f->mr + 8; t < kc * f->mr + 16; t++)
        if (af[t] != -1234.5f) fail_msg("%s widen_a kc=%zu wrote af[%zu], past its slack", f->name, kc, t);
      for (size_t m = 1; m <= f->mr; m++)
        for (size_t n = 1; n <= f->nr; n++)
          for (int acc = 0; acc < 2; acc++) {
            for (size_t t = 0; t < f->mr * ldc; t++) c1[t] = c2[t] = (float)t * 0.25f;
            f->ukernel(m, n, kc, a, b, c1, ldc, acc);
            f->ukernel_a32(m, n, kc, af, b, c2, ldc, acc);
            if (memcmp(c1, c2, f->mr * ldc * 4))
              fail_msg("%s ukernel_a32 m=%zu n=%zu kc=%zu acc=%d differs from ukernel", f->name, m, n, kc, acc);
          }
      free(a); free(b); free(af); free(c1); free(c2);
    }
  }
}

/* ---------------------------------------------------------------- gemv (dense layers, few rows of x) */

/* What a gemv case holds:
     GV_RANDOM   A: halves of random floats in [-4, 4), a sixteenth each +0, -0 and subnormal;
                 x: random fp32 in [-2, 2) (full 24-bit mantissas: x is fp32, not widened halves)
     GV_WIDE     A: any finite half (random bit patterns: up to +-65504, subnormals, both zeros);
                 x: fp32 of either sign and exponents -20 .. 12, an eighth of them +-0
     GV_EXACT    A and x small integers (|v| <= 16, zeros of both signs): every partial sum in any
                 order is an integer below 2^24, so each c must be the exact sum bit for bit
     GV_SPECIAL  GV_RANDOM with infinities and NaNs planted in A and x, and an infinite x over a
                 zero weight (inf * 0): exactly the outputs they reach must be inf / NaN as IEEE says
   No product or partial sum gets below FLT_MIN, so the library's flush-to-zero mode changes nothing. */
enum { GV_RANDOM, GV_WIDE, GV_EXACT, GV_SPECIAL, N_GV_KINDS };
static const char *const gv_kind_name[N_GV_KINDS] = {"random", "wide", "exact", "inf/NaN"};

static double half_table[65536]; /* half_value of every half, for the gemv reference */
#define GV_MR_MAX 256       /* the largest gemv_mr the reference takes */

static uint16_t gv_half(int kind) {
  const uint32_t r = next_u32();
  switch (kind) {
    case GV_WIDE: {
      const uint16_t h = (uint16_t)(r >> 8);
      return (h & 0x7C00) == 0x7C00 ? (uint16_t)(h & 0xBFFF) : h; /* exponent 31 (inf, NaN) to 15 */
    }
    case GV_EXACT: {
      const int v = (int)(r % 33) - 16;
      return dlc_f32_to_f16(v == 0 && (r >> 31) ? -0.0f : (float)v);
    }
    default:
      switch (r >> 28) {
        case 0: return 0x0000;
        case 1: return 0x8000;
        case 2: return (uint16_t)((r & 0x8000) | (1 + (r & 0x3FF) % 0x3FF)); /* subnormal, either sign */
        default: return dlc_f32_to_f16(4.0f * frand());
      }
  }
}

static float gv_x(int kind) {
  const uint32_t r = next_u32();
  switch (kind) {
    case GV_WIDE: {
      const float s = (r & 1) ? -1.0f : 1.0f;
      if ((r >> 1 & 7) == 0) return s * 0.0f;
      return s * ldexpf(1.0f + (float)(next_u32() >> 9) * 0x1p-23f, (int)((r >> 8) % 33) - 20);
    }
    case GV_EXACT: return (float)((int)(r % 33) - 16);
    default: return 2.0f * frand();
  }
}

typedef struct gv_case {
  const dlc_f16_gemm_family *f;
  size_t m, nb, kc, ldb, ldc;
  int kind;
  int a_at_end, b_at_end; /* the panel / the last row of x ends at a guard page; else starts after one */
  size_t a_skew;          /* not at the end: a starts this many halves past the guard (unaligned) */
} gv_case;

/* Operand space for every case of one kc (mapping once per kc, not per case): A's and x's areas
   a whole number of pages between guard pages, so an operand placed at either end of its area
   touches a guard; copies of the operands, to check that the kernel leaves them alone; c. */
typedef struct gv_bufs {
  gbuf ga, gb;
  size_t a_bytes, b_bytes, c_total;
  uint16_t *a_copy;
  float *b_copy, *c;
} gv_bufs;

static size_t page_round(size_t bytes) {
  const size_t pg = page_size();
  return (bytes + pg - 1) / pg * pg;
}

/* Room for kc with gemv_mr rows, up to 4 rows of x ldb <= kc + max_ldb_pad apart, ldc <= mr + max_ldc_pad. */
static void gv_bufs_open(gv_bufs *g, size_t kc, size_t mr, size_t max_ldb_pad, size_t max_ldc_pad) {
  g->a_bytes = page_round((kc * mr + 8) * sizeof(uint16_t));
  g->b_bytes = page_round((3 * (kc + max_ldb_pad) + kc) * sizeof(float));
  gbuf_open(&g->ga, g->a_bytes, 1);
  gbuf_open(&g->gb, g->b_bytes, 1);
  g->a_copy = xalloc(kc * mr * sizeof(uint16_t));
  g->b_copy = xalloc(g->b_bytes);
  g->c_total = GUARD + 4 * (mr + max_ldc_pad) + GUARD;
  g->c = xalloc(g->c_total * sizeof(float));
}

static void gv_bufs_close(gv_bufs *g) {
  gbuf_close(&g->ga);
  gbuf_close(&g->gb);
  free(g->a_copy), free(g->b_copy), free(g->c);
}

/* One call: the panel (kc * gemv_mr halves, rows past m +0) and x (nb rows ldb apart, the gaps
   between rows NaN, so that a read of a gap poisons the result) against guard pages and left
   unchanged; c's nb rows (ldc apart) NaN in the m x nb corner, a sentinel everywhere else and
   GUARD floats around, which must stay. Returns how many outputs were inf or NaN. */
static size_t run_gv_case(const gv_case *t, gv_bufs *g) {
  const size_t mr = t->f->gemv_mr, m = t->m, nb = t->nb, kc = t->kc, ldb = t->ldb, ldc = t->ldc;
  const size_t na = kc * mr, nx = (nb - 1) * ldb + kc;
  uint16_t *a = t->a_at_end ? (uint16_t *)(g->ga.p + g->a_bytes) - na : (uint16_t *)g->ga.p + t->a_skew;
  float *b = t->b_at_end ? (float *)(g->gb.p + g->b_bytes) - nx : (float *)g->gb.p;
  for (size_t k = 0; k < kc; k++)
    for (size_t i = 0; i < mr; i++) a[k * mr + i] = i < m ? gv_half(t->kind) : 0;
  for (size_t e = 0; e < nx; e++) b[e] = NAN;
  for (size_t r = 0; r < nb; r++)
    for (size_t k = 0; k < kc; k++) b[r * ldb + k] = gv_x(t->kind);
  if (t->kind == GV_SPECIAL) {
    static const uint16_t bad_halves[] = {0x7C00, 0xFC00, 0x7E00, 0xFE01, 0x7C01};
    static const float bad_x[] = {INFINITY, -INFINITY, NAN};
    const size_t plants = 1 + next_u32() % 3;
    for (size_t p = 0; p < plants; p++) {
      const size_t k = next_u32() % kc, i = next_u32() % m, r = next_u32() % nb;
      switch (next_u32() % 3) {
        case 0: a[k * mr + i] = bad_halves[next_u32() % 5]; break;
        case 1: b[r * ldb + k] = bad_x[next_u32() % 3]; break;
        default: a[k * mr + i] = (next_u32() & 1) ? 0x8000 : 0x0000, b[r * ldb + k] = INFINITY; break;
      }
    }
  }
  memcpy(g->a_copy, a, na * sizeof(uint16_t));
  memcpy(g->b_copy, b, nx * sizeof(float));
  const size_t total = GUARD + nb * ldc + GUARD;
  float *buf = g->c, *c = buf + GUARD;
  for (size_t e = 0; e < total; e++) buf[e] = SENTINEL;
  for (size_t r = 0; r < nb; r++)
    for (size_t i = 0; i < m; i++) c[r * ldc + i] = NAN;

  t->f->gemv(m, nb, kc, a, b, ldb, c, ldc);

  if (memcmp(g->a_copy, a, na * sizeof(uint16_t)) || memcmp(g->b_copy, b, nx * sizeof(float)))
    fail_msg("%s m=%zu nb=%zu kc=%zu: wrote to an operand", t->f->gemv_name, m, nb, kc);
  for (size_t e = 0; e < total; e++) {
    const size_t off = e - GUARD;
    const int inside = e >= GUARD && off / ldc < nb && off % ldc < m;
    if (!inside && !(buf[e] == SENTINEL))
      fail_msg("%s m=%zu nb=%zu kc=%zu ldb=%zu ldc=%zu: wrote outside the m x nb outputs at c[%td] = %g",
               t->f->gemv_name, m, nb, kc, ldb, ldc, (ptrdiff_t)e - GUARD, (double)buf[e]);
  }
  /* products of a half and an fp32 value are exact in double; k outer, so the panel is read in order */
  double ref[4 * GV_MR_MAX], mag[4 * GV_MR_MAX], w[GV_MR_MAX];
  assert_true(m <= GV_MR_MAX);
  for (size_t e = 0; e < nb * m; e++) ref[e] = mag[e] = 0;
  for (size_t k = 0; k < kc; k++) {
    for (size_t i = 0; i < m; i++) w[i] = half_table[a[k * mr + i]];
    for (size_t r = 0; r < nb; r++) {
      const double x = b[r * ldb + k];
      for (size_t i = 0; i < m; i++) {
        const double p = w[i] * x;
        ref[r * m + i] += p;
        mag[r * m + i] += fabs(p);
      }
    }
  }
  size_t nonfinite = 0;
  for (size_t r = 0; r < nb; r++)
    for (size_t i = 0; i < m; i++) {
      const double want = ref[r * m + i];
      const float got = c[r * ldc + i];
      int ok;
      if (isnan(want))
        ok = isnan(got);
      else if (isinf(want))
        ok = (double)got == want;
      else if (t->kind == GV_EXACT)
        ok = (double)got == want; /* bit for bit, but for the sign of a zero sum */
      else /* fp32 accumulation of kc terms in any order, products exact or rounded once */
        ok = fabs((double)got - want) <= (double)kc * 0x1p-23 * mag[r * m + i] + 0x1p-100;
      if (!ok)
        fail_msg("%s m=%zu nb=%zu kc=%zu ldb=%zu ldc=%zu %s: c[%zu][%zu] = %.9g, want %.17g (sum |a*x| %g)",
                 t->f->gemv_name, m, nb, kc, ldb, ldc, gv_kind_name[t->kind], r, i, (double)got, want,
                 mag[r * m + i]);
      nonfinite += !isfinite(want);
    }
  return nonfinite;
}

/* The row counts that long K runs on: the edges of the 16-lane vectors (and of the panel). */
static int gv_edge_m(size_t m, size_t mr, int few) {
  if (m <= 1 || m >= mr) return 1;
  if (few) return m == 17 || m == mr - 1;
  return m == 2 || m % 16 == 15 || m % 16 == 0 || m % 16 == 1 || m == mr - 1;
}

/* gemv (where a family has it; gemv, gemv_mr and gemv_name come together, and the avx512 family
   has it): every m up to gemv_mr (the masked last vector) for kc 1..40 and 127, 128, each with
   1-4 rows of x and every kind of values; longer K (odd and even, past the two-set unroll, to
   4099) on the vector-edge row counts. ldb from kc up (NaN gaps), ldc from m up; see run_gv_case.
   kc >= 1: the contract leaves kc = 0 unsaid and the driver never passes it (K = c_in). */
static void test_gemv(void **state) {
  (void)state;
  static const size_t long_kcs[] = {63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 1001, 4098, 4099};
  static const size_t ldb_pad[] = {0, 1, 0, 3, 17, 0, 69}, ldc_pad[] = {0, 1, 5, 0, 16, 99};
  const size_t nlong = sizeof long_kcs / sizeof long_kcs[0];
  for (uint32_t h = 0; h < 65536; h++) half_table[h] = half_value((uint16_t)h);
  const dlc_isa_kernels *k5 = dlc_kernels_for(DLCONV_ISA_AVX512);
  if (k5 && !(k5->f16_gemm && k5->f16_gemm->gemv))
    fail_msg("the avx512 F16 family (%s) has no gemv", k5->f16_gemm ? k5->f16_gemm->name : "none");
  const dlc_f16_gemm_family *fams[MAX_FAMILIES];
  const size_t nf = families(fams);
  size_t cases = 0, by_kind[N_GV_KINDS] = {0}, nonfinite = 0, nfam = 0;
  dlc_fpmode saved = dlc_fpmode_enter();
  for (size_t fi = 0; fi < nf; fi++) {
    const dlc_f16_gemm_family *f = fams[fi];
    if (!f->gemv != !f->gemv_mr || !f->gemv != !f->gemv_name)
      fail_msg("%s: gemv, gemv_mr and gemv_name come together (gemv %s, gemv_mr %zu, gemv_name %s)", f->name,
               f->gemv ? "set" : "NULL", f->gemv_mr, f->gemv_name ? f->gemv_name : "NULL");
    if (!f->gemv) continue;
    nfam++;
    const size_t mr = f->gemv_mr;
    if (mr > GV_MR_MAX) fail_msg("%s: gemv_mr %zu, the test takes <= %d", f->gemv_name, mr, GV_MR_MAX);
    for (size_t ki = 0; ki < 40 + nlong; ki++) {
      const size_t kc = ki < 40 ? ki + 1 : long_kcs[ki - 40];
      gv_bufs g;
      gv_bufs_open(&g, kc, mr, 69, 99);
      for (size_t m = 1; m <= mr; m++) {
        if (kc > 40 && kc != 127 && kc != 128 && !gv_edge_m(m, mr, kc >= 1000)) continue;
        for (size_t nb = 1; nb <= 4; nb++)
          for (int kind = 0; kind < N_GV_KINDS; kind++) {
            /* the layout varies with the case and the kind, so each kind meets every layout */
            const size_t u = cases / N_GV_KINDS + 5 * (size_t)kind;
            gv_case t = {f, m, nb, kc, kc + ldb_pad[u % 7], m + ldc_pad[(u / 7) % 6], kind,
                         u % 4 != 3, (u / 2) % 3 != 2, 0};
            if (!t.a_at_end) t.a_skew = (u / 4) % 2 ? 0 : 3;
            nonfinite += run_gv_case(&t, &g);
            cases++;
            by_kind[kind]++;
          }
      }
      gv_bufs_close(&g);
    }
  }
  dlc_fpmode_leave(saved);
  if (!nfam) skip_test("gemv", "no F16 family with gemv on this machine");
  print_message("[ gemv ] %zu cases on %zu famil%s (%zu random, %zu wide, %zu exact, %zu inf/NaN; %zu outputs "
                "inf/NaN)\n",
                cases, nfam, nfam == 1 ? "y" : "ies", by_kind[GV_RANDOM], by_kind[GV_WIDE], by_kind[GV_EXACT],
                by_kind[GV_SPECIAL], nonfinite);
}

int main(void) {
  rng_state = 0x2545F4914F6CDD1Dull;
  return RUN_TESTS(test_reference_codec, test_ukernel_a32, test_ukernel_edges, test_ukernel_wide_ldc, test_ukernel_ib,
                   test_ukernel_special_halves, test_store, test_store_nan, test_pack_cols_f32, test_gemv);
}
