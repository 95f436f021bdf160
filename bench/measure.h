/* measure.h - the outcome of timing one implementation on one layer at one thread count. */
#ifndef DLCB_MEASURE_H
#define DLCB_MEASURE_H

typedef enum bench_status {
  BENCH_NOT_RUN = 0,
  BENCH_OK,
  BENCH_WRONG,      /* ran, but the output disagrees with the reference */
  BENCH_SKIPPED,    /* the implementation answered UNSUPPORTED (or the peer cannot do it) */
  BENCH_ERROR       /* any other failure: a bug somewhere */
} bench_status;

typedef struct bench_measure {
  bench_status status;
  char impl[64];    /* what ran: "gemm/avx512" (algorithm/ISA from dlconv_plan_query), peer's name */
  char kernel[64];  /* micro-kernel (dlconv_plan_info.kernel) */
  char note[192];   /* why it was skipped or failed */
  double ms;        /* median per call */
  double plan_ms;   /* planning (or primitive creation), once, not in ms */
  double err;       /* verification: max error (relative for fp, units for int8); -1 unchecked */
  double tol;       /* the tolerance err was held to */
  long runs;        /* timed calls */
} bench_measure;

static inline int bench_has_time(const bench_measure *m) {
  return (m->status == BENCH_OK || m->status == BENCH_WRONG) && m->ms > 0;
}
static inline int bench_is_valid(const bench_measure *m) { return m->status == BENCH_OK && m->ms > 0; }

#endif
