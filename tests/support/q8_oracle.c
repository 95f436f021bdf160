/* The int8 micro-kernel tests' requantisation oracle and operands (q8_oracle.h). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "q8_oracle.h"
#include "rng.h"

const char *const rq_names[N_RQ] = {"wide-screen", "pow2-ties", "small-ties", "near-ties",  "narrow-screen",  "clamp",
                                    "saturate",    "no-screen", "big-bias",   "mult-range", "near-tie-search"};
const char *const ind_names[N_IND_KINDS] = {"random rows", "conv windows", "one run for all"};

double round_half_even(double v) {
  const double f = floor(v), d = v - f; /* exact: |v| < 2^53 or v already an integer */
  if (d < 0.5) return f;
  if (d > 0.5) return f + 1.0;
  return fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

int32_t oracle_requant(int64_t acc_plus_bias, double mult, double lo, double hi, int32_t y_zp, int is_signed) {
  double v = (double)acc_plus_bias * mult;
  if (v < lo) v = lo;
  if (v > hi) v = hi;
  const double t = round_half_even(v) + (double)y_zp;
  const double ymin = is_signed ? -128.0 : 0.0, ymax = is_signed ? 127.0 : 255.0;
  if (t < ymin) return (int32_t)ymin;
  if (t > ymax) return (int32_t)ymax;
  return (int32_t)t;
}

int q8o_screen1(double mult, float mult_f, const dlc_q8_params *q, int64_t ab) {
  const float fa = (float)ab, tt = fmaf(fa, mult_f, 12582912.0f), d = fmaf(fa, mult_f, -(tt - 12582912.0f));
  if (!(fabsf(d) > 0.5f - DLC_Q8_WIDE_MARGIN)) return 0;
  const double rf = (double)(tt - 12582912.0f), rd = round_half_even((double)ab * mult);
  const double ymin = q->is_signed ? -128.0 : 0.0, ymax = q->is_signed ? 127.0 : 255.0, zp = q->y_zero_point;
  const int inside = rf >= q->lo && rf <= q->hi && rd >= q->lo && rd <= q->hi && rf + zp >= ymin && rf + zp <= ymax &&
                     rd + zp >= ymin && rd + zp <= ymax;
  return Q8O_SCREENED | (rf != rd && inside ? Q8O_MISSED_WRONG : 0);
}

int q8o_screen(const dlc_q8_params *q, size_t ch, int64_t ab) {
  return q->screen_wide ? q8o_screen1(q->mult[ch], q->mult_f[ch], q, ab) : 0;
}

void q8o_row_add(q8o_row *r, size_t v, int flags) {
  r->screened |= (flags & Q8O_SCREENED ? 1u : 0u) << v;
  r->wrong |= (flags & Q8O_MISSED_WRONG ? 1u : 0u) << v;
}

int q8o_row_lone(const q8o_row *r) {
  const unsigned s = r->screened;
  if (!s || (s & (s - 1)) || !(r->wrong & s)) return -1;
  int v = 0;
  while (!(s >> v & 1)) v++;
  return v;
}

int kmin_wide(int64_t acc_max, int64_t cref) {
  int k = 1;
  while (ldexp((double)acc_max + fabs((double)cref), -k) > 471000.0) k++;
  return k;
}

