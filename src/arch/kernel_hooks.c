/* The corrupt-kernel hook behind dlc_test_corrupt_kernels() (test_hooks.h): lets a test show
   that DLCONV_VERIFY catches a wrong micro-kernel, for every algorithm and ISA.
 *
 * While on, dlc_kernels_for() returns a copy of the ISA's table whose families point at
 * trampolines. A trampoline calls the kernel it stands for and then perturbs the first element
 * of the tile that kernel stored in y. A kernel pointer is bound to a trampoline slot the first
 * time the copy (or, for gspc, the family's get()) hands it out; the slot table of each kernel
 * signature is big enough for every kernel of every ISA. Nothing here runs unless a test turns
 * the hook on; the cost when off is one load and branch per dlc_kernels_for() (plan time only).
 * Built only into the test library (meson.build), like every hook. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "../ukernel/config.h"
#include "../core/test_hooks.h"

static atomic_int hook_on;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void dlc_test_corrupt_kernels(int on) { atomic_store(&hook_on, on != 0); }

int dlc_kernel_hook_on(void) { return atomic_load_explicit(&hook_on, memory_order_relaxed); }

/* The corruption: always changes the value by at least 1 and by at least its own magnitude. */
static void perturb(float *v) { *v += 1.0f + fabsf(*v); }

/* The same on a binary16 output (the F16 conv's tiles): flipping the exponent's top bit moves a
   finite value by orders of magnitude and turns 0 into 2. */
static void perturb_f16(uint16_t *v) { *v ^= 0x4000u; }

/* Octal slot numbers 00..077 / 000..0777: L64(M, 0) expands M(000) ... M(077), so each
   trampoline knows its slot as a literal. */
#define L8(M, p) M(p##0) M(p##1) M(p##2) M(p##3) M(p##4) M(p##5) M(p##6) M(p##7)
#define L64(M, p) L8(M, p##0) L8(M, p##1) L8(M, p##2) L8(M, p##3) L8(M, p##4) L8(M, p##5) L8(M, p##6) L8(M, p##7)
#define L512(M, p) L64(M, p##0) L64(M, p##1) L64(M, p##2) L64(M, p##3) L64(M, p##4) L64(M, p##5) L64(M, p##6) L64(M, p##7)

/* One slot table per kernel signature: orig[i] is the kernel trampoline tramp[i] stands for. */
#define SLOT_TABLE(name, fn_t, n)                                                        \
  static fn_t name##_orig[n];                                                            \
  static fn_t name##_bind(fn_t f, const fn_t *tramp) {                                   \
    if (!f) return f;                                                                    \
    fn_t r = f; /* out of slots: the kernel stays correct and the test notices */        \
    pthread_mutex_lock(&lock);                                                           \
    for (size_t i = 0; i < n; i++) {                                                     \
      if (name##_orig[i] == f || !name##_orig[i]) {                                      \
        name##_orig[i] = f;                                                              \
        r = tramp[i];                                                                    \
        break;                                                                           \
      }                                                                                  \
    }                                                                                    \
    pthread_mutex_unlock(&lock);                                                         \
    return r;                                                                            \
  }

/* direct: conv and dwc (final call of a tile stores into y unless acc_out is set), dwp */
SLOT_TABLE(direct, dlc_f32_direct_fn, 64)
#define DIRECT_T(i)                                                          \
  static void direct_t##i(size_t nw, const dlc_f32_direct_args *a) {         \
    direct_orig[i](nw, a);                                                   \
    if (a->acc_out) {                                                        \
    } else if (a->yh) {                                                      \
      perturb_f16(a->yh);                                                    \
    } else {                                                                 \
      perturb(a->y);                                                         \
    }                                                                        \
  }
L64(DIRECT_T, 0)
#define ADDR_DIRECT(i) direct_t##i,
static const dlc_f32_direct_fn direct_tramp[] = {L64(ADDR_DIRECT, 0)};

SLOT_TABLE(dwp, dlc_f32_dwp_fn, 64)
#define DWP_T(i)                                                             \
  static void dwp_t##i(size_t nw, const dlc_f32_dwp_args *a) {               \
    dwp_orig[i](nw, a);                                                      \
    perturb(a->y);                                                           \
  }
L64(DWP_T, 0)
#define ADDR_DWP(i) dwp_t##i,
static const dlc_f32_dwp_fn dwp_tramp[] = {L64(ADDR_DWP, 0)};

