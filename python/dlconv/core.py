"""Plans, one-shot calls, errors and info over the C API (include/dlconv.h)."""
import ctypes
import math
import threading

import numpy as np

from . import _lib as L

_lib = L.lib

NP_DTYPES = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16),
             "u8": np.dtype(np.uint8), "s8": np.dtype(np.int8)}
_BIAS_DTYPES = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16),
                "u8": np.dtype(np.int32), "s8": np.dtype(np.int32)}
_W_DTYPES = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16),
             "u8": np.dtype(np.int8), "s8": np.dtype(np.int8)}


# ---------------------------------------------------------------------------------------------
# errors

class Error(Exception):
    """A libdlconv call failed: .status (int), .status_name, .detail (dlconv_last_error())."""

    def __init__(self, status, detail, call=""):
        self.status = status
        self.status_name = L.STATUS_NAMES.get(status, "unknown status %d" % status)
        self.detail = detail
        self.call = call
        msg = "%s: %s" % (call, self.status_name) if call else self.status_name
        if detail:
            msg += ": " + detail
        super().__init__(msg)


class InvalidArgument(Error, ValueError):
    pass


class Unsupported(Error):
    pass


class OutOfMemory(Error, MemoryError):
    pass


class DeviceError(Error):
    pass


class WisdomIOError(Error, OSError):
    pass


class InternalError(Error):
    pass


_ERRORS = {1: InvalidArgument, 2: Unsupported, 3: OutOfMemory, 4: DeviceError, 5: WisdomIOError,
           6: InternalError}


def _check(status, call):
    if status != 0:
        detail = _lib.dlconv_last_error()
        detail = detail.decode("utf-8", "replace") if detail else ""
        raise _ERRORS.get(status, Error)(status, detail, call)


# ---------------------------------------------------------------------------------------------
# library facts

def version():
    return _lib.dlconv_version().decode()


def isa_available(isa):
    return bool(_lib.dlconv_isa_available(L.ISAS[isa]))


def info():
    """Version, the library's path and the instruction sets this machine and build can run."""
    return {"version": version(), "library": L.path,
            "isas": [name for name, v in L.ISAS.items() if v not in (0,) and _lib.dlconv_isa_available(v)]}


def wisdom_export(path):
    _check(_lib.dlconv_wisdom_export(str(path).encode()), "dlconv_wisdom_export")


def wisdom_import(path):
    _check(_lib.dlconv_wisdom_import(str(path).encode()), "dlconv_wisdom_import")


def wisdom_forget():
    _lib.dlconv_wisdom_forget()


# ---------------------------------------------------------------------------------------------
# parameters

class Quant:
    """int8 quantisation (ONNX QLinearConv arithmetic, include/dlconv.h): x and y scales and zero
    points, weight scales per tensor (one float) or per output channel (c_out floats)."""

    def __init__(self, x_scale, x_zero_point, w_scales, y_scale, y_zero_point):
        self.x_scale = float(x_scale)
        self.x_zero_point = int(x_zero_point)
        self.w_scales = np.ascontiguousarray(np.atleast_1d(np.asarray(w_scales, dtype=np.float32)))
        if self.w_scales.ndim != 1:
            raise ValueError("w_scales: one scale or one per output channel, got shape %s"
                             % (self.w_scales.shape,))
        self.y_scale = float(y_scale)
        self.y_zero_point = int(y_zero_point)

    def _c(self):
        q = L.Quant()
        q.x_scale, q.x_zero_point = self.x_scale, self.x_zero_point
        q.w_scales = self.w_scales.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        q.n_w_scales = self.w_scales.shape[0]
        q.y_scale, q.y_zero_point = self.y_scale, self.y_zero_point
        return q

    def __repr__(self):
        return "Quant(x_scale=%g, x_zero_point=%d, w_scales=%s, y_scale=%g, y_zero_point=%d)" % (
            self.x_scale, self.x_zero_point, self.w_scales, self.y_scale, self.y_zero_point)


def _clamp(activation, out_min, out_max):
    if activation is None:
        lo, hi = out_min, out_max
    elif activation == "relu":
        lo, hi = 0.0, math.inf
    elif activation == "relu6":
        lo, hi = 0.0, 6.0
    elif isinstance(activation, (tuple, list)) and len(activation) == 2:
        lo, hi = activation
    else:
        raise ValueError("activation: None, 'relu', 'relu6' or (min, max), got %r" % (activation,))
    return float(lo), float(hi)


