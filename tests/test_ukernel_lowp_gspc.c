/* test_ukernel_lowp_gspc.c - the F16 and int8 grouped spatial pack (GSPC) micro-kernels and input
 * repacks of every ISA this machine runs (src/gspc/lowp_gspc_ukernel.h), against naive references
 * written here (double for F16, int64 for int8; not the library's code):
 *
 *   kernels: every tile (gpv, nv, r, w) each family offers, both output layouts, one and several
 *            channel tiles (t_i the family's and smaller, ti_last < t_i), one and three taps,
 *            padded strides, a lane permutation; the input and the weights exactly as large as
 *            the contract lets a kernel read, against guard pages, with every element it must not
 *            read poisoned (NaN / out-of-range pairs); every output element outside the region the
 *            contract lets it write must keep its sentinel. int8 also at the extreme operands
 *            (-255 x -128, 255 x 127) and at the longest reduction the plan accepts.
 *   packs:   NCHW-like, NHWC-like and arbitrary strides, gpv 1..8 with ng < gpv, n_c 1..20,
 *            nq 1..40, empty / full / partial column ranges, u8 and s8 with several zero points,
 *            sources against guard pages, every dst element checked, gaps kept.
 *
 *   meson test -C <build> ukernel_lowp_gspc      (or run <build>/tests/test_ukernel_lowp_gspc)
 */
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
#include "support/alloc.h"
#include "support/compare.h"
#include "support/fault.h"
#include "support/guard_pages.h"
#include "support/half.h"
#include "support/kernel_tables.h"
#include "support/rng.h"
#include "support/skip.h"

#define GUARD 37
#define SENT 0xA5A5A5A5u /* 32-bit sentinel of output / dst buffers (a NaN as a float) */
#define MAX_NVL 64

static uint32_t get32(const void *buf, size_t i) {
  uint32_t v;
  memcpy(&v, (const char *)buf + 4 * i, 4);
  return v;
}
static void put32(void *buf, size_t i, uint32_t v) { memcpy((char *)buf + 4 * i, &v, 4); }

/* Where addr lies relative to an operand of n elements of es bytes starting at mem, whose element
   k is the contract's element k + first. */
static int describe_addr(char *out, size_t len, const char *name, const void *mem, size_t n, size_t es,
                         ptrdiff_t first, const void *addr) {
  const ptrdiff_t d = (const char *)addr - (const char *)mem;
  if (d < -65536 || d > (ptrdiff_t)(n * es) + 65536) return 0;
  snprintf(out, len, "%s element %td (byte %td of the operand), the contract's readable range is [%td, %td]", name,
           (d >= 0 ? d / (ptrdiff_t)es : -((-d + (ptrdiff_t)es - 1) / (ptrdiff_t)es)) + first, d, first,
           first + (ptrdiff_t)n - 1);
  return 1;
}

static size_t g_failures; /* failed cases of the running test */
#define MAX_REPORTED_CASES 40

/* A finite binary16 of either sign, 2^-24 .. 2^6 (subnormals and zero included). */
static uint16_t rand_half(void) {
  const uint32_t r = next_u32();
  const uint32_t e = (r >> 11) % 21; /* 0 (subnormal / zero) .. 20 */
  return (uint16_t)(((r >> 16) & 0x8000u) | (e << 10) | (r & 1023u));
}

/* A family must exist where this build has written one, so losing it from a table fails; on a
   CPU with VNNI the x86 tables must carry the VNNI family (src/arch/<isa>/config.c). */
#if defined(DLC_HAVE_AVX512VNNI)
/* the avx512 table's family: 16 lanes on zmm (x86_avx512/lowp_gspc_avx512vnni_zmm.c); the 8-lane
   avx512vnni family is tested by name */
#endif
static void check_expected_families(void) {
  CHECK_TABLE_FAMILIES(lowp_gspc, IF_AVXVNNI(dlc_lowp_gspc__avxvnni), IF_AVX512VNNI(dlc_lowp_gspc__avx512vnni_zmm));
#if defined(__aarch64__)
  /* the Neon table carries the Neon family (src/arch/arm_neon/config.c), not one it lends */
  const dlc_lowp_gspc_family *neon = TABLE_FAMILY(DLCONV_ISA_NEON, lowp_gspc);
  assert_non_null(neon);
  assert_string_equal(neon->isa, "neon");
#endif
}

