/* test_ukernel_lowp_dw.c - the depthwise F16 / int8 row kernels of every ISA this machine runs
 * (src/direct/lowp_dw_ukernel.h), against references written here: int8 exactly against int64
 * sums, F16 against a double reference within one fp32 multiply-add's rounding. Every length
 * 0..70 (vector bodies, tails, the scalar short rows), strides 1, 2, 3 and 7; x sits once with
 * its last element against an inaccessible page and once with its first element just after one,
 * so a read outside x[0..(n-1)*stride] faults; guards around acc catch stray writes. The NHWC
 * channel-run kernels (f16_ch, q8_ch) likewise, over 9 accumulating calls per case (see their
 * section below), and the NCHW widening kernels (f16_widen, q8_widen) bit-exactly against
 * references written here, every half and every byte through the vector and the scalar paths.
 * Each test checks that it reached the ISA's own family (avx2's, neon's), not only generic's. */
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
#include "support/fault.h"
#include "support/guard_pages.h"
#include "support/half.h"
#include "support/kernel_tables.h"
#include "support/rng.h"
#include "support/skip.h"

#define MAXN 70
#define GUARD 19
#define SENTINEL ((int32_t)0x5A5A5A5A)

#if defined(DLC_HAVE_NEON)
#endif

/* f is `want`, with all six kernels and both names. */
static void check_full_family(const dlc_lowp_dw_family *f, const dlc_lowp_dw_family *want) {
  assert_ptr_equal(f, want);
  assert_non_null(f->f16_name);
  assert_non_null(f->q8_name);
  assert_non_null(f->f16_row);
  assert_non_null(f->q8_row);
  assert_non_null(f->f16_ch);
  assert_non_null(f->q8_ch);
  assert_non_null(f->f16_widen);
  assert_non_null(f->q8_widen);
}

/* A family must exist where this build has written one, so losing it from a table fails: and the
   tables carry the ISA's own family, complete (avx2's in the avx2 table; neon's, the template's
   instance, in the neon table of every AArch64 CPU), whatever DLCONV_ISA caps. */
static void check_expected_families(void) {
  CHECK_TABLE_FAMILIES(lowp_dw, NULL, NULL);
#if defined(DLC_HAVE_X86)
  if (dlconv_isa_available(DLCONV_ISA_AVX2) == 1)
    check_full_family(TABLE_FAMILY(DLCONV_ISA_AVX2, lowp_dw), &dlc_lowp_dw__avx2);
#endif
#if defined(DLC_HAVE_NEON)
  assert_int_equal(dlconv_isa_available(DLCONV_ISA_NEON), 1);
  check_full_family(TABLE_FAMILY(DLCONV_ISA_NEON, lowp_dw), &dlc_lowp_dw__neon);
#endif
}

/* The families a test ran, each once, so that it can check it reached the ISA's own family
   (not only the generic one) wherever that table is under test. */
static const dlc_lowp_dw_family *ran[MAX_FAMILIES];
static size_t nran;
static void ran_reset(void) { nran = 0; }
static void ran_add(const dlc_lowp_dw_family *f) { ADD_FAMILY(ran, nran, f); }
static int ran_has(const dlc_lowp_dw_family *f) {
  for (size_t i = 0; i < nran; i++)
    if (ran[i] == f) return 1;
  return 0;
}
static void check_ran(void) {
  assert_true(ran_has(TABLE_FAMILY(DLCONV_ISA_GENERIC, lowp_dw)) || !kernel_table_of(DLCONV_ISA_GENERIC));
#if defined(DLC_HAVE_X86)
  if (kernel_table_of(DLCONV_ISA_AVX2)) assert_true(ran_has(&dlc_lowp_dw__avx2));
#endif
#if defined(DLC_HAVE_NEON)
  if (kernel_table_of(DLCONV_ISA_NEON)) assert_true(ran_has(&dlc_lowp_dw__neon));
#endif
  ran_reset();
}

/* ================================================================ x placement */

/* The largest x: MAXN elements at the largest stride, 2 bytes each. */
#define MAX_STRIDE 7
#define X_BYTES (((MAXN - 1) * MAX_STRIDE + 1) * 2)

/* x regions (guard_pages.h): a readable region of X_BYTES or more with no readable byte right
   before or right after it. */
static void xregion_open(region *r) { region_open(r, X_BYTES); }

/* Where a row of `bytes` bytes goes: against the end (at_end) or the start of the region (owned:
   memory of the row's own, none here). */
static unsigned char *x_place(region *r, size_t bytes, int at_end, void **owned) {
  *owned = NULL;
  return region_place(r, bytes, at_end);
}

static size_t x_elems(size_t n, size_t stride) { return n ? (n - 1) * stride + 1 : 0; }

static const size_t strides[] = {1, 2, 3, MAX_STRIDE};
#define N_STRIDES (sizeof strides / sizeof strides[0])

/* ================================================================ int8 */

/* x at its type's ends, and random. */
static uint8_t q8_x_value(int is_signed, int kind) {
  switch (kind) {
    case 0: return (uint8_t)next_u32();
    case 1: return is_signed ? 0x80 : 0x00; /* minimum */
    case 2: return is_signed ? 0x7f : 0xff; /* maximum */
    default: {
      static const uint8_t ends[] = {0x00, 0x01, 0x7f, 0x80, 0x81, 0xfe, 0xff};
      return ends[next_u32() % sizeof ends];
    }
  }
}

static void run_q8(const dlc_lowp_dw_family *f, region *xr, size_t n, size_t stride, int is_signed, int32_t zp,
                   int32_t w, int xkind, int at_end) {
  const size_t ne = x_elems(n, stride);
  void *owned;
  uint8_t *x = x_place(xr, ne, at_end, &owned);
  for (size_t i = 0; i < ne; i++) x[i] = i % stride ? (uint8_t)next_u32() : q8_x_value(is_signed, xkind);

  int32_t buf[GUARD + MAXN + 3 + GUARD], acc0[MAXN];
  const size_t total = sizeof buf / sizeof buf[0];
  for (size_t i = 0; i < total; i++) buf[i] = SENTINEL;
  int32_t *acc = buf + GUARD + n % 3; /* unaligned rows too */
  for (size_t j = 0; j < n; j++) acc[j] = acc0[j] = (int32_t)irand(-(1 << 28), 1 << 28);

  f->q8_row(n, x, stride, w, zp, is_signed, acc);

  for (size_t i = 0; i < total; i++) {
    const ptrdiff_t j = (int32_t *)buf + i - acc;
    if ((j < 0 || j >= (ptrdiff_t)n) && buf[i] != SENTINEL)
      fail_msg("%s n=%zu stride=%zu: wrote acc[%td]", f->q8_name, n, stride, j);
  }
  for (size_t j = 0; j < n; j++) {
    const uint8_t b = x[j * stride];
    const int64_t xv = is_signed ? (int64_t)(int8_t)b : (int64_t)b;
    const int64_t want = (int64_t)acc0[j] + (xv - zp) * (int64_t)w;
    if ((int64_t)acc[j] != want)
      fail_msg("%s n=%zu stride=%zu %s zp=%d w=%d%s: acc[%zu] = %d, want %lld (x %lld, acc %d)", f->q8_name, n,
               stride, is_signed ? "s8" : "u8", zp, w, at_end ? " x at end" : "", j, acc[j], (long long)want,
               (long long)xv, acc0[j]);
  }
  free(owned);
}

