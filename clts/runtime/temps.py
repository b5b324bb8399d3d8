"""Temporaries of queued kernels without a ``pyopencl.array.Array`` around them.

A ``cla.empty(..., allocator=pool)`` costs ~15-20 µs of Python per array (the Array's
constructor; the pool's allocation itself ~0.2 µs, pocl, quiet 2-core Zen 4): a call that
allocates a dozen internal buffers spends more host time on that than on its launches. Internal
buffers that only their kernels see need the buffer and its shape and dtype, nothing more.
"""
from __future__ import annotations

from .memory import array_geometry, scratch


class Temp:
    """A pooled device buffer (``data``) with its ``shape`` and ``dtype``: what the launch code
    of an internal temporary reads. Dropped, its memory goes back to the device's pool."""

    __slots__ = ("data", "shape", "dtype")

    def __init__(self, data, shape, dtype):
        self.data, self.shape, self.dtype = data, shape, dtype


def temp(device, shape, dtype):
    """An internal temporary of ``shape`` and ``dtype`` from ``device``'s scratch pool (as
    ``clts.runtime.memory.scratch``, whose array it falls back to on a simulator, for an empty
    buffer and near the device's largest allocation)."""
    return temps(device, (shape,), dtype)[0]


def temps(device, shapes, dtype) -> list:
    """``[temp(device, shape, dtype) for shape in shapes]`` with the device's look-ups made once
    for them all (a call that allocates a dozen temporaries: ~1.5 µs each instead of ~3-7)."""
    info = device.info
    pool = None if info.simulator else device.state.pool("scratch")
    out = []
    for s in shapes:
        shape, dt, _, size = array_geometry(s, dtype)
        nbytes = size * dt.itemsize
        # the pool rounds up to its bins (at most 6 % more): only a size near the device's
        # largest allocation needs the exact check
        if pool is None or not nbytes or (16 * nbytes > 15 * info.max_alloc and pool.alloc_size(
                pool.bin_number(nbytes)) > info.max_alloc):
            out.append(scratch(device, shape, dt))
        else:
            out.append(Temp(pool.allocate(nbytes), shape, dt))
    return out
