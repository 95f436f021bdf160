/* f32 direct micro-kernels, AVX-512 (direct_ukernel.h says what each computes; the generic file
 * is the readable specification).
 *
 * conv: up to 14 pixels x 32 channels (28 zmm accumulators, 2 weight vectors, 1 broadcast) or
 * 24 pixels x 16 channels; every (ky, kx, ic) step is 2 weight loads + nw broadcasts for 2*nw FMAs.
 * The three reduction loops come from the driver (their order and merging suit the layout).
 * dwc: up to 12 pixels x 32 channels (or 24 x 16), one x vector load per FMA; dwp: up to 8 vectors
 * of 16 pixels x 1-8 rows, stride 1 and 2 with contiguous loads, other strides gathered.
 * Tiles are compile-time shapes: one always-inline body instantiated per pixel count, so the
 * accumulators live in registers. NCHW output is stored through 16x16 in-register transposes. */
#include <immintrin.h>
#include <stdint.h>

#include "../../ukernel/direct_ukernel.h"
#include "../x86_avx2/f32_direct_avx2.h"

#define VL 16
#define CONV_TW1 24
#define CONV_TW2 14
#define DWC_TW1 24
#define DWC_TW2 12
#define DWP_VECS 8
#ifndef PF_STEPS
#define PF_STEPS 6
#endif

#define INLINE static inline __attribute__((always_inline))
/* Fully unroll the register-tile loops before scalar replacement, else GCC -O3 may keep the
   accumulator array in memory and store it after every FMA. */
#define UNROLL _Pragma("GCC unroll 32")

INLINE __mmask16 lane_mask(ptrdiff_t n) {
  const unsigned k = n <= 0 ? 0u : n >= VL ? (unsigned)VL : (unsigned)n;
  return (__mmask16)((1u << k) - 1u);
}

/* Lanes [lo, hi) of a 16-lane vector. */
INLINE __mmask16 range_mask(ptrdiff_t lo, ptrdiff_t hi) {
  return (__mmask16)(lane_mask(hi) & ~lane_mask(lo));
}

/* Masked stores are slow on some cores (Zen 4); most stores are whole vectors. */
INLINE void store_lanes(float *p, __mmask16 m, __m512 v) {
  if (m == (__mmask16)0xFFFF)
    _mm512_storeu_ps(p, v);
  else
    _mm512_mask_storeu_ps(p, m, v);
}

