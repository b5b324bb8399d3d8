"""Repeated TKE steps on device arrays (``runtime.replay.run_recorded``): a grid's second step
is recorded, the next ones enqueue its launches again with their own arrays and fresh results.
Step after step (both advection versions, float32, a model's loop feeding each step's results
to the next, the H100 Plans, several threads), the numpy path's bits with no host traffic;
earlier results keep theirs. Inputs converted on the way (another dtype) are not recorded; a
recording whose kernel objects the driver will not make again replays on the shared ones."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import clts
from clts.ocean.inputs import benchmark_inputs

sys.path.insert(0, str(Path(__file__).parent))
from concurrency import run_in_threads  # noqa: E402
from emulated import gpus_over_pocl  # noqa: E402
from transfers import host_traffic  # noqa: E402

cla = pytest.importorskip("pyopencl.array")

SIZE = 2 ** 12


def _inputs(seed, dtype=np.float64):
    """The benchmark's inputs with the fields a step updates scaled by ``seed`` (positive)."""
    x = dict(benchmark_inputs(SIZE))
    f = 1 + 0.05 * seed
    x["tke"] = x["tke"] * f
    x["dtke"] = x["dtke"] * (2 - f)
    x["forc"] = x["forc"] * f
    x["kbot"] = x["kbot"].astype(np.int32)
    return {k: (v.astype(dtype) if k != "kbot" and isinstance(v, np.ndarray) else v)
            for k, v in x.items()}


def _on_device(dev, x):
    return {k: cla.to_device(dev.queue, np.ascontiguousarray(v)) for k, v in x.items()}


def _same(got, want):
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g.get(), w)


def _steps(dev, seeds, replays, dtype=np.float64, **kw):
    before = replays[0]
    results = []
    for s in seeds:
        x = _inputs(s, dtype)
        want = clts.ocean.tke(*x.values(), device=dev, **kw)
        xd = _on_device(dev, x)
        with host_traffic() as t:
            got = clts.ocean.tke(*xd.values(), device=dev, **kw)
        assert t.total == 0, t.report()
        results.append((got, want))
    for got, want in results:       # read after all steps: earlier results keep their values
        _same(got, want)
    assert replays[0] - before >= len(seeds) - 2, kw


@pytest.mark.parametrize("kw", [{}, dict(advection="inline"), dict(advection="stored")],
                         ids=str)
def test_repeated_steps_replay(device, replays, kw):
    _steps(device, (1, 2, 3, 4), replays, **kw)


def test_float32_steps_replay(device, replays):
    _steps(device, (5, 6, 7), replays, dtype=np.float32)


def test_replay_under_the_h100_plans(replays):
    emu = gpus_over_pocl().get("h100")
    if emu is None:
        pytest.skip("emulation runs on pocl")
    _steps(emu, (8, 9, 10), replays)


def test_a_model_loop(device, replays):
    """Each step's tke and dtke are the next step's inputs, the time levels rotating as a
    model's do: the same fields as the same loop on numpy arrays."""
    x = _inputs(0)
    xd = _on_device(device, x)
    levels = [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    for step in range(9):
        tau, taup1, taum1 = levels[step % 3]
        kw = dict(tau=tau, taup1=taup1, taum1=taum1, device=device)
        tke, dtke, corr = clts.ocean.tke(*x.values(), **kw)
        tke_d, dtke_d, corr_d = clts.ocean.tke(*xd.values(), **kw)
        _same((tke_d, dtke_d, corr_d), (tke, dtke, corr))
        x.update(tke=tke, dtke=dtke)
        xd.update(tke=tke_d, dtke=dtke_d)
    assert replays[0] >= 3      # a level triple's second step is recorded, its third replayed


def test_threads_replay_their_own_steps(device, replays):
    xs = [_inputs(20 + i) for i in range(4)]
    wants = [clts.ocean.tke(*x.values(), device=device) for x in xs]
    xds = [_on_device(device, x) for x in xs]

    def work(i):
        return [clts.ocean.tke(*xds[i].values(), device=device) for _ in range(4)]
    for i, results in enumerate(run_in_threads(work, 4)):
        for r in results:
            _same(r, wants[i])
    assert replays[0] > 0


def test_converted_inputs_are_not_recorded(device, replays):
    """A float32 dtke among float64 fields is converted on the device for each step: such
    steps are not recorded, and compute as before."""
    before = replays[0]
    for s in (1, 2, 3):
        x = _inputs(s)
        want = clts.ocean.tke(*x.values(), device=device)
        xd = _on_device(device, x)
        xd["dtke"] = cla.to_device(device.queue, x["dtke"].astype(np.float32))
        x["dtke"] = x["dtke"].astype(np.float32).astype(np.float64)
        want = clts.ocean.tke(*x.values(), device=device)
        _same(clts.ocean.tke(*xd.values(), device=device), want)
    assert replays[0] == before


def test_shared_kernels_when_the_driver_makes_none(device, replays, monkeypatch):
    """Where a kernel object of its own cannot be made, a recording replays the call's shared
    kernels (their arguments all set anew, under the launch lock)."""
    from clts.runtime.launch import Relaunch
    from clts.runtime.replay import Recording

    def refuse(self):
        raise RuntimeError("no kernel object")
    monkeypatch.setattr(Relaunch, "prepared", refuse)
    made = []
    init = Recording.__init__

    def spy(self, *a, **k):
        init(self, *a, **k)
        made.append(self)
    monkeypatch.setattr(Recording, "__init__", spy)
    from clts.runtime.memory import release_scratch
    release_scratch(device)             # no recording made before this test's
    _steps(device, (11, 12, 13, 14), replays, lanes=1)
    assert made and all(type(go) is Relaunch for rec in made for go in rec.seq)


def test_a_slot_is_an_input_or_an_output(device):
    """``record_call`` refuses a name given to an input and an output (the output would take
    the input's place in the recording: the TKE step's first recordings read the previous
    step's results as its tke and dtke)."""
    from clts.runtime import capturing
    from clts.runtime.replay import Recorder, record_call
    a = cla.zeros(device.queue, 8, np.float32)
    cap = capturing.Capture()
    with pytest.raises(ValueError, match="input and an output"):
        record_call(device, Recorder(), "k", cap, {"tke": a.base_data}, {"tke": a})
