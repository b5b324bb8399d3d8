"""bfast_monitor's time axis, derived once per dates and start (``clts.bfast.axis``): the same
values give the same axis, changed values (the same array written in place) a new one, and a
call's results do not follow later writes to the caller's dates."""
import datetime

import numpy as np
import pytest

import clts
from clts.bfast import axis
from tests.concurrency import run_in_threads


def _cube(N=60, M=8, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(N)
    y = 5 + np.sin(2 * np.pi * t / 12)[:, None] + rng.normal(0, 0.1, (N, M))
    y[45:, :3] += 2.0
    return y.astype(np.float32)


def test_same_values_same_axis_new_values_new_axis():
    dates = 2000 + np.arange(60) / 12.0
    a = axis.monitor_axis(dates, 2003.0, 60)
    assert axis.monitor_axis(dates.copy(), 2003.0, 60) is a
    assert not a.t.flags.writeable and not a.mon.flags.writeable
    dates += 1.0                      # the same array, new values
    b = axis.monitor_axis(dates, 2003.0, 60)
    assert b is not a and b.n == a.n - 12
    assert axis.monitor_axis(dates, 2003.5, 60).n == b.n + 6       # another start
    # a date start and a number start of the same text are different keys
    d64 = np.datetime64("2000-01-01") + np.arange(60) * 30
    c = axis.monitor_axis(d64, np.datetime64("2003-01-01"), 60)
    assert c.mon.dtype.kind == "M" and c.n == int(np.searchsorted(d64, np.datetime64("2003-01-01")))


def test_checks_hold_on_a_remembered_axis():
    dates = 2000 + np.arange(60) / 12.0
    axis.monitor_axis(dates, 2003.0, 60)
    with pytest.raises(ValueError, match="60 entries but y has 59"):
        axis.monitor_axis(dates, 2003.0, 59)
    with pytest.raises(ValueError, match="strictly increasing"):
        axis.monitor_axis(dates[::-1].copy(), 2003.0, 60)
    with pytest.raises(ValueError, match="start_monitor"):
        axis.monitor_axis(dates, 1990.0, 60)


def test_object_dates_are_derived_each_call():
    dates = np.array([datetime.date(2000, 1, 1) + datetime.timedelta(days=30 * i)
                      for i in range(60)], dtype=object)
    a = axis.monitor_axis(dates, datetime.date(2003, 1, 1), 60)
    assert axis.monitor_axis(dates, datetime.date(2003, 1, 1), 60) is not a


def test_results_do_not_follow_the_callers_dates(device):
    y = _cube()
    dates = 2000 + np.arange(60) / 12.0
    first = clts.bfast_monitor(y, dates, 2003.0, freq=1, device=device)
    mon = first.monitor_dates.copy()
    again = clts.bfast_monitor(y, dates.copy(), 2003.0, freq=1, device=device)
    np.testing.assert_array_equal(first.breaks, again.breaks)
    dates += 100.0                      # written in place after the calls
    np.testing.assert_array_equal(first.monitor_dates, mon)
    moved = clts.bfast_monitor(y, dates, 2103.0, freq=1, device=device)
    np.testing.assert_array_equal(moved.breaks, first.breaks)
    np.testing.assert_array_equal(moved.monitor_dates, mon + 100.0)


def test_threads_share_an_axis(device):
    y = _cube(seed=1)
    dates = 2000 + np.arange(60) / 12.0
    want = clts.bfast_monitor(y, dates, 2003.0, freq=1, device=device).breaks

    def call(i):
        d = 2000 + np.arange(60) / 12.0 + (i % 2) * 10.0
        got = clts.bfast_monitor(y, d, 2003.0 + (i % 2) * 10.0, freq=1, device=device)
        np.testing.assert_array_equal(got.breaks, want)

    run_in_threads(call, 8)