/* r[i][j] -> r[j][i]: unpack pairs, shuffle quads, then transpose the 128-bit lanes. */
INLINE void transpose16(__m512 r[16]) {
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

/* Start of a tile: acc_in, or the bias on the nc valid lanes. */
INLINE void tile_init(__m512 acc[][2], const int NW, const int NV, const dlc_f32_direct_args *a) {
  if (a->acc_in) {
    UNROLL
    for (int p = 0; p < NW; p++)
      UNROLL
      for (int v = 0; v < NV; v++) acc[p][v] = _mm512_loadu_ps(a->acc_in + p * a->acc_ld + v * VL);
  } else {
    UNROLL
    for (int v = 0; v < NV; v++) {
      const __m512 b = _mm512_maskz_loadu_ps(lane_mask((ptrdiff_t)a->nc - v * VL), a->bias + v * VL);
      UNROLL
      for (int p = 0; p < NW; p++) acc[p][v] = b;
    }
  }
}

/* 16 floats to binary16 under a lane mask: vcvtps2ph with an immediate mode rounds to nearest even
   whatever MXCSR says, overflows to inf and keeps NaN a NaN (dlc_f32_to_f16 apart from NaN
   payloads); the masked 16-bit store (AVX512-BW + VL) writes only the lanes of m. */
INLINE void store_lanes_f16(uint16_t *p, __mmask16 m, __m512 v) {
  const __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
  if (m == (__mmask16)0xFFFF)
    _mm256_storeu_si256((__m256i *)p, h);
  else
    _mm256_mask_storeu_epi16(p, m, h);
}

/* The lanes m of v into y at element offset off, or (F16) into yh rounded to binary16. */
INLINE void put_lanes(const dlc_f32_direct_args *a, ptrdiff_t off, __mmask16 m, __m512 v, const int F16) {
  if (F16)
    store_lanes_f16(a->yh + off, m, v);
  else
    store_lanes(a->y + off, m, v);
}

/* The clamped tile, from buf (pixel p, vector v at buf + (p * 2 + v) * VL, 64-byte aligned), into y
   or (F16, a compile-time choice) into yh: NHWC rows, NCHW transposed 16 pixels at a time, other strides one element at
   a time. Out of line and with run-time sizes: inlined into each of the 226 register-tile
   instances (with the binary16 twin) these stores made this file take 173 s to compile (Zen 5); the
   detour through L1 costs a tile nw * nv stores and loads against its cin_g * taps * nw * nv FMAs. */
INLINE void tile_put_body(const float *buf, int nw, int nv, const dlc_f32_direct_args *a, const int F16) {
  if (a->y_c == 1) {
    for (int v = 0; v < nv; v++) {
      const __mmask16 m = lane_mask((ptrdiff_t)a->nc - v * VL);
      for (int p = 0; p < nw; p++) put_lanes(a, p * a->y_pix + v * VL, m, _mm512_load_ps(buf + (p * 2 + v) * VL), F16);
    }
    return;
  }
  if (a->y_pix == 1) {
    for (int v = 0; v < nv; v++) {
      const int nch = (int)a->nc - v * VL < VL ? (int)a->nc - v * VL : VL;
      for (int p0 = 0; p0 < nw; p0 += 16) {
        __m512 r[16];
        UNROLL
        for (int i = 0; i < 16; i++) r[i] = p0 + i < nw ? _mm512_loadu_ps(buf + ((p0 + i) * 2 + v) * VL) : _mm512_setzero_ps();
        transpose16(r);
        const __mmask16 m = lane_mask(nw - p0);
        for (int c = 0; c < nch; c++) put_lanes(a, (v * VL + c) * a->y_c + p0, m, r[c], F16);
      }
    }
    return;
  }
  for (int v = 0; v < nv; v++) {
    uint16_t h[VL];
    for (int p = 0; p < nw; p++) {
      const float *t = buf + (p * 2 + v) * VL;
      if (F16) store_lanes_f16(h, (__mmask16)0xFFFF, _mm512_loadu_ps(t));
      for (int c = 0; c < VL && v * VL + c < (int)a->nc; c++) {
        const ptrdiff_t at = p * a->y_pix + (v * VL + c) * a->y_c;
        if (F16)
          a->yh[at] = h[c];
        else
          a->y[at] = t[c];
      }
    }
  }
}

static __attribute__((noinline)) void tile_put_f32(const float *buf, int nw, int nv, const dlc_f32_direct_args *a) {
  tile_put_body(buf, nw, nv, a, 0);
}

static __attribute__((noinline)) void tile_put_f16(const float *buf, int nw, int nv, const dlc_f32_direct_args *a) {
  tile_put_body(buf, nw, nv, a, 1);
}

/* End of a tile: raw into acc_out, or clamped into y: NHWC rows of fp32 as masked stores here,
   every other output (NCHW, binary16 into yh, other strides) through tile_put_*. F16_OUT: the
   caller may set yh (conv); dwc never does. */
INLINE void tile_store(__m512 acc[][2], const int NW, const int NV, const dlc_f32_direct_args *a, const int F16_OUT) {
  if (a->acc_out) {
    UNROLL
    for (int p = 0; p < NW; p++)
      UNROLL
      for (int v = 0; v < NV; v++) _mm512_storeu_ps(a->acc_out + p * a->acc_ld + v * VL, acc[p][v]);
    return;
  }
  /* The bound is the first operand: max/min return the second when either is NaN. */
  const __m512 lo = _mm512_set1_ps(a->out_min), hi = _mm512_set1_ps(a->out_max);
  UNROLL
  for (int p = 0; p < NW; p++)
    UNROLL
    for (int v = 0; v < NV; v++) acc[p][v] = _mm512_min_ps(hi, _mm512_max_ps(lo, acc[p][v]));
  if (a->y_c == 1 && !(F16_OUT && a->yh)) {
    UNROLL
    for (int v = 0; v < NV; v++) {
      const __mmask16 m = lane_mask((ptrdiff_t)a->nc - v * VL);
      UNROLL
      for (int p = 0; p < NW; p++) store_lanes(a->y + p * a->y_pix + v * VL, m, acc[p][v]);
    }
    return;
  }
  __attribute__((aligned(64))) float buf[CONV_TW1 * 2 * VL];
  UNROLL
  for (int p = 0; p < NW; p++)
    UNROLL
    for (int v = 0; v < NV; v++) _mm512_store_ps(buf + (p * 2 + v) * VL, acc[p][v]);
  if (F16_OUT && a->yh)
    tile_put_f16(buf, NW, NV, a);
  else
    tile_put_f32(buf, NW, NV, a);
}

/* XP: the pixel stride x_pix when it is 1 or 2 (NCHW, stride 1 or 2), known at compile time so
   every broadcast addresses its pixel by an immediate offset; 0: read from the arguments (NHWC),
   where GCC has to keep nw pixel offsets in registers or on the stack. */
INLINE void conv_tile(const dlc_f32_direct_args *a, const int NW, const int NV, const int XP) {
  __m512 acc[CONV_TW1][2];
  tile_init(acc, NW, NV, a);
  const ptrdiff_t xp = XP ? XP : a->x_pix, wv = a->w_v, xs2 = a->x_s[2], ws2 = a->w_s[2];
  const size_t n2 = a->n[2];
  for (size_t i0 = 0; i0 < a->n[0]; i0++) {
    for (size_t i1 = 0; i1 < a->n[1]; i1++) {
      const float *xk = a->x + (ptrdiff_t)i0 * a->x_s[0] + (ptrdiff_t)i1 * a->x_s[1];
      const float *wk = a->w + (ptrdiff_t)i0 * a->w_s[0] + (ptrdiff_t)i1 * a->w_s[1];
      for (size_t i2 = 0; i2 < n2; i2++) {
        const __m512 w0 = _mm512_loadu_ps(wk);
        const __m512 w1 = NV > 1 ? _mm512_loadu_ps(wk + wv) : w0;
        if (XP && PF_STEPS) {
          /* NCHW: consecutive steps read other channel planes, a stride the hardware prefetchers
             do not follow past 2 KiB; fetch the tile's pixels PF_STEPS channels ahead. */
          _mm_prefetch((const char *)(xk + PF_STEPS * xs2), _MM_HINT_T0);
          if ((NW - 1) * XP >= 8) _mm_prefetch((const char *)(xk + PF_STEPS * xs2 + (NW - 1) * XP), _MM_HINT_T0);
        }
        UNROLL
        for (int p = 0; p < NW; p++) {
          const __m512 b = _mm512_set1_ps(xk[p * xp]);
          acc[p][0] = _mm512_fmadd_ps(w0, b, acc[p][0]);
          if (NV > 1) acc[p][1] = _mm512_fmadd_ps(w1, b, acc[p][1]);
        }
        xk += xs2;
        wk += ws2;
      }
    }
  }
  tile_store(acc, NW, NV, a, 1);
}

/* PERM: the channel multiplier is > 1 (a compile-time choice, so the loop body has no branch). */
INLINE void dwc_tile(const dlc_f32_direct_args *a, const int NW, const int NV, const int PERM) {
  __m512 acc[DWC_TW1][2];
  tile_init(acc, NW, NV, a);
  const __mmask16 m0 = lane_mask(a->n_in[0]), m1 = lane_mask(a->n_in[1]);
  const __m512i perm0 = PERM ? _mm512_loadu_si512((const void *)a->perm) : _mm512_setzero_si512();
  const __m512i perm1 = PERM && NV > 1 ? _mm512_loadu_si512((const void *)(a->perm + VL)) : perm0;
  const ptrdiff_t xo0 = a->x_v[0], xo1 = a->x_v[1], xp = a->x_pix, wv = a->w_v;
  const ptrdiff_t xs2 = a->x_s[2], ws2 = a->w_s[2];
  const size_t n2 = a->n[2];
  for (size_t i0 = 0; i0 < a->n[0]; i0++) {
    for (size_t i1 = 0; i1 < a->n[1]; i1++) {
      const float *xk = a->x + (ptrdiff_t)i0 * a->x_s[0] + (ptrdiff_t)i1 * a->x_s[1];
      const float *wk = a->w + (ptrdiff_t)i0 * a->w_s[0] + (ptrdiff_t)i1 * a->w_s[1];
      for (size_t i2 = 0; i2 < n2; i2++) {
        const __m512 w0 = _mm512_loadu_ps(wk);
        const __m512 w1 = NV > 1 ? _mm512_loadu_ps(wk + wv) : w0;
        UNROLL
        for (int p = 0; p < NW; p++) {
          __m512 x0 = _mm512_maskz_loadu_ps(m0, xk + p * xp + xo0);
          if (PERM) x0 = _mm512_permutexvar_ps(perm0, x0);
          acc[p][0] = _mm512_fmadd_ps(x0, w0, acc[p][0]);
          if (NV > 1) {
            __m512 x1 = _mm512_maskz_loadu_ps(m1, xk + p * xp + xo1);
            if (PERM) x1 = _mm512_permutexvar_ps(perm1, x1);
            acc[p][1] = _mm512_fmadd_ps(x1, w1, acc[p][1]);
          }
        }
        xk += xs2;
        wk += ws2;
      }
    }
  }
  tile_store(acc, NW, NV, a, 0);
}

/* The pixels [lo, hi) of an nw-pixel tile whose input column ixb + p*sw lies in [0, w_in); divides
   only at the borders of the row, as interior tiles are most of the work of a small kernel. */
INLINE void dwp_valid(ptrdiff_t ixb, ptrdiff_t sw, ptrdiff_t w_in, ptrdiff_t nw, ptrdiff_t *lo, ptrdiff_t *hi) {
  *lo = ixb >= 0 ? 0 : sw == 1 ? -ixb : (-ixb + sw - 1) / sw;
  const ptrdiff_t room = w_in - ixb;
  if (room <= 0)
    *hi = 0;
  else if ((nw - 1) * sw < room)
    *hi = nw;
  else
    *hi = sw == 1 ? room : (room + sw - 1) / sw;
}

/* Input pixels ixb + (v*16 + lane)*sw of row xr under mask m (the mask keeps padding at zero).
   SW: the stride when 1 or 2 (contiguous loads), 0 for any other (a gather). */
INLINE __m512 dwp_load(const float *xr, ptrdiff_t ixb, ptrdiff_t sw, ptrdiff_t w_in, int v, __mmask16 m, const int SW) {
  if (SW == 1) return _mm512_maskz_loadu_ps(m, xr + ixb + v * VL);
  if (SW == 2) {
    /* Even elements of 32 consecutive floats: two loads masked to the row, one permute. */
    const ptrdiff_t base = ixb + 2 * v * VL;
    const __m512 a = _mm512_maskz_loadu_ps(range_mask(-base, w_in - base), xr + base);
    const __m512 b = _mm512_maskz_loadu_ps(range_mask(-base - VL, w_in - base - VL), xr + base + VL);
    const __m512i even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    return _mm512_maskz_permutex2var_ps(m, a, even, b);
  }
  const __m512i idx = _mm512_add_epi32(_mm512_set1_epi32((int)(ixb + v * VL * sw)),
                                       _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                                          _mm512_set1_epi32((int)sw)));
  return _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, xr, 4);
}

