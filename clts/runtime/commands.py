"""Fill and copy commands that a capture makes again (``runtime.capturing``,
``runtime.replay``): each keeps its buffers in ``args`` (:meth:`set` changes them, as a
``launch.Relaunch``'s arguments) and enqueues the command when called. ``memory.fill`` and
``memory.copy`` make them; no clts imports.

They enqueue through pyopencl's C entries (``_enqueue_copy_buffer``, ``_enqueue_fill_buffer``)
where this pyopencl has them with the parameters written for: ``pyopencl.enqueue_copy`` reaches
the same entry after ~3 µs of Python on a 2-core VM (its keyword handling and type dispatch,
half of a copy's host time; a recorded ``mstump`` call replays 36 copies) and
``enqueue_fill_buffer`` after a version check. Otherwise the public functions."""
from __future__ import annotations

import inspect

#: the parameters of the C entries the direct calls were written for
_COPY_PARAMS = ("queue", "src", "dst", "byte_count", "src_offset", "dst_offset", "wait_for")
_FILL_PARAMS = ("queue", "mem", "pattern", "offset", "size", "wait_for")
_entries: list = []


def _parameters(fn) -> tuple:
    """A nanobind function's parameter names, from its signature line (its ``__doc__``)."""
    try:
        return tuple(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        doc = (getattr(fn, "__doc__", None) or "").split("\n", 1)[0]
        inner = doc[doc.find("(") + 1:doc.rfind(")")]
        return tuple(part.split(":")[0].split("=")[0].strip()
                     for part in inner.split(",") if part.strip())


def entries():
    """(copy, fill): pyopencl's C entries for a buffer-to-buffer copy and a fill, each None
    where it is missing or takes other parameters (then the public function runs)."""
    if not _entries:
        try:
            from pyopencl import _cl
        except ImportError:         # pragma: no cover
            _cl = None
        found = []
        for name, params in (("_enqueue_copy_buffer", _COPY_PARAMS),
                             ("_enqueue_fill_buffer", _FILL_PARAMS)):
            fn = getattr(_cl, name, None)
            found.append(fn if fn is not None and _parameters(fn) == params else None)
        _entries[:] = found
    return _entries


class _Command:
    __slots__ = ("queue", "args")

    def set(self, *pairs):
        """Change buffers: ``set(index, buffer, index, buffer, ...)``; returns self."""
        for i in range(0, len(pairs), 2):
            self.args[pairs[i]] = pairs[i + 1]
        return self


class Refill(_Command):
    """A fill command: ``args`` is ``[buffer]``, filled from byte ``offset`` for ``nbytes``
    with ``pattern``."""

    __slots__ = ("pattern", "offset", "nbytes")

    def __init__(self, queue, buffer, pattern, offset, nbytes):
        self.queue, self.args, self.pattern = queue, [buffer], pattern
        self.offset, self.nbytes = offset, nbytes

    def __call__(self):
        fill = (_entries or entries())[1]
        if fill is not None:
            return fill(self.queue, self.args[0], self.pattern, self.offset, self.nbytes, None)
        import pyopencl as cl
        return cl.enqueue_fill_buffer(self.queue, self.args[0], self.pattern, self.offset,
                                      self.nbytes)


class Recopy(_Command):
    """A device-to-device copy command: ``args`` is ``[dst, src]``; ``nbytes`` from byte
    ``src_offset`` of src to byte ``dst_offset`` of dst."""

    __slots__ = ("nbytes", "dst_offset", "src_offset")

    def __init__(self, queue, dst, src, nbytes, dst_offset, src_offset):
        self.queue, self.args = queue, [dst, src]
        self.nbytes, self.dst_offset, self.src_offset = nbytes, dst_offset, src_offset

    def __call__(self):
        copy = (_entries or entries())[0]
        if copy is not None:
            return copy(self.queue, self.args[1], self.args[0], self.nbytes, self.src_offset,
                        self.dst_offset, None)
        import pyopencl as cl
        return cl.enqueue_copy(self.queue, self.args[0], self.args[1], byte_count=self.nbytes,
                               dst_offset=self.dst_offset, src_offset=self.src_offset)
