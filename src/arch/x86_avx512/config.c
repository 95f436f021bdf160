/* The avx512 kernel table, filled once from cpuid.

   fp32 and F16 gemm have zmm families. The other F16 and int8 families without an avx512
   version are lent by avx2 (every CPU that runs this table runs AVX2, FMA and F16C, which
   src/arch/config.c checks), so forcing avx512 or capping at it keeps those paths instead of
   answering UNSUPPORTED; plans name the kernels they run. On top, by cpuid:
     AVX-VNNI       the int8 gemm, csr and gspc families on vpdpwssd (VEX), as in the avx2 table;
     AVX512-VNNI    the same on zmm, and the u8 x s8 quad families (q8_d4, q8_igemm, q8_dwn, q8_gcn);
     + AVX512-VBMI  the depthwise quad families (q8_dw4, q8_dwc) and the NCHW quad store.
   vpdpwssd is vpmaddwd + vpaddd in one, on the same packed formats, with the same results bit for
   bit, so a swap changes speed, never results.

   Compiled without ISA flags (src/arch/meson.build): this file only copies pointers. */
#include <pthread.h>

#include "../../core/cpu.h"
#include "../families.h"


static dlc_isa_kernels table;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void fill(void) {
  const dlc_cpu_features *f = dlc_cpu();
  /* avx2's table, AVX-VNNI swaps included, with the families that have a zmm version */
  table = *dlc_config_avx2();
  table.isa = DLCONV_ISA_AVX512;
  table.name = "avx512";
  table.direct = &dlc_f32_direct__avx512;
  table.gemm = &dlc_f32_gemm__avx512;
  table.spack = &dlc_f32_spack__avx512;
  table.gspc = &dlc_f32_gspc__avx512;
  table.csr = &dlc_f32_csr__avx512;
  table.f16_gemm = &dlc_f16_gemm__avx512;
  table.dnchw = &dlc_f32_dnchw__avx512;
#if defined(DLC_HAVE_AVX512VNNI)
  if (f->avx512_vnni) {
    table.q8_gemm = &dlc_q8_gemm__avx512vnni;
    table.q8_csr = &dlc_q8_csr__avx512vnni;
    table.lowp_gspc = &dlc_lowp_gspc__avx512vnni_zmm;
    table.q8_d4 = &dlc_q8d4_gemm__avx512vnni;
    table.q8_igemm = &dlc_q8_igemm__avx512vnni;
    table.q8_dwn = &dlc_q8_dwn__avx512vnni;
    table.q8_gcn = &dlc_q8_gcn__avx512vnni;
  }
#endif
#if defined(DLC_HAVE_AVX512VBMI)
  if (f->avx512_vnni && f->avx512_vbmi) {
    table.q8_dw4 = &dlc_q8_dw4__avx512vbmi;
    table.q8_dwc = &dlc_q8_dwc__avx512vbmi;
    table.q8_store_t = dlc_q8_store_t__avx512vbmi;
  }
#endif
  (void)f;
}

const dlc_isa_kernels *dlc_config_avx512(void) {
  pthread_once(&once, fill);
  return &table;
}
