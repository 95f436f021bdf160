/* test_ukernel_q8_dwn.c - the int8 NHWC depthwise micro-kernels in registers (dlc_q8_dwn_family,
 * src/direct/lowp_dw_ukernel.h) of the avx512 table (set where the CPU has AVX512-VNNI), against a
 * reference written here from the contract alone:
 *
 *   run(m, c, ntaps, ind, w, flip, q, ql, y, ldy), 1 <= m <= mr, c >= 1 (mr: mr_quad where set
 *   and c <= 16, mr_narrow where set and c <= 32):
 *   C(i, j) = sum over t < ntaps of wt(t, j) * (int) (ind[t * mr + i][j] ^ flip)
 *   w:  block b (64 channels) at w + 256 b ntaps; byte 4 l + k' of vector k of tap t
 *       (w + 256 b ntaps + (4 t + k) 64 + 4 l + k') is wt(t, 64 b + 4 l + k) where k' == k, else 0,
 *       0 past c: round_up(c, 64) ntaps 4 bytes
 *   ql: q with bias and mult_f (where q->mult_f is set) of round_up(c, 64) entries in lane order,
 *       entry 64 b + 16 k + l = channel 64 b + 4 l + k's, zeros past c
 *   y[i * ldy + j] = requant(C(i, j) + bias[j], mult[j])                      i < m, j < c
 *
 *   run_s(m, c, ntaps, tap, pstep, w, flip, q, ql, y, ldy) (optional): the same with the pixels
 *   evenly spaced, ind[t * mr + i] = tap[t] + i * pstep
 *
 * C in int64 from the operands as laid out; the requantisation is this file's own, in double, from
 * quant.h's header formula (v = (double)(acc + bias) * mult, clamp to [lo, hi], round half to
 * even, + y_zero_point, saturate to the type), not dlc_q8_requant1. q is derived with
 * dlc_q8_derive(q, ntaps * 255 * 128, c, mult_f) as dwn_plan (src/direct/direct_lowp.c) does, and
 * ql built from it as dwn_plan builds it.
 *
 * Covered: every m 1..mr (1..mr_narrow for c <= 32, 1..mr_quad for c <= 16) against every c 1..70 and 96, 127, 128, 129,
 * 144, 192, 200, 384, 960
 * (every partial block, one and several blocks), ntaps 1, 2, 3, 9, 25, 49 (and 64,
 * DLC_IND_MAX_TAPS), flip 0 / 0x80 each with u8 and s8 outputs; per-channel multipliers; biases up
 * to INT32_MAX - acc_max (the most bias_s32 allows); the wide screen's fast path and its near-tie
 * fallback (power-of-two multipliers with biases that put outputs on exact half-integers, fp32
 * ties the double lacks, and biases found by search that put one row of chosen channels within
 * 2^-13 of a tie where the fp32 product rounds the other way: fallback on some rows of a tile only,
 * in a partial last block, in blocks of <= 32 channels on rows 0..1 only or 2..3 only, where a
 * kernel may hold two pixels in one vector, and of <= 16 on rows 0..3 only or 4..7 only (four); and, as the kernel screens a row of accumulators by the
 * largest |d| of its four vectors (channel 4 l + k in lane l of vector k), rows whose only near
 * ties, built so that a missed screen stores a wrong byte, lie in one vector, each in turn, in
 * blocks of 64, partial ones and those of <= 32 channels, a row two pixels, or <= 16, four), no screen (mult_f
 * NULL, multipliers out of range), the narrow screen (the kernel's exact store for every row),
 * finite clamps (integer, half-integer, equal,
 * one-sided), saturation at both ends, zero points 0, 128, odd, at the type's ends. The summary
 * test asserts that the sweep reached each of these.
 * Operands: ind rows anywhere in x at any byte offset, several rows on the same bytes (padding
 * taps on one zero-point row; every row on one run), driver-like NHWC windows with padding and
 * strides, rows ending exactly at a guard page (a byte read past c faults) or starting right after
 * one; the unused rows (i >= m) NULL or pointing into a guard page; ind, w, q's and ql's arrays
 * against guard pages (ql's exactly round_up(c, 64) entries); y in sentinels with ldy > c (gap
 * bytes checked) or against a guard page; the operands compared after the call.
 *
 * run_s: every case above once more (the same m, c, taps, kinds and sides) with its own operands:
 * the taps a window along a row of an NHWC image (stride 1, 2, 3, dilation 1 or 2), runs anywhere
 * in x at any byte offset (some on the same bytes, some in a second buffer), or one run for all
 * taps; pstep c (pixels adjacent: with c = 32 + 64 k, the last block's pairs of pixels one 64-byte
 * window), 2c, more than c, 32 with other c (gaps, or overlapping pixels where c > 32, the last
 * block's pairs then one window too), 16 likewise (a last block of 16 channels: quads of pixels one
 * window), less than c, 0 and negative; the tap whose last pixel is
 * x's last bytes against a guard page, for every m (with pstep 32 and a last block of 32 channels:
 * a full last pair, even m, may read its 64 bytes at once; an odd m's last pixel alone must not
 * read 32 more; pstep 16 and a last block of 16 likewise for quads), or the first pixel right after one; tap against a guard page; the same checks.
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

#define NB 64         /* channels of a block of w and ql (the contract's layout) */
#define MAX_MR 16     /* the driver's pointers: DLC_IND_MAX_TAPS x 16 on its stack */
#define MAX_TAPS 64   /* DLC_IND_MAX_TAPS */

static size_t round_up64(size_t c) { return (c + NB - 1) / NB * NB; }

/* ================================================================ the family */

/* The pixels a tile of f takes for c channels (the contract's mr: ind's pointers a tap), and the
   most over all c. */
static size_t mr_for(const dlc_q8_dwn_family *f, size_t c) {
  return c <= 16 && f->mr_quad ? f->mr_quad : c <= 32 && f->mr_narrow ? f->mr_narrow : f->mr;
}
static size_t mr_max(const dlc_q8_dwn_family *f) {
  const size_t a = f->mr_narrow > f->mr ? f->mr_narrow : f->mr;
  return f->mr_quad > a ? f->mr_quad : a;
}

/* The families under test: each table's q8_dwn, each once. Where this build has the VNNI kernel and
   this CPU runs it, the avx512 table must carry it (src/arch/<isa>/config.c), so losing it from the
   table fails rather than skips; the generic and avx2 tables must not (EVEX). */
static size_t families(const dlc_q8_dwn_family *out[MAX_FAMILIES]) {
#if defined(DLC_HAVE_AVX512VNNI)
  if (dlc_cpu()->avx512_vnni && dlc_kernels_for(DLCONV_ISA_AVX512))
    assert_ptr_equal(TABLE_FAMILY(DLCONV_ISA_AVX512, q8_dwn), &dlc_q8_dwn__avx512vnni);
  /* the strided entry too: dropping it would skip the run_s cases silently */
  assert_non_null(dlc_q8_dwn__avx512vnni.run_s);
  assert_ptr_not_equal(TABLE_FAMILY(DLCONV_ISA_AVX2, q8_dwn), &dlc_q8_dwn__avx512vnni);
  assert_ptr_not_equal(TABLE_FAMILY(DLCONV_ISA_GENERIC, q8_dwn), &dlc_q8_dwn__avx512vnni);
#endif
  size_t n = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) ADD_FAMILY(out, n, kt->q8_dwn);
  static int said;
  for (size_t i = 0; i < n; i++) {
    const dlc_q8_dwn_family *f = out[i];
    assert_non_null(f->name);
    assert_non_null(f->run);
    assert_true(f->mr >= 1 && mr_max(f) <= MAX_MR);
    if (!said)
      printf("q8_dwn family under test: %s (mr %zu, %zu up to 32 channels, %zu up to 16%s)\n", f->name, f->mr,
             mr_for(f, 32), mr_for(f, 16), f->run_s ? ", run_s" : ", no run_s");
  }
  if (!said && !n)
    printf("q8_dwn family under test: none (%s: the q8_dwn tests skip)\n",
           dlc_kernels_for(DLCONV_ISA_AVX512) ? "the avx512 table has no q8_dwn (no AVX512-VNNI)"
                                              : "no avx512 table on this CPU");
  said = 1;
  return n;
}

