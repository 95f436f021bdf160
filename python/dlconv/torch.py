"""dlconv.torch: libdlconv under a PyTorch inference model.

    model = dlconv.torch.convert(torchvision.models.resnet50().eval(), layout="nhwc", threads=2)
    y = model(x)

convert() replaces every eligible nn.Conv2d and nn.Linear with a module that runs libdlconv on the
tensors' memory, folds a BatchNorm2d that follows a convolution into its weights and bias, fuses a
following ReLU / ReLU6 / Hardtanh into the library's clamp, and leaves every other module to
PyTorch. The chains are found on the torch.fx graph of the model (nn.Sequential children and
modules called in forward alike); a model that fx cannot trace falls back to a walk over its
nn.Sequential children. Inference only: the new modules keep no autograd history.
"""
import copy
import ctypes
import math
import threading
import warnings

import numpy as np
import torch
from torch import nn

from . import _lib as L
from .core import _check, _options

_lib = L.lib
_execute = L.lib.dlconv_execute

__all__ = ["convert", "Conv2d", "Linear", "Report"]


class _Workspace:
    """Scratch shared by the layers of one converted model, one buffer per calling thread."""

    def __init__(self):
        self._local = threading.local()

    def get(self, size):
        if size == 0:
            return None
        loc = self._local
        if getattr(loc, "size", 0) < size:
            loc.buf = np.empty(size + 64, dtype=np.uint8)
            loc.ptr = (loc.buf.ctypes.data + 63) & ~63
            loc.size = size
        return loc.ptr


class _Planned:
    __slots__ = ("handle", "out_shape", "ws", "kernel")

    def __del__(self):
        if self.handle and _lib is not None:
            _lib.dlconv_plan_destroy(self.handle)
            self.handle = None


def _kernel_of(handle):
    pi = L.PlanInfo()
    _check(_lib.dlconv_plan_query(handle, ctypes.byref(pi)), "dlconv_plan_query")
    return "%s/%s" % (pi.kernel.decode(), {v: k for k, v in L.ALGOS.items()}.get(pi.algo, pi.algo))


class _Base(nn.Module):
    def __init__(self, dtype, threads, algo, measure, workspace):
        super().__init__()
        if dtype not in ("f32", "f16"):
            raise ValueError("dtype: 'f32' or 'f16', got %r" % (dtype,))
        self.dtype = dtype
        self._tdtype = torch.float32 if dtype == "f32" else torch.float16
        self._opt = _options(threads, algo, "auto", measure)
        self._ws = workspace if workspace is not None else _Workspace()
        self._plans = {}
        self._lock = threading.Lock()

    def __getstate__(self):  # copies and pickles plan again: a plan belongs to one module
        st = self.__dict__.copy()
        st["_plans"], st["_ws"], st["_lock"], st["_opt"] = {}, None, None, None
        st["_opt_args"] = (self._opt.num_threads, self._opt.algo, self._opt.flags)
        return st

    def __setstate__(self, st):
        nt, algo, flags = st.pop("_opt_args")
        self.__dict__.update(st)
        self._opt = _options(nt, "auto", "auto", bool(flags & L.PLAN_MEASURE))
        self._opt.algo = algo
        self._ws = _Workspace()
        self._lock = threading.Lock()

    def _planned(self, key):
        """The plan for this input shape, made once (under a lock: callers may share the module)."""
        with self._lock:
            p = self._plans.get(key)
            if p is None:
                p = self._plan(key)
            return p

    def kernels(self):
        """The kernel (and algorithm) planned for each input shape seen so far."""
        return {k: p.kernel for k, p in self._plans.items()}

    def _enter(self, x, channels_last):
        if x.device.type != "cpu":
            raise RuntimeError("dlconv.torch: CPU tensors only, got one on %s" % x.device)
        cast = x.dtype != self._tdtype
        if cast:
            if x.dtype not in (torch.float32, torch.float16):
                raise TypeError("dlconv.torch: float32 or float16 tensors, got %s" % x.dtype)
            x = x.to(self._tdtype)
        if channels_last:
            if not x.is_contiguous(memory_format=torch.channels_last):
                x = x.contiguous(memory_format=torch.channels_last)
        elif not x.is_contiguous():
            x = x.contiguous()
        return x, cast

    def _run(self, p, x, y):
        st = _execute(p.handle, x.data_ptr(), y.data_ptr(), self._ws.get(p.ws))
        if st:
            _check(st, "dlconv_execute")