static void check_family_fields(const dlc_lowp_gspc_family *f) {
  assert_non_null(f->isa);
  assert_non_null(f->get_f16);
  assert_non_null(f->get_q8);
  assert_non_null(f->pack_f16);
  assert_non_null(f->pack_q8);
  assert_true(f->t_o >= 1 && 4 * f->t_o <= MAX_NVL);
  assert_true(f->t_i_f16 >= 1 && f->t_i_q8 >= 1);
  assert_true(f->max_gpv >= 1 && f->max_gpv <= f->t_o);
  /* no tile for sizes that are not tiles */
  assert_null(f->get_f16(3, 1, 1, 1));
  assert_null(f->get_q8(3, 1, 1, 1));
  assert_null(f->get_f16(1, 0, 1, 1));
  assert_null(f->get_q8(1, 1, 0, 1));
  assert_null(f->get_f16(1, 1, 1, 0));
  assert_null(f->get_q8(2 * f->max_gpv, 1, 1, 1));
}

/* ---------------------------------------------------------------------------------------------
 * Micro-kernels. */

/* operand values: random; every product -255 x -128 (the largest), 255 x 127, 255 x -128 (the
   most negative); random extremes */
enum { V_RANDOM, V_NEG_NEG, V_POS_POS, V_POS_NEG, V_MIXED_EXTREMES, N_VALUE_KINDS };

static int16_t q8_in_value(int kind) {
  if (kind == V_RANDOM) return (int16_t)irand(-255, 255);
  if (kind == V_MIXED_EXTREMES) return next_u32() & 1 ? -255 : 255;
  return kind == V_NEG_NEG ? -255 : 255;
}
static int16_t q8_w_value(int kind) {
  if (kind == V_RANDOM) return (int16_t)irand(-128, 127);
  if (kind == V_MIXED_EXTREMES) return next_u32() & 1 ? -128 : 127;
  return kind == V_POS_POS ? 127 : -128;
}

typedef struct kspec {
  const dlc_lowp_gspc_family *f;
  dlc_f16_gspc_ukernel_fn kf;
  dlc_q8_gspc_ukernel_fn kq;
  int q8;
  size_t gpv, nv, rn, wn;
  int cm;                 /* channel_major */
  size_t n_ct, t_i, ti_last, n_tap;
  int use_perm, kind;
  int tight;              /* minimal strides (the long reduction) */
} kspec;

static int g_at_end; /* alternates which end of each operand meets its guard page */

typedef struct kcall {
  const kspec *s;
  const dlc_lowp_gspc_params *prm;
  const void *in, *w;
  void *buf;
} kcall;
static void call_kernel(void *arg) {
  const kcall *c = arg;
  if (c->s->q8) c->s->kq(c->prm, c->in, c->w, c->buf);
  else c->s->kf(c->prm, c->in, c->w, c->buf);
}

