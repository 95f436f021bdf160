/* vec.h (avx512) - the vector layer the kernel templates (src/arch/template/) are written over;
 * the same names with the same meaning as every ISA's vec.h (see src/arch/template/README.md).
 *
 * AVX-512 F/BW/VL/DQ + FMA + F16C: 16 floats in a zmm register, masks in k registers. Masked
 * stores are slow on some cores (Zen 4): whole vectors are stored plainly. */
#ifndef DLC_VEC_AVX512_H
#define DLC_VEC_AVX512_H

#include <immintrin.h>
#include <stddef.h>
#include <stdint.h>

#define DLC_VL 16
#define DLC_VEC_ISA avx512
#define DLC_NREGS 32 /* vector registers */

#include "../template/inline.h"

typedef __m512 vf;
typedef __mmask16 vmask;

/* lanes [0, n), n clamped to [0, VL] */
INLINE vmask v_first(ptrdiff_t n) {
  const unsigned k = n <= 0 ? 0u : n >= DLC_VL ? (unsigned)DLC_VL : (unsigned)n;
  return (vmask)((1u << k) - 1u);
}
/* lanes [lo, hi) */
INLINE vmask v_range(ptrdiff_t lo, ptrdiff_t hi) { return (vmask)(v_first(hi) & ~v_first(lo)); }

INLINE vf v_zero(void) { return _mm512_setzero_ps(); }
INLINE vf v_set1(float x) { return _mm512_set1_ps(x); }
INLINE vf v_bcast(const float *p) { return _mm512_set1_ps(*p); }
INLINE vf v_load(const float *p) { return _mm512_loadu_ps(p); }
INLINE vf v_load_aligned(const float *p) { return _mm512_load_ps(p); }
/* the lanes of m from p, zero elsewhere; the other lanes' memory is not read */
INLINE vf v_load_mask(const float *p, vmask m) { return _mm512_maskz_loadu_ps(m, p); }
INLINE vf v_load_first(const float *p, ptrdiff_t n) { return _mm512_maskz_loadu_ps(v_first(n), p); }
INLINE void v_store(float *p, vf v) { _mm512_storeu_ps(p, v); }
INLINE void v_store_aligned(float *p, vf v) { _mm512_store_ps(p, v); }
/* p[i] = v[i] for i < min(n, VL); nothing else is written */
INLINE void v_store_first(float *p, ptrdiff_t n, vf v) {
  if (n >= DLC_VL)
    _mm512_storeu_ps(p, v);
  else
    _mm512_mask_storeu_ps(p, v_first(n), v);
}
INLINE vf v_fma(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }
INLINE vf v_add(vf a, vf b) { return _mm512_add_ps(a, b); }
INLINE vf v_mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
/* min(hi, max(lo, v)) with the bound first: max/min return the second operand when either is
   NaN, so a NaN result stays NaN (a clamp must never hide one) */
INLINE vf v_clamp(vf v, vf lo, vf hi) { return _mm512_min_ps(hi, _mm512_max_ps(lo, v)); }
INLINE void v_prefetch(const void *p) { _mm_prefetch((const char *)p, _MM_HINT_T0); }

/* r[i][j] <-> r[j][i] over 16 x 16: unpack pairs, shuffle quads, then transpose the 128-bit
   lanes. */
INLINE void v_transpose(vf r[DLC_VL]) {
  __m512 t[16], u[16];
  UNROLL
  for (int i = 0; i < 8; i++) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  UNROLL
  for (int q = 0; q < 4; q++) {
    u[4 * q + 0] = _mm512_shuffle_ps(t[4 * q], t[4 * q + 2], 0x44);
    u[4 * q + 1] = _mm512_shuffle_ps(t[4 * q], t[4 * q + 2], 0xEE);
    u[4 * q + 2] = _mm512_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0x44);
    u[4 * q + 3] = _mm512_shuffle_ps(t[4 * q + 1], t[4 * q + 3], 0xEE);
  }
  /* u[4q+j], 128-bit lane k: rows 4q..4q+3 of column 4k+j. */
  UNROLL
  for (int j = 0; j < 4; j++) {
    const __m512 a = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);
    const __m512 b = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xDD);
    const __m512 c = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
    const __m512 d = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xDD);
    r[j] = _mm512_shuffle_f32x4(a, c, 0x88);
    r[8 + j] = _mm512_shuffle_f32x4(a, c, 0xDD);
    r[4 + j] = _mm512_shuffle_f32x4(b, d, 0x88);
    r[12 + j] = _mm512_shuffle_f32x4(b, d, 0xDD);
  }
}

