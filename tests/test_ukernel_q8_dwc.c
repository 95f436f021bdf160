/* test_ukernel_q8_dwc.c - the int8 depthwise kernels with 16 channels in the lanes
 * (dlc_q8_dwc_family, src/direct/lowp_dw_ukernel.h) of every ISA table this machine runs, against
 * references written here from the contract alone:
 *
 *   pack: dst[off[j] + c] = x[c * ldx + j] ^ flip                 j < n, c < nc
 *     byte for byte, every n 0..70 (and 200, 784), every nc 1..16, flip 0 and 0x80, ldx = n or
 *     past it, offset tables in the driver's padded layout, random permutations of 16-byte slots and
 *     shuffled slots at any byte offset; x against a guard page (the last channel's last byte right
 *     before one, or the first byte right after one), dst in sentinels (lanes nc..15 of the written
 *     slots unspecified, every other byte kept) or against a guard page.
 *
 *   run:  y[c * ldy + p] = requant(a(p, c) + bias[c0 + c], channel c0 + c)      p < np, c < nc
 *         a(p, c) = sum over ky < kh, qd < nq, t < 4 of
 *                   xc[pos[p] + ky * ky_step + 16 (4 qd + t) + c] * (s8) byte t of w[(ky * nq + qd) * 16 + c]
 *     summed in int64 and requantised with quant.h's dlc_q8_requant1 (the formula, one double
 *     operation at a time); every output byte compared. np 1..70, 196, 784; nc 1..16; kh 1..5; nq
 *     1..2; random pos tables (any byte offsets, ky_step any) and the driver's (pos[p] = 16 ((p / wo)
 *     sh wp + (p % wo) sw), ky_step = 16 dh wp); xc sized exactly to the windows of all
 *     round_up(np, 16) entries and against a guard page; pos, w and the parameter arrays against
 *     guard pages; y in sentinels (gap columns ldy > np included) or against a guard page. The
 *     requantisation: the fp32 wide screen, the narrow screen, no screen (mult_f NULL, a bias past
 *     s32 range, multipliers out of the screen's range), exact ties (power-of-two multipliers,
 *     0.25 / 0.5 with small sums), near ties (fl32(mult) a power of two, the double a hair off it:
 *     fp32 ties the double does not have), values far past 2^22 on the narrow screen, narrow and
 *     half-integer clamps, saturation at both ends, u8 and
 *     s8, per-channel multipliers and biases at c0 > 0.
 *
 *   exact arrays: the same with mult, bias and mult_f holding exactly c0 + nc entries, against guard
 *     pages (the plan's arrays have c_out entries: the last block of channels must not read past).
 *
 *   pack then run: the driver's composition on whole NCHW tensors (padding, strides, dilation in h,
 *     s8 via the flip and the zero point's correction in the bias) against a depthwise convolution
 *     computed here.
 *
 * A fault (a read or write past an operand into a guard page) names its case on stderr before
 * cmocka reports it. Where no table has the family (no AVX512-VNNI + VBMI) every test skips, and so
 * does the program (exit 77). */
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
#include "support/q8_values.h"
#include "support/rng.h"
#include "support/skip.h"

#define LANES DLC_Q8_DWC_LANES
#define SENT_GUARD 29 /* sentinel bytes on either side of an output */

static size_t round_up16(size_t n) { return (n + LANES - 1) / LANES * LANES; }

/* ================================================================ families */

/* Where this build has the VBMI kernel and this CPU runs it, the avx512 table must carry it
   (src/arch/<isa>/config.c), so losing it from the table fails rather than skips; the avx2 and generic tables
   must not (EVEX: a caller capping at avx2 must not get it). */
static void check_expected_dwc(void) {
#if defined(DLC_HAVE_AVX512VBMI)
  if (dlc_cpu()->avx512_vnni && dlc_cpu()->avx512_vbmi && dlc_kernels_for(DLCONV_ISA_AVX512))
    assert_ptr_equal(TABLE_FAMILY(DLCONV_ISA_AVX512, q8_dwc), &dlc_q8_dwc__avx512vbmi);
  if (TABLE_FAMILY(DLCONV_ISA_AVX2, q8_dwc)) assert_ptr_not_equal(TABLE_FAMILY(DLCONV_ISA_AVX2, q8_dwc), &dlc_q8_dwc__avx512vbmi);
  if (TABLE_FAMILY(DLCONV_ISA_GENERIC, q8_dwc)) assert_ptr_not_equal(TABLE_FAMILY(DLCONV_ISA_GENERIC, q8_dwc), &dlc_q8_dwc__avx512vbmi);
#endif
}

/* The families under test, each once: those the tables give this CPU. */
static size_t families(const dlc_q8_dwc_family *out[MAX_FAMILIES]) {
  size_t n = 0;
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++) ADD_FAMILY(out, n, kt->q8_dwc);
  for (size_t i = 0; i < n; i++) {
    assert_non_null(out[i]->name);
    assert_non_null(out[i]->pack);
    assert_non_null(out[i]->run);
  }
  static int said;
  if (!said) {
    said = 1;
    printf("q8_dwc families under test:");
    for (size_t i = 0; i < n; i++) printf(" %s", out[i]->name);
    printf("%s\n", n ? "" : " none (no table of this CPU has one: the q8_dwc tests are skipped)");
  }
  return n;
}

/* Operands of varying size go against the end or the start of a guarded region (guard_pages.h). */
static unsigned char *place(region *r, size_t bytes, int at_end) { return region_place(r, bytes, at_end); }

/* ================================================================ pack */

enum { OFF_DRIVER, OFF_PERM, OFF_ANY, N_OFF_KINDS };
static const char *const off_names[] = {"driver layout", "permuted slots", "slots at any byte offset"};

