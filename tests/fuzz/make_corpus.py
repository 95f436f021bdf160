#!/usr/bin/env python3
"""Writes the seed corpus of the libdlconv fuzz target into tests/fuzz/corpus/.

Each seed is a few dozen bytes laid out the way tests/fuzz/fuzz_check.c decodes them (byte 0:
the mode, then the fields in decoding order; fields past the end read as 0). The seeds cover
every mode, algorithm, ISA request, layout, kernel family (depthwise, grouped, pointwise,
strided, dilated), the clamps, NaN/Inf/denormal specials, CSR corruptions, hostile execute modes,
raw boundary descriptors and wisdom files, so the fuzzer starts from every branch.

    python3 tests/fuzz/make_corpus.py   # rewrite the corpus, and its own regression inputs
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")
REGRESSIONS = os.path.join(HERE, "regressions")

ALGO = {"auto": 0, "direct": 1, "im2col": 2, "spack": 3, "gspc": 4, "csr": 5}
ISA = {"auto": 0, "generic": 1, "avx2": 2, "avx512": 3, "neon": 12, "cuda": 13, "bad": 14}
SPECIAL = {"nan": 0, "inf": 1, "-inf": 2, "denorm": 3, "-denorm": 4, "-0": 5, "big": 6, "-big": 7,
           "flt_min": 8, "denorm2": 9}
EXEC = {"normal": 0, "caller_ws": 21, "y_misaligned": 24, "x_misaligned": 25, "alias": 26,
        "overlap": 27, "ws_misaligned": 28, "ws_overlap": 29, "null_x": 30, "null_plan": 31}
CLAMP = {"none": [0], "relu": [6], "relu6": [9], "point": [11, 5], "range": [12, 4, 6],
         "max_only": [13, 8], "min_gt_max": [14], "nan": [15]}


def options(algo="auto", isa="auto", threads=1, flags=None, pool=False, opt_null=False):
    b = (7 if opt_null else 0) | (8 if pool else 0)
    a = ALGO[algo] if isinstance(algo, str) else algo
    t = {0: 0, 1: 1, 2: 2, 3: 3, -1: 14, 7: 15}[threads]
    f = {None: 2, "measure": 0, "bad": 1}[flags]
    return [b, a, ISA[isa], t, f]


def data(bias=True, zero_mode=0, x_shift=0, seed=1, specials=(), w_misalign=0, bias_misalign=0):
    a = (0 if bias else 1) | (zero_mode << 1) | (x_shift << 3)
    m = 0
    if w_misalign:
        m = 31 | ((w_misalign - 1) << 5)
    if bias_misalign:
        m = 30 | ((bias_misalign - 1) << 5)
    out = [a, m, seed & 255, seed >> 8, len(specials)]
    for target, index, value in specials:
        tg = {"x": 0, "w": 2, "bias": 3}[target]
        out += [tg, index >> 8, index & 255, SPECIAL[value]]
    return out


def conv(mode=0, groups=1, cin_g=4, cout_g=8, depthwise=False, mult=1, n=1, h=8, w=8, kh=3, kw=3,
         stride=(1, 1), dil=(1, 1), pads=None, same=True, no_grow=False, nhwc=False, clamp="none",
         opts=None, exec_mode="normal", y_shift=0, dat=None, csr_byte=None):
    g = (7 if depthwise else {1: 0, 2: 4, 3: 5, 4: 6}[groups]) | (8 if nhwc else 0)
    out = [mode, g]
    if depthwise:
        out += [groups - 1, mult - 1]
    else:
        out += [cin_g - 1, cout_g - 1]
    out += [n - 1, h - 1, w - 1, kh - 1, kw - 1]
    sd = (stride[0] - 1)
    if stride[1] == stride[0]:
        sd |= 4
    else:
        sd |= (stride[1] - 1) << 3
    extra = []
    if dil != (1, 1):
        sd |= 32
        extra.append(dil[0] - 1)
        if dil[1] != dil[0]:
            sd |= 64
            extra.append(dil[1] - 1)
    out += [sd] + extra
    pb = 4 if no_grow else 0
    if pads is not None:
        out += [pb | 1] + list(pads)
    else:
        out += [pb | (2 if same else 0)]
    out += CLAMP[clamp]
    out += opts if opts is not None else options()
    out += [EXEC[exec_mode] | (y_shift << 5)]
    out += dat if dat is not None else data()
    if mode in (1, 4):
        out += [csr_byte if csr_byte is not None else 0]
    return bytes(out)


def dense(batch=2, inf=17, outf=9, clamp=None, opts=None, exec_mode="normal", dat=None):
    out = [2, batch - 1, inf - 1, outf - 1]
    if clamp is None:
        out += [0]
    else:
        out += [1] + CLAMP[clamp]
    out += opts if opts is not None else options()
    out += [EXEC[exec_mode]]
    out += dat if dat is not None else data()
    return bytes(out)


def raw(fields, dtype_byte=0, clamp="none", rest=b""):
    """fields: {index: selector bytes}; index order n,c_in,h_in,w_in,c_out,k_h,k_w,stride_h,
    stride_w,dil_h,dil_w,pad_t,pad_b,pad_l,pad_r,groups."""
    which = 0
    body = []
    for i in range(16):
        if i in fields:
            which |= 1 << i
            body += fields[i]
    return bytes([5, which & 255, which >> 8] + body + [dtype_byte] + CLAMP[clamp]) + rest


def small(v):  # selector for 1..9
    return [v + 6]


def seeds():
    s = {}
    for a in ALGO:
        s["conv_%s_nchw_3x3" % a] = conv(opts=options(algo=a))
    for i, isa in enumerate(["generic", "avx2", "avx512"]):
        s["conv_nhwc_strided_%s" % isa] = conv(nhwc=True, stride=(2, 2), h=11, w=9, cin_g=5, cout_g=11,
                                               opts=options(isa=isa), dat=data(seed=10 + i))
    s["conv_dilated_asym"] = conv(kh=3, kw=2, dil=(2, 3), h=12, w=13, stride=(1, 2), opts=options(algo="direct"))
    s["conv_depthwise_nhwc"] = conv(depthwise=True, groups=16, nhwc=True, h=9, w=9, opts=options(algo="gspc"))
    s["conv_depthwise_x2_nchw"] = conv(depthwise=True, groups=6, mult=2, h=10, w=11, opts=options(algo="direct"))
    s["conv_grouped4"] = conv(groups=4, cin_g=3, cout_g=5, h=7, w=7, opts=options(algo="gspc"))
    s["conv_pointwise"] = conv(kh=1, kw=1, cin_g=12, cout_g=10, same=False, opts=options(algo="im2col"))
    s["conv_1x5_pads"] = conv(kh=1, kw=5, pads=[0, 2, 3, 1], h=5, w=9, opts=options(algo="spack"))
    s["conv_batch3_nhwc"] = conv(n=3, nhwc=True, h=6, w=5, opts=options(algo="spack", isa="avx2"))
    s["conv_nan_relu6"] = conv(clamp="relu6", dat=data(specials=[("x", 5, "nan"), ("x", 40, "inf")]))
    s["conv_inf_relu_nhwc"] = conv(clamp="relu", nhwc=True, dat=data(specials=[("x", 3, "-inf"), ("x", 77, "inf")]))
    s["conv_nan_zero_weights"] = conv(dat=data(zero_mode=1, specials=[("x", 9, "nan"), ("x", 100, "-inf")]),
                                      opts=options(algo="im2col"))
    s["csr_nan_zero_weights"] = conv(mode=1, dat=data(zero_mode=2, specials=[("x", 9, "nan"), ("x", 30, "inf")]),
                                     opts=options(algo="csr"), csr_byte=1)
    s["conv_denormals"] = conv(dat=data(specials=[("x", 1, "denorm"), ("x", 2, "-denorm"), ("w", 3, "denorm2"),
                                                  ("w", 4, "flt_min")]))
    s["conv_bias_nan_range"] = conv(clamp="range", dat=data(specials=[("bias", 2, "nan"), ("bias", 3, "-inf")]))
    s["conv_big_values"] = conv(clamp="max_only", dat=data(specials=[("x", 0, "big"), ("w", 1, "-big")]))
    s["conv_measure"] = conv(opts=options(flags="measure"), h=6, w=6)
    s["conv_pool_3threads"] = conv(opts=options(algo="gspc", pool=True, threads=3), groups=2, cin_g=4, cout_g=4)
    s["conv_threads2_direct"] = conv(opts=options(algo="direct", threads=2), h=12, w=12)
    s["conv_opt_null"] = conv(opts=options(opt_null=True))
    s["conv_caller_ws_shifted_y"] = conv(exec_mode="caller_ws", y_shift=3, opts=options(algo="im2col"),
                                         dat=data(x_shift=2))
    s["conv_all_zero_weights"] = conv(dat=data(zero_mode=3), opts=options(algo="csr"))
    s["conv_no_output"] = conv(kh=5, kw=5, h=2, w=2, same=False, no_grow=True)
    s["bad_algo"] = conv(opts=options(algo=14))
    s["bad_isa_neon"] = conv(opts=options(isa="neon"))
    s["bad_isa_cuda"] = conv(opts=options(isa="cuda", algo="direct"))
    s["bad_threads"] = conv(opts=options(threads=-1))
    s["bad_flags"] = conv(opts=options(flags="bad"))
    s["bad_clamp_nan"] = conv(clamp="nan")
    s["bad_clamp_order"] = conv(clamp="min_gt_max")
    s["bad_w_misaligned"] = conv(dat=data(w_misalign=2))
    s["bad_bias_misaligned"] = conv(dat=data(bias_misalign=1))
    s["csr_valid_shuffled"] = conv(mode=1, dat=data(zero_mode=1), csr_byte=0x10)
    s["csr_stored_zeros_dense_algo"] = conv(mode=4, dat=data(zero_mode=1), csr_byte=0x01,
                                            opts=options(algo="spack"))
    for k, name in enumerate(["col_range", "col_negative", "nnz", "rowptr_decreasing", "cols", "duplicate"]):
        s["csr_bad_%s" % name] = conv(mode=1, dat=data(zero_mode=1), csr_byte=(10 + k) << 3, cout_g=4)
    s["dense_basic"] = dense()
    s["dense_relu6_avx512"] = dense(batch=3, inf=64, outf=33, clamp="relu6", opts=options(isa="avx512"))
    s["dense_csr_algo_nan"] = dense(inf=40, outf=20, opts=options(algo="csr"),
                                    dat=data(zero_mode=2, specials=[("x", 7, "nan")]))
    for mode in ["y_misaligned", "x_misaligned", "alias", "overlap", "ws_misaligned", "ws_overlap", "null_x",
                 "null_plan"]:
        s["exec_%s" % mode] = conv(exec_mode=mode, opts=options(algo="im2col" if "ws" in mode else "auto"))
    big = [0]          # INT32_MAX
    s["raw_int32_max_sizes"] = raw({0: big, 1: big, 2: big, 3: big})
    s["raw_46341_square"] = raw({2: [5], 3: [5], 5: [3, 10]})
    s["raw_groups_zero"] = raw({1: small(4), 15: [4, 0]})
    s["raw_negative_pad"] = raw({11: [4, 2], 5: small(3)})
    s["raw_int32_min_stride"] = raw({7: [1]})
    s["raw_huge_pad_dilation"] = raw({11: [3, 30], 9: [3, 30], 5: small(2)})
    s["raw_valid_small_nhwc"] = raw({1: small(3), 2: small(6), 3: small(5), 4: small(4), 5: small(3), 6: small(3)},
                                    dtype_byte=0x40, rest=bytes([9]) + bytes(options(algo="spack")) + bytes([0]) +
                                    bytes(data()))
    s["raw_f16_unsupported"] = raw({1: small(2)}, dtype_byte=5)
    s["raw_u8_no_quant"] = raw({1: small(2)}, dtype_byte=6)
    s["raw_bad_dtype"] = raw({}, dtype_byte=0x38)
    s["wisdom_valid"] = bytes([6, 1]) + b"conv2d:1,4,8,8,8,3,3,1,1,1,1,1,1,1,1,1:0:nchw:3:t1 2\n"
    s["wisdom_bad_algo"] = bytes([6, 1]) + b"conv2d:1,4,8,8,8,3,3,1,1,1,1,1,1,1,1,1:0:nchw:3:t1 9\n"
    s["wisdom_no_header"] = bytes([6, 0]) + b"conv2d:x 1\n"
    s["wisdom_trailing"] = bytes([6, 1]) + b"conv2d:a 1 extra\n\n"
    return s


def regressions():
    """Inputs for bugs found outside the fuzzer (by tests/test_hostile.c), kept here so that the
    replay test runs them through the fuzz checks in every build. Fuzzer-found inputs are copied
    into tests/fuzz/regressions/ as they are (binary files), not generated here."""
    r = {}
    # gspc and spatial pack: a 2x1 kernel dilated by 2^31-1 over a pad of 2^31-1, stride_w 2^20,
    # 128 output columns: the packed input window is 2^62 floats, its byte size wrapped size_t to
    # 0 (gspc: a 0-byte workspace, then a segfault in execute). Fixed: UNSUPPORTED.
    fields = {1: [3, 4], 4: [3, 4], 5: small(2), 8: [3, 20], 9: [0], 11: [0], 14: [2, 0x07, 0xF0, 0x00, 0x00]}
    for name, dtype_byte, algo, isa in [("gspc_window_wraps_size_t_nchw", 0, "gspc", "auto"),
                                        ("gspc_window_wraps_size_t_nhwc", 0x40, "gspc", "avx512"),
                                        ("spack_window_wraps_size_t_generic", 0, "spack", "generic"),
                                        ("auto_window_wraps_size_t", 0, "auto", "auto")]:
        rest = bytes([0]) + bytes(options(algo=algo, isa=isa)) + bytes([0]) + bytes(data())
        r[name] = raw(fields, dtype_byte=dtype_byte, rest=rest)
    return r


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        os.remove(os.path.join(OUT, f))
    s = seeds()
    for name, blob in sorted(s.items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(blob)
    print("wrote %d seeds (%d bytes) to %s" % (len(s), sum(len(b) for b in s.values()), OUT))
    os.makedirs(REGRESSIONS, exist_ok=True)
    r = regressions()
    for name, blob in sorted(r.items()):   # only these names: fuzzer-found files stay
        with open(os.path.join(REGRESSIONS, name), "wb") as f:
            f.write(blob)
    print("wrote %d regression inputs to %s" % (len(r), REGRESSIONS))


if __name__ == "__main__":
    sys.exit(main())