/* gemm: the call with the epilogue stores the tile's final values */
SLOT_TABLE(gemm, dlc_f32_gemm_ukernel_fn, 64)
#define GEMM_T(i)                                                                                       \
  static void gemm_t##i(size_t m, size_t n, size_t kc, const float *a, const float *b, float *c,       \
                        size_t ldc, int accumulate, const dlc_f32_gemm_epilogue *ep) {                 \
    gemm_orig[i](m, n, kc, a, b, c, ldc, accumulate, ep);                                              \
    if (ep) perturb(c);                                                                                \
  }
L64(GEMM_T, 0)
#define ADDR_GEMM(i) gemm_t##i,
static const dlc_f32_gemm_ukernel_fn gemm_tramp[] = {L64(ADDR_GEMM, 0)};

/* spatial pack: one kernel per tile shape */
SLOT_TABLE(spack, dlc_f32_spack_ukernel_fn, 512)
#define SPACK_T(i)                                                                                      \
  static void spack_t##i(const dlc_f32_spack_params *prm, const float *in, const float *w,             \
                         const float *bias, float *y, size_t nc) {                                     \
    spack_orig[i](prm, in, w, bias, y, nc);                                                            \
    perturb(y);                                                                                        \
  }
L512(SPACK_T, 0)
#define ADDR_SPACK(i) spack_t##i,
static const dlc_f32_spack_ukernel_fn spack_tramp[] = {L512(ADDR_SPACK, 0)};

/* gspc: kernels come from the family's get()/get_blocked() */
SLOT_TABLE(gspc, dlc_f32_gspc_ukernel_fn, 512)
#define GSPC_T(i)                                                                                       \
  static void gspc_t##i(const dlc_f32_gspc_params *prm, const float *in, const float *w,               \
                        const float *bias, float *out, size_t n_lanes, size_t r_valid) {               \
    gspc_orig[i](prm, in, w, bias, out, n_lanes, r_valid);                                             \
    perturb(out);                                                                                      \
  }
L512(GSPC_T, 0)
#define ADDR_GSPC(i) gspc_t##i,
static const dlc_f32_gspc_ukernel_fn gspc_tramp[] = {L512(ADDR_GSPC, 0)};

/* csr */
SLOT_TABLE(csr, dlc_f32_csr_spmm_fn, 64)
#define CSR_T(i)                                                                                        \
  static void csr_t##i(size_t rows, size_t npix, const float *x, const int32_t *nnz, const float *val,  \
                       const int32_t *off, const float *bias, float *y, size_t ldy, float lo, float hi) { \
    csr_orig[i](rows, npix, x, nnz, val, off, bias, y, ldy, lo, hi);                                   \
    if (rows && npix) perturb(y);                                                                      \
  }
L64(CSR_T, 0)
#define ADDR_CSR(i) csr_t##i,
static const dlc_f32_csr_spmm_fn csr_tramp[] = {L64(ADDR_CSR, 0)};

/* The real gspc families' get()/get_blocked(), per ISA (the wrappers below cannot carry it). */
enum { N_ISA = DLCONV_ISA_NEON + 1 };
static const dlc_f32_gspc_family *gspc_real[N_ISA];

#define GSPC_GET(I)                                                                                  \
  static dlc_f32_gspc_ukernel_fn gspc_get_##I(size_t gpv, size_t nv, size_t r, size_t w) {           \
    return gspc_bind(gspc_real[I]->get(gpv, nv, r, w), gspc_tramp);                                  \
  }                                                                                                  \
  static dlc_f32_gspc_ukernel_fn gspc_get_blocked_##I(size_t nv, size_t r, size_t w) {               \
    return gspc_bind(gspc_real[I]->get_blocked(nv, r, w), gspc_tramp);                               \
  }
GSPC_GET(0)
GSPC_GET(1)
GSPC_GET(2)
GSPC_GET(3)
GSPC_GET(4)
typedef dlc_f32_gspc_ukernel_fn (*gspc_get_fn)(size_t, size_t, size_t, size_t);
typedef dlc_f32_gspc_ukernel_fn (*gspc_get_blocked_fn)(size_t, size_t, size_t);
/* dnchw (fp32 NCHW, pixels in the lanes): kernels from the family's kernel(); the first element of
   the tile's first row piece */
SLOT_TABLE(dnchw, dlc_f32_dnchw_fn, 128)
#define DNCHW_T(i)                                                             \
  static void dnchw_t##i(const dlc_f32_dnchw_args *a) {                        \
    dnchw_orig[i](a);                                                          \
    perturb(a->y + a->vecs[0].y_off[0]);                                       \
  }
