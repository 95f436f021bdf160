/* F16 and int8 gspc micro-kernels, generic C: the readable specification of lowp_gspc_ukernel.h.
 *
 * One template per dtype (f16_tile, q8_tile) instantiated for every tile of the menu with the
 * tile sizes as compile-time constants, so the lane loops have fixed trip counts. T_O = 8. */
#include <stddef.h>
#include <stdint.h>

#include "../../ukernel/lowp_gspc_ukernel.h"
#include "../../quant/quant.h"
#include "gspc_menu.h"

/* gcc 12's loop vectoriser turned these tiles' strided reads (a pixel's gpv inputs, one channel
   after another) into vector loads reaching past the last channel the tile reads: one row or
   channel beyond the packed input (found by test_ukernel_lowp_gspc's guard pages, x86-64 and
   AArch64 at -O3). The kernels stay scalar in gcc; they are the portable reference, the fast
   paths are the ISA families. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-tree-vectorize")
#endif

#define TO 8
#define MAX_P 8     /* R*W */
#define MAX_NVL 16  /* NV*TO */

/* acc[p][l] to buf in channel order (lowp_gspc_ukernel.h). */
#define WRITE_TILE(prm, acc, rn, wn, nvl, buf)                                       \
  for (size_t r = 0; r < (rn); r++)                                                  \
    for (size_t x = 0; x < (wn); x++)                                                \
      for (size_t j = 0; j < (nvl); j++) {                                           \
        const size_t l = (prm)->perm ? (size_t)(prm)->perm[j] : j;                   \
        if ((prm)->channel_major)                                                    \
          (buf)[j * (prm)->ldb + r * (prm)->ldr + x] = (acc)[r * (wn) + x][l];       \
        else                                                                         \
          (buf)[(r * (wn) + x) * (prm)->ldb + j] = (acc)[r * (wn) + x][l];           \
      }

static inline __attribute__((always_inline)) void f16_tile(const dlc_lowp_gspc_params *prm, const float *restrict in,
                                                           const uint16_t *restrict w, float *buf, const size_t gpv,
                                                           const size_t nv, const size_t rn, const size_t wn) {
  const size_t nvl = nv * TO;
  float acc[MAX_P][MAX_NVL] = {{0.0f}};
  const size_t w_ct = prm->n_tap * prm->t_i * nvl;
  for (size_t ct = 0; ct < prm->n_ct; ct++) {
    const size_t nti = ct + 1 < prm->n_ct ? prm->t_i : prm->ti_last;
    for (size_t t = 0; t < prm->n_tap; t++) {
      const float *restrict ib = in + (ptrdiff_t)ct * prm->in_ct_stride + prm->tap_off[t];
      const uint16_t *restrict wb = w + ct * w_ct + t * prm->t_i * nvl;
      for (size_t ti = 0; ti < nti; ti++) {
        float wv[MAX_NVL];
        for (size_t l = 0; l < nvl; l++) wv[l] = dlc_f16_to_f32(wb[ti * nvl + l]);
        const float *restrict iv = ib + (ptrdiff_t)ti * prm->in_ti_stride;
        for (size_t r = 0; r < rn; r++)
          for (size_t x = 0; x < wn; x++) {
            /* lane l reads the input of its group, l % gpv, in the gpv-wide pixel; the gpv values
               are read first, one by one: with the reads inside the lane loop, gcc 12's -O3
               vectorised the row loop into loads one row past the tile (outside the contract) */
            const float *src = iv + (ptrdiff_t)r * prm->in_r_stride + x * gpv;
            float v[TO];
            for (size_t g = 0; g < gpv; g++) v[g] = src[g];
            for (size_t l = 0; l < nvl; l++) acc[r * wn + x][l] += v[l & (gpv - 1)] * wv[l];
          }
      }
    }
  }
  WRITE_TILE(prm, acc, rn, wn, nvl, buf)
}

static inline __attribute__((always_inline)) void q8_tile(const dlc_lowp_gspc_params *prm, const int32_t *restrict in,
                                                          const int16_t *restrict w, int32_t *buf, const size_t gpv,
                                                          const size_t nv, const size_t rn, const size_t wn) {
  const size_t nvl = nv * TO;
  int32_t acc[MAX_P][MAX_NVL] = {{0}};
  const size_t w_ct = prm->n_tap * prm->t_i * nvl * 2;
  for (size_t ct = 0; ct < prm->n_ct; ct++) {
    const size_t nti = ct + 1 < prm->n_ct ? prm->t_i : prm->ti_last;
    for (size_t t = 0; t < prm->n_tap; t++) {
      const int32_t *restrict ib = in + (ptrdiff_t)ct * prm->in_ct_stride + prm->tap_off[t];
      const int16_t *restrict wb = w + ct * w_ct + t * prm->t_i * nvl * 2;
      for (size_t ti = 0; ti < nti; ti++) {
        const int16_t *restrict wv = wb + ti * nvl * 2;
        const int32_t *restrict iv = ib + (ptrdiff_t)ti * prm->in_ti_stride;
        for (size_t r = 0; r < rn; r++)
          for (size_t x = 0; x < wn; x++) {
            const int32_t *src = iv + (ptrdiff_t)r * prm->in_r_stride + x * gpv;
            int32_t v[TO]; /* as in f16_tile */
            for (size_t g = 0; g < gpv; g++) v[g] = src[g];
            for (size_t l = 0; l < nvl; l++) {
              const uint32_t pr = (uint32_t)v[l & (gpv - 1)];
              const int32_t lo = (int16_t)(uint16_t)(pr & 0xffffu), hi = (int16_t)(uint16_t)(pr >> 16);
              acc[r * wn + x][l] += lo * wv[2 * l] + hi * wv[2 * l + 1];
            }
          }
      }
    }
  }
  WRITE_TILE(prm, acc, rn, wn, nvl, buf)
}

