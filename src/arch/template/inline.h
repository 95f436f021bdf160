/* inline.h - the two attributes every kernel file leans on, so that a register tile's
 * accumulators live in registers. */
#ifndef DLC_TEMPLATE_INLINE_H
#define DLC_TEMPLATE_INLINE_H

#ifndef INLINE
#define INLINE static inline __attribute__((always_inline))
#endif
/* Fully unroll the register-tile loops before scalar replacement, else GCC -O3 may keep the
   accumulator array in memory and store it after every FMA. */
#ifndef UNROLL
#define UNROLL _Pragma("GCC unroll 32")
#endif

#endif
