/* test_ukernel_q8_igemm.c - the int8 NHWC indirect-GEMM micro-kernels (dlc_q8_igemm_family,
 * src/gemm_im2col/lowp_gemm_ukernel.h) of the avx512 table (set where the CPU has AVX512-VNNI),
 * against a reference written here from the contract alone:
 *
 *   ukernel(m, n, ntaps, kq, ind, w, flip, q, c0, y, ldy), 1 <= m <= mr, 1 <= n <= nr:
 *   C(i, j) = sum over t < ntaps, u < kq, b < 4 of
 *             (int) w[((t * kq + u) * nw + j) * 4 + b] * (int) (ind[t * mr + i][4 u + b] ^ flip)
 *             (nw = 16 ceil(n / 16), columns n..nw-1 of w zero)
 *   y[i * ldy + j] = requant(C(i, j) + bias[c0 + j], mult[c0 + j])             i < m, j < n
 *
 *   ukernel_s(m, n, ntaps, kq, tap, pstep, w, flip, q, c0, y, ldy) (optional: the family's rows
 *   evenly spaced): the same with tap[t] + i * pstep in place of ind[t * mr + i], and m up to the
 *   family's mr_s_narrow (>= mr, or 0: none) where n <= nr / 2
 *
 * C in int64 from copies of the operands; the requantisation is this file's own, in double, from
 * quant.h's header formula (v = (double)(acc + bias) * mult, clamp to [lo, hi], round half to
 * even, + y_zero_point, saturate to the type), not dlc_q8_requant1. q is built per case and
 * derived with dlc_q8_derive(q, ntaps * 4 * kq * 255 * 128, c_out, mult_f) as plans do.
 *
 * Covered: every m 1..mr and n 1..nr (every count of vectors and every tail), ntaps 1, 2, 3, 4,
 * 9, 25 (and 64 at DLC_Q8_MAX_K), kq 1, 2, 3, 16, 128, 300 (and 256, 1827, 16448 at the limit),
 * flip 0 / 0x80 each with u8 and s8 outputs; per-column multipliers and biases at c0 >= 0; the
 * wide screen (its fast path and its near-tie fallback: power-of-two multipliers with biases
 * placed so some outputs are exact half-integers, fp32 ties the double does not have, and biases
 * found by search that put an output within 2^-13 of a tie where the fp32 product rounds the other
 * way; and, as the kernel screens a row by the largest |d| of its up to four vectors, rows whose
 * only near ties, built so that a missed screen stores a wrong byte, lie in one vector, each of
 * every count of vectors in turn), no screen (mult_f NULL, multipliers out of range, biases past
 * s32 with acc + bias wrapping), the narrow screen (|v| up to 2^26, where the wide screen's rounding trick is wrong),
 * finite clamps (integer, half-integer, equal, one-sided), saturation at both ends. The summary
 * test asserts that the sweep reached each of these.
 * Operands: ind rows anywhere in x at any byte offset, several rows on the same bytes (padding
 * taps on one zero-point row; every row on one run), driver-like NHWC windows with padding and
 * strides, rows ending exactly at a guard page or starting right after one, the unused rows
 * (i >= m) NULL or pointing into a guard page; ind itself, w, the parameter arrays and x against
 * guard pages; y in sentinels with ldy > n (gap bytes checked) or against a guard page; the
 * operands compared after the call (the kernel must not write them).
 * ukernel_s: every case again (its own operands, multipliers and biases, from an RNG stream of its
 * own so that ukernel's cases stay as they were), the rows of each tap pstep apart: driver-like
 * NHWC tiles along an output row (pstep = stride * cin_all >= 4 kq, taps a kernel's positions,
 * dilated or not), row mode (pixels of 1, 2, 3 or 6 channels, a tap per kernel row, pstep =
 * stride * c_in, down to 1, under the run: the rows overlap), taps anywhere at any byte offset or
 * all on one base, with steps of exactly 4 kq, gaps (even and odd), overlaps (3, 4, any), 0 (every
 * row of a tap on one run), a few times the run, negative; the highest byte any row reads right
 * before a guard page or the lowest right after one (so with pstep > 0 at the end, or < 0 at the
 * start, a read of row m when m is under the tile's limit faults); tap itself exactly ntaps
 * pointers against a guard page. The oracle reads the rows where the kernel should, overlapping
 * rows on the same bytes.
 * ukernel_s's taller tiles (test_tall, test_tall_vector_ties: every m in (mr, mr_s_narrow] with
 * every n 1..nr / 2, through ukernel_s alone): the same variety from their own RNG streams, counted
 * apart, with near ties alone in vector 0 or 1 of a row; where the family has none, they say so.
 *
 * A fault (a read or write past an operand into a guard page) names its case on stderr before
 * cmocka reports it. Every table under test's family is tested (support/kernel_tables.h); where none
 * has one (no AVX512-VNNI, other architectures) every test says so and skips (exit 77). */
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
#include "quant/quant.h"
#include "support/alloc.h"
#include "support/fault.h"
#include "support/guard_pages.h"
#include "support/kernel_tables.h"
#include "support/q8_oracle.h"
#include "support/rng.h"
#include "support/skip.h"

/* ================================================================ the family */

/* The families under test: each table's q8_igemm, each once. Where this build has the VNNI kernel and
   this CPU runs it, the avx512 table must carry it (src/arch/<isa>/config.c), so losing it from the
   table fails rather than skips; the generic and avx2 tables must not (EVEX). */
static size_t families(const dlc_q8_igemm_family *out[MAX_FAMILIES]) {
#if defined(DLC_HAVE_AVX512VNNI)
  if (dlc_cpu()->avx512_vnni && dlc_kernels_for(DLCONV_ISA_AVX512))
    assert_ptr_equal(TABLE_FAMILY(DLCONV_ISA_AVX512, q8_igemm), &dlc_q8_igemm__avx512vnni);
  assert_ptr_not_equal(TABLE_FAMILY(DLCONV_ISA_AVX2, q8_igemm), &dlc_q8_igemm__avx512vnni);
  assert_ptr_not_equal(TABLE_FAMILY(DLCONV_ISA_GENERIC, q8_igemm), &dlc_q8_igemm__avx512vnni);
#endif
  size_t n = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) ADD_FAMILY(out, n, kt->q8_igemm);
  static int said;
  for (size_t i = 0; i < n; i++) {
    const dlc_q8_igemm_family *f = out[i];
    assert_non_null(f->name);
    assert_non_null(f->ukernel);
    assert_true(f->mr >= 1 && f->mr <= DLC_LOWP_MR_MAX);
    assert_true(f->nr >= 16 && f->nr <= DLC_LOWP_NR_MAX && f->nr % 16 == 0);
    /* ukernel_s's taller narrow tiles: 0 for none, else at least ukernel's rows (the driver takes
       the larger of the two), within the drivers' tile arrays */
    assert_true(f->mr_s_narrow == 0 || (f->mr_s_narrow >= f->mr && f->mr_s_narrow <= DLC_LOWP_MR_MAX));
    if (said) continue;
    if (f->ukernel_s && f->mr_s_narrow > f->mr)
      printf("q8_igemm family under test: %s (%zux%zu, with ukernel_s, up to %zu rows where n <= %zu)\n", f->name,
             f->mr, f->nr, f->mr_s_narrow, f->nr / 2);
    else
      printf("q8_igemm family under test: %s (%zux%zu%s)\n", f->name, f->mr, f->nr,
             !f->ukernel_s ? ", no ukernel_s: its cases not run"
                           : ", with ukernel_s, no taller narrow tiles (mr_s_narrow <= mr): their cases not run");
  }
  if (!said && !n)
    printf("q8_igemm family under test: none (%s: the q8_igemm tests skip)\n",
           dlc_kernels_for(DLCONV_ISA_AVX512) ? "the avx512 table has no q8_igemm (no AVX512-VNNI)"
                                              : "no avx512 table on this CPU");
  said = 1;
  return n;
}

