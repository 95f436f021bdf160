"""ctypes mirror of include/dlconv.h and the loading of the shared library.

The structures below must match the header field for field; python/tests/test_layout.py
compares their sizes and offsets with a compiled C program and checks each field by a
known answer from the library itself.
"""
import ctypes
import ctypes.util
import os

# enums (values from include/dlconv.h; C enums are int-sized)
c_enum = ctypes.c_int

STATUS_NAMES = {0: "DLCONV_OK", 1: "DLCONV_ERR_INVALID_ARG", 2: "DLCONV_ERR_UNSUPPORTED",
                3: "DLCONV_ERR_OUT_OF_MEMORY", 4: "DLCONV_ERR_DEVICE", 5: "DLCONV_ERR_IO",
                6: "DLCONV_ERR_INTERNAL"}
DTYPES = {"f32": 0, "f16": 1, "u8": 2, "s8": 3, "s32": 4}
LAYOUTS = {"nchw": 0, "nhwc": 1}
ALGOS = {"auto": 0, "direct": 1, "im2col_gemm": 2, "spatial_pack": 3, "gspc": 4, "sparse_csr": 5}
ISAS = {"auto": 0, "generic": 1, "avx2": 2, "avx512": 3, "neon": 4, "cuda": 5}
PLAN_MEASURE = 1

TASK_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t)
PARALLEL_FOR_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, TASK_FN, ctypes.c_void_p, ctypes.c_size_t)


class Conv2dDesc(ctypes.Structure):
    _fields_ = [("n", ctypes.c_int32), ("c_in", ctypes.c_int32), ("h_in", ctypes.c_int32),
                ("w_in", ctypes.c_int32), ("c_out", ctypes.c_int32), ("k_h", ctypes.c_int32),
                ("k_w", ctypes.c_int32), ("stride_h", ctypes.c_int32), ("stride_w", ctypes.c_int32),
                ("dilation_h", ctypes.c_int32), ("dilation_w", ctypes.c_int32),
                ("pad_top", ctypes.c_int32), ("pad_bottom", ctypes.c_int32),
                ("pad_left", ctypes.c_int32), ("pad_right", ctypes.c_int32),
                ("groups", ctypes.c_int32), ("dtype", c_enum), ("layout", c_enum),
                ("out_min", ctypes.c_float), ("out_max", ctypes.c_float)]


class Quant(ctypes.Structure):
    _fields_ = [("x_scale", ctypes.c_float), ("x_zero_point", ctypes.c_int32),
                ("w_scales", ctypes.POINTER(ctypes.c_float)), ("n_w_scales", ctypes.c_int32),
                ("y_scale", ctypes.c_float), ("y_zero_point", ctypes.c_int32)]


class Options(ctypes.Structure):
    _fields_ = [("algo", c_enum), ("isa", c_enum), ("num_threads", ctypes.c_int32),
                ("flags", ctypes.c_uint32), ("parallel_for", ctypes.c_void_p),
                ("pool", ctypes.c_void_p), ("cuda_stream", ctypes.c_void_p)]


class PlanInfo(ctypes.Structure):
    _fields_ = [("algo", c_enum), ("isa", c_enum), ("dtype", c_enum),
                ("workspace_bytes", ctypes.c_size_t), ("packed_weight_bytes", ctypes.c_size_t),
                ("weight_density", ctypes.c_double), ("macs", ctypes.c_int64),
                ("kernel", ctypes.c_char * 64)]


class Csr(ctypes.Structure):
    _fields_ = [("rows", ctypes.c_int32), ("cols", ctypes.c_int32), ("nnz", ctypes.c_int32),
                ("values", ctypes.c_void_p), ("col_indices", ctypes.c_void_p),
                ("row_ptr", ctypes.c_void_p)]


STRUCTS = {"dlconv_conv2d_desc": Conv2dDesc, "dlconv_quant": Quant, "dlconv_options": Options,
           "dlconv_plan_info": PlanInfo, "dlconv_csr": Csr}

