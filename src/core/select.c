/* The AUTO heuristic (tier 1 of ARCHITECTURE.md's three): a shape-driven order of algorithms.
   Tier 2 (DLCONV_PLAN_MEASURE) times these candidates; tier 3 (wisdom) replays such timings. */
#include "select.h"

#include "env.h"
#include "kernels.h"

const dlc_algo_ops *dlc_algo_ops_for(dlconv_algo a) {
  switch (a) {
    case DLCONV_ALGO_DIRECT: return &dlc_direct_ops;
    case DLCONV_ALGO_IM2COL_GEMM: return &dlc_gemm_ops;
    case DLCONV_ALGO_SPATIAL_PACK: return &dlc_spack_ops;
    case DLCONV_ALGO_GSPC: return &dlc_gspc_ops;
    case DLCONV_ALGO_SPARSE_CSR: return &dlc_csr_ops;
    default: return NULL;
  }
}

int dlc_auto_isas(dlconv_isa out[DLC_MAX_CANDIDATES]) {
  static const dlconv_isa order[] = {DLCONV_ISA_AVX512, DLCONV_ISA_AVX2, DLCONV_ISA_NEON, DLCONV_ISA_GENERIC};
  dlconv_isa cap = dlc_env()->isa_cap;
  int n = 0, capped = cap != DLCONV_ISA_AUTO;
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
    if (capped && order[i] != cap) continue; /* skip ISAs better than the cap */
    capped = 0;
    if (dlc_kernels_for(order[i])) out[n++] = order[i];
  }
  if (n == 0) out[n++] = DLCONV_ISA_GENERIC; /* a cap naming an ISA this machine lacks */
  return n;
}

static int push(dlconv_algo *out, int n, dlconv_algo a) {
  for (int i = 0; i < n; i++)
    if (out[i] == a) return n;
  out[n] = a;
  return n + 1;
}

int dlc_auto_algos(const dlc_conv_shape *s, double density, dlconv_isa isa, dlconv_algo out[DLC_MAX_CANDIDATES]) {
  (void)isa;
  int n = 0;
  int pointwise = s->k_h == 1 && s->k_w == 1;
  int depthwise = s->cin_g == 1;
  /* Pruned weights: below this density the zero-skipping kernel wins even against dense
     kernels running near peak (thesis ch. 4: CSR pays off at high sparsity only). */
  if (density < 0.2) n = push(out, n, DLCONV_ALGO_SPARSE_CSR);
  if (depthwise) {
    n = push(out, n, DLCONV_ALGO_DIRECT);
    n = push(out, n, DLCONV_ALGO_GSPC);
  } else if (s->groups > 1 && s->cin_g < 64) {
    n = push(out, n, DLCONV_ALGO_GSPC);
  }
  if (pointwise || s->cin_g * s->k_h * s->k_w >= 32) n = push(out, n, DLCONV_ALGO_IM2COL_GEMM);
  n = push(out, n, DLCONV_ALGO_SPATIAL_PACK);
  n = push(out, n, DLCONV_ALGO_DIRECT);
  n = push(out, n, DLCONV_ALGO_IM2COL_GEMM);
  n = push(out, n, DLCONV_ALGO_GSPC);
  n = push(out, n, DLCONV_ALGO_SPARSE_CSR);
  return n;
}
