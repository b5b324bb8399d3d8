"""Replayed multi-dimensional profiles (``clts.mstump`` on device arrays): from a shape's
third call on, a call enqueues its second call's captured launches, fills and row copies
with its own T and fresh P / I. Call after call on new data (z-normalised, plain p = 2,
forced dimensions, discords, one dimension, float32, constant windows and gaps), from
several threads and under the emulated H100's Plans, the results are the numpy path's bits,
with no host transfer; a view with an offset and a simulator are not recorded."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import clts

sys.path.insert(0, str(Path(__file__).parent))
from concurrency import run_in_threads  # noqa: E402
from emulated import gpus_over_pocl  # noqa: E402
from transfers import host_traffic  # noqa: E402

cla = pytest.importorskip("pyopencl.array")

CASES = [dict(d=3), dict(d=3, normalize=False), dict(d=4, include=[2], discords=True),
         dict(d=1)]


def _data(d, n, seed, dtype=np.float64):
    """Random walks with each seed's own constant run and gap."""
    rng = np.random.default_rng(seed)
    T = np.cumsum(rng.standard_normal((d, n)), axis=1)
    k = seed % d
    T[k, 50 + 7 * seed:90 + 7 * seed] = T[k, 50 + 7 * seed]
    T[(k + 1) % d, 300 + seed] = np.nan
    return T.astype(dtype)


def _calls(dev, replays, seeds, d, dtype=np.float64, m=40, n=600, **kw):
    """Device calls on new data of one shape per seed, read after all of them: each the
    numpy path's bits, no host traffic; every call after the second replays."""
    before = replays[0]
    got = []
    for s in seeds:
        T = _data(d, n, s, dtype)
        dT = cla.to_device(dev.queue, T)
        with host_traffic() as t:
            P, I = clts.mstump(dT, m, device=dev, **kw)
        assert t.total == 0, t.report()
        single = dict(precision="single") if dtype == np.float32 else {}
        got.append((P, I, clts.mstump(T, m, device=dev, **kw, **single)))
    for P, I, (wP, wI) in got:
        np.testing.assert_array_equal(P.get(), wP)
        np.testing.assert_array_equal(I.get(), wI)
    assert replays[0] - before >= len(seeds) - 2, kw


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_repeated_calls_replay(device, replays, case):
    _calls(device, replays, (1, 2, 3, 4), **case)


def test_float32_replays(device, replays):
    _calls(device, replays, (5, 6, 7), 2, dtype=np.float32, m=24)


def test_replay_under_the_h100_plans(replays):
    emu = gpus_over_pocl().get("h100")
    if emu is None:
        pytest.skip("emulation runs on pocl")
    # the Plans' partial profiles are 44 MB here: within what a recording may hold on a
    # device of the H100's memory (runtime.replay.limits), not on pocl's own
    from clts.runtime import replay
    assert replay.limits(emu)[0] > 44 << 20 >= replay.MAX_BYTES
    _calls(emu, replays, (8, 9, 10), 3)


def test_threads_replay_their_own_recordings(device, replays):
    """Four threads calling one shape at once: each result is its own data's."""
    Ts = [_data(3, 500, 20 + i) for i in range(4)]
    wants = [clts.mstump(T, 32, device=device) for T in Ts]
    dTs = [cla.to_device(device.queue, T) for T in Ts]

    def work(i):
        return [clts.mstump(dTs[i], 32, device=device) for _ in range(4)]
    for i, results in enumerate(run_in_threads(work, 4)):
        for P, I in results:
            np.testing.assert_array_equal(P.get(), wants[i][0])
            np.testing.assert_array_equal(I.get(), wants[i][1])
    assert replays[0] > 0


def test_a_view_and_another_chunk_size(device, replays):
    """Rows of a larger buffer (an offset: copied, not recorded) give the numpy path's
    results; ``max_chunk`` is part of a recording's key (the launches differ)."""
    T = _data(4, 500, 30)
    big = cla.to_device(device.queue, T)
    want = clts.mstump(T[1:], 32, device=device)
    for _ in range(3):
        P, I = clts.mstump(big[1:], 32, device=device)
        np.testing.assert_array_equal(P.get(), want[0])
        np.testing.assert_array_equal(I.get(), want[1])
    assert replays[0] == 0
    dT = cla.to_device(device.queue, T)
    want = clts.mstump(T, 32, device=device)
    for chunk in (None, 2, None, 2, None, 2):
        with clts.set_options(max_chunk=chunk):
            P, I = clts.mstump(dT, 32, device=device)
        np.testing.assert_array_equal(P.get(), want[0])
        np.testing.assert_array_equal(I.get(), want[1])
    assert replays[0] == 2
    mod = sys.modules["clts.mp.mstump"]
    keys = device.state.constant("mstump.recorder", mod._recorder)._free
    assert {k[-1] for k in keys if k[3] == 32 and k[1] == 4} == {None, 2}
