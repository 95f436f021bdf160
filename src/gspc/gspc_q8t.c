/* gspc_q8t.c - int8 NCHW grouped convolutions on the NHWC kernels that read x in place: the
 * in-register GSPC kernel (gspc_q8n.c, 2 to 16 channels per group) and the indirect GEMM
 * (igemm_q8.c, quads of channels per group). x is transposed channel-last into the workspace, the
 * NHWC plan runs on it, and its channel-last output is transposed back to planes.
 *
 * With few channels per group the NCHW direct kernels spend most of their tile on one group's
 * few channels (WRN-40-2 g16, u8, Zen 5, 1 thread: a 64 x 16 x 16 layer at stride 2 took 2.8x
 * oneDNN's time), while the NHWC kernels keep 64 output channels of several groups in their lanes.
 * The two byte transposes cost little next to that: 16 x 16 blocks of bytes through four rounds
 * of interleaves (SSE2 punpck on x86, zip on Arm), whatever the ISA of the kernel table.
 *
 * The inner plan is a copy of the caller's with the NHWC layout; it shares the caller's
 * quantisation and bias (owned by the caller's plan) and holds its own packed weights. */
#include <stdio.h>
#include <string.h>

#include "../core/plan.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "../gemm_im2col/gemm.h"
#include "gspc.h"

typedef struct gt_data {
  dlconv_plan inner;   /* NHWC, planned by gspc_q8n.c or igemm_q8.c */
  size_t xt_bytes;     /* the transposed x's share of the workspace, rounded to DLC_ALIGN */
} gt_data;

/* The shape as the NHWC plan sees it. */
static dlc_conv_shape nhwc_of(const dlc_conv_shape *s) {
  dlc_conv_shape t = *s;
  t.layout = DLCONV_NHWC;
  return t;
}

int dlc_gspc_q8t_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k) {
  if (s->layout != DLCONV_NCHW) return 0;
  const dlc_conv_shape t = nhwc_of(s);
  return dlc_gspc_q8n_applies(&t, dtype, k);
}

/* grouped only: an ungrouped layer has its own NCHW quad kernels */
int dlc_igemm_q8t_applies(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k) {
  if (s->layout != DLCONV_NCHW || s->groups == 1) return 0;
  const dlc_conv_shape t = nhwc_of(s);
  return dlc_igemm_q8_applies(&t, dtype, k);
}

/* dst[c * ldd + r] = src[r * lds + c] for r < rows, c < cols (bytes). */
#if defined(__GNUC__)
typedef uint8_t gt_v16 __attribute__((vector_size(16)));
#if defined(__clang__)
#define GT_LO(a, b) __builtin_shufflevector(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23)
#define GT_HI(a, b) __builtin_shufflevector(a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31)
#else
#define GT_LO(a, b) __builtin_shuffle(a, b, (gt_v16){0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23})
#define GT_HI(a, b) __builtin_shuffle(a, b, (gt_v16){8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31})
#endif
/* A 16 x 16 block. Each round interleaves row i with row i + 8 into rows 2i, 2i + 1: element
   (r, c), its 8-bit address r:c, moves to the address rotated left by one bit, so four rounds swap
   the row and column nibbles. */
static void tr16(const uint8_t *src, size_t lds, uint8_t *dst, size_t ldd) {
  gt_v16 a[16], b[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) memcpy(&a[i], src + (size_t)i * lds, 16);
#pragma GCC unroll 2
  for (int round = 0; round < 2; round++) {
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
      b[2 * i] = GT_LO(a[i], a[i + 8]);
      b[2 * i + 1] = GT_HI(a[i], a[i + 8]);
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; i++) {
      a[2 * i] = GT_LO(b[i], b[i + 8]);
      a[2 * i + 1] = GT_HI(b[i], b[i + 8]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < 16; i++) memcpy(dst + (size_t)i * ldd, &a[i], 16);
}
#define GT_BLOCK 16
#else
#define GT_BLOCK 0
#endif

static void transpose(const uint8_t *src, size_t lds, size_t rows, size_t cols, uint8_t *dst, size_t ldd) {
  size_t r0 = 0;
#if GT_BLOCK
  for (; r0 + GT_BLOCK <= rows; r0 += GT_BLOCK) {
    size_t c = 0;
    for (; c + GT_BLOCK <= cols; c += GT_BLOCK) tr16(src + r0 * lds + c, lds, dst + c * ldd + r0, ldd);
    for (; c < cols; c++)
      for (size_t r = r0; r < r0 + GT_BLOCK; r++) dst[c * ldd + r] = src[r * lds + c];
  }
#endif
  for (size_t c = 0; c < cols; c++)
    for (size_t r = r0; r < rows; r++) dst[c * ldd + r] = src[r * lds + c];
}

static void gt_destroy(dlconv_plan *p) {
  gt_data *d = p->algo_data;
  if (!d) return;
  if (d->inner.ops) d->inner.ops->destroy(&d->inner);
  dlc_free(d);
  p->algo_data = NULL;
}

static dlconv_status gt_plan(dlconv_plan *p, const void *w, const dlc_impl_ops *ops) {
  gt_data *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "gspc: out of memory");
  p->algo_data = d;
  d->inner = *p;
  d->inner.s = nhwc_of(&p->s);
  d->inner.algo_data = NULL;
  d->inner.ops = NULL;
  d->inner.verify_w = NULL;
  const dlconv_status st = ops->plan(&d->inner, w);
  if (st != DLCONV_OK) {
    gt_destroy(p);
    return st;
  }
  d->inner.ops = ops;
  const dlc_conv_shape *s = &p->s;
  d->xt_bytes = dlc_round_up((size_t)(s->n * s->c_in * s->h_in * s->w_in), DLC_ALIGN);
  p->workspace_bytes = d->xt_bytes + (size_t)(s->n * s->c_out * s->h_out * s->w_out) + d->inner.workspace_bytes;
  p->packed_weight_bytes = d->inner.packed_weight_bytes;
  p->weight_density = 1.0;
  snprintf(p->kernel, sizeof p->kernel, "%.58s nchw", d->inner.kernel);
  return DLCONV_OK;
}