typedef struct pack_case {
  const dlc_q8_dwc_family *f;
  size_t n, nc, ldx;
  uint8_t flip;
  int off_kind;
  size_t w_in, pad_t, pad_l, wp; /* OFF_DRIVER */
  int x_end;                     /* x's last byte before a guard page (1) or its first after one (0) */
  int dst_side;                  /* 0: in sentinels, 1: against a guard page after, 2: before */
} pack_case;

static size_t pack_cases, pack_bytes_checked;

static void pack_describe(const pack_case *c, char *buf, size_t len) {
  char lay[96] = "";
  if (c->off_kind == OFF_DRIVER)
    snprintf(lay, sizeof lay, " (w_in=%zu pad_t=%zu pad_l=%zu wp=%zu)", c->w_in, c->pad_t, c->pad_l, c->wp);
  snprintf(buf, len, "%s pack n=%zu nc=%zu ldx=%zu flip=0x%02x off=%s%s, x %s, dst %s", c->f->name, c->n, c->nc,
           c->ldx, c->flip, off_names[c->off_kind], lay, c->x_end ? "against the end guard" : "after the start guard",
           c->dst_side == 0 ? "in sentinels" : c->dst_side == 1 ? "against the end guard" : "after the start guard");
}

static void run_pack(region *xr, pack_case *c) {
  const size_t n = c->n, nc = c->nc;
  /* offsets */
  gbuf go;
  uint32_t *off = gbuf_open(&go, (n ? n : 1) * sizeof(uint32_t), 1);
  size_t span = 0;
  if (c->off_kind == OFF_DRIVER) {
    c->w_in = n ? (size_t)irand(1, (int64_t)(n < 40 ? n : 40)) : 1;
    if (n && next_u32() % 4 == 0) c->w_in = n;
    c->pad_t = (size_t)irand(0, 3), c->pad_l = (size_t)irand(0, 3);
    c->wp = c->w_in + c->pad_l + (size_t)irand(0, 3);
    for (size_t j = 0; j < n; j++)
      off[j] = (uint32_t)(16 * ((j / c->w_in + c->pad_t) * c->wp + j % c->w_in + c->pad_l));
  } else if (c->off_kind == OFF_PERM) {
    const size_t slots = n + (next_u32() % 2 ? 0 : (size_t)irand(0, 20));
    uint32_t *perm = xmalloc((slots ? slots : 1) * sizeof(uint32_t));
    for (size_t s = 0; s < slots; s++) perm[s] = (uint32_t)s;
    for (size_t s = slots; s > 1; s--) {
      const size_t t = next_u32() % s;
      const uint32_t v = perm[s - 1];
      perm[s - 1] = perm[t], perm[t] = v;
    }
    for (size_t j = 0; j < n; j++) off[j] = 16 * perm[j];
    free(perm);
  } else {
    uint32_t at = (uint32_t)irand(0, 5);
    for (size_t j = 0; j < n; j++) off[j] = at, at += 16 + (uint32_t)irand(0, 7);
    for (size_t s = n; s > 1; s--) {
      const size_t t = next_u32() % s;
      const uint32_t v = off[s - 1];
      off[s - 1] = off[t], off[t] = v;
    }
  }
  uint32_t omin = UINT32_MAX;
  for (size_t j = 0; j < n; j++) {
    if (off[j] + (size_t)16 > span) span = off[j] + (size_t)16;
    if (off[j] < omin) omin = off[j];
  }
  if (c->dst_side == 2 && n) { /* the lowest slot right after the guard page */
    for (size_t j = 0; j < n; j++) off[j] -= omin;
    span -= omin;
  }
  uint32_t *off_copy = xmalloc((n ? n : 1) * sizeof(uint32_t));
  memcpy(off_copy, off, n * sizeof(uint32_t));

  /* x: nc rows of ldx bytes, the last row n bytes long */
  const size_t xbytes = n ? (nc - 1) * c->ldx + n : 0;
  uint8_t *x = place(xr, xbytes, c->x_end);
  const int xk = (int)(next_u32() % 4);
  for (size_t i = 0; i < xbytes; i++) {
    const uint32_t r = next_u32();
    x[i] = xk == 0   ? (uint8_t)r
           : xk == 1 ? (uint8_t)(r % 2 ? 0xff : 0x00)
           : xk == 2 ? (uint8_t)(0x7e + r % 4) /* around the flip */
                     : (uint8_t)(r >> 5);
  }
  uint8_t *x_copy = xmalloc(xbytes);
  memcpy(x_copy, x, xbytes);

  /* dst: span bytes, with sentinels around it unless against a guard page */
  const size_t pre = c->dst_side == 2 ? 0 : (size_t)irand(1, SENT_GUARD);
  const size_t post = c->dst_side == 1 ? 0 : (size_t)irand(1, SENT_GUARD);
  const size_t total = pre + span + post;
  gbuf gd;
  uint8_t *buf = gbuf_open(&gd, total, c->dst_side != 2), *dst = buf + pre;
  const uint8_t sent = (pack_cases & 1) ? 0xA5 : 0x3C;
  memset(buf, sent, total);

  pack_describe(c, fault_case, sizeof fault_case);
  fault_names_case("q8_dwc: fault in case: ", 1);
  c->f->pack(nc, n, x, c->ldx, c->flip, off, dst);
  fault_names_case(NULL, 0);

  char what[512];
  if (memcmp(x, x_copy, xbytes) || memcmp(off, off_copy, n * sizeof(uint32_t))) {
    pack_describe(c, what, sizeof what);
    fail_msg("%s: wrote to x or off", what);
  }
  /* owner of every byte of the buffer: -1 none, else the pixel whose slot holds it */
  int32_t *owner = xmalloc(total * sizeof(int32_t));
  for (size_t i = 0; i < total; i++) owner[i] = -1;
  for (size_t j = 0; j < n; j++)
    for (size_t l = 0; l < 16; l++) owner[pre + off_copy[j] + l] = (int32_t)j;
  for (size_t i = 0; i < total; i++) {
    if (owner[i] < 0) {
      if (buf[i] != sent) {
        pack_describe(c, what, sizeof what);
        fail_msg("%s: wrote dst[%td] (in no slot) = 0x%02x", what, (ptrdiff_t)i - (ptrdiff_t)pre, buf[i]);
      }
      continue;
    }
    const size_t j = (size_t)owner[i], lane = i - pre - off_copy[j];
    if (lane >= nc) continue; /* unspecified */
    const uint8_t want = (uint8_t)(x_copy[lane * c->ldx + j] ^ c->flip);
    pack_bytes_checked++;
    if (buf[i] != want) {
      pack_describe(c, what, sizeof what);
      fail_msg("%s: dst[off[%zu] + %zu] = 0x%02x, want x[%zu * ldx + %zu] ^ flip = 0x%02x (off[%zu] = %u)", what, j,
               lane, buf[i], lane, j, want, j, off_copy[j]);
    }
  }
  free(owner), free(x_copy), free(off_copy);
  gbuf_close(&gd), gbuf_close(&go);
  pack_cases++;
}

