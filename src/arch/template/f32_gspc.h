/* f32_gspc.h - the f32 gspc micro-kernels and input repack (src/ukernel/gspc_ukernel.h), written
 * once over the vector layer; an ISA's f32_gspc_<isa>.c includes its vec.h and then this file,
 * which defines dlc_f32_gspc__<isa>. T_O = DLC_VL lanes.
 *
 * Register tile: R rows x W columns x NV vectors of DLC_VL output lanes, all accumulators in
 * registers (2 FMA pipes x 4 cycles of latency need >= 8 of them in flight). Per reduction step
 * the NV weight vectors are loaded once and reused by every pixel; each pixel's input is one
 * broadcast reused by the NV vectors. Groups in lanes: GPV groups share a vector; the input of a
 * pixel is then GPV consecutive floats repeated over every GPV-lane block (v_bcast_groups).
 *
 * The menu: one vector, every GPV up to DLC_VL, up to GSPC_MAX_PIX pixels in 1, 2 or 4 rows
 * (small images need the rows to fill the accumulators); several vectors (ordinary groups only),
 * up to GSPC_MAX_ACC accumulators in 1 or 2 rows.
 *
 * Knobs (set before the include, else the default for DLC_VL), literal numbers:
 *   GSPC_MAX_PIX  pixels of a one-vector tile (<= 16): 12 at DLC_VL 8, 16 at DLC_VL 16
 *   GSPC_MAX_ACC  accumulators of a several-vector tile: 12 at DLC_VL 8 (12 + NV weight vectors
 *                 + a broadcast fit 16 registers), 24 at DLC_VL 16 (of 32)
 *   GSPC_MAX_NV   vectors of output lanes (<= 4): 3 at DLC_VL 8, 4 at DLC_VL 16
 *   GSPC_T_I      preferred input channel tile: 16
 *   GSPC_BLOCKED  1: kernels for the channel-blocked input (gspc_ukernel.h, a column every t_i
 *                 floats), which needs a column of t_i channels to be one vector: t_i == DLC_VL
 *   GSPC_FMA_PER_CYCLE, GSPC_LOADS_PER_CYCLE, GSPC_FMA_LATENCY, GSPC_STORE_NHWC,
 *   GSPC_STORE_NCHW  the cost model the driver picks tiles with: 2, 2, 4, 0.5, 1 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../ukernel/gspc_ukernel.h"
#include "family.h"

#if DLC_VL == 8
#define GSPC_DEFAULT_MAX_PIX 12
#define GSPC_DEFAULT_MAX_ACC 12
#define GSPC_DEFAULT_MAX_NV 3
#elif DLC_VL == 16
#define GSPC_DEFAULT_MAX_PIX 16
#define GSPC_DEFAULT_MAX_ACC 24
#define GSPC_DEFAULT_MAX_NV 4
#endif
#ifndef GSPC_MAX_PIX
#define GSPC_MAX_PIX GSPC_DEFAULT_MAX_PIX
#endif
#ifndef GSPC_MAX_ACC
#define GSPC_MAX_ACC GSPC_DEFAULT_MAX_ACC
#endif
#ifndef GSPC_MAX_NV
#define GSPC_MAX_NV GSPC_DEFAULT_MAX_NV
#endif
#ifndef GSPC_T_I
#define GSPC_T_I 16
#endif
#ifndef GSPC_BLOCKED
#define GSPC_BLOCKED (GSPC_T_I == DLC_VL)
#endif
#ifndef GSPC_FMA_PER_CYCLE
#define GSPC_FMA_PER_CYCLE 2.0f
#endif
#ifndef GSPC_LOADS_PER_CYCLE
#define GSPC_LOADS_PER_CYCLE 2.0f
#endif
#ifndef GSPC_FMA_LATENCY
#define GSPC_FMA_LATENCY 4.0f
#endif
#ifndef GSPC_STORE_NHWC
#define GSPC_STORE_NHWC 0.5f
#endif
#ifndef GSPC_STORE_NCHW
#define GSPC_STORE_NCHW 1.0f
#endif
_Static_assert(DLC_VL <= 16 && GSPC_MAX_PIX <= 16 && GSPC_MAX_NV <= 4 && GSPC_MAX_ACC / 2 <= GSPC_MAX_PIX,
               "the kernel table's bounds: gpv <= 16, 4 vectors, 16 pixels (a several-vector tile's too)");

#define GSPC_BUF_FLOATS ((GSPC_MAX_ACC > GSPC_MAX_PIX ? GSPC_MAX_ACC : GSPC_MAX_PIX) * DLC_VL) /* a tile's lanes */

