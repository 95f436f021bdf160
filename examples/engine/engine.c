/* engine.c - a small inference engine on libdlconv: MobileNetV2 (224x224, 1000 classes) with
 * random weights, NHWC fp32, every convolution and the classifier planned once and executed
 * layer by layer, many times, on the engine's own thread pool (passed to libdlconv through
 * dlconv_options.parallel_for).
 *
 *   make && ./engine [--threads N] [--iters N] [--warmup N] [--measure]
 *
 * --measure plans every layer with DLCONV_PLAN_MEASURE (the library times its candidates).
 *
 * Prints each layer's shape, the kernel libdlconv chose for it and its median time, then the
 * median total per image. Batch norm is assumed folded into the weights and bias (as an engine
 * does when it loads a model); ReLU6 is the plans' fused clamp; the residual adds, the global
 * average pool and the copy of the input are the engine's own code, run on the same pool. */
#define _POSIX_C_SOURCE 200809L
#include <dlconv.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------------------------------------
 * thread pool: workers spin briefly, then sleep, waiting for the next parallel_for; the caller
 * takes tasks too. Tasks are handed out one at a time from an atomic counter. */
typedef struct pool {
  int nthreads;                       /* including the caller */
  pthread_t *threads;
  pthread_mutex_t mu;
  pthread_cond_t wake;
  atomic_uint generation;             /* bumped for every job */
  atomic_int stop;
  /* the current job */
  dlconv_task_fn fn;
  void *arg;
  size_t n;
  atomic_size_t next;
  atomic_size_t done;
} pool;

static void run_tasks(pool *p) {
  size_t i;
  while ((i = atomic_fetch_add(&p->next, 1)) < p->n) {
    p->fn(p->arg, i);
    atomic_fetch_add(&p->done, 1);
  }
}

static void *worker(void *arg) {
  pool *p = arg;
  unsigned seen = 0;
  for (;;) {
    unsigned g;
    int spins = 0;
    while ((g = atomic_load(&p->generation)) == seen && !atomic_load(&p->stop)) {
      if (++spins < 20000) continue;  /* a few tens of microseconds: the next layer is usually that close */
      pthread_mutex_lock(&p->mu);
      while (atomic_load(&p->generation) == seen && !atomic_load(&p->stop)) pthread_cond_wait(&p->wake, &p->mu);
      pthread_mutex_unlock(&p->mu);
    }
    if (atomic_load(&p->stop)) return NULL;
    seen = g;
    run_tasks(p);
  }
}

/* dlconv_parallel_for_fn */
static void pool_parallel_for(void *pv, dlconv_task_fn fn, void *arg, size_t n) {
  pool *p = pv;
  if (p->nthreads == 1 || n == 1) {
    for (size_t i = 0; i < n; i++) fn(arg, i);
    return;
  }
  p->fn = fn;
  p->arg = arg;
  p->n = n;
  atomic_store(&p->done, 0);
  atomic_store(&p->next, 0);
  pthread_mutex_lock(&p->mu);
  atomic_fetch_add(&p->generation, 1);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  run_tasks(p);
  while (atomic_load(&p->done) < n) { /* the last tasks finish on other threads */
  }
}

static int pool_init(pool *p, int nthreads) {
  memset(p, 0, sizeof *p);
  p->nthreads = nthreads;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->wake, NULL);
  p->threads = calloc((size_t)nthreads, sizeof *p->threads);
  for (int t = 1; t < nthreads; t++)
    if (pthread_create(&p->threads[t], NULL, worker, p) != 0) return -1;
  return 0;
}

static void pool_destroy(pool *p) {
  pthread_mutex_lock(&p->mu);
  atomic_store(&p->stop, 1);
  pthread_cond_broadcast(&p->wake);
  pthread_mutex_unlock(&p->mu);
  for (int t = 1; t < p->nthreads; t++) pthread_join(p->threads[t], NULL);
  free(p->threads);
}

/* ---------------------------------------------------------------------------------------------
 * the network */
enum { CONV, ADD, POOL, DENSE };

typedef struct layer {
  int kind;
  char name[40];
  char shape[48];
  dlconv_plan *plan;                  /* CONV, DENSE */
  int in, out, res;                   /* activation buffers: input, output, residual (ADD) */
  size_t count;                       /* ADD: elements; POOL: channels */
  int hw;                             /* POOL: pixels */
  double *times;                      /* per iteration, seconds */
  char kernel[64];
} layer;

