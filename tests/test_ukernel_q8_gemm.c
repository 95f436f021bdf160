/* test_ukernel_q8_gemm.c - the int8 gemm micro-kernel and requantising store of every ISA this
 * machine runs (src/gemm_im2col/lowp_gemm_ukernel.h), against references written here: the tile
 * product in int64 at every (m, n) edge with guards around C, and the store bit for bit against
 * quant.h's formula evaluated independently (plus an integer check of the half-even ties), and
 * ukernel_ib (B in place through an offset table) in int64 with its operands against guard pages. */
#include <fenv.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/cpu.h"
#include "arch/families.h"
#include "dlconv.h"
#include "support/alloc.h"
#include "support/guard_pages.h"
#include "support/kernel_tables.h"
#include "support/rng.h"
#include "support/skip.h"

#define GUARD 37
#define SENTINEL ((int32_t)0x5A5A5A5A)
#define GUARD_BYTE 0xA5

/* A family must exist where this build has written one, so losing it from a table fails; on a
   CPU with VNNI the x86 tables must carry the VNNI family (src/arch/<isa>/config.c). */
static void check_expected_families(void) {
  CHECK_TABLE_FAMILIES(q8_gemm, IF_AVXVNNI(dlc_q8_gemm__avxvnni), IF_AVX512VNNI(dlc_q8_gemm__avx512vnni));
}

/* The families under test, each once: the one each table gives this CPU, plus the avx2 family and
   the VNNI families wherever this CPU runs them (a VNNI CPU's tables no longer carry avx2's). */
static size_t families(const dlc_q8_gemm_family *out[MAX_FAMILIES]) {
  family_ref refs[MAX_FAMILIES];
  size_t nrefs = 0, n = 0;
  TABLE_FAMILY_REFS(refs, nrefs, q8_gemm);
  add_x86_families(refs, &nrefs, IF_X86(dlc_q8_gemm__avx2), IF_AVXVNNI(dlc_q8_gemm__avxvnni),
                   IF_AVX512VNNI(dlc_q8_gemm__avx512vnni), NULL);
  for (size_t i = 0; i < nrefs; i++) ADD_FAMILY(out, n, (const dlc_q8_gemm_family *)refs[i].family);
  static int said;
  if (!said) {
    said = 1;
    printf("q8 gemm families under test:");
    for (size_t i = 0; i < n; i++) printf(" %s", out[i]->name);
    printf("%s\n", dlc_cpu()->avx_vnni || dlc_cpu()->avx512_vnni ? "" : " (no VNNI on this CPU: its families untested)");
  }
  return n;
}

/* ================================================================ micro-kernel */

enum { V_RANDOM, V_MAX_POSITIVE, V_MAX_NEGATIVE, V_RANDOM_EXTREMES, N_VALUE_KINDS };

static int16_t a_value(int kind) {
  switch (kind) {
    case V_RANDOM: return (int16_t)irand(-128, 127);
    case V_MAX_POSITIVE: /* fall through: -128 * -255 is the largest product */
    case V_MAX_NEGATIVE: return -128;
    default: return next_u32() & 1 ? -128 : 127;
  }
}

static int16_t b_value(int kind) {
  switch (kind) {
    case V_RANDOM: return (int16_t)irand(-255, 255);
    case V_MAX_POSITIVE: return -255;
    case V_MAX_NEGATIVE: return 255;
    default: return next_u32() & 1 ? -255 : 255;
  }
}

typedef struct uk_case {
  const dlc_q8_gemm_family *f;
  size_t m, n, kc, ldc;
  int accumulate, kind;
} uk_case;

/* One call on panels whose padding (rows >= m of A, columns >= n of B) holds junk, so padding
   that leaks into stored results fails; every int of C inside the tile is compared with an
   int64 reference and every int around it with the sentinel. */
