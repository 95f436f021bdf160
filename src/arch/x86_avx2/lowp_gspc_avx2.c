/* F16 and int8 gspc micro-kernels, AVX2 + FMA + F16C: T_O = 8 lanes (lowp_gspc_ukernel.h).
 *
 * The register tile of the fp32 family (f32_gspc_avx2.c): R rows x W columns x NV vectors,
 * NV*R*W <= 12 accumulators; per reduction step the NV weight vectors are loaded once and each
 * pixel's input is one broadcast of gpv 32-bit elements reused by the NV vectors. One template
 * for both dtypes, which differ only in the weight load and the product:
 *   F16:  weights vcvtph2ps from 8 halves, vfmadd231ps;
 *   int8: weights 8 s16 pairs, vpmaddwd of the broadcast pair(s) then vpaddd (exact in s32).
 * The accumulators leave permuted (groups-in-lanes order to channel order) with vpermd, pixel-
 * major as they are or channel-major through 8 x 8 transposes. */
#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../gspc/lowp_gspc_ukernel.h"

#define TO 8
#define MAX_P 12

/* 32-bit elements of gpv groups, repeated across the vector. */
static inline __attribute__((always_inline)) __m256 bcast(const void *p, const size_t gpv) {
  if (gpv == 1) return _mm256_broadcast_ss((const float *)p);
  if (gpv == 2) {
    double d;
    memcpy(&d, p, sizeof d);
    return _mm256_castpd_ps(_mm256_set1_pd(d));
  }
  if (gpv == 4) return _mm256_broadcast_ps((const __m128 *)p);
  return _mm256_loadu_ps((const float *)p);
}

/* r[0..7] (8 pixels x 8 lanes) -> r[j] = lane j of every pixel. */
static inline void transpose8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
  r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
  r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
  r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
  r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

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
            const __m256 b = bcast(ip + (ptrdiff_t)r * r_stride + x * gpv, gpv);
#pragma GCC unroll 3
            for (size_t v = 0; v < nv; v++) {
              __m256 *a = &acc[r * wn + x][v];
              if (q8)
                *a = _mm256_castsi256_ps(_mm256_add_epi32(
                    _mm256_castps_si256(*a), _mm256_madd_epi16(_mm256_castps_si256(b), _mm256_castps_si256(wv[v]))));
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
        transpose8(t);
#pragma GCC unroll 8
        for (size_t j = 0; j < 8; j++) _mm256_storeu_ps(out + (v * TO + j) * ldb + r * ldr + x0, t[j]);
      }
}

/* ---- the repack ---------------------------------------------------------------------------- */

static inline const void *src_at(const dlc_lowp_gspc_pack_args *a, size_t es, size_t ch, size_t q, size_t gl) {
  const ptrdiff_t i = (ptrdiff_t)ch * a->src_c_stride + ((ptrdiff_t)q * a->col_step + a->col0) * a->px_step +
                      (ptrdiff_t)gl * a->g_step;
  return (const char *)a->src + i * (ptrdiff_t)es;
}

static inline int inside(const dlc_lowp_gspc_pack_args *a, size_t q, size_t gl) {
  return gl < a->ng && q >= a->q_lo && q < a->q_hi;
}

static inline int32_t q8_value(const dlc_lowp_gspc_pack_args *a, const void *s) {
  return (a->is_signed ? (int32_t) * (const int8_t *)s : (int32_t) * (const uint8_t *)s) - a->zp;
}
static inline int32_t pair(int32_t lo, int32_t hi) { return (int32_t)(((uint32_t)(uint16_t)hi << 16) | (uint16_t)lo); }

/* One packed element (any case the fast paths leave). */
static inline float f16_elem(const dlc_lowp_gspc_pack_args *a, size_t c, size_t q, size_t gl) {
  return inside(a, q, gl) ? _cvtsh_ss(*(const uint16_t *)src_at(a, 2, c, q, gl)) : 0.0f;
}
static inline int32_t q8_elem(const dlc_lowp_gspc_pack_args *a, size_t c, size_t q, size_t gl) {
  if (!inside(a, q, gl)) return 0;
  const int32_t lo = q8_value(a, src_at(a, 1, 2 * c, q, gl));
  const int32_t hi = 2 * c + 1 < a->n_src_c ? q8_value(a, src_at(a, 1, 2 * c + 1, q, gl)) : 0;
  return pair(lo, hi);
}