/* ================================================================ cases */

static const size_t tap_list[] = {1, 2, 3, 9, 25, 49, 64};
#define N_TAP_LIST (sizeof tap_list / sizeof tap_list[0])
/* the c the sweeps take: 1..70 and these */
static const size_t c_more[] = {96, 127, 128, 129, 144, 192, 200, 384, 960};
#define N_C (70 + sizeof c_more / sizeof c_more[0])
static size_t c_at(size_t k) { return k < 70 ? k + 1 : c_more[k - 70]; }

typedef struct dcase {
  const dlc_q8_dwn_family *f;
  size_t m, c, ntaps, ldy;
  uint8_t flip;
  int is_signed, rq, ind_kind, xkind, wkind;
  int x_end;      /* x's last byte right before a guard page (1) or its first right after one (0) */
  int w_end;      /* the same for w */
  int ql_end;     /* the same for ql's arrays (q's: always at the end) */
  int y_side;     /* 0: in sentinels, 1: against a guard page after, 2: before */
  int unused_bad; /* rows >= m: 0 NULL, 1 a pointer into a guard page */
  /* RQ_NEARSRCH: the row the searched channels put near a tie, and whether those channels all lie
     in the last block */
  size_t trow;
  int tie_last;
  /* RQ_NEARSRCH otherwise (test_vector_ties): in each block 1..3 channels of lane order vector
     tie_vec (channel 4 l + tie_vec) near a tie, each on a row of its own (one a missed screen would
     get wrong), the others wide: a row's only screened lanes then lie in one vector */
  int vec_ties;
  size_t tie_vec;
  /* IND_CONV */
  q8o_window win;
  size_t xlen;
  /* through run_s: its pstep and, for a window (IND_CONV), the dilation */
  int strided;
  ptrdiff_t pstep;
  size_t dil;
  int ps_fixed; /* pstep as set, not picked (runs anywhere or one run only) */
} dcase;

/* run_s: pstep's kinds, as the cases count them (what each is there for: PS_ONE pixels adjacent,
   the pair load's case where c is 32 + 64 k; the others pixels apart, overlapping, all on one or
   backwards) */
enum { PS_ONE, PS_TWO, PS_MORE, PS_LESS, PS_ZERO, PS_NEG, N_PS };
static int ps_kind(ptrdiff_t pstep, size_t c) {
  const ptrdiff_t pc = (ptrdiff_t)c;
  if (pstep == pc) return PS_ONE;
  if (pstep == 2 * pc) return PS_TWO;
  if (pstep > pc) return PS_MORE;
  return pstep > 0 ? PS_LESS : pstep == 0 ? PS_ZERO : PS_NEG;
}
static const char *const ps_names[] = {"c", "2c", "> c otherwise", "< c", "0", "< 0"};
static const char *const lay_names[] = {"runs anywhere", "a window along an image row", "one run for all taps"};

typedef struct stats {
  q8o_counts o; /* cases, outputs and what they saw (support/q8_oracle.h) */
  size_t big_bias, by_taps[N_TAP_LIST];
  size_t by_m[MAX_MR + 1];
  /* the wide screen, per row of a 64-channel block (the kernel's tile): fast or fallback; blocks
     with both; fallback rows in a partial block, alone (c < 64) or last of several (c > 64) */
  size_t rows_fast, rows_fallback, mixed_blocks, fallback_partial_single, fallback_partial_last, fast_partial;
  /* blocks of at most 32 channels (a kernel may hold two pixels in a vector there) with m >= 3:
     fallback on rows 0..1 only or 2..3 only while the others are fast */
  size_t mixed_small_pairs, mixed_small_quads; /* the same for <= 16 channels, m >= 5: rows 0..3 or 4..7 */
  /* rows of accumulators screened in one vector only, a lane there wrong past a missed screen (as
     o.lone_vec), in blocks of <= 32 channels (a row two pixels); vec_ties: channels built near a
     tie and those where building failed */
  size_t lone_pair[4], lone_quad[4], vec_tie_chans, vec_tie_missed;
  size_t gap_cases, null_rows_cases, bad_rows_cases, guard_tail_cases, zp_128, zp_odd;
  /* run_s only: pstep's kinds; pstep 32 with c != 32; with pstep 32 and a last block of 32
     channels, the last pixel of a tap x's last bytes against the guard page, per m (the pair
     load's edge); blocks of 32 channels with pstep != 32 and m >= 2 (no pair load); a partial
     last block under 32 channels with pstep 32 against the guard; the first pixel right after
     the start guard; taps on the same bytes; taps in the second buffer; dilated windows */
  size_t by_ps[N_PS], p32_other, adj_end_by_m[MAX_MR + 1], b32_apart, p32_small_end, start_guard_cases;
  size_t p16_other; /* pstep 16 with c != 16 */
  size_t alias_cases, zbuf_cases, dil_cases;
} stats;

/* the cases through run and those through run_s, of the family under test */
static stats totals, stotals;
static stats family_totals[MAX_FAMILIES], family_stotals[MAX_FAMILIES];

/* Runs body on every family under test, with that family's own counts in totals and stotals; skips
   the test (test: its name) where there is none. */
static void for_each_family(void (*body)(const dlc_q8_dwn_family *), const char *test) {
  const dlc_q8_dwn_family *fams[MAX_FAMILIES];
  const size_t n = families(fams);
  if (!n) skip_test(test, "no q8_dwn family on this CPU (needs AVX512-VNNI)");
  for (size_t i = 0; i < n; i++) {
    totals = family_totals[i], stotals = family_stotals[i];
    body(fams[i]);
    family_totals[i] = totals, family_stotals[i] = stotals;
  }
}

static void describe(const dcase *c, const dlc_q8_params *q, char *buf, size_t len) {
  char lay[200] = "", rows[160];
  if (c->ind_kind == IND_CONV && c->strided)
    snprintf(lay, sizeof lay, " (image %zux%zu, kernel %zux%zu, stride %zu, dilation %zu)", c->win.h, c->win.wd,
             c->win.kh, c->win.kw, c->win.stride, c->dil);
  else if (c->ind_kind == IND_CONV)
    snprintf(lay, sizeof lay, " (image %zux%zu, kernel %zux%zu, stride %zu, pads %zu/%zu)", c->win.h, c->win.wd,
             c->win.kh, c->win.kw, c->win.stride, c->win.ph, c->win.pw);
  if (c->strided)
    snprintf(rows, sizeof rows, "run_s pstep=%td (%s), taps %s", c->pstep, ps_names[ps_kind(c->pstep, c->c)],
             lay_names[c->ind_kind]);
  else
    snprintf(rows, sizeof rows, "ind %s", ind_names[c->ind_kind]);
  char ties[64] = "";
  if (c->rq == RQ_NEARSRCH && c->vec_ties)
    snprintf(ties, sizeof ties, " (near ties in lane order vector %zu only)", c->tie_vec);
  else if (c->rq == RQ_NEARSRCH)
    snprintf(ties, sizeof ties, "%s", c->tie_last ? " (row near ties, last block)" : " (row near ties)");
  snprintf(buf, len,
           "%s m=%zu c=%zu ntaps=%zu flip=0x%02x %s y ldy=%zu, %s%s (y zp %d, lo %.17g, hi %.17g, %s), %s%s, "
           "xlen %zu, x kind %d, w kind %d, x %s, w %s, ql %s, y %s%s%s",
           c->f->name, c->m, c->c, c->ntaps, c->flip, c->is_signed ? "s8" : "u8", c->ldy, rq_names[c->rq], ties,
           q ? q->y_zero_point : 0, q ? q->lo : 0.0, q ? q->hi : 0.0, q ? screen_name(q) : "?", rows, lay, c->xlen,
           c->xkind, c->wkind, c->x_end ? "against the end guard" : "after the start guard",
           c->w_end ? "against the end guard" : "after the start guard",
           c->ql_end ? "against the end guard" : "after the start guard",
           c->y_side == 0 ? "in sentinels" : c->y_side == 1 ? "against the end guard" : "after the start guard",
           c->strided ? "" : ", rows >= m ", c->strided ? "" : c->unused_bad ? "into a guard page" : "NULL");
}