/* ================================================================ cases */

typedef struct icase {
  const dlc_q8_igemm_family *f;
  size_t m, n, ntaps, kq, c0, c_out, ldy;
  uint8_t flip;
  int is_signed, rq, ind_kind, xkind, wkind;
  int x_end;      /* x's last byte right before a guard page (1) or its first right after one (0) */
  int w_end;      /* the same for w */
  int y_side;     /* 0: in sentinels, 1: against a guard page after, 2: before */
  int unused_bad; /* rows >= m: 0 NULL, 1 a pointer into a guard page */
  int exact;      /* mult, bias and mult_f of exactly c0 + n entries */
  int strided;    /* through ukernel_s, the rows of a tap pstep apart, instead of ukernel */
  /* RQ_NEARSRCH in the columns of tie_cols only (bit j: column c0 + j, all in vector tie_vec), each
     near a tie on a row of its own (one a missed screen would get wrong), the others wide: a row's
     only screened lanes then lie in one vector (test_vector_ties) */
  int vec_ties;
  size_t tie_vec;
  uint64_t tie_cols;
  /* IND_CONV, and ukernel_s's TAPS_CONV and TAPS_ROWS (cin_all: a pixel's bytes) */
  q8o_window win;
  size_t cin_all, goff;
  size_t xlen;
  /* ukernel_s */
  int tap_kind;
  ptrdiff_t pstep;
  size_t dil;   /* TAPS_CONV, TAPS_ROWS: the kernel's dilation */
  size_t slack; /* bytes of x no row reads, at the end opposite the guard page the rows touch */
} icase;

/* ukernel_s's taller tiles: more rows than ukernel's (mr_s_narrow's, where n <= nr / 2) */
static int is_tall(const icase *c) { return c->m > c->f->mr; }

/* The most rows ukernel_s takes for a tile of n columns, ukernel mr. */
static size_t m_limit(const dlc_q8_igemm_family *f, int strided, size_t n) {
  return strided && f->mr_s_narrow > f->mr && n <= f->nr / 2 ? f->mr_s_narrow : f->mr;
}

/* ukernel_s: where the taps' first rows lie */
enum { TAPS_CONV, TAPS_ROWS, TAPS_RANDOM, TAPS_SAME, N_TAP_KINDS };
static const char *const tap_names[] = {"conv window (a tile along an output row)", "row mode (a run per kernel row)",
                                        "random", "one base for all"};

/* ukernel_s: pstep against the run of 4 kq bytes a row reads */
enum { STEP_RUN, STEP_GAP, STEP_OVERLAP, STEP_ZERO, STEP_NEG, N_STEP_KINDS };
static const char *const step_names[] = {"rows back to back", "a gap between rows", "overlapping rows",
                                         "every row on one run", "negative"};
static int step_kind(ptrdiff_t pstep, size_t run) {
  return pstep < 0 ? STEP_NEG : pstep == 0 ? STEP_ZERO : (size_t)pstep == run ? STEP_RUN
                              : (size_t)pstep > run ? STEP_GAP : STEP_OVERLAP;
}

/* ukernel_s's cases: what they saw, their layouts, steps (and those not a multiple of 4), those whose
   highest row ends at a guard page, and of those with m under the tile's limit (mr, or mr_s_narrow
   for the narrow tiles) the ones where row m would be in it; c0 > 0, gaps between rows of y, y
   against a guard page, exact arrays, C + bias past s32 */
typedef struct s_stats {
  q8o_counts o;
  size_t taps[N_TAP_KINDS], steps[N_STEP_KINDS], odd_steps, at_end, row_m_guarded;
  size_t c0_cases, gap_cases, y_guarded, exact_arrays, past_s32;
} s_stats;

typedef struct stats {
  q8o_counts o; /* cases, outputs and what they saw (support/q8_oracle.h) */
  size_t past_s32;
  size_t wide_rows_fast, wide_rows_fallback, c0_cases, gap_cases, null_rows_cases, exact_arrays;
  size_t vec_tie_cols, vec_tie_missed; /* vec_ties: columns built near a tie, and those where that failed */
  /* ukernel_s's cases with m <= mr (every case of ukernel again), and its taller tiles (mr < m <=
     mr_s_narrow, n <= nr / 2), each m x n of those reached so many times */
  s_stats s, tall;
  size_t tall_tiles[DLC_LOWP_MR_MAX + 1][DLC_LOWP_NR_MAX / 2 + 1];
  size_t tall_tie_cols, tall_tie_missed; /* vec_ties' columns of the tall tiles */
} stats;

static stats totals; /* the counts of the family under test */
static stats family_totals[MAX_FAMILIES];

/* Runs body on every family under test, with that family's own counts in totals; skips the test
   (test: its name) where there is none. */
static void for_each_family(void (*body)(const dlc_q8_igemm_family *), const char *test) {
  const dlc_q8_igemm_family *fams[MAX_FAMILIES];
  const size_t n = families(fams);
  if (!n) skip_test(test, "no q8_igemm family on this CPU (needs AVX512-VNNI)");
  for (size_t i = 0; i < n; i++) {
    totals = family_totals[i];
    body(fams[i]);
    family_totals[i] = totals;
  }
}

static void describe(const icase *c, const dlc_q8_params *q, char *buf, size_t len) {
  char lay[160] = "", rows[400];
  if (c->strided) {
    if (c->tap_kind == TAPS_CONV || c->tap_kind == TAPS_ROWS)
      snprintf(lay, sizeof lay,
               " (image width %zu, pixels of %zu bytes, run at %zu, kernel %zux%zu, dilation %zu, stride %zu)",
               c->win.wd, c->cin_all, c->goff, c->win.kh, c->win.kw, c->dil, c->win.stride);
    snprintf(rows, sizeof rows, "ukernel_s pstep %td (%s), taps %s%s, %zu bytes of x no row reads, rows >= m not read",
             c->pstep, step_names[step_kind(c->pstep, 4 * c->kq)], tap_names[c->tap_kind], lay, c->slack);
  } else {
    if (c->ind_kind == IND_CONV)
      snprintf(lay, sizeof lay, " (image %zux%zu, cin_all %zu, goff %zu, kernel %zux%zu, stride %zu, pads %zu/%zu)",
               c->win.h, c->win.wd, c->cin_all, c->goff, c->win.kh, c->win.kw, c->win.stride, c->win.ph, c->win.pw);
    snprintf(rows, sizeof rows, "ind %s%s, rows >= m %s", ind_names[c->ind_kind], lay,
             c->unused_bad ? "into a guard page" : "NULL");
  }
  char ties[120] = "";
  if (c->vec_ties)
    snprintf(ties, sizeof ties, " (near ties in vector %zu only: columns 0x%016llx)", c->tie_vec,
             (unsigned long long)c->tie_cols);
  snprintf(buf, len,
           "%s m=%zu n=%zu ntaps=%zu kq=%zu flip=0x%02x %s y c0=%zu c_out=%zu%s ldy=%zu, %s%s (y zp %d, lo %.17g, "
           "hi %.17g, %s, bias_s32 %d), %s, xlen %zu, x kind %d, w kind %d, x %s, w %s, y %s",
           c->f->name, c->m, c->n, c->ntaps, c->kq, c->flip, c->is_signed ? "s8" : "u8", c->c0, c->c_out,
           c->exact ? " (exact arrays)" : "", c->ldy, rq_names[c->rq], ties, q ? q->y_zero_point : 0, q ? q->lo : 0.0,
           q ? q->hi : 0.0, q ? screen_name(q) : "?", q ? q->bias_s32 : -1, rows, c->xlen, c->xkind, c->wkind,
           c->x_end ? "against the end guard" : "after the start guard",
           c->w_end ? "against the end guard" : "after the start guard",
           c->y_side == 0 ? "in sentinels" : c->y_side == 1 ? "against the end guard" : "after the start guard");
}

