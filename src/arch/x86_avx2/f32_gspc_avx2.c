/* f32 gspc micro-kernels, AVX2 + FMA: T_O = 8 lanes.
 *
 * Register tile: R rows x W columns x NV vectors of 8 output lanes in ymm registers
 * (NV*R*W <= 12: 12 accumulators + NV weight vectors + a broadcast fit the 16 registers;
 * 2 FMA pipes x 4 cycles of latency need >= 8 in flight). Per reduction step the NV weight
 * vectors are loaded once and reused by every pixel; each pixel's input is one broadcast
 * (vbroadcastss, or vbroadcastsd / 128-bit / full load of GPV groups' inputs) reused by the NV
 * vectors. Same contract and structure as the AVX-512 family. */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../ukernel/gspc_ukernel.h"
#include "avx2_store.h"
#include "avx2_transpose.h"

#define TO 8
#define MAX_P 12
#define BUF_FLOATS 96 /* largest NV*R*W*8 of the menu */

/* Lanes lo <= i < hi set (as a maskload/maskstore mask). */
static inline __m256i lane_range(ptrdiff_t lo, ptrdiff_t hi) {
  const __m256i i = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i ge = _mm256_cmpgt_epi32(i, _mm256_set1_epi32((int)lo - 1));
  return _mm256_and_si256(ge, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)hi), i));
}
static inline __m256i lane_mask(size_t n) { return lane_range(0, n > 8 ? 8 : (ptrdiff_t)n); }

/* Bias, clamp, permutation and store of the accumulators spilled to buf[P][NV*8]. */
static __attribute__((noinline)) void store_tile(const dlc_f32_gspc_params *prm, float *buf,
                                                 size_t rn, size_t wn, size_t nv, const float *bias,
                                                 float *out, size_t n_lanes, size_t r_valid) {
  const size_t np = rn * wn, nvl = nv * TO;
  const __m256 lo = _mm256_set1_ps(prm->out_min), hi = _mm256_set1_ps(prm->out_max);
  const int permute = prm->perm != NULL;
  const __m256i pidx = permute ? _mm256_loadu_si256((const __m256i *)(const void *)prm->perm) : _mm256_setzero_si256();
  for (size_t v = 0; v < nv; v++) {
    const __m256 b = _mm256_loadu_ps(bias + v * TO);
    for (size_t p = 0; p < np; p++) {
      __m256 x = _mm256_add_ps(_mm256_load_ps(buf + p * nvl + v * TO), b);
      /* bound first: a NaN in x is what max/min return */
      x = _mm256_min_ps(hi, _mm256_max_ps(lo, x));
      if (permute) x = _mm256_permutevar8x32_ps(x, pidx);
      _mm256_store_ps(buf + p * nvl + v * TO, x);
    }
  }
  const ptrdiff_t cs = prm->out_ch_stride, ps = prm->out_pix_stride, rs = prm->out_r_stride;
  if (cs == 1) {
    for (size_t r = 0; r < r_valid; r++)
      for (size_t x = 0; x < wn; x++) {
        float *o = out + (ptrdiff_t)r * rs + (ptrdiff_t)x * ps;
        const float *s = buf + (r * wn + x) * nvl;
        for (size_t v = 0; v * TO < n_lanes; v++) {
          dlc_avx2_store_first(o + v * TO, (ptrdiff_t)(n_lanes - v * TO), _mm256_load_ps(s + v * TO));
        }
      }
  } else if (ps == 1) {
    /* NCHW: 8 pixels at a time transposed so each lane's pixels are one vector; pixel
       p = r*wn + x sits in lane p - p0 and row r's run is stored with a lane-range mask from
       a pointer set back by r*wn - p0. */
    for (size_t v = 0; v * TO < n_lanes; v++) {
      const size_t nl = n_lanes - v * TO < TO ? n_lanes - v * TO : TO;
      for (size_t p0 = 0; p0 < np; p0 += 8) {
        __m256 t[8];
        for (size_t p = 0; p < 8; p++) t[p] = p0 + p < np ? _mm256_load_ps(buf + (p0 + p) * nvl + v * TO) : _mm256_setzero_ps();
        dlc_avx2_transpose8(t);
        for (size_t r = 0; r < r_valid; r++) {
          const ptrdiff_t a = (ptrdiff_t)(r * wn) - (ptrdiff_t)p0, b = a + (ptrdiff_t)wn;
          if (b <= 0 || a >= 8) continue;
          const __m256i m = lane_range(a, b);
          for (size_t j = 0; j < nl; j++)
            _mm256_maskstore_ps(out + (ptrdiff_t)(v * TO + j) * cs + (ptrdiff_t)r * rs - a, m, t[j]);
        }
      }
    }
  } else {
    /* neither layout the library produces; kept exact for any strides */
    for (size_t r = 0; r < r_valid; r++)
      for (size_t x = 0; x < wn; x++)
        for (size_t j = 0; j < n_lanes; j++)
          out[(ptrdiff_t)r * rs + (ptrdiff_t)x * ps + (ptrdiff_t)j * cs] = buf[(r * wn + x) * nvl + j];
  }
}

