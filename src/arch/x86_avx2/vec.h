/* vec.h (avx2) - the vector layer the kernel templates (src/arch/template/) are written over:
 * one vector of DLC_VL floats, lane masks, loads, stores, FMA, clamp, transpose and binary16
 * conversion. Every ISA's vec.h defines the same names with the same meaning (see
 * src/arch/template/README.md); a template includes exactly one of them, through the per-ISA
 * file that instantiates it (e.g. src/arch/x86_avx2/f32_gemm_avx2.c).
 *
 * AVX2 + FMA + F16C: 8 floats in a ymm register; masks are vectors whose lanes' sign bits say
 * which lanes take part (what vmaskmovps reads). Partial stores are written in 4 + 2 + 1 pieces,
 * never with vmaskmovps, microcoded on AMD cores up to Zen 3 (avx2_store.h). */
#ifndef DLC_VEC_AVX2_H
#define DLC_VEC_AVX2_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "avx2_store.h"
#include "avx2_transpose.h"

#define DLC_VL 8
#define DLC_VEC_ISA avx2
#define DLC_NREGS 16 /* vector registers */

#include "../template/inline.h"

typedef __m256 vf;
typedef __m256i vmask;

/* lanes [0, n), n clamped to [0, VL] */
INLINE vmask v_first(ptrdiff_t n) {
  const int k = n <= 0 ? 0 : n >= DLC_VL ? DLC_VL : (int)n;
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}
/* lanes [lo, hi) */
INLINE vmask v_range(ptrdiff_t lo, ptrdiff_t hi) { return _mm256_andnot_si256(v_first(lo), v_first(hi)); }

INLINE vf v_zero(void) { return _mm256_setzero_ps(); }
INLINE vf v_set1(float x) { return _mm256_set1_ps(x); }
INLINE vf v_bcast(const float *p) { return _mm256_broadcast_ss(p); }
INLINE vf v_load(const float *p) { return _mm256_loadu_ps(p); }
INLINE vf v_load_aligned(const float *p) { return _mm256_load_ps(p); }
/* the lanes of m from p, zero elsewhere; the other lanes' memory is not read */
INLINE vf v_load_mask(const float *p, vmask m) { return _mm256_maskload_ps(p, m); }
INLINE vf v_load_first(const float *p, ptrdiff_t n) { return _mm256_maskload_ps(p, v_first(n)); }
INLINE void v_store(float *p, vf v) { _mm256_storeu_ps(p, v); }
INLINE void v_store_aligned(float *p, vf v) { _mm256_store_ps(p, v); }
/* p[i] = v[i] for i < min(n, VL); nothing else is written */
INLINE void v_store_first(float *p, ptrdiff_t n, vf v) { dlc_avx2_store_first(p, n, v); }
INLINE vf v_fma(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }
INLINE vf v_add(vf a, vf b) { return _mm256_add_ps(a, b); }
INLINE vf v_mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
/* min(hi, max(lo, v)) with the bound first: max/min return the second operand when either is
   NaN, so a NaN result stays NaN (a clamp must never hide one) */
INLINE vf v_clamp(vf v, vf lo, vf hi) { return _mm256_min_ps(hi, _mm256_max_ps(lo, v)); }
/* r[i][j] <-> r[j][i] over VL x VL */
INLINE void v_transpose(vf r[DLC_VL]) { dlc_avx2_transpose8(r); }
INLINE void v_prefetch(const void *p) { _mm_prefetch((const char *)p, _MM_HINT_T0); }

/* binary16: widened exactly; rounded to nearest even whatever MXCSR says (the immediate mode),
   overflow to inf, NaN stays NaN (dlc_f32_to_f16 apart from NaN payloads) */
INLINE vf v_load_f16(const uint16_t *p) { return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)); }
INLINE void v_store_f16_first(uint16_t *p, ptrdiff_t n, vf v) {
  dlc_avx2_store_first_f16(p, n, _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

/* Added for the f32 direct and GEMM templates (src/arch/template/README.md). */
INLINE vf v_max(vf a, vf b) { return _mm256_max_ps(a, b); }
INLINE vf v_min(vf a, vf b) { return _mm256_min_ps(a, b); }
/* the first n binary16 widened, zeros elsewhere; no 16-bit masked load: a short run goes through
   a zeroed copy */
INLINE vf v_load_f16_first(const uint16_t *p, ptrdiff_t n) {
  if (n >= DLC_VL) return v_load_f16(p);
  uint16_t t[DLC_VL] = {0};
  if (n > 0) memcpy(t, p, (size_t)n * sizeof *t);
  return v_load_f16(t);
}
/* the even floats of a then b (2 * VL consecutive floats) in evens order, here e0 e1 e4 e5 e2 e3
   e6 e7: one in-lane shuffle, no lane-crossing permute per load; v_evens_in_order sorts them */
INLINE vf v_evens(vf a, vf b) { return _mm256_shuffle_ps(a, b, 0x88); }
/* the odd floats of a then b, in v_evens' order (o0 o1 o4 o5 o2 o3 o6 o7) */
INLINE vf v_odds(vf a, vf b) { return _mm256_shuffle_ps(a, b, 0xDD); }
INLINE vf v_evens_in_order(vf v) { return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), 0xD8)); }
/* a's and b's first halves interleaved, a0 b0 a1 b1 ...; their second halves (an in-lane unpack of
   each half, then a lane swap) */
