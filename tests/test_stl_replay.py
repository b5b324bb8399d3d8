"""Replayed STL launches (clts.runtime.replay): a device-array call of a shape its Plan ran
before enqueues the first call's recorded launches with its own arrays. Call after call, from
several threads and chunk by chunk, the results are the numpy path's bits, with no host
transfer; the recordings stay within their budgets and give them back when dropped."""
from __future__ import annotations

import gc
import sys
from pathlib import Path

import numpy as np
import pytest

import clts
from clts.runtime import replay

sys.path.insert(0, str(Path(__file__).parent))
from concurrency import run_in_threads  # noqa: E402
from emulated import gpus_over_pocl  # noqa: E402
from test_device_arrays_stl import STL_FIELDS, cube, on_device, same  # noqa: E402
from transfers import host_traffic  # noqa: E402

cla = pytest.importorskip("pyopencl.array")

CASES = [dict(), dict(robust=True),
         dict(seasonal_jump=2, trend_jump=3, low_pass_jump=2, interpolation="hermite"),
         dict(version="flat", robust=True), dict(version="intragroup"),
         dict(version="outer"), dict(robust=True, outer_iter=2, fused=32)]     # the fused STL


def test_repeated_calls_replay_with_the_numpy_bits(device, replays):
    """Three calls per case on new data of one shape: the second and third replay the first's
    launches, each with the numpy path's bits and no host traffic."""
    rng = np.random.default_rng(5)
    for kw in CASES:
        _three_calls_replay(device, rng, kw, replays)


def _three_calls_replay(device, rng, kw, replays, fused=False):
    """Three device calls of ``kw`` on new data of one shape: each with the numpy path's bits
    (and the fused STL where ``fused``) and no host traffic; the second and third replay."""
    before = replays[0]
    for _ in range(3):
        y = cube(rng)
        ref = clts.stl(y, 12, device=device, **kw)
        yd = on_device(device, y)
        with host_traffic() as t:
            r = clts.stl(yd, 12, device=device, **kw)
        assert t.total == 0, t.report()
        assert r.diagnostics["fused"] or not fused, kw
        n = r.to_numpy()
        for k in STL_FIELDS:
            assert same(getattr(n, k), getattr(ref, k)), (kw, k)
        assert same(n.diagnostics["failed"], ref.diagnostics["failed"]), kw
    assert replays[0] - before >= 2, kw


def test_replay_under_the_h100_plans(replays):
    """The emulated H100's own Plans (the fused STL, its work-group from the occupancy model):
    repeated calls replay, with the numpy path's bits and no host traffic."""
    emu = gpus_over_pocl().get("h100")
    if emu is None:
        pytest.skip("emulation runs on pocl")
    rng = np.random.default_rng(10)
    for kw in (dict(), dict(robust=True)):
        _three_calls_replay(emu, rng, kw, replays, fused=True)


def test_chunks_replay_per_row_offset(device, replays, monkeypatch):
    """Chunks of one call (the ``max_chunk`` option): each row offset its own recording; a
    second call replays them all."""
    # room, whatever earlier tests of this process recorded (a full budget drops every free
    # recording at the next add, the first chunks' too: seen once in CI, 1 replay of 3)
    monkeypatch.setattr(replay, "DEVICE_BYTES", 1 << 62)
    rng = np.random.default_rng(6)
    with clts.set_options(max_chunk=4):
        for i in range(2):
            y = cube(rng, batch=11)
            ref = clts.stl(y, 12, robust=True, device=device)
            r = clts.stl(on_device(device, y), 12, robust=True, device=device)
            for k in STL_FIELDS:
                assert same(getattr(r.to_numpy(), k), getattr(ref, k)), (i, k)
    assert replays[0] >= 3          # the second call's three chunks


def test_threads_replay_their_own_recordings(device, replays):
    """Four threads calling the same shape at once: a recording is replayed by one call at a
    time (the others record their own); every result is its own data's."""
    rng = np.random.default_rng(7)
    ys = [cube(rng) for _ in range(4)]
    refs = [clts.stl(y, 12, robust=True, device=device) for y in ys]
    yds = [on_device(device, y) for y in ys]

    def work(i):
        return [clts.stl(yds[i], 12, robust=True, device=device).to_numpy() for _ in range(4)]
    for i, results in enumerate(run_in_threads(work, 4)):
        for n in results:
            for k in STL_FIELDS:
                assert same(getattr(n, k), getattr(refs[i], k)), (i, k)
    assert replays[0] > 0


