/* gspc_ukernel.h - the micro-kernel interface of the grouped spatial pack (GSPC) algorithm.
 *
 * One dlc_f32_gspc_family per ISA (dlc_f32_gspc__generic in src/arch/generic/, __avx2, __avx512):
 * micro-kernels for every register tile the family has, plus what the driver needs to choose one.
 * The driver (src/gspc/gspc.c) receives it through the kernel table and never includes arch code.
 *
 * Layouts (Gibson, thesis ch. 5, Algorithm 3), with one generalisation, "groups in lanes":
 * a vector of T_O lanes holds GPV groups (GPV a power of two, 1 for ordinary grouped layers)
 * times T_O/GPV output channels of each; lane L belongs to group gb*GPV + L%GPV and output
 * channel L/GPV of its block. GPV > 1 keeps the lanes full when a group has fewer output
 * channels than a vector (depthwise: GPV = T_O, K_PG = 1).
 *
 *   weights  [group block][oc block][C_PG/T_I][k_h][k_w][T_I][NV*T_O]         (plan time)
 *   input    [group block][C_PG/T_I][H][T_I][s_w][ceil(W/s_w)][GPV]           (execute, workspace)
 *
 * The input row of each channel is split by stride phase (padded column j at (j % s_w)*Wq +
 * j / s_w), so the W_TILE inputs of one tap are contiguous for any stride and dilation: the
 * kernel reads in[... + w*GPV] with compile-time offsets, and the padding was written as zeros
 * by the repack, so the kernel has no bounds checks.
 *
 * A micro-kernel computes one register tile of R output rows x W output columns x NV vectors:
 *   acc[r][w][L] = sum_{ct, tap, ti} in[ct*in_ct_stride + tap_off[tap] + ti*in_ti_stride
 *                                       + r*in_r_stride + w*GPV + L%GPV]
 *                                    * wt[((ct*n_tap + tap)*t_i + ti)*NV*T_O + L]
 * (ti < t_i, or < ti_last in the last channel tile), then
 *   v = clamp(acc[r][w][perm[j]] + bias[perm[j]], out_min, out_max)        (perm NULL: identity)
 *   out[r*out_r_stride + w*out_pix_stride + j*out_ch_stride] = v   for j < n_lanes, r < r_valid.
 * The permutation turns groups-in-lanes order back into consecutive channels, so the store is a
 * run of n_lanes consecutive channels: contiguous in NHWC (out_ch_stride == 1), a transpose in
 * NCHW (out_pix_stride == 1). */
#ifndef DLC_GSPC_UKERNEL_H
#define DLC_GSPC_UKERNEL_H

#include <stddef.h>
#include <stdint.h>

/* What stays the same for every tile of one plan (held by the plan, read-only at execute). */
typedef struct dlc_f32_gspc_params {
  size_t n_ct;               /* input channel tiles */
  size_t t_i;                /* channels per tile (the weights' stride) */
  size_t ti_last;            /* channels in the last tile, 1..t_i */
  size_t n_tap;              /* k_h * k_w */
  const ptrdiff_t *tap_off;  /* n_tap offsets (floats) of each tap from the window origin */
  ptrdiff_t in_ti_stride;    /* floats between two channels of a tile */
  ptrdiff_t in_ct_stride;    /* floats between two channel tiles */
  ptrdiff_t in_r_stride;     /* floats between the windows of output rows r and r+1 */
  ptrdiff_t out_ch_stride, out_pix_stride, out_r_stride;   /* floats, in y */
  const int32_t *perm;       /* NV*T_O lane indices, or NULL for the identity */
  float out_min, out_max;    /* fused clamp; NaN passes through it */
} dlc_f32_gspc_params;

/* One register tile. in: packed input at the window origin of output pixel (row 0, column 0) of
   the tile in channel tile 0; w: the weights of one (group block, oc block); bias: NV*T_O floats
   in lane order; out: y at channel 0, row 0, column 0 of the tile; n_lanes: channels to store
   (1..NV*T_O); r_valid: rows to store (1..R; the rest were computed from zero rows and dropped). */
typedef void (*dlc_f32_gspc_ukernel_fn)(const dlc_f32_gspc_params *prm, const float *in,
                                        const float *w, const float *bias, float *out,
                                        size_t n_lanes, size_t r_valid);