static inline __attribute__((always_inline)) void gspc_tile(
    const dlc_f32_gspc_params *prm, const float *in, const float *w, const float *bias, float *out,
    size_t n_lanes, size_t r_valid, const size_t gpv, const size_t nv, const size_t rn, const size_t wn) {
  const size_t nvl = nv * TO;
  __m256 acc[MAX_P][3];
#pragma GCC unroll 12
  for (size_t p = 0; p < rn * wn; p++)
#pragma GCC unroll 3
    for (size_t v = 0; v < nv; v++) acc[p][v] = _mm256_setzero_ps();
  const size_t n_ct = prm->n_ct, n_tap = prm->n_tap, t_i = prm->t_i;
  const ptrdiff_t ti_stride = prm->in_ti_stride, r_stride = prm->in_r_stride;
  for (size_t ct = 0; ct < n_ct; ct++) {
    const size_t nti = ct + 1 < n_ct ? t_i : prm->ti_last;
    const float *in_ct = in + (ptrdiff_t)ct * prm->in_ct_stride;
    const float *w_ct = w + ct * n_tap * t_i * nvl;
    for (size_t t = 0; t < n_tap; t++) {
      const float *ip = in_ct + prm->tap_off[t];
      const float *wp = w_ct + t * t_i * nvl;
      for (size_t ti = 0; ti < nti; ti++) {
        __m256 wv[3];
#pragma GCC unroll 3
        for (size_t v = 0; v < nv; v++) wv[v] = _mm256_load_ps(wp + v * TO);
#pragma GCC unroll 4
        for (size_t r = 0; r < rn; r++)
#pragma GCC unroll 12
          for (size_t x = 0; x < wn; x++) {
            const __m256 b = dlc_avx2_bcast_groups(ip + (ptrdiff_t)r * r_stride + x * gpv, gpv);
#pragma GCC unroll 3
            for (size_t v = 0; v < nv; v++) acc[r * wn + x][v] = _mm256_fmadd_ps(b, wv[v], acc[r * wn + x][v]);
          }
        ip += ti_stride;
        wp += nvl;
      }
    }
  }
  if (prm->out_ch_stride == 1) {
    /* NHWC: bias, clamp and (masked) stores straight from the accumulators */
    const __m256 lo = _mm256_set1_ps(prm->out_min), hi = _mm256_set1_ps(prm->out_max);
    const int permute = nv == 1 && prm->perm != NULL;
    const ptrdiff_t ps = prm->out_pix_stride, rs = prm->out_r_stride;
    const size_t full = n_lanes / TO;   /* vectors stored whole; then at most one masked */
#pragma GCC unroll 4
    for (size_t r = 0; r < rn; r++) {
      if (r >= r_valid) break;
#pragma GCC unroll 12
      for (size_t x = 0; x < wn; x++)
#pragma GCC unroll 3
        for (size_t v = 0; v < nv; v++) {
          __m256 o = _mm256_add_ps(acc[r * wn + x][v], _mm256_loadu_ps(bias + v * TO));
          o = _mm256_min_ps(hi, _mm256_max_ps(lo, o));
          if (permute) o = _mm256_permutevar8x32_ps(o, _mm256_loadu_si256((const __m256i *)(const void *)prm->perm));
          float *dst = out + (ptrdiff_t)r * rs + (ptrdiff_t)x * ps + v * TO;
          if (v < full)
            _mm256_storeu_ps(dst, o);
          else if (v == full && n_lanes % TO)
            dlc_avx2_store_first(dst, (ptrdiff_t)(n_lanes % TO), o);
        }
    }
    return;
  }
  float buf[BUF_FLOATS] __attribute__((aligned(32)));
#pragma GCC unroll 12
  for (size_t p = 0; p < rn * wn; p++)
#pragma GCC unroll 3
    for (size_t v = 0; v < nv; v++) _mm256_store_ps(buf + p * nvl + v * TO, acc[p][v]);
  store_tile(prm, buf, rn, wn, nv, bias, out, n_lanes, r_valid);
}

