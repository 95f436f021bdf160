/* test_ukernel_q8_dwn.c - the int8 NHWC depthwise micro-kernels in registers (dlc_q8_dwn_family,
 * src/direct/lowp_dw_ukernel.h) of the avx512 table (set where the CPU has AVX512-VNNI), against a
 * reference written here from the contract alone:
 *
 *   run(m, c, ntaps, ind, w, flip, q, ql, y, ldy), 1 <= m <= mr, c >= 1:
 *   C(i, j) = sum over t < ntaps of wt(t, j) * (int) (ind[t * mr + i][j] ^ flip)
 *   w:  block b (64 channels) at w + 256 b ntaps; byte 4 l + k' of vector k of tap t
 *       (w + 256 b ntaps + (4 t + k) 64 + 4 l + k') is wt(t, 64 b + 4 l + k) where k' == k, else 0,
 *       0 past c: round_up(c, 64) ntaps 4 bytes
 *   ql: q with bias and mult_f (where q->mult_f is set) of round_up(c, 64) entries in lane order,
 *       entry 64 b + 16 k + l = channel 64 b + 4 l + k's, zeros past c
 *   y[i * ldy + j] = requant(C(i, j) + bias[j], mult[j])                      i < m, j < c
 *
 * C in int64 from the operands as laid out; the requantisation is this file's own, in double, from
 * quant.h's header formula (v = (double)(acc + bias) * mult, clamp to [lo, hi], round half to
 * even, + y_zero_point, saturate to the type), not dlc_q8_requant1. q is derived with
 * dlc_q8_derive(q, ntaps * 255 * 128, c, mult_f) as dwn_plan (src/direct/direct_lowp.c) does, and
 * ql built from it as dwn_plan builds it.
 *
 * Covered: every m 1..mr against every c 1..70 and 96, 127, 128, 129, 144, 192, 200, 384, 960
 * (every partial block, one and several blocks), ntaps 1, 2, 3, 9, 25, 49 (and 64,
 * DLC_IND_MAX_TAPS), flip 0 / 0x80 each with u8 and s8 outputs; per-channel multipliers; biases up
 * to INT32_MAX - acc_max (the most bias_s32 allows); the wide screen's fast path and its near-tie
 * fallback (power-of-two multipliers with biases that put outputs on exact half-integers, fp32
 * ties the double lacks, and biases found by search that put one row of chosen channels within
 * 2^-13 of a tie where the fp32 product rounds the other way: fallback on some rows of a tile only,
 * in a partial last block, and in blocks of <= 32 channels on rows 0..1 only or 2..3 only, where a
 * kernel may hold two pixels in one vector), no screen (mult_f NULL, multipliers out of range), the narrow
 * screen (the kernel's exact store for every row), finite clamps (integer, half-integer, equal,
 * one-sided), saturation at both ends, zero points 0, 128, odd, at the type's ends. The summary
 * test asserts that the sweep reached each of these.
 * Operands: ind rows anywhere in x at any byte offset, several rows on the same bytes (padding
 * taps on one zero-point row; every row on one run), driver-like NHWC windows with padding and
 * strides, rows ending exactly at a guard page (a byte read past c faults) or starting right after
 * one; the unused rows (i >= m) NULL or pointing into a guard page; ind, w, q's and ql's arrays
 * against guard pages (ql's exactly round_up(c, 64) entries); y in sentinels with ldy > c (gap
 * bytes checked) or against a guard page; the operands compared after the call.
 *
 * A fault (a read or write past an operand into a guard page) names its case on stderr before
 * cmocka reports it. Where the avx512 table is missing or has no q8_dwn (no AVX512-VNNI, other
 * architectures) every test says so and passes. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ukernel_guard.h"

#ifdef HAVE_GUARD_PAGES
#include <signal.h>
#endif

#include "core/cpu.h"
#include "core/kernels.h"
#include "dlconv.h"
#include "quant/quant.h"

#define SENT_GUARD 29 /* at most this many sentinel bytes on either side of y */
#define NB 64         /* channels of a block of w and ql (the contract's layout) */
#define MAX_MR 16     /* the driver's pointers: DLC_IND_MAX_TAPS x 16 on its stack */
#define MAX_TAPS 64   /* DLC_IND_MAX_TAPS */

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint32_t next_u32(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 32);
}
/* Uniform in [lo, hi] (hi - lo < 2^32). */
static int64_t irand(int64_t lo, int64_t hi) {
  uint64_t span = (uint64_t)(hi - lo) + 1;
  uint64_t r = ((uint64_t)next_u32() << 32) | next_u32();
  return lo + (int64_t)(span ? r % span : r);
}
static double urand(void) { return (double)next_u32() / 4294967296.0; }
static size_t pick(const size_t *v, size_t n) { return v[next_u32() % n]; }
static double log_uniform(double lo, double hi) { return exp(log(lo) + (log(hi) - log(lo)) * urand()); }
static size_t round_up64(size_t c) { return (c + NB - 1) / NB * NB; }

static void *xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  assert_non_null(p);
  return p;
}

/* ================================================================ the family */

static const dlc_q8_dwn_family *dwn_of(dlconv_isa isa) {
  const dlc_isa_kernels *kt = dlc_kernels_for(isa);
  return kt ? kt->q8_dwn : NULL;
}

/* The family under test (NULL: none on this CPU). Where this build has the VNNI kernel and this CPU
   runs it, the avx512 table must carry it (kernels.c), so losing it from the table fails rather
   than skips; the generic and avx2 tables must not (EVEX). */