static void run_uk_case(const uk_case *t) {
  const size_t mr = t->f->mr, nr = t->f->nr, m = t->m, n = t->n, kc = t->kc, ldc = t->ldc;
  int16_t *a = xalloc(kc * mr * sizeof(int16_t)), *b = xalloc(kc * nr * sizeof(int16_t));
  for (size_t k = 0; k < kc; k++) {
    for (size_t i = 0; i < mr; i++)
      a[(k / 2) * 2 * mr + 2 * i + k % 2] = i < m ? a_value(t->kind) : (int16_t)irand(-32768, 32767);
    for (size_t j = 0; j < nr; j++)
      b[(k / 2) * 2 * nr + 2 * j + k % 2] = j < n ? b_value(t->kind) : (int16_t)irand(-32768, 32767);
  }
  size_t total = GUARD + m * ldc + GUARD;
  int32_t *buf = xalloc(total * sizeof(int32_t)), *c0 = xalloc(m * n * sizeof(int32_t));
  for (size_t i = 0; i < total; i++) buf[i] = SENTINEL;
  int32_t *c = buf + GUARD;
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) c[i * ldc + j] = c0[i * n + j] = (int32_t)irand(-(1 << 28), 1 << 28);

  t->f->ukernel(m, n, kc, a, b, c, ldc, t->accumulate);

  for (size_t i = 0; i < total; i++) {
    size_t off = i - GUARD;
    int inside = i >= GUARD && off / ldc < m && off % ldc < n;
    if (!inside && buf[i] != SENTINEL)
      fail_msg("%s m=%zu n=%zu kc=%zu ldc=%zu: wrote outside the tile at offset %td", t->f->name, m, n, kc, ldc,
               (ptrdiff_t)i - GUARD);
  }
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      int64_t ref = t->accumulate ? c0[i * n + j] : 0;
      for (size_t k = 0; k < kc; k++)
        ref += (int64_t)a[(k / 2) * 2 * mr + 2 * i + k % 2] * b[(k / 2) * 2 * nr + 2 * j + k % 2];
      if (c[i * ldc + j] != ref)
        fail_msg("%s m=%zu n=%zu kc=%zu acc=%d kind=%d: C[%zu][%zu] = %d, want %lld", t->f->name, m, n, kc,
                 t->accumulate, t->kind, i, j, c[i * ldc + j], (long long)ref);
    }
  }
  free(a), free(b), free(buf), free(c0);
}

/* Every (m, n) edge, several even kc (one pair, around an unroll of 4 pairs, long), accumulate or
   not, a row stride past n, and every kind of operand values. */
static void test_ukernel_edges(void **state) {
  (void)state;
  check_expected_families();
  static const size_t kcs[] = {2, 4, 6, 10, 30, 258};
  int tested = 0;
  const dlc_q8_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  for (size_t s = 0; s < nfam; s++) {
    const dlc_q8_gemm_family *f = fams[s];
    if (!f) continue;
    assert_non_null(f->name);
    assert_non_null(f->ukernel);
    assert_true(f->mr >= 1 && f->mr <= DLC_LOWP_MR_MAX);
    assert_true(f->nr >= 1 && f->nr <= DLC_LOWP_NR_MAX);
    tested++;
    for (size_t m = 1; m <= f->mr; m++) {
      for (size_t n = 1; n <= f->nr; n++) {
        for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++) {
          for (int acc = 0; acc <= 1; acc++) {
            for (int kind = 0; kind < N_VALUE_KINDS; kind++) {
              uk_case t = {f, m, n, kcs[ki], n + 1 + (m * 7 + n + ki) % 5, acc, kind};
              if ((m + n + ki) % 4 == 0) t.ldc = f->nr + 9;
              run_uk_case(&t);
            }
          }
        }
      }
    }
  }
  assert_true(tested >= 1);
}

/* A row stride far beyond the tile (NCHW rows an image apart). */
static void test_ukernel_wide_ldc(void **state) {
  (void)state;
  const dlc_q8_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  for (size_t s = 0; s < nfam; s++) {
    const dlc_q8_gemm_family *f = fams[s];
    if (!f) continue;
    uk_case t = {f, f->mr, f->nr, 64, 3137, 1, V_RANDOM};
    run_uk_case(&t);
    t.m = f->mr > 1 ? f->mr - 1 : 1, t.n = f->nr / 2 + 1, t.accumulate = 0, t.kind = V_RANDOM_EXTREMES;
    run_uk_case(&t);
  }
}

/* ================================================================ ukernel_ib (B read in place) */

/* How the offset table looks: random starts of either sign; all negative (b just past the last
   run); a few starts repeated (or all the same); all odd (pairs and vectors unaligned); one
   element apart, descending (runs overlapping by all but one element, non-monotonic). */
enum { OFF_RANDOM, OFF_NEGATIVE, OFF_REPEATED, OFF_ODD, OFF_SLIDE, N_OFF_KINDS };

