/* gemm.c - the im2col + GEMM algorithm (Goto/BLIS style), ISA-independent driver.
 *
 * Per group g the convolution is one matrix product with K = cin_g * k_h * k_w:
 *   NCHW: Y_g[cout_g x P] = W_g[cout_g x K] * Xcol[K x P]      per image, P = h_out * w_out,
 *         k order (ic, ky, kx) = OIHW order; weights are the A operand.
 *   NHWC: Y[M x cout_g] = Xcol[M x K] * W_g^T[K x cout_g]       M = n * P: all images at once,
 *         since NHWC rows of every image are equally strided by c_out; k order (ky, kx, ic) so
 *         that im2col reads run over contiguous channels; weights are the B operand.
 * The weights are packed once at plan time into micro-panels of the family's tile (MR rows for
 * NCHW, NR columns for NHWC). The activation operand is packed at execute, straight from the
 * user's tensor into the workspace, with the im2col gather fused into the packing (padding taps
 * become zeros as they are packed; no im2col matrix is ever materialised); 1x1 stride-1
 * unpadded layers skip the im2col arithmetic and copy rows.
 *
 * Cache use. NCHW (weights = A, prepacked): for each K chunk of kc and each B micro-panel
 * (kc x NR, packed just in time into L1: kc from half of L1), every A micro-panel of the job's
 * M block (mc x kc, a quarter of L2) sweeps it, top to bottom: B is never written to L2 and read
 * back, which is what a 1x1 layer with K = 64 would otherwise spend most of its time on; the
 * next panel's input rows stream in behind the hardware prefetchers. NHWC (weights = B, prepacked):
 *   for pc (K chunk) { for ir (MR rows) { pack A micro-panel; for jr (NR cols) ukernel } }
 * so B streams from L2 (a block of kc x nc, half of L2) and A from L1 (MR broadcasts per k step);
 * each A micro-panel is packed just before its sweep, so it is still in L1 when used. A 1x1 layer
 * (strided ones subsampled first) is not packed: ukernel_lda broadcasts its pixels from x.
 *
 * Threads: the jobs are (outer item, M block, N block) with outer = (image, group) for NCHW and
 * group for NHWC; task t of ntasks <= p->nthreads takes a contiguous range of jobs and packs into
 * workspace slice t. */
#include <string.h>
#include <unistd.h>

#include "../ukernel/config.h"
#include "../core/plan.h"
#include "../core/threading.h"
#include "../core/util.h"
#include "gemm.h"

/* A run of block columns (pixels) that stays in one output row and one B panel. */
typedef struct pix_run {
  size_t panel, lane, len;
  ptrdiff_t iy0, ix0;   /* input row and column of tap (0, 0) for the run's first pixel */
} pix_run;

enum { B_PACKED, B_IN_PLACE, B_COPY_FIRST };

typedef struct gemm_data {
  float *wpack;           /* per group: panels of K x mr (NCHW) or K x nr (NHWC) floats, zero-padded */
  size_t wpanel_floats;   /* floats of one full-K panel */
  size_t wpanels;         /* panels per group */
  size_t K, M, N;         /* GEMM of one outer item */
  size_t kc, mc, nc;      /* K chunk; M and N block of a job (multiples of mr and nr) */
  size_t nsub;            /* NCHW: columns packed at a time (nr for 1x1; an L2 sub-block for im2col) */
  size_t outer, mblocks, nblocks, njobs, ntasks;
  size_t ws_slice;        /* bytes of workspace per task, multiple of 64 */
  size_t bblock_bytes;    /* NCHW: the packed B block at the start of a slice; its pix_runs follow */
  int nhwc, pointwise;
  /* NCHW strided 1x1 without padding: each execute first copies every stride-th pixel into a
     dense plane at the start of the workspace (xs_bytes), then runs as a pointwise layer on it. */
  int subsample;
  size_t xs_bytes;
  size_t plane;           /* floats per input channel plane as the jobs read it */
  int trans;              /* NCHW computed as Y^T = X^T W^T (few pixels): NHWC-like loops, C transposed */
  size_t P;               /* output pixels per image */
  size_t mr, nr;
  /* Rows of an M tile (the blocking unit along M), at most mr; below mr only for NCHW, where M
     (output channels, or pixels when transposed) is split into equal tiles (see tile_rows). Each A
     panel still holds mr rows a k step (the kernel's stride), mt of them used. */
  size_t mt;
  dlc_f32_gemm_ukernel_fn ukernel, ukernel_ct;
  dlc_f32_gemm_pack_rows_fn pack_rows;
  dlc_f32_gemm_pack_cols_fn pack_cols;
  dlc_f32_gemm_copy_fn copy;
  dlc_f32_gemm_copy_s2_fn copy_s2;
  dlc_f32_gemm_ukernel_ldb_fn ukernel_ldb;
  dlc_f32_gemm_ukernel_ct_ldb_fn ukernel_ct_ldb;   /* NCHW pointwise: the few pixels past the last full panel */
  dlc_f32_gemm_ukernel_lda_fn ukernel_lda;
  int a_in_place;         /* NHWC pointwise: A rows (pixels) read from x by ukernel_lda, not packed */
  /* NCHW pointwise, full B panels: 0 packed by pack_cols; B_IN_PLACE read from x by ukernel_ldb;
     B_COPY_FIRST read from x by the first M tile, which packs them for the others */
  int b_mode;
} gemm_data;

/* ---------------------------------------------------------------- plan-time blocking */

static size_t cache_bytes(int name, size_t fallback, size_t lo, size_t hi) {
  long v = sysconf(name);
  size_t b = v > 0 ? (size_t)v : fallback;
  return b < lo ? lo : b > hi ? hi : b;
}

/* Splits the M and N dimensions of every outer item into mb x nb jobs for nthreads tasks. The
   time of a split is modelled as (jobs of the busiest task) x (cost of one job), with a job of
   mc x nc outputs costing nc * (mc + PACK_ROWS) for NCHW (it packs its B block: about one cycle
   per float, which is what 16 to 32 rows of FMAs cost per column) and mc * (nc + PACK_ROWS) for
   NHWC (it packs A); so a single thread keeps the cache-sized blocks and several threads get
   equal shares without cutting blocks thinner than they need. At most 256 candidates per
   dimension are tried. */
