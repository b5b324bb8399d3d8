"""Replayed matrix-profile launches (clts.mp.replay): a device-array call of a shape, Plan and
options that ran before enqueues the first call's captured launches and fills with its own
series, fresh results and fresh window flags. Call after call (self-join, AB-join, top-k,
plain Euclidean, float32), from several threads and under an emulated GPU's Plans, the
results and diagnostics are the numpy path's, with no host transfer; earlier results keep
their values; what a replay would miss is never recorded."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import clts
from clts.mp import replay as mp_replay
from clts.runtime import capturing

sys.path.insert(0, str(Path(__file__).parent))
from concurrency import run_in_threads  # noqa: E402
from emulated import gpus_over_pocl  # noqa: E402
from test_mp_device_arrays import _same, _series  # noqa: E402
from test_stl_replay import release_then_replay  # noqa: E402
from transfers import host_traffic  # noqa: E402

cla = pytest.importorskip("pyopencl.array")

CASES = [dict(), dict(normalize=False), dict(k=3), dict(TB=900, both=True),
         dict(TB=700, normalize=False), dict(TB=800, k=2, both=True)]


def _data(n, seed):
    """``_series`` with a second gap where the seed puts it: each call's own flags."""
    T = _series(n, seed)
    T[100 + 37 * seed % (n // 5)] = np.nan
    return T


def _keys(kw):
    return ["P", "I"] + (["left_P", "left_I", "right_P", "right_I"] if "TB" not in kw else []) \
        + (["P_B", "I_B"] if kw.get("both") else [])


def _calls(dev, kw, seeds, replays, dtype=np.float64, m=48):
    """Device calls of ``kw`` on new data of one shape per seed: each the numpy path's, with
    its own diagnostics and no host traffic; every call after the second replays (the second
    is recorded)."""
    kw = dict(kw)
    nB = kw.pop("TB", None)
    before = replays[0]
    results = []
    for s in seeds:
        T = _data(1000, s).astype(dtype)
        TB = None if nB is None else _data(nB, s + 50).astype(dtype)
        want = clts.matrix_profile(T, m, TB, device=dev, **kw)
        dA = cla.to_device(dev.queue, T)
        dB = None if TB is None else cla.to_device(dev.queue, TB)
        with host_traffic() as t:
            got = clts.matrix_profile(dA, m, dB, device=dev, **kw)
        assert t.total == 0, t.report()
        results.append((got, want))
    for got, want in results:       # read after all calls: earlier results keep their values
        _same(got, want, _keys(dict(kw, TB=nB) if nB else kw))
        d = dict(clts.to_numpy(got).diagnostics)
        assert d | {"seconds": 0} == dict(want.diagnostics) | {"seconds": 0}, kw
    assert replays[0] - before >= len(seeds) - 2, kw


def test_repeated_calls_replay(device, replays):
    for kw in CASES:
        _calls(device, kw, (1, 2, 3), replays)


def test_float32_series_replay(device, replays):
    _calls(device, {}, (4, 5, 8), replays, dtype=np.float32, m=32)


def test_replay_under_the_h100_plans(replays):
    emu = gpus_over_pocl().get("h100")
    if emu is None:
        pytest.skip("emulation runs on pocl")
    # (top-k: its lists are 26 MiB of temporaries here, recorded within what a device of the
    # H100's memory allows a recording: runtime.replay.limits)
    for kw in (dict(), dict(TB=900, both=True), dict(k=3)):
        _calls(emu, kw, (6, 7, 9), replays)


def test_threads_replay_their_own_recordings(device, replays):
    """Four threads calling one shape at once: each result is its own data's."""
    Ts = [_data(1000, 20 + i) for i in range(4)]
    wants = [clts.matrix_profile(T, 48, device=device) for T in Ts]
    dTs = [cla.to_device(device.queue, T) for T in Ts]

    def work(i):
        return [clts.matrix_profile(dTs[i], 48, device=device) for _ in range(4)]
    for i, results in enumerate(run_in_threads(work, 4)):
        for r in results:
            _same(r, wants[i], _keys({}))
            assert dict(r.diagnostics)["nan_A"] == wants[i].diagnostics["nan_A"]
    assert replays[0] > 0


def test_release_scratch_drops_the_recordings(device, replays):
    T = _data(1000, 30)
    want = clts.matrix_profile(T, 48, device=device)
    dT = cla.to_device(device.queue, T)
    release_then_replay(device, lambda: clts.matrix_profile(dT, 48, device=device),
                        lambda r: _same(r, want, _keys({})), replays,
                        after=mp_replay.RECORD_AFTER)


def test_a_shapes_first_call_is_not_recorded(device, replays):
    """Calls of ever-new lengths record nothing (a recording would keep each one's
    temporaries out of the pool); a length's second call is recorded, its third replays."""
    from clts.runtime import replay
    budget = device.state.constant("replay.budget", replay._Budget)
    Ts = [_data(n, 42) for n in (1011, 1013, 1017)]
    used = budget.used
    for T in Ts:
        _same(clts.matrix_profile(cla.to_device(device.queue, T), 48, device=device),
              clts.matrix_profile(T, 48, device=device), _keys({}))
    assert budget.used == used and replays[0] == 0
    dT = cla.to_device(device.queue, Ts[0])
    clts.matrix_profile(dT, 48, device=device)
    assert budget.used > used and replays[0] == 0
    clts.matrix_profile(dT, 48, device=device)
    assert replays[0] == 1


def test_calls_not_recorded(device, replays):
    """An AB-join of one buffer with itself and the blocked top-k (host lists) are not
    recorded, and compute as before."""
    T = _data(1000, 40)
    whole = cla.to_device(device.queue, T)
    wantAB = clts.matrix_profile(T, 48, T, device=device)
    wantK = clts.matrix_profile(T, 48, k=20, device=device)
    for _ in range(2):
        _same(clts.matrix_profile(whole, 48, whole, device=device), wantAB, _keys({"TB": 1}))
        got = clts.matrix_profile(whole, 48, k=20, device=device)
        np.testing.assert_array_equal(got.I.get(), wantK.I)
    assert replays[0] == 0


@pytest.mark.parametrize("start", [128, 8])
def test_slices_of_a_device_array(device, replays, start):
    """A series that starts inside its buffer (a slice): as a sub-buffer where the start meets
    the device's alignment (``start`` float64 = 1,024 bytes here), else a device copy; the
    numpy path's results, replayed from the second call on."""
    T = _data(1000, 41)
    big = cla.to_device(device.queue, np.concatenate([np.zeros(start), T]))
    want = clts.matrix_profile(T, 48, device=device)
    for _ in range(4):
        _same(clts.matrix_profile(big[start:], 48, device=device), want, _keys({}))
    assert replays[0] >= 2


def test_capture_is_incomplete_when_a_replay_would_miss_something(device):
    """Transfers, pyopencl's own kernels and copies (rows of a device array off the
    sub-buffer alignment), launches waiting on events and a nested capture mark a capture
    incomplete (``record`` then keeps nothing); fills and device-to-device copies are
    entries, made again with the buffers a replay sets."""
    from clts.runtime.memory import copy, fill, scratch, upload_scratch
    from clts.runtime.resident import device_rows
    a = scratch(device, 64, np.float32)
    b = scratch(device, 64, np.float32)
    with capturing.capture() as cap:
        fill(device, a, 1.0)
        copy(device, b.data, a.data, 128, dst_offset=128)
    assert cap.complete and len(cap.entries) == 2
    fill(device, b, 0.0)
    c = scratch(device, 64, np.float32)
    fill(device, c, 3.0)
    cap.entries[1].set(1, c.data)()        # the copy again, from another source
    assert b.get().tolist() == [0.0] * 32 + [3.0] * 32
    rows = cla.to_device(device.queue, np.ones((10, 3)))      # a row: 24 bytes
    for make in (lambda: upload_scratch(device, np.ones(8)),
                 lambda: device_rows(rows, 1, 3),
                 lambda: _pyopencl_fill(b), _nested):
        with capturing.capture() as cap:
            make()
        assert not cap.complete
    device.queue.finish()
    assert capturing.active == 0
    assert mp_replay.record(device, "k", cap, a, None, {}, {}) is None


def test_a_sub_buffer_among_the_temporaries_is_not_recorded(device):
    """A launch reading a sub-buffer (it may be a view of the call's input, which a replay
    would not set anew): not recorded; the same launch on a whole buffer is."""
    import pyopencl as cl

    from clts.runtime.launch import Relaunch
    from clts.runtime.memory import scratch
    T = cla.to_device(device.queue, np.zeros(64))
    whole = cl.Buffer(device.context, cl.mem_flags.READ_WRITE, 4096)
    sub = whole.get_sub_region(0, 1024)
    from clts.runtime.programs import quiet_pyopencl_builds
    with quiet_pyopencl_builds():
        prg = cl.Program(device.context, "__kernel void k(__global float *a) {}").build()
    kernel = prg.k
    for buf, kept in ((sub, False), (scratch(device, 64, np.float32).data, True)):
        cap = capturing.Capture()
        cap.entries.append(Relaunch(device, kernel, (1,), None, [buf]))
        got = mp_replay.record(device, ("sub-buffer test", kept), cap, T, None, {}, {})
        assert (got is not None) == kept


def _nested():
    with capturing.capture():
        pass


def _pyopencl_fill(arr):
    from clts.runtime.launch import pyopencl_kernels
    with pyopencl_kernels():
        arr.fill(0.0)
