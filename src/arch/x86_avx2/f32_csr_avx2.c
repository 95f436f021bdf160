/* f32 csr micro-kernels, avx2: the template src/arch/template/f32_csr.h over this ISA's vec.h.
 * Register tile: 3 output rows x 4 ymm of 8 pixels, 12 accumulators (of 16 registers: one more
 * holds the broadcast weight): "f32_csr_3x32__avx2". The pixel remainder's last vector loads
 * with vmaskmovps and stores in pieces (no vmaskmovps store: avx2_store.h). */
#include "vec.h"
#include "../template/f32_csr.h"
