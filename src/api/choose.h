/* choose.h - which ISA and implementation a plan gets: forced, AUTO, MEASURE or wisdom. */
#ifndef DLC_CHOOSE_H
#define DLC_CHOOSE_H

#include "../core/plan.h"
#include "weights.h"

/* Tries the ISAs and algorithms the options ask for (AUTO: auto.c's order, or MEASURE's or
   wisdom's choice first) until an implementation plans p. o: validated, never NULL. */
dlconv_status dlc_choose_and_plan(dlconv_plan *p, const dlconv_options *o, dlc_weights *w);

#endif
