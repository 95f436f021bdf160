/* f32 gspc micro-kernels, AVX-512 (F, DQ): T_O = 16 lanes.
 *
 * Register tile: R rows x W columns x NV vectors of 16 output lanes, all accumulators in zmm
 * registers (NV*R*W <= 24: 24 accumulators + NV weight vectors + a broadcast fit the 32
 * registers; 2 FMA pipes x 4 cycles of latency need >= 8 of them in flight). Per reduction step
 * the NV weight vectors are loaded once and reused by every pixel; each pixel's input is one
 * broadcast (folded into the FMA as {1to16} for GPV = 1) reused by the NV vectors.
 * Groups in lanes: GPV groups share a vector; the input of a pixel is then GPV consecutive
 * floats broadcast to every GPV-lane block (vbroadcastsd / f32x4 / f32x8, or a full load). */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../ukernel/gspc_ukernel.h"

#define TO 16
#define MAX_NVL 64
#define MAX_P 16
#define BUF_FLOATS 384 /* largest NV*R*W*16 of the menu */

/* GPV consecutive floats repeated over the 16 lanes. */
static inline __attribute__((always_inline)) __m512 bcast(const float *p, const size_t gpv) {
  if (gpv == 1) return _mm512_set1_ps(*p);
  if (gpv == 2) {
    double d;
    memcpy(&d, p, sizeof d);
    return _mm512_castpd_ps(_mm512_set1_pd(d));
  }
  if (gpv == 4) return _mm512_broadcast_f32x4(_mm_loadu_ps(p));
  if (gpv == 8) return _mm512_broadcast_f32x8(_mm256_loadu_ps(p));
  return _mm512_loadu_ps(p);
}

/* rows[0..15] (16 pixels x 16 lanes) -> rows[j] = lane j of every pixel. */
static inline void transpose16(__m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  /* u[4i+m], 128-bit lane k: column 4k+m of rows 4i..4i+3 */
  for (int i = 0; i < 4; i++) {
    const __m512d a = _mm512_castps_pd(t[4 * i]), b = _mm512_castps_pd(t[4 * i + 2]);
    const __m512d c = _mm512_castps_pd(t[4 * i + 1]), d = _mm512_castps_pd(t[4 * i + 3]);
    u[4 * i] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
    u[4 * i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    u[4 * i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(c, d));
    u[4 * i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(c, d));
  }
  for (int m = 0; m < 4; m++) {
    const __m512 v0 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0x88);
    const __m512 v1 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0xDD);
    const __m512 w0 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0x88);
    const __m512 w1 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0xDD);
    r[m] = _mm512_shuffle_f32x4(v0, w0, 0x88);
    r[8 + m] = _mm512_shuffle_f32x4(v0, w0, 0xDD);
    r[4 + m] = _mm512_shuffle_f32x4(v1, w1, 0x88);
    r[12 + m] = _mm512_shuffle_f32x4(v1, w1, 0xDD);
  }
}

static inline __mmask16 lane_mask(size_t n) { return (__mmask16)(n >= 16 ? 0xFFFF : (1u << n) - 1u); }

/* Bias, clamp, permutation and store of the accumulators spilled to buf[P][NV*16]: the
   epilogue is shared by every tile of the menu (once per tile, it need not be unrolled). */
