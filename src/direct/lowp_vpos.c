/* lowp_vpos.c - see lowp_vpos.h. */
#include "lowp_vpos.h"

#include <string.h>

#include "../ukernel/config.h"
#include "../core/util.h"

dlconv_status dlc_q8_d4_params(const dlconv_plan *p, const void *w, dlc_q8_params *q4, int *ok) {
  const dlc_conv_shape *s = &p->s;
  const size_t co = (size_t)s->c_out, per_oc = (size_t)(s->cin_g * s->k_h * s->k_w);
  const int32_t zu = dlc_q8_d4_zu(p);
  *ok = 0;
  *q4 = p->q8;
  q4->bias = dlc_malloc(co * sizeof(int32_t));
  q4->mult_f = dlc_malloc(co * sizeof(float));
  if (!q4->bias || !q4->mult_f) {
    dlc_q8_d4_params_free(q4);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning int8 weights");
  }
  for (size_t oc = 0; oc < co; oc++) {
    int64_t sum = 0;
    for (size_t k = 0; k < per_oc; k++) sum += ((const int8_t *)w)[oc * per_oc + k];
    const int64_t b = (int64_t)p->q8.bias[oc] - (int64_t)zu * sum;
    if (b < INT32_MIN || b > INT32_MAX) { /* a bias at the edge of s32: the s16 pairs take it as is */
      dlc_q8_d4_params_free(q4);
      return DLCONV_OK;
    }
    q4->bias[oc] = (int32_t)b;
  }
  float *mult_f = q4->mult_f;
  dlc_q8_derive(q4, (int64_t)per_oc * 255 * 128, co, mult_f);
  if (!q4->mult_f) dlc_free(mult_f); /* no fp32 screen: q4 owns no multipliers */
  *ok = 1;
  return DLCONV_OK;
}

void dlc_q8_d4_params_free(dlc_q8_params *q4) {
  dlc_free(q4->bias);
  dlc_free(q4->mult_f);
  q4->bias = NULL;
  q4->mult_f = NULL;
}

/* int8 on the q8_d4 family where the zero point's correction fits the s32 bias (v->d4 says
   whether it is on); only running out of memory fails. */
static dlconv_status plan_d4(dlc_lowp_vpos *v, const dlconv_plan *p, const void *w) {
  const dlc_conv_shape *s = &p->s;
  int ok;
  const dlconv_status st = dlc_q8_d4_params(p, w, &v->q4, &ok);
  if (st != DLCONV_OK || !ok) return st;
  v->d4 = 1;
  v->zu = dlc_q8_d4_zu(p);
  v->flip = dlc_q8_d4_flip(p);
  const size_t zbytes = 2 * (size_t)(s->w_in + s->pad_l + s->pad_r) + 64;
  v->zrow = dlc_malloc(zbytes);
  if (!v->zrow) {
    dlc_q8_d4_params_free(&v->q4);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning int8 weights");
  }
  memset(v->zrow, v->zu ^ v->flip, zbytes);
  return DLCONV_OK;
}