static void test_q8_rows(void **state) {
  (void)state;
  ran_reset();
  check_expected_families();
  /* type-range zero points (what validation lets through), plus far ones: x - zp at the ends of
     s16 and past them (an s16 shortcut must fall back there) */
  static const int32_t zps[] = {0, 128, 37, -51, 255, -128, 127, -32512, -32513, 32640, 32641, 40000, -40000};
  region xr;
  xregion_open(&xr);
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    const dlc_lowp_dw_family *f = kt->lowp_dw;
    if (!f) continue;
    assert_non_null(f->q8_name);
    assert_non_null(f->q8_row);
    tested++;
    ran_add(f);
    for (int sg = 0; sg <= 1; sg++)
      for (size_t zi = 0; zi < sizeof zps / sizeof zps[0]; zi++)
        for (int wk = 0; wk < 5; wk++)
          for (size_t si = 0; si < N_STRIDES; si++)
            for (size_t n = 0; n <= MAXN; n++) {
              const int32_t w = wk == 0 ? -128 : wk == 1 ? 127 : wk == 2 ? 0 : (int32_t)irand(-128, 127);
              const int xkind = (int)((n + zi + (size_t)wk) % 4);
              run_q8(f, &xr, n, strides[si], sg, zps[zi], w, xkind, (int)(n & 1));
              run_q8(f, &xr, n, strides[si], sg, zps[zi], w, xkind, !(n & 1));
            }
  }
  region_close(&xr);
  assert_true(tested >= 1);
  check_ran();
}

/* Largest products at every length: x at the far end from zp, w = -128. */
static void test_q8_extremes(void **state) {
  (void)state;
  ran_reset();
  region xr;
  xregion_open(&xr);
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    const dlc_lowp_dw_family *f = kt->lowp_dw;
    if (!f) continue;
    ran_add(f);
    for (size_t si = 0; si < N_STRIDES; si++)
      for (size_t n = 0; n <= MAXN; n++) {
        run_q8(f, &xr, n, strides[si], 0, 255, -128, 1, 1); /* (0 - 255) * -128 */
        run_q8(f, &xr, n, strides[si], 0, 0, -128, 2, 0);   /* 255 * -128 */
        run_q8(f, &xr, n, strides[si], 1, 127, -128, 1, 1); /* (-128 - 127) * -128 */
        run_q8(f, &xr, n, strides[si], 1, -128, 127, 2, 0); /* (127 + 128) * 127 */
      }
  }
  region_close(&xr);
  check_ran();
}

/* ================================================================ F16 */

/* Finite halves: random patterns, subnormals, the largest exponents, zeros. */
static uint16_t half_random(void) {
  const uint32_t r = next_u32();
  const uint16_t sign = (uint16_t)((r & 1) << 15), mant = (uint16_t)((r >> 1) & 1023);
  switch ((r >> 11) % 6) {
    case 0: return sign | mant;                    /* subnormal (or zero) */
    case 1: return sign | (uint16_t)(30 << 10) | mant; /* up to 65504 */
    case 2: return sign | (uint16_t)((r >> 14) % 3 ? 0 : 0x7bff);
    default: return sign | (uint16_t)(((r >> 14) % 30 + 1) << 10) | mant; /* any normal */
  }
}

static float w_random(int kind) {
  switch (kind) {
    case 0: return (float)ldexp((double)(int32_t)next_u32() / 2147483648.0, (int)irand(-8, 8));
    case 1: return -1.0f;
    case 2: return 0.0f;
    default: return (float)ldexp((double)(int32_t)next_u32() / 2147483648.0, (int)irand(-20, 20));
  }
}

static void run_f16(const dlc_lowp_dw_family *f, region *xr, size_t n, size_t stride, float w, int at_end) {
  const size_t ne = x_elems(n, stride);
  void *owned;
  uint16_t *x = (uint16_t *)x_place(xr, ne * 2, at_end, &owned);
  for (size_t i = 0; i < ne; i++) x[i] = i % stride ? (uint16_t)0x7e00 /* NaN: never read */ : half_random();

  float buf[GUARD + MAXN + 3 + GUARD], acc0[MAXN];
  const size_t total = sizeof buf / sizeof buf[0];
  const int32_t sentinel = SENTINEL;
  for (size_t i = 0; i < total; i++) memcpy(&buf[i], &sentinel, 4);
  float *acc = buf + GUARD + n % 3;
  for (size_t j = 0; j < n; j++) {
    const uint32_t r = next_u32();
    acc[j] = acc0[j] = r % 7 == 0 ? 0.0f : (float)ldexp((double)(int32_t)next_u32() / 2147483648.0, (int)(r % 41) - 20);
  }

  f->f16_row(n, x, stride, w, acc);

  for (size_t i = 0; i < total; i++) {
    const ptrdiff_t j = buf + i - acc;
    if ((j < 0 || j >= (ptrdiff_t)n) && memcmp(&buf[i], &sentinel, 4) != 0)
      fail_msg("%s n=%zu stride=%zu: wrote acc[%td]", f->f16_name, n, stride, j);
  }
  for (size_t j = 0; j < n; j++) {
    const double xv = half_value(x[j * stride]), p = xv * (double)w, want = (double)acc0[j] + p;
    /* one fp32 multiply-add: the product's and the sum's roundings, 2^-24 each */
    const double tol = ldexp(fabs((double)acc0[j]) + fabs(p), -23) + ldexp(1.0, -149);
    if (!(fabs((double)acc[j] - want) <= tol))
      fail_msg("%s n=%zu stride=%zu w=%a%s: acc[%zu] = %a, want %a (x %a [0x%04x], acc %a)", f->f16_name, n,
               stride, (double)w, at_end ? " x at end" : "", j, (double)acc[j], want, xv, x[j * stride],
               (double)acc0[j]);
  }
  free(owned);
}

static void test_f16_rows(void **state) {
  (void)state;
  ran_reset();
  check_expected_families();
  region xr;
  xregion_open(&xr);
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    const dlc_lowp_dw_family *f = kt->lowp_dw;
    if (!f) continue;
    assert_non_null(f->f16_name);
    assert_non_null(f->f16_row);
    tested++;
    ran_add(f);
    for (int rep = 0; rep < 8; rep++)
      for (size_t si = 0; si < N_STRIDES; si++)
        for (size_t n = 0; n <= MAXN; n++) {
          const float w = w_random(rep % 4);
          run_f16(f, &xr, n, strides[si], w, 1);
          run_f16(f, &xr, n, strides[si], w, 0);
        }
  }
  region_close(&xr);
  assert_true(tested >= 1);
  check_ran();
}

