"""Replayed MSTL calls (``clts.mstl`` on device arrays, ``runtime.replay``): a shape's second
call is captured whole (its STL rounds' recordings, its own kernels, fills and copies)
and the next calls of that shape enqueue the recording with their own series and fresh
results. Call after call on new data, robust, with several rounds, a Box-Cox transform, from
several threads, under the emulated H100's Plans and after a change of the profile's ``stl``
section, the results are the numpy path's bits (the Box-Cox transform: the unrecorded device
call's), with no host transfer; STL's recordings made inside MSTL's capture belong to it."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import clts
from clts.runtime import capturing
from clts.runtime.replay import Nested

sys.path.insert(0, str(Path(__file__).parent))
from concurrency import run_in_threads  # noqa: E402
from emulated import gpus_over_pocl  # noqa: E402
from test_device_arrays_stl import cube, need, on_device, same  # noqa: E402
from transfers import host_traffic  # noqa: E402

cla = pytest.importorskip("pyopencl.array")
mstl_mod = sys.modules["clts.stl.mstl"]

CASES = [dict(periods=(12, 24)), dict(periods=(12, 24), stl_kwargs=dict(robust=True)),
         dict(periods=12), dict(periods=(12, 24), iterate=3, stl_kwargs=dict(seasonal_jump=2)),
         dict(periods=(12, 24), windows=(9, 13), stl_kwargs=dict(version="flat"))]


@pytest.fixture
def makes(monkeypatch):
    """Counts the MSTL device calls that made their launches (not replayed)."""
    count = [0]
    rounds = mstl_mod._rounds

    def counted(*a, **k):
        count[0] += 1
        return rounds(*a, **k)
    monkeypatch.setattr(mstl_mod, "_rounds", counted)
    return count


def _check(r, ref):
    n = r.to_numpy()
    for k in ("trend", "resid", "weights"):
        assert same(getattr(n, k), getattr(ref, k)), k
    assert sorted(n.seasonal) == sorted(ref.seasonal)
    for p in ref.seasonal:
        assert same(n.seasonal[p], ref.seasonal[p]), p
    assert same(np.asarray(n.diagnostics["failed"]), np.asarray(ref.diagnostics["failed"]))
    assert n.diagnostics["n_failed"] == ref.diagnostics["n_failed"]


def _four_calls(device, makes, kw, batch, dtype=np.float64):
    """Four device calls of ``kw`` on new data of ``batch`` series (a shape no other test of
    this file uses: recordings live as long as the device), read after all of them: each the
    numpy path's bits with no host traffic; the third and fourth replay the second."""
    rng = np.random.default_rng(batch)
    before, got = makes[0], []
    for _ in range(4):
        y = cube(rng, batch=batch).astype(dtype)
        yd = on_device(device, y)
        with host_traffic() as t:
            r = clts.mstl(yd, device=device, **kw)
        assert t.total == 0, t.report()
        got.append((r, clts.mstl(y, device=device, **kw)))
    for r, ref in got:
        _check(r, ref)
    assert makes[0] - before == 2, kw