static void run_kcase(const kspec *s) {
  const dlc_lowp_gspc_family *f = s->f;
  const size_t gpv = s->gpv, nvl = s->nv * f->t_o, rn = s->rn, wn = s->wn, np = rn * wn, t_i = s->t_i;
  const size_t n_ct = s->n_ct, n_tap = s->n_tap, ti_last = s->ti_last;
  assert_true(nvl <= MAX_NVL && ti_last >= 1 && ti_last <= t_i && n_tap >= 1 && n_tap <= 3);
  dlc_lowp_gspc_params prm;
  memset(&prm, 0, sizeof prm);
  ptrdiff_t tap_off[3] = {0, 0, 0}, ti_s, r_s, ct_s;
  int32_t perm[MAX_NVL];

  /* input geometry: rows of wn gpv-pixels plus padding, row r+1 one or two packed rows (stride h)
     below, taps spread over columns and rows, channel tiles apart */
  if (s->tight) {
    ti_s = (ptrdiff_t)(wn * gpv);
    r_s = (ptrdiff_t)(t_i * (size_t)ti_s) + 1;
    ct_s = (ptrdiff_t)(t_i * (size_t)ti_s + (rn - 1) * (size_t)r_s);
  } else {
    ti_s = (ptrdiff_t)(wn * gpv) + (ptrdiff_t)irand(0, 3 * (int64_t)gpv + 2);
    r_s = (ptrdiff_t)t_i * ti_s * (ptrdiff_t)irand(1, 2) + (ptrdiff_t)irand(0, 5);
    if (n_tap == 1) {
      tap_off[0] = (ptrdiff_t)irand(0, 3);
    } else {
      ptrdiff_t o[3] = {0, (ptrdiff_t)(irand(1, 3) * (int64_t)gpv + irand(0, 1)),
                        r_s * (ptrdiff_t)irand(1, 2) + (ptrdiff_t)(irand(0, 2) * (int64_t)gpv)};
      /* in a random order (the kernel must not assume increasing offsets) */
      const size_t rot = next_u32() % 3;
      for (size_t t = 0; t < 3; t++) tap_off[t] = o[(t + rot) % 3];
    }
    ptrdiff_t maxtap = 0;
    for (size_t t = 0; t < n_tap; t++) maxtap = tap_off[t] > maxtap ? tap_off[t] : maxtap;
    ct_s = (ptrdiff_t)(rn - 1) * r_s + (ptrdiff_t)t_i * ti_s + maxtap + (ptrdiff_t)irand(0, 7);
  }
  prm.n_ct = n_ct;
  prm.t_i = t_i;
  prm.ti_last = ti_last;
  prm.n_tap = n_tap;
  prm.tap_off = tap_off;
  prm.in_ti_stride = ti_s;
  prm.in_ct_stride = ct_s;
  prm.in_r_stride = r_s;
  prm.channel_major = s->cm;
  if (s->use_perm) {
    for (size_t j = 0; j < nvl; j++) perm[j] = (int32_t)j;
    for (size_t j = nvl - 1; j > 0; j--) {
      const size_t k = (size_t)irand(0, (int64_t)j);
      const int32_t tmp = perm[j];
      perm[j] = perm[k];
      perm[k] = tmp;
    }
    prm.perm = perm;
  }

  /* the elements the contract lets the kernel read: (ct, tap, ti < nti, r) runs of wn*gpv */
  ptrdiff_t lo = PTRDIFF_MAX, hi = PTRDIFF_MIN;
  for (size_t ct = 0; ct < n_ct; ct++) {
    const size_t nti = ct + 1 < n_ct ? t_i : ti_last;
    for (size_t t = 0; t < n_tap; t++)
      for (size_t ti = 0; ti < nti; ti++)
        for (size_t r = 0; r < rn; r++) {
          const ptrdiff_t b = (ptrdiff_t)ct * ct_s + tap_off[t] + (ptrdiff_t)ti * ti_s + (ptrdiff_t)r * r_s;
          lo = b < lo ? b : lo;
          hi = b + (ptrdiff_t)(wn * gpv) > hi ? b + (ptrdiff_t)(wn * gpv) : hi;
        }
  }
  const size_t n_in = (size_t)(hi - lo);
  char *readable = calloc(n_in, 1);
  assert_non_null(readable);
  for (size_t ct = 0; ct < n_ct; ct++) {
    const size_t nti = ct + 1 < n_ct ? t_i : ti_last;
    for (size_t t = 0; t < n_tap; t++)
      for (size_t ti = 0; ti < nti; ti++)
        for (size_t r = 0; r < rn; r++) {
          const ptrdiff_t b = (ptrdiff_t)ct * ct_s + tap_off[t] + (ptrdiff_t)ti * ti_s + (ptrdiff_t)r * r_s - lo;
          memset(readable + b, 1, wn * gpv);
        }
  }
  gbuf gin, gw;
  g_at_end ^= 1;
  void *in_mem = gbuf_open(&gin, n_in * 4, g_at_end);
  /* in points at the window origin: element i of the contract is in_mem[i - lo] */
  for (size_t i = 0; i < n_in; i++) {
    uint32_t v;
    if (!readable[i]) {
      v = s->q8 ? 0x80017FFFu : 0x7FC00000u; /* (32767, -32767) / NaN: reading it shows */
    } else if (s->q8) {
      const int16_t a = q8_in_value(s->kind), b = q8_in_value(s->kind);
      v = (uint32_t)(uint16_t)a | ((uint32_t)(uint16_t)b << 16);
    } else {
      const float x = 4.0f * frand();
      memcpy(&v, &x, 4);
    }
    put32(in_mem, i, v);
  }

  /* weights [ct][tap][ti][NV*T_O] (int8: [..][2]); the unused tail of the last channel tile
     poisoned */
  const size_t cpt = s->q8 ? 2 : 1, nw = n_ct * n_tap * t_i * nvl * cpt;
  uint16_t *w = gbuf_open(&gw, nw * 2, !g_at_end);
  assert_true(((uintptr_t)w & (s->q8 ? 31u : 15u)) == 0);
  for (size_t ct = 0; ct < n_ct; ct++)
    for (size_t t = 0; t < n_tap; t++)
      for (size_t ti = 0; ti < t_i; ti++)
        for (size_t e = 0; e < nvl * cpt; e++) {
          const size_t i = ((ct * n_tap + t) * t_i + ti) * nvl * cpt + e;
          const int unused = ct + 1 == n_ct && ti >= ti_last;
          if (s->q8) w[i] = unused ? (uint16_t)(e & 1 ? 0x8000u : 0x7FFFu) : (uint16_t)q8_w_value(s->kind);
          else w[i] = unused ? (uint16_t)0x7E00u : rand_half();
        }

  /* the output: the region the kernel may write and the elements it must write */
  const size_t w8 = (wn + 7) / 8 * 8;
  size_t span;
  if (s->cm) {
    prm.ldr = w8 + (next_u32() % 2 ? 0 : (size_t)irand(1, 3));
    prm.ldb = rn * prm.ldr + (next_u32() % 2 ? 0 : (size_t)irand(1, 5));
    span = (nvl - 1) * prm.ldb + (rn - 1) * prm.ldr + w8;
  } else {
    prm.ldr = (size_t)irand(0, 99); /* unused by pixel-major kernels */
    prm.ldb = nvl + (next_u32() % 2 ? 0 : (size_t)irand(1, 5));
    span = (np - 1) * prm.ldb + nvl;
  }
  const size_t total = GUARD + span + GUARD;
  void *out = xalloc_slack(total * 4);
  char *state = calloc(total, 1); /* 0: must keep the sentinel, 1: may be written, 2: required */
  assert_non_null(state);
  for (size_t i = 0; i < total; i++) put32(out, i, SENT);
  for (size_t j = 0; j < nvl; j++)
    for (size_t r = 0; r < rn; r++)
      for (size_t x = 0; x < (s->cm ? w8 : wn); x++) {
        const size_t pos = GUARD + (s->cm ? j * prm.ldb + r * prm.ldr + x : (r * wn + x) * prm.ldb + j);
        state[pos] = x < wn ? 2 : 1;
      }

  const kcall call = {s, &prm, (const char *)in_mem - lo * 4, w, (char *)out + GUARD * 4};
  void *fault_addr = NULL;
  const int faulted = fault_trap(call_kernel, (void *)&call, &fault_addr);

  char what[256];
  snprintf(what, sizeof what, "%s %s gpv=%zu nv=%zu r=%zu w=%zu %s n_ct=%zu t_i=%zu ti_last=%zu n_tap=%zu%s kind=%d "
           "strides ti=%td r=%td ct=%td ldb=%zu ldr=%zu", f->isa, s->q8 ? "q8" : "f16", gpv, s->nv, rn, wn,
           s->cm ? "channel-major" : "pixel-major", n_ct, t_i, ti_last, n_tap, s->use_perm ? " perm" : "", s->kind,
           ti_s, r_s, ct_s, prm.ldb, prm.ldr);
  int bad = 0;
  const int report = g_failures < MAX_REPORTED_CASES;
  if (faulted) {
    char where[200];
    if (!describe_addr(where, sizeof where, "input", in_mem, n_in, 4, lo, fault_addr) &&
        !describe_addr(where, sizeof where, "weights", w, nw, 2, 0, fault_addr))
      snprintf(where, sizeof where, "address %p", fault_addr);
    if (report) print_error("%s: read outside its operands (guard page): %s\n", what, where);
    bad = 1;
    goto done;
  }
  for (size_t i = 0; i < total; i++)
    if (state[i] == 0 && get32(out, i) != SENT && bad++ < 4 && report)
      print_error("%s: wrote outside its region at offset %td\n", what, (ptrdiff_t)i - GUARD);

  /* the reference, lane by lane, reading the contract's elements */
  const char *inb = (const char *)in_mem;
  for (size_t r = 0; r < rn; r++)
    for (size_t x = 0; x < wn; x++)
      for (size_t j = 0; j < nvl; j++) {
        const size_t l = s->use_perm ? (size_t)perm[j] : j;
        double acc = 0.0, mag = 0.0;
        int64_t iacc = 0;
        size_t terms = 0;
        for (size_t ct = 0; ct < n_ct; ct++) {
          const size_t nti = ct + 1 < n_ct ? t_i : ti_last;
          for (size_t t = 0; t < n_tap; t++)
            for (size_t ti = 0; ti < nti; ti++) {
              const ptrdiff_t idx = (ptrdiff_t)ct * ct_s + tap_off[t] + (ptrdiff_t)ti * ti_s + (ptrdiff_t)r * r_s +
                                    (ptrdiff_t)(x * gpv + l % gpv) - lo;
              const uint32_t iv = get32(inb, (size_t)idx);
              const size_t wi = ((ct * n_tap + t) * t_i + ti) * nvl * cpt + l * cpt;
              if (s->q8) {
                iacc += (int64_t)(int16_t)(uint16_t)(iv & 0xFFFFu) * (int16_t)w[wi] +
                        (int64_t)(int16_t)(uint16_t)(iv >> 16) * (int16_t)w[wi + 1];
              } else {
                float fv;
                memcpy(&fv, &iv, 4);
                const double prod = (double)fv * half_value(w[wi]);
                acc += prod;
                mag += fabs(prod);
              }
              terms++;
            }
        }
        const size_t pos = GUARD + (s->cm ? j * prm.ldb + r * prm.ldr + x : (r * wn + x) * prm.ldb + j);
        const uint32_t got = get32(out, pos);
        if (s->q8) {
          if ((int64_t)(int32_t)got != iacc && bad++ < 4 && report)
            print_error("%s: r=%zu x=%zu j=%zu (lane %zu) got %d want %lld\n", what, r, x, j, l, (int32_t)got,
                        (long long)iacc);
        } else {
          float gf;
          memcpy(&gf, &got, 4);
          if (!close_enough(gf, acc, mag, terms) && bad++ < 4 && report)
            print_error("%s: r=%zu x=%zu j=%zu (lane %zu) got %.9g want %.9g\n", what, r, x, j, l, (double)gf, acc);
        }
      }
done:
  free(state);
  free(out);
  free(readable);
  gbuf_close(&gin);
  gbuf_close(&gw);
  if (bad) g_failures++;
}