/* The reference's converter against quant.h's on every finite half (the kernels' generic
   specification uses the latter). */
static void test_half_reference(void **state) {
  (void)state;
  for (uint32_t h = 0; h < 0x10000; h++) {
    if (((h >> 10) & 31) == 31) continue;
    assert_true(half_value((uint16_t)h) == (double)dlc_f16_to_f32((uint16_t)h));
  }
}

/* ================================================================ NHWC channel runs */

/* f16_ch / q8_ch: acc[j] += f32(x[j]) * w[j] or (x[j] - zp) * w[j], j < n, per-channel weights.
   Every n in 0..MAXN (all n % 8, the scalar n < 8) and two long runs; CH_TAPS calls into the same
   acc as the driver makes for a 3x3 window, each with a fresh x and w. x and w sit against the
   end of a region (x[n-1] / w[n-1] the last readable element before an inaccessible page) or
   against its start, alternating per tap; acc against the end of its region, its start, or inside
   it, with sentinels in the GUARD words around it. After every call: lanes outside [0, n) of acc
   unchanged, x and w unchanged, acc[0..n) against the reference. */
#define CH_MAXN 1283
#define CH_TAPS 9
static const size_t ch_long[] = {960, CH_MAXN};
#define CH_NLEN (MAXN + 1 + sizeof ch_long / sizeof ch_long[0])
static size_t ch_len(size_t i) { return i <= MAXN ? i : ch_long[i - MAXN - 1]; }

typedef struct ch_bufs {
  region x, w, acc;
} ch_bufs;

static void ch_open(ch_bufs *b) {
  region_open(&b->x, CH_MAXN * 2);
  region_open(&b->w, CH_MAXN * 4);
  region_open(&b->acc, (CH_MAXN + 2 * GUARD + 3) * 4);
}

static void ch_close(ch_bufs *b) {
  region_close(&b->x);
  region_close(&b->w);
  region_close(&b->acc);
}

/* The calling tests' own family check: both channel kernels where a build has a family. */
static void check_expected_ch(void) {
  check_expected_families();
  const dlc_lowp_dw_family *g = TABLE_FAMILY(DLCONV_ISA_GENERIC, lowp_dw);
  assert_non_null(g->f16_ch);
  assert_non_null(g->q8_ch);
#if defined(__x86_64__) || defined(__i386__)
  if (dlconv_isa_available(DLCONV_ISA_AVX2) == 1) {
    assert_non_null(TABLE_FAMILY(DLCONV_ISA_AVX2, lowp_dw)->f16_ch);
    assert_non_null(TABLE_FAMILY(DLCONV_ISA_AVX2, lowp_dw)->q8_ch);
  }
#endif
}

/* Up to 64 bytes on either side of [p, p + len) that are readable: set to `byte` (NaN halves,
   NaN floats, out-of-range weights), so that a kernel using them shows it in its result. */
static void ch_poison(const region *r, unsigned char *p, size_t len, unsigned char byte) {
  if (!r->map) return;
  const size_t before = (size_t)(p - r->lo), after = (size_t)(r->hi - (p + len));
  memset(p - (before < 64 ? before : 64), byte, before < 64 ? before : 64);
  memset(p + len, byte, after < 64 ? after : 64);
}

/* acc of n 4-byte lanes: against the region's end (place 0), its start (1), or GUARD + n % 3
   lanes in (2); the lanes [*wlo, *whi) around it (GUARD each side where readable) get the
   sentinel. */
static unsigned char *ch_acc_place(region *r, size_t n, int place, void **owned, size_t *wlo, size_t *whi) {
  unsigned char *lo, *hi;
  *owned = NULL;
  if (r->map) {
    lo = r->lo, hi = r->hi;
  } else {
    const size_t bytes = (n + 2 * GUARD + 3) * 4;
    *owned = malloc(bytes);
    assert_non_null(*owned);
    lo = *owned, hi = lo + bytes;
    if (place != 2) place = 2;
  }
  const size_t lanes = (size_t)(hi - lo) / 4;
  const size_t at = place == 0 ? lanes - n : place == 1 ? 0 : GUARD + n % 3;
  assert_true(at + n <= lanes);
  *wlo = at > GUARD ? at - GUARD : 0;
  *whi = at + n + GUARD < lanes ? at + n + GUARD : lanes;
  const int32_t sentinel = SENTINEL;
  for (size_t i = *wlo; i < *whi; i++) memcpy(lo + 4 * i, &sentinel, 4);
  /* return the window relative to acc */
  *wlo = at - *wlo, *whi -= at;
  return lo + 4 * at;
}

/* Lanes [-wlo, 0) and [n, whi) of acc hold the sentinel still. */
static void ch_check_sentinels(const char *name, const unsigned char *acc, size_t n, size_t wlo, size_t whi,
                               size_t tap) {
  const int32_t sentinel = SENTINEL;
  for (size_t i = 0; i < wlo; i++)
    if (memcmp(acc - 4 * (i + 1), &sentinel, 4) != 0)
      fail_msg("%s ch n=%zu tap %zu: wrote acc[-%zu]", name, n, tap, i + 1);
  for (size_t j = n; j < whi; j++)
    if (memcmp(acc + 4 * j, &sentinel, 4) != 0) fail_msg("%s ch n=%zu tap %zu: wrote acc[%zu]", name, n, tap, j);
}

/* ---------------------------------------------------------------- int8 */

/* One s8 weight: kind 0 random, 1 all -128, 2 all 127, 3 the ends and around 0. */
static int32_t q8_w_value(int kind) {
  static const int32_t ends[] = {-128, -127, -1, 0, 1, 126, 127};
  switch (kind) {
    case 0: return (int32_t)irand(-128, 127);
    case 1: return -128;
    case 2: return 127;
    default: return ends[next_u32() % (sizeof ends / sizeof ends[0])];
  }
}

/* acc_kind 0, 1: random within +-2^28; 2: within 2^26 + 2^20 of the s32 ends (room for CH_TAPS
   products of at most 40255 * 128 < 2^23 each). */
