"""Capturing a call's enqueues to make them again (``runtime.replay``): inside
:func:`capture`, ``launch``, ``memory.fill`` and ``memory.copy`` add an entry for each
launch, fill and device-to-device copy this thread makes; whatever else enqueues (a transfer,
a pyopencl kernel or copy) marks the capture incomplete through :func:`captured`. No clts
imports: the launch path, memory and faults all use it."""
from __future__ import annotations

import threading
from contextlib import contextmanager

_local = threading.local()
_lock = threading.Lock()
#: threads inside a ``capture()`` block (a launch outside every block looks up nothing else)
active = 0


class Capture:
    """What a call enqueued inside :func:`capture`: ``entries``, in enqueue order, each a
    callable that enqueues it again with ``args`` it may change (``launch.Relaunch``,
    ``runtime.commands.Refill`` / ``Recopy`` for a fill / copy, ``runtime.replay.Nested`` for
    a recording made or replayed inside it); ``complete`` is False once
    the call enqueued anything a replay of the entries would miss (a transfer, a pyopencl
    kernel, a launch waiting on events, a retry after an allocation failure)."""

    __slots__ = ("entries", "complete")

    def __init__(self):
        self.entries = []
        self.complete = True


@contextmanager
def capture():
    """Collect this thread's launches and fills made inside the block (:class:`Capture`). A
    capture inside another one leaves the outer one incomplete."""
    global active
    outer = getattr(_local, "capture", None)
    cap = _local.capture = Capture()
    with _lock:
        active += 1
    try:
        yield cap
    finally:
        _local.capture = outer
        if outer is not None:
            outer.complete = False
        with _lock:
            active -= 1


def current():
    """This thread's innermost :class:`Capture`, or None."""
    return getattr(_local, "capture", None) if active else None


@contextmanager
def suspended():
    """Nothing this thread enqueues inside the block reaches its capture (an owner that
    records those enqueues itself hands the capture its recording: ``replay.Nested``)."""
    outer = getattr(_local, "capture", None)
    _local.capture = None
    try:
        yield
    finally:
        _local.capture = outer


def captured(entry) -> None:
    """Add ``entry`` to this thread's capture, if any; None marks it incomplete (something
    was enqueued that no entry makes again)."""
    if not active:
        return
    cap = getattr(_local, "capture", None)
    if cap is not None:
        if entry is None:
            cap.complete = False
        else:
            cap.entries.append(entry)