dlconv_status dlc_lowp_vpos_plan(dlc_lowp_vpos *v, const dlconv_plan *p, const void *w, const char *algo) {
  const dlc_conv_shape *s = &p->s;
  const int q8 = p->dtype != DLCONV_F16;
  memset(v, 0, sizeof *v);
  if (q8 ? !p->kernels->q8_gemm || !p->kernels->q8_gemm->ukernel_ib
         : !p->kernels->f16_gemm || !p->kernels->f16_gemm->ukernel_ib)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "%s has no %s kernel for isa %s", algo, q8 ? "int8" : "F16",
                    p->kernels->name);
  const size_t taps = (size_t)(s->k_h * s->k_w), cin = (size_t)s->cin_g;
  if (q8 && cin * taps > DLC_Q8_MAX_K)
    return dlc_fail(DLCONV_ERR_UNSUPPORTED,
                    "int8 reduction length (c_in/groups)*k_h*k_w = %zu could overflow the s32 accumulators "
                    "(at most %zu)", cin * taps, DLC_Q8_MAX_K);
  /* the stride phases the taps read (1x1 stride 2: one of four) */
  const int64_t sh = s->stride_h, sw = s->stride_w;
  for (int64_t ky = 0; ky < s->k_h; ky++)
    for (int64_t kx = 0; kx < s->k_w; kx++) {
      const int py = (int)(ky * s->dil_h % sh), px = (int)(kx * s->dil_w % sw);
      size_t i = 0;
      while (i < v->nslot && (v->slot_py[i] != py || v->slot_px[i] != px)) i++;
      if (i < v->nslot) continue;
      if (v->nslot == DLC_LOWP_VPOS_MAX_PHASES)
        return dlc_fail(DLCONV_ERR_UNSUPPORTED, "%s: more than %d stride phases", algo, DLC_LOWP_VPOS_MAX_PHASES);
      v->slot_py[v->nslot] = py;
      v->slot_px[v->nslot] = px;
      v->nslot++;
    }
  v->q8 = q8;
  v->u = q8 ? 2 : 1;
  v->taps = taps;
  if (q8 && p->kernels->q8_d4) {
    dlconv_status st4 = plan_d4(v, p, w);
    if (st4 != DLCONV_OK) return st4;
  }
  const size_t qk = v->d4 ? 4 : q8 ? 2 : 1; /* channels per unit */
  v->cpg = dlc_div_up(cin, qk);
  v->kunits = v->cpg * taps;
  v->wq = dlc_div_up((size_t)(s->w_in + s->pad_l + s->pad_r), (size_t)sw);
  v->mr = v->d4 ? p->kernels->q8_d4->mr : q8 ? p->kernels->q8_gemm->mr : p->kernels->f16_gemm->mr;
  v->nr = v->d4 ? p->kernels->q8_d4->nr : q8 ? p->kernels->q8_gemm->nr : p->kernels->f16_gemm->nr;
  /* K chunks of 128 units (int8) or 256 rows (F16): with 256 positions per N block the runs a
     chunk reads stay in L2, as im2col + GEMM's packed 128 KB block did */
  v->kcu = dlc_balanced_block(v->kunits, q8 ? 128 : 256, 1);

  return dlc_lowp_vpos_pack(v, p, w, v->mr, algo);
}

dlconv_status dlc_lowp_vpos_pack(dlc_lowp_vpos *v, const dlconv_plan *p, const void *w, size_t mr, const char *algo) {
  const dlc_conv_shape *s = &p->s;
  const size_t taps = v->taps, cin = (size_t)s->cin_g, groups = (size_t)s->groups, cog = (size_t)s->cout_g;
  const int q8 = v->q8;
  const size_t qk = v->d4 ? 4 : q8 ? 2 : 1; /* channels per unit */
  dlc_free(v->wpack);
  v->mr = mr;
  v->wpanels = dlc_div_up(cog, v->mr);
  const size_t per_group = v->wpanels * v->kunits * v->mr * v->u;
  v->wpack_bytes = groups * per_group * 2;
  v->wpack = dlc_calloc(v->wpack_bytes);
  if (!v->wpack) {
    dlc_lowp_vpos_free(v);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory packing %s weights", algo);
  }
  /* reduction unit ku = cu * taps + tap: a channel unit's taps are consecutive, so the runs a
     K chunk reads stay within a few planes */
  for (size_t g = 0; g < groups; g++)
    for (size_t oc = 0; oc < cog; oc++)
      for (size_t ic = 0; ic < cin; ic++)
        for (size_t t = 0; t < taps; t++) {
          const size_t src = ((g * cog + oc) * cin + ic) * taps + t;
          const size_t ku = ic / qk * taps + t;
          int16_t *panel = v->wpack + g * per_group + oc / v->mr * v->kunits * v->mr * v->u;
          if (v->d4)
            ((int8_t *)panel)[ku * 4 * v->mr + 4 * (oc % v->mr) + ic % 4] = ((const int8_t *)w)[src];
          else if (q8)
            panel[ku * 2 * v->mr + 2 * (oc % v->mr) + ic % 2] = ((const int8_t *)w)[src];
          else
            memcpy(panel + ku * v->mr + oc % v->mr, (const uint16_t *)w + src, 2);
        }
  return DLCONV_OK;
}

