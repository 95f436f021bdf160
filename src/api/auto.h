/* auto.h - the AUTO decisions: which ISA and which algorithms to try, best first. */
#ifndef DLC_AUTO_H
#define DLC_AUTO_H

#include "../core/plan.h"

#define DLC_MAX_CANDIDATES 8

/* ISAs to try for an AUTO ISA, best first (capped by DLCONV_ISA); returns the count. */
int dlc_auto_isas(dlconv_isa out[DLC_MAX_CANDIDATES]);
/* Algorithms to try for an AUTO algorithm on this shape and dtype, best first; returns the count.
   density: fraction of nonzero weights. Every list ends with algorithms that take every valid
   shape of the dtype. */
int dlc_auto_algos(const dlc_conv_shape *s, dlconv_dtype dtype, double density, dlconv_isa isa,
                   dlconv_algo out[DLC_MAX_CANDIDATES]);

#endif
