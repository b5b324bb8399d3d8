"""Emulated GPUs: each recorded description laid over pocl decides Plans, ``auto``, chunking and
fallbacks as on that GPU; every algorithm's results under it match the references; a launch
that does not fit the description's limits fails before it runs.

Runs on pocl only (the emulation's base device), tiny sizes.
"""
from __future__ import annotations

import logging

import numpy as np
import pytest

import clts
from clts.bfast import reference as bref
from clts.errors import DeviceError
from clts.mp import reference as mref
from clts.runtime import emulation
from clts.stl import reference as sref

NAMES = emulation.names()


def _pocl():
    from clts.runtime import usable
    hits = [i for i in usable() if "portable computing" in i.platform.lower()]
    if not hits:
        pytest.skip("emulation tests run on pocl; no pocl device here")
    return hits[0]


@pytest.fixture(params=NAMES)
def gpu(request):
    """An emulated GPU (each recorded description) running on pocl."""
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    return emulation.emulate(request.param, _pocl())


def _real(dev):
    return np.float64 if dev.fp64 else np.float32


def test_descriptions_cite_sources_and_target():
    assert set(NAMES) >= {"a100", "mi100", "intel-max-1550", "intel-iris-xe"}
    for name in NAMES:
        d = emulation.load(name)
        assert all(s.get("url") and s.get("what") for s in d["sources"]), name
        assert d["offline_target"]["triple"] in ("amdgcn-amd-amdhsa", "nvptx64-nvidia-nvcl",
                                                 "spir64")
        assert d["max_work_group"] <= max(d["max_work_item_sizes"])


def test_capabilities_are_the_description(gpu):
    d = gpu.description
    assert (gpu.local_mem, gpu.max_work_group, gpu.compute_units, gpu.max_alloc) == (
        d["local_mem"], d["max_work_group"], d["compute_units"], d["max_alloc"])
    assert gpu.fp64 == ("cl_khr_fp64" in d["extensions"])
    assert gpu.int64_atomics == ("cl_khr_int64_base_atomics" in d["extensions"])
    assert gpu.type == "gpu" and gpu.name == d["name"] and gpu.emulates == d["_name"]
    assert gpu.slug == f"emulated-{d['_name']}"
    # the kernels run on the real device underneath
    assert "portable computing" in gpu.cl_device.platform.name.lower()


def test_environment_variable(monkeypatch):
    base = _pocl()
    clts.set_options(emulate="mi100")
    dev = clts.get_device(base)
    assert dev.emulates == "mi100" and dev.max_work_group == 256 and dev.local_mem == 65536
    with pytest.raises(ValueError, match="no recorded device description"):
        clts.set_options(emulate="no-such-gpu")            # refused when set
    from clts import options
    monkeypatch.setitem(options._global, "emulate", "no-such-gpu")   # as $CLTS_EMULATE sets it
    with pytest.raises(DeviceError, match="no recorded device description"):
        clts.get_device(base)                              # the variable: at the lookup


def test_stl_every_version(gpu):
    rng = np.random.default_rng(1)
    y = np.sin(2 * np.pi * np.arange(96) / 12)[None] + rng.normal(size=(3, 96))
    y[1, 10:14] = np.nan
    kw = dict(seasonal_jump=2, trend_jump=3, robust=True, outer_iter=1)
    s, t, _, _ = sref.stl(y, 12, **kw)
    tol = 1e-9 if gpu.fp64 else 2e-4
    for version in ("auto", "outer", "intragroup", "flat"):
        r = clts.stl(y.astype(_real(gpu)), 12, device=gpu, version=version, **kw)
        assert np.nanmax(np.abs(r.seasonal - s)) < tol * 10, version
        assert np.nanmax(np.abs(r.trend - t)) < tol * 10, version


def test_tridiag_every_method(gpu):
    rng = np.random.default_rng(2)
    nsys, n = 24, 40
    a, c, d = (rng.random((nsys, n)) for _ in range(3))
    b = 3 + rng.random((nsys, n))
    dt = _real(gpu)
    for method in ("auto", "thomas", "thomas-coalesced", "thomas-unrolled", "pcr", "flat"):
        x = np.asarray(clts.solve_tridiagonal(*(v.astype(dt) for v in (a, b, c, d)),
                                              version=method, device=gpu).x, np.float64)
        r = b * x
        r[:, 1:] += a[:, 1:] * x[:, :-1]
        r[:, :-1] += c[:, :-1] * x[:, 1:]
        assert np.max(np.abs(r - d)) < (1e-12 if gpu.fp64 else 1e-5), method


@pytest.mark.parametrize("k", [1, 3])
def test_matrix_profile_default_and_local_stores(gpu, k):
    T = np.cumsum(np.random.default_rng(3).standard_normal(260))
    m = 10
    e = mref.matrix_profile(T, m, k=k)
    tol = 1e-8 if gpu.fp64 else 2e-3 * np.sqrt(m)
    for kw in (dict(), dict(store="local", topk_store="local"), dict(merge="partial")):
        r = clts.matrix_profile(T, m, k=k, device=gpu, **kw)
        assert r.plan.precision == ("double" if gpu.fp64 else "single")
        P = np.asarray(r.P).reshape(e["P"].shape)
        assert np.max(np.abs(P - e["P"])) < tol, kw