static const dlc_q8_dwn_family *family(void) {
#if defined(DLC_HAVE_AVX512VNNI)
  if (dlc_cpu()->avx512_vnni && dlc_kernels_for(DLCONV_ISA_AVX512))
    assert_ptr_equal(dwn_of(DLCONV_ISA_AVX512), &dlc_q8_dwn__avx512vnni);
  assert_ptr_not_equal(dwn_of(DLCONV_ISA_AVX2), &dlc_q8_dwn__avx512vnni);
  assert_ptr_not_equal(dwn_of(DLCONV_ISA_GENERIC), &dlc_q8_dwn__avx512vnni);
#endif
  const dlc_q8_dwn_family *f = dwn_of(DLCONV_ISA_AVX512);
  static int said;
  if (f) {
    assert_non_null(f->name);
    assert_non_null(f->run);
    assert_true(f->mr >= 1 && f->mr <= MAX_MR);
  }
  if (!said) {
    said = 1;
    if (f)
      printf("q8_dwn family under test: %s (mr %zu)\n", f->name, f->mr);
    else
      printf("q8_dwn family under test: none (%s: the q8_dwn tests pass without running)\n",
             dlc_kernels_for(DLCONV_ISA_AVX512) ? "the avx512 table has no q8_dwn (no AVX512-VNNI)"
                                                : "no avx512 table on this CPU");
  }
  return f;
}

static void say_skipped(const char *test) {
  print_message("[ %s ] not run: no q8_dwn family on this CPU (needs AVX512-VNNI)\n", test);
}

/* ================================================================ faults name their case */

static char cur_case[1024];
#ifdef HAVE_GUARD_PAGES
static size_t cur_len;
static struct sigaction old_segv, old_bus;
/* Writes the case prepared before the call, puts cmocka's handler back and returns, so that the
   faulting access runs again into it. */
static void on_fault(int sig) {
  static const char head[] = "q8_dwn: fault in case: ";
  if (write(2, head, sizeof head - 1) < 0 || write(2, cur_case, cur_len) < 0 || write(2, "\n", 1) < 0) {
    /* nothing to do */
  }
  sigaction(sig, sig == SIGSEGV ? &old_segv : &old_bus, NULL);
}
#endif
static void fault_names_case(int on) {
#ifdef HAVE_GUARD_PAGES
  if (on) {
    cur_len = strlen(cur_case);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fault;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old_segv);
    sigaction(SIGBUS, &sa, &old_bus);
  } else {
    sigaction(SIGSEGV, &old_segv, NULL);
    sigaction(SIGBUS, &old_bus, NULL);
  }
#else
  (void)on;
#endif
}

/* ================================================================ the requantisation, here */

/* quant.h's header formula, one IEEE double operation at a time, written independently of
   dlc_q8_requant1: round half to even by hand. */
static double round_half_even(double v) {
  const double f = floor(v), d = v - f; /* exact: |v| < 2^53 or v already an integer */
  if (d < 0.5) return f;
  if (d > 0.5) return f + 1.0;
  return fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

static int32_t oracle_requant(int64_t acc_plus_bias, double mult, double lo, double hi, int32_t y_zp, int is_signed) {
  double v = (double)acc_plus_bias * mult;
  if (v < lo) v = lo;
  if (v > hi) v = hi;
  const double t = round_half_even(v) + (double)y_zp;
  const double ymin = is_signed ? -128.0 : 0.0, ymax = is_signed ? 127.0 : 255.0;
  if (t < ymin) return (int32_t)ymin;
  if (t > ymax) return (int32_t)ymax;
  return (int32_t)t;
}

/* ================================================================ cases */

enum {
  RQ_WIDE,     /* the wide screen, multipliers spreading the outputs over the type */
  RQ_POW2,     /* mult 2^-k (wide): an exact tie in every channel, more among the rest */
  RQ_TIES,     /* the smallest 2^-k the wide screen allows, small sums: many exact half-integers */
  RQ_NEARTIE,  /* mult 2^-k (1 +- 2^-r): fp32 sees exact ties the double is a hair off */
  RQ_NARROW,   /* the fp32 screen without the wide one: every row through the exact store */
  RQ_CLAMP,    /* lo / hi inside the type (integers, half-integers, equal, one-sided) */
  RQ_SAT,      /* large multipliers, zero point at an end: saturation both ways */
  RQ_NOSCREEN, /* mult_f NULL */
  RQ_BIGBIAS,  /* |bias| up to INT32_MAX - acc_max (bias_s32 still), wide screen */
  RQ_RANGE,    /* multipliers out of the screen's range (2^-70, 2^70) */
  RQ_NEARSRCH, /* wide; in a few chosen channels a bias found by search puts one chosen row within
                  2^-13 of a tie, where possible one the fp32 product rounds the other way */
  N_RQ
};
static const char *const rq_names[] = {"wide-screen", "pow2-ties", "small-ties", "near-ties", "narrow-screen",
                                       "clamp",       "saturate",  "no-screen",  "big-bias",  "mult-range",
                                       "near-tie-search"};

enum { IND_RANDOM, IND_CONV, IND_SAME, N_IND_KINDS };
static const char *const ind_names[] = {"random rows", "conv windows", "one run for all"};
enum { X_RANDOM, X_ALL_255, X_ALL_0, X_ENDS, X_SMALL, N_X_KINDS };
enum { W_RANDOM, W_ALL_MIN, W_ALL_MAX, W_SMALL, W_ENDS, N_W_KINDS };

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
  /* IND_CONV */
  size_t kh, kw, h, wd, stride, ph, pw;
  size_t xlen;
} dcase;

typedef struct stats {
  size_t cases, outputs, ties, near_ties, fp32_ties, fp32_differs, clamped, sat_lo, sat_hi, big_bias;
  size_t by_screen[3], by_rq[N_RQ], by_ind[N_IND_KINDS], by_sign[2][2], by_taps[N_TAP_LIST];
  size_t by_m[MAX_MR + 1];
  /* the wide screen, per row of a 64-channel block (the kernel's tile): fast or fallback; blocks
     with both; fallback rows in a partial block, alone (c < 64) or last of several (c > 64) */
  size_t rows_fast, rows_fallback, mixed_blocks, fallback_partial_single, fallback_partial_last, fast_partial;
  /* blocks of at most 32 channels (a kernel may hold two pixels in a vector there) with m >= 3:
     fallback on rows 0..1 only or 2..3 only while the others are fast */
  size_t mixed_small_pairs;
  size_t gap_cases, null_rows_cases, bad_rows_cases, guard_tail_cases, zp_128, zp_odd;
} stats;