#define PACK_MAX_N 784
#define PACK_X_BYTES (15 * (PACK_MAX_N + 100) + PACK_MAX_N)

static void test_pack(void **state) {
  (void)state;
  check_expected_dwc();
  const dlc_q8_dwc_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  if (!nfam) skip_test("q8_dwc pack", "no q8_dwc family on this CPU (needs AVX512-VNNI + VBMI)");
  rng_state = 0x243F6A8885A308D3ull;
  size_t ns[80], nn = 0;
  for (size_t n = 0; n <= 70; n++) ns[nn++] = n;
  ns[nn++] = 200, ns[nn++] = 784;
  region xr;
  region_open(&xr, PACK_X_BYTES);
  size_t k = 0;
  for (size_t s = 0; s < nfam; s++)
    for (size_t ni = 0; ni < nn; ni++)
      for (size_t nc = 1; nc <= LANES; nc++)
        for (int fl = 0; fl < 2; fl++)
          for (int ok = 0; ok < N_OFF_KINDS; ok++, k++) {
            pack_case c;
            memset(&c, 0, sizeof c);
            c.f = fams[s], c.n = ns[ni], c.nc = nc, c.flip = fl ? 0x80 : 0x00, c.off_kind = ok;
            const size_t gaps[] = {0, 0, 0, 1, 3, 16, 64, (size_t)irand(0, 100)};
            c.ldx = c.n + pick(gaps, sizeof gaps / sizeof gaps[0]);
            c.x_end = k % 3 != 2;
            c.dst_side = (int)((k / 2) % 3);
            run_pack(&xr, &c);
          }
  region_close(&xr);
  print_message("[ q8_dwc pack ] %zu cases, %zu bytes compared\n", pack_cases, pack_bytes_checked);
}

/* ================================================================ requantisation parameters */

enum {
  RQ_WIDE,     /* mult ~ 1e-3..1e-2: the wide fp32 screen */
  RQ_POW2,     /* mult 2^-k: exact ties among random sums, wide screen */
  RQ_TIES,     /* mult 0.25 / 0.5, small sums: many exact half-integers */
  RQ_NEARTIE,  /* mult 2^-k (1 +- 2^-r): fp32 sees exact ties where the double is just off one */
  RQ_NARROW,   /* the screen without the wide one: mult 0.2..2 on small sums, or 1..64 on large */
  RQ_CLAMP,    /* lo / hi inside the type's range (half-integers, equal, one-sided) */
  RQ_SAT,      /* large mult, zero point at an end: saturation both ways */
  RQ_NOSCREEN, /* mult_f NULL */
  RQ_BIGBIAS,  /* |bias| past INT32_MAX - acc_max: bias_s32 false, acc + bias past s32 */
  RQ_RANGE,    /* multipliers out of the screen's range (2^-70, 2^70) */
  N_RQ
};
static const char *const rq_names[] = {"wide-screen", "pow2-ties", "ties-0.25/0.5", "near-ties", "narrow-screen",
                                       "clamp",       "saturate",  "no-screen",     "big-bias",  "mult-range"};

typedef struct rq_set {
  dlc_q8_params q;
  gbuf gm, gb, gf;
  size_t c_out;
} rq_set;

/* Builds q for c_out channels (arrays against guard pages) of the given kind and derives it with
   acc_max, as plans do; small: the sums are small (x 0..3, w -3..3). */