#define PACK_ROWS 24
static void split_jobs(const gemm_data *d, size_t mb0, size_t nb0, size_t nthreads, size_t *mb_out,
                       size_t *nb_out) {
  size_t span = DLC_MIN(8 * nthreads, (size_t)256);
  size_t nb_lim = DLC_MAX(nb0, DLC_MIN(dlc_div_up(d->N, 2 * d->nr), nb0 + span));
  size_t mb_lim = DLC_MAX(mb0, DLC_MIN(dlc_div_up(d->M, 4 * d->mt), mb0 + span));
  double best = 0;
  *mb_out = mb0, *nb_out = nb0;
  for (size_t mb = mb0; mb <= mb_lim; mb++) {
    size_t mc = dlc_round_up(dlc_div_up(d->M, mb), d->mt);
    for (size_t nb = nb0; nb <= nb_lim; nb++) {
      size_t nc = dlc_round_up(dlc_div_up(d->N, nb), d->nr);
      double job = d->nhwc ? (double)mc * (double)(nc + PACK_ROWS) : (double)nc * (double)(mc + PACK_ROWS);
      double t = (double)dlc_div_up(d->outer * dlc_div_up(d->M, mc) * dlc_div_up(d->N, nc), nthreads) * job;
      if (best == 0 || t < best * 0.999) best = t, *mb_out = mb, *nb_out = nb;
    }
  }
}

static void choose_blocking(gemm_data *d, int nthreads) {
  size_t l1 = cache_bytes(_SC_LEVEL1_DCACHE_SIZE, 32 << 10, 16 << 10, 256 << 10);
  size_t l2 = cache_bytes(_SC_LEVEL2_CACHE_SIZE, 1 << 20, 256 << 10, 8 << 20);
  size_t mb0 = 1, nb0 = 1;
  if (d->nhwc) {
    /* Half of L1 for the A micro-panel, the rest for the B micro-panel and C lines streaming by. */
    size_t kc_max = DLC_MAX((size_t)16, l1 / 2 / (d->mr * sizeof(float)) / 8 * 8);
    /* A GEMV-like NHWC layer (one micro-panel of rows: a dense layer with a small batch) streams
       its weights from memory once; long K chunks make each B micro-panel one long sequential
       stream, which the prefetchers follow, instead of a jump to another panel every few KB. */
    if (d->M <= d->mr) kc_max = DLC_MAX(kc_max, (size_t)4096);
    d->kc = dlc_balanced_block(d->K, kc_max, 1);
    /* Half of L2 for the B block. */
    size_t nc_max = DLC_MAX(d->nr, l2 / 2 / (d->kc * sizeof(float)) / d->nr * d->nr);
    nb0 = dlc_div_up(d->N, nc_max);
  } else {
    /* Half of L1 for the B micro-panel (kc x nr), the rest for A micro-panels and C streaming
       by; a quarter of L2 for the job's A block (mc x kc), re-read from L2 for every B panel. */
    size_t kc_max = DLC_MAX((size_t)16, l1 / 2 / (d->nr * sizeof(float)) / 8 * 8);
    size_t a_budget = l2 / 4;
    if (d->trans) {
      /* Transposed (few pixels, many weights): every K chunk ends in a C pass that transposes and
         re-reads the whole output, and each weight panel serves only the few pixel tiles of a
         plane, so it streams from memory whatever its size. K is therefore cut only as far as the
         pixels' A block plus one weight panel must fit three quarters of L2. Zen 5, AVX-512,
         1 thread, kc 171 -> whole K: 1024x7x7>2048 1.11 -> 0.95 ms, 2048x7x7>1024 1.20 -> 0.94. */
      size_t rows = dlc_div_up(d->M, d->mt) * d->mr;
      a_budget = l2 / 4 * 3;
      kc_max = DLC_MAX(kc_max, a_budget / ((rows + d->nr) * sizeof(float)) / 8 * 8);
    }
    d->kc = dlc_balanced_block(d->K, kc_max, 1);
    size_t a_rows = a_budget / (d->kc * sizeof(float));
    if (d->trans) a_rows = a_rows > d->nr ? a_rows - d->nr : 0;
    size_t mc_max = DLC_MAX(d->mt, a_rows * d->mt / d->mr / d->mt * d->mt);
    mb0 = dlc_div_up(d->M, mc_max);
    /* im2col sub-block: an eighth of L2 */
    d->nsub = d->pointwise ? d->nr : DLC_MAX(d->nr, l2 / 8 / (d->kc * sizeof(float)) / d->nr * d->nr);
  }
  size_t nb, mb;
  split_jobs(d, mb0, nb0, (size_t)nthreads, &mb, &nb);
  d->nc = dlc_round_up(dlc_div_up(d->N, nb), d->nr);
  d->nblocks = dlc_div_up(d->N, d->nc);
  d->mc = dlc_round_up(dlc_div_up(d->M, mb), d->mt);
  d->mblocks = dlc_div_up(d->M, d->mc);
  d->njobs = d->outer * d->mblocks * d->nblocks;
  d->ntasks = DLC_MIN((size_t)nthreads, d->njobs);
  if (d->nhwc) {
    d->ws_slice = dlc_round_up(d->kc * d->mr * sizeof(float), DLC_ALIGN);
  } else if (d->trans) {
    d->bblock_bytes = dlc_round_up(d->kc * d->mc / d->mt * d->mr * sizeof(float), DLC_ALIGN);
    d->ws_slice = d->bblock_bytes + dlc_round_up(d->mr * sizeof(pix_run), DLC_ALIGN);
  } else {
    d->nsub = DLC_MIN(d->nsub, d->nc);
    d->bblock_bytes = dlc_round_up(d->kc * d->nsub * sizeof(float), DLC_ALIGN);
    d->ws_slice = d->bblock_bytes + dlc_round_up(d->nsub * sizeof(pix_run), DLC_ALIGN);
  }
}

/* Rows of the NCHW tiles for M output channels and the family's mr: the tile height whose tiles
   cost least, a tile of m rows costing max(m, 4) + 1 per k step (a k step is m cycles of FMAs on
   two pipes but at least 4, the FMA latency, and one more of B loads and loop); ties keep the
   taller tile (fewer tiles, fewer B passes). So 16 = 8 + 8, not 14 + 2, whose 2-row tile runs 4
   FMA chains at half speed. */
static size_t tile_rows(size_t M, size_t mr) {
  size_t best = mr, best_cost = SIZE_MAX;
  for (size_t t = mr; t >= 1 && t * 2 >= mr; t--) {
    size_t r = M % t, cost = M / t * (DLC_MAX(t, (size_t)4) + 1) + (r ? DLC_MAX(r, (size_t)4) + 1 : 0);
    if (cost < best_cost) best = t, best_cost = cost;
  }
  return best;
}

