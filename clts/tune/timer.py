"""How one run of a candidate is timed.

``EventTimer`` (the real one) runs the candidate inside ``clts.runtime.timing`` and returns the
sum of the OpenCL profiling intervals of every kernel it launched. ``FakeTimer`` replays a
recorded table instead, so tests (and anyone studying a strategy) can drive the engine without
a device: it still calls the candidate's ``run`` (so checks happen) but returns the recorded
seconds and advances a fake clock by them, which the budget logic reads.
"""
from __future__ import annotations

import time
from collections import defaultdict


class EventTimer:
    """Kernel seconds of every ``launch`` made by ``fn`` (OpenCL profiling events)."""

    def __init__(self, device):
        self.device = device
        self.wall_fallbacks = 0

    def clock(self) -> float:
        return time.monotonic()

    def time(self, fn, key, mode: str = "kernel") -> float:
        """``mode``: "kernel" (summed kernel execution), "span" (first start to last end) or
        "wall" (host wall time of ``fn``)."""
        from ..runtime import timing
        with timing(self.device) as t:
            fn()
        if mode == "wall":
            return t.wall
        if not t.events:          # run() launched nothing through clts.runtime.launch
            self.wall_fallbacks += 1
            return t.wall
        return t.span_seconds if mode == "span" else t.kernel_seconds


class FakeTimer:
    """Replays recorded times.

    ``table`` maps a candidate label (``"wg=64,lanes=8"`` for a Tunable, ``"flat@1024"`` for a
    Crossover) or ``(label, workload_index)`` to seconds, or to a list of seconds returned one
    per call (the last one repeats). A callable ``table(label, workload_index)`` also works.
    ``calls`` counts timed calls per label; ``clock()`` is the sum of all returned seconds plus
    ``overhead`` per call (so a time budget can be tested deterministically).
    """

    def __init__(self, table, overhead: float = 0.0):
        self.table = table
        self.overhead = overhead
        self.now = 0.0
        self.calls = defaultdict(int)
        self.modes = set()            # timing modes asked for (Tunable.timing)

    def clock(self) -> float:
        return self.now

    def _lookup(self, label, wi):
        if callable(self.table):
            return self.table(label, wi)
        for k in ((label, wi), label):
            if k in self.table:
                return self.table[k]
        raise KeyError(f"FakeTimer has no recorded time for {label!r} (workload {wi})")

    def time(self, fn, key, mode: str = "kernel") -> float:
        _entry, label, wi = key
        self.modes.add(mode)
        fn()
        v = self._lookup(label, wi)
        n = self.calls[label]
        self.calls[label] += 1
        if isinstance(v, (list, tuple)):
            v = v[min(n, len(v) - 1)]
        v = float(v)
        self.now += v + self.overhead
        return v
