/* options.h - what the user asked dlconv-bench to do, and the names it uses for the library's enums. */
#ifndef DLCB_OPTIONS_H
#define DLCB_OPTIONS_H

#include <stdio.h>

#include "dlconv.h"

#define BENCH_MAX_ALGOS 6
#define BENCH_MAX_THREADS 16
#define BENCH_MAX_INPUTS 64

typedef struct bench_options {
  dlconv_algo algos[BENCH_MAX_ALGOS];   /* in the order given; each at most once */
  int n_algos;
  dlconv_isa isa;
  int threads[BENCH_MAX_THREADS];
  int n_threads;
  dlconv_layout layout;
  dlconv_dtype dtype;
  double sparsity;                      /* fraction of weights set to zero, [0, 1) */
  int measure;                          /* DLCONV_PLAN_MEASURE */
  int peers_onednn;
  int peers_xnnpack;                     /* --peers xnnpack: XNNPACK on NHWC data (peer_xnnpack.h) */
  int peers_cudnn;                      /* --peers cudnn: with --isa cuda (bench_cuda.c) */
  int batch;                            /* --batch N: every layer's n (0: the suite's) */
  int quick;                            /* CI smoke: few layers, short timing */
  int verify;                           /* 0 with --no-verify */
  double min_time;                      /* seconds of timed calls per measurement */
  double peak_gflops;                   /* > 0: given with --peak, the probe is skipped */
  const char *csv_path;                 /* --csv FILE, else NULL: no CSV */
  const char *filter;                   /* only layers whose name contains it */
  const char *suites[BENCH_MAX_INPUTS];
  int n_suites;
  const char *shapes[BENCH_MAX_INPUTS];
  int n_shapes;
  int info;                             /* --info: what each call would run, planned, not timed */
  int algo_given, isa_given, dtype_given, layout_given;   /* --info shows only these when given */
} bench_options;

/* 0: run; 1: help was printed, exit 0; 2: error (message printed), exit 2. */
int bench_parse_options(int argc, char **argv, bench_options *o);
void bench_print_help(FILE *f);

const char *bench_algo_name(dlconv_algo a);    /* "auto", "direct", "gemm", "spack", "gspc", "csr" */
const char *bench_isa_name(dlconv_isa i);      /* "auto", "generic", "avx2", "avx512", ... */
const char *bench_dtype_name(dlconv_dtype d);  /* "f32", "f16", "u8", "s8", "s32" */
const char *bench_layout_name(dlconv_layout l);

#endif
