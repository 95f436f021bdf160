/* affinity.h - where the bench's main thread runs.
 *
 * One-thread measurements pin the main thread to the CPU it is on: migrations cost caches and
 * show up as noise. For N > 1 the main thread gets its whole original CPU set back before any
 * measurement, because OpenMP workers inherit the affinity of the thread that creates them: a
 * pinned main thread would put all N threads on one CPU. When OMP_PROC_BIND is set, OpenMP
 * places every thread itself (the main one included) and the bench does not touch affinity. */
#ifndef DLCB_AFFINITY_H
#define DLCB_AFFINITY_H

void bench_affinity_init(void);            /* remembers the original CPU set; call first */
void bench_affinity_for_threads(int n);    /* before measuring with n threads */
int bench_affinity_openmp_binds(void);     /* OMP_PROC_BIND is set to something that binds */
const char *bench_affinity_describe(void); /* e.g. "main thread pinned to cpu 3" */

#endif
