/* q8_ukernel_oracle.h - what the int8 micro-kernel tests of the avx512 table (test_ukernel_q8_igemm.c,
 * test_ukernel_q8_dwn.c) share: the RNG, the fault handler that names the failing case, the
 * double-precision requantisation oracle (quant.h's header formula: v = (double)(acc + bias) * mult,
 * clamp to [lo, hi], round half to even, + y_zero_point, saturate to the type), the requantisation
 * kinds and the per-channel multipliers, biases, zero points and clamps of each, operand bytes,
 * NHWC windows and row offsets, y in sentinels or against a guard page, the per-output check with
 * its counts, and what the wide screen makes of a lane and of a kernel's row of lanes. Written
 * independently of src/quant: nothing here calls dlc_q8_requant1 or any other quant.c function
 * (the tests call dlc_q8_derive themselves, as plans do); only dlc_q8_params and
 * DLC_Q8_WIDE_MARGIN come from quant.h.
 *
 * Define Q8O_FAMILY (the family's name, a string literal: "q8_dwn") before including; include
 * after <cmocka.h>. Everything is static, file-local state included (one RNG, one case name). */
#ifndef DLC_TESTS_Q8_UKERNEL_ORACLE_H
#define DLC_TESTS_Q8_UKERNEL_ORACLE_H

#ifndef Q8O_FAMILY
#error "define Q8O_FAMILY (the family's name, a string literal) before including q8_ukernel_oracle.h"
#endif

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ukernel_guard.h"

#ifdef HAVE_GUARD_PAGES
#include <signal.h>
#endif

#include "quant/quant.h"

#define SENT_GUARD 29 /* at most this many sentinel bytes on either side of y */

/* ================================================================ RNG */

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static inline uint32_t next_u32(void) {
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (uint32_t)(rng_state >> 32);
}
/* Uniform in [lo, hi] (hi - lo < 2^32). */
static inline int64_t irand(int64_t lo, int64_t hi) {
  uint64_t span = (uint64_t)(hi - lo) + 1;
  uint64_t r = ((uint64_t)next_u32() << 32) | next_u32();
  return lo + (int64_t)(span ? r % span : r);
}
static inline double urand(void) { return (double)next_u32() / 4294967296.0; }
static inline size_t pick(const size_t *v, size_t n) { return v[next_u32() % n]; }
static inline double log_uniform(double lo, double hi) { return exp(log(lo) + (log(hi) - log(lo)) * urand()); }

static inline void *xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  assert_non_null(p);
  return p;
}

static inline void say_skipped(const char *test) {
  print_message("[ %s ] not run: no " Q8O_FAMILY " family on this CPU (needs AVX512-VNNI)\n", test);
}

/* ================================================================ faults name their case */

static char cur_case[1024];
#ifdef HAVE_GUARD_PAGES
static size_t cur_len;
static struct sigaction old_segv, old_bus;
/* Writes the case prepared before the call, puts cmocka's handler back and returns, so that the
   faulting access runs again into it. */
