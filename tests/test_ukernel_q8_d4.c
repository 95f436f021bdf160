/* test_ukernel_q8_d4.c - the int8 micro-kernels on u8 x s8 dot products of four (dlc_q8d4_gemm_family,
 * src/gemm_im2col/lowp_gemm_ukernel.h) of every ISA table this machine runs, against references
 * written here from the contract's index formulas alone: the tile product in int64 at every (m, n)
 * edge (A s8, B u8, in units of four along k) with A, B and C against guard pages and sentinels
 * around C; ukernel_ib (B read in place through an offset table in 2-byte units) with B, boff, A
 * and C against guard pages; and pack_quads byte for byte. Where no table has a family (no
 * AVX512-VNNI) every test says so and skips, and so does the program (exit 77). */
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
#include "support/fault.h"
#include "support/guard_pages.h"
#include "support/kernel_tables.h"
#include "support/rng.h"
#include "support/skip.h"

#ifdef HAVE_GUARD_PAGES
#include <sys/mman.h>
#endif

#define GUARD 37
#define SENTINEL ((int32_t)0x5A5A5A5A)
#define GUARD_BYTE 0xA5

/* Where this build has the AVX512-VNNI family and this CPU runs it, the avx512 table must carry it
   (src/arch/<isa>/config.c), so losing it from the table fails rather than skips; and the avx2 table must not
   (vpdpbusd on zmm is EVEX: a caller capping at avx2 must not get it). */
static void check_expected_families(void) {
#if defined(DLC_HAVE_AVX512VNNI)
  if (dlc_cpu()->avx512_vnni && dlc_kernels_for(DLCONV_ISA_AVX512))
    assert_ptr_equal(TABLE_FAMILY(DLCONV_ISA_AVX512, q8_d4), &dlc_q8d4_gemm__avx512vnni);
  if (TABLE_FAMILY(DLCONV_ISA_AVX2, q8_d4)) assert_ptr_not_equal(TABLE_FAMILY(DLCONV_ISA_AVX2, q8_d4), &dlc_q8d4_gemm__avx512vnni);
#endif
}

/* The families under test, each once: the one each table gives this CPU, plus the VNNI family
   wherever this CPU runs it. */
static size_t families(const dlc_q8d4_gemm_family *out[MAX_FAMILIES]) {
  size_t n = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) ADD_FAMILY(out, n, kt->q8_d4);
#if defined(DLC_HAVE_AVX512VNNI)
  if (kernel_table_of(DLCONV_ISA_AVX512) && dlc_cpu()->avx512_vnni) ADD_FAMILY(out, n, &dlc_q8d4_gemm__avx512vnni);
#endif
  for (size_t i = 0; i < n; i++) {
    const dlc_q8d4_gemm_family *f = out[i];
    assert_non_null(f->name);
    assert_non_null(f->ukernel);
    assert_non_null(f->ukernel_ib);
    assert_non_null(f->pack_quads);
    assert_true(f->mr >= 1 && f->mr <= DLC_LOWP_MR_MAX);
    assert_true(f->nr >= 1 && f->nr <= DLC_LOWP_NR_MAX);
  }
  static int said;
  if (!said) {
    said = 1;
    printf("q8_d4 families under test:");
    for (size_t i = 0; i < n; i++) printf(" %s (%zux%zu)", out[i]->name, out[i]->mr, out[i]->nr);
    printf("%s\n", n ? "" : " none (no table of this CPU has one: the q8_d4 tests are skipped)");
  }
  return n;
}

/* The test ran no case: it skips (and where every test does, so does the program). */
static void say_skipped(const char *test) { skip_test(test, "no q8_d4 family on this CPU (needs AVX512-VNNI)"); }

/* ================================================================ operand values */

/* A is s8 ([-128, 127]), B u8 ([0, 255]): the largest products are -128 * 255 and 127 * 255. */
enum { V_RANDOM, V_MAX_POSITIVE, V_MAX_NEGATIVE, V_RANDOM_EXTREMES, V_HIGH_BITS, N_VALUE_KINDS };

static int8_t a_value(int kind) {
  switch (kind) {
    case V_RANDOM: return (int8_t)irand(-128, 127);
    case V_MAX_POSITIVE: return 127;
    case V_MAX_NEGATIVE: return -128;
    case V_RANDOM_EXTREMES: return next_u32() & 1 ? -128 : 127;
    default: return (int8_t)irand(-128, -100); /* bytes >= 0x80: signed handling decides */
  }
}

static uint8_t b_value(int kind) {
  switch (kind) {
    case V_RANDOM: return (uint8_t)irand(0, 255);
    case V_MAX_POSITIVE:
    case V_MAX_NEGATIVE: return 255;
    case V_RANDOM_EXTREMES: return next_u32() & 1 ? 0 : 255;
    default: return (uint8_t)irand(128, 255); /* bytes >= 0x80: unsigned handling decides */
  }
}

/* ================================================================ C buffers */

/* C for a tile of rows x w (row stride ldc) inside a sentinel-filled buffer of ints: at_end puts
   the tile's last element right before a guard page (GUARD sentinels before the tile); otherwise
   the tile's first element is right after a guard page and the buffer runs on for cover_rows rows
   of ldc plus GUARD sentinels (cover_rows >= rows: the rows a kernel must leave alone). */
typedef struct cbuf {
  gbuf g;
  int32_t *buf, *c;
  size_t total, pre;
} cbuf;

static void cbuf_open(cbuf *cb, size_t rows, size_t w, size_t ldc, size_t cover_rows, int at_end) {
  if (at_end) {
    cb->pre = GUARD;
    cb->total = GUARD + (rows - 1) * ldc + w;
  } else {
    cb->pre = 0;
    cb->total = cover_rows * ldc + GUARD;
  }
  cb->buf = gbuf_open(&cb->g, cb->total * sizeof(int32_t), at_end);
  for (size_t i = 0; i < cb->total; i++) cb->buf[i] = SENTINEL;
  cb->c = cb->buf + cb->pre;
}

/* Fails on the first int outside the rows x w tile that is no longer the sentinel. */
static void cbuf_check_outside(const cbuf *cb, size_t rows, size_t w, size_t ldc, const char *what) {
  for (size_t i = 0; i < cb->total; i++) {
    const ptrdiff_t off = (ptrdiff_t)i - (ptrdiff_t)cb->pre;
    const int inside = off >= 0 && (size_t)off / ldc < rows && (size_t)off % ldc < w;
    if (!inside && cb->buf[i] != SENTINEL)
      fail_msg("%s: wrote outside the %zu x %zu tile (ldc %zu) at offset %td (row %td, column %td): %d", what,
               rows, w, ldc, off, off >= 0 ? off / (ptrdiff_t)ldc : -1,
               off >= 0 ? off % (ptrdiff_t)ldc : off, cb->buf[i]);
  }
}

/* ================================================================ micro-kernel */

typedef struct uk_case {
  const dlc_q8d4_gemm_family *f;
  size_t m, n, kc, ldc;
  int accumulate, kind;
  int at_end;       /* A, B and C against a guard page after them (1) or before them (0) */
  int32_t c_range;  /* |initial C| for accumulate */
} uk_case;

/* One call. A ((kc/4) x mr x 4 s8) and B ((kc/4) x nr x 4 u8) exactly sized against guard pages,
   their padding (rows >= m of A, columns >= n of B) random; C's m x n corner compared with an int64
   reference and every other int of its buffer with the sentinel; A and B must be left as they were. */
static void run_uk_case(const uk_case *t) {
  const size_t mr = t->f->mr, nr = t->f->nr, m = t->m, n = t->n, kc = t->kc, ldc = t->ldc;
  const size_t a_bytes = (kc / 4) * mr * 4, b_bytes = (kc / 4) * nr * 4;
  assert_true(kc % 4 == 0 && kc >= 4);
  gbuf ga, gb;
  int8_t *a = gbuf_open(&ga, a_bytes, t->at_end);
  uint8_t *b = gbuf_open(&gb, b_bytes, !t->at_end ^ (kc % 8 == 0)); /* B on the other side half the time */
  for (size_t k = 0; k < kc; k++) {
    for (size_t i = 0; i < mr; i++) a[(k / 4) * 4 * mr + 4 * i + k % 4] = i < m ? a_value(t->kind) : (int8_t)next_u32();
    for (size_t j = 0; j < nr; j++) b[(k / 4) * 4 * nr + 4 * j + k % 4] = j < n ? b_value(t->kind) : (uint8_t)next_u32();
  }
  int8_t *a_copy = xalloc_slack(a_bytes);
  uint8_t *b_copy = xalloc_slack(b_bytes);
  memcpy(a_copy, a, a_bytes);
  memcpy(b_copy, b, b_bytes);

  cbuf cb;
  cbuf_open(&cb, m, n, ldc, m, t->at_end);
  int32_t *c = cb.c, *c0 = xalloc_slack(m * n * sizeof(int32_t));
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      c0[i * n + j] = t->accumulate ? (int32_t)irand(-t->c_range, t->c_range) : SENTINEL;
      c[i * ldc + j] = c0[i * n + j];
    }

  t->f->ukernel(m, n, kc, a, b, c, ldc, t->accumulate);

  if (memcmp(a, a_copy, a_bytes) || memcmp(b, b_copy, b_bytes))
    fail_msg("%s ukernel m=%zu n=%zu kc=%zu: wrote to an operand", t->f->name, m, n, kc);
  char what[160];
  snprintf(what, sizeof what, "%s ukernel m=%zu n=%zu kc=%zu acc=%d", t->f->name, m, n, kc, t->accumulate);
  cbuf_check_outside(&cb, m, n, ldc, what);
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < n; j++) {
      int64_t ref = t->accumulate ? c0[i * n + j] : 0;
      for (size_t k = 0; k < kc; k++)
        ref += (int64_t)a_copy[(k / 4) * 4 * mr + 4 * i + k % 4] * (int64_t)b_copy[(k / 4) * 4 * nr + 4 * j + k % 4];
      if (c[i * ldc + j] != ref)
        fail_msg("%s ukernel m=%zu n=%zu kc=%zu ldc=%zu acc=%d kind=%d at_end=%d: C[%zu][%zu] = %d, want %lld "
                 "(a[i, 0..3] = %d %d %d %d, b[0..3, j] = %u %u %u %u)",
                 t->f->name, m, n, kc, ldc, t->accumulate, t->kind, t->at_end, i, j, c[i * ldc + j], (long long)ref,
                 a_copy[4 * i], a_copy[4 * i + 1], a_copy[4 * i + 2], a_copy[4 * i + 3], b_copy[4 * j],
                 b_copy[4 * j + 1], b_copy[4 * j + 2], b_copy[4 * j + 3]);
    }
  }
  gbuf_close(&ga), gbuf_close(&gb), gbuf_close(&cb.g);
  free(a_copy), free(b_copy), free(c0);
}

/* Every (m, n) edge, kc from one unit of four to long (516 = 129 units, an odd count past any
   unroll), accumulate or not, a row stride past n (sometimes past nr), every kind of operand
   values, the operands against guard pages on either side. */
static void test_ukernel_edges(void **state) {
  (void)state;
  check_expected_families();
  static const size_t kcs[] = {4, 8, 12, 20, 64, 516};
  const dlc_q8d4_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  if (!nfam) {
    say_skipped("ukernel edges");
    return;
  }
  size_t cases = 0;
  for (size_t s = 0; s < nfam; s++) {
    const dlc_q8d4_gemm_family *f = fams[s];
    for (size_t m = 1; m <= f->mr; m++)
      for (size_t n = 1; n <= f->nr; n++)
        for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++)
          for (int acc = 0; acc <= 1; acc++)
            for (int kind = 0; kind < N_VALUE_KINDS; kind++) {
              uk_case t = {f, m, n, kcs[ki], n + 1 + (m * 7 + n + ki) % 5, acc, kind, (acc + kind + (int)m) & 1,
                           1 << 28};
              if ((m + n + ki) % 4 == 0) t.ldc = f->nr + 9;
              if ((m + n + ki + (size_t)kind) % 11 == 0) t.ldc = n; /* rows back to back */
              run_uk_case(&t);
              cases++;
            }
  }
  print_message("[ ukernel edges ] %zu cases\n", cases);
}

/* A row stride far beyond the tile (NCHW rows an image apart), and the longest K the contract
   allows (K * 255 * 128 < 2^31: 65792 = 2^16 + 256), all products the extreme of either sign. */
static void test_ukernel_wide_ldc(void **state) {
  (void)state;
  const dlc_q8d4_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  if (!nfam) {
    say_skipped("ukernel wide ldc");
    return;
  }
  for (size_t s = 0; s < nfam; s++) {
    const dlc_q8d4_gemm_family *f = fams[s];
    for (int at_end = 0; at_end <= 1; at_end++) {
      uk_case t = {f, f->mr, f->nr, 64, 3137, 1, V_RANDOM, at_end, 1 << 28};
      run_uk_case(&t);
      t.m = f->mr > 1 ? f->mr - 1 : 1, t.n = f->nr / 2 + 1, t.accumulate = 0, t.kind = V_RANDOM_EXTREMES;
      run_uk_case(&t);
      t.m = 1, t.n = 1, t.ldc = 100003, t.kind = V_HIGH_BITS, t.accumulate = 1;
      run_uk_case(&t);
      t.m = f->mr, t.n = f->nr > 1 ? f->nr - 1 : 1, t.ldc = 4099, t.kind = V_RANDOM;
      run_uk_case(&t);
    }
    static const size_t long_kcs[] = {65792, 65788};
    for (size_t ki = 0; ki < 2; ki++)
      for (int kind = V_MAX_POSITIVE; kind <= V_MAX_NEGATIVE; kind++)
        for (int acc = 0; acc <= 1; acc++) {
          /* -128 * 255 * 65792 = -2147450880: room for |C0| <= 32767 before s32 ends */
          uk_case t = {f, f->mr, f->nr, long_kcs[ki], f->nr + 3, acc, kind, acc, 30000};
          run_uk_case(&t);
        }
  }
}

/* ================================================================ ukernel_ib (B read in place) */

/* How the offset table looks (offsets in 2-byte units; each run is 4 * nr bytes = 2 * nr units):
   random starts of either sign; all negative (b just past the last run); a few starts repeated
   (or all the same); all odd (runs at 2 mod 4 bytes from b, unaligned); one unit apart,
   descending (runs overlapping by all but two bytes); strictly decreasing with random gaps;
   every run at the same start. */
enum { OFF_RANDOM, OFF_NEGATIVE, OFF_REPEATED, OFF_ODD, OFF_SLIDE, OFF_DECREASING, OFF_ALL_LAST, N_OFF_KINDS };

/* Starts of the runs (in units, from the start of the used span, the lowest 0) and the position of
   b in that span (base; boff[k] = p[k] - base). */