/* ================================================================ requantisation parameters */

typedef struct rq_set {
  dlc_q8_params q, ql;
  gbuf gm, gb, gf, glb, glf;
} rq_set;

/* Whether RQ_NEARSRCH searches channel j: about one in 12 of the channels (of the last block only
   where tie_last), at least one. */
static int searched(const dcase *c, size_t j, uint32_t r) {
  const size_t first = c->tie_last ? (c->c - 1) / NB * NB : 0;
  if (j < first) return 0;
  return j == first + (c->c - first) / 2 || r % 12 == 0;
}

/* Per channel, a multiplier and a bias of the case's kind, from one row's sum cref of that channel
   (the bias puts that row at a chosen value, so outputs land in the type's range whatever the
   sums) and the channel's spread over the m rows. Then lo / hi, zero points, dlc_q8_derive as
   dwn_plan does, and ql from q in lane order. */
static void rq_build(rq_set *s, const dcase *c, const int64_t *C, int64_t acc_max) {
  memset(s, 0, sizeof *s);
  const size_t nc = c->c, cr = round_up64(nc), m = c->m;
  dlc_q8_params *q = &s->q;
  q->mult = gbuf_open(&s->gm, nc * sizeof(double), 1);
  q->bias = gbuf_open(&s->gb, nc * sizeof(int32_t), 1);
  float *mult_f = gbuf_open(&s->gf, nc * sizeof(float), 1);
  static const int32_t zps[] = {0, 0, 128, 1, 127, -1, -127, 3, -77};
  q8o_params_begin(q, c->is_signed, zps, sizeof zps / sizeof zps[0]);
  const int64_t room = INT32_MAX - acc_max; /* bias_s32: |bias| <= room */
  /* vec_ties: the channels built near a tie, 1..3 of vector tie_vec's in each block that has any */
  unsigned char *vt = NULL;
  if (c->vec_ties) {
    vt = xmalloc(nc);
    memset(vt, 0, nc);
    for (size_t j0 = 0; j0 < nc; j0 += NB) {
      const size_t nb = nc - j0 < NB ? nc - j0 : NB;
      if (nb <= c->tie_vec) continue;
      const size_t avail = (nb - c->tie_vec + 3) / 4, want = (size_t)irand(1, avail < 3 ? (int64_t)avail : 3);
      for (size_t got = 0; got < want;) {
        const size_t j = j0 + c->tie_vec + 4 * (size_t)irand(0, (int64_t)avail - 1);
        got += !vt[j], vt[j] = 1;
      }
    }
  }
  for (size_t j = 0; j < nc; j++) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < m; i++) {
      lo = C[i * nc + j] < lo ? C[i * nc + j] : lo;
      hi = C[i * nc + j] > hi ? C[i * nc + j] : hi;
    }
    const int srch = c->rq == RQ_NEARSRCH && !c->vec_ties && searched(c, j, next_u32());
    const int64_t cref = C[(srch ? c->trow : (size_t)irand(0, (int64_t)m - 1)) * nc + j];
    const q8o_col h = q8o_col_of(cref, hi - lo + 1);
    double mt;
    int64_t b;
    stats *const st = c->strided ? &stotals : &totals;
    /* vec_ties: its channels near a tie (each on a row drawn for it above), the rest wide; RQ_NEARSRCH
       otherwise: the searched channels near a tie, the rest wide */
    if (vt) {
      if (vt[j]) {
        st->vec_tie_chans++;
        st->vec_tie_missed += !q8o_near_wrong(q, acc_max, &h, &mt, &b);
      } else {
        q8o_mult_bias(RQ_WIDE, 0, q, acc_max, &h, &mt, &b);
      }
    } else if (!q8o_mult_bias(srch ? RQ_NEARSRCH : c->rq == RQ_NEARSRCH ? RQ_WIDE : c->rq, j == 0, q, acc_max, &h,
                              &mt, &b)) { /* RQ_BIGBIAS */
      const uint32_t r = next_u32() % 5;
      b = r == 0   ? room - irand(0, 3)
          : r == 1 ? -room + irand(0, 3)
          : r == 2 ? irand(-room, room)
          : r == 3 ? (next_u32() % 2 ? 1 : -1) * irand(room / 2, room)
                   : -cref + irand(-1000, 1000);
      /* v of row cref around +-(0..400): in the type or saturating; (acc_max + |b|) mult stays
         below 1200, inside the wide screen */
      const double den = fmax(fabs((double)(cref + b)), (double)acc_max);
      mt = (next_u32() % 3 ? 130.0 : 400.0) * urand() / den + 0x1p-40;
    }
    /* the contract's biases keep acc + bias in s32 (bias_s32): out of room, a small one */
    if (b > room || b < -room) b = irand(-(room < 1000 ? room : 1000), room < 1000 ? room : 1000);
    q->mult[j] = mt, q->bias[j] = (int32_t)b;
  }
  free(vt);
  q8o_params_bounds(q, c->rq, RQ_BIT(RQ_SAT) | RQ_BIT(RQ_WIDE) | RQ_BIT(RQ_BIGBIAS), RQ_BIT(RQ_NOSCREEN));
  dlc_q8_derive(q, acc_max, nc, c->rq == RQ_NOSCREEN ? NULL : mult_f);
  /* what each kind is there for */
  assert_true(q->bias_s32);
  if (c->rq == RQ_NOSCREEN || c->rq == RQ_RANGE) assert_null(q->mult_f);
  if (c->rq == RQ_WIDE || c->rq == RQ_POW2 || c->rq == RQ_TIES || c->rq == RQ_NEARTIE || c->rq == RQ_CLAMP ||
      c->rq == RQ_NEARSRCH || c->rq == RQ_BIGBIAS)
    assert_true(q->screen_wide);
  if (c->rq == RQ_NARROW) assert_true(q->mult_f && !q->screen_wide);

  /* ql as dwn_plan builds it: round_up(c, 64) entries in lane order, against a guard page */
  s->ql = *q;
  s->ql.bias = gbuf_open(&s->glb, cr * sizeof(int32_t), c->ql_end);
  memset(s->ql.bias, 0, cr * sizeof(int32_t));
  s->ql.mult_f = NULL;
  if (q->mult_f) {
    s->ql.mult_f = gbuf_open(&s->glf, cr * sizeof(float), c->ql_end);
    memset(s->ql.mult_f, 0, cr * sizeof(float));
  }
  for (size_t j = 0; j < nc; j++) {
    const size_t b = j / NB, l = j % NB / 4, k = j % 4;
    s->ql.bias[NB * b + 16 * k + l] = q->bias[j];
    if (q->mult_f) s->ql.mult_f[NB * b + 16 * k + l] = q->mult_f[j];
  }
}

static void rq_close(rq_set *s) {
  gbuf_close(&s->gm), gbuf_close(&s->gb), gbuf_close(&s->gf), gbuf_close(&s->glb), gbuf_close(&s->glf);
}

/* ================================================================ run_s's operands */

/* pstep for runs anywhere (IND_RANDOM, IND_SAME): mostly c and 2c as the driver passes them (stride
   1 and 2), then pixels further apart, 32 whatever c (the pair load's value: a gap, or pixels that
   overlap where c > 32), less than c, 0 and backwards, which the contract allows as well. */
static ptrdiff_t pick_pstep(size_t nc) {
  const ptrdiff_t pc = (ptrdiff_t)nc;
  const uint32_t r = next_u32() % 16;
  if (r < 5) return pc;
  if (r < 8) return 2 * pc;
  if (r < 10) return next_u32() % 2 ? pc + (ptrdiff_t)irand(1, 40) : pc * (ptrdiff_t)irand(3, 4);
  if (r < 12) return next_u32() % 3 ? 32 : 16;
  if (r < 14) return nc > 1 ? (ptrdiff_t)irand(1, (int64_t)nc - 1) : pc;
  if (r < 15) return 0;
  return -pc * (ptrdiff_t)irand(1, 2) - (next_u32() % 2 ? 0 : (ptrdiff_t)irand(1, 40));
}