/* binary16: widened exactly; rounded to nearest even whatever MXCSR says (the immediate mode),
   overflow to inf, NaN stays NaN (dlc_f32_to_f16 apart from NaN payloads) */
INLINE vf v_load_f16(const uint16_t *p) { return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p)); }
INLINE void v_store_f16_first(uint16_t *p, ptrdiff_t n, vf v) {
  const __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
  if (n >= DLC_VL)
    _mm256_storeu_si256((__m256i *)p, h);
  else
    _mm256_mask_storeu_epi16(p, v_first(n), h);
}

/* Added for the f32 direct and GEMM templates (src/arch/template/README.md). */
INLINE vf v_max(vf a, vf b) { return _mm512_max_ps(a, b); }
INLINE vf v_min(vf a, vf b) { return _mm512_min_ps(a, b); }
/* the first n binary16 widened, zeros elsewhere (one masked 16-bit load) */
INLINE vf v_load_f16_first(const uint16_t *p, ptrdiff_t n) { return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(v_first(n), p)); }
/* the even floats of a then b (2 * VL consecutive floats), in order (one two-source permute) */
INLINE vf v_evens(vf a, vf b) {
  return _mm512_permutex2var_ps(a, _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0), b);
}
INLINE vf v_evens_in_order(vf v) { return v; }
/* the odd floats of a then b, in v_evens' order */
INLINE vf v_odds(vf a, vf b) {
  return _mm512_permutex2var_ps(a, _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1), b);
}
/* a's and b's first halves interleaved, a0 b0 a1 b1 ...; their second halves (one two-source permute each) */
INLINE vf v_zip_lo(vf a, vf b) {
  return _mm512_permutex2var_ps(a, _mm512_set_epi32(23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2, 17, 1, 16, 0), b);
}
INLINE vf v_zip_hi(vf a, vf b) {
  return _mm512_permutex2var_ps(a, _mm512_set_epi32(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25, 9, 24, 8), b);
}
/* lanes n .. VL-1 of a, then lanes 0 .. n-1 of b: VL consecutive floats n past a's first when b
   follows a in memory (valignd); n a constant in [0, VL) */
#define v_shift_in(a, b, n) \
  _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(b), _mm512_castps_si512(a), (n)))
/* lane l of m: p[l * stride], zero elsewhere; other lanes' memory is not read */
INLINE vf v_gather(const float *p, ptrdiff_t stride, vmask m) {
  const __m512i idx = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                         _mm512_set1_epi32((int)stride));
  return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, p, 4);
}

/* ---- names the gspc, spack and csr templates added ------------------------------------------ */

/* the first n lanes (n clamped to [0, VL]) as v_store_tail stores them, worked out once for many
   stores; p[i] = v[i] for the lanes of t, nothing else written: here one masked store, whole
   vectors too (no branch per store, unlike v_store_first) */
typedef vmask vtail;
INLINE vtail v_tail(ptrdiff_t n) { return v_first(n); }
INLINE void v_store_tail(float *p, vtail t, vf v) { _mm512_mask_storeu_ps(p, t, v); }

#include <string.h> /* memcpy */

/* DLC_VL int32 lane indices (a permutation, gather offsets) */
typedef __m512i vidx;
INLINE vidx v_load_idx(const int32_t *p) { return _mm512_loadu_si512(p); }
/* r[k] = v[i[k]] */
INLINE vf v_permute(vf v, vidx i) { return _mm512_permutexvar_ps(i, v); }
/* the lanes of m p[i[k]], zero elsewhere; the other lanes' memory is not read */
INLINE vf v_gather_mask(const float *p, vidx i, vmask m) {
  return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, i, p, 4);
}
INLINE vmask v_mask_and(vmask a, vmask b) { return (vmask)(a & b); }
INLINE vmask v_mask_or(vmask a, vmask b) { return (vmask)(a | b); }
/* p[i] = v[i] for the lanes of m; nothing else is written */
INLINE void v_store_mask(float *p, vmask m, vf v) { _mm512_mask_storeu_ps(p, m, v); }
/* the g floats at p (g = 1, 2, 4, 8 or 16) repeated across the vector: one input pixel of g
   groups (vbroadcastss, folded into the FMA as {1to16}; vbroadcastsd / f32x4 / f32x8; a load) */
INLINE vf v_bcast_groups(const float *p, const size_t g) {
  if (g == 1) return _mm512_set1_ps(*p);
  if (g == 2) {
    double d;
    memcpy(&d, p, sizeof d);
    return _mm512_castpd_ps(_mm512_set1_pd(d));
  }
  if (g == 4) return _mm512_broadcast_f32x4(_mm_loadu_ps(p));
  if (g == 8) return _mm512_broadcast_f32x8(_mm256_loadu_ps(p));
  return _mm512_loadu_ps(p);
}