class Conv2d(_Base):
    """An inference nn.Conv2d on libdlconv (weights OIHW, folded batch norm, fused clamp)."""

    def __init__(self, weight, bias, stride, padding, dilation, groups, out_min=-math.inf, out_max=math.inf,
                 dtype="f32", layout="nchw", threads=0, algo="auto", measure=False, workspace=None):
        super().__init__(dtype, threads, algo, measure, workspace)
        if layout not in ("nchw", "nhwc"):
            raise ValueError("layout: 'nchw' or 'nhwc', got %r" % (layout,))
        self.layout = layout
        self.stride, self.padding, self.dilation, self.groups = tuple(stride), tuple(padding), tuple(dilation), groups
        self.out_min, self.out_max = float(out_min), float(out_max)
        w = weight.detach().to(torch.float32 if dtype == "f32" else torch.float16).contiguous()
        b = None if bias is None else bias.detach().to(w.dtype).contiguous()
        self.register_buffer("weight", w)
        self.register_buffer("bias", b)
        self.out_channels, self.in_channels = w.shape[0], w.shape[1] * groups
        self.kernel_size = tuple(w.shape[2:])

    def extra_repr(self):
        clamp = "" if self.out_min == -math.inf and self.out_max == math.inf else \
            ", clamp=(%g, %g)" % (self.out_min, self.out_max)
        return "%d, %d, kernel_size=%s, stride=%s, padding=%s, groups=%d, %s, %s%s" % (
            self.in_channels, self.out_channels, self.kernel_size, self.stride, self.padding, self.groups,
            self.dtype, self.layout, clamp)

    def _plan(self, shape):
        n, c, h, w = shape
        if c != self.in_channels:
            raise ValueError("dlconv.torch.Conv2d: input has %d channels, the layer takes %d" % (c, self.in_channels))
        d = L.Conv2dDesc()
        _lib.dlconv_conv2d_desc_init(ctypes.byref(d), n, c, h, w, self.out_channels, *self.kernel_size)
        d.stride_h, d.stride_w = self.stride
        d.dilation_h, d.dilation_w = self.dilation
        d.pad_top, d.pad_bottom, d.pad_left, d.pad_right = self.padding
        d.groups = self.groups
        d.dtype = L.DTYPES[self.dtype]
        d.layout = L.LAYOUTS[self.layout]
        d.out_min, d.out_max = self.out_min, self.out_max
        oh, ow = ctypes.c_int32(), ctypes.c_int32()
        _check(_lib.dlconv_conv2d_output_shape(ctypes.byref(d), ctypes.byref(oh), ctypes.byref(ow)),
               "dlconv_conv2d_output_shape")
        h_ = ctypes.c_void_p()
        w = self.weight.contiguous()  # OIHW (model.to(memory_format=...) may have reordered the buffer)
        _check(_lib.dlconv_plan_conv2d(ctypes.byref(h_), ctypes.byref(d), w.data_ptr(),
                                       None if self.bias is None else self.bias.data_ptr(), None,
                                       ctypes.byref(self._opt)), "dlconv_plan_conv2d")
        p = _Planned()
        p.handle = h_.value
        p.out_shape = (n, self.out_channels, oh.value, ow.value)
        p.ws = int(_lib.dlconv_plan_workspace_size(p.handle))
        p.kernel = _kernel_of(p.handle)
        self._plans[shape] = p
        return p

    def forward(self, x):
        nhwc = self.layout == "nhwc"
        mf = torch.channels_last if nhwc else torch.contiguous_format
        cast = False
        if x.dtype is not self._tdtype or not x.is_contiguous(memory_format=mf) or not x.is_cpu:
            x, cast = self._enter(x, nhwc)
        shape = tuple(x.shape)
        p = self._plans.get(shape) or self._planned(shape)
        y = torch.empty(p.out_shape, dtype=x.dtype, memory_format=mf)
        st = _execute(p.handle, x.data_ptr(), y.data_ptr(), self._ws.get(p.ws))
        if st:
            _check(st, "dlconv_execute")
        return y.float() if cast else y


