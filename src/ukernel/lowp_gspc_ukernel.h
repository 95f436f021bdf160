/* lowp_gspc_ukernel.h - the micro-kernel interface of the grouped spatial pack (GSPC) algorithm
 * for F16 and int8.
 *
 * The register tiles, the groups-in-lanes lane order and the packed layouts are those of the
 * fp32 family (gspc_ukernel.h), with two element types:
 *
 *   F16:  packed input fp32, weights binary16 converted in registers (F16C on x86), products
 *         accumulated in fp32. The input is widened by the repack, not by the kernel: a kernel
 *         broadcasts each packed input element once per tap and oc block that reads it, where
 *         the repack, which the algorithm does anyway, converts it once.
 *   int8: one 32-bit element per pair of input channels (channel 2i in the low s16 half,
 *         2i + 1 in the high one, both x - x_zero_point; the high half is 0 past an odd
 *         channel count), in the input and in each weight lane alike, so that one vpmaddwd /
 *         smlal step takes a pair of exact products and their sum. T_I counts pairs. The s32
 *         sums are exact while K * 255 * 128 < 2^31 (the plan refuses larger K).
 *
 *   weights  [group block][oc block][C_PG/T_I][k_h][k_w][T_I][NV*T_O]   (int8: [..][NV*T_O][2])
 *   input    [group block][C_PG/T_I][H][T_I][s_w][ceil(W/s_w)][GPV]     (workspace, 4-byte elements)
 *
 * The kernels are pure products: bias, clamp, conversion and requantisation are the store
 * functions of the lowp GEMM families (lowp_gemm_ukernel.h), which the driver calls per run.
 * A kernel computes every lane of every pixel of its tile of R rows x W columns,
 *   acc[p][L] = sum_{ct, tap, ti} in[ct*in_ct_stride + tap_off[tap] + ti*in_ti_stride
 *                                    + r*in_r_stride + w*GPV + L%GPV] (x) wt[ct][tap][ti][L]
 * (p = r*W + w; ti < t_i, or < ti_last in the last channel tile), and writes it in channel
 * order j (lane perm[j], identity when perm is NULL) as
 *   channel_major == 0:  buf[p*ldb + j]             (NHWC: each pixel's channels are one run)
 *   channel_major == 1:  buf[j*ldb + r*ldr + w]     (NCHW: the rows of a channel, which the
 *                                                    driver lines up across a row of tiles)
 * for j < NV*T_O, r < R, w < W; channel-major kernels may also write w up to the next multiple of
 * 8 (junk the driver overwrites or never stores), pixel-major ones need ldb >= NV*T_O. */
#ifndef DLC_LOWP_GSPC_UKERNEL_H
#define DLC_LOWP_GSPC_UKERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "../quant/quant.h"

typedef struct dlc_lowp_gspc_params {
  size_t n_ct;               /* input channel tiles */
  size_t t_i;                /* channels (int8: pairs) per tile: the weights' stride */
  size_t ti_last;            /* in the last tile, 1..t_i */
  size_t n_tap;              /* k_h * k_w */
  const ptrdiff_t *tap_off;  /* n_tap offsets (elements) of each tap from the window origin */
  ptrdiff_t in_ti_stride;    /* elements between two channels (pairs) of a tile */
  ptrdiff_t in_ct_stride;    /* elements between two channel tiles */
  ptrdiff_t in_r_stride;     /* elements between the windows of output rows r and r+1 */
  const int32_t *perm;       /* NV*T_O lane indices, or NULL for the identity; set only with NV == 1
                                (groups in lanes), and kernels of NV > 1 may ignore it */
  int channel_major;
  size_t ldb, ldr;
} dlc_lowp_gspc_params;

/* One register tile: in at the window origin of the tile's pixel (0, 0) in channel tile 0, w the
   weights of one (group block, oc block), 32-byte aligned (vector loads of a weight row). */
typedef void (*dlc_f16_gspc_ukernel_fn)(const dlc_lowp_gspc_params *prm, const float *in, const uint16_t *w,
                                        float *buf);
typedef void (*dlc_q8_gspc_ukernel_fn)(const dlc_lowp_gspc_params *prm, const int32_t *in, const int16_t *w,
                                       int32_t *buf);

/* The input repack, one packed row (one stride phase) of n_c channels (int8: pairs): for c < n_c,
   q < nq, gl < gpv, with v(ch) = src[ch*src_c_stride + ((ptrdiff_t)q*col_step + col0)*px_step + gl*g_step],
     F16:   dst[c*dst_c_stride + q*gpv + gl] = inside ? f32(v(c)) : 0
     int8:  dst[c*dst_c_stride + q*gpv + gl] = inside ? pair(v(2c) - zp, 2c+1 < n_src_c ? v(2c+1) - zp : 0) : 0
   with inside = gl < ng && q_lo <= q < q_hi (outside is the zero padding, never read; q_hi <= nq,
   and q_lo >= q_hi means a row of padding). src holds
   halves (F16) or u8 / s8 bytes (int8, per is_signed); dst floats or s32 pairs. */
typedef struct dlc_lowp_gspc_pack_args {
  void *dst;
  size_t dst_c_stride;
  const void *src;
  ptrdiff_t src_c_stride;
  size_t n_c, n_src_c;
  size_t nq, gpv, ng;
  ptrdiff_t col0, col_step, px_step, g_step;
  size_t q_lo, q_hi;
  int32_t zp;
  int is_signed;
} dlc_lowp_gspc_pack_args;
typedef void (*dlc_lowp_gspc_pack_fn)(const dlc_lowp_gspc_pack_args *a);