/* The repack (gspc_ukernel.h), as in the AVX-512 family with 8x8 blocks: channels contiguous
   (NHWC) -> transpose; one channel of gpv groups (NHWC depthwise) -> per-column copy; else a
   gather (a plain load where the columns are contiguous and all inside the image). */
static void pack_zero(const dlc_f32_gspc_pack_args *a) {
  for (size_t c = 0; c < a->n_c; c++) memset(a->dst + c * a->dst_c_stride, 0, a->nq * a->gpv * sizeof(float));
}

static inline const float *src_at(const dlc_f32_gspc_pack_args *a, size_t q, size_t gl) {
  return a->src + ((ptrdiff_t)q * a->col_step + a->col0) * a->px_step + (ptrdiff_t)gl * a->g_step;
}

static void pack_transpose(const dlc_f32_gspc_pack_args *a) {
  size_t lg = 0;
  while (((size_t)1 << lg) < a->gpv) lg++;
  const size_t total = a->nq << lg;
  for (size_t u0 = 0; u0 < total; u0 += 8) {
    const size_t nu = total - u0 < 8 ? total - u0 : 8;
    for (size_t c0 = 0; c0 < a->n_c; c0 += 8) {
      const size_t nc = a->n_c - c0 < 8 ? a->n_c - c0 : 8;
      const __m256i cm = lane_mask(nc);
      __m256 r[8];
      for (size_t i = 0; i < 8; i++) {
        const size_t u = u0 + i, q = u >> lg, gl = u & (a->gpv - 1);
        r[i] = i < nu && gl < a->ng && q >= a->q_lo && q < a->q_hi ? _mm256_maskload_ps(src_at(a, q, gl) + c0, cm)
                                                                     : _mm256_setzero_ps();
      }
      dlc_avx2_transpose8(r);
      for (size_t j = 0; j < nc; j++) dlc_avx2_store_first(a->dst + (c0 + j) * a->dst_c_stride + u0, (ptrdiff_t)nu, r[j]);
    }
  }
}

static void pack_groups(const dlc_f32_gspc_pack_args *a) {
  const __m256i gm = lane_mask(a->ng);
  for (size_t q = 0; q < a->nq; q++) {
    const __m256 v = q >= a->q_lo && q < a->q_hi ? _mm256_maskload_ps(src_at(a, q, 0), gm) : _mm256_setzero_ps();
    dlc_avx2_store_first(a->dst + q * a->gpv, (ptrdiff_t)a->gpv, v);
  }
}

/* Small groups (NHWC, gpv*C_PG <= 8): as in the AVX-512 family, one permutation per column
   and a masked store of gpv floats per channel. */
