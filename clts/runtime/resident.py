"""Helpers of the device-array paths (inputs that are ``pyopencl.array.Array``, results that stay
on the device): row blocks of a device array that kernels can take as buffers, and diagnostics
that read the device only when first looked at.

Nothing here transfers, maps or waits: a row block is a sub-buffer (or, where the block's start
does not meet the device's sub-buffer alignment, a device-to-device copy); a lazy value runs its
function - which may read the device - on first access only.
"""
from __future__ import annotations

import math

import numpy as np


def base_align(device) -> int:
    """Bytes at which a sub-buffer of ``device`` may start (``CL_DEVICE_MEM_BASE_ADDR_ALIGN``)."""
    try:
        bits = int(device.cl_device.mem_base_addr_align)
    except Exception:  # noqa: BLE001 - a driver without the query: the largest usual value
        bits = 4096
    return max(1, bits // 8)


def rows_multiple(device, row_bytes: int) -> int:
    """Rows per chunk step such that every chunk of a fresh (offset 0) device array with rows of
    ``row_bytes`` starts on the device's sub-buffer alignment (``chunk_sizes(multiple=...)``)."""
    al = base_align(device)
    if row_bytes <= 0:
        return 1
    return al // math.gcd(int(row_bytes), al)


def aligned_chunks(n_items: int, per_item_bytes, device, *, max_items=None,
                   multiple: int = 1, fixed_bytes: int = 0) -> list:
    """``chunk_sizes`` whose every chunk starts at a multiple of ``multiple`` (the rows of
    :func:`rows_multiple`), even where the limits (or the ``max_chunk`` option) ask for fewer
    items: then chunks of ``multiple`` items."""
    from .memory import chunk_sizes
    chunks = chunk_sizes(n_items, per_item_bytes, device, max_items=max_items,
                         multiple=multiple, fixed_bytes=fixed_bytes)
    if len(chunks) > 1 and multiple > 1 and (chunks[0][1] - chunks[0][0]) % multiple:
        step = -(-(chunks[0][1] - chunks[0][0]) // multiple) * multiple
        chunks = [(a, min(n_items, a + step)) for a in range(0, n_items, step)]
    return chunks


def device_rows(arr, start: int, stop: int, *, write: bool = False):
    """Rows ``start:stop`` (first axis) of the C-contiguous device array ``arr`` as an array at
    offset 0, whose ``.data`` kernels take: the array itself when it is the whole of it, a
    sub-buffer of its memory when the rows start on the device's alignment (kernels writing it
    write ``arr``), else a device-to-device copy (then only for reading: ``write=True`` makes
    that a ValueError)."""
    import pyopencl as cl
    import pyopencl.array as cla
    n = arr.shape[0] if arr.ndim else 1
    if arr.offset == 0 and start == 0 and stop == n:
        return arr
    row = int(np.prod(arr.shape[1:], dtype=np.int64)) * arr.dtype.itemsize
    shape = (stop - start,) + tuple(arr.shape[1:])
    origin = arr.offset + start * row
    size = (stop - start) * row
    if size == 0:
        return cla.empty(arr.queue, shape, arr.dtype)
    if origin == 0:
        return cla.Array(arr.queue, shape, arr.dtype, data=arr.base_data)
    # a sub-buffer of a sub-buffer is not allowed: the rows of the buffer it is part of
    buf = arr.base_data
    parent = buf.get_info(cl.mem_info.ASSOCIATED_MEMOBJECT)
    if parent is not None:
        origin += int(buf.get_info(cl.mem_info.OFFSET))
        buf = parent
    dev = arr.queue.device
    if origin % max(1, int(dev.mem_base_addr_align) // 8) == 0:
        sub = buf.get_sub_region(origin, size)      # the parent's access flags
        return cla.Array(arr.queue, shape, arr.dtype, data=sub)
    if write:
        raise ValueError(f"rows {start}:{stop} of a device array start at byte {origin}, not "
                         "on the device's sub-buffer alignment")
    from .capturing import captured
    captured(None)      # pyopencl's copy: a capture's replay would read this call's rows
    return arr[start:stop].copy()


def device_series(y, device, time_axis=None, name: str = "y"):
    """The rows [batch, time] (at offset 0) of a device array of series ``y`` ([batch, time]
    or [time], time last), checked as :func:`clts.runtime.arrays.device_input` does, for the
    functions whose canonical layout has time last; nothing is copied or read."""
    from .arrays import device_input
    device_input(y, name, device, ndim=(1, 2))
    if time_axis is not None and time_axis not in (-1, y.ndim - 1):
        raise ValueError("device arrays are [batch, time] or [time]: time_axis must be the "
                         f"last axis, got {time_axis!r}")
    rows = y.reshape(1, y.shape[-1]) if y.ndim == 1 else y
    return device_rows(rows, 0, rows.shape[0])


class Lazy:
    """A value computed on first access by ``fn()`` (which may read the device: a wait)."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn


class LazyDict(dict):
    """A ``dict`` of diagnostics some of whose values are :class:`Lazy`: each is computed on
    first access (``d[key]``, ``get``, ``items``, ``values``, printing, comparison) and kept."""

    def _resolve(self, key):
        v = dict.__getitem__(self, key)
        if isinstance(v, Lazy):
            v = v.fn()
            dict.__setitem__(self, key, v)
        return v

    def _resolve_all(self):
        for k in list(dict.keys(self)):
            self._resolve(k)

    def __getitem__(self, key):
        return self._resolve(key)

    def get(self, key, default=None):
        return self._resolve(key) if key in self else default

    def items(self):
        self._resolve_all()
        return dict.items(self)

    def values(self):
        self._resolve_all()
        return dict.values(self)

    def copy(self):
        self._resolve_all()
        return dict(dict.items(self))

    def __iter__(self):
        return iter(list(dict.keys(self)))

    def __eq__(self, other):
        self._resolve_all()
        return dict.__eq__(self, other)

    __hash__ = None

    def __repr__(self):
        self._resolve_all()
        return dict.__repr__(self)

    def pending(self) -> list:
        """The keys not computed yet."""
        return [k for k, v in dict.items(self) if isinstance(v, Lazy)]


def result_to_numpy(result):
    """``fields_to_numpy`` of a result of device arrays, without the temporaries it holds for
    its queued kernels (``_keep``: reading waited for them, so they are let go)."""
    from .arrays import fields_to_numpy
    keep = result.__dict__.pop("_keep", None)
    try:
        return fields_to_numpy(result)
    finally:
        if keep is not None:
            result._keep = []
