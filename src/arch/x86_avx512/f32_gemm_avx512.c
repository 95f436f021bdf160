/* f32 GEMM micro-kernels, AVX-512: the family of src/arch/template/f32_gemm.h with the 14 x 32
 * tile (28 of the 32 zmm registers hold accumulators), binary16 output from the registers, and
 * its own B prefetch distances. */
#include "vec.h"

/* k steps between a B load and the prefetch that brings it, 0 for none. A tile of one or two
   rows (a dense layer with batch 1) is bound by memory and spends ~2 cycles per step: it must run
   a DRAM latency ahead, some 8 KB. A taller tile spends 7 to 14 cycles per k step (two FMA
   pipes) on a B micro-panel that the driver reads sequentially (from L1 or a contiguous block in
   L2), which the hardware prefetchers already follow: on a two-FMA-port core (Sapphire Rapids) the
   two prefetch instructions per k step cost 4-5% of a full tile's throughput for nothing. */
#define DLC_GEMM_B_PREFETCH_STEPS(M) ((M) <= 2 ? 64 : (M) <= 6 ? 24 : 0)
/* the F16 GEMM's last K chunk writes y as binary16 straight from the accumulators (vcvtps2ph
   with an immediate rounds to nearest even whatever MXCSR says and keeps NaN) */
#define DLC_GEMM_F16_OUT 1

#include "../template/f32_gemm.h"