/* ---------------------------------------------------------------- weight packing */

/* NCHW: A = W_g, panels of mt output channels (rows past them zero up to mr), element (i, k) at
   panel[k * mr + i]. */
static void pack_weights_nchw(const dlc_conv_shape *s, const float *w, gemm_data *d) {
  size_t cout_g = (size_t)s->cout_g, K = d->K, mr = d->mr, mt = d->mt;
  for (size_t g = 0; g < (size_t)s->groups; g++) {
    for (size_t pm = 0; pm < d->wpanels; pm++) {
      float *dst = d->wpack + (g * d->wpanels + pm) * d->wpanel_floats;
      size_t rows = DLC_MIN(mt, cout_g - pm * mt);
      const float *src = w + (g * cout_g + pm * mt) * K;
      for (size_t k = 0; k < K; k++) {
        for (size_t i = 0; i < mr; i++) dst[k * mr + i] = i < rows ? src[i * K + k] : 0.0f;
      }
    }
  }
}

/* Weights as the B operand (NHWC, and NCHW computed transposed) are stored in K chunks of kc, each
   chunk's panels of nr output channels one after another (kc x nr floats, element (k, j) at
   panel[k * nr + j]): a sweep of the micro-kernel over a B block then reads one sequential
   stream, which the hardware prefetchers run ahead of, instead of jumping K x nr floats from one
   panel to the next. */
static inline size_t b_panel(const gemm_data *d, size_t pc, size_t pn) {
  return pc * d->wpanels * d->nr + pn * DLC_MIN(d->kc, d->K - pc) * d->nr;
}

/* B = W_g^T, k in (ky, kx, ic) order for NHWC (im2col reads run over channels), in OIHW order
   (ic, ky, kx) for NCHW computed transposed. */
static void pack_weights_b(const dlc_conv_shape *s, const float *w, gemm_data *d) {
  size_t cout_g = (size_t)s->cout_g, cin_g = (size_t)s->cin_g, K = d->K, nr = d->nr;
  size_t taps = (size_t)(s->k_h * s->k_w);
  for (size_t g = 0; g < (size_t)s->groups; g++) {
    for (size_t pc = 0; pc < K; pc += d->kc) {
      size_t kc = DLC_MIN(d->kc, K - pc);
      for (size_t pn = 0; pn < d->wpanels; pn++) {
        float *dst = d->wpack + g * d->wpanels * d->wpanel_floats + b_panel(d, pc, pn);
        size_t cols = DLC_MIN(nr, cout_g - pn * nr);
        const float *src = w + (g * cout_g + pn * nr) * K;
        for (size_t k = 0; k < kc; k++) {
          size_t kk = pc + k, ks = d->nhwc ? kk % cin_g * taps + kk / cin_g : kk;
          for (size_t j = 0; j < nr; j++) dst[k * nr + j] = j < cols ? src[j * K + ks] : 0.0f;
        }
      }
    }
  }
}

/* NHWC pointwise: the micro-kernel broadcasts each pixel's channels from x itself, c_in floats
   apart, rather than from a panel transposed into the workspace first; the transposes cost some
   17% of a layer with 32 channels out (one B panel per A panel): Zen 5, AVX-512, 1 thread, in
   place / packed: 32x32x32>32 0.87, 16x32x32>32 0.87, 64x16x16>64 0.94, 128x56x56>256 0.97. Not
   where the tile's rows crowd a few L1 sets (rows 4 KB apart share one; 12 ways on Zen 5): more
   than 8 rows in a set would evict each other between the B panels that re-read them. */
int dlc_gemm_nhwc_a_in_place(const dlc_conv_shape *s, const dlc_isa_kernels *k) {
  const dlc_f32_gemm_family *fam = k ? k->gemm : NULL;
  /* strided: subsampled first (gemm_plan), then pointwise */
  if (!fam || !fam->ukernel_lda || s->layout != DLCONV_NHWC || s->k_h != 1 || s->k_w != 1 || s->pad_t || s->pad_b ||
      s->pad_l || s->pad_r)
    return 0;
  size_t row_bytes = (size_t)s->c_in * sizeof(float), low = row_bytes & (~row_bytes + 1);
  size_t sets = low >= 4096 ? 1 : 4096 / low;   /* distinct sets a column of the rows maps to */
  return dlc_div_up(fam->mr, sets) <= 8;
}

static void gemm_destroy(dlconv_plan *p) {
  gemm_data *d = p->algo_data;
  if (d) {
    dlc_free(d->wpack);
    dlc_free(d);
  }
  p->algo_data = NULL;
}