/* ================================================================ requantisation parameters */

typedef struct rq_set {
  dlc_q8_params q;
  gbuf gm, gb, gf;
} rq_set;

static int32_t clamp_s32(double v) {
  if (v > (double)INT32_MAX) return INT32_MAX;
  if (v < (double)INT32_MIN) return INT32_MIN;
  return (int32_t)v;
}

/* Per channel, a multiplier and a bias of the case's kind, from one row's sum cref of that column
   (the bias puts that row at a chosen value, so outputs land in the type's range whatever the
   sums) and the column's spread; channels outside [c0, c0 + n) get synthetic ones of the same
   kind. Then lo / hi, zero points, and dlc_q8_derive as plans do. */
static void rq_build(rq_set *s, const icase *c, const int64_t *C, int64_t acc_max) {
  memset(s, 0, sizeof *s);
  const size_t c_out = c->c_out;
  dlc_q8_params *q = &s->q;
  q->mult = gbuf_open(&s->gm, c_out * sizeof(double), 1);
  q->bias = gbuf_open(&s->gb, c_out * sizeof(int32_t), 1);
  float *mult_f = gbuf_open(&s->gf, c_out * sizeof(float), 1);
  static const int32_t zps[] = {0, 0, 128, 1, 127, -1, -127};
  q8o_params_begin(q, c->is_signed, zps, sizeof zps / sizeof zps[0]);
  const size_t m = c->m, n = c->n;
  for (size_t ch = 0; ch < c_out; ch++) {
    int64_t cref, spread;
    if (ch >= c->c0 && ch < c->c0 + n) {
      const size_t j = ch - c->c0;
      int64_t lo = INT64_MAX, hi = INT64_MIN;
      for (size_t i = 0; i < m; i++) {
        lo = C[i * n + j] < lo ? C[i * n + j] : lo;
        hi = C[i * n + j] > hi ? C[i * n + j] : hi;
      }
      cref = C[(size_t)irand(0, (int64_t)m - 1) * n + j];
      spread = hi - lo + 1;
    } else {
      cref = irand(-(acc_max / 100), acc_max / 100);
      spread = 1 + acc_max / 50;
    }
    const q8o_col h = q8o_col_of(cref, spread);
    double mt;
    int64_t b;
    if (c->vec_ties) {
      /* tie_cols near a tie (each on its own row cref, drawn per column above) that a missed screen
         would get wrong; the rest wide */
      if (ch >= c->c0 && ch < c->c0 + n && (c->tie_cols >> (ch - c->c0) & 1)) {
        const int missed = !q8o_near_wrong(q, acc_max, &h, &mt, &b);
        if (is_tall(c))
          totals.tall_tie_cols++, totals.tall_tie_missed += missed;
        else
          totals.vec_tie_cols++, totals.vec_tie_missed += missed;
      } else {
        q8o_mult_bias(RQ_WIDE, 0, q, acc_max, &h, &mt, &b);
      }
    } else if (!q8o_mult_bias(c->rq, ch == c->c0, q, acc_max, &h, &mt, &b)) { /* RQ_BIGBIAS */
      if (ch == c->c0 || next_u32() % 2) {
        const uint32_t r = next_u32() % 4;
        b = r == 0   ? INT32_MAX - irand(0, 3)
            : r == 1 ? INT32_MIN + irand(0, 3)
            : r == 2 ? INT32_MAX - irand(0, acc_max)
                     : INT32_MIN + irand(0, acc_max);
        if (b == 0) b = 1;
        mt = (20.0 + 100.0 * urand()) / fabs((double)b); /* v around +-(20..120) */
        if (next_u32() % 2) mt = h.useful * log_uniform(0.5, 4.0); /* mostly saturating */
      } else {
        mt = h.useful * log_uniform(0.5, 4.0), b = -cref + llround(h.off / mt);
      }
    }
    /* sums near the s32 limit leave the bias little room (bias_s32: |bias| <= INT32_MAX - acc_max):
       there the screened kinds keep a small bias rather than centring a row */
    const int64_t room = INT32_MAX - acc_max;
    if (c->rq != RQ_BIGBIAS && c->rq != RQ_SAT && c->rq != RQ_NOSCREEN && c->rq != RQ_RANGE && room >= 0 &&
        (b > room || b < -room))
      b = irand(-(room < 1000 ? room : 1000), room < 1000 ? room : 1000);
    q->mult[ch] = mt, q->bias[ch] = clamp_s32((double)b);
  }
  q8o_params_bounds(q, c->rq, RQ_BIT(RQ_SAT) | RQ_BIT(RQ_WIDE), 0);
  dlc_q8_derive(q, acc_max, c_out, c->rq == RQ_NOSCREEN ? NULL : mult_f);
  /* what each kind is there for */
  if (c->rq == RQ_NOSCREEN || c->rq == RQ_RANGE) assert_null(q->mult_f);
  if (c->rq == RQ_BIGBIAS) assert_false(q->bias_s32);
  if (c->rq == RQ_WIDE || c->rq == RQ_POW2 || c->rq == RQ_TIES || c->rq == RQ_NEARTIE || c->rq == RQ_CLAMP ||
      c->rq == RQ_NEARSRCH)
    assert_true(q->screen_wide);
  if (c->rq == RQ_NARROW && q->bias_s32) assert_true(q->mult_f && !q->screen_wide);
}

static void rq_close(rq_set *s) { gbuf_close(&s->gm), gbuf_close(&s->gb), gbuf_close(&s->gf); }

/* ================================================================ ukernel_s's rows */

/* A step for rows anywhere: the run exactly, gaps of a multiple of 4 or of any size, overlaps of
   3, 4 or any size, 0, a few runs, now and then negative. */
static ptrdiff_t random_step(size_t run) {
  const ptrdiff_t r = (ptrdiff_t)run;
  switch (next_u32() % 12) {
    case 0: return r + 1;
    case 1: return r + 4 * (ptrdiff_t)irand(1, 8);
    case 2: return r + (ptrdiff_t)irand(1, 64);
    case 3: return 3;
    case 4: return 4;
    case 5: return (ptrdiff_t)irand(1, r - 1);
    case 6: return r * (ptrdiff_t)irand(2, 5) + (ptrdiff_t)irand(0, 3);
    case 7: return 0;
    case 8: return next_u32() % 2 ? -r : -(ptrdiff_t)irand(1, 2 * r);
    default: return r;
  }
}

/* ukernel_s's layout of the case's kind (chosen here): c->pstep, and rel[t], where tap t's row 0
   starts, in bytes from an origin of no meaning (the caller places x around the rows). */