static void run_q8_ch(const dlc_lowp_dw_family *f, ch_bufs *b, size_t n, int is_signed, int32_t zp, int acc_place,
                      int acc_kind, size_t salt) {
  static int64_t want[CH_MAXN];
  static uint8_t xc[CH_MAXN];
  static int32_t wc[CH_MAXN];
  void *aowned;
  size_t wlo, whi;
  int32_t *acc = (int32_t *)(void *)ch_acc_place(&b->acc, n, acc_place, &aowned, &wlo, &whi);
  for (size_t j = 0; j < n; j++) {
    const int32_t edge = INT32_MAX - (1 << 26) - (int32_t)irand(0, 1 << 20);
    acc[j] = acc_kind < 2 ? (int32_t)irand(-(1 << 28), 1 << 28) : next_u32() & 1 ? edge : -edge;
    want[j] = acc[j];
  }
  for (size_t t = 0; t < CH_TAPS; t++) {
    const int xkind = (int)(t % 4), wkind = (int)((t + n + salt) % 4);
    const int x_end = (int)((t + n) & 1), w_end = (int)(((t >> 1) + n + salt) & 1);
    void *xowned, *wowned;
    uint8_t *x = x_place(&b->x, n, x_end, &xowned);
    int32_t *w = (int32_t *)(void *)x_place(&b->w, n * 4, w_end, &wowned);
    ch_poison(&b->x, x, n, (unsigned char)next_u32());
    ch_poison(&b->w, (unsigned char *)w, n * 4, 0x7f); /* 0x7f7f7f7f: no s8 weight */
    for (size_t j = 0; j < n; j++) {
      xc[j] = x[j] = q8_x_value(is_signed, xkind);
      wc[j] = w[j] = q8_w_value(wkind);
    }

    f->q8_ch(n, x, w, zp, is_signed, acc);

    ch_check_sentinels(f->q8_name, (const unsigned char *)acc, n, wlo, whi, t);
    if (n && (memcmp(x, xc, n) != 0 || memcmp(w, wc, n * 4) != 0))
      fail_msg("%s ch n=%zu tap %zu: wrote its input", f->q8_name, n, t);
    for (size_t j = 0; j < n; j++) {
      const int64_t xv = is_signed ? (int64_t)(int8_t)xc[j] : (int64_t)xc[j];
      const int64_t before = want[j];
      want[j] += (xv - zp) * (int64_t)wc[j];
      if ((int64_t)acc[j] != want[j])
        fail_msg("%s ch n=%zu tap %zu %s zp=%d%s%s: acc[%zu] = %d, want %lld (x %lld, w %d, acc %lld)",
                 f->q8_name, n, t, is_signed ? "s8" : "u8", zp, x_end ? " x at end" : "", w_end ? " w at end" : "",
                 j, acc[j], (long long)want[j], (long long)xv, wc[j], (long long)before);
    }
    free(xowned);
    free(wowned);
  }
  free(aowned);
}

static void test_q8_ch(void **state) {
  (void)state;
  ran_reset();
  check_expected_ch();
  /* the type ranges' zero points (0 / 255 and -128 / 127 at the ends), odd ones, and x - zp at
     the ends of s16 (-32512, 32640: the vector path's limits) and past them (the scalar
     fallback's): the contract bounds only the exact s32 result */
  static const int32_t zps[] = {0,      128,    37,    -51,   255,   -128,   127,   1,
                                -1,     -32512, -32513, 32640, 32641, 40000, -40000};
  ch_bufs b;
  ch_open(&b);
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    const dlc_lowp_dw_family *f = kt->lowp_dw;
    if (!f || !f->q8_ch) continue;
    assert_non_null(f->q8_name);
    tested++;
    ran_add(f);
    for (int sg = 0; sg <= 1; sg++)
      for (size_t zi = 0; zi < sizeof zps / sizeof zps[0]; zi++)
        for (size_t li = 0; li < CH_NLEN; li++) {
          const size_t n = ch_len(li);
          run_q8_ch(f, &b, n, sg, zps[zi], (int)((n + zi + (size_t)sg) % 3), (int)((n + zi) % 3), zi);
        }
  }
  ch_close(&b);
  assert_true(tested >= 1);
  check_ran();
}

/* ---------------------------------------------------------------- F16 */

static void run_f16_ch(const dlc_lowp_dw_family *f, ch_bufs *b, size_t n, int acc_place, size_t salt) {
  static double before[CH_MAXN];
  static uint16_t xc[CH_MAXN];
  static float wc[CH_MAXN];
  void *aowned;
  size_t wlo, whi;
  float *acc = (float *)(void *)ch_acc_place(&b->acc, n, acc_place, &aowned, &wlo, &whi);
  for (size_t j = 0; j < n; j++) {
    const uint32_t r = next_u32();
    acc[j] = r % 7 == 0 ? 0.0f : (float)ldexp((double)(int32_t)next_u32() / 2147483648.0, (int)(r % 41) - 20);
  }
  for (size_t t = 0; t < CH_TAPS; t++) {
    const int x_end = (int)((t + n) & 1), w_end = (int)(((t >> 1) + n + salt) & 1);
    void *xowned, *wowned;
    uint16_t *x = (uint16_t *)(void *)x_place(&b->x, n * 2, x_end, &xowned);
    float *w = (float *)(void *)x_place(&b->w, n * 4, w_end, &wowned);
    ch_poison(&b->x, (unsigned char *)x, n * 2, 0x7e); /* 0x7e7e: NaN */
    ch_poison(&b->w, (unsigned char *)w, n * 4, 0xff); /* NaN */
    for (size_t j = 0; j < n; j++) {
      xc[j] = x[j] = half_random();
      /* per-lane weights: scaled randoms, -1, 0, tiny and large */
      wc[j] = w[j] = w_random((int)((next_u32() >> 7) % 4));
      before[j] = (double)acc[j];
    }

    f->f16_ch(n, x, w, acc);

    ch_check_sentinels(f->f16_name, (const unsigned char *)acc, n, wlo, whi, t);
    if (n && (memcmp(x, xc, n * 2) != 0 || memcmp(w, wc, n * 4) != 0))
      fail_msg("%s ch n=%zu tap %zu: wrote its input", f->f16_name, n, t);
    for (size_t j = 0; j < n; j++) {
      const double xv = half_value(xc[j]), p = xv * (double)wc[j], want = before[j] + p;
      /* one fp32 multiply-add on the previous call's result: the product's and the sum's
         roundings, 2^-24 each */
      const double tol = ldexp(fabs(before[j]) + fabs(p), -23) + ldexp(1.0, -149);
      if (!(fabs((double)acc[j] - want) <= tol))
        fail_msg("%s ch n=%zu tap %zu%s%s: acc[%zu] = %a, want %a (x %a [0x%04x], w %a, acc %a)", f->f16_name, n,
                 t, x_end ? " x at end" : "", w_end ? " w at end" : "", j, (double)acc[j], want, xv, xc[j],
                 (double)wc[j], before[j]);
    }
    free(xowned);
    free(wowned);
  }
  free(aowned);
}

static void test_f16_ch(void **state) {
  (void)state;
  ran_reset();
  check_expected_ch();
  ch_bufs b;
  ch_open(&b);
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    const dlc_lowp_dw_family *f = kt->lowp_dw;
    if (!f || !f->f16_ch) continue;
    assert_non_null(f->f16_name);
    tested++;
    ran_add(f);
    for (size_t rep = 0; rep < 6; rep++)
      for (size_t li = 0; li < CH_NLEN; li++) {
        const size_t n = ch_len(li);
        run_f16_ch(f, &b, n, (int)((n + rep) % 3), rep);
      }
  }
  ch_close(&b);
  assert_true(tested >= 1);
  check_ran();
}