/* ---- int32 lanes (the int8 templates) ---------------------------------------------------------- */

/* DLC_VL int32 lanes; the bit casts to and from vf are free (a template may keep s32 sums in vf) */
typedef __m512i vi;
INLINE vi v_as_vi(vf v) { return _mm512_castps_si512(v); }
INLINE vf vi_as_vf(vi v) { return _mm512_castsi512_ps(v); }
INLINE vi vi_zero(void) { return _mm512_setzero_si512(); }
INLINE vi vi_set1(int32_t x) { return _mm512_set1_epi32(x); }
INLINE vi vi_load(const int32_t *p) { return _mm512_loadu_si512((const void *)p); }
INLINE void vi_store(int32_t *p, vi v) { _mm512_storeu_si512((void *)p, v); }
INLINE vi vi_add(vi a, vi b) { return _mm512_add_epi32(a, b); }
INLINE vi vi_sub(vi a, vi b) { return _mm512_sub_epi32(a, b); }
INLINE vi vi_mullo(vi a, vi b) { return _mm512_mullo_epi32(a, b); }
INLINE vf vi_to_vf(vi v) { return _mm512_cvtepi32_ps(v); }
/* DLC_VL bytes (u8, s8) widened to int32; reads those bytes only */
INLINE vi vi_load_u8(const uint8_t *p) { return _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(const void *)p)); }
INLINE vi vi_load_s8(const int8_t *p) { return _mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)p)); }
/* acc + a.lo16 * b.lo16 + a.hi16 * b.hi16 per lane (s16 halves, products exact, sums mod 2^32):
   vpdpwssd where the file is compiled for AVX512-VNNI (the same sums), else vpmaddwd + vpaddd */
INLINE vi vi_dot2_s16(vi acc, vi a, vi b) {
#if defined(__AVX512VNNI__)
  return _mm512_dpwssd_epi32(acc, a, b);
#else
  return _mm512_add_epi32(acc, _mm512_madd_epi16(a, b));
#endif
}

/* ---- the lowp_dw template (depthwise F16 / int8 rows, src/arch/template/lowp_dw.h) ----------- */

/* one binary16 widened to a float, as v_load_f16 widens a lane (the scalar lanes of a row) */
INLINE float v_f16_to_f32(uint16_t h) { return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(h))); }
/* the DLC_VL binary16 p[0], p[2], ..., p[2 VL - 2] widened; reads p[0 .. 2 VL - 1) only: a masked
   load of 31 halves (the masked-off one is not read), vpmovdw keeps the low (even) half of each dword */
INLINE vf v_load_f16_evens(const uint16_t *p) {
  return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_maskz_loadu_epi16(0x7fffffffu, p)));
}
/* the DLC_VL binary16 p[0], p[s], ..., p[(VL - 1) s] widened; reads those only (vpinsrw) */
INLINE __m128i dlc_avx512_halves8(const uint16_t *p, size_t s) {
  __m128i v = _mm_cvtsi32_si128(p[0]);
  v = _mm_insert_epi16(v, p[s], 1);
  v = _mm_insert_epi16(v, p[2 * s], 2);
  v = _mm_insert_epi16(v, p[3 * s], 3);
  v = _mm_insert_epi16(v, p[4 * s], 4);
  v = _mm_insert_epi16(v, p[5 * s], 5);
  v = _mm_insert_epi16(v, p[6 * s], 6);
  v = _mm_insert_epi16(v, p[7 * s], 7);
  return v;
}
INLINE vf v_load_f16_strided(const uint16_t *p, size_t s) {
  const __m256i v = _mm256_inserti128_si256(_mm256_castsi128_si256(dlc_avx512_halves8(p, s)),
                                            dlc_avx512_halves8(p + 8 * s, s), 1);
  return _mm512_cvtph_ps(v);
}
/* the DLC_VL bytes p[0], p[2], ..., p[2 VL - 2] widened to int32 (u8, s8); reads the 2 VL bytes
   p[0 .. 2 VL), the one after the last even included: one 32-byte load, vpmovwb keeps the low
   (even) byte of each word */
INLINE vi vi_load_u8_evens(const uint8_t *p) {
  return _mm512_cvtepu8_epi32(_mm256_cvtepi16_epi8(_mm256_loadu_si256((const __m256i *)(const void *)p)));
}
INLINE vi vi_load_s8_evens(const int8_t *p) {
  return _mm512_cvtepi8_epi32(_mm256_cvtepi16_epi8(_mm256_loadu_si256((const __m256i *)(const void *)p)));
}
/* the same reading p[0 .. 2 VL - 1) only (the last even is the last byte read): a masked load of
   31 bytes */
