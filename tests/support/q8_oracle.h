/* q8_oracle.h - what the int8 micro-kernel tests of the avx512 table (test_ukernel_q8_igemm.c,
 * test_ukernel_q8_dwn.c) share: the double-precision requantisation oracle (quant.h's header
 * formula: v = (double)(acc + bias) * mult, clamp to [lo, hi], round half to even, + y_zero_point,
 * saturate to the type), the requantisation kinds and the per-channel multipliers, biases, zero
 * points and clamps of each, operand bytes, NHWC windows and row offsets, y in sentinels or against
 * a guard page, the per-output check with its counts, and what the wide screen makes of a lane and
 * of a kernel's row of lanes. Written independently of src/quant: nothing here calls
 * dlc_q8_requant1 or any other quant.c function (the tests call dlc_q8_derive themselves, as plans
 * do); only dlc_q8_params and DLC_Q8_WIDE_MARGIN come from quant.h. Draws from the program's
 * stream (rng.h). Include after <cmocka.h>. */
#ifndef DLC_TESTS_SUPPORT_Q8_ORACLE_H
#define DLC_TESTS_SUPPORT_Q8_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "guard_pages.h"
#include "q8_values.h"
#include "quant/quant.h"

#define SENT_GUARD 29 /* at most this many sentinel bytes on either side of y */

/* ================================================================ the requantisation, here */

/* quant.h's header formula, one IEEE double operation at a time, written independently of
   dlc_q8_requant1: round half to even by hand. */
double round_half_even(double v);

int32_t oracle_requant(int64_t acc_plus_bias, double mult, double lo, double hi, int32_t y_zp, int is_signed);

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
int q8o_screen1(double mult, float mult_f, const dlc_q8_params *q, int64_t ab);

/* The same for channel ch of q (0 where q has no wide screen). */
int q8o_screen(const dlc_q8_params *q, size_t ch, int64_t ab);

/* One row of a kernel's accumulators (its lanes in up to four vectors, whose largest |d| decides
   the row) as the screen sees it: per vector (bit v), whether a lane is screened, and whether one
   would come out wrong past a missed screen. */
typedef struct q8o_row {
  unsigned screened, wrong;
} q8o_row;

void q8o_row_add(q8o_row *r, size_t v, int flags);

/* The vector whose lanes alone are screened in the row, one of them wrong past a missed screen, or
   -1: such a row tells whether the kernel's screen takes that vector into account (with another
   vector's lane screened too the row falls back whatever it makes of this one). */
int q8o_row_lone(const q8o_row *r);

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
extern const char *const rq_names[N_RQ];

enum { IND_RANDOM, IND_CONV, IND_SAME, N_IND_KINDS };
extern const char *const ind_names[N_IND_KINDS];

/* ================================================================ requantisation parameters */

/* Power-of-two exponent k for which (acc_max + |c_ref| + 201 2^(k-1)) 2^-k stays well inside the
   wide screen's 2^19: 2^-k (acc_max + |c_ref|) <= 471000. */
int kmin_wide(int64_t acc_max, int64_t cref);

/* The type, a zero point in it (one of fixed[0..nfixed), any one, an odd one, the type's ends), an
   x zero point (not the kernel's business: the bias holds it) and no clamps. */
void q8o_params_begin(dlc_q8_params *q, int is_signed, const int32_t *fixed, size_t nfixed);

/* One column's sums as the multiplier and bias see them. */
typedef struct q8o_col {
  int64_t cref;   /* one row's sum: the bias puts that row at off */
  int64_t spread; /* the rows' max - min + 1 */
  double useful;  /* a multiplier spreading the rows over about the type's range */
  double off;     /* where row cref lands, in y units */
} q8o_col;

q8o_col q8o_col_of(int64_t cref, int64_t spread);

/* The multiplier *mt and bias *b of one column of kind (first: the case's first column, where
   RQ_RANGE always goes out of range); q holds the type and zero point. RQ_BIGBIAS is each test's
   own (its contract bounds the bias differently): returns 0 there, setting nothing. */
