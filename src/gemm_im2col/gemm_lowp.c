/* gemm_lowp.c - im2col + GEMM for F16 and int8 (U8/S8), ISA-independent driver.
 *
 * The same product as gemm.c per group (K = cin_g * k_h * k_w in OIHW order (ic, ky, kx)), with
 * low-precision operands and a wide accumulator (lowp_gemm_ukernel.h):
 *   NCHW: C[cout_g x P] = W_g * Xcol   per image: weights are the A operand (mr-row panels),
 *         output rows are channels, so a finished row is a contiguous run of y.
 *   NHWC: C[n*P x cout_g] = Xcol^T * W_g^T  for all images at once: weights are the B operand
 *         (nr-column panels), output rows are pixels, a row is a run of channels of y.
 * Weights are packed once at plan time (F16: halves as given; int8: s8 widened to s16 pairs).
 * The activation operand is packed per job straight from x with the im2col gather fused in:
 * F16 halves are copied, int8 bytes become x - x_zero_point in s16, so padding taps are plain
 * zeros and no zero-point compensation term is needed. Each job accumulates its M x N block in
 * the workspace over the K chunks, then the family's store turns every row into y: bias, clamp
 * and rounding to binary16, or the exact requantisation of quant.h. The conversion to the wide
 * types happens only in registers (F16) or in the per-job packing (int8): no pass over whole
 * tensors.
 *
 * Threads: jobs are (outer item, M block, N block); outer = (image, group) for NCHW and group
 * for NHWC; task t takes a contiguous range of jobs and workspace slice t. */
#include <stdio.h>
#include <string.h>

#include "../ukernel/config.h"
#include "../core/plan.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "gemm.h"

typedef struct lowp_data {
  int q8, nhwc;
  size_t K, Kp;          /* reduction length; padded to even for int8 */
  size_t mr, nr;
  size_t ww;             /* width of a weight panel: mr (NCHW) or nr (NHWC) */
  size_t wpanels;        /* weight panels per group */
  int16_t *wpack;        /* groups x wpanels x Kp x ww elements (halves or s16) */
  size_t M, N;           /* GEMM of one outer item */
  size_t kc, mc, nc;     /* K chunk (even); M and N block of a job (multiples of mr and nr) */
  size_t outer, mblocks, nblocks, njobs, ntasks;
  size_t xpack_elems;    /* per slice: the packed activation block */
  size_t ws_slice;       /* bytes per task, multiple of 64 */
  size_t a32_bytes;      /* F16 with ukernel_a32: the widened A micro-panel at the end of a slice */
  const dlc_f16_gemm_family *f16;
  const dlc_q8_gemm_family *q8f;
  /* F16, NCHW 1 x 1 (lanes_contiguous): B panels widened to fp32 as they are packed, the widened A
     micro-panel, and the fp32 GEMM family's micro-kernel (same mr x nr): see lowp_plan */
  const dlc_f32_gemm_family *b32;
} lowp_data;

static int lanes_contiguous(const dlc_conv_shape *s);

/* Index of element (k, lane) in a k-major panel of width w: int8 panels hold pairs along k. */
static inline size_t pidx(int q8, size_t w, size_t k, size_t lane) {
  return q8 ? (k >> 1) * 2 * w + 2 * lane + (k & 1) : k * w + lane;
}

/* ---------------------------------------------------------------- plan */

static void lowp_destroy(dlconv_plan *p) {
  lowp_data *d = p->algo_data;
  if (!d) return;
  dlc_free(d->wpack);
  dlc_free(d);
}

