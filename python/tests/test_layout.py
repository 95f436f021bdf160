"""The ctypes structures of dlconv/_lib.py against include/dlconv.h: sizes and offsets from a
compiled C program, and each field by a known answer from the library."""
import ctypes
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import dlconv  # noqa: E402
from dlconv import _lib as L  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def header_dir():
    d = os.environ.get("DLCONV_INCLUDE") or os.path.join(ROOT, "include")
    return d if os.path.exists(os.path.join(d, "dlconv.h")) else None


class CompiledLayout(unittest.TestCase):
    @unittest.skipUnless(shutil.which(os.environ.get("CC", "cc")) and header_dir(), "no C compiler or dlconv.h")
    def test_offsets_match_the_header(self):
        lines = ['#include <stdio.h>', '#include <stddef.h>', '#include <dlconv.h>', 'int main(void) {']
        for cname, cls in L.STRUCTS.items():
            lines.append('printf("%s sizeof %%zu\\n", sizeof(%s));' % (cname, cname))
            for f, _ in cls._fields_:
                lines.append('printf("%s %s %%zu\\n", offsetof(%s, %s));' % (cname, f, cname, f))
        enums = {"DLCONV_ERR_INTERNAL": 6, "DLCONV_F16": 1, "DLCONV_U8": 2, "DLCONV_S8": 3, "DLCONV_NHWC": 1,
                 "DLCONV_ALGO_SPARSE_CSR": 5, "DLCONV_ISA_CUDA": 5, "DLCONV_PLAN_MEASURE": 1,
                 "sizeof(dlconv_dtype)": 4}
        for e in enums:
            lines.append('printf("enum %s %%ld\\n", (long)(%s));' % (e, e))
        lines.append("return 0; }")
        with tempfile.TemporaryDirectory() as tmp:
            src, exe = os.path.join(tmp, "layout.c"), os.path.join(tmp, "layout")
            with open(src, "w") as f:
                f.write("\n".join(lines))
            subprocess.run([os.environ.get("CC", "cc"), "-I", header_dir(), src, "-o", exe], check=True)
            out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout.split("\n")
        got = {}
        for line in filter(None, out):
            a, b, v = line.split()
            got[(a, b)] = int(v)
        for cname, cls in L.STRUCTS.items():
            self.assertEqual(ctypes.sizeof(cls), got[(cname, "sizeof")], cname)
            for f, _ in cls._fields_:
                self.assertEqual(getattr(cls, f).offset, got[(cname, f)], "%s.%s" % (cname, f))
        self.assertEqual(got[("enum", "DLCONV_ERR_INTERNAL")], 6)
        self.assertEqual(got[("enum", "DLCONV_F16")], L.DTYPES["f16"])
        self.assertEqual(got[("enum", "DLCONV_U8")], L.DTYPES["u8"])
        self.assertEqual(got[("enum", "DLCONV_S8")], L.DTYPES["s8"])
        self.assertEqual(got[("enum", "DLCONV_NHWC")], L.LAYOUTS["nhwc"])
        self.assertEqual(got[("enum", "DLCONV_ALGO_SPARSE_CSR")], L.ALGOS["sparse_csr"])
        self.assertEqual(got[("enum", "DLCONV_ISA_CUDA")], L.ISAS["cuda"])
        self.assertEqual(got[("enum", "DLCONV_PLAN_MEASURE")], L.PLAN_MEASURE)
        self.assertEqual(got[("enum", "sizeof(dlconv_dtype)")], ctypes.sizeof(L.c_enum))