static void ib_starts(int off_kind, size_t nunits, size_t row, ptrdiff_t *p, ptrdiff_t *base) {
  const ptrdiff_t span = (ptrdiff_t)irand(0, (int64_t)(3 * row + nunits));
  ptrdiff_t pool[3] = {(ptrdiff_t)irand(0, span), (ptrdiff_t)irand(0, span), (ptrdiff_t)irand(0, span)};
  const size_t npool = (size_t)irand(1, 3);
  ptrdiff_t lo = PTRDIFF_MAX, hi = PTRDIFF_MIN, at = 0;
  for (size_t k = 0; k < nunits; k++) {
    switch (off_kind) {
      case OFF_REPEATED: p[k] = pool[next_u32() % npool]; break;
      case OFF_ODD: p[k] = 2 * (ptrdiff_t)irand(0, span / 2) + 1; break;
      case OFF_SLIDE: p[k] = (ptrdiff_t)(nunits - 1 - k); break;
      case OFF_DECREASING: at -= (ptrdiff_t)irand(1, (int64_t)row + 3); p[k] = at; break;
      case OFF_ALL_LAST: p[k] = 5; break;
      default: p[k] = (ptrdiff_t)irand(0, span); break;
    }
    if (p[k] < lo) lo = p[k];
    if (p[k] > hi) hi = p[k];
  }
  for (size_t k = 0; k < nunits; k++) p[k] -= lo; /* the span starts at 0 */
  hi -= lo;
  if (off_kind == OFF_NEGATIVE) *base = hi + (ptrdiff_t)irand(1, 3);
  else if (off_kind == OFF_ODD) *base = hi >= 1 ? 2 * (ptrdiff_t)irand(0, (hi - 1) / 2) + 1 : 1; /* p all even */
  else *base = (ptrdiff_t)irand(0, hi);
}

typedef struct ib_case {
  const dlc_q8d4_gemm_family *f;
  size_t m, kc, ldc;
  int accumulate, kind, off_kind, at_end;
} ib_case;

/* One call: the span of B (from its lowest run start to the end of its highest run, or to b when
   b lies past every run) against a guard page after (at_end: the highest run ends exactly at the
   page) or before (the lowest run starts at the page); A and boff against guard pages; bytes of B
   outside every run random. C: at_end the tile (m x nr) ends at a guard page, so rows m..mr-1
   would fault; otherwise the buffer covers all mr rows and those must keep the sentinel. */
static void run_ib_case(const ib_case *t) {
  const size_t mr = t->f->mr, nr = t->f->nr, m = t->m, kc = t->kc, ldc = t->ldc, nu = kc / 4, row = 2 * nr;
  assert_true(kc % 4 == 0 && kc >= 4);
  ptrdiff_t *p = xalloc_slack(nu * sizeof(ptrdiff_t)), base;
  ib_starts(t->off_kind, nu, row, p, &base);
  ptrdiff_t hi = 0;
  for (size_t k = 0; k < nu; k++) hi = p[k] > hi ? p[k] : hi;
  size_t span_units = (size_t)hi + row;
  if ((size_t)base > span_units) span_units = (size_t)base; /* b itself stays inside the allocation */
  const size_t span = 2 * span_units, a_bytes = nu * mr * 4;

  gbuf ga, go, gb;
  int8_t *a = gbuf_open(&ga, a_bytes, !t->at_end);
  ptrdiff_t *boff = gbuf_open(&go, nu * sizeof(ptrdiff_t), !t->at_end);
  uint8_t *bspan = gbuf_open(&gb, span, t->at_end), *b = bspan + 2 * base;
  for (size_t k = 0; k < kc; k++)
    for (size_t i = 0; i < mr; i++)
      a[(k / 4) * 4 * mr + 4 * i + k % 4] = i < m ? a_value(t->kind) : (int8_t)next_u32();
  for (size_t e = 0; e < span; e++) bspan[e] = (uint8_t)next_u32();
  for (size_t k = 0; k < nu; k++) {
    boff[k] = p[k] - base;
    for (size_t e = 0; e < 4 * nr; e++) bspan[2 * p[k] + (ptrdiff_t)e] = b_value(t->kind);
  }
  if (t->off_kind == OFF_ODD)
    for (size_t k = 0; k < nu; k++) assert_true((boff[k] & 1) != 0);
  if (t->off_kind == OFF_NEGATIVE)
    for (size_t k = 0; k < nu; k++) assert_true(boff[k] < 0);
  int8_t *a_copy = xalloc_slack(a_bytes);
  uint8_t *b_copy = xalloc_slack(span);
  ptrdiff_t *o_copy = xalloc_slack(nu * sizeof(ptrdiff_t));
  memcpy(a_copy, a, a_bytes);
  memcpy(b_copy, bspan, span);
  memcpy(o_copy, boff, nu * sizeof(ptrdiff_t));

  cbuf cb;
  cbuf_open(&cb, m, nr, ldc, mr, t->at_end);
  int32_t *c = cb.c, *c0 = xalloc_slack(m * nr * sizeof(int32_t));
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < nr; j++)
      c[i * ldc + j] = c0[i * nr + j] = t->accumulate ? (int32_t)irand(-(1 << 28), 1 << 28) : SENTINEL;

  t->f->ukernel_ib(m, kc, a, b, boff, c, ldc, t->accumulate);

  if (memcmp(a, a_copy, a_bytes) || memcmp(bspan, b_copy, span) || memcmp(boff, o_copy, nu * sizeof(ptrdiff_t)))
    fail_msg("%s ukernel_ib m=%zu kc=%zu: wrote to an operand", t->f->name, m, kc);
  char what[160];
  snprintf(what, sizeof what, "%s ukernel_ib m=%zu kc=%zu acc=%d offsets=%d", t->f->name, m, kc, t->accumulate,
           t->off_kind);
  cbuf_check_outside(&cb, m, nr, ldc, what);
  const uint8_t *bc = b_copy + 2 * base; /* b in the copy */
  for (size_t i = 0; i < m; i++) {
    for (size_t j = 0; j < nr; j++) {
      int64_t ref = t->accumulate ? c0[i * nr + j] : 0;
      for (size_t k = 0; k < kc; k++)
        ref += (int64_t)a_copy[(k / 4) * 4 * mr + 4 * i + k % 4] *
               (int64_t)bc[2 * o_copy[k / 4] + (ptrdiff_t)(4 * j + k % 4)];
      if (c[i * ldc + j] != ref)
        fail_msg("%s ukernel_ib m=%zu kc=%zu ldc=%zu acc=%d kind=%d offsets=%d at_end=%d: C[%zu][%zu] = %d, "
                 "want %lld (boff[0] = %td)",
                 t->f->name, m, kc, ldc, t->accumulate, t->kind, t->off_kind, t->at_end, i, j, c[i * ldc + j],
                 (long long)ref, o_copy[0]);
    }
  }
  gbuf_close(&ga), gbuf_close(&go), gbuf_close(&gb), gbuf_close(&cb.g);
  free(p), free(a_copy), free(b_copy), free(o_copy), free(c0);
}

/* Every m, one unit of four to long, accumulate or not, every kind of offset table and of operand
   values, operands and C against guard pages on either side, ldc past nr; then a row stride far
   beyond the tile and one exactly nr. */
static void test_ukernel_ib(void **state) {
  (void)state;
  check_expected_families();
  static const size_t kcs[] = {4, 8, 12, 16, 20, 36, 256, 260};
  const dlc_q8d4_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  if (!nfam) {
    say_skipped("ukernel_ib");
    return;
  }
  size_t cases = 0;
  for (size_t s = 0; s < nfam; s++) {
    const dlc_q8d4_gemm_family *f = fams[s];
    for (size_t m = 1; m <= f->mr; m++)
      for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++)
        for (int acc = 0; acc <= 1; acc++)
          for (int ok = 0; ok < N_OFF_KINDS; ok++)
            for (int kind = 0; kind < N_VALUE_KINDS; kind++)
              for (int at_end = 0; at_end <= 1; at_end++) {
                ib_case t = {f, m, kcs[ki], f->nr + 1 + (m * 3 + ki + (size_t)kind) % 7, acc, kind, ok, at_end};
                run_ib_case(&t);
                cases++;
              }
    for (int acc = 0; acc <= 1; acc++)
      for (int at_end = 0; at_end <= 1; at_end++) {
        ib_case t = {f, f->mr, 64, 3137, acc, V_RANDOM_EXTREMES, OFF_RANDOM, at_end};
        run_ib_case(&t);
        t.m = 1, t.ldc = f->nr, t.off_kind = OFF_ODD;
        run_ib_case(&t);
        t.m = f->mr, t.ldc = f->nr, t.off_kind = OFF_DECREASING, t.kind = V_MAX_NEGATIVE, t.kc = 516;
        run_ib_case(&t);
        cases += 3;
      }
  }
  print_message("[ ukernel_ib ] %zu cases\n", cases);
}

/* ================================================================ pack_quads */

/* Every length 0..100 (vector bodies and tails) and a few long ones, flip 0 (U8) and 0x80 (S8),
   each row exactly n bytes against a guard page (after or before), dst exactly 4n bytes against a
   guard page after it, or against one before it with sentinel bytes after its 4n. */
static void test_pack_quads(void **state) {
  (void)state;
  static const size_t longs[] = {127, 128, 129, 255, 256, 257, 999, 1000, 1001, 1024, 4099};
  enum { FENCE = 80 };
  const dlc_q8d4_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  if (!nfam) {
    say_skipped("pack_quads");
    return;
  }
  size_t cases = 0;
  for (size_t s = 0; s < nfam; s++) {
    const dlc_q8d4_gemm_family *f = fams[s];
    for (size_t ni = 0; ni <= 100 + sizeof longs / sizeof longs[0]; ni++) {
      const size_t n = ni <= 100 ? ni : longs[ni - 101];
      for (int fl = 0; fl <= 3; fl++)
        for (int rows_end = 0; rows_end <= 1; rows_end++)
          for (int dst_end = 0; dst_end <= 1; dst_end++) {
            const uint8_t flip = fl & 1 ? 0x80 : 0;
            const size_t step = fl & 2 ? 2 : 1, span = n ? (n - 1) * step + 1 : 0; /* bytes a row may be read */
            gbuf gr[4], gd;
            uint8_t *rows[4], *copy[4];
            for (int r = 0; r < 4; r++) {
              rows[r] = gbuf_open(&gr[r], span, rows_end ^ (r & 1)); /* rows on either side of their pages */
              copy[r] = xalloc_slack(span + 1);
              for (size_t j = 0; j < span; j++) {
                uint8_t v = (uint8_t)next_u32();
                if (j % 17 == (size_t)r) v = r & 1 ? 0x80 : 0x7f;
                if (j % 19 == (size_t)r) v = r & 1 ? 0x00 : 0xff;
                rows[r][j] = copy[r][j] = v;
              }
            }
            const size_t dbytes = dst_end ? 4 * n : 4 * n + FENCE;
            uint8_t *dst = gbuf_open(&gd, dbytes, dst_end);
            memset(dst, GUARD_BYTE, dbytes);

            f->pack_quads(n, rows[0], rows[1], rows[2], rows[3], step, flip, dst);

            for (int r = 0; r < 4; r++)
              if (n && memcmp(rows[r], copy[r], span))
                fail_msg("%s pack_quads n=%zu: wrote to row %d", f->name, n, r);
            for (size_t i = 0; i < dbytes; i++) {
              if (i < 4 * n) {
                const uint8_t want = (uint8_t)(copy[i % 4][i / 4 * step] ^ flip);
                if (dst[i] != want)
                  fail_msg("%s pack_quads n=%zu step=%zu flip=0x%02x: dst[%zu] (unit %zu, row %zu) = 0x%02x, want 0x%02x",
                           f->name, n, step, flip, i, i / 4, i % 4, dst[i], want);
              } else if (dst[i] != GUARD_BYTE) {
                fail_msg("%s pack_quads n=%zu flip=0x%02x: wrote dst[%zu], past its %zu bytes", f->name, n, flip, i,
                         4 * n);
              }
            }
            for (int r = 0; r < 4; r++) gbuf_close(&gr[r]), free(copy[r]);
            gbuf_close(&gd);
            cases++;
          }
    }
  }
  print_message("[ pack_quads ] %zu cases\n", cases);
}

/* pack_plane: h x n planes, contiguous (ldx == n: the run across rows, stored in pieces at each row
   end) and not (ldx past the row, step 2), ldd from n (rows adjacent) to n + 3; each channel's
   plane exactly its bytes against a guard page, dst exactly up to its last row's end against a
   guard page after it (or before it, with sentinels after), the units between rows sentinels that
   must stay. Every n up to 20 (a 16-unit vector within one row, across two or more), 31..33, 64,
   65 and h up to 9 (runs past 64 units ending anywhere in a vector). */
static void test_pack_plane(void **state) {
  (void)state;
  static const size_t ns[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 14, 15, 16, 17, 18, 20, 28, 31, 32, 33, 56, 64, 65};
  const dlc_q8d4_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  size_t cases = 0;
  for (size_t s = 0; s < nfam; s++) {
    const dlc_q8d4_gemm_family *f = fams[s];
    if (!f->pack_plane) continue;
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
      for (size_t h = 1; h <= 9; h++)
        for (int mode = 0; mode < 6; mode++) {
          const size_t n = ns[ni], step = mode >= 4 ? 2 : 1, pad = mode % 2 ? 3 : 0;
          const size_t ldx = mode < 2 ? n : mode < 4 ? n + 5 : 2 * n + 1, ldd = n + pad;
          const int at_end = (mode / 2 + (int)h) % 2;
          const uint8_t flip = (h + ni) % 2 ? 0x80 : 0;
          const size_t span = (h - 1) * ldx + (n - 1) * step + 1;
          gbuf gr[4], gd;
          uint8_t *rows[4], *copy[4];
          for (int r = 0; r < 4; r++) {
            rows[r] = gbuf_open(&gr[r], span, (r + at_end) & 1);
            copy[r] = xalloc_slack(span + 1);
            for (size_t j = 0; j < span; j++) rows[r][j] = copy[r][j] = (uint8_t)next_u32();
          }
          const size_t used = 4 * ((h - 1) * ldd + n), dbytes = at_end ? used : used + 80;
          uint8_t *dst = gbuf_open(&gd, dbytes, at_end);
          memset(dst, GUARD_BYTE, dbytes);

          f->pack_plane(h, n, rows[0], rows[1], rows[2], rows[3], ldx, step, flip, dst, ldd);

          for (int r = 0; r < 4; r++)
            if (memcmp(rows[r], copy[r], span)) fail_msg("%s pack_plane h=%zu n=%zu: wrote to row %d", f->name, h, n, r);
          for (size_t i = 0; i < dbytes; i++) {
            const size_t unit = i / 4, y = unit / ldd, j = unit % ldd;
            const int in = i < used && j < n;
            const uint8_t want = in ? (uint8_t)(copy[i % 4][y * ldx + j * step] ^ flip) : GUARD_BYTE;
            if (dst[i] != want)
              fail_msg("%s pack_plane h=%zu n=%zu ldx=%zu step=%zu ldd=%zu flip=0x%02x: dst[%zu] (row %zu, unit %zu, "
                       "channel %zu) = 0x%02x, want 0x%02x",
                       f->name, h, n, ldx, step, ldd, flip, i, y, j, i % 4, dst[i], want);
          }
          for (int r = 0; r < 4; r++) gbuf_close(&gr[r]), free(copy[r]);
          gbuf_close(&gd);
          cases++;
        }
  }
  if (!cases) {
    say_skipped("pack_plane");
    return;
  }
  print_message("[ pack_plane ] %zu cases\n", cases);
}

