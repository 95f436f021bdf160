/* Which kernel tables this build has and this CPU can run. */
#include "kernels.h"

#include "cpu.h"

#if defined(DLC_HAVE_NEON)
/* A table whose families are all still NULL is not offered: forcing that ISA then answers
   "not available" up front instead of UNSUPPORTED for every shape, and AUTO skips it. */
static const dlc_isa_kernels *offered(const dlc_isa_kernels *t) {
  return t && (t->direct || t->gemm || t->spack || t->gspc || t->csr) ? t : NULL;
}
#endif

static const dlc_isa_kernels *table_for(dlconv_isa isa) {
  const dlc_cpu_features *f = dlc_cpu();
  switch (isa) {
    case DLCONV_ISA_GENERIC: return &dlc_kernels_generic;
#if defined(DLC_HAVE_X86)
    case DLCONV_ISA_AVX2: return f->avx2_fma && f->f16c ? &dlc_kernels_avx2 : NULL;
    case DLCONV_ISA_AVX512: return f->avx512 && f->f16c ? &dlc_kernels_avx512 : NULL; /* its lowp families are avx2 ones */
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