static dlconv_status lowp_plan(dlconv_plan *p, const void *w) {
  const dlc_conv_shape *s = &p->s;
  const int q8 = p->dtype != DLCONV_F16;
  const dlc_f16_gemm_family *f16 = p->kernels->f16_gemm;
  const dlc_q8_gemm_family *q8f = p->kernels->q8_gemm;
  if (q8 ? !q8f : !f16)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "im2col_gemm has no %s kernel for isa %s", q8 ? "int8" : "F16",
                    p->kernels->name);
  size_t K = (size_t)(s->cin_g * s->k_h * s->k_w);
  if (q8 && K > DLC_Q8_MAX_K)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED,
                    "int8 reduction length (c_in/groups)*k_h*k_w = %zu could overflow the s32 accumulators "
                    "(at most %zu)", K, DLC_Q8_MAX_K);
  lowp_data *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning im2col_gemm");
  d->q8 = q8;
  d->f16 = f16;
  d->q8f = q8f;
  d->nhwc = s->layout == DLCONV_NHWC;
  d->mr = q8 ? q8f->mr : f16->mr;
  d->nr = q8 ? q8f->nr : f16->nr;
  d->K = K;
  d->Kp = q8 ? dlc_round_up(K, 2) : K;
  size_t P = (size_t)(s->h_out * s->w_out), cog = (size_t)s->cout_g;
  d->M = d->nhwc ? (size_t)s->n * P : cog;
  d->N = d->nhwc ? cog : P;
  d->outer = d->nhwc ? (size_t)s->groups : (size_t)(s->n * s->groups);
  d->ww = d->nhwc ? d->nr : d->mr;
  d->wpanels = dlc_div_up(cog, d->ww);
  /* The activation side of a job (NCHW: nc pixels, NHWC: mc pixels) is packed once per K chunk
     of 256 (2-byte elements: a kc x 256 block is 128 KB, in L2) and swept by the whole weight
     side (NCHW: all of M, NHWC: all of N, up to 1024), whose panels were packed at plan time:
     re-packing the activations for every slice of the weights cost as much as the products.
     The accumulator block mc x nc (read-modify-written once per K chunk) lives in the slice. */
  d->kc = dlc_balanced_block(d->Kp, 256, q8 ? 2 : 1);
  if (d->nhwc) {
    d->mc = dlc_balanced_block(d->M, 96, d->mr);
    d->nc = dlc_balanced_block(d->N, 1024, d->nr);
  } else {
    d->mc = dlc_balanced_block(d->M, 1024, d->mr);
    d->nc = dlc_balanced_block(d->N, 256, d->nr);
  }
  d->mblocks = dlc_div_up(d->M, d->mc);
  d->nblocks = dlc_div_up(d->N, d->nc);
  /* too few jobs for the threads: cut the weight side too */
  size_t jobs = d->outer * d->mblocks * d->nblocks, want = (size_t)p->nthreads;
  if (jobs < want) {
    size_t more = dlc_div_up(want, jobs);
    if (d->nhwc)
      d->nc = dlc_balanced_block(d->N, DLC_MAX(d->nr, dlc_div_up(d->N, d->nblocks * more)), d->nr);
    else
      d->mc = dlc_balanced_block(d->M, DLC_MAX(d->mr, dlc_div_up(d->M, d->mblocks * more)), d->mr);
    d->mblocks = dlc_div_up(d->M, d->mc);
    d->nblocks = dlc_div_up(d->N, d->nc);
  }
  d->njobs = d->outer * d->mblocks * d->nblocks;
  d->ntasks = DLC_MIN((size_t)p->nthreads, d->njobs);
  d->xpack_elems = d->kc * (d->nhwc ? d->mc : d->nc);
  /* F16 NCHW 1 x 1 layers copy their B panels run by run, so they can as well widen them: the
     fp32 micro-kernel then runs without conversions. Zen 2, 1 thread, 256x56x56>64: 1.35 ms with
     the F16 kernel (its B conversions and the copy's memcpy calls 12% of the time), against
     fp32's own 1.11 ms. The kc x nc fp32 block is 256 KB, still in L2. */
  const dlc_f32_gemm_family *g32 = p->kernels->gemm;
  /* The same for the gathered B panels of other NCHW layers, widened run by run (VGG-16's RGB
     stem, Zen 4, 1 thread: 2.37 ms on the F16 kernel, against fp32's 2.07 ms). */
  if (!q8 && !d->nhwc && f16->widen_a && (lanes_contiguous(s) ? f16->pack_cols_f32 != NULL : f16->widen_run != NULL) &&
      g32 && g32->ukernel && g32->mr == d->mr && g32->nr == d->nr)
    d->b32 = g32;
  /* F16 families with ukernel_a32: room for one widened A micro-panel */
  d->a32_bytes = !q8 && (f16->ukernel_a32 || d->b32) ? dlc_round_up((d->kc * d->mr + 8) * 4, DLC_ALIGN) : 0;
  d->ws_slice = dlc_round_up(d->xpack_elems * (d->b32 ? 4 : 2), DLC_ALIGN) + dlc_round_up(d->mc * d->nc * 4, DLC_ALIGN) +
                d->a32_bytes;

  size_t per_group = d->wpanels * d->Kp * d->ww;
  d->wpack = dlc_calloc((size_t)s->groups * per_group * 2);
  if (!d->wpack) {
    dlc_free(d);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory packing im2col_gemm weights");
  }
  for (int64_t g = 0; g < s->groups; g++)
    for (size_t oc = 0; oc < cog; oc++) {
      size_t row = (size_t)g * cog + oc;
      int16_t *panel = d->wpack + (size_t)g * per_group + oc / d->ww * d->Kp * d->ww;
      for (size_t k = 0; k < K; k++) {
        /* NHWC reduces in (ky, kx, ic) order: tap-major, like its input runs */
        size_t khw = (size_t)(s->k_h * s->k_w), cin = (size_t)s->cin_g;
        size_t kp = d->nhwc ? k % khw * cin + k / khw : k;
        size_t at = pidx(q8, d->ww, kp, oc % d->ww);
        if (q8)
          panel[at] = ((const int8_t *)w)[row * K + k];
        else
          memcpy(panel + at, (const uint16_t *)w + row * K + k, 2);
      }
    }
  p->algo_data = d;
  p->packed_weight_bytes = (size_t)s->groups * per_group * 2;
  p->workspace_bytes = d->ntasks * d->ws_slice;
  p->exec_tasks = d->ntasks;
  if (d->b32)
    snprintf(p->kernel, sizeof p->kernel, "f16+%s", d->b32->name);
  else
    snprintf(p->kernel, sizeof p->kernel, "%s", q8 ? q8f->name : f16->name);
  return DLCONV_OK;
}

