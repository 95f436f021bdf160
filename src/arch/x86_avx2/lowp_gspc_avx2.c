/* F16 and int8 gspc family, AVX2 + FMA + F16C (lowp_gspc_ukernel.h): the micro-kernels are the
 * template src/arch/template/lowp_gspc.h over this ISA's vec.h (T_O = 8 lanes, up to 12
 * accumulators: with NV weight vectors and a broadcast they fit the 16 ymm registers); the input
 * repack is this file's own. The VNNI families share the repack and the F16 kernels
 * (lowp_gspc_avx2.h). */
#include "vec.h"

#include "lowp_gspc_avx2.h"

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
        dlc_avx2_transpose8(r);
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
        dlc_avx2_transpose8(r);
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
  dlc_avx2_transpose8(v);
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

/* Zen 2: two FMA pipes of latency 4 (F16; a cvtph2ps per weight vector rides along), one
   vpmaddwd per cycle whose vpaddd chain has latency 1 (int8): the template's defaults. */
#define LOWP_GSPC_PACK_F16 pack_f16
#define LOWP_GSPC_PACK_Q8 pack_q8
#include "../template/lowp_gspc.h"

dlc_f16_gspc_ukernel_fn dlc_lowp_gspc_get_f16__avx2(size_t gpv, size_t nv, size_t r, size_t w) {
  return lowp_gspc_get_f16(gpv, nv, r, w);
}
void dlc_lowp_gspc_pack_f16__avx2(const dlc_lowp_gspc_pack_args *a) { pack_f16(a); }
void dlc_lowp_gspc_pack_q8__avx2(const dlc_lowp_gspc_pack_args *a) { pack_q8(a); }
