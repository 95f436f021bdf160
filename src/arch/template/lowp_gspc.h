/* lowp_gspc.h - the F16 and int8 gspc micro-kernels (src/ukernel/lowp_gspc_ukernel.h), written
 * once over the vector layer; an ISA's lowp_gspc_<isa>.c includes its vec.h and then this file,
 * which defines dlc_lowp_gspc__<isa>. T_O = DLC_VL lanes. The input repacks are the ISA's own or
 * this file's (the end of the file), which vectorises the common layouts and leaves the rest to a
 * scalar repack the ISA names.
 *
 * The register tile of the fp32 family (f32_gspc.h): R rows x W columns x NV vectors, all
 * accumulators in registers; per reduction step the NV weight vectors are loaded once and each
 * pixel's input is one broadcast of gpv 32-bit elements (v_bcast_groups) reused by the NV
 * vectors. One tile for both dtypes, which differ only in the weight load and the product:
 *   F16:  weights DLC_VL halves widened (v_load_f16), v_fma;
 *   int8: weights DLC_VL s16 pairs, vi2_dot2_s16 of the broadcast pair(s) (exact in s32; on
 *         Neon an SMLAL + SMLAL2 step into two vectors, added once at the end).
 * The accumulators leave permuted (groups-in-lanes order to channel order, v_permute), pixel-major
 * as they are or channel-major through DLC_VL x DLC_VL transposes (which write the columns up to
 * the next multiple of 8, as the contract allows: at DLC_VL 16 the last block of a row stores
 * only as many).
 *
 * The menu, per dtype: one vector, every gpv up to DLC_VL, up to LOWP_GSPC_MAX_PIX_<T> pixels in
 * 1, 2 or 4 rows; several vectors (ordinary groups only), up to LOWP_GSPC_MAX_ACC_<T> accumulators
 * in 1 or 2 rows. An int8 accumulator may take more registers than an F16 one (DLC_VI2_REGS).
 *
 * Knobs (set before the include, else the default), literal numbers unless said otherwise:
 *   LOWP_GSPC_PACK_F16, LOWP_GSPC_PACK_Q8  the ISA's own input repacks (functions), or else
 *   LOWP_GSPC_PACK_FALLBACK_F16, LOWP_GSPC_PACK_FALLBACK_Q8  the repacks (functions) this file's
 *               leaves the layouts and edges it does not vectorise to
 *   LOWP_GSPC_MAX_GPV  groups per vector of the menu (a literal power of two <= DLC_VL): DLC_VL;
 *               less where the repack handles fewer (the avx2 repack: 8)
 *   LOWP_GSPC_ISA  the token naming the family (dlc_lowp_gspc__<it>, .isa): DLC_VEC_ISA; a VNNI
 *               family over the avx2 vec.h names itself
 *   LOWP_GSPC_GET_F16  another family's F16 menu (a function) to lend instead of compiling one
 *               (a VNNI family: only its int8 product differs)
 *   LOWP_GSPC_MAX_PIX_F16, LOWP_GSPC_MAX_ACC_F16, LOWP_GSPC_MAX_PIX_Q8, LOWP_GSPC_MAX_ACC_Q8
 *               (pixel, vector) accumulators of a one-vector (<= 16) and a several-vector (<= 24)
 *               tile: the registers less 4 (NV weight vectors and a broadcast) divided by an
 *               accumulator's registers (1; int8 DLC_VI2_REGS): 12 and 12 at 16 registers, 16 and
 *               24 at 32 registers, 14 and 14 at 32 with two per accumulator (Neon int8)
 *   LOWP_GSPC_MAX_NV  vectors of output lanes (<= 4): 3 at DLC_VL 8, 4 otherwise
 *   LOWP_GSPC_T_I_F16, LOWP_GSPC_T_I_Q8  preferred input channel tiles: 16, 8 (pairs)
 *   LOWP_GSPC_MAC_F16, LOWP_GSPC_MAC_Q8, LOWP_GSPC_LOADS, LOWP_GSPC_LAT_F16, LOWP_GSPC_LAT_Q8
 *               the cost model (lowp_gspc_ukernel.h): 2, 1, 2, 4, 1 (Zen 2 with vpmaddwd) */