/* pack_quads feeding ukernel: four s8 input rows packed with flip 0x80 and the weights give the
   same tile as the signed product plus 128 * (row sums of A), the identity the drivers rely on
   (x ^ 0x80 = x + 128 as u8 for s8 x). */
static void test_pack_then_ukernel(void **state) {
  (void)state;
  const dlc_q8d4_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  if (!nfam) {
    say_skipped("pack then ukernel");
    return;
  }
  for (size_t s = 0; s < nfam; s++) {
    const dlc_q8d4_gemm_family *f = fams[s];
    const size_t mr = f->mr, nr = f->nr, kc = 24, nu = kc / 4;
    int8_t *x = xalloc_slack(kc * nr), *a = xalloc_slack(nu * mr * 4);
    uint8_t *b = xalloc_slack(nu * nr * 4);
    int32_t *c = xalloc_slack(mr * nr * sizeof(int32_t));
    for (size_t e = 0; e < kc * nr; e++) x[e] = (int8_t)next_u32();
    for (size_t e = 0; e < nu * mr * 4; e++) a[e] = (int8_t)next_u32();
    for (size_t u = 0; u < nu; u++) {
      const uint8_t *r = (const uint8_t *)x + 4 * u * nr;
      f->pack_quads(nr, r, r + nr, r + 2 * nr, r + 3 * nr, 1, 0x80, b + u * nr * 4);
    }
    f->ukernel(mr, nr, kc, a, b, c, nr, 0);
    for (size_t i = 0; i < mr; i++)
      for (size_t j = 0; j < nr; j++) {
        int64_t ref = 0;
        for (size_t k = 0; k < kc; k++) {
          const int64_t w = a[(k / 4) * 4 * mr + 4 * i + k % 4];
          ref += w * ((int64_t)x[k * nr + j] + 128);
        }
        if (c[i * nr + j] != ref)
          fail_msg("%s pack_quads + ukernel: C[%zu][%zu] = %d, want %lld", f->name, i, j, c[i * nr + j],
                   (long long)ref);
      }
    free(x), free(a), free(b), free(c);
  }
}

/* gemv: every m up to gemv_mr, 1-4 rows of x, extreme and random bytes, the panel and x against
   guard pages, c fenced by sentinels (rows ldc apart, only m x nb written). */
static void test_gemv(void **state) {
  (void)state;
  static const size_t kcs[] = {4, 8, 12, 68, 1028};
  const dlc_q8d4_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  size_t cases = 0;
  for (size_t s = 0; s < nfam; s++) {
    const dlc_q8d4_gemm_family *f = fams[s];
    if (!f->gemv) continue;
    const size_t mr = f->gemv_mr;
    for (size_t m = 1; m <= mr; m++)
      for (size_t nb = 1; nb <= 4; nb++)
        for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++)
          for (int kind = 0; kind < 3; kind++) {
            if (m % 7 != 1 && m < mr - 1 && ki > 2) continue; /* long K on a few row counts */
            const size_t kc = kcs[ki], ldb = kc + (nb & 1) * 3, ldc = m + 5;
            gbuf ga, gb, gc;
            int8_t *a = gbuf_open(&ga, kc * mr, (int)(m & 1));
            uint8_t *b = gbuf_open(&gb, (nb - 1) * ldb + kc, (int)(nb & 1));
            int32_t *c = gbuf_open(&gc, nb * ldc * sizeof(int32_t), 1);
            for (size_t k = 0; k < kc; k++)
              for (size_t i = 0; i < mr; i++)
                a[k / 4 * 4 * mr + 4 * i + k % 4] =
                    i >= m ? 0 : kind == 0 ? (int8_t)next_u32() : kind == 1 ? (int8_t)-128 : (int8_t)127;
            for (size_t i = 0; i < (nb - 1) * ldb + kc; i++) b[i] = kind == 0 ? (uint8_t)next_u32() : 255;
            for (size_t i = 0; i < nb * ldc; i++) c[i] = SENTINEL;
            f->gemv(m, nb, kc, a, b, ldb, c, ldc);
            for (size_t r = 0; r < nb; r++)
              for (size_t i = 0; i < ldc; i++) {
                int64_t want = SENTINEL;
                if (i < m) {
                  want = 0;
                  for (size_t k = 0; k < kc; k++)
                    want += (int64_t)a[k / 4 * 4 * mr + 4 * i + k % 4] * (int64_t)b[r * ldb + k];
                }
                if (c[r * ldc + i] != want)
                  fail_msg("%s gemv m=%zu nb=%zu kc=%zu kind=%d: c[%zu][%zu] = %d, want %lld", f->gemv_name, m, nb,
                           kc, kind, r, i, c[r * ldc + i], (long long)want);
              }
            gbuf_close(&ga);
            gbuf_close(&gb);
            gbuf_close(&gc);
            cases++;
          }
  }
  if (!cases) say_skipped("gemv");
  print_message("[ gemv ] %zu cases\n", cases);
}

/* ================================================================ ukernel_t (C transposed) */

/* The optional members come together: ukernel_t with its tile (tr x tm), transpose and t_name. */
static void check_t_members(const dlc_q8d4_gemm_family *f) {
  if (!f->ukernel_t && !f->transpose && !f->tr && !f->tm) return;
  if (!f->ukernel_t || !f->transpose || !f->t_name || !f->tr || !f->tm)
    fail_msg("%s: ukernel_t, transpose, t_name, tr and tm come together (ukernel_t %s, transpose %s, t_name %s, "
             "tr %zu, tm %zu)",
             f->name, f->ukernel_t ? "set" : "NULL", f->transpose ? "set" : "NULL", f->t_name ? f->t_name : "NULL",
             f->tr, f->tm);
}

/* Where this build has the VNNI family and this CPU runs it, it carries ukernel_t, so losing it
   fails rather than skips. */
static void check_expected_t(void) {
#if defined(DLC_HAVE_AVX512VNNI)
  if (dlc_cpu()->avx512_vnni) {
    assert_non_null(dlc_q8d4_gemm__avx512vnni.ukernel_t);
    assert_non_null(dlc_q8d4_gemm__avx512vnni.transpose);
  }
#endif
}

/* Positions (units of four bytes past b): random (repeats allowed); strictly descending with gaps of
   at least 2; distinct, at least 2 apart, shuffled; consecutive (a tile within an output row, which a
   kernel may read as one run); two runs of consecutive ones (a tile across the end of a row). Offsets (2-byte units): random; all odd (reads
   at 2 mod 4 bytes); strictly decreasing with random gaps. */
enum { POS_RANDOM, POS_DESCENDING, POS_SHUFFLED, POS_CONSECUTIVE, POS_TWO_RUNS, N_POS_KINDS };
enum { TOFF_RANDOM, TOFF_ODD, TOFF_DECREASING, N_TOFF_KINDS };

typedef struct t_case {
  const dlc_q8d4_gemm_family *f;
  size_t np, m, kc, ldc;
  int accumulate, kind, pos_kind, off_kind;
  int sides;        /* bit 0: B against a guard page after it (its highest read the last bytes before the
                       page) or before it (its lowest read the first byte after); bit 1: A, pos and boff
                       after (1) or before (0); C after when the bits differ */
  int wide;         /* positions and offsets spread far */
  int32_t c_range;  /* |initial C| for accumulate */
} t_case;

static ptrdiff_t pmin(const ptrdiff_t *v, size_t n) {
  ptrdiff_t lo = PTRDIFF_MAX;
  for (size_t i = 0; i < n; i++) lo = v[i] < lo ? v[i] : lo;
  return lo;
}
static ptrdiff_t pmax(const ptrdiff_t *v, size_t n) {
  ptrdiff_t hi = PTRDIFF_MIN;
  for (size_t i = 0; i < n; i++) hi = v[i] > hi ? v[i] : hi;
  return hi;
}

/* One call. The byte span of B is exactly the bytes the contract lets the kernel read (from the
   lowest 2 * boff + 4 * pos to the highest + 4), against a guard page on one side; b somewhere in
   it (at its start, its end or between), bytes no read reaches random. A one panel of tm rows, rows
   >= m zero; C (np x m, ldc apart) fenced by sentinels, with a row beyond it or against a page. */
static void run_t_case(const t_case *t) {
  const dlc_q8d4_gemm_family *f = t->f;
  const size_t tm = f->tm, np = t->np, m = t->m, kc = t->kc, ldc = t->ldc, nu = kc / 4;
  assert_true(kc % 4 == 0 && kc >= 4 && np >= 1 && np <= f->tr && m >= 1 && m <= tm && ldc >= m);
  const int b_end = t->sides & 1, ops_end = (t->sides >> 1) & 1, c_end = b_end ^ ops_end;

  /* positions q (>= 0) and offsets p (any sign, shifted below), in their units */
  ptrdiff_t *q = xalloc_slack(np * sizeof(ptrdiff_t)), *p = xalloc_slack(nu * sizeof(ptrdiff_t));
  const int64_t qspan = t->wide ? 1000 : 3 * (int64_t)f->tr + 8;
  if (t->pos_kind == POS_RANDOM) {
    for (size_t r = 0; r < np; r++) q[r] = (ptrdiff_t)irand(0, qspan);
  } else if (t->pos_kind == POS_DESCENDING) {
    ptrdiff_t at = (ptrdiff_t)irand(0, 3);
    for (size_t r = np; r-- > 0;) q[r] = at, at += (ptrdiff_t)irand(2, t->wide ? 200 : 9);
  } else if (t->pos_kind == POS_CONSECUTIVE) {
    const ptrdiff_t at0 = (ptrdiff_t)irand(0, qspan);
    for (size_t r = 0; r < np; r++) q[r] = at0 + (ptrdiff_t)r;
  } else if (t->pos_kind == POS_TWO_RUNS) {
    const size_t split = np > 1 ? (size_t)irand(1, (int64_t)np - 1) : 1;
    const ptrdiff_t at0 = (ptrdiff_t)irand(0, qspan), at1 = (ptrdiff_t)irand(0, qspan);
    for (size_t r = 0; r < np; r++) q[r] = r < split ? at0 + (ptrdiff_t)r : at1 + (ptrdiff_t)(r - split);
  } else {
    const ptrdiff_t g = (ptrdiff_t)irand(3, t->wide ? 150 : 6);
    for (size_t r = 0; r < np; r++) q[r] = (ptrdiff_t)r * g + (ptrdiff_t)irand(0, g - 2);
    for (size_t r = np; r > 1; r--) { /* shuffle */
      const size_t s = next_u32() % r;
      const ptrdiff_t x = q[r - 1];
      q[r - 1] = q[s], q[s] = x;
    }
  }
  const int64_t pspan = t->wide ? 2000 : (int64_t)irand(0, 4 * (int64_t)nu + 64);
  ptrdiff_t at = 0;
  for (size_t k = 0; k < nu; k++) {
    switch (t->off_kind) {
      case TOFF_ODD: p[k] = 2 * (ptrdiff_t)irand(-pspan / 2, pspan / 2) + 1; break;
      case TOFF_DECREASING: at -= (ptrdiff_t)irand(1, t->wide ? 300 : 2 * (int64_t)f->tr + 3); p[k] = at; break;
      default: p[k] = (ptrdiff_t)irand(-pspan / 2, pspan / 2); break;
    }
  }
  /* byte offsets of reads from b: 2 p[k] + 4 q[r] (+ 0..3); the span of B is [lo, hi) of those */
  const ptrdiff_t lo = 2 * pmin(p, nu) + 4 * pmin(q, np), hi = 2 * pmax(p, nu) + 4 * pmax(q, np) + 4;
  const size_t span = (size_t)(hi - lo);
  /* b = bspan + 2 * bo2; boff[k] = p[k] - shift with shift = (lo + 2 * bo2) / 2; odd offsets need an
     even shift (lo / 2 is odd there: p all odd) */
  ptrdiff_t bo2;
  const uint32_t where = next_u32() % 4;
  if (t->off_kind == TOFF_ODD) bo2 = 2 * (ptrdiff_t)irand(0, (int64_t)(span / 2 - 1) / 2) + 1;
  else bo2 = where == 0 ? 0 : where == 1 ? (ptrdiff_t)(span / 2) : (ptrdiff_t)irand(0, (int64_t)span / 2);
  const ptrdiff_t shift = lo / 2 + bo2;

  const size_t a_bytes = nu * 4 * tm;
  gbuf ga, gb, gp, go;
  int8_t *a = gbuf_open(&ga, a_bytes, ops_end);
  size_t *pos = gbuf_open(&gp, np * sizeof(size_t), ops_end);
  ptrdiff_t *boff = gbuf_open(&go, nu * sizeof(ptrdiff_t), ops_end);
  uint8_t *bspan = gbuf_open(&gb, span, b_end), *b = bspan + 2 * bo2;
  for (size_t r = 0; r < np; r++) pos[r] = (size_t)q[r];
  for (size_t k = 0; k < nu; k++) boff[k] = p[k] - shift;
  if (t->off_kind == TOFF_ODD)
    for (size_t k = 0; k < nu; k++) assert_true((boff[k] & 1) != 0);
  for (size_t k = 0; k < kc; k++)
    for (size_t i = 0; i < tm; i++) a[(k / 4) * 4 * tm + 4 * i + k % 4] = i < m ? a_value(t->kind) : 0;
  for (size_t e = 0; e < span; e++) bspan[e] = (uint8_t)next_u32();
  for (size_t k = 0; k < nu; k++)
    for (size_t r = 0; r < np; r++)
      for (size_t u = 0; u < 4; u++) {
        const ptrdiff_t e = 2 * bo2 + 2 * boff[k] + (ptrdiff_t)(4 * pos[r] + u);
        assert_true(e >= 0 && (size_t)e < span);
        bspan[e] = b_value(t->kind);
      }
  int8_t *a_copy = xalloc_slack(a_bytes);
  uint8_t *b_copy = xalloc_slack(span);
  size_t *pos_copy = xalloc_slack(np * sizeof(size_t));
  ptrdiff_t *o_copy = xalloc_slack(nu * sizeof(ptrdiff_t));
  memcpy(a_copy, a, a_bytes);
  memcpy(b_copy, bspan, span);
  memcpy(pos_copy, pos, np * sizeof(size_t));
  memcpy(o_copy, boff, nu * sizeof(ptrdiff_t));

  cbuf cb;
  cbuf_open(&cb, np, m, ldc, np + 1, c_end);
  int32_t *c = cb.c, *c0 = xalloc_slack(np * m * sizeof(int32_t));
  for (size_t r = 0; r < np; r++)
    for (size_t i = 0; i < m; i++)
      c[r * ldc + i] = c0[r * m + i] = t->accumulate ? (int32_t)irand(-t->c_range, t->c_range) : SENTINEL;

  f->ukernel_t(np, m, kc, a, b, pos, boff, c, ldc, t->accumulate);

  if (memcmp(a, a_copy, a_bytes) || memcmp(bspan, b_copy, span) || memcmp(pos, pos_copy, np * sizeof(size_t)) ||
      memcmp(boff, o_copy, nu * sizeof(ptrdiff_t)))
    fail_msg("%s np=%zu m=%zu kc=%zu: wrote to an operand", f->t_name, np, m, kc);
  char what[200];
  snprintf(what, sizeof what, "%s np=%zu m=%zu kc=%zu acc=%d pos=%d offsets=%d sides=%d", f->t_name, np, m, kc,
           t->accumulate, t->pos_kind, t->off_kind, t->sides);
  cbuf_check_outside(&cb, np, m, ldc, what);
  const uint8_t *bc = b_copy + 2 * bo2; /* b in the copy */
  for (size_t r = 0; r < np; r++)
    for (size_t i = 0; i < m; i++) {
      int64_t ref = t->accumulate ? c0[r * m + i] : 0;
      for (size_t k = 0; k < kc; k++)
        ref += (int64_t)a_copy[(k / 4) * 4 * tm + 4 * i + k % 4] *
               (int64_t)bc[2 * o_copy[k / 4] + (ptrdiff_t)(4 * pos_copy[r] + k % 4)];
      if (c[r * ldc + i] != ref)
        fail_msg("%s np=%zu m=%zu kc=%zu ldc=%zu acc=%d kind=%d pos=%d offsets=%d sides=%d wide=%d: C[%zu][%zu] = "
                 "%d, want %lld (pos[r] = %zu, boff[0] = %td, b at byte %td of %zu)",
                 f->t_name, np, m, kc, ldc, t->accumulate, t->kind, t->pos_kind, t->off_kind, t->sides, t->wide, r,
                 i, c[r * ldc + i], (long long)ref, pos_copy[r], o_copy[0], 2 * bo2, span);
    }
  gbuf_close(&ga), gbuf_close(&gb), gbuf_close(&gp), gbuf_close(&go), gbuf_close(&cb.g);
  free(q), free(p), free(a_copy), free(b_copy), free(pos_copy), free(o_copy), free(c0);
}