int q8o_mult_bias(int kind, int first, const dlc_q8_params *q, int64_t acc_max, const q8o_col *h, double *mtp,
                  int64_t *bp);

/* A column whose row cref lands within a hair of a half-integer T inside the type, on the other
   side of it from its fp32 product (or that product an exact tie rounding to even the other way):
   screened, and a missed screen would store a wrong byte (Q8O_MISSED_WRONG). Built rather than
   searched: RQ_NEARSRCH's search finds one inside the type in a few percent of columns only. With
   A = cref + bias near T / mult (a multiplier as RQ_NEARSRCH draws them, capped likewise so the
   wide screen holds), mult is T / A moved a few double ulps either way, so (float)mult stays the
   float nearest T / A while A mult crosses T. Its multiplier and bias to *mtp and *bp; returns 0
   (and a column of RQ_NEARSRCH) where no try worked. q holds the type, zero point and (infinite)
   bounds. */
int q8o_near_wrong(const dlc_q8_params *q, int64_t acc_max, const q8o_col *h, double *mtp, int64_t *bp);

#define RQ_BIT(kind) (1u << (kind))

/* The case's clamps and, for RQ_SAT, a zero point at an end of the type: RQ_CLAMP inside the type
   (integers, half-integers, equal, one-sided), a quarter of RQ_TIES / RQ_POW2 cases half-integer
   ones, a third of the kinds in beyond (RQ_BIT mask) ones beyond the type, half of those in loose
   ones within +-200. */
void q8o_params_bounds(dlc_q8_params *q, int kind, unsigned beyond, unsigned loose);

/* ================================================================ operands */

/* kh x kw for ntaps taps */
void kernel_shape(size_t ntaps, size_t *kh, size_t *kw);

/* An NHWC image for windows of m consecutive output pixels (IND_CONV). */
typedef struct q8o_window {
  size_t kh, kw, h, wd, stride, ph, pw;
} q8o_window;

/* The kernel's shape, a stride and pads for ntaps taps. */
void window_shape(q8o_window *g, size_t ntaps);

/* The image's size (up to wd_extra more columns than the least), grown until it has m output
   pixels; the output's *ho x *wo. */
void window_size(q8o_window *g, size_t m, int64_t wd_extra, size_t *ho, size_t *wo);

/* offs[t * m + i]: where tap t of output pixel q0 + i reads (pixels of pix bytes, from byte goff of
   one), SIZE_MAX in the padding. */
void window_offsets(const q8o_window *g, size_t *offs, size_t ntaps, size_t m, size_t q0, size_t wo, size_t pix,
                    size_t goff);

/* IND_SAME: every one of rows rows on one run of run bytes, x's last (x_end) or first, or the zero
   row (SIZE_MAX); returns x's length. */
size_t same_offsets(size_t *offs, size_t rows, size_t run, int x_end);

/* IND_RANDOM: rows runs of run bytes anywhere in x of xlen bytes, at any byte offset, some on
   another row's bytes, some the zero row (SIZE_MAX); one reads x's last bytes, one its first. */
void random_offsets(size_t *offs, size_t rows, size_t run, size_t xlen);

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
uint8_t *ysent_open(ysent *s, size_t m, size_t cols, size_t ldy, int side, size_t ncase);

/* Fails (what: the case) where a byte outside the m x cols outputs is not the sentinel any more;
   cols_name names cols in the message. */
void ysent_check(const ysent *s, size_t ldy, size_t cols, const char *cols_name, const char *what);

void ysent_close(ysent *s);

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
int q8o_check_output(q8o_counts *t, const dlc_q8_params *q, int is_signed, int64_t acc, size_t i, size_t j, size_t ch,
                     uint8_t yb, const char *what);

/* One case done: its screen, kind, row kind, flip and type. */
void q8o_count_case(q8o_counts *t, const dlc_q8_params *q, int rq, int ind_kind, uint8_t flip, int is_signed);

#endif