/* the identity permutation: what a tile without one loads, never applies */
static const int32_t gspc_lanes_identity[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

/* Bias, clamp, permutation and NCHW (or any strides) store of the accumulators spilled to
   buf[P][NV*VL]: the epilogue is shared by every tile of the menu (once per tile, it need not be
   unrolled). NHWC tiles store from their registers (gspc_tile). */
static __attribute__((noinline)) void gspc_store_tile(const dlc_f32_gspc_params *prm, float *buf, size_t rn,
                                                      size_t wn, size_t nv, const float *bias, float *out,
                                                      size_t n_lanes, size_t r_valid) {
  const size_t np = rn * wn, nvl = nv * DLC_VL;
  const vf lo = v_set1(prm->out_min), hi = v_set1(prm->out_max);
  const int permute = prm->perm != NULL;
  const vidx pidx = v_load_idx(permute ? prm->perm : gspc_lanes_identity);
  for (size_t v = 0; v < nv; v++) {
    const vf b = v_load(bias + v * DLC_VL);
    for (size_t p = 0; p < np; p++) {
      /* bound first: a NaN in x is what max/min return */
      vf x = v_clamp(v_add(v_load_aligned(buf + p * nvl + v * DLC_VL), b), lo, hi);
      if (permute) x = v_permute(x, pidx);
      v_store_aligned(buf + p * nvl + v * DLC_VL, x);
    }
  }
  const ptrdiff_t cs = prm->out_ch_stride, ps = prm->out_pix_stride, rs = prm->out_r_stride;
  if (ps == 1) {
    /* NCHW: VL pixels at a time transposed so each lane's pixels are one vector; pixel
       p = r*wn + x sits in lane p - p0 and row r's run is stored with a lane-range mask from
       a pointer set back by r*wn - p0. */
    for (size_t v = 0; v * DLC_VL < n_lanes; v++) {
      const size_t nl = n_lanes - v * DLC_VL < DLC_VL ? n_lanes - v * DLC_VL : DLC_VL;
      for (size_t p0 = 0; p0 < np; p0 += DLC_VL) {
        vf t[DLC_VL];
        for (size_t p = 0; p < DLC_VL; p++)
          t[p] = p0 + p < np ? v_load_aligned(buf + (p0 + p) * nvl + v * DLC_VL) : v_zero();
        v_transpose(t);
        for (size_t r = 0; r < r_valid; r++) {
          const ptrdiff_t a = (ptrdiff_t)(r * wn) - (ptrdiff_t)p0, b = a + (ptrdiff_t)wn;
          if (b <= 0 || a >= DLC_VL) continue;
          const vmask m = v_range(a, b);
          for (size_t j = 0; j < nl; j++)
            v_store_mask(out + (ptrdiff_t)(v * DLC_VL + j) * cs + (ptrdiff_t)r * rs - a, m, t[j]);
        }
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

/* One register tile; the input of column x is at x*pxs (pxs = gpv, or t_i channel-blocked). */
INLINE void gspc_tile(const dlc_f32_gspc_params *prm, const float *in, const float *w, const float *bias, float *out,
                      size_t n_lanes, size_t r_valid, const size_t gpv, const size_t nv, const size_t rn,
                      const size_t wn, const size_t pxs) {
  const size_t nvl = nv * DLC_VL;
  vf acc[GSPC_MAX_PIX][GSPC_MAX_NV];
  UNROLL
  for (size_t p = 0; p < rn * wn; p++)
    UNROLL
    for (size_t v = 0; v < nv; v++) acc[p][v] = v_zero();
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
        vf wv[GSPC_MAX_NV];
        UNROLL
        for (size_t v = 0; v < nv; v++) wv[v] = v_load_aligned(wp + v * DLC_VL);
        UNROLL
        for (size_t r = 0; r < rn; r++)
          UNROLL
          for (size_t x = 0; x < wn; x++) {
            const vf b = v_bcast_groups(ip + (ptrdiff_t)r * r_stride + x * pxs, gpv);
            UNROLL
            for (size_t v = 0; v < nv; v++) acc[r * wn + x][v] = v_fma(b, wv[v], acc[r * wn + x][v]);
          }
        ip += ti_stride;
        wp += nvl;
      }
    }
  }
  if (prm->out_ch_stride == 1) {
    /* NHWC: bias, clamp and stores (the last vector's first lanes) straight from the accumulators */
    const vf lo = v_set1(prm->out_min), hi = v_set1(prm->out_max);
    const int permute = nv == 1 && prm->perm != NULL;
    const vidx pidx = v_load_idx(permute ? prm->perm : gspc_lanes_identity);
    const ptrdiff_t ps = prm->out_pix_stride, rs = prm->out_r_stride;
    vf bv[GSPC_MAX_NV];
    vtail tl[GSPC_MAX_NV];
    UNROLL
    for (size_t v = 0; v < nv; v++) {
      bv[v] = v_load(bias + v * DLC_VL);
      tl[v] = v_tail((ptrdiff_t)n_lanes - (ptrdiff_t)(v * DLC_VL));
    }
    UNROLL
    for (size_t r = 0; r < rn; r++) {
      if (r >= r_valid) break;
      UNROLL
      for (size_t x = 0; x < wn; x++)
        UNROLL
        for (size_t v = 0; v < nv; v++) {
          vf o = v_clamp(v_add(acc[r * wn + x][v], bv[v]), lo, hi);
          if (permute) o = v_permute(o, pidx);
          v_store_tail(out + (ptrdiff_t)r * rs + (ptrdiff_t)x * ps + v * DLC_VL, tl[v], o);
        }
    }
    return;
  }
  if (prm->out_pix_stride == 1 && (nv == 1 || prm->perm == NULL) && rn * wn <= DLC_VL) {
    /* NCHW, at most VL pixels: each vector's pixels are put in channel order (the permutation of
       groups in lanes, one vector only) and transposed in registers, so that vector j is channel
       j's pixels (its bias one broadcast), and row r's run, lanes [r*wn, r*wn + wn), is stored
       with a mask from a pointer set back by r*wn; no spill to a buffer and no second pass over
       it (gspc_store_tile). */
    const vf lo = v_set1(prm->out_min), hi = v_set1(prm->out_max);
    const ptrdiff_t cs = prm->out_ch_stride, rs = prm->out_r_stride;
    const int permute = prm->perm != NULL;
    const int32_t *perm = permute ? prm->perm : gspc_lanes_identity;
    const vidx pidx = v_load_idx(perm);
    UNROLL
    for (size_t v = 0; v < nv; v++) {
      if (v * DLC_VL >= n_lanes) break;
      vf t[DLC_VL];
      UNROLL
      for (size_t p = 0; p < DLC_VL; p++) {
        t[p] = p < rn * wn ? acc[p][v] : v_zero();
        if (permute) t[p] = v_permute(t[p], pidx);
      }
      v_transpose(t);
      UNROLL
      for (size_t j = 0; j < DLC_VL; j++)
        t[j] = v_clamp(v_add(t[j], v_bcast(bias + v * DLC_VL + (size_t)perm[j])), lo, hi);
      const size_t nl = n_lanes - v * DLC_VL;
      UNROLL
      for (size_t r = 0; r < rn; r++) {
        if (r >= r_valid) break;
        const vmask m = v_range((ptrdiff_t)(r * wn), (ptrdiff_t)(r * wn + wn));
        float *o = out + (ptrdiff_t)(v * DLC_VL) * cs + (ptrdiff_t)r * rs - (ptrdiff_t)(r * wn);
        UNROLL
        for (size_t j = 0; j < DLC_VL; j++) {
          if (j >= nl) break;
          v_store_mask(o + (ptrdiff_t)j * cs, m, t[j]);
        }
      }
    }
    return;
  }
  float buf[GSPC_BUF_FLOATS] __attribute__((aligned(sizeof(vf))));
  UNROLL
  for (size_t p = 0; p < rn * wn; p++)
    UNROLL
    for (size_t v = 0; v < nv; v++) v_store_aligned(buf + p * nvl + v * DLC_VL, acc[p][v]);
  gspc_store_tile(prm, buf, rn, wn, nv, bias, out, n_lanes, r_valid);
}

/* ---- positions in lanes (gspc_ukernel.h) ---------------------------------------------------
   NO output channels x NV vectors of virtual positions: per (input channel, tap) NV input vectors
   (unaligned loads at the tap's offset) and NO broadcast weights, NO*NV FMAs; so the products need
   no channel lanes and the NCHW store no transpose. The menu: NO in 1, 2, 4, 8 and NV up to
   GSPC_POS_MAX_NV with NO*NV accumulators, NV inputs and a broadcast in the register file. */
#ifndef GSPC_POS_MAX_NV
#define GSPC_POS_MAX_NV 12
#endif
/* GSPC_POS_ROWS3: 1 (default), taps in rows of 3 (the params' rows3) load a row's input once and
   shift columns 1 and 2 in (v_shift_in); 0, every tap loads its own (an ISA whose shift costs more
   than the unaligned loads it saves). Stride 2 has no such rows: its third tap is the first's
   phase plane one column on, a lane's shift of the first's input, but taking it so measured no
   faster (Zen 5, AVX-512, 1 thread, NCHW: with the weights in registers, 2 NV + 1 loads and no
   broadcast per row, the 3x224x224>32 and >24 RGB stems and WRN-40-2 g8 / g16 stride 2 within
   1%; tap by tap, NV + 1 loads and NV shifts per row, the stems 4% and 7% slower, and the same
   loop at stride 1 for the tiles too big for the one below 11% slower on WRN-40-2's 64 x 16 x 16
   g8 / g16): these tiles wait on their FMAs, not their loads, and the stride-2 grouped layers
   spend half their time in the repack of the phase planes. */
#ifndef GSPC_POS_ROWS3
#define GSPC_POS_ROWS3 1
#endif
/* the tiles that take it: their accumulators, a row's 3 NO weights (the compiler keeps them in
   registers across the NV vectors) and the two loaded vectors and a shifted one in the register
   file; else the accumulators spill (Zen 5, the 4 x 96 tile of WRN-40-2 g16 16 x 16) */
#define GSPC_POS_ROWS3_FITS(O, V) (GSPC_POS_ROWS3 && (O) * (V) + 3 * (O) + 3 <= DLC_NREGS)
#define GSPC_POS_IN_MENU(O, V) ((O) * (V) <= GSPC_MAX_ACC && (O) * (V) + (V) + 1 <= DLC_NREGS)

INLINE void gspc_pos_tile(const dlc_f32_gspc_pos_params *prm, const float *in, const float *w, const float *bias,
                          float *out, size_t p0, size_t n_oc, const size_t no, const size_t nv) {
  vf acc[8][GSPC_POS_MAX_NV];
  UNROLL
  for (size_t o = 0; o < no; o++)
    UNROLL
    for (size_t v = 0; v < nv; v++) acc[o][v] = v_zero();
  const size_t n_ic = prm->n_ic, n_tap = prm->n_tap;
  const float *ic_in = in + p0;
  for (size_t ic = 0; ic < n_ic; ic++, ic_in += prm->in_c_stride) {
    if (GSPC_POS_ROWS3_FITS(no, nv) && prm->rows3) {
      /* a row of 3 taps: NV + 1 loads at its first tap's offset, and the inputs of its second and
         third taps shifted in from the next vector (v_shift_in), so that no load is at an offset
         of 1 or 2 (with 16 floats a vector, every such load crosses a cache line) */
      for (size_t t = 0; t < n_tap; t += 3, w += 3 * no) {
        const float *ip = ic_in + prm->tap_off[t];
        vf cur = v_load(ip);
        UNROLL
        for (size_t v = 0; v < nv; v++) {
          const vf next = v_load(ip + (v + 1) * DLC_VL);
          const vf x1 = v_shift_in(cur, next, 1), x2 = v_shift_in(cur, next, 2);
          UNROLL
          for (size_t o = 0; o < no; o++) {
            acc[o][v] = v_fma(v_bcast(w + o), cur, acc[o][v]);
            acc[o][v] = v_fma(v_bcast(w + no + o), x1, acc[o][v]);
            acc[o][v] = v_fma(v_bcast(w + 2 * no + o), x2, acc[o][v]);
          }
          cur = next;
        }
      }
      continue;
    }
    for (size_t t = 0; t < n_tap; t++, w += no) {
      const float *ip = ic_in + prm->tap_off[t];
      vf xv[GSPC_POS_MAX_NV];
      UNROLL
      for (size_t v = 0; v < nv; v++) xv[v] = v_load(ip + v * DLC_VL);
      UNROLL
      for (size_t o = 0; o < no; o++) {
        const vf wb = v_bcast(w + o);
        UNROLL
        for (size_t v = 0; v < nv; v++) acc[o][v] = v_fma(wb, xv[v], acc[o][v]);
      }
    }
  }
  /* Row r's outputs in the vector of positions [q0, q0 + VL) are its lanes [a, a + w_out), a =
     r*wq - q0: each row's mask is worked out once for the NO channels, r and a stepped from one
     vector to the next without divisions. Below fast_rows, every vector but the tile's last is
     stored whole at its first row's place, unmasked: the lanes past that row land on outputs of
     the next rows that this vector's later pieces or the next vector store again, in order (the
     masked pieces, 1.5 a vector on 32-wide rows, were a fifth of WRN-40-2 g16's 32 x 32 tile,
     Zen 5), so only a vector that runs into the next row still takes a masked store. */
  const vf lo = v_set1(prm->out_min), hi = v_set1(prm->out_max);
  const ptrdiff_t wq = (ptrdiff_t)prm->wq, wo = (ptrdiff_t)prm->w_out, cs = prm->out_ch_stride;
  vf b[8];
  UNROLL
  for (size_t o = 0; o < no; o++) b[o] = v_bcast(bias + o);
  size_t r = p0 / prm->wq;
  ptrdiff_t a = (ptrdiff_t)(r * prm->wq) - (ptrdiff_t)p0;
  UNROLL
  for (size_t v = 0; v < nv; v++) {
    vf y[8];
    UNROLL
    for (size_t o = 0; o < no; o++) y[o] = v_clamp(v_add(acc[o][v], b[o]), lo, hi);
    size_t rr = r;
    ptrdiff_t aa = a;
    if (v + 1 < nv && r < prm->fast_rows) {
      float *dst = out + (ptrdiff_t)r * wo - a;
      UNROLL
      for (size_t o = 0; o < no; o++) {
        if (o >= n_oc) break;
        v_store(dst + (ptrdiff_t)o * cs, y[o]);
      }
      aa += wq;
      rr++;
    }
    for (; aa < DLC_VL && rr < prm->h_out; aa += wq, rr++) {
      const vmask m = v_range(aa, aa + wo);
      float *dst = out + (ptrdiff_t)rr * wo - aa;
      UNROLL
      for (size_t o = 0; o < no; o++) {
        if (o >= n_oc) break;
        v_store_mask(dst + (ptrdiff_t)o * cs, m, y[o]);
      }
    }
    a -= DLC_VL;
    while (a + wq <= 0) {
      a += wq;
      r++;
    }
  }
}

#define GSPC_POS_FN(O, V) gspc_pos_o##O##_v##V
#define GSPC_POS_KERNEL(O, V)                                                                              \
  static inline void GSPC_POS_FN(O, V)(const dlc_f32_gspc_pos_params *prm, const float *in, const float *w, \
                                       const float *bias, float *out, size_t p0, size_t n_oc) {             \
    gspc_pos_tile(prm, in, w, bias, out, p0, n_oc, O, V);                                                   \
  }
#define GSPC_POS_ENTRY(O, V) [GSPC_LOG2_##O][V - 1] = GSPC_POS_IN_MENU(O, V) ? GSPC_POS_FN(O, V) : NULL,
#define GSPC_POS_ALL(X) \
  DLC_UPTO(GSPC_POS_MAX_NV, X, 1) DLC_UPTO(GSPC_POS_MAX_NV, X, 2) DLC_UPTO(GSPC_POS_MAX_NV, X, 4) DLC_UPTO(GSPC_POS_MAX_NV, X, 8)

/* ---- diagonal tiles (gspc_ukernel.h, get_diag) ----------------------------------------------
   Groups of c in and c out channels (c = 2, 4, 8; 2c <= VL), VL / c groups in a vector: each
   pixel's input is one load of its VL channels, multiplied as it is by the tap's c weight
   vectors into c accumulators (accumulator s holds, in lane L, input L's product for output
   channel (L%c + s) % c of its group), and the c accumulators of a pixel are summed once at the
   end after rotating accumulator s by s lanes within each group. So the reduction is c FMAs per
   pixel and tap with no shuffle, no broadcast and no lane wasted, the input needs no transpose
   (a copy of VL channels per column) and the result is in channel order (no permutation).
   Register file: c*R*W accumulators + c weights + one input <= DLC_NREGS, at most
   GSPC_DIAG_MAX_ACC accumulators (2 FMA pipes x 4 cycles of latency need >= 8 of them). */
#ifndef GSPC_DIAG_MAX_ACC
#define GSPC_DIAG_MAX_ACC (DLC_NREGS * 3 / 4) /* 24 of 32 registers, 12 of 16 */
#endif
#define GSPC_DIAG_ACC(C) ((C) / DLC_GSPC_DIAG_COPIES(C)) /* accumulators per pixel */
#define GSPC_DIAG_IN_MENU(C, R, W)                                                                     \
  (2 * (C) <= DLC_VL && GSPC_DIAG_ACC(C) * (R) * (W) <= GSPC_DIAG_MAX_ACC &&                          \
   GSPC_DIAG_ACC(C) * (R) * (W) + (C) + DLC_GSPC_DIAG_COPIES(C) <= DLC_NREGS && (R) * (W) <= GSPC_MAX_PIX)

/* lane j of rotation s within blocks of c lanes: j - j%c + (j%c - s) mod c */
#define GSPC_ROT(C, S, J) (((J) & ~((C) - 1)) | (((J) + 16 * (C) - (S)) & ((C) - 1)))
#define GSPC_ROT_ROW(C, S)                                                                                       \
  {GSPC_ROT(C, S, 0),  GSPC_ROT(C, S, 1),  GSPC_ROT(C, S, 2),  GSPC_ROT(C, S, 3),  GSPC_ROT(C, S, 4),          \
   GSPC_ROT(C, S, 5),  GSPC_ROT(C, S, 6),  GSPC_ROT(C, S, 7),  GSPC_ROT(C, S, 8),  GSPC_ROT(C, S, 9),          \
   GSPC_ROT(C, S, 10), GSPC_ROT(C, S, 11), GSPC_ROT(C, S, 12), GSPC_ROT(C, S, 13), GSPC_ROT(C, S, 14),         \
   GSPC_ROT(C, S, 15)}
/* [c / 2 - ... ] rows: c = 2 (s = 1), c = 4 (s = 1..3), c = 8 (s = 1..7), at row gspc_rot_at(c) + s - 1 */
static const int32_t gspc_rot[11][16] = {
    GSPC_ROT_ROW(2, 1), GSPC_ROT_ROW(4, 1), GSPC_ROT_ROW(4, 2), GSPC_ROT_ROW(4, 3),
    GSPC_ROT_ROW(8, 1), GSPC_ROT_ROW(8, 2), GSPC_ROT_ROW(8, 3), GSPC_ROT_ROW(8, 4),
    GSPC_ROT_ROW(8, 5), GSPC_ROT_ROW(8, 6), GSPC_ROT_ROW(8, 7)};
#define gspc_rot_at(c) ((c) == 2 ? 0 : (c) == 4 ? 1 : 4)

INLINE void gspc_diag_tile(const dlc_f32_gspc_params *prm, const float *in, const float *w, const float *bias,
                           float *out, size_t n_lanes, size_t r_valid, const size_t c, const size_t rn,
                           const size_t wn) {
  /* a accumulators per pixel: with two copies of the input (groups of 8), the copy rotated by a
     lanes meets the weights of rotations a .. c-1, pre-rotated by a, in the same accumulators */
  const size_t k = DLC_GSPC_DIAG_COPIES(c), a = c / k;
  vf acc[GSPC_MAX_PIX][8];
  UNROLL
  for (size_t p = 0; p < rn * wn; p++)
    UNROLL
    for (size_t s = 0; s < a; s++) acc[p][s] = v_zero();
  const vidx rk = v_load_idx(gspc_rot[gspc_rot_at(c) + a - 1]);
  const size_t n_tap = prm->n_tap;
  const ptrdiff_t r_stride = prm->in_r_stride;
  for (size_t t = 0; t < n_tap; t++, w += c * DLC_VL) {
    const float *ip = in + prm->tap_off[t];
    vf wv[8];
    UNROLL
    for (size_t s = 0; s < c; s++) wv[s] = v_load_aligned(w + s * DLC_VL);
    UNROLL
    for (size_t r = 0; r < rn; r++)
      UNROLL
      for (size_t x = 0; x < wn; x++) {
        const vf xv = v_load(ip + (ptrdiff_t)r * r_stride + x * DLC_VL);
        UNROLL
        for (size_t s = 0; s < a; s++) acc[r * wn + x][s] = v_fma(xv, wv[s], acc[r * wn + x][s]);
        if (k > 1) {
          const vf xr = v_permute(xv, rk);
          UNROLL
          for (size_t s = 0; s < a; s++) acc[r * wn + x][s] = v_fma(xr, wv[a + s], acc[r * wn + x][s]);
        }
      }
  }
  /* sum the rotated accumulators: lane L of rotation s is lane L - L%c + (L%c - s) mod c */
  vf sum[GSPC_MAX_PIX];
  UNROLL
  for (size_t p = 0; p < rn * wn; p++) sum[p] = acc[p][0];
  UNROLL
  for (size_t s = 1; s < a; s++) {
    const vidx ri = v_load_idx(gspc_rot[gspc_rot_at(c) + s - 1]);
    UNROLL
    for (size_t p = 0; p < rn * wn; p++) sum[p] = v_add(sum[p], v_permute(acc[p][s], ri));
  }
  if (prm->out_ch_stride == 1) {
    const vf lo = v_set1(prm->out_min), hi = v_set1(prm->out_max), b = v_load(bias);
    const vtail tl = v_tail((ptrdiff_t)n_lanes);
    const ptrdiff_t ps = prm->out_pix_stride, rs = prm->out_r_stride;
    UNROLL
    for (size_t r = 0; r < rn; r++) {
      if (r >= r_valid) break;
      UNROLL
      for (size_t x = 0; x < wn; x++)
        v_store_tail(out + (ptrdiff_t)r * rs + (ptrdiff_t)x * ps, tl, v_clamp(v_add(sum[r * wn + x], b), lo, hi));
    }
    return;
  }
  float buf[GSPC_BUF_FLOATS] __attribute__((aligned(sizeof(vf))));
  UNROLL
  for (size_t p = 0; p < rn * wn; p++) v_store_aligned(buf + p * DLC_VL, sum[p]);
  dlc_f32_gspc_params q = *prm;
  q.perm = NULL;
  gspc_store_tile(&q, buf, rn, wn, 1, bias, out, n_lanes, r_valid);
}

#define GSPC_DIAG_FN(C, R, W) gspc_diag_c##C##_r##R##_w##W
#define GSPC_DIAG_KERNEL(C, R, W)                                                                             \
  static inline void GSPC_DIAG_FN(C, R, W)(const dlc_f32_gspc_params *prm, const float *in, const float *w,   \
                                           const float *bias, float *out, size_t n_lanes, size_t r_valid) {   \
    gspc_diag_tile(prm, in, w, bias, out, n_lanes, r_valid, C, R, W);                                         \
  }
#define GSPC_DIAG_ENTRY(C, R, W) [GSPC_LOG2_##C - 1][R - 1][W - 1] = GSPC_DIAG_IN_MENU(C, R, W) ? GSPC_DIAG_FN(C, R, W) : NULL,
#define GSPC_DIAG_C(X, C) DLC_UPTO(GSPC_MAX_PIX, X, C, 1) DLC_UPTO(GSPC_MAX_PIX, X, C, 2) DLC_UPTO(GSPC_MAX_PIX, X, C, 4)
#define GSPC_DIAG_ALL(X) GSPC_DIAG_C(X, 2) GSPC_DIAG_C(X, 4) GSPC_DIAG_C(X, 8)

/* ---- the repack (gspc_ukernel.h) ------------------------------------------------------------
   Five ways, by where the source is contiguous:
   - channels contiguous (NHWC): blocks of VL packed positions u = (q, gl) x VL channels, one
     (masked) load of VL channels per position, a VL x VL transpose, a store per channel;
   - one channel of gpv neighbouring groups (NHWC depthwise): gpv floats copied per column;
   - small groups (NHWC, gpv*C_PG <= VL): one permutation per column;
   - columns contiguous (NCHW, stride 1, one group per vector): a copy;
   - otherwise a gather, VL packed floats at a time. */
static void gspc_pack_zero(const dlc_f32_gspc_pack_args *a) {
  for (size_t c = 0; c < a->n_c; c++) memset(a->dst + c * a->dst_c_stride, 0, a->nq * a->gpv * sizeof(float));
}

static inline const float *gspc_src_at(const dlc_f32_gspc_pack_args *a, size_t q, size_t gl) {
  return a->src + ((ptrdiff_t)q * a->col_step + a->col0) * a->px_step + (ptrdiff_t)gl * a->g_step;
}

static inline int gspc_inside(const dlc_f32_gspc_pack_args *a, size_t q) { return q >= a->q_lo && q < a->q_hi; }

static void gspc_pack_transpose(const dlc_f32_gspc_pack_args *a) {
  size_t lg = 0;
  while (((size_t)1 << lg) < a->gpv) lg++;
  const size_t total = a->nq << lg;
  for (size_t u0 = 0; u0 < total; u0 += DLC_VL) {
    const size_t nu = total - u0 < DLC_VL ? total - u0 : DLC_VL;
    for (size_t c0 = 0; c0 < a->n_c; c0 += DLC_VL) {
      const size_t nc = a->n_c - c0 < DLC_VL ? a->n_c - c0 : DLC_VL;
      const vmask cm = v_first((ptrdiff_t)nc);
      vf r[DLC_VL];
      for (size_t i = 0; i < DLC_VL; i++) {
        const size_t u = u0 + i, q = u >> lg, gl = u & (a->gpv - 1);
        r[i] = i < nu && gl < a->ng && gspc_inside(a, q) ? v_load_mask(gspc_src_at(a, q, gl) + c0, cm) : v_zero();
      }
      v_transpose(r);
      const vtail tu = v_tail((ptrdiff_t)nu);
      for (size_t j = 0; j < nc; j++) v_store_tail(a->dst + (c0 + j) * a->dst_c_stride + u0, tu, r[j]);
    }
  }
}

static void gspc_pack_groups(const dlc_f32_gspc_pack_args *a) {
  const vmask gm = v_first((ptrdiff_t)a->ng);
  const vtail all = v_tail((ptrdiff_t)a->gpv);
  for (size_t q = 0; q < a->nq; q++) {
    const vf v = gspc_inside(a, q) ? v_load_mask(gspc_src_at(a, q, 0), gm) : v_zero();
    v_store_tail(a->dst + q * a->gpv, all, v);
  }
}

/* Small groups (NHWC, gpv*C_PG <= VL): a column's block of gpv groups x C_PG channels is one
   vector; one permutation turns [group][channel] into [channel][group] and each channel's gpv
   floats are stored with a mask from a pointer set back by c*gpv. */
static void gspc_pack_small_groups(const dlc_f32_gspc_pack_args *a) {
  const size_t gpv = a->gpv, nc = a->n_c;
  int32_t idx[DLC_VL];
  for (size_t k = 0; k < DLC_VL; k++) idx[k] = (int32_t)(k < nc * gpv ? (k % gpv) * nc + k / gpv : k);
  const vidx pidx = v_load_idx(idx);
  const vmask lm = v_first((ptrdiff_t)(a->ng * nc));
  vmask cm[DLC_VL]; /* channel c's lanes */
  for (size_t c = 0; c < nc; c++) cm[c] = v_range((ptrdiff_t)(c * gpv), (ptrdiff_t)((c + 1) * gpv));
  for (size_t q = 0; q < a->nq; q++) {
    const vf v = gspc_inside(a, q) ? v_permute(v_load_mask(gspc_src_at(a, q, 0), lm), pidx) : v_zero();
    for (size_t c = 0; c < nc; c++) v_store_mask(a->dst + c * a->dst_c_stride + q * gpv - c * gpv, cm[c], v);
  }
}

static void gspc_pack_gather(const dlc_f32_gspc_pack_args *a) {
  const size_t gpv = a->gpv, total = a->nq * gpv, qpv = DLC_VL / gpv;
  const ptrdiff_t qs = a->col_step * a->px_step;
  const int contig = gpv == 1 && qs == 1;
  int32_t lane_off[DLC_VL];
  for (size_t e = 0; e < DLC_VL; e++)
    lane_off[e] = (int32_t)((ptrdiff_t)(e / gpv) * qs + (ptrdiff_t)(e % gpv) * a->g_step);
  const vidx voff = v_load_idx(lane_off);
  /* the lanes of the ng real groups of each gpv-lane block */
  vmask live = v_first(0);
  for (size_t g0 = 0; g0 < DLC_VL; g0 += gpv) live = v_mask_or(live, v_range((ptrdiff_t)g0, (ptrdiff_t)(g0 + a->ng)));
  /* block by block, each block's mask worked out once for the n_c channels */
  for (size_t e0 = 0, q0 = 0; e0 < total; e0 += DLC_VL, q0 += qpv) {
    /* lanes [lo, hi) are columns inside the image (q_lo <= q < q_hi) and inside the row */
    const ptrdiff_t lo = ((ptrdiff_t)a->q_lo - (ptrdiff_t)q0) * (ptrdiff_t)gpv;
    ptrdiff_t hi = ((ptrdiff_t)a->q_hi - (ptrdiff_t)q0) * (ptrdiff_t)gpv;
    if (hi > (ptrdiff_t)(total - e0)) hi = (ptrdiff_t)(total - e0);
    const int whole = lo <= 0 && hi >= DLC_VL; /* all lanes inside: the mask of the image's interior */
    const vmask m = whole ? live : v_mask_and(live, v_range(lo, hi));
    const vtail tail = v_tail((ptrdiff_t)(total - e0));
    /* the block's first column; outside the image its lanes are masked off, never read */
    const float *sb = a->src + ((ptrdiff_t)q0 * a->col_step + a->col0) * a->px_step;
    for (size_t c = 0; c < a->n_c; c++, sb += a->src_c_stride) {
      /* one group's contiguous columns: a load, masked at the image's edges (a gather there
         cost a quarter of NCHW 3x3 layers with padding, Zen 5) */
      const vf v = contig ? (whole ? v_load(sb) : v_load_mask(sb, m)) : v_gather_mask(sb, voff, m);
      v_store_tail(a->dst + c * a->dst_c_stride + e0, tail, v);
    }
  }
}

/* Rows contiguous (NCHW at stride 1 or 2, groups in lanes): the gather's element loads are slow
   (Zen 5, 1x16x16g8 on WRN-40-2 g16's 32 x 32 layer: 53% of the time in the gather). Instead, per
   channel, the gpv groups' rows of VL columns are gpv (masked) loads; log2(gpv) rounds of zips
   turn them into the packed [column][group] order, gpv whole vectors stored as they are
   (Zen 5, AVX-512, the g16 layer: 0.0322 ms with gathers, 0.0209 with a VL x VL transpose and
   gpv-float stores, 0.0161 with zips). */
INLINE void gspc_zip_rows(vf *r, const size_t g) {
  vf t[DLC_VL];
  UNROLL
  for (size_t s = 1; s < g; s *= 2) {
    UNROLL
    for (size_t i = 0; i < g / 2; i++) {
      t[2 * i] = v_zip_lo(r[i], r[i + g / 2]);
      t[2 * i + 1] = v_zip_hi(r[i], r[i + g / 2]);
    }
    UNROLL
    for (size_t i = 0; i < g; i++) r[i] = t[i];
  }
}

/* Stride 2 (cs == 2): each group's 2 VL columns from column q0*2 loaded in two masked halves,
   their evens kept; the masks end at the last even element inside the image, so that the odd one
   after it (past the row's end) is never read. */
INLINE void gspc_pack_rows_g(const dlc_f32_gspc_pack_args *a, const size_t gpv, const size_t cs) {
  const size_t nq = a->nq;
  const ptrdiff_t q_hi = (ptrdiff_t)(a->q_hi < nq ? a->q_hi : nq), q_lo = (ptrdiff_t)a->q_lo;
  /* the masks once per block of columns, for all n_c channels (per channel and block they were
     most of the repack of a stride-2 layer with 2 channels per group, Zen 5) */
  const size_t n_c = a->n_c, ng = a->ng, dcs = a->dst_c_stride;
  const ptrdiff_t scs = a->src_c_stride, g_step = a->g_step;
  const float *const src0 = a->src + a->col0;
  float *const dst0 = a->dst;
  for (size_t q0 = 0; q0 < nq; q0 += DLC_VL) {
    const ptrdiff_t lo = q_lo - (ptrdiff_t)q0, hi = q_hi - (ptrdiff_t)q0;
    const vmask m = v_range(lo, hi);
    const vmask m0 = v_range(2 * lo, 2 * hi - 1), m1 = v_range(2 * lo - DLC_VL, 2 * hi - 1 - DLC_VL);
    for (size_t c = 0; c < n_c; c++) {
      const float *src = src0 + (ptrdiff_t)c * scs;
      float *dst = dst0 + c * dcs;
      vf r[DLC_VL];
      UNROLL
      for (size_t gl = 0; gl < gpv; gl++) { /* lanes outside [q_lo, q_hi) are masked off, never read */
        const float *p = src + (ptrdiff_t)gl * g_step + (ptrdiff_t)(q0 * cs);
        if (gl >= ng)
          r[gl] = v_zero();
        else if (cs == 1)
          r[gl] = v_load_mask(p, m);
        else
          r[gl] = v_evens_in_order(v_evens(v_load_mask(p, m0), v_load_mask(p + DLC_VL, m1)));
      }
      gspc_zip_rows(r, gpv);
      float *d = dst + q0 * gpv;
      if (nq - q0 >= DLC_VL) {
        UNROLL
        for (size_t k = 0; k < gpv; k++) v_store(d + k * DLC_VL, r[k]);
      } else {
        const ptrdiff_t left = (ptrdiff_t)((nq - q0) * gpv);
        UNROLL
        for (size_t k = 0; k < gpv; k++)
          if ((ptrdiff_t)(k * DLC_VL) < left) v_store_tail(d + k * DLC_VL, v_tail(left - (ptrdiff_t)(k * DLC_VL)), r[k]);
      }
    }
  }
}

/* One group's contiguous columns (NCHW, stride 1, gpv 1): a copy, masked at the image's edges.
   Short rows make the gather's set-up per call (its lane offsets and masks) cost more than the
   copy (Zen 5, 128x8x8 g8 3x3: a fifth of the layer). */
static void gspc_pack_copy(const dlc_f32_gspc_pack_args *a) {
  /* the arguments in locals: the stores could alias *a, which the loop would then reload per
     channel (a third of the copy's time, Zen 5) */
  const size_t nq = a->nq, n_c = a->n_c, dcs = a->dst_c_stride;
  const ptrdiff_t q_hi = (ptrdiff_t)(a->q_hi < nq ? a->q_hi : nq), q_lo = (ptrdiff_t)a->q_lo, scs = a->src_c_stride;
  const float *const src0 = a->src + a->col0;
  float *const dst0 = a->dst;
  for (size_t q = 0; q < nq; q += DLC_VL) {
    /* a row of more than VL columns ends in a whole vector over the previous one's last columns
       rather than a short one (the 34-column rows of a 32 x 32 plane: 2 copies a row, not 3) */
    const size_t q0 = nq > DLC_VL && q + DLC_VL > nq ? nq - DLC_VL : q;
    const vmask m = v_range(q_lo - (ptrdiff_t)q0, q_hi - (ptrdiff_t)q0);
    const vtail t = v_tail((ptrdiff_t)(nq - q0));
    const float *src = src0 + (ptrdiff_t)q0;
    float *dst = dst0 + q0;
    for (size_t c = 0; c < n_c; c++, src += scs, dst += dcs) v_store_tail(dst, t, v_load_mask(src, m));
  }
}

/* Both stride phases of a row (n_ph == 2: gpv 1, stride 2, contiguous columns): per block of VL
   packed columns, 2 VL image columns from 2*q0 + col0 in two loads masked to the image (the
   padding lanes are zero, never read), whose evens are phase 0's columns and odds phase 1's. One
   call and one pass over the row instead of one per phase, each loading the whole row for half
   of it (Zen 5, ResNeXt-50 512x28x28 g32 stride 2 NCHW: the repack was a fifth of the layer). */
static void gspc_pack_phases2(const dlc_f32_gspc_pack_args *a) {
  const size_t nq = a->nq, n_c = a->n_c, dcs = a->dst_c_stride;
  const ptrdiff_t scs = a->src_c_stride, w_img = a->w_img;
  for (size_t q0 = 0; q0 < nq; q0 += DLC_VL) {
    const ptrdiff_t c0 = 2 * (ptrdiff_t)q0 + a->col0; /* the image column of the block's lane 0 */
    const vmask m0 = v_range(-c0, w_img - c0), m1 = v_range(-c0 - DLC_VL, w_img - c0 - DLC_VL);
    const vtail t = v_tail((ptrdiff_t)(nq - q0));
    const float *src = a->src + c0;
    float *d0 = a->dst + q0, *d1 = a->dst + a->ph_off + q0;
    for (size_t c = 0; c < n_c; c++, src += scs, d0 += dcs, d1 += dcs) {
      const vf lo = v_load_mask(src, m0), hi = v_load_mask(src + DLC_VL, m1);
      v_store_tail(d0, t, v_evens_in_order(v_evens(lo, hi)));
      v_store_tail(d1, t, v_evens_in_order(v_odds(lo, hi)));
    }
  }
}

/* Both stride phases of a row of gpv groups in lanes (n_ph == 2, gpv 2..8): per group the 2 VL
   image columns from 2*q0 + col0 in two loads masked to the image (the padding lanes are zero,
   never read), whose evens are phase 0's columns and odds phase 1's, each zipped into the
   [column][group] order. One pass over the row instead of one per phase, each loading the whole
   row for half of it (Zen 5, WRN-40-2 g16 64 x 16 x 16 stride 2, 4 channels per group: the repack
   was over half of the layer). */
INLINE void gspc_pack_phases2_g(const dlc_f32_gspc_pack_args *a, const size_t gpv) {
  const size_t nq = a->nq, n_c = a->n_c, ng = a->ng, dcs = a->dst_c_stride;
  const ptrdiff_t scs = a->src_c_stride, g_step = a->g_step, w_img = a->w_img;
  for (size_t q0 = 0; q0 < nq; q0 += DLC_VL) {
    const ptrdiff_t c0 = 2 * (ptrdiff_t)q0 + a->col0; /* the image column of the block's lane 0 */
    const vmask m0 = v_range(-c0, w_img - c0), m1 = v_range(-c0 - DLC_VL, w_img - c0 - DLC_VL);
    const ptrdiff_t left = (ptrdiff_t)((nq - q0) * gpv);
    for (size_t c = 0; c < n_c; c++) {
      const float *src = a->src + (ptrdiff_t)c * scs + c0;
      float *d0 = a->dst + c * dcs + q0 * gpv, *d1 = d0 + a->ph_off;
      vf lo[DLC_VL], hi[DLC_VL], r[DLC_VL];
      UNROLL
      for (size_t gl = 0; gl < gpv; gl++) {
        const float *p = src + (ptrdiff_t)gl * g_step;
        lo[gl] = gl < ng ? v_load_mask(p, m0) : v_zero();
        hi[gl] = gl < ng ? v_load_mask(p + DLC_VL, m1) : v_zero();
      }
      UNROLL
      for (size_t ph = 0; ph < 2; ph++) {
        UNROLL
        for (size_t gl = 0; gl < gpv; gl++) r[gl] = v_evens_in_order(ph ? v_odds(lo[gl], hi[gl]) : v_evens(lo[gl], hi[gl]));
        gspc_zip_rows(r, gpv);
        float *d = ph ? d1 : d0;
        UNROLL
        for (size_t k = 0; k < gpv; k++) {
          if (left >= (ptrdiff_t)((k + 1) * DLC_VL))
            v_store(d + k * DLC_VL, r[k]);
          else if (left > (ptrdiff_t)(k * DLC_VL))
            v_store_tail(d + k * DLC_VL, v_tail(left - (ptrdiff_t)(k * DLC_VL)), r[k]);
        }
      }
    }
  }
}

static void gspc_pack(const dlc_f32_gspc_pack_args *a);

/* n_ph == 2 of any gpv: the one-pass repacks, else (gpv above 8, whose loads of both phases
   would not fit the registers) a pass per phase with its columns inside the image */
static void gspc_pack_both(const dlc_f32_gspc_pack_args *a) {
  switch (a->gpv) {
    case 1: gspc_pack_phases2(a); return;
    case 2: gspc_pack_phases2_g(a, 2); return;
    case 4: gspc_pack_phases2_g(a, 4); return;
#if DLC_VL >= 8
    case 8: gspc_pack_phases2_g(a, 8); return;
#endif
    default: break;
  }
  dlc_f32_gspc_pack_args b = *a;
  b.n_ph = 0;
  for (size_t ph = 0; ph < 2; ph++) {
    const ptrdiff_t c0 = a->col0 + (ptrdiff_t)ph;
    ptrdiff_t lo = c0 >= 0 ? 0 : (-c0 + 1) / 2, hi = a->w_img - c0 <= 0 ? 0 : (a->w_img - c0 + 1) / 2;
    lo = lo < (ptrdiff_t)a->nq ? lo : (ptrdiff_t)a->nq;
    hi = hi < (ptrdiff_t)a->nq ? hi : (ptrdiff_t)a->nq;
    hi = hi > lo ? hi : lo;
    b.dst = a->dst + ph * a->ph_off;
    b.col0 = c0;
    b.q_lo = (size_t)lo;
    b.q_hi = (size_t)hi;
    gspc_pack(&b);
  }
}

static void gspc_pack_rows(const dlc_f32_gspc_pack_args *a) {
  const size_t cs = (size_t)a->col_step;
  switch (a->gpv) {
    case 1: cs == 1 ? gspc_pack_copy(a) : gspc_pack_rows_g(a, 1, 2); break;
    case 2: cs == 1 ? gspc_pack_rows_g(a, 2, 1) : gspc_pack_rows_g(a, 2, 2); break;
    case 4: cs == 1 ? gspc_pack_rows_g(a, 4, 1) : gspc_pack_rows_g(a, 4, 2); break;
    case 8: cs == 1 ? gspc_pack_rows_g(a, 8, 1) : gspc_pack_rows_g(a, 8, 2); break;
#if DLC_VL >= 16
    case 16: cs == 1 ? gspc_pack_rows_g(a, 16, 1) : gspc_pack_rows_g(a, 16, 2); break;
#endif
    default: gspc_pack_gather(a); break;
  }
}

/* Channel-blocked layout from NHWC (the blocked and the diagonal tiles): a column is VL floats,
   the channels of the tile then zeros; one masked load and one store per column. */
static void gspc_pack_blocked(const dlc_f32_gspc_pack_args *a) {
  /* the arguments and the channel mask in locals, the padding and the interior in their own
     loops: the stores could alias *a, and per column the mask and the bounds were most of the
     copy (Zen 5, WRN-40-2 g16 NHWC 32 x 32: a quarter of the layer) */
  const size_t nq = a->nq, q_lo = a->q_lo < nq ? a->q_lo : nq, q_hi = a->q_hi < nq ? a->q_hi : nq;
  const ptrdiff_t step = a->col_step * a->px_step;
  const vmask m = v_first((ptrdiff_t)a->n_c);
  float *dst = a->dst;
  const float *src = a->src + (ptrdiff_t)a->col0 * a->px_step;
  size_t q = 0;
  for (; q < q_lo; q++) v_store(dst + q * DLC_VL, v_zero());
  if (a->n_c == DLC_VL)
    for (; q < q_hi; q++) v_store(dst + q * DLC_VL, v_load(src + (ptrdiff_t)q * step));
  else
    for (; q < q_hi; q++) v_store(dst + q * DLC_VL, v_load_mask(src + (ptrdiff_t)q * step, m));
  for (; q < nq; q++) v_store(dst + q * DLC_VL, v_zero());
}

static void gspc_pack_scalar(const dlc_f32_gspc_pack_args *a) {
  for (size_t c = 0; c < a->n_c; c++) {
    float *d = a->dst + c * a->dst_c_stride;
    for (size_t q = 0; q < a->nq; q++)
      for (size_t gl = 0; gl < a->gpv; gl++)
        d[q * a->dst_q_stride + gl] =
            gl < a->ng && gspc_inside(a, q) ? gspc_src_at(a, q, gl)[(ptrdiff_t)c * a->src_c_stride] : 0.0f;
  }
}

static void gspc_pack(const dlc_f32_gspc_pack_args *a) {
  if (a->n_ph == 2) {
    gspc_pack_both(a);
  } else if (a->dst_q_stride != a->gpv) {
    if (a->dst_c_stride == 1 && a->src_c_stride == 1 && a->gpv == 1 && a->dst_q_stride == DLC_VL && a->n_c <= DLC_VL) {
      gspc_pack_blocked(a);
      return;
    }
    gspc_pack_scalar(a);
  } else if (a->q_lo >= a->q_hi) {
    gspc_pack_zero(a);
  } else if (a->src_c_stride == 1 && a->g_step == 1 && a->gpv > 1) {
    gspc_pack_groups(a);
  } else if (a->src_c_stride == 1 && a->gpv > 1 && a->g_step == (ptrdiff_t)a->n_c && a->gpv * a->n_c <= DLC_VL) {
    gspc_pack_small_groups(a);
  } else if (a->src_c_stride == 1) {
    gspc_pack_transpose(a);
  } else if (a->px_step == 1 && (a->col_step == 1 || a->col_step == 2)) {
    gspc_pack_rows(a);
  } else {
    /* int32 gather offsets must reach the farthest element of the row */
    const ptrdiff_t far = ((ptrdiff_t)a->nq * a->col_step + (a->col0 < 0 ? -a->col0 : a->col0)) * a->px_step +
                          (ptrdiff_t)a->gpv * a->g_step;
    if (far < INT32_MAX / 2)
      gspc_pack_gather(a);
    else
      gspc_pack_scalar(a);
  }
}

/* ---- the kernel table ------------------------------------------------------------------------
   A kernel per tile of the shapes the menu has (one vector: gpv 1..VL, 1, 2 or 4 rows; several
   vectors: gpv 1, 1 or 2 rows; 1..GSPC_MAX_PIX columns); the table holds those of the menu. The
   kernels are static inline so that the others, never referenced, are never compiled (a plain
   static function is emitted at -O0 even when unused). */
#define GSPC_IN_MENU(V, R, W) \
  ((V) == 1 ? (R) * (W) <= GSPC_MAX_PIX : (V) <= GSPC_MAX_NV && (V) * (R) * (W) <= GSPC_MAX_ACC)
#define GSPC_COLS(X, G, V, R) DLC_UPTO(GSPC_MAX_PIX, X, G, V, R)
#define GSPC_ONE_VECTOR(X, G) GSPC_COLS(X, G, 1, 1) GSPC_COLS(X, G, 1, 2) GSPC_COLS(X, G, 1, 4)
#define GSPC_VECTORS(X, V) GSPC_COLS(X, 1, V, 1) GSPC_COLS(X, 1, V, 2)
#define GSPC_GPV1(X) GSPC_ONE_VECTOR(X, 1) GSPC_VECTORS(X, 2) GSPC_VECTORS(X, 3) GSPC_VECTORS(X, 4)
#define GSPC_GPVS_4(X) GSPC_ONE_VECTOR(X, 2) GSPC_ONE_VECTOR(X, 4)
#define GSPC_GPVS_8(X) GSPC_GPVS_4(X) GSPC_ONE_VECTOR(X, 8)
#define GSPC_GPVS_16(X) GSPC_GPVS_8(X) GSPC_ONE_VECTOR(X, 16)
#define GSPC_ALL(X) GSPC_GPV1(X) DLC_CAT(GSPC_GPVS_, DLC_VL)(X) /* X(G, V, R, W) for each */
#define GSPC_LOG2_1 0
#define GSPC_LOG2_2 1
#define GSPC_LOG2_4 2
#define GSPC_LOG2_8 3
#define GSPC_LOG2_16 4
#define GSPC_N_G (DLC_CAT(GSPC_LOG2_, DLC_VL) + 1) /* gpv 1, 2, 4, ... VL */

#define GSPC_FN(G, V, R, W) gspc_g##G##_v##V##_r##R##_w##W
#define GSPC_KERNEL(G, V, R, W)                                                                           \
  static inline void GSPC_FN(G, V, R, W)(const dlc_f32_gspc_params *prm, const float *in, const float *w, \
                                         const float *bias, float *out, size_t n_lanes, size_t r_valid) { \
    gspc_tile(prm, in, w, bias, out, n_lanes, r_valid, G, V, R, W, G);                                    \
  }
#define GSPC_ENTRY(G, V, R, W) \
  [GSPC_LOG2_##G][V - 1][R - 1][W - 1] = GSPC_IN_MENU(V, R, W) ? GSPC_FN(G, V, R, W) : NULL,
GSPC_ALL(GSPC_KERNEL)
static const dlc_f32_gspc_ukernel_fn gspc_table[GSPC_N_G][4][4][GSPC_MAX_PIX] = {GSPC_ALL(GSPC_ENTRY)};

static dlc_f32_gspc_ukernel_fn gspc_get(size_t gpv, size_t nv, size_t r, size_t w) {
  size_t lg = 0;
  while (((size_t)1 << lg) < gpv) lg++;
  if (((size_t)1 << lg) != gpv || lg >= GSPC_N_G || nv < 1 || nv > 4 || r < 1 || r > 4 || w < 1 || w > GSPC_MAX_PIX)
    return NULL;
  return gspc_table[lg][nv - 1][r - 1][w - 1];
}

#if GSPC_BLOCKED
/* channel-blocked input: a column every VL floats; the gpv = 1 tiles of the menu */
#define GSPC_BFN(G, V, R, W) gspc_blk_v##V##_r##R##_w##W
#define GSPC_BKERNEL(G, V, R, W)                                                                           \
  static inline void GSPC_BFN(G, V, R, W)(const dlc_f32_gspc_params *prm, const float *in, const float *w, \
                                          const float *bias, float *out, size_t n_lanes, size_t r_valid) { \
    gspc_tile(prm, in, w, bias, out, n_lanes, r_valid, 1, V, R, W, DLC_VL);                                \
  }
#define GSPC_BENTRY(G, V, R, W) [V - 1][R - 1][W - 1] = GSPC_IN_MENU(V, R, W) ? GSPC_BFN(G, V, R, W) : NULL,
GSPC_GPV1(GSPC_BKERNEL)
static const dlc_f32_gspc_ukernel_fn gspc_btable[4][4][GSPC_MAX_PIX] = {GSPC_GPV1(GSPC_BENTRY)};

static dlc_f32_gspc_ukernel_fn gspc_get_blocked(size_t nv, size_t r, size_t w) {
  if (nv < 1 || nv > 4 || r < 1 || r > 4 || w < 1 || w > GSPC_MAX_PIX) return NULL;
  return gspc_btable[nv - 1][r - 1][w - 1];
}
#endif

GSPC_POS_ALL(GSPC_POS_KERNEL)
static const dlc_f32_gspc_pos_fn gspc_pos_table[4][GSPC_POS_MAX_NV] = {GSPC_POS_ALL(GSPC_POS_ENTRY)};

static dlc_f32_gspc_pos_fn gspc_get_pos(size_t no, size_t nv) {
  const size_t lg = no == 1 ? 0 : no == 2 ? 1 : no == 4 ? 2 : no == 8 ? 3 : 4;
  if (lg > 3 || nv < 1 || nv > GSPC_POS_MAX_NV) return NULL;
  return gspc_pos_table[lg][nv - 1];
}

GSPC_DIAG_ALL(GSPC_DIAG_KERNEL)
static const dlc_f32_gspc_ukernel_fn gspc_diag_table[3][4][GSPC_MAX_PIX] = {GSPC_DIAG_ALL(GSPC_DIAG_ENTRY)};

static dlc_f32_gspc_ukernel_fn gspc_get_diag(size_t c, size_t r, size_t w) {
  const size_t lg = c == 2 ? 0 : c == 4 ? 1 : c == 8 ? 2 : 3;
  if (lg > 2 || r < 1 || r > 4 || w < 1 || w > GSPC_MAX_PIX) return NULL;
  return gspc_diag_table[lg][r - 1][w - 1];
}

const dlc_f32_gspc_family DLC_FAMILY_NAME(f32_gspc) = {
    .name = "f32_gspc__" DLC_ISA_STR,
    .isa = DLC_ISA_STR,
    .t_o = DLC_VL,
    .t_i = GSPC_T_I,
    .max_gpv = DLC_VL,
    .get = gspc_get,
#if GSPC_BLOCKED
    .get_blocked = gspc_get_blocked,
#else
    .get_blocked = NULL,
#endif
    .pack = gspc_pack,
    .get_pos = gspc_get_pos,
    .get_diag = gspc_get_diag,
    .fma_per_cycle = GSPC_FMA_PER_CYCLE,
    .loads_per_cycle = GSPC_LOADS_PER_CYCLE,
    .fma_latency = GSPC_FMA_LATENCY,
    .store_nhwc = GSPC_STORE_NHWC,
    .store_nchw = GSPC_STORE_NCHW,
    .pack_both_phases = 1,
};