INLINE vf v_zip_lo(vf a, vf b) {
  return _mm256_permute2f128_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b), 0x20);
}
INLINE vf v_zip_hi(vf a, vf b) {
  return _mm256_permute2f128_ps(_mm256_unpacklo_ps(a, b), _mm256_unpackhi_ps(a, b), 0x31);
}
/* lanes n .. VL-1 of a, then lanes 0 .. n-1 of b: VL consecutive floats n past a's first when b
   follows a in memory; n a constant in [0, VL). The middle 8 floats (a's high half, b's low half:
   one vperm2f128) and a per-128-bit vpalignr of it with a (n < 4) or of b with it (n >= 4) */
#define v_shift_in(a, b, n)                                                                             \
  ((n) < 4 ? _mm256_castsi256_ps(_mm256_alignr_epi8(_mm256_castps_si256(_mm256_permute2f128_ps(a, b, 0x21)), \
                                                    _mm256_castps_si256(a), 4 * ((n)&3)))               \
           : _mm256_castsi256_ps(_mm256_alignr_epi8(_mm256_castps_si256(b),                             \
                                                    _mm256_castps_si256(_mm256_permute2f128_ps(a, b, 0x21)), 4 * ((n)&3))))
/* lane l of m: p[l * stride], zero elsewhere; other lanes' memory is not read */
INLINE vf v_gather(const float *p, ptrdiff_t stride, vmask m) {
  const __m256i idx = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)stride));
  return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), p, idx, _mm256_castsi256_ps(m), 4);
}

/* ---- names the gspc, spack and csr templates added ------------------------------------------ */

/* the first n lanes (n clamped to [0, VL]) as v_store_tail stores them, worked out once for many
   stores; p[i] = v[i] for the lanes of t, nothing else written: here v_store_first's pieces */
typedef ptrdiff_t vtail;
INLINE vtail v_tail(ptrdiff_t n) { return n; }
INLINE void v_store_tail(float *p, vtail t, vf v) { dlc_avx2_store_first(p, t, v); }

/* DLC_VL int32 lane indices (a permutation, gather offsets) */
typedef __m256i vidx;
INLINE vidx v_load_idx(const int32_t *p) { return _mm256_loadu_si256((const __m256i *)(const void *)p); }
/* r[k] = v[i[k]] */
INLINE vf v_permute(vf v, vidx i) { return _mm256_permutevar8x32_ps(v, i); }
/* the lanes of m p[i[k]], zero elsewhere; the other lanes' memory is not read */
INLINE vf v_gather_mask(const float *p, vidx i, vmask m) {
  return _mm256_mask_i32gather_ps(_mm256_setzero_ps(), p, i, _mm256_castsi256_ps(m), 4);
}
INLINE vmask v_mask_and(vmask a, vmask b) { return _mm256_and_si256(a, b); }
INLINE vmask v_mask_or(vmask a, vmask b) { return _mm256_or_si256(a, b); }
/* p[i] = v[i] for the lanes of m; nothing else is written. vmaskmovps: microcoded on AMD cores up
   to Zen 3 (avx2_store.h), so only where the lanes do not start at 0 (else v_store_first). */
INLINE void v_store_mask(float *p, vmask m, vf v) { _mm256_maskstore_ps(p, m, v); }
/* the g floats at p (g = 1, 2, 4 or 8) repeated across the vector: one input pixel of g groups */
INLINE vf v_bcast_groups(const float *p, const size_t g) { return dlc_avx2_bcast_groups(p, g); }

/* ---- int32 lanes (the int8 templates) ---------------------------------------------------------- */

