/* The ISA tables under test (kernel_tables.h). */
#include "kernel_tables.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/cpu.h"
#include "core/env.h"
#include "api/auto.h"

/* dlconv_isa values probed: today's and room for those to come (dlc_kernels_for answers NULL for
   a value it does not know). */
#define ISA_VALUES 64

static const dlc_isa_kernels *tables[MAX_KERNEL_TABLES];
static size_t n_tables;
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Whether AUTO may pick isa under DLCONV_ISA; every table where it sets no cap. */
static int under_cap(dlconv_isa isa, const dlconv_isa *autos, int n_autos) {
  if (dlc_env()->isa_cap == DLCONV_ISA_AUTO) return 1;
  for (int i = 0; i < n_autos; i++)
    if (autos[i] == isa) return 1;
  return 0;
}

static void list_tables(void) {
  dlconv_isa autos[DLC_MAX_CANDIDATES];
  const int n_autos = dlc_auto_isas(autos);
  for (int v = DLCONV_ISA_GENERIC; v < ISA_VALUES && n_tables < MAX_KERNEL_TABLES; v++) {
    const dlc_isa_kernels *kt = dlc_kernels_for((dlconv_isa)v);
    if (kt && under_cap((dlconv_isa)v, autos, n_autos)) tables[n_tables++] = kt;
  }
}

const dlc_isa_kernels *kernel_table(size_t i) {
  pthread_once(&once, list_tables);
  return i < n_tables ? tables[i] : NULL;
}

size_t kernel_table_count(void) {
  pthread_once(&once, list_tables);
  return n_tables;
}

const dlc_isa_kernels *kernel_table_of(dlconv_isa isa) {
  const dlc_isa_kernels *kt;
  for (size_t s = 0; (kt = kernel_table(s)); s++)
    if (kt->isa == isa) return kt;
  return NULL;
}

const char *isa_label(dlconv_isa isa) {
  const dlc_isa_kernels *kt = dlc_kernels_for(isa);
  return kt ? kt->name : "?";
}

int family_seen_before(const family_ref *refs, size_t i) {
  for (size_t k = 0; k < i; k++)
    if (refs[k].family == refs[i].family) return 1;
  return 0;
}

void check_table_families(const void *generic, const void *avx2, const void *avx512, const void *avxvnni,
                          const void *avx512vnni) {
  assert_non_null(generic);
  if (dlconv_isa_available(DLCONV_ISA_AVX2) == 1) assert_non_null(avx2);
  if (avxvnni && dlc_cpu()->avx_vnni && avx2) assert_ptr_equal(avx2, avxvnni);
  if (avx512vnni && dlc_cpu()->avx512_vnni && avx512) assert_ptr_equal(avx512, avx512vnni);
}

void add_x86_families(family_ref *refs, size_t *n, const void *avx2, const void *avxvnni, const void *avx512vnni,
                      const char *name) {
  const int vex = kernel_table_of(DLCONV_ISA_AVX2) != NULL, evex = kernel_table_of(DLCONV_ISA_AVX512) != NULL;
  if (avx2 && vex) refs[(*n)++] = (family_ref){"(by name)", avx2};
  if (avxvnni && vex && dlc_cpu()->avx_vnni) refs[(*n)++] = (family_ref){"(by name)", avxvnni};
  if (avx512vnni && evex && dlc_cpu()->avx512_vnni) refs[(*n)++] = (family_ref){"(by name)", avx512vnni};
  if (name && !dlc_cpu()->avx_vnni && !dlc_cpu()->avx512_vnni)
    print_message("[ %s ] no VNNI on this CPU: its families untested here\n", name);
}
