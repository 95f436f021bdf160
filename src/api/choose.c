/* The choice of ISA and algorithm: an explicit one is honoured or refused; AUTO tries the ISAs
   best first and on each the algorithms of auto.c (after a MEASURE's or wisdom's choice), each
   walked through the implementation list. */
#include "choose.h"

#include <stdio.h>

#include "../arch/cuda/cuda.h"
#include "../core/util.h"
#include "auto.h"
#include "impl_list.h"
#include "measure.h"
#include "names.h"
#include "wisdom.h"

/* ISA_CUDA, only ever asked for: the forced algorithm, or AUTO's order for the GPU (src/arch/cuda/);
   MEASURE and wisdom are for the CPU ISAs. */
static dlconv_status choose_cuda(dlconv_plan *p, const dlconv_options *o, dlc_weights *w) {
  if (!dlc_cuda_available()) return dlc_fail(DLCONV_ERR_UNSUPPORTED, "isa cuda: %s", dlc_cuda_why());
  dlconv_algo algos[4] = {o->algo};
  int n = o->algo == DLCONV_ALGO_AUTO ? dlc_cuda_auto_algos(&p->s, p->dtype, algos) : 1;
  dlconv_status st = DLCONV_ERR_UNSUPPORTED;
  char first_error[512] = "";
  for (int a = 0; a < n; a++) {
    st = dlc_impl_plan(p, algos[a], DLCONV_ISA_CUDA, w);
    if (st != DLCONV_ERR_UNSUPPORTED) return st;
    if (!first_error[0]) snprintf(first_error, sizeof first_error, "%s", dlconv_last_error());
  }
  return dlc_fail(st, "%s", first_error[0] ? first_error : "isa cuda: no algorithm accepts this shape");
}

dlconv_status dlc_choose_and_plan(dlconv_plan *p, const dlconv_options *o, dlc_weights *w) {
  dlconv_isa isas[DLC_MAX_CANDIDATES];
  int nisa;
  if (o->isa == DLCONV_ISA_CUDA) return choose_cuda(p, o, w);
  if (o->isa != DLCONV_ISA_AUTO) {
    if (!dlc_kernels_for(o->isa))
      return dlc_fail(DLCONV_ERR_UNSUPPORTED, "options->isa = %s is not available on this machine or build",
                      dlc_isa_name(o->isa));
    isas[0] = o->isa;
    nisa = 1;
  } else {
    nisa = dlc_auto_isas(isas);
  }
  const double density = o->algo == DLCONV_ALGO_AUTO ? dlc_weights_density(w, &p->s, p->dtype) : 1.0;
  dlconv_status st = DLCONV_ERR_UNSUPPORTED;
  char first_error[512] = "";
  for (int i = 0; i < nisa; i++) {
    dlconv_algo algos[DLC_MAX_CANDIDATES];
    int nalgo = 1;
    algos[0] = o->algo;
    if (o->algo == DLCONV_ALGO_AUTO) {
      nalgo = dlc_auto_algos(&p->s, p->dtype, density, isas[i], algos);
      p->isa = isas[i];
      char key[256];
      dlconv_algo wise;
      dlc_wisdom_key(p, key, sizeof key);
      if (o->flags & DLCONV_PLAN_MEASURE) {
        st = dlc_measure(p, algos, nalgo, isas[i], w);
        if (st != DLCONV_ERR_UNSUPPORTED) return st;
        continue;
      }
      if (dlc_wisdom_lookup(key, &wise)) {
        st = dlc_impl_plan(p, wise, isas[i], w);
        if (st != DLCONV_ERR_UNSUPPORTED) return st;
      }
    }
    for (int a = 0; a < nalgo; a++) {
      st = dlc_impl_plan(p, algos[a], isas[i], w);
      if (st != DLCONV_ERR_UNSUPPORTED) return st;
      if (!first_error[0]) snprintf(first_error, sizeof first_error, "%s", dlconv_last_error());
    }
  }
  return dlc_fail(st, "%s", first_error[0] ? first_error : "no algorithm/isa accepts this shape");
}
