#!/usr/bin/env python3
"""End-to-end latency of torchvision models (random weights, 1x3x224x224): PyTorch eager, the
model converted by dlconv.torch.convert, and onnxruntime's CPU execution provider, at the same
thread counts, interleaved in one run (every repetition times each contender once), medians.
Also the converted model's accuracy against PyTorch's fp32 output (max |y - ref| / max |ref|).

    python3 python/bench_models.py [--models resnet50,mobilenet_v2,resnext50_32x4d] [--threads 1,2]
                                   [--reps 15] [--layouts nhwc,nchw] [--engine examples/engine/engine]

onnxruntime is optional (its column is left out when it cannot be imported). --engine also
times the C engine example's MobileNetV2 at 1 thread against onnxruntime's, alternating.

OMP_WAIT_POLICY defaults to passive here: PyTorch's and libdlconv's OpenMP threads otherwise
keep spinning after each parallel region and take the cores from whichever contender runs next
(on a machine with few cores, 2-thread times then grow tenfold, onnxruntime's included).
"""
import argparse
import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")  # before any OpenMP runtime starts (see above)
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402

import dlconv  # noqa: E402
import dlconv.torch as dt  # noqa: E402

try:
    import onnxruntime as ort
except ImportError:
    ort = None


def randomize_bn(model, gen):
    """Random batch-norm statistics, so that folding them is exercised."""
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=gen) + 0.5)
            m.weight.data.copy_(torch.rand(n, generator=gen) + 0.5)
            m.bias.data.copy_(torch.randn(n, generator=gen) * 0.1)
    return model


