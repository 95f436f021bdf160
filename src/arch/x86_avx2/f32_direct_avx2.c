/* f32 direct micro-kernels, AVX2 + FMA (direct_ukernel.h says what each computes; the generic
 * file is the readable specification).
 *
 * 16 ymm registers: conv tiles are 6 pixels x 16 channels (12 accumulators, 2 weight vectors,
 * 1 broadcast) or 12 pixels x 8 channels; every (ky, kx, ic) step is nv weight loads + nw
 * broadcasts for nv*nw FMAs. One always-inline body per compile-time tile shape keeps the
 * accumulators in registers; edges use _mm256_maskload_ps and piecewise stores (avx2_store.h); NCHW output goes
 * through 8x8 in-register transposes. */
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "../../ukernel/direct_ukernel.h"
#include "avx2_store.h"
#include "avx2_transpose.h"
#include "f32_direct_avx2.h"

#define VL 8
#define CONV_TW1 12
#define CONV_TW2 6
#define DWC_TW1 12
#define DWC_TW2 6
#define DWP_VECS 8

#define INLINE static inline __attribute__((always_inline))
/* Fully unroll the register-tile loops before scalar replacement, else GCC -O3 may keep the
   accumulator array in memory and store it after every FMA. */
#define UNROLL _Pragma("GCC unroll 32")

/* Lanes [0, n) set, as the sign bits maskload/maskstore read. */
INLINE __m256i lane_mask(ptrdiff_t n) {
  const int k = n <= 0 ? 0 : n >= VL ? VL : (int)n;
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(k), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* Lanes [lo, hi). */
INLINE __m256i range_mask(ptrdiff_t lo, ptrdiff_t hi) {
  return _mm256_andnot_si256(lane_mask(lo), lane_mask(hi));
}

/* No vmaskmovps store (avx2_store.h): most stores are whole vectors, the rest 4+2+1 pieces. */
INLINE void store_lanes(float *p, ptrdiff_t n, __m256 v) { dlc_avx2_store_first(p, n, v); }

/* Start of a tile: acc_in, or the bias on the nc valid lanes. */
INLINE void tile_init(__m256 acc[][2], const int NW, const int NV, const dlc_f32_direct_args *a) {
  if (a->acc_in) {
    UNROLL
    for (int p = 0; p < NW; p++)
      UNROLL
      for (int v = 0; v < NV; v++) acc[p][v] = _mm256_loadu_ps(a->acc_in + p * a->acc_ld + v * VL);
  } else {
    UNROLL
    for (int v = 0; v < NV; v++) {
      const __m256 b = _mm256_maskload_ps(a->bias + v * VL, lane_mask((ptrdiff_t)a->nc - v * VL));
      UNROLL
      for (int p = 0; p < NW; p++) acc[p][v] = b;
    }
  }
}

/* vcvtps2ph with an immediate mode rounds to nearest even whatever MXCSR says, overflows to inf
   and keeps NaN a NaN: dlc_f32_to_f16 bit for bit apart from NaN payloads. */
INLINE __m128i to_f16(__m256 v) { return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT); }

/* The first n lanes of v into y at element offset off, or (F16) into yh rounded to binary16. */
INLINE void put_first(const dlc_f32_direct_args *a, ptrdiff_t off, ptrdiff_t n, __m256 v, const int F16) {
  if (F16)
    dlc_avx2_store_first_f16(a->yh + off, n, to_f16(v));
  else
    store_lanes(a->y + off, n, v);
}

/* The clamped tile, from buf (pixel p, vector v at buf + (p * 2 + v) * VL, 32-byte aligned), into y
   or (F16, a compile-time choice) into yh: NHWC rows, NCHW transposed 8 pixels at a time, other
   strides one element at a time. Out of line and with run-time sizes: inlined into each register-
   tile instance (with the binary16 twin) these stores made this file take 37 s to compile (Zen 5);
   the detour through L1 costs a tile nw * nv stores and loads against its cin_g * taps * nw * nv
   FMAs. */
