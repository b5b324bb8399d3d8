"""A failed call leaves nothing that a later matrix profile depends on: after a call that
failed for good (DeviceError) and one that survived an allocation failure with smaller chunks,
the next matrix profile has a fresh process's plan, launches and results (fault injection of
clts.runtime.faults)."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from clts.errors import DeviceError
from clts.runtime import faults
from clts.runtime.launch import timing


def _run(device, T):
    with timing() as t:
        r = clts.matrix_profile(T, 32, device=device)
    return r, len(t.events)


def test_failures_do_not_stick(device, monkeypatch):
    T = np.cumsum(np.random.default_rng(5).standard_normal(3000))
    r0, n0 = _run(device, T)
    # the launches before the first diagonal launch (the first chunk entered)
    seen, enter = [], faults.enter_chunk

    def first_chunk(*args):
        if not seen:
            seen.append(len(t.events))
        enter(*args)
    monkeypatch.setattr(faults, "enter_chunk", first_chunk)
    with timing() as t:
        clts.matrix_profile(T, 32, device=device)
    monkeypatch.undo()
    # a call that fails for good: every launch fails (as a driver's lost queue would)
    with faults.inject("enqueue", times=10 ** 6):
        with pytest.raises(DeviceError):
            clts.matrix_profile(T, 32, device=device)
    # a trend test whose allocations fail down to one item (the failure the H100 run saw)
    with faults.inject("alloc", times=10 ** 6):
        with pytest.raises(DeviceError):
            clts.trend_test(np.random.default_rng(1).standard_normal((40, 60)), device=device)
    # an allocation failure in the diagonal launches: retried with fewer bands per launch
    with faults.inject("alloc", times=1, after=seen[0]):
        r1 = clts.matrix_profile(T, 32, device=device)
    np.testing.assert_array_equal(r1.I, r0.I)
    r2, n2 = _run(device, T)
    assert r2.plan == r0.plan
    assert n2 == n0
    np.testing.assert_array_equal(r2.I, r0.I)
    np.testing.assert_array_equal(r2.P, r0.P)


def test_bar_launches_fill_the_device():
    """With a progress bar, the k = 1 launches still hold enough bands to fill the device
    (the bar's 1/32 split left an H100 32 work-groups per launch on 132 compute units); on a
    CPU the bar's split stands."""
    from emulated import gpus_over_pocl
    from clts.mp.diagonal import launch_bands
    from clts.mp.plan import Problem, make_plan
    emus = gpus_over_pocl()
    if "h100" not in emus:
        pytest.skip("no pocl device to emulate GPUs on")
    h100 = emus["h100"]
    p = make_plan(h100, Problem(256))
    nb = 65456                                          # 2^18 points, m = 256, band 4
    plain = launch_bands(h100, p, nb)
    with_bar = launch_bands(h100, p, nb, bar=True)
    assert with_bar >= min(plain, h100.info.compute_units * p.wg * 4)
    cpu = clts.get_device("pocl")
    pc = make_plan(cpu, Problem(256))
    assert launch_bands(cpu, pc, 10 ** 6, bar=True) == min(launch_bands(cpu, pc, 10 ** 6),
                                                           max(-(-10 ** 6 // 32),
                                                               cpu.info.compute_units * pc.wg
                                                               * max(4, pc.groups_per_cu)))