static void pack_small_groups(const dlc_f32_gspc_pack_args *a) {
  const size_t gpv = a->gpv, nc = a->n_c;
  int32_t idx[8];
  for (size_t k = 0; k < 8; k++) idx[k] = (int32_t)(k < nc * gpv ? (k % gpv) * nc + k / gpv : k);
  const __m256i pidx = _mm256_loadu_si256((const __m256i *)(const void *)idx);
  const __m256i lm = lane_mask(a->ng * nc);
  for (size_t q = 0; q < a->nq; q++) {
    const __m256 v = q >= a->q_lo && q < a->q_hi
                         ? _mm256_permutevar8x32_ps(_mm256_maskload_ps(src_at(a, q, 0), lm), pidx)
                         : _mm256_setzero_ps();
    for (size_t c = 0; c < nc; c++)
      _mm256_maskstore_ps(a->dst + c * a->dst_c_stride + q * gpv - c * gpv,
                          lane_range((ptrdiff_t)(c * gpv), (ptrdiff_t)((c + 1) * gpv)), v);
  }
}

static void pack_gather(const dlc_f32_gspc_pack_args *a) {
  const size_t gpv = a->gpv, total = a->nq * gpv;
  const ptrdiff_t qs = a->col_step * a->px_step;
  const int contig = gpv == 1 && qs == 1;
  int32_t lane_off[8], lane_q[8], lane_g[8];
  for (int e = 0; e < 8; e++) {
    lane_q[e] = e / (int)gpv;
    lane_g[e] = e % (int)gpv;
    lane_off[e] = (int32_t)(lane_q[e] * qs + lane_g[e] * a->g_step);
  }
  const __m256i voff = _mm256_loadu_si256((const __m256i *)(const void *)lane_off);
  const __m256i vq = _mm256_loadu_si256((const __m256i *)(const void *)lane_q);
  const __m256i gmask = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)a->ng),
                                           _mm256_loadu_si256((const __m256i *)(const void *)lane_g));
  const __m256i qlo = _mm256_set1_epi32((int)a->q_lo - 1), qhi = _mm256_set1_epi32((int)a->q_hi);
  const size_t qpv = 8 / gpv;
  for (size_t c = 0; c < a->n_c; c++) {
    float *d = a->dst + c * a->dst_c_stride;
    const float *s = a->src + (ptrdiff_t)c * a->src_c_stride;
    for (size_t e0 = 0, q0 = 0; e0 < total; e0 += 8, q0 += qpv) {
      const __m256i q = _mm256_add_epi32(vq, _mm256_set1_epi32((int)q0));
      const __m256i tail = lane_mask(total - e0);
      const __m256i m = _mm256_and_si256(_mm256_and_si256(gmask, tail),
                                         _mm256_and_si256(_mm256_cmpgt_epi32(q, qlo), _mm256_cmpgt_epi32(qhi, q)));
      const ptrdiff_t base = ((ptrdiff_t)q0 * a->col_step + a->col0) * a->px_step;
      __m256 v;
      if (contig && _mm256_movemask_ps(_mm256_castsi256_ps(m)) == 0xFF)
        v = _mm256_loadu_ps(s + base);
      else
        v = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), s, _mm256_add_epi32(voff, _mm256_set1_epi32((int)base)),
                                     _mm256_castsi256_ps(m), 4);
      dlc_avx2_store_first(d + e0, (ptrdiff_t)(total - e0), v);
    }
  }
}

static void pack_scalar(const dlc_f32_gspc_pack_args *a) {
  for (size_t c = 0; c < a->n_c; c++) {
    float *d = a->dst + c * a->dst_c_stride;
    for (size_t q = 0; q < a->nq; q++)
      for (size_t gl = 0; gl < a->gpv; gl++)
        d[q * a->dst_q_stride + gl] = gl < a->ng && q >= a->q_lo && q < a->q_hi ? src_at(a, q, gl)[(ptrdiff_t)c * a->src_c_stride] : 0.0f;
  }
}