static dlconv_status gemm_plan(dlconv_plan *p, const void *weights) {
  const float *w = weights;
  const dlc_f32_gemm_family *fam = p->kernels ? p->kernels->gemm : NULL;
  if (!fam) return dlc_fail(DLCONV_ERR_UNSUPPORTED, "im2col_gemm has no f32 kernel for this ISA");
  const dlc_conv_shape *s = &p->s;
  gemm_data *d = dlc_calloc(sizeof *d);
  if (!d) return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory planning im2col_gemm");
  size_t P = (size_t)(s->h_out * s->w_out);
  d->mr = fam->mr;
  d->mt = fam->mr;
  d->nr = fam->nr;
  d->ukernel = fam->ukernel;
  d->ukernel_ct = fam->ukernel_ct;
  d->pack_rows = fam->pack_rows;
  d->pack_cols = fam->pack_cols;
  d->copy = fam->copy;
  d->copy_s2 = fam->copy_s2;
  d->ukernel_ldb = fam->ukernel_ldb;
  d->ukernel_ct_ldb = fam->ukernel_ct_ldb;
  d->ukernel_lda = fam->ukernel_lda;
  d->nhwc = s->layout == DLCONV_NHWC;
  int unpadded_1x1 = s->k_h == 1 && s->k_w == 1 && s->pad_t == 0 && s->pad_b == 0 && s->pad_l == 0 && s->pad_r == 0;
  d->pointwise = unpadded_1x1 && s->stride_h == 1 && s->stride_w == 1;
  /* A strided 1x1 layer (a ResNet downsample) gathered into the im2col panels costs a strided
     scalar load per float and M block; subsampled once per execute (a quarter of x at stride 2)
     it runs as a pointwise layer. Measured on Zen 2, 256x56x56>512 /2: 3.49 ms as im2col, 2.27 ms
     for the same GEMM as a pointwise layer. NHWC likewise where the pointwise layer then reads
     its pixels in place: each pixel's channels are one run to copy. */
  d->subsample = unpadded_1x1 && !d->pointwise && (!d->nhwc || dlc_gemm_nhwc_a_in_place(s, p->kernels));
  d->pointwise |= d->subsample;
  d->plane = d->subsample ? P : (size_t)(s->h_in * s->w_in);
  d->K = (size_t)(s->cin_g * s->k_h * s->k_w);
  d->P = P;
  /* With few pixels per image (7 x 7: 49 = 32 + 17) vectors along pixels are a quarter empty;
     along output channels they are full: then compute Y^T = X^T W^T, pixels as rows. */
  if (!d->nhwc) {
    size_t vec = DLC_MAX((size_t)1, d->nr / 2), cog = (size_t)s->cout_g;
    double eff_p = (double)P / (double)dlc_round_up(P, vec), eff_c = (double)cog / (double)dlc_round_up(cog, vec);
    d->trans = eff_p < 0.9 && eff_c > eff_p + 0.05;
  }
  if (d->nhwc || d->trans) {
    d->M = d->nhwc ? (size_t)s->n * P : P;
    d->N = (size_t)s->cout_g;
    d->outer = d->nhwc ? (size_t)s->groups : (size_t)(s->n * s->groups);
    d->wpanels = dlc_div_up(d->N, d->nr);
    d->wpanel_floats = d->K * d->nr;
    /* Transposed, the pixels are cut into equal tiles (49 = 13 + 13 + 13 + 10, not 14 x 3 + 7): the
       C-transposing store costs the same for a short tile as for a full one. */
    if (d->trans) d->mt = dlc_balanced_block(P, d->mr, 1);
  } else {
    d->M = (size_t)s->cout_g;
    d->N = P;
    d->outer = (size_t)(s->n * s->groups);
    d->mt = tile_rows(d->M, d->mr);
    d->wpanels = dlc_div_up(d->M, d->mt);
    d->wpanel_floats = d->K * d->mr;
  }
  size_t total = (size_t)s->groups * d->wpanels;
  if (d->wpanel_floats > SIZE_MAX / sizeof(float) / total) {
    dlc_free(d);
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "im2col_gemm packed weights overflow size_t");
  }
  p->packed_weight_bytes = total * d->wpanel_floats * sizeof(float);
  d->wpack = dlc_malloc(p->packed_weight_bytes);
  if (!d->wpack) {
    size_t bytes = p->packed_weight_bytes;
    dlc_free(d);
    p->packed_weight_bytes = 0;
    return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "out of memory packing %zu bytes of weights", bytes);
  }
  choose_blocking(d, p->nthreads > 0 ? p->nthreads : 1);
  /* NCHW pointwise: a full B panel (kc rows of nr pixels, P floats apart in x) is read in place
     by the micro-kernels rather than copied into a panel first; the copy cost 15-20% of a layer
     with few input channels. Zen 5, AVX-512, 1 thread, in place / packed: 32x112x112>16 0.83,
     96x56x56>24 0.86, 64x56x56>128 0.96, 256x28x28>512 0.97, 16x32x32>32 0.89, 64x16x16>64 0.95.
     Not where the panel's rows crowd a few L1 sets (64 sets of 64-byte lines on x86 cores: rows
     4 KB apart share one) and the M tiles after the first would find them evicted: 32x32x32>32,
     32 rows in one set, 1.18, 16x32x32>32 (16 rows, and the C tile's rows in the same set) 1.10;
     there the first tile reads x in place and stores the panel for the
     others as it goes (B_COPY_FIRST), in the shadow of its FMAs where the copy stalled on its
     loads. A packed panel is contiguous and spreads over all sets. Neither with a short K and x
     out of L2, where the first tile's k loop is too short to cover its loads from memory while
     the copy has all of them in flight at once: 16x112x112>96 1.04. Only up to 192 output
     channels in one M block: the copy costs about 1/M of the FMAs' time, and with 256 and more
     (several M blocks too) the runs on a loaded machine were within noise or slower
     (256x56x56>256 1.02-1.03, 512x28x28>512 some runs 2x: unconfirmed, kept out). */
  if (!d->nhwc && !d->trans && d->pointwise && d->ukernel_ldb) {
    size_t row_bytes = d->plane * sizeof(float), low = row_bytes & (~row_bytes + 1);
    size_t sets = low >= 4096 ? 1 : 4096 / low;   /* distinct sets a column of the rows maps to */
    size_t l2 = cache_bytes(_SC_LEVEL2_CACHE_SIZE, 1 << 20, 256 << 10, 8 << 20);
    int x_out_of_l2 = d->K * row_bytes > l2 / 2;
    if (!(d->kc < 24 && x_out_of_l2) && d->mblocks == 1 && d->M <= 192)
      d->b_mode = d->mc <= d->mt || (sets > 1 && dlc_div_up(d->kc, sets) <= 16) ? B_IN_PLACE : B_COPY_FIRST;
  }
  d->a_in_place = dlc_gemm_nhwc_a_in_place(s, p->kernels);
  if (d->nhwc || d->trans)
    pack_weights_b(s, w, d);
  else
    pack_weights_nchw(s, w, d);
  p->algo_data = d;
  if (d->subsample) {
    size_t planes = (size_t)s->n * (size_t)s->c_in;
    if (P > (SIZE_MAX - DLC_ALIGN) / sizeof(float) / planes) {
      gemm_destroy(p);
      return dlc_fail(DLCONV_ERR_OUT_OF_MEMORY, "im2col_gemm subsampled input overflows size_t");
    }
    d->xs_bytes = dlc_round_up(planes * P * sizeof(float), DLC_ALIGN);
  }
  p->workspace_bytes = d->xs_bytes + d->ntasks * d->ws_slice;
  p->weight_density = 1.0;
  size_t len = strlen(fam->name);
  if (len >= sizeof p->kernel) len = sizeof p->kernel - 1;
  memcpy(p->kernel, fam->name, len);
  p->kernel[len] = '\0';
  return DLCONV_OK;
}

/* ---------------------------------------------------------------- activation packing */

static inline void zero_floats(float *restrict d, size_t n) {
  for (size_t i = 0; i < n; i++) d[i] = 0.0f;
}

