/* test_ukernel_q8_csr.c - the int8 sparse (CSR) micro-kernel of every ISA this machine runs
 * (dlc_q8_csr_spmm_fn, src/sparse_csr/csr_ukernel.h), against an int64 reference written here.
 *
 * Sweep: every row count 0..10 (3-row lockstep tiles and 1-row leftovers) at every pixel count
 * 0..100 (every remainder mod 16 and 32), even per-row nonzero counts that differ from row to
 * row (so a tile's common count and its rows' extras both run), random and extreme values and
 * operands, offsets anywhere in the operand (odd, overlapping, repeated, the same one twice in a
 * pair). Long rows: 65792 maximal products per pixel, within a few hundred of INT32_MAX and of
 * INT32_MIN, next to a 2000-nonzero row, in a tile and as leftovers.
 *
 * Memory: the operand is exactly the contract's readable extent (x + off[i] + round_up(npix, 16)
 * for the largest offset, x + 0 for the smallest) with an inaccessible page right after it or
 * right before it; or each operand row alone in its page, against a guard page at its start or
 * at its end. nnz, val and off lie against guard pages too. y lies between sentinels, with
 * every row's gap past round_up(npix, 16) checked; the inputs must be left unchanged. */
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

#define MAX_ROWS 10
#define MAX_NPIX 100
#define MAX_ROW_NNZ 16        /* per row in the sweep */
#define FENCE_ROWS 8          /* distinct operand rows in the fenced layout */
#define Y_GUARD 37
#define SENTINEL ((int32_t)0x5A5A5A5A)
#define MAX_REPORTS 12

/* ---- helpers ------------------------------------------------------------------------------- */

static size_t round16(size_t n) { return (n + 15) / 16 * 16; }

/* A family must exist where this build has written one, so losing it from a table fails; on a
   CPU with VNNI the x86 tables must carry the VNNI family (src/arch/<isa>/config.c). */
static void check_expected_families(void) {
  CHECK_TABLE_FAMILIES(q8_csr, IF_AVXVNNI(dlc_q8_csr__avxvnni), IF_AVX512VNNI(dlc_q8_csr__avx512vnni));
#if defined(__aarch64__)
  /* the Neon table carries the Neon family (src/arch/arm_neon/config.c), not one it lends */
  const dlc_q8_csr_family *neon = TABLE_FAMILY(DLCONV_ISA_NEON, q8_csr);
  assert_non_null(neon);
  const size_t n = strlen(neon->name);
  assert_true(n > 6 && strcmp(neon->name + n - 6, "__neon") == 0);
#endif
}

static void check_family_fields(const dlc_q8_csr_family *f) {
  assert_non_null(f->name);
  assert_true(strstr(f->name, "q8_csr_") == f->name);
  assert_non_null(f->spmm);
  assert_true(f->nr >= 1);
}

/* Operand rows each alone in a page of its own, pages and guard pages alternating:
   [guard][row 0][guard][row 1]...[row FENCE_ROWS-1][guard]. x is the start of row 0's page;
   row k's page starts 2 * k pages (k * pg int16 elements) after it. */
typedef struct fence {
  void *map;
  size_t map_len, pg;
  int16_t *x;
} fence;

