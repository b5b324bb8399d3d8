"""One public call at a time per device where the driver needs it (clts/runtime/threads.py):
the profile key ``runtime.serialise_threads`` (auto: NVIDIA's OpenCL platform), the public
functions wrapped at the package face, and calls from several threads that never overlap on a
device that serialises while still giving every thread its own result."""
from __future__ import annotations

import threading
import time

import numpy as np
import pytest

import clts
from clts.runtime import threads
from emulated import gpus_over_pocl


def test_auto_serialises_nvidia_platforms_only(device):
    gpus = gpus_over_pocl()
    if not gpus:
        pytest.skip("pocl is not usable here")
    assert threads.needs_serial_calls(gpus["h100"]) and threads.needs_serial_calls(gpus["a100"])
    assert not threads.needs_serial_calls(gpus["mi100"])
    assert threads.needs_serial_calls(device) == ("nvidia" in device.platform.lower())


def test_public_functions_hold_the_lock():
    for fn in (clts.stl, clts.trend_test, clts.bfast_monitor, type(clts.matrix_profile).__call__,
               clts.mstump, clts.solve_tridiagonal, clts.ocean.tke, clts.ocean.superbee_fluxes):
        assert hasattr(fn, "__wrapped__"), fn
    assert clts.mp.mstump is clts.mstump and clts.trend.trend_test is clts.trend_test
    assert "Batched" in clts.trend_test.__doc__
    import pickle                                   # dask and multiprocessing pickle them
    for fn in (clts.stl, clts.trend_test, clts.ocean.tke, clts.mstump):
        assert pickle.loads(pickle.dumps(fn)) is fn


def test_threads_run_one_call_at_a_time_where_serialised(device, monkeypatch):
    import clts.trend.api as trend_api
    monkeypatch.setattr(threads, "needs_serial_calls", lambda dev: True)
    monkeypatch.setattr(threads, "_locks", threads.weakref.WeakKeyDictionary())
    inside, most = [0], [0]
    guard = threading.Lock()
    real = trend_api._run

    def counted(*args, **kwargs):
        with guard:
            inside[0] += 1
            most[0] = max(most[0], inside[0])
        time.sleep(0.02)                      # room for another thread to come in
        try:
            return real(*args, **kwargs)
        finally:
            with guard:
                inside[0] -= 1

    monkeypatch.setattr(trend_api, "_run", counted)
    rng = np.random.default_rng(1)
    ys = [np.cumsum(rng.standard_normal((20, 40)), axis=1) for _ in range(4)]
    want = [clts.trend_test(y, device=device).s for y in ys]
    got = [None] * 4

    def work(i):
        got[i] = clts.trend_test(ys[i], device=device).s

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert most[0] == 1
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_a_bad_profile_value_names_the_key(device, monkeypatch):
    monkeypatch.setattr(threads, "_locks", threads.weakref.WeakKeyDictionary())
    from clts.runtime import plans
    real = plans.profile_value
    monkeypatch.setattr(plans, "profile_value", lambda dev, key: "sometimes"
                        if key == "runtime.serialise_threads" else real(dev, key))
    with pytest.raises(clts.ProfileError, match="runtime.serialise_threads"):
        threads.needs_serial_calls(device)
