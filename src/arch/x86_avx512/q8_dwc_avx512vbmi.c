/* q8_dwc_avx512vbmi.c - int8 depthwise NCHW on small planes with 16 channels in the lanes
 * (lowp_dw_ukernel.h, dlc_q8_dwc_family).
 *
 * pack: 16 pixels of 16 planes are 16 xmm rows; two rounds of vpermt2b (each output takes bytes
 * from two of four zmm) turn them into 16 pixels of 16 channels, 16 bytes per pixel, stored
 * where the driver's offset table puts each pixel (its padded, interleaved plane).
 *
 * run: a block of 16 output pixels is 16 accumulators of 16 channels. Per kernel row and quad of
 * taps, each pixel is one 64-byte load (its four pixels of 16 channels), one vpermb that gathers
 * each channel's four taps into its s32 lane, and one vpdpbusd with those taps' weights of the 16
 * channels. The block is then requantised in its lanes (the wide screen of quant.h, per-channel
 * bias and multiplier vectors) and narrowed by packs, and two rounds of vpermt2b turn its 16
 * pixels x 16 channels of bytes into 16 channel rows of 16 pixels for the NCHW planes. A block
 * with a lane near a tie, or a plan without the wide screen, is requantised by the exact store
 * instead (one call per pixel, channels along the run). */
#include <immintrin.h>
#include <math.h>
#include <stdint.h>

#include "../../core/kernels.h"
#include "q8_wide_avx512.h"

void dlc_q8_store__avx512(size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, int per_column, void *y);

#define INLINE static inline __attribute__((always_inline))

/* Byte permutes as tables of 64 indices, each entry a formula of its position i. */
#define R4(f, i) f(i), f((i) + 1), f((i) + 2), f((i) + 3)
#define R16(f, i) R4(f, i), R4(f, (i) + 4), R4(f, (i) + 8), R4(f, (i) + 12)
#define R64(f) {R16(f, 0), R16(f, 16), R16(f, 32), R16(f, 48)}
/* quads: lane c of a window of four pixels x 16 channels takes tap t from byte 16 t + c */
#define QUAD(i) (16 * ((i) % 4) + (i) / 4)
/* 16 x 16 byte transposes in two rounds; the first round's 64 bytes hold 8 x 8 of them:
   in:  channels (4 a zmm, 16 pixels each) -> [pixel p < 8][channel c < 8] = 16 c + p (+ 8: pixels 8..15)
   both ways, second round: [row r < 4][16 columns] from two 8 x 8 halves (+ 32: rows 4..7) */
#define IN1(i) (16 * ((i) % 8) + (i) / 8)
#define ROUND2(i) (64 * ((i) % 16 / 8) + 8 * ((i) / 16) + (i) % 8)
/* out: the packs' order (zmm g: byte 16 L + 4 p + k = pixel 4 g + p, channel 4 L + k) -> [channel
   c < 8][pixel p < 8] (+ 32: channels 8..15) */
#define OUT1(i) (64 * ((i) % 8 / 4) + 16 * ((i) / 32) + 4 * ((i) % 4) + (i) / 8 % 4)
/* 64 bytes of [pixel][16 channels] (the exact store's order) -> the packs' order */
#define TO_PACKS(i) (16 * ((i) % 16 / 4) + 4 * ((i) / 16) + (i) % 4)

static const uint8_t quad_idx[64] __attribute__((aligned(64))) = R64(QUAD);
static const uint8_t in1_idx[64] __attribute__((aligned(64))) = R64(IN1);
static const uint8_t round2_idx[64] __attribute__((aligned(64))) = R64(ROUND2);
static const uint8_t out1_idx[64] __attribute__((aligned(64))) = R64(OUT1);
static const uint8_t to_packs_idx[64] __attribute__((aligned(64))) = R64(TO_PACKS);

INLINE __mmask16 lanes_below(size_t n) { return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1u); }

/* Four zmm of 64 bytes each into four of the second round's layout: out[0], out[1] from (a, b)
   rows 0..3 and 4..7, out[2], out[3] from (c, d). */
INLINE void round2(__m512i a, __m512i b, __m512i c, __m512i d, __m512i out[4]) {
  const __m512i r2 = _mm512_load_si512(round2_idx), r2b = _mm512_add_epi8(r2, _mm512_set1_epi8(32));
  out[0] = _mm512_permutex2var_epi8(a, r2, b);
  out[1] = _mm512_permutex2var_epi8(a, r2b, b);
  out[2] = _mm512_permutex2var_epi8(c, r2, d);
  out[3] = _mm512_permutex2var_epi8(c, r2b, d);
}