typedef struct counts {
  size_t tiles_f16, tiles_q8, kcases, long_k;
} counts;

static void kernels_of(const dlc_lowp_gspc_family *f, counts *cnt) {
  for (int q8 = 0; q8 < 2; q8++) {
    const size_t T = q8 ? f->t_i_q8 : f->t_i_f16;
    for (size_t gpv = 1; gpv <= 8; gpv *= 2)
      for (size_t nv = 1; nv <= 4; nv++)
        for (size_t rn = 1; rn <= 4; rn++)
          for (size_t wn = 1; wn <= 32; wn++) {
            kspec s;
            memset(&s, 0, sizeof s);
            s.f = f;
            s.q8 = q8;
            if (q8) s.kq = f->get_q8(gpv, nv, rn, wn);
            else s.kf = f->get_f16(gpv, nv, rn, wn);
            if (!s.kq && !s.kf) continue;
            /* several vectors only for ordinary groups (lowp_gspc_ukernel.h) */
            assert_true(gpv == 1 || nv == 1);
            assert_true(gpv <= f->max_gpv);
            *(q8 ? &cnt->tiles_q8 : &cnt->tiles_f16) += 1;
            s.gpv = gpv, s.nv = nv, s.rn = rn, s.wn = wn;
            for (int cm = 0; cm < 2; cm++) {
              s.cm = cm;
              /* A: one channel tile, one tap, the family's t_i */
              s.n_ct = 1, s.t_i = T, s.ti_last = T, s.n_tap = 1, s.use_perm = 0, s.kind = V_RANDOM;
              run_kcase(&s);
              /* B: 2-3 channel tiles, the last one short, three taps, lanes permuted */
              s.n_ct = (size_t)irand(2, 3), s.t_i = T, s.ti_last = T > 1 ? (size_t)irand(1, (int64_t)T - 1) : 1;
              s.n_tap = 3, s.use_perm = nv == 1;
              run_kcase(&s);
              /* C: a smaller t_i (the driver clips it to the group's channels) */
              s.n_ct = 2, s.t_i = T > 1 ? (size_t)irand(1, (int64_t)T - 1) : 1;
              s.ti_last = (size_t)irand(1, (int64_t)s.t_i);
              s.n_tap = next_u32() % 2 ? 3 : 1, s.use_perm = nv == 1 && next_u32() % 2;
              s.kind = q8 ? (int)(1 + (gpv + nv + rn + wn + (size_t)cm) % 4) : V_RANDOM;
              run_kcase(&s);
              cnt->kcases += 3;
              if (q8) {
                /* D: extreme operands, full tiles */
                s.n_ct = 3, s.t_i = T, s.ti_last = T, s.n_tap = 3, s.use_perm = nv == 1;
                s.kind = (int)(1 + (gpv + nv + rn + wn + (size_t)cm + 2) % 4);
                run_kcase(&s);
                cnt->kcases++;
              }
            }
          }
  }
}

