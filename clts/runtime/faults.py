"""Device faults: how a chunked run survives them, and how the tests provoke them.

- An allocation failure (``MEM_OBJECT_ALLOCATION_FAILURE``, ``OUT_OF_RESOURCES``,
  ``OUT_OF_HOST_MEMORY``: drivers report them at allocation or, lazily, at the first enqueue
  that touches the buffer) makes :func:`with_smaller_chunks` run the call again with half as
  many items per chunk, down to one item; then ``DeviceError`` names the device and the sizes.
- Any other failure inside a chunked loop (a build, an enqueue) becomes a ``DeviceError`` that
  names the chunk (its index and item range) and carries the original error as its cause: a
  partial result is never returned as complete.
- :func:`inject` makes the next launches or builds fail as a driver would (tests only).
"""
from __future__ import annotations

import logging
import threading
from contextlib import contextmanager

from ..errors import CltsError, DeviceError, KernelBuildError

log = logging.getLogger("clts")
_state = threading.local()
_lock = threading.Lock()
_planned: list = []
#: faults injected and raised since the process started, per kind (read by the tests' report)
injected = {"alloc": 0, "enqueue": 0, "build": 0}


# -- injection ------------------------------------------------------------------------------
@contextmanager
def inject(kind: str, *, times: int = 1, after: int = 0, min_items: int = 0):
    """Make the next ``times`` launches (``kind`` "alloc" or "enqueue") or program builds
    ("build") fail, after letting ``after`` of them pass; "alloc" only hits launches of at least
    ``min_items`` work-items (a device too small for big chunks)."""
    if kind not in injected:
        raise ValueError(f"kind must be one of {sorted(injected)}, got {kind!r}")
    plan = {"kind": kind, "times": times, "after": after, "min_items": min_items}
    with _lock:
        _planned.append(plan)
    try:
        yield plan
    finally:
        with _lock:
            _planned.remove(plan)


def check(kind: str, items: int = 0) -> None:
    """Raise the planned fault of ``kind`` if one is due (called by launch and the builder)."""
    if not _planned:
        return
    with _lock:
        for plan in _planned:
            if plan["kind"] != kind and not (kind == "enqueue" and plan["kind"] == "alloc"):
                continue
            if plan["kind"] == "alloc" and items < plan["min_items"]:
                continue
            if plan["after"] > 0:
                plan["after"] -= 1
                continue
            if plan["times"] <= 0:
                continue
            plan["times"] -= 1
            injected[plan["kind"]] += 1
            raise _error(plan["kind"])


def _error(kind):
    import pyopencl as cl
    from pyopencl import _cl
    if kind == "build":
        return KernelBuildError("injected build failure (clts.runtime.faults)")
    code = (cl.status_code.MEM_OBJECT_ALLOCATION_FAILURE if kind == "alloc"
            else cl.status_code.INVALID_COMMAND_QUEUE)
    rec = _cl._ErrorRecord("clEnqueueNDRangeKernel", code, "injected by clts.runtime.faults")
    return cl.MemoryError(rec) if kind == "alloc" else cl.LogicError(rec)


# -- surviving ------------------------------------------------------------------------------
def is_allocation_failure(exc: BaseException) -> bool:
    try:
        import pyopencl as cl
    except ImportError:          # pragma: no cover
        return False
    if not isinstance(exc, cl.Error):
        return False
    codes = {cl.status_code.MEM_OBJECT_ALLOCATION_FAILURE, cl.status_code.OUT_OF_RESOURCES,
             cl.status_code.OUT_OF_HOST_MEMORY}
    try:
        return exc.code in codes
    except Exception:            # noqa: BLE001 - an error without a code is no allocation one
        return False


def enter_chunk(index: int, a: int, b: int, count: int, total: int) -> None:
    """Record the chunk the calling thread works on (for the error that names it)."""
    _state.chunk = (index, a, b, count, total)


def current_chunk():
    return getattr(_state, "chunk", None)


def free_held(device) -> bool:
    """Give back the memory ``device``'s pools hold for reuse (scratch, pipeline slots);
    whether they held any."""
    held = False
    for pool in list(device.state.pools.values()):
        held = held or getattr(pool, "held_blocks", 0) > 0
        pool.free_held()
    return held


def with_smaller_chunks(run, *, device, what: str):
    """``run(max_items)`` (``None``: as many items per chunk as the device limits allow), again
    after an allocation failure: first at the same size where the device's pools held memory
    (earlier calls' buffers kept for reuse, now given back), then with half the largest chunk,
    down to one item. A call that fails for good gives the pools' memory back too."""
    max_items = None
    retried_after_free = False
    failed_size = 0         # items per chunk of the last chunk that failed to allocate
    while True:
        _state.chunk = None
        try:
            result = run(max_items)
            _state.chunk = None
            return result
        except KernelBuildError as exc:
            chunk = current_chunk()
            if chunk is not None and exc.args:
                i, a, b, count, total = chunk
                exc.args = (f"{what}: chunk {i + 1} of {count} (items {a} to {b - 1} of "
                            f"{total}): {exc.args[0]}",) + exc.args[1:]
            raise
        except CltsError:
            raise
        except Exception as exc:          # noqa: BLE001 - re-raised with the chunk named
            chunk = current_chunk()
            _state.chunk = None
            if is_allocation_failure(exc):
                from .capturing import captured
                captured(None)      # a capture holds the failed try's launches too
                if chunk:
                    failed_size = chunk[2] - chunk[1]
                if free_held(device) and not retried_after_free:
                    retried_after_free = True
                    log.info("clts: %s: allocation failed on %s; retrying after giving back "
                             "the memory its pools held", what, device)
                    continue
                # outside the chunks: final, unless a chunk failed before (a retry's work
                # before its chunks, e.g. the band loop's descriptors, then goes on halving)
                size = (chunk[2] - chunk[1]) if chunk else \
                    min(failed_size, max_items or failed_size)
                if size <= 1:
                    what_failed = ("the buffers of one item" if chunk else
                                   "the buffers it needs before its chunks")
                    raise DeviceError(
                        f"{what}: device {device} could not allocate {what_failed} (global "
                        f"memory {device.global_mem} bytes, max allocation {device.max_alloc})"
                        f": {exc}") from exc
                max_items = max(1, size // 2)
                log.warning("clts: %s: allocation failed on %s with %d items per chunk; "
                            "retrying with %d", what, device, size, max_items)
                continue
            free_held(device)
            if chunk is None:
                import pyopencl as cl
                if isinstance(exc, cl.Error):
                    raise DeviceError(f"{what}: failed on {device}: {type(exc).__name__}: "
                                      f"{exc}") from exc
                raise
            i, a, b, count, total = chunk
            raise DeviceError(f"{what}: chunk {i + 1} of {count} (items {a} to {b - 1} of "
                              f"{total}) failed on {device}: {type(exc).__name__}: {exc}; "
                              "no partial result is returned") from exc
