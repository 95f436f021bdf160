/* bench_cuda.c - dlconv-bench --isa cuda (bench_cuda.h): libdlconv's CUDA backend, and cuDNN
 * with --peers cudnn, timed on the GPU layer by layer. */
#include "bench_cuda.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "layer.h"
#include "reference.h"
#include "run_dlconv.h"

#if defined(DLCB_HAVE_CUDNN)
#include <cudnn.h>
#endif

#define MAX_IMPL (BENCH_MAX_ALGOS + 1)

typedef struct gpu_result {
  int ok;             /* 1 timed (and right, where checked), 0 skipped, -1 failed or wrong */
  double ms;
  char what[96];      /* algorithm/kernel, or why not */
} gpu_result;

/* ---- timing ---- */

typedef int (*gpu_call)(void *ctx);   /* queues one call on the stream; 0 or an error */

static double elapsed_ms(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  return ms;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* ms per call: warm-up, then the median of 5 launches of a CUDA graph of `reps` calls sized to
   min_time, or of 5 rounds of plain back-to-back calls where capture fails. *graph says which. */
static double time_calls(gpu_call fn, void *ctx, cudaStream_t s, double min_time, int *graph) {
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  double ms = -1;
  for (int i = 0; i < 3; i++)
    if (fn(ctx)) goto done;
  if (cudaStreamSynchronize(s) != cudaSuccess) goto done;
  cudaEventRecord(e0, s);
  if (fn(ctx)) goto done;
  cudaEventRecord(e1, s);
  cudaEventSynchronize(e1);
  double one = elapsed_ms(e0, e1);
  int reps = (int)(min_time * 1e3 / 5 / (one > 1e-3 ? one : 1e-3));
  reps = reps < 5 ? 5 : reps > 500 ? 500 : reps;
  double t[5];
  cudaGraph_t g = NULL;
  cudaGraphExec_t ge = NULL;
  *graph = 0;
  if (cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) == cudaSuccess) {
    int bad = 0;
    for (int i = 0; i < reps && !bad; i++) bad = fn(ctx);
    if (cudaStreamEndCapture(s, &g) == cudaSuccess && !bad && cudaGraphInstantiate(&ge, g, 0) == cudaSuccess &&
        cudaGraphLaunch(ge, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess)
      *graph = 1;
  }
  (void)cudaGetLastError();
  for (int k = 0; k < 5; k++) {
    cudaEventRecord(e0, s);
    if (*graph) {
      if (cudaGraphLaunch(ge, s) != cudaSuccess) goto done;
    } else {
      for (int i = 0; i < reps; i++)
        if (fn(ctx)) goto done;
    }
    cudaEventRecord(e1, s);
    if (cudaEventSynchronize(e1) != cudaSuccess) goto done;
    t[k] = elapsed_ms(e0, e1) / reps;
  }
  qsort(t, 5, sizeof t[0], cmp_double);
  ms = t[2];
done:
  if (ge) cudaGraphExecDestroy(ge);
  if (g) cudaGraphDestroy(g);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return ms;
}

/* ---- libdlconv ---- */

typedef struct ours_ctx {
  const dlconv_plan *p;
  const void *x;
  void *y;
  dlconv_status st;
} ours_ctx;

static int ours_call(void *arg) {
  ours_ctx *c = arg;
  c->st = dlconv_execute(c->p, c->x, c->y, NULL);
  return c->st != DLCONV_OK;
}

static void run_ours(const bench_layer *l, const bench_data *d, dlconv_algo algo, const bench_options *o,
                     cudaStream_t s, const void *dx, void *dy, gpu_result *r) {
  dlconv_options opt;
  dlconv_options_init(&opt);
  opt.isa = DLCONV_ISA_CUDA;
  opt.algo = algo;
  opt.cuda_stream = s;
  dlconv_plan *p = NULL;
  dlconv_status st = bench_make_plan(&p, l, d, &opt);
  if (st != DLCONV_OK) {
    r->ok = st == DLCONV_ERR_UNSUPPORTED ? 0 : -1;
    snprintf(r->what, sizeof r->what, "%s: %s", dlconv_status_string(st), dlconv_last_error());
    return;
  }
  dlconv_plan_info info;
  dlconv_plan_query(p, &info);
  snprintf(r->what, sizeof r->what, "%s/%s", bench_algo_name(info.algo), info.kernel);
  ours_ctx c = {p, dx, dy, DLCONV_OK};
  int graph = 0;
  cudaMemsetAsync(dy, 0xff, d->y_bytes, s);
  r->ms = time_calls(ours_call, &c, s, o->min_time, &graph);
  r->ok = r->ms > 0 ? 1 : -1;
  if (r->ok < 0) {
    snprintf(r->what, sizeof r->what, "execute: %s: %s / %s", dlconv_status_string(c.st), dlconv_last_error(),
             cudaGetErrorString(cudaGetLastError()));
  } else if (o->verify) {
    void *y = malloc(d->y_bytes);
    bench_check chk;
    if (y && cudaMemcpy(y, dy, d->y_bytes, cudaMemcpyDeviceToHost) == cudaSuccess) {
      bench_check_output(l, d, y, d->layout, 1, &chk);
      if (!chk.ok) {
        r->ok = -1;
        fprintf(stderr, "VERIFY FAIL cuda %s %s/%s: max error %.3g > tol %.3g\n", r->what, l->model, l->name, chk.err,
                chk.tol);
      }
    }
    free(y);
  }
  dlconv_plan_destroy(p);
}

/* ---- cuDNN ---- */

#if defined(DLCB_HAVE_CUDNN)
typedef struct cudnn_ctx {
  cudnnHandle_t h;
  cudnnTensorDescriptor_t xd, yd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  cudnnConvolutionFwdAlgo_t algo;
  const void *x, *w;
  void *y, *ws;
  size_t ws_bytes;
} cudnn_ctx;

static int cudnn_call(void *arg) {
  cudnn_ctx *c = arg;
  const float one = 1.f, zero = 0.f;
  return cudnnConvolutionForward(c->h, &one, c->xd, c->x, c->wd, c->w, c->cd, c->algo, c->ws, c->ws_bytes, &zero,
                                 c->yd, c->y) != CUDNN_STATUS_SUCCESS;
}

static cudnnHandle_t g_cudnn;

static void run_cudnn(const bench_layer *l, const bench_data *d, const bench_options *o, cudaStream_t s,
                      const void *dx, void *dy, gpu_result *r) {
  if (d->dtype != DLCONV_F32 && d->dtype != DLCONV_F16) {
    r->ok = 0;
    snprintf(r->what, sizeof r->what, "cudnn: f32 and f16 only here");
    return;
  }
  cudnn_ctx c;
  memset(&c, 0, sizeof c);
  c.h = g_cudnn;
  cudnnSetStream(c.h, s);
  const int f16 = d->dtype == DLCONV_F16, nhwc = d->layout == DLCONV_NHWC;
  const cudnnTensorFormat_t fmt = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  const cudnnDataType_t dt = f16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
  const size_t es = f16 ? 2 : 4, wn = bench_w_count(l);
  void *wdev = NULL, *wh = malloc(wn * es);
  cudnnStatus_t st = CUDNN_STATUS_ALLOC_FAILED;
  if (!wh) goto out;
  /* OIHW, or OHWI (cuDNN's NHWC filters: KRSC) */
  const int cg = l->c_in / l->groups;
  for (int k = 0; k < l->c_out; k++)
    for (int ci = 0; ci < cg; ci++)
      for (int y = 0; y < l->k_h; y++)
        for (int x = 0; x < l->k_w; x++) {
          size_t src = (((size_t)k * cg + ci) * l->k_h + y) * l->k_w + x;
          size_t dst = nhwc ? (((size_t)k * l->k_h + y) * l->k_w + x) * cg + ci : src;
          memcpy((char *)wh + dst * es, (const char *)d->w + src * es, es);
        }
  if (cudaMalloc(&wdev, wn * es) != cudaSuccess || cudaMemcpy(wdev, wh, wn * es, cudaMemcpyHostToDevice)) goto out;
  cudnnCreateTensorDescriptor(&c.xd);
  cudnnCreateTensorDescriptor(&c.yd);
  cudnnCreateFilterDescriptor(&c.wd);
  cudnnCreateConvolutionDescriptor(&c.cd);
  if ((st = cudnnSetTensor4dDescriptor(c.xd, fmt, dt, l->n, l->c_in, l->h_in, l->w_in)) ||
      (st = cudnnSetTensor4dDescriptor(c.yd, fmt, dt, l->n, l->c_out, l->h_out, l->w_out)) ||
      (st = cudnnSetFilter4dDescriptor(c.wd, dt, fmt, l->c_out, cg, l->k_h, l->k_w)) ||
      (st = cudnnSetConvolution2dDescriptor(c.cd, l->pad_h, l->pad_w, l->stride_h, l->stride_w, l->dil_h, l->dil_w,
                                            CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)) ||
      (st = cudnnSetConvolutionGroupCount(c.cd, l->groups)) ||
      (st = cudnnSetConvolutionMathType(c.cd, f16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH)))
    goto out;
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  if ((st = cudnnFindConvolutionForwardAlgorithm(c.h, c.xd, c.wd, c.cd, c.yd, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found,
                                                 perf)))
    goto out;
  /* the first 4 that ran, each timed here with its math type (Find's own timing is of single
     calls): the fastest counts */
  st = CUDNN_STATUS_NOT_SUPPORTED;
  c.x = dx;
  c.w = wdev;
  c.y = dy;
  r->ms = -1;
  for (int i = 0, tried = 0; i < found && tried < 4; i++) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
    c.ws = NULL;
    if (perf[i].memory && cudaMalloc(&c.ws, perf[i].memory) != cudaSuccess) {
      c.ws = NULL;
      (void)cudaGetLastError();
      continue;
    }
    tried++;
    c.algo = perf[i].algo;
    c.ws_bytes = perf[i].memory;
    cudnnSetConvolutionMathType(c.cd, f16 ? perf[i].mathType : CUDNN_FMA_MATH);   /* f32: never TF32 */
    int graph = 0;
    double ms = time_calls(cudnn_call, &c, s, o->min_time, &graph);
    if (ms > 0 && (r->ms < 0 || ms < r->ms)) {
      r->ms = ms;
      snprintf(r->what, sizeof r->what, "cudnn algo %d%s%s", (int)c.algo,
               perf[i].mathType == CUDNN_TENSOR_OP_MATH ? " tc" : "", graph ? "" : " (no graph)");
      st = CUDNN_STATUS_SUCCESS;
    }
    if (c.ws) cudaFree(c.ws);
    c.ws = NULL;
  }
  if (st) goto out;
  r->ok = 1;
out:
  if (st) {
    r->ok = -1;
    snprintf(r->what, sizeof r->what, "cudnn: %s", cudnnGetErrorString(st));
  }
  if (c.ws) cudaFree(c.ws);
  if (wdev) cudaFree(wdev);
  free(wh);
  if (c.xd) cudnnDestroyTensorDescriptor(c.xd);
  if (c.yd) cudnnDestroyTensorDescriptor(c.yd);
  if (c.wd) cudnnDestroyFilterDescriptor(c.wd);
  if (c.cd) cudnnDestroyConvolutionDescriptor(c.cd);
}
#endif

