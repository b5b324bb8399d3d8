"""Repeated ``bfast_breaks`` calls on device cubes: from a shape's second call on, a call
enqueues the captured launches again with its own cube and fresh results
(``runtime.replay.run_recorded``). Call after call on new data (float64, float32, integer
cubes, LWZ with confidence intervals, without magnitudes), from several threads and under the
emulated H100's Plans, the results are the numpy path's, with no host traffic; per-pixel
regressors are not recorded. The design's independent columns are remembered per design;
a call's checked arguments, design and Plan per argument set (``clts.bfast.call_memo``)."""
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


def _memo(device):
    from clts.bfast import breaks_api
    return device.state.constant(breaks_api.MEMO, dict)


def test_arguments_remembered(device, monkeypatch):
    """A device call made again with the same arguments skips its checks, design and Plan
    (counted at ``independent_columns``), and gives the numpy path's results; other arguments,
    dates written in place and a cube of another shape are checked anew."""
    from clts.bfast import breaks_api
    if not device.fp64:
        pytest.skip("the comparison's tolerances are float64's")
    calls = []
    real = breaks_api.independent_columns
    monkeypatch.setattr(breaks_api, "independent_columns",
                        lambda X, dtype=np.float64: calls.append(1) or real(X, dtype))
    y, t = _data(40, np.float64, 23)
    yd = _to_device(device, y)
    kw = dict(device=device, freq=1, order=1, progress=False)
    n = len(_memo(device))
    for _ in range(3):
        _same_breaks(clts.bfast_breaks(y, t, **kw), clts.bfast_breaks(yd, t, **kw), 1e-9)
    assert len(_memo(device)) == n + 1
    assert len(calls) == 4                      # three numpy calls and the first device call
    got = clts.bfast_breaks(yd, t, **dict(kw, criterion="LWZ"))
    _same_breaks(clts.bfast_breaks(y, t, **dict(kw, criterion="LWZ")), got, 1e-9)
    assert len(calls) == 6 and len(_memo(device)) == n + 2
    clts.bfast_breaks(yd, t, **dict(kw, breaks=4))
    with pytest.raises(ValueError, match="breaks must be"):
        clts.bfast_breaks(yd, t, **dict(kw, breaks=4.0))     # 4.0 is not 4: its own key
    assert len(_memo(device)) == n + 3
    t2 = t.copy()
    clts.bfast_breaks(yd, t2, **kw)
    t2[5] = t2[4]                               # written in place: checked again
    with pytest.raises(ValueError, match="increasing"):
        clts.bfast_breaks(yd, t2, **kw)
    with pytest.raises(ValueError, match="entries"):
        clts.bfast_breaks(_to_device(device, y[:-1]), t, **kw)
    with pytest.raises(ValueError, match="criterion"):
        clts.bfast_breaks(yd, t, **dict(kw, criterion="AIC"))


def test_not_remembered(device):
    """Dates that are not one numpy array, covariates given as arrays, a given Plan and numpy
    cubes are not remembered."""
    y, t = _data(41, np.float64, 24)
    yd = _to_device(device, y)
    kw = dict(device=device, freq=1, order=1, progress=False)
    n = len(_memo(device))
    plan = clts.bfast_breaks(yd, list(t), **kw).plan
    clts.bfast_breaks(yd, t, plan=plan, **kw)
    clts.bfast_breaks(yd, t, regressors=np.cos(t)[:, None], **kw)
    clts.bfast_breaks(y, t, **kw)
    assert len(_memo(device)) == n


def test_the_warning_of_a_remembered_call(device):
    """A rank-deficient design's warning comes with every call, remembered or not, at the
    caller's line."""
    t = 2000 + np.arange(40, dtype=np.float64)      # one date a season: harmonics constant
    y = np.random.default_rng(3).standard_normal((40, 3))
    yd = _to_device(device, y)
    kw = dict(device=device, freq=1, order=1, progress=False)
    for _ in range(3):
        with pytest.warns(UserWarning, match="rank-deficient") as caught:
            r = clts.bfast_breaks(yd, t, **kw)
        assert caught[0].filename == __file__           # the caller's line
        assert r.diagnostics["dropped_columns"] == ["sin1", "cos1"]


def test_a_profile_change_plans_again(device, monkeypatch):
    """Remembered arguments hold under the profile's ``bfast`` section they were checked
    under: changed, the next call makes its Plan again."""
    if not device.fp64:
        pytest.skip("the comparison's tolerances are float64's")
    y, t = _data(42, np.float64, 25)
    yd = _to_device(device, y)
    kw = dict(device=device, freq=1, order=1, progress=False)
    p0 = clts.bfast_breaks(yd, t, **kw).plan
    assert clts.bfast_breaks(yd, t, **kw).plan == p0
    section = dict(device.profile.values["bfast"])
    wg = 16 if p0.wg != 16 else 8
    monkeypatch.setitem(device.profile.values, "bfast",
                        dict(section, breakpoints=dict(section["breakpoints"], wg=wg)))
    for _ in range(3):
        got = clts.bfast_breaks(yd, t, **kw)
        assert got.plan.wg == wg
        _same_breaks(clts.bfast_breaks(y, t, **kw), got, 1e-9)
    monkeypatch.setitem(device.profile.values, "bfast", section)
    assert clts.bfast_breaks(yd, t, **kw).plan == p0
