/* lowp_gspc_tiles.h - the F16 and int8 gspc micro-kernels on 256-bit vectors (T_O = 8 lanes,
 * lowp_gspc_ukernel.h) and their menu, as one template for the x86 ISAs that have them. A file
 * defines Q8_DOT2(acc, a, b) (acc + the s32 sums of the s16 pair products: vpmaddwd + vpaddd on
 * avx2, vpdpwssd with VNNI, the same sums bit for bit) and includes this once; it then has the
 * static menus get_q8 and, unless LOWP_GSPC_Q8_ONLY (a VNNI family takes avx2's F16 kernels),
 * get_f16.
 *
 * The register tile of the fp32 family (f32_gspc_avx2.c): R rows x W columns x NV vectors,
 * NV*R*W <= 12 accumulators; per reduction step the NV weight vectors are loaded once and each
 * pixel's input is one broadcast of gpv 32-bit elements reused by the NV vectors. One template
 * for both dtypes, which differ only in the weight load and the product:
 *   F16:  weights vcvtph2ps from 8 halves, vfmadd231ps;
 *   int8: weights 8 s16 pairs, Q8_DOT2 of the broadcast pair(s) (exact in s32).
 * The accumulators leave permuted (groups-in-lanes order to channel order) with vpermd, pixel-
 * major as they are or channel-major through 8 x 8 transposes. */
#ifndef Q8_DOT2
#error "define Q8_DOT2 before including lowp_gspc_tiles.h"
#endif

#include "avx2_transpose.h"

#define TO 8
#define MAX_P 12

/* The tile; acc holds fp32 (F16) or s32 (int8) bits in __m256 registers (casts are free). */
static inline __attribute__((always_inline)) void lowp_tile(const dlc_lowp_gspc_params *prm, const void *in,
                                                            const void *w, void *buf, const int q8, const size_t gpv,
                                                            const size_t nv, const size_t rn, const size_t wn) {
  const size_t nvl = nv * TO, np = rn * wn;
  __m256 acc[MAX_P][3];
#pragma GCC unroll 12
  for (size_t p = 0; p < np; p++)
#pragma GCC unroll 3
    for (size_t v = 0; v < nv; v++) acc[p][v] = _mm256_setzero_ps();
  const size_t n_ct = prm->n_ct, n_tap = prm->n_tap, t_i = prm->t_i;
  const ptrdiff_t ti_stride = prm->in_ti_stride, r_stride = prm->in_r_stride;
  const size_t wstep = q8 ? 2 * nvl : nvl; /* s16 or halves per (ct, tap, ti) */
  for (size_t ct = 0; ct < n_ct; ct++) {
    const size_t nti = ct + 1 < n_ct ? t_i : prm->ti_last;
    const int32_t *in_ct = (const int32_t *)in + (ptrdiff_t)ct * prm->in_ct_stride;
    const uint16_t *w_ct = (const uint16_t *)w + ct * n_tap * t_i * wstep;
    for (size_t t = 0; t < n_tap; t++) {
      const int32_t *ip = in_ct + prm->tap_off[t];
      const uint16_t *wp = w_ct + t * t_i * wstep;
      for (size_t ti = 0; ti < nti; ti++) {
        __m256 wv[3];
#pragma GCC unroll 3
        for (size_t v = 0; v < nv; v++)
          wv[v] = q8 ? _mm256_castsi256_ps(_mm256_load_si256((const __m256i *)(const void *)(wp + v * 2 * TO)))
                     : _mm256_cvtph_ps(_mm_load_si128((const __m128i *)(const void *)(wp + v * TO)));
#pragma GCC unroll 4
        for (size_t r = 0; r < rn; r++)
#pragma GCC unroll 12
          for (size_t x = 0; x < wn; x++) {
            const __m256 b = dlc_avx2_bcast_groups(ip + (ptrdiff_t)r * r_stride + x * gpv, gpv);
#pragma GCC unroll 3
            for (size_t v = 0; v < nv; v++) {
              __m256 *a = &acc[r * wn + x][v];
              if (q8)
                *a = _mm256_castsi256_ps(
                    Q8_DOT2(_mm256_castps_si256(*a), _mm256_castps_si256(b), _mm256_castps_si256(wv[v])));
              else
                *a = _mm256_fmadd_ps(b, wv[v], *a);
            }
          }
        ip += ti_stride;
        wp += wstep;
      }
    }
  }
  if (nv == 1 && prm->perm) {
    const __m256i pidx = _mm256_loadu_si256((const __m256i *)(const void *)prm->perm);
#pragma GCC unroll 12
    for (size_t p = 0; p < np; p++) acc[p][0] = _mm256_permutevar8x32_ps(acc[p][0], pidx);
  }
  float *out = buf;
  const size_t ldb = prm->ldb;
  if (!prm->channel_major) {
#pragma GCC unroll 12
    for (size_t p = 0; p < np; p++)
#pragma GCC unroll 3
      for (size_t v = 0; v < nv; v++) _mm256_storeu_ps(out + p * ldb + v * TO, acc[p][v]);
    return;
  }
  const size_t ldr = prm->ldr;
#pragma GCC unroll 3
  for (size_t v = 0; v < nv; v++)
#pragma GCC unroll 4
    for (size_t r = 0; r < rn; r++)
#pragma GCC unroll 2
      for (size_t x0 = 0; x0 < wn; x0 += 8) {
        __m256 t[8];
#pragma GCC unroll 8
        for (size_t i = 0; i < 8; i++) t[i] = x0 + i < wn ? acc[r * wn + x0 + i][v] : _mm256_setzero_ps();
        dlc_avx2_transpose8(t);
#pragma GCC unroll 8
        for (size_t j = 0; j < 8; j++) _mm256_storeu_ps(out + (v * TO + j) * ldb + r * ldr + x0, t[j]);
      }
}