/* The same from a row of binary16 (F16 layers, stride 1 or 2), widened in registers: at stride 2
   one load of 32 halves masked to the row, whose even halves vpmovdw keeps. */
INLINE __m512 dwp_load_f16(const uint16_t *xr, ptrdiff_t ixb, ptrdiff_t w_in, int v, __mmask16 m, const int SW) {
  if (SW == 1) return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, xr + ixb + v * VL));
  const ptrdiff_t base = ixb + 2 * v * VL;
  /* lanes [lo, hi) of 32, in 32-bit arithmetic: built from two 16-bit masks, the compiler spilled
     one as 16 bits and reloaded 32, a store-forwarding stall that tripled the layer's time */
  const ptrdiff_t lo = -base, hi = w_in - base;
  const uint32_t below_hi = hi <= 0 ? 0u : hi >= 32 ? ~0u : (1u << hi) - 1u;
  const uint32_t below_lo = lo <= 0 ? 0u : lo >= 32 ? ~0u : (1u << lo) - 1u;
  const __mmask32 r = _cvtu32_mask32(below_hi & ~below_lo);
  return _mm512_maskz_cvtph_ps(m, _mm512_cvtepi32_epi16(_mm512_maskz_loadu_epi16(r, xr + base)));
}

/* kx outermost: the lane masks depend on kx only. */
INLINE void dwp_tile(size_t nw, const dlc_f32_dwp_args *a, const int NPV, const int NR, const int SW, const int F16) {
  __m512 acc[8][DWP_VECS];
  const size_t nr = a->nr;
  UNROLL
  for (int r = 0; r < NR; r++)
    UNROLL
    for (int v = 0; v < NPV; v++) acc[r][v] = _mm512_set1_ps(a->bias);
  const ptrdiff_t sw = SW ? SW : a->sw, w_in = a->w_in;
  for (ptrdiff_t kx = 0; kx < a->kw; kx++) {
    const ptrdiff_t ixb = a->ix0 + kx * a->dw;
    ptrdiff_t lo, hi;
    dwp_valid(ixb, sw, w_in, (ptrdiff_t)nw, &lo, &hi);
    if (lo >= hi) continue;
    __mmask16 m[DWP_VECS];
    UNROLL
    for (int v = 0; v < NPV; v++) m[v] = range_mask(lo - v * VL, hi - v * VL);
    for (ptrdiff_t ky = 0; ky < a->kh; ky++) {
      const __m512 wv = _mm512_set1_ps(a->w[ky * a->kw + kx]);
      UNROLL
      for (int r = 0; r < NR; r++) {
        if ((size_t)r >= nr) break;
        const ptrdiff_t iy = a->iy0 + r * a->sh + ky * a->dh;
        if (iy < 0 || iy >= a->h_in) continue;
        UNROLL
        for (int v = 0; v < NPV; v++) {
          const __m512 xv = F16 ? dwp_load_f16(a->xh + iy * w_in, ixb, w_in, v, m[v], SW)
                                : dwp_load(a->x + iy * w_in, ixb, sw, w_in, v, m[v], SW);
          acc[r][v] = _mm512_fmadd_ps(wv, xv, acc[r][v]);
        }
      }
    }
  }
  const __m512 lo = _mm512_set1_ps(a->out_min), hi = _mm512_set1_ps(a->out_max);
  UNROLL
  for (int r = 0; r < NR; r++) {
    if ((size_t)r >= nr) break;
    UNROLL
    for (int v = 0; v < NPV; v++) {
      const __m512 c = _mm512_min_ps(hi, _mm512_max_ps(lo, acc[r][v]));
      if (F16)
        store_lanes_f16(a->yh + r * a->y_row + v * VL, lane_mask((ptrdiff_t)nw - v * VL), c);
      else
        store_lanes(a->y + r * a->y_row + v * VL, lane_mask((ptrdiff_t)nw - v * VL), c);
    }
  }
}