/* ---------------------------------------------------------------- execute */

/* A 1x1 layer with stride 1 and no padding reads pixel q of a channel at x[q]: a job's lanes are
   one contiguous run of each plane, copied a panel's width at a time instead of an output row
   at a time (7 lanes on a 7 x 7 plane, where the per-run bookkeeping cost more than the copy). */
static int lanes_contiguous(const dlc_conv_shape *s) {
  return s->k_h == 1 && s->k_w == 1 && s->stride_h == 1 && s->stride_w == 1 && !(s->pad_t | s->pad_b | s->pad_l | s->pad_r);
}

/* F16 NCHW: the panels of the B block, lanes = pixels [q0, q0 + nq) of image img, rows = k in
   [k0, k0 + kc) in (ic, ky, kx) order, panel width w, as halves into dst or (dst32, b32) widened
   to floats. Walks output rows, so that a run of lanes reads one input row; taps outside x stay
   zero (the caller zeroed them). */
static void pack_nchw_f16(const dlc_exec *c, size_t img, size_t g, size_t q0, size_t nq, size_t k0, size_t kc,
                          size_t w, uint16_t *dst, float *dst32) {
  const dlc_conv_shape *s = &c->p->s;
  const lowp_data *d = c->p->algo_data;
  const size_t khw = (size_t)(s->k_h * s->k_w), wo = (size_t)s->w_out, panel = kc * w;
  const int64_t sw = s->stride_w;
  if (lanes_contiguous(s)) {
    for (size_t kk = 0; kk < kc && k0 + kk < d->K; kk++) {
      const uint16_t *xr = (const uint16_t *)c->x + (img * (size_t)s->c_in + g * (size_t)s->cin_g + k0 + kk) *
                                                        (size_t)(s->h_in * s->w_in) + q0;
      for (size_t l = 0; l < nq; l += w) memcpy(dst + kk * w + l / w * panel, xr + l, DLC_MIN(w, nq - l) * 2);
    }
    return;
  }
  for (size_t kk = 0; kk < kc && k0 + kk < d->K; kk++) {
    const size_t k = k0 + kk, ic = g * (size_t)s->cin_g + k / khw, r = k % khw;
    const int64_t ky = (int64_t)(r / (size_t)s->k_w), kx = (int64_t)(r % (size_t)s->k_w);
    const uint16_t *xc = (const uint16_t *)c->x + (img * (size_t)s->c_in + ic) * (size_t)(s->h_in * s->w_in);
    const size_t rowoff = kk * w;
    for (size_t l = 0, q = q0; l < nq;) {
      const int64_t oy = (int64_t)(q / wo), ox = (int64_t)(q % wo);
      const size_t run = DLC_MIN(nq - l, wo - (size_t)ox);
      const int64_t iy = oy * s->stride_h - s->pad_t + ky * s->dil_h;
      if (iy >= 0 && iy < s->h_in) {
        const uint16_t *row = xc + (size_t)iy * (size_t)s->w_in;
        const int64_t ix0 = ox * sw - s->pad_l + kx * s->dil_w;
        const size_t r0 = ix0 >= 0 ? 0 : (size_t)((-ix0 + sw - 1) / sw);
        const size_t r1 = ix0 >= s->w_in ? 0 : DLC_MIN(run, (size_t)((s->w_in - 1 - ix0) / sw + 1));
        /* a panel's columns at a time: contiguous halves at stride 1, stepped otherwise (a
           division per element cost more than the products it feeds) */
        for (size_t rr = r0; rr < r1;) {
          const size_t lane = l + rr, li = lane % w, cnt = DLC_MIN(r1 - rr, w - li);
          const size_t at = rowoff + lane / w * panel + li;
          const uint16_t *src = row + ix0 + (int64_t)rr * sw;
          if (dst32)
            d->f16->widen_run(cnt, src, (size_t)sw, dst32 + at);
          else if (sw == 1)
            memcpy(dst + at, src, cnt * 2);
          else
            for (size_t i = 0; i < cnt; i++) dst[at + i] = src[(int64_t)i * sw];
          rr += cnt;
        }
      }
      l += run;
      q += run;
    }
  }
}