void dlc_lowp_vpos_free(dlc_lowp_vpos *v) {
  dlc_free(v->wpack);
  v->wpack = NULL;
  dlc_free(v->zrow);
  v->zrow = NULL;
  dlc_q8_d4_params_free(&v->q4);
}

const char *dlc_lowp_vpos_kernel_name(const dlc_lowp_vpos *v, const dlconv_plan *p) {
  return v->d4 ? p->kernels->q8_d4->name : v->q8 ? p->kernels->q8_gemm->name : p->kernels->f16_gemm->name;
}

void dlc_lowp_vpos_offsets(const dlc_lowp_vpos *v, const dlc_conv_shape *s, size_t planeq, ptrdiff_t *boff) {
  const size_t sh = (size_t)s->stride_h, sw = (size_t)s->stride_w;
  for (size_t cu = 0; cu < v->cpg; cu++)
    for (size_t t = 0; t < v->taps; t++) {
      const size_t ky = t / (size_t)s->k_w, kx = t % (size_t)s->k_w;
      const size_t dy = ky * (size_t)s->dil_h, dx = kx * (size_t)s->dil_w;
      size_t slot = 0;
      while ((size_t)v->slot_py[slot] != dy % sh || (size_t)v->slot_px[slot] != dx % sw) slot++;
      const size_t toff = dy / sh * v->wq + dx / sw;
      boff[cu * v->taps + t] = (ptrdiff_t)(((cu * v->nslot + slot) * planeq + toff) * v->u);
    }
}

/* The stride-2 copy of channel pairs (ResNet's strided layers) with a constant stride, which the
   compiler turns into vector deinterleaves; the general loop stays scalar. */
static void pairs_stride2(size_t n, const uint8_t *a, const uint8_t *b, int32_t zp, int is_signed, int16_t *o) {
  if (is_signed) {
    const int8_t *sa = (const int8_t *)a, *sb = (const int8_t *)b;
    for (size_t i = 0; i < n; i++) {
      o[2 * i] = (int16_t)((int32_t)sa[2 * i] - zp);
      o[2 * i + 1] = (int16_t)((int32_t)sb[2 * i] - zp);
    }
    return;
  }
  for (size_t i = 0; i < n; i++) {
    o[2 * i] = (int16_t)((int32_t)a[2 * i] - zp);
    o[2 * i + 1] = (int16_t)((int32_t)b[2 * i] - zp);
  }
}

/* The columns [*xlo, *xhi) of a sub-plane row whose padded column xq * sw + px lies inside x. */
static void inside_columns(const dlc_conv_shape *s, size_t wq, int64_t px, size_t *xlo, size_t *xhi) {
  const int64_t sw = s->stride_w, first = s->pad_l - px, last = s->w_in - 1 + s->pad_l - px;
  *xlo = first <= 0 ? 0 : DLC_MIN(wq, (size_t)((first + sw - 1) / sw));
  *xhi = last < 0 ? 0 : DLC_MIN(wq, (size_t)(last / sw) + 1);
}

/* d4: n units of the channels [ic0, ic0 + 4) of one input row (first at src, the next ones a plane
   apart, nch of them real: channels past the group's end take the padding byte) at column
   stride sw, flipped to u8. */
