"""Input arrays made safe for the device: one place that turns whatever numpy allows (Fortran
order, strided views, negative strides, big-endian, integer / bool / float16 data, pandas and
xarray objects) into the C-contiguous native-byte-order float arrays the kernels read.

Outputs are always allocated by the algorithms as fresh C-contiguous arrays (``np.empty(shape,
dtype)``, never ``empty_like`` of an input, which would inherit a Fortran layout that device
reads fill with C-ordered bytes).
"""
from __future__ import annotations

import numpy as np

from .memory import c_contiguous

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


def as_rows(a):
    """``a`` (..., time) as a [series, time] view: ``a.reshape(-1, n)`` without its failure on
    an empty time axis (``reshape(-1, 0)`` cannot infer the -1), so that a series of no values
    reaches the function's own check (too few values) instead of a reshape error."""
    n = a.shape[-1]
    return a.reshape(int(np.prod(a.shape[:-1], dtype=np.int64)), n)


def c_array(a: np.ndarray) -> np.ndarray:
    """``a`` C-contiguous and in native byte order, its dtype kind kept."""
    return np.ascontiguousarray(native(np.asarray(a)))


# ------------------------------------------------------------------ device-resident arrays
#: ``pyopencl.array.Array`` once imported (``()``: pyopencl does not import)
_DEVICE_ARRAY = None


def is_device_array(x) -> bool:
    """Whether ``x`` is a ``pyopencl.array.Array`` (data already on a device). The class is
    looked up once: a device-array call asks this of each argument (~0.1 µs, against ~0.8
    with the import statement each time)."""
    global _DEVICE_ARRAY
    if _DEVICE_ARRAY is None:
        try:
            import pyopencl.array as cla
            _DEVICE_ARRAY = cla.Array
        except ImportError:  # pragma: no cover
            _DEVICE_ARRAY = ()
    return isinstance(x, _DEVICE_ARRAY)


def device_input(x, name: str, device, *, dtypes=FLOATS, ndim=None):
    """Check a ``pyopencl.array.Array`` argument of a public function: it lives in ``device``'s
    context, is C-contiguous, has one of ``dtypes`` and (when given) one of the dimensions in
    ``ndim`` (an int or a tuple). Nothing is copied or waited for; returns ``x``."""
    if x.context != device.context:
        raise ValueError(f"{name} is a device array of another OpenCL context than the "
                         f"device this call runs on ({device.info.name}); pass device= the "
                         "device that holds it, or copy it there")
    if not c_contiguous(x):
        raise ValueError(f"device array {name} must be C-contiguous (device arrays are not "
                         "copied to another layout: that would be a hidden device copy)")
    if np.dtype(x.dtype) not in tuple(np.dtype(d) for d in dtypes):
        names = ", ".join(str(np.dtype(d)) for d in dtypes)
        raise TypeError(f"device array {name} has dtype {x.dtype}; device arrays must be one of "
                        f"{names} (convert with .astype on the device)")
    if ndim is not None:
        ok = (ndim,) if isinstance(ndim, int) else tuple(ndim)
        if x.ndim not in ok:
            raise ValueError(f"device array {name} must have {' or '.join(map(str, ok))} "
                             f"dimension(s), got shape {tuple(x.shape)}")
    return x


def to_numpy(obj):
    """``obj`` with every device array in it brought to numpy: a ``pyopencl.array.Array``
    gives ``.get()``; a dict / list / tuple gives the same container of converted values; an
    object with a ``to_numpy()`` method (the result objects of clts) gives that; anything else
    comes back as it is. The one documented way to bring device results to the host."""
    if is_device_array(obj):
        from .threads import context_lock
        lock = context_lock(obj.context)
        if lock is None:
            return obj.get()
        with lock:                  # a driver that needs serial calls reads one at a time
            return obj.get()
    if hasattr(obj, "to_numpy") and callable(obj.to_numpy) and not isinstance(obj, np.ndarray) \
            and type(obj).__module__.startswith("clts"):
        return obj.to_numpy()
    if isinstance(obj, dict):
        return {k: to_numpy(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(to_numpy(v) for v in obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):     # a named tuple
        return type(obj)(*(to_numpy(v) for v in obj))
    return obj


def fields_to_numpy(result):
    """A shallow copy of a result object (dataclass or plain object) whose device-array
    attributes, and device arrays inside dict / list / tuple attributes, are numpy arrays:
    the body of the result classes' ``to_numpy()``."""
    import copy
    out = copy.copy(result)
    for k, v in vars(result).items():
        setattr(out, k, to_numpy(v))
    return out