/* ---- the menu ---------------------------------------------------------------------------------- */

#define KNAME(T, G, V, R, W) T##_gspc_g##G##_v##V##_r##R##_w##W
#define KDEF_F16(G, V, R, W)                                                                               \
  static void KNAME(f16, G, V, R, W)(const dlc_lowp_gspc_params *prm, const float *in, const uint16_t *w, \
                                     float *buf) {                                                        \
    lowp_tile(prm, in, w, buf, 0, G, V, R, W);                                                            \
  }
#define KDEF_Q8(G, V, R, W)                                                                                \
  static void KNAME(q8, G, V, R, W)(const dlc_lowp_gspc_params *prm, const int32_t *in, const int16_t *w, \
                                    int32_t *buf) {                                                       \
    lowp_tile(prm, in, w, buf, 1, G, V, R, W);                                                            \
  }
#define LOG2_1 0
#define LOG2_2 1
#define LOG2_4 2
#define LOG2_8 3
#define KENTRY_F16(G, V, R, W) [LOG2_##G][V - 1][R - 1][W - 1] = KNAME(f16, G, V, R, W),
#define KENTRY_Q8(G, V, R, W) [LOG2_##G][V - 1][R - 1][W - 1] = KNAME(q8, G, V, R, W),

/* The fp32 family's menu: one vector, up to 12 pixels in 1, 2 or 4 rows; several vectors
   (ordinary groups only), up to 12 accumulators. */
#define WS2(X, G, V, R) X(G, V, R, 1) X(G, V, R, 2)
#define WS3(X, G, V, R) WS2(X, G, V, R) X(G, V, R, 3)
#define WS4(X, G, V, R) WS3(X, G, V, R) X(G, V, R, 4)
#define WS6(X, G, V, R) WS4(X, G, V, R) X(G, V, R, 5) X(G, V, R, 6)
#define WS12(X, G, V, R) \
  WS6(X, G, V, R) X(G, V, R, 7) X(G, V, R, 8) X(G, V, R, 9) X(G, V, R, 10) X(G, V, R, 11) X(G, V, R, 12)
#define MENU_G(X, G) WS12(X, G, 1, 1) WS6(X, G, 1, 2) WS3(X, G, 1, 4)
#define MENU(X) \
  MENU_G(X, 1) MENU_G(X, 2) MENU_G(X, 4) MENU_G(X, 8) WS6(X, 1, 2, 1) WS3(X, 1, 2, 2) WS4(X, 1, 3, 1) WS2(X, 1, 3, 2)

#ifndef LOWP_GSPC_Q8_ONLY
MENU(KDEF_F16)
#endif
MENU(KDEF_Q8)

#define N_G 4
#define N_V 3
#define N_R 4
#define N_W 12
#ifndef LOWP_GSPC_Q8_ONLY
static const dlc_f16_gspc_ukernel_fn table_f16[N_G][N_V][N_R][N_W] = {MENU(KENTRY_F16)};
#endif
static const dlc_q8_gspc_ukernel_fn table_q8[N_G][N_V][N_R][N_W] = {MENU(KENTRY_Q8)};

static int tile_index(size_t gpv, size_t nv, size_t r, size_t w, size_t *lg) {
  *lg = 0;
  while (((size_t)1 << *lg) < gpv) (*lg)++;
  return ((size_t)1 << *lg) == gpv && *lg < N_G && nv >= 1 && nv <= N_V && r >= 1 && r <= N_R && w >= 1 && w <= N_W;
}
#ifndef LOWP_GSPC_Q8_ONLY
static dlc_f16_gspc_ukernel_fn get_f16(size_t gpv, size_t nv, size_t r, size_t w) {
  size_t lg;
  return tile_index(gpv, nv, r, w, &lg) ? table_f16[lg][nv - 1][r - 1][w - 1] : NULL;
}
#endif
static dlc_q8_gspc_ukernel_fn get_q8(size_t gpv, size_t nv, size_t r, size_t w) {
  size_t lg;
  return tile_index(gpv, nv, r, w, &lg) ? table_q8[lg][nv - 1][r - 1][w - 1] : NULL;
}