def _options(threads=0, algo="auto", isa="auto", measure=False, parallel_for=None, pool=None):
    o = L.Options()
    _lib.dlconv_options_init(ctypes.byref(o))
    try:
        o.algo = L.ALGOS[algo]
    except KeyError:
        raise ValueError("algo: one of %s, got %r" % (sorted(L.ALGOS), algo)) from None
    try:
        o.isa = L.ISAS[isa]
    except KeyError:
        raise ValueError("isa: one of %s, got %r" % (sorted(L.ISAS), isa)) from None
    if threads is None:
        threads = 0
    o.num_threads = _i32(threads, "threads")
    o.flags = L.PLAN_MEASURE if measure else 0
    if parallel_for is not None:
        # a C function pointer (int) of type dlconv_parallel_for_fn, and its pool (int or None)
        o.parallel_for = int(parallel_for)
        o.pool = int(pool) if pool else None
    return o


def _i32(v, name):
    """An int that fits the C API's int32_t (ctypes would wrap a larger one silently)."""
    try:
        i = int(v)
    except (TypeError, ValueError):
        raise TypeError("%s: an integer, got %r" % (name, v)) from None
    if not -2**31 <= i < 2**31:
        raise ValueError("%s = %d does not fit int32" % (name, i))
    return i


def _pair(v, name):
    if not hasattr(v, "__len__"):
        return _i32(v, name), _i32(v, name)
    v = tuple(_i32(a, name) for a in v)
    if len(v) != 2:
        raise ValueError("%s: an int or a pair, got %r" % (name, v))
    return v


def _padding4(p):
    """int, (h, w) or (top, bottom, left, right)."""
    if not hasattr(p, "__len__"):
        p = _i32(p, "padding")
        return p, p, p, p
    p = tuple(_i32(a, "padding") for a in p)
    if len(p) == 2:
        return p[0], p[0], p[1], p[1]
    if len(p) == 4:
        return p
    raise ValueError("padding: an int, (h, w) or (top, bottom, left, right), got %r" % (p,))


def _dtype_of(weight_dtype, dtype, quant):
    if dtype is not None:
        if dtype not in NP_DTYPES:
            raise ValueError("dtype: one of 'f32', 'f16', 'u8', 's8', got %r" % (dtype,))
        return dtype
    wd = np.dtype(weight_dtype)
    if wd == np.float32 or (wd == np.float64 and quant is None):
        return "f32"
    if wd == np.float16:
        return "f16"
    if wd == np.int8:
        return "u8"
    raise TypeError("cannot tell the dtype from weights of type %s; pass dtype=" % wd)


def _as_array(a, dtype, name, copy_ok=True):
    """A C-contiguous array of exactly this dtype. Buffers of bytes are reinterpreted; other
    dtypes are rejected; non-contiguous arrays are copied."""
    arr = np.asarray(a)  # numpy arrays, buffer-protocol objects, lists
    if arr.dtype != dtype:
        if arr.dtype.kind == "O" or arr.ndim == 0 and arr.dtype.kind not in "fiub":
            raise TypeError("%s: not an array or a buffer (%s)" % (name, type(a).__name__))
        if (arr.dtype in (np.uint8, np.int8) and dtype.itemsize > 1 and arr.ndim == 1
                and arr.flags.c_contiguous and arr.nbytes % dtype.itemsize == 0):
            arr = arr.view(dtype)  # raw bytes from a buffer
        elif not isinstance(a, np.ndarray) and isinstance(a, (list, tuple)):
            arr = np.asarray(a, dtype=dtype)
        else:
            raise TypeError("%s has dtype %s, the plan wants %s (convert with .astype(np.%s))"
                            % (name, arr.dtype, dtype, dtype.name))
    if not arr.flags.c_contiguous or not arr.flags.aligned:
        if not copy_ok:
            raise ValueError("%s must be C-contiguous and aligned to its element size" % name)
        arr = np.array(arr, order="C", copy=True)
    return arr


def _check_shape(arr, shape, name):
    if arr.shape != tuple(shape):
        if arr.ndim == 1 and arr.size == int(np.prod(shape)):
            return arr.reshape(shape)
        raise ValueError("%s has shape %s, the plan wants %s" % (name, arr.shape, tuple(shape)))
    return arr


# ---------------------------------------------------------------------------------------------
# plans

