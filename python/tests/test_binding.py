"""dlconv (numpy binding) against double-precision references: every dtype, both layouts,
errors as exceptions, bad input rejected or copied."""
import array
import math
import os
import sys
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import dlconv  # noqa: E402
from _ref import conv2d_nchw, requant  # noqa: E402

RNG = np.random.default_rng(26)

# (c_in, h, w, c_out, k, stride, pad, dil, groups): plain, strided, depthwise, grouped, 1x1, dilated
SHAPES = [(8, 9, 11, 16, 3, 1, 1, 1, 1), (6, 12, 10, 10, 3, 2, (1, 0, 1, 2), 1, 2), (16, 8, 8, 16, 3, 1, 1, 1, 16),
          (12, 7, 7, 24, 1, 1, 0, 1, 1), (4, 10, 10, 8, 3, 1, 2, 2, 1), (3, 17, 17, 8, 5, 2, 2, 1, 1)]


def pad4(p):
    return dlconv.core._padding4(p)


def to_layout(a, layout):
    return np.ascontiguousarray(a.transpose(0, 2, 3, 1)) if layout == "nhwc" else a


class Float(unittest.TestCase):
    def check(self, dtype, layout, tol):
        npd = np.float32 if dtype == "f32" else np.float16
        for (c, h, w, co, k, s, p, d, g) in SHAPES:
            x = RNG.standard_normal((2, c, h, w)).astype(npd)
            wt = RNG.standard_normal((co, c // g, k, k)).astype(npd)
            b = RNG.standard_normal(co).astype(npd)
            ref = conv2d_nchw(x, wt, b, (s, s), pad4(p), (d, d), g)
            ref = np.clip(ref, -0.5, 2.0)
            plan = dlconv.Conv2dPlan(wt, b, input_shape=to_layout(x, layout).shape, stride=s, padding=p,
                                     dilation=d, groups=g, layout=layout, out_min=-0.5, out_max=2.0, threads=1)
            y = plan(to_layout(x, layout))
            self.assertEqual(y.dtype, npd)
            self.assertEqual(y.shape, to_layout(ref, layout).shape)
            err = np.abs(y.astype(np.float64) - to_layout(ref, layout)).max() / max(1.0, np.abs(ref).max())
            self.assertLess(err, tol, "%s %s %s kernel %s" % (dtype, layout, (c, h, w, co, k, s, p, d, g), plan.kernel))
            self.assertTrue(plan.kernel)

    def test_f32_nchw(self):
        self.check("f32", "nchw", 1e-5)

    def test_f32_nhwc(self):
        self.check("f32", "nhwc", 1e-5)

    def test_f16_nchw(self):
        self.check("f16", "nchw", 2e-3)

    def test_f16_nhwc(self):
        self.check("f16", "nhwc", 2e-3)

    def test_one_shot_and_threads(self):
        x = RNG.standard_normal((1, 8, 14, 14)).astype(np.float32)
        wt = RNG.standard_normal((32, 8, 3, 3)).astype(np.float32)
        ref = np.maximum(conv2d_nchw(x, wt, None, pad=(1, 1, 1, 1)), 0)
        for threads in (1, 2, 0):
            y = dlconv.conv2d(x, wt, padding=1, activation="relu", threads=threads)
            np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)
        y6 = dlconv.conv2d(x, wt, padding=1, activation="relu6")
        np.testing.assert_allclose(y6, np.minimum(ref, 6), rtol=1e-4, atol=1e-4)

    def test_dense(self):
        for dtype, npd, tol in (("f32", np.float32, 1e-5), ("f16", np.float16, 2e-3)):
            for batch in (1, 5):
                x = RNG.standard_normal((batch, 40)).astype(npd)
                wt = RNG.standard_normal((24, 40)).astype(npd)
                b = RNG.standard_normal(24).astype(npd)
                ref = np.maximum(x.astype(np.float64) @ wt.astype(np.float64).T + b, 0)
                plan = dlconv.DensePlan(wt, b, batch=batch, activation="relu", threads=1)
                self.assertEqual(plan.dtype, dtype)
                for y in (plan(x), dlconv.dense(x, wt, b, activation="relu")):
                    self.assertLess(np.abs(y - ref).max() / max(1, np.abs(ref).max()), tol)

    def test_forced_algorithms(self):
        x = RNG.standard_normal((1, 8, 10, 10)).astype(np.float32)
        wt = RNG.standard_normal((16, 8, 3, 3)).astype(np.float32)
        ref = conv2d_nchw(x, wt, None, pad=(1, 1, 1, 1))
        for algo in ("direct", "im2col_gemm", "spatial_pack"):
            for isa in ("generic",) + tuple(i for i in ("avx2", "avx512") if dlconv.isa_available(i)):
                p = dlconv.Conv2dPlan(wt, input_shape=x.shape, padding=1, algo=algo, isa=isa, threads=1)
                self.assertEqual((p.info["algo"], p.info["isa"]), (algo, isa))
                np.testing.assert_allclose(p(x), ref, rtol=1e-4, atol=1e-4)


class Int8(unittest.TestCase):
    def run_case(self, act, layout, per_channel, shape):
        c, h, w, co, k, s, p, d, g = shape
        xd = np.uint8 if act == "u8" else np.int8
        lo, hi = np.iinfo(xd).min, np.iinfo(xd).max
        x = RNG.integers(lo, hi + 1, (1, c, h, w)).astype(xd)
        wt = RNG.integers(-128, 128, (co, c // g, k, k)).astype(np.int8)
        b = RNG.integers(-5000, 5000, co).astype(np.int32)
        ws = RNG.uniform(0.001, 0.01, co if per_channel else 1).astype(np.float32)
        xzp = 128 if act == "u8" else 3
        yzp = 10 if act == "u8" else -7
        q = dlconv.Quant(0.05, xzp, ws, 0.7, yzp)
        acc = conv2d_nchw(x.astype(np.int64) - xzp, wt, None, (s, s), pad4(p), (d, d), g)
        ref = requant(np.rint(acc), b, 0.05, ws, 0.7, yzp, -1.0, 50.0, xd)
        try:
            plan = dlconv.Conv2dPlan(wt, b, input_shape=to_layout(x, layout).shape, stride=s, padding=p, dilation=d,
                                     groups=g, layout=layout, dtype=act, quant=q, out_min=-1.0, out_max=50.0, threads=1)
        except dlconv.Unsupported as e:  # README: some int8 combinations are not offered
            self.assertIn("", e.detail)
            return
        y = plan(to_layout(x, layout))
        self.assertEqual(y.dtype, xd)
        np.testing.assert_array_equal(y, to_layout(ref, layout), "%s %s %s" % (act, layout, shape))

    def test_conv(self):
        for act in ("u8", "s8"):
            for layout in ("nchw", "nhwc"):
                for i, shape in enumerate(SHAPES):
                    self.run_case(act, layout, i % 2 == 0, shape)

    def test_dense(self):
        x = RNG.integers(0, 256, (3, 50)).astype(np.uint8)
        wt = RNG.integers(-128, 128, (20, 50)).astype(np.int8)
        b = RNG.integers(-1000, 1000, 20).astype(np.int32)
        q = dlconv.Quant(0.02, 120, 0.004, 0.3, 5)
        acc = (x.astype(np.int64) - 120) @ wt.astype(np.int64).T
        ref = requant(acc, b, 0.02, [0.004], 0.3, 5, -math.inf, math.inf, np.uint8)
        np.testing.assert_array_equal(dlconv.DensePlan(wt, b, batch=3, dtype="u8", quant=q)(x), ref)
        np.testing.assert_array_equal(dlconv.dense(x, wt, b, dtype="u8", quant=q), ref)


class Errors(unittest.TestCase):
    def setUp(self):
        self.x = RNG.standard_normal((1, 4, 6, 6)).astype(np.float32)
        self.w = RNG.standard_normal((8, 4, 3, 3)).astype(np.float32)
        self.plan = dlconv.Conv2dPlan(self.w, input_shape=self.x.shape, padding=1, threads=1)
        self.ref = conv2d_nchw(self.x, self.w, None, pad=(1, 1, 1, 1))

    def test_library_errors_carry_last_error(self):
        with self.assertRaises(dlconv.InvalidArgument) as cm:
            dlconv.Conv2dPlan(self.w, input_shape=(1, 4, 6, 6), stride=0)
        self.assertEqual(cm.exception.status, 1)
        self.assertIn("stride", cm.exception.detail)
        self.assertIn("DLCONV_ERR_INVALID_ARG", str(cm.exception))
        with self.assertRaises(dlconv.InvalidArgument):   # output smaller than one pixel
            dlconv.conv2d(self.x[:, :, :2, :2], self.w)
        with self.assertRaises(dlconv.InvalidArgument):
            dlconv.conv2d(self.x, self.w, out_min=1.0, out_max=0.0)
        with self.assertRaises(ValueError):  # InvalidArgument is a ValueError too
            dlconv.DensePlan(np.zeros((4, 4), np.float32), threads=-1)
        with self.assertRaises(dlconv.InvalidArgument) as cm:
            dlconv.Conv2dPlan(np.zeros((8, 4, 3, 3), np.int8), dtype="u8", input_shape=(1, 4, 6, 6),
                              quant=dlconv.Quant(0.0, 0, 1.0, 1.0, 0))
        self.assertIn("scale", cm.exception.detail)
        with self.assertRaises(dlconv.Unsupported):  # an ISA this build or machine lacks
            dlconv.Conv2dPlan(self.w, input_shape=self.x.shape, isa="cuda")
        with self.assertRaises(dlconv.WisdomIOError):
            dlconv.wisdom_import("/nonexistent/dlconv-wisdom")

    def test_bad_arguments_rejected(self):
        p = self.plan
        with self.assertRaisesRegex(ValueError, "shape"):
            p(self.x[:, :, :5])
        with self.assertRaisesRegex(TypeError, "float64"):
            p(self.x.astype(np.float64))
        with self.assertRaisesRegex(TypeError, "int32"):
            p(np.zeros((1, 4, 6, 6), np.int32))
        with self.assertRaises(TypeError):
            p(object())
        with self.assertRaises(TypeError):
            p(None)
        with self.assertRaisesRegex(TypeError, "float16"):
            p(self.x, out=np.empty((1, 8, 6, 6), np.float16))
        with self.assertRaisesRegex(ValueError, "contiguous"):
            p(self.x, out=np.empty((1, 8, 6, 12), np.float32)[..., ::2])
        ro = np.empty((1, 8, 6, 6), np.float32)
        ro.flags.writeable = False
        with self.assertRaisesRegex(ValueError, "read-only"):
            p(self.x, out=ro)
        big = np.zeros(8 * 36 * 2, np.float32)
        with self.assertRaisesRegex(ValueError, "overlap"):
            p(big[:144], out=big[144 - 36:144 - 36 + 288])
        with self.assertRaisesRegex(ValueError, "groups|channels"):
            dlconv.Conv2dPlan(self.w, input_shape=(1, 6, 6, 6))
        with self.assertRaisesRegex(ValueError, "quant"):
            dlconv.Conv2dPlan(self.w.astype(np.int8), dtype="u8", input_shape=self.x.shape)
        with self.assertRaisesRegex(TypeError, "int8"):
            dlconv.Conv2dPlan(self.w, dtype="u8", input_shape=self.x.shape, quant=dlconv.Quant(1, 0, 1, 1, 0))
        with self.assertRaisesRegex(ValueError, "bias"):
            dlconv.Conv2dPlan(self.w, np.zeros(3, np.float32), input_shape=self.x.shape)
        with self.assertRaisesRegex(ValueError, "layout"):
            dlconv.Conv2dPlan(self.w, input_shape=self.x.shape, layout="chwn")
        with self.assertRaisesRegex(ValueError, "activation"):
            dlconv.Conv2dPlan(self.w, input_shape=self.x.shape, activation="gelu")
        with self.assertRaisesRegex(ValueError, "int32"):
            dlconv.Conv2dPlan(self.w, input_shape=self.x.shape, stride=2**32 + 1)
        with self.assertRaisesRegex(ValueError, "int32"):
            dlconv.DensePlan(np.ones((2, 2), np.float32), batch=2**31)
        with self.assertRaises(TypeError):
            dlconv.Conv2dPlan(self.w, input_shape=self.x.shape, padding="same")
        with self.assertRaisesRegex(ValueError, "algo"):
            dlconv.Conv2dPlan(self.w, input_shape=self.x.shape, algo="fft")
        p.close()
        with self.assertRaisesRegex(ValueError, "closed"):
            p(self.x)
        p.close()  # twice is fine

    def test_inputs_copied_or_viewed(self):
        p = self.plan
        nc = np.asfortranarray(self.x)                 # non-contiguous: copied
        np.testing.assert_allclose(p(nc), self.ref, rtol=1e-4, atol=1e-4)
        flat = self.x.reshape(-1)                      # flat buffer of the right size
        np.testing.assert_allclose(p(flat), self.ref, rtol=1e-4, atol=1e-4)
        raw = bytearray(self.x.tobytes())              # bytes from the buffer protocol
        np.testing.assert_allclose(p(raw), self.ref, rtol=1e-4, atol=1e-4)
        arr = array.array("f", self.x.reshape(-1).tolist())
        out = array.array("f", bytes(4 * 288))
        p(arr, out=out)
        np.testing.assert_allclose(np.frombuffer(out, np.float32).reshape(self.ref.shape), self.ref, rtol=1e-4,
                                   atol=1e-4)
        raw1 = np.frombuffer(b"\0" + self.x.tobytes(), np.float32, offset=1, count=144)   # misaligned: copied
        self.assertFalse(raw1.flags.aligned)
        np.testing.assert_allclose(p(raw1), self.ref, rtol=1e-4, atol=1e-4)
        bad = np.frombuffer(bytearray(4 * 288 + 1), np.float32, offset=1, count=288)
        with self.assertRaisesRegex(ValueError, "aligned"):
            p(self.x, out=bad)
        out2 = np.full((1, 8, 6, 6), np.nan, np.float32)
        self.assertIs(p(self.x, out=out2), out2)
        np.testing.assert_allclose(out2, self.ref, rtol=1e-4, atol=1e-4)
        y = np.empty((1, 8, 6, 6), np.float32)          # raw pointers
        p.execute_ptr(self.x.ctypes.data, y.ctypes.data)
        np.testing.assert_allclose(y, self.ref, rtol=1e-4, atol=1e-4)

    def test_threads_share_a_plan(self):
        p, results = self.plan, []

        def work():
            results.append(np.abs(p(self.x) - self.ref).max())
        ts = [threading.Thread(target=work) for _ in range(4)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        self.assertEqual(len(results), 4)
        self.assertLess(max(results), 1e-4)


class Info(unittest.TestCase):
    def test_info(self):
        i = dlconv.info()
        self.assertRegex(i["version"], r"^\d+\.\d+\.\d+$")
        self.assertIn("generic", i["isas"])
        self.assertTrue(os.path.exists(i["library"]) or i["library"].startswith("lib"))
        p = dlconv.Conv2dPlan(np.ones((4, 2, 1, 1), np.float32), input_shape=(1, 2, 3, 3))
        self.assertIn("Conv2dPlan", repr(p))


if __name__ == "__main__":
    unittest.main()