/* NHWC: the panels of the A block, lanes = pixels [q0, q0 + nq) of all images (n * P + p), rows
   = k in (ky, kx, ic) order (weights are packed the same way), so a tap copies a contiguous run
   of input channels. F16 here; int8 in pack_nhwc_q8. */
static void pack_nhwc_f16(const dlc_exec *c, size_t g, size_t q0, size_t nq, size_t k0, size_t kc, size_t w,
                          uint16_t *dst) {
  const dlc_conv_shape *s = &c->p->s;
  const size_t P = (size_t)(s->h_out * s->w_out), khw = (size_t)(s->k_h * s->k_w), wo = (size_t)s->w_out;
  const size_t cin = (size_t)s->cin_g, panel = kc * w;
  for (size_t l = 0; l < nq; l++) {
    const size_t q = q0 + l, n = q / P, pix = q % P;
    const int64_t oy = (int64_t)(pix / wo), ox = (int64_t)(pix % wo);
    uint16_t *dl = dst + l / w * panel + l % w;
    for (size_t t = k0 / cin; t * cin < k0 + kc && t < khw; t++) {
      const int64_t iy = oy * s->stride_h - s->pad_t + (int64_t)(t / (size_t)s->k_w) * s->dil_h;
      const int64_t ix = ox * s->stride_w - s->pad_l + (int64_t)(t % (size_t)s->k_w) * s->dil_w;
      if (iy < 0 || iy >= s->h_in || ix < 0 || ix >= s->w_in) continue;
      const uint16_t *src = (const uint16_t *)c->x +
                            ((n * (size_t)s->h_in + (size_t)iy) * (size_t)s->w_in + (size_t)ix) * (size_t)s->c_in +
                            g * cin;
      const size_t c_lo = t * cin < k0 ? k0 - t * cin : 0, c_hi = DLC_MIN(cin, k0 + kc - t * cin);
      for (size_t ic = c_lo; ic < c_hi; ic++) dl[(t * cin + ic - k0) * w] = src[ic];
    }
  }
}

/* int8 NHWC: as pack_nhwc_f16, but a tap's run of channels is a stretch of reduction rows kk = t * cin
   + ic - k0 whose whole pairs (channels adjacent in x) go through the family's
   pack_pairs_strided; a first row that is the second of its pair, or a lone last one, scalar. */