static void strided_layout(icase *c, ptrdiff_t *rel) {
  const size_t m = c->m, ntaps = c->ntaps, run = 4 * c->kq;
  const uint32_t r = next_u32() % 20;
  c->tap_kind = r < 7 ? TAPS_CONV : r < 11 ? TAPS_ROWS : r < 18 ? TAPS_RANDOM : TAPS_SAME;
  c->cin_all = c->goff = 0;
  c->dil = next_u32() % 4 ? 1 : 2;
  q8o_window *g = &c->win;
  memset(g, 0, sizeof *g);
  switch (c->tap_kind) {
    case TAPS_CONV: {
      /* the driver's tile of m output pixels along a row of one without padding
         (dlc_nhwc_ind_strided_row): pixels of cin_all bytes with the group's run at goff, a tap
         per kernel position, the rows stride pixels apart, so pstep >= run */
      kernel_shape(ntaps, &g->kh, &g->kw);
      g->stride = (size_t)irand(1, 3);
      const size_t extra[] = {0, 0, 4, 20, 4 * (size_t)irand(1, 16)};
      c->cin_all = run + pick(extra, sizeof extra / sizeof extra[0]);
      c->goff = 4 * (size_t)irand(0, (int64_t)(c->cin_all - run) / 4);
      g->wd = (m - 1) * g->stride + (g->kw - 1) * c->dil + 1 + (size_t)irand(0, 3);
      c->pstep = (ptrdiff_t)(g->stride * c->cin_all);
      for (size_t t = 0; t < ntaps; t++)
        rel[t] = (ptrdiff_t)(((t / g->kw) * g->wd + t % g->kw) * c->dil * c->cin_all + c->goff);
      break;
    }
    case TAPS_ROWS: {
      /* row mode: pixels of a few channels (an RGB stem's 3), a tap per kernel row reading its 4 kq
         bytes from the window's first pixel on (kw pixels and what follows them, under zero
         weights), the rows stride * c_in apart: a step of 3 under runs of 12 or more, the rows
         overlapping */
      static const size_t pixels[] = {3, 3, 3, 1, 2, 6};
      c->cin_all = pick(pixels, sizeof pixels / sizeof pixels[0]);
      g->kh = ntaps, g->kw = run / c->cin_all ? run / c->cin_all : 1;
      g->stride = (size_t)irand(1, 2);
      g->wd = (m - 1) * g->stride + (run + c->cin_all - 1) / c->cin_all + (size_t)irand(0, 3);
      c->pstep = (ptrdiff_t)(g->stride * c->cin_all);
      for (size_t t = 0; t < ntaps; t++) rel[t] = (ptrdiff_t)(t * c->dil * g->wd * c->cin_all);
      break;
    }
    case TAPS_RANDOM: {
      /* taps anywhere at any byte offset, some on another's bytes or a few bytes off them */
      c->pstep = random_step(run);
      const uint32_t sk = next_u32() % 4;
      const int64_t spread = sk == 0   ? 0
                             : sk == 1 ? (int64_t)run
                             : sk == 2 ? irand(0, 64)
                                       : irand(0, (int64_t)(run * ntaps));
      for (size_t t = 0; t < ntaps; t++) {
        const uint32_t k = next_u32() % 8;
        rel[t] = t && k == 0   ? rel[(size_t)irand(0, (int64_t)t - 1)]
                 : t && k == 1 ? rel[(size_t)irand(0, (int64_t)t - 1)] + (ptrdiff_t)irand(-3, 3)
                               : (ptrdiff_t)irand(0, spread);
      }
      break;
    }
    default: /* TAPS_SAME: every tap on one base; with pstep 0 every row of every tap on one run */
      c->pstep = next_u32() % 2 ? 0 : random_step(run);
      for (size_t t = 0; t < ntaps; t++) rel[t] = 0;
      break;
  }
}

/* Row i of tap t as the kernel should read it: ind[t * mr + i] (ukernel) or tap[t] + i * pstep
   (ukernel_s) */
static const uint8_t *row_of(const icase *c, const uint8_t *const *ptrs, size_t t, size_t i) {
  return c->strided ? ptrs[t] + (ptrdiff_t)i * c->pstep : ptrs[t * c->f->mr + i];
}

