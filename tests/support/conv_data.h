/* conv_data.h - one layer's test data for the API tests: caller buffers (canary-guarded or fenced,
 * shifted off alignment), random values from a seeded stream, pristine copies of the inputs, the
 * oracle's result (tests/oracle.c) and error scale, the CSR form of the weights; the layer printed
 * as a reproducer; y checked against the oracle. Public header only. */
#ifndef DLC_TESTS_SUPPORT_CONV_DATA_H
#define DLC_TESTS_SUPPORT_CONV_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "canary.h"
#include "dlconv.h"
#include "rng.h"

typedef enum case_kind { KIND_CONV = 0, KIND_DENSE = 1, KIND_CSR = 2 } case_kind;

typedef struct conv_data {
  case_kind kind;
  dlconv_conv2d_desc d; /* KIND_DENSE: n = batch, c_in = in, c_out = out, 1x1 everything */
  int64_t h_out, w_out;
  size_t x_len, w_len, y_len, K, nnz;
  canary_buf xb, wb, bb; /* caller buffers (possibly shifted off 64-byte alignment) */
  float *x, *w, *bias;   /* bias NULL when the case has none */
  float *x0, *w0, *b0;   /* pristine copies: the library must not write its inputs */
  double *ref, *mag;
  /* KIND_CSR: the same weights as w, rows in random column order */
  dlconv_csr csr;
  float *csr_vals;
  int32_t *csr_cols, *csr_rowptr;
  float *csr_vals0;
  int32_t *csr_cols0, *csr_rowptr0;
} conv_data;

typedef struct data_opts {
  int bias;              /* 1: random bias, 0: NULL */
  double zero_frac;      /* probability of an exact 0.0f weight */
  double empty_row_frac; /* probability that a whole output channel's weights are zero */
  size_t shift;          /* byte shift of x, w, bias off 64-byte alignment (multiple of 4) */
  int fence;             /* x and w against an inaccessible page: 1 after the end, 2 before the start */
} data_opts;

/* The weights w as CSR rows (cd->csr and its arrays, with pristine copies), each row in a random
   column order: cd_init does it for KIND_CSR. */
void build_csr(conv_data *cd, rng_t *r);

/* Random data for the layer d (already valid), oracle output included. */
void cd_init(conv_data *cd, case_kind kind, const dlconv_conv2d_desc *d, rng_t *r, const data_opts *o);

/* cd_init for a layer of one c_in x h x w image to c_out channels through a 3x3 kernel padded by
   1 on every side (the output as large as the input), from the stream of seed; returns its
   descriptor (cd->d). */
const dlconv_conv2d_desc *cd_init_same3x3(conv_data *cd, case_kind kind, int32_t c_in, int32_t h, int32_t w,
                                          int32_t c_out, uint64_t seed, const data_opts *o);

/* Recompute the oracle after a test edited x, w or bias in place (and refresh the copies). */
void cd_refresh(conv_data *cd);

void cd_free(conv_data *cd);

/* A dense layer as the equivalent 1x1 conv on a 1x1 image (x: batch x in, y: batch x out). */
void dense_desc(dlconv_conv2d_desc *d, int32_t batch, int32_t in_f, int32_t out_f, float out_min, float out_max);

/* Printing a case so that a failure message is a reproducer. */

const char *desc_str(const dlconv_conv2d_desc *d, char *buf, size_t n);

/* Compare y with the oracle: |y - ref| <= 2e-6 * sqrt(K) * sum|x*w|+|b| + 1e-30, NaN only where
 * the reference is NaN. Returns the number of bad points; describes the first in msg. */
size_t check_y(const conv_data *cd, const float *y, char *msg, size_t len);

#endif