typedef struct ib_case {
  const dlc_q8_gemm_family *f;
  size_t m, kc, ldc;
  int accumulate, kind, off_kind, at_end;
} ib_case;

/* Start (in elements, from the start of the used span) of the run of k pair kp: 0 .. span. */
static void ib_starts(int off_kind, size_t npairs, size_t row, ptrdiff_t *p, ptrdiff_t *base) {
  const ptrdiff_t span = (ptrdiff_t)irand(0, (int64_t)(3 * row + npairs));
  ptrdiff_t pool[3] = {(ptrdiff_t)irand(0, span), (ptrdiff_t)irand(0, span), (ptrdiff_t)irand(0, span)};
  const size_t npool = (size_t)irand(1, 3);
  ptrdiff_t lo = PTRDIFF_MAX, hi = PTRDIFF_MIN;
  for (size_t k = 0; k < npairs; k++) {
    switch (off_kind) {
      case OFF_REPEATED: p[k] = pool[next_u32() % npool]; break;
      case OFF_ODD: p[k] = 2 * (ptrdiff_t)irand(0, span / 2) + 1; break;
      case OFF_SLIDE: p[k] = (ptrdiff_t)(npairs - 1 - k); break;
      default: p[k] = (ptrdiff_t)irand(0, span); break;
    }
    if (p[k] < lo) lo = p[k];
    if (p[k] > hi) hi = p[k];
  }
  for (size_t k = 0; k < npairs; k++) p[k] -= lo; /* the span starts at 0 */
  hi -= lo;
  if (off_kind == OFF_NEGATIVE) *base = hi + 1;
  else if (off_kind == OFF_ODD) *base = hi >= 1 ? 2 * (ptrdiff_t)irand(0, (hi - 1) / 2) + 1 : 1; /* p all even */
  else *base = (ptrdiff_t)irand(0, hi);
}

/* One call: A, boff and the span of B each against a guard page; B's elements outside every run
   hold junk outside the operand range; C's tile (all mr rows, ldc columns) between guards, the
   m x nr corner random (accumulate) or a sentinel (not), all else a sentinel that must stay. */
