/* f32_direct_avx2.h - the avx2 direct pieces other ISAs' families reuse. */
#ifndef DLC_F32_DIRECT_AVX2_H
#define DLC_F32_DIRECT_AVX2_H

#include <stddef.h>
#include <stdint.h>

/* dlc_f16_direct_to_channel_last_fn with F16C; AVX-512 has no faster way for 8-channel blocks. */
void dlc_f16_to_channel_last__avx2(const uint16_t *src, size_t plane, size_t w, size_t ci, float *dst);

#endif