#define MAX_LAYERS 128
#define NBUF 3

typedef struct net {
  layer l[MAX_LAYERS];
  int n;
  float *buf[NBUF];
  float *input, *logits;
  void *workspace;
  size_t ws_bytes;
  dlconv_options opt;
  pool *pool;
} net;

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static float frand(void) { /* uniform in [-1, 1) */
  rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((rng_state >> 40) * (1.0 / (1 << 23))) - 1.0f;
}

static void die(const char *what, dlconv_status s) {
  fprintf(stderr, "engine: %s: %s: %s\n", what, dlconv_status_string(s), dlconv_last_error());
  exit(1);
}

static layer *add_layer(net *nt, int kind, const char *name) {
  if (nt->n == MAX_LAYERS) {
    fprintf(stderr, "engine: too many layers\n");
    exit(1);
  }
  layer *l = &nt->l[nt->n++];
  memset(l, 0, sizeof *l);
  l->kind = kind;
  snprintf(l->name, sizeof l->name, "%s", name);
  return l;
}

static void note_plan(net *nt, layer *l) {
  dlconv_plan_info info;
  dlconv_status s = dlconv_plan_query(l->plan, &info);
  if (s != DLCONV_OK) die("dlconv_plan_query", s);
  snprintf(l->kernel, sizeof l->kernel, "%s", info.kernel);
  if (info.workspace_bytes > nt->ws_bytes) nt->ws_bytes = info.workspace_bytes;
}

/* a convolution (NHWC, random He-scaled weights and small biases), optional ReLU6 */
static void conv(net *nt, const char *name, int in, int out, int c_in, int h, int w, int c_out, int k, int stride,
                 int groups, int relu6) {
  layer *l = add_layer(nt, CONV, name);
  l->in = in;
  l->out = out;
  dlconv_conv2d_desc d;
  dlconv_conv2d_desc_init(&d, 1, c_in, h, w, c_out, k, k);
  d.stride_h = d.stride_w = stride;
  d.pad_top = d.pad_bottom = d.pad_left = d.pad_right = (k - 1) / 2;
  d.groups = groups;
  d.layout = DLCONV_NHWC;
  if (relu6) {
    d.out_min = 0.0f;
    d.out_max = 6.0f;
  }
  size_t nw = (size_t)c_out * (size_t)(c_in / groups) * (size_t)k * (size_t)k;
  float *wt = malloc(nw * sizeof *wt), *bias = malloc((size_t)c_out * sizeof *bias);
  float scale = sqrtf(6.0f / (float)((c_in / groups) * k * k));
  for (size_t i = 0; i < nw; i++) wt[i] = frand() * scale;
  for (int i = 0; i < c_out; i++) bias[i] = 0.1f * frand();
  int32_t ho, wo;
  dlconv_conv2d_output_shape(&d, &ho, &wo);
  dlconv_status s = dlconv_plan_conv2d(&l->plan, &d, wt, bias, NULL, &nt->opt);
  if (s != DLCONV_OK) die(name, s);
  free(wt);
  free(bias);
  snprintf(l->shape, sizeof l->shape, "%dx%dx%d -> %dx%dx%d k%d s%d%s", h, w, c_in, ho, wo, c_out, k, stride,
           groups > 1 ? " dw" : "");
  note_plan(nt, l);
}

static int other(int a, int b) { /* a buffer that is neither a nor b */
  for (int i = 0; i < NBUF; i++)
    if (i != a && i != b) return i;
  return -1;
}