/* Every np up to tr and every m up to tm on short K (one to three units of four), longer K (68 = 17
   units, 516 = 129: odd counts past any unroll) on a spread of m; accumulate or not; random and
   extreme operand values; every kind of positions and offsets, near and spread far; the operands
   and C against guard pages on either side; ldc past m (m + 1, m + 3, tm + 5). Then a row stride
   far beyond the tile and the longest K the contract allows. */
static void test_ukernel_t(void **state) {
  (void)state;
  check_expected_families();
  check_expected_t();
  static const size_t kcs[] = {4, 8, 12, 68, 516};
  static const int kinds[] = {V_RANDOM, V_RANDOM_EXTREMES, V_MAX_NEGATIVE, V_MAX_POSITIVE};
  const dlc_q8d4_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  size_t cases = 0;
  for (size_t s = 0; s < nfam; s++) {
    const dlc_q8d4_gemm_family *f = fams[s];
    check_t_members(f);
    if (!f->ukernel_t) continue;
    const size_t tr = f->tr, tm = f->tm;
    for (size_t np = 1; np <= tr; np++)
      for (size_t m = 1; m <= tm; m++)
        for (size_t ki = 0; ki < sizeof kcs / sizeof kcs[0]; ki++)
          for (int acc = 0; acc <= 1; acc++)
            for (size_t kj = 0; kj < sizeof kinds / sizeof kinds[0]; kj++) {
              /* long K on a few row counts: both ends, around every 16 and every 7th */
              if (ki > 2 && m % 7 != 1 && m % 16 > 1 && m % 16 != 15 && m < tm - 1) continue;
              if (kinds[kj] == V_MAX_POSITIVE && (m + np + ki) % 3) continue; /* a third of them */
              t_case t = {f, np, m, kcs[ki], m + 3, acc, kinds[kj], (int)(cases % N_POS_KINDS),
                          (int)(cases / N_POS_KINDS % N_TOFF_KINDS), (int)((np + m + ki + kj) & 3),
                          cases % 7 == 0, 1 << 28};
              if (cases % 3 == 1) t.ldc = tm + 5;
              if (cases % 5 == 2) t.ldc = m + 1;
              run_t_case(&t);
              cases++;
            }
    for (int sides = 0; sides < 4; sides++) {
      t_case t = {f, tr, tm, 64, 3137, sides & 1, V_RANDOM, sides % N_POS_KINDS, TOFF_RANDOM, sides, sides & 1,
                  1 << 28};
      run_t_case(&t);
      t.np = tr > 1 ? tr - 1 : 1, t.m = tm > 1 ? tm - 1 : 1, t.ldc = 100003, t.kind = V_RANDOM_EXTREMES;
      t.off_kind = TOFF_ODD;
      run_t_case(&t);
      cases += 2;
    }
    static const size_t long_kcs[] = {65792, 65788};
    for (size_t ki = 0; ki < 2; ki++)
      for (int kind = V_MAX_POSITIVE; kind <= V_MAX_NEGATIVE; kind++) {
        /* 127 * 255 * 65792 = 2130708480: room for |C0| <= 16 * 10^6 before s32 ends */
        t_case t = {f, tr, tm, long_kcs[ki], tm + 5, (int)ki, kind, POS_SHUFFLED, kind == V_MAX_POSITIVE ? TOFF_RANDOM : TOFF_DECREASING,
                    (int)(2 * ki) + kind - V_MAX_POSITIVE, 0, 30000};
        run_t_case(&t);
        cases++;
      }
  }
  if (!cases) say_skipped("ukernel_t");
  print_message("[ ukernel_t ] %zu cases\n", cases);
}

/* ================================================================ s32_transpose */

/* rows x cols from 1 to 100 (around every 16), row strides with and without slack, src random ints
   and exactly sized against a guard page, dst fenced by sentinels (a row beyond it) or its last
   element against a guard page; src must be left as it was. */
static void run_transpose_case(const dlc_q8d4_gemm_family *f, size_t rows, size_t cols, size_t lds, size_t ldd,
                               int src_end, int dst_end) {
  const size_t src_n = (rows - 1) * lds + cols;
  gbuf gs;
  int32_t *src = gbuf_open(&gs, src_n * sizeof(int32_t), src_end), *copy = xalloc_slack(src_n * sizeof(int32_t));
  for (size_t e = 0; e < src_n; e++) copy[e] = src[e] = (int32_t)next_u32();
  cbuf cb;
  cbuf_open(&cb, cols, rows, ldd, cols + 1, dst_end);

  f->transpose(rows, cols, src, lds, cb.c, ldd);

  if (memcmp(src, copy, src_n * sizeof(int32_t)))
    fail_msg("%s transpose rows=%zu cols=%zu lds=%zu: wrote to src", f->t_name, rows, cols, lds);
  for (size_t j = 0; j < cols; j++)
    for (size_t i = 0; i < rows; i++)
      if (cb.c[j * ldd + i] != copy[i * lds + j])
        fail_msg("%s transpose rows=%zu cols=%zu lds=%zu ldd=%zu src_end=%d dst_end=%d: dst[%zu * ldd + %zu] = %d, "
                 "want src[%zu * lds + %zu] = %d",
                 f->t_name, rows, cols, lds, ldd, src_end, dst_end, j, i, cb.c[j * ldd + i], i, j,
                 copy[i * lds + j]);
  char what[160];
  snprintf(what, sizeof what, "%s transpose rows=%zu cols=%zu lds=%zu ldd=%zu", f->t_name, rows, cols, lds, ldd);
  cbuf_check_outside(&cb, cols, rows, ldd, what);
  gbuf_close(&gs), gbuf_close(&cb.g);
  free(copy);
}

static void test_s32_transpose(void **state) {
  (void)state;
  check_expected_t();
  static const size_t dims[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  11, 13, 15, 16, 17, 19,
                                20, 23, 24, 25, 29, 31, 32, 33, 37, 40, 48, 49, 64, 65, 100};
  static const size_t slack[] = {0, 1, 3, 16, 17, 5};
  enum { ND = sizeof dims / sizeof dims[0], NS = sizeof slack / sizeof slack[0] };
  const dlc_q8d4_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  size_t cases = 0;
  for (size_t s = 0; s < nfam; s++) {
    const dlc_q8d4_gemm_family *f = fams[s];
    check_t_members(f);
    if (!f->transpose) continue;
    for (size_t ri = 0; ri < ND; ri++)
      for (size_t ci = 0; ci < ND; ci++)
        for (int v = 0; v < 2; v++) {
          const size_t rows = dims[ri], cols = dims[ci];
          const size_t lds = cols + slack[(ri + 2 * ci + (size_t)v) % NS];
          const size_t ldd = rows + slack[(3 * ri + ci + 2 * (size_t)v + 1) % NS];
          run_transpose_case(f, rows, cols, lds, ldd, v, !v);
          cases++;
        }
    /* strides far beyond the block (whole planes apart), and a tall and a wide one */
    for (int v = 0; v < 2; v++) {
      run_transpose_case(f, 100, 100, 3137, 4099, v, v);
      run_transpose_case(f, 49, 64, 64, 49, v, !v);
      run_transpose_case(f, 64, 49, 49, 64, !v, v);
      run_transpose_case(f, 1, 257, 257, 1, v, !v);
      run_transpose_case(f, 257, 1, 1, 257, !v, v);
      run_transpose_case(f, 200, 130, 131, 203, v, v);
      cases += 6;
    }
  }
  if (!cases) say_skipped("s32_transpose");
  print_message("[ s32_transpose ] %zu cases\n", cases);
}

/* ================================================================ q8_store_t (C transposed, to NCHW bytes) */

/* The optional store of ukernel_t's position-major C (dlc_isa_kernels.q8_store_t, lowp_gemm_ukernel.h):
     y[i * ldy + r] = dlc_q8_requant1(c[r * ldc + i] + q->bias[c0 + i], q->mult[c0 + i], q)
   for r < np, i < m, against quant.h's formula itself. Where this build has the VBMI store and this
   CPU runs it the avx512 table must carry it (losing it fails rather than skips); the generic and
   avx2 tables never do (EVEX byte permutes). */
static dlc_q8_store_t_fn store_t_of(dlconv_isa isa) {
  const dlc_isa_kernels *kt = dlc_kernels_for(isa);
  return kt ? kt->q8_store_t : NULL;
}

static void check_expected_store_t(void) {
  if (store_t_of(DLCONV_ISA_GENERIC)) fail_msg("the generic table has a q8_store_t");
  if (store_t_of(DLCONV_ISA_AVX2)) fail_msg("the avx2 table has a q8_store_t (EVEX byte permutes)");
  const dlc_q8_store_t_fn fn = store_t_of(DLCONV_ISA_AVX512);
#if defined(DLC_HAVE_AVX512VBMI)
  if (dlc_cpu()->avx512_vnni && dlc_cpu()->avx512_vbmi && dlc_kernels_for(DLCONV_ISA_AVX512) &&
      fn != dlc_q8_store_t__avx512vbmi)
    fail_msg("the avx512 table of this AVX512-VNNI/VBMI CPU lacks dlc_q8_store_t__avx512vbmi (q8_store_t %s)",
             fn ? "is another function" : "is NULL");
#endif
  (void)fn;
}

/* The stores under test: each table's q8_store_t, each once. */
static size_t store_ts(dlc_q8_store_t_fn out[MAX_KERNEL_TABLES]) {
  size_t n = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    size_t at = 0;
    while (at < n && out[at] != kt->q8_store_t) at++;
    if (kt->q8_store_t && at == n) out[n++] = kt->q8_store_t;
  }
  return n;
}

/* Multipliers: per channel in [1e-4, 1e-2] (the wide screen); 0.5 or 0.25 (exact ties where acc + bias
   is odd, resp. 2 mod 4); 0.5 +- 2^-30 (fp32 rounds it to 0.5: with acc + bias odd the fp32 product is
   on a tie, the double one just off it); a mixture from 2^-22 to 37.25 (mostly not wide). */
enum { SM_WIDE, SM_TIES, SM_NEAR_HALF, SM_MIXED, N_SM };
/* The screen: derived with a mult_f buffer; derived with NULL (no screen); a bias so large that
   acc + bias may leave s32 (bias_s32 false, no screen); a multiplier of 64+ on one channel (the fp32
   screen but not the wide one). */
enum { SS_ON, SS_NULL, SS_BIG_BIAS, SS_NARROW, N_SS };
/* Ties (SM_TIES, SM_NEAR_HALF): none at all (other outputs kept off the tie); one in the tile and a
   few more; every other output. */
enum { STIE_NONE, STIE_SPARSE, STIE_DENSE, N_STIE };

typedef struct st_case {
  size_t np, m, ldc, ldy, c0, c_extra; /* c_out = c0 + m + c_extra */
  int is_signed;
  int32_t zp;
  double lo, hi;
  int mult_kind, screen, ties;
  size_t k;          /* |acc| <= k * 255 * 128 (what dlc_q8_derive is told) */
  int c_end;         /* c's last element right before a guard page (1) or c's first right after one */
  int y_end;         /* y's last output byte right before a guard page (1) or sentinel bytes after y */
  int32_t poison;    /* the ints of c between rows (columns m..ldc-1), never to be read */
} st_case;

#define ST_NP_MAX 784
#define ST_M_MAX 70
#define ST_CH_CAP 128                /* c_out of the largest case */
#define ST_C_CAP ((size_t)2500000)   /* ints: 784 positions 3137 apart */
#define ST_Y_CAP ((size_t)300000)    /* bytes: 70 channel rows 4099 apart, and sentinels */

typedef struct st_ctx {
  dlc_q8_store_t_fn fn;
  gbuf gc_end, gc_start, gy, gmult, gbias, gmf;
  int32_t *acc;  /* the tile, channel-major: acc[i * np + r] */
  uint8_t *want; /* the formula's bytes, same order */
  size_t cases, outputs, wide_cases, exact_cases, near_ties, exact_ties, sat_lo, sat_hi, c0_cases, big_strides;
} st_ctx;

