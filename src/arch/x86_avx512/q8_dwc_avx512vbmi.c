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
 * channels. The block then goes through the lanes epilogue (q8_lanes_avx512vbmi.h): requantised
 * in its lanes and transposed back to the 16 planes. */
#include <immintrin.h>
#include <stdint.h>

#include "../../ukernel/config.h"
#include "q8_lanes_avx512vbmi.h"

#define INLINE static inline __attribute__((always_inline))

/* quads: lane c of a window of four pixels x 16 channels takes tap t from byte 16 t + c */
#define QUAD(i) (16 * ((i) % 4) + (i) / 4)
/* first round of the input's 16 x 16 transpose: channels (4 a zmm, 16 pixels each) ->
   [pixel p < 8][channel c < 8] = 16 c + p (+ 8: pixels 8..15) */
#define IN1(i) (16 * ((i) % 8) + (i) / 8)

static const uint8_t quad_idx[64] __attribute__((aligned(64))) = DLC_R64(QUAD);
static const uint8_t in1_idx[64] __attribute__((aligned(64))) = DLC_R64(IN1);

static void q8_dwc_pack(size_t nc, size_t n, const uint8_t *x, size_t ldx, uint8_t flip, const uint32_t *off,
                        uint8_t *dst) {
  const __m512i s1 = _mm512_load_si512(in1_idx), s1b = _mm512_add_epi8(s1, _mm512_set1_epi8(8));
  const __m128i fl = _mm_set1_epi8((char)flip);
  for (size_t j = 0; j < n; j += 16) {
    const size_t len = n - j < 16 ? n - j : 16;
    const __mmask16 m = dlc_lanes_below(len);
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
    dlc_lanes_round2(b0, b2, b1, b3, o);
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

static void q8_dwc_run(size_t np, const uint8_t *xc, const uint32_t *pos, size_t kh, size_t ky_step, size_t nq,
                       const int32_t *w, const dlc_q8_params *q, size_t c0, size_t nc, void *y, size_t ldy) {
  const __m512i quad = _mm512_load_si512(quad_idx);
  dlc_lanes_consts k;
  dlc_lanes_init(&k, q, c0, nc);
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
    dlc_lanes_requant(&k, acc, q, c0, nc, z);
    dlc_lanes_store(z, nc, np - p0, out + p0, ldy);
  }
}

const dlc_q8_dwc_family dlc_q8_dwc__avx512vbmi = {
    .name = "q8_dwconv_16x16c4__avx512vbmi",
    .pack = q8_dwc_pack,
    .run = q8_dwc_run,
};