/* ---- the run ---- */

static uint64_t layer_seed(const bench_layer *l) {
  uint64_t h = 1469598103934665603ull;
  for (const char *p = l->name; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  return h ^ (uint64_t)l->macs;
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* One suite; returns the count of failures. */
static int run_suite(const char *title, bench_layer *ls, int n, const bench_options *o, int peer, cudaStream_t s) {
  const int nimpl = o->n_algos + peer;
  double total[MAX_IMPL] = {0}, best_total = 0;
  int complete[MAX_IMPL], bad = 0;
  for (int k = 0; k < nimpl; k++) complete[k] = 1;
  printf("\n== %s: batch %d, %s %s ==\n", title, n ? ls[0].n : 0, bench_dtype_name(o->dtype), bench_layout_name(o->layout));
  printf("%-22s %5s %12s", "layer", "x", "MACs");
  for (int k = 0; k < o->n_algos; k++) printf(" %10s", bench_algo_name(o->algos[k]));
  if (peer) printf(" %10s %7s", "cudnn", "us/them");
  printf("  kernel\n");
  for (int i = 0; i < n; i++) {
    bench_layer *l = &ls[i];
    if (o->filter && !strstr(l->name, o->filter)) continue;
    bench_data d;
    if (bench_data_make(&d, l, o->dtype, o->layout, o->sparsity, layer_seed(l))) {
      fprintf(stderr, "ERROR %s/%s: out of memory for the data\n", l->model, l->name);
      bad++;
      continue;
    }
    size_t x_bytes = bench_x_count(l) * bench_dtype_size(o->dtype);
    void *dx = NULL, *dy = NULL;
    if (cudaMalloc(&dx, x_bytes) != cudaSuccess || cudaMalloc(&dy, d.y_bytes) != cudaSuccess ||
        cudaMemcpy(dx, d.x, x_bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
      fprintf(stderr, "ERROR %s/%s: device memory: %s\n", l->model, l->name, cudaGetErrorString(cudaGetLastError()));
      bad++;
      cudaFree(dx);
      bench_data_free(&d);
      continue;
    }
    gpu_result r[MAX_IMPL];
    memset(r, 0, sizeof r);
    for (int k = 0; k < o->n_algos; k++) run_ours(l, &d, o->algos[k], o, s, dx, dy, &r[k]);
#if defined(DLCB_HAVE_CUDNN)
    if (peer) run_cudnn(l, &d, o, s, dx, dy, &r[o->n_algos]);
#endif
    printf("%-22.22s %5d %12lld", l->name, l->repeats, (long long)l->macs);
    double best = -1;
    for (int k = 0; k < nimpl; k++) {
      if (k < o->n_algos || !peer || k == o->n_algos) {
        if (r[k].ok > 0) printf(" %10.4f", r[k].ms);
        else printf(" %10s", r[k].ok < 0 ? "FAIL" : "-");
      }
      if (r[k].ok > 0) total[k] += r[k].ms * l->repeats;
      else complete[k] = 0;
      if (k < o->n_algos && r[k].ok > 0 && (best < 0 || r[k].ms < best)) best = r[k].ms;
      if (r[k].ok < 0 && k < o->n_algos) bad++;
      if (r[k].ok < 0) fprintf(stderr, "ERROR %s %s/%s: %s\n", k < o->n_algos ? bench_algo_name(o->algos[k]) : "cudnn",
                               l->model, l->name, r[k].what);
    }
    if (best > 0) best_total += best * l->repeats;
    if (peer) {
      if (best > 0 && r[o->n_algos].ok > 0) printf(" %7.2f", best / r[o->n_algos].ms);
      else printf(" %7s", "-");
    }
    printf("  %s", r[0].what);
    if (peer) printf(" | %s", r[o->n_algos].what);
    printf("\n");
    fflush(stdout);
    cudaFree(dx);
    cudaFree(dy);
    bench_data_free(&d);
  }
  printf("model total (ms, sum of ms x repeats):");
  for (int k = 0; k < nimpl; k++) {
    const char *name = k < o->n_algos ? bench_algo_name(o->algos[k]) : "cudnn";
    printf(" %s %.4f%s", name, total[k], complete[k] ? "" : " (incomplete)");
  }
  if (o->n_algos > 1) printf(" best %.4f", best_total);
  printf("\n");
  if (o->n_algos > 1)
    printf("TOTAL suite=%s impl=best batch=%d dtype=%s layout=%s ms=%.4f complete=%d\n", title, n ? ls[0].n : 0,
           bench_dtype_name(o->dtype), bench_layout_name(o->layout), best_total, 1);
  for (int k = 0; k < nimpl; k++)
    printf("TOTAL suite=%s impl=%s batch=%d dtype=%s layout=%s ms=%.4f complete=%d\n", title,
           k < o->n_algos ? bench_algo_name(o->algos[k]) : "cudnn", n ? ls[0].n : 0, bench_dtype_name(o->dtype),
           bench_layout_name(o->layout), total[k], complete[k]);
  return bad;
}

int bench_cuda_main(const bench_options *o) {
  if (!dlconv_isa_available(DLCONV_ISA_CUDA)) {
    fprintf(stderr, "dlconv-bench: --isa cuda: no CUDA GPU available to libdlconv here\n");
    return 2;
  }
  int dev = 0;
  struct cudaDeviceProp prop;
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&prop, dev);
  int peer = 0;
#if defined(DLCB_HAVE_CUDNN)
  if (o->peers_cudnn) {
    if (cudnnCreate(&g_cudnn) == CUDNN_STATUS_SUCCESS) peer = 1;
    else fprintf(stderr, "dlconv-bench: --peers cudnn: cudnnCreate failed; running without\n");
  }
#else
  if (o->peers_cudnn) fprintf(stderr, "dlconv-bench: --peers cudnn: this bench was built without cuDNN\n");
#endif
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  printf("# dlconv-bench --isa cuda: libdlconv %s on %s (sm_%d%d, %d SMs)", dlconv_version(), prop.name, prop.major,
         prop.minor, prop.multiProcessorCount);
#if defined(DLCB_HAVE_CUDNN)
  if (peer) printf("; peer cuDNN %zu", cudnnGetVersion());
#endif
  printf("\n# timing: CUDA events around a CUDA graph of back-to-back calls, median of 5, >= %.3g s; ms per call\n",
         o->min_time);
  int bad = 0;
  for (int j = 0; j < o->n_suites + (o->n_shapes > 0); j++) {
    bench_layer *ls = NULL;
    int n;
    char err[512] = "", title[128];
    if (j < o->n_suites) {
      n = bench_read_suite(o->suites[j], &ls, err, sizeof err);
      snprintf(title, sizeof title, "%s", base_name(o->suites[j]));
    } else {
      n = o->n_shapes;
      ls = calloc((size_t)n, sizeof *ls);
      for (int i = 0; i < n && ls; i++)
        if (bench_parse_shape(o->shapes[i], &ls[i], err, sizeof err)) n = -1;
      snprintf(title, sizeof title, "--shape");
    }
    if (n < 0 || !ls) {
      fprintf(stderr, "dlconv-bench: %s\n", err);
      free(ls);
      return 2;
    }
    for (int i = 0; i < n && o->batch; i++) {
      ls[i].n = o->batch;
      if (bench_layer_finish(&ls[i], err, sizeof err)) {
        fprintf(stderr, "dlconv-bench: %s\n", err);
        free(ls);
        return 2;
      }
    }
    bad += run_suite(title, ls, n, o, peer, s);
    free(ls);
  }
  cudaStreamDestroy(s);
#if defined(DLCB_HAVE_CUDNN)
  if (peer) cudnnDestroy(g_cudnn);
#endif
  if (bad) fprintf(stderr, "dlconv-bench: %d measurements failed or gave wrong results\n", bad);
  return bad ? 1 : 0;
}
