/* layer.h - one benchmark layer: a row of a suite CSV (the files in bench/layers; the header row names
 * the columns, see bench_read_suite) or a --shape string. A dense layer is kept as what it
 * computes: a 1x1 convolution on a 1x1 image, so the reference, the data and the report treat
 * both kinds alike. */
#ifndef DLCB_LAYER_H
#define DLCB_LAYER_H

#include <stddef.h>
#include <stdint.h>

typedef struct bench_layer {
  char model[64], name[128];
  int is_dense;
  int n, c_in, h_in, w_in, c_out, k_h, k_w;
  int stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups, bias;
  int h_out, w_out;
  int64_t macs;                    /* dense count: n * c_out * h_out * w_out * c_in/g * k_h * k_w */
  int repeats;                     /* occurrences in the model: model time = sum of ms x repeats */
} bench_layer;

/* Reads a suite. Returns the number of layers and *out (release with free), or -1 with err set.
   Columns are found by their header names, so extra or reordered columns are fine. */
int bench_read_suite(const char *path, bench_layer **out, char *err, size_t errlen);

/* "n=1,c_in=64,h=56,w=56,c_out=64,k=3,stride=1,pad=1,dil=1,groups=1" (also k_h/k_w, h_in/w_in,
   stride_h/..., pad_h/pad_w, dil_h/dil_w, bias=0|1, repeats=N, op=dense, name=...). 0 or -1. */
int bench_parse_shape(const char *spec, bench_layer *l, char *err, size_t errlen);

/* Checks sizes and fills h_out, w_out and macs. 0, or -1 with err set. */
int bench_layer_finish(bench_layer *l, char *err, size_t errlen);

static inline size_t bench_x_count(const bench_layer *l) { return (size_t)l->n * l->c_in * l->h_in * l->w_in; }
static inline size_t bench_y_count(const bench_layer *l) { return (size_t)l->n * l->c_out * l->h_out * l->w_out; }
static inline size_t bench_w_count(const bench_layer *l) {
  return (size_t)l->c_out * (l->c_in / l->groups) * l->k_h * l->k_w;
}
static inline int bench_reduction(const bench_layer *l) { return l->c_in / l->groups * l->k_h * l->k_w; }

#endif