class KnownAnswers(unittest.TestCase):
    """Without a compiler: each field read or written through the library."""

    def test_desc_init_fields(self):
        d = L.Conv2dDesc()
        ctypes.memset(ctypes.byref(d), 0x7f, ctypes.sizeof(d))
        L.lib.dlconv_conv2d_desc_init(ctypes.byref(d), 2, 3, 5, 7, 11, 13, 17)
        self.assertEqual((d.n, d.c_in, d.h_in, d.w_in, d.c_out, d.k_h, d.k_w), (2, 3, 5, 7, 11, 13, 17))
        self.assertEqual((d.stride_h, d.stride_w, d.dilation_h, d.dilation_w, d.groups), (1, 1, 1, 1, 1))
        self.assertEqual((d.pad_top, d.pad_bottom, d.pad_left, d.pad_right), (0, 0, 0, 0))
        self.assertEqual((d.dtype, d.layout), (0, 0))
        self.assertEqual((d.out_min, d.out_max), (-math.inf, math.inf))

    def test_desc_fields_reach_the_library(self):
        # each field set to a bad value is named by the library's message
        for field, bad in [("n", 0), ("c_in", 0), ("h_in", 0), ("w_in", 0), ("c_out", 0), ("k_h", 0), ("k_w", 0),
                           ("stride_h", 0), ("stride_w", 0), ("dilation_h", 0), ("dilation_w", 0),
                           ("pad_top", -1), ("pad_bottom", -1), ("pad_left", -1), ("pad_right", -1),
                           ("groups", 0), ("dtype", 99), ("layout", 99), ("out_min", math.nan),
                           ("out_max", math.nan)]:
            d = L.Conv2dDesc()
            L.lib.dlconv_conv2d_desc_init(ctypes.byref(d), 1, 4, 8, 8, 4, 3, 3)
            setattr(d, field, bad)
            h, w = ctypes.c_int32(), ctypes.c_int32()
            p = ctypes.c_void_p()
            st = L.lib.dlconv_plan_conv2d(ctypes.byref(p), ctypes.byref(d), np.zeros(144, np.float32).ctypes.data,
                                          None, None, None)
            self.assertEqual(st, 1, field)
            msg = L.lib.dlconv_last_error().decode()
            stem = field.split("_")[0] if field in ("out_min", "out_max") else field
            self.assertIn(stem, msg, "%s: %s" % (field, msg))
            del h, w

    def test_options_fields(self):
        o = L.Options()
        ctypes.memset(ctypes.byref(o), 0x55, ctypes.sizeof(o))
        L.lib.dlconv_options_init(ctypes.byref(o))
        self.assertEqual((o.algo, o.isa, o.num_threads, o.flags), (0, 0, 0, 0))
        self.assertEqual((o.parallel_for, o.pool, o.cuda_stream), (None, None, None))
        w = np.zeros((4, 4, 1, 1), np.float32)
        with self.assertRaisesRegex(dlconv.InvalidArgument, "num_threads"):
            dlconv.Conv2dPlan(w, input_shape=(1, 4, 2, 2), threads=-3)
        p = dlconv.Conv2dPlan(w, input_shape=(1, 4, 2, 2), algo="spatial_pack", isa="generic")
        self.assertEqual((p.info["algo"], p.info["isa"]), ("spatial_pack", "generic"))

    def test_plan_info_fields(self):
        w = np.ones((6, 4, 3, 3), np.float32)
        p = dlconv.Conv2dPlan(w, input_shape=(2, 4, 9, 9), padding=1, dtype="f32", threads=1)
        i = p.info
        self.assertEqual(i["macs"], 2 * 6 * 9 * 9 * 4 * 3 * 3)
        self.assertEqual(i["dtype"], "f32")
        self.assertIn(i["algo"], L.ALGOS)
        self.assertIn(i["isa"], ("generic", "avx2", "avx512", "neon"))
        self.assertEqual(i["workspace_bytes"], p.workspace_size)
        self.assertEqual(i["weight_density"], 1.0)
        self.assertGreaterEqual(i["packed_weight_bytes"], w.nbytes)
        self.assertRegex(i["kernel"], r"^[a-z0-9_+]+__[a-z0-9]+$")
        ph = dlconv.Conv2dPlan(w.astype(np.float16), input_shape=(1, 4, 9, 9))
        self.assertEqual(ph.info["dtype"], "f16")

    def test_quant_fields(self):
        # distinct values per field: a misplaced field changes the answer
        x = np.full((1, 1), 200, np.uint8)
        w = np.full((2, 1), 3, np.int8)
        q = dlconv.Quant(0.5, 100, [0.25, 0.125], 2.0, 7)
        y = dlconv.dense(x, w, np.array([4, 8], np.int32), dtype="u8", quant=q)
        # acc = (200-100)*3 = 300; +bias -> 304, 308; * 0.5*ws/2.0 -> 19, 9.625; + 7
        self.assertEqual(y.tolist(), [[26, 17]])


if __name__ == "__main__":
    unittest.main()
