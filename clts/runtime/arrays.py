"""Input arrays made safe for the device: one place that turns whatever numpy allows (Fortran
order, strided views, negative strides, big-endian, integer / bool / float16 data, pandas and
xarray objects) into the C-contiguous native-byte-order float arrays the kernels read.

Outputs are always allocated by the algorithms as fresh C-contiguous arrays (``np.empty(shape,
dtype)``, never ``empty_like`` of an input, which would inherit a Fortran layout that device
reads fill with C-ordered bytes).
"""
from __future__ import annotations

import numpy as np

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def values_of(x):
    """The numpy values of ``x``: pandas / xarray objects give their ``.values``."""
    if hasattr(x, "to_numpy") and not isinstance(x, np.ndarray):
        x = x.to_numpy()
    elif hasattr(x, "values") and hasattr(x, "dims") and not isinstance(x, np.ndarray):
        x = x.values
    return np.asarray(x)


def native(a: np.ndarray) -> np.ndarray:
    """``a`` with its dtype in the machine's byte order (a converted copy when it was not)."""
    if a.dtype.byteorder not in ("=", "|") and a.dtype != a.dtype.newbyteorder("="):
        return a.astype(a.dtype.newbyteorder("="))
    return a


def float_dtype_of(a: np.ndarray, name: str, *, default=np.float64) -> np.dtype:
    """The computation dtype for real data ``a``: float32 stays float32, float64 stays float64,
    float16 computes in float32, integers and bools in ``default``. Anything else (complex,
    strings, objects, datetimes) is a ``TypeError`` naming ``name``."""
    dt = a.dtype
    if dt.kind == "f":
        if dt.itemsize <= 4:
            return np.dtype(np.float32)
        if dt.itemsize == 8:
            return np.dtype(np.float64)
        raise TypeError(f"{name} has dtype {dt}; float32 or float64 data are computed "
                        "(convert long double first)")
    if dt.kind in "biu":
        return np.dtype(default)
    raise TypeError(f"{name} must hold real numbers (float, integer or bool), got dtype {dt}")


def float_array(x, name: str, *, dtype=None, default=np.float64) -> np.ndarray:
    """``x`` as a C-contiguous native-byte-order float32 / float64 array (a view when it already
    is one). ``dtype`` forces the float type; otherwise see :func:`float_dtype_of`."""
    a = values_of(x)
    dt = float_dtype_of(a, name, default=default) if dtype is None else np.dtype(dtype)
    if dt not in FLOATS:
        raise TypeError(f"{name}: computation dtype must be float32 or float64, got {dt}")
    if a.ndim and not (a.dtype == dt and a.flags.c_contiguous):
        # a copy (another layout, byte order or type): from the pool of dropped arrays when
        # large (``memory.pooled_empty``: new pages each call cost a fault per page)
        from .memory import pooled_empty
        p = pooled_empty(a.shape, dt)
        if p is not None:
            np.copyto(p, a, casting="unsafe")
            return p
    return np.ascontiguousarray(a, dtype=dt)


def c_array(a: np.ndarray) -> np.ndarray:
    """``a`` C-contiguous and in native byte order, its dtype kind kept."""
    return np.ascontiguousarray(native(np.asarray(a)))