static __attribute__((noinline)) void store_tile(const dlc_f32_gspc_params *prm, float *buf,
                                                 size_t rn, size_t wn, size_t nv, const float *bias,
                                                 float *out, size_t n_lanes, size_t r_valid) {
  const size_t np = rn * wn, nvl = nv * TO;
  const __m512 lo = _mm512_set1_ps(prm->out_min), hi = _mm512_set1_ps(prm->out_max);
  const int permute = prm->perm != NULL;
  const __m512i pidx = permute ? _mm512_loadu_si512(prm->perm) : _mm512_setzero_si512();
  for (size_t v = 0; v < nv; v++) {
    const __m512 b = _mm512_loadu_ps(bias + v * TO);
    for (size_t p = 0; p < np; p++) {
      __m512 x = _mm512_add_ps(_mm512_load_ps(buf + p * nvl + v * TO), b);
      /* bound first: a NaN in x is what max/min return */
      x = _mm512_min_ps(hi, _mm512_max_ps(lo, x));
      if (permute) x = _mm512_permutexvar_ps(pidx, x);
      _mm512_store_ps(buf + p * nvl + v * TO, x);
    }
  }
  const ptrdiff_t cs = prm->out_ch_stride, ps = prm->out_pix_stride, rs = prm->out_r_stride;
  if (cs == 1) {
    for (size_t r = 0; r < r_valid; r++)
      for (size_t x = 0; x < wn; x++) {
        float *o = out + (ptrdiff_t)r * rs + (ptrdiff_t)x * ps;
        const float *s = buf + (r * wn + x) * nvl;
        for (size_t v = 0; v * TO < n_lanes; v++)
          _mm512_mask_storeu_ps(o + v * TO, lane_mask(n_lanes - v * TO), _mm512_load_ps(s + v * TO));
      }
  } else if (ps == 1) {
    /* NCHW: transpose so each lane's pixels are one vector; pixel p = r*wn + x sits in lane p
       and row r's run is stored with a mask from a pointer set back by r*wn. */
    for (size_t v = 0; v * TO < n_lanes; v++) {
      __m512 t[16];
      for (size_t p = 0; p < 16; p++) t[p] = p < np ? _mm512_load_ps(buf + p * nvl + v * TO) : _mm512_setzero_ps();
      transpose16(t);
      const size_t nl = n_lanes - v * TO < TO ? n_lanes - v * TO : TO;
      for (size_t j = 0; j < nl; j++) {
        float *o = out + (ptrdiff_t)(v * TO + j) * cs;
        for (size_t r = 0; r < r_valid; r++)
          _mm512_mask_storeu_ps(o + (ptrdiff_t)r * rs - (ptrdiff_t)(r * wn),
                                (__mmask16)(lane_mask(wn) << (r * wn)), t[j]);
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
    size_t n_lanes, size_t r_valid, const size_t gpv, const size_t nv, const size_t rn, const size_t wn,
    const size_t pxs) {
  const size_t nvl = nv * TO;
  __m512 acc[MAX_P][4];
#pragma GCC unroll 16
  for (size_t p = 0; p < rn * wn; p++)
#pragma GCC unroll 4
    for (size_t v = 0; v < nv; v++) acc[p][v] = _mm512_setzero_ps();
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
        __m512 wv[4];
#pragma GCC unroll 4
        for (size_t v = 0; v < nv; v++) wv[v] = _mm512_load_ps(wp + v * TO);
#pragma GCC unroll 4
        for (size_t r = 0; r < rn; r++)
#pragma GCC unroll 16
          for (size_t x = 0; x < wn; x++) {
            const __m512 b = bcast(ip + (ptrdiff_t)r * r_stride + x * pxs, gpv);
#pragma GCC unroll 4
            for (size_t v = 0; v < nv; v++) acc[r * wn + x][v] = _mm512_fmadd_ps(b, wv[v], acc[r * wn + x][v]);
          }
        ip += ti_stride;
        wp += nvl;
      }
    }
  }
  if (prm->out_ch_stride == 1) {
    /* NHWC: bias, clamp and masked stores straight from the accumulators */
    const __m512 lo = _mm512_set1_ps(prm->out_min), hi = _mm512_set1_ps(prm->out_max);
    const int permute = nv == 1 && prm->perm != NULL;
    const __m512i pidx = permute ? _mm512_loadu_si512(prm->perm) : _mm512_setzero_si512();
    const ptrdiff_t ps = prm->out_pix_stride, rs = prm->out_r_stride;
    __m512 bv[4];
    __mmask16 mk[4];
#pragma GCC unroll 4
    for (size_t v = 0; v < nv; v++) {
      bv[v] = _mm512_loadu_ps(bias + v * TO);
      mk[v] = n_lanes > v * TO ? lane_mask(n_lanes - v * TO) : 0;
    }
#pragma GCC unroll 4
    for (size_t r = 0; r < rn; r++) {
      if (r >= r_valid) break;
#pragma GCC unroll 16
      for (size_t x = 0; x < wn; x++)
#pragma GCC unroll 4
        for (size_t v = 0; v < nv; v++) {
          __m512 o = _mm512_min_ps(hi, _mm512_max_ps(lo, _mm512_add_ps(acc[r * wn + x][v], bv[v])));
          if (permute) o = _mm512_permutexvar_ps(pidx, o);
          _mm512_mask_storeu_ps(out + (ptrdiff_t)r * rs + (ptrdiff_t)x * ps + v * TO, mk[v], o);
        }
    }
    return;
  }
  float buf[BUF_FLOATS] __attribute__((aligned(64)));
#pragma GCC unroll 16
  for (size_t p = 0; p < rn * wn; p++)
#pragma GCC unroll 4
    for (size_t v = 0; v < nv; v++) _mm512_store_ps(buf + p * nvl + v * TO, acc[p][v]);
  store_tile(prm, buf, rn, wn, nv, bias, out, n_lanes, r_valid);
}