static inline void on_fault(int sig) {
  static const char head[] = Q8O_FAMILY ": fault in case: ";
  if (write(2, head, sizeof head - 1) < 0 || write(2, cur_case, cur_len) < 0 || write(2, "\n", 1) < 0) {
    /* nothing to do */
  }
  sigaction(sig, sig == SIGSEGV ? &old_segv : &old_bus, NULL);
}
#endif
static inline void fault_names_case(int on) {
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
static inline double round_half_even(double v) {
  const double f = floor(v), d = v - f; /* exact: |v| < 2^53 or v already an integer */
  if (d < 0.5) return f;
  if (d > 0.5) return f + 1.0;
  return fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

static inline int32_t oracle_requant(int64_t acc_plus_bias, double mult, double lo, double hi, int32_t y_zp,
                                     int is_signed) {
  double v = (double)acc_plus_bias * mult;
  if (v < lo) v = lo;
  if (v > hi) v = hi;
  const double t = round_half_even(v) + (double)y_zp;
  const double ymin = is_signed ? -128.0 : 0.0, ymax = is_signed ? 127.0 : 255.0;
  if (t < ymin) return (int32_t)ymin;
  if (t > ymax) return (int32_t)ymax;
  return (int32_t)t;
}

/* What the wide screen makes of one lane, (float)(acc + bias) x mult_f as the kernels compute it
   (the wide step of quant.h: one fma onto 1.5 x 2^23): */
enum {
  Q8O_SCREENED = 1,    /* within DLC_Q8_WIDE_MARGIN of a tie: the lane's row takes the exact store */
  Q8O_MISSED_WRONG = 2 /* screened, and the fp32 product rounds to another integer than the double,
                          both inside [lo, hi] and the type: a kernel whose screen missed this lane
                          would store a wrong byte (where both clamp or saturate alike, it would
                          not, and a missed screen goes unseen) */
};

/* The lane ab = acc + bias of a channel of multiplier mult (mult_f = (float)mult), q's bounds, zero
   point and type: its Q8O_ flags. */
static inline int q8o_screen1(double mult, float mult_f, const dlc_q8_params *q, int64_t ab) {
  const float fa = (float)ab, tt = fmaf(fa, mult_f, 12582912.0f), d = fmaf(fa, mult_f, -(tt - 12582912.0f));
  if (!(fabsf(d) > 0.5f - DLC_Q8_WIDE_MARGIN)) return 0;
  const double rf = (double)(tt - 12582912.0f), rd = round_half_even((double)ab * mult);
  const double ymin = q->is_signed ? -128.0 : 0.0, ymax = q->is_signed ? 127.0 : 255.0, zp = q->y_zero_point;
  const int inside = rf >= q->lo && rf <= q->hi && rd >= q->lo && rd <= q->hi && rf + zp >= ymin &&
                     rf + zp <= ymax && rd + zp >= ymin && rd + zp <= ymax;
  return Q8O_SCREENED | (rf != rd && inside ? Q8O_MISSED_WRONG : 0);
}

/* The same for channel ch of q (0 where q has no wide screen). */
static inline int q8o_screen(const dlc_q8_params *q, size_t ch, int64_t ab) {
  return q->screen_wide ? q8o_screen1(q->mult[ch], q->mult_f[ch], q, ab) : 0;
}

/* One row of a kernel's accumulators (its lanes in up to four vectors, whose largest |d| decides
   the row) as the screen sees it: per vector (bit v), whether a lane is screened, and whether one
   would come out wrong past a missed screen. */
typedef struct q8o_row {
  unsigned screened, wrong;
} q8o_row;

static inline void q8o_row_add(q8o_row *r, size_t v, int flags) {
  r->screened |= (flags & Q8O_SCREENED ? 1u : 0u) << v;
  r->wrong |= (flags & Q8O_MISSED_WRONG ? 1u : 0u) << v;
}

/* The vector whose lanes alone are screened in the row, one of them wrong past a missed screen, or
   -1: such a row tells whether the kernel's screen takes that vector into account (with another
   vector's lane screened too the row falls back whatever it makes of this one). */
static inline int q8o_row_lone(const q8o_row *r) {
  const unsigned s = r->screened;
  if (!s || (s & (s - 1)) || !(r->wrong & s)) return -1;
  int v = 0;
  while (!(s >> v & 1)) v++;
  return v;
}

/* ================================================================ kinds */

/* The requantisation kinds (a column: a GEMM column or a depthwise channel). */
enum {
  RQ_WIDE,     /* the wide screen, multipliers spreading the outputs over the type */
  RQ_POW2,     /* mult 2^-k (wide): an exact tie in every column, more among the rest */
  RQ_TIES,     /* the smallest 2^-k the wide screen allows, small sums: many exact half-integers */
  RQ_NEARTIE,  /* mult 2^-k (1 +- 2^-r): fp32 sees exact ties the double is a hair off */
  RQ_NARROW,   /* the fp32 screen without the wide one (the depthwise kernel: every row through the
                  exact store) */
  RQ_CLAMP,    /* lo / hi inside the type (integers, half-integers, equal, one-sided) */
  RQ_SAT,      /* large multipliers, zero point at an end: saturation both ways */
  RQ_NOSCREEN, /* mult_f NULL */
  RQ_BIGBIAS,  /* large biases, each test's own (igemm: past INT32_MAX - acc_max, bias_s32 false;
                  dwn: up to INT32_MAX - acc_max, bias_s32 still) */
  RQ_RANGE,    /* multipliers out of the screen's range (2^-70, 2^70) */
  RQ_NEARSRCH, /* wide; a bias found by search puts a row within 2^-13 of a tie, where possible one
                  the fp32 product rounds the other way */
  N_RQ
};
static const char *const rq_names[] = {"wide-screen", "pow2-ties", "small-ties", "near-ties", "narrow-screen",
                                       "clamp",       "saturate",  "no-screen",  "big-bias",  "mult-range",
                                       "near-tie-search"};

enum { IND_RANDOM, IND_CONV, IND_SAME, N_IND_KINDS };
static const char *const ind_names[] = {"random rows", "conv windows", "one run for all"};
enum { X_RANDOM, X_ALL_255, X_ALL_0, X_ENDS, X_SMALL, N_X_KINDS };
enum { W_RANDOM, W_ALL_MIN, W_ALL_MAX, W_SMALL, W_ENDS, N_W_KINDS };

static inline const char *screen_name(const dlc_q8_params *q) {
  return !q->mult_f ? "no screen" : q->screen_wide ? "wide screen" : "narrow screen";
}

/* u, the byte the kernel multiplies (byte ^ flip) */
static inline uint8_t x_u(int kind) {
  const uint32_t r = next_u32();
  switch (kind) {
    case X_ALL_255: return 0xff;
    case X_ALL_0: return 0x00;
    case X_ENDS: return r % 2 ? 0xff : 0x00;
    case X_SMALL: return (uint8_t)(r % 4);
    default: return r % 16 == 0 ? 0xff : r % 16 == 1 ? 0x00 : (uint8_t)(r >> 8);
  }
}

static inline int8_t w_byte(int kind) {
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

/* A clamp bound: an integer, a half-integer, a quarter or any fraction. */
static inline double frac_bound(int64_t lo, int64_t hi) {
  static const double fr[] = {0.0, 0.5, -0.5, 0.25};
  const uint32_t r = next_u32() % 5;
  return (double)irand(lo, hi) + (r < 4 ? fr[r] : urand());
}

/* Power-of-two exponent k for which (acc_max + |c_ref| + 201 2^(k-1)) 2^-k stays well inside the
   wide screen's 2^19: 2^-k (acc_max + |c_ref|) <= 471000. */
static inline int kmin_wide(int64_t acc_max, int64_t cref) {
  int k = 1;
  while (ldexp((double)acc_max + fabs((double)cref), -k) > 471000.0) k++;
  return k;
}

/* The type, a zero point in it (one of fixed[0..nfixed), any one, an odd one, the type's ends), an
   x zero point (not the kernel's business: the bias holds it) and no clamps. */
static inline void q8o_params_begin(dlc_q8_params *q, int is_signed, const int32_t *fixed, size_t nfixed) {
  q->is_signed = is_signed;
  q->y_min = is_signed ? -128 : 0, q->y_max = is_signed ? 127 : 255;
  {
    int32_t zps[32];
    size_t nz = 0;
    assert_true(nfixed + 4 <= sizeof zps / sizeof zps[0]);
    for (; nz < nfixed; nz++) zps[nz] = fixed[nz];
    zps[nz++] = (int32_t)irand(q->y_min, q->y_max);
    zps[nz++] = (int32_t)(irand(q->y_min / 2, q->y_max / 2) * 2 + 1);
    zps[nz++] = q->y_min;
    zps[nz++] = q->y_max;
    int32_t zp;
    do zp = zps[next_u32() % nz];
    while (zp < q->y_min || zp > q->y_max);
    q->y_zero_point = zp;
  }
  q->x_zero_point = (int32_t)irand(q->y_min, q->y_max);
  q->lo = -INFINITY, q->hi = INFINITY;
}

/* One column's sums as the multiplier and bias see them. */
typedef struct q8o_col {
  int64_t cref;   /* one row's sum: the bias puts that row at off */
  int64_t spread; /* the rows' max - min + 1 */
  double useful;  /* a multiplier spreading the rows over about the type's range */
  double off;     /* where row cref lands, in y units */
} q8o_col;

static inline q8o_col q8o_col_of(int64_t cref, int64_t spread) {
  q8o_col h;
  h.cref = cref, h.spread = spread;
  h.useful = 128.0 / (double)spread;
  h.off = -150.0 + 300.0 * urand();
  return h;
}

/* The multiplier *mt and bias *b of one column of kind (first: the case's first column, where
   RQ_RANGE always goes out of range); q holds the type and zero point. RQ_BIGBIAS is each test's
   own (its contract bounds the bias differently): returns 0 there, setting nothing. */
static inline int q8o_mult_bias(int kind, int first, const dlc_q8_params *q, int64_t acc_max, const q8o_col *h,
                                double *mtp, int64_t *bp) {
  const int64_t cref = h->cref;
  const double useful = h->useful, off = h->off;
  double mt;
  int64_t b;
  switch (kind) {
    case RQ_BIGBIAS: return 0;
    case RQ_POW2:
    case RQ_TIES:
    case RQ_NEARTIE: {
      const int kw = kmin_wide(acc_max, cref);
      int k;
      if (kind == RQ_TIES) {
        k = kw + (int)irand(0, 1);
      } else {
        k = (int)ceil(log2((double)h->spread / 128.0)) + (int)irand(-1, 2);
        if (k < kw) k = kw;
      }
      if (k < 1) k = 1;
      mt = ldexp(1.0, -k);
      if (kind == RQ_NEARTIE) /* (float)mt is still 2^-k */
        mt *= 1.0 + (next_u32() % 2 ? 1.0 : -1.0) * ldexp(1.0, -(int)irand(26, 45));
      /* cref + b = (2 a + 1) 2^(k-1): that row's product an exact half-integer (a -100..100) */
      b = -cref + (2 * irand(-100, 100) + 1) * ((int64_t)1 << (k - 1));
      break;
    }
    case RQ_NEARSRCH: {
      /* among A = C + bias near where row cref lands, one whose product is within 2^-13 of a
         half-integer, preferring one where fp32's product (the wide screen's) rounds the other
         way: the kernel must notice and take the exact path for that row */
      const double mcap = 471000.0 / ((double)acc_max + fabs((double)cref) + 16385.0);
      mt = log_uniform(0.02, 2.0);
      if (mt > mcap) mt = mcap * (0.5 + 0.5 * urand());
      const float mf = (float)mt;
      /* half the time near the end of the type's range farther from the zero point, where the
         fp32 product's error (relative 2^-23) is largest */
      const double ylo = (double)(q->y_min - q->y_zero_point), yhi = (double)(q->y_max - q->y_zero_point);
      const double far = fabs(ylo) > fabs(yhi) ? ylo : yhi;
      const double target = next_u32() % 2 ? off : far * (0.6 + 0.4 * urand());
      const int64_t a0 = llround(target / mt);
      int64_t best = a0;
      float best_gap = -1.0f; /* how far the fp32 product is from the tie, where it rounds otherwise */
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
    case RQ_RANGE: {
      const uint32_t r = first ? next_u32() % 2 : next_u32() % 3;
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
  *mtp = mt, *bp = b;
  return 1;
}

/* A column whose row cref lands within a hair of a half-integer T inside the type, on the other
   side of it from its fp32 product (or that product an exact tie rounding to even the other way):
   screened, and a missed screen would store a wrong byte (Q8O_MISSED_WRONG). Built rather than
   searched: RQ_NEARSRCH's search finds one inside the type in a few percent of columns only. With
   A = cref + bias near T / mult (a multiplier as RQ_NEARSRCH draws them, capped likewise so the
   wide screen holds), mult is T / A moved a few double ulps either way, so (float)mult stays the
   float nearest T / A while A mult crosses T. Its multiplier and bias to *mtp and *bp; returns 0
   (and a column of RQ_NEARSRCH) where no try worked. q holds the type, zero point and (infinite)
   bounds. */
static inline int q8o_near_wrong(const dlc_q8_params *q, int64_t acc_max, const q8o_col *h, double *mtp,
                                 int64_t *bp) {
  const double mcap = 471000.0 / ((double)acc_max + fabs((double)h->cref) + 16385.0);
  /* T's floor: both neighbours of T in the type, y units */
  const int64_t flo = q->y_min - q->y_zero_point, fhi = q->y_max - q->y_zero_point - 1;
  for (int k = 0; k < 64; k++) {
    const double T = (double)irand(flo, fhi) + 0.5;
    double m0 = log_uniform(0.02, 2.0);
    if (m0 > mcap) m0 = mcap * (0.5 + 0.5 * urand());
    int64_t a = llround(T / m0);
    if (a == 0) a = T > 0 ? 1 : -1;
    const double mt0 = T / (double)a;
    if (mt0 > mcap) continue;
    const float mf = (float)mt0;
    for (int dir = -1; dir <= 1; dir += 2) {
      double mt = mt0;
      for (int st = 0; st < 4; st++) {
        mt = nextafter(mt, dir * INFINITY);
        if ((float)mt != mf) break;
        if (q8o_screen1(mt, mf, q, a) & Q8O_MISSED_WRONG) {
          *mtp = mt, *bp = a - h->cref;
          return 1;
        }
      }
    }
  }
  q8o_mult_bias(RQ_NEARSRCH, 0, q, acc_max, h, mtp, bp);
  return 0;
}

#define RQ_BIT(kind) (1u << (kind))

/* The case's clamps and, for RQ_SAT, a zero point at an end of the type: RQ_CLAMP inside the type
   (integers, half-integers, equal, one-sided), a quarter of RQ_TIES / RQ_POW2 cases half-integer
   ones, a third of the kinds in beyond (RQ_BIT mask) ones beyond the type, half of those in loose
   ones within +-200. */
static inline void q8o_params_bounds(dlc_q8_params *q, int kind, unsigned beyond, unsigned loose) {
  if (kind == RQ_CLAMP) {
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
  } else if ((kind == RQ_TIES || kind == RQ_POW2) && next_u32() % 4 == 0) {
    q->lo = -2.5 - (double)irand(0, 60), q->hi = 1.5 + (double)irand(0, 60); /* half-integer clamps */
  } else if ((beyond & RQ_BIT(kind)) && next_u32() % 3 == 0) {
    q->lo = -(double)irand(300, 1000) - urand(), q->hi = (double)irand(300, 1000) + urand(); /* beyond the type */
  } else if ((loose & RQ_BIT(kind)) && next_u32() % 2) {
    q->lo = frac_bound(-200, 0), q->hi = frac_bound(0, 200);
  }
  if (kind == RQ_SAT) {
    const uint32_t r = next_u32() % 3;
    if (r < 2) q->y_zero_point = r ? q->y_max : q->y_min;
  }
}

/* ================================================================ operands */

/* kh x kw for ntaps taps */
static inline void kernel_shape(size_t ntaps, size_t *kh, size_t *kw) {
  for (size_t a = (size_t)sqrt((double)ntaps); a >= 1; a--)
    if (ntaps % a == 0) {
      *kh = a, *kw = ntaps / a;
      return;
    }
  *kh = 1, *kw = ntaps;
}

/* An NHWC image for windows of m consecutive output pixels (IND_CONV). */
typedef struct q8o_window {
  size_t kh, kw, h, wd, stride, ph, pw;
} q8o_window;

/* The kernel's shape, a stride and pads for ntaps taps. */
static inline void window_shape(q8o_window *g, size_t ntaps) {
  kernel_shape(ntaps, &g->kh, &g->kw);
  g->stride = (size_t)irand(1, 2);
  g->ph = (size_t)irand(0, (int64_t)g->kh - 1), g->pw = (size_t)irand(0, (int64_t)g->kw - 1);
}

/* The image's size (up to wd_extra more columns than the least), grown until it has m output
   pixels; the output's *ho x *wo. */
static inline void window_size(q8o_window *g, size_t m, int64_t wd_extra, size_t *ho, size_t *wo) {
  const size_t hmin = g->kh > 2 * g->ph ? g->kh - 2 * g->ph : 1, wmin = g->kw > 2 * g->pw ? g->kw - 2 * g->pw : 1;
  g->wd = wmin + (size_t)irand(0, wd_extra), g->h = hmin + (size_t)irand(0, 3);
  for (;;) {
    *ho = (g->h + 2 * g->ph - g->kh) / g->stride + 1, *wo = (g->wd + 2 * g->pw - g->kw) / g->stride + 1;
    if (*ho * *wo >= m) break;
    g->h++;
  }
}

/* offs[t * m + i]: where tap t of output pixel q0 + i reads (pixels of pix bytes, from byte goff of
   one), SIZE_MAX in the padding. */
static inline void window_offsets(const q8o_window *g, size_t *offs, size_t ntaps, size_t m, size_t q0, size_t wo,
                                  size_t pix, size_t goff) {
  for (size_t t = 0; t < ntaps; t++)
    for (size_t i = 0; i < m; i++) {
      const size_t p = q0 + i, oy = p / wo, ox = p % wo, ky = t / g->kw, kx = t % g->kw;
      const ptrdiff_t iy = (ptrdiff_t)(oy * g->stride + ky) - (ptrdiff_t)g->ph;
      const ptrdiff_t ix = (ptrdiff_t)(ox * g->stride + kx) - (ptrdiff_t)g->pw;
      offs[t * m + i] = iy < 0 || ix < 0 || iy >= (ptrdiff_t)g->h || ix >= (ptrdiff_t)g->wd
                            ? SIZE_MAX
                            : ((size_t)iy * g->wd + (size_t)ix) * pix + goff;
    }
}

/* IND_SAME: every one of rows rows on one run of run bytes, x's last (x_end) or first, or the zero
   row (SIZE_MAX); returns x's length. */
static inline size_t same_offsets(size_t *offs, size_t rows, size_t run, int x_end) {
  const size_t xlen = run + (next_u32() % 2 ? 0 : (size_t)irand(0, 40));
  const size_t o = next_u32() % 4 == 0 ? SIZE_MAX : x_end ? xlen - run : 0;
  for (size_t r = 0; r < rows; r++) offs[r] = o;
  return xlen;
}

/* IND_RANDOM: rows runs of run bytes anywhere in x of xlen bytes, at any byte offset, some on
   another row's bytes, some the zero row (SIZE_MAX); one reads x's last bytes, one its first. */
static inline void random_offsets(size_t *offs, size_t rows, size_t run, size_t xlen) {
  for (size_t r = 0; r < rows; r++) {
    const uint32_t k = next_u32() % 10;
    offs[r] = k == 0   ? 0
              : k == 1 ? xlen - run
              : k == 2 ? (r ? offs[(size_t)irand(0, (int64_t)r - 1)] : 0) /* the same bytes as another row */
              : k == 3 ? SIZE_MAX
                       : (size_t)irand(0, (int64_t)(xlen - run)); /* any byte offset */
  }
  offs[(size_t)irand(0, (int64_t)rows - 1)] = xlen - run;
  offs[(size_t)irand(0, (int64_t)rows - 1)] = 0;
}

/* ================================================================ y in sentinels */

/* y: m rows of ldy bytes, cols of them the kernel's, in sentinel bytes (side 0), against a guard
   page after (1) or before (2). */
typedef struct ysent {
  gbuf g;
  uint8_t *buf, *y;
  size_t pre, span, total;
  uint8_t sent;
} ysent;

/* ncase: the cases run so far (the sentinel byte alternates). */
static inline uint8_t *ysent_open(ysent *s, size_t m, size_t cols, size_t ldy, int side, size_t ncase) {
  s->span = (m - 1) * ldy + cols;
  s->pre = side == 2 ? 0 : (size_t)irand(1, SENT_GUARD);
  const size_t post = side == 1 ? 0 : (size_t)irand(1, SENT_GUARD);
  s->total = s->pre + s->span + post;
  s->buf = gbuf_open(&s->g, s->total, side != 2), s->y = s->buf + s->pre;
  s->sent = ncase & 1 ? 0xA5 : 0x3C;
  memset(s->buf, s->sent, s->total);
  return s->y;
}

/* Fails (what: the case) where a byte outside the m x cols outputs is not the sentinel any more;
   cols_name names cols in the message. */
static inline void ysent_check(const ysent *s, size_t ldy, size_t cols, const char *cols_name, const char *what) {
  for (size_t i = 0; i < s->total; i++) {
    const ptrdiff_t k = (ptrdiff_t)i - (ptrdiff_t)s->pre;
    const int inside = k >= 0 && (size_t)k < s->span && (size_t)k % ldy < cols;
    if (!inside && s->buf[i] != s->sent)
      fail_msg("%s: wrote y[%td] (row %td, column %td: outside m x %s) = 0x%02x", what, k,
               k >= 0 ? k / (ptrdiff_t)ldy : -1, k >= 0 ? k % (ptrdiff_t)ldy : k, cols_name, s->buf[i]);
  }
}

static inline void ysent_close(ysent *s) { gbuf_close(&s->g); }

/* ================================================================ checks and counts */

typedef struct q8o_counts {
  size_t cases, outputs, ties, near_ties, fp32_ties, fp32_differs, clamped, sat_lo, sat_hi;
  size_t by_screen[3], by_rq[N_RQ], by_ind[N_IND_KINDS], by_sign[2][2];
  /* rows of accumulators whose only screened lanes lie in vector v, one of them wrong past a
     missed screen (q8o_row_lone) */
  size_t lone_vec[4];
} q8o_counts;

/* Checks output y[i * ldy + j] (byte yb, channel ch of q, sum acc) against the oracle, failing with
   what (the case) where it differs, and counts what it saw: exact half-integers the rounding
   sees, near ones, fp32 ties, clamps, saturation. Returns the lane's Q8O_ flags (q8o_screen):
   non-zero where the wide screen's fp32 product lies within DLC_Q8_WIDE_MARGIN of a tie (the
   kernel's exact fallback for the row). */
static inline int q8o_check_output(q8o_counts *t, const dlc_q8_params *q, int is_signed, int64_t acc, size_t i,
                                   size_t j, size_t ch, uint8_t yb, const char *what) {
  const int64_t ab = acc + (int64_t)q->bias[ch];
  const int32_t want = oracle_requant(ab, q->mult[ch], q->lo, q->hi, q->y_zero_point, is_signed);
  const int32_t got = is_signed ? (int32_t)(int8_t)yb : (int32_t)yb;
  int fallback = 0;
  const double vu = (double)ab * q->mult[ch];
  double v = vu;
  if (v < q->lo) v = q->lo;
  if (v > q->hi) v = q->hi;
  const double fr = v - floor(v);
  t->outputs++;
  t->ties += fr == 0.5;
  t->near_ties += fr != 0.5 && fabs(fr - 0.5) <= 0x1p-13;
  t->clamped += v != vu;
  const double tr = round_half_even(v) + q->y_zero_point;
  t->sat_lo += tr < (is_signed ? -128.0 : 0.0);
  t->sat_hi += tr > (is_signed ? 127.0 : 255.0);
  if (q->screen_wide) {
    /* what the wide screen's fp32 product sees (quant.h): its distance to the nearest integer */
    const float fa = (float)(int32_t)ab, mf = q->mult_f[ch];
    const float tt = fmaf(fa, mf, 12582912.0f), d = fmaf(fa, mf, -(tt - 12582912.0f));
    t->fp32_ties += fabsf(d) == 0.5f && fr != 0.5;
    t->fp32_differs += (double)(tt - 12582912.0f) != round_half_even(vu);
    fallback = q8o_screen(q, ch, ab);
  }
  if (got != want)
    fail_msg("%s: y[%zu * ldy + %zu] = %d, want %d (C = %lld, bias[%zu] = %d, C + bias = %lld, mult = %.17g, "
             "mult_f = %.9g, v = %.17g)",
             what, i, j, got, want, (long long)acc, ch, q->bias[ch], (long long)ab, q->mult[ch],
             q->mult_f ? (double)q->mult_f[ch] : 0.0, vu);
  return fallback;
}

/* One case done: its screen, kind, row kind, flip and type. */
static inline void q8o_count_case(q8o_counts *t, const dlc_q8_params *q, int rq, int ind_kind, uint8_t flip,
                                  int is_signed) {
  t->cases++;
  t->by_screen[!q->mult_f ? 0 : q->screen_wide ? 2 : 1]++;
  t->by_rq[rq]++;
  t->by_ind[ind_kind]++;
  t->by_sign[flip != 0][is_signed != 0]++;
}

#endif
