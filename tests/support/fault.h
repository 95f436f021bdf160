/* fault.h - a kernel touching a guard page (guard_pages.h), told apart from a crash:
 *
 *   fault_names_case  the fault still fails the test (cmocka reports the signal), but stderr first
 *                     says which case ran;
 *   fault_trap        the fault becomes a return value, so the test can say which operand and which
 *                     element the kernel touched and go on with the other cases. */
#ifndef DLC_TESTS_SUPPORT_FAULT_H
#define DLC_TESTS_SUPPORT_FAULT_H

#include <stddef.h>
#include <stdint.h>

/* The case about to run, as the test describes it. */
extern char fault_case[1024];

/* On: a SIGSEGV or SIGBUS writes head and fault_case to stderr, puts the previous handler
   (cmocka's) back and returns, so that the faulting access runs again into it. Off: the previous
   handler back. */
void fault_names_case(const char *head, int on);

/* While on, a SIGSEGV inside [lo, hi) is not a fault: it counts in fault_probe_hits and makes those
   pages readable again (a test closing an operand's pages to see whether a kernel reads it). */
void fault_probe(uintptr_t lo, uintptr_t hi);
extern volatile size_t fault_probe_hits;

/* Runs fn(arg): 1 with *addr the address it faulted at, or 0 where it ran through. */
int fault_trap(void (*fn)(void *), void *arg, void **addr);

#endif