/* int8: a reduction near the longest the plan accepts (K = 65536 channels of the DLC_Q8_MAX_K =
   65793 with K * 255 * 128 < 2^31), all
   products -255 x -128 (the largest sum, 2139095040), all 255 x -128 (-2139095040) and random
   extremes, so an accumulator narrower than s32 or a saturating step shows. */
static void long_k_of(const dlc_lowp_gspc_family *f, counts *cnt) {
  static const size_t tiles[][4] = {{1, 1, 1, 1}, {2, 1, 1, 1}, {8, 1, 1, 1}, {1, 2, 1, 1}, {1, 1, 2, 1}, {1, 1, 1, 2}};
  const size_t T = f->t_i_q8;
  const size_t pairs = 32768;
  for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
    kspec s;
    memset(&s, 0, sizeof s);
    s.f = f;
    s.q8 = 1;
    s.gpv = tiles[i][0], s.nv = tiles[i][1], s.rn = tiles[i][2], s.wn = tiles[i][3];
    s.kq = f->get_q8(s.gpv, s.nv, s.rn, s.wn);
    if (!s.kq) continue;
    s.t_i = T;
    s.n_ct = (pairs + T - 1) / T;
    s.ti_last = pairs - (s.n_ct - 1) * T;
    s.n_tap = 1;
    s.tight = 1;
    static const int kinds[] = {V_NEG_NEG, V_POS_NEG, V_MIXED_EXTREMES};
    for (size_t k = 0; k < 3; k++) {
      s.cm = (int)(k % 2);
      s.kind = kinds[k];
      run_kcase(&s);
      cnt->long_k++;
    }
  }
}