/* ================================================================ one case */
static void run_one(icase *c) {
  const size_t m = c->m, n = c->n, ntaps = c->ntaps, kq = c->kq, mr = c->f->mr;
  const size_t run = 4 * kq, nw = 16 * ((n + 15) / 16), mlim = m_limit(c->f, c->strided, n);
  assert_true(m >= 1 && m <= mlim && n >= 1 && n <= c->f->nr && ntaps >= 1 && kq >= 1);
  assert_true(ntaps * 4 * kq <= DLC_Q8_MAX_K);
  const uint8_t flip = c->flip;

  /* the zero point's row (what padding taps share): 4 kq bytes against a guard page */
  gbuf gz;
  uint8_t *zrow = gbuf_open(&gz, run, next_u32() % 2);
  {
    const uint8_t zb = (uint8_t)next_u32();
    memset(zrow, zb, run);
  }

  /* x and the rows' offsets in it (SIZE_MAX: the zero row); for ukernel_s, where each tap's row 0
     is (rows pstep apart) */
  size_t *offs = xmalloc(ntaps * m * sizeof(size_t));
  ptrdiff_t *rel = xmalloc(ntaps * sizeof(ptrdiff_t));
  if (c->strided) {
    strided_layout(c, rel);
    /* x exactly the bytes the rows read, [lo, hi) from rel's origin, and slack bytes at the end
       away from the guard page x_end names */
    const ptrdiff_t last = (ptrdiff_t)(m - 1) * c->pstep; /* row m - 1 from row 0 */
    ptrdiff_t lo = PTRDIFF_MAX, hi = PTRDIFF_MIN;
    for (size_t t = 0; t < ntaps; t++) {
      const ptrdiff_t a = rel[t] + (last < 0 ? last : 0), b = rel[t] + (last > 0 ? last : 0) + (ptrdiff_t)run;
      lo = a < lo ? a : lo, hi = b > hi ? b : hi;
    }
    c->slack = next_u32() % 2 ? 0 : (size_t)irand(1, 64);
    c->xlen = (size_t)(hi - lo) + c->slack;
    for (size_t t = 0; t < ntaps; t++) rel[t] += (c->x_end ? (ptrdiff_t)c->slack : 0) - lo; /* now offsets in x */
  } else if (c->ind_kind == IND_CONV) {
    q8o_window *g = &c->win;
    window_shape(g, ntaps);
    const size_t extra[] = {0, 0, 4, 20};
    c->cin_all = run + pick(extra, 4);
    c->goff = next_u32() % 2 ? c->cin_all - run : 4 * (size_t)irand(0, (int64_t)(c->cin_all - run) / 4);
    size_t ho, wo;
    window_size(g, m, 8, &ho, &wo);
    const size_t q0 = (size_t)irand(0, (int64_t)(ho * wo - m));
    c->xlen = g->h * g->wd * c->cin_all;
    window_offsets(g, offs, ntaps, m, q0, wo, c->cin_all, c->goff);
  } else if (c->ind_kind == IND_SAME) {
    c->xlen = same_offsets(offs, ntaps * m, run, c->x_end);
  } else {
    const size_t extras[] = {0, run, (size_t)irand(0, 64), (size_t)irand(0, (int64_t)(run * ntaps * m))};
    c->xlen = run + pick(extras, 4);
    random_offsets(offs, ntaps * m, run, c->xlen);
  }
  gbuf gx;
  uint8_t *x = gbuf_open(&gx, c->xlen, c->x_end);
  for (size_t i = 0; i < c->xlen; i++) x[i] = (uint8_t)(x_u(c->xkind) ^ flip);

  /* the pointers, exactly, against a guard page: ukernel's ind, ntaps x mr, rows >= m NULL or
     into a guard page; ukernel_s's tap, ntaps */
  const size_t nptrs = c->strided ? ntaps : ntaps * mr;
  gbuf gi;
  const uint8_t **ptrs = gbuf_open(&gi, nptrs * sizeof(*ptrs), next_u32() % 2);
  if (c->strided) {
    for (size_t t = 0; t < ntaps; t++) ptrs[t] = x + rel[t];
  } else {
    const uint8_t *bad = NULL;
#ifdef HAVE_GUARD_PAGES
    if (c->unused_bad) bad = (const uint8_t *)gx.r.map + 17; /* the guard page before x */
#endif
    for (size_t t = 0; t < ntaps; t++)
      for (size_t i = 0; i < mr; i++)
        ptrs[t * mr + i] = i >= m ? bad : offs[t * m + i] == SIZE_MAX ? zrow : x + offs[t * m + i];
  }

  /* w: ntaps x kq units of nw columns x 4, columns past n zero, exactly, against a guard page */
  gbuf gw;
  const size_t wbytes = ntaps * kq * nw * 4;
  int8_t *w = gbuf_open(&gw, wbytes, c->w_end);
  for (size_t tu = 0; tu < ntaps * kq; tu++)
    for (size_t j = 0; j < nw; j++)
      for (size_t b = 0; b < 4; b++) w[(tu * nw + j) * 4 + b] = j < n ? w_byte(c->wkind) : 0;

  /* the reference sums, from the contract's formulas */
  int64_t *C = xmalloc(m * n * sizeof(int64_t));
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < n; j++) {
      int64_t s = 0;
      for (size_t t = 0; t < ntaps; t++) {
        const uint8_t *row = row_of(c, ptrs, t, i);
        for (size_t u = 0; u < kq; u++)
          for (size_t b = 0; b < 4; b++)
            s += (int64_t)w[((t * kq + u) * nw + j) * 4 + b] * (int64_t)(uint8_t)(row[4 * u + b] ^ flip);
      }
      C[i * n + j] = s;
    }

  const int64_t acc_max = (int64_t)ntaps * 4 * (int64_t)kq * 255 * 128;
  rq_set rs;
  rq_build(&rs, c, C, acc_max);
  const dlc_q8_params *q = &rs.q;

  /* y: m rows of ldy bytes */
  ysent ys;
  uint8_t *y = ysent_open(&ys, m, n, c->ldy, c->y_side, totals.o.cases + totals.s.o.cases + totals.tall.o.cases);

  uint8_t *x_copy = xmalloc(c->xlen), *z_copy = xmalloc(run);
  int8_t *w_copy = xmalloc(wbytes);
  const uint8_t **ptrs_copy = xmalloc(nptrs * sizeof(*ptrs));
  double *mult_copy = xmalloc(c->c_out * sizeof(double));
  int32_t *bias_copy = xmalloc(c->c_out * sizeof(int32_t));
  memcpy(x_copy, x, c->xlen), memcpy(z_copy, zrow, run), memcpy(w_copy, w, wbytes);
  memcpy(ptrs_copy, ptrs, nptrs * sizeof(*ptrs));
  memcpy(mult_copy, q->mult, c->c_out * sizeof(double)), memcpy(bias_copy, q->bias, c->c_out * sizeof(int32_t));

  describe(c, q, fault_case, sizeof fault_case);
  fault_names_case("q8_igemm: fault in case: ", 1);
  if (c->strided)
    c->f->ukernel_s(m, n, ntaps, kq, ptrs, c->pstep, w, flip, q, c->c0, y, c->ldy);
  else
    c->f->ukernel(m, n, ntaps, kq, ptrs, w, flip, q, c->c0, y, c->ldy);
  fault_names_case(NULL, 0);

  char what[1024];
  if (memcmp(x, x_copy, c->xlen) || memcmp(zrow, z_copy, run) || memcmp(w, w_copy, wbytes) ||
      memcmp(ptrs, ptrs_copy, nptrs * sizeof(*ptrs)) || memcmp(q->mult, mult_copy, c->c_out * sizeof(double)) ||
      memcmp(q->bias, bias_copy, c->c_out * sizeof(int32_t))) {
    describe(c, q, what, sizeof what);
    fail_msg("%s: wrote to x, the zero row, w, %s, mult or bias", what, c->strided ? "tap" : "ind");
  }
  ysent_check(&ys, c->ldy, n, "n", fault_case);
  /* ukernel's counts as before ukernel_s; ukernel_s's its own, its tall tiles' apart */
  s_stats *ss = is_tall(c) ? &totals.tall : &totals.s;
  q8o_counts *counts = c->strided ? &ss->o : &totals.o;
  for (size_t i = 0; i < m; i++) {
    int row_fallback = 0;
    q8o_row sr = {0, 0}; /* the kernel's row i: column j in lane j % 16 of vector j / 16 */
    for (size_t j = 0; j < n; j++) {
      const size_t oc = c->c0 + j;
      const int64_t ab = C[i * n + j] + (int64_t)q->bias[oc];
      *(c->strided ? &ss->past_s32 : &totals.past_s32) += ab > INT32_MAX || ab < INT32_MIN;
      const int fl = q8o_check_output(counts, q, c->is_signed, C[i * n + j], i, j, oc, y[i * c->ldy + j], fault_case);
      row_fallback |= fl;
      q8o_row_add(&sr, j / 16, fl);
    }
    const int lone = q8o_row_lone(&sr);
    if (lone >= 0) counts->lone_vec[lone]++;
    if (q->screen_wide && !c->strided) {
      totals.wide_rows_fast += !row_fallback;
      totals.wide_rows_fallback += row_fallback != 0;
    }
  }
  q8o_count_case(counts, q, c->rq, c->ind_kind, flip, c->is_signed); /* by_ind: ukernel's only */
  if (c->strided) {
    ss->taps[c->tap_kind]++;
    ss->steps[step_kind(c->pstep, run)]++;
    ss->odd_steps += c->pstep % 4 != 0;
    ss->at_end += c->x_end != 0;
    /* a kernel that ran a taller tile than m (up to mlim rows) would read row m into the guard page */
    ss->row_m_guarded += m < mlim && (c->x_end ? c->pstep > 0 : c->pstep < 0);
    ss->c0_cases += c->c0 > 0;
    ss->gap_cases += c->ldy > n && m > 1;
    ss->y_guarded += c->y_side != 0;
    ss->exact_arrays += c->exact;
    if (is_tall(c)) totals.tall_tiles[m][n]++;
  } else {
    totals.c0_cases += c->c0 > 0;
    totals.gap_cases += c->ldy > n && m > 1;
    totals.null_rows_cases += m < mr;
    totals.exact_arrays += c->exact;
  }
  free(x_copy), free(z_copy), free(w_copy), free(ptrs_copy), free(mult_copy), free(bias_copy), free(C), free(offs);
  free(rel);
  rq_close(&rs);
  gbuf_close(&gz), gbuf_close(&gx), gbuf_close(&gi), gbuf_close(&gw), ysent_close(&ys);
}

/* The case through ukernel, then, where the family has one, through ukernel_s with rows of its own
   (and multipliers and biases for their sums), drawn from an RNG stream of its own so that
   ukernel's cases are those they were before ukernel_s. */
static void run_case(icase *c) {
  c->strided = 0;
  run_one(c);
  if (!c->f->ukernel_s) return;
  const uint64_t resume = rng_state;
  rng_state ^= 0x9E3779B97F4A7C15ull;
  c->strided = 1;
  run_one(c);
  rng_state = resume;
}

/* Fills the case's kinds, sides and layout from a running counter k (and the RNG); the caller
   sets f, m, n, ntaps, kq. */
static void vary(icase *c, size_t k) {
  c->rq = (int)(k % N_RQ);
  c->ind_kind = (int)((k / N_RQ + k) % N_IND_KINDS);
  if (c->ind_kind == IND_SAME && next_u32() % 2) c->ind_kind = IND_RANDOM; /* fewer of those */
  c->xkind = (int)((k / 3) % N_X_KINDS);
  c->wkind = (int)((k / 7) % N_W_KINDS);
  if (c->rq == RQ_TIES || ((c->rq == RQ_POW2 || c->rq == RQ_NEARTIE || c->rq == RQ_CLAMP) && k / N_RQ % 2))
    c->xkind = X_SMALL, c->wkind = W_SMALL;
  c->flip = (k / 2) % 2 ? 0x80 : 0x00;
  c->is_signed = (int)((k / 4 + k / 2) % 2);
  c->x_end = k % 4 != 1;
  c->w_end = k % 5 != 2;
  c->y_side = (int)((k / 5) % 3);
  c->unused_bad = next_u32() % 4 == 0;
  const size_t gaps[] = {0, 0, 1, 3, 16, 64, (size_t)irand(0, 40)};
  c->ldy = c->n + pick(gaps, sizeof gaps / sizeof gaps[0]);
  c->c0 = next_u32() % 3 ? 0 : (size_t)irand(1, 70);
  c->c_out = c->c0 + c->n + (size_t)irand(1, 40);
}