static void copy_quads(const dlconv_plan *p, const dlc_lowp_vpos *v, const uint8_t *src, size_t plane, size_t nch,
                       size_t n, int64_t sw, uint8_t *o) {
  const uint8_t *r[4];
  /* channels past the group's end read a row of the padding byte (before the flip) */
  for (size_t t = 0; t < 4; t++) r[t] = t < nch ? src + t * plane : v->zrow;
  if (sw <= 2) {
    p->kernels->q8_d4->pack_quads(n, r[0], r[1], r[2], r[3], (size_t)sw, v->flip, o);
    return;
  }
  for (size_t t = 0; t < 4; t++) {
    uint8_t *ot = o + t;
    if (t >= nch) {
      for (size_t i = 0; i < n; i++) ot[4 * i] = v->zu;
    } else {
      for (size_t i = 0; i < n; i++) ot[4 * i] = r[t][(int64_t)i * sw] ^ v->flip;
    }
  }
}

void dlc_lowp_vpos_copy_row_nchw(const dlconv_plan *p, const dlc_lowp_vpos *v, const void *x, size_t img, size_t g,
                                 size_t cu, size_t slot, size_t yq, int16_t *dst) {
  const dlc_conv_shape *s = &p->s;
  const int64_t sh = s->stride_h, sw = s->stride_w, py = v->slot_py[slot], px = v->slot_px[slot];
  const size_t wq = v->wq, u = v->u;
  size_t xlo, xhi;
  inside_columns(s, wq, px, &xlo, &xhi);
  const int64_t iy = (int64_t)yq * sh + py - s->pad_t;
  const int fill = v->d4 ? v->zu : 0; /* padding: x's zero point (d4 bytes) or 0 */
  if (iy < 0 || iy >= s->h_in || xlo >= xhi) {
    memset(dst, fill, wq * u * 2);
    return;
  }
  if (xlo) memset(dst, fill, xlo * u * 2);
  if (xhi < wq) memset(dst + xhi * u, fill, (wq - xhi) * u * 2);
  const size_t ic0 = g * (size_t)s->cin_g + (v->d4 ? 4 * cu : v->q8 ? 2 * cu : cu);
  const size_t plane_in = (size_t)(s->h_in * s->w_in);
  const int64_t ix0 = (int64_t)xlo * sw + px - s->pad_l;
  const size_t n = xhi - xlo, off = (img * (size_t)s->c_in + ic0) * plane_in + (size_t)iy * (size_t)s->w_in;
  if (!v->q8) {
    const uint16_t *src = (const uint16_t *)x + off + ix0;
    uint16_t *o = (uint16_t *)dst + xlo;
    if (sw == 1)
      memcpy(o, src, n * 2);
    else if (sw == 2) /* a constant stride: vector deinterleaves */
      for (size_t i = 0; i < n; i++) o[i] = src[2 * i];
    else
      for (size_t i = 0; i < n; i++) o[i] = src[(int64_t)i * sw];
    return;
  }
  if (v->d4) {
    copy_quads(p, v, (const uint8_t *)x + off + ix0, plane_in, (size_t)s->cin_g - 4 * cu, n, sw,
               (uint8_t *)(dst + 2 * xlo));
    return;
  }
  const int is_signed = p->dtype == DLCONV_S8;
  const int32_t zp = p->q8.x_zero_point;
  const int pair2 = 2 * cu + 1 < (size_t)s->cin_g;
  const uint8_t *a = (const uint8_t *)x + off + ix0, *b = pair2 ? a + plane_in : NULL;
  int16_t *o = dst + 2 * xlo;
  if (sw == 1 && b) {
    p->kernels->q8_gemm->pack_pairs(n, a, b, zp, is_signed, o);
    return;
  }
  if (sw == 2 && b) {
    pairs_stride2(n, a, b, zp, is_signed, o);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    const int64_t at = (int64_t)i * sw;
    o[2 * i] = (int16_t)((is_signed ? (int32_t)(int8_t)a[at] : (int32_t)a[at]) - zp);
    o[2 * i + 1] = b ? (int16_t)((is_signed ? (int32_t)(int8_t)b[at] : (int32_t)b[at]) - zp) : 0;
  }
}

/* n units of the padding byte: the one or two units between rows inline (a memset call each cost
   as much as packing a row of 8 x 8 layers' sub-planes), longer runs by memset */
