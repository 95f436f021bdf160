/* f32 gspc micro-kernels, generic C: the readable specification of gspc_ukernel.h.
 *
 * One template (gspc_tile) instantiated for every tile of the menu: the tile sizes are
 * compile-time constants, so the loops over the register tile have fixed trip counts and the
 * lane loop vectorises. T_O = 8 lanes. */
#include <stddef.h>
#include <stdint.h>

#include "../../core/util.h"
#include "../../ukernel/gspc_ukernel.h"
#include "gspc_menu.h"

#define TO 8
#define MAX_P 8        /* R*W */
#define MAX_NVL 16     /* NV*TO */

static void store_tile(const dlc_f32_gspc_params *prm, const float (*acc)[MAX_NVL],
                       const float *bias, float *out, size_t n_lanes, size_t r_valid, size_t w_n) {
  const int32_t *perm = prm->perm;
  for (size_t r = 0; r < r_valid; r++)
    for (size_t x = 0; x < w_n; x++) {
      const float *a = acc[r * w_n + x];
      float *o = out + (ptrdiff_t)r * prm->out_r_stride + (ptrdiff_t)x * prm->out_pix_stride;
      for (size_t j = 0; j < n_lanes; j++) {
        const size_t l = perm ? (size_t)perm[j] : j;
        o[(ptrdiff_t)j * prm->out_ch_stride] = dlc_clamp(a[l] + bias[l], prm->out_min, prm->out_max);
      }
    }
}

static inline __attribute__((always_inline)) void gspc_tile(
    const dlc_f32_gspc_params *prm, const float *restrict in, const float *restrict w,
    const float *restrict bias, float *out, size_t n_lanes, size_t r_valid, const size_t gpv,
    const size_t nv, const size_t rn, const size_t wn) {
  const size_t nvl = nv * TO;
  float acc[MAX_P][MAX_NVL] = {{0.0f}};
  const size_t w_ct = prm->n_tap * prm->t_i * nvl;
  for (size_t ct = 0; ct < prm->n_ct; ct++) {
    const size_t nti = ct + 1 < prm->n_ct ? prm->t_i : prm->ti_last;
    for (size_t t = 0; t < prm->n_tap; t++) {
      const float *restrict ib = in + (ptrdiff_t)ct * prm->in_ct_stride + prm->tap_off[t];
      const float *restrict wb = w + ct * w_ct + t * prm->t_i * nvl;
      for (size_t ti = 0; ti < nti; ti++) {
        const float *restrict wv = wb + ti * nvl;
        const float *restrict iv = ib + (ptrdiff_t)ti * prm->in_ti_stride;
        for (size_t r = 0; r < rn; r++)
          for (size_t x = 0; x < wn; x++) {
            /* lane l reads the input of its group, l % gpv, in the gpv-wide pixel */
            const float *restrict src = iv + (ptrdiff_t)r * prm->in_r_stride + x * gpv;
            for (size_t l = 0; l < nvl; l++) acc[r * wn + x][l] += src[l & (gpv - 1)] * wv[l];
          }
      }
    }
  }
  store_tile(prm, (const float (*)[MAX_NVL])acc, bias, out, n_lanes, r_valid, wn);
}

static void pack(const dlc_f32_gspc_pack_args *a) {
  const size_t gpv = a->gpv, ng = a->ng, qst = a->dst_q_stride;
  for (size_t c = 0; c < a->n_c; c++) {
    float *restrict d = a->dst + c * a->dst_c_stride;
    const float *restrict s = a->src + (ptrdiff_t)c * a->src_c_stride;
    for (size_t q = 0; q < a->nq; q++) {
      const int inside = q >= a->q_lo && q < a->q_hi;
      const float *restrict sq = s + ((ptrdiff_t)q * a->col_step + a->col0) * a->px_step;
      for (size_t gl = 0; gl < gpv; gl++) d[q * qst + gl] = inside && gl < ng ? sq[(ptrdiff_t)gl * a->g_step] : 0.0f;
    }
  }
}

#define KNAME(G, V, R, W) gspc_g##G##_v##V##_r##R##_w##W
#define KDEF(G, V, R, W)                                                                       \
  static void KNAME(G, V, R, W)(const dlc_f32_gspc_params *prm, const float *in, const float *w, \
                                const float *bias, float *out, size_t n_lanes, size_t r_valid) {  \
    gspc_tile(prm, in, w, bias, out, n_lanes, r_valid, G, V, R, W);                               \
  }
#define KENTRY(G, V, R, W) GSPC_SLOT(G, V, R, W) = KNAME(G, V, R, W),

/* The menu (gspc_menu.h): every gpv with one vector, 1 or 2 rows; two vectors for ordinary
   groups. */
GSPC_MENU(KDEF)

static const dlc_f32_gspc_ukernel_fn table[GSPC_N_G][GSPC_N_V][GSPC_N_R][GSPC_N_W] = {GSPC_MENU(KENTRY)};

static dlc_f32_gspc_ukernel_fn get(size_t gpv, size_t nv, size_t r, size_t w) {
  const int lg = gspc_menu_lg(gpv, nv, r, w);
  return lg < 0 ? NULL : table[lg][nv - 1][r - 1][w - 1];
}

const dlc_f32_gspc_family dlc_f32_gspc__generic = {
    .name = "f32_gspc__generic",
    .isa = "generic",
    .t_o = TO,
    .t_i = 8,
    .max_gpv = TO,
    .get = get,
    .get_blocked = NULL,
    .pack = pack,
    .fma_per_cycle = 1.0f,
    .loads_per_cycle = 2.0f,
    .fma_latency = 1.0f,
    .store_nhwc = 2.0f,
    .store_nchw = 4.0f,
};
