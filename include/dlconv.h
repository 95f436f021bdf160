/* dlconv.h - libdlconv: convolution and dense kernels behind one BLAS-like C API.
 *
 * The only public header. Contract: api.md, installed beside this library's other documents
 * (share/doc/libdlconv/api.md under the install prefix); names and signatures here never change,
 * new things are added. Plan once (validate, choose algorithm and ISA, pack weights), execute
 * many times from any number of threads, destroy.
 *
 * Pointers and memory:
 *   - Planning copies (and packs) w, bias, the quantisation q including q->w_scales, a CSR's
 *     arrays, the descriptor and the options; the caller may free or reuse them at once. What a
 *     plan keeps of the caller's is only the thread pool of options (parallel_for and pool), used
 *     at every execute: it must outlive the plan. A plan owns its memory until dlconv_plan_destroy.
 *   - On failure a planning call sets *plan to NULL (when plan itself is not NULL) and allocates
 *     nothing that outlives the call; dlconv_last_error() says why.
 *   - x, y, w and bias need only the alignment of their element type (4 bytes for F32, 2 for F16,
 *     1 for U8/S8 x and y and S8 w, 4 for an S32 bias); kernels load and store unaligned. x and y
 *     must not overlap. A caller's workspace must be 64-byte aligned and overlap neither.
 *   - Strings the library returns (dlconv_version, the *_string functions) are static; the
 *     text of dlconv_last_error() is the calling thread's own and may change at its next call
 *     into the library (read it right after the failure).
 *
 * Environment (read once, at the first call that needs them; words are case-insensitive, a
 * value not understood is ignored, and named in one warning on stderr under DLCONV_VERBOSE):
 * DLCONV_ISA caps the ISA AUTO may pick, DLCONV_NUM_THREADS sets the default thread count, DLCONV_VERBOSE=1 prints one line per
 * plan (and per failed plan) on stderr, 2 also one per execute, DLCONV_VERIFY checks every
 * execute. With DLCONV_NUM_THREADS unset, the default thread count is OMP_NUM_THREADS when set,
 * else the CPUs this process may run on (its affinity mask at start-up, as OpenMP counts it,
 * capped by a cgroup CPU quota). */
#ifndef DLCONV_H
#define DLCONV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define DLCONV_API
#elif defined(__GNUC__)
#define DLCONV_API __attribute__((visibility("default")))
#else
#define DLCONV_API
#endif

#define DLCONV_VERSION_MAJOR 0
#define DLCONV_VERSION_MINOR 1
#define DLCONV_VERSION_PATCH 0

typedef enum dlconv_status {
  DLCONV_OK = 0,
  DLCONV_ERR_INVALID_ARG = 1,   /* a descriptor or pointer is malformed */
  DLCONV_ERR_UNSUPPORTED = 2,   /* valid, but this algorithm/ISA/dtype cannot do it */
  DLCONV_ERR_OUT_OF_MEMORY = 3,
  DLCONV_ERR_DEVICE = 4,        /* CUDA runtime error, no device, ... */
  DLCONV_ERR_IO = 5,            /* wisdom file could not be read or written */
  DLCONV_ERR_INTERNAL = 6       /* DLCONV_VERIFY found a result that disagrees with the reference */
} dlconv_status;

typedef enum dlconv_dtype { DLCONV_F32 = 0, DLCONV_F16 = 1, DLCONV_U8 = 2, DLCONV_S8 = 3, DLCONV_S32 = 4 } dlconv_dtype;
typedef enum dlconv_layout { DLCONV_NCHW = 0, DLCONV_NHWC = 1 } dlconv_layout;
typedef enum dlconv_algo {
  DLCONV_ALGO_AUTO = 0, DLCONV_ALGO_DIRECT = 1, DLCONV_ALGO_IM2COL_GEMM = 2,
  DLCONV_ALGO_SPATIAL_PACK = 3, DLCONV_ALGO_GSPC = 4, DLCONV_ALGO_SPARSE_CSR = 5
} dlconv_algo;
typedef enum dlconv_isa {
  DLCONV_ISA_AUTO = 0, DLCONV_ISA_GENERIC = 1, DLCONV_ISA_AVX2 = 2, DLCONV_ISA_AVX512 = 3,
  DLCONV_ISA_NEON = 4, DLCONV_ISA_CUDA = 5
} dlconv_isa;