/* The repack (gspc_ukernel.h). Four ways, by where the source is contiguous:
   - channels contiguous (NHWC): blocks of 16 packed positions u = (q, gl) x 16 channels,
     one (masked) load of 16 channels per position, a 16x16 transpose, a store per channel;
   - one channel of gpv neighbouring groups (NHWC depthwise): gpv floats copied per column;
   - columns contiguous (NCHW, stride 1, one group per vector): a copy;
   - otherwise a gather, 16 packed floats at a time. */
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
  for (size_t u0 = 0; u0 < total; u0 += 16) {
    const size_t nu = total - u0 < 16 ? total - u0 : 16;
    for (size_t c0 = 0; c0 < a->n_c; c0 += 16) {
      const size_t nc = a->n_c - c0 < 16 ? a->n_c - c0 : 16;
      const __mmask16 cm = lane_mask(nc);
      __m512 r[16];
      for (size_t i = 0; i < 16; i++) {
        const size_t u = u0 + i, q = u >> lg, gl = u & (a->gpv - 1);
        r[i] = i < nu && gl < a->ng && q >= a->q_lo && q < a->q_hi ? _mm512_maskz_loadu_ps(cm, src_at(a, q, gl) + c0)
                                                                     : _mm512_setzero_ps();
      }
      transpose16(r);
      for (size_t j = 0; j < nc; j++) _mm512_mask_storeu_ps(a->dst + (c0 + j) * a->dst_c_stride + u0, lane_mask(nu), r[j]);
    }
  }
}

static void pack_groups(const dlc_f32_gspc_pack_args *a) {
  const size_t gpv = a->gpv;
  const __mmask16 gm = lane_mask(a->ng), all = lane_mask(gpv);
  const __m512 z = _mm512_setzero_ps();
  for (size_t q = 0; q < a->nq; q++) {
    const __m512 v = q >= a->q_lo && q < a->q_hi ? _mm512_maskz_loadu_ps(gm, src_at(a, q, 0)) : z;
    _mm512_mask_storeu_ps(a->dst + q * gpv, all, v);
  }
}

/* Small groups (NHWC, gpv*C_PG <= 16): a column's block of gpv groups x C_PG channels is one
   vector; one permutation turns [group][channel] into [channel][group] and each channel's gpv
   floats are stored with a mask from a pointer set back by c*gpv. */
static void pack_small_groups(const dlc_f32_gspc_pack_args *a) {
  const size_t gpv = a->gpv, nc = a->n_c;
  int32_t idx[16];
  for (size_t k = 0; k < 16; k++) idx[k] = (int32_t)(k < nc * gpv ? (k % gpv) * nc + k / gpv : k);
  const __m512i pidx = _mm512_loadu_si512(idx);
  const __mmask16 lm = lane_mask(a->ng * nc), gm = lane_mask(gpv);
  const __m512 z = _mm512_setzero_ps();
  for (size_t q = 0; q < a->nq; q++) {
    const __m512 v = q >= a->q_lo && q < a->q_hi
                         ? _mm512_permutexvar_ps(pidx, _mm512_maskz_loadu_ps(lm, src_at(a, q, 0)))
                         : z;
    for (size_t c = 0; c < nc; c++)
      _mm512_mask_storeu_ps(a->dst + c * a->dst_c_stride + q * gpv - c * gpv, (__mmask16)(gm << (c * gpv)), v);
  }
}