void q8o_params_begin(dlc_q8_params *q, int is_signed, const int32_t *fixed, size_t nfixed) {
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

q8o_col q8o_col_of(int64_t cref, int64_t spread) {
  q8o_col h;
  h.cref = cref, h.spread = spread;
  h.useful = 128.0 / (double)spread;
  h.off = -150.0 + 300.0 * urand();
  return h;
}

int q8o_mult_bias(int kind, int first, const dlc_q8_params *q, int64_t acc_max, const q8o_col *h, double *mtp,
                  int64_t *bp) {
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

int q8o_near_wrong(const dlc_q8_params *q, int64_t acc_max, const q8o_col *h, double *mtp, int64_t *bp) {
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

void q8o_params_bounds(dlc_q8_params *q, int kind, unsigned beyond, unsigned loose) {
  if (kind == RQ_CLAMP) {
    clamp_inside_type(q);
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

void kernel_shape(size_t ntaps, size_t *kh, size_t *kw) {
  for (size_t a = (size_t)sqrt((double)ntaps); a >= 1; a--)
    if (ntaps % a == 0) {
      *kh = a, *kw = ntaps / a;
      return;
    }
  *kh = 1, *kw = ntaps;
}

void window_shape(q8o_window *g, size_t ntaps) {
  kernel_shape(ntaps, &g->kh, &g->kw);
  g->stride = (size_t)irand(1, 2);
  g->ph = (size_t)irand(0, (int64_t)g->kh - 1), g->pw = (size_t)irand(0, (int64_t)g->kw - 1);
}

void window_size(q8o_window *g, size_t m, int64_t wd_extra, size_t *ho, size_t *wo) {
  const size_t hmin = g->kh > 2 * g->ph ? g->kh - 2 * g->ph : 1, wmin = g->kw > 2 * g->pw ? g->kw - 2 * g->pw : 1;
  g->wd = wmin + (size_t)irand(0, wd_extra), g->h = hmin + (size_t)irand(0, 3);
  for (;;) {
    *ho = (g->h + 2 * g->ph - g->kh) / g->stride + 1, *wo = (g->wd + 2 * g->pw - g->kw) / g->stride + 1;
    if (*ho * *wo >= m) break;
    g->h++;
  }
}

void window_offsets(const q8o_window *g, size_t *offs, size_t ntaps, size_t m, size_t q0, size_t wo, size_t pix,
                    size_t goff) {
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

size_t same_offsets(size_t *offs, size_t rows, size_t run, int x_end) {
  const size_t xlen = run + (next_u32() % 2 ? 0 : (size_t)irand(0, 40));
  const size_t o = next_u32() % 4 == 0 ? SIZE_MAX : x_end ? xlen - run : 0;
  for (size_t r = 0; r < rows; r++) offs[r] = o;
  return xlen;
}

void random_offsets(size_t *offs, size_t rows, size_t run, size_t xlen) {
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

uint8_t *ysent_open(ysent *s, size_t m, size_t cols, size_t ldy, int side, size_t ncase) {
  s->span = (m - 1) * ldy + cols;
  s->pre = side == 2 ? 0 : (size_t)irand(1, SENT_GUARD);
  const size_t post = side == 1 ? 0 : (size_t)irand(1, SENT_GUARD);
  s->total = s->pre + s->span + post;
  s->buf = gbuf_open(&s->g, s->total, side != 2), s->y = s->buf + s->pre;
  s->sent = ncase & 1 ? 0xA5 : 0x3C;
  memset(s->buf, s->sent, s->total);
  return s->y;
}

void ysent_check(const ysent *s, size_t ldy, size_t cols, const char *cols_name, const char *what) {
  for (size_t i = 0; i < s->total; i++) {
    const ptrdiff_t k = (ptrdiff_t)i - (ptrdiff_t)s->pre;
    const int inside = k >= 0 && (size_t)k < s->span && (size_t)k % ldy < cols;
    if (!inside && s->buf[i] != s->sent)
      fail_msg("%s: wrote y[%td] (row %td, column %td: outside m x %s) = 0x%02x", what, k,
               k >= 0 ? k / (ptrdiff_t)ldy : -1, k >= 0 ? k % (ptrdiff_t)ldy : k, cols_name, s->buf[i]);
  }
}

void ysent_close(ysent *s) { gbuf_close(&s->g); }

int q8o_check_output(q8o_counts *t, const dlc_q8_params *q, int is_signed, int64_t acc, size_t i, size_t j, size_t ch,
                     uint8_t yb, const char *what) {
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
    fail_msg(
        "%s: y[%zu * ldy + %zu] = %d, want %d (C = %lld, bias[%zu] = %d, C + bias = %lld, mult = %.17g, "
        "mult_f = %.9g, v = %.17g)",
        what, i, j, got, want, (long long)acc, ch, q->bias[ch], (long long)ab, q->mult[ch],
        q->mult_f ? (double)q->mult_f[ch] : 0.0, vu);
  return fallback;
}

void q8o_count_case(q8o_counts *t, const dlc_q8_params *q, int rq, int ind_kind, uint8_t flip, int is_signed) {
  t->cases++;
  t->by_screen[!q->mult_f ? 0 : q->screen_wide ? 2 : 1]++;
  t->by_rq[rq]++;
  t->by_ind[ind_kind]++;
  t->by_sign[flip != 0][is_signed != 0]++;
}