def test_bfast_both_versions(gpu):
    rng = np.random.default_rng(4)
    N, M, n_hist = 100, 30, 60
    t = np.arange(N) * 16.0
    y = (3 + np.sin(2 * np.pi * t[:, None] / 365 + rng.uniform(0, 6, M))
         + 0.3 * rng.standard_normal((N, M)))
    y[70:, :10] -= 2
    y[rng.random((N, M)) < 0.2] = np.nan
    e = bref.bfast_monitor(y, t, t[n_hist])
    for version in ("auto", "fused", "multi"):
        r = clts.bfast_monitor(y.astype(_real(gpu)), t, t[n_hist], device=gpu, version=version)
        assert np.sum(r.breaks != e["breaks"]) <= (0 if gpu.fp64 else 1), version


def test_float64_refused_without_fp64():
    iris = emulation.emulate("intel-iris-xe", _pocl())
    assert not iris.fp64
    y = np.random.default_rng(5).normal(size=(2, 48))
    with pytest.raises(DeviceError, match="cl_khr_fp64.*float32"):
        clts.stl(y, 12, device=iris)
    with pytest.raises(DeviceError, match="precision='single'"):
        clts.matrix_profile(y[0], 8, device=iris, precision="double")


def test_partial_merge_without_int64_atomics():
    base = emulation.emulate("a100", _pocl())
    no64 = emulation.emulate("a100", _pocl(), extensions=base.extensions - {
        "cl_khr_int64_base_atomics", "cl_khr_int64_extended_atomics"})
    T = np.cumsum(np.random.default_rng(6).standard_normal(200))
    r = clts.matrix_profile(T, 8, device=no64)
    assert r.plan.merge == "partial" and base.int64_atomics
    np.testing.assert_allclose(np.asarray(r.P).ravel(), mref.matrix_profile(T, 8)["P"].ravel(),
                               atol=1e-8)
    with pytest.raises(DeviceError, match="int64"):
        clts.matrix_profile(T, 8, device=no64, merge="atomic")


def test_topk_lists_fit_gpu_local_memory():
    """k = 3 lists: on pocl's 1 MiB the profile's tile fits whole; under the A100's 48 KiB the
    tile shrinks (or the lists go private) so that the launch fits, checked on every launch."""
    from clts.mp.tiles import topk_tile as _topk_tile
    from clts.mp.plan import Problem, make_plan
    a100 = emulation.emulate("a100", _pocl())
    plan = make_plan(a100, Problem(None, "double"), topk_store="local", tile=128, wg=64)
    L, local = _topk_tile(a100, plan, 3)
    per = 3 * 12 + 8
    assert local and 64 * (L + plan.band) * per <= a100.local_mem - 1024
    assert L < 128


def test_launch_beyond_limits_fails_before_running():
    """A plan that does not fit is refused at launch on an emulated device (never run on the
    CPU's larger limits): here a 2 KiB local memory against the intra-group LOESS's moments,
    and a forced work-group above the limit before any build."""
    small = emulation.emulate("a100", _pocl(), local_mem=2048)
    y = np.random.default_rng(7).normal(size=(2, 60))
    r = clts.stl(y, 12, device=small, version="intragroup")   # wg shrunk to fit
    s, t, _, _ = sref.stl(y, 12)
    assert np.max(np.abs(r.trend - t)) < 1e-9
    with pytest.raises(ValueError, match="wg=512"):
        clts.stl(y, 12, device=small, version="intragroup", wg=512)
    mi100 = emulation.emulate("mi100", _pocl())
    with pytest.raises(ValueError, match="must be <= 256"):
        clts.matrix_profile(y[0], 8, device=mi100, wg=512)
    from clts.runtime.launch import launch
    prg = small.program("runtime/copy.cl.mako", width=1)
    with pytest.raises(DeviceError, match="dimension 0 of 2048 > 1024"):
        launch(small, prg.kernel("copy"), 2048, 2048)
    with pytest.raises(DeviceError, match="work-group of 2048 work-items > 1024"):
        launch(small, prg.kernel("copy"), (64, 32), (64, 32))


@pytest.mark.parametrize("name", ["a100", "h100"])
def test_matrix_profile_local_store_fits_by_what_was_not_forced(name):
    """The NVIDIA profiles keep a tile's column bests in local memory (store "local", wg 64);
    a caller who forces a wider band (lanes 8 x groups 2: 1,088 bytes per work-item, 69,632 per
    group of 64 > 48 KiB) gets a smaller work-group where wg was not forced, store "private"
    where only wg was, and a DeviceError naming the limit where both were."""
    from clts.mp.plan import Problem, make_plan
    gpu = emulation.emulate(name, _pocl())
    band = dict(lanes=8, groups=2, tile=16, segment=64)
    p = make_plan(gpu, Problem(m=16), **band)
    assert (p.store, p.wg) == ("local", 32)
    assert (make_plan(gpu, Problem(m=16), store="local", **band).wg) == 32
    p = make_plan(gpu, Problem(m=16), wg=64, **band)
    assert (p.store, p.wg) == ("private", 64)
    T = np.cumsum(np.random.default_rng(3).standard_normal(200))
    r = mref.matrix_profile(T, 16)
    for kw in ({}, {"wg": 64}):
        res = clts.matrix_profile(T, 16, device=gpu, **band, **kw)
        np.testing.assert_allclose(res.P[:, 0], r["P"][:, 0], atol=1e-8)
    with pytest.raises(DeviceError, match="1088 bytes of local memory per work-item"):
        clts.matrix_profile(T, 16, device=gpu, store="local", wg=64, **band)