/* One line of ukernel_s's counts (what: which of its cases). */
static void print_strided(const char *title, const char *what, const s_stats *t) {
  const q8o_counts *o = &t->o;
  print_message("[ %s ] %s: %zu cases (taps: %zu conv windows, %zu row mode, %zu random, %zu on one base; "
                "pstep: %zu the run, %zu past it, %zu under it, %zu zero, %zu negative, %zu not a multiple of 4; "
                "%zu ending at the guard page after x, %zu with row m in a guard page; %zu c0 > 0, %zu with gaps "
                "between rows, %zu y against a guard page, %zu exact arrays; flip/u8-s8: %zu %zu %zu %zu; "
                "screens: %zu none, %zu narrow, %zu wide), %zu outputs: %zu exact ties, %zu within 2^-13 of one, "
                "%zu fp32 ties the double lacks, %zu the fp32 product rounds otherwise, %zu clamped, %zu saturated "
                "low, %zu high, %zu with C + bias past s32; rows screened in one vector only, a lane there wrong past "
                "a missed screen, per vector: %zu %zu %zu %zu\n",
                title, what, o->cases, t->taps[TAPS_CONV], t->taps[TAPS_ROWS], t->taps[TAPS_RANDOM],
                t->taps[TAPS_SAME], t->steps[STEP_RUN], t->steps[STEP_GAP], t->steps[STEP_OVERLAP],
                t->steps[STEP_ZERO], t->steps[STEP_NEG], t->odd_steps, t->at_end, t->row_m_guarded, t->c0_cases,
                t->gap_cases, t->y_guarded, t->exact_arrays, o->by_sign[0][0], o->by_sign[0][1], o->by_sign[1][0],
                o->by_sign[1][1], o->by_screen[0], o->by_screen[1], o->by_screen[2], o->outputs, o->ties,
                o->near_ties, o->fp32_ties, o->fp32_differs, o->clamped, o->sat_lo, o->sat_hi, t->past_s32,
                o->lone_vec[0], o->lone_vec[1], o->lone_vec[2], o->lone_vec[3]);
}

static void print_totals(const char *title, const dlc_q8_igemm_family *f) {
  print_message("[ %s ] %zu cases so far (%zu c0 > 0, %zu with gaps between rows, %zu with m < mr, %zu exact "
                "arrays; flip/u8-s8: %zu %zu %zu %zu; ind: %zu random, %zu conv, %zu one run; screens: %zu none, "
                "%zu narrow, %zu wide), %zu outputs: %zu exact ties, %zu within 2^-13 of one, %zu fp32 ties the "
                "double lacks, %zu the fp32 product rounds otherwise, %zu clamped, %zu saturated low, %zu high, %zu with C + bias past s32; wide-screen rows: "
                "%zu fast, %zu near a tie (exact fallback); rows screened in one vector only, a lane there wrong "
                "past a missed screen, per vector: %zu %zu %zu %zu (%zu columns built near a tie, %zu in vain)\n",
                title, totals.o.cases, totals.c0_cases, totals.gap_cases, totals.null_rows_cases, totals.exact_arrays,
                totals.o.by_sign[0][0], totals.o.by_sign[0][1], totals.o.by_sign[1][0], totals.o.by_sign[1][1],
                totals.o.by_ind[IND_RANDOM], totals.o.by_ind[IND_CONV], totals.o.by_ind[IND_SAME], totals.o.by_screen[0],
                totals.o.by_screen[1], totals.o.by_screen[2], totals.o.outputs, totals.o.ties, totals.o.near_ties,
                totals.o.fp32_ties, totals.o.fp32_differs, totals.o.clamped, totals.o.sat_lo, totals.o.sat_hi, totals.past_s32,
                totals.wide_rows_fast, totals.wide_rows_fallback, totals.o.lone_vec[0], totals.o.lone_vec[1],
                totals.o.lone_vec[2], totals.o.lone_vec[3], totals.vec_tie_cols, totals.vec_tie_missed);
  if (!f->ukernel_s) {
    print_message("[ %s ] ukernel_s: none in this family, not run\n", title);
    return;
  }
  print_strided(title, "ukernel_s", &totals.s);
  if (!totals.tall.o.cases) return;
  /* the tall tiles: which of their m x n were reached */
  size_t reached = 0, all = 0;
  for (size_t m = f->mr + 1; m <= f->mr_s_narrow; m++)
    for (size_t n = 1; n <= f->nr / 2; n++) all++, reached += totals.tall_tiles[m][n] > 0;
  char what[160];
  snprintf(what, sizeof what,
           "ukernel_s tall tiles (m %zu..%zu, n 1..%zu: %zu of %zu reached; %zu columns built near a tie, %zu in vain)",
           f->mr + 1, f->mr_s_narrow, f->nr / 2, reached, all, totals.tall_tie_cols, totals.tall_tie_missed);
  print_strided(title, what, &totals.tall);
}

/* ================================================================ tests */

/* Every m x n tile edge, 16 cases each: ntaps and kq from the lists, an occasional long kq. */
static void tiles_of(const dlc_q8_igemm_family *f) {
  rng_state = 0x13198A2E03707344ull;
  static const size_t taps[] = {1, 2, 9, 1, 2, 9, 3, 4, 25};
  static const size_t kqs[] = {1, 2, 3, 16};
  size_t k = 0;
  for (size_t m = 1; m <= f->mr; m++)
    for (size_t n = 1; n <= f->nr; n++)
      for (size_t v = 0; v < 16; v++, k++) {
        icase c;
        memset(&c, 0, sizeof c);
        c.f = f, c.m = m, c.n = n;
        c.ntaps = taps[(k / 3 + v) % (sizeof taps / sizeof taps[0])];
        c.kq = kqs[(k + k / 8) % 4];
        if (k % 41 == 7) c.kq = next_u32() % 2 ? 128 : 300, c.ntaps = (size_t)irand(1, 2);
        vary(&c, k);
        run_case(&c);
      }
  print_totals("tiles", f);
}

/* Ties: the kinds that put outputs on and near half-integers, small operands, every m x n. */
static void ties_of(const dlc_q8_igemm_family *f) {
  rng_state = 0xA4093822299F31D0ull;
  static const int kinds[] = {RQ_TIES, RQ_NEARTIE, RQ_POW2, RQ_NEARSRCH};
  static const size_t taps[] = {1, 2, 9, 4};
  static const size_t kqs[] = {1, 2, 3, 16};
  size_t k = 0;
  for (size_t m = 1; m <= f->mr; m++)
    for (size_t n = 1; n <= f->nr; n++)
      for (size_t v = 0; v < 8; v++, k++) {
        icase c;
        memset(&c, 0, sizeof c);
        c.f = f, c.m = m, c.n = n;
        c.ntaps = taps[(k / 3) % 4], c.kq = kqs[(k / 12 + k) % 4];
        vary(&c, k);
        c.rq = kinds[v % 4];
        if (k % 4) c.xkind = X_SMALL, c.wkind = W_SMALL;
        run_case(&c);
      }
  print_totals("ties", f);
}

/* The plan's arrays have c_out entries: where c0 + n = c_out (a layer's last panel), mult, bias
   and mult_f end at a guard page right after channel c0 + n - 1. */
static void exact_arrays_of(const dlc_q8_igemm_family *f) {
  rng_state = 0x082EFA98EC4E6C89ull;
  static const size_t ns[] = {1, 2, 3, 15, 16, 17, 24, 31, 32, 33, 47, 48, 49, 63, 64};
  size_t k = 0;
  for (size_t m = 1; m <= f->mr; m++)
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++)
      for (size_t v = 0; v < 3; v++, k++) {
        icase c;
        memset(&c, 0, sizeof c);
        c.f = f, c.m = m, c.n = ns[ni] <= f->nr ? ns[ni] : f->nr;
        c.ntaps = (size_t)irand(1, 9), c.kq = (size_t)irand(1, 5);
        vary(&c, k);
        c.c0 = v == 0 ? 0 : (size_t)irand(1, 100);
        c.c_out = c.c0 + c.n;
        c.exact = 1;
        run_case(&c);
      }
  print_totals("exact arrays", f);
}

