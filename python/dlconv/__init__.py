"""libdlconv from Python: convolution and dense layers planned once and executed many times.

    import numpy as np, dlconv
    plan = dlconv.Conv2dPlan(w, b, input_shape=x.shape, padding=1, activation="relu")
    y = plan(x)                       # numpy arrays or any buffer; plan.kernel names the kernel
    y = dlconv.conv2d(x, w, b, padding=1)   # one shot
    dlconv.info()                     # version, library path, instruction sets

dlconv.torch.convert(model) puts libdlconv under a PyTorch model (needs torch; see README).
"""
from .core import (Conv2dPlan, DeviceError, DensePlan, Error, InternalError, InvalidArgument, OutOfMemory, Plan,
                   Quant, Unsupported, WisdomIOError, conv2d, dense, info, isa_available, version, wisdom_export,
                   wisdom_forget, wisdom_import)

__version__ = "0.1.0"
__all__ = ["Conv2dPlan", "DensePlan", "Plan", "Quant", "Error", "InvalidArgument", "Unsupported", "OutOfMemory",
           "DeviceError", "WisdomIOError", "InternalError", "conv2d", "dense", "info", "isa_available", "version",
           "wisdom_export", "wisdom_import", "wisdom_forget"]