/* One parallel region's transposes: x to channel-last (to_nhwc) or the output back to planes, in
   chunks of pixels of one image. */
typedef struct gt_tr {
  const uint8_t *src;
  uint8_t *dst;
  size_t n, c, plane, chunk, nchunks, ntasks;
  int to_nhwc;
} gt_tr;

static void tr_task(void *arg, size_t t) {
  const gt_tr *a = arg;
  size_t begin, end;
  dlc_split_range(a->n * a->nchunks, a->ntasks, t, &begin, &end);
  for (size_t j = begin; j < end; j++) {
    const size_t img = j / a->nchunks, p0 = j % a->nchunks * a->chunk, m = DLC_MIN(a->chunk, a->plane - p0);
    const size_t base = img * a->c * a->plane;
    if (a->to_nhwc)
      transpose(a->src + base + p0, a->plane, a->c, m, a->dst + base + p0 * a->c, a->c);
    else
      transpose(a->src + base + p0 * a->c, a->c, m, a->c, a->dst + base + p0, a->plane);
  }
}

static gt_tr transpose_pass(const dlconv_plan *p, const uint8_t *src, uint8_t *dst, size_t n, size_t c, size_t plane,
                            int to_nhwc) {
  gt_tr a = {src, dst, n, c, plane, 256, 0, 0, to_nhwc};
  a.nchunks = dlc_div_up(plane, a.chunk);
  a.ntasks = DLC_MAX((size_t)1, DLC_MIN((size_t)p->nthreads, n * a.nchunks));
  return a;
}

static void gt_execute(const dlconv_plan *p, const void *x, void *y, void *workspace) {
  const gt_data *d = p->algo_data;
  const dlc_conv_shape *s = &p->s;
  uint8_t *xt = workspace, *yt = xt + d->xt_bytes;
  char *ws = d->inner.workspace_bytes ? (char *)workspace + p->workspace_bytes - d->inner.workspace_bytes : NULL;
  gt_tr in = transpose_pass(p, x, xt, (size_t)s->n, (size_t)s->c_in, (size_t)(s->h_in * s->w_in), 1);
  gt_tr out = transpose_pass(p, yt, y, (size_t)s->n, (size_t)s->c_out, (size_t)(s->h_out * s->w_out), 0);
  if (d->inner.ops->task) {
    /* the transposes and the inner plan's tasks: one parallel region */
    dlc_exec e = {&d->inner, xt, yt, ws};
    const dlc_pass pass[3] = {{in.ntasks, tr_task, &in}, {d->inner.exec_tasks, d->inner.ops->task, &e},
                              {out.ntasks, tr_task, &out}};
    dlc_parallel_passes(p, pass, 3);
    return;
  }
  dlc_parallel_for(p, in.ntasks, tr_task, &in);
  dlc_plan_run(&d->inner, xt, yt, ws);
  dlc_parallel_for(p, out.ntasks, tr_task, &out);
}

static dlconv_status gspc_plan(dlconv_plan *p, const void *w) {
  if (!dlc_gspc_q8t_applies(&p->s, p->dtype, p->kernels))
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "gspc: no int8 NHWC grouped kernel in registers for this shape on isa %s",
                    p->kernels->name);
  return gt_plan(p, w, &dlc_gspc_q8n_ops);
}

static dlconv_status igemm_plan(dlconv_plan *p, const void *w) {
  if (!dlc_igemm_q8t_applies(&p->s, p->dtype, p->kernels))
    return dlc_fail(DLCONV_ERR_UNSUPPORTED, "im2col_gemm: no int8 indirect GEMM for this shape on isa %s",
                    p->kernels->name);
  return gt_plan(p, w, &dlc_igemm_q8_ops);
}

const dlc_impl_ops dlc_igemm_q8t_ops = {
    .plan = igemm_plan,
    .execute = gt_execute,
    .destroy = gt_destroy,
};

const dlc_impl_ops dlc_gspc_q8t_ops = {
    .plan = gspc_plan,
    .execute = gt_execute,
    .destroy = gt_destroy,
};
