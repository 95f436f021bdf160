/* gspc_pos.h - GSPC's positions-in-lanes mode for NCHW grouped layers (gspc_pos.c), which the fp32
 * driver (gspc.c) plans instead of groups in lanes where it pays. */
#ifndef DLC_GSPC_POS_H
#define DLC_GSPC_POS_H

#include "../core/plan.h"
#include "../core/threading.h"
#include "../ukernel/gspc_ukernel.h"

typedef struct dlc_gspc_pos dlc_gspc_pos;

/* 1 where the mode is the one to plan for shape s with family f. */
int dlc_gspc_pos_pays(const dlc_conv_shape *s, const dlc_f32_gspc_family *f);

/* Plans the mode (sets the plan's workspace, tasks, packed bytes and kernel name) into *out. */
dlconv_status dlc_gspc_pos_plan(dlconv_plan *p, const dlc_f32_gspc_family *f, const float *w, dlc_gspc_pos **out);

void dlc_gspc_pos_task(const dlc_exec *c, const dlc_gspc_pos *d, size_t task);

void dlc_gspc_pos_free(dlc_gspc_pos *d);

#endif