class Linear(_Base):
    """An inference nn.Linear on libdlconv (x (..., in) -> (..., out), fused clamp)."""

    def __init__(self, weight, bias, out_min=-math.inf, out_max=math.inf, dtype="f32", threads=0, algo="auto",
                 measure=False, workspace=None):
        super().__init__(dtype, threads, algo, measure, workspace)
        self.out_min, self.out_max = float(out_min), float(out_max)
        w = weight.detach().to(self._tdtype).contiguous()
        self.register_buffer("weight", w)
        self.register_buffer("bias", None if bias is None else bias.detach().to(w.dtype).contiguous())
        self.out_features, self.in_features = w.shape

    def extra_repr(self):
        return "in_features=%d, out_features=%d, %s" % (self.in_features, self.out_features, self.dtype)

    def _plan(self, batch):
        h_ = ctypes.c_void_p()
        w = self.weight.contiguous()
        _check(_lib.dlconv_plan_dense(ctypes.byref(h_), batch, self.in_features, self.out_features,
                                      L.DTYPES[self.dtype], w.data_ptr(),
                                      None if self.bias is None else self.bias.data_ptr(), self.out_min,
                                      self.out_max, None, ctypes.byref(self._opt)), "dlconv_plan_dense")
        p = _Planned()
        p.handle = h_.value
        p.out_shape = (batch, self.out_features)
        p.ws = int(_lib.dlconv_plan_workspace_size(p.handle))
        p.kernel = _kernel_of(p.handle)
        self._plans[batch] = p
        return p

    def forward(self, x):
        if x.shape[-1] != self.in_features:
            raise ValueError("dlconv.torch.Linear: input has %d features, the layer takes %d"
                             % (x.shape[-1], self.in_features))
        lead = x.shape[:-1]
        x, cast = self._enter(x, False)
        batch = x.numel() // self.in_features
        if batch == 0:
            y = torch.empty(lead + (self.out_features,), dtype=x.dtype)
            return y.float() if cast else y
        p = self._plans.get(batch) or self._planned(batch)
        y = torch.empty(lead + (self.out_features,), dtype=x.dtype)
        self._run(p, x, y)
        return y.float() if cast else y


# ---------------------------------------------------------------------------------------------
# conversion

class Report:
    """What convert() did: .converted [(name, what)], .skipped [(name, reason)]."""

    def __init__(self):
        self.converted, self.skipped, self.method = [], [], None

    def __repr__(self):
        lines = ["dlconv.torch.convert (%s): %d layers on libdlconv, %d left to PyTorch"
                 % (self.method, len(self.converted), len(self.skipped))]
        lines += ["  %-40s %s" % c for c in self.converted]
        lines += ["  %-40s left to PyTorch: %s" % s for s in self.skipped]
        return "\n".join(lines)


