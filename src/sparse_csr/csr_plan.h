/* csr_plan.h - what the fp32 (csr.c) and F16 / int8 (csr_lowp.c) sparse_csr drivers share: the
 * plan's data and its layout, planned by csr.c from a row-compressed copy of the weights. The
 * drivers differ in the operand's element type (fp32, or s16 = x - x_zero_point), the kernel and
 * what turns the kernel's tile into y. */
#ifndef DLC_CSR_PLAN_H
#define DLC_CSR_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "../ukernel/config.h"
#include "../core/plan.h"

typedef struct csr_data {
  const dlc_f32_csr_family *fam;   /* fp32 and F16 plans: the spmm and transpose kernels */
  const dlc_q8_csr_family *q8fam;  /* int8 plans */
  size_t nr_tile;      /* the kernel's full tile of pixels */
  const char *kernel_name;
  int identity;        /* 1x1, stride 1, unpadded: output pixel p reads input pixel p */
  int slabs;           /* operand layout: slabs of padded input rows (else panels) */
  size_t wp;           /* slabs: padded width, the output row stride of the tile */
  size_t rows_blk;     /* slabs: output rows per job */
  size_t slab_floats;  /* slabs: one channel's slab, (rows_blk + dil_h*(k_h-1)) * wp + dil_w*(k_w-1) */
  size_t pix;          /* output pixels per image: h_out * w_out */
  size_t pb, nblk;     /* pixels per job (panels: a multiple of nr; slabs: rows_blk * wp), jobs
                          per (image, group) */
  size_t nr;           /* panel width: the kernel's tile of pixels */
  size_t ldp;          /* panel row stride: nr + 16, an odd number of 64-byte lines or so, so
                          that writing a panel column (NHWC gather) spreads over the cache sets */
  size_t panel_floats; /* one panel: u_max operand rows x ldp */
  size_t xbuf_floats;  /* per task: the gathered operand (pb / nr panels, or u_max slabs) */
  size_t tbuf_floats;  /* per task: output tile, cout_g x pb (0 for NCHW panels) */
  size_t njobs;        /* of an execute: (image, group, pixel block) */
  size_t ntasks_max;   /* tasks they are split over, one workspace slice each */
  size_t *row_ptr;     /* c_out + 1 */
  int32_t *nnz;        /* c_out: nonzeros per row */
  float *val;          /* nonzeros, row after row, columns ascending within a row (fp32, F16) */
  int16_t *val16;      /* int8: the s8 nonzeros as s16, each row padded to an even count */
  float *zero_bias;    /* F16: c_out zeros, the fp32 kernel's bias (the F16 store adds the bias) */
  int32_t *off;        /* operand offset of each nonzero: u * ldp (panels), or
                          u * slab_floats + ky*dil_h*wp + kx*dil_w (slabs) */
  size_t *used_ptr;    /* groups + 1 into used_k */
  int32_t *used_k;     /* group g's operand row u gathers filter column (panels) or input
                          channel (slabs) used_k[used_ptr[g] + u] */
} csr_data;

/* A new csr_data with row_ptr allocated (c_out + 1), for a kernel whose full tile is nr_tile
   pixels; UNSUPPORTED when the filter has more than INT32_MAX columns. */
dlconv_status dlc_csr_begin(dlconv_plan *p, csr_data **out, size_t nr_tile, const char *kernel_name);

/* d->row_ptr (and the values, value_bytes each) filled, cols the columns of the nonzeros
   (ascending, or non-descending, within each row): lays out the operand, computes the offsets,
   sizes the fp32 workspace, counts the packed weights and publishes d as p->algo_data. Frees
   cols, and d on failure. */
dlconv_status dlc_csr_finish(dlconv_plan *p, csr_data *d, int32_t *cols, size_t value_bytes);

void dlc_csr_data_free(csr_data *d);

/* Job job's image n, group g and block of pixels blk, in the order both drivers run them. */
static inline void dlc_csr_job_coords(const csr_data *d, const dlc_conv_shape *s, size_t job, size_t *n, size_t *g,
                                      size_t *blk) {
  const size_t groups = (size_t)s->groups;
  if (s->layout == DLCONV_NCHW) {
    /* Consecutive jobs share (image, group): same weights, neighbouring pixels. */
    *blk = job % d->nblk;
    *g = job / d->nblk % groups;
    *n = job / d->nblk / groups;
  } else {
    /* Consecutive jobs share pixels: a pixel's input and output cache lines hold all groups. */
    *g = job % groups;
    *blk = job / groups % d->nblk;
    *n = job / groups / d->nblk;
  }
}

#endif