@pytest.mark.parametrize("kw", CASES, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_repeated_calls_replay(device, makes, kw):
    _four_calls(device, makes, kw, 20 + CASES.index(kw))


def test_float32_replays(device, makes):
    need(device, np.float32)
    _four_calls(device, makes, dict(periods=(12, 24)), 9, np.float32)


def test_boxcox_replays(device, makes):
    """A numeric lmbda (a kernel's log / expm1): a replay on the first call's data gives the
    first (unrecorded) call's bits, its transformed ``observed`` a result of its own."""
    rng = np.random.default_rng(2)
    ys = [np.abs(cube(rng, batch=10)) + 5 for _ in range(3)]
    ys.append(ys[0])
    out = []
    for y in ys:
        yd = on_device(device, y)
        with host_traffic() as t:
            out.append(clts.mstl(yd, (12, 24), lmbda=0.5, device=device))
        assert t.total == 0, t.report()
    assert makes[0] == 2
    first, last = out[0].to_numpy(), out[3].to_numpy()
    _check(out[3], first)
    assert same(last.observed, first.observed) and last.lmbda == 0.5
    assert out[3].observed.data is not out[2].observed.data


def test_threads_replay_their_own_recordings(device, makes):
    """Four threads calling one shape at once: each result is its own data's."""
    rng = np.random.default_rng(3)
    ys = [cube(rng, batch=11) for _ in range(4)]
    wants = [clts.mstl(y, (12, 24), device=device) for y in ys]
    dys = [on_device(device, y) for y in ys]

    def work(i):
        return [clts.mstl(dys[i], (12, 24), device=device) for _ in range(4)]
    for i, results in enumerate(run_in_threads(work, 4)):
        for r in results:
            _check(r, wants[i])
    assert makes[0] < 16


def test_replay_under_the_h100_plans(makes):
    emu = gpus_over_pocl().get("h100")
    if emu is None:
        pytest.skip("emulation runs on pocl")
    _four_calls(emu, makes, dict(periods=(12, 24)), 12)


def test_a_changed_profile_records_again(device, makes, monkeypatch):
    """The key holds the state of the profile's ``stl`` section: once it changes (a tuner or
    a test editing it in memory) the old recording is not replayed."""
    rng = np.random.default_rng(5)
    y = cube(rng, batch=13)
    want, yd = clts.mstl(y, (12, 24), device=device), on_device(device, y)
    for _ in range(3):
        _check(clts.mstl(yd, (12, 24), device=device), want)
    assert makes[0] == 2
    section = dict(device.profile.values.get("stl") or {})
    monkeypatch.setitem(device.profile.values, "stl", dict(section, unused_by_plans=1))
    for _ in range(3):
        _check(clts.mstl(yd, (12, 24), device=device), want)
    assert makes[0] == 4


def test_stl_inside_a_capture_hands_its_recording_over(device, replays):
    """Inside another call's capture STL's Runner replays its recording and hands it to that
    capture as one entry (``runtime.replay.Nested``), not back to its own recorder: no
    recording has two owners. A call that is not recorded (numpy input: its mask read back)
    leaves the capture incomplete."""
    rng = np.random.default_rng(6)
    y = cube(rng, batch=14)
    yd = on_device(device, y)
    for _ in range(2):              # the Runner holds a recording
        clts.stl(yd, 12, device=device)
    before = replays[0]
    with capturing.capture() as cap:
        r = clts.stl(yd, 12, device=device)
    assert replays[0] == before + 1
    nested = [go for go in cap.entries if type(go) is Nested]
    assert cap.complete and len(nested) == 1
    assert same(r.trend.get(), clts.stl(y, 12, device=device).trend)
    clts.stl(yd, 12, device=device)     # its recording is the capture's: made anew
    assert replays[0] == before + 1
    clts.stl(yd, 12, device=device)
    assert replays[0] == before + 2
    with capturing.capture() as cap:
        clts.stl(y, 12, device=device)
    assert not cap.complete


def test_stl_and_mstl_threads_share_no_recording(device, makes):
    """Two threads calling MSTL and two calling STL of the same shape and period at once
    (MSTL's rounds take STL's recordings over while the STL callers record and replay their
    own): every result is its own data's."""
    rng = np.random.default_rng(7)
    ys = [cube(rng, batch=15) for _ in range(4)]
    wants = [clts.mstl(y, (12, 24), device=device) if i < 2 else clts.stl(y, 12, device=device)
             for i, y in enumerate(ys)]
    dys = [on_device(device, y) for y in ys]

    def work(i):
        if i < 2:
            return [clts.mstl(dys[i], (12, 24), device=device) for _ in range(5)]
        return [clts.stl(dys[i], 12, device=device) for _ in range(5)]
    for i, results in enumerate(run_in_threads(work, 4)):
        for r in results:
            if i < 2:
                _check(r, wants[i])
            else:
                n = r.to_numpy()
                for k in ("seasonal", "trend", "resid", "weights"):
                    assert same(getattr(n, k), getattr(wants[i], k)), k