INLINE void tile_put_body(const float *buf, int nw, int nv, const dlc_f32_direct_args *a, const int F16) {
  if (a->y_c == 1) {
    for (int v = 0; v < nv; v++) {
      const ptrdiff_t n = (ptrdiff_t)a->nc - v * VL;
      for (int p = 0; p < nw; p++) put_first(a, p * a->y_pix + v * VL, n, _mm256_load_ps(buf + (p * 2 + v) * VL), F16);
    }
    return;
  }
  if (a->y_pix == 1) {
    for (int v = 0; v < nv; v++) {
      const int nch = (int)a->nc - v * VL < VL ? (int)a->nc - v * VL : VL;
      for (int p0 = 0; p0 < nw; p0 += 8) {
        __m256 r[8];
        UNROLL
        for (int i = 0; i < 8; i++) r[i] = p0 + i < nw ? _mm256_load_ps(buf + ((p0 + i) * 2 + v) * VL) : _mm256_setzero_ps();
        dlc_avx2_transpose8(r);
        for (int c = 0; c < nch; c++) put_first(a, (v * VL + c) * a->y_c + p0, nw - p0, r[c], F16);
      }
    }
    return;
  }
  for (int v = 0; v < nv; v++) {
    uint16_t h[VL];
    for (int p = 0; p < nw; p++) {
      const float *t = buf + (p * 2 + v) * VL;
      if (F16) _mm_storeu_si128((__m128i *)h, to_f16(_mm256_load_ps(t)));
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
INLINE void tile_store(__m256 acc[][2], const int NW, const int NV, const dlc_f32_direct_args *a, const int F16_OUT) {
  if (a->acc_out) {
    UNROLL
    for (int p = 0; p < NW; p++)
      UNROLL
      for (int v = 0; v < NV; v++) _mm256_storeu_ps(a->acc_out + p * a->acc_ld + v * VL, acc[p][v]);
    return;
  }
  /* The bound is the first operand: max/min return the second when either is NaN. */
  const __m256 lo = _mm256_set1_ps(a->out_min), hi = _mm256_set1_ps(a->out_max);
  UNROLL
  for (int p = 0; p < NW; p++)
    UNROLL
    for (int v = 0; v < NV; v++) acc[p][v] = _mm256_min_ps(hi, _mm256_max_ps(lo, acc[p][v]));
  if (a->y_c == 1 && !(F16_OUT && a->yh)) {
    UNROLL
    for (int v = 0; v < NV; v++) {
      const ptrdiff_t n = (ptrdiff_t)a->nc - v * VL;
      UNROLL
      for (int p = 0; p < NW; p++) store_lanes(a->y + p * a->y_pix + v * VL, n, acc[p][v]);
    }
    return;
  }
  __attribute__((aligned(32))) float buf[CONV_TW1 * 2 * VL];
  UNROLL
  for (int p = 0; p < NW; p++)
    UNROLL
    for (int v = 0; v < NV; v++) _mm256_store_ps(buf + (p * 2 + v) * VL, acc[p][v]);
  if (F16_OUT && a->yh)
    tile_put_f16(buf, NW, NV, a);
  else
    tile_put_f32(buf, NW, NV, a);
}

/* XP: the pixel stride x_pix when it is 1 or 2 (NCHW, stride 1 or 2), a compile-time constant so
   the broadcasts use immediate offsets; 0: read from the arguments. */
INLINE void conv_tile(const dlc_f32_direct_args *a, const int NW, const int NV, const int XP) {
  __m256 acc[CONV_TW1][2];
  tile_init(acc, NW, NV, a);
  const ptrdiff_t xp = XP ? XP : a->x_pix, wv = a->w_v, xs2 = a->x_s[2], ws2 = a->w_s[2];
  const size_t n2 = a->n[2];
  for (size_t i0 = 0; i0 < a->n[0]; i0++) {
    for (size_t i1 = 0; i1 < a->n[1]; i1++) {
      const float *xk = a->x + (ptrdiff_t)i0 * a->x_s[0] + (ptrdiff_t)i1 * a->x_s[1];
      const float *wk = a->w + (ptrdiff_t)i0 * a->w_s[0] + (ptrdiff_t)i1 * a->w_s[1];
      for (size_t i2 = 0; i2 < n2; i2++) {
        const __m256 w0 = _mm256_loadu_ps(wk);
        const __m256 w1 = NV > 1 ? _mm256_loadu_ps(wk + wv) : w0;
        UNROLL
        for (int p = 0; p < NW; p++) {
          const __m256 b = _mm256_broadcast_ss(xk + p * xp);
          acc[p][0] = _mm256_fmadd_ps(w0, b, acc[p][0]);
          if (NV > 1) acc[p][1] = _mm256_fmadd_ps(w1, b, acc[p][1]);
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
  __m256 acc[DWC_TW1][2];
  tile_init(acc, NW, NV, a);
  const __m256i m0 = lane_mask(a->n_in[0]), m1 = lane_mask(a->n_in[1]);
  const __m256i perm0 = PERM ? _mm256_loadu_si256((const __m256i *)a->perm) : _mm256_setzero_si256();
  const __m256i perm1 = PERM && NV > 1 ? _mm256_loadu_si256((const __m256i *)(a->perm + VL)) : perm0;
  const ptrdiff_t xo0 = a->x_v[0], xo1 = a->x_v[1], xp = a->x_pix, wv = a->w_v;
  const ptrdiff_t xs2 = a->x_s[2], ws2 = a->w_s[2];
  const size_t n2 = a->n[2];
  for (size_t i0 = 0; i0 < a->n[0]; i0++) {
    for (size_t i1 = 0; i1 < a->n[1]; i1++) {
      const float *xk = a->x + (ptrdiff_t)i0 * a->x_s[0] + (ptrdiff_t)i1 * a->x_s[1];
      const float *wk = a->w + (ptrdiff_t)i0 * a->w_s[0] + (ptrdiff_t)i1 * a->w_s[1];
      for (size_t i2 = 0; i2 < n2; i2++) {
        const __m256 w0 = _mm256_loadu_ps(wk);
        const __m256 w1 = NV > 1 ? _mm256_loadu_ps(wk + wv) : w0;
        UNROLL
        for (int p = 0; p < NW; p++) {
          __m256 x0 = _mm256_maskload_ps(xk + p * xp + xo0, m0);
          if (PERM) x0 = _mm256_permutevar8x32_ps(x0, perm0);
          acc[p][0] = _mm256_fmadd_ps(x0, w0, acc[p][0]);
          if (NV > 1) {
            __m256 x1 = _mm256_maskload_ps(xk + p * xp + xo1, m1);
            if (PERM) x1 = _mm256_permutevar8x32_ps(x1, perm1);
            acc[p][1] = _mm256_fmadd_ps(x1, w1, acc[p][1]);
          }
        }
        xk += xs2;
        wk += ws2;
      }
    }
  }
  tile_store(acc, NW, NV, a, 0);
}

/* dwp, the general path (any kernel, stride, dilation): kx outermost, so the lane masks of a tap
   column are computed once per kx and the ky and row loops only load. Stride 2 loads 16
   consecutive floats and keeps the even ones in the order e0 e1 e4 e5 e2 e3 e6 e7 (one shuffle,
   no lane-crossing permute per load); the accumulators stay in that order and dwp_unperm puts
   them right once, at the store. Other strides gather. */
#define DWP_GEN_NR_MAX 8

INLINE __m256 dwp_unperm(__m256 v, const int SW) {
  if (SW != 2) return v;
  return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v), 0xD8));
}

/* Lanes of the row at columns [e, e + 8) that lie in [0, w_in). */
INLINE __m256i row_mask(ptrdiff_t e, ptrdiff_t w_in) { return range_mask(-e, w_in - e); }

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

INLINE void dwp_tile(size_t nw, const dlc_f32_dwp_args *a, const int NPV, const int NR, const int SW) {
  __m256 acc[DWP_GEN_NR_MAX][DWP_VECS];
  const size_t nr = a->nr;
  UNROLL
  for (int r = 0; r < NR; r++)
    UNROLL
    for (int v = 0; v < NPV; v++) acc[r][v] = _mm256_set1_ps(a->bias);
  const ptrdiff_t sw = SW ? SW : a->sw, w_in = a->w_in;
  for (ptrdiff_t kx = 0; kx < a->kw; kx++) {
    const ptrdiff_t ixb = a->ix0 + kx * a->dw;
    ptrdiff_t lo, hi;
    dwp_valid(ixb, sw, w_in, (ptrdiff_t)nw, &lo, &hi);
    if (lo >= hi) continue;
    /* Stride 2: masks of the two loads per vector (row bounds; lanes past nw are never stored). */
    __m256i m[2 * DWP_VECS];
    UNROLL
    for (int v = 0; v < NPV; v++) {
      if (SW == 2) {
        m[2 * v] = row_mask(ixb + 2 * v * VL, w_in);
        m[2 * v + 1] = row_mask(ixb + 2 * v * VL + VL, w_in);
      } else {
        m[v] = range_mask(lo - v * VL, hi - v * VL);
      }
    }
    const __m256i idx = _mm256_add_epi32(_mm256_set1_epi32((int)ixb),
                                         _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32((int)sw)));
    for (ptrdiff_t ky = 0; ky < a->kh; ky++) {
      const __m256 wv = _mm256_set1_ps(a->w[ky * a->kw + kx]);
      UNROLL
      for (int r = 0; r < NR; r++) {
        if ((size_t)r >= nr) break;
        const ptrdiff_t iy = a->iy0 + r * a->sh + ky * a->dh;
        if (iy < 0 || iy >= a->h_in) continue;
        const float *xr = a->x + iy * w_in;
        UNROLL
        for (int v = 0; v < NPV; v++) {
          __m256 xv;
          if (SW == 1) {
            xv = _mm256_maskload_ps(xr + ixb + v * VL, m[v]);
          } else if (SW == 2) {
            const float *p = xr + ixb + 2 * v * VL;
            xv = _mm256_shuffle_ps(_mm256_maskload_ps(p, m[2 * v]), _mm256_maskload_ps(p + VL, m[2 * v + 1]), 0x88);
          } else {
            xv = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), xr + v * VL * sw, idx, _mm256_castsi256_ps(m[v]), 4);
          }
          acc[r][v] = _mm256_fmadd_ps(wv, xv, acc[r][v]);
        }
      }
    }
  }
  const __m256 lo = _mm256_set1_ps(a->out_min), hi = _mm256_set1_ps(a->out_max);
  UNROLL
  for (int r = 0; r < NR; r++) {
    if ((size_t)r >= nr) break;
    UNROLL
    for (int v = 0; v < NPV; v++)
      store_lanes(a->y + r * a->y_row + v * VL, (ptrdiff_t)nw - v * VL,
                  _mm256_min_ps(hi, _mm256_max_ps(lo, dwp_unperm(acc[r][v], SW))));
  }
}

/* dwp, the fast path: kernel height KH and stride S (both directions) known at compile time, no
   row dilation; a tile of one vector (8 pixels) x DWP_NR rows. Input row j of the tile is loaded
   once per kx and feeds every output row r with ky = j - r*S in range (3x3 stride 1: 10 loads for
   24 FMAs, where one load per FMA was the bound). Per kx one branch picks plain loads when the
   tile's loads lie inside the row (all but the first and last tiles of a row), else masked loads
   with masks made once for the kx; row bounds cost one branch per tile unless the tile is clipped
   at the top or bottom. Rows past nr are computed (on clipped inputs, like any row) and not
   stored. 8 accumulators + KH weights + the loads and masks fit 16 ymm with no spills up to
   KH 5 stride 2; 12 accumulators (4 rows x 3 vectors, 6 x 2) spilled and ran no faster on Zen 2. */
#define DWP_NR 8
#define DWP_KH_MAX 5

/* Input rows j of the tile (row iy0 + j at xb + j*w_in, which points at column ixb); ROWCHK: only
   j in [jlo, jhi) are inside the input. */
INLINE void dwp_rows_pass(__m256 acc[DWP_NR], const float *xb, ptrdiff_t w_in, ptrdiff_t jlo, ptrdiff_t jhi,
                          const __m256 *wk, const __m256i *m, const int KH, const int S, const int MASKED, const int ROWCHK) {
  const float *p = xb;
  UNROLL
  for (int j = 0; j < (DWP_NR - 1) * S + KH; j++, p += w_in) {
    if (ROWCHK && (j < jlo || j >= jhi)) continue;
    __m256 xv;
    if (S == 1) {
      xv = MASKED ? _mm256_maskload_ps(p, m[0]) : _mm256_loadu_ps(p);
    } else {
      const __m256 e = MASKED ? _mm256_maskload_ps(p, m[0]) : _mm256_loadu_ps(p);
      const __m256 o = MASKED ? _mm256_maskload_ps(p + VL, m[1]) : _mm256_loadu_ps(p + VL);
      xv = _mm256_shuffle_ps(e, o, 0x88);
    }
    UNROLL
    for (int r = 0; r < DWP_NR; r++) {
      const int ky = j - r * S;
      if (ky >= 0 && ky < KH) acc[r] = _mm256_fmadd_ps(wk[ky], xv, acc[r]);
    }
  }
}

/* nw <= 8 pixels from input column ix0, rows from iy0; nr <= DWP_NR of them stored at y. */
INLINE void dwp_vec(const dlc_f32_dwp_args *a, ptrdiff_t iy0, ptrdiff_t ix0, float *y, ptrdiff_t nw, size_t nr,
                    const int KH, const int S) {
  __m256 acc[DWP_NR];
  UNROLL
  for (int r = 0; r < DWP_NR; r++) acc[r] = _mm256_set1_ps(a->bias);
  const ptrdiff_t w_in = a->w_in, kw = a->kw, span = VL * S, nj = (DWP_NR - 1) * S + KH;
  const ptrdiff_t jlo = iy0 < 0 ? -iy0 : 0, jhi = a->h_in - iy0 < nj ? a->h_in - iy0 : nj;
  const int rows_in = jlo == 0 && jhi == nj;
  const float *xr = a->x + iy0 * w_in;
  for (ptrdiff_t kx = 0; kx < kw; kx++) {
    const ptrdiff_t ixb = ix0 + kx * a->dw;
    __m256 wk[DWP_KH_MAX];
    UNROLL
    for (int ky = 0; ky < KH; ky++) wk[ky] = _mm256_set1_ps(a->w[ky * kw + kx]);
    if (ixb >= 0 && ixb + span <= w_in) {
      if (rows_in)
        dwp_rows_pass(acc, xr + ixb, w_in, jlo, jhi, wk, NULL, KH, S, 0, 0);
      else
        dwp_rows_pass(acc, xr + ixb, w_in, jlo, jhi, wk, NULL, KH, S, 0, 1);
    } else if (ixb < w_in && ixb + span > 0) {
      __m256i m[2];
      UNROLL
      for (int i = 0; i < S; i++) m[i] = row_mask(ixb + i * VL, w_in);
      dwp_rows_pass(acc, xr + ixb, w_in, jlo, jhi, wk, m, KH, S, 1, 1);
    }
  }
  const __m256 lo = _mm256_set1_ps(a->out_min), hi = _mm256_set1_ps(a->out_max);
  UNROLL
  for (int r = 0; r < DWP_NR; r++) {
    if ((size_t)r >= nr) break;
    store_lanes(y + r * a->y_row, nw, _mm256_min_ps(hi, _mm256_max_ps(lo, dwp_unperm(acc[r], S))));
  }
}

INLINE void dwp_fast(size_t nw, const dlc_f32_dwp_args *a, const int KH, const int S) {
  for (size_t r0 = 0; r0 < a->nr; r0 += DWP_NR) {
    const size_t nr = a->nr - r0 < DWP_NR ? a->nr - r0 : DWP_NR;
    const ptrdiff_t iy0 = a->iy0 + (ptrdiff_t)r0 * S;
    float *y = a->y + (ptrdiff_t)r0 * a->y_row;
    for (size_t p0 = 0; p0 < nw; p0 += VL)
      dwp_vec(a, iy0, a->ix0 + (ptrdiff_t)p0 * S, y + p0, (ptrdiff_t)(nw - p0 < VL ? nw - p0 : VL), nr, KH, S);
  }
}

/* One instantiation per pixel count. */
#define C1(F, N, ...) \
  case N: F(__VA_ARGS__, N); break;
#define CASES_6(F, ...) \
  C1(F, 1, __VA_ARGS__) C1(F, 2, __VA_ARGS__) C1(F, 3, __VA_ARGS__) C1(F, 4, __VA_ARGS__) \
  C1(F, 5, __VA_ARGS__) C1(F, 6, __VA_ARGS__)
#define CASES_12(F, ...) CASES_6(F, __VA_ARGS__) \
  C1(F, 7, __VA_ARGS__) C1(F, 8, __VA_ARGS__) C1(F, 9, __VA_ARGS__) C1(F, 10, __VA_ARGS__) \
  C1(F, 11, __VA_ARGS__) C1(F, 12, __VA_ARGS__)

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

static void conv_8c_tile(size_t nw, const dlc_f32_direct_args *a) {
  if (a->x_pix == 1) {
    switch (nw) { CASES_12(CONV1X1, a) default: break; }
  } else if (a->x_pix == 2) {
    switch (nw) { CASES_12(CONV1X2, a) default: break; }
  } else {
    switch (nw) { CASES_12(CONV1, a) default: break; }
  }
}
static void conv_16c_tile(size_t nw, const dlc_f32_direct_args *a) {
  if (a->x_pix == 1) {
    switch (nw) { CASES_6(CONV2X1, a) default: break; }
  } else if (a->x_pix == 2) {
    switch (nw) { CASES_6(CONV2X2, a) default: break; }
  } else {
    switch (nw) { CASES_6(CONV2, a) default: break; }
  }
}
static void dwc_8c_tile(size_t nw, const dlc_f32_direct_args *a) {
  if (a->perm) {
    switch (nw) { CASES_12(DWC1P, a) default: break; }
  } else {
    switch (nw) { CASES_12(DWC1, a) default: break; }
  }
}
static void dwc_16c_tile(size_t nw, const dlc_f32_direct_args *a) {
  if (a->perm) {
    switch (nw) { CASES_6(DWC2P, a) default: break; }
  } else {
    switch (nw) { CASES_6(DWC2, a) default: break; }
  }
}

/* Whole runs of pixels, in balanced register tiles. */
static void conv_8c(size_t nw, const dlc_f32_direct_args *a) { dlc_f32_direct_split(nw, CONV_TW1, a, conv_8c_tile); }
static void conv_16c(size_t nw, const dlc_f32_direct_args *a) { dlc_f32_direct_split(nw, CONV_TW2, a, conv_16c_tile); }
static void dwc_8c(size_t nw, const dlc_f32_direct_args *a) { dlc_f32_direct_split(nw, DWC_TW1, a, dwc_8c_tile); }
static void dwc_16c(size_t nw, const dlc_f32_direct_args *a) { dlc_f32_direct_split(nw, DWC_TW2, a, dwc_16c_tile); }

/* The family promises the driver DWP_NR rows per call (the fast path's tile); the general path's
   row block shrinks with the vectors of the row (accumulators in 16 ymm), so it steps through them. */
#define DWP_GEN(SW, NPV, NR)                                   \
  for (size_t r0 = 0; r0 < a->nr; r0 += NR) {                  \
    b.nr = a->nr - r0 < NR ? a->nr - r0 : NR;                  \
    b.iy0 = a->iy0 + (ptrdiff_t)r0 * a->sh;                    \
    b.y = a->y + (ptrdiff_t)r0 * a->y_row;                     \
    dwp_tile(nw, &b, NPV, NR, SW);                             \
  }
#define DWP_CASES(SW)                                 \
  switch ((nw + VL - 1) / VL) {                       \
    case 1: DWP_GEN(SW, 1, 8) break;                  \
    case 2: DWP_GEN(SW, 2, 4) break;                  \
    case 3: DWP_GEN(SW, 3, 2) break;                  \
    case 4: DWP_GEN(SW, 4, 2) break;                  \
    case 5: DWP_GEN(SW, 5, 1) break;                  \
    case 6: DWP_GEN(SW, 6, 1) break;                  \
    case 7: DWP_GEN(SW, 7, 1) break;                  \
    case 8: DWP_GEN(SW, 8, 1) break;                  \
    default: break;                                   \
  }

static void dwp_k3s1(size_t nw, const dlc_f32_dwp_args *a) { dwp_fast(nw, a, 3, 1); }
static void dwp_k3s2(size_t nw, const dlc_f32_dwp_args *a) { dwp_fast(nw, a, 3, 2); }
static void dwp_k5s1(size_t nw, const dlc_f32_dwp_args *a) { dwp_fast(nw, a, 5, 1); }
static void dwp_k5s2(size_t nw, const dlc_f32_dwp_args *a) { dwp_fast(nw, a, 5, 2); }

static void dwp(size_t nw, const dlc_f32_dwp_args *a) {
  if (a->dh == 1 && a->sh == a->sw && (a->sw == 1 || a->sw == 2) && (a->kh == 3 || a->kh == 5)) {
    if (a->kh == 3)
      (a->sw == 1 ? dwp_k3s1 : dwp_k3s2)(nw, a);
    else
      (a->sw == 1 ? dwp_k5s1 : dwp_k5s2)(nw, a);
    return;
  }
  dlc_f32_dwp_args b = *a;
  if (a->sw == 1) {
    DWP_CASES(1)
  } else if (a->sw == 2) {
    DWP_CASES(2)
  } else {
    DWP_CASES(0)
  }
}

/* 8 channels x 8 pixels at a time: 8 row loads (masked at the right edge), an in-register
   transpose, 8 pixel stores of the block's channels (in pieces when fewer than 8). */
static void to_channel_last(const float *src, size_t plane, size_t w, size_t ci, float *dst) {
  for (size_t c0 = 0; c0 < ci; c0 += VL) {
    const size_t nc = ci - c0 < VL ? ci - c0 : VL;
    for (size_t x0 = 0; x0 < w; x0 += VL) {
      const size_t nx = w - x0 < VL ? w - x0 : VL;
      const __m256i m = lane_mask((ptrdiff_t)nx);
      __m256 r[8];
      UNROLL
      for (size_t i = 0; i < 8; i++)
        r[i] = i < nc ? (nx == VL ? _mm256_loadu_ps(src + (c0 + i) * plane + x0)
                                  : _mm256_maskload_ps(src + (c0 + i) * plane + x0, m))
                      : _mm256_setzero_ps();
      dlc_avx2_transpose8(r);
      for (size_t j = 0; j < nx; j++) dlc_avx2_store_first(dst + (x0 + j) * ci + c0, (ptrdiff_t)nc, r[j]);
    }
  }
}

/* The same from halves: 8 rows of 8 widened by vcvtph2ps (a short row through a zeroed copy,
   as there is no 16-bit masked load), transposed, stored as floats. */
void dlc_f16_to_channel_last__avx2(const uint16_t *src, size_t plane, size_t w, size_t ci, float *dst) {
  for (size_t c0 = 0; c0 < ci; c0 += VL) {
    const size_t nc = ci - c0 < VL ? ci - c0 : VL;
    for (size_t x0 = 0; x0 < w; x0 += VL) {
      const size_t nx = w - x0 < VL ? w - x0 : VL;
      __m256 r[8];
      UNROLL
      for (size_t i = 0; i < 8; i++) {
        if (i >= nc) {
          r[i] = _mm256_setzero_ps();
        } else if (nx == VL) {
          r[i] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + (c0 + i) * plane + x0)));
        } else {
          uint16_t t[VL] = {0};
          memcpy(t, src + (c0 + i) * plane + x0, nx * sizeof(uint16_t));
          r[i] = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)t));
        }
      }
      dlc_avx2_transpose8(r);
      for (size_t j = 0; j < nx; j++) dlc_avx2_store_first(dst + (x0 + j) * ci + c0, (ptrdiff_t)nc, r[j]);
    }
  }
}

const dlc_f32_direct_family dlc_f32_direct__avx2 = {
    .name = "f32_direct_6x16__avx2",
    .dw_name = "f32_dwconv_6x16c_8x8p__avx2",
    .vl = VL,
    .conv_tw = {CONV_TW1, CONV_TW2},
    .conv = {conv_8c, conv_16c},
    .dwc_tw = {DWC_TW1, DWC_TW2},
    .dwc = {dwc_8c, dwc_16c},
    .dwp_vecs = DWP_VECS,
    .dwp_rows = {DWP_NR, DWP_NR, DWP_NR, DWP_NR, DWP_NR, DWP_NR, DWP_NR, DWP_NR},
    .dwp = dwp,
    .to_channel_last = to_channel_last,
    .f16_out = 1,
    .to_channel_last_f16 = dlc_f16_to_channel_last__avx2,
};
