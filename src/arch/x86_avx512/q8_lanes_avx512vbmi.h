/* q8_lanes_avx512vbmi.h - the int8 epilogue of kernels whose accumulators hold 16 output
 * channels in their lanes, one vector per output pixel (q8_dwc_avx512vbmi.c, and the store of
 * the transposed gemm's position-major tiles, q8_store_t_avx512vbmi.c): a block of 16 pixels is
 * requantised in the lanes (the wide screen of quant.h, per-channel bias and multiplier vectors),
 * narrowed by packs, and two rounds of vpermt2b turn its 16 pixels x 16 channels of bytes into 16
 * channel rows of 16 pixels for the NCHW planes. A block with a lane near a tie, or a plan
 * without the wide screen, is requantised by the exact store (one call per pixel, channels along
 * the run). Needs AVX-512 F/BW/VBMI. */
#ifndef DLC_Q8_LANES_AVX512VBMI_H
#define DLC_Q8_LANES_AVX512VBMI_H

#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "../../quant/quant.h"
#include "q8_wide_avx512.h"
#include "q8_store_avx512.h"


#define DLC_LANES_INLINE static inline __attribute__((always_inline))

/* Byte permutes as tables of 64 indices, each entry a formula of its position i. */
#define DLC_R4(f, i) f(i), f((i) + 1), f((i) + 2), f((i) + 3)
#define DLC_R16(f, i) DLC_R4(f, i), DLC_R4(f, (i) + 4), DLC_R4(f, (i) + 8), DLC_R4(f, (i) + 12)
#define DLC_R64(f) {DLC_R16(f, 0), DLC_R16(f, 16), DLC_R16(f, 32), DLC_R16(f, 48)}
/* 16 x 16 byte transposes go in two rounds; the second: [row r < 4][16 columns] from two 8 x 8
   halves, [r][c < 8] of the first and [r][c - 8] of the second (+ 32: rows 4..7) */
#define DLC_ROUND2(i) (64 * ((i) % 16 / 8) + 8 * ((i) / 16) + (i) % 8)
/* first round out of the packs' order (zmm g: byte 16 L + 4 p + k = pixel 4 g + p, channel
   4 L + k), two zmm (pixels 0..7): [channel c < 8][pixel p < 8] (+ 32: channels 8..15) */
#define DLC_OUT1(i) (64 * ((i) % 8 / 4) + 16 * ((i) / 32) + 4 * ((i) % 4) + (i) / 8 % 4)
/* 64 bytes of [pixel][16 channels] (the exact store's order) -> the packs' order */
#define DLC_TO_PACKS(i) (16 * ((i) % 16 / 4) + 4 * ((i) / 16) + (i) % 4)

static const uint8_t dlc_lanes_round2_idx[64] __attribute__((aligned(64))) = DLC_R64(DLC_ROUND2);
static const uint8_t dlc_lanes_out1_idx[64] __attribute__((aligned(64))) = DLC_R64(DLC_OUT1);
static const uint8_t dlc_lanes_to_packs_idx[64] __attribute__((aligned(64))) = DLC_R64(DLC_TO_PACKS);

DLC_LANES_INLINE __mmask16 dlc_lanes_below(size_t n) {
  return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1u);
}

/* Four zmm of 64 bytes each into four of the second round's layout: out[0], out[1] from (a, b)
   rows 0..3 and 4..7, out[2], out[3] from (c, d). */
DLC_LANES_INLINE void dlc_lanes_round2(__m512i a, __m512i b, __m512i c, __m512i d, __m512i out[4]) {
  const __m512i r2 = _mm512_load_si512(dlc_lanes_round2_idx), r2b = _mm512_add_epi8(r2, _mm512_set1_epi8(32));
  out[0] = _mm512_permutex2var_epi8(a, r2, b);
  out[1] = _mm512_permutex2var_epi8(a, r2b, b);
  out[2] = _mm512_permutex2var_epi8(c, r2, d);
  out[3] = _mm512_permutex2var_epi8(c, r2b, d);
}

/* The epilogue's constants for channels [c0, c0 + nc): their bias and multiplier vectors and the
   clamp in integers (as the store's wide path: quant.h). */
typedef struct dlc_lanes_consts {
  __m512i bias, m_less_zp, lo_i, hi_i;
  __m512 mf, half_in;
  int fast, clamp;
} dlc_lanes_consts;

DLC_LANES_INLINE void dlc_lanes_init(dlc_lanes_consts *k, const dlc_q8_params *q, size_t c0, size_t nc) {
  const __mmask16 cm = dlc_lanes_below(nc);
  k->fast = q->screen_wide;
  k->clamp = q->clamp_i;
  k->bias = _mm512_maskz_loadu_epi32(cm, q->bias + c0);
  k->mf = k->fast ? _mm512_maskz_loadu_ps(cm, q->mult_f + c0) : _mm512_setzero_ps();
  k->m_less_zp = _mm512_set1_epi32(0x4b400000 - q->y_zero_point);
  k->lo_i = _mm512_set1_epi32(q->lo_i);
  k->hi_i = _mm512_set1_epi32(q->hi_i);
  k->half_in = _mm512_set1_ps(0.5f - DLC_Q8_WIDE_MARGIN);
}