static void run_ib_case(const ib_case *t) {
  const size_t mr = t->f->mr, nr = t->f->nr, m = t->m, kc = t->kc, ldc = t->ldc, np = kc / 2, row = 2 * nr;
  ptrdiff_t *p = xalloc(np * sizeof(ptrdiff_t)), base;
  ib_starts(t->off_kind, np, row, p, &base);
  if (t->off_kind == OFF_ODD) /* every run an odd number of elements from b */
    for (size_t k = 0; k < np; k++) assert_true(((p[k] - base) & 1) != 0);
  ptrdiff_t hi = 0;
  for (size_t k = 0; k < np; k++) hi = p[k] > hi ? p[k] : hi;
  const size_t span = (size_t)hi + row;

  gbuf ga, go, gb;
  int16_t *a = gbuf_open(&ga, kc * mr * sizeof(int16_t), t->at_end);
  ptrdiff_t *boff = gbuf_open(&go, np * sizeof(ptrdiff_t), !t->at_end);
  int16_t *bspan = gbuf_open(&gb, span * sizeof(int16_t), t->at_end), *b = bspan + base;
  for (size_t k = 0; k < kc; k++)
    for (size_t i = 0; i < mr; i++)
      a[(k / 2) * 2 * mr + 2 * i + k % 2] = i < m ? a_value(t->kind) : (int16_t)irand(-32768, 32767);
  for (size_t e = 0; e < span; e++) bspan[e] = (int16_t)(next_u32() & 1 ? irand(-32768, -20000) : irand(20000, 32767));
  for (size_t k = 0; k < np; k++) {
    boff[k] = p[k] - base;
    for (size_t e = 0; e < row; e++) bspan[p[k] + (ptrdiff_t)e] = b_value(t->kind);
  }
  int16_t *a_copy = xalloc(kc * mr * sizeof(int16_t)), *b_copy = xalloc(span * sizeof(int16_t));
  ptrdiff_t *o_copy = xalloc(np * sizeof(ptrdiff_t));
  memcpy(a_copy, a, kc * mr * sizeof(int16_t));
  memcpy(b_copy, bspan, span * sizeof(int16_t));
  memcpy(o_copy, boff, np * sizeof(ptrdiff_t));

  const size_t total = GUARD + mr * ldc + GUARD;
  int32_t *buf = xalloc(total * sizeof(int32_t)), *c0 = xalloc(m * nr * sizeof(int32_t));
  for (size_t i = 0; i < total; i++) buf[i] = SENTINEL;
  int32_t *c = buf + GUARD;
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < nr; j++)
      c[i * ldc + j] = c0[i * nr + j] = t->accumulate ? (int32_t)irand(-(1 << 28), 1 << 28) : SENTINEL;

  t->f->ukernel_ib(m, kc, a, b, boff, c, ldc, t->accumulate);

  if (memcmp(a, a_copy, kc * mr * sizeof(int16_t)) || memcmp(bspan, b_copy, span * sizeof(int16_t)) ||
      memcmp(boff, o_copy, np * sizeof(ptrdiff_t)))
    fail_msg("%s ukernel_ib m=%zu kc=%zu: wrote to an operand", t->f->name, m, kc);
  for (size_t i = 0; i < total; i++) {
    size_t off = i - GUARD;
    int inside = i >= GUARD && off / ldc < m && off % ldc < nr;
    if (!inside && buf[i] != SENTINEL)
      fail_msg("%s ukernel_ib m=%zu kc=%zu ldc=%zu: wrote outside the tile at offset %td", t->f->name, m, kc, ldc,
               (ptrdiff_t)i - GUARD);
  }
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < nr; j++) {
      int64_t ref = t->accumulate ? c0[i * nr + j] : 0;
      for (size_t k = 0; k < kc; k++)
        ref += (int64_t)a_copy[(k / 2) * 2 * mr + 2 * i + k % 2] * b_copy[p[k / 2] + (ptrdiff_t)(2 * j + k % 2)];
      if (c[i * ldc + j] != ref)
        fail_msg("%s ukernel_ib m=%zu kc=%zu acc=%d kind=%d offsets=%d: C[%zu][%zu] = %d, want %lld", t->f->name,
                 m, kc, t->accumulate, t->kind, t->off_kind, i, j, c[i * ldc + j], (long long)ref);
    }
  }
  gbuf_close(&ga), gbuf_close(&go), gbuf_close(&gb);
  free(p), free(a_copy), free(b_copy), free(o_copy), free(buf), free(c0);
}

/* Every m, one pair to past the unroll and long, accumulate or not, every kind of offset table
   and of operand values, A / boff / B against guard pages on either side, ldc past nr. */
static void test_ukernel_ib(void **state) {
  (void)state;
  check_expected_families();
  static const size_t kcs[] = {2, 4, 6, 8, 10, 30, 256, 258};
  int tested = 0;
  const dlc_q8_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  for (size_t s = 0; s < nfam; s++) {
    const dlc_q8_gemm_family *f = fams[s];
    if (!f || !f->ukernel_ib) continue;
    tested++;
    for (size_t m = 1; m <= f->mr; m++)
      for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++)
        for (int acc = 0; acc <= 1; acc++)
          for (int ok = 0; ok < N_OFF_KINDS; ok++)
            for (int kind = 0; kind < N_VALUE_KINDS; kind++) {
              ib_case t = {f, m, kcs[ki], f->nr + 1 + (m * 3 + ki + (size_t)kind) % 7, acc, kind, ok,
                           (int)((m + ki + (size_t)ok + (size_t)kind) & 1)};
              run_ib_case(&t);
            }
    /* a row stride far beyond the tile, and one exactly nr */
    for (int acc = 0; acc <= 1; acc++) {
      ib_case t = {f, f->mr, 64, 3137, acc, V_RANDOM_EXTREMES, OFF_RANDOM, acc};
      run_ib_case(&t);
      t.m = 1, t.ldc = f->nr, t.off_kind = OFF_ODD;
      run_ib_case(&t);
    }
  }
  /* the generic family always has one; where this build has written AVX2's, it must be there */
  assert_non_null(TABLE_FAMILY(DLCONV_ISA_GENERIC, q8_gemm)->ukernel_ib);
#if defined(__x86_64__) || defined(__i386__)
  if (dlconv_isa_available(DLCONV_ISA_AVX2) == 1) assert_non_null(TABLE_FAMILY(DLCONV_ISA_AVX2, q8_gemm)->ukernel_ib);