def test_budgets(device, replays, monkeypatch):
    """A call whose temporaries exceed ``MAX_BYTES`` is not recorded (and runs as before); a
    recording dropped gives its bytes back to the device's budget. A device with much memory
    allows more (``MEMORY_SHARE``)."""
    y = cube(np.random.default_rng(8), batch=5)
    ref = clts.stl(y, 12, device=device)
    assert replay.limits(device) >= (replay.MAX_BYTES, replay.DEVICE_BYTES)
    monkeypatch.setattr(replay, "MEMORY_SHARE", 1 << 62)
    monkeypatch.setattr(replay, "MAX_BYTES", 0)
    for _ in range(2):
        r = clts.stl(on_device(device, y), 12, device=device)
        for k in STL_FIELDS:
            assert same(getattr(r.to_numpy(), k), getattr(ref, k)), k
    assert replays[0] == 0
    monkeypatch.setattr(replay, "MAX_BYTES", 1 << 20)
    # room, whatever earlier tests of this process recorded (a full budget would first drop
    # every free recording: the count below would not be used + 4000)
    monkeypatch.setattr(replay, "DEVICE_BYTES", 1 << 62)
    budget = device.state.constant("replay.budget", replay._Budget)
    used = budget.used
    temps = [cla.empty(device.queue, 1000, np.float32)]
    rec = replay.Recorder().add(device, "k", [], temps, {})
    assert rec is not None and budget.used == used + 4000
    del rec
    gc.collect()        # the Recorder dropped with it: no reference left
    assert budget.used == used
    monkeypatch.setattr(replay, "DEVICE_BYTES", used + 100)
    monkeypatch.setattr(device.state, "drop_recordings", lambda: None)
    assert replay.Recorder().add(device, "k", [], temps, {}) is None


def test_a_full_budget_drops_the_free_recordings(device, monkeypatch):
    """A recording that does not fit the device's budget drops every owner's free recordings
    first (the shapes called again record again), then fits; one held by a result stays."""
    budget = device.state.constant("replay.budget", replay._Budget)
    a, b = replay.Recorder(), replay.Recorder()
    temps = [cla.empty(device.queue, 1000, np.float32)]
    held = a.add(device, "held", [], temps, {})
    a.take("held")                              # in use: not free
    assert a.add(device, "free", [], [cla.empty(device.queue, 1000, np.float32)], {})
    monkeypatch.setattr(replay, "MEMORY_SHARE", 1 << 62)
    monkeypatch.setattr(replay, "DEVICE_BYTES", budget.used + 100)
    rec = b.add(device, "new", [], [cla.empty(device.queue, 1000, np.float32)], {})
    assert rec is not None and b.take("new") is rec
    assert a.take("free") is None               # dropped
    assert budget.used <= replay.DEVICE_BYTES
    del held


def test_release_scratch_drops_the_recordings(device, replays):
    """``release_scratch`` gives the recordings' temporaries back (their bytes leave the
    budget); the next call records again, with the same bits."""
    y = cube(np.random.default_rng(9), batch=6)
    ref = clts.stl(y, 12, device=device)
    yd = on_device(device, y)

    def check(r):
        for k in STL_FIELDS:
            assert same(getattr(r.to_numpy(), k), getattr(ref, k)), k
    release_then_replay(device, lambda: clts.stl(yd, 12, device=device), check, replays)


def release_then_replay(device, call, check, replays, after=0):
    """``call()`` recorded (made ``after + 1`` times: the owner records a shape's call after
    that many); ``release_scratch`` gives every recording's bytes back; two more calls
    (recorded again, then replayed), each result passed to ``check``."""
    from clts.runtime.memory import release_scratch
    for _ in range(after + 1):
        call().to_numpy()
    budget = device.state.constant("replay.budget", replay._Budget)
    assert budget.used > 0
    release_scratch(device)
    gc.collect()
    assert budget.used == 0
    for _ in range(2):
        check(call())
    assert budget.used > 0 and replays[0] >= 1
