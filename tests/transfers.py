"""Counting a call's host traffic: every transfer between host and device memory, every map of a
buffer into host memory and every wait of the host for the device, by wrapping pyopencl's entry
points (the test helper behind "device-array calls make no host copy, map or wait").

    with host_traffic() as t:
        r = clts.stl(y_dev, 12)
    assert t.total == 0, t.calls

Device-to-device copies and fills are not host traffic and are not counted; kernel launches
neither. Wrapping is process-wide while the block runs (another thread's traffic counts too), so
tests using it do not run other calls in parallel threads.
"""
from __future__ import annotations

import threading
import traceback
from contextlib import contextmanager

#: pyopencl._cl functions that move data between host and device memory
TRANSFERS = ("_enqueue_read_buffer", "_enqueue_write_buffer", "_enqueue_read_buffer_rect",
             "_enqueue_write_buffer_rect", "_enqueue_read_image", "_enqueue_write_image",
             "_enqueue_svm_memcpy")
MAPS = ("enqueue_map_buffer", "enqueue_map_image", "_enqueue_svm_map")
_lock = threading.Lock()


class HostTraffic:
    def __init__(self):
        self.calls = []       # (kind, name, short stack)

    def count(self, kind: str) -> int:
        return sum(1 for k, _, _ in self.calls if k == kind)

    @property
    def transfers(self) -> int:
        return self.count("transfer")

    @property
    def maps(self) -> int:
        return self.count("map")

    @property
    def waits(self) -> int:
        return self.count("wait")

    @property
    def total(self) -> int:
        return len(self.calls)

    def report(self) -> str:
        return "\n".join(f"{k} {n}\n{s}" for k, n, s in self.calls)


def _where() -> str:
    frames = [f for f in traceback.extract_stack()[:-2] if "/clts/" in f.filename]
    return "".join(traceback.format_list(frames[-4:]))


@contextmanager
def host_traffic():
    """Count host transfers, maps and waits made inside the block (see the module's doc)."""
    import pyopencl as cl
    import pyopencl._cl as _cl
    t = HostTraffic()
    saved = []

    def wrap(owner, name, kind, blocking_arg=None):
        orig = getattr(owner, name)

        def counted(*args, **kwargs):
            t.calls.append((kind, name, _where()))
            if blocking_arg and kwargs.get(blocking_arg):
                t.calls.append(("wait", f"{name}(blocking)", _where()))
            return orig(*args, **kwargs)
        saved.append((owner, name, orig))
        setattr(owner, name, counted)

    with _lock:
        for n in TRANSFERS:
            if hasattr(_cl, n):
                wrap(_cl, n, "transfer", "is_blocking")
        for n in MAPS:
            if hasattr(_cl, n):
                wrap(_cl, n, "map", "is_blocking")
        wrap(cl, "wait_for_events", "wait")
        wrap(_cl, "wait_for_events", "wait")
        wrap(cl.Event, "wait", "wait")
        wrap(cl.CommandQueue, "finish", "wait")
        try:
            yield t
        finally:
            for owner, name, orig in reversed(saved):
                setattr(owner, name, orig)


def run_while_held(device, calls, timeout=120.0) -> dict:
    """Run ``calls()`` (it fills and returns a dict of results) in a thread while ``device``'s
    queue is held by a user event: a call that waits for the device cannot return before the
    event is released. Releases the queue and returns the results; AssertionError if the calls
    had not returned within ``timeout`` seconds."""
    import pyopencl as cl
    gate = cl.UserEvent(device.context)
    cl.enqueue_barrier(device.queue, wait_for=[gate])
    got = {}
    th = threading.Thread(target=lambda: got.update(calls()))
    th.start()
    th.join(timeout)
    returned = not th.is_alive()
    gate.set_status(cl.command_execution_status.COMPLETE)
    th.join()
    assert returned, "a device-array call waited for the device"
    return got