#endif
  assert_true(tested >= 1);
}

/* ================================================================ requantising store */

/* quant.h's formula, one double operation at a time: sum, product, clamp to [lo, hi], round half
   to even, add the zero point, saturate to the output type. */
static int32_t ref_requant(int32_t acc, int32_t bias, double mult, const dlc_q8_params *q) {
  double v = (double)((int64_t)acc + (int64_t)bias);
  v = v * mult;
  if (v < q->lo) v = q->lo;
  if (v > q->hi) v = q->hi;
  double r = rint(v);
  double t = r + (double)q->y_zero_point;
  if (t < (double)q->y_min) t = (double)q->y_min;
  if (t > (double)q->y_max) t = (double)q->y_max;
  return (int32_t)t;
}

enum { A_RANDOM_FULL, A_EXTREMES, A_SMALL, A_TIES, A_NEAR_OUTPUT, N_ACC_KINDS };
/* M_NEAR_HALF: 0.5 +- 2^-30, which fp32 rounds to 0.5: with odd acc + bias the double product
   lies just off a tie, the fp32 one on it, so the store must leave the fp32 screen (quant.h). */
enum { M_RANDOM_SMALL, M_HALF, M_ONE, M_LARGE, M_NEAR_HALF, N_MULT_KINDS };

static const int32_t int_extremes[] = {INT32_MIN, INT32_MIN + 1, -1, 0, 1, INT32_MAX - 1, INT32_MAX};
#define N_INT_EXTREMES (sizeof int_extremes / sizeof int_extremes[0])

typedef struct store_case {
  int is_signed, per_column, acc_kind, mult_kind;
  int32_t zp;
  double lo, hi;
  int derived; /* the plan's derived fields (dlc_q8_derive): the s32 bias path and the fp32 screen */
} store_case;

/* |acc| bound of the acc kinds the derived stores run with (A_RANDOM_FULL, A_EXTREMES are not). */
#define DERIVED_ACC_MAX 2001

/* Channel values differ from channel to channel, so the store using a wrong channel fails. */
static void fill_channels(const store_case *sc, size_t nch, double *mult, int32_t *bias) {
  for (size_t c = 0; c < nch; c++) {
    switch (sc->mult_kind) {
      case M_RANDOM_SMALL: mult[c] = ldexp(1.0 + (double)next_u32() / 4294967296.0, -(int)irand(4, 24)); break;
      case M_HALF: mult[c] = 0.5; break;
      case M_ONE: mult[c] = 1.0; break;
      case M_NEAR_HALF: mult[c] = 0.5 + (c % 2 ? 0x1p-30 : -0x1p-30); break;
      default: mult[c] = ldexp(1.0 + (double)next_u32() / 4294967296.0, (int)irand(0, 40)); break;
    }
    switch (sc->acc_kind) {
      case A_RANDOM_FULL: bias[c] = (int32_t)irand(INT32_MIN, INT32_MAX); break;
      case A_EXTREMES: bias[c] = int_extremes[next_u32() % N_INT_EXTREMES]; break;
      case A_TIES: bias[c] = (int32_t)(2 * irand(-500, 500)); break; /* even: acc + bias stays odd */
      case A_NEAR_OUTPUT: bias[c] = (int32_t)irand(-3, 3); break;
      default: bias[c] = (int32_t)irand(-1000, 1000); break;
    }
  }
}

static int32_t acc_value(int kind) {
  switch (kind) {
    case A_RANDOM_FULL: return (int32_t)irand(INT32_MIN, INT32_MAX);
    case A_EXTREMES: return int_extremes[next_u32() % N_INT_EXTREMES];
    case A_TIES: return (int32_t)(2 * irand(-1000, 1000) + 1);
    case A_NEAR_OUTPUT: return (int32_t)irand(-300, 300);
    default: return (int32_t)irand(-2000, 2000);
  }
}