/* Per-channel multipliers and biases, all distinct from channel to channel. */
static void st_channels(const st_case *t, int64_t acc_max, size_t c_out, double *mult, int32_t *bias) {
  static const double mixed[] = {1.0, 2.0, 0.125, 1.0 / 3.0, 3e-3, 0.7, 1e-6, 37.25};
  const int64_t br = acc_max + 1000 <= INT32_MAX ? 1000 : INT32_MAX - acc_max; /* bias_s32 holds */
  const size_t forced = t->c0 + t->m / 2;                                       /* a channel in the tile */
  for (size_t ch = 0; ch < c_out; ch++) {
    bias[ch] = (int32_t)irand(-br, br);
    if (t->screen == SS_BIG_BIAS && (ch == forced || next_u32() % 3 == 0)) {
      const int64_t b = irand(INT32_MAX - acc_max + 1, INT32_MAX);
      bias[ch] = (int32_t)(next_u32() & 1 ? b : -b - (int64_t)(next_u32() & 1)); /* down to INT32_MIN */
    }
    const double cap = 0x1p19 / ((double)acc_max + fabs((double)bias[ch])) * 0.999; /* the wide screen */
    double mu;
    switch (t->mult_kind) {
      case SM_WIDE:
        mu = 1e-4 * pow(100.0, (double)next_u32() / 4294967296.0);
        mu = mu > cap ? cap : mu;
        break;
      case SM_TIES: mu = next_u32() & 1 ? 0.5 : 0.25; break;
      case SM_NEAR_HALF: mu = next_u32() & 1 ? 0.5 + 0x1p-30 : 0.5 - 0x1p-30; break;
      default:
        mu = next_u32() & 1 ? mixed[next_u32() % (sizeof mixed / sizeof mixed[0])]
                            : ldexp(1.0 + (double)next_u32() / 4294967296.0, -(int)irand(0, 22));
        break;
    }
    mult[ch] = mu;
  }
  if (t->screen == SS_NARROW) mult[next_u32() % c_out] = 64.0 * (1.0 + (double)next_u32() / 4294967296.0);
}

/* One accumulator (|acc| <= A) for a channel: an exact tie of the multipliers 0.5 / 0.25 (v = k + 1/2
   around the outputs); else mostly near the output range, or anywhere in [-A, A], or an extreme. Under
   the tie multipliers a non-tie is kept off the tie. */
static int32_t st_acc(const st_case *t, int64_t A, double mult, int32_t bias, int tie) {
  const int halves = t->mult_kind == SM_TIES || t->mult_kind == SM_NEAR_HALF;
  const int64_t unit = mult < 0.375 ? 2 : 1; /* acc + bias = (2k + 1) * unit is a tie */
  int64_t s;
  if (tie) return (int32_t)((2 * irand(-300, 300) + 1) * unit - bias);
  const uint32_t u = next_u32() % 16;
  if (u < 9) {
    s = llrint((double)irand(-400000, 400000) / 1000.0 / mult) - bias;
  } else if (u < 13) {
    s = irand(-A, A);
  } else {
    const int64_t ex[] = {-A, 1 - A, A - 1, A, 0, -1, 1};
    s = ex[next_u32() % 7];
  }
  s = s < -A ? -A : s > A ? A : s;
  if (halves) {
    const int64_t sum = s + bias, m4 = ((sum % 4) + 4) % 4;
    if ((unit == 1 && (m4 & 1)) || (unit == 2 && m4 == 2)) s += s > -A ? -1 : 1;
  }
  return (int32_t)s;
}

static void run_st_case(st_ctx *x, const st_case *t) {
  const size_t np = t->np, m = t->m, ldc = t->ldc, ldy = t->ldy, c0 = t->c0, c_out = c0 + m + t->c_extra;
  const int64_t A = (int64_t)t->k * 255 * 128;
  assert_true(np >= 1 && np <= ST_NP_MAX && m >= 1 && m <= ST_M_MAX && ldc >= m && ldy >= np);
  assert_true(c_out <= ST_CH_CAP && A <= INT32_MAX);
  /* q's channel arrays: exactly c_out entries each, ending at a guard page */
  double *mult = (double *)x->gmult.p + ST_CH_CAP - c_out;
  int32_t *bias = (int32_t *)x->gbias.p + ST_CH_CAP - c_out;
  float *mult_f = (float *)x->gmf.p + ST_CH_CAP - c_out;
  st_channels(t, A, c_out, mult, bias);
  dlc_q8_params q;
  memset(&q, 0, sizeof q);
  q.is_signed = t->is_signed;
  q.y_min = t->is_signed ? -128 : 0, q.y_max = t->is_signed ? 127 : 255;
  q.x_zero_point = (int32_t)irand(q.y_min, q.y_max);
  q.y_zero_point = t->zp;
  q.lo = t->lo, q.hi = t->hi;
  q.mult = mult, q.bias = bias;
  dlc_q8_derive(&q, A, c_out, t->screen == SS_NULL ? NULL : mult_f);
  const int screen_possible = q.lo_sat <= q.hi_sat;
  switch (t->screen) {
    case SS_ON: /* the kinds built for it get the wide screen */
      if (t->mult_kind != SM_MIXED && screen_possible && !q.screen_wide)
        fail_msg("q8_store_t test: no wide screen for mult kind %d, k %zu", t->mult_kind, t->k);
      break;
    case SS_NULL: assert_true(q.mult_f == NULL && !q.screen_wide); break;
    case SS_BIG_BIAS: assert_true(!q.bias_s32 && q.mult_f == NULL && !q.screen_wide); break;
    default: assert_true(!q.screen_wide && (q.mult_f != NULL || !screen_possible)); break;
  }

  /* C: the tile's ints, the gaps between rows poisoned, against a guard page on one side */
  const size_t span = (np - 1) * ldc + m;
  assert_true(span <= ST_C_CAP);
  int32_t *c = t->c_end ? (int32_t *)x->gc_end.p + ST_C_CAP - span : (int32_t *)x->gc_start.p;
  const int halves = t->mult_kind == SM_TIES || t->mult_kind == SM_NEAR_HALF;
  const size_t one_tie = next_u32() % (np * m);
  for (size_t r = 0; r < np; r++) {
    int32_t *row = c + r * ldc;
    for (size_t i = 0; i < m; i++) {
      const size_t ch = c0 + i, e = i * np + r;
      int tie = 0;
      if (halves && t->ties == STIE_DENSE) tie = next_u32() & 1;
      if (halves && t->ties == STIE_SPARSE) tie = e == one_tie || next_u32() % 97 == 0;
      const int32_t a = st_acc(t, A, mult[ch], bias[ch], tie);
      row[i] = x->acc[e] = a;
      const int32_t w = dlc_q8_requant1((int64_t)a + bias[ch], mult[ch], &q);
      x->want[e] = (uint8_t)w;
      x->sat_lo += w == q.y_min, x->sat_hi += w == q.y_max;
      if (q.screen_wide) {
        const double v = (double)((int64_t)a + bias[ch]) * mult[ch], f = v - floor(v);
        x->near_ties += fabs(f - 0.5) < 0x1p-12;
        x->exact_ties += f == 0.5;
      }
    }
    if (r + 1 < np)
      for (size_t i = m; i < ldc; i++) row[i] = t->poison;
  }

  /* y: sentinel bytes before it, in the gaps between channel rows, and after it or a guard page */
  const uint8_t sent = (uint8_t)(0x5A ^ (next_u32() & 0xF1));
  const size_t pre = 1 + next_u32() % 64, body = t->y_end ? (m - 1) * ldy + np : m * ldy;
  const size_t total = pre + body + (t->y_end ? 0 : 1 + next_u32() % 64);
  assert_true(total <= ST_Y_CAP);
  uint8_t *base = t->y_end ? x->gy.p + ST_Y_CAP - total : x->gy.p, *y = base + pre;
  memset(base, sent, total);

  x->fn(np, m, c, ldc, &q, c0, y, ldy);

  char what[400];
  snprintf(what, sizeof what,
           "q8_store_t np=%zu m=%zu ldc=%zu ldy=%zu c0=%zu c_out=%zu signed=%d zp=%d lo=%g hi=%g mult_kind=%d "
           "screen=%d (wide %d, mult_f %s, bias_s32 %d) ties=%d acc_max=%lld c_end=%d y_end=%d",
           np, m, ldc, ldy, c0, c_out, t->is_signed, t->zp, t->lo, t->hi, t->mult_kind, t->screen, q.screen_wide,
           q.mult_f ? "set" : "NULL", q.bias_s32, t->ties, (long long)A, t->c_end, t->y_end);
  for (size_t b = 0; b < pre; b++)
    if (base[b] != sent) fail_msg("%s: wrote y[%td] (before y)", what, (ptrdiff_t)b - (ptrdiff_t)pre);
  for (size_t i = 0; i < m; i++) {
    const uint8_t *yr = y + i * ldy;
    for (size_t r = 0; r < np; r++) {
      const size_t e = i * np + r;
      if (yr[r] != x->want[e]) {
        const int got = t->is_signed ? (int8_t)yr[r] : yr[r], want = t->is_signed ? (int8_t)x->want[e] : x->want[e];
        fail_msg("%s: y[%zu * ldy + %zu] (channel %zu, position %zu) = %d, want %d (acc %d, bias %d, mult %.17g, "
                 "v = %.17g)",
                 what, i, r, c0 + i, r, got, want, x->acc[e], bias[c0 + i], mult[c0 + i],
                 (double)((int64_t)x->acc[e] + bias[c0 + i]) * mult[c0 + i]);
      }
    }
    const size_t row_end = i + 1 < m || !t->y_end ? ldy : np;
    for (size_t r = np; r < row_end; r++)
      if (yr[r] != sent) fail_msg("%s: wrote the gap y[%zu * ldy + %zu]", what, i, r);
  }
  for (size_t b = pre + body; b < total; b++)
    if (base[b] != sent) fail_msg("%s: wrote y[%zu] (after y)", what, b - pre);
  /* c is the caller's: left as it was */
  for (size_t r = 0; r < np; r++)
    for (size_t i = 0; i < (r + 1 < np ? ldc : m); i++)
      if (c[r * ldc + i] != (i < m ? x->acc[i * np + r] : t->poison))
        fail_msg("%s: wrote c[%zu * ldc + %zu]", what, r, i);

  x->cases++, x->outputs += np * m;
  x->wide_cases += q.screen_wide != 0, x->exact_cases += !q.screen_wide;
  x->c0_cases += c0 > 0, x->big_strides += ldc > 1000 || ldy > 1000;
}

static const int32_t st_zps[2][4] = {{0, 128, 37, 255}, {0, -51, 127, -128}};
/* lo, hi in units of y: none, one side, half-integers (round half even at the bound), a point, wide
   beyond the type, narrow inside it, quarter values, all above / all below the type's range */
static const double st_bounds[][2] = {
    {-INFINITY, INFINITY}, {0.0, INFINITY}, {-INFINITY, 6.5}, {-20.5, 17.5}, {2.5, 2.5},     {-1e6, 3e5},
    {-100.25, 90.75},      {-3.0, 40.0},    {300.0, INFINITY}, {-INFINITY, -400.0}, {-127.5, 126.5},
};
#define ST_NB (sizeof st_bounds / sizeof st_bounds[0])

/* A configuration drawn for a geometry: mult kind and screen given, the rest random. The k of the
   accumulators' bound: up to the longest reduction (DLC_Q8_MAX_K) where the multipliers allow. */
static void st_pick(st_case *t, size_t np, size_t m, int mult_kind, int screen) {
  static const size_t c0s[] = {0, 0, 1, 3, 16, 17, 45};
  static const size_t ldc_extra[] = {0, 0, 1, 3, 16, 17, 100};
  static const size_t ldy_extra[] = {0, 0, 1, 15, 16, 33};
  static const size_t k_wide[] = {1, 9, 64, 576, 4096, DLC_Q8_MAX_K};
  static const size_t k_halves[] = {1, 4, 16, 32};
  memset(t, 0, sizeof *t);
  t->np = np, t->m = m;
  t->ldc = m + ldc_extra[next_u32() % 7];
  t->ldy = np + ldy_extra[next_u32() % 6];
  t->c0 = c0s[next_u32() % 7];
  t->c_extra = next_u32() % 3 == 0 ? 5 : 0;
  t->is_signed = (int)(next_u32() & 1);
  t->zp = st_zps[t->is_signed][next_u32() % 4];
  const size_t b = next_u32() % ST_NB;
  t->lo = st_bounds[b][0], t->hi = st_bounds[b][1];
  t->mult_kind = mult_kind, t->screen = screen;
  t->ties = (int)(next_u32() % N_STIE);
  t->k = mult_kind == SM_TIES || mult_kind == SM_NEAR_HALF ? k_halves[next_u32() % 4] : k_wide[next_u32() % 6];
  t->c_end = (int)(next_u32() & 1), t->y_end = (int)(next_u32() & 1);
  t->poison = next_u32() & 1 ? INT32_MIN : INT32_MAX;
}

/* Every np of 1..40, 49, 196, 784 (tails of 16 positions, several blocks) with every m of 1..70 (tails
   of 16 channels); then every signedness x zero point x clamp x multiplier kind x screen on smaller
   tiles; then whole 784 x 70 tiles and strides of planes (ldc 3137, ldy 4099). */
