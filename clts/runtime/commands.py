"""Fill and copy commands that a capture makes again (``runtime.capturing``,
``runtime.replay``): each keeps its buffers in ``args`` (:meth:`set` changes them, as a
``launch.Relaunch``'s arguments) and enqueues the command when called. ``memory.fill`` and
``memory.copy`` make them; no clts imports."""
from __future__ import annotations


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
        import pyopencl as cl
        return cl.enqueue_copy(self.queue, self.args[0], self.args[1], byte_count=self.nbytes,
                               dst_offset=self.dst_offset, src_offset=self.src_offset)
