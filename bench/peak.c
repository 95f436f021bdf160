/* peak.c - fp32 FMA throughput probe (see peak.h). */
#include "peak.h"

#include <string.h>

#include "timer.h"

#if defined(__x86_64__)
#include <cpuid.h>
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

/* int8 multiply-add: the instructions the library's int8 kernels are built on, each in chains
   of 12 independent accumulators. MACs per instruction: vpmaddwd ymm (+ vpaddd) 16, vpdpwssd
   ymm 16, vpdpwssd zmm 32, vpdpbusd zmm 64. Integer units run at the same speed whatever the values (which wrap
   freely); the loops hide their constant operands from the optimiser, which would otherwise
   hoist (vpmaddwd) or fold them, and vpmaddwd gets operands of its own per accumulator. */
#define I_DECL(i) __m256i c##i = _mm256_set1_epi32(i);
#define I_SUM(i) s = _mm256_add_epi32(s, c##i);
#define ACC6(M) M(0) M(1) M(2) M(3) M(4) M(5)
#define X_DECL(i) __m256i x##i = _mm256_set1_epi16(i + 1);
#define MADD_STEP(i) c##i = _mm256_add_epi32(c##i, _mm256_madd_epi16(x##i, b));
__attribute__((target("avx2"), noinline)) static void madd_loop_avx2(long iters) {
  const __m256i b = _mm256_set1_epi16(-2);
  ACC6(I_DECL)
  ACC6(X_DECL)
  for (long k = 0; k < iters; k++) {
    __asm__("" : "+x"(x0), "+x"(x1), "+x"(x2), "+x"(x3), "+x"(x4), "+x"(x5));
    ACC6(MADD_STEP)
  }
  __m256i s = _mm256_setzero_si256();
  ACC6(I_SUM)
  probe_sink += (float)_mm256_extract_epi32(s, 0);
}

/* The VNNI probes: one loop, 2 x 12 dot products per iteration on 12 accumulators, per
   instruction and vector type; `dot` and `add` are #defined to the instruction and the vector
   add around each instance. */
#define DOT_LOOP(name, isas, vtype, set_a, set_b, set_c, zero, first_lane)         \
  __attribute__((target(isas), noinline)) static void name(long iters) {         \
    vtype a = set_a(3);                                                           \
    const vtype b = set_b(-2);                                                    \
    /* distinct starts: equal chains would be merged into one by the optimiser */ \
    vtype c0 = set_c(0), c1 = set_c(1), c2 = set_c(2), c3 = set_c(3), c4 = set_c(4), \
          c5 = set_c(5), c6 = set_c(6), c7 = set_c(7), c8 = set_c(8), c9 = set_c(9),  \
          c10 = set_c(10), c11 = set_c(11);                                         \
    for (long k = 0; k < iters; k++) {                                            \
      __asm__("" : "+v"(a));                                                      \
      ACC12(DOT_STEP) ACC12(DOT_STEP)                                             \
    }                                                                             \
    vtype s = zero();                                                             \
    ACC12(DOT_SUM)                                                                \
    probe_sink += (float)first_lane(s);                                           \
  }
#define DOT_STEP(i) c##i = dot(c##i, a, b);
#define DOT_SUM(i) s = add(s, c##i);

#if defined(DLC_HAVE_AVX512VNNI)
#define dot _mm256_dpwssd_epi32
#define add _mm256_add_epi32
#define lane0_256(s) _mm256_extract_epi32(s, 0)
DOT_LOOP(dpwssd_loop_ymm, "avx512f,avx512vl,avx512vnni", __m256i, _mm256_set1_epi16, _mm256_set1_epi16,
         _mm256_set1_epi32, _mm256_setzero_si256, lane0_256)
#undef dot
#undef add
#define dot _mm512_dpwssd_epi32
#define add _mm512_add_epi32
DOT_LOOP(dpwssd_loop_zmm, "avx512f,avx512bw,avx512vnni", __m512i, _mm512_set1_epi16, _mm512_set1_epi16,
         _mm512_set1_epi32, _mm512_setzero_si512, _mm512_reduce_add_epi32)
