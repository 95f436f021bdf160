/* lowp_gspc.h - the F16 and int8 gspc micro-kernels (src/ukernel/lowp_gspc_ukernel.h), written
 * once over the vector layer; an ISA's lowp_gspc_<isa>.c includes its vec.h, names its input
 * repacks and then includes this file, which defines dlc_lowp_gspc__<isa>. T_O = DLC_VL lanes.
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
 *   LOWP_GSPC_PACK_F16, LOWP_GSPC_PACK_Q8  the input repacks (functions; required: the repack
 *               is the ISA's own)
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

#if !defined(LOWP_GSPC_PACK_F16) || !defined(LOWP_GSPC_PACK_Q8)
#error "name the input repacks (LOWP_GSPC_PACK_F16, LOWP_GSPC_PACK_Q8) before including lowp_gspc.h"
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