def ort_session(path, threads):
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def timeit(fn):
    """(wall, process CPU) seconds of one call."""
    c, t = time.process_time(), time.perf_counter()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def export_onnx(model, x, path):
    kw = dict(opset_version=13, input_names=["x"], do_constant_folding=True)
    try:  # newer torch: the TorchScript exporter, which needs no extra package
        torch.onnx.export(model, x, path, dynamo=False, **kw)
    except TypeError:
        torch.onnx.export(model, x, path, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="resnet50,mobilenet_v2,resnext50_32x4d")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--layouts", default="nhwc", help="layouts of the converted model, comma-separated; "
                    "a '+measure' suffix (nhwc+measure) plans each layer with MEASURE")
    ap.add_argument("--engine", help="path of the built examples/engine/engine: time it against onnxruntime")
    ap.add_argument("--engine-rounds", type=int, default=5)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    threads_list = [int(t) for t in args.threads.split(",")]
    layouts = args.layouts.split(",")
    print("# libdlconv %s (%s), ISAs %s; torch %s; onnxruntime %s; reps %d (medians, interleaved); "
          "OMP_WAIT_POLICY=%s" % (dlconv.version(), dlconv.info()["library"], ",".join(dlconv.info()["isas"]),
                                  torch.__version__, ort.__version__ if ort else "not installed", args.reps,
                                  os.environ["OMP_WAIT_POLICY"]))
    cols = ["eager"] + ["dlconv_" + lay for lay in layouts] + (["ort"] if ort else [])
    print("# wall-clock medians; rows '1, CPU time' give the process CPU time of the same calls")
    print("| model | threads | " + " | ".join(c + " ms" for c in cols) +
          " | eager / dlconv | ort / dlconv | dlconv rel. error |")
    print("|" + " --- |" * (len(cols) + 5))
    tmp = tempfile.mkdtemp(prefix="dlconv-bench-")
    gen = torch.Generator().manual_seed(26)
    for name in args.models.split(","):
        torch.manual_seed(26)
        model = randomize_bn(getattr(torchvision.models, name)(), gen).eval()
        x = torch.randn(1, 3, 224, 224, generator=gen)
        onnx_path = None
        if ort:
            onnx_path = os.path.join(tmp, name + ".onnx")
            with torch.no_grad():
                export_onnx(model, x, onnx_path)
        for nt in threads_list:
            torch.set_num_threads(nt)
            with torch.no_grad():
                ref = model(x)
                runs = {"eager": lambda: model(x)}
                errs = []
                for lay in layouts:
                    conv = dt.convert(model, layout=lay.split("+")[0], threads=nt, measure="+measure" in lay)
                    errs.append(((conv(x) - ref).abs().max() / ref.abs().max()).item())
                    runs["dlconv_" + lay] = (lambda c: lambda: c(x))(conv)
                if ort:
                    sess = ort_session(onnx_path, nt)
                    xn = x.numpy()
                    out = sess.run(None, {"x": xn})[0]
                    ort_err = float(np.abs(out - ref.numpy()).max() / np.abs(ref.numpy()).max())
                    runs["ort"] = lambda: sess.run(None, {"x": xn})
                for _ in range(args.warmup):
                    for f in runs.values():
                        f()
                times = {k: [] for k in runs}
                for _ in range(args.reps):
                    for k, f in runs.items():
                        times[k].append(timeit(f))
            med = {k: statistics.median(w for w, _ in v) * 1e3 for k, v in times.items()}
            cpu = {k: statistics.median(c for _, c in v) * 1e3 for k, v in times.items()}
            best = min(med["dlconv_" + lay] for lay in layouts)
            row = [name, str(nt)] + ["%.1f" % med[c] for c in cols]
            row += ["%.2fx" % (med["eager"] / best), "%.2fx" % (med["ort"] / best) if ort else "-",
                    ", ".join("%.1e" % e for e in errs) + (" (ort %.1e)" % ort_err if ort else "")]
            print("| " + " | ".join(row) + " |", flush=True)
            if nt == 1:  # at one thread, process CPU time is the latency without other processes' share
                best_c = min(cpu["dlconv_" + lay] for lay in layouts)
                print("| %s | 1, CPU time | %s | %.2fx | %s | |" % (
                    name, " | ".join("%.1f" % cpu[c] for c in cols), cpu["eager"] / best_c,
                    "%.2fx" % (cpu["ort"] / best_c) if ort else "-"), flush=True)
    if args.engine and ort:
        # the C engine's MobileNetV2 against onnxruntime's whole MobileNetV2, 1 thread, alternating
        model = torchvision.models.mobilenet_v2().eval()
        path = os.path.join(tmp, "mobilenet_v2_engine.onnx")
        with torch.no_grad():
            export_onnx(model, torch.randn(1, 3, 224, 224), path)
        sess = ort_session(path, 1)
        xn = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
        for _ in range(args.warmup):
            sess.run(None, {"x": xn})
        e_med, o_med, e_cpu, o_cpu = [], [], [], []
        for _ in range(args.engine_rounds):
            out = subprocess.run([args.engine, "--threads", "1", "--iters", "30"], check=True, capture_output=True,
                                 text=True).stdout
            last = out.strip().split("\n")[-1].split()
            e_med.append(float(last[1]))
            e_cpu.append(float(last[last.index("CPU") + 2]))
            t = [timeit(lambda: sess.run(None, {"x": xn})) for _ in range(30)]
            o_med.append(statistics.median(w for w, _ in t) * 1e3)
            o_cpu.append(sum(c for _, c in t) / len(t) * 1e3)
        print("\nengine example, MobileNetV2, 1 thread (median of %d rounds of 30 runs, alternating): wall engine %.2f ms, "
              "onnxruntime %.2f ms (onnxruntime / engine %.2fx); CPU time per image engine %.2f ms, onnxruntime %.2f ms "
              "(%.2fx)" % (args.engine_rounds, statistics.median(e_med), statistics.median(o_med),
                           statistics.median(o_med) / statistics.median(e_med), statistics.median(e_cpu),
                           statistics.median(o_cpu), statistics.median(o_cpu) / statistics.median(e_cpu)))


if __name__ == "__main__":
    main()