#undef dot
#define dot _mm512_dpbusd_epi32
DOT_LOOP(dpbusd_loop_zmm, "avx512f,avx512bw,avx512vnni", __m512i, _mm512_set1_epi8, _mm512_set1_epi8,
         _mm512_set1_epi32, _mm512_setzero_si512, _mm512_reduce_add_epi32)
#undef dot
#undef add
#endif

#if defined(DLC_HAVE_AVXVNNI)
/* AVX-VNNI (VEX-encoded vpdpwssd): CPUID leaf 7 subleaf 1, EAX bit 4. */
static int has_avx_vnni(void) {
  unsigned a, b, c, d;
  return __get_cpuid_count(7, 1, &a, &b, &c, &d) && ((a >> 4) & 1);
}
#define dot _mm256_dpwssd_avx_epi32
#define add _mm256_add_epi32
#define lane0_vex(s) _mm256_extract_epi32(s, 0)
DOT_LOOP(dpwssd_loop_vex, "avx2,avxvnni", __m256i, _mm256_set1_epi16, _mm256_set1_epi16, _mm256_set1_epi32,
         _mm256_setzero_si256, lane0_vex)
#undef dot
#undef add
#endif

static void add_int8(bench_peak *p, const char *name, double gops) {
  if (p->n_int8 < BENCH_MAX_INT8_PEAKS) {
    p->int8[p->n_int8].instr = name;
    p->int8[p->n_int8].gops = gops;
    p->n_int8++;
  }
}

void bench_peak_probe_int8(bench_peak *p) {
  __builtin_cpu_init();
  p->n_int8 = 0;
  if (!__builtin_cpu_supports("avx2")) return;
  add_int8(p, "vpmaddwd", measure(madd_loop_avx2, 6.0 * 16 * 2));
#if defined(DLC_HAVE_AVX512VNNI)
  if (__builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512bw")) {
    add_int8(p, "vpdpwssd", measure(dpwssd_loop_ymm, 2 * 12.0 * 16 * 2));
    add_int8(p, "vpdpwssd zmm", measure(dpwssd_loop_zmm, 2 * 12.0 * 32 * 2));
    add_int8(p, "vpdpbusd", measure(dpbusd_loop_zmm, 2 * 12.0 * 64 * 2));
    return;
  }
#endif
#if defined(DLC_HAVE_AVXVNNI)
  if (has_avx_vnni()) add_int8(p, "vpdpwssd", measure(dpwssd_loop_vex, 2 * 12.0 * 16 * 2));
#endif
}

#else

void bench_peak_probe_int8(bench_peak *p) { p->n_int8 = 0; }

void bench_peak_probe(bench_peak *p) {
  p->gflops = 0;
  p->unit = "not probed on this architecture";
}

#endif

/* The instruction an int8 kernel multiplies with, from its name (dlconv_plan_info.kernel):
   quads ("c4") on AVX-512 VNNI/VBMI are vpdpbusd, other VNNI kernels vpdpwssd, AVX2 and
   AVX-512 kernels without VNNI vpmaddwd. NULL for others (generic C). */
static const char *int8_instr(const char *kernel) {
  if (strstr(kernel, "avx512vnni") || strstr(kernel, "avx512vbmi"))
    return strstr(kernel, "c4") ? "vpdpbusd" : strstr(kernel, "_zmm") ? "vpdpwssd zmm" : "vpdpwssd";
  if (strstr(kernel, "avxvnni")) return "vpdpwssd";
  if (strstr(kernel, "avx2") || strstr(kernel, "avx512")) return "vpmaddwd";
  return NULL;
}

double bench_peak_int8_for(const bench_peak *p, const char *kernel) {
  const char *want = int8_instr(kernel);
  double best = 0;
  for (int i = 0; i < p->n_int8; i++) {
    if (want && !strcmp(p->int8[i].instr, want)) return p->int8[i].gops;
    if (p->int8[i].gops > best) best = p->int8[i].gops;
  }
  return best;   /* generic kernels (or an instruction not probed): this machine's best */
}
