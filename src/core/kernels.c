/* Which kernel tables this build has and this CPU can run. */
#include "kernels.h"

#include "cpu.h"

#include <pthread.h>

#if defined(DLC_HAVE_NEON)
/* A table whose families are all still NULL is not offered: forcing that ISA then answers
   "not available" up front instead of UNSUPPORTED for every shape, and AUTO skips it. */
static const dlc_isa_kernels *offered(const dlc_isa_kernels *t) {
  return t && (t->direct || t->gemm || t->spack || t->gspc || t->csr) ? t : NULL;
}
#endif

#if defined(DLC_HAVE_X86)
/* The avx2 and avx512 tables with the int8 gemm, csr and gspc families swapped for VNNI ones where
   this CPU has the instruction: vpdpwssd is vpmaddwd + vpaddd in one, on the same packed formats,
   with the same results bit for bit (the *_tiles.h templates in src/arch/x86_avx2), so everything
   else in the tables stays. The avx2 table takes only the VEX form (AVX-VNNI): a caller capping at
   avx2 gets no EVEX instruction. */
static dlc_isa_kernels avx2_table, avx512_table;
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void make_x86_tables(void) {
  const dlc_cpu_features *f = dlc_cpu();
  avx2_table = dlc_kernels_avx2;
  avx512_table = dlc_kernels_avx512;
#if defined(DLC_HAVE_AVXVNNI)
  if (f->avx_vnni) {
    avx2_table.q8_gemm = avx512_table.q8_gemm = &dlc_q8_gemm__avxvnni;
    avx2_table.q8_csr = avx512_table.q8_csr = &dlc_q8_csr__avxvnni;
    avx2_table.lowp_gspc = avx512_table.lowp_gspc = &dlc_lowp_gspc__avxvnni;
  }
#endif
#if defined(DLC_HAVE_AVX512VNNI)
  if (f->avx512_vnni) {
    avx512_table.q8_gemm = &dlc_q8_gemm__avx512vnni;
    avx512_table.q8_csr = &dlc_q8_csr__avx512vnni;
    avx512_table.lowp_gspc = &dlc_lowp_gspc__avx512vnni;
    avx512_table.q8_d4 = &dlc_q8d4_gemm__avx512vnni;
    avx512_table.q8_igemm = &dlc_q8_igemm__avx512vnni;
    avx512_table.q8_dwn = &dlc_q8_dwn__avx512vnni;
  }
#endif
#if defined(DLC_HAVE_AVX512VBMI)
  if (f->avx512_vnni && f->avx512_vbmi) {
    avx512_table.q8_dw4 = &dlc_q8_dw4__avx512vbmi;
    avx512_table.q8_dwc = &dlc_q8_dwc__avx512vbmi;
    avx512_table.q8_store_t = dlc_q8_store_t__avx512vbmi;
  }
#endif
  (void)f;
}

static const dlc_isa_kernels *x86_table(const dlc_isa_kernels *t) {
  pthread_once(&tables_once, make_x86_tables);
  return t == &dlc_kernels_avx2 ? &avx2_table : &avx512_table;
}
#endif

static const dlc_isa_kernels *table_for(dlconv_isa isa) {
  const dlc_cpu_features *f = dlc_cpu();
  switch (isa) {
    case DLCONV_ISA_GENERIC: return &dlc_kernels_generic;
#if defined(DLC_HAVE_X86)
    case DLCONV_ISA_AVX2: return f->avx2_fma && f->f16c ? x86_table(&dlc_kernels_avx2) : NULL;
    case DLCONV_ISA_AVX512: return f->avx512 && f->f16c ? x86_table(&dlc_kernels_avx512) : NULL;
#endif
#if defined(DLC_HAVE_NEON)
    case DLCONV_ISA_NEON: return f->neon ? offered(&dlc_kernels_neon) : NULL;
#endif
    default: (void)f; return NULL;
  }
}

const dlc_isa_kernels *dlc_kernels_for(dlconv_isa isa) {
  const dlc_isa_kernels *t = table_for(isa);
  return __builtin_expect(t && dlc_kernel_hook_on(), 0) ? dlc_kernel_hook_table(t) : t;
}