/* DLC_VL int32 lanes; the bit casts to and from vf are free (a template may keep s32 sums in vf) */
typedef __m256i vi;
INLINE vi v_as_vi(vf v) { return _mm256_castps_si256(v); }
INLINE vf vi_as_vf(vi v) { return _mm256_castsi256_ps(v); }
INLINE vi vi_zero(void) { return _mm256_setzero_si256(); }
INLINE vi vi_set1(int32_t x) { return _mm256_set1_epi32(x); }
INLINE vi vi_load(const int32_t *p) { return _mm256_loadu_si256((const __m256i *)(const void *)p); }
INLINE void vi_store(int32_t *p, vi v) { _mm256_storeu_si256((__m256i *)(void *)p, v); }
INLINE vi vi_add(vi a, vi b) { return _mm256_add_epi32(a, b); }
INLINE vi vi_sub(vi a, vi b) { return _mm256_sub_epi32(a, b); }
INLINE vi vi_mullo(vi a, vi b) { return _mm256_mullo_epi32(a, b); }
INLINE vf vi_to_vf(vi v) { return _mm256_cvtepi32_ps(v); }
/* DLC_VL bytes (u8, s8) widened to int32; reads those bytes only */
INLINE vi vi_load_u8(const uint8_t *p) { return _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p)); }
INLINE vi vi_load_s8(const int8_t *p) { return _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p)); }
/* acc + a.lo16 * b.lo16 + a.hi16 * b.hi16 per lane (s16 halves, products exact, sums mod 2^32):
   vpdpwssd where the file is compiled for a VNNI (the same sums), else vpmaddwd + vpaddd */
INLINE vi vi_dot2_s16(vi acc, vi a, vi b) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  return _mm256_dpwssd_epi32(acc, a, b);
#elif defined(__AVXVNNI__)
  return _mm256_dpwssd_avx_epi32(acc, a, b);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
#endif
}

/* ---- the lowp_dw template (depthwise F16 / int8 rows, src/arch/template/lowp_dw.h) ----------- */

/* one binary16 widened to a float, as v_load_f16 widens a lane (the scalar lanes of a row) */
INLINE float v_f16_to_f32(uint16_t h) { return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h))); }
/* the DLC_VL binary16 p[0], p[2], ..., p[2 VL - 2] widened; reads p[0 .. 2 VL - 1) only: two
   8-half loads at +0 and +7 (halves 0..7 and 7..14), the even halves of the first and the odd
   ones of the second picked by vpshufb */
INLINE vf v_load_f16_evens(const uint16_t *p) {
  const __m128i even = _mm_setr_epi8(0, 1, 4, 5, 8, 9, 12, 13, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i odd = _mm_setr_epi8(2, 3, 6, 7, 10, 11, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i a = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), even);
  const __m128i b = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)(p + 7)), odd);
  return _mm256_cvtph_ps(_mm_unpacklo_epi64(a, b));
}
/* the DLC_VL binary16 p[0], p[s], ..., p[(VL - 1) s] widened; reads those only (vpinsrw) */
INLINE vf v_load_f16_strided(const uint16_t *p, size_t s) {
  __m128i v = _mm_cvtsi32_si128(p[0]);
  v = _mm_insert_epi16(v, p[s], 1);
  v = _mm_insert_epi16(v, p[2 * s], 2);
  v = _mm_insert_epi16(v, p[3 * s], 3);
  v = _mm_insert_epi16(v, p[4 * s], 4);
  v = _mm_insert_epi16(v, p[5 * s], 5);
  v = _mm_insert_epi16(v, p[6 * s], 6);
  v = _mm_insert_epi16(v, p[7 * s], 7);
  return _mm256_cvtph_ps(v);
}
/* the DLC_VL bytes p[0], p[2], ..., p[2 VL - 2] widened to int32 (u8, s8); reads the 2 VL bytes
   p[0 .. 2 VL), the one after the last even included: one 16-byte load and vpshufb */
INLINE __m128i dlc_avx2_bytes_evens(const void *p) {
  const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
  return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)p), even);
}
INLINE vi vi_load_u8_evens(const uint8_t *p) { return _mm256_cvtepu8_epi32(dlc_avx2_bytes_evens(p)); }
INLINE vi vi_load_s8_evens(const int8_t *p) { return _mm256_cvtepi8_epi32(dlc_avx2_bytes_evens(p)); }
/* the same reading p[0 .. 2 VL - 1) only (the last even is the last byte read, as at the end of a
   row): bytes 0..7 and 7..14, the wanted 0, 2, .., 14 at 0, 2, 4, 6 and 9, 11, 13, 15 */
