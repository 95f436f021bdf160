/* bench_cuda.h - dlconv-bench --isa cuda: the GPU run (bench_cuda.c; bench_cuda_none.c in a bench
 * built without CUDA). Per layer of each suite (batch from --batch): x uploaded once, y on the
 * device; libdlconv's plan for ISA_CUDA with each --algo, and with --peers cudnn cuDNN's fastest
 * algorithm (cudnnFindConvolutionForwardAlgorithm, TF32 off for f32, tensor cores for f16).
 * Timing: CUDA events around a CUDA graph of back-to-back calls (plain back-to-back calls where
 * capture fails), after warm-up; ms per call. Our output is checked against the bench's double
 * reference. Prints a table per suite, the model totals (sum of ms x repeats) and one
 * "TOTAL ..." line per suite and implementation for scripts. */
#ifndef DLCB_BENCH_CUDA_H
#define DLCB_BENCH_CUDA_H

#include "options.h"

/* The process's exit status: 0, 1 (a measurement failed or was wrong), 2 (cannot run). */
int bench_cuda_main(const bench_options *o);

#endif