/* The input repack, one packed row of n_c channels (one stride phase): for c < n_c, q < nq,
   gl < gpv,
     dst[c*dst_c_stride + q*dst_q_stride + gl] = gl < ng && q_lo <= q < q_hi
         ? src[c*src_c_stride + ((ptrdiff_t)q*col_step + col0)*px_step + gl*g_step] : 0
   (src is the image row at column 0 of the first channel; columns outside [q_lo, q_hi) are the
   zero padding and are never read). dst_q_stride is gpv in the thesis layout, t_i in the
   channel-blocked one (below).
   Both phases at once (n_ph == 2; only for a family with pack_both_phases, and dst_q_stride ==
   gpv, col_step == 2, px_step == 1, rows inside the image): phase 0 as above at
   dst and phase 1 (the column after each of phase 0's) at dst + ph_off, the columns outside
   [0, w_img) of the image being the zero padding; q_lo and q_hi are not read. Otherwise n_ph
   is 0 or 1. */
typedef struct dlc_f32_gspc_pack_args {
  float *dst;
  size_t dst_c_stride, dst_q_stride;
  const float *src;
  ptrdiff_t src_c_stride;
  size_t n_c, nq, gpv, ng;
  ptrdiff_t col0, col_step, px_step, g_step;
  size_t q_lo, q_hi;
  size_t n_ph;
  ptrdiff_t w_img;
  size_t ph_off;  /* n_ph == 2: floats from phase 0's packed row to phase 1's */
} dlc_f32_gspc_pack_args;
typedef void (*dlc_f32_gspc_pack_fn)(const dlc_f32_gspc_pack_args *a);

/* Positions in lanes (NCHW, few channels per group): the lanes of a vector are VL consecutive
   "virtual positions" p = oh*wq + ow of one output channel, wq the packed row width, so that the
   outputs of a row reach into the next row's padding (those lanes are computed and dropped). The
   input of one group is packed per channel as s_h x s_w phase planes of [hq][wq] (padded row
   i*s_h + ry, column q*s_w + rx at plane (ry, rx), row i, column q), so tap (ky, kx) of position p
   is in[p + tap_off[tap]] for every stride and dilation, and each output channel's product is a
   broadcast weight times a vector of inputs: no transposes, no lanes wasted on small groups.
   A micro-kernel computes NO output channels x NV vectors of positions [p0, p0 + NV*VL):
     acc[o][p] = sum_{ic < n_ic, tap} in[ic*in_c_stride + tap_off[tap] + p] * w[(ic*n_tap + tap)*NO + o]
     y = clamp(acc + bias[o]) stored at out[o*out_ch_stride + oh*w_out + ow] for o < n_oc and the
   positions whose ow < w_out and oh < h_out (the weights and bias of channels o >= n_oc are zero
   padding up to NO). The input must be readable up to NV*VL - 1 floats past p0's last tap. */
typedef struct dlc_f32_gspc_pos_params {
  size_t n_ic, n_tap;
  const ptrdiff_t *tap_off;  /* n_tap offsets (floats) in the packed input of one channel */
  ptrdiff_t in_c_stride;     /* floats between two packed input channels */
  size_t wq, w_out, h_out;   /* virtual row width; the output plane */
  ptrdiff_t out_ch_stride;   /* floats between two output channels (h_out * w_out in NCHW) */
  float out_min, out_max;
  /* 1: the taps are rows of 3 consecutive offsets, tap_off[3 r + j] = tap_off[3 r] + j (k_w 3,
     stride_w 1, dil_w 1): a row's input is loaded once and its columns 1 and 2 shifted in lanes
     (the tile then reads up to 2 VL floats past the last position of a row, not VL - 1 + 2) */
  int rows3;
  /* a vector of positions whose first is in a row below fast_rows, and not the tile's last, may
     be stored whole at that row's place (its lanes past the row, each a later output of the same
     tile, are stored again by the tile's later stores; dlc_gspc_pos_fast_rows); 0: never */
  size_t fast_rows;
} dlc_f32_gspc_pos_params;

/* fast_rows for a plane of h_out rows of w_out outputs, wq virtual positions a row, vl lanes: a
   whole vector at row r's place writes up to (wq + vl - 2) / w_out rows past r, outputs less than
   2 vl positions past its first (so computed by it or by the next vector), if those rows exist. */