static void store_t_cases(dlc_q8_store_t_fn fn) {
  st_ctx x;
  memset(&x, 0, sizeof x);
  x.fn = fn;
  gbuf_open(&x.gc_end, ST_C_CAP * sizeof(int32_t), 1);
  gbuf_open(&x.gc_start, ST_C_CAP * sizeof(int32_t), 0);
  gbuf_open(&x.gy, ST_Y_CAP, 1);
  gbuf_open(&x.gmult, ST_CH_CAP * sizeof(double), 1);
  gbuf_open(&x.gbias, ST_CH_CAP * sizeof(int32_t), 1);
  gbuf_open(&x.gmf, ST_CH_CAP * sizeof(float), 1);
  x.acc = xalloc_slack(ST_NP_MAX * ST_M_MAX * sizeof(int32_t));
  x.want = xalloc_slack(ST_NP_MAX * ST_M_MAX);
  size_t idx = 0;
  st_case t;

  /* twice over the geometries: every kind of multiplier and screen, then the wide screen on each
     (the fast lanes, their tie fallback block by block), clamps that keep it */
  static const size_t extra_nps[] = {49, 196, 784};
  static const int wide_kinds[] = {SM_WIDE, SM_WIDE, SM_TIES, SM_NEAR_HALF};
  for (int pass = 0; pass < 2; pass++)
    for (size_t pi = 0; pi < 40 + 3; pi++) {
      const size_t np = pi < 40 ? pi + 1 : extra_nps[pi - 40];
      for (size_t m = 1; m <= ST_M_MAX; m++, idx++) {
        if (!pass) {
          st_pick(&t, np, m, (int)(idx % N_SM), (int)(idx / N_SM % N_SS));
        } else {
          st_pick(&t, np, m, wide_kinds[idx % 4], SS_ON);
          while (isinf(t.lo) ? t.hi < -300 : t.lo > 299) { /* all beyond the type: no screen */
            const size_t b = next_u32() % ST_NB;
            t.lo = st_bounds[b][0], t.hi = st_bounds[b][1];
          }
        }
        run_st_case(&x, &t);
      }
    }

  static const size_t small_nps[] = {1, 2, 3, 5, 7, 8, 9, 13, 15, 16, 17, 23, 31, 32, 33, 40, 49};
  for (int sg = 0; sg <= 1; sg++)
    for (size_t zi = 0; zi < 4; zi++)
      for (size_t bi = 0; bi < ST_NB; bi++)
        for (int mk = 0; mk < N_SM; mk++)
          for (int sc = 0; sc < N_SS; sc++) {
            st_pick(&t, small_nps[next_u32() % (sizeof small_nps / sizeof small_nps[0])],
                    (size_t)irand(1, ST_M_MAX), mk, sc);
            t.is_signed = sg, t.zp = st_zps[sg][zi], t.lo = st_bounds[bi][0], t.hi = st_bounds[bi][1];
            run_st_case(&x, &t);
          }

  for (int mk = 0; mk < N_SM; mk++)
    for (int sc = 0; sc < N_SS; sc++) {
      const int j = mk * N_SS + sc;
      st_pick(&t, j % 3 ? 784 : 196, j % 5 ? 70 : 64, mk, sc);
      if (j % 4 == 1) t.ldc = 3137;
      if (j % 4 == 2) t.ldy = 4099;
      if (j % 4 == 3) t.ldc = 3137, t.ldy = 4099, t.c0 = 45, t.c_extra = 13;
      run_st_case(&x, &t);
    }

  gbuf_close(&x.gc_end), gbuf_close(&x.gc_start), gbuf_close(&x.gy);
  gbuf_close(&x.gmult), gbuf_close(&x.gbias), gbuf_close(&x.gmf);
  free(x.acc), free(x.want);
  /* what the cases were built to reach, reached */
  assert_true(x.wide_cases > 0 && x.exact_cases > 0 && x.exact_ties > 0 && x.sat_lo > 0 && x.sat_hi > 0);
  print_message("[ q8_store_t ] %zu cases (%zu wide screen, %zu exact path, %zu with c0 > 0, %zu with plane strides), "
                "%zu outputs (%zu within 2^-12 of a tie under the wide screen, %zu exact; %zu at y_min, %zu at "
                "y_max)\n",
                x.cases, x.wide_cases, x.exact_cases, x.c0_cases, x.big_strides, x.outputs, x.near_ties,
                x.exact_ties, x.sat_lo, x.sat_hi);
}

static void test_q8_store_t(void **state) {
  (void)state;
  check_expected_store_t();
  dlc_q8_store_t_fn fns[MAX_KERNEL_TABLES];
  const size_t n = store_ts(fns);
  if (!n) skip_test("q8_store_t", "no q8_store_t in this CPU's tables (needs AVX512-VNNI + VBMI)");
  for (size_t i = 0; i < n; i++) store_t_cases(fns[i]);
}

/* ================================================================ ukernel_q (the last K chunk fused with the store) */

/* The optional ukernel_q (lowp_gemm_ukernel.h): the last K chunk of ukernel (boff NULL: B packed) or
   of ukernel_ib (B in place through boff, nr columns read) requantised straight into bytes,
     y[i * ldy + j] = dlc_q8_requant1(C'(i, j) + q->bias[c0 + i], q->mult[c0 + i], q),
     C' = (accumulate ? c : 0) + A * B,    i < m, j < n,
   against int64 products and quant.h's formula itself. A, B (the panel, or the span of the in-place
   runs) and boff exactly sized against guard pages, c's m x n corner against one (its other ints,
   the gaps between rows included, poison never to be read, and c never written), y fenced by
   sentinel bytes (before it, in the gaps between rows, after it or a guard page), q's channel
   arrays exactly c_out long against guard pages. B's columns past n (packed padding, or the in-place
   runs' other columns) hold values whose lanes would change the outputs or the path if used.

   The probe (where this system has guard pages): the exact path of the store reads q->mult, the
   wide screen never does (it needs only mult_f), so q->mult sits on a page made unreadable during
   the call and a read of it is noted (the page is opened again and the read goes on). Under the
   wide screen a tile may take the exact path only when an output of its m x n corner is within
   DLC_Q8_WIDE_MARGIN of a tie (the test computes the screen's fp32 steps): not because of lanes past
   n, which hold sums of whatever B had there. */
#define QV_SMALL N_VALUE_KINDS         /* A in [-6, 6], B in [0, 12]: sums that mult 0.5 keeps in range */
#define UQ_K_LONG ((size_t)65792)      /* the longest kc the contract allows: 65792 * 255 * 128 < 2^31 */
#define UQ_LD_MAX ((size_t)4099)       /* ldc and ldy at most */
#define UQ_FENCE 64                    /* sentinel bytes before and after y at most */

static int8_t uq_a(int kind) { return kind == QV_SMALL ? (int8_t)irand(-6, 6) : a_value(kind); }
static uint8_t uq_b(int kind) { return kind == QV_SMALL ? (uint8_t)irand(0, 12) : b_value(kind); }

/* B's columns past n: drawn like the tile's; any byte; all 255 (the largest sums). */
enum { PAD_LIKE, PAD_ANY, PAD_MAX, N_PAD };

typedef struct uq_case {
  size_t m, n, kc, ldc, ldy, c0, c_extra; /* c_out = c0 + m + c_extra */
  int ib, off_kind;                       /* B in place through an offset table of OFF_* kind, else packed */
  int accumulate, kind, pad;              /* kind: V_* or QV_SMALL for A and B's first n columns */
  int c_targets;                          /* accumulate: c set so that C' hits chosen values (the output
                                             range, ties, extremes) rather than random partial sums */
  int32_t c_range;                        /* accumulate: |C'| <= max |A * B| + c_range */
  int is_signed;
  int32_t zp;
  double lo, hi;
  int mult_kind, screen, ties;            /* SM_*, SS_*, STIE_* (test_q8_store_t's) */
  int sides;  /* bit 0: A, B and boff end at a guard page (1) or start right after one; bit 1: the same
                 for c's m x n corner; bit 2: y's last byte right before a guard page (1) or sentinels */
  int32_t poison;                         /* c's ints outside the corner */
} uq_case;

/* A mapping with a guard page on either side (guard_pages.h); a buffer sits at its start or ends at
   its end. */
static size_t uq_cap(const region *r) { return (size_t)(r->hi - r->lo); }

typedef struct uq_ctx {
  const dlc_q8d4_gemm_family *f;
  region ra, rb, ro, rc, ry, rmult, rbias, rmf;
  int8_t *a_copy;
  uint8_t *b_copy;
  ptrdiff_t *o_copy, *p;
  int32_t *c_copy;
  int64_t *prod; /* A * B, mr x nr */
  int64_t *cp;   /* C', m x n */
  uint8_t *want;
  int probe;
  size_t cases, outputs, ib_cases, acc_cases, c0_cases, signed_cases, long_cases, big_strides;
  size_t wide_cases, fast_cases, tie_tiles, exact_cases, no_mult_f, big_bias, narrow_screen, pad_cases;
  size_t mult_reads, exact_ties, near_ties, sat_lo, sat_hi;
} uq_ctx;

/* A fault names its case (fault.h); the pages of q->mult, closed, are a probe: a read there counts
   and opens them again. */
#define UQ_SET_WHAT(s) snprintf(fault_case, sizeof fault_case, "%s", (s))

/* The wide screen's fp32 steps on one lane (q8_wide_avx512.h: one fma onto 1.5 x 2^23, one fms for
   the distance d): whether |d| > 1/2 - DLC_Q8_WIDE_MARGIN, the lane that sends a tile to the exact
   path. a is the lane's s32 acc + bias. */
static int uq_near_tie(int32_t a, float mf) {
  const float fa = (float)a, t = fmaf(fa, mf, 12582912.0f), d = fmaf(fa, mf, -(t - 12582912.0f));
  return fabsf(d) > 0.5f - DLC_Q8_WIDE_MARGIN;
}

static uint8_t uq_pad(const uq_case *t) {
  return t->pad == PAD_ANY ? (uint8_t)next_u32() : t->pad == PAD_MAX ? 255 : uq_b(t->kind);
}

static void run_uq_case(uq_ctx *x, const uq_case *t) {
  const dlc_q8d4_gemm_family *f = x->f;
  const size_t mr = f->mr, nr = f->nr, m = t->m, n = t->n, kc = t->kc, nu = kc / 4, ldc = t->ldc, ldy = t->ldy;
  const size_t c0 = t->c0, c_out = c0 + m + t->c_extra;
  assert_true(m >= 1 && m <= mr && n >= 1 && n <= nr && kc >= 4 && kc % 4 == 0 && kc <= UQ_K_LONG);
  assert_true(ldc >= n && ldc <= UQ_LD_MAX && ldy >= n && ldy <= UQ_LD_MAX && c_out <= ST_CH_CAP);
  assert_true(!(t->ib && t->kind == QV_SMALL && t->pad != PAD_LIKE)); /* overlapping runs keep the bound */
  const int ops_end = t->sides & 1, c_end = (t->sides >> 1) & 1, y_end = (t->sides >> 2) & 1;

  /* A: the panel, rows past m random */
  const size_t a_bytes = nu * mr * 4;
  int8_t *a = region_place(&x->ra, a_bytes, ops_end);
  for (size_t u = 0; u < nu; u++)
    for (size_t i = 0; i < mr; i++)
      for (size_t r = 0; r < 4; r++) a[(u * mr + i) * 4 + r] = i < m ? uq_a(t->kind) : (int8_t)next_u32();
  /* B: the packed panel (columns past n padding), or runs of nr columns through boff in a span whose
     other bytes are random (the span as run_ib_case builds it, against a guard page either side) */
  uint8_t *bspan, *b;
  size_t b_bytes;
  ptrdiff_t *boff = NULL, base = 0;
  if (!t->ib) {
    b_bytes = nu * nr * 4;
    b = bspan = region_place(&x->rb, b_bytes, ops_end);
    for (size_t u = 0; u < nu; u++)
      for (size_t j = 0; j < nr; j++)
        for (size_t r = 0; r < 4; r++) b[(u * nr + j) * 4 + r] = j < n ? uq_b(t->kind) : uq_pad(t);
  } else {
    const size_t row = 2 * nr;
    ib_starts(t->off_kind, nu, row, x->p, &base);
    ptrdiff_t hi = 0;
    for (size_t k = 0; k < nu; k++) hi = x->p[k] > hi ? x->p[k] : hi;
    size_t span_units = (size_t)hi + row;
    if ((size_t)base > span_units) span_units = (size_t)base;
    b_bytes = 2 * span_units;
    bspan = region_place(&x->rb, b_bytes, ops_end);
    b = bspan + 2 * base;
    boff = region_place(&x->ro, nu * sizeof(ptrdiff_t), !ops_end);
    for (size_t e = 0; e < b_bytes; e++) bspan[e] = (uint8_t)next_u32();
    for (size_t k = 0; k < nu; k++) {
      boff[k] = x->p[k] - base;
      for (size_t j = 0; j < nr; j++)
        for (size_t r = 0; r < 4; r++) bspan[2 * x->p[k] + (ptrdiff_t)(4 * j + r)] = j < n ? uq_b(t->kind) : uq_pad(t);
    }
    memcpy(x->o_copy, boff, nu * sizeof(ptrdiff_t));
  }
  memcpy(x->a_copy, a, a_bytes);
  memcpy(x->b_copy, bspan, b_bytes);

  /* A * B over every column B has (the lanes past n too) */
  for (size_t e = 0; e < m * nr; e++) x->prod[e] = 0;
  for (size_t u = 0; u < nu; u++) {
    const uint8_t *bu = t->ib ? b + 2 * boff[u] : b + u * 4 * nr;
    const int8_t *au = a + u * 4 * mr;
    for (size_t i = 0; i < m; i++) {
      const int64_t a0 = au[4 * i], a1 = au[4 * i + 1], a2 = au[4 * i + 2], a3 = au[4 * i + 3];
      int64_t *pr = x->prod + i * nr;
      for (size_t j = 0; j < nr; j++)
        pr[j] += a0 * bu[4 * j] + a1 * bu[4 * j + 1] + a2 * bu[4 * j + 2] + a3 * bu[4 * j + 3];
    }
  }
  const int64_t pmax = (int64_t)kc * (t->kind == QV_SMALL ? 6 * 12 : 128 * 255);
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) assert_true(llabs((long long)x->prod[i * nr + j]) <= pmax);
  const int64_t acc_max = pmax + (t->accumulate ? t->c_range : 0);
  assert_true(acc_max <= INT32_MAX);

  /* q: per-channel multipliers and biases (test_q8_store_t's), exactly c_out of each against guard pages */
  double *mult = (double *)region_place(&x->rmult, c_out * sizeof(double), 1);
  int32_t *bias = (int32_t *)region_place(&x->rbias, c_out * sizeof(int32_t), 1);
  float *mult_f = (float *)region_place(&x->rmf, c_out * sizeof(float), 1);
  st_case sc;
  memset(&sc, 0, sizeof sc);
  sc.m = m, sc.c0 = c0, sc.mult_kind = t->mult_kind, sc.screen = t->screen;
  st_channels(&sc, acc_max, c_out, mult, bias);
  if (t->screen == SS_NARROW) /* past the wide screen whatever the bound (small sums: 64 may not be) */
    mult[next_u32() % c_out] = fmax(64.0, 0x1p21 / (double)acc_max) * (1.0 + (double)next_u32() / 4294967296.0);
  dlc_q8_params q;
  memset(&q, 0, sizeof q);
  q.is_signed = t->is_signed;
  q.y_min = t->is_signed ? -128 : 0, q.y_max = t->is_signed ? 127 : 255;
  q.x_zero_point = (int32_t)irand(q.y_min, q.y_max);
  q.y_zero_point = t->zp;
  q.lo = t->lo, q.hi = t->hi;
  q.mult = mult, q.bias = bias;
  dlc_q8_derive(&q, acc_max, c_out, t->screen == SS_NULL ? NULL : mult_f);
  switch (t->screen) {
    case SS_NULL: assert_true(q.mult_f == NULL && !q.screen_wide); break;
    case SS_BIG_BIAS: assert_true(!q.bias_s32 && q.mult_f == NULL && !q.screen_wide); break;
    case SS_NARROW: assert_true(!q.screen_wide); break;
    default: break;
  }

  /* c: the corner (accumulate: partial sums or values aimed at; else ints never to be read), every
     other int of its buffer poison, the corner's last int before a guard page or its first after one */
  const size_t c_pre = c_end ? GUARD : 0, c_total = c_end ? GUARD + (m - 1) * ldc + n : m * ldc + GUARD;
  int32_t *cbuf = region_place(&x->rc, c_total * sizeof(int32_t), c_end), *c = cbuf + c_pre;
  for (size_t e = 0; e < c_total; e++) cbuf[e] = next_u32() % 4 ? t->poison : (int32_t)next_u32();
  const int halves = t->mult_kind == SM_TIES || t->mult_kind == SM_NEAR_HALF;
  const size_t one_tie = next_u32() % (m * n);
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      const size_t ch = c0 + i, e = i * n + j;
      const int64_t pv = x->prod[i * nr + j];
      int64_t cv = (int32_t)next_u32();
      if (t->accumulate && !t->c_targets) {
        cv = irand(-t->c_range, t->c_range);
      } else if (t->accumulate) {
        int tie = 0;
        if (halves && t->ties == STIE_DENSE) tie = next_u32() & 1;
        if (halves && t->ties == STIE_SPARSE) tie = e == one_tie || next_u32() % 97 == 0;
        int64_t aim = st_acc(&sc, acc_max, mult[ch], bias[ch], tie); /* a tie under a huge bias: past the bound */
        aim = aim < -acc_max ? -acc_max : aim > acc_max ? acc_max : aim;
        cv = aim - pv;
        cv = cv < INT32_MIN ? INT32_MIN : cv > INT32_MAX ? INT32_MAX : cv; /* |C'| <= acc_max still */
      }
      c[i * ldc + j] = (int32_t)cv;
      x->cp[e] = (t->accumulate ? cv : 0) + pv;
      assert_true(llabs((long long)x->cp[e]) <= acc_max);
    }
  memcpy(x->c_copy, cbuf, c_total * sizeof(int32_t));

  /* the formula's bytes; what the wide screen would do with the corner and with the lanes past n */
  int needs_exact = 0, pad_near = 0;
  for (size_t i = 0; i < m; i++) {
    const size_t ch = c0 + i;
    for (size_t j = 0; j < n; j++) {
      const size_t e = i * n + j;
      const int64_t s = x->cp[e] + bias[ch];
      const int32_t w = dlc_q8_requant1(s, mult[ch], &q);
      x->want[e] = (uint8_t)w;
      x->sat_lo += w == q.y_min, x->sat_hi += w == q.y_max;
      if (q.screen_wide) {
        needs_exact |= uq_near_tie((int32_t)s, q.mult_f[ch]);
        const double v = (double)s * mult[ch], fr = v - floor(v);
        x->near_ties += fabs(fr - 0.5) < 0x1p-12 && fr != 0.5;
        x->exact_ties += fr == 0.5;
      }
    }
    /* lanes past n: what an AVX-512 tile computes (16-lane vectors; in place all nr), c not added */
    const size_t lanes = t->ib ? nr : ((n + 15) / 16 * 16 < nr ? (n + 15) / 16 * 16 : nr);
    if (q.screen_wide)
      for (size_t j = n; j < lanes; j++)
        pad_near |= uq_near_tie((int32_t)(uint32_t)((uint64_t)x->prod[i * nr + j] + (uint64_t)(int64_t)bias[ch]),
                                q.mult_f[ch]);
  }

  /* y: sentinel bytes before it, in the gaps between rows, and after it or a guard page */
  const uint8_t sent = (uint8_t)(0x5A ^ (next_u32() & 0xF1));
  const size_t pre = 1 + next_u32() % UQ_FENCE, body = y_end ? (m - 1) * ldy + n : m * ldy;
  const size_t total = pre + body + (y_end ? 0 : 1 + next_u32() % UQ_FENCE);
  uint8_t *ybase = region_place(&x->ry, total, y_end), *y = ybase + pre;
  memset(ybase, sent, total);

  char what[600];
  snprintf(what, sizeof what,
           "%s ukernel_q m=%zu n=%zu kc=%zu %s ldc=%zu ldy=%zu c0=%zu c_out=%zu acc=%d%s kind=%d pad=%d signed=%d "
           "zp=%d lo=%g hi=%g mult_kind=%d screen=%d (wide %d, mult_f %s, bias_s32 %d) ties=%d acc_max=%lld sides=%d",
           f->name, m, n, kc, t->ib ? "in place" : "packed", ldc, ldy, c0, c_out, t->accumulate,
           t->accumulate ? (t->c_targets ? " (c aimed)" : " (c random)") : "", t->kind, t->pad, t->is_signed, t->zp,
           t->lo, t->hi, t->mult_kind, t->screen, q.screen_wide, q.mult_f ? "set" : "NULL", q.bias_s32, t->ties,
           (long long)acc_max, t->sides);
  if (t->ib) {
    const size_t l = strlen(what);
    snprintf(what + l, sizeof what - l, " offsets=%d boff[0]=%td", t->off_kind, boff[0]);
  }
  UQ_SET_WHAT(what);

  int mult_read = 0;
