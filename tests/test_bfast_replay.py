"""Repeated ``bfast_monitor`` calls on device cubes (clts.bfast.monitor_device): a call whose
arguments ran before skips its checks and set-up, and from its second call on enqueues the
captured launches again with its own cube and fresh results. Call after call (histories all /
ROC / a date / BP, detailed, integer cubes, several chunks, a view with an offset), from
several threads and under an emulated GPU's Plans, the results and diagnostics are the numpy
path's, with no host traffic; earlier results keep their values; the argument checks of a
call that differs in anything still run."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import clts
from clts.bfast import monitor_device

sys.path.insert(0, str(Path(__file__).parent))
from concurrency import run_in_threads  # noqa: E402
from emulated import gpus_over_pocl  # noqa: E402
from test_bfast_device import _cube, _same_monitor, _to_device  # noqa: E402
from test_stl_replay import release_then_replay  # noqa: E402
from transfers import host_traffic  # noqa: E402

#: (cube dtype, history, nodata, other keywords); "date": a given start date
CASES = [(np.float64, "all", None, {}), (np.float32, "ROC", None, {}),
         (np.float64, "date", None, dict(detailed=True)), (np.float32, "BP", None, {}),
         (np.int16, "ROC", -9999, dict(magnitudes=False)),
         (np.float64, "all", None, dict(chunk_bytes=150 * 16 * 6)),
         (np.float32, "all", None, dict(type="OLS-CUSUM", k=2))]


def _data(seed, dtype, nodata, M=21):
    y, t, start = _cube(seed, M=M)
    if nodata is not None:
        y = np.where(np.isnan(y), nodata, np.clip(np.round(y * 100), 0, 254)).astype(dtype)
    return y.astype(dtype), t, start


def _calls(dev, case, seeds, replays, *, lead=0, expect_replays=True):
    """Device calls of ``case`` on new data of one shape per seed (``lead`` elements before
    the cube in its buffer): each the numpy path's, no host traffic after the first; every call
    after the second replays where the capture is complete."""
    dtype, history, nodata, extra = case
    before = replays[0]
    results = []
    for i, s in enumerate(seeds):
        y, t, start = _data(s, dtype, nodata)
        kw = dict(device=dev, k=1, history=t[12] if history == "date" else history,
                  nodata=nodata, progress=False, lanes=4)
        kw.update(extra)
        want = clts.bfast_monitor(y, t, start, **kw)
        flat = np.concatenate([np.zeros(lead, y.dtype), y.ravel()])
        yd = _to_device(dev, flat)[lead:].reshape(y.shape) if lead else _to_device(dev, y)
        with host_traffic() as tr:
            got = clts.bfast_monitor(yd, t, start, **kw)
        if i:
            assert tr.total == 0, tr.report()
        results.append((got, want))
    for got, want in results:       # read after all calls: earlier results keep their values
        _same_monitor(want, got)
    if expect_replays:
        assert replays[0] - before >= len(seeds) - 2, case


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{np.dtype(c[0])}-{c[1]}-{len(c[3])}")
def test_repeated_calls_replay(device, replays, case):
    # several chunks copy their results into the outputs (not captured: not replayed)
    _calls(device, case, (1, 2, 3, 4), replays, expect_replays="chunk_bytes" not in case[3])


def test_a_view_with_an_offset(device, replays):
    _calls(device, CASES[0], (5, 6, 7), replays, lead=3)


def test_replay_under_the_h100_plans(replays):
    emu = gpus_over_pocl().get("h100")
    if emu is None:
        pytest.skip("emulation runs on pocl")
    for case in CASES[:3]:
        _calls(emu, case, (8, 9, 10), replays)


def test_threads_replay_their_own_calls(device, replays):
    """Four threads calling one shape at once: each result is its own cube's."""
    data = [_data(20 + i, np.float32, None) for i in range(4)]
    t, start = data[0][1], data[0][2]
    kw = dict(device=device, k=1, history="ROC", progress=False)
    wants = [clts.bfast_monitor(y, t, start, **kw) for y, _, _ in data]
    yds = [_to_device(device, y) for y, _, _ in data]

    def work(i):
        return [clts.bfast_monitor(yds[i], t, start, **kw) for _ in range(4)]
    for i, results in enumerate(run_in_threads(work, 4)):
        for r in results:
            _same_monitor(wants[i], r)
    assert replays[0] > 0