/* ================================================================ NCHW planes widened to fp32 */

/* f16_widen / q8_widen: dst[j] = f32(x[j]) or (float)(x[j] - zp), j < n, bit-exact (a NaN half
   only has to stay a NaN). Every n in 0..MAXN (the vector body of 16, every scalar tail, n < 16)
   and three long planes, each with x and dst in all 9 combinations of these placements:
   x against the end of its region (x[n-1] the last readable byte before an inaccessible page),
   against its start, or WD_SKEW(n) bytes in (unaligned); dst as ch_acc_place puts it (against the
   end, against the start, or inside GUARD sentinel lanes). After every call: dst lanes outside
   [0, n) unchanged, x unchanged, dst[0..n) against the reference. Then every half and every byte
   once more through each path, in chunks of odd lengths. */
#define WD_MAXN 65536 /* one call over all halves */
static const size_t wd_long[] = {1000, 4096, 4099};
#define WD_NLEN (MAXN + 1 + sizeof wd_long / sizeof wd_long[0])
static size_t wd_len(size_t i) { return i <= MAXN ? i : wd_long[i - MAXN - 1]; }

typedef struct wd_bufs {
  region x, dst;
} wd_bufs;

static void wd_open(wd_bufs *b) {
  region_open(&b->x, WD_MAXN * 2 + 64);
  region_open(&b->dst, (WD_MAXN + 2 * GUARD + 3) * 4);
}

static void wd_close(wd_bufs *b) {
  region_close(&b->x);
  region_close(&b->dst);
}

/* The calling tests' own family check: both widening kernels where a build has a family. */
static void check_expected_widen(void) {
  check_expected_families();
  const dlc_lowp_dw_family *g = TABLE_FAMILY(DLCONV_ISA_GENERIC, lowp_dw);
  assert_non_null(g->f16_widen);
  assert_non_null(g->q8_widen);
#if defined(__x86_64__) || defined(__i386__)
  if (dlconv_isa_available(DLCONV_ISA_AVX2) == 1) {
    assert_non_null(TABLE_FAMILY(DLCONV_ISA_AVX2, lowp_dw)->f16_widen);
    assert_non_null(TABLE_FAMILY(DLCONV_ISA_AVX2, lowp_dw)->q8_widen);
  }
#endif
}

/* x of `bytes` bytes, elements of `esize` bytes: place 0 against the region's end, 1 against its
   start, 2 an odd number of elements (1..15 for halves, 1..31 for bytes) past its start. */
#define WD_SKEW(n, esize) (((n) * 2 + 1) % (32 / (esize)) * (esize))
static unsigned char *wd_x_place(region *r, size_t bytes, size_t esize, int place, size_t n, void **owned) {
  if (!r->map || place < 2) return x_place(r, bytes, place == 0, owned);
  *owned = NULL;
  const size_t skew = WD_SKEW(n, esize);
  assert_true(r->lo + skew + bytes <= r->hi);
  return r->lo + skew;
}

/* Lanes [-wlo, 0) and [n, whi) of dst hold the sentinel still. */
static void wd_check_sentinels(const char *name, const char *what, const float *dst, size_t n, size_t wlo,
                               size_t whi) {
  const int32_t sentinel = SENTINEL;
  for (size_t i = 1; i <= wlo; i++)
    if (memcmp(dst - i, &sentinel, 4) != 0) fail_msg("%s %s n=%zu: wrote dst[-%zu]", name, what, n, i);
  for (size_t j = n; j < whi; j++)
    if (memcmp(dst + j, &sentinel, 4) != 0) fail_msg("%s %s n=%zu: wrote dst[%zu]", name, what, n, j);
}

/* ---------------------------------------------------------------- F16 */

/* binary16 -> binary32 bit pattern, from the two formats' definitions: a second reference,
   exact where half_value() only gives the value (zeros' signs, infinities, NaNs). */
static uint32_t half_f32_bits(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 31;
  uint32_t m = h & 1023;
  if (e == 31) return sign | 0x7f800000u | m << 13; /* inf; NaN (the tests accept any NaN) */
  if (e) return sign | (e + 127 - 15) << 23 | m << 13;
  if (!m) return sign;
  uint32_t sh = 0; /* subnormal m * 2^-24: normalise to 1.f * 2^(-14 - sh) */
  while (!(m & 1024)) m <<= 1, sh++;
  return sign | (127 - 14 - sh) << 23 | (m & 1023) << 13;
}


/* Both references agree on every half: the same value for finite ones, inf / NaN otherwise. */
static void test_half_bits_reference(void **state) {
  (void)state;
  for (uint32_t h = 0; h < 0x10000; h++) {
    const uint32_t u = half_f32_bits((uint16_t)h);
    float v;
    memcpy(&v, &u, 4);
    if (((h >> 10) & 31) != 31)
      assert_true((double)v == half_value((uint16_t)h) && !!signbit(v) == !!(h & 0x8000));
    else if (h & 1023)
      assert_true(isnan(v));
    else
      assert_true(isinf(v) && !!signbit(v) == !!(h & 0x8000));
  }
}

/* Halves for the per-length runs: half_random()'s finite ones, or one of these. */
static uint16_t half_widen_value(void) {
  static const uint16_t special[] = {
      0x0000, 0x8000,                         /* +-0 */
      0x0001, 0x8001, 0x0200, 0x03ff, 0x83ff, /* subnormals: smallest, middle, largest */
      0x0400, 0x8400, 0x3c00, 0xbc00, 0x3555, /* smallest normal, +-1, 1/3 */
      0x7bff, 0xfbff,                         /* +-65504 */
      0x7c00, 0xfc00,                         /* +-inf */
      0x7e00, 0xfe00, 0x7c01, 0xfc01, 0x7fff, 0x7d55, /* quiet and signalling NaNs */
  };
  const uint32_t r = next_u32();
  return r & 1 ? half_random() : special[(r >> 1) % (sizeof special / sizeof special[0])];
}

