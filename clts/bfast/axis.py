"""``bfast_monitor``'s time axis: the numeric times of its dates and start, the number of
history dates, the trend column's scaling and the dates the results report, derived once per
dates and start. A time loop over cubes (or a device pipeline calling BFAST again and again)
passes the same dates each call; deriving them took about thirty small numpy steps a call,
more host time than the call's one kernel launch.

Memoised by the dates' values (dtype, shape and bytes: a changed array is a new key) and the
start; the arrays kept are read-only copies. Object arrays (datetime / date / cftime objects)
are derived every call.
"""
from __future__ import annotations

import datetime as _dt
import threading
from typing import NamedTuple

import numpy as np

from .checks import history_end, monitor_dates
from .common import check_increasing, time_axis, trend_scaling

#: axes kept (the least recently added dropped first)
KEPT = 32
#: dates longer than this are derived every call (the key would copy their bytes)
MAX_DATES = 1 << 16
_STARTS = (int, float, np.integer, np.floating, np.datetime64, _dt.date)


class Axis(NamedTuple):
    t: np.ndarray           # numeric times of the dates (float64)
    ts: float               # numeric time of start_monitor
    n: int                  # history dates (the first date at or after the start)
    center: float           # the trend column's (t - center) / scale
    scale: float
    bd_src: np.ndarray      # every date, as the results report dates
    mon: np.ndarray         # the monitoring dates
    fill: object            # the break date of "no break"


_MEMO: dict = {}
_LOCK = threading.Lock()


def _key(dates, start_monitor):
    if (type(dates) is not np.ndarray or dates.dtype.kind not in "fiuM"
            or dates.size > MAX_DATES or not isinstance(start_monitor, _STARTS)):
        return None
    return (dates.dtype.str, dates.shape, dates.tobytes(), type(start_monitor),
            repr(start_monitor))


def monitor_axis(dates, start_monitor, N: int, fits=None) -> Axis:
    """The :class:`Axis` of ``dates`` and ``start_monitor`` for a cube of ``N`` dates, with the
    checks (in this order): the dates' kind, ``fits(t)`` (the caller's check of its cube
    against the dates), ``N`` dates, finite and strictly increasing, a start inside the axis."""
    key = _key(dates, start_monitor)
    if key is not None:
        with _LOCK:
            hit = _MEMO.get(key)
        if hit is not None and hit.t.size == N:
            return hit
    t, ts = time_axis(dates, start_monitor)
    if fits is not None:
        fits(t)
    if t.size != N:
        raise ValueError(f"dates has {t.size} entries but y has {N} along its time axis")
    check_increasing(t)
    n = history_end(t, ts, dates, start_monitor)
    center, scale = trend_scaling(t, n)
    bd_src, mon, fill = monitor_dates(dates, t, n)
    if key is None:
        return Axis(t, ts, n, center, scale, bd_src, mon, fill)
    t = _frozen(t)
    bd_src = _frozen(bd_src)
    ax = Axis(t, ts, n, center, scale, bd_src, bd_src[n:], fill)
    with _LOCK:
        if len(_MEMO) >= KEPT:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[key] = ax
    return ax


def _frozen(a):
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a
