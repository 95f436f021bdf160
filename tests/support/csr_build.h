/* csr_build.h - dense weights as the caller's CSR (the API tests, the fuzz harness): the kept
 * entries of each output channel's row, in a random column order, since the plans must accept a
 * row's columns in any order. Public header only. */
#ifndef DLC_TESTS_SUPPORT_CSR_BUILD_H
#define DLC_TESTS_SUPPORT_CSR_BUILD_H

#include <stdint.h>

#include "dlconv.h"

/* Shuffles the n entries of a CSR row (cols, vals) in place, Fisher-Yates from the last: below(src,
   m) draws a uniform integer in [0, m) from the caller's stream src. */
void csr_shuffle_row(int32_t *cols, float *vals, int32_t n, uint32_t (*below)(void *src, uint32_t m), void *src);

/* The rows x cols weights w (read a float at a time with memcpy: w may be misaligned) as CSR in
   rowptr[rows + 1], colidx and vals (room for every kept entry), each row shuffled: the nonzero
   entries, and with zeros_every3 also the zeros in every third column (explicit zeros a plan must
   take). *csr is set to the arrays; returns the number kept. */
int32_t csr_from_dense(const float *w, int32_t rows, int32_t cols, int zeros_every3, int32_t *rowptr, int32_t *colidx,
                       float *vals, dlconv_csr *csr, uint32_t (*below)(void *src, uint32_t m), void *src);

#endif
