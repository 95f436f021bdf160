/* The thread-local detail behind dlconv_last_error(). */
#include <stdarg.h>
#include <stdio.h>

#include "util.h"

static _Thread_local char last_error[512];

static void vset(const char *fmt, va_list ap) { vsnprintf(last_error, sizeof last_error, fmt, ap); }

void dlc_set_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vset(fmt, ap);
  va_end(ap);
}

dlconv_status dlc_fail(dlconv_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vset(fmt, ap);
  va_end(ap);
  return s;
}

DLCONV_API const char *dlconv_last_error(void) { return last_error; }
