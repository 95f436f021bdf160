/* lowp_ind.c - see lowp_ind.h. */
#include "lowp_ind.h"

#include <string.h>

#include "../core/util.h"

int dlc_nhwc_ind_row_mode(const dlc_conv_shape *s) {
  return s->cin_g % 4 != 0 && s->groups == 1 && s->dil_w == 1 && s->k_w * s->c_in <= DLC_IND_ROW_MAX_BYTES &&
         s->k_h <= DLC_IND_ROW_MAX_TAPS;
}

dlconv_status dlc_nhwc_ind_init(dlc_nhwc_ind *v, const dlconv_plan *p, int rows, size_t need, size_t mr) {
  const dlc_conv_shape *s = &p->s;
  const size_t kw = (size_t)s->k_w, row_bytes = (size_t)(s->w_in * s->c_in);
  memset(v, 0, sizeof *v);
  v->rows = rows;
  v->ntaps = rows ? (size_t)s->k_h : (size_t)(s->k_h * s->k_w);
  v->mr = mr;
  v->cin = (size_t)s->cin_g;
  v->need = need;
  v->zp = (uint8_t)p->q8.x_zero_point;
  for (size_t t = 0; t < v->ntaps; t++)
    v->toff[t] = rows ? (ptrdiff_t)(t * (size_t)s->dil_h * row_bytes)
                      : (ptrdiff_t)(t / kw * (size_t)s->dil_h * row_bytes + t % kw * (size_t)(s->dil_w * s->c_in));
  v->zrow = dlc_malloc(dlc_round_up(need, 64));
  if (!v->zrow) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning int8 NHWC pointers");
  memset(v->zrow, v->zp, dlc_round_up(need, 64));
  return DLCONV_OK;
}

void dlc_nhwc_ind_free(dlc_nhwc_ind *v) {
  dlc_free(v->zrow);
  v->zrow = NULL;
}

/* Row mode: a run the kernel may not read in place, copied: x where the window is inside the
   row, the zero point's byte elsewhere and in the kernel's tail. */
static const uint8_t *copy_run(const dlc_nhwc_ind *v, const dlc_conv_shape *s, const uint8_t *row, int64_t ix0,
                               uint8_t *dst) {
  const size_t cin = (size_t)s->c_in;
  memset(dst, v->zp, v->need);
  for (int64_t kx = 0; kx < s->k_w; kx++) {
    const int64_t ix = ix0 + kx;
    if (ix >= 0 && ix < s->w_in) memcpy(dst + (size_t)kx * cin, row + (size_t)ix * cin, cin);
  }
  return dst;
}

/* The pixel's position steps along the row (a division per pixel was a tenth of a 1 x 1 layer's
   time); a window inside the image takes its taps' fixed offsets. */