static void pack_nhwc_q8(const dlc_exec *c, size_t g, size_t q0, size_t nq, size_t k0, size_t kc, size_t w,
                         int16_t *dst) {
  const dlc_conv_shape *s = &c->p->s;
  const lowp_data *d = c->p->algo_data;
  const size_t P = (size_t)(s->h_out * s->w_out), khw = (size_t)(s->k_h * s->k_w), wo = (size_t)s->w_out;
  const size_t cin = (size_t)s->cin_g, panel = kc * w;
  const int is_signed = c->p->dtype == DLCONV_S8;
  const int32_t zp = c->p->q8.x_zero_point;
  for (size_t l = 0; l < nq; l++) {
    const size_t q = q0 + l, n = q / P, pix = q % P;
    const int64_t oy = (int64_t)(pix / wo), ox = (int64_t)(pix % wo);
    int16_t *dl = dst + l / w * panel + l % w * 2;
    for (size_t t = k0 / cin; t * cin < k0 + kc && t < khw; t++) {
      const int64_t iy = oy * s->stride_h - s->pad_t + (int64_t)(t / (size_t)s->k_w) * s->dil_h;
      const int64_t ix = ox * s->stride_w - s->pad_l + (int64_t)(t % (size_t)s->k_w) * s->dil_w;
      if (iy < 0 || iy >= s->h_in || ix < 0 || ix >= s->w_in) continue;
      const uint8_t *src = (const uint8_t *)c->x +
                           ((n * (size_t)s->h_in + (size_t)iy) * (size_t)s->w_in + (size_t)ix) * (size_t)s->c_in +
                           g * cin;
      size_t ic = t * cin < k0 ? k0 - t * cin : 0;
      const size_t c_hi = DLC_MIN(cin, k0 + kc - t * cin);
      size_t kk = t * cin + ic - k0;
      if ((kk & 1) && ic < c_hi) {
        dl[(kk >> 1) * 2 * w + 1] = (int16_t)((is_signed ? (int32_t)(int8_t)src[ic] : (int32_t)src[ic]) - zp);
        ic++;
        kk++;
      }
      const size_t np = (c_hi - ic) / 2;
      if (np) d->q8f->pack_pairs_strided(np, src + ic, zp, is_signed, dl + (kk >> 1) * 2 * w, 2 * w);
      ic += 2 * np;
      kk += 2 * np;
      if (ic < c_hi) dl[(kk >> 1) * 2 * w] = (int16_t)((is_signed ? (int32_t)(int8_t)src[ic] : (int32_t)src[ic]) - zp);
    }
  }
}

/* Scalar part of an int8 NCHW run: lanes [lane, lane + cnt) of reduction row t (0 or 1) of a
   pair, from src at stride sw. */
static void q8_lanes(int16_t *dpair, size_t panel, size_t w, int t, size_t lane, size_t cnt, const uint8_t *src,
                     int64_t sw, int is_signed, int32_t zp) {
  if (!cnt) return;
  size_t li = lane % w;
  int16_t *dp = dpair + lane / w * panel + 2 * li + t;
  for (size_t i = 0; i < cnt; i++, src += sw) {
    *dp = (int16_t)((is_signed ? (int32_t)(int8_t)*src : (int32_t)*src) - zp);
    if (++li == w) {
      li = 0;
      dp += panel - 2 * (w - 1);
    } else {
      dp += 2;
    }
  }
}

/* int8 NCHW packing, two reduction rows at a time: where both rows of a pair read the same
   lanes from x at stride 1 (the inside of the image), the family's pack_pairs widens and
   interleaves them 16 lanes at a time; the borders, strided layers and a lone last row go
   lane by lane. */