/* One instantiation per pixel count. */
#define C1(F, N, ...) \
  case N: F(__VA_ARGS__, N); break;
#define CASES_8(F, ...) \
  C1(F, 1, __VA_ARGS__) C1(F, 2, __VA_ARGS__) C1(F, 3, __VA_ARGS__) C1(F, 4, __VA_ARGS__) \
  C1(F, 5, __VA_ARGS__) C1(F, 6, __VA_ARGS__) C1(F, 7, __VA_ARGS__) C1(F, 8, __VA_ARGS__)
#define CASES_12(F, ...) CASES_8(F, __VA_ARGS__) \
  C1(F, 9, __VA_ARGS__) C1(F, 10, __VA_ARGS__) C1(F, 11, __VA_ARGS__) C1(F, 12, __VA_ARGS__)
#define CASES_14(F, ...) CASES_12(F, __VA_ARGS__) C1(F, 13, __VA_ARGS__) C1(F, 14, __VA_ARGS__)
#define CASES_24(F, ...) CASES_14(F, __VA_ARGS__) \
  C1(F, 15, __VA_ARGS__) C1(F, 16, __VA_ARGS__) C1(F, 17, __VA_ARGS__) C1(F, 18, __VA_ARGS__) \
  C1(F, 19, __VA_ARGS__) C1(F, 20, __VA_ARGS__) C1(F, 21, __VA_ARGS__) C1(F, 22, __VA_ARGS__) \
  C1(F, 23, __VA_ARGS__) C1(F, 24, __VA_ARGS__)