class Plan:
    """A planned layer: weights packed once, executed many times (dlconv_plan)."""

    _handle = None

    def __init__(self):
        raise TypeError("use Conv2dPlan or DensePlan")

    def _finish(self):
        self._ws_local = threading.local()
        self._ws_size = int(_lib.dlconv_plan_workspace_size(self._handle))
        self._x_dtype = NP_DTYPES[self.dtype]

    @property
    def info(self):
        """The algorithm, ISA, kernel, workspace, packed weight bytes, density and MACs chosen."""
        pi = L.PlanInfo()
        _check(_lib.dlconv_plan_query(self._handle, ctypes.byref(pi)), "dlconv_plan_query")
        inv = lambda d, v: next((k for k, x in d.items() if x == v), v)
        return {"algo": inv(L.ALGOS, pi.algo), "isa": inv(L.ISAS, pi.isa), "dtype": inv(L.DTYPES, pi.dtype),
                "workspace_bytes": pi.workspace_bytes, "packed_weight_bytes": pi.packed_weight_bytes,
                "weight_density": pi.weight_density, "macs": pi.macs,
                "kernel": pi.kernel.decode("utf-8", "replace")}

    @property
    def kernel(self):
        return self.info["kernel"]

    @property
    def workspace_size(self):
        return self._ws_size

    @property
    def handle(self):
        """The dlconv_plan pointer (int), for calling the C API directly."""
        return self._handle

    def _workspace(self):
        if self._ws_size == 0:
            return None
        ws = getattr(self._ws_local, "ptr", None)
        if ws is None:
            buf = np.empty(self._ws_size + 64, dtype=np.uint8)
            ws = (buf.ctypes.data + 63) & ~63
            self._ws_local.buf, self._ws_local.ptr = buf, ws
        return ws

    def execute(self, x, out=None):
        """y = layer(x). x: a numpy array or any buffer of the plan's input shape and dtype
        (non-contiguous arrays are copied); out: an optional C-contiguous, writable array of the
        output shape and dtype. Returns out (allocated when not given)."""
        if self._handle is None:
            raise ValueError("plan is closed")
        xa, ya = _io(x, out, self.input_shape, self.output_shape, self.dtype)
        _check(_lib.dlconv_execute(self._handle, xa.ctypes.data, ya.ctypes.data, self._workspace()),
               "dlconv_execute")
        return ya if out is None or not isinstance(out, np.ndarray) else out

    __call__ = execute

    def execute_ptr(self, x, y, workspace=None):
        """Raw addresses (ints): x, y and an optional workspace of workspace_size bytes,
        64-byte aligned (None: a buffer this plan keeps per thread)."""
        if self._handle is None:
            raise ValueError("plan is closed")
        _check(_lib.dlconv_execute(self._handle, x, y, workspace if workspace else self._workspace()),
               "dlconv_execute")

    def close(self):
        h, self._handle = self._handle, None
        if h is not None and _lib is not None:
            _lib.dlconv_plan_destroy(h)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        if self._handle is None:
            return "<%s closed>" % type(self).__name__
        i = self.info
        return "<%s %s %s -> %s, %s/%s, kernel %s>" % (type(self).__name__, self.dtype, self.input_shape,
                                                       self.output_shape, i["algo"], i["isa"], i["kernel"])


def _conv_desc(input_shape, weight_shape, stride, padding, dilation, groups, layout, dtype, lo, hi):
    if layout not in L.LAYOUTS:
        raise ValueError("layout: 'nchw' or 'nhwc', got %r" % (layout,))
    input_shape = tuple(_i32(v, "input_shape") for v in input_shape)
    if len(input_shape) != 4:
        raise ValueError("input_shape: 4 dimensions (%s), got %r" % (layout.upper(), input_shape))
    if len(weight_shape) != 4:
        raise ValueError("weight: 4 dimensions (OIHW), got shape %s" % (tuple(weight_shape),))
    if layout == "nchw":
        n, c, h, w = input_shape
    else:
        n, h, w, c = input_shape
    co, cig, kh, kw = (_i32(v, "weight shape") for v in weight_shape)
    if groups < 1 or c % groups or cig * groups != c:
        raise ValueError("weight shape %s does not fit %d input channels in %d groups (OIHW: "
                         "c_out x c_in/groups x k_h x k_w)" % (tuple(weight_shape), c, groups))
    d = L.Conv2dDesc()
    _lib.dlconv_conv2d_desc_init(ctypes.byref(d), n, c, h, w, co, kh, kw)
    d.stride_h, d.stride_w = _pair(stride, "stride")
    d.dilation_h, d.dilation_w = _pair(dilation, "dilation")
    d.pad_top, d.pad_bottom, d.pad_left, d.pad_right = _padding4(padding)
    d.groups = _i32(groups, "groups")
    d.dtype = L.DTYPES[dtype]
    d.layout = L.LAYOUTS[layout]
    d.out_min, d.out_max = lo, hi
    oh, ow = ctypes.c_int32(), ctypes.c_int32()
    _check(_lib.dlconv_conv2d_output_shape(ctypes.byref(d), ctypes.byref(oh), ctypes.byref(ow)),
           "dlconv_conv2d_output_shape")
    out_shape = (n, co, oh.value, ow.value) if layout == "nchw" else (n, oh.value, ow.value, co)
    return d, input_shape, out_shape


