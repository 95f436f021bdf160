/* verify.h - DLCONV_VERIFY=1: every execute re-checked against a plain double-precision
   recomputation of a sample of output points (all of them for small layers). */
#ifndef DLC_VERIFY_H
#define DLC_VERIFY_H

#include "../core/plan.h"

/* At plan time (only when DLCONV_VERIFY is set): keep an OIHW copy of the weights. */
dlconv_status dlc_verify_keep_weights(dlconv_plan *p, const void *w);  /* OIHW of p->dtype */
/* After an execute: DLCONV_OK, or DLCONV_ERR_INTERNAL with a message (and one stderr line). */
dlconv_status dlc_verify_output(const dlconv_plan *p, const void *x, const void *y);

#endif