/* One call: vals[0..n) through x placed at xp, dst at dp. */
static void run_f16_widen(const dlc_lowp_dw_family *f, wd_bufs *b, size_t n, const uint16_t *vals, int xp,
                          int dp) {
  void *xowned, *downed;
  size_t wlo, whi;
  uint16_t *x = (uint16_t *)(void *)wd_x_place(&b->x, n * 2, 2, xp, n, &xowned);
  float *dst = (float *)(void *)ch_acc_place(&b->dst, n, dp, &downed, &wlo, &whi);
  ch_poison(&b->x, (unsigned char *)x, n * 2, 0x3c); /* 0x3c3c: a plain 1.06 */
  if (n) memcpy(x, vals, n * 2);

  f->f16_widen(n, x, dst);

  wd_check_sentinels(f->f16_name, "f16_widen", dst, n, wlo, whi);
  if (n && memcmp(x, vals, n * 2) != 0) fail_msg("%s f16_widen n=%zu: wrote its input", f->f16_name, n);
  for (size_t j = 0; j < n; j++) {
    uint32_t got;
    memcpy(&got, dst + j, 4);
    const uint32_t want = half_f32_bits(vals[j]);
    if (half_is_nan(vals[j]) ? !isnan(dst[j]) : got != want)
      fail_msg("%s f16_widen n=%zu x@%d dst@%d: dst[%zu] = 0x%08x (%a), want 0x%08x (x 0x%04x)", f->f16_name, n, xp,
               dp, j, got, (double)dst[j], want, vals[j]);
  }
  free(xowned);
  free(downed);
}

static void test_f16_widen(void **state) {
  (void)state;
  ran_reset();
  check_expected_widen();
  static uint16_t vals[WD_MAXN];
  wd_bufs b;
  wd_open(&b);
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    const dlc_lowp_dw_family *f = kt->lowp_dw;
    if (!f || !f->f16_widen) continue;
    assert_non_null(f->f16_name);
    tested++;
    ran_add(f);
    for (size_t li = 0; li < WD_NLEN; li++) {
      const size_t n = wd_len(li);
      for (int xp = 0; xp < 3; xp++)
        for (int dp = 0; dp < 3; dp++) {
          for (size_t j = 0; j < n; j++) vals[j] = half_widen_value();
          run_f16_widen(f, &b, n, vals, xp, dp);
        }
    }
    /* every half: in one call (vector body only), then in chunks of 15 (scalar only), 31, 47
       and 69 (both), x and dst placements rotating */
    for (uint32_t h = 0; h < 0x10000; h++) vals[h] = (uint16_t)h;
    static const size_t chunks[] = {WD_MAXN, 15, 31, 47, 69};
    for (size_t ci = 0; ci < sizeof chunks / sizeof chunks[0]; ci++)
      for (size_t at = 0, k = 0; at < WD_MAXN; at += chunks[ci], k++) {
        const size_t n = WD_MAXN - at < chunks[ci] ? WD_MAXN - at : chunks[ci];
        run_f16_widen(f, &b, n, vals + at, (int)(k % 3), (int)(k / 3 % 3));
      }
  }
  wd_close(&b);
  assert_true(tested >= 1);
  check_ran();
}

/* ---------------------------------------------------------------- int8 */

/* One call: vals[0..n) through x placed at xp, dst at dp. */
static void run_q8_widen(const dlc_lowp_dw_family *f, wd_bufs *b, size_t n, const uint8_t *vals, int is_signed,
                         int32_t zp, int xp, int dp) {
  void *xowned, *downed;
  size_t wlo, whi;
  uint8_t *x = wd_x_place(&b->x, n, 1, xp, n, &xowned);
  float *dst = (float *)(void *)ch_acc_place(&b->dst, n, dp, &downed, &wlo, &whi);
  ch_poison(&b->x, x, n, (unsigned char)next_u32());
  if (n) memcpy(x, vals, n);

  f->q8_widen(n, x, zp, is_signed, dst);

  wd_check_sentinels(f->q8_name, "q8_widen", dst, n, wlo, whi);
  if (n && memcmp(x, vals, n) != 0) fail_msg("%s q8_widen n=%zu: wrote its input", f->q8_name, n);
  for (size_t j = 0; j < n; j++) {
    const int32_t d = (is_signed ? (int32_t)(int8_t)vals[j] : (int32_t)vals[j]) - zp;
    /* |d| <= 255: exact in binary32, and +0 for 0 (the sign of an int conversion) */
    const float want = (float)d;
    if (memcmp(dst + j, &want, 4) != 0 || (double)dst[j] != (double)d)
      fail_msg("%s q8_widen n=%zu %s zp=%d x@%d dst@%d: dst[%zu] = %a, want %d (x 0x%02x)", f->q8_name, n,
               is_signed ? "s8" : "u8", zp, xp, dp, j, (double)dst[j], d, vals[j]);
  }
  free(xowned);
  free(downed);
}

static void test_q8_widen(void **state) {
  (void)state;
  ran_reset();
  check_expected_widen();
  /* the type's ends and values between: u8 zero points, then s8 ones */
  static const int32_t zps[2][5] = {{0, 1, 128, 254, 255}, {-128, -1, 0, 3, 127}};
  static uint8_t vals[WD_MAXN];
  wd_bufs b;
  wd_open(&b);
  int tested = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) {
    const dlc_lowp_dw_family *f = kt->lowp_dw;
    if (!f || !f->q8_widen) continue;
    assert_non_null(f->q8_name);
    tested++;
    ran_add(f);
    for (int sg = 0; sg <= 1; sg++)
      for (size_t zi = 0; zi < 5; zi++) {
        const int32_t zp = zps[sg][zi];
        for (size_t li = 0; li < WD_NLEN; li++) {
          const size_t n = wd_len(li);
          for (int xp = 0; xp < 3; xp++)
            for (int dp = 0; dp < 3; dp++) {
              /* the type's ends and random bytes, or a run through all 256 from a random start */
              const int kind = (int)((n + (size_t)(3 * xp + dp)) % 5);
              const uint32_t base = next_u32(), step = next_u32() | 1;
              for (size_t j = 0; j < n; j++)
                vals[j] = kind < 4 ? q8_x_value(sg, kind) : (uint8_t)(base + step * (uint32_t)j);
              run_q8_widen(f, &b, n, vals, sg, zp, xp, dp);
            }
        }
        /* every byte at every position of chunks of 15 (scalar only), 31, 47 and 69 (vector
           and scalar): value v = i % 256 at position i % c, all positions as c is odd */
        static const size_t chunks[] = {15, 31, 47, 69};
        for (size_t ci = 0; ci < sizeof chunks / sizeof chunks[0]; ci++) {
          const size_t c = chunks[ci];
          for (size_t i = 0; i < 256 * c; i++) vals[i] = (uint8_t)i;
          for (size_t at = 0, k = 0; at < 256 * c; at += c, k++)
            run_q8_widen(f, &b, c, vals + at, sg, zp, (int)(k % 3), (int)(k / 3 % 3));
        }
      }
  }
  wd_close(&b);
  assert_true(tested >= 1);
  check_ran();
}

/* ================================================================ NCHW int8 on quads (q8_dw4) */