static void test_ukernels(void **state) {
  (void)state;
  check_expected_families();
  g_failures = 0;
  family_ref refs[MAX_FAMILIES]; /* a VNNI CPU's tables no longer carry avx2's: it too, by name */
  size_t nrefs = 0;
  ALL_FAMILY_REFS(refs, nrefs, lowp_gspc);
  for (size_t i = 0; i < nrefs; i++) {
    const char *label = refs[i].label;
    const dlc_lowp_gspc_family *f = refs[i].family;
    if (!f) {
      print_message("[ lowp_gspc ] %s: no lowp_gspc family\n", label);
      continue;
    }
    if (family_seen_before(refs, i)) {
      print_message("[ lowp_gspc ] %s: the %s family (checked above)\n", label, f->isa);
      continue;
    }
    check_family_fields(f);
    counts c;
    memset(&c, 0, sizeof c);
    kernels_of(f, &c);
    long_k_of(f, &c);
    assert_true(c.tiles_f16 > 0 && c.tiles_q8 > 0);
    print_message("[ lowp_gspc ] %s (%s family): %zu f16 tiles, %zu q8 tiles, %zu kernel cases, %zu long-K q8 cases\n",
                  label, f->isa, c.tiles_f16, c.tiles_q8, c.kcases, c.long_k);
  }
  if (g_failures) fail_msg("%zu kernel cases failed", g_failures);
}

/* ---------------------------------------------------------------------------------------------
 * Input repacks. */

enum { P_NCHW, P_NHWC, P_OTHER, N_PACK_KINDS };

typedef struct pspec {
  int q8;
  dlc_lowp_gspc_pack_args a; /* everything but dst and src */
} pspec;

static ptrdiff_t src_index(const dlc_lowp_gspc_pack_args *a, size_t ch, size_t q, size_t gl) {
  return (ptrdiff_t)ch * a->src_c_stride + ((ptrdiff_t)q * a->col_step + a->col0) * a->px_step +
         (ptrdiff_t)gl * a->g_step;
}

typedef struct pcall {
  dlc_lowp_gspc_pack_fn fn;
  const dlc_lowp_gspc_pack_args *a;
} pcall;
static void call_pack(void *arg) {
  const pcall *c = arg;
  c->fn(c->a);
}