/* run_s's pixels: pixel i of tap t at toff[t] + i pstep, in x or (zb[t]) in a second buffer of one
   run's bytes. Sets c->pstep and c->xlen (c->win, c->dil for a window) and returns the second
   buffer's length. The layouts (c->ind_kind):
   IND_CONV   a kh x kw window of m output pixels along one row of an NHWC image without padding
              (run_s's tiles in the driver), pstep stride * c; the window at x's corner on the side
              of its guard page (its last tap's last pixel x's last bytes, or its first tap's first
              pixel x's first) three times in four, else anywhere
   IND_RANDOM each tap's run anywhere at any byte offset, some on another's bytes, some in the
              second buffer; one of them ends at x's end (x_end) or starts at its start
   IND_SAME   every tap the same pointer: x's last run or first, or the second buffer */
static size_t strided_layout(dcase *c, size_t *toff, unsigned char *zb) {
  const size_t m = c->m, nc = c->c, ntaps = c->ntaps;
  memset(zb, 0, ntaps);
  if (c->ind_kind == IND_CONV) {
    q8o_window *g = &c->win;
    memset(g, 0, sizeof *g);
    kernel_shape(ntaps, &g->kh, &g->kw);
    const uint32_t r = next_u32() % 8;
    g->stride = r < 4 ? 1 : r < 7 ? 2 : 3;
    c->dil = next_u32() % 4 == 0 && ntaps > 1 ? 2 : 1;
    const size_t s = g->stride, d = c->dil;
    const size_t wmin = (m - 1) * s + (g->kw - 1) * d + 1, hmin = (g->kh - 1) * d + 1;
    g->wd = wmin + (size_t)irand(0, 3), g->h = hmin + (size_t)irand(0, 2);
    const int corner = next_u32() % 4 != 0;
    const size_t iy0 = corner ? (c->x_end ? g->h - hmin : 0) : (size_t)irand(0, (int64_t)(g->h - hmin));
    const size_t ix0 = corner ? (c->x_end ? g->wd - wmin : 0) : (size_t)irand(0, (int64_t)(g->wd - wmin));
    for (size_t t = 0; t < ntaps; t++) {
      const size_t ky = t / g->kw, kx = t % g->kw;
      toff[t] = ((iy0 + ky * d) * g->wd + ix0 + kx * d) * nc;
    }
    c->pstep = (ptrdiff_t)(s * nc);
    c->xlen = g->h * g->wd * nc;
    return nc;
  }
  if (!c->ps_fixed) c->pstep = pick_pstep(nc);
  /* a tap's run: the bytes its m pixels read, from its lowest pixel (the last where pstep < 0) */
  const size_t reach = (size_t)(c->pstep < 0 ? -c->pstep : c->pstep) * (m - 1), span = reach + nc;
  const size_t first = c->pstep < 0 ? reach : 0; /* pixel 0 past the run's start */
  if (c->ind_kind == IND_SAME) {
    c->xlen = same_offsets(toff, ntaps, span, c->x_end);
  } else {
    const size_t mt = ntaps < 4 ? ntaps : 4;
    const size_t extras[] = {0, nc, (size_t)irand(0, 64), (size_t)irand(0, (int64_t)(span * mt))};
    c->xlen = span + pick(extras, 4);
    random_offsets(toff, ntaps, span, c->xlen);
    /* random_offsets may put its first run over its last: one on the guard page's side for sure */
    toff[(size_t)irand(0, (int64_t)ntaps - 1)] = c->x_end ? c->xlen - span : 0;
  }
  for (size_t t = 0; t < ntaps; t++) {
    zb[t] = toff[t] == SIZE_MAX;
    toff[t] = (zb[t] ? 0 : toff[t]) + first;
  }
  return span;
}

/* ================================================================ one case */