static void pack_nchw_q8(const dlc_exec *c, size_t img, size_t g, size_t q0, size_t nq, size_t k0, size_t kc,
                         size_t w, int16_t *dst) {
  const dlc_conv_shape *s = &c->p->s;
  const lowp_data *d = c->p->algo_data;
  const size_t khw = (size_t)(s->k_h * s->k_w), wo = (size_t)s->w_out, panel = kc * w;
  const int is_signed = c->p->dtype == DLCONV_S8;
  const int32_t zp = c->p->q8.x_zero_point;
  const int64_t sw = s->stride_w;
  if (lanes_contiguous(s)) {
    const size_t plane = (size_t)(s->h_in * s->w_in);
    for (size_t kk = 0; kk < kc && k0 + kk < d->K; kk += 2) {
      const uint8_t *x0 = (const uint8_t *)c->x + (img * (size_t)s->c_in + g * (size_t)s->cin_g + k0 + kk) * plane + q0;
      int16_t *dpair = dst + (kk >> 1) * 2 * w;
      if (k0 + kk + 1 >= d->K) { /* a lone last row: its pair partner stays zero */
        q8_lanes(dpair, panel, w, 0, 0, nq, x0, 1, is_signed, zp);
        continue;
      }
      for (size_t l = 0; l < nq; l += w)
        d->q8f->pack_pairs(DLC_MIN(w, nq - l), x0 + l, x0 + plane + l, zp, is_signed, dpair + l / w * panel);
    }
    return;
  }
  for (size_t kk = 0; kk < kc && k0 + kk < d->K; kk += 2) {
    const uint8_t *plane[2] = {NULL, NULL};
    int64_t ky[2] = {0, 0}, kx[2] = {0, 0};
    for (int t = 0; t < 2; t++) {
      const size_t k = k0 + kk + (size_t)t;
      if (k >= d->K) continue;
      const size_t ic = g * (size_t)s->cin_g + k / khw, r = k % khw;
      ky[t] = (int64_t)(r / (size_t)s->k_w);
      kx[t] = (int64_t)(r % (size_t)s->k_w);
      plane[t] = (const uint8_t *)c->x + (img * (size_t)s->c_in + ic) * (size_t)(s->h_in * s->w_in);
    }
    int16_t *dpair = dst + (kk >> 1) * 2 * w;
    for (size_t l = 0, q = q0; l < nq;) {
      const int64_t oy = (int64_t)(q / wo), ox = (int64_t)(q % wo);
      const size_t run = DLC_MIN(nq - l, wo - (size_t)ox);
      size_t r0[2] = {0, 0}, r1[2] = {0, 0};
      const uint8_t *row[2] = {NULL, NULL};
      for (int t = 0; t < 2; t++) {
        const int64_t iy = oy * s->stride_h - s->pad_t + ky[t] * s->dil_h;
        if (!plane[t] || iy < 0 || iy >= s->h_in) continue;
        const int64_t ix0 = ox * sw - s->pad_l + kx[t] * s->dil_w;
        r0[t] = ix0 >= 0 ? 0 : (size_t)((-ix0 + sw - 1) / sw);
        r1[t] = ix0 >= s->w_in ? 0 : DLC_MIN(run, (size_t)((s->w_in - 1 - ix0) / sw + 1));
        if (r1[t] < r0[t]) r1[t] = r0[t];
        row[t] = plane[t] + (size_t)iy * (size_t)s->w_in + ix0; /* lane rr reads row[t][rr * sw] */
      }
      size_t a = DLC_MAX(r0[0], r0[1]), b = DLC_MIN(r1[0], r1[1]);
      if (sw != 1 || !row[0] || !row[1] || a >= b) a = b = 0;
      for (int t = 0; t < 2; t++) {
        if (!row[t]) continue;
        if (a == b) {
          q8_lanes(dpair, panel, w, t, l + r0[t], r1[t] - r0[t], row[t] + (int64_t)r0[t] * sw, sw, is_signed, zp);
        } else {
          q8_lanes(dpair, panel, w, t, l + r0[t], a - r0[t], row[t] + r0[t], 1, is_signed, zp);
          q8_lanes(dpair, panel, w, t, l + b, r1[t] - b, row[t] + b, 1, is_signed, zp);
        }
      }
      for (size_t rr = a; rr < b;) {
        const size_t lane = l + rr, li = lane % w, cnt = DLC_MIN(b - rr, w - li);
        d->q8f->pack_pairs(cnt, row[0] + rr, row[1] + rr, zp, is_signed, dpair + lane / w * panel + 2 * li);
        rr += cnt;
      }
      l += run;
      q += run;
    }
  }
}

/* Packs the activation operand of a job: lanes [q0, q0 + nq), rows k in [k0, k0 + kc), panels of
   width w; lanes past nq and k past K are zeros. */