def _weights(weight, bias, dtype, c_out, quant):
    w0 = np.asarray(weight)
    if w0.dtype.kind not in "fiu":
        raise TypeError("weight: a numeric array expected, got %s" % w0.dtype)
    if dtype in ("u8", "s8") and w0.dtype != np.int8:
        raise TypeError("weight: %s plans take int8 weights, got %s" % (dtype, w0.dtype))
    wa = np.ascontiguousarray(w0, dtype=_W_DTYPES[dtype])
    ba = None
    if bias is not None:
        ba = np.ascontiguousarray(np.asarray(bias), dtype=_BIAS_DTYPES[dtype]).reshape(-1)
        if ba.shape[0] != c_out:
            raise ValueError("bias has %d values, the layer has %d output channels" % (ba.shape[0], c_out))
    if dtype in ("u8", "s8"):
        if quant is None:
            raise ValueError("dtype %s needs quant=dlconv.Quant(...)" % dtype)
        if not isinstance(quant, Quant):
            raise TypeError("quant: a dlconv.Quant")
    elif quant is not None:
        raise ValueError("quant is for u8/s8 plans only")
    return wa, ba


class Conv2dPlan(Plan):
    """A 2-D convolution, planned once (dlconv_plan_conv2d).

    weight: OIHW (c_out, c_in/groups, k_h, k_w) whatever the layout; bias: c_out values or None.
    input_shape: the shape of x as laid out, (n, c, h, w) for "nchw" or (n, h, w, c) for "nhwc".
    dtype: "f32", "f16" (numpy float16), "u8" or "s8" (activations; weights int8, bias int32,
    quant=dlconv.Quant(...)); by default from the weights (int8 weights: "u8").
    padding: int, (h, w) or (top, bottom, left, right). activation: None, "relu", "relu6" or
    (min, max): the fused clamp after the bias. threads: 0 = the library's default.
    """

    def __init__(self, weight, bias=None, *, input_shape, stride=1, padding=0, dilation=1, groups=1,
                 layout="nchw", dtype=None, activation=None, out_min=-math.inf, out_max=math.inf,
                 quant=None, threads=0, algo="auto", isa="auto", measure=False, parallel_for=None, pool=None):
        self._handle = None
        warr = np.asarray(weight)
        dtype = _dtype_of(warr.dtype, dtype, quant)
        lo, hi = _clamp(activation, out_min, out_max)
        d, self.input_shape, self.output_shape = _conv_desc(
            input_shape, warr.shape, stride, padding, dilation, int(groups), layout, dtype, lo, hi)
        wa, ba = _weights(weight, bias, dtype, d.c_out, quant)
        self.dtype, self.layout, self.desc = dtype, layout, d
        opt = _options(threads, algo, isa, measure, parallel_for, pool)
        h = ctypes.c_void_p()
        q = quant._c() if quant is not None else None
        _check(_lib.dlconv_plan_conv2d(ctypes.byref(h), ctypes.byref(d), wa.ctypes.data,
                                       None if ba is None else ba.ctypes.data,
                                       None if q is None else ctypes.byref(q), ctypes.byref(opt)),
               "dlconv_plan_conv2d")
        self._handle = h.value
        self._finish()