static void q8_dwc_pack(size_t nc, size_t n, const uint8_t *x, size_t ldx, uint8_t flip, const uint32_t *off,
                        uint8_t *dst) {
  const __m512i s1 = _mm512_load_si512(in1_idx), s1b = _mm512_add_epi8(s1, _mm512_set1_epi8(8));
  const __m128i fl = _mm_set1_epi8((char)flip);
  for (size_t j = 0; j < n; j += 16) {
    const size_t len = n - j < 16 ? n - j : 16;
    const __mmask16 m = lanes_below(len);
    __m512i a[4];
    for (size_t k = 0; k < 4; k++) {
      __m128i r[4];
      for (size_t t = 0; t < 4; t++) {
        const size_t c = 4 * k + t;
        r[t] = c < nc ? _mm_xor_si128(_mm_maskz_loadu_epi8(m, x + c * ldx + j), fl) : _mm_setzero_si128();
      }
      a[k] = _mm512_inserti32x4(_mm512_inserti32x4(_mm512_inserti32x4(_mm512_castsi128_si512(r[0]), r[1], 1), r[2], 2),
                                r[3], 3);
    }
    /* [pixel < 8][channel < 8] quarters: pixels 0..7 / 8..15 of channels 0..7 / 8..15 */
    const __m512i b0 = _mm512_permutex2var_epi8(a[0], s1, a[1]), b1 = _mm512_permutex2var_epi8(a[0], s1b, a[1]);
    const __m512i b2 = _mm512_permutex2var_epi8(a[2], s1, a[3]), b3 = _mm512_permutex2var_epi8(a[2], s1b, a[3]);
    __m512i o[4]; /* o[g]: pixels 4 g .. 4 g + 3, 16 channels each */
    round2(b0, b2, b1, b3, o);
    if (len == 16) {
      for (size_t g = 0; g < 4; g++) {
        const uint32_t *od = off + j + 4 * g;
        _mm_storeu_si128((__m128i *)(dst + od[0]), _mm512_castsi512_si128(o[g]));
        _mm_storeu_si128((__m128i *)(dst + od[1]), _mm512_extracti32x4_epi32(o[g], 1));
        _mm_storeu_si128((__m128i *)(dst + od[2]), _mm512_extracti32x4_epi32(o[g], 2));
        _mm_storeu_si128((__m128i *)(dst + od[3]), _mm512_extracti32x4_epi32(o[g], 3));
      }
    } else {
      uint8_t tmp[256] __attribute__((aligned(64)));
      for (size_t g = 0; g < 4; g++) _mm512_store_si512(tmp + 64 * g, o[g]);
      for (size_t p = 0; p < len; p++)
        _mm_storeu_si128((__m128i *)(dst + off[j + p]), _mm_load_si128((const __m128i *)(tmp + 16 * p)));
    }
  }
}

/* The epilogue's constants, per call: the channels' bias and multiplier vectors and the clamp in
   integers (as the store's wide path: quant.h). */
typedef struct dwc_consts {
  __m512i bias, m_less_zp, lo_i, hi_i;
  __m512 mf, half_in;
  int fast, clamp;
} dwc_consts;

/* A block's 16 accumulators to bytes in the packs' order (see OUT1); 0 where a lane lies near a
   tie (the caller then takes the exact store). */
INLINE int requant_block(const dwc_consts *k, const __m512i acc[16], int is_signed, __m512i z[4]) {
  __m512 dmax = _mm512_setzero_ps(); /* largest magnitude of the distances per lane */
  for (size_t g = 0; g < 4; g++) { /* four pixels at a time: 32 live vectors of r and d would spill */
    __m512i r[4];
    __m512 d[4];
    for (size_t i = 0; i < 4; i++) {
      r[i] = dlc_q8_wide16(_mm512_add_epi32(acc[4 * g + i], k->bias), k->mf, k->m_less_zp, &d[i]);
      if (k->clamp) r[i] = _mm512_min_epi32(_mm512_max_epi32(r[i], k->lo_i), k->hi_i);
    }
    dmax = _mm512_range_ps(dmax, _mm512_range_ps(_mm512_range_ps(d[0], d[1], 0x0B), _mm512_range_ps(d[2], d[3], 0x0B), 0x0B),
                           0x0B);
    const __m512i w01 = _mm512_packs_epi32(r[0], r[1]), w23 = _mm512_packs_epi32(r[2], r[3]);
    z[g] = is_signed ? _mm512_packs_epi16(w01, w23) : _mm512_packus_epi16(w01, w23);
  }
  return !_mm512_cmp_ps_mask(dmax, k->half_in, _CMP_GT_OQ);
}