void dlc_nhwc_ind_build(const dlc_nhwc_ind *v, const dlc_conv_shape *s, const uint8_t *x, size_t g, size_t q0,
                        size_t m, const uint8_t **ind, uint8_t *scratch) {
  const size_t P = (size_t)(s->h_out * s->w_out), wo = (size_t)s->w_out, cin_all = (size_t)s->c_in;
  const size_t img_bytes = (size_t)(s->h_in * s->w_in) * cin_all;
  if (s->k_h == 1 && s->k_w == 1 && s->stride_h == 1 && s->stride_w == 1 &&
      !(s->pad_t | s->pad_b | s->pad_l | s->pad_r) && !v->rows) {
    /* output pixel q reads input pixel q: the images' planes follow each other in x */
    const uint8_t *p0 = x + q0 * cin_all + g * v->cin;
    for (size_t i = 0; i < m; i++) ind[i] = p0 + i * cin_all;
    return;
  }
  size_t img = q0 / P, oy = q0 % P / wo, ox = q0 % wo;
  const int64_t span_h = (s->k_h - 1) * s->dil_h, span_w = (s->k_w - 1) * s->dil_w;
  const uint8_t *x_end = x + (size_t)s->n * img_bytes;
  for (size_t i = 0; i < m; i++) {
    const uint8_t *base = x + img * img_bytes + g * v->cin;
    const uint8_t **it = ind + i;
    const int64_t iy0 = (int64_t)oy * s->stride_h - s->pad_t, ix0 = (int64_t)ox * s->stride_w - s->pad_l;
    const int inside = iy0 >= 0 && iy0 + span_h < s->h_in && ix0 >= 0 && ix0 + span_w < s->w_in;
    const uint8_t *o = inside ? base + ((size_t)iy0 * (size_t)s->w_in + (size_t)ix0) * cin_all : NULL;
    if (inside && (!v->rows || (size_t)(x_end - (o + v->toff[v->ntaps - 1])) >= v->need)) {
      for (size_t t = 0; t < v->ntaps; t++) it[t * v->mr] = o + v->toff[t];
    } else if (v->rows) {
      for (int64_t ky = 0; ky < s->k_h; ky++, it += v->mr) {
        const int64_t iy = iy0 + ky * s->dil_h;
        if (iy < 0 || iy >= s->h_in) {
          *it = v->zrow;
          continue;
        }
        const uint8_t *row = base + (size_t)iy * (size_t)s->w_in * cin_all;
        const uint8_t *run = row + ix0 * (int64_t)cin_all;
        const int in_row = ix0 >= 0 && ix0 + span_w < s->w_in;
        *it = in_row && (size_t)(x_end - run) >= v->need
                  ? run
                  : copy_run(v, s, row, ix0, scratch + (i * DLC_IND_ROW_MAX_TAPS + (size_t)ky) * DLC_IND_ROW_MAX_BYTES);
      }
    } else {
      for (int64_t ky = 0; ky < s->k_h; ky++) {
        const int64_t iy = iy0 + ky * s->dil_h;
        const int row_in = iy >= 0 && iy < s->h_in;
        for (int64_t kx = 0; kx < s->k_w; kx++, it += v->mr) {
          const int64_t ix = ix0 + kx * s->dil_w;
          *it = row_in && ix >= 0 && ix < s->w_in ? base + ((size_t)iy * (size_t)s->w_in + (size_t)ix) * cin_all
                                                  : v->zrow;
        }
      }
    }
    if (++ox == wo) {
      ox = 0;
      if (++oy == (size_t)s->h_out) {
        oy = 0;
        img++;
      }
    }
  }
}

void dlc_nhwc_ind_row_taps(const dlc_conv_shape *s, size_t oy, size_t *ky0, size_t *ky1) {
  const int64_t iy0 = (int64_t)oy * s->stride_h - s->pad_t;
  int64_t a = 0, b = s->k_h;
  while (a < b && iy0 + a * s->dil_h < 0) a++;
  while (b > a && iy0 + (b - 1) * s->dil_h >= s->h_in) b--;
  *ky0 = (size_t)a;
  *ky1 = (size_t)b;
}

/* A pixel whose window is inside the row takes its taps' fixed offsets from one origin; only the
   few at the left and right borders check their taps one by one. */
void dlc_nhwc_ind_build_row(const dlc_nhwc_ind *v, const dlc_conv_shape *s, const uint8_t *x, size_t g, size_t img,
                            size_t oy, size_t ox0, size_t m, size_t ky0, size_t ky1, const uint8_t **ind,
                            uint8_t *scratch) {
  const size_t cin_all = (size_t)s->c_in, tpr = dlc_nhwc_ind_taps_per_row(v, s);
  const size_t t0 = ky0 * tpr, t1 = ky1 * tpr;
  const size_t img_bytes = (size_t)(s->h_in * s->w_in) * cin_all;
  const uint8_t *base = x + img * img_bytes + g * v->cin, *x_end = x + (size_t)s->n * img_bytes;
  const int64_t iy0 = (int64_t)oy * s->stride_h - s->pad_t, span_w = (s->k_w - 1) * s->dil_w;
  for (size_t i = 0; i < m; i++) {
    const uint8_t **it = ind + i;
    const int64_t ix0 = (int64_t)(ox0 + i) * s->stride_w - s->pad_l;
    /* the window's origin, before the image where oy's first kernel rows are padding: only o + toff of
       a row inside it is formed as a pointer */
    const ptrdiff_t o = (ptrdiff_t)(iy0 * s->w_in + ix0) * (ptrdiff_t)cin_all;
    const int inside = ix0 >= 0 && ix0 + span_w < s->w_in;
    if (inside && (!v->rows || t1 == t0 || x_end - (base + (o + v->toff[t1 - 1])) >= (ptrdiff_t)v->need)) {
      for (size_t t = t0; t < t1; t++) it[(t - t0) * v->mr] = base + (o + v->toff[t]);
      continue;
    }
    for (size_t ky = ky0; ky < ky1; ky++) {
      const int64_t iy = iy0 + (int64_t)ky * s->dil_h;
      const uint8_t *row = base + (size_t)iy * (size_t)s->w_in * cin_all;
      if (v->rows) {
        const uint8_t *run = row + ix0 * (int64_t)cin_all;
        it[(ky - ky0) * v->mr] =
            inside && x_end - run >= (ptrdiff_t)v->need
                ? run
                : copy_run(v, s, row, ix0, scratch + (i * DLC_IND_ROW_MAX_TAPS + ky) * DLC_IND_ROW_MAX_BYTES);
        continue;
      }
      for (size_t kx = 0; kx < tpr; kx++) {
        const int64_t ix = ix0 + (int64_t)kx * s->dil_w;
        it[(ky * tpr + kx - t0) * v->mr] = ix >= 0 && ix < s->w_in ? row + (size_t)ix * cin_all : v->zrow;
      }
    }
  }
}