static inline size_t dlc_gspc_pos_fast_rows(size_t wq, size_t w_out, size_t h_out, size_t vl) {
  const size_t spill = (wq + vl - 2) / w_out;
  return spill * (wq - w_out) <= vl && spill < h_out ? h_out - spill : 0;
}

typedef void (*dlc_f32_gspc_pos_fn)(const dlc_f32_gspc_pos_params *prm, const float *in, const float *w,
                                    const float *bias, float *out, size_t p0, size_t n_oc);

/* The diagonal tiles' copies of the input (get_diag): 2 for groups of 8 channels, else 1. */
#define DLC_GSPC_DIAG_COPIES(c) ((c) >= 8 ? 2 : 1)

typedef struct dlc_f32_gspc_family {
  const char *name;          /* "f32_gspc__<isa>" */
  const char *isa;           /* "generic", "avx2", "avx512" */
  size_t t_o;                /* lanes per vector */
  size_t t_i;                /* preferred input channel tile (the driver clips it to C_PG) */
  size_t max_gpv;            /* groups per vector: 1, 2, 4, ... up to this (<= t_o) */
  /* The kernel for groups-per-vector gpv, nv vectors of output channels (nv > 1 only with
     gpv == 1), r rows and w columns, or NULL if the family has no such tile. */
  dlc_f32_gspc_ukernel_fn (*get)(size_t gpv, size_t nv, size_t r, size_t w);
  /* Optional (NULL: none): gpv = 1 kernels for the channel-blocked input layout
       [C_PG/T_I][H][s_w][Wq][t_i]   (in_ti_stride = 1, a column every t_i floats),
     which an NHWC input becomes by plain copies of t_i channels per column instead of a
     transpose; the kernel reads in[... + w*t_i] instead of in[... + w]. */
  dlc_f32_gspc_ukernel_fn (*get_blocked)(size_t nv, size_t r, size_t w);
  dlc_f32_gspc_pack_fn pack;
  /* Optional (NULL: none): the positions-in-lanes kernel of no output channels (1, 2, 4 or 8)
     and nv vectors of positions, or NULL if the family has no such tile. */
  dlc_f32_gspc_pos_fn (*get_pos)(size_t no, size_t nv);
  /* Optional (NULL: none): "diagonal" kernels for groups of c input and c output channels
     (c = 2, 4, 8, 2c <= t_o), in the channel-blocked input layout (a column every t_o floats:
     the t_o / c groups' channels in their own order; n_ct = 1, t_i = c). Lane j of the input
     vector is channel j % c of group j / c; per tap the kernel multiplies that vector as it is by
     c weight vectors s = 0 .. c-1 into c accumulators, and rotates accumulator s by s lanes
     within each group once at the end, so the products need no shuffles and the lanes of the
     result are the output channels in order:
       acc[r][w][L] = sum_{tap, s} in[tap_off[tap] + r*in_r_stride + w*t_o + L'] * wt[(tap*c + s)*t_o + L']
                      with L' = L - L%c + (L%c - s) mod c  (the input lane whose product lands in L),
     wt[(tap*c + s)*t_o + L'] being the weight of input channel L'%c to output channel
     (L'%c + s) % c of group L'/c. The epilogue is the ordinary one (perm NULL).
     Groups of 8 halve the accumulators (DLC_GSPC_DIAG_COPIES = 2): the input is also used
     rotated by a = c/2 lanes within its group, and the tap's c weight vectors are [j][s'] (j < 2,
     s' < a): vector j*a + s', lane L, is the weight of input channel (L%c - j*a) mod c to output
     channel (L%c + s') % c of group L/c (with one copy, j = 0, the layout above). */
  dlc_f32_gspc_ukernel_fn (*get_diag)(size_t c, size_t r, size_t w);
  /* Cost model the driver uses to pick among the tiles: vector FMAs and loads per cycle, FMA
     latency in cycles, and the epilogue's cost per stored vector in each layout. */
  float fma_per_cycle, loads_per_cycle, fma_latency, store_nhwc, store_nchw;
  /* 1: pack takes n_ph == 2 (both stride phases of a row in one call, see the pack args) */
  int pack_both_phases;
} dlc_f32_gspc_family;

#endif
