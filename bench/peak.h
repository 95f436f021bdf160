/* peak.h - this machine's fp32 multiply-add throughput on one core, measured at run time.
 *
 * The widest FMA the CPU runs (AVX-512, else AVX2+FMA, else scalar/SSE code) is probed with
 * enough independent accumulators to hide the FMA latency on both pipes; every kernel is
 * compiled with its own target attribute so the binary still runs on any x86-64. Other
 * architectures are not probed (the report then leaves % of peak empty). */
#ifndef DLCB_PEAK_H
#define DLCB_PEAK_H

typedef struct bench_peak {
  double gflops;        /* per core; 0 when unknown */
  const char *unit;     /* "avx512 fma", "avx2 fma", "scalar", or "given" / "not probed" */
} bench_peak;

/* Runs on the calling thread (pin it first) for about 0.15 s. */
void bench_peak_probe(bench_peak *p);

#endif
