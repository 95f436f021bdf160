/* cuda_none.c - the CUDA backend's entry points in a build without it (no nvcc, or -Dcuda=disabled). */
#include "cuda.h"

#include "../../core/util.h"

int dlc_cuda_available(void) { return 0; }

const char *dlc_cuda_why(void) { return "this build has no CUDA backend (configured without nvcc or with -Dcuda=disabled)"; }

int dlc_cuda_auto_algos(const dlc_conv_shape *s, dlconv_dtype dtype, dlconv_algo out[4]) {
  (void)s, (void)dtype, (void)out;
  return 0;
}

dlconv_status dlc_cuda_execute(const dlconv_plan *p, const void *x, void *y, void *workspace) {
  (void)p, (void)x, (void)y, (void)workspace;
  return dlc_fail(DLCONV_ERR_UNSUPPORTED, "isa cuda: %s", dlc_cuda_why());
}