#include <stddef.h>
#include <stdint.h>

#include "../../ukernel/lowp_gspc_ukernel.h"
#include "family.h"

#if !(defined(LOWP_GSPC_PACK_F16) && defined(LOWP_GSPC_PACK_Q8)) && \
    !(defined(LOWP_GSPC_PACK_FALLBACK_F16) && defined(LOWP_GSPC_PACK_FALLBACK_Q8))
#error "name the input repacks (LOWP_GSPC_PACK_F16, _Q8) or the fallbacks of this file's (LOWP_GSPC_PACK_FALLBACK_F16, _Q8)"
#endif
#ifndef LOWP_GSPC_ISA
#define LOWP_GSPC_ISA DLC_VEC_ISA
#endif
#ifndef LOWP_GSPC_MAX_GPV
#define LOWP_GSPC_MAX_GPV DLC_VL
#endif
/* a literal (DLC_UPTO) from a register budget */
#define LOWP_GSPC_BUDGET_F16_ (DLC_NREGS - 4)
#define LOWP_GSPC_BUDGET_Q8_ ((DLC_NREGS - 4) / DLC_VI2_REGS)
#ifndef LOWP_GSPC_MAX_PIX_F16
#if LOWP_GSPC_BUDGET_F16_ >= 16
#define LOWP_GSPC_MAX_PIX_F16 16
#elif LOWP_GSPC_BUDGET_F16_ >= 12
#define LOWP_GSPC_MAX_PIX_F16 12
#else
#define LOWP_GSPC_MAX_PIX_F16 8
#endif
#endif
#ifndef LOWP_GSPC_MAX_ACC_F16
#if LOWP_GSPC_BUDGET_F16_ >= 24
#define LOWP_GSPC_MAX_ACC_F16 24
#else
#define LOWP_GSPC_MAX_ACC_F16 LOWP_GSPC_MAX_PIX_F16
#endif
#endif
#ifndef LOWP_GSPC_MAX_PIX_Q8
#if LOWP_GSPC_BUDGET_Q8_ >= 16
#define LOWP_GSPC_MAX_PIX_Q8 16
#elif LOWP_GSPC_BUDGET_Q8_ >= 14
#define LOWP_GSPC_MAX_PIX_Q8 14
#elif LOWP_GSPC_BUDGET_Q8_ >= 12
#define LOWP_GSPC_MAX_PIX_Q8 12
#else
#define LOWP_GSPC_MAX_PIX_Q8 8
#endif
#endif
#ifndef LOWP_GSPC_MAX_ACC_Q8
#if LOWP_GSPC_BUDGET_Q8_ >= 24
#define LOWP_GSPC_MAX_ACC_Q8 24
#else
#define LOWP_GSPC_MAX_ACC_Q8 LOWP_GSPC_MAX_PIX_Q8
#endif
#endif
#define LOWP_GSPC_PIX_BOUND_ (LOWP_GSPC_MAX_PIX_F16 > LOWP_GSPC_MAX_PIX_Q8 ? LOWP_GSPC_MAX_PIX_F16 : LOWP_GSPC_MAX_PIX_Q8)
#ifndef LOWP_GSPC_MAX_NV
#define LOWP_GSPC_MAX_NV (DLC_VL == 8 ? 3 : 4)
#endif
#ifndef LOWP_GSPC_T_I_F16
#define LOWP_GSPC_T_I_F16 16
#endif
#ifndef LOWP_GSPC_T_I_Q8
#define LOWP_GSPC_T_I_Q8 8
#endif
#ifndef LOWP_GSPC_MAC_F16
#define LOWP_GSPC_MAC_F16 2.0f
#endif
#ifndef LOWP_GSPC_MAC_Q8
#define LOWP_GSPC_MAC_Q8 1.0f
#endif
#ifndef LOWP_GSPC_LOADS
#define LOWP_GSPC_LOADS 2.0f
#endif
#ifndef LOWP_GSPC_LAT_F16
#define LOWP_GSPC_LAT_F16 4.0f
#endif
#ifndef LOWP_GSPC_LAT_Q8
#define LOWP_GSPC_LAT_Q8 1.0f
#endif
_Static_assert(DLC_VL <= 16 && LOWP_GSPC_MAX_GPV <= DLC_VL, "the kernel tables' bounds: 16 lanes, gpv up to DLC_VL");
_Static_assert(LOWP_GSPC_MAX_PIX_F16 <= 16 && LOWP_GSPC_MAX_PIX_Q8 <= 16 && LOWP_GSPC_MAX_NV <= 4 &&
                   LOWP_GSPC_MAX_ACC_F16 / 2 <= LOWP_GSPC_MAX_PIX_F16 && LOWP_GSPC_MAX_ACC_Q8 / 2 <= LOWP_GSPC_MAX_PIX_Q8,
               "the kernel tables' bounds: 16 pixels, 4 vectors (a several-vector tile's pixels too)");