INLINE vi vi_load_u8_evens_end(const uint8_t *p) {
  return _mm512_cvtepu8_epi32(_mm256_cvtepi16_epi8(_mm256_maskz_loadu_epi8(0x7fffffffu, p)));
}
INLINE vi vi_load_s8_evens_end(const int8_t *p) {
  return _mm512_cvtepi8_epi32(_mm256_cvtepi16_epi8(_mm256_maskz_loadu_epi8(0x7fffffffu, p)));
}
/* the DLC_VL bytes p[0], p[s], ..., p[(VL - 1) s] widened to int32; reads those only (two qwords
   assembled in general registers) */
INLINE __m128i dlc_avx512_bytes_strided(const uint8_t *x, size_t s) {
  uint64_t lo = 0, hi = 0;
  UNROLL
  for (int l = 0; l < 8; l++) {
    lo |= (uint64_t)x[(size_t)l * s] << (8 * l);
    hi |= (uint64_t)x[(size_t)(l + 8) * s] << (8 * l);
  }
  return _mm_set_epi64x((long long)hi, (long long)lo);
}
INLINE vi vi_load_u8_strided(const uint8_t *p, size_t s) { return _mm512_cvtepu8_epi32(dlc_avx512_bytes_strided(p, s)); }
INLINE vi vi_load_s8_strided(const int8_t *p, size_t s) {
  return _mm512_cvtepi8_epi32(dlc_avx512_bytes_strided((const uint8_t *)p, s));
}
/* bitwise and */
INLINE vi vi_and(vi a, vi b) { return _mm512_and_si512(a, b); }

/* ---- names the lowp_gspc and q8_csr templates added -------------------------------------------- */

/* An accumulator of vi_dot2_s16 steps that an ISA may keep split, so that a step is one or two
   widening multiply-accumulates instead of a multiply, a pairwise add and an add: vi2_sum of the
   chain is the lanes the same vi_dot2_s16 chain gives (sums mod 2^32). DLC_VI2_REGS: the
   registers one takes (a template's accumulator budget). Here a vi: vi2_sum is free. */
typedef vi vi2;
#define DLC_VI2_REGS 1
/* DLC_VL int32 from a vector-aligned p (as v_load_aligned) */
INLINE vi vi_load_aligned(const int32_t *p) { return _mm512_load_si512((const void *)p); }
INLINE vi2 vi2_zero(void) { return vi_zero(); }
INLINE vi2 vi2_dot2_s16(vi2 acc, vi a, vi b) { return vi_dot2_s16(acc, a, b); }
INLINE vi vi2_sum(vi2 acc) { return acc; }
/* The s16 of a and b (2 * VL each, two rows of pixels) interleaved into VL pairs (a_k, b_k), in
   the ISA's zip order, here in-lane (vpunpcklwd / vpunpckhwd per 128 bits: pairs 0-3, 8-11, 16-19,
   24-27; 4-7, 12-15, 20-23, 28-31); vi_zip16_in_order(lo, hi, k) puts the lanes of results taken
   from zip_lo and zip_hi back in order: k = 0 pairs 0 .. VL-1, k = 1 pairs VL .. 2 VL-1 (vpermt2q). */
INLINE vi vi_zip16_lo(vi a, vi b) { return _mm512_unpacklo_epi16(a, b); }
INLINE vi vi_zip16_hi(vi a, vi b) { return _mm512_unpackhi_epi16(a, b); }
INLINE vi vi_zip16_in_order(vi lo, vi hi, const int k) {
  return k ? _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15), hi)
           : _mm512_permutex2var_epi64(lo, _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), hi);
}

/* lane k: the low 16 bits of lo_k, those of hi_k above them (two rows of s16 into pairs) */
INLINE vi vi_pair16(vi lo, vi hi) {
  return _mm512_mask_blend_epi16((__mmask32)0xAAAAAAAAu, lo, _mm512_slli_epi32(hi, 16));
}
/* 2 DLC_VL bytes (u8, s8) widened to s16 less zp, as DLC_VL pairs (byte 2k low, 2k + 1 high);
   reads those bytes only */
INLINE vi vi_load_pairs_u8(const uint8_t *p, int32_t zp) {
  return _mm512_sub_epi16(_mm512_cvtepu8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)p)),
                          _mm512_set1_epi16((int16_t)zp));
}
INLINE vi vi_load_pairs_s8(const int8_t *p, int32_t zp) {
  return _mm512_sub_epi16(_mm512_cvtepi8_epi16(_mm256_loadu_si256((const __m256i *)(const void *)p)),
                          _mm512_set1_epi16((int16_t)zp));
}

#endif