#ifdef HAVE_GUARD_PAGES
  if (x->probe) {
    fault_probe((uintptr_t)x->rmult.lo, (uintptr_t)x->rmult.hi);
    fault_probe_hits = 0;
    assert_int_equal(mprotect(x->rmult.lo, uq_cap(&x->rmult), PROT_NONE), 0);
  }
#endif

  f->ukernel_q(m, n, kc, a, b, boff, c, ldc, t->accumulate, &q, c0, y, ldy);

#ifdef HAVE_GUARD_PAGES
  if (x->probe) {
    mult_read = fault_probe_hits != 0;
    fault_probe(0, 0);
    assert_int_equal(mprotect(x->rmult.lo, uq_cap(&x->rmult), PROT_READ | PROT_WRITE), 0);
  }
#endif

  if (memcmp(a, x->a_copy, a_bytes) || memcmp(bspan, x->b_copy, b_bytes) ||
      (t->ib && memcmp(boff, x->o_copy, nu * sizeof(ptrdiff_t))))
    fail_msg("%s: wrote to an operand", what);
  for (size_t e = 0; e < c_total; e++)
    if (cbuf[e] != x->c_copy[e]) {
      const ptrdiff_t off = (ptrdiff_t)e - (ptrdiff_t)c_pre;
      fail_msg("%s: wrote c at offset %td (row %td, column %td): %d, was %d", what, off,
               off >= 0 ? off / (ptrdiff_t)ldc : -1, off >= 0 ? off % (ptrdiff_t)ldc : off, cbuf[e], x->c_copy[e]);
    }
  for (size_t e = 0; e < pre; e++)
    if (ybase[e] != sent) fail_msg("%s: wrote y[%td] (before y)", what, (ptrdiff_t)e - (ptrdiff_t)pre);
  for (size_t i = 0; i < m; i++) {
    const uint8_t *yr = y + i * ldy;
    for (size_t j = 0; j < n; j++) {
      const size_t e = i * n + j;
      if (yr[j] != x->want[e]) {
        const int got = t->is_signed ? (int8_t)yr[j] : yr[j], want = t->is_signed ? (int8_t)x->want[e] : x->want[e];
        const int64_t s = x->cp[e] + bias[c0 + i];
        fail_msg("%s: y[%zu * ldy + %zu] (channel %zu) = %d, want %d (C' %lld = A * B %lld + c %d, bias %d, "
                 "mult %.17g, mult_f %.9g, v = %.17g%s)",
                 what, i, j, c0 + i, got, want, (long long)x->cp[e], (long long)x->prod[i * nr + j],
                 t->accumulate ? c[i * ldc + j] : 0, bias[c0 + i], mult[c0 + i],
                 q.mult_f ? (double)q.mult_f[c0 + i] : 0.0, (double)s * mult[c0 + i],
                 q.screen_wide ? (needs_exact ? ", a tile for the exact path" : ", a tile for the wide screen") : "");
      }
    }
    const size_t row_end = i + 1 < m || !y_end ? ldy : n;
    for (size_t j = n; j < row_end; j++)
      if (yr[j] != sent) fail_msg("%s: wrote the gap y[%zu * ldy + %zu]", what, i, j);
  }
  for (size_t e = pre + body; e < total; e++)
    if (ybase[e] != sent) fail_msg("%s: wrote y[%zu] (after y)", what, e - pre);
  if (q.screen_wide && mult_read && !needs_exact)
    fail_msg("%s: took the exact path (read q->mult) though no output of the %zu x %zu corner is within the wide "
             "screen's margin of a tie%s",
             what, m, n, pad_near ? " (a lane past n is: it must not send the tile down)" : "");

  x->cases++, x->outputs += m * n;
  x->ib_cases += t->ib != 0, x->acc_cases += t->accumulate != 0, x->c0_cases += c0 > 0;
  x->signed_cases += t->is_signed != 0, x->long_cases += kc > 4096, x->big_strides += ldc > 1000 || ldy > 1000;
  x->mult_reads += mult_read;
  if (q.screen_wide) {
    x->wide_cases++;
    x->fast_cases += !needs_exact && !mult_read, x->tie_tiles += needs_exact;
    x->pad_cases += !needs_exact && pad_near;
  } else {
    x->exact_cases++;
    x->no_mult_f += q.mult_f == NULL, x->big_bias += !q.bias_s32, x->narrow_screen += q.mult_f != NULL;
  }
}

/* Whether dlc_q8_derive can give t a screen: lo_sat <= hi_sat. */
static int uq_screenable(const uq_case *t) {
  const double y_min = t->is_signed ? -128 : 0, y_max = t->is_signed ? 127 : 255;
  return fmax(t->lo, y_min - t->zp - 1) <= fmin(t->hi, y_max - t->zp + 1);
}

/* A configuration for a geometry: mult kind and screen given, the rest drawn (the multipliers 0.5 and
   0.25 on sums small enough for the wide screen, mostly). */
static void uq_pick(uq_case *t, size_t m, size_t n, int ib, int accumulate, int mult_kind, int screen) {
  static const size_t kcs[] = {4, 8, 12, 64, 256};
  static const size_t c0s[] = {0, 0, 1, 3, 16, 17, 45};
  static const size_t ld_extra[] = {0, 0, 1, 3, 16, 17, 100};
  static const int32_t ranges[] = {1 << 12, 1 << 20, 1 << 28}, ranges_halves[] = {4096, 65536, 262144};
  const int halves = mult_kind == SM_TIES || mult_kind == SM_NEAR_HALF;
  memset(t, 0, sizeof *t);
  t->m = m, t->n = n, t->ib = ib, t->accumulate = accumulate;
  t->kind = halves && next_u32() % 4 ? QV_SMALL : (int)(next_u32() % (N_VALUE_KINDS + 1));
  t->kc = kcs[next_u32() % (halves && t->kind != QV_SMALL ? 3 : 5)];
  t->ldc = n + ld_extra[next_u32() % 7];
  t->ldy = n + ld_extra[next_u32() % 7];
  t->c0 = c0s[next_u32() % 7];
  t->c_extra = next_u32() % 3 == 0 ? 5 : 0;
  t->off_kind = (int)(next_u32() % N_OFF_KINDS);
  t->pad = ib && t->kind == QV_SMALL ? PAD_LIKE : (int)(next_u32() % N_PAD);
  t->c_targets = accumulate && next_u32() % 4 != 0;
  t->c_range = halves ? ranges_halves[next_u32() % 3] : ranges[next_u32() % 3];
  t->is_signed = (int)(next_u32() & 1);
  t->zp = st_zps[t->is_signed][next_u32() % 4];
  const size_t bi = next_u32() % ST_NB;
  t->lo = st_bounds[bi][0], t->hi = st_bounds[bi][1];
  t->mult_kind = mult_kind, t->screen = screen;
  t->ties = (int)(next_u32() % N_STIE);
  t->sides = (int)(next_u32() % 8);
  t->poison = next_u32() & 1 ? INT32_MIN : INT32_MAX;
}

/* Where this build has the VNNI family and this CPU runs it, it carries ukernel_q (losing it fails
   rather than skips). */
static void check_expected_q(void) {
#if defined(DLC_HAVE_AVX512VNNI)
  if (dlc_cpu()->avx512_vnni) assert_non_null(dlc_q8d4_gemm__avx512vnni.ukernel_q);
#endif
}

/* Every m x n, packed and in place, with every kind of multiplier and screen and then the wide screen
   (accumulate or not each time; kc 4, 8, 12, 64, 256); every signedness x zero point x clamp x
   multiplier x screen on drawn geometries; the longest kc with extreme operands (sums within 2^15
   of s32's ends); strides of planes. */
