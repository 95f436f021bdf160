/* bench_cuda_none.c - --isa cuda in a dlconv-bench built without CUDA. */
#include <stdio.h>

#include "bench_cuda.h"

int bench_cuda_main(const bench_options *o) {
  (void)o;
  fprintf(stderr, "dlconv-bench: --isa cuda: this build has no CUDA backend (configure where nvcc is found)\n");
  return 2;
}
