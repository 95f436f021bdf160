/* q8_csr_tiles.h - the int8 csr micro-kernel (dlc_q8_csr_spmm_fn, src/sparse_csr/csr_ukernel.h)
 * as one template for the x86 ISAs with 256-bit integer vectors, instantiated as
 * q8_gemm_tiles.h is: Q8_ISA names the instance, Q8_DOT2(acc, a, b) is vpmaddwd + vpaddd (avx2)
 * or vpdpwssd (VNNI), the same sums bit for bit. It defines the family dlc_q8_csr__<Q8_ISA>.
 *
 * Register tile: MR = 3 rows x NV = 2 ymm of 16 s16 pixels. A pair of a row's nonzeros reads two
 * operand rows, interleaves them (vpunpcklwd / vpunpckhwd: pixels 0-3 and 8-11, 4-7 and 12-15
 * of the 16) and multiplies them by the broadcast value pair with vpmaddwd: two exact products
 * and their sum per pixel, added to s32 accumulators; 2 x NV accumulators per row, 12 in all. As
 * in the fp32 kernel the rows run in lockstep over the pairs they all have. The lane order is
 * undone at the store. Tails run the same tile on fewer vectors, reading and writing up to the
 * next 16 pixels (the contract lets them). */
#if !defined(Q8_ISA) || !defined(Q8_DOT2)
#error "define Q8_ISA and Q8_DOT2 before including q8_csr_tiles.h"
#endif

#define Q8_CSR_CAT2(a, b) a##b
#define Q8_CSR_CAT(a, b) Q8_CSR_CAT2(a, b)
#define Q8_CSR_FN(name) Q8_CSR_CAT(name, Q8_ISA)
#define Q8_CSR_STR2(a) #a
#define Q8_CSR_STR(a) Q8_CSR_STR2(a)

#define MR 3
#define NV 2
#define NR (16 * NV)

#define AI static inline __attribute__((always_inline))

/* acc[2v], acc[2v+1] += pair (v0, v1) x interleaved rows x0, x1, for v < nv. */
AI void madd_pair(const int nv, __m256i *acc, const int16_t *val, const int16_t *x0, const int16_t *x1) {
  int32_t w;
  memcpy(&w, val, 4);
  const __m256i wv = _mm256_set1_epi32(w);
#pragma GCC unroll 4
  for (int v = 0; v < nv; v++) {
    const __m256i a = _mm256_loadu_si256((const __m256i *)(const void *)(x0 + 16 * v));
    const __m256i b = _mm256_loadu_si256((const __m256i *)(const void *)(x1 + 16 * v));
    acc[2 * v] = Q8_DOT2(acc[2 * v], _mm256_unpacklo_epi16(a, b), wv);
    acc[2 * v + 1] = Q8_DOT2(acc[2 * v + 1], _mm256_unpackhi_epi16(a, b), wv);
  }
}

AI void store_row(const int nv, const __m256i *acc, int32_t *y) {
#pragma GCC unroll 4
  for (int v = 0; v < nv; v++) {
    _mm256_storeu_si256((__m256i *)(void *)(y + 16 * v), _mm256_permute2x128_si256(acc[2 * v], acc[2 * v + 1], 0x20));
    _mm256_storeu_si256((__m256i *)(void *)(y + 16 * v + 8), _mm256_permute2x128_si256(acc[2 * v], acc[2 * v + 1], 0x31));
  }
}

/* mr rows x nv vectors; *val and *off advance past the rows. */
AI void rows_tile(const int mr, const int nv, const int16_t *x, const int32_t *nnz, const int16_t **val,
                  const int32_t **off, int32_t *y, size_t ldy) {
  __m256i acc[MR][2 * NV];
  const int16_t *vr[MR];
  const int32_t *orow[MR];
  int32_t n[MR], common = nnz[0];
#pragma GCC unroll 8
  for (int q = 0; q < mr; q++) {
#pragma GCC unroll 8
    for (int v = 0; v < 2 * nv; v++) acc[q][v] = _mm256_setzero_si256();
    n[q] = nnz[q];
    vr[q] = *val;
    orow[q] = *off;
    *val += n[q];
    *off += n[q];
    common = n[q] < common ? n[q] : common;
  }
  for (int32_t i = 0; i < common; i += 2) {
#pragma GCC unroll 8
    for (int q = 0; q < mr; q++) madd_pair(nv, acc[q], vr[q] + i, x + orow[q][i], x + orow[q][i + 1]);
  }
#pragma GCC unroll 8
  for (int q = 0; q < mr; q++) {
    for (int32_t i = common; i < n[q]; i += 2) madd_pair(nv, acc[q], vr[q] + i, x + orow[q][i], x + orow[q][i + 1]);
    store_row(nv, acc[q], y + (size_t)q * ldy);
  }
}

AI void spmm_column(const int nv, size_t rows, const int16_t *x, const int32_t *nnz, const int16_t *val,
                    const int32_t *off, int32_t *y, size_t ldy) {
  size_t r = 0;
  for (; r + MR <= rows; r += MR) rows_tile(MR, nv, x, nnz + r, &val, &off, y + r * ldy, ldy);
  for (; r < rows; r++) rows_tile(1, nv, x, nnz + r, &val, &off, y + r * ldy, ldy);
}

static void Q8_CSR_FN(dlc_q8_csr_spmm_3x32c2__)(size_t rows, size_t npix, const int16_t *x, const int32_t *nnz,
                                         const int16_t *val, const int32_t *off, int32_t *y, size_t ldy) {
  size_t p = 0;
  for (; p + NR <= npix; p += NR) spmm_column(NV, rows, x + p, nnz, val, off, y + p, ldy);
  if (p < npix) spmm_column(1, rows, x + p, nnz, val, off, y + p, ldy);
  if (p + 16 < npix) spmm_column(1, rows, x + p + 16, nnz, val, off, y + p + 16, ldy);
}

const dlc_q8_csr_family Q8_CSR_FN(dlc_q8_csr__) = {
    .name = "q8_csr_3x32c2__" Q8_CSR_STR(Q8_ISA),
    .nr = NR,
    .spmm = Q8_CSR_FN(dlc_q8_csr_spmm_3x32c2__),
};