def _conv_padding(m):
    p = m.padding
    if isinstance(p, str):
        if p == "valid":
            return (0, 0, 0, 0)
        # 'same' (stride 1): PyTorch puts the odd element of the total at the end
        out = []
        for k, d in zip(m.kernel_size, m.dilation):
            total = d * (k - 1)
            out += [total // 2, total - total // 2]
        return tuple(out)
    return (p[0], p[0], p[1], p[1])


def _ineligible(m):
    if isinstance(m, nn.Conv2d):
        if m.padding_mode != "zeros":
            return "padding_mode=%r (only zero padding)" % m.padding_mode
        if type(m) is not nn.Conv2d and type(m).forward is not nn.Conv2d.forward:
            return "a subclass of nn.Conv2d with its own forward (%s)" % type(m).__name__
    elif isinstance(m, nn.Linear):
        if type(m) is not nn.Linear and type(m).forward is not nn.Linear.forward:
            return "a subclass of nn.Linear with its own forward (%s)" % type(m).__name__
    if m.weight.device.type != "cpu":
        return "weights on %s (CPU only)" % m.weight.device
    if not m.weight.dtype.is_floating_point:
        return "weights of type %s" % m.weight.dtype
    return None


_OTHER_LAYERS = (nn.Conv1d, nn.Conv3d, nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d, nn.Bilinear)


def _other_reason(m):
    return "%s: not a layer libdlconv runs (Conv2d and Linear only)" % type(m).__name__


def _clamp_of(m):
    """(min, max) of a clamp module, or None."""
    if isinstance(m, nn.ReLU):
        return (0.0, math.inf)
    if isinstance(m, nn.Hardtanh):  # ReLU6 is Hardtanh(0, 6)
        return (float(m.min_val), float(m.max_val))
    return None


def _clamp_of_call(node):
    import torch.nn.functional as F
    if node.op != "call_function" and node.op != "call_method":
        return None
    t = node.target
    if t in (F.relu, torch.relu, torch.relu_, "relu", "relu_"):
        return (0.0, math.inf)
    if t is F.relu6:
        return (0.0, 6.0)
    if t in (F.hardtanh, torch.clamp, "clamp", "clamp_"):
        lo = node.args[1] if len(node.args) > 1 else node.kwargs.get("min_val" if t is F.hardtanh else "min")
        hi = node.args[2] if len(node.args) > 2 else node.kwargs.get("max_val" if t is F.hardtanh else "max")
        if t is F.hardtanh:
            lo = -1.0 if lo is None else lo
            hi = 1.0 if hi is None else hi
        if isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and lo <= hi:
            return (float(lo), float(hi))
    return None


def _fold_bn(w, b, bn):
    """Weights and bias of conv followed by an eval-mode BatchNorm2d, in float64."""
    w = w.detach().double()
    b = torch.zeros(w.shape[0], dtype=torch.float64) if b is None else b.detach().double()
    mean = bn.running_mean.double() if bn.running_mean is not None else torch.zeros_like(b)
    var = bn.running_var.double() if bn.running_var is not None else torch.ones_like(b)
    gamma = bn.weight.detach().double() if bn.weight is not None else torch.ones_like(b)
    beta = bn.bias.detach().double() if bn.bias is not None else torch.zeros_like(b)
    scale = gamma / torch.sqrt(var + bn.eps)
    return (w * scale.reshape(-1, 1, 1, 1)).float(), ((b - mean) * scale + beta).float()


def _new_module(m, bn, clamp, cfg):
    lo, hi = clamp if clamp else (-math.inf, math.inf)
    if isinstance(m, nn.Conv2d):
        w, b = (m.weight, m.bias) if bn is None else _fold_bn(m.weight, m.bias, bn)
        return Conv2d(w, b, m.stride, _conv_padding(m), m.dilation, m.groups, lo, hi, **cfg)
    cfg = {k: v for k, v in cfg.items() if k != "layout"}
    return Linear(m.weight, m.bias, lo, hi, **cfg)


def _what(m, bn, clamp):
    s = "%s%s" % (type(m).__name__, "+BatchNorm2d" if bn is not None else "")
    if clamp:
        s += "+clamp(%g, %g)" % clamp
    return s


def _bn_ok(bn):
    return isinstance(bn, nn.BatchNorm2d) and (bn.track_running_stats or bn.running_mean is not None)


def _set_module(root, name, new):
    parent, _, leaf = name.rpartition(".")
    setattr(root.get_submodule(parent) if parent else root, leaf, new)


def _convert_fx(model, cfg, report):
    import torch.fx as fx
    gm = fx.symbolic_trace(model)
    mods = dict(gm.named_modules())
    used_elsewhere = {}
    for node in gm.graph.nodes:
        if node.op == "call_module":
            used_elsewhere[node.target] = used_elsewhere.get(node.target, 0) + 1
    for node in list(gm.graph.nodes):
        if node.op != "call_module":
            continue
        m = mods[node.target]
        if isinstance(m, _OTHER_LAYERS):
            report.skipped.append((node.target, _other_reason(m)))
            continue
        if not isinstance(m, (nn.Conv2d, nn.Linear)):
            continue
        why = _ineligible(m)
        if why:
            report.skipped.append((node.target, why))
            continue
        if used_elsewhere[node.target] > 1:
            report.skipped.append((node.target, "module called at %d places" % used_elsewhere[node.target]))
            continue
        fused, bn, clamp, cur = [], None, None, node

        def sole_user(n):
            return next(iter(n.users)) if len(n.users) == 1 else None

        u = sole_user(cur)
        if isinstance(m, nn.Conv2d) and u is not None and u.op == "call_module" and u.args and u.args[0] is cur \
                and _bn_ok(mods[u.target]) and not mods[u.target].training:
            bn, cur = mods[u.target], u
            fused.append(u)
            u = sole_user(cur)
        if u is not None and u.args and u.args[0] is cur:
            c = _clamp_of(mods[u.target]) if u.op == "call_module" else _clamp_of_call(u)
            if c is not None:
                clamp, cur = c, u
                fused.append(u)
        new = _new_module(m, bn, clamp, cfg)
        _set_module(gm, node.target, new)
        report.converted.append((node.target, _what(m, bn, clamp)))
        if cur is not node:
            cur.replace_all_uses_with(node)
            for f in reversed(fused):
                gm.graph.erase_node(f)
    gm.graph.lint()
    gm.delete_all_unused_submodules()
    gm.recompile()
    return gm


def _convert_walk(model, cfg, report, prefix=""):
    """Without fx: Conv2d [BatchNorm2d] [ReLU/ReLU6] runs among nn.Sequential children are fused,
    every other eligible Conv2d and Linear replaced alone."""
    names = list(model._modules.keys())
    i = 0
    while i < len(names):
        name = names[i]
        m = model._modules[name]
        full = prefix + name
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            why = _ineligible(m)
            if why:
                report.skipped.append((full, why))
                i += 1
                continue
            bn = clamp = None
            j = i + 1
            if isinstance(model, nn.Sequential):
                if isinstance(m, nn.Conv2d) and j < len(names) and _bn_ok(model._modules[names[j]]):
                    bn = model._modules[names[j]]
                    model._modules[names[j]] = nn.Identity()
                    j += 1
                if j < len(names) and model._modules[names[j]] is not None and \
                        _clamp_of(model._modules[names[j]]) is not None:
                    clamp = _clamp_of(model._modules[names[j]])
                    model._modules[names[j]] = nn.Identity()
                    j += 1
            model._modules[name] = _new_module(m, bn, clamp, cfg)
            report.converted.append((full, _what(m, bn, clamp)))
            i = j
            continue
        if isinstance(m, _OTHER_LAYERS):
            report.skipped.append((full, _other_reason(m)))
        elif m is not None:
            _convert_walk(m, cfg, report, full + ".")
        i += 1
    return model


def convert(model, dtype="f32", layout="nchw", threads=0, algo="auto", measure=False, trace=True, verbose=False):
    """Returns a copy of the model with its eligible nn.Conv2d and nn.Linear on libdlconv (see the
    module's doc); the model itself is left as it is.

    dtype: "f32" or "f16" (binary16 weights and activations inside each layer; float32 tensors are
    converted on entry and exit of each layer). layout: "nchw" (contiguous tensors) or "nhwc"
    (channels_last tensors: the model's convolutions then pass NHWC tensors between them, and
    the first one converts a contiguous input once). threads: the library's thread count per
    layer (0: its default). algo: "auto" or a forced algorithm. measure: time the candidates of
    each layer at its first call. trace: find the chains with torch.fx (else only nn.Sequential
    children are fused). The returned model has .dlconv_report (a Report); verbose prints it;
    modules left to PyTorch are warned about.
    """
    if layout not in ("nchw", "nhwc"):
        raise ValueError("layout: 'nchw' or 'nhwc', got %r" % (layout,))
    if dtype not in ("f32", "f16"):
        raise ValueError("dtype: 'f32' or 'f16', got %r" % (dtype,))
    report = Report()
    cfg = dict(dtype=dtype, layout=layout, threads=threads, algo=algo, measure=measure, workspace=_Workspace())
    with torch.no_grad():
        out = None
        if trace:
            try:
                out = _convert_fx(copy.deepcopy(model).eval(), cfg, report)
                report.method = "torch.fx"
            except Exception as e:  # untraceable control flow: fall back to the module walk on a fresh copy
                report.__init__()
                warnings.warn("dlconv.torch.convert: torch.fx could not trace the model (%s: %s); fusing "
                              "nn.Sequential children only" % (type(e).__name__, e))
                out = None
        if out is None:
            out = _convert_walk(copy.deepcopy(model).eval(), cfg, report)
            report.method = "module walk"
    if layout == "nhwc":
        out = out.to(memory_format=torch.channels_last)
    out.dlconv_report = report
    if report.skipped:
        warnings.warn("dlconv.torch.convert: %d layer(s) left to PyTorch: %s" % (
            len(report.skipped), "; ".join("%s (%s)" % s for s in report.skipped)))
    if verbose:
        print(report)
    return out
