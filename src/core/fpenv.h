/* fpenv.h - the floating-point mode kernels run in.
 *
 * Denormal operands make x86 FMA and add take a microcode assist (measured here: a layer with
 * denormal inputs ran 90-240x slower). So every task the library runs sets flush-to-zero and
 * denormals-are-zero on the thread that runs it and restores the thread's own mode afterwards:
 * callers' floating-point environment is untouched, and results differ from IEEE only where an
 * operand or a result is below FLT_MIN (1.2e-38), far under any tolerance a convolution has.
 * AArch64 handles denormals at full speed in hardware, so there this is a no-op. */
#ifndef DLC_FPENV_H
#define DLC_FPENV_H

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>

typedef unsigned dlc_fpmode;
enum { DLC_MXCSR_FTZ = 0x8000u, DLC_MXCSR_DAZ = 0x0040u };

static inline dlc_fpmode dlc_fpmode_enter(void) {
  dlc_fpmode saved = _mm_getcsr();
  dlc_fpmode want = saved | DLC_MXCSR_FTZ | DLC_MXCSR_DAZ;
  if (want != saved) _mm_setcsr(want);
  return saved;
}

static inline void dlc_fpmode_leave(dlc_fpmode saved) {
  if (_mm_getcsr() != saved) _mm_setcsr(saved);
}
#else
typedef int dlc_fpmode;
static inline dlc_fpmode dlc_fpmode_enter(void) { return 0; }
static inline void dlc_fpmode_leave(dlc_fpmode saved) { (void)saved; }
#endif

#endif