/* dst[l] = row[ix0 + l * sw] for l < len where that column lies in [0, w_in), else 0 (padding). */
static void gather_row(const gemm_data *d, float *restrict dst, const float *restrict row,
                       ptrdiff_t ix0, ptrdiff_t sw, size_t len, ptrdiff_t w_in) {
  ptrdiff_t n = (ptrdiff_t)len, lo, hi;
  if (sw == 1) {   /* no division: this runs once per k and run, a few times per 32 floats packed */
    lo = ix0 >= 0 ? 0 : -ix0;
    hi = w_in - ix0;
  } else if (sw == 2) {   /* a stem's stride: shifts, not an idiv per run */
    lo = ix0 >= 0 ? 0 : (1 - ix0) >> 1;
    hi = ix0 >= w_in ? 0 : (w_in - ix0 + 1) >> 1;
  } else {
    lo = ix0 >= 0 ? 0 : (-ix0 + sw - 1) / sw;
    hi = ix0 >= w_in ? 0 : (w_in - ix0 + sw - 1) / sw;
  }
  lo = DLC_MIN(lo, n);
  hi = DLC_MAX(DLC_MIN(hi, n), lo);
  zero_floats(dst, (size_t)lo);
  if (sw == 1) {
    d->copy(dst + lo, row + (ix0 + lo), (size_t)(hi - lo));
  } else if (sw == 2 && d->copy_s2) {
    if (hi > lo) d->copy_s2(dst + lo, row + (ix0 + 2 * lo), (size_t)(hi - lo));
  } else {
    for (ptrdiff_t l = lo; l < hi; l++) dst[l] = row[ix0 + l * sw];
  }
  zero_floats(dst + hi, (size_t)(n - hi));
}

/* The input as the B packing sees it: a pointwise layer's channel plane is one row of h*w pixels,
   so its runs break only at panel edges and copy whole panel rows. */
typedef struct plane_geom {
  ptrdiff_t h, w, sw, dh, dw;
  size_t hw, kh, kw;
} plane_geom;

static plane_geom nchw_plane(const gemm_data *d, const dlc_conv_shape *s) {
  plane_geom g = {s->h_in, s->w_in, s->stride_w, s->dil_h, s->dil_w, d->plane, (size_t)s->k_h, (size_t)s->k_w};
  if (d->pointwise) g.h = 1, g.w = (ptrdiff_t)g.hw, g.sw = 1;
  return g;
}

/* Cuts the block columns [j0, j0 + ncols) into runs; at most ncols of them. */
static size_t block_runs(const gemm_data *d, const dlc_conv_shape *s, size_t j0, size_t ncols, size_t nr,
                         pix_run *r) {
  size_t row = d->pointwise ? d->P : (size_t)s->w_out, n = 0;
  for (size_t j = 0; j < ncols;) {
    size_t p = j0 + j, oy = p / row, ox = p % row, lane = j % nr;
    size_t len = DLC_MIN(DLC_MIN(row - ox, nr - lane), ncols - j);
    r[n].panel = j / nr, r[n].lane = lane, r[n].len = len;
    r[n].iy0 = d->pointwise ? 0 : (ptrdiff_t)oy * s->stride_h - s->pad_t;
    r[n].ix0 = d->pointwise ? (ptrdiff_t)p : (ptrdiff_t)ox * s->stride_w - s->pad_l;
    n++;
    j += len;
  }
  return n;
}

/* NCHW: the B block rows [pc, pc + kc) x the block's columns (cut into runs) of one image and
   group's im2col matrix, as panels of kc x nr floats (columns past ncols zero). x_ig: the group's
   first input channel of the image. k runs outermost so that each input row is read once,
   front to back, for all the block's pixels. */
static void pack_b_nchw(const gemm_data *d, size_t nr, const plane_geom *g, const float *x_ig, const pix_run *runs,
                        size_t nruns, size_t pc, size_t kc, size_t ncols, float *dst) {
  size_t khw = g->kh * g->kw, tail = ncols % nr, last = ncols / nr;
  size_t ic = pc / khw, tap = pc % khw, ky = tap / g->kw, kx = tap % g->kw;
  for (size_t k = 0; k < kc; k++) {
    const float *xc = x_ig + ic * g->hw;
    ptrdiff_t dy = (ptrdiff_t)ky * g->dh, dx = (ptrdiff_t)kx * g->dw;
    for (size_t r = 0; r < nruns; r++) {
      float *o = dst + (runs[r].panel * kc + k) * nr + runs[r].lane;
      ptrdiff_t iy = runs[r].iy0 + dy;
      if (iy < 0 || iy >= g->h)
        zero_floats(o, runs[r].len);
      else
        gather_row(d, o, xc + iy * g->w, runs[r].ix0 + dx, g->sw, runs[r].len, g->w);
    }
    if (tail) zero_floats(dst + (last * kc + k) * nr + tail, nr - tail);
    if (++kx == g->kw) {
      kx = 0;
      if (++ky == g->kh) ky = 0, ic++;
    }
  }
}

/* Starts loading the C tile the micro-kernel will need next, one call ahead of it: with a short
   K (a first layer, a 1x1 layer) one call is too short to hide a miss on C by itself. */
static inline void prefetch_tile(const float *c, size_t ldc, size_t rows, size_t cols) {
  for (size_t i = 0; i < rows; i++) {
    __builtin_prefetch(c + i * ldc, 1);
    __builtin_prefetch(c + i * ldc + cols - 1, 1);
  }
}

/* Copies a short run (a few channels) without the SIMD transpose, whose fixed cost is 16 columns. */
static void pack_rows_short(size_t mr, size_t len, const float *const *rows, float *restrict dst) {
  for (size_t i = 0; i < mr; i++) {
    const float *r = rows[i];
    for (size_t t = 0; t < len; t++) dst[t * mr + i] = r ? r[t] : 0.0f;
  }
}

/* NHWC: one A micro-panel, rows [m0, m0 + rows) (pixels over all images) x K columns
   [pc, pc + kc) in (ky, kx, ic) order, element (i, k) at dst[k * mr + i]; rows past `rows` zero.
   K is walked in runs of one tap and consecutive channels, contiguous in x for every row, and
   each run is transposed into the panel by the family's pack_rows. */
