/* scaling.c - the G(g) scaling table (scaling.h).
 *
 * The thesis's question: does a grouped model G(g) get faster in proportion to the work it
 * saves? Its ideal time over the standard model S's is their MAC ratio (WideResNet-40-2:
 * 0.603, 0.360, 0.238, 0.177, 0.135 for g = 2, 4, 8, 16, N); measured / ideal says how far a
 * library is from it (1.00: it scales with the work). Model times are the totals of the
 * per-suite tables (sum of ms x repeats). */
#include "scaling.h"

#include <stdlib.h>
#include <string.h>

#define MAX_MEMBERS 16

typedef struct member {
  const bench_suite *s;
  const char *model;
} member;

/* The first model name of a suite (the WRN suites hold one model each). */
static const char *suite_model(const bench_suite *s) { return s->n_layers ? s->layers[0].model : NULL; }

/* The family's prefix when `model` names a standard model ("wrn40_2_g1" -> "wrn40_2_g"), else 0. */
static int standard_prefix(const char *model, char *prefix, size_t n) {
  const size_t len = strlen(model);
  if (len < 3 || len >= n || strcmp(model + len - 2, "g1")) return 0;
  memcpy(prefix, model, len - 1);
  prefix[len - 1] = 0;
  return 1;
}

static void print_cell(FILE *f, const bench_run *r, const bench_suite *s, const char *model, int ti, int slot,
                       const bench_total *std, double ideal) {
  const bench_total t = bench_total_of(r, s, model, ti, slot);
  if (t.missing || !t.counted || std->missing || std->ms <= 0) {
    fprintf(f, "  %9s %6s %6s", "-", "-", "-");
    return;
  }
  const double ratio = t.ms / std->ms;
  fprintf(f, "  %9.3f %6.3f %6.2f", t.ms, ratio, ideal > 0 ? ratio / ideal : 0.0);
}

static void family_table(FILE *f, const bench_run *r, const member *m, int n, int ti) {
  int slots[4], ns = 0;
  slots[ns++] = r->slot_ours;
  if (r->slot_blocked >= 0) slots[ns++] = r->slot_blocked;
  if (r->slot_user >= 0) slots[ns++] = r->slot_user;
  if (r->slot_xnn >= 0) slots[ns++] = r->slot_xnn;
  const bench_options *o = r->o;
  fprintf(f, "\n== G(g) scaling: %.*sg* (S = %s), %d thread%s, %s %s; time over S's, ideal = MAC ratio ==\n",
          (int)strlen(m[0].model) - 2, m[0].model, m[0].model, o->threads[ti], o->threads[ti] == 1 ? "" : "s", bench_dtype_name(o->dtype),
          bench_layout_name(o->layout));
  fprintf(f, "  %-16s %6s", "model", "ideal");
  for (int k = 0; k < ns; k++) fprintf(f, "  %-23.23s", r->slots[slots[k]].name);
  fprintf(f, "\n  %-16s %6s", "", "");
  for (int k = 0; k < ns; k++) fprintf(f, "  %9s %6s %6s", "ms", "ratio", "/ideal");
  fprintf(f, "\n");
  bench_total std[4];
  for (int k = 0; k < ns; k++) std[k] = bench_total_of(r, m[0].s, m[0].model, ti, slots[k]);
  for (int i = 0; i < n; i++) {
    /* the MAC ratio from the layer list itself (every layer counted, measured or not) */
    double fl = 0, fl_std = 0;
    for (int j = 0; j < m[i].s->n_layers; j++)
      if (!strcmp(m[i].s->layers[j].model, m[i].model))
        fl += (double)m[i].s->layers[j].macs * m[i].s->layers[j].repeats;
    for (int j = 0; j < m[0].s->n_layers; j++)
      if (!strcmp(m[0].s->layers[j].model, m[0].model))
        fl_std += (double)m[0].s->layers[j].macs * m[0].s->layers[j].repeats;
    const double ideal = fl_std > 0 ? fl / fl_std : 0;
    fprintf(f, "  %-16.16s %6.3f", m[i].model, ideal);
    for (int k = 0; k < ns; k++) print_cell(f, r, m[i].s, m[i].model, ti, slots[k], &std[k], ideal);
    fprintf(f, "\n");
  }
}

void bench_table_scaling(FILE *f, const bench_run *r) {
  for (int j = 0; j < r->n_suites; j++) {
    const char *sm = suite_model(&r->suites[j]);
    char prefix[64];
    if (!sm || !standard_prefix(sm, prefix, sizeof prefix)) continue;
    member m[MAX_MEMBERS];
    int n = 0;
    m[n++] = (member){&r->suites[j], sm};
    /* the members in the order of g: 2, 4, 8, ... then N (what the suites hold, in any order) */
    for (int pass = 0; pass < 2; pass++) {
      int last = 1;
      for (;;) {
        int best = -1, best_g = 0;
        for (int k = 0; k < r->n_suites; k++) {
          const char *mk = suite_model(&r->suites[k]);
          if (!mk || strncmp(mk, prefix, strlen(prefix))) continue;
          const char *tail = mk + strlen(prefix);
          if (pass == 1) {
            if (!strcmp(tail, "N") && n < MAX_MEMBERS) m[n++] = (member){&r->suites[k], mk};
            continue;
          }
          char *end;
          long g = strtol(tail, &end, 10);
          if (*end || g <= last || (best >= 0 && g >= best_g)) continue;
          best = k;
          best_g = (int)g;
        }
        if (pass == 1 || best < 0 || n >= MAX_MEMBERS) break;
        m[n++] = (member){&r->suites[best], suite_model(&r->suites[best])};
        last = best_g;
      }
    }
    if (n < 2) continue;
    for (int ti = 0; ti < r->o->n_threads; ti++) family_table(f, r, m, n, ti);
  }
}