static void pack_x(const dlc_exec *c, size_t img, size_t g, size_t q0, size_t nq, size_t k0, size_t kc, size_t w,
                   int16_t *dst) {
  const dlc_conv_shape *s = &c->p->s;
  const lowp_data *d = c->p->algo_data;
  const size_t panel = kc * w;
  const int q8 = d->q8;
  const size_t panels = dlc_div_up(nq, w);
  if (s->pad_t | s->pad_b | s->pad_l | s->pad_r) {
    memset(dst, 0, panels * panel * 2);
  } else {
    /* no padding: every tap of a real lane and row is written below; zero only the lanes past
       nq of the last panel and the rows past K (an odd K's pair partner) */
    if (nq % w)
      for (size_t kk = 0; kk < kc; kk++) {
        int16_t *r = dst + (panels - 1) * panel + (q8 ? (kk >> 1) * 2 * w + (kk & 1) : kk * w);
        for (size_t li = nq % w; li < w; li++) r[li * (q8 ? 2 : 1)] = 0;
      }
    for (size_t kk = d->K > k0 ? d->K - k0 : 0; kk < kc; kk++)
      for (size_t pi = 0; pi < panels; pi++) {
        int16_t *r = dst + pi * panel + (q8 ? (kk >> 1) * 2 * w + (kk & 1) : kk * w);
        for (size_t li = 0; li < w; li++) r[li * (q8 ? 2 : 1)] = 0;
      }
  }
  if (!d->nhwc) {
    if (!q8) pack_nchw_f16(c, img, g, q0, nq, k0, kc, w, (uint16_t *)dst, NULL);
    else pack_nchw_q8(c, img, g, q0, nq, k0, kc, w, dst);
  } else {
    if (!q8) pack_nhwc_f16(c, g, q0, nq, k0, kc, w, (uint16_t *)dst);
    else pack_nhwc_q8(c, g, q0, nq, k0, kc, w, dst);
  }
}

/* b32: the B panels of pixels [q0, q0 + nq) of image img, rows [k0, k0 + kc), as floats (lanes
   past nq zero): 1 x 1 layers one family call per panel, others through the im2col gather. */
static void pack_nchw_f16_b32(const dlc_exec *c, size_t img, size_t g, size_t q0, size_t nq, size_t k0, size_t kc,
                              float *dst) {
  const dlc_conv_shape *s = &c->p->s;
  const lowp_data *d = c->p->algo_data;
  const size_t w = d->nr, plane = (size_t)(s->h_in * s->w_in);
  if (!lanes_contiguous(s)) { /* the im2col gather, widened run by run; taps outside x stay 0 */
    memset(dst, 0, dlc_div_up(nq, w) * kc * w * sizeof(float));
    pack_nchw_f16(c, img, g, q0, nq, k0, kc, w, NULL, dst);
    return;
  }
  const uint16_t *x0 = (const uint16_t *)c->x + (img * (size_t)s->c_in + g * (size_t)s->cin_g + k0) * plane + q0;
  for (size_t l = 0; l < nq; l += w) d->f16->pack_cols_f32(kc, DLC_MIN(w, nq - l), x0 + l, plane, dst + l / w * kc * w);
}