class DensePlan(Plan):
    """A dense (fully connected) layer y = x w^T + b, planned once (dlconv_plan_dense).

    weight: (out_features, in_features), row-major; x: (batch, in_features); y: (batch, out_features).
    dtype, activation, quant and the options as for Conv2dPlan."""

    def __init__(self, weight, bias=None, *, batch=1, dtype=None, activation=None, out_min=-math.inf,
                 out_max=math.inf, quant=None, threads=0, algo="auto", isa="auto", measure=False,
                 parallel_for=None, pool=None):
        self._handle = None
        warr = np.asarray(weight)
        if warr.ndim != 2:
            raise ValueError("weight: 2 dimensions (out_features, in_features), got shape %s" % (warr.shape,))
        dtype = _dtype_of(warr.dtype, dtype, quant)
        lo, hi = _clamp(activation, out_min, out_max)
        out_f, in_f = warr.shape
        wa, ba = _weights(weight, bias, dtype, out_f, quant)
        self.dtype, self.layout = dtype, None
        batch = _i32(batch, "batch")
        self.input_shape, self.output_shape = (batch, in_f), (batch, out_f)
        opt = _options(threads, algo, isa, measure, parallel_for, pool)
        h = ctypes.c_void_p()
        q = quant._c() if quant is not None else None
        _check(_lib.dlconv_plan_dense(ctypes.byref(h), batch, _i32(in_f, "in_features"), _i32(out_f, "out_features"), L.DTYPES[dtype], wa.ctypes.data,
                                      None if ba is None else ba.ctypes.data, lo, hi,
                                      None if q is None else ctypes.byref(q), ctypes.byref(opt)),
               "dlconv_plan_dense")
        self._handle = h.value
        self._finish()


# ---------------------------------------------------------------------------------------------
# one-shot calls

def _io(x, out, x_shape, y_shape, dtype):
    xa = _check_shape(_as_array(x, NP_DTYPES[dtype], "x"), x_shape, "x")
    if out is None:
        return xa, np.empty(y_shape, dtype=NP_DTYPES[dtype])
    ya = _as_array(out, NP_DTYPES[dtype], "out", copy_ok=False)
    if not ya.flags.writeable:
        raise ValueError("out is read-only")
    ya = _check_shape(ya, y_shape, "out")
    if np.may_share_memory(xa, ya):
        raise ValueError("x and out overlap")
    return xa, ya


def conv2d(x, weight, bias=None, *, stride=1, padding=0, dilation=1, groups=1, layout="nchw", dtype=None,
           activation=None, out_min=-math.inf, out_max=math.inf, quant=None, out=None, threads=0,
           algo="auto", isa="auto"):
    """One convolution (dlconv_conv2d: plan, execute, destroy); arguments as for Conv2dPlan, the
    input shape taken from x. Returns out (allocated when not given)."""
    xarr = np.asarray(x)
    if xarr.ndim != 4:
        raise ValueError("x: 4 dimensions (%s), got shape %s" % (str(layout).upper(), xarr.shape))
    warr = np.asarray(weight)
    dtype = _dtype_of(warr.dtype, dtype, quant)
    lo, hi = _clamp(activation, out_min, out_max)
    d, x_shape, y_shape = _conv_desc(xarr.shape, warr.shape, stride, padding, dilation, int(groups), layout,
                                     dtype, lo, hi)
    wa, ba = _weights(weight, bias, dtype, d.c_out, quant)
    xa, ya = _io(x, out, x_shape, y_shape, dtype)
    q = quant._c() if quant is not None else None
    opt = _options(threads, algo, isa)
    _check(_lib.dlconv_conv2d(ctypes.byref(d), xa.ctypes.data, wa.ctypes.data,
                              None if ba is None else ba.ctypes.data, ya.ctypes.data,
                              None if q is None else ctypes.byref(q), ctypes.byref(opt)), "dlconv_conv2d")
    return ya if out is None or not isinstance(out, np.ndarray) else out


def dense(x, weight, bias=None, *, dtype=None, activation=None, out_min=-math.inf, out_max=math.inf,
          quant=None, out=None, threads=0, algo="auto", isa="auto"):
    """One dense layer (dlconv_dense): x (batch, in_features) -> (batch, out_features)."""
    xarr = np.asarray(x)
    warr = np.asarray(weight)
    if xarr.ndim != 2 or warr.ndim != 2:
        raise ValueError("x (batch, in_features) and weight (out_features, in_features): 2 dimensions each, "
                         "got %s and %s" % (xarr.shape, warr.shape))
    dtype = _dtype_of(warr.dtype, dtype, quant)
    lo, hi = _clamp(activation, out_min, out_max)
    out_f, in_f = warr.shape
    wa, ba = _weights(weight, bias, dtype, out_f, quant)
    xa, ya = _io(x, out, (xarr.shape[0], in_f), (xarr.shape[0], out_f), dtype)
    q = quant._c() if quant is not None else None
    opt = _options(threads, algo, isa)
    _check(_lib.dlconv_dense(xarr.shape[0], in_f, out_f, L.DTYPES[dtype], xa.ctypes.data, wa.ctypes.data,
                             None if ba is None else ba.ctypes.data, ya.ctypes.data, lo, hi,
                             None if q is None else ctypes.byref(q), ctypes.byref(opt)), "dlconv_dense")
    return ya if out is None or not isinstance(out, np.ndarray) else out
