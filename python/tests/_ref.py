"""Double-precision references for the tests."""
import numpy as np


def conv2d_nchw(x, w, b, stride=(1, 1), pad=(0, 0, 0, 0), dil=(1, 1), groups=1):
    x = np.asarray(x, dtype=np.float64)
    w = np.asarray(w, dtype=np.float64)
    n, c, h, wd = x.shape
    co, cig, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[1]), (pad[2], pad[3])))
    oh = (h + pad[0] + pad[1] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + pad[2] + pad[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    y = np.zeros((n, co, oh, ow))
    cog = co // groups
    for g in range(groups):
        xs = xp[:, g * cig:(g + 1) * cig]
        for ky in range(kh):
            for kx in range(kw):
                patch = xs[:, :, ky * dil[0]:ky * dil[0] + stride[0] * (oh - 1) + 1:stride[0],
                           kx * dil[1]:kx * dil[1] + stride[1] * (ow - 1) + 1:stride[1]]
                y[:, g * cog:(g + 1) * cog] += np.einsum("nchw,oc->nohw", patch, w[g * cog:(g + 1) * cog, :, ky, kx])
    if b is not None:
        y += np.asarray(b, dtype=np.float64).reshape(1, -1, 1, 1)
    return y


def requant(acc, bias, x_scale, w_scales, y_scale, y_zp, out_min, out_max, out_dtype):
    """include/dlconv.h's int8 formula, channel axis 1."""
    acc = acc.astype(np.int64)
    if bias is not None:
        acc = acc + np.asarray(bias, dtype=np.int64).reshape(1, -1, *([1] * (acc.ndim - 2)))
    ws = np.asarray(w_scales, dtype=np.float32).astype(np.float64)
    ws = np.broadcast_to(ws, (acc.shape[1],)).reshape(1, -1, *([1] * (acc.ndim - 2)))
    mult = np.float64(np.float32(x_scale)) * ws / np.float64(np.float32(y_scale))
    v = acc.astype(np.float64) * mult
    v = np.minimum(np.maximum(v, np.float64(np.float32(out_min)) / np.float64(np.float32(y_scale))),
                   np.float64(np.float32(out_max)) / np.float64(np.float32(y_scale)))
    info = np.iinfo(out_dtype)
    return np.clip(np.rint(v) + y_zp, info.min, info.max).astype(out_dtype)