static void pack_a_nhwc(const gemm_data *d, const dlc_conv_shape *s, const float *x, size_t g,
                        size_t m0, size_t rows, size_t pc, size_t kc, float *dst) {
  size_t mr = d->mr, cin_g = (size_t)s->cin_g, c_in = (size_t)s->c_in;
  size_t w_out = (size_t)s->w_out, P = (size_t)(s->h_out * s->w_out), kw = (size_t)s->k_w;
  const float *src[DLC_GEMM_MR_MAX];
  const float *ximg[DLC_GEMM_MR_MAX];
  ptrdiff_t iy0[DLC_GEMM_MR_MAX], ix0[DLC_GEMM_MR_MAX];
  const float *xg = x + g * cin_g;
  for (size_t i = 0; i < mr; i++) src[i] = NULL;
  if (d->pointwise) {
    for (size_t i = 0; i < rows; i++) src[i] = xg + (m0 + i) * c_in + pc;
    d->pack_rows(kc, src, dst);
    return;
  }
  for (size_t i = 0; i < rows; i++) {
    size_t m = m0 + i, img = m / P, rem = m % P;
    ximg[i] = xg + img * (size_t)(s->h_in * s->w_in) * c_in;
    iy0[i] = (ptrdiff_t)(rem / w_out) * s->stride_h - s->pad_t;
    ix0[i] = (ptrdiff_t)(rem % w_out) * s->stride_w - s->pad_l;
  }
  /* Without groups and dilation along x, the taps of one kernel row are adjacent pixels, whose
     channels follow each other in x: a run can then span the rest of the kernel row (kw * c_in
     floats for a first layer with 3 channels instead of 3), for the rows whose pixels are all
     inside the image along x. */
  int merge = cin_g == c_in && s->dil_w == 1;
  for (size_t k = pc; k < pc + kc;) {
    size_t tap = k / cin_g, ic = k % cin_g, ky = tap / kw, kx = tap % kw;
    size_t len = DLC_MIN((merge ? (kw - kx) * cin_g : cin_g) - ic, pc + kc - k);
    size_t kx_last = kx + (ic + len - 1) / cin_g;
    ptrdiff_t dy = (ptrdiff_t)ky * s->dil_h, dx = (ptrdiff_t)kx * s->dil_w;
    ptrdiff_t dx_last = (ptrdiff_t)kx_last * s->dil_w;
    int partial = 0;
    for (size_t i = 0; i < rows; i++) {
      ptrdiff_t iy = iy0[i] + dy, ix = ix0[i] + dx, ix_last = ix0[i] + dx_last;
      if (iy < 0 || iy >= s->h_in || ix_last < 0 || ix >= s->w_in) {
        src[i] = NULL;
      } else {
        src[i] = ximg[i] + ((size_t)iy * (size_t)s->w_in + (size_t)ix) * c_in + ic;
        partial |= ix < 0 || ix_last >= s->w_in;
      }
    }
    if (partial) {   /* some pixel is cut by the left or right edge: one tap at a time here */
      len = DLC_MIN(cin_g - ic, pc + kc - k);
      for (size_t i = 0; i < rows; i++) {
        ptrdiff_t iy = iy0[i] + dy, ix = ix0[i] + dx;
        int valid = iy >= 0 && iy < s->h_in && ix >= 0 && ix < s->w_in;
        src[i] = valid ? ximg[i] + ((size_t)iy * (size_t)s->w_in + (size_t)ix) * c_in + ic : NULL;
      }
    }
    if (len >= 8)
      d->pack_rows(len, src, dst + (k - pc) * mr);
    else
      pack_rows_short(mr, len, src, dst + (k - pc) * mr);
    k += len;
  }
}

/* ---------------------------------------------------------------- execute */

/* NCHW: B micro-panel outer, A micro-panels inner (BLIS order): each kc x nr panel of the im2col
   matrix is packed into L1 right before all the job's A micro-panels (prepacked weights, streaming
   from the job's mc x kc block in L2) sweep it, and its C tiles are written top to bottom. Nothing
   of B is ever written to or read back from L2, so a pointwise layer with few input channels
   (K = 64) costs little more than reading x and writing y once. The next panel's input rows are
   left to the hardware prefetchers, which follow the panel's kc row streams: a software
   prefetch of them into L2, a slice per micro-kernel call, made Zen 5 3-5% slower (AVX-512 and
   AVX2, 1 thread: 16x112x112>96 0.195 -> 0.189 ms, 32x112x112>16 0.079 -> 0.075, 144x28x28>32
   0.035 -> 0.033). A pointwise layer's full panels are often not packed at all (b_mode): the
   micro-kernels read their kc rows straight from x. */