static void build(net *nt) {
  /* torchvision's MobileNetV2: expansion t, channels c, repeats n, first stride s */
  static const int cfg[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2},
                                {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int h = 224, w = 224, c = 32, cur = 0;
  char name[40];
  conv(nt, "features.0", -1, cur, 3, h, w, c, 3, 2, 1, 1);
  h = w = 112;
  int block = 1;
  for (int i = 0; i < 7; i++) {
    for (int r = 0; r < cfg[i][2]; r++, block++) {
      int t = cfg[i][0], c_out = cfg[i][1], stride = r == 0 ? cfg[i][3] : 1;
      int residual = stride == 1 && c == c_out, hidden = c * t, x = cur, y = cur;
      if (t != 1) {
        snprintf(name, sizeof name, "features.%d.expand", block);
        y = other(x, -1);
        conv(nt, name, x, y, c, h, w, hidden, 1, 1, 1, 1);
      }
      snprintf(name, sizeof name, "features.%d.dw", block);
      int z = other(x, y);
      conv(nt, name, y, z, hidden, h, w, hidden, 3, stride, hidden, 1);
      h = (h - 1) / stride + 1;
      w = (w - 1) / stride + 1;
      snprintf(name, sizeof name, "features.%d.project", block);
      int o = other(x, z);
      conv(nt, name, z, o, hidden, h, w, c_out, 1, 1, 1, 0);
      if (residual) {
        snprintf(name, sizeof name, "features.%d.add", block);
        layer *l = add_layer(nt, ADD, name);
        l->in = o;
        l->res = x;
        l->out = o;
        l->count = (size_t)h * (size_t)w * (size_t)c_out;
        snprintf(l->shape, sizeof l->shape, "%dx%dx%d", h, w, c_out);
      }
      c = c_out;
      cur = o;
    }
  }
  int last = other(cur, -1);
  conv(nt, "features.18", cur, last, c, h, w, 1280, 1, 1, 1, 1);
  layer *l = add_layer(nt, POOL, "avgpool");
  l->in = last;
  l->out = other(last, -1);
  l->count = 1280;
  l->hw = h * w;
  snprintf(l->shape, sizeof l->shape, "%dx%dx%d -> 1280", h, w, 1280);
  int pooled = l->out;
  l = add_layer(nt, DENSE, "classifier");
  l->in = pooled;
  l->out = -2;
  float *wt = malloc(1280 * 1000 * sizeof *wt), *bias = malloc(1000 * sizeof *bias);
  for (int i = 0; i < 1280 * 1000; i++) wt[i] = frand() * sqrtf(3.0f / 1280);
  for (int i = 0; i < 1000; i++) bias[i] = 0.01f * frand();
  dlconv_status s = dlconv_plan_dense(&l->plan, 1, 1280, 1000, DLCONV_F32, wt, bias, -INFINITY, INFINITY, NULL,
                                      &nt->opt);
  if (s != DLCONV_OK) die("classifier", s);
  free(wt);
  free(bias);
  snprintf(l->shape, sizeof l->shape, "1280 -> 1000");
  note_plan(nt, l);
}

/* the engine's own layers, split over the pool */
typedef struct {
  float *y;
  const float *a;
  size_t count, chunk;
  int hw;
} ew_arg;

static void add_task(void *arg, size_t i) {
  const ew_arg *e = arg;
  size_t lo = i * e->chunk, hi = lo + e->chunk < e->count ? lo + e->chunk : e->count;
  for (size_t k = lo; k < hi; k++) e->y[k] += e->a[k];
}

static void pool_task(void *arg, size_t i) { /* global average pool, channels [lo, hi) */
  const ew_arg *e = arg;
  size_t lo = i * e->chunk, hi = lo + e->chunk < e->count ? lo + e->chunk : e->count;
  for (size_t ch = lo; ch < hi; ch++) {
    float s = 0.0f;
    for (int p = 0; p < e->hw; p++) s += e->a[(size_t)p * e->count + ch];
    e->y[ch] = s / (float)e->hw;
  }
}

static double cpu_now(void) { /* this process's CPU time: all its threads */
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void run(net *nt, const float *image, int iter) {
  for (int i = 0; i < nt->n; i++) {
    layer *l = &nt->l[i];
    const float *x = l->in == -1 ? image : nt->buf[l->in];
    float *y = l->out == -2 ? nt->logits : nt->buf[l->out];
    double t0 = now();
    if (l->kind == CONV || l->kind == DENSE) {
      dlconv_status s = dlconv_execute(l->plan, x, y, nt->workspace);
      if (s != DLCONV_OK) die(l->name, s);
    } else {
      size_t ntasks = (size_t)nt->pool->nthreads;
      ew_arg e = {y, l->kind == ADD ? nt->buf[l->res] : x, l->count, (l->count + ntasks - 1) / ntasks, l->hw};
      pool_parallel_for(nt->pool, l->kind == ADD ? add_task : pool_task, &e, ntasks);
    }
    if (iter >= 0) l->times[iter] = now() - t0;
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(const double *v, int n) {
  double *s = malloc((size_t)n * sizeof *s);
  memcpy(s, v, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, cmp_double);
  double m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  free(s);
  return m;
}

int main(int argc, char **argv) {
  int threads = 1, iters = 50, warmup = 5, measure = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--iters") && i + 1 < argc) iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--measure")) measure = 1;
    else {
      fprintf(stderr, "usage: %s [--threads N] [--iters N] [--warmup N] [--measure]\n", argv[0]);
      return 2;
    }
  }
  if (threads < 1 || iters < 1 || warmup < 0) {
    fprintf(stderr, "engine: --threads and --iters must be >= 1, --warmup >= 0\n");
    return 2;
  }
  pool tp;
  if (pool_init(&tp, threads) != 0) {
    fprintf(stderr, "engine: cannot start %d threads\n", threads);
    return 1;
  }
  static net nt;
  nt.pool = &tp;
  dlconv_options_init(&nt.opt);
  nt.opt.num_threads = threads;             /* tasks per parallel region */
  nt.opt.parallel_for = pool_parallel_for;  /* ... run on this engine's threads */
  nt.opt.pool = &tp;
  if (measure) nt.opt.flags = DLCONV_PLAN_MEASURE;
  double t_plan = now();
  build(&nt);
  t_plan = now() - t_plan;

  size_t biggest = (size_t)112 * 112 * 96;  /* the widest activation: features.2's expansion */
  for (int i = 0; i < NBUF; i++) nt.buf[i] = aligned_alloc(64, biggest * sizeof(float));
  nt.input = aligned_alloc(64, (size_t)224 * 224 * 3 * sizeof(float));
  nt.logits = aligned_alloc(64, 1000 * sizeof(float));
  nt.workspace = nt.ws_bytes ? aligned_alloc(64, (nt.ws_bytes + 63) / 64 * 64) : NULL;
  for (int i = 0; i < 224 * 224 * 3; i++) nt.input[i] = frand();
  for (int i = 0; i < nt.n; i++) nt.l[i].times = calloc((size_t)iters, sizeof(double));

  for (int i = 0; i < warmup; i++) run(&nt, nt.input, -1);
  double *total = calloc((size_t)iters, sizeof *total);
  double cpu0 = cpu_now();
  for (int it = 0; it < iters; it++) {
    double t0 = now();
    run(&nt, nt.input, it);
    total[it] = now() - t0;
  }
  double cpu = (cpu_now() - cpu0) / iters;

  printf("libdlconv %s engine: MobileNetV2 1x224x224x3 NHWC fp32, %d thread%s, %d iterations (median), "
         "planned in %.1f ms\n", dlconv_version(), threads, threads > 1 ? "s" : "", iters, t_plan * 1e3);
  printf("%-22s %-34s %-34s %9s %6s\n", "layer", "shape (HxWxC)", "kernel", "ms", "%");
  double sum = 0;
  for (int i = 0; i < nt.n; i++) sum += median(nt.l[i].times, iters);
  for (int i = 0; i < nt.n; i++) {
    layer *l = &nt.l[i];
    double m = median(l->times, iters);
    printf("%-22s %-34s %-34s %9.3f %6.1f\n", l->name, l->shape,
           l->kind == ADD ? "(engine: residual add)" : l->kind == POOL ? "(engine: average pool)" : l->kernel, m * 1e3, 100.0 * m / sum);
  }
  int best = 0;
  for (int i = 1; i < 1000; i++)
    if (nt.logits[i] > nt.logits[best]) best = i;
  double tmin = total[0];
  for (int it = 1; it < iters; it++) tmin = total[it] < tmin ? total[it] : tmin;
  printf("total: %.3f ms per image (median of %d; min %.3f ms), layers' medians sum to %.3f ms, CPU time %.3f ms "
         "per image (all threads); top class %d\n", median(total, iters) * 1e3, iters, tmin * 1e3, sum * 1e3, cpu * 1e3,
         best);
  for (int i = 0; i < nt.n; i++) {
    dlconv_plan_destroy(nt.l[i].plan);
    free(nt.l[i].times);
  }
  for (int i = 0; i < NBUF; i++) free(nt.buf[i]);
  free(nt.input);
  free(nt.logits);
  free(nt.workspace);
  free(total);
  pool_destroy(&tp);
  return 0;
}