/* The tile; F16 accumulates floats in vf, int8 s32 sums in vi2 (the unused array is never set). */
INLINE void lowp_gspc_tile(const dlc_lowp_gspc_params *prm, const void *in, const void *w, void *buf, const int q8,
                           const size_t gpv, const size_t nv, const size_t rn, const size_t wn) {
  const size_t nvl = nv * DLC_VL, np = rn * wn;
  vf accf[LOWP_GSPC_PIX_BOUND_][LOWP_GSPC_MAX_NV];
  vi2 acci[LOWP_GSPC_PIX_BOUND_][LOWP_GSPC_MAX_NV];
  UNROLL
  for (size_t p = 0; p < np; p++)
    UNROLL
    for (size_t v = 0; v < nv; v++) {
      if (q8)
        acci[p][v] = vi2_zero();
      else
        accf[p][v] = v_zero();
    }
  const size_t n_ct = prm->n_ct, n_tap = prm->n_tap, t_i = prm->t_i;
  const ptrdiff_t ti_stride = prm->in_ti_stride, r_stride = prm->in_r_stride;
  const size_t wstep = q8 ? 2 * nvl : nvl; /* s16 or halves per (ct, tap, ti) */
  for (size_t ct = 0; ct < n_ct; ct++) {
    const size_t nti = ct + 1 < n_ct ? t_i : prm->ti_last;
    const float *in_ct = (const float *)in + (ptrdiff_t)ct * prm->in_ct_stride;
    const uint16_t *w_ct = (const uint16_t *)w + ct * n_tap * t_i * wstep;
    for (size_t t = 0; t < n_tap; t++) {
      const float *ip = in_ct + prm->tap_off[t];
      const uint16_t *wp = w_ct + t * t_i * wstep;
      for (size_t ti = 0; ti < nti; ti++) {
        vf wf[LOWP_GSPC_MAX_NV];
        vi wi[LOWP_GSPC_MAX_NV];
        UNROLL
        for (size_t v = 0; v < nv; v++) {
          if (q8)
            wi[v] = vi_load_aligned((const int32_t *)(const void *)(wp + v * 2 * DLC_VL));
          else
            wf[v] = v_load_f16(wp + v * DLC_VL);
        }
        UNROLL
        for (size_t r = 0; r < rn; r++)
          UNROLL
          for (size_t x = 0; x < wn; x++) {
            const vf b = v_bcast_groups(ip + (ptrdiff_t)r * r_stride + x * gpv, gpv);
            UNROLL
            for (size_t v = 0; v < nv; v++) {
              if (q8)
                acci[r * wn + x][v] = vi2_dot2_s16(acci[r * wn + x][v], v_as_vi(b), wi[v]);
              else
                accf[r * wn + x][v] = v_fma(b, wf[v], accf[r * wn + x][v]);
            }
          }
        ip += ti_stride;
        wp += wstep;
      }
    }
  }
  /* the s32 sums as float bits from here on (the casts are free) */
  vf acc[LOWP_GSPC_PIX_BOUND_][LOWP_GSPC_MAX_NV];
  UNROLL
  for (size_t p = 0; p < np; p++)
    UNROLL
    for (size_t v = 0; v < nv; v++) acc[p][v] = q8 ? vi_as_vf(vi2_sum(acci[p][v])) : accf[p][v];
  if (nv == 1 && prm->perm) {
    const vidx pidx = v_load_idx(prm->perm);
    UNROLL
    for (size_t p = 0; p < np; p++) acc[p][0] = v_permute(acc[p][0], pidx);
  }
  float *out = buf;
  const size_t ldb = prm->ldb;
  if (!prm->channel_major) {
    UNROLL
    for (size_t p = 0; p < np; p++)
      UNROLL
      for (size_t v = 0; v < nv; v++) v_store(out + p * ldb + v * DLC_VL, acc[p][v]);
    return;
  }
  const size_t ldr = prm->ldr;
  UNROLL
  for (size_t v = 0; v < nv; v++)
    UNROLL
    for (size_t r = 0; r < rn; r++)
      UNROLL
      for (size_t x0 = 0; x0 < wn; x0 += DLC_VL) {
        vf t[DLC_VL];
        UNROLL
        for (size_t i = 0; i < DLC_VL; i++) t[i] = x0 + i < wn ? acc[r * wn + x0 + i][v] : v_zero();
        v_transpose(t);
        /* columns up to the next multiple of 8 (the contract's junk), not of DLC_VL */
        const size_t ncol = wn - x0 >= DLC_VL ? DLC_VL : (wn - x0 + 7) / 8 * 8;
        UNROLL
        for (size_t j = 0; j < DLC_VL; j++) {
          float *o = out + (v * DLC_VL + j) * ldb + r * ldr + x0;
          if (ncol == DLC_VL)
            v_store(o, t[j]);
          else
            v_store_first(o, (ptrdiff_t)ncol, t[j]);
        }
      }
}