INLINE __m128i dlc_avx2_bytes_evens_end(const void *p) {
  const __m128i pick = _mm_setr_epi8(0, 2, 4, 6, 9, 11, 13, 15, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m128i v = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)p),
                                       _mm_loadl_epi64((const __m128i *)(const void *)((const uint8_t *)p + 7)));
  return _mm_shuffle_epi8(v, pick);
}
INLINE vi vi_load_u8_evens_end(const uint8_t *p) { return _mm256_cvtepu8_epi32(dlc_avx2_bytes_evens_end(p)); }
INLINE vi vi_load_s8_evens_end(const int8_t *p) { return _mm256_cvtepi8_epi32(dlc_avx2_bytes_evens_end(p)); }
/* the DLC_VL bytes p[0], p[s], ..., p[(VL - 1) s] widened to int32; reads those only (two dwords
   assembled in general registers) */
INLINE __m128i dlc_avx2_bytes_strided(const uint8_t *x, size_t s) {
  const uint32_t lo = (uint32_t)x[0] | (uint32_t)x[s] << 8 | (uint32_t)x[2 * s] << 16 | (uint32_t)x[3 * s] << 24;
  const uint32_t hi = (uint32_t)x[4 * s] | (uint32_t)x[5 * s] << 8 | (uint32_t)x[6 * s] << 16 | (uint32_t)x[7 * s] << 24;
  return _mm_insert_epi32(_mm_cvtsi32_si128((int)lo), (int)hi, 1);
}
INLINE vi vi_load_u8_strided(const uint8_t *p, size_t s) { return _mm256_cvtepu8_epi32(dlc_avx2_bytes_strided(p, s)); }
INLINE vi vi_load_s8_strided(const int8_t *p, size_t s) {
  return _mm256_cvtepi8_epi32(dlc_avx2_bytes_strided((const uint8_t *)p, s));
}
/* bitwise and */
INLINE vi vi_and(vi a, vi b) { return _mm256_and_si256(a, b); }

/* ---- names the lowp_gspc and q8_csr templates added -------------------------------------------- */

/* An accumulator of vi_dot2_s16 steps that an ISA may keep split, so that a step is one or two
   widening multiply-accumulates instead of a multiply, a pairwise add and an add: vi2_sum of the
   chain is the lanes the same vi_dot2_s16 chain gives (sums mod 2^32). DLC_VI2_REGS: the
   registers one takes (a template's accumulator budget). Here a vi: vi2_sum is free. */
typedef vi vi2;
#define DLC_VI2_REGS 1
/* DLC_VL int32 from a vector-aligned p (as v_load_aligned) */
INLINE vi vi_load_aligned(const int32_t *p) { return _mm256_load_si256((const __m256i *)(const void *)p); }
INLINE vi2 vi2_zero(void) { return vi_zero(); }
INLINE vi2 vi2_dot2_s16(vi2 acc, vi a, vi b) { return vi_dot2_s16(acc, a, b); }
INLINE vi vi2_sum(vi2 acc) { return acc; }
/* The s16 of a and b (2 * VL each, two rows of pixels) interleaved into VL pairs (a_k, b_k), in
   the ISA's zip order, here in-lane (vpunpcklwd / vpunpckhwd: pairs 0-3 and 8-11; 4-7 and 12-15);
   vi_zip16_in_order(lo, hi, k) puts the lanes of results taken from zip_lo and zip_hi back in
   order: k = 0 pairs 0 .. VL-1, k = 1 pairs VL .. 2 VL-1 (here vperm2i128). */
INLINE vi vi_zip16_lo(vi a, vi b) { return _mm256_unpacklo_epi16(a, b); }
INLINE vi vi_zip16_hi(vi a, vi b) { return _mm256_unpackhi_epi16(a, b); }
INLINE vi vi_zip16_in_order(vi lo, vi hi, const int k) {
  return k ? _mm256_permute2x128_si256(lo, hi, 0x31) : _mm256_permute2x128_si256(lo, hi, 0x20);
}

/* lane k: the low 16 bits of lo_k, those of hi_k above them (two rows of s16 into pairs) */
INLINE vi vi_pair16(vi lo, vi hi) { return _mm256_blend_epi16(lo, _mm256_slli_epi32(hi, 16), 0xAA); }
/* 2 DLC_VL bytes (u8, s8) widened to s16 less zp, as DLC_VL pairs (byte 2k low, 2k + 1 high);
   reads those bytes only */
INLINE vi vi_load_pairs_u8(const uint8_t *p, int32_t zp) {
  return _mm256_sub_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)p)),
                          _mm256_set1_epi16((int16_t)zp));
}
INLINE vi vi_load_pairs_s8(const int8_t *p, int32_t zp) {
  return _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)p)),
                          _mm256_set1_epi16((int16_t)zp));
}

#endif
