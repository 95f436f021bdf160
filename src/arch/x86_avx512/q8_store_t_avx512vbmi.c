/* q8_store_t_avx512vbmi.c - the transposed int8 gemm's position-major accumulators straight to
 * NCHW outputs (lowp_gemm_ukernel.h, dlc_q8_store_t_fn): blocks of 16 positions x 16 channels
 * through the lanes epilogue (q8_lanes_avx512vbmi.h), where the family's s32 transpose and a
 * store call per channel row made two more passes over the accumulators. */
#include <immintrin.h>
#include <stdint.h>

#include "../../ukernel/lowp_gemm_ukernel.h"
#include "q8_lanes_avx512vbmi.h"

void dlc_q8_store_t__avx512vbmi(size_t np, size_t m, const int32_t *c, size_t ldc, const dlc_q8_params *q, size_t c0,
                                void *y, size_t ldy);

void dlc_q8_store_t__avx512vbmi(size_t np, size_t m, const int32_t *c, size_t ldc, const dlc_q8_params *q, size_t c0,
                                void *y, size_t ldy) {
  for (size_t i0 = 0; i0 < m; i0 += 16) {
    const size_t nc = m - i0 < 16 ? m - i0 : 16;
    const __mmask16 cm = dlc_lanes_below(nc);
    dlc_lanes_consts k;
    dlc_lanes_init(&k, q, c0 + i0, nc);
    for (size_t r0 = 0; r0 < np; r0 += 16) {
      const size_t npix = np - r0 < 16 ? np - r0 : 16;
      __m512i acc[16];
      for (size_t i = 0; i < 16; i++) /* rows past np are not read: their lanes are dropped */
        acc[i] = i < npix ? _mm512_maskz_loadu_epi32(cm, c + (r0 + i) * ldc + i0) : _mm512_setzero_si512();
      __m512i z[4];
      dlc_lanes_requant(&k, acc, q, c0 + i0, nc, z);
      dlc_lanes_store(z, nc, npix, (uint8_t *)y + i0 * ldy + r0, ldy);
    }
  }
}
