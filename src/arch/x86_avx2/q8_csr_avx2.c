/* int8 csr micro-kernel, AVX2: the template src/arch/template/q8_csr.h (which describes the tile)
 * over this ISA's vec.h: 3 rows x 2 ymm of 16 s16 pixels, 12 accumulators on vpmaddwd + vpaddd. */
#include "vec.h"
#include "../template/q8_csr.h"
