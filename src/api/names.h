/* names.h - the words the library prints for its enums (verbose lines, messages, wisdom). */
#ifndef DLC_NAMES_H
#define DLC_NAMES_H

#include "dlconv.h"

/* "direct", "im2col_gemm", "spatial_pack", "gspc", "sparse_csr"; "auto" for AUTO; "?" for a
   value that is no algorithm. */
const char *dlc_algo_name(dlconv_algo a);
/* 1 if a is an algorithm a plan can run (not AUTO, not out of range). */
int dlc_algo_is_concrete(dlconv_algo a);
/* "auto", "generic", "avx2", "avx512", "neon", "cuda"; "?" for a value that is no ISA. */
const char *dlc_isa_name(dlconv_isa i);
/* "f32", "f16", "u8", "s8", "s32"; "?" for a value that is no dtype. */
const char *dlc_dtype_name(dlconv_dtype d);
/* "nchw", "nhwc"; "?" for a value that is no layout. */
const char *dlc_layout_name(dlconv_layout l);

#endif
