/* spack.h - what the spatial pack drivers offer the implementation list (src/api/impl_list.c). */
#ifndef DLC_SPACK_H
#define DLC_SPACK_H

#include "../core/plan.h"

extern const dlc_impl_ops dlc_spack_ops;       /* spack.c: fp32 */
extern const dlc_impl_ops dlc_spack_lowp_ops;  /* spack_lowp.c: F16 and int8 */

#endif