static inline void fill_units(uint8_t *o, uint8_t zu, size_t n) {
  if (n > 4) {
    memset(o, zu, 4 * n);
    return;
  }
  const uint32_t z4 = 0x01010101u * zu;
  for (size_t i = 0; i < n; i++) memcpy(o + 4 * i, &z4, 4);
}

int dlc_lowp_vpos_copy_plane_d4(const dlconv_plan *p, const dlc_lowp_vpos *v, const void *x, size_t img, size_t g,
                                size_t cu, size_t slot, size_t y0, size_t y1, int16_t *dst) {
  const dlc_conv_shape *s = &p->s;
  if (!v->d4 || s->stride_w > 2) return 0;
  const size_t plane = (size_t)(s->h_in * s->w_in), nch = DLC_MIN((size_t)4, (size_t)s->cin_g - 4 * cu);
  const uint8_t *r0 = (const uint8_t *)x + (img * (size_t)s->c_in + g * (size_t)s->cin_g + 4 * cu) * plane;
  const dlc_q8d4_pack_quads_fn pack = p->kernels->q8_d4->pack_quads;
  uint8_t *o = (uint8_t *)dst;
  const size_t wq = v->wq, wi = (size_t)s->w_in;
  if (s->stride_h == 1 && s->stride_w == 1 && !s->pad_t && !s->pad_b && !s->pad_l && !s->pad_r && nch == 4) {
    const size_t off = y0 * wi; /* wq == w_in: the rows are one run */
    pack((y1 - y0) * wi, r0 + off, r0 + plane + off, r0 + 2 * plane + off, r0 + 3 * plane + off, 1, v->flip, o + 4 * off);
    return 1;
  }
  /* each input row the phase reads is one pack; the padding between two such rows (a row's right
     columns, whole padding rows, the next row's left columns) is one run of units, filled once
     (a call per row through the general copy, with its clipping, cost as much as the packing on
     32 x 32 planes; at stride 2 the copy took half of a grouped layer's time) */
  const int64_t sh = s->stride_h, sw = s->stride_w, py = v->slot_py[slot], px = v->slot_px[slot];
  size_t xlo, xhi;
  inside_columns(s, wq, px, &xlo, &xhi);
  const int64_t ix0 = (int64_t)xlo * sw + px - s->pad_l;
  size_t from = y0 * wq; /* the first unit not yet written */
  const dlc_q8d4_pack_plane_fn pack_plane = p->kernels->q8_d4->pack_plane;
  if (xlo < xhi && nch == 4 && pack_plane) {
    /* the rows the phase reads in one call (a contiguous plane as one run: 32 x 32 3x3 u8, the copy
       had taken 8% of the layer in its calls per row), the padding around and between them filled */
    size_t ylo = 0, yhi = 0;
    for (size_t yq = y0; yq < y1; yq++) {
      const int64_t iy = (int64_t)yq * sh + py - s->pad_t;
      if (iy < 0 || iy >= s->h_in) continue;
      if (yhi == 0) ylo = yq;
      yhi = yq + 1;
    }
    if (yhi > ylo) {
      const size_t iy0 = (size_t)((int64_t)ylo * sh + py - s->pad_t);
      const uint8_t *r = r0 + iy0 * wi + (size_t)ix0;
      fill_units(o + 4 * from, v->zu, ylo * wq + xlo - from);
      pack_plane(yhi - ylo, xhi - xlo, r, r + plane, r + 2 * plane, r + 3 * plane, (size_t)sh * wi, (size_t)sw, v->flip,
                 o + 4 * (ylo * wq + xlo), wq);
      for (size_t yq = ylo; yq + 1 < yhi; yq++) fill_units(o + 4 * (yq * wq + xhi), v->zu, wq - (xhi - xlo));
      from = (yhi - 1) * wq + xhi;
    }
  } else if (xlo < xhi)
    for (size_t yq = y0; yq < y1; yq++) {
      const int64_t iy = (int64_t)yq * sh + py - s->pad_t;
      if (iy < 0 || iy >= s->h_in) continue;
      const size_t at = yq * wq + xlo;
      fill_units(o + 4 * from, v->zu, at - from);
      const uint8_t *r[4];
      for (size_t t = 0; t < 4; t++) r[t] = t < nch ? r0 + t * plane + (size_t)iy * wi + (size_t)ix0 : v->zrow;
      pack(xhi - xlo, r[0], r[1], r[2], r[3], (size_t)sw, v->flip, o + 4 * at);
      from = yq * wq + xhi;
    }
  fill_units(o + 4 * from, v->zu, y1 * wq - from);
  return 1;
}

