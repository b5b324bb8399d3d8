"""``out=`` of the numpy calls: the caller's result arrays, checked before any work.

``clts.stl``, ``clts.bfast_monitor`` and ``clts.matrix_profile`` take ``out=`` as a dict of
numpy arrays keyed by result attribute (any subset of the components the call produces) or an
earlier result of the same function (its numpy components; "the results of an earlier call will
do", as ``clts.ocean``'s tuples). :func:`out_arrays` checks them all before the call computes
anything: a numpy array (TypeError), the result's shape (ValueError) and dtype (TypeError;
either byte order), writeable (ValueError), no overlap with an input or with another ``out=``
array (ValueError: the kernels read the inputs while they write the results). Any layout is
written correctly: :func:`view_as` gives the view the kernels write in place where one exists
(C-ordered memory), else the call computes into its own array and copies it in
(:func:`deliver`).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .memory import pooled_empty


def out_arrays(out, specs: dict, inputs: dict, what: str) -> dict:
    """The caller's ``out=`` arrays by result name, checked against ``specs`` (name ->
    (shape, dtype) of the components this call returns) and ``inputs`` (name -> array that
    must not be overlapped). ``{}`` for ``out=None``."""
    if out is None:
        return {}
    if isinstance(out, Mapping):
        unknown = [k for k in out if k not in specs]
        if unknown:
            raise ValueError(f"{what}: out has no component {unknown[0]!r} in this call; it "
                             f"takes {', '.join(specs)}")
        given = {k: v for k, v in out.items() if v is not None}
    elif hasattr(out, "__dataclass_fields__"):
        given = {k: getattr(out, k) for k in specs if getattr(out, k, None) is not None}
    else:
        raise TypeError(f"{what}: out must be a dict of numpy arrays (keys {', '.join(specs)}) "
                        f"or an earlier result, not {type(out).__name__}")
    arrays = {}
    for key, a in given.items():
        shape, dtype = specs[key]
        name = f"out[{key!r}]"
        if not isinstance(a, np.ndarray):
            raise TypeError(f"{what}: {name} must be a numpy array, not {type(a).__name__} "
                            "(the result of a labelled input: pass its .to_numpy() / .values)")
        if a.shape != tuple(shape):
            raise ValueError(f"{what}: {name} must have shape {tuple(shape)}, got {a.shape}")
        if a.dtype.newbyteorder("=") != np.dtype(dtype):     # either byte order
            raise TypeError(f"{what}: {name} must have dtype {np.dtype(dtype)}, got {a.dtype}")
        if not a.flags.writeable:
            raise ValueError(f"{what}: {name} is read-only (flags.writeable is False); give a "
                             "writeable array")
        for iname, x in inputs.items():
            if isinstance(x, np.ndarray) and np.shares_memory(a, x):
                raise ValueError(f"{what}: {name} overlaps the input {iname}; give arrays of "
                                 "their own (two sets of results, used in turn, for a loop)")
        for other, b in arrays.items():
            if np.shares_memory(a, b):
                raise ValueError(f"{what}: {name} overlaps out[{other!r}]")
        arrays[key] = a
    return arrays


def overlaps(a, b) -> bool:
    """Whether ``a`` and ``b`` share memory: numpy arrays (``np.shares_memory``), or device
    arrays (``pyopencl.array.Array``) holding bytes of the same buffer."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return bool(np.shares_memory(a, b))
    ba, bb = getattr(a, "base_data", None), getattr(b, "base_data", None)
    return (ba is not None and bb is not None and ba.int_ptr == bb.int_ptr
            and a.offset < b.offset + b.nbytes and b.offset < a.offset + a.nbytes)


def view_as(a: np.ndarray | None, shape) -> np.ndarray | None:
    """A view of ``a`` with ``shape`` when one exists without a copy, else None."""
    if a is None or not a.dtype.isnative:      # byte-swapped: computed, then copied in
        return None
    shape = tuple(int(s) for s in shape)
    if a.shape == shape:
        return a
    v = a.view()
    try:
        v.shape = shape                  # refused (AttributeError) where a copy would be needed
    except AttributeError:
        return None
    return v


def deliver(dest: np.ndarray | None, result: np.ndarray) -> np.ndarray:
    """``result`` written into ``dest`` (any layout, same shape) unless it already is ``dest``'s
    memory; returns ``dest``, or ``result`` when no ``out=`` array was given."""
    if dest is None:
        return result
    if not (result is dest or (result.shape == dest.shape and result.strides == dest.strides
                               and result.ctypes.data == dest.ctypes.data)):
        np.copyto(dest, result.reshape(dest.shape))
    return dest


def in_input_layout(labels, a):
    """A result ``a`` (time last) in the input's layout (``labels.series``), a large one
    transposed into pooled memory (``memory.pooled_empty``) rather than new pages."""
    if labels.axis == a.ndim - 1:
        return labels.series(a)
    shape = np.moveaxis(a, -1, labels.axis).shape
    dest = pooled_empty(shape, a.dtype)
    if dest is None:
        return labels.series(a)
    np.copyto(np.moveaxis(dest, labels.axis, -1), a)
    return labels._wrap_series(dest)