_P = ctypes.c_void_p
_S = ctypes.c_int  # dlconv_status
_I = ctypes.c_int32
_PROTOS = {
    "dlconv_version": (ctypes.c_char_p, []),
    "dlconv_status_string": (ctypes.c_char_p, [_S]),
    "dlconv_last_error": (ctypes.c_char_p, []),
    "dlconv_isa_available": (ctypes.c_int, [c_enum]),
    "dlconv_conv2d_desc_init": (None, [ctypes.POINTER(Conv2dDesc), _I, _I, _I, _I, _I, _I, _I]),
    "dlconv_conv2d_output_shape": (_S, [ctypes.POINTER(Conv2dDesc), ctypes.POINTER(_I), ctypes.POINTER(_I)]),
    "dlconv_options_init": (None, [ctypes.POINTER(Options)]),
    "dlconv_plan_conv2d": (_S, [ctypes.POINTER(_P), ctypes.POINTER(Conv2dDesc), _P, _P,
                                ctypes.POINTER(Quant), ctypes.POINTER(Options)]),
    "dlconv_plan_conv2d_csr": (_S, [ctypes.POINTER(_P), ctypes.POINTER(Conv2dDesc), ctypes.POINTER(Csr),
                                    _P, ctypes.POINTER(Quant), ctypes.POINTER(Options)]),
    "dlconv_plan_dense": (_S, [ctypes.POINTER(_P), _I, _I, _I, c_enum, _P, _P, ctypes.c_float,
                               ctypes.c_float, ctypes.POINTER(Quant), ctypes.POINTER(Options)]),
    "dlconv_plan_workspace_size": (ctypes.c_size_t, [_P]),
    "dlconv_execute": (_S, [_P, _P, _P, _P]),
    "dlconv_plan_query": (_S, [_P, ctypes.POINTER(PlanInfo)]),
    "dlconv_plan_destroy": (None, [_P]),
    "dlconv_conv2d": (_S, [ctypes.POINTER(Conv2dDesc), _P, _P, _P, _P, ctypes.POINTER(Quant),
                           ctypes.POINTER(Options)]),
    "dlconv_dense": (_S, [_I, _I, _I, c_enum, _P, _P, _P, _P, ctypes.c_float, ctypes.c_float,
                          ctypes.POINTER(Quant), ctypes.POINTER(Options)]),
    "dlconv_wisdom_export": (_S, [ctypes.c_char_p]),
    "dlconv_wisdom_import": (_S, [ctypes.c_char_p]),
    "dlconv_wisdom_forget": (None, []),
}


def _candidates():
    """Where the library is looked for, in order (see README, "Python API")."""
    env = os.environ.get("DLCONV_LIBRARY")
    if env:
        return [env], True
    here = os.path.dirname(os.path.abspath(__file__))
    out = []
    own = os.path.join(here, "_lib")
    if os.path.isdir(own):
        out += sorted(os.path.join(own, f) for f in os.listdir(own) if f.startswith("libdlconv.so")
                      or f.endswith(".dylib") or f.endswith(".dll"))
    found = ctypes.util.find_library("dlconv")
    if found:
        out.append(found)
    out += ["libdlconv.so.0", "libdlconv.so"]
    # a meson build directory of the source tree this package sits in (python/dlconv -> ../../build*)
    root = os.path.dirname(os.path.dirname(here))
    if os.path.isfile(os.path.join(root, "meson.build")):
        for d in sorted(os.listdir(root)):
            p = os.path.join(root, d, "libdlconv.so")
            if d.startswith("build") and os.path.exists(p):
                out.append(p)
    return out, False


def load():
    names, from_env = _candidates()
    errors = []
    for name in names:
        try:
            lib = ctypes.CDLL(name)
        except OSError as e:
            errors.append("%s: %s" % (name, e))
            if from_env:
                break
            continue
        for fn, (res, args) in _PROTOS.items():
            f = getattr(lib, fn)
            f.restype = res
            f.argtypes = args
        return lib, name
    raise OSError("libdlconv not found (set DLCONV_LIBRARY to the path of libdlconv.so); tried:\n  "
                  + "\n  ".join(errors))


lib, path = load()