void dlc_lowp_vpos_copy_rows_nhwc(const dlconv_plan *p, const dlc_lowp_vpos *v, const void *x, size_t img, size_t g,
                                  size_t slot, size_t yq, int16_t *dst, size_t cu_stride) {
  const dlc_conv_shape *s = &p->s;
  const int64_t sw = s->stride_w, px = v->slot_px[slot];
  const int64_t iy = (int64_t)yq * s->stride_h + v->slot_py[slot] - s->pad_t;
  const size_t wq = v->wq, u = v->u, cpg = v->cpg, cin = (size_t)s->cin_g;
  size_t xlo, xhi;
  inside_columns(s, wq, px, &xlo, &xhi);
  if (iy < 0 || iy >= s->h_in) xlo = xhi = wq;
  const int fill = v->d4 ? v->zu : 0;
  for (size_t cu = 0; cu < cpg; cu++) {
    if (xlo) memset(dst + cu * cu_stride, fill, xlo * u * 2);
    if (xhi < wq) memset(dst + cu * cu_stride + xhi * u, fill, (wq - xhi) * u * 2);
  }
  if (xlo >= xhi) return;
  const size_t es = v->q8 ? 1 : 2, pix = (size_t)s->c_in * es;
  const char *row = (const char *)x + ((img * (size_t)s->h_in + (size_t)iy) * (size_t)s->w_in) * pix + g * cin * es;
  const int is_signed = p->dtype == DLCONV_S8;
  const int32_t zp = p->q8.x_zero_point;
  for (size_t xq = xlo; xq < xhi; xq++) {
    const char *src = row + (size_t)((int64_t)xq * sw + px - s->pad_l) * pix;
    int16_t *o = dst + xq * u;
    if (!v->q8) {
      for (size_t c = 0; c < cin; c++) memcpy(o + c * cu_stride, src + 2 * c, 2);
      continue;
    }
    if (v->d4) { /* a pixel's channels are units already: 4 bytes each, flipped */
      const uint32_t flip4 = 0x01010101u * v->flip;
      for (size_t cu = 0; cu < cin / 4; cu++) {
        uint32_t q;
        memcpy(&q, src + 4 * cu, 4);
        q ^= flip4;
        memcpy(o + cu * cu_stride, &q, 4);
      }
      if (cin % 4) {
        uint8_t *last = (uint8_t *)(o + (cpg - 1) * cu_stride);
        for (size_t t = 0; t < 4; t++) last[t] = t < cin % 4 ? (uint8_t)src[cin / 4 * 4 + t] ^ v->flip : v->zu;
      }
      continue;
    }
    if (cin <= 8) { /* a first layer's few channels: a call per pixel would cost more */
      for (size_t ch = 0; ch < cin; ch++) {
        const int32_t xv = is_signed ? (int32_t)((const int8_t *)src)[ch] : (int32_t)((const uint8_t *)src)[ch];
        o[ch / 2 * cu_stride + ch % 2] = (int16_t)(xv - zp);
      }
      if (cin % 2) o[(cpg - 1) * cu_stride + 1] = 0;
      continue;
    }
    /* a pixel's channels are pairs already: a strided run of them */
    p->kernels->q8_gemm->pack_pairs_strided(cin / 2, src, zp, is_signed, o, cu_stride);
    if (cin % 2) {
      const int32_t last =
          is_signed ? (int32_t)((const int8_t *)src)[cin - 1] : (int32_t)((const uint8_t *)src)[cin - 1];
      o[(cpg - 1) * cu_stride] = (int16_t)(last - zp);
      o[(cpg - 1) * cu_stride + 1] = 0;
    }
  }
}