static void rq_build(rq_set *s, int kind, int small, int is_signed, size_t c_out, size_t c_first, int64_t acc_max) {
  memset(s, 0, sizeof *s);
  s->c_out = c_out;
  dlc_q8_params *q = &s->q;
  q->mult = gbuf_open(&s->gm, c_out * sizeof(double), 1);
  q->bias = gbuf_open(&s->gb, c_out * sizeof(int32_t), 1);
  float *mult_f = gbuf_open(&s->gf, c_out * sizeof(float), 1);
  q->is_signed = is_signed;
  q->y_min = is_signed ? -128 : 0, q->y_max = is_signed ? 127 : 255;
  q->x_zero_point = (int32_t)irand(q->y_min, q->y_max);
  q->y_zero_point = (int32_t)irand(q->y_min, q->y_max);
  q->lo = -INFINITY, q->hi = INFINITY;
  for (size_t c = 0; c < c_out; c++) {
    double m;
    int64_t b;
    switch (kind) {
      case RQ_POW2: m = ldexp(1.0, -(int)irand(3, 12)), b = irand(-2000, 2000); break;
      case RQ_TIES: m = next_u32() % 2 ? 0.25 : 0.5, b = irand(-8, 8); break;
      case RQ_NEARTIE: {
        /* fl32(mult) = 2^-k exactly (r >= 25): (a + bias) 2^-k an exact half-integer in fp32 is a
           hair off one in the double, so the fp32 rounding of the tie may be wrong */
        const int r = (int)irand(25, 45);
        m = ldexp(1.0 + (next_u32() % 2 ? 1.0 : -1.0) * ldexp(1.0, -r), -(int)irand(small ? 2 : 3, small ? 6 : 10));
        b = irand(-64, 64);
        break;
      }
      case RQ_NARROW:
        if (small) m = 0.2 + 1.8 * urand(), b = irand(-40, 40);
        else m = log_uniform(8.0, 64.0), b = irand(-1000000, 1000000); /* |v| up to 2^26: saturates */
        break;
      case RQ_SAT: m = log_uniform(0.05, 1.0), b = irand(-100000, 100000); break;
      case RQ_BIGBIAS:
        if (c == c_first || next_u32() % 2) {
          const uint32_t r = next_u32() % 4;
          b = r == 0   ? INT32_MAX - irand(0, 3)
              : r == 1 ? INT32_MIN + irand(0, 3)
              : r == 2 ? INT32_MAX - irand(0, acc_max)
                       : INT32_MIN + irand(0, acc_max);
          m = (20.0 + 100.0 * urand()) / fabs((double)b); /* v around +-(20..120) */
        } else {
          m = log_uniform(1e-3, 1e-2), b = irand(-20000, 20000);
        }
        break;
      case RQ_RANGE: {
        const uint32_t r = c == c_first ? next_u32() % 2 : next_u32() % 3;
        m = r == 0 ? ldexp(1.0 + urand(), -70) : r == 1 ? ldexp(1.0 + urand(), 70) : log_uniform(1e-3, 1e-2);
        b = irand(-3, 3);
        break;
      }
      case RQ_CLAMP: m = log_uniform(1e-3, 1e-2), b = irand(-20000, 20000); break;
      default: m = log_uniform(1e-3, 1e-2), b = irand(-20000, 20000); break; /* WIDE, NOSCREEN */
    }
    q->mult[c] = m, q->bias[c] = (int32_t)b;
  }
  if (kind == RQ_CLAMP) {
    clamp_inside_type(q);
  } else if (kind == RQ_TIES && next_u32() % 3 == 0) {
    q->lo = -2.5 - (double)irand(0, 5), q->hi = 1.5 + (double)irand(0, 5);
  } else if ((kind == RQ_SAT || kind == RQ_WIDE) && next_u32() % 3 == 0) {
    q->lo = -(double)irand(300, 1000) - urand(), q->hi = (double)irand(300, 1000) + urand(); /* beyond the type */
  }
  if (kind == RQ_SAT) {
    const uint32_t r = next_u32() % 3;
    if (r < 2) q->y_zero_point = r ? q->y_max : q->y_min;
  }
  dlc_q8_derive(q, acc_max, c_out, kind == RQ_NOSCREEN ? NULL : mult_f);
  /* what each kind is there for */
  if (kind == RQ_NOSCREEN || kind == RQ_RANGE) assert_null(q->mult_f);
  if (kind == RQ_BIGBIAS) assert_false(q->bias_s32);
  if (kind == RQ_WIDE || kind == RQ_POW2 || kind == RQ_NEARTIE) assert_true(q->screen_wide);
  if (kind == RQ_NARROW && !small) assert_true(q->mult_f && !q->screen_wide);
}

static void rq_close(rq_set *s) { gbuf_close(&s->gm), gbuf_close(&s->gb), gbuf_close(&s->gf); }

/* ================================================================ run */

enum { POS_RANDOM, POS_DRIVER, N_POS_KINDS };

typedef struct run_case {
  const dlc_q8_dwc_family *f;
  size_t np, nc, kh, nq, kw, ky_step, ldy, c0, c_out;
  int pos_kind, tail_kind;
  size_t wo, sh, sw, dh, wp, rspan; /* POS_DRIVER; rspan: POS_RANDOM's spread */
  int xkind, wkind, rq, is_signed;
  int xc_end;  /* xc's last byte before a guard page (1) or its first after one (0) */
  int y_side;  /* 0: in sentinels, 1: against a guard page after, 2: before */
  int exact;   /* parameter arrays of exactly c0 + nc entries */
} run_case;

typedef struct run_stats {
  size_t cases, outputs, ties, near_ties, sat_lo, sat_hi, clamped, overflow_s32;
  size_t by_screen[3], by_rq[N_RQ], by_pos[N_POS_KINDS];
} run_stats;

static void run_describe(const run_case *c, const dlc_q8_params *q, char *buf, size_t len) {
  char pk[128];
  if (c->pos_kind == POS_DRIVER)
    snprintf(pk, sizeof pk, "driver pos (wo=%zu sh=%zu sw=%zu dh=%zu wp=%zu, tail %s)", c->wo, c->sh, c->sw, c->dh,
             c->wp, c->tail_kind ? "pos[0]" : "continued");
  else
    snprintf(pk, sizeof pk, "random pos (spread %zu)", c->rspan);
  snprintf(buf, len,
           "%s run np=%zu nc=%zu kh=%zu nq=%zu (k_w=%zu) ky_step=%zu ldy=%zu c0=%zu c_out=%zu, %s, %s %s y "
           "(zp %d, lo %.17g, hi %.17g, %s, bias_s32 %d), x kind %d, w kind %d, xc %s, y %s",
           c->f->name, c->np, c->nc, c->kh, c->nq, c->kw, c->ky_step, c->ldy, c->c0, c->c_out, pk, rq_names[c->rq],
           c->is_signed ? "s8" : "u8", q->y_zero_point, q->lo, q->hi, screen_name(q), q->bias_s32, c->xkind, c->wkind,
           c->xc_end ? "against the end guard" : "after the start guard",
           c->y_side == 0 ? "in sentinels" : c->y_side == 1 ? "against the end guard" : "after the start guard");
}

#define XC_REGION_BYTES (1u << 20)