/* Packed channels [c0, c1), columns [q0, q1), every group, without vectors: the padding as zeros,
   each (channel, group) row as one strided loop (the paths below leave edges and odd shapes here). */
static inline __attribute__((always_inline)) void fill_scalar(const dlc_lowp_gspc_pack_args *a, const int q8, size_t c0,
                                                              size_t c1, size_t q0, size_t q1) {
  const size_t gpv = a->gpv, lo = a->q_lo < q0 ? q0 : a->q_lo, hi = a->q_hi > q1 ? q1 : a->q_hi;
  const ptrdiff_t step = a->col_step * a->px_step, cs = a->src_c_stride;
  for (size_t c = c0; c < c1; c++) {
    uint32_t *d = (uint32_t *)a->dst + c * a->dst_c_stride;
    for (size_t gl = 0; gl < gpv; gl++) {
      size_t q = q0;
      if (gl < a->ng && lo < hi) {
        for (; q < lo; q++) d[q * gpv + gl] = 0;
        const ptrdiff_t i0 = (ptrdiff_t)c * (q8 ? 2 : 1) * cs + a->col0 * a->px_step + (ptrdiff_t)gl * a->g_step;
        if (!q8) {
          const uint16_t *sp = (const uint16_t *)a->src + i0;
          for (; q < hi; q++) {
            const float f = _cvtsh_ss(sp[(ptrdiff_t)q * step]);
            memcpy(&d[q * gpv + gl], &f, 4);
          }
        } else {
          const int two = 2 * c + 1 < a->n_src_c;
#define DLC_PAIR_LOOP(T)                                                                        \
  {                                                                                             \
    const T *sp = (const T *)a->src + i0;                                                       \
    for (; q < hi; q++) {                                                                       \
      const ptrdiff_t i = (ptrdiff_t)q * step;                                                  \
      const uint32_t l = (uint16_t)((int32_t)sp[i] - a->zp);                                    \
      const uint32_t h = two ? (uint16_t)((int32_t)sp[i + cs] - a->zp) : 0u;                    \
      d[q * gpv + gl] = l | h << 16;                                                            \
    }                                                                                           \
  }
          if (a->is_signed)
            DLC_PAIR_LOOP(int8_t)
          else
            DLC_PAIR_LOOP(uint8_t)
#undef DLC_PAIR_LOOP
        }
      }
      for (; q < q1; q++) d[q * gpv + gl] = 0;
    }
  }
}

/* NHWC, one group per vector: 8 pixels x 8 channels transposed; element by element otherwise. */
static void pack_f16_nhwc(const dlc_lowp_gspc_pack_args *a, size_t qlo, size_t qhi) {
  float *dst = a->dst;
  const size_t gpv = a->gpv, nq = a->nq;
  if (gpv == 1 && a->src_c_stride == 1) {
    size_t c0 = 0;
    for (; c0 + 8 <= a->n_c; c0 += 8) {
      size_t q = 0;
      for (; q < nq; q++) {
        if (q >= qlo && q + 8 <= qhi) break;
        for (size_t j = 0; j < 8; j++) dst[(c0 + j) * a->dst_c_stride + q] = f16_elem(a, c0 + j, q, 0);
      }
      for (; q + 8 <= qhi; q += 8) {
        __m256 r[8];
        for (size_t i = 0; i < 8; i++) r[i] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)src_at(a, 2, c0, q + i, 0)));
        transpose8(r);
        for (size_t j = 0; j < 8; j++) _mm256_storeu_ps(dst + (c0 + j) * a->dst_c_stride + q, r[j]);
      }
      for (; q < nq; q++)
        for (size_t j = 0; j < 8; j++) dst[(c0 + j) * a->dst_c_stride + q] = f16_elem(a, c0 + j, q, 0);
    }
    fill_scalar(a, 0, c0, a->n_c, 0, nq);
    return;
  }
  fill_scalar(a, 0, 0, a->n_c, 0, nq);
}

