/* impl_list.h - the implementation list: every way the library computes a convolution, in the
   order they are tried, and the walk that plans a shape with the first entry that takes it. */
#ifndef DLC_IMPL_LIST_H
#define DLC_IMPL_LIST_H

#include "../core/plan.h"
#include "../ukernel/config.h"
#include "weights.h"

/* 1 if an implementation takes this shape and dtype on kernel table k (never NULL in the walk;
   AUTO may ask with NULL for an ISA the build lacks). */
typedef int (*dlc_applies_fn)(const dlc_conv_shape *s, dlconv_dtype dtype, const dlc_isa_kernels *k);

typedef struct dlc_impl {
  const char *name;         /* which implementation, for a reader of the list or a debugger */
  dlconv_algo algo;         /* the algorithm it belongs to, as dlconv_plan_query reports it */
  unsigned dtypes;          /* bit (1u << dtype) of each dtype it serves */
  unsigned layouts;         /* bit (1u << layout) of each layout it serves */
  dlc_applies_fn applies;   /* NULL: every shape of those dtypes and layouts */
  const dlc_impl_ops *ops;
} dlc_impl;

/* Plans p (shape, dtype, threads and quantisation already set) with algorithm a on isa: tries
   a's entries that serve the dtype and layout and whose applies-check holds, in list order, until
   one answers something other than DLCONV_ERR_UNSUPPORTED. Sets p->algo, isa, kernels, ops and
   what ops->plan sets. */
dlconv_status dlc_impl_plan(dlconv_plan *p, dlconv_algo a, dlconv_isa isa, dlc_weights *w);
/* Frees what the plan's implementation holds (p->algo_data); the plan itself stays. */
void dlc_impl_release(dlconv_plan *p);

#endif
