/* CPU feature detection: cpuid + xgetbv on x86-64 (an instruction set counts only when the OS
   also saves its registers), getauxval on AArch64. */
#include "cpu.h"

#include <pthread.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1 << 1)
#endif
#ifndef HWCAP_ASIMDHP
#define HWCAP_ASIMDHP (1 << 10)
#endif
#ifndef HWCAP_ASIMDDP
#define HWCAP_ASIMDDP (1 << 20)
#endif
#ifndef HWCAP_ASIMDFHM
#define HWCAP_ASIMDFHM (1 << 23)
#endif
#endif

static dlc_cpu_features features;
static pthread_once_t once = PTHREAD_ONCE_INIT;

#if defined(__x86_64__) || defined(__i386__)
static unsigned long long xgetbv0(void) {
  unsigned int lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((unsigned long long)hi << 32) | lo;
}

static void detect(void) {
  unsigned int a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return;
  int osxsave = (c >> 27) & 1, avx = (c >> 28) & 1, fma = (c >> 12) & 1, f16c = (c >> 29) & 1;
  if (!osxsave || !avx) return;
  unsigned long long xcr0 = xgetbv0();
  int ymm_os = (xcr0 & 0x6) == 0x6;          /* XMM and YMM state */
  int zmm_os = (xcr0 & 0xe6) == 0xe6;        /* plus opmask, ZMM_Hi256, Hi16_ZMM */
  unsigned int b7 = 0, c7 = 0, a71 = 0;
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) { b7 = b; c7 = c; }
  if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) a71 = a;
  int avx2 = (b7 >> 5) & 1;
  int avx512 = ((b7 >> 16) & 1) && ((b7 >> 17) & 1) && ((b7 >> 30) & 1) && ((b7 >> 31) & 1);
  features.avx2_fma = ymm_os && avx2 && fma;
  features.f16c = ymm_os && f16c;
  features.avx512 = zmm_os && avx512 && features.avx2_fma;
  features.avx512_vnni = features.avx512 && ((c7 >> 11) & 1);
  features.avx512_vbmi = features.avx512 && ((c7 >> 1) & 1);
  features.avx_vnni = features.avx2_fma && ((a71 >> 4) & 1);
}
#elif defined(__aarch64__)
static void detect(void) {
  features.neon = 1; /* Advanced SIMD is mandatory on AArch64 */
#if defined(__linux__)
  unsigned long hw = getauxval(AT_HWCAP);
  features.neon_fp16 = (hw & HWCAP_ASIMDHP) != 0;
  features.neon_dotprod = (hw & HWCAP_ASIMDDP) != 0;
  features.neon_fhm = (hw & HWCAP_ASIMDFHM) != 0;
#endif
}
#else
static void detect(void) {}
#endif

const dlc_cpu_features *dlc_cpu(void) {
  pthread_once(&once, detect);
  return &features;
}
