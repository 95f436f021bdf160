/* peak.h - this machine's fp32 multiply-add throughput on one core, measured at run time.
 *
 * The widest FMA the CPU runs (AVX-512, else AVX2+FMA, else scalar/SSE code) is probed with
 * enough independent accumulators to hide the FMA latency on both pipes; every kernel is
 * compiled with its own target attribute so the binary still runs on any x86-64. Other
 * architectures are not probed (the report then leaves % of peak empty). */
#ifndef DLCB_PEAK_H
#define DLCB_PEAK_H

#define BENCH_MAX_INT8_PEAKS 4

typedef struct bench_peak {
  double gflops;        /* per core; 0 when unknown */
  const char *unit;     /* "avx512 fma", "avx2 fma", "scalar", or "given" / "not probed" */
  struct {
    const char *instr;  /* "vpmaddwd" (ymm, with vpaddd), "vpdpwssd" (ymm), "vpdpbusd" (zmm) */
    double gops;        /* per core, 2 ops per multiply-add */
  } int8[BENCH_MAX_INT8_PEAKS];
  int n_int8;           /* probed with bench_peak_probe_int8; 0 when not (or not x86) */
} bench_peak;

/* Runs on the calling thread (pin it first) for about 0.15 s. */
void bench_peak_probe(bench_peak *p);
/* The int8 multiply-add peaks of the instructions the library's int8 kernels use, those this CPU
   runs: about 0.15 s each, on the calling thread. */
void bench_peak_probe_int8(bench_peak *p);
/* The per-core int8 peak (GOP/s) an int8 kernel is held to: that of its instruction (from its
   name), or this machine's best for generic kernels; 0 when none was probed. */
double bench_peak_int8_for(const bench_peak *p, const char *kernel);

#endif