/* Argument order for the case macros: (a, NW) then NV. */
#define CONV1(a, NW) conv_tile(a, NW, 1, 0)
#define CONV2(a, NW) conv_tile(a, NW, 2, 0)
#define CONV1X1(a, NW) conv_tile(a, NW, 1, 1)
#define CONV2X1(a, NW) conv_tile(a, NW, 2, 1)
#define CONV1X2(a, NW) conv_tile(a, NW, 1, 2)
#define CONV2X2(a, NW) conv_tile(a, NW, 2, 2)
#define DWC1(a, NW) dwc_tile(a, NW, 1, 0)
#define DWC2(a, NW) dwc_tile(a, NW, 2, 0)
#define DWC1P(a, NW) dwc_tile(a, NW, 1, 1)
#define DWC2P(a, NW) dwc_tile(a, NW, 2, 1)

static void conv_16c_tile(size_t nw, const dlc_f32_direct_args *a) {
  if (a->x_pix == 1) {
    switch (nw) { CASES_24(CONV1X1, a) default: break; }
  } else if (a->x_pix == 2) {
    switch (nw) { CASES_24(CONV1X2, a) default: break; }
  } else {
    switch (nw) { CASES_24(CONV1, a) default: break; }
  }
}
static void conv_32c_tile(size_t nw, const dlc_f32_direct_args *a) {
  if (a->x_pix == 1) {
    switch (nw) { CASES_14(CONV2X1, a) default: break; }
  } else if (a->x_pix == 2) {
    switch (nw) { CASES_14(CONV2X2, a) default: break; }
  } else {
    switch (nw) { CASES_14(CONV2, a) default: break; }
  }
}
static void dwc_16c_tile(size_t nw, const dlc_f32_direct_args *a) {
  if (a->perm) {
    switch (nw) { CASES_24(DWC1P, a) default: break; }
  } else {
    switch (nw) { CASES_24(DWC1, a) default: break; }
  }
}
static void dwc_32c_tile(size_t nw, const dlc_f32_direct_args *a) {
  if (a->perm) {
    switch (nw) { CASES_12(DWC2P, a) default: break; }
  } else {
    switch (nw) { CASES_12(DWC2, a) default: break; }
  }
}

