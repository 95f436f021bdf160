/* Faults on guard pages (fault.h). */
#include "fault.h"

#include <string.h>

#include "alloc.h"
#include "guard_pages.h"

#ifdef HAVE_GUARD_PAGES
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

char fault_case[1024];
volatile size_t fault_probe_hits;

#ifdef HAVE_GUARD_PAGES
static const char *name_head;
static uintptr_t probe_lo, probe_hi;
static struct sigaction old_segv, old_bus;

static void put(const char *s) {
  for (size_t n = strlen(s); n;) {
    const ssize_t w = write(2, s, n);
    if (w <= 0) return;
    s += w, n -= (size_t)w;
  }
}

static void on_fault_name(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  const uintptr_t at = (uintptr_t)si->si_addr;
  if (sig == SIGSEGV && at >= probe_lo && at < probe_hi) {
    fault_probe_hits++;
    if (!mprotect((void *)probe_lo, probe_hi - probe_lo, PROT_READ | PROT_WRITE)) return; /* reads on */
  }
  put(name_head);
  put(fault_case);
  put("\n");
  sigaction(sig, sig == SIGSEGV ? &old_segv : &old_bus, NULL);
}
#endif

void fault_names_case(const char *head, int on) {
#ifdef HAVE_GUARD_PAGES
  if (on) {
    name_head = head;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault_name;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, &old_segv);
    sigaction(SIGBUS, &sa, &old_bus);
  } else {
    sigaction(SIGSEGV, &old_segv, NULL);
    sigaction(SIGBUS, &old_bus, NULL);
    probe_lo = probe_hi = 0;
  }
#else
  (void)head, (void)on;
#endif
}

void fault_probe(uintptr_t lo, uintptr_t hi) {
#ifdef HAVE_GUARD_PAGES
  probe_lo = lo, probe_hi = hi;
#else
  (void)lo, (void)hi;
#endif
}

#ifdef HAVE_GUARD_PAGES
static sigjmp_buf trap_jmp;
static volatile sig_atomic_t trap_armed;
static void *volatile trap_addr;

static void on_fault_trap(int sig, siginfo_t *si, void *ctx) {
  (void)ctx;
  if (!trap_armed) {
    signal(sig, SIG_DFL);
    raise(sig);
    return;
  }
  trap_armed = 0;
  trap_addr = si->si_addr;
  siglongjmp(trap_jmp, 1);
}
#endif

int fault_trap(void (*fn)(void *), void *arg, void **addr) {
#ifdef HAVE_GUARD_PAGES
  struct sigaction sa, segv, bus;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault_trap;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSEGV, &sa, &segv) || sigaction(SIGBUS, &sa, &bus)) test_die("sigaction failed");
  volatile int faulted = 0;
  if (sigsetjmp(trap_jmp, 1) == 0) {
    trap_armed = 1;
    fn(arg);
    trap_armed = 0;
  } else {
    faulted = 1;
    *addr = trap_addr;
  }
  sigaction(SIGSEGV, &segv, NULL);
  sigaction(SIGBUS, &bus, NULL);
  return faulted;
#else
  (void)addr;
  fn(arg);
  return 0;
#endif
}