/* The quads kernel (dlc_q8_dw4_fn) against its contract's formula, summed here in int64:
 *   acc[r * ldacc + j] = sum over ky < kh, q < nq, t < 4 of
 *       x[r * ldx + ky * ky_step + (j / 16) * 16 * sw + idx[64 q + 4 (j % 16) + t]] * (s8) byte t of w4[ky * nq + q]
 * Every rows 1..9 (the 4-row tiles and the rows left over), n across the blocks of 16 and the
 * 2-block tiles, sw 1..4, kh 1..3, nq 1..2, idx random or the driver's table, weights and bytes
 * at their ends. x is sized exactly to the contract's read extent (the 64-byte window of the last
 * row, tap row and block) and sits against an inaccessible page (or, every fourth case, right
 * after one), so a read past any window faults; acc sits in sentinels, the gap columns between
 * rows (ldacc > n) included, so a write other than acc[r * ldacc + j], j < n, is caught. */

#define DW4_MAX_ROWS 9
#define DW4_MAX_N 100
#define DW4_MAX_KH 3
#define DW4_MAX_SW 4
#define DW4_MAX_LDX 256
#define DW4_MAX_KY_STEP 512
#define DW4_X_BYTES                                                                                       \
  ((DW4_MAX_ROWS - 1) * DW4_MAX_LDX + (DW4_MAX_KH - 1) * DW4_MAX_KY_STEP + (DW4_MAX_N - 1) / 16 * 16 * DW4_MAX_SW + \
   64)
#define DW4_ACC_GUARD 37

static const dlc_q8_dw4_family *dw4_of(dlconv_isa isa) {
  const dlc_isa_kernels *kt = dlc_kernels_for(isa);
  return kt ? kt->q8_dw4 : NULL;
}

/* Where this build has the VBMI kernel and this CPU runs it, the avx512 table must carry it
   (src/arch/<isa>/config.c), so losing it from the table fails rather than skips; the avx2 table must not (EVEX). */
static void check_expected_dw4(void) {
#if defined(DLC_HAVE_AVX512VBMI)
  if (dlc_cpu()->avx512_vnni && dlc_cpu()->avx512_vbmi && dlc_kernels_for(DLCONV_ISA_AVX512))
    assert_ptr_equal(dw4_of(DLCONV_ISA_AVX512), &dlc_q8_dw4__avx512vbmi);
  if (dw4_of(DLCONV_ISA_AVX2)) assert_ptr_not_equal(dw4_of(DLCONV_ISA_AVX2), &dlc_q8_dw4__avx512vbmi);
#endif
  assert_null(dw4_of(DLCONV_ISA_GENERIC));
}

typedef struct dw4_case {
  size_t rows, n, ldx, sw, kh, ky_step, nq, ldacc;
  uint8_t idx[DLC_Q8_DW4_MAX_QUADS * 64];
  int32_t w4[DW4_MAX_KH * DLC_Q8_DW4_MAX_QUADS];
  size_t kw, dw; /* the driver's table for k_w, dil_w; kw 0: random idx */
  int xkind, at_end;
} dw4_case;

static void dw4_describe(const dlc_q8_dw4_family *f, const dw4_case *c, char *buf, size_t len) {
  char idx[64];
  if (c->kw)
    snprintf(idx, sizeof idx, "driver idx (k_w=%zu dil_w=%zu)", c->kw, c->dw);
  else
    snprintf(idx, sizeof idx, "random idx");
  snprintf(buf, len, "%s rows=%zu n=%zu ldx=%zu sw=%zu kh=%zu ky_step=%zu nq=%zu ldacc=%zu, %s, x kind %d %s", f->name,
           c->rows, c->n, c->ldx, c->sw, c->kh, c->ky_step, c->nq, c->ldacc, idx, c->xkind,
           c->at_end ? "against the end guard" : "after the start guard");
}

/* One weight byte: the s8 ends, 0, or random. */
static int8_t dw4_w_byte(void) {
  const uint32_t r = next_u32() % 32;
  return r == 0 ? (int8_t)-128 : r == 1 ? (int8_t)127 : r == 2 ? (int8_t)0 : (int8_t)(uint8_t)next_u32();
}

/* x bytes: 0 random, 1 all 255, 2 the u8 ends and their neighbours, 3 random with a few ends. */
static uint8_t dw4_x_byte(int kind) {
  switch (kind) {
    case 0: return (uint8_t)next_u32();
    case 1: return 0xff;
    case 2: {
      static const uint8_t ends[] = {0x00, 0x01, 0x7f, 0x80, 0x81, 0xfe, 0xff};
      return ends[next_u32() % sizeof ends];
    }
    default: {
      const uint32_t r = next_u32();
      return r % 8 == 0 ? 0x00 : r % 8 == 1 ? 0xff : (uint8_t)(r >> 8);
    }
  }
}

static void run_dw4(const dlc_q8_dw4_family *f, region *xr, const dw4_case *c) {
  const size_t extent = (c->rows - 1) * c->ldx + (c->kh - 1) * c->ky_step + (c->n - 1) / 16 * 16 * c->sw + 64;
  assert_true(extent <= DW4_X_BYTES);
  void *owned;
  uint8_t *x = x_place(xr, extent, c->at_end, &owned);
  for (size_t i = 0; i < extent; i++) x[i] = dw4_x_byte(c->xkind);
  uint8_t *x0 = malloc(extent);
  assert_non_null(x0);
  memcpy(x0, x, extent);

  const size_t off = (size_t)(next_u32() % 4); /* rows off 64-byte alignment too */
  const size_t span = (c->rows - 1) * c->ldacc + c->n;
  const size_t total = DW4_ACC_GUARD + off + span + DW4_ACC_GUARD;
  int32_t *buf = malloc(total * sizeof *buf);
  assert_non_null(buf);
  for (size_t i = 0; i < total; i++) buf[i] = SENTINEL;
  int32_t *acc = buf + DW4_ACC_GUARD + off;

  char what[300];
  /* a fault (a read past a window, into the guard page) names its case before cmocka reports it */
  dw4_describe(f, c, fault_case, sizeof fault_case);
  fault_names_case("q8_dw4: fault in case: ", 1);
  f->run(c->rows, c->n, x, c->ldx, c->sw, c->kh, c->ky_step, c->nq, c->idx, c->w4, acc, c->ldacc);
  fault_names_case(NULL, 0);

  if (memcmp(x, x0, extent) != 0) {
    dw4_describe(f, c, what, sizeof what);
    fail_msg("%s: wrote its input", what);
  }
  for (size_t i = 0; i < total; i++) {
    const ptrdiff_t k = (ptrdiff_t)i - (ptrdiff_t)(DW4_ACC_GUARD + off);
    size_t r = 0, j = 0;
    int inside = 0;
    if (k >= 0) {
      r = c->ldacc ? (size_t)k / c->ldacc : 0;
      j = c->ldacc ? (size_t)k % c->ldacc : (size_t)k;
      inside = r < c->rows && j < c->n;
    }
    if (!inside) {
      if (buf[i] != SENTINEL) {
        dw4_describe(f, c, what, sizeof what);
        fail_msg("%s: wrote acc[%td] (outside rows x n) = %d", what, k, buf[i]);
      }
      continue;
    }
    const size_t b = j / 16, lane = j % 16;
    int64_t want = 0;
    for (size_t ky = 0; ky < c->kh; ky++)
      for (size_t q = 0; q < c->nq; q++) {
        const uint32_t wq = (uint32_t)c->w4[ky * c->nq + q];
        for (size_t t = 0; t < 4; t++) {
          const size_t at = r * c->ldx + ky * c->ky_step + b * 16 * c->sw + c->idx[64 * q + 4 * lane + t];
          want += (int64_t)x0[at] * (int64_t)(int8_t)(uint8_t)(wq >> (8 * t));
        }
      }
    if ((int64_t)buf[i] != want) {
      dw4_describe(f, c, what, sizeof what);
      fail_msg("%s: acc[%zu * ldacc + %zu] = %d, want %lld", what, r, j, buf[i], (long long)want);
    }
  }
  free(buf);
  free(x0);
  free(owned);
}