L64(DNCHW_T, 0)
L64(DNCHW_T, 01)
#define ADDR_DNCHW(i) dnchw_t##i,
static const dlc_f32_dnchw_fn dnchw_tramp[] = {L64(ADDR_DNCHW, 0) L64(ADDR_DNCHW, 01)};
static const dlc_f32_dnchw_family *dnchw_real[N_ISA];
#define DNCHW_GET(I)                                                              \
  static dlc_f32_dnchw_fn dnchw_get_##I(size_t nv, size_t mr) {                   \
    return dnchw_bind(dnchw_real[I]->kernel(nv, mr), dnchw_tramp);                \
  }
DNCHW_GET(0)
DNCHW_GET(1)
DNCHW_GET(2)
DNCHW_GET(3)
DNCHW_GET(4)
typedef dlc_f32_dnchw_fn (*dnchw_get_fn)(size_t, size_t);
static const dnchw_get_fn dnchw_get[N_ISA] = {dnchw_get_0, dnchw_get_1, dnchw_get_2, dnchw_get_3, dnchw_get_4};

static const gspc_get_fn gspc_get[N_ISA] = {gspc_get_0, gspc_get_1, gspc_get_2, gspc_get_3, gspc_get_4};
static const gspc_get_blocked_fn gspc_get_blocked[N_ISA] = {gspc_get_blocked_0, gspc_get_blocked_1,
                                                            gspc_get_blocked_2, gspc_get_blocked_3,
                                                            gspc_get_blocked_4};

#define MAX_SPACK_TILES 256

typedef struct corrupt_table {
  int built;
  dlc_isa_kernels t;
  dlc_f32_direct_family direct;
  dlc_f32_gemm_family gemm;
  dlc_f32_spack_family spack;
  dlc_f32_spack_ukernel_fn spack_kernels[MAX_SPACK_TILES];
  dlc_f32_gspc_family gspc;
  dlc_f32_csr_family csr;
  dlc_f32_dnchw_family dnchw;
} corrupt_table;

static corrupt_table tables[N_ISA];

/* Called by dlc_kernels_for() with the real table of an ISA while the hook is on. */
const dlc_isa_kernels *dlc_kernel_hook_table(const dlc_isa_kernels *real) {
  if (!real || (unsigned)real->isa >= N_ISA) return real;
  corrupt_table *c = &tables[real->isa];
  pthread_mutex_lock(&lock);
  int built = c->built;
  pthread_mutex_unlock(&lock);
  if (built) return &c->t;
  corrupt_table n;
  memset(&n, 0, sizeof n);
  n.t = *real;
  if (real->direct) {
    n.direct = *real->direct;
    for (int i = 0; i < 2; i++) {
      n.direct.conv[i] = direct_bind(real->direct->conv[i], direct_tramp);
      n.direct.dwc[i] = direct_bind(real->direct->dwc[i], direct_tramp);
    }
    n.direct.dwp = dwp_bind(real->direct->dwp, dwp_tramp);
    n.t.direct = &c->direct;
  }
  if (real->gemm) {
    n.gemm = *real->gemm;
    n.gemm.ukernel = gemm_bind(real->gemm->ukernel, gemm_tramp);
    n.gemm.ukernel_lda = NULL;   /* the driver then packs A for the perturbed ukernel */
    n.t.gemm = &c->gemm;
  }
  if (real->spack && real->spack->vh * real->spack->vw <= MAX_SPACK_TILES) {
    n.spack = *real->spack;
    for (size_t i = 0; i < real->spack->vh * real->spack->vw; i++)
      n.spack_kernels[i] = spack_bind(real->spack->ukernels[i], spack_tramp);
    n.spack.ukernels = c->spack_kernels;
    n.t.spack = &c->spack;
  }
  if (real->gspc) {
    gspc_real[real->isa] = real->gspc;
    n.gspc = *real->gspc;
    n.gspc.get = gspc_get[real->isa];
    if (real->gspc->get_blocked) n.gspc.get_blocked = gspc_get_blocked[real->isa];
    n.t.gspc = &c->gspc;
  }
  if (real->csr) {
    n.csr = *real->csr;
    n.csr.spmm = csr_bind(real->csr->spmm, csr_tramp);
    n.t.csr = &c->csr;
  }
  if (real->dnchw) {
    dnchw_real[real->isa] = real->dnchw;
    n.dnchw = *real->dnchw;
    n.dnchw.kernel = dnchw_get[real->isa];
    n.t.dnchw = &c->dnchw;
  }
  n.built = 1;
  pthread_mutex_lock(&lock);
  if (!c->built) *c = n;
  pthread_mutex_unlock(&lock);
  return &c->t;
}
