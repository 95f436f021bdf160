/* report_csv.c - the machine-readable rows. */
#include <string.h>

#include "report.h"

const char *bench_status_word(bench_status s) {
  switch (s) {
  case BENCH_OK: return "ok";
  case BENCH_WRONG: return "VERIFY_FAIL";
  case BENCH_SKIPPED: return "skipped";
  case BENCH_ERROR: return "error";
  default: return "not_run";
  }
}

/* Text fields must not break the columns. */
static void put_field(FILE *f, const char *s) {
  for (; *s; s++) fputc(*s == ',' || *s == '\n' || *s == '"' ? ';' : *s, f);
  fputc(',', f);
}

static void put_layer(FILE *f, const bench_layer *l) {
  put_field(f, l->model);
  put_field(f, l->name);
  put_field(f, l->is_dense ? "dense" : "conv2d");
  fprintf(f, "%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%lld,%d,", l->n, l->c_in, l->h_in, l->w_in,
          l->c_out, l->k_h, l->k_w, l->stride_h, l->stride_w, l->pad_h, l->pad_w, l->dil_h, l->dil_w, l->groups,
          l->bias, l->h_out, l->w_out, (long long)l->macs, l->repeats);
}

void bench_csv_header(FILE *f, const bench_run *r) {
  fputs("model,layer,op,n,c_in,h_in,w_in,c_out,k_h,k_w,stride_h,stride_w,pad_h,pad_w,dil_h,dil_w,groups,bias,"
        "h_out,w_out,macs,repeats,algo,impl,kernel,dtype,layout,threads,ms,gflops,peak_pct,plan_ms,status,err",
        f);
  if (r->slot_blocked >= 0)
    fprintf(f, ",ratio_%s,ratio_%s", r->slots[r->slot_blocked].name, r->slots[r->slot_user].name);
  if (r->slot_xnn >= 0) fprintf(f, ",ratio_%s", r->slots[r->slot_xnn].name);
  fputc('\n', f);
}

/* Our ms over a peer's, empty when either is missing. */
static void put_ratio(FILE *f, const bench_measure *ours, const bench_measure *peer) {
  if (bench_has_time(ours) && peer && bench_has_time(peer)) fprintf(f, ",%.4f", ours->ms / peer->ms);
  else fputc(',', f);
}

void bench_csv_rows(FILE *f, const bench_run *r, const bench_suite *s, int layer, int ti) {
  const bench_layer *l = &s->layers[layer];
  int threads = r->o->threads[ti];
  for (int k = 0; k < r->n_slots; k++) {
    const bench_measure *m = bench_at(r, s, layer, ti, k);
    put_layer(f, l);
    put_field(f, r->slots[k].name);
    put_field(f, m->impl);
    put_field(f, m->kernel);
    fprintf(f, "%s,%s,%d,", bench_dtype_name(r->o->dtype), bench_layout_name(r->o->layout), threads);
    if (bench_has_time(m))
      fprintf(f, "%.6f,%.3f,%.2f,", m->ms, 2.0 * (double)l->macs / (m->ms * 1e6), bench_peak_pct_of(r, l, threads, m));
    else
      fputs(",,,", f);
    fprintf(f, "%.3f,%s,", m->plan_ms, bench_status_word(m->status));
    if (m->err >= 0) fprintf(f, "%.3g", m->err);
    if (r->slot_blocked >= 0) {
      int peer = r->slots[k].is_peer;
      put_ratio(f, m, peer ? NULL : bench_at(r, s, layer, ti, r->slot_blocked));
      put_ratio(f, m, peer ? NULL : bench_at(r, s, layer, ti, r->slot_user));
    }
    if (r->slot_xnn >= 0) put_ratio(f, m, r->slots[k].is_peer ? NULL : bench_at(r, s, layer, ti, r->slot_xnn));
    fputc('\n', f);
  }
  fflush(f);
}
