"""Per-pixel regressors of ``bfast_breaks`` / ``bfast_monitor`` on device cubes: covariates
given as device arrays (``pyopencl.array.Array`` shaped like ``y`` plus a last axis of q, or a
dict of device arrays shaped like ``y``, next to which per-date numpy columns may stand) centred,
scaled and laid out for the kernels on the device (``templates/bfast/pixel_regressors.cl.mako``),
with no host transfer, map or wait.

The columns are those of a host cube (``clts.bfast.regressors``): per pixel and covariate the
centre (mean over its non-NaN dates) and scale (largest distance from it, 1 for a constant
column), the scaled column, NaN read as 0 with that value of ``y`` missing. The cube the kernels
then read is a float copy of ``y`` with those values (and ``nodata``) NaN.
"""
from __future__ import annotations

import numpy as np

from ..runtime import launch, round_up
from ..runtime.memory import c_contiguous
from .regressors import Terms, model_terms


def is_device(a) -> bool:
    import pyopencl.array as cla
    return isinstance(a, cla.Array)


def _check_array(a, name, shape, what):
    if tuple(a.shape) != tuple(shape):
        raise ValueError(f"{name}: a device array of per-pixel regressors is shaped {what} "
                         f"{tuple(shape)}, got {tuple(a.shape)}")
    if not c_contiguous(a):
        raise ValueError(f"{name}: a device array of regressors must be C-contiguous")
    if a.dtype.kind not in "fiu" or a.dtype.itemsize > 8 or a.dtype == np.float16:
        raise TypeError(f"{name}: regressors must be real numbers (float32 / float64 / "
                        f"integers), got dtype {a.dtype}")


def device_terms(formula, order, trend, regressors, y_shape):
    """The :class:`Terms` of per-pixel regressors given as device arrays on a device cube of
    shape ``y_shape`` (time first), its ``device`` the column sources in the model's order:
    ``(array, offset, date stride, pixel stride)`` in elements (pixel stride 0: a numpy column
    shared by the pixels). None when ``regressors`` holds no device array."""
    N = int(y_shape[0])
    M = int(np.prod(y_shape[1:], dtype=np.int64))
    if is_device(regressors):
        q = int(regressors.shape[-1]) if regressors.ndim else 0
        _check_array(regressors, "regressors", tuple(y_shape) + (q,),
                     "like y plus a last axis of q")
        off = int(regressors.offset) // regressors.dtype.itemsize
        names = [f"x{j + 1}" for j in range(q)]
        srcs = {nm: (regressors, off + j, M * q, q) for j, nm in enumerate(names)}
    elif isinstance(regressors, dict) and any(is_device(v) for v in regressors.values()):
        srcs = {}
        for nm, v in regressors.items():
            if is_device(v):
                _check_array(v, f"regressors[{nm!r}]", tuple(y_shape), "like y")
                srcs[nm] = (v, int(v.offset) // v.dtype.itemsize, M, 1)
            else:
                c = np.asarray(v)
                if c.ndim != 1 or c.shape[0] != N:
                    raise ValueError(f"regressors[{nm!r}]: next to device arrays a numpy "
                                     f"regressor holds one value per date ({N}), got shape "
                                     f"{c.shape}")
                if c.dtype.kind not in "fiu":
                    raise TypeError(f"regressors[{nm!r}] must be real numbers, got dtype "
                                    f"{c.dtype}")
                if np.isinf(c).any():
                    raise ValueError("regressors must be finite or NaN (NaN: that value of y "
                                     "is missing)")
                srcs[nm] = (np.asarray(c, np.float64), 0, 1, 0)
        names = list(regressors)
    else:
        return None
    # the formula's terms over stand-in columns (one per name, never constant)
    stand = {nm: np.arange(N, dtype=np.float64) for nm in names}
    t = model_terms(formula, order, trend, stand if names else None, N)
    if not t.names:             # the formula names none of them
        return t
    terms = Terms(t.order, t.trend, list(t.names))
    terms.device = [srcs[nm] for nm in t.names]
    return terms


def prepare(dev, y, nodata, terms, dtype):
    """(``ym`` [N, M] ``dtype``: ``y`` with NaN where missing, ``xp`` [(N + 2) q, M] in the
    device's float64 where it has it (``api.pixel_regressors``' layout), arrays to keep)."""
    from .device import (acc_dtype, c_type, constant, element_offset, nodata_value,
                         preg_program, program as dprog, temp)
    N = int(y.shape[0])
    M = int(np.prod(y.shape[1:], dtype=np.int64))
    q = len(terms.device)
    acc = acc_dtype(dev, dtype)
    real = c_type(dtype)
    ym = temp(dev, (N, M), dtype)
    xp = temp(dev, ((N + 2) * q, M), acc)
    keep = [y, ym, xp]
    if M == 0 or N == 0:
        return ym, xp, keep
    yf = y.reshape(N, M) if y.ndim != 2 else y
    g = dprog(dev, real=real, in_type=c_type(y.dtype),
              has_nodata=nodata is not None).kernel("gather_real")
    launch(dev, g, (round_up(M, 64), N), (64, 1), yf.base_data, np.int64(element_offset(yf)),
           np.int32(M), np.int32(0), np.int32(M), np.int32(M),
           dtype.type(nodata_value(y.dtype, nodata)), ym.data)
    for j, (src, off, st, sp) in enumerate(terms.device):
        if not is_device(src):
            src = constant(dev, "bfast.shared_regressor", src, np.float64)
        keep.append(src)
        prg = preg_program(dev, real, c_type(acc), src.dtype, acc)
        args = (src.base_data, np.int64(off), np.int64(st), np.int64(sp), np.int32(M),
                np.int32(N), np.int32(q), np.int32(j), xp.data, ym.data)
        launch(dev, prg.kernel("preg_stats"), round_up(M, 64), 64, *args)
        launch(dev, prg.kernel("preg_scale"), (round_up(M, 64), N), (64, 1), *args)
    return ym, xp, keep