/* Runs the store for every length 0..maxn at two channel offsets, with guard bytes around y. */
static void run_store_case(const dlc_q8_gemm_family *f, const store_case *sc) {
  /* every length to 45 (vector bodies and tails), then the 64-output blocks of the wide screen */
  static const size_t long_lens[] = {63, 64, 65, 100, 128, 129, 191, 200};
  enum { MAXN = 200, SHORT_MAXN = 45, N_LONG = sizeof long_lens / sizeof long_lens[0], C0_MAX = 5 };
  const size_t nch = MAXN + C0_MAX;
  double *mult = xalloc(nch * sizeof(double));
  int32_t *bias = xalloc(nch * sizeof(int32_t));
  int32_t *accbuf = xalloc((MAXN + 3) * sizeof(int32_t));
  uint8_t *ybuf = xalloc(MAXN + 2 * GUARD);
  fill_channels(sc, nch, mult, bias);
  dlc_q8_params q;
  memset(&q, 0, sizeof q);
  q.x_zero_point = 0;
  q.y_zero_point = sc->zp;
  q.y_min = sc->is_signed ? -128 : 0;
  q.y_max = sc->is_signed ? 127 : 255;
  q.is_signed = sc->is_signed;
  q.lo = sc->lo, q.hi = sc->hi;
  q.mult = mult, q.bias = bias;
  float *mult_f = xalloc(nch * sizeof(float));
  if (sc->derived) {
    dlc_q8_derive(&q, DERIVED_ACC_MAX, nch, mult_f);
    assert_true(q.bias_s32);
    assert_true(q.mult_f != NULL || q.lo_sat > q.hi_sat);
  }

  for (size_t li = 0; li <= SHORT_MAXN + N_LONG; li++) {
    const size_t n = li <= SHORT_MAXN ? li : long_lens[li - SHORT_MAXN - 1];
    for (size_t c0 = 0; c0 <= C0_MAX; c0 += C0_MAX) {
      const int32_t *acc = accbuf + n % 3; /* unaligned runs too */
      for (size_t j = 0; j < n; j++) accbuf[n % 3 + j] = acc_value(sc->acc_kind);
      memset(ybuf, GUARD_BYTE, MAXN + 2 * GUARD);
      uint8_t *y = ybuf + GUARD;
      f->store(n, acc, &q, c0, sc->per_column, y);
      for (size_t i = 0; i < MAXN + 2 * GUARD; i++) {
        if ((i < GUARD || i >= GUARD + n) && ybuf[i] != GUARD_BYTE)
          fail_msg("%s store n=%zu c0=%zu: wrote outside y at byte %td", f->name, n, c0, (ptrdiff_t)i - GUARD);
      }
      for (size_t j = 0; j < n; j++) {
        size_t c = sc->per_column ? c0 + j : c0;
        int32_t want = ref_requant(acc[j], bias[c], mult[c], &q);
        int32_t got = sc->is_signed ? (int32_t)(int8_t)y[j] : (int32_t)y[j];
        if (got != want)
          fail_msg("%s store signed=%d per_column=%d zp=%d lo=%g hi=%g derived=%d n=%zu c0=%zu: y[%zu] = %d, "
                   "want %d (acc %d, bias %d, mult %.17g)",
                   f->name, sc->is_signed, sc->per_column, sc->zp, sc->lo, sc->hi, sc->derived, n, c0, j, got, want,
                   acc[j], bias[c], mult[c]);
      }
    }
  }
  free(mult), free(mult_f), free(bias), free(accbuf), free(ybuf);
}

/* The reference itself on exact ties: with mult 0.5 and odd acc + bias, v = s / 2 is k + 0.5 and
   must go to the even neighbour; computed here in integers only. */
static void test_reference_ties(void **state) {
  (void)state;
  assert_int_equal(fegetround(), FE_TONEAREST);
  dlc_q8_params q;
  memset(&q, 0, sizeof q);
  q.y_min = INT32_MIN, q.y_max = INT32_MAX, q.lo = -INFINITY, q.hi = INFINITY;
  for (int64_t s = -1001; s <= 1001; s += 2) {
    int64_t k = (s - 1) / 2; /* s = 2k + 1 exactly */
    int64_t want = k % 2 == 0 ? k : k + 1;
    assert_int_equal(ref_requant((int32_t)s, 0, 0.5, &q), want);
  }
}