#ifndef LOWP_GSPC_PACK_F16
/* ---- the input repack (lowp_gspc_ukernel.h) --------------------------------------------------
   Two layouts in whole vectors, the rest (edges, padding rows, strides, other layouts) by the
   fallback on the part of the row it leaves:
   - rows (px_step 1, column stride 1: NCHW): per packed channel and block of DLC_VL columns inside
     the image, one row per group (F16: DLC_VL halves widened; int8: the bytes of channels 2c and
     2c + 1 less the zero point, paired by vi_pair16), log2(gpv) rounds of zips into the packed
     [column][group] order, gpv vectors stored;
   - channels (src_c_stride 1, gpv 1: NHWC): blocks of DLC_VL columns x DLC_VL packed channels, a
     load per column (int8: 2 DLC_VL bytes widened to pairs) and a DLC_VL x DLC_VL transpose. */

/* a, restricted to packed channels [c0, c1) and columns [q0, q1) (the same packed elements) */
static dlc_lowp_gspc_pack_args lowp_gspc_part(const dlc_lowp_gspc_pack_args *a, const int q8, size_t c0, size_t c1,
                                              size_t q0, size_t q1) {
  dlc_lowp_gspc_pack_args b = *a;
  const size_t cpt = q8 ? 2 : 1, es = q8 ? 1 : 2;
  b.dst = (char *)a->dst + (c0 * a->dst_c_stride + q0 * a->gpv) * 4;
  b.src = (const char *)a->src + (ptrdiff_t)(c0 * cpt) * a->src_c_stride * (ptrdiff_t)es;
  b.n_c = c1 - c0;
  b.n_src_c = a->n_src_c > c0 * cpt ? a->n_src_c - c0 * cpt : 0;
  if (b.n_src_c > b.n_c * cpt) b.n_src_c = b.n_c * cpt;
  b.nq = q1 - q0;
  b.col0 = a->col0 + (ptrdiff_t)q0 * a->col_step;
  b.q_lo = a->q_lo > q0 ? a->q_lo - q0 : 0;
  b.q_hi = a->q_hi > q0 ? a->q_hi - q0 : 0;
  if (b.q_lo > b.nq) b.q_lo = b.nq;
  if (b.q_hi > b.nq) b.q_hi = b.nq;
  return b;
}