/* The element of channel ch at (q, gl) of a packed row, or NULL in the padding. */
static inline const void *src_at(const dlc_lowp_gspc_pack_args *a, size_t es, size_t ch, size_t q, size_t gl) {
  if (gl >= a->ng || q < a->q_lo || q >= a->q_hi) return NULL;
  const ptrdiff_t i = (ptrdiff_t)ch * a->src_c_stride + ((ptrdiff_t)q * a->col_step + a->col0) * a->px_step +
                      (ptrdiff_t)gl * a->g_step;
  return (const char *)a->src + i * (ptrdiff_t)es;
}

static void pack_f16(const dlc_lowp_gspc_pack_args *a) {
  float *dst = a->dst;
  for (size_t c = 0; c < a->n_c; c++)
    for (size_t q = 0; q < a->nq; q++)
      for (size_t gl = 0; gl < a->gpv; gl++) {
        const uint16_t *s = src_at(a, 2, c, q, gl);
        dst[c * a->dst_c_stride + q * a->gpv + gl] = s ? dlc_f16_to_f32(*s) : 0.0f;
      }
}

static int32_t q8_value(const dlc_lowp_gspc_pack_args *a, const void *s) {
  return (a->is_signed ? (int32_t) * (const int8_t *)s : (int32_t) * (const uint8_t *)s) - a->zp;
}

static void pack_q8(const dlc_lowp_gspc_pack_args *a) {
  int32_t *dst = a->dst;
  for (size_t c = 0; c < a->n_c; c++)
    for (size_t q = 0; q < a->nq; q++)
      for (size_t gl = 0; gl < a->gpv; gl++) {
        const void *s0 = src_at(a, 1, 2 * c, q, gl);
        const void *s1 = 2 * c + 1 < a->n_src_c ? src_at(a, 1, 2 * c + 1, q, gl) : NULL;
        const int32_t lo = s0 ? q8_value(a, s0) : 0, hi = s1 ? q8_value(a, s1) : 0;
        dst[c * a->dst_c_stride + q * a->gpv + gl] = (int32_t)(((uint32_t)(uint16_t)hi << 16) | (uint16_t)lo);
      }
}

#define KNAME(T, G, V, R, W) T##_gspc_g##G##_v##V##_r##R##_w##W
#define KDEF_F16(G, V, R, W)                                                                               \
  static void KNAME(f16, G, V, R, W)(const dlc_lowp_gspc_params *prm, const float *in, const uint16_t *w, \
                                     float *buf) {                                                        \
    f16_tile(prm, in, w, buf, G, V, R, W);                                                                \
  }
#define KDEF_Q8(G, V, R, W)                                                                                \
  static void KNAME(q8, G, V, R, W)(const dlc_lowp_gspc_params *prm, const int32_t *in, const int16_t *w, \
                                    int32_t *buf) {                                                       \
    q8_tile(prm, in, w, buf, G, V, R, W);                                                                 \
  }
#define KENTRY_F16(G, V, R, W) GSPC_SLOT(G, V, R, W) = KNAME(f16, G, V, R, W),
#define KENTRY_Q8(G, V, R, W) GSPC_SLOT(G, V, R, W) = KNAME(q8, G, V, R, W),

/* The menu the fp32 generic family has too (gspc_menu.h). */
GSPC_MENU(KDEF_F16)
GSPC_MENU(KDEF_Q8)

static const dlc_f16_gspc_ukernel_fn table_f16[GSPC_N_G][GSPC_N_V][GSPC_N_R][GSPC_N_W] = {GSPC_MENU(KENTRY_F16)};
static const dlc_q8_gspc_ukernel_fn table_q8[GSPC_N_G][GSPC_N_V][GSPC_N_R][GSPC_N_W] = {GSPC_MENU(KENTRY_Q8)};

static dlc_f16_gspc_ukernel_fn get_f16(size_t gpv, size_t nv, size_t r, size_t w) {
  const int lg = gspc_menu_lg(gpv, nv, r, w);
  return lg < 0 ? NULL : table_f16[lg][nv - 1][r - 1][w - 1];
}
static dlc_q8_gspc_ukernel_fn get_q8(size_t gpv, size_t nv, size_t r, size_t w) {
  const int lg = gspc_menu_lg(gpv, nv, r, w);
  return lg < 0 ? NULL : table_q8[lg][nv - 1][r - 1][w - 1];
}

const dlc_lowp_gspc_family dlc_lowp_gspc__generic = {
    .isa = "generic",
    .t_o = TO,
    .t_i_f16 = 8,
    .t_i_q8 = 4,
    .max_gpv = TO,
    .get_f16 = get_f16,
    .get_q8 = get_q8,
    .pack_f16 = pack_f16,
    .pack_q8 = pack_q8,
    .mac_per_cycle_f16 = 1.0f,
    .mac_per_cycle_q8 = 1.0f,
    .loads_per_cycle = 2.0f,
    .latency_f16 = 1.0f,
    .latency_q8 = 1.0f,
};
