/* test_hooks.h - internal hooks for the reliability tests (fault injection, DLCONV_VERIFY).
 *
 * Not part of the public API, and not in the library that is installed: they exist only in the
 * test build of the library (compiled with DLC_TEST_HOOKS; tests/ link it, see meson.build),
 * hidden symbols reachable by tests that include this header. There they are inert until a test
 * turns them on: an allocation costs one relaxed load and a never-taken branch more, a plan
 * nothing. In the release library their reads are constants. */
#ifndef DLC_TEST_HOOKS_H
#define DLC_TEST_HOOKS_H

#include <stddef.h>

/* ---- allocation hook (src/core/alloc.c) ----------------------------------------------------
   While armed, every dlc_malloc/dlc_calloc is counted (thread-safe), every dlc_free of a
   non-NULL pointer decrements the live count, and allocation number fail_at (1-based, counted
   from the last dlc_test_alloc_arm) returns NULL as if memory had run out. */

/* Arm: zero the counters; fail_at = 0 never fails, k > 0 fails the k-th allocation only. */
void dlc_test_alloc_arm(long fail_at);
/* Disarm: back to plain allocation (counters keep their values). */
void dlc_test_alloc_disarm(void);
/* Allocations attempted since arming (the failed one included). */
long dlc_test_alloc_count(void);
/* Allocations made while armed and not yet freed (allocations made before arming and freed
   while armed count negative: arm before creating what you want to account for). */
long dlc_test_alloc_live(void);
/* 1 if the fail_at-th allocation happened (and was made to fail). */
int dlc_test_alloc_fired(void);

/* ---- corrupt micro-kernels (src/arch/config.c) ---------------------------------------------
   While on, dlc_kernels_for() hands out a copy of each ISA's table whose micro-kernels are
   wrappers that call the real kernel and then perturb the first element of each tile they
   store in y (direct conv/dwc/dwp, gemm's final K chunk, spatial pack, gspc, csr spmm). Only
   plans created while it is on are affected. Lets a test show that DLCONV_VERIFY catches a
   wrong kernel. */
void dlc_test_corrupt_kernels(int on);
/* Inside the library (src/arch/kernel_hooks.c): whether the hook is on, and the perturbing copy
   of an ISA's real table that dlc_kernels_for() hands out while it is. */
struct dlc_isa_kernels;
int dlc_kernel_hook_on(void);
const struct dlc_isa_kernels *dlc_kernel_hook_table(const struct dlc_isa_kernels *real);

/* ---- direct F16/int8 convolution mode (src/direct/direct_lowp_conv.c) ----------------------
   -1 (the default): the plan picks in-place or packed B panels by the share of junk virtual
   positions; 0: always in place; 1: always packed (where the ISA has the kernels); 2: int8
   transposed (ukernel_t, where the ISA has it; else packed). Read when a plan is made, so every
   mode can be tested on any shape. */
void dlc_test_direct_lowp_packed(int mode);

/* ---- spatial pack F16/int8 bands (src/spatial_pack/spack_lowp.c) -----------------------------
   0 (the default): the plan sizes its bands of output rows for L2; rows > 0: bands of at most
   that many rows, so that small test shapes run several bands per image. Read when a plan is
   made. */
void dlc_test_spack_lowp_band_rows(int rows);

/* ---- direct conv bands (src/direct/direct.c) -------------------------------------------------
   0 (the default): bands of output rows whose input rows fit BAND_BYTES; rows > 0: bands of at
   most that many rows, so that small test shapes run several bands per image (F16 widens x per
   band). Read when a plan is made. */
void dlc_test_direct_band_rows(int rows);

/* ---- direct NCHW depthwise kernels (src/direct/direct.c) -------------------------------------
   -1 (the default): the plan picks the pixels-in-lanes kernel (dwp) or channel blocks in the lanes
   (dwt) or a small plane flat in the lanes (dwf) by shape; 0: dwp; 1: dwt wherever it applies
   (channel multiplier 1); 2: dwf wherever it applies (the family's plane sizes, stride 1, padded
   to keep the size), else dwp. Read when a plan is made. */
void dlc_test_direct_dw_mode(int mode);
/* ---- direct NCHW convolutions with pixels in the lanes (src/direct/direct_nchw.c) -------------
   -1 (the default): the implementation takes the stride-1 layers where it pays
   (dlc_direct_nchw_pays); 0: never (direct.c's transposing path runs them); 1: wherever its
   kernels apply. Read when a plan is made. */
void dlc_test_direct_nchw_mode(int mode);

#endif