static void run_pack(const dlc_lowp_gspc_family *f, const pspec *ps) {
  dlc_lowp_gspc_pack_args a = ps->a;
  const int q8 = ps->q8;
  const size_t es = q8 ? 1 : 2;
  const size_t nch = q8 ? a.n_src_c : a.n_c; /* source channels the inside elements read */
  const size_t qb = a.q_hi < a.nq ? a.q_hi : a.nq;
  /* the exact range of source elements the inside elements read */
  ptrdiff_t lo = PTRDIFF_MAX, hi = PTRDIFF_MIN;
  for (size_t ch = 0; ch < nch; ch++)
    for (size_t q = a.q_lo; q < qb; q++)
      for (size_t gl = 0; gl < a.ng; gl++) {
        const ptrdiff_t i = src_index(&a, ch, q, gl);
        lo = i < lo ? i : lo;
        hi = i > hi ? i : hi;
      }
  const size_t n_src = lo <= hi ? (size_t)(hi - lo + 1) : 1;
  if (lo > hi) lo = 0; /* nothing inside: nothing may be read */
  gbuf gs;
  g_at_end ^= 1;
  unsigned char *mem = gbuf_open(&gs, n_src * es, g_at_end);
  for (size_t i = 0; i < n_src * es; i++) mem[i] = (unsigned char)next_u32();
  a.src = mem - lo * (ptrdiff_t)es;

  const size_t total = GUARD + (a.n_c - 1) * a.dst_c_stride + a.nq * a.gpv + GUARD;
  void *buf = xalloc_slack(total * 4);
  for (size_t i = 0; i < total; i++) put32(buf, i, SENT);
  a.dst = (char *)buf + GUARD * 4;
  const pcall call = {q8 ? f->pack_q8 : f->pack_f16, &a};
  void *fault_addr = NULL;
  const int faulted = fault_trap(call_pack, (void *)&call, &fault_addr);

  char what[256];
  snprintf(what, sizeof what, "%s pack_%s n_c=%zu n_src_c=%zu nq=%zu gpv=%zu ng=%zu col0=%td col_step=%td px_step=%td "
           "g_step=%td src_c_stride=%td dst_c_stride=%zu q=[%zu,%zu) zp=%d signed=%d", f->isa, q8 ? "q8" : "f16",
           a.n_c, a.n_src_c, a.nq, a.gpv, a.ng, a.col0, a.col_step, a.px_step, a.g_step, a.src_c_stride,
           a.dst_c_stride, a.q_lo, a.q_hi, a.zp, a.is_signed);
  int bad = 0;
  const int report = g_failures < MAX_REPORTED_CASES;
  char *mine = calloc(total, 1);
  assert_non_null(mine);
  if (faulted) {
    char where[200];
    if (!describe_addr(where, sizeof where, "source", mem, n_src, es, lo, fault_addr))
      snprintf(where, sizeof where, "address %p", fault_addr);
    if (report) print_error("%s: read outside the source (guard page): %s\n", what, where);
    bad = 1;
    goto done;
  }
  for (size_t c = 0; c < a.n_c; c++)
    for (size_t q = 0; q < a.nq; q++)
      for (size_t gl = 0; gl < a.gpv; gl++) {
        const size_t pos = GUARD + c * a.dst_c_stride + q * a.gpv + gl;
        mine[pos] = 1;
        const int inside = gl < a.ng && a.q_lo <= q && q < a.q_hi;
        const uint32_t got = get32(buf, pos);
        uint32_t want = 0;
        int nan_ok = 0;
        if (inside && q8) {
          int32_t v[2] = {0, 0};
          for (size_t k = 0; k < 2; k++) {
            const size_t ch = 2 * c + k;
            if (ch >= a.n_src_c) continue;
            const unsigned char b = mem[src_index(&a, ch, q, gl) - lo];
            v[k] = (a.is_signed ? (int32_t)(int8_t)b : (int32_t)b) - a.zp;
          }
          want = (uint32_t)(uint16_t)(int16_t)v[0] | ((uint32_t)(uint16_t)(int16_t)v[1] << 16);
        } else if (inside) {
          const size_t i = (size_t)(src_index(&a, c, q, gl) - lo);
          uint16_t h;
          memcpy(&h, mem + 2 * i, 2);
          const double d = half_value(h);
          if (isnan(d)) {
            nan_ok = 1;
          } else {
            const float fv = (float)d; /* exact */
            memcpy(&want, &fv, 4);
          }
        }
        if (nan_ok) {
          float gf;
          memcpy(&gf, &got, 4);
          if (!isnan(gf) && bad++ < 4 && report) print_error("%s: c=%zu q=%zu gl=%zu got %#x want a NaN\n", what, c, q, gl, got);
        } else if (got != want && bad++ < 4 && report) {
          print_error("%s: c=%zu q=%zu gl=%zu got %#x want %#x%s\n", what, c, q, gl, got, want,
                      inside ? "" : " (padding)");
        }
      }
  for (size_t i = 0; i < total; i++)
    if (!mine[i] && get32(buf, i) != SENT && bad++ < 6 && report)
      print_error("%s: wrote outside dst at offset %td\n", what, (ptrdiff_t)i - GUARD);
done:
  free(mine);
  free(buf);
  gbuf_close(&gs);
  if (bad) g_failures++;
}