def test_release_scratch_drops_the_recordings(device, replays):
    y, t, start = _data(30, np.float64, None)
    want = clts.bfast_monitor(y, t, start, device=device, k=1)
    yd = _to_device(device, y)
    release_then_replay(device, lambda: clts.bfast_monitor(yd, t, start, device=device, k=1),
                        lambda r: _same_monitor(want, r), replays,
                        after=monitor_device.RECORD_AFTER)


def test_checks_still_run_for_other_arguments(device):
    """A remembered call does not stand in for one that differs in any argument: a bool
    ``trend`` against 1, another dtype of cube, another context's or a non-contiguous cube,
    dates written in place, another start."""
    y, t, start = _data(31, np.float64, None)
    yd = _to_device(device, y)
    kw = dict(device=device, k=1)
    for _ in range(3):
        first = clts.bfast_monitor(yd, t, start, **kw)
    with pytest.raises(TypeError, match="trend"):
        clts.bfast_monitor(yd, t, start, trend=1, **kw)
    with pytest.raises(TypeError):
        clts.bfast_monitor(_to_device(device, y.astype(np.complex64)), t, start, **kw)
    with pytest.raises(ValueError, match="C-contiguous"):
        clts.bfast_monitor(yd[:, ::2], t, start, **kw)
    t2 = t.copy()
    got = clts.bfast_monitor(yd, t2, start, **kw)
    _same_monitor(clts.bfast_monitor(y, t2, start, **kw), got)
    t2[5] = t2[4]                   # written in place: checked again
    with pytest.raises(ValueError, match="increasing"):
        clts.bfast_monitor(yd, t2, start, **kw)
    later = clts.bfast_monitor(yd, t, t[120], **kw)
    _same_monitor(clts.bfast_monitor(y, t, t[120], **kw), later)
    _same_monitor(clts.bfast_monitor(y, t, start, **kw), first)


def test_a_profile_change_plans_again(device, monkeypatch):
    """The remembered arguments hold under the profile's ``bfast`` section they were checked
    under: changed, the next call makes its Plan again."""
    y, t, start = _data(32, np.float32, None)
    yd = _to_device(device, y)
    kw = dict(device=device, k=1)
    p0 = clts.bfast_monitor(yd, t, start, **kw).plan
    assert clts.bfast_monitor(yd, t, start, **kw).plan == p0
    section = dict(device.profile.values["bfast"])
    lanes = 2 if p0.lanes != 2 else 4
    fused = dict(section[p0.version], lanes=lanes)
    monkeypatch.setitem(device.profile.values, "bfast", dict(section, **{p0.version: fused}))
    for _ in range(3):              # checked and planned again, then remembered anew
        got = clts.bfast_monitor(yd, t, start, **kw)
        assert got.plan.lanes == lanes
        _same_monitor(clts.bfast_monitor(y, t, start, **kw), got)
    monkeypatch.setitem(device.profile.values, "bfast", section)
    for _ in range(3):              # back: the first Plan's calls (and recordings) again
        got = clts.bfast_monitor(yd, t, start, **kw)
        assert got.plan == p0
        _same_monitor(clts.bfast_monitor(y, t, start, **kw), got)


def test_not_remembered(device, replays):
    """Numpy cubes, dates that are not one numpy array and unhashable arguments are not
    remembered; they compute as before."""
    y, t, start = _data(33, np.float64, None)
    yd = _to_device(device, y)
    memo = device.state.constant("bfast.monitor_calls", dict)
    n = len(memo)
    want = clts.bfast_monitor(y, t, start, device=device, k=1)
    for _ in range(3):
        _same_monitor(want, clts.bfast_monitor(yd, list(t), start, device=device, k=1))
        _same_monitor(want, clts.bfast_monitor(yd, t, start, device=device, k=1,
                                               level=[0.05, 0.05]))
    assert len(memo) == n and replays[0] == 0


def test_out_of_memory_in_a_replay_takes_the_calls_own_path(device, replays):
    """An allocation failure while a recording is replayed (here injected at its launch): the
    call runs its own way (the chunked loop that frees memory and retries), same results."""
    from clts.runtime import faults
    y, t, start = _data(34, np.float32, None)
    want = clts.bfast_monitor(y, t, start, device=device, k=1)
    yd = _to_device(device, y)
    for _ in range(3):
        clts.bfast_monitor(yd, t, start, device=device, k=1)
    n = replays[0]
    assert n >= 1
    with faults.inject("alloc", times=1) as plan:
        got = clts.bfast_monitor(yd, t, start, device=device, k=1)
    assert plan["times"] == 0 and replays[0] == n + 1
    _same_monitor(want, got)