static stats totals;

static const char *screen_name(const dlc_q8_params *q) {
  return !q->mult_f ? "no screen" : q->screen_wide ? "wide screen" : "narrow screen";
}

static void describe(const dcase *c, const dlc_q8_params *q, char *buf, size_t len) {
  char lay[160] = "";
  if (c->ind_kind == IND_CONV)
    snprintf(lay, sizeof lay, " (image %zux%zu, kernel %zux%zu, stride %zu, pads %zu/%zu)", c->h, c->wd, c->kh,
             c->kw, c->stride, c->ph, c->pw);
  snprintf(buf, len,
           "%s m=%zu c=%zu ntaps=%zu flip=0x%02x %s y ldy=%zu, %s%s (y zp %d, lo %.17g, hi %.17g, %s), ind %s%s, "
           "xlen %zu, x kind %d, w kind %d, x %s, w %s, ql %s, y %s, rows >= m %s",
           c->f->name, c->m, c->c, c->ntaps, c->flip, c->is_signed ? "s8" : "u8", c->ldy, rq_names[c->rq],
           c->rq == RQ_NEARSRCH ? (c->tie_last ? " (row near ties, last block)" : " (row near ties)") : "",
           q ? q->y_zero_point : 0, q ? q->lo : 0.0, q ? q->hi : 0.0, q ? screen_name(q) : "?",
           ind_names[c->ind_kind], lay, c->xlen, c->xkind, c->wkind,
           c->x_end ? "against the end guard" : "after the start guard",
           c->w_end ? "against the end guard" : "after the start guard",
           c->ql_end ? "against the end guard" : "after the start guard",
           c->y_side == 0 ? "in sentinels" : c->y_side == 1 ? "against the end guard" : "after the start guard",
           c->unused_bad ? "into a guard page" : "NULL");
}

/* u, the byte the kernel multiplies (byte ^ flip) */
static uint8_t x_u(int kind) {
  const uint32_t r = next_u32();
  switch (kind) {
    case X_ALL_255: return 0xff;
    case X_ALL_0: return 0x00;
    case X_ENDS: return r % 2 ? 0xff : 0x00;
    case X_SMALL: return (uint8_t)(r % 4);
    default: return r % 16 == 0 ? 0xff : r % 16 == 1 ? 0x00 : (uint8_t)(r >> 8);
  }
}

static int8_t w_byte(int kind) {
  const uint32_t r = next_u32();
  switch (kind) {
    case W_ALL_MIN: return -128;
    case W_ALL_MAX: return 127;
    case W_SMALL: return (int8_t)((int)(r % 7) - 3);
    case W_ENDS: return r % 2 ? (int8_t)127 : (int8_t)-128;
    default: return r % 16 == 0 ? (int8_t)-128 : r % 16 == 1 ? (int8_t)127 : (int8_t)(uint8_t)(r >> 8);
  }
}

/* ================================================================ requantisation parameters */

typedef struct rq_set {
  dlc_q8_params q, ql;
  gbuf gm, gb, gf, glb, glf;
} rq_set;

/* A clamp bound: an integer, a half-integer, a quarter or any fraction. */
static double frac_bound(int64_t lo, int64_t hi) {
  static const double fr[] = {0.0, 0.5, -0.5, 0.25};
  const uint32_t r = next_u32() % 5;
  return (double)irand(lo, hi) + (r < 4 ? fr[r] : urand());
}

/* Power-of-two exponent k for which (acc_max + |c_ref| + 201 2^(k-1)) 2^-k stays well inside the
   wide screen's 2^19: 2^-k (acc_max + |c_ref|) <= 471000. */
