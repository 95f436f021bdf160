/* info.h - dlconv-bench --info: what this machine and build run for each layer, planned and never
 * timed (the output is described in bench_print_help). */
#ifndef DLCB_INFO_H
#define DLCB_INFO_H

#include "options.h"

/* Prints the report on stdout (and the cells to o->csv_path when set). Exit status: 0; 1 when a
   plan failed other than with DLCONV_ERR_UNSUPPORTED; 2 when a suite, a shape or the CSV file
   could not be read or written. */
int bench_info(const bench_options *o);

#endif