int dlc_nhwc_ind_strided_row(const dlc_nhwc_ind *v, const dlc_conv_shape *s, const uint8_t *x, size_t g,
                             size_t img, size_t oy, size_t ox0, size_t m, size_t ky0, size_t ky1,
                             const uint8_t **tap, ptrdiff_t *pstep) {
  const size_t cin_all = (size_t)s->c_in, tpr = dlc_nhwc_ind_taps_per_row(v, s);
  const size_t t0 = ky0 * tpr, t1 = ky1 * tpr;
  const int64_t iy0 = (int64_t)oy * s->stride_h - s->pad_t, span_w = (s->k_w - 1) * s->dil_w;
  const int64_t ix_first = (int64_t)ox0 * s->stride_w - s->pad_l;
  const int64_t ix_last = (int64_t)(ox0 + m - 1) * s->stride_w - s->pad_l;
  if (t1 == t0 || ix_first < 0 || ix_last + span_w >= s->w_in || iy0 + (int64_t)ky0 * s->dil_h < 0 ||
      iy0 + (int64_t)(ky1 - 1) * s->dil_h >= s->h_in)
    return 0;
  const size_t img_bytes = (size_t)(s->h_in * s->w_in) * cin_all;
  const uint8_t *base = x + img * img_bytes + g * v->cin, *x_end = x + (size_t)s->n * img_bytes;
  const ptrdiff_t o = (ptrdiff_t)(iy0 * s->w_in + ix_first) * (ptrdiff_t)cin_all;
  const ptrdiff_t step = (ptrdiff_t)((size_t)s->stride_w * cin_all);
  /* row mode reads need bytes at a pointer: the last pixel's last run must end inside x */
  if (v->rows && x_end - (base + (o + v->toff[t1 - 1] + (ptrdiff_t)(m - 1) * step)) < (ptrdiff_t)v->need) return 0;
  for (size_t t = t0; t < t1; t++) tap[t - t0] = base + (o + v->toff[t]);
  *pstep = step;
  return 1;
}

int dlc_nhwc_ind_flat(const dlc_nhwc_ind *v, const dlc_conv_shape *s) {
  return s->k_h == 1 && s->k_w == 1 && s->stride_h == 1 && s->stride_w == 1 &&
         !(s->pad_t | s->pad_b | s->pad_l | s->pad_r) && !v->rows;
}

int dlc_nhwc_ind_strided(const dlc_nhwc_ind *v, const dlc_conv_shape *s, const uint8_t *x, size_t g, size_t q0,
                         size_t m, const uint8_t **tap, ptrdiff_t *pstep) {
  const size_t P = (size_t)(s->h_out * s->w_out), wo = (size_t)s->w_out, cin_all = (size_t)s->c_in;
  if (dlc_nhwc_ind_flat(v, s)) {
    tap[0] = x + q0 * cin_all + g * v->cin;
    *pstep = (ptrdiff_t)cin_all;
    return 1;
  }
  const size_t ox = q0 % wo;
  if (ox + m > wo) return 0;
  return dlc_nhwc_ind_strided_row(v, s, x, g, q0 / P, q0 % P / wo, ox, m, 0, (size_t)s->k_h, tap, pstep);
}
