/* layer.c - reading layer suites and --shape strings. */
#include "layer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The integer columns of a suite, by header name, and where each lands in a bench_layer. */
typedef struct int_field {
  const char *key;
  size_t offset;
  int required;
} int_field;

#define FIELD(key, member, req) { key, offsetof(bench_layer, member), req }
static const int_field INT_FIELDS[] = {
  FIELD("n", n, 1), FIELD("c_in", c_in, 1), FIELD("h_in", h_in, 1), FIELD("w_in", w_in, 1),
  FIELD("c_out", c_out, 1), FIELD("k_h", k_h, 1), FIELD("k_w", k_w, 1),
  FIELD("stride_h", stride_h, 1), FIELD("stride_w", stride_w, 1),
  FIELD("pad_h", pad_h, 1), FIELD("pad_w", pad_w, 1),
  FIELD("dil_h", dil_h, 0), FIELD("dil_w", dil_w, 0), FIELD("groups", groups, 0),
  FIELD("bias", bias, 0), FIELD("repeats", repeats, 0),
};
#define N_INT_FIELDS (sizeof INT_FIELDS / sizeof INT_FIELDS[0])
#define MAX_COLS 64

static int *int_at(bench_layer *l, const int_field *f) { return (int *)((char *)l + f->offset); }

/* Fields not given default to a plain convolution: stride 1, no padding, one group, once. */
static void layer_defaults(bench_layer *l) {
  memset(l, 0, sizeof *l);
  l->n = 1;
  l->stride_h = l->stride_w = l->dil_h = l->dil_w = l->groups = l->repeats = 1;
}

static int parse_int(const char *s, int *v) {
  char *end;
  errno = 0;
  long x = strtol(s, &end, 10);
  while (*end == ' ') end++;
  if (end == s || *end || errno || x < -2147483647L || x > 2147483647L) return -1;
  *v = (int)x;
  return 0;
}

int bench_layer_finish(bench_layer *l, char *err, size_t errlen) {
  if (l->is_dense) {   /* what a fully connected layer computes, whatever the file said */
    l->h_in = l->w_in = l->k_h = l->k_w = 1;
    l->stride_h = l->stride_w = l->dil_h = l->dil_w = l->groups = 1;
    l->pad_h = l->pad_w = 0;
  }
  if (l->n < 1 || l->c_in < 1 || l->h_in < 1 || l->w_in < 1 || l->c_out < 1 || l->k_h < 1 || l->k_w < 1 ||
      l->stride_h < 1 || l->stride_w < 1 || l->dil_h < 1 || l->dil_w < 1 || l->groups < 1 ||
      l->pad_h < 0 || l->pad_w < 0 || l->repeats < 0) {
    snprintf(err, errlen, "%s/%s: a size is out of range", l->model, l->name);
    return -1;
  }
  if (l->c_in % l->groups || l->c_out % l->groups) {
    snprintf(err, errlen, "%s/%s: groups %d does not divide c_in %d and c_out %d", l->model, l->name,
             l->groups, l->c_in, l->c_out);
    return -1;
  }
  int64_t hspan = (int64_t)l->h_in + 2 * l->pad_h - (int64_t)l->dil_h * (l->k_h - 1) - 1;
  int64_t wspan = (int64_t)l->w_in + 2 * l->pad_w - (int64_t)l->dil_w * (l->k_w - 1) - 1;
  if (hspan < 0 || wspan < 0) {
    snprintf(err, errlen, "%s/%s: the kernel is larger than the padded input", l->model, l->name);
    return -1;
  }
  l->h_out = (int)(hspan / l->stride_h + 1);
  l->w_out = (int)(wspan / l->stride_w + 1);
  l->macs = (int64_t)l->n * l->c_out * l->h_out * l->w_out * (l->c_in / l->groups) * l->k_h * l->k_w;
  return 0;
}

/* Splits line in place at commas; returns the field count. */
static int split_csv(char *line, char **cols, int max) {
  int n = 0;
  line[strcspn(line, "\r\n")] = 0;
  for (char *s = line; n < max;) {
    cols[n++] = s;
    char *c = strchr(s, ',');
    if (!c) break;
    *c = 0;
    s = c + 1;
  }
  return n;
}

static int find_col(char **hdr, int nhdr, const char *key) {
  for (int i = 0; i < nhdr; i++)
    if (!strcmp(hdr[i], key)) return i;
  return -1;
}

typedef struct col_map {
  int model, name, op, h_out, w_out, macs;
  int ints[N_INT_FIELDS];
} col_map;

static int map_columns(char *header, col_map *m, char *err, size_t errlen) {
  char *hdr[MAX_COLS];
  int nh = split_csv(header, hdr, MAX_COLS);
  m->model = find_col(hdr, nh, "model");
  m->name = find_col(hdr, nh, "layer");
  m->op = find_col(hdr, nh, "op");
  m->h_out = find_col(hdr, nh, "h_out");
  m->w_out = find_col(hdr, nh, "w_out");
  m->macs = find_col(hdr, nh, "macs");
  for (size_t i = 0; i < N_INT_FIELDS; i++) {
    m->ints[i] = find_col(hdr, nh, INT_FIELDS[i].key);
    if (m->ints[i] < 0 && INT_FIELDS[i].required) {
      snprintf(err, errlen, "no column '%s' in the header", INT_FIELDS[i].key);
      return -1;
    }
  }
  return 0;
}