static size_t packs_of(const dlc_lowp_gspc_family *f) {
  static const int32_t zp_u8[] = {0, 128, 3, 255}, zp_s8[] = {0, -7, 3, -128, 127};
  size_t n = 0, zi = 0;
  for (int q8 = 0; q8 < 2; q8++)
    for (int kind = 0; kind < N_PACK_KINDS; kind++)
      for (size_t gpv = 1; gpv <= 8; gpv *= 2)
        for (size_t n_c = 1; n_c <= 20; n_c++)
          for (int rep = 0; rep < 3; rep++) {
            pspec ps;
            memset(&ps, 0, sizeof ps);
            ps.q8 = q8;
            dlc_lowp_gspc_pack_args *a = &ps.a;
            a->n_c = n_c;
            /* int8: an even channel count, and an odd one (the last pair's high half is 0) */
            a->n_src_c = q8 ? 2 * n_c - (rep == 0 ? 0 : rep == 2 ? 1 : (next_u32() & 1)) : n_c;
            a->gpv = gpv;
            a->ng = gpv > 1 && next_u32() % 3 == 0 ? (size_t)irand(1, (int64_t)gpv - 1) : gpv;
            a->nq = rep == 1 ? (size_t)irand(1, 40) : (size_t)irand(9, 40);
            a->dst_c_stride = a->nq * gpv + (next_u32() % 2 ? 0 : (size_t)irand(1, 6));
            a->col0 = (ptrdiff_t)irand(-3, 3);
            if (q8) {
              a->is_signed = (int)((zi / 2) & 1);
              a->zp = a->is_signed ? zp_s8[zi % 5] : zp_u8[zi % 4];
              zi++;
            }
            /* the columns: rep 0 the driver's (inside the image), rep 1 anything, including empty
               (q_lo == q_hi and q_lo > q_hi) and full, rep 2 a partial range */
            const size_t nch = q8 ? a->n_src_c : a->n_c;
            a->col_step = kind == P_NCHW ? (ptrdiff_t)(1 + (size_t)(rep + (int)n_c) % 2) : (ptrdiff_t)irand(1, 3);
            const int64_t w_img = irand(1, (int64_t)a->nq * a->col_step + 3);
            if (rep == 0) {
              const int64_t c0 = a->col0, st = a->col_step;
              int64_t lo = c0 >= 0 ? 0 : (-c0 + st - 1) / st;
              int64_t hi = w_img - c0 <= 0 ? 0 : (w_img - c0 + st - 1) / st;
              lo = lo < (int64_t)a->nq ? lo : (int64_t)a->nq;
              hi = hi < (int64_t)a->nq ? hi : (int64_t)a->nq;
              hi = hi > lo ? hi : lo;
              a->q_lo = (size_t)lo, a->q_hi = (size_t)hi;
            } else if (rep == 1) {
              switch (next_u32() % 5) {
                case 0: a->q_lo = a->q_hi = (size_t)irand(0, (int64_t)a->nq); break;
                case 1:
                  a->q_lo = (size_t)irand(1, (int64_t)a->nq);
                  a->q_hi = (size_t)irand(0, (int64_t)a->q_lo - 1);
                  break;
                case 2: a->q_lo = 0, a->q_hi = a->nq; break;
                default:
                  a->q_lo = (size_t)irand(0, (int64_t)a->nq);
                  a->q_hi = (size_t)irand((int64_t)a->q_lo, (int64_t)a->nq);
              }
            } else {
              a->q_lo = (size_t)irand(1, 4);
              a->q_hi = a->nq - (size_t)irand(1, 4);
              if (a->q_hi < a->q_lo) a->q_hi = a->q_lo;
            }
            /* the strides */
            const int64_t cin_g = (int64_t)nch + (next_u32() % 2 ? 0 : irand(1, 2));
            if (kind == P_NCHW) {
              /* a channel is a plane (image rows of w_img columns), a group cin_g planes */
              const ptrdiff_t plane = (ptrdiff_t)(w_img * irand(1, 3) + irand(0, 3));
              a->px_step = 1;
              a->src_c_stride = plane;
              a->g_step = (ptrdiff_t)cin_g * plane;
            } else if (kind == P_NHWC) {
              /* a pixel holds every group's channels, a group cin_g of them */
              a->src_c_stride = 1;
              a->g_step = (ptrdiff_t)cin_g;
              a->px_step = (ptrdiff_t)cin_g * (ptrdiff_t)(a->ng + (size_t)irand(0, 2));
            } else {
              a->px_step = (ptrdiff_t)irand(1, 5);
              a->src_c_stride = (ptrdiff_t)irand(1, 60);
              a->g_step = (ptrdiff_t)irand(1, 30);
            }
            run_pack(f, &ps);
            n++;
          }
  return n;
}

static void test_packs(void **state) {
  (void)state;
  check_expected_families();
  g_failures = 0;
  family_ref refs[MAX_FAMILIES];
  size_t nrefs = 0, n_seen = 0;
  TABLE_FAMILY_REFS(refs, nrefs, lowp_gspc);
  for (size_t i = 0; i < nrefs; i++) {
    const dlc_lowp_gspc_family *f = refs[i].family;
    if (!f || family_seen_before(refs, i)) continue;
    n_seen++;
    const size_t n = packs_of(f);
    print_message("[ lowp_gspc ] %s (%s family): %zu pack cases\n", refs[i].label, f->isa, n);
  }
  assert_true(n_seen > 0);
  if (g_failures) fail_msg("%zu pack cases failed", g_failures);
}

int main(void) {
  rng_state = 0x243F6A8885A308D3ull;
  return RUN_TESTS(test_ukernels, test_packs);
}