static void run_job(const dlc_exec *c, size_t o, size_t mb, size_t nb, char *slice) {
  const dlconv_plan *p = c->p;
  const dlc_conv_shape *s = &p->s;
  const lowp_data *d = c->p->algo_data;
  const size_t P = (size_t)(s->h_out * s->w_out), cog = (size_t)s->cout_g;
  const size_t g = d->nhwc ? o : o % (size_t)s->groups, img = d->nhwc ? 0 : o / (size_t)s->groups;
  const size_t m0 = mb * d->mc, mlen = DLC_MIN(d->mc, d->M - m0);
  const size_t n0 = nb * d->nc, nlen = DLC_MIN(d->nc, d->N - n0);
  int16_t *xpack = (int16_t *)slice;
  void *acc = slice + dlc_round_up(d->xpack_elems * (d->b32 ? 4 : 2), DLC_ALIGN);
  const size_t ldc = d->nc;
  const int16_t *wgroup = d->wpack + g * d->wpanels * d->Kp * d->ww;

  float *a32 = d->a32_bytes ? (float *)(slice + d->ws_slice - d->a32_bytes) : NULL;
  const int fused = d->b32 && d->b32->f16_out && !d->nhwc;
  for (size_t pc = 0; pc < d->Kp; pc += d->kc) {
    const size_t kc = DLC_MIN(d->kc, d->Kp - pc);
    /* activations: the N block's pixels as B panels (NCHW) or the M block's as A panels (NHWC) */
    if (d->nhwc)
      pack_x(c, 0, g, m0, mlen, pc, kc, d->mr, xpack);
    else if (d->b32)
      pack_nchw_f16_b32(c, img, g, n0, nlen, pc, kc, (float *)xpack);
    else
      pack_x(c, img, g, n0, nlen, pc, kc, d->nr, xpack);
    for (size_t ir = 0; ir < mlen; ir += d->mr) {
      const size_t m = DLC_MIN(d->mr, mlen - ir);
      const int16_t *a = d->nhwc ? xpack + ir / d->mr * kc * d->mr : wgroup + (m0 + ir) / d->mr * d->Kp * d->mr + pc * d->mr;
      if (a32) d->f16->widen_a(kc, (const uint16_t *)a, a32); /* once for all the B panels below */
      /* b32 with a kernel that stores binary16 (NCHW): the last chunk's tiles go to y from the
         kernel's registers, with bias and clamp, instead of through acc and the store below
         (the store was 16% of MobileNetV2's 16x112x112>96 layer) */
      dlc_f32_gemm_epilogue ep = {NULL, 0, s->out_min, s->out_max, NULL, P};
      const int to_y = fused && pc + kc == d->Kp;
      if (to_y) {
        ep.bias = p->bias + g * cog + m0 + ir;
        ep.yh = (uint16_t *)c->y + (img * (size_t)s->c_out + g * cog + m0 + ir) * P + n0;
      }
      for (size_t jr = 0; jr < nlen; jr += d->nr) {
        const size_t n = DLC_MIN(d->nr, nlen - jr);
        const int16_t *b = d->nhwc ? wgroup + (n0 + jr) / d->nr * d->Kp * d->nr + pc * d->nr : xpack + jr / d->nr * kc * d->nr;
        if (to_y) {
          d->b32->ukernel(m, n, kc, a32, (const float *)xpack + jr / d->nr * kc * d->nr, (float *)acc + ir * ldc + jr,
                          ldc, pc > 0, &ep);
          ep.yh += n;
        } else if (d->b32)
          d->b32->ukernel(m, n, kc, a32, (const float *)xpack + jr / d->nr * kc * d->nr, (float *)acc + ir * ldc + jr,
                          ldc, pc > 0, NULL);
        else if (d->q8)
          d->q8f->ukernel(m, n, kc, a, b, (int32_t *)acc + ir * ldc + jr, ldc, pc > 0);
        else if (a32)
          d->f16->ukernel_a32(m, n, kc, a32, (const uint16_t *)b, (float *)acc + ir * ldc + jr, ldc, pc > 0);
        else
          d->f16->ukernel(m, n, kc, (const uint16_t *)a, (const uint16_t *)b, (float *)acc + ir * ldc + jr, ldc, pc > 0);
      }
    }
  }

  /* finished rows to y */
  if (fused) return;
  const size_t es = d->q8 ? 1 : 2;
  for (size_t i = 0; i < mlen; i++) {
    size_t c0, yoff;
    if (d->nhwc) {
      c0 = g * cog + n0;
      yoff = (m0 + i) * (size_t)s->c_out + c0;
    } else {
      c0 = g * cog + m0 + i;
      yoff = (img * (size_t)s->c_out + c0) * P + n0;
    }
    char *yrow = (char *)c->y + yoff * es;
    if (d->q8)
      d->q8f->store(nlen, (const int32_t *)acc + i * ldc, &p->q8, c0, d->nhwc, yrow);
    else
      d->f16->store(nlen, (const float *)acc + i * ldc, p->bias, c0, d->nhwc, s->out_min, s->out_max, (uint16_t *)yrow);
  }
}

static void lowp_task(void *arg, size_t t) {
  const dlc_exec *c = arg;
  const lowp_data *d = c->p->algo_data;
  size_t begin, end;
  dlc_split_range(d->njobs, d->ntasks, t, &begin, &end);
  char *slice = c->ws + t * d->ws_slice;
  for (size_t j = begin; j < end; j++) {
    size_t nb = j % d->nblocks, mb = j / d->nblocks % d->mblocks, o = j / d->nblocks / d->mblocks;
    run_job(c, o, mb, nb, slice);
  }
}

const dlc_impl_ops dlc_gemm_lowp_ops = {
    .plan = lowp_plan,
    .task = lowp_task,
    .destroy = lowp_destroy,
};
