"""auto's PCR / Thomas choice from the crossovers clts-tune measures per system size, the
Plan cache that follows the profile, and the fused transposes of the GPU paths."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from clts.tridiag import solve_tridiagonal
from clts.tridiag.run import cached_plan
from clts.tridiag.plan import PCR_CROSSOVER_N, Problem, make_plan, pcr_max_batch_at

from emulated import gpus_over_pocl
from test_tridiag import dominant, lapack, relerr


def test_pcr_max_batch_at():
    assert pcr_max_batch_at(100, {}) == 0
    assert pcr_max_batch_at(7, {512: 300}) == 300 == pcr_max_batch_at(4000, {512: 300})
    pts = {16: 100_000, 128: 10_000, 512: 100}
    assert pcr_max_batch_at(8, pts) == 100_000 and pcr_max_batch_at(16, pts) == 100_000
    assert pcr_max_batch_at(128, pts) == 10_000 and pcr_max_batch_at(2048, pts) == 100
    # geometric between the measured sizes: n = 64 (two thirds of the way in log n from 16
    # to 128) -> 100000^(1/3) * 10000^(2/3), about 21544
    assert abs(pcr_max_batch_at(64, pts) - 21544) <= 2
    inner = [pcr_max_batch_at(n, pts) for n in range(16, 513)]
    assert all(x >= y for x, y in zip(inner, inner[1:]))        # monotone between the points
    # 0 (never pcr) and 2^31 - 1 (always) as measured ends stay usable
    assert pcr_max_batch_at(16, {16: 0, 512: 2**31 - 1}) == 0
    assert 0 < pcr_max_batch_at(100, {16: 0, 512: 2**31 - 1}) < 2**31 - 1


@pytest.fixture(scope="module")
def h100():
    gpus = gpus_over_pocl()
    if "h100" not in gpus:
        pytest.skip("pocl is not usable here")
    return gpus["h100"]


@pytest.fixture
def auto_keys(h100):
    """The emulated H100's tridiag.auto section, restored after the test."""
    auto = h100.profile.values["tridiag"]["auto"]
    saved = copy.deepcopy(auto)
    yield auto
    auto.clear()
    auto.update(saved)


def _method(dev, n, nsys, **kw):
    return make_plan(dev, Problem(n, nsys, "natural", np.dtype(np.float64), False), **kw).method


def test_measured_crossovers_decide(h100, auto_keys):
    auto_keys.update(pcr_max_batch=100, pcr_max_batch_n16=100_000, pcr_max_batch_n128=10_000)
    assert _method(h100, 15, 50_000) == "pcr"            # below the n = 16 crossover
    assert _method(h100, 15, 200_000) != "pcr"
    assert _method(h100, 115, 9_000) == "pcr"            # n = 115: about 12,200
    assert _method(h100, 115, 20_000) != "pcr"
    assert _method(h100, 512, 99) == "pcr" and _method(h100, 512, 100) != "pcr"
    # a keyword over the profile: per size, or pcr_max_batch alone for every size
    assert _method(h100, 15, 50_000, pcr_max_batch_n16=10) != "pcr"
    assert _method(h100, 15, 50_000, pcr_max_batch=10) != "pcr"
    assert _method(h100, 115, 20_000, pcr_max_batch=30_000) == "pcr"


def test_unmeasured_sizes_keep_the_single_threshold(h100, auto_keys):
    auto_keys.update(pcr_max_batch=4096, pcr_max_batch_n16=-1, pcr_max_batch_n128=-1)
    for n in (8, 115, 512):
        assert _method(h100, n, 4095) == "pcr" and _method(h100, n, 4096) != "pcr"
    auto_keys.update(pcr_max_batch_n16=50_000)            # one size measured: n = 16 .. 512
    assert _method(h100, 15, 40_000) == "pcr" and _method(h100, 200, 40_000) != "pcr"