static void pack_gather(const dlc_f32_gspc_pack_args *a) {
  const size_t gpv = a->gpv, total = a->nq * gpv;
  const ptrdiff_t qs = a->col_step * a->px_step;
  const int contig = gpv == 1 && qs == 1;
  int32_t lane_off[16], lane_q[16], lane_g[16];
  for (int e = 0; e < 16; e++) {
    lane_q[e] = e / (int)gpv;
    lane_g[e] = e % (int)gpv;
    lane_off[e] = (int32_t)(lane_q[e] * qs + lane_g[e] * a->g_step);
  }
  const __m512i voff = _mm512_loadu_si512(lane_off), vq = _mm512_loadu_si512(lane_q);
  const __mmask16 gmask = _mm512_cmplt_epi32_mask(_mm512_loadu_si512(lane_g), _mm512_set1_epi32((int)a->ng));
  const __m512i qlo = _mm512_set1_epi32((int)a->q_lo), qhi = _mm512_set1_epi32((int)a->q_hi);
  const size_t qpv = 16 / gpv;
  for (size_t c = 0; c < a->n_c; c++) {
    float *d = a->dst + c * a->dst_c_stride;
    const float *s = a->src + (ptrdiff_t)c * a->src_c_stride;
    for (size_t e0 = 0, q0 = 0; e0 < total; e0 += 16, q0 += qpv) {
      const __m512i q = _mm512_add_epi32(vq, _mm512_set1_epi32((int)q0));
      const __mmask16 tail = lane_mask(total - e0);
      const __mmask16 m = gmask & tail & _mm512_cmpge_epi32_mask(q, qlo) & _mm512_cmplt_epi32_mask(q, qhi);
      const ptrdiff_t base = ((ptrdiff_t)q0 * a->col_step + a->col0) * a->px_step;
      __m512 v;
      if (contig && m == 0xFFFF)
        v = _mm512_loadu_ps(s + base);
      else
        v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, _mm512_add_epi32(voff, _mm512_set1_epi32((int)base)), s, 4);
      _mm512_mask_storeu_ps(d + e0, tail, v);
    }
  }
}

/* Channel-blocked layout from NHWC: a column is 16 floats, the channels of the tile then
   zeros; one masked load and one store per column. */
static void pack_blocked(const dlc_f32_gspc_pack_args *a) {
  const __mmask16 cm = lane_mask(a->n_c);
  for (size_t q = 0; q < a->nq; q++)
    _mm512_storeu_ps(a->dst + q * TO, q >= a->q_lo && q < a->q_hi ? _mm512_maskz_loadu_ps(cm, src_at(a, q, 0))
                                                                    : _mm512_setzero_ps());
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
    if (a->dst_c_stride == 1 && a->src_c_stride == 1 && a->gpv == 1 && a->dst_q_stride == TO && a->n_c <= TO)
      pack_blocked(a);
    else
      pack_scalar(a);
  } else if (a->q_lo >= a->q_hi) {
    pack_zero(a);
  } else if (a->src_c_stride == 1 && a->g_step == 1 && a->gpv > 1) {
    pack_groups(a);
  } else if (a->src_c_stride == 1 && a->gpv > 1 && a->g_step == (ptrdiff_t)a->n_c && a->gpv * a->n_c <= 16) {
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
    gspc_tile(prm, in, w, bias, out, n_lanes, r_valid, G, V, R, W, G);                               \
  }
/* channel-blocked input: a column every 16 floats */
#define BNAME(G, V, R, W) gspc_blk_v##V##_r##R##_w##W
#define BDEF(G, V, R, W)                                                                          \
  static void BNAME(G, V, R, W)(const dlc_f32_gspc_params *prm, const float *in, const float *w,    \
                                const float *bias, float *out, size_t n_lanes, size_t r_valid) {     \
    gspc_tile(prm, in, w, bias, out, n_lanes, r_valid, 1, V, R, W, TO);                              \
  }
