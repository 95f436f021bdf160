/* csr.h - what the sparse CSR drivers offer the implementation list (src/api/impl_list.c). */
#ifndef DLC_CSR_H
#define DLC_CSR_H

#include "../core/plan.h"

extern const dlc_impl_ops dlc_csr_ops;         /* csr.c: fp32, from dense weights or the caller's CSR */
extern const dlc_impl_ops dlc_csr_lowp_ops;    /* csr_lowp.c: F16 and int8 */

#endif