typedef struct dlconv_conv2d_desc {
  int32_t n, c_in, h_in, w_in;      /* input x: NCHW or NHWC (layout) */
  int32_t c_out, k_h, k_w;          /* weights w: always OIHW = c_out x (c_in/groups) x k_h x k_w */
  int32_t stride_h, stride_w;       /* >= 1 */
  int32_t dilation_h, dilation_w;   /* >= 1 */
  int32_t pad_top, pad_bottom, pad_left, pad_right;  /* >= 0, zero padding */
  int32_t groups;                   /* >= 1, divides c_in and c_out; groups == c_in is depthwise */
  dlconv_dtype dtype;               /* type of x, w and y: F32, F16, U8 or S8 (x,y) with S8 w */
  dlconv_layout layout;             /* of x and y */
  float out_min, out_max;           /* fused clamp after bias: -INFINITY/INFINITY = none, 0/INFINITY = ReLU, 0/6 = ReLU6 */
} dlconv_conv2d_desc;
/* h_out = (h_in + pad_top + pad_bottom - dilation_h*(k_h-1) - 1) / stride_h + 1, likewise w_out. */

/* Sets every field: stride 1, dilation 1, no padding, groups 1, F32, NCHW, no clamp. */
DLCONV_API void dlconv_conv2d_desc_init(dlconv_conv2d_desc *d, int32_t n, int32_t c_in, int32_t h_in, int32_t w_in,
                                        int32_t c_out, int32_t k_h, int32_t k_w);
DLCONV_API dlconv_status dlconv_conv2d_output_shape(const dlconv_conv2d_desc *d, int32_t *h_out, int32_t *w_out);

/* int8: ONNX QLinearConv semantics with symmetric s8 weights and s32 bias:
   y = saturate(round_half_even((sum (x - x_zero_point) * w + bias) * x_scale * w_scale[oc] / y_scale) + y_zero_point)
   with the clamp (out_min/out_max, in real units) applied before requantisation.
   Evaluated exactly as follows (IEEE double, one rounding per operation, in this order), which
   every algorithm, ISA and DLCONV_VERIFY reproduce bit for bit:
     acc  = sum over taps of (x - x_zero_point) * w          exact integer; padding taps add 0
     mult = (double)x_scale * (double)w_scale[oc] / (double)y_scale
     v    = (double)(acc + bias[oc]) * mult
     v    = min(max(v, (double)out_min / y_scale), (double)out_max / y_scale)
     y    = saturate(round_half_even(v) + y_zero_point)        to [0, 255] (U8) or [-128, 127] (S8)
   The reduction (c_in/groups)*k_h*k_w is at most 65793, so that acc fits s32; a longer one is
   DLCONV_ERR_UNSUPPORTED. F16: x, w, bias and y binary16, products summed in fp32, the clamped
   result rounded to nearest even. */
typedef struct dlconv_quant {
  float x_scale;  int32_t x_zero_point;
  const float *w_scales;  int32_t n_w_scales;   /* 1 (per tensor) or c_out (per output channel) */
  float y_scale;  int32_t y_zero_point;
} dlconv_quant;

/* Caller-owned thread pool: run task(arg, i) for every i in [0, n), return when all are done. */
typedef void (*dlconv_task_fn)(void *arg, size_t i);
typedef void (*dlconv_parallel_for_fn)(void *pool, dlconv_task_fn task, void *arg, size_t n);

enum { DLCONV_PLAN_MEASURE = 1u << 0 };   /* time the candidates on this shape and keep the fastest */

typedef struct dlconv_options {
  dlconv_algo algo;                 /* AUTO: the library decides */
  dlconv_isa isa;                   /* AUTO: best the machine supports */
  int32_t num_threads;              /* 0: library default (all cores); 1: single-threaded */
  uint32_t flags;                   /* DLCONV_PLAN_* */
  dlconv_parallel_for_fn parallel_for;  void *pool;   /* optional: use the caller's pool instead of OpenMP */
  void *cuda_stream;                /* cudaStream_t for ISA_CUDA; NULL = default stream */
} dlconv_options;
DLCONV_API void dlconv_options_init(dlconv_options *o);   /* all AUTO / 0 / NULL */

typedef struct dlconv_plan dlconv_plan;       /* opaque, immutable once created */

typedef struct dlconv_plan_info {
  dlconv_algo algo;  dlconv_isa isa;  dlconv_dtype dtype;
  size_t workspace_bytes;           /* scratch one execute needs */
  size_t packed_weight_bytes;       /* memory the plan holds for weights */
  double weight_density;            /* nonzeros / total weights (1.0 for dense algorithms) */
  int64_t macs;                     /* multiply-accumulates per execute */
  char kernel[64];                  /* micro-kernel and tile, e.g. "f32_gemm_6x16__avx512" */
} dlconv_plan_info;

