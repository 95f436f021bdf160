/* gspc_pos.h - GSPC's positions-in-lanes mode for NCHW grouped layers (gspc_pos.c), which the fp32
 * driver (gspc.c) plans instead of groups in lanes where it pays. */
#ifndef DLC_GSPC_POS_H
#define DLC_GSPC_POS_H

#include "../core/plan.h"
#include "../core/threading.h"
#include "../ukernel/gspc_ukernel.h"

typedef struct dlc_gspc_pos dlc_gspc_pos;

/* An ungrouped layer of few input channels (an RGB stem): a vector of neighbouring output pixels
   of one channel reads the phase planes of its 3 or 4 channels as it does a small group's, with
   no channel transposes at the NCHW input or output (direct's channel-last staging of both took a
   third of a 3x224x224>32 stride-2 stem's time). */
static inline int dlc_gspc_pos_stem(const dlc_conv_shape *s) {
  return s->groups == 1 && s->cin_g <= 4;
}

/* 1 where the mode is the one to plan for shape s with family f. */
int dlc_gspc_pos_pays(const dlc_conv_shape *s, const dlc_f32_gspc_family *f);

/* Plans the mode (sets the plan's workspace, tasks, packed bytes and kernel name) into *out. */
dlconv_status dlc_gspc_pos_plan(dlconv_plan *p, const dlc_f32_gspc_family *f, const float *w, dlc_gspc_pos **out);

void dlc_gspc_pos_task(const dlc_exec *c, const dlc_gspc_pos *d, size_t task);

void dlc_gspc_pos_free(dlc_gspc_pos *d);

#endif
