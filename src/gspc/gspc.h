/* gspc.h - what the GSPC drivers offer the implementation list (src/api/impl_list.c). */
#ifndef DLC_GSPC_H
#define DLC_GSPC_H

#include "../core/plan.h"

extern const dlc_impl_ops dlc_gspc_ops;        /* gspc.c: fp32 */
extern const dlc_impl_ops dlc_gspc_lowp_ops;   /* gspc_lowp.c: F16 and int8 */

#endif
