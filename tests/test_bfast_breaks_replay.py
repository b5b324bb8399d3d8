"""Repeated ``bfast_breaks`` calls on device cubes: from a shape's second call on, a call
enqueues the captured launches again with its own cube and fresh results
(``runtime.replay.run_recorded``). Call after call on new data (float64, float32, integer
cubes, LWZ with confidence intervals, without magnitudes), from several threads and under the
emulated H100's Plans, the results are the numpy path's, with no host traffic; per-pixel
regressors are not recorded. The design's independent columns are remembered per design."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import clts
from clts.bfast import breakpoints

sys.path.insert(0, str(Path(__file__).parent))
from concurrency import run_in_threads  # noqa: E402
from emulated import gpus_over_pocl  # noqa: E402
from test_bfast_device import _breaks_cube, _same_breaks, _to_device  # noqa: E402
from transfers import host_traffic  # noqa: E402

CASES = [(np.float64, {}), (np.float32, dict(dtype=np.float32)),
         (np.float64, dict(criterion="LWZ", order=1, confint=0.9)),
         (np.int16, dict(order=2, magnitudes=False))]


def _data(seed, dtype, M):
    y, t = _breaks_cube(seed, M=M)
    if dtype == np.int16:
        y = np.where(np.isnan(y), 0, np.round(100 * y)).astype(np.int16)
    return y, t


def _calls(dev, replays, dtype, kw, M, seeds=(1, 2, 3, 4)):
    """Device calls on new cubes of ``M`` pixels (a shape no other test here uses), read after
    all of them: each the numpy path's results, no host traffic; from the third on, replays."""
    kw = dict(kw, device=dev, freq=1, progress=False)
    before, got = replays[0], []
    for s in seeds:
        y, t = _data(s, dtype, M)
        yd = _to_device(dev, y)
        clts.bfast_breaks(_to_device(dev, y[:, :1]), t, **kw)    # these dates' constants
        with host_traffic() as tr:
            b = clts.bfast_breaks(yd, t, **kw)
        assert tr.total == 0, tr.report()
        got.append((clts.bfast_breaks(y, t, **kw), b))
    for a, b in got:
        _same_breaks(a, b, 1e-9)
    assert replays[0] - before >= len(seeds) - 2, kw


@pytest.mark.parametrize("dtype,kw", CASES, ids=lambda v: str(v))
def test_repeated_calls_replay(device, replays, dtype, kw):
    if not device.fp64:
        pytest.skip("the comparison's tolerances are float64's")
    _calls(device, replays, dtype, kw, 20 + [c[1] for c in CASES].index(kw))


def test_replay_under_the_h100_plans(replays):
    emu = gpus_over_pocl().get("h100")
    if emu is None:
        pytest.skip("no pocl device here")
    _calls(emu, replays, np.float64, dict(order=1), 30, seeds=(5, 6, 7))


def test_threads(device, replays):
    """Four threads calling one shape at once: each result is its own cube's."""
    if not device.fp64:
        pytest.skip("the comparison's tolerances are float64's")
    cubes = [_data(10 + i, np.float64, 31) for i in range(4)]
    kw = dict(device=device, freq=1, progress=False)
    wants = [clts.bfast_breaks(y, t, **kw) for y, t in cubes]
    dys = [_to_device(device, y) for y, _ in cubes]

    def work(i):
        return [clts.bfast_breaks(dys[i], cubes[i][1], **kw) for _ in range(4)]
    for i, results in enumerate(run_in_threads(work, 4)):
        for b in results:
            _same_breaks(wants[i], b, 1e-9)
    assert replays[0] > 0


def test_independent_columns_remembered(monkeypatch):
    """The kept columns of a design are computed once per design values (and dtype); a large
    design is not kept."""
    calls = []
    real = breakpoints._independent_columns

    def counted(X, dtype):
        calls.append(X.shape)
        return real(X, dtype)
    monkeypatch.setattr(breakpoints, "_independent_columns", counted)
    monkeypatch.setattr(breakpoints, "_memo", {})
    t = np.arange(50) / 1.0
    X = np.column_stack([np.ones(50), t / 50, np.cos(2 * np.pi * t), np.sin(2 * np.pi * t)])
    first = breakpoints.independent_columns(X)
    assert first == [0, 1] and breakpoints.independent_columns(X.copy()) == first
    assert len(calls) == 1
    first.append(9)                          # a caller's list is its own
    assert breakpoints.independent_columns(X) == [0, 1]
    assert breakpoints.independent_columns(X, np.float32) == [0, 1] and len(calls) == 2
    X2 = X.copy()
    X2[3, 3] = 0.5                           # other values: computed
    assert breakpoints.independent_columns(X2) == [0, 1, 3] and len(calls) == 3
    monkeypatch.setattr(breakpoints, "MEMO_BYTES", 8)
    breakpoints.independent_columns(X)
    breakpoints.independent_columns(X)
    assert len(calls) == 5
