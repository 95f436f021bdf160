/* int8 csr micro-kernel, AVX2: the avx2 instance of q8_csr_tiles.h (which describes the tile). */
#include <immintrin.h>
#include <string.h>

#include "../../ukernel/csr_ukernel.h"

#define Q8_ISA avx2
#define Q8_DOT2(acc, a, b) _mm256_add_epi32((acc), _mm256_madd_epi16((a), (b)))
#include "q8_csr_tiles.h"