void dlc_lowp_vpos_panel(const dlconv_plan *p, const dlc_lowp_vpos *v, size_t g, size_t oc0, size_t m, size_t pc,
                         size_t kcu, const int16_t *b, const ptrdiff_t *boff, int packed, size_t n, void *acc,
                         size_t ldc, float *a32) {
  const size_t mr = v->mr, nr = v->nr, u = v->u;
  const int16_t *a = v->wpack + ((g * v->wpanels + oc0 / mr) * v->kunits + pc) * mr * u;
  const int accumulate = pc > 0;
  if (!v->q8) {
    const dlc_f16_gemm_family *f = p->kernels->f16_gemm;
    if (f->widen_a)
      f->widen_a(kcu, (const uint16_t *)a, a32);
    else
      for (size_t t = 0; t < kcu * mr; t++) a32[t] = dlc_f16_to_f32(((const uint16_t *)a)[t]);
    float *c = acc;
    for (size_t jr = 0; jr < n; jr += nr) {
      if (packed)
        f->ukernel_a32(m, DLC_MIN(nr, n - jr), kcu, a32, (const uint16_t *)b + jr * kcu, c + jr, ldc, accumulate);
      else
        f->ukernel_ib(m, kcu, a32, (const uint16_t *)b + jr, boff + pc, c + jr, ldc, accumulate);
    }
    return;
  }
  int32_t *c = acc;
  if (v->d4) {
    const dlc_q8d4_gemm_family *f = p->kernels->q8_d4;
    for (size_t jr = 0; jr < n; jr += nr) {
      if (packed)
        f->ukernel(m, DLC_MIN(nr, n - jr), 4 * kcu, (const int8_t *)a, (const uint8_t *)(b + jr * kcu * 2), c + jr,
                   ldc, accumulate);
      else
        f->ukernel_ib(m, 4 * kcu, (const int8_t *)a, (const uint8_t *)(b + jr * 2), boff + pc, c + jr, ldc,
                      accumulate);
    }
    return;
  }
  const dlc_q8_gemm_family *f = p->kernels->q8_gemm;
  for (size_t jr = 0; jr < n; jr += nr) {
    if (packed)
      f->ukernel(m, DLC_MIN(nr, n - jr), 2 * kcu, a, b + jr * kcu * 2, c + jr, ldc, accumulate);
    else
      f->ukernel_ib(m, 2 * kcu, a, b + jr * 2, boff + pc, c + jr, ldc, accumulate);
  }
}

void dlc_lowp_vpos_panel_q(const dlconv_plan *p, const dlc_lowp_vpos *v, size_t g, size_t oc0, size_t m, size_t pc,
                           size_t kcu, const int16_t *b, const ptrdiff_t *boff, int packed, size_t n, const int32_t *acc,
                           size_t ldc, const dlc_q8_params *q, size_t qc0, uint8_t *y, size_t ldy) {
  const dlc_q8d4_gemm_family *f = p->kernels->q8_d4;
  const size_t mr = v->mr, nr = v->nr, u = v->u;
  const int8_t *a = (const int8_t *)(v->wpack + ((g * v->wpanels + oc0 / mr) * v->kunits + pc) * mr * u);
  for (size_t jr = 0; jr < n; jr += nr)
    f->ukernel_q(m, DLC_MIN(nr, n - jr), 4 * kcu, a, (const uint8_t *)(b + (packed ? jr * kcu * 2 : jr * 2)),
                 packed ? NULL : boff + pc, acc + jr, ldc, pc > 0, q, qc0, y + jr, ldy);
}
