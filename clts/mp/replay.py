"""Repeated matrix-profile calls on device arrays, replayed (``runtime.replay``).

A device-array call of the matrix profile (self-join, AB-join, top-k up to ``TOPK_MAX``)
makes ~20-40 launches and fills, each through ``launch`` with its temporaries allocated,
its sizes looked up and its arguments gathered in Python: ~50 µs of host time a launch on
pocl. The second call of a shape is captured (``runtime.capturing.capture``; the first runs
as it is, :data:`RECORD_AFTER`); the next calls of the same shape, Plan and options take that
recording, sets its own series, fresh result
arrays and fresh window flags (the result's lazy diagnostics read them) and enqueues the
same launches again, nothing else. The recording's temporaries are reused by each next
call, which the in-order queue runs after the previous call's kernels.

Not recorded: calls on a simulator, the blocked top-k (k > ``TOPK_MAX``: host lists), series
with an offset into their buffer or sharing T_A's buffer, and calls that enqueued anything
a replay would not make again (``Capture.complete``).
"""
from __future__ import annotations

from .. import options
from ..runtime.replay import Recorder, record_call, replay_call


#: calls of a shape made before one is recorded: a first call's recording kept its
#: temporaries out of the pool, and a loop over ever-new series lengths then ran each call on
#: fresh memory (pocl, 2,048 points: 4.2-4.5 ms a call instead of 2.5-2.9, page faults)
RECORD_AFTER = 1


def _recorder(dev) -> Recorder:
    return dev.state.constant("mp.recorder", lambda: Recorder(after=RECORD_AFTER))


def wanted(dev, key):
    """``key`` where a call of it that found no recording to replay is to be captured (from
    its shape's second call on), else None."""
    return key if key is not None and _recorder(dev).wants(key) else None


def call_key(dev, plan, T_A, T_B, m, ez, k, both, normalize):
    """The recording key of a device-array call on ``dev`` (everything its launches depend
    on), or None for a call that is not recorded (module docstring)."""
    from .topk import TOPK_MAX
    if dev.info.simulator or k > TOPK_MAX or T_A.offset:
        return None
    if T_B is not None and (T_B.offset or T_B.base_data is T_A.base_data):
        return None
    key = (plan, m, ez, k, bool(both), bool(normalize), T_A.shape[0], T_A.dtype.str,
           None if T_B is None else T_B.shape[0], options.get("max_chunk"))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def replayed(dev, key, T_A, T_B):
    """A call replayed: (its arrays by slot name: the result's fields and ``flags:A`` /
    ``flags:B``, the recording, which holds the temporaries its kernels read), or None when
    no recording of ``key`` is free."""
    return replay_call(dev, _recorder(dev), key,
                       {"T_A": T_A.base_data, "T_B": None if T_B is None else T_B.base_data})


def record(dev, key, cap, T_A, T_B, res: dict, flags: dict):
    """Keep the capture ``cap`` of a call just made under ``key`` (``res``: its result's
    device arrays by field, made fresh by each replay; ``flags``: its sides' window flags by
    "A" / "B", from the pool: read by the result's lazy counts); returns the recording or
    None (``runtime.replay.record_call``)."""
    outputs = dict(res)
    outputs.update(("flags:" + side, a) for side, a in flags.items())
    return record_call(dev, _recorder(dev), key, cap,
                       {"T_A": T_A.base_data, "T_B": None if T_B is None else T_B.base_data},
                       outputs, pooled={"flags:A", "flags:B"})