static void lowp_gspc_fallback(const dlc_lowp_gspc_pack_args *a, const int q8, size_t c0, size_t c1, size_t q0,
                               size_t q1) {
  if (c0 >= c1 || q0 >= q1) return;
  const dlc_lowp_gspc_pack_args b = lowp_gspc_part(a, q8, c0, c1, q0, q1);
  if (q8)
    LOWP_GSPC_PACK_FALLBACK_Q8(&b);
  else
    LOWP_GSPC_PACK_FALLBACK_F16(&b);
}

/* Columns [qv0, qv1) of the interior in whole blocks, or an empty range. */
static void lowp_gspc_blocks(const dlc_lowp_gspc_pack_args *a, size_t *qv0, size_t *qv1) {
  const size_t hi = a->q_hi < a->nq ? a->q_hi : a->nq;
  *qv0 = *qv1 = 0;
  if (a->q_lo >= hi) return;
  *qv0 = a->q_lo;
  *qv1 = a->q_lo + (hi - a->q_lo) / DLC_VL * DLC_VL;
}

/* one group's DLC_VL columns from q of packed channel c (inside the image) */
INLINE vf lowp_gspc_row(const dlc_lowp_gspc_pack_args *a, const int q8, size_t c, size_t q, size_t gl) {
  const ptrdiff_t at = (ptrdiff_t)q + a->col0 + (ptrdiff_t)gl * a->g_step;
  if (!q8) return v_load_f16((const uint16_t *)a->src + (ptrdiff_t)c * a->src_c_stride + at);
  const vi zp = vi_set1(a->zp);
  const ptrdiff_t s0 = (ptrdiff_t)(2 * c) * a->src_c_stride + at;
  const int two = 2 * c + 1 < a->n_src_c;
  vi lo, hi = vi_zero();
  if (a->is_signed) {
    lo = vi_sub(vi_load_s8((const int8_t *)a->src + s0), zp);
    if (two) hi = vi_sub(vi_load_s8((const int8_t *)a->src + s0 + a->src_c_stride), zp);
  } else {
    lo = vi_sub(vi_load_u8((const uint8_t *)a->src + s0), zp);
    if (two) hi = vi_sub(vi_load_u8((const uint8_t *)a->src + s0 + a->src_c_stride), zp);
  }
  return vi_as_vf(vi_pair16(lo, hi));
}

INLINE void lowp_gspc_pack_rows_g(const dlc_lowp_gspc_pack_args *a, const int q8, const size_t gpv) {
  size_t qv0, qv1;
  lowp_gspc_blocks(a, &qv0, &qv1);
  lowp_gspc_fallback(a, q8, 0, a->n_c, 0, qv0);
  lowp_gspc_fallback(a, q8, 0, a->n_c, qv1 > qv0 ? qv1 : qv0, a->nq);
  for (size_t c = 0; c < a->n_c; c++) {
    float *d = (float *)a->dst + c * a->dst_c_stride;
    for (size_t q0 = qv0; q0 < qv1; q0 += DLC_VL) {
      vf r[DLC_VL], t[DLC_VL];
      UNROLL
      for (size_t gl = 0; gl < gpv; gl++) r[gl] = gl < a->ng ? lowp_gspc_row(a, q8, c, q0, gl) : v_zero();
      /* rows of gpv groups into [column][group]: log2(gpv) rounds of zips */
      UNROLL
      for (size_t st = 1; st < gpv; st *= 2) {
        UNROLL
        for (size_t i = 0; i < gpv / 2; i++) {
          t[2 * i] = v_zip_lo(r[i], r[i + gpv / 2]);
          t[2 * i + 1] = v_zip_hi(r[i], r[i + gpv / 2]);
        }
        UNROLL
        for (size_t i = 0; i < gpv; i++) r[i] = t[i];
      }
      UNROLL
      for (size_t k = 0; k < gpv; k++) v_store(d + q0 * gpv + k * DLC_VL, r[k]);
    }
  }
}