/* Long reductions: kq 128 and 300 over 1, 2 and 9 taps, and sums at the s32 limit (ntaps * 4 * kq
   up to DLC_Q8_MAX_K with all-255 activations against all -128 or 127 weights). */
static void long_of(const dlc_q8_igemm_family *f) {
  rng_state = 0xBE5466CF34E90C6Cull;
  static const size_t kqs[] = {128, 300};
  static const size_t taps[] = {1, 2, 9};
  static const size_t ns[] = {1, 16, 17, 40, 64};
  size_t k = 0;
  for (size_t a = 0; a < 2; a++)
    for (size_t b = 0; b < 3; b++)
      for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++, k++) {
        icase c;
        memset(&c, 0, sizeof c);
        c.f = f, c.m = k % 2 ? f->mr : (size_t)irand(1, (int64_t)f->mr), c.n = ns[ni] <= f->nr ? ns[ni] : f->nr;
        c.ntaps = taps[b], c.kq = kqs[a];
        vary(&c, k);
        run_case(&c);
      }
  /* at the limit: C = +-K 255 128 exactly (|C| up to 2^31 - 2^23) */
  static const size_t lim[][2] = {{64, 256}, {9, 1827}, {1, 16448}};
  for (size_t l = 0; l < 3; l++)
    for (size_t v = 0; v < 4; v++, k++) {
      icase c;
      memset(&c, 0, sizeof c);
      c.f = f, c.m = f->mr, c.n = v % 2 ? f->nr : 17;
      c.ntaps = lim[l][0], c.kq = lim[l][1];
      vary(&c, k);
      c.xkind = v < 2 ? X_ALL_255 : X_ENDS;
      c.wkind = v == 0 ? W_ALL_MIN : v == 1 ? W_ALL_MAX : W_ENDS;
      c.rq = v == 3 ? RQ_BIGBIAS : v == 2 ? RQ_NOSCREEN : RQ_WIDE;
      run_case(&c);
    }
  print_totals("long", f);
}

/* The screen vector by vector. The kinds above put near ties in every column (test_ties' searched
   ones each on a row of its own, but a row of n columns then has some in every vector), so a row
   with a near tie in vector 3 falls back for one in vector 0 as well, and a kernel whose row
   screen left a vector out of its max of |d| passed them. Here only 1..4 columns of one vector
   (tie_vec, each in turn, for every count of vectors) are built near a tie, one the fp32 product
   rounds the other way (a missed screen stores a wrong byte), each on a row drawn for that column;
   the other columns are wide, away from ties but by chance. Every m, small sums. */
static void vector_ties_of(const dlc_q8_igemm_family *f) {
  rng_state = 0x3F84D5B5B5470917ull;
  static const size_t ns[] = {64, 63, 57, 49, 48, 41, 33, 32, 17, 16, 5};
  static const size_t taps[] = {1, 2, 9, 3};
  static const size_t kqs[] = {1, 2, 3, 16};
  size_t k = 0;
  for (size_t m = 1; m <= f->mr; m++)
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
      const size_t n = ns[ni] <= f->nr ? ns[ni] : f->nr, nv = (n + 15) / 16;
      for (size_t r = 0; r < 2 * nv; r++, k++) {
        icase c;
        memset(&c, 0, sizeof c);
        c.f = f, c.m = m, c.n = n;
        c.ntaps = taps[(k / 3) % 4], c.kq = kqs[(k / 5 + k) % 4];
        vary(&c, k);
        c.rq = RQ_NEARSRCH;
        c.vec_ties = 1, c.tie_vec = r % nv;
        /* 1..4 of the vector's columns */
        const size_t j0 = 16 * c.tie_vec, nj = n - j0 < 16 ? n - j0 : 16;
        const size_t want = (size_t)irand(1, nj < 4 ? (int64_t)nj : 4);
        for (size_t got = 0; got < want;) {
          const uint64_t bit = (uint64_t)1 << (j0 + (size_t)irand(0, (int64_t)nj - 1));
          got += !(c.tie_cols & bit), c.tie_cols |= bit;
        }
        run_case(&c);
      }
    }
  print_totals("vector ties", f);
}

/* Whether ukernel_s of f has taller narrow tiles; says so where not. */
static int has_tall(const dlc_q8_igemm_family *f, const char *test) {
  if (!f->ukernel_s || f->mr_s_narrow <= f->mr) {
    print_message("[ %s ] not run: %s has %s\n", test, f->name,
                  !f->ukernel_s ? "no ukernel_s" : "no taller narrow tiles for ukernel_s (mr_s_narrow <= mr)");
    return 0;
  }
  return 1;
}

/* A tall case: through ukernel_s alone (ukernel takes m <= mr). */
static void run_tall(icase *c) {
  c->strided = 1;
  run_one(c);
}

/* ukernel_s's taller tiles, every m in (mr, mr_s_narrow] and n 1..nr / 2 (one vector and each of
   its tails, two and each of the second's), 12 cases each: 8 of vary's kinds in turn and 4 of
   test_ties' (ties, near ties, powers of two, searched near ties; mostly small operands), with
   run_one's strided layouts, steps and guard pages as every ukernel_s case has them (with pstep > 0
   and x against the guard page after it, the highest row ends at that page: a kernel that reads
   row m, running a taller tile than asked, faults), now and then exact arrays or a long kq; then
   sums at the s32 limit, which the taller tiles keep in their own accumulators. */
static void tall_of(const dlc_q8_igemm_family *f) {
  if (!has_tall(f, "tall")) return;
  rng_state = 0x452821E638D01377ull;
  static const size_t taps[] = {1, 2, 9, 1, 2, 9, 3, 4, 25};
  static const size_t kqs[] = {1, 2, 3, 16};
  static const int ties[] = {RQ_TIES, RQ_NEARTIE, RQ_POW2, RQ_NEARSRCH};
  size_t k = 0;
  for (size_t m = f->mr + 1; m <= f->mr_s_narrow; m++)
    for (size_t n = 1; n <= f->nr / 2; n++)
      for (size_t v = 0; v < 12; v++, k++) {
        icase c;
        memset(&c, 0, sizeof c);
        c.f = f, c.m = m, c.n = n;
        c.ntaps = taps[(k / 3 + v) % (sizeof taps / sizeof taps[0])];
        c.kq = kqs[(k + k / 8) % 4];
        if (k % 41 == 7) c.kq = next_u32() % 2 ? 128 : 300, c.ntaps = (size_t)irand(1, 2);
        vary(&c, k);
        if (v >= 8) {
          c.rq = ties[v % 4];
          if (k % 4) c.xkind = X_SMALL, c.wkind = W_SMALL;
        }
        if (k % 9 == 4) c.exact = 1, c.c_out = c.c0 + c.n; /* a layer's last panel */
        run_tall(&c);
      }
  /* at the limit (test_long's): C = +-K 255 128 exactly; the tallest tile or any, both vectors or
     a tail in the second */
  static const size_t lim[][2] = {{64, 256}, {9, 1827}, {1, 16448}};
  for (size_t l = 0; l < 3; l++)
    for (size_t v = 0; v < 4; v++, k++) {
      icase c;
      memset(&c, 0, sizeof c);
      c.f = f, c.n = v % 2 ? f->nr / 2 : f->nr / 2 > 17 ? 17 : f->nr / 2;
      c.m = v < 2 ? f->mr_s_narrow : (size_t)irand((int64_t)f->mr + 1, (int64_t)f->mr_s_narrow);
      c.ntaps = lim[l][0], c.kq = lim[l][1];
      vary(&c, k);
      c.xkind = v < 2 ? X_ALL_255 : X_ENDS;
      c.wkind = v == 0 ? W_ALL_MIN : v == 1 ? W_ALL_MAX : W_ENDS;
      c.rq = v == 3 ? RQ_BIGBIAS : v == 2 ? RQ_NOSCREEN : RQ_WIDE;
      run_tall(&c);
    }
  print_totals("tall", f);
}

