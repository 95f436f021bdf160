/* measure.h - DLCONV_PLAN_MEASURE (tier 2 of AUTO): time the candidates on the actual shape. */
#ifndef DLC_MEASURE_H
#define DLC_MEASURE_H

#include "../core/plan.h"
#include "weights.h"

/* Plans every candidate algos[0..n) on isa that accepts the shape, times it, keeps the fastest
   (remembered as wisdom) and plans p with it. DLCONV_ERR_UNSUPPORTED when none accepts it. */
dlconv_status dlc_measure(dlconv_plan *p, const dlconv_algo *algos, int n, dlconv_isa isa, dlc_weights *w);

#endif