static int kmin_wide(int64_t acc_max, int64_t cref) {
  int k = 1;
  while (ldexp((double)acc_max + fabs((double)cref), -k) > 471000.0) k++;
  return k;
}

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
  q->is_signed = c->is_signed;
  q->y_min = c->is_signed ? -128 : 0, q->y_max = c->is_signed ? 127 : 255;
  {
    const int32_t zps[] = {0, 0, 128, 1, 127, -1, -127, 3, -77, (int32_t)irand(q->y_min, q->y_max),
                           (int32_t)(irand(q->y_min / 2, q->y_max / 2) * 2 + 1), q->y_min, q->y_max};
    int32_t zp;
    do zp = zps[next_u32() % (sizeof zps / sizeof zps[0])];
    while (zp < q->y_min || zp > q->y_max);
    q->y_zero_point = zp;
  }
  q->x_zero_point = (int32_t)irand(q->y_min, q->y_max); /* not the kernel's business (the bias holds it) */
  q->lo = -INFINITY, q->hi = INFINITY;
  const int64_t room = INT32_MAX - acc_max; /* bias_s32: |bias| <= room */
  for (size_t j = 0; j < nc; j++) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t i = 0; i < m; i++) {
      lo = C[i * nc + j] < lo ? C[i * nc + j] : lo;
      hi = C[i * nc + j] > hi ? C[i * nc + j] : hi;
    }
    const int srch = c->rq == RQ_NEARSRCH && searched(c, j, next_u32());
    const int64_t cref = C[(srch ? c->trow : (size_t)irand(0, (int64_t)m - 1)) * nc + j];
    const int64_t spread = hi - lo + 1;
    const double useful = 128.0 / (double)spread; /* the rows' spread over about the type's range */
    const double off = -150.0 + 300.0 * urand();  /* where row cref lands, in y units */
    double mt;
    int64_t b;
    switch (srch ? RQ_NEARSRCH : c->rq == RQ_NEARSRCH ? RQ_WIDE : c->rq) {
      case RQ_POW2:
      case RQ_TIES:
      case RQ_NEARTIE: {
        const int kw = kmin_wide(acc_max, cref);
        int k;
        if (c->rq == RQ_TIES) {
          k = kw + (int)irand(0, 1);
        } else {
          k = (int)ceil(log2((double)spread / 128.0)) + (int)irand(-1, 2);
          if (k < kw) k = kw;
        }
        if (k < 1) k = 1;
        mt = ldexp(1.0, -k);
        if (c->rq == RQ_NEARTIE) /* (float)mt is still 2^-k */
          mt *= 1.0 + (next_u32() % 2 ? 1.0 : -1.0) * ldexp(1.0, -(int)irand(26, 45));
        /* cref + b = (2 a + 1) 2^(k-1): that row's product an exact half-integer (a -100..100) */
        b = -cref + (2 * irand(-100, 100) + 1) * ((int64_t)1 << (k - 1));
        break;
      }
      case RQ_NEARSRCH: {
        /* among A = C + bias near where row trow lands, one whose product is within 2^-13 of a
           half-integer, preferring one where fp32's product (the wide screen's) rounds the other
           way: the kernel must notice and take the exact path for that row */
        const double mcap = 471000.0 / ((double)acc_max + fabs((double)cref) + 16385.0);
        mt = log_uniform(0.02, 2.0);
        if (mt > mcap) mt = mcap * (0.5 + 0.5 * urand());
        const float mf = (float)mt;
        const double ylo = (double)(q->y_min - q->y_zero_point), yhi = (double)(q->y_max - q->y_zero_point);
        const double far = fabs(ylo) > fabs(yhi) ? ylo : yhi;
        const double target = next_u32() % 2 ? off : far * (0.6 + 0.4 * urand());
        const int64_t a0 = llround(target / mt);
        int64_t best = a0;
        float best_gap = -1.0f;
        int found = 0;
        for (int64_t a = a0 - 8192; a <= a0 + 8192 && best_gap < 0x1p-15f; a++) {
          const double v = (double)a * mt, fr = v - floor(v);
          if (fabs(fr - 0.5) >= 0x1p-13 || fr == 0.5) continue;
          const float fa = (float)a, tt = fmaf(fa, mf, 12582912.0f), d = fmaf(fa, mf, -(tt - 12582912.0f));
          if ((double)(tt - 12582912.0f) != round_half_even(v)) {
            if (0.5f - fabsf(d) > best_gap) best = a, best_gap = 0.5f - fabsf(d), found = 1;
          } else if (!found) {
            best = a, found = 1;
          }
        }
        b = best - cref;
        break;
      }
      case RQ_NARROW: {
        /* past the wide screen's bound, within the fp32 screen's range */
        const double m_narrow = 0x1p20 / ((double)acc_max + fabs((double)cref) + 1.0);
        mt = (useful > m_narrow ? useful : m_narrow) * log_uniform(1.0, 64.0); /* |v| up to 2^26 */
        b = -cref + llround(off / mt);
        break;
      }
      case RQ_SAT: mt = useful * log_uniform(8.0, 64.0), b = -cref + llround(off / mt); break;
      case RQ_BIGBIAS: {
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
        break;
      }
      case RQ_RANGE: {
        const uint32_t r = j == 0 ? next_u32() % 2 : next_u32() % 3;
        mt = r == 0 ? ldexp(1.0 + urand(), -70) : r == 1 ? ldexp(1.0 + urand(), 70) : useful * log_uniform(0.5, 4.0);
        b = r == 2 ? -cref + llround(off / mt) : -cref + irand(-3, 3);
        break;
      }
      default: { /* WIDE, CLAMP, NOSCREEN: capped into the wide screen */
        const double mcap = 471000.0 / ((double)acc_max + fabs((double)cref) + 1.0);
        mt = useful * log_uniform(0.5, 4.0);
        if (mt > mcap) mt = mcap * (0.5 + 0.5 * urand());
        b = -cref + llround(off / mt);
        break;
      }
    }
    /* the contract's biases keep acc + bias in s32 (bias_s32): out of room, a small one */
    if (b > room || b < -room) b = irand(-(room < 1000 ? room : 1000), room < 1000 ? room : 1000);
    q->mult[j] = mt, q->bias[j] = (int32_t)b;
  }
  if (c->rq == RQ_CLAMP) {
    const uint32_t r = next_u32() % 6;
    const int64_t zl = q->y_min - q->y_zero_point, zh = q->y_max - q->y_zero_point; /* the type in y units */
    if (r == 0) {
      q->lo = q->hi = frac_bound(zl, zh);
    } else if (r == 1) {
      q->lo = frac_bound(zl, zh);
    } else if (r == 2) {
      q->hi = frac_bound(zl, zh);
    } else {
      double a = frac_bound(zl, zh), bb = frac_bound(zl, zh);
      if (a > bb) {
        const double t = a;
        a = bb, bb = t;
      }
      q->lo = a, q->hi = bb;
    }
  } else if ((c->rq == RQ_TIES || c->rq == RQ_POW2) && next_u32() % 4 == 0) {
    q->lo = -2.5 - (double)irand(0, 60), q->hi = 1.5 + (double)irand(0, 60); /* half-integer clamps */
  } else if ((c->rq == RQ_SAT || c->rq == RQ_WIDE || c->rq == RQ_BIGBIAS) && next_u32() % 3 == 0) {
    q->lo = -(double)irand(300, 1000) - urand(), q->hi = (double)irand(300, 1000) + urand(); /* beyond the type */
  } else if (c->rq == RQ_NOSCREEN && next_u32() % 2) {
    q->lo = frac_bound(-200, 0), q->hi = frac_bound(0, 200);
  }
  if (c->rq == RQ_SAT) {
    const uint32_t r = next_u32() % 3;
    if (r < 2) q->y_zero_point = r ? q->y_max : q->y_min;
  }
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