static void run_one(region *xr, run_case *c, run_stats *st) {
  const size_t np = c->np, nc = c->nc, kh = c->kh, nq = c->nq, npad = round_up16(np);
  assert_true(np >= 1 && nc >= 1 && nc <= LANES && kh >= 1 && nq >= 1 && nq <= 2);
  c->kw = (size_t)irand((int64_t)(4 * nq - 3), (int64_t)(4 * nq));

  /* pos */
  gbuf gp;
  uint32_t *pos = gbuf_open(&gp, npad * sizeof(uint32_t), next_u32() % 2);
  if (c->pos_kind == POS_DRIVER) {
    const size_t wos[] = {(size_t)irand(1, (int64_t)(np < 32 ? np : 32)), (size_t)ceil(sqrt((double)np)),
                          np <= 64 ? np : 28};
    c->wo = pick(wos, sizeof wos / sizeof wos[0]);
    c->sh = (size_t)irand(1, 2), c->sw = (size_t)irand(1, 2), c->dh = (size_t)irand(1, 2);
    c->wp = (c->wo - 1) * c->sw + c->kw + (size_t)irand(0, 3);
    c->tail_kind = next_u32() % 3 == 0;
    for (size_t p = 0; p < npad; p++) {
      const size_t pp = p < np || !c->tail_kind ? p : 0;
      pos[p] = (uint32_t)(16 * ((pp / c->wo) * c->sh * c->wp + (pp % c->wo) * c->sw));
    }
    c->ky_step = 16 * c->dh * c->wp;
  } else {
    const size_t spans[] = {0, 63, 500, 3000, 20000};
    c->rspan = pick(spans, sizeof spans / sizeof spans[0]);
    uint32_t lo = UINT32_MAX;
    for (size_t p = 0; p < npad; p++) pos[p] = (uint32_t)irand(0, (int64_t)c->rspan), lo = pos[p] < lo ? pos[p] : lo;
    for (size_t p = 0; p < npad; p++) pos[p] -= lo;
    const size_t steps[] = {0, 1, 16, 17, 64, 64 * nq, 16 * (size_t)irand(1, 40), (size_t)irand(0, 1500)};
    c->ky_step = pick(steps, sizeof steps / sizeof steps[0]);
  }
  size_t pmax = 0;
  for (size_t p = 0; p < npad; p++) pmax = pos[p] > pmax ? pos[p] : pmax;
  const size_t extent = pmax + (kh - 1) * c->ky_step + 64 * (nq - 1) + 64;
  assert_true(extent <= XC_REGION_BYTES);

  /* xc, exactly the read extent */
  uint8_t *xc = place(xr, extent, c->xc_end);
  for (size_t i = 0; i < extent; i++) xc[i] = x_u(c->xkind);

  /* weights: taps past k_w and channels past nc zero */
  gbuf gw;
  const size_t nw = kh * nq * LANES;
  int32_t *w = gbuf_open(&gw, nw * sizeof(int32_t), next_u32() % 2);
  for (size_t ky = 0; ky < kh; ky++)
    for (size_t qd = 0; qd < nq; qd++)
      for (size_t ch = 0; ch < LANES; ch++) {
        uint32_t v = 0;
        for (size_t t = 0; t < 4; t++) {
          const int8_t b = ch < nc && 4 * qd + t < c->kw ? w_byte(c->wkind) : 0;
          v |= (uint32_t)(uint8_t)b << (8 * t);
        }
        w[(ky * nq + qd) * LANES + ch] = (int32_t)v;
      }

  /* requantisation */
  const int64_t acc_max = (int64_t)kh * (int64_t)nq * 4 * 255 * 128;
  rq_set rs;
  rq_build(&rs, c->rq, c->xkind == X_SMALL && c->wkind == W_SMALL, c->is_signed, c->c_out, c->c0, acc_max);
  const dlc_q8_params *q = &rs.q;

  /* y: nc rows of ldy bytes */
  const size_t yspan = (nc - 1) * c->ldy + np;
  const size_t pre = c->y_side == 2 ? 0 : (size_t)irand(1, SENT_GUARD);
  const size_t post = c->y_side == 1 ? 0 : (size_t)irand(1, SENT_GUARD);
  const size_t total = pre + yspan + post;
  gbuf gy;
  uint8_t *ybuf = gbuf_open(&gy, total, c->y_side != 2), *y = ybuf + pre;
  const uint8_t sent = st->cases & 1 ? 0xA5 : 0x3C;
  memset(ybuf, sent, total);

  uint8_t *xc_copy = xmalloc(extent);
  uint32_t *pos_copy = xmalloc(npad * sizeof(uint32_t));
  int32_t *w_copy = xmalloc(nw * sizeof(int32_t));
  memcpy(xc_copy, xc, extent), memcpy(pos_copy, pos, npad * sizeof(uint32_t)), memcpy(w_copy, w, nw * sizeof(int32_t));

  run_describe(c, q, fault_case, sizeof fault_case);
  fault_names_case("q8_dwc: fault in case: ", 1);
  c->f->run(np, xc, pos, kh, c->ky_step, nq, w, q, c->c0, nc, y, c->ldy);
  fault_names_case(NULL, 0);

  char what[768];
  if (memcmp(xc, xc_copy, extent) || memcmp(pos, pos_copy, npad * sizeof(uint32_t)) ||
      memcmp(w, w_copy, nw * sizeof(int32_t))) {
    run_describe(c, q, what, sizeof what);
    fail_msg("%s: wrote to xc, pos or w", what);
  }
  for (size_t i = 0; i < total; i++) {
    const ptrdiff_t k = (ptrdiff_t)i - (ptrdiff_t)pre;
    const int inside = k >= 0 && (size_t)k < yspan && (size_t)k % c->ldy < np;
    if (!inside && ybuf[i] != sent) {
      run_describe(c, q, what, sizeof what);
      fail_msg("%s: wrote y[%td] (row %td, column %td: outside nc x np) = 0x%02x", what, k,
               k >= 0 ? k / (ptrdiff_t)c->ldy : -1, k >= 0 ? k % (ptrdiff_t)c->ldy : k, ybuf[i]);
    }
  }
  for (size_t ch = 0; ch < nc; ch++) {
    const size_t oc = c->c0 + ch;
    for (size_t p = 0; p < np; p++) {
      int64_t a = 0;
      for (size_t ky = 0; ky < kh; ky++)
        for (size_t qd = 0; qd < nq; qd++) {
          const uint32_t wq = (uint32_t)w_copy[(ky * nq + qd) * LANES + ch];
          const size_t base = pos_copy[p] + ky * c->ky_step + 64 * qd + ch;
          for (size_t t = 0; t < 4; t++)
            a += (int64_t)xc_copy[base + 16 * t] * (int64_t)(int8_t)(uint8_t)(wq >> (8 * t));
        }
      const int64_t ab = a + q->bias[oc];
      const int32_t want = dlc_q8_requant1(ab, q->mult[oc], q);
      const int32_t got = c->is_signed ? (int32_t)(int8_t)y[ch * c->ldy + p] : (int32_t)y[ch * c->ldy + p];
      /* statistics: exact half-integers the rounding sees, clamps and saturation */
      double v = (double)ab * q->mult[oc];
      const double vu = v;
      v = v < q->lo ? q->lo : v;
      v = v > q->hi ? q->hi : v;
      st->outputs++;
      st->ties += v - floor(v) == 0.5;
      st->near_ties += v - floor(v) != 0.5 && fabs(v - floor(v) - 0.5) <= 0x1p-13;
      st->clamped += v != vu;
      st->overflow_s32 += ab > INT32_MAX || ab < INT32_MIN;
      const double t = nearbyint(v) + q->y_zero_point;
      st->sat_lo += t < q->y_min, st->sat_hi += t > q->y_max;
      if (got != want) {
        run_describe(c, q, what, sizeof what);
        fail_msg("%s: y[%zu * ldy + %zu] = %d, want %d (a = %lld, bias[%zu] = %d, a + bias = %lld, mult = %.17g, "
                 "mult_f = %.9g, v = %.17g, pos[%zu] = %u)",
                 what, ch, p, got, want, (long long)a, oc, q->bias[oc], (long long)ab, q->mult[oc],
                 q->mult_f ? (double)q->mult_f[oc] : 0.0, vu, p, pos_copy[p]);
      }
    }
  }
  st->cases++;
  st->by_screen[!q->mult_f ? 0 : q->screen_wide ? 2 : 1]++;
  st->by_rq[c->rq]++;
  st->by_pos[c->pos_kind]++;
  free(xc_copy), free(pos_copy), free(w_copy);
  rq_close(&rs);
  gbuf_close(&gp), gbuf_close(&gw), gbuf_close(&gy);
}