static void test_ukernel_q(void **state) {
  (void)state;
  check_expected_families();
  check_expected_q();
  const dlc_q8d4_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  uq_ctx x;
  memset(&x, 0, sizeof x);
  size_t nq = 0, geo_all = 0, geo_both = 0, geo_cases = 0;
  for (size_t s = 0; s < nfam; s++) {
    const dlc_q8d4_gemm_family *f = fams[s];
    if (!f->ukernel_q) continue;
    nq++;
    const size_t mr = f->mr, nr = f->nr, nu_max = UQ_K_LONG / 4;
    x.f = f;
    region_open(&x.ra, nu_max * mr * 4);
    region_open(&x.rb, nu_max * (4 * nr + 16) + 16 * nr); /* the panel, or the widest span of runs */
    region_open(&x.ro, nu_max * sizeof(ptrdiff_t));
    region_open(&x.rc, (mr * UQ_LD_MAX + nr + GUARD) * sizeof(int32_t));
    region_open(&x.ry, 2 * UQ_FENCE + mr * UQ_LD_MAX + nr);
    region_open(&x.rmult, ST_CH_CAP * sizeof(double));
    region_open(&x.rbias, ST_CH_CAP * sizeof(int32_t));
    region_open(&x.rmf, ST_CH_CAP * sizeof(float));
    x.a_copy = xalloc_slack(uq_cap(&x.ra)), x.b_copy = xalloc_slack(uq_cap(&x.rb)), x.o_copy = xalloc_slack(uq_cap(&x.ro));
    x.p = xalloc_slack(uq_cap(&x.ro)), x.c_copy = xalloc_slack(uq_cap(&x.rc));
    x.prod = xalloc_slack(mr * nr * sizeof(int64_t)), x.cp = xalloc_slack(mr * nr * sizeof(int64_t)), x.want = xalloc_slack(mr * nr);
#ifdef HAVE_GUARD_PAGES
    x.probe = 1;
#endif
    fault_names_case("\nukernel_q faulted (an access outside its operands?) in: ", 1);
    uq_case t;
    size_t idx = 0;

    /* per geometry: four of every multiplier and screen kind in turn, then three under the wide screen:
       multipliers 1e-4..1e-2 (the fast path but for a rare tie); 0.5 / 0.25 / 0.5 +- 2^-30 with one tie
       aimed at in the corner and a few more (the exact path); the same with the corner kept off ties
       (the fast path, lanes past n on ties half the time) */
    for (int ib = 0; ib <= 1; ib++)
      for (size_t m = 1; m <= mr; m++)
        for (size_t n = 1; n <= nr; n++) {
          const size_t before = x.cases, fast0 = x.fast_cases, tie0 = x.tie_tiles, acc0 = x.acc_cases;
          for (int r = 0; r < 4; r++, idx++) {
            uq_pick(&t, m, n, ib, r & 1, (int)(idx % N_SM), (int)(idx / N_SM % N_SS));
            run_uq_case(&x, &t);
          }
          for (int r = 0; r < 3; r++, idx++) {
            const int mk = r == 0 ? SM_WIDE : idx % 2 ? SM_TIES : SM_NEAR_HALF;
            uq_pick(&t, m, n, ib, r ? 1 : (int)(idx / 3 % 2), mk, SS_ON);
            while (!uq_screenable(&t)) { /* clamps all beyond the type: no screen */
              const size_t bi = next_u32() % ST_NB;
              t.lo = st_bounds[bi][0], t.hi = st_bounds[bi][1];
            }
            if (r) t.c_targets = 1, t.ties = r == 1 ? STIE_SPARSE : STIE_NONE;
            run_uq_case(&x, &t);
          }
          geo_cases += x.cases - before;
          geo_both += x.fast_cases > fast0 && x.tie_tiles > tie0 && x.acc_cases - acc0 < x.cases - before &&
                      x.acc_cases > acc0;
          geo_all++;
        }

    for (int sg = 0; sg <= 1; sg++)
      for (size_t zi = 0; zi < 4; zi++)
        for (size_t bi = 0; bi < ST_NB; bi++)
          for (int mk = 0; mk < N_SM; mk++)
            for (int sc = 0; sc < N_SS; sc++) {
              uq_pick(&t, (size_t)irand(1, (int64_t)mr), (size_t)irand(1, (int64_t)nr), (int)(next_u32() & 1),
                      (int)(next_u32() & 1), mk, sc);
              t.is_signed = sg, t.zp = st_zps[sg][zi], t.lo = st_bounds[bi][0], t.hi = st_bounds[bi][1];
              run_uq_case(&x, &t);
            }

    /* the longest kc: every product the extreme of one sign (sums within 2^15 of s32's ends), or of
       either sign at random; c within +-30000 */
    static const size_t long_kcs[] = {UQ_K_LONG, UQ_K_LONG - 4};
    static const int long_kinds[] = {V_MAX_POSITIVE, V_MAX_NEGATIVE, V_RANDOM_EXTREMES};
    static const int long_screens[] = {SS_ON, SS_NULL, SS_BIG_BIAS, SS_ON};
    for (size_t ki = 0; ki < 2; ki++)
      for (size_t kj = 0; kj < 3; kj++)
        for (int acc = 0; acc <= 1; acc++)
          for (int ib = 0; ib <= 1; ib++, idx++) {
            if (kj == 2 && ib) continue;
            const size_t m = ib ? mr - idx % 3 % mr : mr, n = ib ? 1 + idx % nr : nr - idx % 2;
            uq_pick(&t, m, n, ib, acc, (int)(idx % 2 ? SM_WIDE : SM_MIXED), long_screens[idx % 4]);
            t.kc = long_kcs[ki], t.kind = long_kinds[kj], t.pad = PAD_ANY, t.off_kind = OFF_RANDOM;
            t.c_range = 30000;
            run_uq_case(&x, &t);
          }

    /* rows of c and y planes apart, the channels far along */
    for (int r = 0; r < 8; r++) {
      uq_pick(&t, r & 1 ? mr : (size_t)irand(1, (int64_t)mr), r & 2 ? nr : (size_t)irand(1, (int64_t)nr), r & 1,
              (r >> 2) & 1, r % N_SM, r % 3 ? SS_ON : SS_NULL);
      t.ldc = r & 1 ? UQ_LD_MAX : 3137, t.ldy = r & 2 ? UQ_LD_MAX : 3136, t.c0 = 45, t.c_extra = 13;
      run_uq_case(&x, &t);
    }

    fault_names_case(NULL, 0);
    region_close(&x.ra), region_close(&x.rb), region_close(&x.ro), region_close(&x.rc), region_close(&x.ry);
    region_close(&x.rmult), region_close(&x.rbias), region_close(&x.rmf);
    free(x.a_copy), free(x.b_copy), free(x.o_copy), free(x.p), free(x.c_copy), free(x.prod), free(x.cp), free(x.want);
  }
  if (!nq) skip_test("ukernel_q", "no q8_d4 family here has ukernel_q");
  /* what the cases were built to reach, reached */
  assert_true(x.ib_cases > 0 && x.acc_cases > 0 && x.c0_cases > 0 && x.signed_cases > 0 && x.long_cases > 0);
  assert_true(x.wide_cases > 0 && x.fast_cases > 0 && x.tie_tiles > 0 && x.exact_cases > 0);
  assert_true(x.no_mult_f > 0 && x.big_bias > 0 && x.narrow_screen > 0 && x.pad_cases > 0);
  assert_true(x.exact_ties > 0 && x.near_ties > 0 && x.sat_lo > 0 && x.sat_hi > 0);
  if (geo_both != geo_all)
    fail_msg("ukernel_q: %zu of %zu geometries (m, n, packed or in place) saw the fast path, the exact path of a "
             "wide-screen tile, accumulate 0 and 1",
             geo_both, geo_all);
  print_message("[ ukernel_q ] %zu cases (%zu over every m x n, packed and in place, each with accumulate 0 and 1, "
                "a fast and an exact wide-screen tile; %zu in place, %zu accumulate, %zu c0 > 0, %zu s8, %zu long "
                "kc, %zu plane strides; wide screen %zu: %zu fast, %zu with a corner tie, %zu with only lanes past n "
                "near one; exact %zu: %zu no mult_f, %zu bias past s32, %zu fp32 screen; %zu read q->mult%s), %zu "
                "outputs (%zu exact ties and %zu within 2^-12 of one under the wide screen; %zu at y_min, %zu at "
                "y_max)\n",
                x.cases, geo_cases, x.ib_cases, x.acc_cases, x.c0_cases, x.signed_cases, x.long_cases, x.big_strides,
                x.wide_cases, x.fast_cases, x.tie_tiles, x.pad_cases, x.exact_cases, x.no_mult_f, x.big_bias,
                x.narrow_screen, x.mult_reads, x.probe ? "" : " (no probe)", x.outputs, x.exact_ties, x.near_ties,
                x.sat_lo, x.sat_hi);
}

/* ================================================================ ukernel_qv (virtual columns) */

/* The optional ukernel_qv (lowp_gemm_ukernel.h): an in-place tile of nr virtual positions v0 + j of a
   plane with output rows wq apart (wo outputs each, nv positions in all), requantised into the
   outputs among them,
     y[i * ldy + (v / wq) * wo + v % wq] = dlc_q8_requant1(C'(i, j) + q->bias[c0 + i], q->mult[c0 + i], q)
   for v = v0 + j < nv and v % wq < wo, against int64 products and quant.h's formula. Every other byte
   of y (the rest of each channel's plane, the gaps between planes, sentinels before and after) must
   keep its value, c must not be written, the operands not changed. Geometries: wo 1..40, wq from wo
   to wo + 5 (3 x 3 padding 1: wo + 2), 1..6 rows, tiles starting anywhere from before the plane's
   first row to past its last position (the driver's last tile of a rounded-up N); every m; multipliers
   of every kind, wide screen on or not (the exact path per run), accumulate or not. */
static void test_ukernel_qv(void **state) {
  (void)state;
#if defined(DLC_HAVE_AVX512VNNI)
  if (dlc_cpu()->avx512_vnni) assert_non_null(dlc_q8d4_gemm__avx512vnni.ukernel_qv);
#endif
  const dlc_q8d4_gemm_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  size_t nqv = 0, cases = 0, outputs = 0, multi_run = 0, wide_cases = 0, acc_cases = 0, empty = 0, exact_cases = 0;
  for (size_t fi = 0; fi < nfam; fi++) {
    const dlc_q8d4_gemm_family *f = fams[fi];
    if (!f->ukernel_qv) continue;
    nqv++;
    const size_t mr = f->mr, nr = f->nr;
    for (size_t it = 0; it < 6000; it++) {
      const size_t m = 1 + it % mr, wo = (size_t)irand(1, 40), wq = wo + (size_t)(it % 3 == 0 ? 2 : irand(0, 5));
      const size_t ho = (size_t)irand(1, 6), nv = (ho - 1) * wq + wo, P = ho * wo;
      const size_t v0 = (size_t)irand(0, (int64_t)(nv + nr / 2));
      const size_t kc = 4 * (size_t)irand(1, it % 7 == 0 ? 80 : 12), nu = kc / 4;
      const int accumulate = (int)(next_u32() & 1), kind = (int)(next_u32() % N_VALUE_KINDS);
      const size_t c0 = (size_t)irand(0, 5), c_out = c0 + m + (size_t)irand(0, 3);
      const size_t ldc = nr + (size_t)irand(0, 5), ldy = P + (size_t)irand(0, 9);
      /* A, B (runs of nr units through boff, spread over a random span) and c */
      int8_t *a = xalloc_slack(nu * mr * 4);
      for (size_t e = 0; e < nu * mr * 4; e++) a[e] = a_value(kind);
      const size_t span = (nu + 3) * 2 * nr * 2;
      uint8_t *bs = xalloc_slack(span);
      for (size_t e = 0; e < span; e++) bs[e] = b_value(kind);
      ptrdiff_t *boff = xalloc_slack(nu * sizeof(ptrdiff_t));
      for (size_t k = 0; k < nu; k++) boff[k] = (ptrdiff_t)irand(0, (int64_t)(span / 2 - 2 * nr)); /* units of 2 bytes */
      int32_t *c = xalloc_slack(mr * ldc * sizeof(int32_t));
      for (size_t e = 0; e < mr * ldc; e++) c[e] = (int32_t)irand(-(1 << 20), 1 << 20);
      int8_t *a_copy = xalloc_slack(nu * mr * 4);
      uint8_t *b_copy = xalloc_slack(span);
      int32_t *c_copy = xalloc_slack(mr * ldc * sizeof(int32_t));
      memcpy(a_copy, a, nu * mr * 4), memcpy(b_copy, bs, span), memcpy(c_copy, c, mr * ldc * sizeof(int32_t));
      /* q */
      double mult[ST_CH_CAP];
      int32_t bias[ST_CH_CAP];
      float mult_f[ST_CH_CAP];
      st_case sc;
      memset(&sc, 0, sizeof sc);
      sc.m = m, sc.c0 = c0, sc.mult_kind = (int)(it / mr % N_SM), sc.screen = it % 5 == 0 ? SS_NULL : SS_ON;
      const int64_t acc_max = (int64_t)kc * 255 * 128 + (accumulate ? (1 << 20) : 0);
      st_channels(&sc, acc_max, c_out, mult, bias);
      dlc_q8_params q;
      memset(&q, 0, sizeof q);
      q.is_signed = (int)(next_u32() & 1);
      q.y_min = q.is_signed ? -128 : 0, q.y_max = q.is_signed ? 127 : 255;
      q.y_zero_point = st_zps[q.is_signed][next_u32() % 4];
      const size_t bi = next_u32() % ST_NB;
      q.lo = st_bounds[bi][0], q.hi = st_bounds[bi][1];
      q.mult = mult, q.bias = bias;
      dlc_q8_derive(&q, acc_max, c_out, sc.screen == SS_NULL ? NULL : mult_f);
      /* y: m planes ldy apart with sentinels around */
      const size_t pre = 64, ybytes = pre + m * ldy + 64;
      uint8_t *yb = xalloc_slack(ybytes), *want = xalloc_slack(ybytes);
      const uint8_t sent = (uint8_t)(0xA5 ^ (next_u32() & 0x3C));
      memset(yb, sent, ybytes);
      memset(want, sent, ybytes);
      size_t nout = 0, nrun = 0;
      for (size_t j = 0; j < nr; j++) {
        const size_t v = v0 + j;
        if (v >= nv || v % wq >= wo) continue;
        if (j == 0 || (v - 1) % wq >= wo || v - 1 >= nv) nrun++;
        for (size_t i = 0; i < m; i++) {
          int64_t sum = accumulate ? c[i * ldc + j] : 0;
          for (size_t u = 0; u < nu; u++)
            for (size_t r = 0; r < 4; r++)
              sum += (int64_t)a[(u * mr + i) * 4 + r] * bs[2 * boff[u] + (ptrdiff_t)(4 * j + r)];
          want[pre + i * ldy + (v / wq) * wo + v % wq] =
              (uint8_t)dlc_q8_requant1(sum + bias[c0 + i], mult[c0 + i], &q);
        }
        nout++;
      }
      f->ukernel_qv(m, kc, a, bs, boff, c, ldc, accumulate, &q, c0, yb + pre, ldy, v0, nv, wq, wo);
      if (memcmp(a, a_copy, nu * mr * 4) || memcmp(bs, b_copy, span) || memcmp(c, c_copy, mr * ldc * sizeof(int32_t)))
        fail_msg("%s ukernel_qv: wrote an operand or c", f->name);
      for (size_t e = 0; e < ybytes; e++)
        if (yb[e] != want[e])
          fail_msg("%s ukernel_qv m=%zu kc=%zu v0=%zu nv=%zu wq=%zu wo=%zu ho=%zu ldy=%zu acc=%d signed=%d "
                   "mult_kind=%d screen=%d (wide %d): y byte %td (plane %td, output %td) = %d, want %d",
                   f->name, m, kc, v0, nv, wq, wo, ho, ldy, accumulate, q.is_signed, sc.mult_kind, sc.screen,
                   q.screen_wide, (ptrdiff_t)e - (ptrdiff_t)pre, ((ptrdiff_t)e - (ptrdiff_t)pre) / (ptrdiff_t)ldy,
                   ((ptrdiff_t)e - (ptrdiff_t)pre) % (ptrdiff_t)ldy, yb[e], want[e]);
      cases++, outputs += nout * m, multi_run += nrun > 1, empty += nout == 0, acc_cases += accumulate != 0;
      wide_cases += q.screen_wide != 0, exact_cases += !q.screen_wide;
      free(a), free(bs), free(boff), free(c), free(a_copy), free(b_copy), free(c_copy), free(yb), free(want);
    }
  }
  if (!nqv) skip_test("ukernel_qv", "no q8_d4 family here has ukernel_qv");
  assert_true(multi_run > 0 && empty > 0 && acc_cases > 0 && wide_cases > 0 && exact_cases > 0);
  print_message("[ ukernel_qv ] %zu cases, %zu outputs (%zu tiles over several output rows, %zu with none, %zu "
                "accumulate, %zu wide screen, %zu exact)\n",
                cases, outputs, multi_run, empty, acc_cases, wide_cases, exact_cases);
}

int main(void) {
  rng_state = 0x9E3779B97F4A7C15ull;
  return RUN_TESTS(test_ukernel_edges, test_ukernel_wide_ldc, test_ukernel_ib, test_pack_quads, test_pack_plane,
                   test_pack_then_ukernel, test_gemv, test_ukernel_t, test_s32_transpose, test_q8_store_t,
                   test_ukernel_q, test_ukernel_qv);
}