static void run_job_nchw(const dlc_exec *c, size_t o, size_t mb, size_t nb, float *bpack) {
  const dlconv_plan *p = c->p;
  const gemm_data *d = c->p->algo_data;
  const dlc_conv_shape *s = &p->s;
  size_t img = o / (size_t)s->groups, g = o % (size_t)s->groups, P = d->N, mr = d->mr, mt = d->mt, nr = d->nr;
  const float *x_ig = (const float *)c->x + (img * (size_t)s->c_in + g * (size_t)s->cin_g) * d->plane;
  float *y_ig = (float *)c->y + (img * (size_t)s->c_out + g * (size_t)s->cout_g) * P;
  const float *a_g = d->wpack + g * d->wpanels * d->wpanel_floats;
  size_t m0 = mb * d->mc, m1 = DLC_MIN(d->M, m0 + d->mc);
  size_t j0 = nb * d->nc, j1 = DLC_MIN(d->N, j0 + d->nc);
  pix_run *runs = (pix_run *)((char *)bpack + d->bblock_bytes);
  plane_geom geom = nchw_plane(d, s);
  dlc_f32_gemm_epilogue ep = {NULL, 0, s->out_min, s->out_max, NULL, 0};
  for (size_t pc = 0; pc < d->K; pc += d->kc) {
    size_t kc = DLC_MIN(d->kc, d->K - pc);
    int last = pc + kc == d->K;
    if (!d->pointwise) {
      /* im2col: a sub-block of nsub columns (an eighth of L2) at a time, swept A micro-panel by
         A micro-panel (each C row then receives nsub contiguous floats: a few write streams, not
         one per output channel, which matters when K is short and C traffic dominates, as in a
         first layer or a strided 1x1); the per-k work of the gather is shared by its panels. */
      for (size_t jb = j0; jb < j1; jb += d->nsub) {
        size_t ncols = DLC_MIN(d->nsub, j1 - jb);
        size_t nruns = block_runs(d, s, jb, ncols, nr, runs);
        pack_b_nchw(d, nr, &geom, x_ig, runs, nruns, pc, kc, ncols, bpack);
        for (size_t ir = m0; ir < m1; ir += mt) {
          const float *a = a_g + (ir / mt) * d->wpanel_floats + pc * mr;
          size_t m = DLC_MIN(mt, m1 - ir);
          ep.bias = p->bias + g * (size_t)s->cout_g + ir;
          for (size_t jr = 0; jr < ncols; jr += nr)
            d->ukernel(m, DLC_MIN(nr, ncols - jr), kc, a, bpack + jr * kc, y_ig + ir * P + jb + jr, P, pc > 0,
                       last ? &ep : NULL);
        }
      }
      continue;
    }
    for (size_t jr = j0; jr < j1; jr += nr) {
      size_t n = DLC_MIN(nr, j1 - jr);
      if (d->b_mode && n == nr) {
        for (size_t ir = m0; ir < m1; ir += mt) {
          const float *a = a_g + (ir / mt) * d->wpanel_floats + pc * mr;
          size_t m = DLC_MIN(mt, m1 - ir);
          float *c_t = y_ig + ir * P + jr;
          ep.bias = p->bias + g * (size_t)s->cout_g + ir;
          if (d->b_mode == B_IN_PLACE)
            d->ukernel_ldb(m, kc, a, x_ig + pc * P + jr, P, NULL, c_t, P, pc > 0, last ? &ep : NULL);
          else if (ir == m0)
            d->ukernel_ldb(m, kc, a, x_ig + pc * P + jr, P, bpack, c_t, P, pc > 0, last ? &ep : NULL);
          else
            d->ukernel(m, n, kc, a, bpack, c_t, P, pc > 0, last ? &ep : NULL);
        }
        continue;
      }
      /* A last panel of a few pixels (196 = 6 x 32 + 4 on AVX-512), C transposed: the pixels are
         the tile's rows, broadcast from a kc x mr panel, and the A panels of weights are read in
         place as B, mt output channels in a vector. Where it fills more lanes x FMA chains (8 keep
         two pipes of latency 4 busy) than the one-vector tile of mt rows and n pixels: AVX-512,
         4 pixels: 14 lanes x 4 chains against 4 x 8; not AVX2, whose 6-row tiles tie. */
      if (d->ukernel_ct_ldb && n <= mr && mr <= nr && 2 * n <= nr && 2 * mt <= nr &&
          mt * DLC_MIN(n, (size_t)8) > n * DLC_MIN(mt, (size_t)8)) {
        const float *xs = x_ig + pc * P + jr;
        for (size_t k = 0; k < kc; k++)
          for (size_t i = 0; i < mr; i++) bpack[k * mr + i] = i < n ? xs[k * P + i] : 0.0f;
        dlc_f32_gemm_epilogue ept = ep;
        ept.bias_per_column = 1;
        for (size_t ir = m0; ir < m1; ir += mt) {
          const float *a = a_g + (ir / mt) * d->wpanel_floats + pc * mr;
          ept.bias = p->bias + g * (size_t)s->cout_g + ir;
          d->ukernel_ct_ldb(n, DLC_MIN(mt, m1 - ir), kc, bpack, a, mr, y_ig + ir * P + jr, P, pc > 0,
                            last ? &ept : NULL);
        }
        continue;
      }
      d->pack_cols(kc, n, x_ig + pc * P + jr, P, bpack);
      for (size_t ir = m0; ir < m1; ir += mt) {
        const float *a = a_g + (ir / mt) * d->wpanel_floats + pc * mr;
        size_t m = DLC_MIN(mt, m1 - ir);
        ep.bias = p->bias + g * (size_t)s->cout_g + ir;
        d->ukernel(m, n, kc, a, bpack, y_ig + ir * P + jr, P, pc > 0, last ? &ep : NULL);
      }
    }
  }
}

static void run_job_nhwc(const dlc_exec *c, size_t g, size_t mb, size_t nb, float *apack) {
  const dlconv_plan *p = c->p;
  const gemm_data *d = c->p->algo_data;
  const dlc_conv_shape *s = &p->s;
  size_t mr = d->mr, nr = d->nr, c_out = (size_t)s->c_out;
  const float *b_g = d->wpack + g * d->wpanels * d->wpanel_floats;
  size_t m0 = mb * d->mc, m1 = DLC_MIN(d->M, m0 + d->mc);
  size_t j0 = nb * d->nc, j1 = DLC_MIN(d->N, j0 + d->nc);
  float *y_g = (float *)c->y + g * (size_t)s->cout_g;
  dlc_f32_gemm_epilogue ep = {NULL, 1, s->out_min, s->out_max, NULL, 0};
  for (size_t pc = 0; pc < d->K; pc += d->kc) {
    size_t kc = DLC_MIN(d->kc, d->K - pc);
    int last = pc + kc == d->K;
    for (size_t ir = m0; ir < m1; ir += mr) {
      size_t m = DLC_MIN(mr, m1 - ir);
      if (d->a_in_place) {
        /* the pixels' channel runs are the A rows: no packing */
        const float *a = (const float *)c->x + ir * (size_t)s->c_in + g * (size_t)s->cin_g + pc;
        for (size_t jr = j0; jr < j1; jr += nr) {
          if (jr + nr < j1) prefetch_tile(y_g + ir * c_out + jr + nr, c_out, m, DLC_MIN(nr, j1 - jr - nr));
          ep.bias = p->bias + g * (size_t)s->cout_g + jr;
          d->ukernel_lda(m, DLC_MIN(nr, j1 - jr), kc, a, (size_t)s->c_in, b_g + b_panel(d, pc, jr / nr),
                         y_g + ir * c_out + jr, c_out, pc > 0, last ? &ep : NULL);
        }
        continue;
      }
      pack_a_nhwc(d, s, c->x, g, ir, m, pc, kc, apack);
      for (size_t jr = j0; jr < j1; jr += nr) {
        if (jr + nr < j1) prefetch_tile(y_g + ir * c_out + jr + nr, c_out, m, DLC_MIN(nr, j1 - jr - nr));
        ep.bias = p->bias + g * (size_t)s->cout_g + jr;
        d->ukernel(m, DLC_MIN(nr, j1 - jr), kc, apack, b_g + b_panel(d, pc, jr / nr),
                   y_g + ir * c_out + jr, c_out, pc > 0, last ? &ep : NULL);
      }
    }
  }
}

/* NCHW with few pixels, as Y^T[P x cout_g] = X^T[P x K] W_g^T[K x cout_g] per image and group,
   with the C-transposed micro-kernel, which stores each output channel's run of pixels. BLIS
   order as in run_job_nchw, roles swapped: per K chunk, all A micro-panels of the job's pixels
   (mc x kc, the NCHW im2col gather at panel width mr, mt pixels each) are packed first; then each
   prepacked B micro-panel of weights (kc x nr) is swept by all of them, so the weights stream from
   memory once per call and each panel is reused from L1 or L2 (kc is long here: see
   choose_blocking). */