/* Whole runs of pixels, in balanced register tiles. */
static void conv_16c(size_t nw, const dlc_f32_direct_args *a) { dlc_f32_direct_split(nw, CONV_TW1, a, conv_16c_tile); }
static void conv_32c(size_t nw, const dlc_f32_direct_args *a) { dlc_f32_direct_split(nw, CONV_TW2, a, conv_32c_tile); }
static void dwc_16c(size_t nw, const dlc_f32_direct_args *a) { dlc_f32_direct_split(nw, DWC_TW1, a, dwc_16c_tile); }
static void dwc_32c(size_t nw, const dlc_f32_direct_args *a) { dlc_f32_direct_split(nw, DWC_TW2, a, dwc_32c_tile); }

#define DWP_CASES(SW, F16)                                 \
  switch ((nw + VL - 1) / VL) {                            \
    case 1: dwp_tile(nw, a, 1, 8, SW, F16); break;         \
    case 2: dwp_tile(nw, a, 2, 4, SW, F16); break;         \
    case 3: dwp_tile(nw, a, 3, 2, SW, F16); break;         \
    case 4: dwp_tile(nw, a, 4, 2, SW, F16); break;         \
    case 5: dwp_tile(nw, a, 5, 1, SW, F16); break;         \
    case 6: dwp_tile(nw, a, 6, 1, SW, F16); break;         \
    case 7: dwp_tile(nw, a, 7, 1, SW, F16); break;         \
    case 8: dwp_tile(nw, a, 8, 1, SW, F16); break;         \
    default: break;                                        \
  }

static void dwp(size_t nw, const dlc_f32_dwp_args *a) {
  if (a->sw == 1) {
    DWP_CASES(1, 0)
  } else if (a->sw == 2) {
    DWP_CASES(2, 0)
  } else {
    DWP_CASES(0, 0)
  }
}