/* NHWC, one group per vector: 8 pixels x 8 pairs (16 bytes each) transposed; element by element
   otherwise. */
static void pack_q8_nhwc(const dlc_lowp_gspc_pack_args *a, size_t qlo, size_t qhi) {
  int32_t *dst = a->dst;
  const size_t gpv = a->gpv, nq = a->nq;
  const int sg = a->is_signed;
  if (gpv == 1 && a->src_c_stride == 1) {
    size_t c0 = 0;
    for (; 2 * (c0 + 8) <= a->n_src_c; c0 += 8) { /* 16 channels of a pixel, all present */
      size_t q = 0;
      for (; q < nq; q++) {
        if (q >= qlo && q + 8 <= qhi) break;
        for (size_t j = 0; j < 8; j++) dst[(c0 + j) * a->dst_c_stride + q] = q8_elem(a, c0 + j, q, 0);
      }
      for (; q + 8 <= qhi; q += 8) {
        __m256 r[8];
        for (size_t i = 0; i < 8; i++) {
          const __m128i b = _mm_loadu_si128((const __m128i *)src_at(a, 1, 2 * c0, q + i, 0));
          const __m256i w = sg ? _mm256_cvtepi8_epi16(b) : _mm256_cvtepu8_epi16(b);
          r[i] = _mm256_castsi256_ps(_mm256_sub_epi16(w, _mm256_set1_epi16((int16_t)a->zp)));
        }
        transpose8(r);
        for (size_t j = 0; j < 8; j++) _mm256_storeu_ps((float *)(dst + (c0 + j) * a->dst_c_stride + q), r[j]);
      }
      for (; q < nq; q++)
        for (size_t j = 0; j < 8; j++) dst[(c0 + j) * a->dst_c_stride + q] = q8_elem(a, c0 + j, q, 0);
    }
    fill_scalar(a, 1, c0, a->n_c, 0, nq);
    return;
  }
  fill_scalar(a, 1, 0, a->n_c, 0, nq);
}

/* NCHW rows (px_step 1) at column stride 1 or 2: 8 columns of a channel per vector, read
   with one load (stride 2: 16 columns, the odd ones dropped by a byte shuffle, so one column past
   the 8th is read: the callers leave it to the next q). */
static inline __m256 cols8_f16(const dlc_lowp_gspc_pack_args *a, size_t ch, size_t q, size_t gl) {
  const uint16_t *s = src_at(a, 2, ch, q, gl);
  if (a->col_step == 1) return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)s));
  const __m256i even = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(const void *)s),
                                           _mm256_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1,
                                                            0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1));
  return _mm256_cvtph_ps(_mm256_castsi256_si128(_mm256_permute4x64_epi64(even, 0x08)));
}

static inline __m256i cols8_q8(const dlc_lowp_gspc_pack_args *a, size_t ch, size_t q, size_t gl, __m256i zp) {
  const uint8_t *s = src_at(a, 1, ch, q, gl);
  const __m128i b = a->col_step == 1
                        ? _mm_loadl_epi64((const __m128i *)(const void *)s)
                        : _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)s),
                                           _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1));
  return _mm256_sub_epi32(a->is_signed ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b), zp);
}

/* Pairs of channels 2c and 2c + 1 (0 past the last channel) at columns q..q+7. */
static inline __m256 pairs8(const dlc_lowp_gspc_pack_args *a, size_t c, size_t q, size_t gl, __m256i zp) {
  const __m256i lo = _mm256_and_si256(cols8_q8(a, 2 * c, q, gl, zp), _mm256_set1_epi32(0xffff));
  const __m256i hi = 2 * c + 1 < a->n_src_c ? _mm256_slli_epi32(cols8_q8(a, 2 * c + 1, q, gl, zp), 16)
                                            : _mm256_setzero_si256();
  return _mm256_castsi256_ps(_mm256_or_si256(lo, hi));
}

/* v[gl]: columns q..q+7 of group gl < gpv, to d[(q+i)*gpv + gl] (groups interleaved by an 8 x 8
   transpose, of which each column stores its first gpv lanes). */
