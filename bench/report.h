/* report.h - what dlconv-bench prints: CSV rows, the per-layer table of a suite, model totals. */
#ifndef DLCB_REPORT_H
#define DLCB_REPORT_H

#include <stdio.h>

#include "results.h"

void bench_csv_header(FILE *f, const bench_run *r);
/* One row per slot of (layer, thread count), once all its slots are measured. */
void bench_csv_rows(FILE *f, const bench_run *r, const bench_suite *s, int layer, int ti);

/* The per-layer table of one suite at one thread count, with its totals and notes. */
void bench_table_suite(FILE *f, const bench_run *r, const bench_suite *s, int ti);
/* Every model's totals, per thread count, across all suites. */
void bench_table_summary(FILE *f, const bench_run *r);

const char *bench_status_word(bench_status s);   /* "ok", "VERIFY_FAIL", "skipped", "error", "not_run" */

#endif