#define BENTRY(G, V, R, W) [V - 1][R - 1][W - 1] = BNAME(G, V, R, W),
#define LOG2_1 0
#define LOG2_2 1
#define LOG2_4 2
#define LOG2_8 3
#define LOG2_16 4
#define KENTRY(G, V, R, W) [LOG2_##G][V - 1][R - 1][W - 1] = KNAME(G, V, R, W),

#define WS3(X, G, V, R) X(G, V, R, 1) X(G, V, R, 2) X(G, V, R, 3)
#define WS4(X, G, V, R) WS3(X, G, V, R) X(G, V, R, 4)
#define WS6(X, G, V, R) WS4(X, G, V, R) X(G, V, R, 5) X(G, V, R, 6)
#define WS8(X, G, V, R) WS6(X, G, V, R) X(G, V, R, 7) X(G, V, R, 8)
#define WS12(X, G, V, R) WS8(X, G, V, R) X(G, V, R, 9) X(G, V, R, 10) X(G, V, R, 11) X(G, V, R, 12)
#define WS16(X, G, V, R) WS12(X, G, V, R) X(G, V, R, 13) X(G, V, R, 14) X(G, V, R, 15) X(G, V, R, 16)
/* One vector: up to 16 pixels in 1, 2 or 4 rows (small images need the rows to fill the
   accumulators). Several vectors (ordinary groups only): up to 24 accumulators. */
#define MENU_G(X, G) WS16(X, G, 1, 1) WS8(X, G, 1, 2) WS4(X, G, 1, 4)
#define MENU(X)                                                                       \
  MENU_G(X, 1) MENU_G(X, 2) MENU_G(X, 4) MENU_G(X, 8) MENU_G(X, 16)                   \
  WS12(X, 1, 2, 1) WS6(X, 1, 2, 2) WS8(X, 1, 3, 1) WS4(X, 1, 3, 2) WS6(X, 1, 4, 1) WS3(X, 1, 4, 2)

MENU(KDEF)
#define BMENU(X) \
  MENU_G(X, 1) WS12(X, 1, 2, 1) WS6(X, 1, 2, 2) WS8(X, 1, 3, 1) WS4(X, 1, 3, 2) WS6(X, 1, 4, 1) WS3(X, 1, 4, 2)
BMENU(BDEF)

#define N_G 5
#define N_V 4
#define N_R 4
#define N_W 16
static const dlc_f32_gspc_ukernel_fn table[N_G][N_V][N_R][N_W] = {MENU(KENTRY)};

static const dlc_f32_gspc_ukernel_fn btable[N_V][N_R][N_W] = {BMENU(BENTRY)};

static dlc_f32_gspc_ukernel_fn get_blocked(size_t nv, size_t r, size_t w) {
  if (nv < 1 || nv > N_V || r < 1 || r > N_R || w < 1 || w > N_W) return NULL;
  return btable[nv - 1][r - 1][w - 1];
}

static dlc_f32_gspc_ukernel_fn get(size_t gpv, size_t nv, size_t r, size_t w) {
  size_t lg = 0;
  while (((size_t)1 << lg) < gpv) lg++;
  if (((size_t)1 << lg) != gpv || lg >= N_G || nv < 1 || nv > N_V || r < 1 || r > N_R || w < 1 ||
      w > N_W)
    return NULL;
  return table[lg][nv - 1][r - 1][w - 1];
}

const dlc_f32_gspc_family dlc_f32_gspc__avx512 = {
    .name = "f32_gspc__avx512",
    .isa = "avx512",
    .t_o = TO,
    .t_i = 16,
    .max_gpv = TO,
    .get = get,
    .get_blocked = get_blocked,
    .pack = pack,
    .fma_per_cycle = 2.0f,
    .loads_per_cycle = 2.0f,
    .fma_latency = 4.0f,
    .store_nhwc = 0.5f,
    .store_nchw = 1.0f,
};