/* test_vector_ties for the taller tiles: near ties (one a missed screen gets wrong) in 1..4
   columns of one vector only, vector 0 and 1 in turn, every tall m. */
static void tall_vector_ties_of(const dlc_q8_igemm_family *f) {
  if (!has_tall(f, "tall vector ties")) return;
  rng_state = 0xC0AC29B7C97C50DDull;
  static const size_t ns[] = {32, 31, 25, 17, 16, 9, 1};
  static const size_t taps[] = {1, 2, 9, 3};
  static const size_t kqs[] = {1, 2, 3, 16};
  size_t k = 0;
  for (size_t m = f->mr + 1; m <= f->mr_s_narrow; m++)
    for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ni++) {
      const size_t n = ns[ni] <= f->nr / 2 ? ns[ni] : f->nr / 2, nv = (n + 15) / 16;
      for (size_t r = 0; r < 2 * nv; r++, k++) {
        icase c;
        memset(&c, 0, sizeof c);
        c.f = f, c.m = m, c.n = n;
        c.ntaps = taps[(k / 3) % 4], c.kq = kqs[(k / 5 + k) % 4];
        vary(&c, k);
        c.rq = RQ_NEARSRCH;
        c.vec_ties = 1, c.tie_vec = r % nv;
        const size_t j0 = 16 * c.tie_vec, nj = n - j0 < 16 ? n - j0 : 16;
        const size_t want = (size_t)irand(1, nj < 4 ? (int64_t)nj : 4);
        for (size_t got = 0; got < want;) {
          const uint64_t bit = (uint64_t)1 << (j0 + (size_t)irand(0, (int64_t)nj - 1));
          got += !(c.tie_cols & bit), c.tie_cols |= bit;
        }
        run_tall(&c);
      }
    }
  print_totals("tall vector ties", f);
}

static void summary_of(const dlc_q8_igemm_family *f) {
  /* the sweep reaches what it is there for */
  assert_true(totals.o.ties > 0 && totals.o.fp32_ties > 0 && totals.o.near_ties > 0 && totals.o.fp32_differs > 0);
  assert_true(totals.o.clamped > 0 && totals.o.sat_lo > 0 && totals.o.sat_hi > 0 && totals.past_s32 > 0);
  assert_true(totals.o.by_screen[0] > 0 && totals.o.by_screen[1] > 0 && totals.o.by_screen[2] > 0);
  assert_true(totals.wide_rows_fast > 0 && totals.wide_rows_fallback > 0);
  /* rows whose screen hangs on one vector alone, each vector (test_vector_ties) */
  for (size_t v = 0; v < 4 && 16 * v < f->nr; v++) assert_true(totals.o.lone_vec[v] > 0);
  for (size_t a = 0; a < 2; a++)
    for (size_t b = 0; b < 2; b++) assert_true(totals.o.by_sign[a][b] > 0);
  if (!f->ukernel_s) return;
  /* every case went through ukernel_s too, in every layout and kind of step */
  assert_int_equal(totals.s.o.cases, totals.o.cases);
  for (size_t k = 0; k < N_TAP_KINDS; k++) assert_true(totals.s.taps[k] > 0);
  for (size_t k = 0; k < N_STEP_KINDS; k++) assert_true(totals.s.steps[k] > 0);
  assert_true(totals.s.odd_steps > 0 && totals.s.at_end > 0 && totals.s.row_m_guarded > 0);
  assert_true(totals.s.o.ties > 0 && totals.s.o.clamped > 0 && totals.s.o.sat_lo > 0 && totals.s.o.sat_hi > 0);
  for (size_t k = 0; k < 3; k++) assert_true(totals.s.o.by_screen[k] > 0);
  for (size_t v = 0; v < 4 && 16 * v < f->nr; v++) assert_true(totals.s.o.lone_vec[v] > 0);
  for (size_t a = 0; a < 2; a++)
    for (size_t b = 0; b < 2; b++) assert_true(totals.s.o.by_sign[a][b] > 0);
  if (f->mr_s_narrow <= f->mr) {
    print_message("[ summary ] %s: no taller narrow tiles for ukernel_s (mr_s_narrow %zu, mr %zu), none run\n",
                  f->name, f->mr_s_narrow, f->mr);
    return;
  }
  /* the tall tiles: every m in (mr, mr_s_narrow] with every n 1..nr / 2 (so n = 16, a full vector,
     n = 32, two, and the second vector's tails between), in every layout and kind of step, the
     highest row at the guard page, and what the requantisation is there for */
  const s_stats *t = &totals.tall;
  for (size_t m = f->mr + 1; m <= f->mr_s_narrow; m++)
    for (size_t n = 1; n <= f->nr / 2; n++) assert_true(totals.tall_tiles[m][n] > 0);
  for (size_t k = 0; k < N_TAP_KINDS; k++) assert_true(t->taps[k] > 0);
  for (size_t k = 0; k < N_STEP_KINDS; k++) assert_true(t->steps[k] > 0);
  assert_true(t->odd_steps > 0 && t->at_end > 0 && t->row_m_guarded > 0);
  assert_true(t->c0_cases > 0 && t->gap_cases > 0 && t->y_guarded > 0 && t->exact_arrays > 0 && t->past_s32 > 0);
  assert_true(t->o.ties > 0 && t->o.near_ties > 0 && t->o.fp32_ties > 0 && t->o.fp32_differs > 0);
  assert_true(t->o.clamped > 0 && t->o.sat_lo > 0 && t->o.sat_hi > 0);
  for (size_t k = 0; k < 3; k++) assert_true(t->o.by_screen[k] > 0);
  for (size_t v = 0; v < 2 && 16 * v < f->nr / 2; v++) assert_true(t->o.lone_vec[v] > 0);
  for (size_t a = 0; a < 2; a++)
    for (size_t b = 0; b < 2; b++) assert_true(t->o.by_sign[a][b] > 0);
}

/* Each test on every family under test (skipped where there is none). */
static void test_tiles(void **state) { (void)state, for_each_family(tiles_of, "tiles"); }
static void test_ties(void **state) { (void)state, for_each_family(ties_of, "ties"); }
static void test_exact_arrays(void **state) { (void)state, for_each_family(exact_arrays_of, "exact arrays"); }
static void test_long(void **state) { (void)state, for_each_family(long_of, "long"); }
static void test_vector_ties(void **state) { (void)state, for_each_family(vector_ties_of, "vector ties"); }
static void test_tall(void **state) { (void)state, for_each_family(tall_of, "tall"); }
static void test_tall_vector_ties(void **state) { (void)state, for_each_family(tall_vector_ties_of, "tall vector ties"); }
static void test_summary(void **state) { (void)state, for_each_family(summary_of, "summary"); }

int main(void) {
  const int rc = RUN_TESTS(test_tiles, test_ties, test_exact_arrays, test_long, test_vector_ties, test_tall,
                           test_tall_vector_ties, test_summary);
  /* the counts of the last family under test */
  printf("q8_igemm summary: %zu cases, %zu outputs checked; ukernel_s: %zu cases, %zu outputs checked, and %zu "
         "cases, %zu outputs of its taller tiles%s\n",
         totals.o.cases, totals.o.outputs, totals.s.o.cases, totals.s.o.outputs, totals.tall.o.cases,
         totals.tall.o.outputs, rc == 77 ? " (skipped)" : rc ? " (FAILED)" : "");
  return rc;
}