static const char *col_or(char **cols, int ncols, int i, const char *dflt) {
  return i >= 0 && i < ncols ? cols[i] : dflt;
}

/* One data row; the file's h_out/w_out/macs only serve as a check of our arithmetic. */
static int parse_row(char *line, const col_map *m, bench_layer *l, char *err, size_t errlen) {
  char *cols[MAX_COLS];
  int nc = split_csv(line, cols, MAX_COLS);
  layer_defaults(l);
  snprintf(l->model, sizeof l->model, "%s", col_or(cols, nc, m->model, "model"));
  snprintf(l->name, sizeof l->name, "%s", col_or(cols, nc, m->name, "layer"));
  l->is_dense = !strcmp(col_or(cols, nc, m->op, "conv2d"), "dense");
  for (size_t i = 0; i < N_INT_FIELDS; i++) {
    if (m->ints[i] < 0) continue;
    if (m->ints[i] >= nc || parse_int(cols[m->ints[i]], int_at(l, &INT_FIELDS[i]))) {
      snprintf(err, errlen, "%s: bad or missing '%s'", l->name, INT_FIELDS[i].key);
      return -1;
    }
  }
  if (bench_layer_finish(l, err, errlen)) return -1;
  long long macs = atoll(col_or(cols, nc, m->macs, "0"));
  int ho = atoi(col_or(cols, nc, m->h_out, "0")), wo = atoi(col_or(cols, nc, m->w_out, "0"));
  if ((macs && macs != l->macs) || (!l->is_dense && ho && wo && (ho != l->h_out || wo != l->w_out)))
    fprintf(stderr, "warning: %s/%s: the file says %dx%d, %lld MACs; computed %dx%d, %lld\n", l->model,
            l->name, ho, wo, macs, l->h_out, l->w_out, (long long)l->macs);
  return 0;
}

int bench_read_suite(const char *path, bench_layer **out, char *err, size_t errlen) {
  *out = NULL;
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return -1;
  }
  char line[4096];
  col_map m;
  int count = 0, cap = 0, rc = 0;
  bench_layer *ls = NULL;
  if (!fgets(line, sizeof line, f) || map_columns(line, &m, err, errlen)) {
    if (!err[0]) snprintf(err, errlen, "%s: empty file", path);
    rc = -1;
  }
  int lineno = 1;
  while (!rc && fgets(line, sizeof line, f)) {
    lineno++;
    if (strspn(line, " \t\r\n") == strlen(line) || line[0] == '#') continue;
    if (count == cap) {
      cap = cap ? 2 * cap : 64;
      bench_layer *grown = realloc(ls, (size_t)cap * sizeof *ls);
      if (!grown) { snprintf(err, errlen, "out of memory"); rc = -1; break; }
      ls = grown;
    }
    char why[256] = "";
    if (parse_row(line, &m, &ls[count], why, sizeof why)) {
      snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
      rc = -1;
      break;
    }
    count++;
  }
  fclose(f);
  if (rc) {
    free(ls);
    return -1;
  }
  *out = ls;
  return count;
}

/* key=value for --shape; short names first, then every suite column name. */
static int shape_key(bench_layer *l, const char *key, const char *val) {
  int v;
  if (!strcmp(key, "op")) { l->is_dense = !strcmp(val, "dense"); return 0; }
  if (!strcmp(key, "name")) { snprintf(l->name, sizeof l->name, "%s", val); return 0; }
  if (!strcmp(key, "model")) { snprintf(l->model, sizeof l->model, "%s", val); return 0; }
  if (parse_int(val, &v)) return -1;
  if (!strcmp(key, "h")) l->h_in = v;
  else if (!strcmp(key, "w")) l->w_in = v;
  else if (!strcmp(key, "k")) l->k_h = l->k_w = v;
  else if (!strcmp(key, "stride")) l->stride_h = l->stride_w = v;
  else if (!strcmp(key, "pad")) l->pad_h = l->pad_w = v;
  else if (!strcmp(key, "dil")) l->dil_h = l->dil_w = v;
  else {
    for (size_t i = 0; i < N_INT_FIELDS; i++)
      if (!strcmp(key, INT_FIELDS[i].key)) { *int_at(l, &INT_FIELDS[i]) = v; return 0; }
    return -1;
  }
  return 0;
}

int bench_parse_shape(const char *spec, bench_layer *l, char *err, size_t errlen) {
  layer_defaults(l);
  l->c_in = l->c_out = l->h_in = l->w_in = l->k_h = l->k_w = 0;
  snprintf(l->model, sizeof l->model, "shape");
  char buf[512];
  snprintf(buf, sizeof buf, "%s", spec);
  for (char *save = NULL, *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
    char *eq = strchr(tok, '=');
    if (eq) *eq = 0;
    if (!eq || shape_key(l, tok, eq + 1)) {
      snprintf(err, errlen, "--shape: cannot read '%s%s%s'", tok, eq ? "=" : "", eq ? eq + 1 : "");
      return -1;
    }
  }
  if (l->is_dense) l->h_in = l->w_in = l->k_h = l->k_w = 1;
  if (!l->name[0])
    snprintf(l->name, sizeof l->name, "%s%dx%dx%d>%d_k%dx%d_s%d_p%d_g%d", l->is_dense ? "fc" : "conv", l->c_in,
             l->h_in, l->w_in, l->c_out, l->k_h, l->k_w, l->stride_h, l->pad_h, l->groups);
  return bench_layer_finish(l, err, errlen);
}