static void run_case(dcase *c) {
  const size_t m = c->m, nc = c->c, ntaps = c->ntaps, mr = mr_for(c->f, nc), cr = round_up64(nc);
  assert_true(m >= 1 && m <= mr && nc >= 1 && ntaps >= 1 && ntaps <= MAX_TAPS && c->ldy >= nc);
  const uint8_t flip = c->flip;
  stats *const st = c->strided ? &stotals : &totals;

  /* the zero point's row (what padding taps share): c bytes against a guard page; run_s: a second
     buffer of one tap's run of random bytes (taps need not all point into one buffer), zlen */
  gbuf gz;
  uint8_t *zrow = NULL;
  size_t zlen = nc;
  if (!c->strided) {
    zrow = gbuf_open(&gz, nc, next_u32() % 2);
    memset(zrow, (int)(uint8_t)next_u32(), nc);
  }

  /* x and the rows' offsets in it (SIZE_MAX: the zero row); run_s: the taps' (toff, in the second
     buffer where zb) */
  size_t *offs = xmalloc(ntaps * m * sizeof(size_t)), *toff = xmalloc(ntaps * sizeof(size_t));
  unsigned char *zb = xmalloc(ntaps);
  if (c->strided) {
    zlen = strided_layout(c, toff, zb);
    zrow = gbuf_open(&gz, zlen, next_u32() % 2);
    for (size_t i = 0; i < zlen; i++) zrow[i] = (uint8_t)(x_u(c->xkind) ^ flip);
  } else if (c->ind_kind == IND_CONV) {
    /* an NHWC image of h x wd pixels of c channels, the windows of m consecutive output pixels */
    q8o_window *g = &c->win;
    window_shape(g, ntaps);
    size_t ho, wo;
    window_size(g, m, 6, &ho, &wo);
    /* the last tile of the image half the time: its last pixel's window reads x's last bytes where
       the padding lets it */
    const size_t q0 = next_u32() % 2 ? ho * wo - m : (size_t)irand(0, (int64_t)(ho * wo - m));
    c->xlen = g->h * g->wd * nc;
    window_offsets(g, offs, ntaps, m, q0, wo, nc, 0);
  } else if (c->ind_kind == IND_SAME) {
    c->xlen = same_offsets(offs, ntaps * m, nc, c->x_end);
  } else {
    const size_t extras[] = {0, nc, (size_t)irand(0, 64), (size_t)irand(0, (int64_t)(nc * (ntaps * m < 8 ? ntaps * m : 8)))};
    c->xlen = nc + pick(extras, 4);
    random_offsets(offs, ntaps * m, nc, c->xlen);
  }
  gbuf gx;
  uint8_t *x = gbuf_open(&gx, c->xlen, c->x_end);
  for (size_t i = 0; i < c->xlen; i++) x[i] = (uint8_t)(x_u(c->xkind) ^ flip);
  /* the zero row's bytes are the zero point's in the driver; here any byte, as another row */

  /* ind: ntaps x mr pointers, exactly, against a guard page; rows >= m NULL or into a guard page.
     run_s: tap, ntaps pointers against a guard page, and ind the rows they make (for the
     reference only, so that it reads the same bytes the contract says run_s reads) */
  gbuf gi, gt;
  const uint8_t **ind = gbuf_open(&gi, ntaps * mr * sizeof(*ind), next_u32() % 2);
  const uint8_t **tap = NULL;
  if (c->strided) {
    tap = gbuf_open(&gt, ntaps * sizeof(*tap), next_u32() % 2);
    for (size_t t = 0; t < ntaps; t++) tap[t] = (zb[t] ? zrow : x) + toff[t];
  }
  const uint8_t *bad = NULL;
#ifdef HAVE_GUARD_PAGES
  if (c->unused_bad && !c->strided) bad = (const uint8_t *)gx.r.map + 17; /* the guard page before x */
#endif
  int tail_at_guard = 0, head_at_guard = 0, last_at_guard = 0;
  for (size_t t = 0; t < ntaps; t++)
    for (size_t i = 0; i < mr; i++) {
      if (i >= m)
        ind[t * mr + i] = bad;
      else if (c->strided)
        ind[t * mr + i] = tap[t] + (ptrdiff_t)i * c->pstep;
      else
        ind[t * mr + i] = offs[t * m + i] == SIZE_MAX ? zrow : x + offs[t * m + i];
      tail_at_guard |= i < m && c->x_end && ind[t * mr + i] == x + c->xlen - nc;
      head_at_guard |= i < m && !c->x_end && ind[t * mr + i] == x;
      last_at_guard |= i + 1 == m && c->x_end && ind[t * mr + i] == x + c->xlen - nc;
    }

  /* the weights: wt(t, j) per tap and channel, packed as the contract lays them out, exactly
     round_up(c, 64) ntaps 4 bytes against a guard page */
  int8_t *wt = xmalloc(ntaps * nc);
  for (size_t i = 0; i < ntaps * nc; i++) wt[i] = w_byte(c->wkind);
  gbuf gw;
  const size_t wbytes = cr * ntaps * 4;
  int8_t *w = gbuf_open(&gw, wbytes, c->w_end);
  memset(w, 0, wbytes);
  for (size_t j = 0; j < nc; j++) {
    const size_t b = j / NB, l = j % NB / 4, k = j % 4;
    for (size_t t = 0; t < ntaps; t++) w[NB * 4 * b * ntaps + (t * 4 + k) * NB + 4 * l + k] = wt[t * nc + j];
  }

  /* the reference sums, from the contract's formula */
  int64_t *C = xmalloc(m * nc * sizeof(int64_t));
  for (size_t i = 0; i < m; i++)
    for (size_t j = 0; j < nc; j++) {
      int64_t s = 0;
      for (size_t t = 0; t < ntaps; t++)
        s += (int64_t)wt[t * nc + j] * (int64_t)(uint8_t)(ind[t * mr + i][j] ^ flip);
      C[i * nc + j] = s;
    }

  const int64_t acc_max = (int64_t)ntaps * 255 * 128;
  rq_set rs;
  rq_build(&rs, c, C, acc_max);
  const dlc_q8_params *q = &rs.q, *ql = &rs.ql;

  /* y: m rows of ldy bytes */
  ysent ys;
  uint8_t *y = ysent_open(&ys, m, nc, c->ldy, c->y_side, st->o.cases);

  /* copies of everything the kernel reads, to compare after the call */
  uint8_t *x_copy = xmalloc(c->xlen), *z_copy = xmalloc(zlen);
  int8_t *w_copy = xmalloc(wbytes);
  const uint8_t **ind_copy = xmalloc(ntaps * mr * sizeof(*ind)), **tap_copy = xmalloc(ntaps * sizeof(*tap));
  double *mult_copy = xmalloc(nc * sizeof(double));
  int32_t *bias_copy = xmalloc(nc * sizeof(int32_t)), *lbias_copy = xmalloc(cr * sizeof(int32_t));
  float *mf_copy = xmalloc(nc * sizeof(float)), *lmf_copy = xmalloc(cr * sizeof(float));
  dlc_q8_params q_copy = *q, ql_copy = *ql;
  memcpy(x_copy, x, c->xlen), memcpy(z_copy, zrow, zlen), memcpy(w_copy, w, wbytes);
  memcpy(ind_copy, ind, ntaps * mr * sizeof(*ind));
  if (tap) memcpy(tap_copy, tap, ntaps * sizeof(*tap));
  memcpy(mult_copy, q->mult, nc * sizeof(double)), memcpy(bias_copy, q->bias, nc * sizeof(int32_t));
  memcpy(lbias_copy, ql->bias, cr * sizeof(int32_t));
  if (q->mult_f) memcpy(mf_copy, q->mult_f, nc * sizeof(float)), memcpy(lmf_copy, ql->mult_f, cr * sizeof(float));

  describe(c, q, fault_case, sizeof fault_case);
  fault_names_case("q8_dwn: fault in case: ", 1);
  if (c->strided)
    c->f->run_s(m, nc, ntaps, tap, c->pstep, w, flip, q, ql, y, c->ldy);
  else
    c->f->run(m, nc, ntaps, ind, w, flip, q, ql, y, c->ldy);
  fault_names_case(NULL, 0);

  char what[1024];
  if (memcmp(x, x_copy, c->xlen) || memcmp(zrow, z_copy, zlen) || memcmp(w, w_copy, wbytes) ||
      memcmp(ind, ind_copy, ntaps * mr * sizeof(*ind)) || (tap && memcmp(tap, tap_copy, ntaps * sizeof(*tap))) ||
      memcmp(q->mult, mult_copy, nc * sizeof(double)) ||
      memcmp(q->bias, bias_copy, nc * sizeof(int32_t)) || memcmp(ql->bias, lbias_copy, cr * sizeof(int32_t)) ||
      (q->mult_f && (memcmp(q->mult_f, mf_copy, nc * sizeof(float)) ||
                     memcmp(ql->mult_f, lmf_copy, cr * sizeof(float)))) ||
      memcmp(q, &q_copy, sizeof q_copy) || memcmp(ql, &ql_copy, sizeof ql_copy)) {
    describe(c, q, what, sizeof what);
    fail_msg("%s: wrote to x, the zero row (second buffer), w, ind, tap, q or ql", what);
  }
  ysent_check(&ys, c->ldy, nc, "c", fault_case);
  const size_t nblk = cr / NB;
  for (size_t b = 0; b < nblk; b++) {
    const size_t j0 = b * NB, j1 = j0 + NB < nc ? j0 + NB : nc;
    const int partial = j1 - j0 < NB;
    size_t nfast = 0, nfall = 0;
    unsigned fall_rows = 0;
    q8o_row px[MAX_MR]; /* pixel i's lanes: channel j0 + 4 l + k in lane l of vector k */
    for (size_t i = 0; i < m; i++) {
      int row_fallback = 0;
      px[i].screened = px[i].wrong = 0;
      for (size_t j = j0; j < j1; j++) {
        st->big_bias += q->bias[j] > (1 << 30) || q->bias[j] < -(1 << 30);
        const int fl = q8o_check_output(&st->o, q, c->is_signed, C[i * nc + j], i, j, j, y[i * c->ldy + j], fault_case);
        row_fallback |= fl;
        q8o_row_add(&px[i], j % 4, fl);
      }
      if (q->screen_wide) {
        nfast += !row_fallback, nfall += row_fallback != 0;
        fall_rows |= (unsigned)(row_fallback != 0) << i;
        if (partial && row_fallback) {
          st->fallback_partial_single += nblk == 1;
          st->fallback_partial_last += nblk > 1;
        }
        st->fast_partial += partial && !row_fallback;
      }
    }
    /* the kernel's rows of accumulators, whose screen is one max over their four vectors: a pixel,
       in a block of <= 32 channels a pair (pixel 2 r in lanes 0..7, 2 r + 1 in 8..15; without
       a pixel 2 r + 1 its lanes hold the bias alone, which the screen sees as well), in one of <= 16
       (where the family has mr_quad) four pixels (4 r + u in lanes 4 u .. 4 u + 3) */
    const size_t grp = j1 - j0 <= 16 && c->f->mr_quad ? 4 : j1 - j0 <= 32 ? 2 : 1;
    for (size_t r = 0; q->screen_wide && r < (m + grp - 1) / grp; r++) {
      q8o_row a = px[grp * r];
      for (size_t u = 1; u < grp; u++) {
        if (grp * r + u < m) {
          a.screened |= px[grp * r + u].screened, a.wrong |= px[grp * r + u].wrong;
        } else {
          for (size_t j = j0; j < j1; j++) q8o_row_add(&a, j % 4, q8o_screen(q, j, q->bias[j]) & Q8O_SCREENED);
        }
      }
      const int lone = q8o_row_lone(&a);
      if (lone >= 0) {
        st->o.lone_vec[lone]++;
        st->lone_pair[lone] += grp == 2;
        st->lone_quad[lone] += grp == 4;
      }
    }
    st->rows_fast += nfast, st->rows_fallback += nfall;
    st->mixed_blocks += nfast && nfall;
    if (q->screen_wide && j1 - j0 <= 32 && m >= 3) {
      const unsigned lo2 = fall_rows & 3u, hi2 = fall_rows >> 2 & 3u;
      st->mixed_small_pairs += (lo2 != 0) != (hi2 != 0);
    }
    if (q->screen_wide && j1 - j0 <= 16 && m >= 5) {
      const unsigned lo4 = fall_rows & 15u, hi4 = fall_rows >> 4 & 15u;
      st->mixed_small_quads += (lo4 != 0) != (hi4 != 0);
    }
  }
  q8o_count_case(&st->o, q, c->rq, c->ind_kind, flip, c->is_signed);
  st->by_m[m]++;
  for (size_t k = 0; k < N_TAP_LIST; k++) st->by_taps[k] += ntaps == tap_list[k];
  st->gap_cases += c->ldy > nc && m > 1;
  if (!c->strided) {
    st->null_rows_cases += m < mr && !c->unused_bad;
    st->bad_rows_cases += m < mr && c->unused_bad;
  }
  st->guard_tail_cases += tail_at_guard && nc % NB != 0;
  st->zp_128 += q->y_zero_point == 128;
  st->zp_odd += q->y_zero_point % 2 != 0;
  if (c->strided) {
    const size_t last = nc % NB; /* the last block's channels where partial */
    st->by_ps[ps_kind(c->pstep, nc)]++;
    st->p32_other += c->pstep == 32 && nc != 32;
    st->p16_other += c->pstep == 16 && nc != 16;
    if (((c->pstep == 32 && last == 32) || (c->pstep == 16 && last == 16)) && last_at_guard) st->adj_end_by_m[m]++;
    st->b32_apart += last == 32 && c->pstep != 32 && m >= 2;
    st->p32_small_end += c->pstep == 32 && last != 0 && last < 32 && last_at_guard && m >= 2;
    st->start_guard_cases += head_at_guard;
    int alias = 0, inz = 0;
    for (size_t t = 0; t < ntaps; t++) {
      inz |= zb[t];
      for (size_t u = 0; u < t && !alias; u++) alias = tap[u] == tap[t];
    }
    st->alias_cases += alias, st->zbuf_cases += inz;
    st->dil_cases += c->ind_kind == IND_CONV && c->dil > 1;
  }
  free(x_copy), free(z_copy), free(w_copy), free(ind_copy), free(tap_copy), free(mult_copy), free(bias_copy);
  free(lbias_copy), free(mf_copy), free(lmf_copy), free(C), free(offs), free(toff), free(zb), free(wt);
  rq_close(&rs);
  gbuf_close(&gz), gbuf_close(&gx), gbuf_close(&gi), gbuf_close(&gw), ysent_close(&ys);
  if (tap) gbuf_close(&gt);
}