/* The driver's idx (dw4_plan in direct_lowp.c) for some k_w with ceil(k_w / 4) == nq and
   dilation whose windows fit 64 bytes at this sw; 0 where none does. */
static size_t dw4_driver_idx(dw4_case *c) {
  size_t kws[8 * 8], dws[8 * 8], m = 0;
  for (size_t kw = 4 * c->nq - 3; kw <= 4 * c->nq; kw++)
    for (size_t dw = 1; dw <= 8; dw++)
      if ((DLC_Q8_DW4_LANES - 1) * c->sw + (kw - 1) * dw <= 63) kws[m] = kw, dws[m] = dw, m++;
  if (!m) return 0;
  const size_t p = next_u32() % m;
  c->kw = kws[p], c->dw = dws[p];
  for (size_t q = 0; q < c->nq; q++)
    for (size_t j = 0; j < DLC_Q8_DW4_LANES; j++)
      for (size_t t = 0; t < 4; t++) {
        const size_t tap = 4 * q + t < c->kw - 1 ? 4 * q + t : c->kw - 1;
        c->idx[64 * q + 4 * j + t] = (uint8_t)(j * c->sw + tap * c->dw);
      }
  return c->kw;
}

static void test_q8_dw4(void **state) {
  (void)state;
  check_expected_dw4();
  static const size_t ns[] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15,
                              16, 17, 18, 19, 20, 31, 32, 33, 47, 48, 49, 64, 65, 100};
  rng_state = 0x9E3779B97F4A7C15ull; /* the same cases whatever ran before */
  size_t cases = 0, driver_idx = 0, flat = 0;
  int tested = 0;
  region xr;
  region_open(&xr, DW4_X_BYTES);
  const dlc_q8_dw4_family *fams[MAX_FAMILIES]; /* each family once */
  size_t nfam = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) ADD_FAMILY(fams, nfam, kt->q8_dw4);
  for (size_t fi = 0; fi < nfam; fi++) {
    const dlc_q8_dw4_family *f = fams[fi];
    assert_non_null(f->name);
    assert_non_null(f->run);
    tested++;
    for (size_t rows = 1; rows <= DW4_MAX_ROWS; rows++)
      for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
        for (size_t sw = 1; sw <= DW4_MAX_SW; sw++)
          for (size_t kh = 1; kh <= DW4_MAX_KH; kh++)
            for (size_t nq = 1; nq <= DLC_Q8_DW4_MAX_QUADS; nq++)
              for (int variant = 0; variant < 4; variant++) {
                dw4_case c;
                memset(&c, 0, sizeof c);
                c.rows = rows, c.n = ns[ni], c.sw = sw, c.kh = kh, c.nq = nq;
                /* quads past nq: garbage the kernel must not use */
                memset(c.idx, 0xc3, sizeof c.idx);
                if (!(variant % 2 == 1 && dw4_driver_idx(&c)))
                  for (size_t i = 0; i < 64 * nq; i++) c.idx[i] = (uint8_t)(next_u32() % 64);
                driver_idx += c.kw != 0;
                /* rows: ldx 0 for one row (the driver's flat mode), else a padded row's width
                   times a stride, or any other distance (also under 64: windows overlap) */
                if (rows == 1 && next_u32() % 2 == 0) {
                  c.ldx = 0;
                } else {
                  const size_t wp = c.n * sw + next_u32() % 9;
                  const size_t ldxs[] = {1, 17, 64, wp, 2 * wp, 1 + next_u32() % DW4_MAX_LDX};
                  c.ldx = pick(ldxs, sizeof ldxs / sizeof ldxs[0]);
                  if (c.ldx > DW4_MAX_LDX) c.ldx = DW4_MAX_LDX - next_u32() % 32;
                }
                {
                  const size_t kys[] = {0, 1, c.ldx, 2 * c.ldx, 3 * c.ldx + 1, next_u32() % (DW4_MAX_KY_STEP + 1)};
                  c.ky_step = pick(kys, sizeof kys / sizeof kys[0]);
                  if (c.ky_step > DW4_MAX_KY_STEP) c.ky_step = DW4_MAX_KY_STEP;
                }
                if (rows == 1 && c.ldx == 0) flat++;
                /* acc rows: ldacc n (the driver's), wider (gap columns), or 0 for one row */
                {
                  const size_t gaps[] = {0, 0, 1, 3, 16, next_u32() % 41};
                  c.ldacc = c.n + pick(gaps, sizeof gaps / sizeof gaps[0]);
                  if (rows == 1 && next_u32() % 4 == 0) c.ldacc = 0;
                }
                c.xkind = (int)(cases % 4);
                c.at_end = cases % 4 != 3;
                /* weights: random with the ends, or all at one end (with x all 255: the largest
                   sums, past any s16 shortcut) */
                const int wk = (int)(cases / 4 % 8);
                for (size_t i = 0; i < kh * nq; i++) {
                  uint32_t w = 0;
                  for (size_t t = 0; t < 4; t++) {
                    const int8_t b = wk == 1 ? (int8_t)-128 : wk == 5 ? (int8_t)127 : dw4_w_byte();
                    w |= (uint32_t)(uint8_t)b << (8 * t);
                  }
                  c.w4[i] = (int32_t)w;
                }
                run_dw4(f, &xr, &c);
                cases++;
              }
  }
  region_close(&xr);
  if (!tested) skip_test("q8_dw4", "no q8_dw4 family on this CPU (needs AVX512-VNNI + VBMI)");
  print_message("[ q8_dw4 ] %zu cases (%zu on the driver's idx, %zu flat: ldx 0)\n", cases, driver_idx, flat);
}

int main(void) {
  rng_state = 0x2545F4914F6CDD1Dull;
  return RUN_TESTS(test_half_reference, test_q8_rows, test_q8_extremes, test_f16_rows, test_q8_ch, test_f16_ch,
                   test_half_bits_reference, test_f16_widen, test_q8_widen, test_q8_dw4);
}