static void test_store(void **state) {
  (void)state;
  check_expected_families();
  static const int32_t zps[] = {0, 128, 37, -51, 255};
  static const double bounds[][2] = {
      {-INFINITY, INFINITY}, {0.0, INFINITY}, {-INFINITY, 6.5}, {-20.5, 17.5}, {-1e6, 3e5}, {2.5, 2.5},
  };
  int tested = 0;
  const dlc_q8_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  for (size_t s = 0; s < nfam; s++) {
    const dlc_q8_gemm_family *f = fams[s];
    if (!f) continue;
    assert_non_null(f->store);
    tested++;
    for (int sg = 0; sg <= 1; sg++) {
      for (int pc = 0; pc <= 1; pc++) {
        for (size_t zi = 0; zi < sizeof zps / sizeof zps[0]; zi++) {
          for (size_t bi = 0; bi < sizeof bounds / sizeof bounds[0]; bi++) {
            for (int ak = 0; ak < N_ACC_KINDS; ak++) {
              for (int mk = 0; mk < N_MULT_KINDS; mk++) {
                /* ties only mean something with mult 0.5 (or next to it) */
                if ((ak == A_TIES) != (mk == M_HALF || mk == M_NEAR_HALF)) continue;
                for (int dv = 0; dv <= 1; dv++) {
                  if (dv && (ak == A_RANDOM_FULL || ak == A_EXTREMES)) continue;
                  store_case sc = {sg, pc, ak, mk, zps[zi], bounds[bi][0], bounds[bi][1], dv};
                  run_store_case(f, &sc);
                }
              }
            }
          }
        }
      }
    }
  }
  assert_true(tested >= 1);
}

/* Ties, bit for bit and by value: v = k + 0.5 for k around the output range, every zero point,
   unbounded, so half-even decides the byte. Every lane a tie, or one in 29 among exact integers
   (a 64-output block of the wide screen with one lane to send back, the others kept). */
static void test_store_ties_exact(void **state) {
  (void)state;
  const dlc_q8_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  for (size_t s = 0; s < nfam; s++) {
    const dlc_q8_gemm_family *f = fams[s];
    if (!f) continue;
    enum { N = 200 };
    int32_t acc[N], bias[N];
    double mult[N];
    uint8_t y[N];
    for (int sparse = 0; sparse <= 1; sparse++) {
      for (int sg = 0; sg <= 1; sg++) {
        for (int pc = 0; pc <= 1; pc++) {
          for (int dv = 0; dv <= 1; dv++) {
            dlc_q8_params q;
            memset(&q, 0, sizeof q);
            q.is_signed = sg, q.y_min = sg ? -128 : 0, q.y_max = sg ? 127 : 255;
            q.y_zero_point = sg ? 0 : 128;
            q.lo = -INFINITY, q.hi = INFINITY, q.mult = mult, q.bias = bias;
            float mult_f[N];
            for (int j = 0; j < N; j++) mult[j] = 0.5, bias[j] = pc ? 2 * (j % 5) : 0;
            if (dv) {
              dlc_q8_derive(&q, 1024, N, mult_f); /* the s32 bias path, the screen on every tie */
              assert_true(q.screen_wide);
            }
            for (int base = -300; base <= 300; base += N / 2) {
              for (int j = 0; j < N; j++) {
                const int tie = !sparse || j % 29 == 3;
                acc[j] = 2 * (base + j) + tie - (pc ? bias[j] : 0); /* acc + bias = 2 (base + j) (+ 1) */
              }
              f->store(N, acc, &q, 0, pc, y);
              for (int j = 0; j < N; j++) {
                const int tie = !sparse || j % 29 == 3;
                int64_t k = base + j, r = !tie || k % 2 == 0 ? k : k + 1, t = r + q.y_zero_point;
                t = t < q.y_min ? q.y_min : t > q.y_max ? q.y_max : t;
                int32_t got = sg ? (int8_t)y[j] : y[j];
                if (got != t)
                  fail_msg("%s %s %lld%s signed=%d pc=%d derived=%d: got %d, want %lld", f->name,
                           tie ? "tie" : "value", (long long)k, tie ? ".5" : "", sg, pc, dv, got, (long long)t);
              }
            }
          }
        }
      }
    }
  }
}

/* pack_pairs: every length 0..70 (vector bodies and tails), u8 and s8 at the ends of their
   range, zero points 0, 128, odd and negative; exact pairs, nothing written past 2n. */