static run_stats run_totals, exact_totals;

static void print_stats(const char *title, const run_stats *st) {
  print_message("[ %s ] %zu cases (%zu random pos, %zu driver pos; screens: %zu none, %zu narrow, %zu wide), "
                "%zu outputs: %zu exact ties, %zu within 2^-13 of one, %zu clamped, %zu saturated low, %zu high, "
                "%zu with acc + bias past s32\n",
                title, st->cases, st->by_pos[POS_RANDOM], st->by_pos[POS_DRIVER], st->by_screen[0], st->by_screen[1],
                st->by_screen[2], st->outputs, st->ties, st->near_ties, st->clamped, st->sat_lo, st->sat_hi,
                st->overflow_s32);
}

/* Fills the case's data kinds and sides from a running counter k (and the RNG). */
static void vary(run_case *c, size_t k) {
  c->rq = (int)(k % N_RQ);
  c->pos_kind = (int)((k / N_RQ + k) % N_POS_KINDS);
  c->xkind = (int)((k / 3) % N_X_KINDS);
  c->wkind = (int)((k / 7) % N_W_KINDS);
  if (c->rq == RQ_TIES || ((c->rq == RQ_NARROW || c->rq == RQ_CLAMP || c->rq == RQ_NEARTIE) && k / N_RQ % 2))
    c->xkind = X_SMALL, c->wkind = W_SMALL;
  if (c->xkind == X_SMALL && c->wkind != W_SMALL && k % 3) c->wkind = W_SMALL;
  c->is_signed = (int)((k / 2) % 2);
  c->xc_end = k % 4 != 1;
  c->y_side = (int)((k / 5) % 3);
  const size_t gaps[] = {0, 0, 1, 3, 16, (size_t)irand(0, 40)};
  c->ldy = c->np + pick(gaps, sizeof gaps / sizeof gaps[0]);
  c->c0 = next_u32() % 3 ? 0 : (size_t)irand(1, 48);
}

static void test_run(void **state) {
  (void)state;
  check_expected_dwc();
  const dlc_q8_dwc_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  if (!nfam) skip_test("q8_dwc run", "no q8_dwc family on this CPU (needs AVX512-VNNI + VBMI)");
  rng_state = 0x13198A2E03707344ull;
  size_t nps[80], nn = 0;
  for (size_t n = 1; n <= 70; n++) nps[nn++] = n;
  nps[nn++] = 196, nps[nn++] = 784;
  region xr;
  region_open(&xr, XC_REGION_BYTES);
  size_t k = 0;
  for (size_t s = 0; s < nfam; s++)
    for (size_t ni = 0; ni < nn; ni++)
      for (size_t nc = 1; nc <= LANES; nc++)
        for (size_t khq = 0; khq < 10; khq++, k++) {
          run_case c;
          memset(&c, 0, sizeof c);
          c.f = fams[s], c.np = nps[ni], c.nc = nc, c.kh = 1 + khq / 2, c.nq = 1 + khq % 2;
          vary(&c, k);
          /* the arrays hold c0 + 16 channels or more */
          c.c_out = c.c0 + LANES + (next_u32() % 2 ? 0 : (size_t)irand(1, 20));
          run_one(&xr, &c, &run_totals);
        }
  region_close(&xr);
  print_stats("q8_dwc run", &run_totals);
}

