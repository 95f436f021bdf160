/* help_main.c - dlconv-bench's --help alone: options.c needs nothing of the library but its
   header, so scripts/bench.sh compiles this in a second to answer --help before any build. */
#include "options.h"

int main(void) {
  bench_print_help(stdout);
  return 0;
}