def test_cached_plan_follows_the_profile(h100, auto_keys):
    p = (15, 20_000, "natural", np.dtype(np.float64), False)
    auto_keys.update(pcr_max_batch=0, pcr_max_batch_n16=-1, pcr_max_batch_n128=-1)
    first = cached_plan(h100, *p, version="auto")
    assert first.method != "pcr" and cached_plan(h100, *p, version="auto") is first
    auto_keys.update(pcr_max_batch_n16=30_000)             # a tuner's value, in memory
    assert cached_plan(h100, *p, version="auto").method == "pcr"
    auto_keys.update(pcr_max_batch_n16=-1)
    assert cached_plan(h100, *p, version="auto") == first


def test_solves_on_the_chosen_versions(h100, auto_keys):
    """The PCR and the transposed Thomas path (4 inputs transposed in one launch) agree with
    LAPACK on the emulated H100's plans; the transposed path makes 3 launches."""
    from clts.runtime import timing
    import pyopencl.array as cla
    rng = np.random.default_rng(5)
    arrs = dominant(rng, (300, 15))
    ref = lapack(*arrs)
    auto_keys.update(pcr_max_batch=0, pcr_max_batch_n16=1000, pcr_max_batch_n128=-1)
    r = solve_tridiagonal(*arrs, device=h100)
    assert r.method == "pcr" and relerr(r.x, ref) <= 1e-12
    auto_keys.update(pcr_max_batch_n16=0)
    dev_arrs = [cla.to_device(h100.queue, v) for v in arrs]
    solve_tridiagonal(*dev_arrs, device=h100)
    with timing(h100) as t:
        r = solve_tridiagonal(*dev_arrs, device=h100)
        x = r.x.get()
    assert r.method in ("thomas-unrolled", "thomas-coalesced") and len(t.events) == 3
    assert relerr(x, ref) <= 1e-12


def test_tuner_measures_pcr_against_what_auto_runs(device):
    from clts.tune.registry import REGISTRY, load_all
    load_all()
    for n, key in PCR_CROSSOVER_N.items():
        entry = REGISTRY.crossovers[f"tridiag.{key}"]
        assert entry.key == f"tridiag.auto.{key}" and entry.versions == ("pcr", "thomas-auto")
        w = entry.workload(entry.quick_values[0])
        assert w["n"] == n
    entry = REGISTRY.crossovers["tridiag.pcr_max_batch_n16"]
    w = entry.workload(entry.quick_values[0])
    r = entry.run(device, "thomas-auto", w)
    assert r.method != "pcr" and entry.check(r, w)
    r = entry.run(device, "pcr", w)
    assert r.method == "pcr" and entry.check(r, w)


def test_device_array_calls_make_no_host_traffic(h100, device):
    """Repeated device-array calls (cached Plans and programs, temporaries before the first
    launch) neither copy, map nor wait: solve_tridiagonal on pocl and under the emulated
    H100's transposing Plans, and the TKE step."""
    import pyopencl.array as cla
    import clts
    from clts.ocean.inputs import benchmark_inputs
    from transfers import host_traffic
    if device.info.simulator:
        pytest.skip("simulators upload their zeros")
    rng = np.random.default_rng(8)
    arrs = dominant(rng, (300, 15))
    x = benchmark_inputs(2 ** 12)
    x["kbot"] = x["kbot"].astype(np.int32)
    for dev in (device, h100):
        da = [cla.to_device(dev.queue, v) for v in arrs]
        dx = [cla.to_device(dev.queue, np.ascontiguousarray(v)) for v in x.values()]
        first = (solve_tridiagonal(*da, device=dev).x.get(), clts.ocean.tke(*dx, device=dev))
        dev.queue.finish()
        with host_traffic() as t:
            r = solve_tridiagonal(*da, device=dev)
            out = clts.ocean.tke(*dx, device=dev)
        assert t.total == 0, t.calls
        np.testing.assert_array_equal(r.x.get(), first[0])
        for a, b in zip(out, first[1]):
            np.testing.assert_array_equal(a.get(), b.get())
