"""The one launch path: every kernel of every algorithm is enqueued through ``launch``.

``timing()`` collects the OpenCL profiling events of every launch made inside it, so the tuner
and the benchmarks time the very code the user calls.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager

_local = threading.local()
#: setting a kernel's arguments and enqueueing it must be one step: a ``cl.Kernel`` is shared by
#: every thread that runs its program, and clSetKernelArg is not thread-safe (OpenCL 1.2, A.2)
_enqueue_lock = threading.Lock()


def _timers():
    if not hasattr(_local, "timers"):
        _local.timers = []
    return _local.timers


def round_up(n: int, m: int) -> int:
    return ((int(n) + m - 1) // m) * m


def launch(device, kernel, global_size, local_size, *args, wait_for=None, queue=None):
    """Enqueue ``kernel`` (a pyopencl Kernel) on ``device``'s queue; return the event.

    ``global_size``/``local_size`` are ints or tuples; ``local_size=None`` lets the driver pick.
    Arguments are set in order (pyopencl buffers, numpy scalars, ``LocalMemory``).
    """
    if isinstance(global_size, int):
        global_size = (global_size,)
    if isinstance(local_size, int):
        local_size = (local_size,)
    if any(g == 0 for g in global_size):
        return None
    import pyopencl as cl
    if device.info.emulates:
        from .emulation import check_launch
        check_launch(device, kernel, local_size, args)
        hook = device.state.launch_hook
        if hook is not None:    # the coalescing tracer (clts.tune.coalescing), emulated only
            hook(kernel, global_size, local_size, args)
    from . import faults
    faults.check("enqueue", _count(global_size))
    with _enqueue_lock:
        kernel.set_args(*args)
        ev = cl.enqueue_nd_range_kernel(queue or device.queue, kernel, global_size, local_size,
                                        wait_for=wait_for)
    for t in _timers():
        t.events.append(ev)
    _local.last = ev
    return ev


def last_event():
    """The event of the last kernel this thread launched (None before any)."""
    return getattr(_local, "last", None)


class Timing:
    """Kernel time (sum of profiling intervals) and wall time of launches in a ``timing()``."""

    def __init__(self):
        self.events = []
        self.wall = 0.0

    @property
    def kernel_seconds(self) -> float:
        return sum((e.profile.end - e.profile.start) * 1e-9 for e in self.events)

    @property
    def span_seconds(self) -> float:
        """From the first kernel's start to the last kernel's end (includes gaps)."""
        if not self.events:
            return 0.0
        return (max(e.profile.end for e in self.events)
                - min(e.profile.start for e in self.events)) * 1e-9


@contextmanager
def timing(device=None):
    """Time every launch inside the block; waits for the device at the end."""
    t = Timing()
    stack = _timers()
    stack.append(t)
    t0 = time.perf_counter()
    try:
        yield t
    finally:
        if device is not None:
            device.queue.finish()
        for e in t.events:
            e.wait()
        t.wall = time.perf_counter() - t0
        stack.remove(t)


def _count(global_size) -> int:
    n = 1
    for g in global_size:
        n *= int(g)
    return n
