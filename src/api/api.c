/* The small public entry points: version, strings, initialisers, queries. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/plan.h"
#include "../core/util.h"
#include "../ukernel/config.h"
#include "validate.h"

#define STR2(x) #x
#define STR(x) STR2(x)

const char *dlconv_version(void) {
  return STR(DLCONV_VERSION_MAJOR) "." STR(DLCONV_VERSION_MINOR) "." STR(DLCONV_VERSION_PATCH);
}

const char *dlconv_status_string(dlconv_status s) {
  switch (s) {
    case DLCONV_OK: return "ok";
    case DLCONV_ERR_INVALID_ARG: return "invalid argument";
    case DLCONV_ERR_UNSUPPORTED: return "unsupported";
    case DLCONV_ERR_OUT_OF_MEMORY: return "out of memory";
    case DLCONV_ERR_DEVICE: return "device error";
    case DLCONV_ERR_IO: return "i/o error";
    case DLCONV_ERR_INTERNAL: return "internal error (self-check failed)";
    default: return "unknown status";
  }
}

int dlconv_isa_available(dlconv_isa isa) {
  if (isa == DLCONV_ISA_AUTO || isa == DLCONV_ISA_CUDA) return 0;
  return dlc_kernels_for(isa) != NULL;
}

void dlconv_options_init(dlconv_options *o) {
  if (!o) return;
  memset(o, 0, sizeof *o);
  o->algo = DLCONV_ALGO_AUTO;
  o->isa = DLCONV_ISA_AUTO;
}

void dlconv_conv2d_desc_init(dlconv_conv2d_desc *d, int32_t n, int32_t c_in, int32_t h_in, int32_t w_in,
                             int32_t c_out, int32_t k_h, int32_t k_w) {
  if (!d) return;
  memset(d, 0, sizeof *d);
  d->n = n; d->c_in = c_in; d->h_in = h_in; d->w_in = w_in;
  d->c_out = c_out; d->k_h = k_h; d->k_w = k_w;
  d->stride_h = d->stride_w = 1;
  d->dilation_h = d->dilation_w = 1;
  d->groups = 1;
  d->dtype = DLCONV_F32;
  d->layout = DLCONV_NCHW;
  d->out_min = -INFINITY;
  d->out_max = INFINITY;
}

dlconv_status dlconv_conv2d_output_shape(const dlconv_conv2d_desc *d, int32_t *h_out, int32_t *w_out) {
  dlc_conv_shape s;
  dlconv_status st = dlc_validate_desc(d, &s);
  if (st) return st;
  /* both checked before either is written: a failed call leaves the other output as it was */
  if (!h_out) return dlc_fail(DLCONV_ERR_INVALID_ARG, "h_out (output pointer) is NULL");
  if (!w_out) return dlc_fail(DLCONV_ERR_INVALID_ARG, "w_out (output pointer) is NULL");
  *h_out = (int32_t)s.h_out;
  *w_out = (int32_t)s.w_out;
  return DLCONV_OK;
}

size_t dlconv_plan_workspace_size(const dlconv_plan *p) { return p ? p->workspace_bytes : 0; }

dlconv_status dlconv_plan_query(const dlconv_plan *p, dlconv_plan_info *info) {
  if (!p) return dlc_fail(DLCONV_ERR_INVALID_ARG, "plan is NULL");
  if (!info) return dlc_fail(DLCONV_ERR_INVALID_ARG, "info is NULL");
  memset(info, 0, sizeof *info);
  info->algo = p->algo;
  info->isa = p->isa;
  info->dtype = p->dtype;
  info->workspace_bytes = p->workspace_bytes;
  info->packed_weight_bytes = p->packed_weight_bytes;
  info->weight_density = p->weight_density;
  info->macs = p->macs;
  snprintf(info->kernel, sizeof info->kernel, "%s", p->kernel);
  return DLCONV_OK;
}