static void lowp_gspc_pack_channels(const dlc_lowp_gspc_pack_args *a, const int q8) {
  size_t qv0, qv1;
  lowp_gspc_blocks(a, &qv0, &qv1);
  /* whole blocks of packed channels whose source channels are all there */
  size_t cv = a->n_c / DLC_VL * DLC_VL;
  if (q8)
    while (cv > 0 && 2 * cv > a->n_src_c) cv -= DLC_VL;
  lowp_gspc_fallback(a, q8, cv, a->n_c, 0, a->nq);
  lowp_gspc_fallback(a, q8, 0, cv, 0, qv0);
  lowp_gspc_fallback(a, q8, 0, cv, qv1 > qv0 ? qv1 : qv0, a->nq);
  const size_t es = q8 ? 1 : 2, cpt = q8 ? 2 : 1;
  const ptrdiff_t qs = a->col_step * a->px_step;
  for (size_t c0 = 0; c0 < cv; c0 += DLC_VL)
    for (size_t q0 = qv0; q0 < qv1; q0 += DLC_VL) {
      const char *s = (const char *)a->src + ((ptrdiff_t)(c0 * cpt) + ((ptrdiff_t)q0 * a->col_step + a->col0) * a->px_step) * (ptrdiff_t)es;
      vf r[DLC_VL];
      UNROLL
      for (size_t i = 0; i < DLC_VL; i++) {
        const char *p = s + (ptrdiff_t)i * qs * (ptrdiff_t)es;
        r[i] = !q8 ? v_load_f16((const uint16_t *)(const void *)p)
               : a->is_signed ? vi_as_vf(vi_load_pairs_s8((const int8_t *)p, a->zp))
                              : vi_as_vf(vi_load_pairs_u8((const uint8_t *)p, a->zp));
      }
      v_transpose(r);
      UNROLL
      for (size_t j = 0; j < DLC_VL; j++) v_store((float *)a->dst + (c0 + j) * a->dst_c_stride + q0, r[j]);
    }
}

INLINE void lowp_gspc_pack(const dlc_lowp_gspc_pack_args *a, const int q8) {
  if (a->px_step == 1 && a->col_step == 1) {
    switch (a->gpv) {
      case 1: lowp_gspc_pack_rows_g(a, q8, 1); return;
      case 2: lowp_gspc_pack_rows_g(a, q8, 2); return;
      case 4: lowp_gspc_pack_rows_g(a, q8, 4); return;
#if LOWP_GSPC_MAX_GPV >= 8
      case 8: lowp_gspc_pack_rows_g(a, q8, 8); return;
#endif
#if LOWP_GSPC_MAX_GPV >= 16
      case 16: lowp_gspc_pack_rows_g(a, q8, 16); return;
#endif
      default: break;
    }
  } else if (a->src_c_stride == 1 && a->gpv == 1 && a->ng == 1) {
    lowp_gspc_pack_channels(a, q8);
    return;
  }
  lowp_gspc_fallback(a, q8, 0, a->n_c, 0, a->nq);
}

static void lowp_gspc_pack_f16(const dlc_lowp_gspc_pack_args *a) { lowp_gspc_pack(a, 0); }
static void lowp_gspc_pack_q8(const dlc_lowp_gspc_pack_args *a) { lowp_gspc_pack(a, 1); }
#define LOWP_GSPC_PACK_F16 lowp_gspc_pack_f16
#define LOWP_GSPC_PACK_Q8 lowp_gspc_pack_q8
#endif