/* A block's 16 accumulators (pixel i in acc[i]) to bytes in the packs' order; 0 where a lane
   lies near a tie. Four pixels at a time: 32 live vectors of r and d would spill. */
DLC_LANES_INLINE int dlc_lanes_requant_fast(const dlc_lanes_consts *k, const __m512i acc[16], int is_signed,
                                            __m512i z[4]) {
  __m512 dmax = _mm512_setzero_ps(); /* largest magnitude of the distances per lane */
  for (size_t g = 0; g < 4; g++) {
    __m512i r[4];
    __m512 d[4];
    for (size_t i = 0; i < 4; i++) {
      r[i] = dlc_q8_wide16(_mm512_add_epi32(acc[4 * g + i], k->bias), k->mf, k->m_less_zp, &d[i]);
      if (k->clamp) r[i] = _mm512_min_epi32(_mm512_max_epi32(r[i], k->lo_i), k->hi_i);
    }
    dmax = _mm512_range_ps(
        dmax, _mm512_range_ps(_mm512_range_ps(d[0], d[1], 0x0B), _mm512_range_ps(d[2], d[3], 0x0B), 0x0B), 0x0B);
    const __m512i w01 = _mm512_packs_epi32(r[0], r[1]), w23 = _mm512_packs_epi32(r[2], r[3]);
    z[g] = is_signed ? _mm512_packs_epi16(w01, w23) : _mm512_packus_epi16(w01, w23);
  }
  return !_mm512_cmp_ps_mask(dmax, k->half_in, _CMP_GT_OQ);
}

/* The block requantised: the screen, else the exact store per pixel (its bytes moved into the
   packs' order). */
DLC_LANES_INLINE void dlc_lanes_requant(const dlc_lanes_consts *k, const __m512i acc[16], const dlc_q8_params *q,
                                        size_t c0, size_t nc, __m512i z[4]) {
  if (k->fast && dlc_lanes_requant_fast(k, acc, q->is_signed, z)) return;
  int32_t a[256] __attribute__((aligned(64)));
  uint8_t bytes[256] __attribute__((aligned(64)));
  for (size_t i = 0; i < 16; i++) _mm512_store_si512(a + 16 * i, acc[i]);
  for (size_t i = 0; i < 16; i++) dlc_q8_store__avx512(nc, a + 16 * i, q, c0, 1, bytes + 16 * i);
  const __m512i tp = _mm512_load_si512(dlc_lanes_to_packs_idx);
  for (size_t g = 0; g < 4; g++) z[g] = _mm512_permutexvar_epi8(tp, _mm512_load_si512(bytes + 64 * g));
}

DLC_LANES_INLINE void dlc_lanes_store4(__m512i t, size_t c, size_t nc, __mmask16 pm, uint8_t *y, size_t ldy) {
  if (c < nc) _mm_mask_storeu_epi8(y + c * ldy, pm, _mm512_castsi512_si128(t));
  if (c + 1 < nc) _mm_mask_storeu_epi8(y + (c + 1) * ldy, pm, _mm512_extracti32x4_epi32(t, 1));
  if (c + 2 < nc) _mm_mask_storeu_epi8(y + (c + 2) * ldy, pm, _mm512_extracti32x4_epi32(t, 2));
  if (c + 3 < nc) _mm_mask_storeu_epi8(y + (c + 3) * ldy, pm, _mm512_extracti32x4_epi32(t, 3));
}

/* The packs-order bytes of a block to channel rows: y[c * ldy + p] for c < nc, p < npix (<= 16). */
DLC_LANES_INLINE void dlc_lanes_store(const __m512i z[4], size_t nc, size_t npix, uint8_t *y, size_t ldy) {
  const __m512i o1 = _mm512_load_si512(dlc_lanes_out1_idx), o1b = _mm512_add_epi8(o1, _mm512_set1_epi8(32));
  /* [channel < 8][pixel < 8] quarters, then rows of 16 pixels per channel */
  const __m512i u0 = _mm512_permutex2var_epi8(z[0], o1, z[1]), u1 = _mm512_permutex2var_epi8(z[0], o1b, z[1]);
  const __m512i u2 = _mm512_permutex2var_epi8(z[2], o1, z[3]), u3 = _mm512_permutex2var_epi8(z[2], o1b, z[3]);
  __m512i t[4]; /* t[g]: channels 4 g .. 4 g + 3, 16 pixels each */
  dlc_lanes_round2(u0, u2, u1, u3, t);
  const __mmask16 pm = dlc_lanes_below(npix);
  for (size_t g = 0; g < 4; g++) dlc_lanes_store4(t[g], 4 * g, nc, pm, y, ldy);
}

#endif