/* Fills the case's kinds, sides and layout from a running counter k (and the RNG); the caller
   sets f, m, c, ntaps. */
static void vary(dcase *c, size_t k) {
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
  c->ql_end = k % 3 != 1;
  c->y_side = (int)((k / 5) % 3);
  c->unused_bad = next_u32() % 4 == 0;
  c->trow = (size_t)irand(0, (int64_t)c->m - 1);
  c->tie_last = next_u32() % 2;
  const size_t gaps[] = {0, 0, 1, 3, 16, 64, (size_t)irand(0, 40)};
  c->ldy = c->c + pick(gaps, sizeof gaps / sizeof gaps[0]);
}

/* A line of its own (cmocka cuts a message at 1024 bytes). */
static void print_lone(const char *title, const char *which, const stats *t) {
  print_message("[ %s ] %srows of accumulators screened in one lane order vector only, a lane there wrong past a "
                "missed screen, per vector 0..3: %zu %zu %zu %zu, of them in blocks of <= 32 channels (a row two "
                "pixels): %zu %zu %zu %zu; %zu channels built near a tie, %zu in vain\n",
                title, which, t->o.lone_vec[0], t->o.lone_vec[1], t->o.lone_vec[2], t->o.lone_vec[3], t->lone_pair[0],
                t->lone_pair[1], t->lone_pair[2], t->lone_pair[3], t->vec_tie_chans, t->vec_tie_missed);
}

static void print_totals(const char *title) {
  print_message("[ %s ] %zu cases so far (%zu with gaps between rows, %zu with m < mr and NULL rows, %zu with "
                "rows into a guard page, %zu with a row's partial block against x's end guard; flip/u8-s8: %zu %zu "
                "%zu %zu; ind: %zu random, %zu conv, %zu one run; screens: %zu none, %zu narrow, %zu wide; y zp "
                "128: %zu, odd: %zu), %zu outputs: %zu exact ties, %zu within 2^-13 of one, %zu fp32 ties the "
                "double lacks, %zu the fp32 product rounds otherwise, %zu clamped, %zu saturated low, %zu high, "
                "%zu with |bias| > 2^30; wide-screen rows of a block: %zu fast, %zu near a tie (exact fallback), "
                "%zu blocks with both (%zu of <= 32 channels, one pair of rows each way), fallback rows in a "
                "partial block %zu (alone) %zu (last of several), fast rows there %zu\n",
                title, totals.o.cases, totals.gap_cases, totals.null_rows_cases, totals.bad_rows_cases,
                totals.guard_tail_cases, totals.o.by_sign[0][0], totals.o.by_sign[0][1], totals.o.by_sign[1][0],
                totals.o.by_sign[1][1], totals.o.by_ind[IND_RANDOM], totals.o.by_ind[IND_CONV], totals.o.by_ind[IND_SAME],
                totals.o.by_screen[0], totals.o.by_screen[1], totals.o.by_screen[2], totals.zp_128, totals.zp_odd,
                totals.o.outputs, totals.o.ties, totals.o.near_ties, totals.o.fp32_ties, totals.o.fp32_differs,
                totals.o.clamped, totals.o.sat_lo, totals.o.sat_hi, totals.big_bias, totals.rows_fast,
                totals.rows_fallback, totals.mixed_blocks, totals.mixed_small_pairs, totals.fallback_partial_single,
                totals.fallback_partial_last, totals.fast_partial);
  print_lone(title, "", &totals);
  const stats *t = &stotals;
  if (!t->o.cases) return;
  char adj[8 * (MAX_MR + 1)] = "";
  for (size_t m = 1; m <= MAX_MR && t->by_m[m]; m++)
    snprintf(adj + strlen(adj), sizeof adj - strlen(adj), "%s%zu", m > 1 ? " " : "", t->adj_end_by_m[m]);
  print_message("[ %s ] run_s: %zu strided cases so far (pstep %s: %zu, %s: %zu, %s: %zu, %s: %zu, %s: %zu, %s: %zu; "
                "32 with c != 32: %zu; taps %s: %zu (%zu dilated), %s: %zu, %s: %zu; %zu with taps on the same bytes, "
                "%zu with taps in a second buffer; pstep 32, a last block of 32 channels and a tap's last pixel "
                "against x's end guard, per m: %s; blocks of 32 channels with pstep != 32 and m >= 2: %zu; pstep "
                "32, a last block under 32 channels against the guard: %zu; %zu with a row's partial block against "
                "x's end guard, %zu with a row right after its start guard, %zu with gaps between rows; flip/u8-s8: "
                "%zu %zu %zu %zu; screens: %zu none, %zu narrow, %zu wide), %zu outputs: %zu exact ties, %zu within "
                "2^-13 of one, %zu clamped, %zu saturated low, %zu high; wide-screen rows of a block: %zu fast, %zu "
                "near a tie, %zu blocks with both (%zu of <= 32 channels, one pair of rows each way)\n",
                title, t->o.cases, ps_names[PS_ONE], t->by_ps[PS_ONE], ps_names[PS_TWO], t->by_ps[PS_TWO],
                ps_names[PS_MORE], t->by_ps[PS_MORE], ps_names[PS_LESS], t->by_ps[PS_LESS], ps_names[PS_ZERO],
                t->by_ps[PS_ZERO], ps_names[PS_NEG], t->by_ps[PS_NEG], t->p32_other, lay_names[IND_CONV],
                t->o.by_ind[IND_CONV], t->dil_cases, lay_names[IND_RANDOM], t->o.by_ind[IND_RANDOM],
                lay_names[IND_SAME], t->o.by_ind[IND_SAME], t->alias_cases, t->zbuf_cases, adj, t->b32_apart,
                t->p32_small_end, t->guard_tail_cases, t->start_guard_cases, t->gap_cases, t->o.by_sign[0][0],
                t->o.by_sign[0][1], t->o.by_sign[1][0], t->o.by_sign[1][1], t->o.by_screen[0], t->o.by_screen[1],
                t->o.by_screen[2], t->o.outputs, t->o.ties, t->o.near_ties, t->o.clamped, t->o.sat_lo, t->o.sat_hi,
                t->rows_fast, t->rows_fallback, t->mixed_blocks, t->mixed_small_pairs);
  print_lone(title, "run_s: ", t);
}

