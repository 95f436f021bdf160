/* int8 csr micro-kernel, AArch64 Neon: the template src/arch/template/q8_csr.h over this ISA's
 * vec.h: 3 rows x 2 vectors of 8 s16 pixels (ZIP1 / ZIP2 of two operand rows, SMLAL + SMLAL2 by
 * the broadcast value pair into vi2 accumulators), 24 accumulator registers of the 32. */
#include "vec.h"
#include "../template/q8_csr.h"
