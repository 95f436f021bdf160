/* q8_gemm_avx2.h - the parts of the avx2 int8 gemm family that the VNNI families share with it
 * (defined in q8_gemm_avx2.c; contracts in lowp_gemm_ukernel.h). Only their product kernels
 * differ, so a VNNI family is the avx2 one with another instance of q8_gemm_tiles.h. */
#ifndef DLC_Q8_GEMM_AVX2_H
#define DLC_Q8_GEMM_AVX2_H

#include "../../ukernel/lowp_gemm_ukernel.h"

void dlc_q8_store__avx2(size_t n, const int32_t *acc, const dlc_q8_params *q, size_t c0, int per_column, void *y);
void dlc_q8_pack_pairs__avx2(size_t n, const void *a, const void *b, int32_t zp, int is_signed, int16_t *dst);
void dlc_q8_pack_pairs_strided__avx2(size_t n, const void *src, int32_t zp, int is_signed, int16_t *dst,
                                     size_t stride);
void dlc_q8_widen_run__avx2(size_t n, const void *src, size_t step, int32_t zp, int is_signed, int16_t *dst);

/* A family of the 6 x 16c2 tile: the given store (the avx2 one, or avx512's on 16 lanes) and the
   avx2 packing around the given product kernels. */
#define DLC_Q8_GEMM_6X16C2_FAMILY(isa) DLC_Q8_GEMM_6X16C2_FAMILY_STORE(isa, dlc_q8_store__avx2)
#define DLC_Q8_GEMM_6X16C2_FAMILY_STORE(isa, store_fn)  \
  {                                                     \
      .name = "q8_gemm_6x16c2__" #isa,                  \
      .mr = 6,                                          \
      .nr = 16,                                         \
      .ukernel = dlc_q8_gemm_6x16c2__##isa,             \
      .store = store_fn,                                \
      .pack_pairs = dlc_q8_pack_pairs__avx2,            \
      .pack_pairs_strided = dlc_q8_pack_pairs_strided__avx2, \
      .ukernel_ib = dlc_q8_gemm_ib_6x16c2__##isa,       \
      .widen_run = dlc_q8_widen_run__avx2,              \
  }

#endif
