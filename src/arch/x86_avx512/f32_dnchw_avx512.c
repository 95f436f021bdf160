/* f32 NCHW direct with pixels in the lanes, AVX-512: the family of src/arch/template/f32_dnchw.h
 * with its defaults for 32 registers. */
#include "vec.h"
#include "../template/f32_dnchw.h"