static inline void put_cols(float *d, size_t q, size_t gpv, __m256 v[8]) {
  if (gpv == 1) {
    _mm256_storeu_ps(d + q, v[0]);
    return;
  }
  for (size_t gl = gpv; gl < 8; gl++) v[gl] = _mm256_setzero_ps();
  transpose8(v);
  for (size_t i = 0; i < 8; i++) {
    float *o = d + (q + i) * gpv;
    if (gpv == 2)
      _mm_storel_pi((__m64 *)(void *)o, _mm256_castps256_ps128(v[i]));
    else if (gpv == 4)
      _mm_storeu_ps(o, _mm256_castps256_ps128(v[i]));
    else
      _mm256_storeu_ps(o, v[i]);
  }
}

/* NHWC, small groups (all of a group's channels in the tile, gpv groups' within 16 bytes of a
   pixel): one load per pixel, then per packed channel c a vpermd gathers its gpv groups into the
   first lanes. */
static inline void pack_small_groups(const dlc_lowp_gspc_pack_args *a, int q8, size_t qlo, size_t qhi) {
  float *dst = a->dst;
  const size_t gpv = a->gpv, n_c = a->n_c, nq = a->nq;
  const __m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(a->ng * n_c)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  __m256i idx[8];
  for (size_t c = 0; c < n_c; c++) {
    int32_t t[8];
    for (size_t k = 0; k < 8; k++) t[k] = (int32_t)(k < gpv ? k * n_c + c : 0);
    idx[c] = _mm256_loadu_si256((const __m256i *)(const void *)t);
  }
  /* the 16-byte load of pixel q stays within pixel q's groups and the next pixel's */
  const size_t es = q8 ? 1 : 2;
  const int fits = (ptrdiff_t)(16 / es) <= a->col_step * a->px_step + (ptrdiff_t)a->ng * a->g_step;
  for (size_t q = 0; q < nq; q++) {
    if (q < qlo || !fits || q + 1 >= qhi) {
      for (size_t c = 0; c < n_c; c++)
        for (size_t gl = 0; gl < gpv; gl++) {
          const size_t i = c * a->dst_c_stride + q * gpv + gl;
          if (q8)
            ((int32_t *)(void *)dst)[i] = q8_elem(a, c, q, gl);
          else
            dst[i] = f16_elem(a, c, q, gl);
        }
      continue;
    }
    const __m128i raw = _mm_loadu_si128((const __m128i *)src_at(a, es, 0, q, 0));
    __m256 v;
    if (q8) {
      const __m256i w16 = a->is_signed ? _mm256_cvtepi8_epi16(raw) : _mm256_cvtepu8_epi16(raw);
      v = _mm256_castsi256_ps(_mm256_sub_epi16(w16, _mm256_set1_epi16((int16_t)a->zp)));
    } else {
      v = _mm256_cvtph_ps(raw);
    }
    v = _mm256_and_ps(v, _mm256_castsi256_ps(live));
    for (size_t c = 0; c < n_c; c++) {
      const __m256 g = _mm256_permutevar8x32_ps(v, idx[c]);
      float *o = dst + c * a->dst_c_stride + q * gpv;
      if (gpv == 2)
        _mm_storel_pi((__m64 *)(void *)o, _mm256_castps256_ps128(g));
      else if (gpv == 4)
        _mm_storeu_ps(o, _mm256_castps256_ps128(g));
      else
        _mm256_storeu_ps(o, g);
    }
  }
}

/* Both dtypes: NCHW rows at column stride 1 or 2 by columns8 vectors (groups interleaved); NHWC
   with one group per vector by 8 pixels x 8 channels transposes, small groups per pixel; element
   by element otherwise and at the edges. */