typedef struct dlc_lowp_gspc_family {
  const char *isa;           /* "generic", "avx2" */
  size_t t_o;                /* lanes per vector */
  size_t t_i_f16, t_i_q8;    /* preferred input channel tile (int8: pairs); the driver clips it */
  size_t max_gpv;            /* groups per vector: 1, 2, 4, ... up to this (<= t_o) */
  /* The kernel for groups-per-vector gpv, nv vectors (nv > 1 only with gpv == 1), r rows and w
     columns, or NULL if the family has no such tile. */
  dlc_f16_gspc_ukernel_fn (*get_f16)(size_t gpv, size_t nv, size_t r, size_t w);
  dlc_q8_gspc_ukernel_fn (*get_q8)(size_t gpv, size_t nv, size_t r, size_t w);
  dlc_lowp_gspc_pack_fn pack_f16, pack_q8;
  /* Cost model (as the fp32 family's): vector products (FMA, or vpmaddwd + vpaddd) and loads per
     cycle, and the latency of an accumulator's dependency chain, per dtype. */
  float mac_per_cycle_f16, mac_per_cycle_q8, loads_per_cycle, latency_f16, latency_q8;
} dlc_lowp_gspc_family;

/* int8 NHWC grouped convolutions of few input channels per group on u8 x s8 quads, x read in
 * place (AVX512-VNNI; src/gspc/gspc_q8n.c). The lanes are output channels, 16 a vector, up to 4
 * vectors (a block of 64 channels). One masked load of x per (tap, pixel) takes the block's input
 * channels, bytes [ib, ib + 64) of the pixel's run, and a permute per vector puts each output
 * channel's quad in its lane, so the quads stay full with 2 channels per group:
 *   quads mode (c_in/groups = 4 nsteps): step s of a tap, lane l of vector v, the dword
 *        idx[s][v][l] of the load (channels 4 s .. 4 s + 3 of the lane's group);
 *   pairs mode (c_in/groups = 2): a quad is two taps' channel pairs, taps 2 j and 2 j + 1 (the
 *        last tap with itself against zero weights): the two loads interleaved by words per
 *        128-bit lane (vpunpcklwd: lo, vpunpckhwd: hi), lane l's quad the dword idx[0][v][l] of
 *        the 32 dwords of lo then hi (vpermt2d).
 * src, STRIDED 0: ntaps x mr pointers, tap-major (src[t * mr + i]: a pixel's channel 0, or the
 *        zero point's row of at least c_in bytes, lowp_ind.h); STRIDED 1: a pointer per tap, pixel
 *        i at src[t] + i * pstep; with vm (lanes mode only, else NULL), ntaps <= 64 and m <= 8,
 *        pixel i's tap t reads x only where bit i of vm[t] is set (the others, in the padding, are
 *        the zero point's bytes; their pointers are never read). Each byte is xor'ed with flip
 *        (0x80 for S8).
 *        Lanes mode (STRIDED 1 only): w's lane l of vector k holds output channel 4 l + k of the block (with 32
 *        channels also lane l + 8), step s its group's inputs 4 s .. 4 s + 3.
 * w: per block b, nk steps (quads: taps x nsteps, tap-major; pairs: ceil(taps / 2)) x 4 vectors x
 *        64 s8, lane l's four weights at bytes 4 l .. 4 l + 3, zeros where no product is (past
 *        c_out, the last odd tap's partner); block b at w + b * nk * 256.
 * q: the plan's requantisation with the zero point's correction zu * sum(w) in the bias (as
 *        q8_igemm's); y[i * ldy + j] = requant(C(i, j) + q->bias[j]) for i < m, j < c_out. */
typedef struct dlc_q8_gcn_geom {
  size_t c_in, c_out;
  int pairs;                 /* 1: pairs mode */
  size_t nsteps;             /* quads mode: quads a tap (1, 2 or 4); pairs mode: 1 */
  int bcast;                 /* quads mode, every vector of 16 output channels in one group: its lanes'
                                indices are equal (the kernel may broadcast the quad) */
  int lanes;                 /* quads mode with as many output as input channels per group (4, 8 or
                                16) and c_out a multiple of 64 or 32: lane l of vector b of a block is
                                output channel 4 l + b (with 32: lanes 8..15 a second pixel's 4 (l - 8)
                                + b), so that each lane's quad lies in its own 128 bits of the pixel's
                                64-byte run; ql holds the bias and mult_f in that order */
  const dlc_q8_params *ql;
  uint8_t zp;                /* x's zero point (lanes mode's loads across padding) */
  size_t nk;                 /* weight steps of a block */
  const uint32_t *ib;        /* per block of 64 output channels: the byte its loads start at */
  const int32_t *idx;        /* per block, nsteps x 4 vectors x 16 dwords of permute indices */
} dlc_q8_gcn_geom;
typedef void (*dlc_q8_gcn_fn)(size_t m, size_t ntaps, const uint8_t *const *src, ptrdiff_t pstep, int strided,
                              const uint8_t *vm,
                              const dlc_q8_gcn_geom *g, const int8_t *w, uint8_t flip, const dlc_q8_params *q,
                              void *y, size_t ldy);
typedef struct dlc_q8_gcn_family {
  const char *name; /* "q8_gspc_nhwc_4x64c4__avx512vnni" */
  size_t mr;        /* pixels a call, at most (the driver cuts rows into tiles of mr / 2, one or two a call) */
  size_t max_nsteps;
  dlc_q8_gcn_fn run;
} dlc_q8_gcn_family;

#endif