/* ---- the kernel tables -----------------------------------------------------------------------
   A kernel per tile of the shapes the menu has (one vector: gpv 1..VL, 1, 2 or 4 rows; several
   vectors: gpv 1, 1 or 2 rows; 1..LOWP_GSPC_MAX_PIX_<T> columns); the tables hold those of the
   menu. The kernels are static inline so that the others, never referenced, are never compiled. */
#define LOWP_GSPC_IN_MENU(T, V, R, W)                                                                  \
  ((V) == 1 ? (R) * (W) <= LOWP_GSPC_MAX_PIX_##T                                                      \
            : (V) <= LOWP_GSPC_MAX_NV && (V) * (R) * (W) <= LOWP_GSPC_MAX_ACC_##T)
#define LOWP_GSPC_COLS(X, T, G, V, R) DLC_UPTO(DLC_CAT(LOWP_GSPC_MAX_PIX_, T), X, G, V, R)
#define LOWP_GSPC_ONE_VECTOR(X, T, G) \
  LOWP_GSPC_COLS(X, T, G, 1, 1) LOWP_GSPC_COLS(X, T, G, 1, 2) LOWP_GSPC_COLS(X, T, G, 1, 4)
#define LOWP_GSPC_VECTORS(X, T, V) LOWP_GSPC_COLS(X, T, 1, V, 1) LOWP_GSPC_COLS(X, T, 1, V, 2)
#define LOWP_GSPC_GPV1(X, T) \
  LOWP_GSPC_ONE_VECTOR(X, T, 1) LOWP_GSPC_VECTORS(X, T, 2) LOWP_GSPC_VECTORS(X, T, 3) LOWP_GSPC_VECTORS(X, T, 4)
#define LOWP_GSPC_GPVS_4(X, T) LOWP_GSPC_ONE_VECTOR(X, T, 2) LOWP_GSPC_ONE_VECTOR(X, T, 4)
#define LOWP_GSPC_GPVS_1(X, T)
#define LOWP_GSPC_GPVS_2(X, T) LOWP_GSPC_ONE_VECTOR(X, T, 2)
#define LOWP_GSPC_GPVS_8(X, T) LOWP_GSPC_GPVS_4(X, T) LOWP_GSPC_ONE_VECTOR(X, T, 8)
#define LOWP_GSPC_GPVS_16(X, T) LOWP_GSPC_GPVS_8(X, T) LOWP_GSPC_ONE_VECTOR(X, T, 16)
/* X(G, V, R, W) for each tile of dtype T's menu bounds */
#define LOWP_GSPC_ALL(X, T) LOWP_GSPC_GPV1(X, T) DLC_CAT(LOWP_GSPC_GPVS_, LOWP_GSPC_MAX_GPV)(X, T)
#define LOWP_GSPC_LOG2_1 0
#define LOWP_GSPC_LOG2_2 1
#define LOWP_GSPC_LOG2_4 2
#define LOWP_GSPC_LOG2_8 3
#define LOWP_GSPC_LOG2_16 4
#define LOWP_GSPC_N_G (DLC_CAT(LOWP_GSPC_LOG2_, LOWP_GSPC_MAX_GPV) + 1) /* gpv 1, 2, 4, ... */

#define LOWP_GSPC_FN(t, G, V, R, W) t##_gspc_g##G##_v##V##_r##R##_w##W
#define LOWP_GSPC_ENTRY(t, T, G, V, R, W) \
  [LOWP_GSPC_LOG2_##G][V - 1][R - 1][W - 1] = LOWP_GSPC_IN_MENU(T, V, R, W) ? LOWP_GSPC_FN(t, G, V, R, W) : NULL,

static int lowp_gspc_index(size_t gpv, size_t nv, size_t r, size_t w, size_t max_w, size_t *lg) {
  *lg = 0;
  while (((size_t)1 << *lg) < gpv) (*lg)++;
  return ((size_t)1 << *lg) == gpv && *lg < LOWP_GSPC_N_G && nv >= 1 && nv <= 4 && r >= 1 && r <= 4 && w >= 1 &&
         w <= max_w;
}

#ifndef LOWP_GSPC_GET_F16
#define LOWP_GSPC_KERNEL_F16(G, V, R, W)                                                                     \
  static inline void LOWP_GSPC_FN(f16, G, V, R, W)(const dlc_lowp_gspc_params *prm, const float *in,        \
                                                   const uint16_t *w, float *buf) {                          \
    lowp_gspc_tile(prm, in, w, buf, 0, G, V, R, W);                                                          \
  }
#define LOWP_GSPC_ENTRY_F16(G, V, R, W) LOWP_GSPC_ENTRY(f16, F16, G, V, R, W)
LOWP_GSPC_ALL(LOWP_GSPC_KERNEL_F16, F16)
static const dlc_f16_gspc_ukernel_fn lowp_gspc_table_f16[LOWP_GSPC_N_G][4][4][LOWP_GSPC_MAX_PIX_F16] = {
    LOWP_GSPC_ALL(LOWP_GSPC_ENTRY_F16, F16)};

static dlc_f16_gspc_ukernel_fn lowp_gspc_get_f16(size_t gpv, size_t nv, size_t r, size_t w) {
  size_t lg;
  return lowp_gspc_index(gpv, nv, r, w, LOWP_GSPC_MAX_PIX_F16, &lg) ? lowp_gspc_table_f16[lg][nv - 1][r - 1][w - 1] : NULL;
}
#define LOWP_GSPC_GET_F16 lowp_gspc_get_f16
#endif

#define LOWP_GSPC_KERNEL_Q8(G, V, R, W)                                                                      \
  static inline void LOWP_GSPC_FN(q8, G, V, R, W)(const dlc_lowp_gspc_params *prm, const int32_t *in,       \
                                                  const int16_t *w, int32_t *buf) {                          \
    lowp_gspc_tile(prm, in, w, buf, 1, G, V, R, W);                                                          \
  }
#define LOWP_GSPC_ENTRY_Q8(G, V, R, W) LOWP_GSPC_ENTRY(q8, Q8, G, V, R, W)
LOWP_GSPC_ALL(LOWP_GSPC_KERNEL_Q8, Q8)
static const dlc_q8_gspc_ukernel_fn lowp_gspc_table_q8[LOWP_GSPC_N_G][4][4][LOWP_GSPC_MAX_PIX_Q8] = {
    LOWP_GSPC_ALL(LOWP_GSPC_ENTRY_Q8, Q8)};

static dlc_q8_gspc_ukernel_fn lowp_gspc_get_q8(size_t gpv, size_t nv, size_t r, size_t w) {
  size_t lg;
  return lowp_gspc_index(gpv, nv, r, w, LOWP_GSPC_MAX_PIX_Q8, &lg) ? lowp_gspc_table_q8[lg][nv - 1][r - 1][w - 1] : NULL;
}

const dlc_lowp_gspc_family DLC_CAT(dlc_lowp_gspc__, LOWP_GSPC_ISA) = {
    .isa = DLC_STR(LOWP_GSPC_ISA),
    .t_o = DLC_VL,
    .t_i_f16 = LOWP_GSPC_T_I_F16,
    .t_i_q8 = LOWP_GSPC_T_I_Q8,
    .max_gpv = LOWP_GSPC_MAX_GPV,
    .get_f16 = LOWP_GSPC_GET_F16,
    .get_q8 = lowp_gspc_get_q8,
    .pack_f16 = LOWP_GSPC_PACK_F16,
    .pack_q8 = LOWP_GSPC_PACK_Q8,
    .mac_per_cycle_f16 = LOWP_GSPC_MAC_F16,
    .mac_per_cycle_q8 = LOWP_GSPC_MAC_Q8,
    .loads_per_cycle = LOWP_GSPC_LOADS,
    .latency_f16 = LOWP_GSPC_LAT_F16,
    .latency_q8 = LOWP_GSPC_LAT_Q8,
};