static void fence_open(fence *fc) {
  memset(fc, 0, sizeof *fc);
#ifdef HAVE_GUARD_PAGES
  fc->pg = page_size();
  fc->map_len = (2 * FENCE_ROWS + 1) * fc->pg;
  fc->map = mmap(NULL, fc->map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  assert_true(fc->map != MAP_FAILED);
  for (size_t k = 0; k <= FENCE_ROWS; k++)
    assert_int_equal(mprotect((unsigned char *)fc->map + 2 * k * fc->pg, fc->pg, PROT_NONE), 0);
#else
  fc->pg = 4096;
  fc->map_len = (2 * FENCE_ROWS + 1) * fc->pg;
  fc->map = malloc(fc->map_len);
  assert_non_null(fc->map);
#endif
  fc->x = (int16_t *)(void *)((unsigned char *)fc->map + fc->pg);
}

static void fence_close(fence *fc) {
#ifdef HAVE_GUARD_PAGES
  munmap(fc->map, fc->map_len);
#else
  free(fc->map);
#endif
}

/* Element offset from fc->x of the start of row k's page, and the page's length in elements. */
static size_t fence_row(const fence *fc, size_t k) { return k * fc->pg; }
static size_t fence_len(const fence *fc) { return fc->pg / sizeof(int16_t); }

/* ---- values --------------------------------------------------------------------------------- */

/* V_MAX_POS: every product -128 * -255 = +32640; V_MAX_NEG: every product -128 * 255 = -32640;
   V_EXTREMES: values in {-128, 127}, operand in {-255, 255}; V_RANDOM: uniform, with zeros and
   the extremes sprinkled in. */
enum { V_RANDOM, V_MAX_POS, V_MAX_NEG, V_EXTREMES, N_VALUE_KINDS };
static const char *const vkind_str[N_VALUE_KINDS] = {"random", "max+", "max-", "extremes"};

static int16_t val_value(int kind) {
  switch (kind) {
    case V_MAX_POS:
    case V_MAX_NEG: return -128;
    case V_EXTREMES: return next_u32() & 1 ? -128 : 127;
    default: {
      const uint32_t r = next_u32() % 16;
      return r == 0 ? -128 : r == 1 ? 127 : r == 2 ? 0 : (int16_t)irand(-128, 127);
    }
  }
}

static int16_t x_value(int kind) {
  switch (kind) {
    case V_MAX_POS: return -255;
    case V_MAX_NEG: return 255;
    case V_EXTREMES: return next_u32() & 1 ? -255 : 255;
    default: {
      const uint32_t r = next_u32() % 16;
      return r == 0 ? -255 : r == 1 ? 255 : r == 2 ? 0 : (int16_t)irand(-255, 255);
    }
  }
}

/* Outside the operand's range: lanes the kernel may read but must never store. */
static int16_t junk_value(void) { return (int16_t)(next_u32() & 1 ? irand(-32768, -20000) : irand(20000, 32767)); }

/* ---- one call, checked ---------------------------------------------------------------------- */

typedef struct seg {
  size_t lo, len; /* elements of x the kernel may read, snapshotted to see it writes none */
} seg;

typedef struct qcall {
  const dlc_q8_csr_family *f;
  size_t rows, npix, ldy, ymis;
  const int16_t *x;
  const int32_t *nnz;
  const int16_t *val;
  const int32_t *off;
  size_t total; /* sum of nnz */
  size_t nseg;
  seg segs[FENCE_ROWS];
  const char *what;
} qcall;

typedef struct counts {
  size_t cases, nonzeros, pixels, tiles_mixed, long_cases, fenced, bad;
  int64_t max_abs;
} counts;

static void report(counts *c, const qcall *q, const char *fmt, ...) {
  c->bad++;
  if (c->bad > MAX_REPORTS) return;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  print_error("%s rows=%zu npix=%zu ldy=%zu y+%zu %s: %s\n", q->f->name, q->rows, q->npix, q->ldy, q->ymis,
              q->what, msg);
}

/* A kernel that touches a guard page is reported as a failure of its case (which array, which
   element) instead of ending the whole test with SIGSEGV, and the other cases still run. */
typedef struct spmm_call {
  const qcall *q;
  int32_t *y;
} spmm_call;
static void call_spmm(void *arg) {
  const spmm_call *c = arg;
  const qcall *q = c->q;
  q->f->spmm(q->rows, q->npix, q->x, q->nnz, q->val, q->off, c->y, q->ldy);
}
static int guarded_spmm(const qcall *q, int32_t *y, void **addr) {
  spmm_call c = {q, y};
  return fault_trap(call_spmm, &c, addr);
}

/* Which array addr is in or next to, and where. */
static void describe_fault(char *out, size_t len, const qcall *q, const void *addr) {
  const char *a = addr;
  const struct {
    const char *name;
    const void *p;
    size_t n, es;
  } arrays[] = {{"nnz", q->nnz, q->rows, 4}, {"val", q->val, q->total, 2}, {"off", q->off, q->total, 4}};
  for (size_t k = 0; k < 3; k++) {
    const ptrdiff_t d = a - (const char *)arrays[k].p;
    if (d >= -4096 && d < (ptrdiff_t)(arrays[k].n * arrays[k].es) + 4096) {
      snprintf(out, len, "%s byte %td (it has %zu elements of %zu bytes)", arrays[k].name, d, arrays[k].n,
               arrays[k].es);
      return;
    }
  }
  int32_t lo = INT32_MAX, hi = INT32_MIN;
  for (size_t i = 0; i < q->total; i++) {
    lo = q->off[i] < lo ? q->off[i] : lo;
    hi = q->off[i] > hi ? q->off[i] : hi;
  }
  const ptrdiff_t d = a - (const char *)q->x;
  snprintf(out, len, "operand byte %td = element x + %td (offsets %d..%d, round_up(npix, 16) = %zu)", d,
           d >= 0 ? d / 2 : -((-d + 1) / 2), (int)lo, (int)hi, round16(q->npix));
}

static void run_qcall(const qcall *q, counts *c) {
  const size_t rows = q->rows, npix = q->npix, ldy = q->ldy, r16 = round16(npix);
  assert_true(rows == 0 || ldy >= r16);
  size_t sum = 0;
  for (size_t r = 0; r < rows; r++) {
    assert_true(q->nnz[r] >= 0 && q->nnz[r] % 2 == 0); /* the contract's precondition */
    sum += (size_t)q->nnz[r];
  }
  assert_true(sum == q->total);

  /* snapshots of everything the kernel reads */
  int32_t *nnz0 = xalloc_slack((rows + 1) * sizeof(int32_t)), *off0 = xalloc_slack((q->total + 1) * sizeof(int32_t));
  int16_t *val0 = xalloc_slack((q->total + 1) * sizeof(int16_t));
  memcpy(nnz0, q->nnz, rows * sizeof(int32_t));
  memcpy(off0, q->off, q->total * sizeof(int32_t));
  memcpy(val0, q->val, q->total * sizeof(int16_t));
  int16_t *xs[FENCE_ROWS];
  for (size_t s = 0; s < q->nseg; s++) {
    xs[s] = xalloc_slack((q->segs[s].len + 1) * sizeof(int16_t));
    memcpy(xs[s], q->x + q->segs[s].lo, q->segs[s].len * sizeof(int16_t));
  }

  const size_t body = rows ? (rows - 1) * ldy + r16 : 0, ylen = Y_GUARD + q->ymis + body + Y_GUARD;
  int32_t *buf = xalloc_slack(ylen * sizeof(int32_t));
  for (size_t i = 0; i < ylen; i++) buf[i] = SENTINEL;
  int32_t *y = buf + Y_GUARD + q->ymis;

  void *fault = NULL;
  if (guarded_spmm(q, y, &fault)) {
    char where[256];
    describe_fault(where, sizeof where, q, fault);
    report(c, q, "touched a guard page: %s", where);
    free(buf);
    for (size_t s = 0; s < q->nseg; s++) free(xs[s]);
    free(nnz0), free(off0), free(val0);
    c->cases++;
    return;
  }

  if (memcmp(nnz0, q->nnz, rows * sizeof(int32_t)) || memcmp(off0, q->off, q->total * sizeof(int32_t)) ||
      memcmp(val0, q->val, q->total * sizeof(int16_t)))
    report(c, q, "wrote to nnz, val or off");
  for (size_t s = 0; s < q->nseg; s++)
    if (memcmp(xs[s], q->x + q->segs[s].lo, q->segs[s].len * sizeof(int16_t))) report(c, q, "wrote to the operand");

  /* nothing outside [r*ldy, r*ldy + round_up(npix, 16)) of a row r < rows */
  for (size_t i = 0; i < ylen; i++) {
    const ptrdiff_t e = (ptrdiff_t)i - (ptrdiff_t)(Y_GUARD + q->ymis);
    const int inside = e >= 0 && r16 && (size_t)e / ldy < rows && (size_t)e % ldy < r16;
    if (!inside && buf[i] != SENTINEL) {
      report(c, q, "wrote y[%td] (row %td, column %td) outside the rows' round_up(npix, 16)", e,
             e >= 0 ? e / (ptrdiff_t)ldy : -1, e >= 0 ? e % (ptrdiff_t)ldy : e);
      break;
    }
  }

  /* the first npix of every row, exactly */
  int64_t *acc = xalloc_slack((npix + 1) * sizeof(int64_t));
  size_t i0 = 0;
  for (size_t r = 0; r < rows; r++) {
    const size_t n = (size_t)q->nnz[r];
    for (size_t p = 0; p < npix; p++) acc[p] = 0;
    for (size_t i = i0; i < i0 + n; i++) {
      const int64_t v = q->val[i];
      const int16_t *xr = q->x + q->off[i];
      for (size_t p = 0; p < npix; p++) acc[p] += v * xr[p];
    }
    for (size_t p = 0; p < npix; p++) {
      assert_true(acc[p] >= INT32_MIN && acc[p] <= INT32_MAX); /* the test's own precondition */
      const int64_t m = acc[p] < 0 ? -acc[p] : acc[p];
      if (m > c->max_abs) c->max_abs = m;
      if (y[r * ldy + p] != acc[p]) {
        report(c, q, "row %zu (nnz %zu) pixel %zu: got %d, want %lld", r, n, p, y[r * ldy + p], (long long)acc[p]);
        break;
      }
    }
    i0 += n;
  }
  /* 3-row tiles whose counts differ: the lockstep part and the extras both ran (AVX2's tile) */
  for (size_t r = 0; r + 3 <= rows; r += 3) {
    const int32_t a = q->nnz[r], b = q->nnz[r + 1], d = q->nnz[r + 2];
    const int32_t lo = a < b ? (a < d ? a : d) : (b < d ? b : d);
    if (lo > 0 && (a != lo || b != lo || d != lo)) c->tiles_mixed++;
  }
  c->cases++;
  c->nonzeros += q->total;
  c->pixels += rows * npix;

  free(acc);
  free(buf);
  for (size_t s = 0; s < q->nseg; s++) free(xs[s]);
  free(nnz0), free(off0), free(val0);
}

/* ---- the sweep ------------------------------------------------------------------------------ */

/* Offsets: O_RANDOM anywhere (any parity, overlapping); O_FEW a pool of 1-3 (repeats, often the
   same twice in a pair); O_PAIR_SAME every pair's two alike; O_SLIDE one element apart,
   descending; O_FENCED each operand row alone in a page against a guard at its start or end. */
enum { O_RANDOM, O_FEW, O_PAIR_SAME, O_SLIDE, O_FENCED, N_OFF_KINDS };
static const char *const okind_str[N_OFF_KINDS] = {"random", "few", "pair-same", "slide", "fenced"};

enum { C_RANDOM, C_EQUAL, C_ONE_ZERO, C_RAMP, C_ZERO, N_COUNT_KINDS };
static const char *const ckind_str[N_COUNT_KINDS] = {"random", "equal", "one-zero", "ramp", "zero"};

typedef struct bufs {
  region ax, anz, aval, aoff;
  fence fc;
} bufs;

static void sweep_case(const dlc_q8_csr_family *f, bufs *b, size_t rows, size_t npix, size_t rep, counts *c) {
  const size_t r16 = round16(npix);
  const int vkind = (int)(next_u32() % N_VALUE_KINDS);
  const int okind = (int)(next_u32() % N_OFF_KINDS);
  const int ckind = next_u32() % 24 == 0 ? C_ZERO : (int)(next_u32() % (N_COUNT_KINDS - 1));
  const int at_end = (int)(next_u32() & 1);

  int32_t cnt[MAX_ROWS];
  const int32_t eq = 2 * (int32_t)irand(1, MAX_ROW_NNZ / 2), shift = (int32_t)irand(0, 8);
  const size_t zero_row = rows ? (size_t)irand(0, (int64_t)rows - 1) : 0;
  for (size_t r = 0; r < rows; r++) {
    switch (ckind) {
      case C_EQUAL: cnt[r] = eq; break;
      case C_RAMP: cnt[r] = 2 * (((int32_t)r + shift) % (MAX_ROW_NNZ / 2 + 1)); break;
      case C_ZERO: cnt[r] = 0; break;
      default: cnt[r] = r == zero_row && ckind == C_ONE_ZERO ? 0 : 2 * (int32_t)irand(0, MAX_ROW_NNZ / 2); break;
    }
  }
  size_t total = 0;
  for (size_t r = 0; r < rows; r++) total += (size_t)cnt[r];

  /* nnz, val and off exactly sized against a guard page (after, or before for nnz when val and
     off are after, and the other way round) */
  int32_t *nnz = region_place(&b->anz, rows * sizeof(int32_t), !at_end);
  int16_t *val = region_place(&b->aval, total * sizeof(int16_t), at_end);
  int32_t *off = region_place(&b->aoff, total * sizeof(int32_t), at_end);
  memcpy(nnz, cnt, rows * sizeof(int32_t));
  for (size_t i = 0; i < total; i++) val[i] = val_value(vkind);

  qcall q;
  memset(&q, 0, sizeof q);
  q.f = f, q.rows = rows, q.npix = npix, q.nnz = nnz, q.val = val, q.off = off, q.total = total;
  if (okind == O_FENCED) {
    fence *fc = &b->fc;
    const size_t k_rows = (size_t)irand(1, FENCE_ROWS), plen = fence_len(fc);
    size_t start[FENCE_ROWS];
    assert_true(r16 <= plen);
    for (size_t k = 0; k < k_rows; k++) {
      /* the row's readable extent [start, start + r16) against the page's start or end */
      start[k] = fence_row(fc, k) + (next_u32() & 1 ? plen - r16 : 0);
      for (size_t e = 0; e < r16; e++) fc->x[start[k] + e] = junk_value();
      for (size_t e = 0; e < npix; e++) fc->x[start[k] + e] = x_value(vkind);
      q.segs[q.nseg++] = (seg){fence_row(fc, k), plen};
    }
    for (size_t i = 0; i < total; i += 2) {
      off[i] = (int32_t)start[next_u32() % k_rows];
      off[i + 1] = next_u32() % 4 == 0 ? off[i] : (int32_t)start[next_u32() % k_rows];
    }
    q.x = fc->x;
    c->fenced++;
  } else {
    const size_t span_max = (size_t)irand(0, (int64_t)(3 * r16 + 40));
    const size_t pool_n = (size_t)irand(1, 3);
    size_t pool[3];
    for (size_t k = 0; k < 3; k++) pool[k] = (size_t)irand(0, (int64_t)span_max);
    for (size_t i = 0; i < total; i++) {
      switch (okind) {
        case O_FEW: off[i] = (int32_t)pool[next_u32() % pool_n]; break;
        case O_PAIR_SAME: off[i] = i % 2 ? off[i - 1] : (int32_t)irand(0, (int64_t)span_max); break;
        case O_SLIDE: off[i] = (int32_t)(total - 1 - i); break;
        default: off[i] = (int32_t)irand(0, (int64_t)span_max); break;
      }
    }
    /* the smallest offset is 0 and the operand ends at the largest + round_up(npix, 16):
       exactly the readable extent, against a guard page at one end */
    int32_t lo = INT32_MAX, hi = 0;
    for (size_t i = 0; i < total; i++) lo = off[i] < lo ? off[i] : lo;
    for (size_t i = 0; i < total; i++) off[i] -= lo;
    for (size_t i = 0; i < total; i++) hi = off[i] > hi ? off[i] : hi;
    const size_t span = total ? (size_t)hi + r16 : 0;
    int16_t *x = region_place(&b->ax, span * sizeof(int16_t), at_end);
    /* past the largest offset's npix no row's pixel reads: junk there */
    for (size_t e = 0; e < span; e++) x[e] = e < (size_t)hi + npix ? x_value(vkind) : junk_value();
    q.x = x;
    q.nseg = 1;
    q.segs[0] = (seg){0, span};
  }

  /* ldy: exactly round_up(npix, 16), a little more, or far more (rows a plane apart) */
  q.ldy = r16 + (rep == 0 ? 0 : next_u32() % 16 == 0 ? 3137 : (size_t)irand(1, 40));
  q.ymis = (size_t)irand(0, 15);
  char what[160];
  snprintf(what, sizeof what, "values=%s offsets=%s counts=%s %s", vkind_str[vkind], okind_str[okind],
           ckind_str[ckind], at_end ? "guard-after" : "guard-before");
  q.what = what;
  run_qcall(&q, c);
}

/* ---- long rows ------------------------------------------------------------------------------ */

/* 65792 * 32640 = 2147450880: within 32767 of INT32_MAX. */
#define LONG_N 65792
#define LONG_TOTAL (4 * (size_t)LONG_N + 2000 + 6)

/* Five rows, a 3-row tile and two leftovers:
   0: LONG_N products +32640 and a pair (127 * 255, 0 * -255): 2147483265 = INT32_MAX - 382;
   1: LONG_N products -32640 and a pair (0 * x, -128 * 255): -2147483520 = INT32_MIN + 128;
   2: 2000 products +32640 (the tile's common count: rows 0 and 1 run their extras);
   3: LONG_N mixed extremes (+-32640 at random, the sum differing from pixel to pixel);
   4: LONG_N products +32640 and a pair (0 * x, -128 * -255): 2147483520 = INT32_MAX - 127.
   The operand: [A: all -255][B: all +255][C: random -255 / +255], offsets anywhere inside a
   region (any parity); row 4's zero points at C's last possible start, so the operand ends
   exactly at the readable extent, against the guard page. */
static void long_case(const dlc_q8_csr_family *f, bufs *b, size_t npix, counts *c) {
  const size_t r16 = round16(npix), reg = 2 * r16 + 64, span = 3 * reg;
  const int32_t cnt[5] = {LONG_N + 2, LONG_N + 2, 2000, LONG_N, LONG_N + 2};
  size_t total = 0;
  for (int r = 0; r < 5; r++) total += (size_t)cnt[r];
  assert_true(total == LONG_TOTAL);
  int32_t *nnz = region_place(&b->anz, 5 * sizeof(int32_t), 1);
  int16_t *val = region_place(&b->aval, total * sizeof(int16_t), 1);
  int32_t *off = region_place(&b->aoff, total * sizeof(int32_t), 1);
  int16_t *x = region_place(&b->ax, span * sizeof(int16_t), 1);
  memcpy(nnz, cnt, sizeof cnt);
  for (size_t e = 0; e < span; e++) x[e] = e < reg ? -255 : e < 2 * reg ? 255 : (next_u32() & 1 ? -255 : 255);
  const size_t ra = 0, rb = reg, rc = 2 * reg, last = reg - r16; /* starts within a region: 0..last */
  size_t i = 0;
#define PUT(v, region) (val[i] = (int16_t)(v), off[i] = (int32_t)((region) + (size_t)irand(0, (int64_t)last)), i++)
  const size_t pair0 = 2 * (size_t)irand(0, LONG_N / 2), pair1 = 2 * (size_t)irand(0, LONG_N / 2);
  for (size_t k = 0; k < LONG_N + 2; k++) { /* row 0 */
    if (k == pair0) PUT(127, rb);
    else if (k == pair0 + 1) PUT(0, ra);
    else PUT(-128, ra);
  }
  for (size_t k = 0; k < LONG_N + 2; k++) { /* row 1 */
    if (k == pair1) PUT(0, rc);
    else PUT(-128, rb);
  }
  for (size_t k = 0; k < 2000; k++) PUT(-128, ra);                           /* row 2 */
  for (size_t k = 0; k < LONG_N; k++) PUT(next_u32() & 1 ? -128 : 127, rc); /* row 3 */
  for (size_t k = 0; k < LONG_N + 1; k++) PUT(-128, ra);                     /* row 4 */
  PUT(0, rc);
  off[i - 1] = (int32_t)(rc + last);
#undef PUT
  assert_true(i == total);

  qcall q;
  memset(&q, 0, sizeof q);
  q.f = f, q.rows = 5, q.npix = npix, q.x = x, q.nnz = nnz, q.val = val, q.off = off, q.total = total;
  q.ldy = r16 + (npix % 2 ? 5 : 0);
  q.ymis = npix % 7;
  q.nseg = 1;
  q.segs[0] = (seg){0, span};
  q.what = "long rows";
  run_qcall(&q, c);
  c->long_cases++;
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void test_q8_csr(void **state) {
  (void)state;
  check_expected_families();
  family_ref refs[MAX_FAMILIES]; /* a VNNI CPU's tables no longer carry avx2's: it too, by name */
  size_t nrefs = 0;
  ALL_FAMILY_REFS(refs, nrefs, q8_csr);
  size_t n_seen = 0, bad = 0;
  static const size_t long_npix[] = {1, 16, 17, 33, 100};
  bufs b;
  region_open(&b.ax, 64 * 1024);
  region_open(&b.anz, (MAX_ROWS + 1) * sizeof(int32_t));
  region_open(&b.aval, LONG_TOTAL * sizeof(int16_t));
  region_open(&b.aoff, LONG_TOTAL * sizeof(int32_t));
  fence_open(&b.fc);
  for (size_t s = 0; s < nrefs; s++) {
    const char *label = refs[s].label;
    const dlc_q8_csr_family *f = refs[s].family;
    if (!f) continue;
    if (family_seen_before(refs, s)) {
      print_message("[ q8_csr ] %s: the %s family (checked above)\n", label, f->name);
      continue;
    }
    n_seen++;
    check_family_fields(f);
    counts c;
    memset(&c, 0, sizeof c);
    for (size_t rows = 0; rows <= MAX_ROWS; rows++)
      for (size_t npix = 0; npix <= MAX_NPIX; npix++)
        for (size_t rep = 0; rep < 3; rep++) sweep_case(f, &b, rows, npix, rep, &c);
    const size_t sweep_cases = c.cases;
    for (size_t k = 0; k < sizeof long_npix / sizeof long_npix[0]; k++) long_case(f, &b, long_npix[k], &c);
    print_message("[ q8_csr ] %s (%s, nr=%zu): %zu sweep cases (rows 0..%d x npix 0..%d, %zu fenced), %zu long-row "
                  "cases, %zu nonzeros, %zu output pixels, %zu mixed-count 3-row tiles, max |y| %lld, %zu failures\n",
                  label, f->name, f->nr, sweep_cases, MAX_ROWS, MAX_NPIX, c.fenced, c.long_cases,
                  c.nonzeros, c.pixels, c.tiles_mixed, (long long)c.max_abs, c.bad);
    assert_true(c.max_abs >= 2147483000ll); /* the long rows reached the edge of s32 */
    bad += c.bad;
  }
  region_close(&b.ax), region_close(&b.anz), region_close(&b.aval), region_close(&b.aoff);
  fence_close(&b.fc);
  assert_true(n_seen >= 1);
  if (bad) fail_msg("%zu q8_csr kernel cases failed (first %d shown above)", bad, MAX_REPORTS);
}

int main(void) {
  rng_state = 0x9E3779B97F4A7C15ull;
  return RUN_TESTS(test_q8_csr);
}