/* F16 in and out, stride_w 1 or 2 (direct_ukernel.h), rows per tile DWP_ROWS_F16: each input
   vector is widened once per tap and tile, so taller tiles widen less per output row (MobileNetV2's
   32x112x112 layer, 7 vectors a row: 1 row a tile 1.06x fp32's time). */
#define DWP_ROWS_F16 {8, 4, 4, 4, 3, 3, 3, 3}
#define DWP_CASES_F16(SW)                                  \
  switch ((nw + VL - 1) / VL) {                            \
    case 1: dwp_tile(nw, a, 1, 8, SW, 1); break;           \
    case 2: dwp_tile(nw, a, 2, 4, SW, 1); break;           \
    case 3: dwp_tile(nw, a, 3, 4, SW, 1); break;           \
    case 4: dwp_tile(nw, a, 4, 4, SW, 1); break;           \
    case 5: dwp_tile(nw, a, 5, 3, SW, 1); break;           \
    case 6: dwp_tile(nw, a, 6, 3, SW, 1); break;           \
    case 7: dwp_tile(nw, a, 7, 3, SW, 1); break;           \
    case 8: dwp_tile(nw, a, 8, 3, SW, 1); break;           \
    default: break;                                        \
  }

static void dwp_f16(size_t nw, const dlc_f32_dwp_args *a) {
  if (a->sw == 1) {
    DWP_CASES_F16(1)
  } else {
    DWP_CASES_F16(2)
  }
}

/* NCHW rows to channel-last: 16 channels x 16 pixels at a time, 16 row loads masked at the row's
   end (binary16 widened on the way), the in-register transpose, a masked store of the block's
   channels per pixel. The avx2 transposes worked in 8 x 8 blocks, a short row of halves through a
   zeroed copy: 26% of an F16 960x7x7>160 layer's time. */
INLINE void to_channel_last_body(const void *src, size_t plane, size_t w, size_t ci, float *dst, const int F16) {
  for (size_t c0 = 0; c0 < ci; c0 += VL) {
    const size_t nc = ci - c0 < VL ? ci - c0 : VL;
    const __mmask16 cm = lane_mask((ptrdiff_t)nc);
    for (size_t x0 = 0; x0 < w; x0 += VL) {
      const size_t nx = w - x0 < VL ? w - x0 : VL;
      const __mmask16 m = lane_mask((ptrdiff_t)nx);
      __m512 r[16];
      UNROLL
      for (size_t i = 0; i < 16; i++) {
        if (i >= nc)
          r[i] = _mm512_setzero_ps();
        else if (F16)
          r[i] = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, (const uint16_t *)src + (c0 + i) * plane + x0));
        else
          r[i] = _mm512_maskz_loadu_ps(m, (const float *)src + (c0 + i) * plane + x0);
      }
      transpose16(r);
      for (size_t j = 0; j < nx; j++) store_lanes(dst + (x0 + j) * ci + c0, cm, r[j]);
    }
  }
}

static void to_channel_last(const float *src, size_t plane, size_t w, size_t ci, float *dst) {
  to_channel_last_body(src, plane, w, ci, dst, 0);
}

static void to_channel_last_f16(const uint16_t *src, size_t plane, size_t w, size_t ci, float *dst) {
  to_channel_last_body(src, plane, w, ci, dst, 1);
}

const dlc_f32_direct_family dlc_f32_direct__avx512 = {
    .name = "f32_direct_14x32__avx512",
    .dw_name = "f32_dwconv_12x32c_8x16p__avx512",
    .vl = VL,
    .conv_tw = {CONV_TW1, CONV_TW2},
    .conv = {conv_16c, conv_32c},
    .dwc_tw = {DWC_TW1, DWC_TW2},
    .dwc = {dwc_16c, dwc_32c},
    .dwp_vecs = DWP_VECS,
    .dwp_rows = {8, 4, 2, 2, 1, 1, 1, 1},
    .dwp = dwp,
    .dwp_f16 = dwp_f16,
    .dwp_rows_f16 = DWP_ROWS_F16,
    .f16_out = 1,
    .to_channel_last = to_channel_last,
    .to_channel_last_f16 = to_channel_last_f16,
};