static inline __attribute__((always_inline)) void pack_any(const dlc_lowp_gspc_pack_args *a, const int q8) {
  float *dst = a->dst;
  const size_t gpv = a->gpv, nq = a->nq;
  const size_t qlo = a->q_lo < a->q_hi ? a->q_lo : nq, qhi = a->q_lo < a->q_hi ? a->q_hi : nq;
  const __m256i zp = _mm256_set1_epi32(a->zp);
  if (a->px_step == 1 && (a->col_step == 1 || a->col_step == 2)) {
    /* Vectors cover [q_lo, qv): at stride 2 the last column of a row is left to the scalar path,
       as its vector would read past it. The last vector is shifted left to end at qv (its overlap
       is written twice). */
    const size_t need = a->col_step == 1 ? 8 : 9;
    for (size_t c = 0; c < a->n_c; c++) {
      float *d = dst + c * a->dst_c_stride;
      memset(d, 0, qlo * gpv * sizeof(float));
      memset(d + qhi * gpv, 0, (nq - qhi) * gpv * sizeof(float));
      const size_t qv = qhi - qlo < need ? qlo : qhi - (need - 8);
      for (size_t q0 = qlo; q0 < qv; q0 += 8) {
        const size_t q = q0 + 8 <= qv ? q0 : qv - 8;
        __m256 v[8];
        for (size_t gl = 0; gl < gpv; gl++)
          v[gl] = gl >= a->ng ? _mm256_setzero_ps() : q8 ? pairs8(a, c, q, gl, zp) : cols8_f16(a, c, q, gl);
        put_cols(d, q, gpv, v);
      }
      fill_scalar(a, q8, c, c + 1, qv, qhi);
    }
    return;
  }
  if (gpv > 1 && a->src_c_stride == 1 && gpv * a->n_c <= 8 &&
      (q8 ? a->n_src_c == 2 * a->n_c && a->g_step == (ptrdiff_t)a->n_src_c : a->g_step == (ptrdiff_t)a->n_c)) {
    pack_small_groups(a, q8, qlo, qhi);
    return;
  }
  if (q8)
    pack_q8_nhwc(a, qlo, qhi);
  else
    pack_f16_nhwc(a, qlo, qhi);
}

static void pack_f16(const dlc_lowp_gspc_pack_args *a) { pack_any(a, 0); }
static void pack_q8(const dlc_lowp_gspc_pack_args *a) { pack_any(a, 1); }

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

MENU(KDEF_F16)
MENU(KDEF_Q8)

#define N_G 4
#define N_V 3
#define N_R 4
#define N_W 12
static const dlc_f16_gspc_ukernel_fn table_f16[N_G][N_V][N_R][N_W] = {MENU(KENTRY_F16)};
static const dlc_q8_gspc_ukernel_fn table_q8[N_G][N_V][N_R][N_W] = {MENU(KENTRY_Q8)};

static int tile_index(size_t gpv, size_t nv, size_t r, size_t w, size_t *lg) {
  *lg = 0;
  while (((size_t)1 << *lg) < gpv) (*lg)++;
  return ((size_t)1 << *lg) == gpv && *lg < N_G && nv >= 1 && nv <= N_V && r >= 1 && r <= N_R && w >= 1 && w <= N_W;
}
static dlc_f16_gspc_ukernel_fn get_f16(size_t gpv, size_t nv, size_t r, size_t w) {
  size_t lg;
  return tile_index(gpv, nv, r, w, &lg) ? table_f16[lg][nv - 1][r - 1][w - 1] : NULL;
}
static dlc_q8_gspc_ukernel_fn get_q8(size_t gpv, size_t nv, size_t r, size_t w) {
  size_t lg;
  return tile_index(gpv, nv, r, w, &lg) ? table_q8[lg][nv - 1][r - 1][w - 1] : NULL;
}

/* Zen 2: two FMA pipes of latency 4 (F16; a cvtph2ps per weight vector rides along), one
   vpmaddwd per cycle whose vpaddd chain has latency 1 (int8). */
const dlc_lowp_gspc_family dlc_lowp_gspc__avx2 = {
    .isa = "avx2",
    .t_o = TO,
    .t_i_f16 = 16,
    .t_i_q8 = 8,
    .max_gpv = TO,
    .get_f16 = get_f16,
    .get_q8 = get_q8,
    .pack_f16 = pack_f16,
    .pack_q8 = pack_q8,
    .mac_per_cycle_f16 = 2.0f,
    .mac_per_cycle_q8 = 1.0f,
    .loads_per_cycle = 2.0f,
    .latency_f16 = 4.0f,
    .latency_q8 = 1.0f,
};
