/* peak.c - fp32 FMA throughput probe (see peak.h). */
#include "peak.h"

#include "timer.h"

#if defined(__x86_64__)
#include <immintrin.h>

/* Each loop hands its result to a volatile: a function without side effects could otherwise be
   moved across the clock reads (or computed once) by an optimising compiler. */
typedef void (*fma_loop_fn)(long iters);
static volatile float probe_sink;

/* Accumulators: latency (4-5 cycles) x 2 FMA pipes needs >= 10 independent chains; 24 zmm (of 32)
   and 12 ymm (of 16, two more hold the operands) leave every pipe busy every cycle. The
   constants keep values bounded and normal (a denormal would slow the FMAs down). */
#define ACC12(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11)
#define ACC24(M) ACC12(M) M(12) M(13) M(14) M(15) M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23)
#define MUL_C 0.999999f
#define ADD_C 1e-6f

#define Z_DECL(i) __m512 c##i = _mm512_set1_ps((float)(i));
#define Z_STEP(i) c##i = _mm512_fmadd_ps(c##i, m, a);
#define Z_SUM(i) s = _mm512_add_ps(s, c##i);
__attribute__((target("avx512f"), noinline)) static void fma_loop_avx512(long iters) {
  const __m512 m = _mm512_set1_ps(MUL_C), a = _mm512_set1_ps(ADD_C);
  ACC24(Z_DECL)
  for (long k = 0; k < iters; k++) { ACC24(Z_STEP) }
  __m512 s = _mm512_setzero_ps();
  ACC24(Z_SUM)
  probe_sink += _mm512_reduce_add_ps(s);
}

#define Y_DECL(i) __m256 c##i = _mm256_set1_ps((float)(i));
#define Y_STEP(i) c##i = _mm256_fmadd_ps(c##i, m, a);
#define Y_SUM(i) s = _mm256_add_ps(s, c##i);
__attribute__((target("avx2,fma"), noinline)) static void fma_loop_avx2(long iters) {
  const __m256 m = _mm256_set1_ps(MUL_C), a = _mm256_set1_ps(ADD_C);
  ACC12(Y_DECL)
  for (long k = 0; k < iters; k++) { ACC12(Y_STEP) ACC12(Y_STEP) }
  __m256 s = _mm256_setzero_ps();
  ACC12(Y_SUM)
  float lanes[8];
  _mm256_storeu_ps(lanes, s);
  probe_sink += lanes[0] + lanes[7];
}

/* Plain C: a multiply and an add per step (2 flops), vectorised with SSE if the compiler can. */
#define S_DECL(i) float c##i = (float)(i);
#define S_STEP(i) c##i = c##i * MUL_C + ADD_C;
#define S_SUM(i) s += c##i;
__attribute__((noinline)) static void fma_loop_scalar(long iters) {
  ACC12(S_DECL)
  for (long k = 0; k < iters; k++) { ACC12(S_STEP) }
  float s = 0;
  ACC12(S_SUM)
  probe_sink += s;
}

static double seconds_for(fma_loop_fn fn, long iters) {
  double t = bench_now();
  fn(iters);
  return bench_now() - t;
}

/* GFLOP/s of fn: grow the iteration count until a call lasts ~2 ms, run such calls for 0.15 s
   (which also brings the core to its steady clock) and keep the fastest. The fastest, not the
   median: a timer cannot overstate a peak, while another process sharing the core (a compiler,
   a second benchmark) can halve any one sample. */
static double measure(fma_loop_fn fn, double flops_per_iter) {
  long iters = 1000;
  double d;
  while ((d = seconds_for(fn, iters)) < 0.002) iters = d > 1e-4 ? (long)(iters * 0.0025 / d) : iters * 8;
  double best = 0, start = bench_now();
  for (int r = 0; r < 10 || bench_now() - start < 0.15; r++) {
    double rate = flops_per_iter * (double)iters / seconds_for(fn, iters) * 1e-9;
    if (rate > best) best = rate;
  }
  return best;
}

void bench_peak_probe(bench_peak *p) {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) {
    p->gflops = measure(fma_loop_avx512, 24.0 * 16 * 2);
    p->unit = "avx512 fma";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    p->gflops = measure(fma_loop_avx2, 2 * 12.0 * 8 * 2);
    p->unit = "avx2 fma";
  } else {
    p->gflops = measure(fma_loop_scalar, 12.0 * 2);
    p->unit = "scalar";
  }
}

#else

void bench_peak_probe(bench_peak *p) {
  p->gflops = 0;
  p->unit = "not probed on this architecture";
}

#endif