/* ================================================================ one case */

/* kh x kw for ntaps taps */
static void kernel_shape(size_t ntaps, size_t *kh, size_t *kw) {
  for (size_t a = (size_t)sqrt((double)ntaps); a >= 1; a--)
    if (ntaps % a == 0) {
      *kh = a, *kw = ntaps / a;
      return;
    }
  *kh = 1, *kw = ntaps;
}

static void run_case(dcase *c) {
  const size_t m = c->m, nc = c->c, ntaps = c->ntaps, mr = c->f->mr, cr = round_up64(nc);
  assert_true(m >= 1 && m <= mr && nc >= 1 && ntaps >= 1 && ntaps <= MAX_TAPS && c->ldy >= nc);
  const uint8_t flip = c->flip;

  /* the zero point's row (what padding taps share): c bytes against a guard page */
  gbuf gz;
  uint8_t *zrow = gbuf_open(&gz, nc, next_u32() % 2);
  memset(zrow, (int)(uint8_t)next_u32(), nc);

  /* x and the rows' offsets in it (SIZE_MAX: the zero row) */
  size_t *offs = xmalloc(ntaps * m * sizeof(size_t));
  if (c->ind_kind == IND_CONV) {
    /* an NHWC image of h x wd pixels of c channels, the windows of m consecutive output pixels */
    kernel_shape(ntaps, &c->kh, &c->kw);
    c->stride = (size_t)irand(1, 2);
    c->ph = (size_t)irand(0, (int64_t)c->kh - 1), c->pw = (size_t)irand(0, (int64_t)c->kw - 1);
    const size_t hmin = c->kh > 2 * c->ph ? c->kh - 2 * c->ph : 1, wmin = c->kw > 2 * c->pw ? c->kw - 2 * c->pw : 1;
    c->wd = wmin + (size_t)irand(0, 6), c->h = hmin + (size_t)irand(0, 3);
    size_t ho, wo;
    for (;;) {
      ho = (c->h + 2 * c->ph - c->kh) / c->stride + 1, wo = (c->wd + 2 * c->pw - c->kw) / c->stride + 1;
      if (ho * wo >= m) break;
      c->h++;
    }
    /* the last tile of the image half the time: its last pixel's window reads x's last bytes where
       the padding lets it */
    const size_t q0 = next_u32() % 2 ? ho * wo - m : (size_t)irand(0, (int64_t)(ho * wo - m));
    c->xlen = c->h * c->wd * nc;
    for (size_t t = 0; t < ntaps; t++)
      for (size_t i = 0; i < m; i++) {
        const size_t p = q0 + i, oy = p / wo, ox = p % wo, ky = t / c->kw, kx = t % c->kw;
        const ptrdiff_t iy = (ptrdiff_t)(oy * c->stride + ky) - (ptrdiff_t)c->ph;
        const ptrdiff_t ix = (ptrdiff_t)(ox * c->stride + kx) - (ptrdiff_t)c->pw;
        offs[t * m + i] = iy < 0 || ix < 0 || iy >= (ptrdiff_t)c->h || ix >= (ptrdiff_t)c->wd
                              ? SIZE_MAX
                              : ((size_t)iy * c->wd + (size_t)ix) * nc;
      }
  } else if (c->ind_kind == IND_SAME) {
    c->xlen = nc + (next_u32() % 2 ? 0 : (size_t)irand(0, 40));
    const size_t o = next_u32() % 4 == 0 ? SIZE_MAX : c->x_end ? c->xlen - nc : 0;
    for (size_t r = 0; r < ntaps * m; r++) offs[r] = o;
  } else {
    const size_t extras[] = {0, nc, (size_t)irand(0, 64), (size_t)irand(0, (int64_t)(nc * (ntaps * m < 8 ? ntaps * m : 8)))};
    c->xlen = nc + pick(extras, 4);
    for (size_t r = 0; r < ntaps * m; r++) {
      const uint32_t k = next_u32() % 10;
      offs[r] = k == 0   ? 0
                : k == 1 ? c->xlen - nc
                : k == 2 ? (r ? offs[(size_t)irand(0, (int64_t)r - 1)] : 0) /* the same bytes as another row */
                : k == 3 ? SIZE_MAX
                         : (size_t)irand(0, (int64_t)(c->xlen - nc)); /* any byte offset */
    }
    /* one row (some tap, some i) reads x's last bytes, one its first */
    offs[(size_t)irand(0, (int64_t)(ntaps * m) - 1)] = c->xlen - nc;
    offs[(size_t)irand(0, (int64_t)(ntaps * m) - 1)] = 0;
  }
  gbuf gx;
  uint8_t *x = gbuf_open(&gx, c->xlen, c->x_end);
  for (size_t i = 0; i < c->xlen; i++) x[i] = (uint8_t)(x_u(c->xkind) ^ flip);
  /* the zero row's bytes are the zero point's in the driver; here any byte, as another row */

  /* ind: ntaps x mr pointers, exactly, against a guard page; rows >= m NULL or into a guard page */
  gbuf gi;
  const uint8_t **ind = gbuf_open(&gi, ntaps * mr * sizeof(*ind), next_u32() % 2);
  const uint8_t *bad = NULL;
#ifdef HAVE_GUARD_PAGES
  if (c->unused_bad) bad = (const uint8_t *)gx.map + 17; /* the guard page before x */
#endif
  int tail_at_guard = 0;
  for (size_t t = 0; t < ntaps; t++)
    for (size_t i = 0; i < mr; i++) {
      ind[t * mr + i] = i >= m ? bad : offs[t * m + i] == SIZE_MAX ? zrow : x + offs[t * m + i];
      tail_at_guard |= i < m && c->x_end && offs[t * m + i] == c->xlen - nc;
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
  const size_t yspan = (m - 1) * c->ldy + nc;
  const size_t pre = c->y_side == 2 ? 0 : (size_t)irand(1, SENT_GUARD);
  const size_t post = c->y_side == 1 ? 0 : (size_t)irand(1, SENT_GUARD);
  const size_t total = pre + yspan + post;
  gbuf gy;
  uint8_t *ybuf = gbuf_open(&gy, total, c->y_side != 2), *y = ybuf + pre;
  const uint8_t sent = totals.cases & 1 ? 0xA5 : 0x3C;
  memset(ybuf, sent, total);

  /* copies of everything the kernel reads, to compare after the call */
  uint8_t *x_copy = xmalloc(c->xlen), *z_copy = xmalloc(nc);
  int8_t *w_copy = xmalloc(wbytes);
  const uint8_t **ind_copy = xmalloc(ntaps * mr * sizeof(*ind));
  double *mult_copy = xmalloc(nc * sizeof(double));
  int32_t *bias_copy = xmalloc(nc * sizeof(int32_t)), *lbias_copy = xmalloc(cr * sizeof(int32_t));
  float *mf_copy = xmalloc(nc * sizeof(float)), *lmf_copy = xmalloc(cr * sizeof(float));
  dlc_q8_params q_copy = *q, ql_copy = *ql;
  memcpy(x_copy, x, c->xlen), memcpy(z_copy, zrow, nc), memcpy(w_copy, w, wbytes);
  memcpy(ind_copy, ind, ntaps * mr * sizeof(*ind));
  memcpy(mult_copy, q->mult, nc * sizeof(double)), memcpy(bias_copy, q->bias, nc * sizeof(int32_t));
  memcpy(lbias_copy, ql->bias, cr * sizeof(int32_t));
  if (q->mult_f) memcpy(mf_copy, q->mult_f, nc * sizeof(float)), memcpy(lmf_copy, ql->mult_f, cr * sizeof(float));

  describe(c, q, cur_case, sizeof cur_case);
  fault_names_case(1);
  c->f->run(m, nc, ntaps, ind, w, flip, q, ql, y, c->ldy);
  fault_names_case(0);

  char what[1024];
  if (memcmp(x, x_copy, c->xlen) || memcmp(zrow, z_copy, nc) || memcmp(w, w_copy, wbytes) ||
      memcmp(ind, ind_copy, ntaps * mr * sizeof(*ind)) || memcmp(q->mult, mult_copy, nc * sizeof(double)) ||
      memcmp(q->bias, bias_copy, nc * sizeof(int32_t)) || memcmp(ql->bias, lbias_copy, cr * sizeof(int32_t)) ||
      (q->mult_f && (memcmp(q->mult_f, mf_copy, nc * sizeof(float)) ||
                     memcmp(ql->mult_f, lmf_copy, cr * sizeof(float)))) ||
      memcmp(q, &q_copy, sizeof q_copy) || memcmp(ql, &ql_copy, sizeof ql_copy)) {
    describe(c, q, what, sizeof what);
    fail_msg("%s: wrote to x, the zero row, w, ind, q or ql", what);
  }
  for (size_t i = 0; i < total; i++) {
    const ptrdiff_t k = (ptrdiff_t)i - (ptrdiff_t)pre;
    const int inside = k >= 0 && (size_t)k < yspan && (size_t)k % c->ldy < nc;
    if (!inside && ybuf[i] != sent) {
      describe(c, q, what, sizeof what);
      fail_msg("%s: wrote y[%td] (row %td, column %td: outside m x c) = 0x%02x", what, k,
               k >= 0 ? k / (ptrdiff_t)c->ldy : -1, k >= 0 ? k % (ptrdiff_t)c->ldy : k, ybuf[i]);
    }
  }
  const size_t nblk = cr / NB;
  for (size_t b = 0; b < nblk; b++) {
    const size_t j0 = b * NB, j1 = j0 + NB < nc ? j0 + NB : nc;
    const int partial = j1 - j0 < NB;
    size_t nfast = 0, nfall = 0;
    unsigned fall_rows = 0;
    for (size_t i = 0; i < m; i++) {
      int row_fallback = 0;
      for (size_t j = j0; j < j1; j++) {
        const int64_t ab = C[i * nc + j] + (int64_t)q->bias[j];
        const int32_t want = oracle_requant(ab, q->mult[j], q->lo, q->hi, q->y_zero_point, c->is_signed);
        const uint8_t yb = y[i * c->ldy + j];
        const int32_t got = c->is_signed ? (int32_t)(int8_t)yb : (int32_t)yb;
        /* statistics: exact half-integers the rounding sees, near ones, fp32 ties, clamps, saturation */
        const double vu = (double)ab * q->mult[j];
        double v = vu;
        if (v < q->lo) v = q->lo;
        if (v > q->hi) v = q->hi;
        const double fr = v - floor(v);
        totals.outputs++;
        totals.ties += fr == 0.5;
        totals.near_ties += fr != 0.5 && fabs(fr - 0.5) <= 0x1p-13;
        totals.clamped += v != vu;
        totals.big_bias += q->bias[j] > (1 << 30) || q->bias[j] < -(1 << 30);
        const double t = round_half_even(v) + q->y_zero_point;
        totals.sat_lo += t < (c->is_signed ? -128.0 : 0.0);
        totals.sat_hi += t > (c->is_signed ? 127.0 : 255.0);
        if (q->screen_wide) {
          /* what the wide screen's fp32 product sees (quant.h): its distance to the nearest integer */
          const float fa = (float)(int32_t)ab, mf = q->mult_f[j];
          const float tt = fmaf(fa, mf, 12582912.0f), d = fmaf(fa, mf, -(tt - 12582912.0f));
          totals.fp32_ties += fabsf(d) == 0.5f && fr != 0.5;
          totals.fp32_differs += (double)(tt - 12582912.0f) != round_half_even(vu);
          row_fallback |= fabsf(d) > 0.5f - DLC_Q8_WIDE_MARGIN;
        }
        if (got != want) {
          describe(c, q, what, sizeof what);
          fail_msg("%s: y[%zu * ldy + %zu] = %d, want %d (C = %lld, bias[%zu] = %d, C + bias = %lld, mult = %.17g, "
                   "mult_f = %.9g, v = %.17g)",
                   what, i, j, got, want, (long long)C[i * nc + j], j, q->bias[j], (long long)ab, q->mult[j],
                   q->mult_f ? (double)q->mult_f[j] : 0.0, vu);
        }
      }
      if (q->screen_wide) {
        nfast += !row_fallback, nfall += row_fallback != 0;
        fall_rows |= (unsigned)(row_fallback != 0) << i;
        if (partial && row_fallback) {
          totals.fallback_partial_single += nblk == 1;
          totals.fallback_partial_last += nblk > 1;
        }
        totals.fast_partial += partial && !row_fallback;
      }
    }
    totals.rows_fast += nfast, totals.rows_fallback += nfall;
    totals.mixed_blocks += nfast && nfall;
    if (q->screen_wide && j1 - j0 <= 32 && m >= 3) {
      const unsigned lo2 = fall_rows & 3u, hi2 = fall_rows >> 2 & 3u;
      totals.mixed_small_pairs += (lo2 != 0) != (hi2 != 0);
    }
  }
  totals.cases++;
  totals.by_screen[!q->mult_f ? 0 : q->screen_wide ? 2 : 1]++;
  totals.by_rq[c->rq]++;
  totals.by_ind[c->ind_kind]++;
  totals.by_sign[flip != 0][c->is_signed != 0]++;
  totals.by_m[m]++;
  for (size_t k = 0; k < N_TAP_LIST; k++) totals.by_taps[k] += ntaps == tap_list[k];
  totals.gap_cases += c->ldy > nc && m > 1;
  totals.null_rows_cases += m < mr && !c->unused_bad;
  totals.bad_rows_cases += m < mr && c->unused_bad;
  totals.guard_tail_cases += tail_at_guard && nc % NB != 0;
  totals.zp_128 += q->y_zero_point == 128;
  totals.zp_odd += q->y_zero_point % 2 != 0;
  free(x_copy), free(z_copy), free(w_copy), free(ind_copy), free(mult_copy), free(bias_copy), free(lbias_copy);
  free(mf_copy), free(lmf_copy), free(C), free(offs), free(wt);
  rq_close(&rs);
  gbuf_close(&gz), gbuf_close(&gx), gbuf_close(&gi), gbuf_close(&gw), gbuf_close(&gy);
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

static void print_totals(const char *title) {
  print_message("[ %s ] %zu cases so far (%zu with gaps between rows, %zu with m < mr and NULL rows, %zu with "
                "rows into a guard page, %zu with a row's partial block against x's end guard; flip/u8-s8: %zu %zu "
                "%zu %zu; ind: %zu random, %zu conv, %zu one run; screens: %zu none, %zu narrow, %zu wide; y zp "
                "128: %zu, odd: %zu), %zu outputs: %zu exact ties, %zu within 2^-13 of one, %zu fp32 ties the "
                "double lacks, %zu the fp32 product rounds otherwise, %zu clamped, %zu saturated low, %zu high, "
                "%zu with |bias| > 2^30; wide-screen rows of a block: %zu fast, %zu near a tie (exact fallback), "
                "%zu blocks with both (%zu of <= 32 channels, one pair of rows each way), fallback rows in a "
                "partial block %zu (alone) %zu (last of several), fast rows there %zu\n",
                title, totals.cases, totals.gap_cases, totals.null_rows_cases, totals.bad_rows_cases,
                totals.guard_tail_cases, totals.by_sign[0][0], totals.by_sign[0][1], totals.by_sign[1][0],
                totals.by_sign[1][1], totals.by_ind[IND_RANDOM], totals.by_ind[IND_CONV], totals.by_ind[IND_SAME],
                totals.by_screen[0], totals.by_screen[1], totals.by_screen[2], totals.zp_128, totals.zp_odd,
                totals.outputs, totals.ties, totals.near_ties, totals.fp32_ties, totals.fp32_differs,
                totals.clamped, totals.sat_lo, totals.sat_hi, totals.big_bias, totals.rows_fast,
                totals.rows_fallback, totals.mixed_blocks, totals.mixed_small_pairs, totals.fallback_partial_single,
                totals.fallback_partial_last, totals.fast_partial);
}

/* ================================================================ tests */

/* Every m against every c of the list, 8 cases each: ntaps from the list, an occasional 64. */
static void test_tiles(void **state) {
  (void)state;
  const dlc_q8_dwn_family *f = family();
  if (!f) {
    say_skipped("tiles");
    return;
  }
  rng_state = 0x13198A2E03707344ull;
  size_t k = 0;
  for (size_t m = 1; m <= f->mr; m++)
    for (size_t ci = 0; ci < N_C; ci++)
      for (size_t v = 0; v < 8; v++, k++) {
        dcase c;
        memset(&c, 0, sizeof c);
        c.f = f, c.m = m, c.c = c_at(ci);
        c.ntaps = tap_list[(k / 5 + v) % 6];
        if (k % 37 == 11) c.ntaps = 64;
        if (c.c >= 384 && c.ntaps > 9) c.ntaps = next_u32() % 2 ? 9 : 25; /* time */
        vary(&c, k);
        run_case(&c);
      }
  print_totals("tiles");
}

/* Ties: the kinds that put outputs on and near half-integers, mostly small operands. */
static void test_ties(void **state) {
  (void)state;
  const dlc_q8_dwn_family *f = family();
  if (!f) {
    say_skipped("ties");
    return;
  }
  rng_state = 0xA4093822299F31D0ull;
  static const int kinds[] = {RQ_TIES, RQ_NEARTIE, RQ_POW2, RQ_NEARSRCH};
  static const size_t taps[] = {1, 2, 9, 3, 25};
  size_t k = 0;
  for (size_t m = 1; m <= f->mr; m++)
    for (size_t ci = 0; ci < N_C; ci++)
      for (size_t v = 0; v < 4; v++, k++) {
        dcase c;
        memset(&c, 0, sizeof c);
        c.f = f, c.m = m, c.c = c_at(ci);
        c.ntaps = taps[(k / 3) % 5];
        vary(&c, k);
        c.rq = kinds[(v + ci) % 4];
        if (k % 4) c.xkind = X_SMALL, c.wkind = W_SMALL;
        run_case(&c);
      }
  print_totals("ties");
}

/* The near-tie fallback on some rows of a tile only: one row of a few channels put within 2^-13
   of a tie (the rest fast), in a partial last block of several, in a lone partial block, in full
   blocks. */
static void test_fallback(void **state) {
  (void)state;
  const dlc_q8_dwn_family *f = family();
  if (!f) {
    say_skipped("fallback");
    return;
  }
  rng_state = 0x452821E638D01377ull;
  static const size_t cs[] = {1, 5, 17, 31, 32, 33, 63, 64, 65, 70, 80, 96, 100, 127, 128, 129, 144, 200, 960};
  static const size_t taps[] = {1, 9, 25, 3, 49, 2};
  size_t k = 0;
  for (size_t m = 1; m <= f->mr; m++)
    for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++)
      for (size_t v = 0; v < 4; v++, k++) {
        dcase c;
        memset(&c, 0, sizeof c);
        c.f = f, c.m = m, c.c = cs[ci];
        c.ntaps = taps[k % 6];
        if (c.c >= 960 && c.ntaps > 9) c.ntaps = 9;
        vary(&c, k);
        c.rq = RQ_NEARSRCH;
        c.tie_last = v < 2;
        c.trow = (size_t)irand(0, (int64_t)m - 1);
        run_case(&c);
      }
  print_totals("fallback");
}

/* Extreme sums: all-255 activations against all -128 or 127 weights over 49 and 64 taps, biases at
   the edge of bias_s32, saturation, each with both flips and types. */
static void test_extremes(void **state) {
  (void)state;
  const dlc_q8_dwn_family *f = family();
  if (!f) {
    say_skipped("extremes");
    return;
  }
  rng_state = 0xBE5466CF34E90C6Cull;
  static const size_t cs[] = {1, 16, 63, 64, 65, 129, 200};
  static const int kinds[] = {RQ_BIGBIAS, RQ_SAT, RQ_WIDE, RQ_NOSCREEN, RQ_NARROW, RQ_CLAMP};
  size_t k = 0;
  for (size_t ci = 0; ci < sizeof cs / sizeof cs[0]; ci++)
    for (size_t v = 0; v < 12; v++, k++) {
      dcase c;
      memset(&c, 0, sizeof c);
      c.f = f, c.m = v % 3 ? f->mr : (size_t)irand(1, (int64_t)f->mr), c.c = cs[ci];
      c.ntaps = v % 2 ? 64 : 49;
      vary(&c, k);
      c.xkind = v % 4 < 2 ? X_ALL_255 : X_ENDS;
      c.wkind = v % 4 == 0 ? W_ALL_MIN : v % 4 == 1 ? W_ALL_MAX : W_ENDS;
      c.rq = kinds[(k / 2) % 6];
      c.flip = (v / 4) % 2 ? 0x80 : 0;
      c.is_signed = (int)((v / 2 + ci) % 2);
      run_case(&c);
    }
  print_totals("extremes");
}

static void test_summary(void **state) {
  (void)state;
  const dlc_q8_dwn_family *f = family();
  if (!f) return;
  /* the sweep reaches what it is there for */
  assert_true(totals.ties > 0 && totals.fp32_ties > 0 && totals.near_ties > 0 && totals.fp32_differs > 0);
  assert_true(totals.clamped > 0 && totals.sat_lo > 0 && totals.sat_hi > 0 && totals.big_bias > 0);
  assert_true(totals.by_screen[0] > 0 && totals.by_screen[1] > 0 && totals.by_screen[2] > 0);
  assert_true(totals.rows_fast > 0 && totals.rows_fallback > 0 && totals.mixed_blocks > 0);
  if (f->mr >= 3) assert_true(totals.mixed_small_pairs > 0);
  assert_true(totals.fallback_partial_single > 0 && totals.fallback_partial_last > 0 && totals.fast_partial > 0);
  assert_true(totals.gap_cases > 0 && totals.null_rows_cases > 0 && totals.guard_tail_cases > 0);
  assert_true(totals.zp_128 > 0 && totals.zp_odd > 0);
#ifdef HAVE_GUARD_PAGES
  assert_true(totals.bad_rows_cases > 0);
#endif
  for (size_t a = 0; a < 2; a++)
    for (size_t b = 0; b < 2; b++) assert_true(totals.by_sign[a][b] > 0);
  for (size_t k = 0; k < N_TAP_LIST; k++) assert_true(totals.by_taps[k] > 0);
  for (size_t m = 1; m <= f->mr; m++) assert_true(totals.by_m[m] > 0);
  for (size_t r = 0; r < N_RQ; r++) assert_true(totals.by_rq[r] > 0);
  for (size_t i = 0; i < N_IND_KINDS; i++) assert_true(totals.by_ind[i] > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_tiles),    cmocka_unit_test(test_ties),    cmocka_unit_test(test_fallback),
      cmocka_unit_test(test_extremes), cmocka_unit_test(test_summary),
  };
  const int failed = cmocka_run_group_tests(tests, NULL, NULL);
  printf("q8_dwn summary: %zu cases, %zu outputs checked%s\n", totals.cases, totals.outputs,
         failed ? " (FAILED)" : "");
  return failed;
}