/* The case once more through run_s where the family has one: the same m, c, taps, kinds and sides,
   the pixels evenly spaced (strided_layout: the layout from k, a window half the time as in the
   driver), its RNG stream its own so that the cases through run stay those they were. */
static void run_strided(const dcase *c, size_t k) {
  if (!c->f->run_s) return;
  dcase s = *c;
  const uint64_t saved = rng_state;
  rng_state = saved ^ 0x9E3779B97F4A7C15ull;
  s.strided = 1;
  const size_t lay = (k + k / 8 + k / 64) % 8;
  s.ind_kind = lay < 4 ? IND_CONV : lay < 7 ? IND_RANDOM : IND_SAME;
  run_case(&s);
  rng_state = saved;
}

/* ================================================================ tests */

/* Every m against every c of the list, 8 cases each: ntaps from the list, an occasional 64. */
static void tiles_of(const dlc_q8_dwn_family *f) {
  rng_state = 0x13198A2E03707344ull;
  size_t k = 0;
  for (size_t m = 1; m <= mr_max(f); m++)
    for (size_t ci = 0; ci < N_C; ci++)
      for (size_t v = 0; v < 8; v++, k++) {
        dcase c;
        memset(&c, 0, sizeof c);
        c.f = f, c.m = m, c.c = c_at(ci);
        if (m > mr_for(f, c.c)) continue; /* past this c's tile */
        c.ntaps = tap_list[(k / 5 + v) % 6];
        if (k % 37 == 11) c.ntaps = 64;
        if (c.c >= 384 && c.ntaps > 9) c.ntaps = next_u32() % 2 ? 9 : 25; /* time */
        vary(&c, k);
        run_case(&c);
        run_strided(&c, k);
      }
  print_totals("tiles");
}

/* Ties: the kinds that put outputs on and near half-integers, mostly small operands. */
static void ties_of(const dlc_q8_dwn_family *f) {
  rng_state = 0xA4093822299F31D0ull;
  static const int kinds[] = {RQ_TIES, RQ_NEARTIE, RQ_POW2, RQ_NEARSRCH};
  static const size_t taps[] = {1, 2, 9, 3, 25};
  size_t k = 0;
  for (size_t m = 1; m <= mr_max(f); m++)
    for (size_t ci = 0; ci < N_C; ci++)
      for (size_t v = 0; v < 4; v++, k++) {
        dcase c;
        memset(&c, 0, sizeof c);
        c.f = f, c.m = m, c.c = c_at(ci);
        if (m > mr_for(f, c.c)) continue; /* past this c's tile */
        c.ntaps = taps[(k / 3) % 5];
        vary(&c, k);
        c.rq = kinds[(v + ci) % 4];
        if (k % 4) c.xkind = X_SMALL, c.wkind = W_SMALL;
        run_case(&c);
        run_strided(&c, k);
      }
  print_totals("ties");
}

/* The near-tie fallback on some rows of a tile only: one row of a few channels put within 2^-13
   of a tie (the rest fast), in a partial last block of several, in a lone partial block, in full
   blocks. */
static void fallback_of(const dlc_q8_dwn_family *f) {
  rng_state = 0x452821E638D01377ull;
  static const size_t cs[] = {1, 5, 17, 31, 32, 33, 63, 64, 65, 70, 80, 96, 100, 127, 128, 129, 144, 200, 960};
  static const size_t taps[] = {1, 9, 25, 3, 49, 2};
  size_t k = 0;
  for (size_t m = 1; m <= mr_max(f); m++)
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++)
      for (size_t v = 0; v < 4; v++, k++) {
        dcase c;
        memset(&c, 0, sizeof c);
        c.f = f, c.m = m, c.c = cs[ci];
        if (m > mr_for(f, c.c)) continue; /* past this c's tile */
        c.ntaps = taps[k % 6];
        if (c.c >= 960 && c.ntaps > 9) c.ntaps = 9;
        vary(&c, k);
        c.rq = RQ_NEARSRCH;
        c.tie_last = v < 2;
        c.trow = (size_t)irand(0, (int64_t)m - 1);
        run_case(&c);
        run_strided(&c, k);
      }
  print_totals("fallback");
}

/* Extreme sums: all-255 activations against all -128 or 127 weights over 49 and 64 taps, biases at
   the edge of bias_s32, saturation, each with both flips and types. */
static void extremes_of(const dlc_q8_dwn_family *f) {
  rng_state = 0xBE5466CF34E90C6Cull;
  static const size_t cs[] = {1, 16, 63, 64, 65, 129, 200};
  static const int kinds[] = {RQ_BIGBIAS, RQ_SAT, RQ_WIDE, RQ_NOSCREEN, RQ_NARROW, RQ_CLAMP};
  size_t k = 0;
  for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++)
    for (size_t v = 0; v < 12; v++, k++) {
      dcase c;
      memset(&c, 0, sizeof c);
      c.f = f, c.c = cs[ci];
      c.m = v % 3 ? mr_for(f, c.c) : (size_t)irand(1, (int64_t)mr_for(f, c.c));
      c.ntaps = v % 2 ? 64 : 49;
      vary(&c, k);
      c.xkind = v % 4 < 2 ? X_ALL_255 : X_ENDS;
      c.wkind = v % 4 == 0 ? W_ALL_MIN : v % 4 == 1 ? W_ALL_MAX : W_ENDS;
      c.rq = kinds[(k / 2) % 6];
      c.flip = (v / 4) % 2 ? 0x80 : 0;
      c.is_signed = (int)((v / 2 + ci) % 2);
      run_case(&c);
      run_strided(&c, k);
    }
  print_totals("extremes");
}

/* run_s alone, pstep chosen: every m against every c of the list, pstep c, 2c, 32 and one of
   pick_pstep's, each without and with flip; the first four with x's end guard right after a tap's
   last pixel (with pstep 32 and c = 32 + 64 k: the last pair's 64 bytes, or a lone pixel's 32 where
   m is odd, the last of x). */
static void strided_of(const dlc_q8_dwn_family *f) {
  if (!f->run_s) {
    print_message("[ strided ] not run: %s has no run_s\n", f->name);
    return;
  }
  rng_state = 0xC0AC29B7C97C50DDull;
  static const size_t taps[] = {1, 2, 3, 9, 25, 1, 3};
  size_t k = 0;
  for (size_t m = 1; m <= mr_max(f); m++)
    for (size_t ci = 0; ci < N_C; ci++)
      for (size_t v = 0; v < 8; v++, k++) {
        dcase c;
        memset(&c, 0, sizeof c);
        c.f = f, c.m = m, c.c = c_at(ci);
        if (m > mr_for(f, c.c)) continue; /* past this c's tile */
        c.ntaps = taps[(k / 3 + v) % 7];
        if (c.c >= 384 && c.ntaps > 9) c.ntaps = 9; /* time */
        vary(&c, k);
        c.strided = 1, c.ps_fixed = 1;
        c.ind_kind = (k / 8 + v) % 5 == 4 ? IND_SAME : IND_RANDOM;
        const ptrdiff_t pc = (ptrdiff_t)c.c;
        c.pstep = v % 4 == 0 ? pc : v % 4 == 1 ? 2 * pc : v % 4 == 2 ? 32 : pick_pstep(c.c);
        c.flip = v < 4 ? 0x00 : 0x80;
        if (v < 4) c.x_end = 1;
        run_case(&c);
      }
  print_totals("strided");
}