/* The plan's arrays have c_out entries: with c_out = c0 + nc (the last block of a layer whose
   channel count is no multiple of 16) mult, bias and mult_f end at a guard page right after
   channel c0 + nc - 1, so a kernel reading the parameters of lanes >= nc faults. */
static void test_run_exact_arrays(void **state) {
  (void)state;
  const dlc_q8_dwc_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  if (!nfam) skip_test("q8_dwc run, exact arrays", "no q8_dwc family on this CPU (needs AVX512-VNNI + VBMI)");
  rng_state = 0xA4093822299F31D0ull;
  static const size_t nps[] = {1, 2, 7, 15, 16, 17, 31, 33, 49, 64, 70, 196};
  region xr;
  region_open(&xr, XC_REGION_BYTES);
  size_t k = 0;
  for (size_t s = 0; s < nfam; s++)
    for (size_t ni = 0; ni < sizeof nps / sizeof nps[0]; ni++)
      for (size_t nc = 1; nc <= LANES; nc++)
        for (size_t v = 0; v < 3; v++, k++) {
          run_case c;
          memset(&c, 0, sizeof c);
          c.f = fams[s], c.np = nps[ni], c.nc = nc, c.kh = (size_t)irand(1, 5), c.nq = (size_t)irand(1, 2);
          vary(&c, k);
          c.c0 = v == 0 ? 0 : (size_t)irand(1, 40);
          c.c_out = c.c0 + nc;
          c.exact = 1;
          run_one(&xr, &c, &exact_totals);
        }
  region_close(&xr);
  print_stats("q8_dwc run, exact arrays", &exact_totals);
}

/* ================================================================ pack then run */

/* The driver's composition on an NCHW tensor of C channels (u8, or s8 through the flip), planes
   h_in x w_in padded with the zero point (pad_t/b/l/r), strides sh, sw, dilation dh in h (taps in
   w are consecutive bytes of the window): per block of 16 channels, pack into the padded
   interleaved plane (filled with zu first), then run with pos[p] = 16 ((p / wo) sh wp + (p % wo) sw),
   ky_step = 16 dh wp and the bias corrected by -zu * sum(w); against sum (x - zp) w + bias
   requantised here. */
static size_t e2e_cases, e2e_outputs;

