/* Which kernel table a plan gets: the ISA's config (src/arch/<isa>/config.c) when this build has
   the ISA and this CPU can run it, else NULL. */
#include "../core/cpu.h"
#include "families.h"

static const dlc_isa_kernels *table_for(dlconv_isa isa) {
  const dlc_cpu_features *f = dlc_cpu();
  switch (isa) {
    case DLCONV_ISA_GENERIC: return dlc_config_generic();
#if defined(DLC_HAVE_X86)
    case DLCONV_ISA_AVX2: return f->avx2_fma && f->f16c ? dlc_config_avx2() : NULL;
    case DLCONV_ISA_AVX512: return f->avx512 && f->f16c ? dlc_config_avx512() : NULL;
#endif
#if defined(DLC_HAVE_NEON)
    case DLCONV_ISA_NEON: return f->neon ? dlc_config_neon() : NULL;
#endif
    default: (void)f; return NULL;
  }
}

#if defined(DLC_TEST_HOOKS)
#include "../core/test_hooks.h"

const dlc_isa_kernels *dlc_kernels_for(dlconv_isa isa) {
  const dlc_isa_kernels *t = table_for(isa);
  return __builtin_expect(t && dlc_kernel_hook_on(), 0) ? dlc_kernel_hook_table(t) : t;
}
#else
const dlc_isa_kernels *dlc_kernels_for(dlconv_isa isa) { return table_for(isa); }
#endif
