/* fuzz_check.h - one fuzz input, decoded into a libdlconv call sequence and checked.
 *
 * Shared by the libFuzzer target (fuzz_conv.c, clang -fsanitize=fuzzer,address,undefined) and
 * by the replay harness (replay.c, any compiler) that the normal meson test suite runs over the
 * committed corpus and every regression input. Uses only the public header and the
 * independent double-precision oracle (tests/oracle.c). */
#ifndef DLCONV_FUZZ_CHECK_H
#define DLCONV_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>

/* Decodes data, runs it, checks every result. Returns 0 when every check held, else 1 with a
   description (a reproducer) in msg. Never aborts on a library misbehaviour by itself (the
   sanitizers may). */
int dlconv_fuzz_one(const uint8_t *data, size_t size, char *msg, size_t msg_len);

#endif
