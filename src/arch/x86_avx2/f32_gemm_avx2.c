/* f32 GEMM micro-kernels, AVX2: the family of src/arch/template/f32_gemm.h with its defaults,
 * the 6 x 16 tile (12 of the 16 ymm registers hold accumulators) and a B prefetch 16 k steps
 * ahead (64 for one- and two-row tiles). Partial stores are written in 4 + 2 + 1 pieces, never
 * with vmaskmovps (vec.h, avx2_store.h). */
#include "vec.h"

#include "../template/f32_gemm.h"
