"""dlconv.torch.convert against PyTorch's own outputs (skipped without torch)."""
import os
import sys
import unittest
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import torch
    from torch import nn
except ImportError:  # pragma: no cover
    torch = None

if torch is not None:
    import dlconv.torch as dt


def rel(y, r):
    return ((y.float() - r).abs().max() / r.abs().max().clamp(min=1e-6)).item()


def randomize_bn(model, gen):
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(n, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(n, generator=gen) * 0.1)
    return model


@unittest.skipIf(torch is None, "torch is not installed")
class Convert(unittest.TestCase):
    def setUp(self):
        self.gen = torch.Generator().manual_seed(26)
        warnings.simplefilter("ignore")

    def block_model(self):
        class Block(nn.Module):  # BN and ReLU as attributes called in forward, a residual add
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(16, 16, 3, padding=1, bias=False)
                self.bn1 = nn.BatchNorm2d(16)
                self.conv2 = nn.Conv2d(16, 16, 3, padding=1, groups=4, bias=False)
                self.bn2 = nn.BatchNorm2d(16)
                self.relu = nn.ReLU(inplace=True)

            def forward(self, x):
                out = self.relu(self.bn1(self.conv1(x)))
                out = self.bn2(self.conv2(out))
                return self.relu(out + x)

        return randomize_bn(nn.Sequential(
            nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU6(),
            nn.Conv2d(16, 16, 3, padding=1, groups=16), nn.BatchNorm2d(16), nn.ReLU(),
            Block(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10), nn.ReLU(), nn.Linear(10, 5)), self.gen).eval()

    def test_fused_model_both_layouts(self):
        m = self.block_model()
        x = torch.randn(2, 3, 20, 20, generator=self.gen)
        with torch.no_grad():
            r = m(x)
            for layout in ("nchw", "nhwc"):
                c = dt.convert(m, layout=layout, threads=1)
                self.assertFalse(any(isinstance(s, (nn.BatchNorm2d, nn.Conv2d, nn.Linear)) for s in c.modules()),
                                 "%s: %s" % (layout, c))
                self.assertEqual(len(c.dlconv_report.converted), 6)
                self.assertLess(rel(c(x), r), 1e-5, layout)
                self.assertLess(rel(c(x.contiguous(memory_format=torch.channels_last)), r), 1e-5, layout)
                self.assertLess(rel(c(x[:1]), r[:1]), 1e-5, layout)   # another shape: planned again
            c16 = dt.convert(m, dtype="f16", layout="nhwc", threads=1)
            self.assertLess(rel(c16(x), r), 2e-2)

    def test_untraceable_model_falls_back(self):
        class Branchy(nn.Module):  # control flow on a tensor's value: fx cannot trace it
            def __init__(self):
                super().__init__()
                self.body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU())
                self.head = nn.Conv2d(8, 4, 1)

            def forward(self, x):
                y = self.body(x)
                return self.head(y) if y.sum() > 0 else y[:, :4]

        m = randomize_bn(Branchy(), self.gen).eval()
        x = torch.randn(1, 3, 8, 8, generator=self.gen)
        with torch.no_grad():
            r = m(x)
            c = dt.convert(m, threads=1)
            self.assertEqual(c.dlconv_report.method, "module walk")
            self.assertEqual(len(c.dlconv_report.converted), 2)
            self.assertLess(rel(c(x), r), 1e-5)
            self.assertLess(rel(m(x), r), 1e-6)   # the model itself is untouched
            self.assertIsInstance(m.body[0], nn.Conv2d)

    def test_module_walk_without_fx(self):
        m = self.block_model()
        x = torch.randn(1, 3, 16, 16, generator=self.gen)
        with torch.no_grad():
            c = dt.convert(m, trace=False, threads=1)
            self.assertEqual(c.dlconv_report.method, "module walk")
            self.assertLess(rel(c(x), m(x)), 1e-5)

    def test_ineligible_left_and_reported(self):
        m = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect"), nn.ReLU(),
                          nn.Conv2d(4, 4, 1), nn.ConvTranspose2d(4, 4, 1)).eval()
        x = torch.randn(1, 3, 8, 8, generator=self.gen)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            c = dt.convert(m)
        self.assertTrue(any("left to PyTorch" in str(i.message) for i in w))
        self.assertEqual(len(c.dlconv_report.skipped), 2)
        self.assertIn("reflect", repr(c.dlconv_report))
        self.assertIn("ConvTranspose2d", repr(c.dlconv_report))
        with torch.no_grad():
            self.assertLess(rel(c(x), m(x)), 1e-5)

    def test_no_copy_for_contiguous_input(self):
        conv = dt.Conv2d(torch.randn(8, 4, 1, 1), None, (1, 1), (0, 0, 0, 0), (1, 1), 1, layout="nhwc", threads=1)
        x = torch.randn(1, 4, 5, 5).contiguous(memory_format=torch.channels_last)
        y = conv(x)
        self.assertTrue(y.is_contiguous(memory_format=torch.channels_last))
        ref = nn.functional.conv2d(x, conv.weight)
        self.assertLess(rel(y, ref), 1e-6)
        with self.assertRaises(ValueError):
            conv(torch.randn(1, 3, 5, 5))
        with self.assertRaises(TypeError):
            conv(torch.zeros(1, 4, 5, 5, dtype=torch.int32))

    def test_copy_pickle_and_threads(self):
        import copy
        import io
        import threading
        m = self.block_model()
        x = torch.randn(1, 3, 16, 16, generator=self.gen)
        with torch.no_grad():
            r = m(x)
            c = dt.convert(m, layout="nhwc", threads=1)
            c(x)
            c2 = copy.deepcopy(c)          # plans are not shared: made again by the copy
            del c
            self.assertLess(rel(c2(x), r), 1e-5)
            buf = io.BytesIO()
            torch.save(c2, buf)
            buf.seek(0)
            try:
                c3 = torch.load(buf, weights_only=False)   # a whole module (newer torch loads weights only by default)
            except TypeError:
                buf.seek(0)
                c3 = torch.load(buf)
            self.assertLess(rel(c3(x), r), 1e-5)
            errs = []

            def work():
                for _ in range(5):
                    errs.append(rel(c3(x), r))
            ts = [threading.Thread(target=work) for _ in range(4)]
            [t.start() for t in ts]
            [t.join() for t in ts]
            self.assertEqual(len(errs), 20)
            self.assertLess(max(errs), 1e-5)

    def test_torchvision_mobilenet_v2(self):
        try:
            import torchvision
        except ImportError:
            self.skipTest("torchvision is not installed")
        torch.manual_seed(26)
        m = randomize_bn(torchvision.models.mobilenet_v2(num_classes=10), self.gen).eval()
        x = torch.randn(1, 3, 64, 64, generator=self.gen)
        with torch.no_grad():
            r = m(x)
            c = dt.convert(m, layout="nhwc", threads=2)
            self.assertEqual(len(c.dlconv_report.converted), 53)
            self.assertFalse(any(isinstance(s, nn.BatchNorm2d) for s in c.modules()))
            self.assertLess(rel(c(x), r), 1e-4)


if __name__ == "__main__":
    unittest.main()