static void pack(const dlc_f32_gspc_pack_args *a) {
  if (a->dst_q_stride != a->gpv) {
    pack_scalar(a);   /* no channel-blocked kernels in this family */
  } else if (a->q_lo >= a->q_hi) {
    pack_zero(a);
  } else if (a->src_c_stride == 1 && a->g_step == 1 && a->gpv > 1) {
    pack_groups(a);
  } else if (a->src_c_stride == 1 && a->gpv > 1 && a->g_step == (ptrdiff_t)a->n_c && a->gpv * a->n_c <= 8) {
    pack_small_groups(a);
  } else if (a->src_c_stride == 1) {
    pack_transpose(a);
  } else {
    /* int32 gather offsets must reach the farthest element of the row */
    const ptrdiff_t far = ((ptrdiff_t)a->nq * a->col_step + (a->col0 < 0 ? -a->col0 : a->col0)) * a->px_step +
                          (ptrdiff_t)a->gpv * a->g_step;
    if (far < INT32_MAX / 2)
      pack_gather(a);
    else
      pack_scalar(a);
  }
}

#define KNAME(G, V, R, W) gspc_g##G##_v##V##_r##R##_w##W
#define KDEF(G, V, R, W)                                                                          \
  static void KNAME(G, V, R, W)(const dlc_f32_gspc_params *prm, const float *in, const float *w,    \
                                const float *bias, float *out, size_t n_lanes, size_t r_valid) {     \
    gspc_tile(prm, in, w, bias, out, n_lanes, r_valid, G, V, R, W);                                  \
  }
#define LOG2_1 0
#define LOG2_2 1
#define LOG2_4 2
#define LOG2_8 3
#define KENTRY(G, V, R, W) [LOG2_##G][V - 1][R - 1][W - 1] = KNAME(G, V, R, W),

#define WS2(X, G, V, R) X(G, V, R, 1) X(G, V, R, 2)
#define WS3(X, G, V, R) WS2(X, G, V, R) X(G, V, R, 3)
#define WS4(X, G, V, R) WS3(X, G, V, R) X(G, V, R, 4)
#define WS6(X, G, V, R) WS4(X, G, V, R) X(G, V, R, 5) X(G, V, R, 6)
#define WS12(X, G, V, R) \
  WS6(X, G, V, R) X(G, V, R, 7) X(G, V, R, 8) X(G, V, R, 9) X(G, V, R, 10) X(G, V, R, 11) X(G, V, R, 12)
/* One vector: up to 12 pixels in 1, 2 or 4 rows; several vectors (ordinary groups only): up
   to 12 accumulators. */
#define MENU_G(X, G) WS12(X, G, 1, 1) WS6(X, G, 1, 2) WS3(X, G, 1, 4)
#define MENU(X) \
  MENU_G(X, 1) MENU_G(X, 2) MENU_G(X, 4) MENU_G(X, 8) WS6(X, 1, 2, 1) WS3(X, 1, 2, 2) WS4(X, 1, 3, 1) WS2(X, 1, 3, 2)

MENU(KDEF)

#define N_G 4
#define N_V 3
#define N_R 4
#define N_W 12
static const dlc_f32_gspc_ukernel_fn table[N_G][N_V][N_R][N_W] = {MENU(KENTRY)};

static dlc_f32_gspc_ukernel_fn get(size_t gpv, size_t nv, size_t r, size_t w) {
  size_t lg = 0;
  while (((size_t)1 << lg) < gpv) lg++;
  if (((size_t)1 << lg) != gpv || lg >= N_G || nv < 1 || nv > N_V || r < 1 || r > N_R || w < 1 ||
      w > N_W)
    return NULL;
  return table[lg][nv - 1][r - 1][w - 1];
}

const dlc_f32_gspc_family dlc_f32_gspc__avx2 = {
    .name = "f32_gspc__avx2",
    .isa = "avx2",
    .t_o = TO,
    .t_i = 16,
    .max_gpv = TO,
    .get = get,
    .get_blocked = NULL,
    .pack = pack,
    .fma_per_cycle = 2.0f,
    .loads_per_cycle = 2.0f,
    .fma_latency = 4.0f,
    .store_nhwc = 0.5f,
    .store_nchw = 1.0f,
};