static void run_job_trans(const dlc_exec *c, size_t o, size_t mb, size_t nb, float *apack) {
  const dlconv_plan *p = c->p;
  const gemm_data *d = c->p->algo_data;
  const dlc_conv_shape *s = &p->s;
  size_t img = o / (size_t)s->groups, g = o % (size_t)s->groups, P = d->P, mr = d->mr, mt = d->mt, nr = d->nr;
  const float *x_ig = (const float *)c->x + (img * (size_t)s->c_in + g * (size_t)s->cin_g) * d->plane;
  float *y_ig = (float *)c->y + (img * (size_t)s->c_out + g * (size_t)s->cout_g) * P;
  const float *b_g = d->wpack + g * d->wpanels * d->wpanel_floats;
  size_t m0 = mb * d->mc, m1 = DLC_MIN(d->M, m0 + d->mc);
  size_t j0 = nb * d->nc, j1 = DLC_MIN(d->N, j0 + d->nc);
  pix_run *runs = (pix_run *)((char *)apack + d->bblock_bytes);
  plane_geom geom = nchw_plane(d, s);
  dlc_f32_gemm_epilogue ep = {NULL, 1, s->out_min, s->out_max, NULL, 0};
  for (size_t pc = 0; pc < d->K; pc += d->kc) {
    size_t kc = DLC_MIN(d->kc, d->K - pc);
    int last = pc + kc == d->K;
    for (size_t ir = m0; ir < m1; ir += mt) {
      size_t m = DLC_MIN(mt, m1 - ir);
      size_t nruns = block_runs(d, s, ir, m, mr, runs);
      pack_b_nchw(d, mr, &geom, x_ig, runs, nruns, pc, kc, m, apack + (ir - m0) / mt * mr * kc);
    }
    for (size_t jr = j0; jr < j1; jr += nr) {
      const float *b = b_g + b_panel(d, pc, jr / nr);
      ep.bias = p->bias + g * (size_t)s->cout_g + jr;
      for (size_t ir = m0; ir < m1; ir += mt) {
        d->ukernel_ct(DLC_MIN(mt, m1 - ir), DLC_MIN(nr, j1 - jr), kc, apack + (ir - m0) / mt * mr * kc, b,
                      y_ig + jr * P + ir, P, pc > 0, last ? &ep : NULL);
      }
    }
  }
}

static void gemm_task(void *arg, size_t t) {
  const dlc_exec *c = arg;
  const gemm_data *d = c->p->algo_data;
  size_t begin, end;
  dlc_split_range(d->njobs, d->ntasks, t, &begin, &end);
  float *slice = (float *)(c->ws + t * d->ws_slice);
  for (size_t j = begin; j < end; j++) {
    size_t nb = j % d->nblocks, mb = j / d->nblocks % d->mblocks, o = j / d->nblocks / d->mblocks;
    if (d->nhwc)
      run_job_nhwc(c, o, mb, nb, slice);
    else if (d->trans)
      run_job_trans(c, o, mb, nb, slice);
    else
      run_job_nchw(c, o, mb, nb, slice);
  }
}

/* Subsample pass: planes [begin, end) of x (all images' channels) to their every stride-th pixel. */
static void subsample_task(void *arg, size_t t) {
  const dlc_exec *c = arg;
  const dlc_conv_shape *s = &c->p->s;
  const gemm_data *d = c->p->algo_data;
  if (d->nhwc) {   /* output rows [begin, end) of all images: each pixel's channels, a run of c_in */
    size_t rows = (size_t)(s->n * s->h_out), parts = DLC_MIN((size_t)d->ntasks, rows), begin, end;
    if (t >= parts) return;
    dlc_split_range(rows, parts, t, &begin, &end);
    size_t ci = (size_t)s->c_in, wo = (size_t)s->w_out, ho = (size_t)s->h_out;
    size_t step = (size_t)s->stride_w * ci;
    for (size_t r = begin; r < end; r++) {
      size_t img = r / ho, oy = r % ho;
      const float *src = (const float *)c->x + ((img * (size_t)s->h_in + oy * (size_t)s->stride_h) * (size_t)s->w_in) * ci;
      float *dst = (float *)c->ws + r * wo * ci;
      for (size_t ox = 0; ox < wo; ox++) d->copy(dst + ox * ci, src + ox * step, ci);
    }
    return;
  }
  size_t planes = (size_t)(s->n * s->c_in), parts = DLC_MIN((size_t)d->ntasks, planes), begin, end;
  if (t >= parts) return;
  dlc_split_range(planes, parts, t, &begin, &end);
  size_t hw = (size_t)(s->h_in * s->w_in), wo = (size_t)s->w_out, sh = (size_t)s->stride_h, sw = (size_t)s->stride_w;
  float *xs = (float *)c->ws;
  for (size_t q = begin; q < end; q++) {
    const float *src = (const float *)c->x + q * hw;
    float *dst = xs + q * d->P;
    for (size_t oy = 0; oy < (size_t)s->h_out; oy++, dst += wo) {
      const float *row = src + oy * sh * (size_t)s->w_in;
      if (sw == 2 && d->copy_s2)   /* vector evens: the scalar loop was 15% of 32x32x32>64 /2 */
        d->copy_s2(dst, row, wo);
      else
        for (size_t ox = 0; ox < wo; ox++) dst[ox] = row[ox * sw];
    }
  }
}

static void gemm_execute(const dlconv_plan *p, const void *x, void *y, void *workspace) {
  const gemm_data *d = p->algo_data;
  if (d->subsample) {
    /* the GEMM then reads the subsampled x at the start of the workspace, its scratch after it;
       both passes in one parallel region */
    dlc_exec sub = {p, x, y, workspace}, mm = {p, workspace, y, (char *)workspace + d->xs_bytes};
    const dlc_pass pass[2] = {{d->ntasks, subsample_task, &sub}, {d->ntasks, gemm_task, &mm}};
    dlc_parallel_passes(p, pass, 2);
    return;
  }
  dlc_exec_tasks(p, d->ntasks, gemm_task, x, y, workspace);
}

const dlc_impl_ops dlc_gemm_ops = {
    .plan = gemm_plan,
    .execute = gemm_execute,
    .destroy = gemm_destroy,
};