static void test_pack_pairs(void **state) {
  (void)state;
  static const int32_t zps[] = {0, 128, 37, -51, 255, -128};
  const dlc_q8_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  for (size_t s = 0; s < nfam; s++) {
    const dlc_q8_gemm_family *f = fams[s];
    if (!f) continue;
    assert_non_null(f->pack_pairs);
    for (int is_signed = 0; is_signed < 2; is_signed++)
      for (size_t z = 0; z < sizeof zps / sizeof zps[0]; z++)
        for (size_t n = 0; n <= 70; n++) {
          uint8_t a[80], b[80];
          int16_t out[2 * 80 + 8];
          for (size_t j = 0; j < 80; j++) {
            a[j] = (uint8_t)(j * 37u + n + z);
            b[j] = (uint8_t)(j == 1 ? 0x80 : j == 2 ? 0x7f : j == 3 ? 0xff : j * 91u + 5u * n);
          }
          for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) out[i] = 0x5a5a;
          f->pack_pairs(n, a, b, zps[z], is_signed, out);
          for (size_t i = 0; i < sizeof out / sizeof out[0]; i++) {
            int32_t want = 0x5a5a;
            if (i < 2 * n) {
              const uint8_t v = (i & 1) ? b[i / 2] : a[i / 2];
              want = (is_signed ? (int32_t)(int8_t)v : (int32_t)v) - zps[z];
            }
            if (out[i] != want)
              fail_msg("%s pack_pairs n=%zu %s zp=%d: element %zu is %d, want %d", f->name, n, is_signed ? "s8" : "u8",
                       zps[z], i, out[i], want);
          }
        }
  }
}

/* widen_run: steps 1 (contiguous), 2 (stride-2 columns) and 3, 7 (NHWC pixels), every length 0..80
   (the vector blocks, the overlapping last block, the 8-wide pair, scalar), u8 and s8 over their
   whole range, several zero points; the run's first and last elements at the edges of guard
   pages, so a read before src[0] or past src[(n - 1) * step] faults; dst fenced by sentinels. */
static void test_widen_run(void **state) {
  (void)state;
  static const int32_t zps[] = {0, 128, 37, -51, 255, -128};
  static const size_t steps[] = {1, 2, 3, 7};
  enum { NMAX = 80, FENCE = 8 };
  size_t cases = 0;
  const dlc_q8_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  for (size_t s = 0; s < nfam; s++) {
    const dlc_q8_gemm_family *f = fams[s];
    if (!f || !f->widen_run) continue;
    for (size_t si = 0; si < sizeof steps / sizeof steps[0]; si++)
      for (size_t n = 0; n <= NMAX; n++)
        for (int at_end = 0; at_end <= 1; at_end++)
          for (int sg = 0; sg <= 1; sg++) {
            const size_t step = steps[si], bytes = n ? (n - 1) * step + 1 : 0;
            const int32_t zp = zps[(n + si + (size_t)sg) % (sizeof zps / sizeof zps[0])];
            gbuf g;
            unsigned char *src = gbuf_open(&g, bytes, at_end);
            for (size_t b = 0; b < bytes; b++) src[b] = (unsigned char)next_u32();
            int16_t dst[NMAX + 2 * FENCE];
            for (size_t i = 0; i < NMAX + 2 * FENCE; i++) dst[i] = (int16_t)0x5A5A;
            f->widen_run(n, src, step, zp, sg, dst + FENCE);
            for (size_t i = 0; i < NMAX + 2 * FENCE; i++) {
              if (i >= FENCE && i < FENCE + n) {
                const size_t j = i - FENCE;
                const int32_t v = sg ? (int32_t)(int8_t)src[j * step] : (int32_t)src[j * step];
                if (dst[i] != (int16_t)(v - zp))
                  fail_msg("%s widen_run n=%zu step=%zu signed=%d zp=%d: dst[%zu] = %d, want %d", f->name, n, step,
                           sg, zp, j, dst[i], v - zp);
              } else if (dst[i] != (int16_t)0x5A5A) {
                fail_msg("%s widen_run n=%zu step=%zu: wrote outside dst at %td", f->name, n, step,
                         (ptrdiff_t)i - FENCE);
              }
            }
            gbuf_close(&g);
            cases++;
          }
  }
  print_message("[ widen_run ] %zu cases\n", cases);
  assert_true(cases > 0);
}

int main(void) {
  rng_state = 0x9E3779B97F4A7C15ull;
  return RUN_TESTS(test_ukernel_edges, test_ukernel_wide_ldc, test_ukernel_ib, test_reference_ties, test_store,
                   test_store_ties_exact, test_pack_pairs, test_widen_run);
}