INLINE void store_rows(__m512i t, size_t c, size_t nc, __mmask16 pm, uint8_t *y, size_t ldy) {
  if (c < nc) _mm_mask_storeu_epi8(y + c * ldy, pm, _mm512_castsi512_si128(t));
  if (c + 1 < nc) _mm_mask_storeu_epi8(y + (c + 1) * ldy, pm, _mm512_extracti32x4_epi32(t, 1));
  if (c + 2 < nc) _mm_mask_storeu_epi8(y + (c + 2) * ldy, pm, _mm512_extracti32x4_epi32(t, 2));
  if (c + 3 < nc) _mm_mask_storeu_epi8(y + (c + 3) * ldy, pm, _mm512_extracti32x4_epi32(t, 3));
}

static void q8_dwc_run(size_t np, const uint8_t *xc, const uint32_t *pos, size_t kh, size_t ky_step, size_t nq,
                       const int32_t *w, const dlc_q8_params *q, size_t c0, size_t nc, void *y, size_t ldy) {
  const __m512i quad = _mm512_load_si512(quad_idx);
  const __mmask16 cm = lanes_below(nc);
  dwc_consts k;
  const double ylo = (double)(q->y_min - q->y_zero_point), yhi = (double)(q->y_max - q->y_zero_point);
  const double lo_y = q->lo < ylo ? ylo : q->lo > yhi ? yhi : q->lo;
  const double hi_y = q->hi < ylo ? ylo : q->hi > yhi ? yhi : q->hi;
  k.fast = q->screen_wide;
  k.clamp = q->lo > ylo || q->hi < yhi;
  k.bias = _mm512_maskz_loadu_epi32(cm, q->bias + c0);
  k.mf = k.fast ? _mm512_maskz_loadu_ps(cm, q->mult_f + c0) : _mm512_setzero_ps();
  k.m_less_zp = _mm512_set1_epi32(0x4b400000 - q->y_zero_point);
  k.lo_i = _mm512_set1_epi32((int32_t)nearbyint(lo_y) + q->y_zero_point);
  k.hi_i = _mm512_set1_epi32((int32_t)nearbyint(hi_y) + q->y_zero_point);
  k.half_in = _mm512_set1_ps(0.5f - DLC_Q8_WIDE_MARGIN);
  const __m512i o1 = _mm512_load_si512(out1_idx), o1b = _mm512_add_epi8(o1, _mm512_set1_epi8(32));
  uint8_t *out = y;
  for (size_t p0 = 0; p0 < np; p0 += 16) {
    const uint32_t *ps = pos + p0;
    __m512i acc[16];
    for (size_t i = 0; i < 16; i++) acc[i] = _mm512_setzero_si512();
    for (size_t ky = 0; ky < kh; ky++)
      for (size_t qd = 0; qd < nq; qd++) {
        const __m512i wv = _mm512_loadu_si512(w + (ky * nq + qd) * 16);
        const uint8_t *base = xc + ky * ky_step + 64 * qd;
        for (size_t i = 0; i < 16; i++)
          acc[i] = _mm512_dpbusd_epi32(acc[i], _mm512_permutexvar_epi8(quad, _mm512_loadu_si512(base + ps[i])), wv);
      }
    __m512i z[4];
    if (!k.fast || !requant_block(&k, acc, q->is_signed, z)) {
      int32_t a[256] __attribute__((aligned(64)));
      uint8_t bytes[256] __attribute__((aligned(64)));
      for (size_t i = 0; i < 16; i++) _mm512_store_si512(a + 16 * i, acc[i]);
      for (size_t i = 0; i < 16; i++) dlc_q8_store__avx512(nc, a + 16 * i, q, c0, 1, bytes + 16 * i);
      const __m512i tp = _mm512_load_si512(to_packs_idx);
      for (size_t g = 0; g < 4; g++) z[g] = _mm512_permutexvar_epi8(tp, _mm512_load_si512(bytes + 64 * g));
    }
    /* [channel < 8][pixel < 8] quarters, then rows of 16 pixels per channel */
    const __m512i u0 = _mm512_permutex2var_epi8(z[0], o1, z[1]), u1 = _mm512_permutex2var_epi8(z[0], o1b, z[1]);
    const __m512i u2 = _mm512_permutex2var_epi8(z[2], o1, z[3]), u3 = _mm512_permutex2var_epi8(z[2], o1b, z[3]);
    __m512i t[4]; /* t[g]: channels 4 g .. 4 g + 3, 16 pixels each */
    round2(u0, u2, u1, u3, t);
    const __mmask16 pm = lanes_below(np - p0);
    for (size_t g = 0; g < 4; g++) store_rows(t[g], 4 * g, nc, pm, out + p0, ldy);
  }
}

const dlc_q8_dwc_family dlc_q8_dwc__avx512vbmi = {
    .name = "q8_dwconv_16x16c4__avx512vbmi",
    .pack = q8_dwc_pack,
    .run = q8_dwc_run,
};
