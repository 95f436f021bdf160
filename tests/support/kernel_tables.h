/* kernel_tables.h - the ISA kernel tables a micro-kernel test runs, from the config tables alone:
 * every dlconv_isa value whose table this build has and this CPU runs (dlc_kernels_for non-NULL),
 * in dlconv_isa order, generic first. A new ISA's config (src/arch/<isa>/config.c) is so tested by
 * every kernel test without editing one.
 *
 * DLCONV_ISA caps the list as it caps AUTO (src/api/auto.c): with DLCONV_ISA=avx2 only the
 * tables AUTO may then pick are listed, so one machine shows what a lesser one tests (and a test
 * left without a family skips, skip.h). The checks that a table carries the family this CPU
 * should get read the tables themselves (dlc_kernels_for), whatever the cap. */
#ifndef DLC_TESTS_SUPPORT_KERNEL_TABLES_H
#define DLC_TESTS_SUPPORT_KERNEL_TABLES_H

#include <stddef.h>

#include "ukernel/config.h"

/* At most this many tables are under test. */
#define MAX_KERNEL_TABLES 16

/* The i-th table under test, NULL past the last:
     const dlc_isa_kernels *kt;
     for (size_t s = 0; (kt = kernel_table(s)); s++) ... */
const dlc_isa_kernels *kernel_table(size_t i);
size_t kernel_table_count(void);
/* A test's families: one per table and a few it names itself. */
#define MAX_FAMILIES (MAX_KERNEL_TABLES + 4)

/* Appends family f (an expression without side effects) to out[0..n), n a size_t lvalue, unless
   it is NULL or there already: tables of several ISAs may share a family, tested once.
     const dlc_f16_gemm_family *fams[MAX_FAMILIES];
     size_t n = 0;
     for (size_t s = 0; (kt = kernel_table(s)); s++) ADD_FAMILY(fams, n, kt->f16_gemm); */
#define ADD_FAMILY(out, n, f)                                                  \
  do {                                                                         \
    const void *const add_f_ = (f);                                            \
    size_t add_at_ = 0;                                                        \
    while (add_at_ < (n) && (const void *)(out)[add_at_] != add_f_) add_at_++; \
    if (add_f_ && add_at_ == (n)) (out)[(n)++] = (f);                          \
  } while (0)

/* A family under test and where it comes from: its table's name, or "(by name)" for one a test
   names itself. family is NULL where a table has none. */
typedef struct family_ref {
  const char *label;
  const void *family;
} family_ref;

/* Appends each table's `field` family to out[0..n), labelled with the table's name. */
#define TABLE_FAMILY_REFS(out, n, field)                                    \
  do {                                                                      \
    const dlc_isa_kernels *refs_kt_;                                        \
    for (size_t refs_s_ = 0; (refs_kt_ = kernel_table(refs_s_)); refs_s_++) \
      (out)[(n)++] = (family_ref){refs_kt_->name, refs_kt_->field};         \
  } while (0)

/* Whether refs[i]'s family stands at an earlier ref too (tested there already). */
int family_seen_before(const family_ref *refs, size_t i);

/* A family symbol where this build has the instructions for it, else NULL (so that naming it
   links everywhere). */
#if defined(DLC_HAVE_X86)
#define IF_X86(family) (&(family))
#else
#define IF_X86(family) NULL
#endif
#if defined(DLC_HAVE_AVXVNNI)
#define IF_AVXVNNI(family) (&(family))
#else
#define IF_AVXVNNI(family) NULL
#endif
#if defined(DLC_HAVE_AVX512VNNI)
#define IF_AVX512VNNI(family) (&(family))
#else
#define IF_AVX512VNNI(family) NULL
#endif

/* The `field` family of isa's table (NULL: no such table on this machine, or no family in it). */
#define TABLE_FAMILY(isa, field) (dlc_kernels_for(isa) ? dlc_kernels_for(isa)->field : NULL)

/* check_table_families for the `field` families of the generic, avx2 and avx512 tables. */
#define CHECK_TABLE_FAMILIES(field, avxvnni, avx512vnni)                                      \
  check_table_families(TABLE_FAMILY(DLCONV_ISA_GENERIC, field), TABLE_FAMILY(DLCONV_ISA_AVX2, field), \
                       TABLE_FAMILY(DLCONV_ISA_AVX512, field), (avxvnni), (avx512vnni))

/* The tables carry the family this build has written for this CPU, so that losing one from a
   table (src/arch/<isa>/config.c) fails rather than skips: generic's always, avx2's where AVX2
   runs, and where the CPU has the instructions the VNNI family (avxvnni, avx512vnni; NULL: the
   build has none) in the avx2 / avx512 table. generic, avx2, avx512: those tables' family, read
   from the tables themselves (dlc_kernels_for), whatever DLCONV_ISA caps. */
void check_table_families(const void *generic, const void *avx2, const void *avx512, const void *avxvnni,
                          const void *avx512vnni);

/* Appends to refs[0..*n) the families a test names itself, labelled "(by name)": the avx2 one
   where the avx2 table is under test, and the VNNI ones (NULL: none in this build) where the CPU
   has the instructions and their table is under test; says so where the CPU has no VNNI (name:
   the family kind, for that message; NULL: quiet). */
void add_x86_families(family_ref *refs, size_t *n, const void *avx2, const void *avxvnni, const void *avx512vnni,
                      const char *name);

/* The families under test of a kind whose x86 families are dlc_<field>__avx2, __avxvnni and
   __avx512vnni: each table's (TABLE_FAMILY_REFS), then those by name (add_x86_families). */
#define ALL_FAMILY_REFS(refs, n, field)                                                            \
  do {                                                                                             \
    TABLE_FAMILY_REFS(refs, n, field);                                                             \
    add_x86_families(refs, &(n), IF_X86(dlc_##field##__avx2), IF_AVXVNNI(dlc_##field##__avxvnni), \
                     IF_AVX512VNNI(dlc_##field##__avx512vnni), #field);                          \
  } while (0)

/* isa's table where it is under test, else NULL: for the families a test names itself (a VNNI
   family on the CPU that runs it), so that they obey the cap too. */
const dlc_isa_kernels *kernel_table_of(dlconv_isa isa);
/* "generic", "avx2", ...: the table's name, "?" for an ISA without one. */
const char *isa_label(dlconv_isa isa);

#endif
