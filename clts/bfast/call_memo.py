"""The argument sets of device calls, remembered: a call on a device cube made again with the
same arguments (a time loop over tiles of one shape) skips its checks, time axis, design and
Plan, which would give the same outcome (``bfast_monitor``: ``monitor_device``;
``bfast_breaks``: ``breaks_api``).

A key is every argument but the cube's values (:func:`call_key`): the device, the cube's
context, shape, dtype, strides and offset, the dates' bytes, the other arguments with their
types (``True`` and ``1`` differ) and the ``max_chunk`` option. Not remembered: arguments
that cannot be hashed (arrays of covariates), dates that are not one numpy array
(``axis.monitor_axis``' memo rule), simulators. What is remembered for a key is given again
only under an equal ``bfast`` section of the device profile (a tuner or a test may change it).
"""
from __future__ import annotations

import copy

from .. import options
from .axis import _key as axis_key

#: remembered argument sets per device and function (then the memo starts again)
KEPT = 256


def call_key(dev, y, dates, start, args: tuple, overrides: dict):
    """The memo key of a call on device cube ``y``, or None where the call is not remembered.
    ``start``: the monitoring start, a date or a number, part of the dates' key (a call
    without one gives 0); ``args``: the call's other arguments; ``overrides``: its Plan's
    keywords."""
    dkey = axis_key(dates, start)
    if dkey is None or dev.info.simulator:
        return None
    given = sorted(overrides.items())
    key = (dev, y.context, y.shape, y.dtype.str, y.strides, y.offset, dkey,
           args, tuple(map(type, args)), tuple(given), tuple(type(v) for _, v in given),
           options.get("max_chunk"))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def remember(dev, name: str, key, value) -> None:
    """Keep ``value`` for the next calls of ``key`` in memo ``name`` of ``dev``, unless it is
    kept there already."""
    memo = dev.state.constant(name, dict)
    hit = memo.get(key)
    if hit is not None and hit[0] is value:     # a repeated call's (recalled just before)
        return
    if len(memo) >= KEPT:
        memo.clear()
    memo[key] = (value, copy.deepcopy(dev.profile.values.get("bfast")))


def recall(dev, name: str, key):
    """What :func:`remember` kept for ``key`` in memo ``name``, or None (also when the
    profile's ``bfast`` section changed since)."""
    hit = dev.state.constant(name, dict).get(key)
    if hit is None or hit[1] != dev.profile.values.get("bfast"):
        return None
    return hit[0]