/* The screen vector by vector. The kinds above put the searched near ties of a case all on one row
   (trow) and spread over the channels, so mostly in several of the four vectors at once (channel
   4 l + k in vector k): a row with one in vector 3 fell back for one in vector 0 as well, and a
   kernel whose row screen left a vector out of its max of |d| passed them. Here in each block
   1..3 channels of one vector (tie_vec, each in turn) are built near a tie the fp32 product rounds
   the other way (a missed screen stores a wrong byte), each on a row drawn for that channel; the
   other channels are wide, away from ties but by chance. Blocks of 64, partial ones, and blocks
   of <= 32 channels (a kernel's row there two pixels, a lone last one with m odd), every m. */
static void vector_ties_of(const dlc_q8_dwn_family *f) {
  rng_state = 0x3F84D5B5B5470917ull;
  static const size_t cs[] = {64, 61, 52, 33, 32, 29, 20, 13, 7, 4, 96, 80, 128, 200};
  static const size_t taps[] = {1, 9, 2, 3, 25};
  size_t k = 0;
  for (size_t m = 1; m <= mr_max(f); m++)
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++)
      for (size_t v = 0; v < 4; v++, k++) {
        dcase c;
        memset(&c, 0, sizeof c);
        c.f = f, c.m = m, c.c = cs[ci];
        if (m > mr_for(f, c.c)) continue; /* past this c's tile */
        c.ntaps = taps[k % 5];
        vary(&c, k);
        c.rq = RQ_NEARSRCH;
        c.vec_ties = 1, c.tie_vec = v;
        run_case(&c);
        run_strided(&c, k);
      }
  print_totals("vector ties");
}

static void summary_of(const dlc_q8_dwn_family *f) {
  /* the sweep reaches what it is there for */
  assert_true(totals.o.ties > 0 && totals.o.fp32_ties > 0 && totals.o.near_ties > 0 && totals.o.fp32_differs > 0);
  assert_true(totals.o.clamped > 0 && totals.o.sat_lo > 0 && totals.o.sat_hi > 0 && totals.big_bias > 0);
  assert_true(totals.o.by_screen[0] > 0 && totals.o.by_screen[1] > 0 && totals.o.by_screen[2] > 0);
  assert_true(totals.rows_fast > 0 && totals.rows_fallback > 0 && totals.mixed_blocks > 0);
  if (f->mr >= 3) assert_true(totals.mixed_small_pairs > 0);
  if (f->mr_quad) assert_true(totals.mixed_small_quads > 0);
  /* rows whose screen hangs on one vector alone, each vector, in pairs and quads too (test_vector_ties) */
  for (size_t v = 0; v < 4; v++) assert_true(totals.o.lone_vec[v] > 0 && totals.lone_pair[v] > 0);
  for (size_t v = 0; f->mr_quad && v < 4; v++) assert_true(totals.lone_quad[v] > 0);
  assert_true(totals.fallback_partial_single > 0 && totals.fallback_partial_last > 0 && totals.fast_partial > 0);
  assert_true(totals.gap_cases > 0 && totals.null_rows_cases > 0 && totals.guard_tail_cases > 0);
  assert_true(totals.zp_128 > 0 && totals.zp_odd > 0);
#ifdef HAVE_GUARD_PAGES
  assert_true(totals.bad_rows_cases > 0);
#endif
  for (size_t a = 0; a < 2; a++)
    for (size_t b = 0; b < 2; b++) assert_true(totals.o.by_sign[a][b] > 0);
  for (size_t k = 0; k < N_TAP_LIST; k++) assert_true(totals.by_taps[k] > 0);
  for (size_t m = 1; m <= mr_max(f); m++) assert_true(totals.by_m[m] > 0);
  for (size_t r = 0; r < N_RQ; r++) assert_true(totals.o.by_rq[r] > 0);
  for (size_t i = 0; i < N_IND_KINDS; i++) assert_true(totals.o.by_ind[i] > 0);

  /* run_s: every case once more, and the layouts it is there for */
  if (!f->run_s) return;
  const stats *t = &stotals;
  assert_true(t->o.cases > totals.o.cases);
  for (size_t k = 0; k < N_PS; k++) assert_true(t->by_ps[k] > 0);
  assert_true(t->p32_other > 0 && t->b32_apart > 0 && t->p32_small_end > 0);
  if (f->mr_quad) assert_true(t->p16_other > 0);
  /* the pair load's edge: a full last pair (even m) and a pixel alone (odd m) against the guard */
  for (size_t m = 1; m <= mr_max(f); m++) assert_true(t->adj_end_by_m[m] > 0);
  assert_true(t->guard_tail_cases > 0 && t->start_guard_cases > 0 && t->gap_cases > 0);
  assert_true(t->alias_cases > 0 && t->zbuf_cases > 0 && t->dil_cases > 0);
  for (size_t i = 0; i < N_IND_KINDS; i++) assert_true(t->o.by_ind[i] > 0);
  assert_true(t->o.ties > 0 && t->o.near_ties > 0 && t->o.clamped > 0 && t->o.sat_lo > 0 && t->o.sat_hi > 0);
  assert_true(t->o.by_screen[0] > 0 && t->o.by_screen[1] > 0 && t->o.by_screen[2] > 0);
  assert_true(t->rows_fast > 0 && t->rows_fallback > 0 && t->mixed_blocks > 0);
  if (f->mr >= 3) assert_true(t->mixed_small_pairs > 0);
  if (f->mr_quad) assert_true(t->mixed_small_quads > 0);
  for (size_t v = 0; v < 4; v++) assert_true(t->o.lone_vec[v] > 0 && t->lone_pair[v] > 0);
  for (size_t v = 0; f->mr_quad && v < 4; v++) assert_true(t->lone_quad[v] > 0);
  for (size_t a = 0; a < 2; a++)
    for (size_t b = 0; b < 2; b++) assert_true(t->o.by_sign[a][b] > 0);
  for (size_t k = 0; k < N_TAP_LIST; k++) assert_true(t->by_taps[k] > 0);
  for (size_t m = 1; m <= mr_max(f); m++) assert_true(t->by_m[m] > 0);
  for (size_t r = 0; r < N_RQ; r++) assert_true(t->o.by_rq[r] > 0);
}

/* Each test on every family under test (skipped where there is none). */
static void test_tiles(void **state) { (void)state, for_each_family(tiles_of, "tiles"); }
static void test_ties(void **state) { (void)state, for_each_family(ties_of, "ties"); }
static void test_fallback(void **state) { (void)state, for_each_family(fallback_of, "fallback"); }
static void test_extremes(void **state) { (void)state, for_each_family(extremes_of, "extremes"); }
static void test_strided(void **state) { (void)state, for_each_family(strided_of, "strided"); }
static void test_vector_ties(void **state) { (void)state, for_each_family(vector_ties_of, "vector ties"); }
static void test_summary(void **state) { (void)state, for_each_family(summary_of, "summary"); }

int main(void) {
  const int rc = RUN_TESTS(test_tiles, test_ties, test_fallback, test_extremes, test_strided, test_vector_ties,
                           test_summary);
  /* the counts of the last family under test */
  printf("q8_dwn summary: %zu cases, %zu outputs checked; run_s: %zu strided cases, %zu outputs checked%s\n",
         totals.o.cases, totals.o.outputs, stotals.o.cases, stotals.o.outputs,
         rc == 77 ? " (skipped)" : rc ? " (FAILED)" : "");
  return rc;
}