static void run_e2e(region *xr, const dlc_q8_dwc_family *f, size_t k) {
  const size_t C = (size_t)irand(1, 40), h_in = (size_t)irand(1, 9), w_in = (size_t)irand(1, 9);
  const size_t kh = (size_t)irand(1, 5), kw = (size_t)irand(1, 8), nq = (kw + 3) / 4;
  const size_t sh = (size_t)irand(1, 2), sw = (size_t)irand(1, 2), dh = (size_t)irand(1, 2);
  size_t pt = (size_t)irand(0, (int64_t)kh - 1), pb = (size_t)irand(0, (int64_t)kh - 1);
  size_t pl = (size_t)irand(0, (int64_t)kw - 1), pr = (size_t)irand(0, (int64_t)kw - 1);
  const size_t ekh = dh * (kh - 1) + 1;
  if (h_in + pt + pb < ekh) pb = ekh - h_in - pt;
  if (w_in + pl + pr < kw) pr = kw - w_in - pl;
  const size_t hp = h_in + pt + pb, wp = w_in + pl + pr;
  const size_t ho = (hp - ekh) / sh + 1, wo = (wp - kw) / sw + 1, np = ho * wo, npad = round_up16(np);
  const size_t plane = h_in * w_in;
  const int is_signed = (int)(k % 2);
  const uint8_t flip = is_signed ? 0x80 : 0x00;

  /* tensors */
  uint8_t *x = xmalloc(C * plane);
  const int xk = (int)(k / 2 % 3);
  for (size_t i = 0; i < C * plane; i++) {
    const uint32_t r = next_u32();
    x[i] = xk == 0 ? (uint8_t)r : xk == 1 ? (uint8_t)(r % 2 ? 0xff : 0x00) : (uint8_t)(r % 2 ? 0x7f : 0x80);
  }
  int8_t *wt = xmalloc(C * kh * kw);
  for (size_t i = 0; i < C * kh * kw; i++) wt[i] = w_byte(k % 3 ? W_RANDOM : W_ENDS);
  const int64_t acc_max = (int64_t)kh * (int64_t)nq * 4 * 255 * 128;

  rq_set rs;
  rq_build(&rs, k % 4 == 3 ? RQ_POW2 : k % 4 == 1 ? RQ_NEARTIE : RQ_WIDE, 0, is_signed, C, 0, acc_max);
  dlc_q8_params *q = &rs.q;
  const int32_t xzp = q->x_zero_point;
  const uint8_t zu = (uint8_t)((uint8_t)xzp ^ flip);
  int32_t *user_bias = xmalloc(C * sizeof(int32_t));
  for (size_t ch = 0; ch < C; ch++) {
    int64_t sumw = 0;
    for (size_t i = 0; i < kh * kw; i++) sumw += wt[ch * kh * kw + i];
    user_bias[ch] = q->bias[ch];
    q->bias[ch] = (int32_t)(user_bias[ch] - (int64_t)zu * sumw); /* the plan's corrected bias */
  }
  dlc_q8_derive(q, acc_max, C, (float *)rs.gf.p); /* again: the corrected bias decides bias_s32 */

  /* xc for one block: the padded plane, pos of all npad entries, windows' slack */
  uint32_t *pos = xmalloc(npad * sizeof(uint32_t)), *off = xmalloc(plane * sizeof(uint32_t));
  size_t pmax = 0;
  for (size_t p = 0; p < npad; p++) {
    pos[p] = (uint32_t)(16 * ((p / wo) * sh * wp + (p % wo) * sw));
    pmax = pos[p] > pmax ? pos[p] : pmax;
  }
  const size_t ky_step = 16 * dh * wp;
  size_t extent = pmax + (kh - 1) * ky_step + 64 * nq;
  if (extent < 16 * hp * wp) extent = 16 * hp * wp;
  assert_true(extent <= XC_REGION_BYTES);
  for (size_t j = 0; j < plane; j++) off[j] = (uint32_t)(16 * ((j / w_in + pt) * wp + j % w_in + pl));
  int32_t *wb = xmalloc(kh * nq * LANES * sizeof(int32_t));
  uint8_t *y = xmalloc(C * np);
  memset(y, 0x5A, C * np);
  uint8_t *xc = place(xr, extent, (int)(k % 3 != 0));

  for (size_t c0 = 0; c0 < C; c0 += LANES) {
    const size_t nc = C - c0 < LANES ? C - c0 : LANES;
    memset(xc, zu, extent);
    snprintf(fault_case, sizeof fault_case,
             "%s pack then run: C=%zu c0=%zu nc=%zu plane %zux%zu, k %zux%zu, stride %zux%zu, dil_h %zu, "
             "pads t%zu b%zu l%zu r%zu, %s",
             f->name, C, c0, nc, h_in, w_in, kh, kw, sh, sw, dh, pt, pb, pl, pr, is_signed ? "s8" : "u8");
    fault_names_case("q8_dwc: fault in case: ", 1);
    f->pack(nc, plane, x + c0 * plane, plane, flip, off, xc);
    fault_names_case(NULL, 0);
    for (size_t ky = 0; ky < kh; ky++)
      for (size_t qd = 0; qd < nq; qd++)
        for (size_t ch = 0; ch < LANES; ch++) {
          uint32_t v = 0;
          for (size_t t = 0; t < 4; t++)
            if (ch < nc && 4 * qd + t < kw)
              v |= (uint32_t)(uint8_t)wt[((c0 + ch) * kh + ky) * kw + 4 * qd + t] << (8 * t);
          wb[(ky * nq + qd) * LANES + ch] = (int32_t)v;
        }
    fault_names_case("q8_dwc: fault in case: ", 1);
    f->run(np, xc, pos, kh, ky_step, nq, wb, q, c0, nc, y + c0 * np, np);
    fault_names_case(NULL, 0);
  }
  for (size_t ch = 0; ch < C; ch++)
    for (size_t oy = 0; oy < ho; oy++)
      for (size_t ox = 0; ox < wo; ox++) {
        int64_t acc = 0;
        for (size_t ky = 0; ky < kh; ky++)
          for (size_t kx = 0; kx < kw; kx++) {
            const ptrdiff_t iy = (ptrdiff_t)(oy * sh + ky * dh) - (ptrdiff_t)pt;
            const ptrdiff_t ix = (ptrdiff_t)(ox * sw + kx) - (ptrdiff_t)pl;
            if (iy < 0 || ix < 0 || iy >= (ptrdiff_t)h_in || ix >= (ptrdiff_t)w_in) continue; /* padding: x = zp */
            const uint8_t b = x[ch * plane + (size_t)iy * w_in + (size_t)ix];
            const int32_t xv = is_signed ? (int32_t)(int8_t)b : (int32_t)b;
            acc += (int64_t)(xv - xzp) * wt[(ch * kh + ky) * kw + kx];
          }
        const int32_t want = dlc_q8_requant1(acc + user_bias[ch], q->mult[ch], q);
        const uint8_t yb = y[ch * np + oy * wo + ox];
        const int32_t got = is_signed ? (int32_t)(int8_t)yb : (int32_t)yb;
        e2e_outputs++;
        if (got != want)
          fail_msg("%s pack then run: C=%zu plane %zux%zu, k %zux%zu, stride %zux%zu, dil_h %zu, pads t%zu b%zu l%zu "
                   "r%zu, %s (x zp %d, y zp %d, %s): channel %zu, output (%zu, %zu) = %d, want %d (acc %lld, bias %d)",
                   f->name, C, h_in, w_in, kh, kw, sh, sw, dh, pt, pb, pl, pr, is_signed ? "s8" : "u8", xzp,
                   q->y_zero_point, screen_name(q), ch, oy, ox, got, want, (long long)acc, user_bias[ch]);
      }
  e2e_cases++;
  free(x), free(wt), free(user_bias), free(pos), free(off), free(wb), free(y);
  rq_close(&rs);
}

static void test_pack_then_run(void **state) {
  (void)state;
  const dlc_q8_dwc_family *fams[MAX_FAMILIES];
  const size_t nfam = families(fams);
  if (!nfam) skip_test("q8_dwc pack then run", "no q8_dwc family on this CPU (needs AVX512-VNNI + VBMI)");
  rng_state = 0x082EFA98EC4E6C89ull;
  region xr;
  region_open(&xr, XC_REGION_BYTES);
  for (size_t s = 0; s < nfam; s++)
    for (size_t k = 0; k < 600; k++) run_e2e(&xr, fams[s], k);
  region_close(&xr);
  print_message("[ q8_dwc pack then run ] %zu tensors, %zu outputs\n", e2e_cases, e2e_outputs);
}

int main(void) {
  rng_state = 0xD1B54A32D192ED03ull;
  const int rc = RUN_TESTS(test_pack, test_run, test_run_exact_arrays, test_pack_then_run);
  printf("q8_dwc summary: %zu pack cases, %zu run cases, %zu exact-array run cases, %zu pack-then-run tensors%s\n",
         pack_cases, run_totals.cases, exact_totals.cases, e2e_cases, rc == 77 ? " (skipped)" : rc ? " (FAILED)" : "");
  return rc;
}