/* Pruned weights in compressed sparse rows: rows = c_out, cols = (c_in/groups)*k_h*k_w. */
typedef struct dlconv_csr {
  int32_t rows, cols, nnz;
  const void *values;               /* nnz values of the conv dtype (F32, F16, or S8) */
  const int32_t *col_indices;       /* nnz */
  const int32_t *row_ptr;           /* rows + 1 */
} dlconv_csr;

DLCONV_API const char *dlconv_version(void);                      /* "MAJOR.MINOR.PATCH" */
DLCONV_API const char *dlconv_status_string(dlconv_status s);
DLCONV_API const char *dlconv_last_error(void);                   /* thread-local detail of the last failure in this thread */
DLCONV_API int dlconv_isa_available(dlconv_isa isa);              /* 1 if this machine (and build) can run it */
/* The words the library's messages use: "auto", "direct", "im2col_gemm", "spatial_pack", "gspc",
   "sparse_csr"; "auto", "generic", "avx2", "avx512", "neon", "cuda"; "f32", "f16", "u8", "s8",
   "s32"; "nchw", "nhwc". A value outside its enum gives "unknown". Static strings. */
DLCONV_API const char *dlconv_algo_string(dlconv_algo algo);
DLCONV_API const char *dlconv_isa_string(dlconv_isa isa);
DLCONV_API const char *dlconv_dtype_string(dlconv_dtype dtype);
DLCONV_API const char *dlconv_layout_string(dlconv_layout layout);

/* Plan: validate, choose algorithm and ISA, pack weights (w and bias are copied; the caller may free them). */
DLCONV_API dlconv_status dlconv_plan_conv2d(dlconv_plan **plan, const dlconv_conv2d_desc *d,
                                            const void *w, const void *bias,   /* bias: c_out values (F32/F16; S32 for int8) or NULL */
                                            const dlconv_quant *q,             /* required for U8/S8, else NULL */
                                            const dlconv_options *opt);        /* NULL = defaults */
DLCONV_API dlconv_status dlconv_plan_conv2d_csr(dlconv_plan **plan, const dlconv_conv2d_desc *d,
                                                const dlconv_csr *w, const void *bias,
                                                const dlconv_quant *q, const dlconv_options *opt);
DLCONV_API dlconv_status dlconv_plan_dense(dlconv_plan **plan, int32_t batch, int32_t in_features, int32_t out_features,
                                           dlconv_dtype dtype, const void *w /* out x in, row-major */, const void *bias,
                                           float out_min, float out_max, const dlconv_quant *q, const dlconv_options *opt);

DLCONV_API size_t dlconv_plan_workspace_size(const dlconv_plan *plan);
/* workspace: NULL (the library allocates) or at least dlconv_plan_workspace_size bytes, 64-byte aligned.
   Safe to call concurrently on the same plan with different x, y and workspace.
   With workspace NULL and a nonzero workspace size, each call allocates that many bytes and frees
   them before returning (one malloc and free per call, DLCONV_ERR_OUT_OF_MEMORY if it fails); a
   caller that executes often passes its own. A size of 0 needs no workspace at all. */
DLCONV_API dlconv_status dlconv_execute(const dlconv_plan *plan, const void *x, void *y, void *workspace);
DLCONV_API dlconv_status dlconv_plan_query(const dlconv_plan *plan, dlconv_plan_info *info);
DLCONV_API void dlconv_plan_destroy(dlconv_plan *plan);           /* NULL is a no-op; once, after every execute on it has returned */

/* One-shot, BLAS-like: plan, execute, destroy. */
DLCONV_API dlconv_status dlconv_conv2d(const dlconv_conv2d_desc *d, const void *x, const void *w, const void *bias,
                                       void *y, const dlconv_quant *q, const dlconv_options *opt);
DLCONV_API dlconv_status dlconv_dense(int32_t batch, int32_t in_features, int32_t out_features, dlconv_dtype dtype,
                                      const void *x, const void *w, const void *bias, void *y,
                                      float out_min, float out_max, const dlconv_quant *q, const dlconv_options *opt);

/* Wisdom: the measured choices (algorithm, ISA, tile parameters per shape), as text. */
DLCONV_API dlconv_status dlconv_wisdom_export(const char *path);
DLCONV_API dlconv_status dlconv_wisdom_import(const char *path);
DLCONV_API void dlconv_wisdom_forget(void);

#ifdef __cplusplus
}
#endif
#endif /* DLCONV_H */
