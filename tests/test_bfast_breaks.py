"""clts.bfast_breaks (batched Bai-Perron breakpoints) against R's strucchange::breakpoints, the
numpy reference, a direct least-squares RSS and ruptures' Dynp.

Fixtures: tests/data/bfast_bp_*.csv (bench/bfast_bp_fixtures.py, R strucchange 1.5-3): equal
breakpoints for every m on every fixture pixel, and the selected m. Tolerances (float64): the
m-break RSS to 1e-10 relative of the reference, whose triangle matches a direct QR least squares
to 1e-12; R's own RSS carries the error of its recursive-residual updating (up to 3e-6 relative on
these pixels, measured against the direct least squares), so R's RSS and BIC are met to 1e-5.
"""
from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

import clts
from clts.bfast import breakpoints_reference as bref
from clts.bfast.common import design_matrix, trend_scaling
from emulated import gpus_over_pocl

DATA = Path(__file__).resolve().parent / "data"


def _fp64(device):
    if not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")


@pytest.fixture(scope="module")
def rfix():
    import pandas as pd
    return (pd.read_csv(DATA / "bfast_bp_input.csv"), pd.read_csv(DATA / "bfast_bp_settings.csv"),
            pd.read_csv(DATA / "bfast_bp_output.csv", keep_default_na=False),
            pd.read_csv(DATA / "bfast_bp_triangle.csv"))


def _design(t, order, trend):
    c, s = trend_scaling(t, t.size)
    return design_matrix(t, order, 1.0, trend, c, s)


def _cube(seed, M=12, N=90, nan=0.2, shifts=2):
    rng = np.random.default_rng(seed)
    t = 2000 + np.arange(N) / 23.0
    y = (np.sin(2 * np.pi * t + rng.uniform(0, 6, M)[:, None]).T * 0.2
         + 0.03 * rng.standard_normal((N, M)))
    for _ in range(shifts):
        y += (t[:, None] >= rng.uniform(t[10], t[-10], M)) * rng.uniform(-0.3, 0.3, M)
    y[rng.random((N, M)) < nan] = np.nan
    return t, y


# ------------------------------------------------------------------ R fixtures
@pytest.mark.parametrize("lanes", [1, 4])
def test_r_fixture(device, rfix, lanes):
    _fp64(device)
    inp, settings, out, _ = rfix
    t = inp.time.values
    y = inp.iloc[:, 1:].values
    for s, row in settings.iterrows():
        r = clts.bfast_breaks(y, t, order=int(row.order), freq=1.0, trend=bool(row.trend),
                              h=row.h if row.h < 1 else int(row.h), breaks=int(row.breaks),
                              device=device, lanes=lanes, interleave=lanes, magnitudes=False,
                              progress=False)
        for p in range(y.shape[1]):
            idx = np.nonzero(~np.isnan(y[:, p]))[0]
            o = out[(out.setting == s) & (out.pixel == p)]
            assert r.nobs[p] == o.nobs.iloc[0] and r.status[p] == 0
            assert r.n_breaks[p] == o.selected.iloc[0], (s, p)
            for _, q in o.iterrows():
                m = int(q.m)
                want = [idx[int(b) - 1] for b in str(q.breakpoints).split()]
                row0 = m * (m - 1) // 2
                assert list(r.all_breakpoints[row0:row0 + m, p]) == want, (s, p, m)
                assert abs(r.rss[m, p] / q.RSS - 1) < 1e-5
                assert abs(r.bic[m, p] - q.BIC) < 1e-5 * abs(q.BIC)
            sel = int(o.selected.iloc[0])
            assert list(r.breakpoints[:sel, p]) == list(r.all_breakpoints[
                sel * (sel - 1) // 2:sel * (sel + 1) // 2, p])
            assert (r.breakpoints[sel:, p] == -1).all()


def test_reference_triangle_is_least_squares(rfix):
    """The reference's RSS triangle is the least-squares RSS of each segment, and R's within its
    updating error."""
    inp, _, _, tri = rfix
    t = inp.time.values
    y = inp["p0"].values
    ok = ~np.isnan(y)
    X = _design(t, 3, True)[ok]
    T = bref.rss_triangle(X, y[ok])
    rng = np.random.default_rng(0)
    for i, j in zip(rng.integers(0, 60, 25), rng.integers(70, ok.sum(), 25)):
        b = np.linalg.lstsq(X[i:j + 1], y[ok][i:j + 1], rcond=None)[0]
        rss = np.sum((y[ok][i:j + 1] - X[i:j + 1] @ b) ** 2)
        assert abs(T[i, j] / rss - 1) < 1e-12
    # segments of at least h values (the only ones the programme reads): shorter ones of a few
    # more values than regressors are ill-conditioned (short arcs of the harmonics)
    long = tri.j.values - tri.i.values + 1 >= bref.segment_h(0.15, ok.sum())
    got = T[tri.i.values[long] - 1, tri.j.values[long] - 1]
    assert np.max(np.abs(got / tri.RSS.values[long] - 1)) < 1e-5
    assert np.isnan(T[0, :X.shape[1] - 1]).all()


# ------------------------------------------------------------------ numpy reference
@pytest.mark.parametrize("lanes,interleave", [(1, 1), (4, 8), (8, 8)])
def test_reference_random(device, lanes, interleave):
    _fp64(device)
    t, y = _cube(3, M=13, N=80, nan=0.25)
    y[:, 5] = np.nan                      # all missing
    y[:60, 6] = np.nan                    # too few values for h
    r = clts.bfast_breaks(y, t, order=2, freq=1.0, h=0.15, breaks=4, device=device,
                          lanes=lanes, interleave=interleave, wg=2, dp_wg=3, progress=False)
    X = _design(t, 2, True)
    for p in range(y.shape[1]):
        e = bref.breakpoints_pixel(X, y[:, p], h=0.15, breaks=4)
        assert r.status[p] == e["status"] and r.nobs[p] == e["nobs"]
        if e["status"]:
            assert r.n_breaks[p] == -1 and np.isnan(r.rss[:, p]).all()
            continue
        B = e["breaks"]
        np.testing.assert_allclose(r.rss[:B + 1, p], e["rss"][:B + 1], rtol=1e-10)
        assert np.isnan(r.rss[B + 1:, p]).all()
        for m in range(1, B + 1):
            row = m * (m - 1) // 2
            assert list(r.all_breakpoints[row:row + m, p]) == [e["idx"][b - 1] for b in e["bp"][m]]
        assert r.n_breaks[p] == bref.select(e, "BIC")
    assert r.status[5] == 1 and r.status[6] == 1
    assert r.diagnostics["too_few_values"] == 2
    # magnitudes: fit after minus fit before at the first valid date after each break, from
    # least squares on each segment
    for p in np.nonzero(r.n_breaks > 0)[0][:4]:
        ok = np.nonzero(~np.isnan(y[:, p]))[0]
        m = r.n_breaks[p]
        edges = [-1, *r.breakpoints[:m, p], y.shape[0] - 1]
        fits = []
        for a, b in zip(edges[:-1], edges[1:]):
            s = ok[(ok > a) & (ok <= b)]
            fits.append(np.linalg.lstsq(X[s], y[s, p], rcond=None)[0])
        for j in range(m):
            d = ok[ok > r.breakpoints[j, p]][0]
            assert abs(r.magnitudes[j, p] - X[d] @ (fits[j + 1] - fits[j])) < 1e-9
        assert np.isnan(r.magnitudes[m:, p]).all()


def test_float32_and_lwz(device):
    t, y = _cube(4, M=16, N=92, nan=0.1)
    r64 = clts.bfast_breaks(y, t, freq=1.0, order=1, device=device, progress=False)
    r32 = clts.bfast_breaks(y.astype(np.float32), t, freq=1.0, order=1, dtype=np.float32,
                            device=device, progress=False)
    assert np.mean(r32.n_breaks == r64.n_breaks) >= 0.8
    X = _design(t, 1, True)
    rl = clts.bfast_breaks(y, t, freq=1.0, order=1, criterion="LWZ", device=device,
                           progress=False)
    for p in range(y.shape[1]):
        e = bref.breakpoints_pixel(X, y[:, p], h=0.15, breaks=5)
        assert rl.n_breaks[p] == bref.select(e, "LWZ")
        np.testing.assert_allclose(rl.lwz[:e["breaks"] + 1, p], e["lwz"][:e["breaks"] + 1],
                                   rtol=1e-9)


def test_ruptures_dynp_anchor(device):
    """ruptures' Dynp with the linear-model cost finds the same segmentations (complete data)."""
    _fp64(device)
    rpt = pytest.importorskip("ruptures")
    t, y = _cube(5, M=3, N=60, nan=0.0)
    X = _design(t, 1, True)
    r = clts.bfast_breaks(y, t, order=1, freq=1.0, h=10, breaks=3, device=device,
                          progress=False)
    for p in range(y.shape[1]):
        algo = rpt.Dynp(custom_cost=rpt.costs.CostLinear(), min_size=10, jump=1)
        algo.fit(np.column_stack([y[:, p], X]))
        for m in (1, 2, 3):
            want = [b - 1 for b in algo.predict(n_bkps=m)[:-1]]
            row = m * (m - 1) // 2
            assert list(r.all_breakpoints[row:row + m, p]) == want


# ------------------------------------------------------------------ inputs and errors
def test_layouts_and_labels(device):
    t, y = _cube(6, M=6, N=70)
    base = clts.bfast_breaks(y, t, freq=1.0, order=1, device=device, progress=False)
    for v in (np.asfortranarray(y), y.astype(">f8"), np.repeat(y, 2, axis=1)[:, ::2]):
        r = clts.bfast_breaks(v, t, freq=1.0, order=1, device=device, progress=False)
        np.testing.assert_array_equal(r.breakpoints, base.breakpoints)
        np.testing.assert_array_equal(r.rss, base.rss)
    r = clts.bfast_breaks(y.T.reshape(2, 3, -1), t, freq=1.0, order=1, time_axis=-1,
                          device=device, progress=False)
    np.testing.assert_array_equal(r.n_breaks.ravel(), base.n_breaks)
    pd = pytest.importorskip("pandas")
    dates = np.datetime64("2000-01-01") + (np.arange(70) * 16).astype("timedelta64[D]")
    df = pd.DataFrame(y, index=pd.DatetimeIndex(dates), columns=list("abcdef"))
    r = clts.bfast_breaks(df, order=1, device=device, progress=False)
    assert list(r.n_breaks.index) == list("abcdef")
    assert r.break_dates.values.dtype.kind == "M"
    xr = pytest.importorskip("xarray")
    da = xr.DataArray(y.T.reshape(2, 3, 70), dims=("y", "x", "time"),
                      coords={"time": dates, "x": [10, 20, 30]})
    r = clts.bfast_breaks(da, order=1, device=device, progress=False)
    assert r.n_breaks.dims == ("y", "x") and r.breakpoints.dims == ("break", "y", "x")


def test_errors(device):
    t, y = _cube(7, M=2, N=40)
    with pytest.raises(ValueError, match="dates must be"):
        clts.bfast_breaks(y, t[::-1], freq=1.0, device=device)
    with pytest.raises(ValueError, match="dates has 39"):
        clts.bfast_breaks(y, t[:-1], freq=1.0, device=device)
    for kw, what in [(dict(h=0), "h must"), (dict(h=2.5), "h must"), (dict(breaks=0), "breaks"),
                     (dict(order=11), "order"), (dict(criterion="AIC"), "criterion")]:
        with pytest.raises(ValueError, match=what):
            clts.bfast_breaks(y, t, freq=1.0, device=device, **kw)
    with pytest.raises(TypeError, match="lanes|unknown"):
        clts.bfast_breaks(y, t, freq=1.0, device=device, lane=3)
    # h larger than half the values: status 2, never a break
    r = clts.bfast_breaks(y, t, freq=1.0, order=1, h=25, device=device, progress=False)
    assert (r.status == 2).all() and (r.n_breaks == -1).all()
    yi = y.copy()
    yi[3, 1] = np.inf
    r = clts.bfast_breaks(yi, t, freq=1.0, order=1, device=device, progress=False)
    assert r.status[1] == 3 and r.status[0] == 0


def test_threads(device):
    t, y = _cube(8, M=9, N=60)
    want = clts.bfast_breaks(y, t, freq=1.0, order=1, device=device, progress=False)
    got = [None] * 4

    def work(i):
        got[i] = clts.bfast_breaks(y, t, freq=1.0, order=1, device=device, progress=False)

    th = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for x in th:
        x.start()
    for x in th:
        x.join()
    for g in got:
        np.testing.assert_array_equal(g.breakpoints, want.breakpoints)


def test_chunks_match_one_piece(device):
    t, y = _cube(9, M=40, N=50)
    a = clts.bfast_breaks(y, t, freq=1.0, order=1, device=device, progress=False)
    b = clts.bfast_breaks(y, t, freq=1.0, order=1, device=device, progress=False,
                          chunk_bytes=1, interleave=8, lanes=8)     # one block per chunk
    np.testing.assert_array_equal(a.breakpoints, b.breakpoints)
    np.testing.assert_array_equal(a.rss, b.rss)


@pytest.mark.oclgrind
def test_tiny(device):
    t, y = _cube(10, M=5, N=30, nan=0.2, shifts=1)
    r = clts.bfast_breaks(y, t, freq=1.0, order=1, h=7, breaks=2, device=device, lanes=2,
                          interleave=4, wg=2, dp_wg=2, magnitudes=False, progress=False)
    X = _design(t, 1, True)
    for p in range(5):
        e = bref.breakpoints_pixel(X, y[:, p], h=7, breaks=2)
        assert r.status[p] == e["status"]
        if not e["status"]:
            assert r.n_breaks[p] == bref.select(e)


def test_xarray_wrapper(device):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("dask")
    import clts.xarray as cx
    t, y = _cube(11, M=6, N=70)
    dates = np.datetime64("2000-01-01") + (np.arange(70) * 16).astype("timedelta64[D]")
    da = xr.DataArray(y.T.reshape(2, 3, 70), dims=("y", "x", "time"),
                      coords={"time": dates}, attrs={"units": "NDVI"})
    want = clts.bfast_breaks(da, order=1, device=device, progress=False)
    for arr in (da, da.chunk({"y": 1})):
        ds = cx.bfast_breaks(arr, order=1, device=device).compute()
        assert ds.breakpoints.dims == ("y", "x", "break")
        np.testing.assert_array_equal(ds.n_breaks.values, want.n_breaks.values)
        np.testing.assert_array_equal(ds.breakpoints.transpose("break", ...).values,
                                      want.breakpoints.values)
        np.testing.assert_array_equal(ds.break_dates.transpose("break", ...).values,
                                      want.break_dates.values)
        assert ds.magnitudes.attrs["units"] == "NDVI"


def test_confint_r_fixture(device):
    """strucchange's confint(breakpoints) (level 0.95, its defaults) on weak shifts."""
    import pandas as pd
    from clts.bfast.confint import pargmaxV
    inp = pd.read_csv(DATA / "bfast_bp_ci_input.csv")
    ci = pd.read_csv(DATA / "bfast_bp_confint.csv")
    y = inp.iloc[:, 1:].values
    r = clts.bfast_breaks(y, inp.time.values, freq=1.0, confint=0.95, device=device,
                          progress=False)
    assert (ci.upper - ci.lower).max() > 4              # wider than the strong breaks' +-1
    for p, g in ci.groupby("pixel"):
        idx = np.nonzero(~np.isnan(y[:, p]))[0]
        m = len(g)
        assert r.n_breaks[p] == m
        np.testing.assert_array_equal(r.breakpoints[:m, p], idx[g.bp.values - 1])
        np.testing.assert_array_equal(r.ci_lower[:m, p], idx[g.lower.values - 1])
        np.testing.assert_array_equal(r.ci_upper[:m, p], idx[g.upper.values - 1])
    nob = np.setdiff1d(np.arange(y.shape[1]), ci.pixel.unique())
    assert (r.ci_lower[:, nob] == -1).all()
    # pargmaxV against R's values (strucchange:::pargmaxV)
    for x, args, want in [(0.0, (), 0.5), (-3.0, (), 0.1568207), (3.0, (), 0.8431793),
                          (-50.0, (1.3, 0.8, 1.1), 3.521821e-05),
                          (50.0, (1.3, 0.8, 1.1), 0.9995038)]:
        assert abs(pargmaxV(x, *args) - want) < 1e-6 * max(1.0, want) + 1e-10
    with pytest.raises(ValueError, match="confint"):
        clts.bfast_breaks(y, inp.time.values, freq=1.0, confint=95, device=device)


# ------------------------------------------------------------------ Intel GPU sub-group
@pytest.mark.gpu_layout
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_required_subgroup_gives_the_same_bits(device, dtype):
    """``subgroup=16`` (the Data Center GPU Max profile's: IGC compiles the RSS triangle at SIMD16
    instead of spilling its rotation state at SIMD32; a no-op where the compiler lacks
    ``cl_intel_required_subgroup_size``) and ``grf=256`` (a build option of Intel's GPU driver
    only) with the GPU profiles' layout: the bits of the device's own Plan."""
    if dtype == np.float64:
        _fp64(device)
    t, y = _cube(12, M=70, N=80)
    y = y.astype(dtype)
    kw = dict(freq=1.0, order=2, breaks=3, device=device, dtype=dtype, progress=False)
    gpu = dict(lanes=1, interleave=64, wg=64, dp_wg=64)
    own = clts.bfast_breaks(y, t, **kw)
    for sg, grf in ((0, 0), (16, 0), (16, 256)):   # grf: a build option on Intel GPUs only
        r = clts.bfast_breaks(y, t, subgroup=sg, grf=grf, **gpu, **kw)
        for name in ("n_breaks", "breakpoints", "all_breakpoints", "rss", "nobs", "status",
                     "magnitudes"):
            np.testing.assert_array_equal(getattr(r, name), getattr(own, name), err_msg=name)


def test_plan_subgroup_per_device(device):
    """The Data Center GPU Max profile requires SIMD16 of bp_rss, no other profile does; the
    attribute is rendered only then (CPU sources unchanged); a bad value names ``subgroup``."""

    from clts.bfast.breakpoints_plan import Problem, make_plan
    from clts.runtime.programs import render
    if device.type == "cpu":
        assert make_plan(device, Problem(100)).subgroup == 0
    with pytest.raises(ValueError, match="subgroup"):
        clts.bfast_breaks(*_cube(1, M=3, N=40)[::-1], freq=1.0, order=1, device=device,
                          subgroup=12, progress=False)
    params = dict(real="double", lanes=1, interleave=64, K=4, N=40, BREAKS=3, kernels="all")
    assert "intel_reqd_sub_group_size" not in render("bfast/breakpoints.cl.mako",
                                                     dict(params, subgroup=0))
    assert "intel_reqd_sub_group_size(16)" in render("bfast/breakpoints.cl.mako",
                                                     dict(params, subgroup=16))
    for name, emu in gpus_over_pocl().items():
        plan = make_plan(emu, Problem(100))
        assert plan.subgroup == (16 if name == "intel-max-1550" else 0), name


# ------------------------------------------------------------------ Intel GPU large GRF
def test_large_grf_only_for_intel_gpu_drivers(device):
    """The program parameter ``grf`` is a build option of Intel's GPU driver only
    (``-cl-intel-256-GRF-per-thread``): never on pocl, the Intel CPU runtime, an emulated Intel
    GPU (built by its CPU driver), NVIDIA or AMD; it is part of the program's cache key and
    noted at the end of its source; 0 is the driver's default, the program without it."""
    import dataclasses
    from types import SimpleNamespace

    from clts.runtime import emulation, programs
    tpl = "bfast/breakpoints.cl.mako"
    params = dict(real="float", lanes=1, interleave=64, K=8, N=40, BREAKS=3, subgroup=16,
                  kernels="bp_rss")
    large = dict(params, grf=256)
    assert programs.driver_options(device, large) == ()
    assert programs.driver_options(emulation.emulate("intel-max-1550"), large) == ()
    info = dataclasses.replace(device.info, type="gpu", emulates="", vendor="Intel(R) Corporation",
                               platform="Intel(R) OpenCL Graphics")
    gpu = SimpleNamespace(info=info)
    assert programs.driver_options(gpu, large) == ("-cl-intel-256-GRF-per-thread",)
    assert programs.driver_options(gpu, params) == programs.driver_options(gpu, dict(grf=0)) == ()
    rusticl = SimpleNamespace(info=dataclasses.replace(info, platform="rusticl"))
    assert programs.driver_options(rusticl, large) == ()
    for vendor, platform in (("NVIDIA Corporation", "NVIDIA CUDA"),
                             ("Advanced Micro Devices, Inc.", "AMD Accelerated Parallel Processing")):
        other = SimpleNamespace(info=dataclasses.replace(info, vendor=vendor, platform=platform))
        assert programs.driver_options(other, large) == ()
    assert programs._key(tpl, large) != programs._key(tpl, params)
    assert programs._key(tpl, dict(params, grf=0)) == programs._key(tpl, params)
    base = programs.render(tpl, params)
    assert programs.render(tpl, dict(params, grf=0)) == base
    assert programs.render(tpl, large).startswith(base)
    assert "-cl-intel-256-GRF-per-thread" in programs.render(tpl, large)[len(base):]
    both = programs.render(tpl, dict(params, kernels="all"))      # CPUs, and GPUs without grf
    dp = programs.render(tpl, dict(params, kernels="bp_dp"))       # beside a large-GRF bp_rss
    assert "void bp_rss(" in both and "void bp_dp(" in both
    assert "void bp_dp(" not in base and "void bp_rss(" not in dp and "void bp_dp(" in dp


def test_large_grf_plan_per_regressors(device):
    """The Data Center GPU Max profile's ``grf: 256`` is taken only for the K whose rotation
    state spills at SIMD16 with 128 GRF (float64 from 8, float32 from 13); no other profile asks
    for it; a forced one is kept; a bad one names ``grf``; CPU Plans and sources unchanged."""
    import logging

    from clts.bfast.breakpoints_plan import LARGE_GRF_FROM, Problem, make_plan
    from clts.runtime import emulation
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    if device.type == "cpu":
        own = make_plan(device, Problem(40, 8, 4))
        assert own.grf == 0 and make_plan(device, Problem(274, 12, 8)).grf == 0
        t, y = _cube(2, M=5)
        clts.bfast_breaks(y.astype(np.float32), t, freq=1.0, dtype=np.float32, breaks=2,
                          device=device, progress=False)
        from clts.runtime import programs
        key = programs._key("bfast/breakpoints.cl.mako", dict(
            real="float", lanes=own.lanes, interleave=own.interleave, K=8, BREAKS=2,
            subgroup=0, kernels="all"))
        prg = device.state.programs[key]      # one program, both kernels, no build parameter
        assert "build parameters" not in prg.source and "grf" not in prg.params
    emu = emulation.emulate("intel-max-1550")
    assert LARGE_GRF_FROM == {8: 8, 4: 13}
    for K, itemsize, want in ((4, 8, 0), (7, 8, 0), (8, 8, 256), (12, 8, 256), (8, 4, 0),
                              (12, 4, 0), (13, 4, 256)):
        assert make_plan(emu, Problem(274, K, itemsize)).grf == want, (K, itemsize)
    assert make_plan(emu, Problem(274, 4, 8), grf=256).grf == 256
    assert make_plan(emu, Problem(274, 8, 8), grf=0).grf == 0
    for name in ("a100", "h100", "mi100", "mi210", "intel-arc-a770", "intel-iris-xe"):
        assert make_plan(emulation.emulate(name), Problem(274, 12, 4)).grf == 0, name
    with pytest.raises(ValueError, match="grf"):
        clts.bfast_breaks(*_cube(1, M=3, N=40)[::-1], freq=1.0, order=1, device=device,
                          grf=64, progress=False)


# ------------------------------------------------------------------ GPU split of the triangle
#: (order, pixels, work-group sizes) of the split test; (order, pixels, h, breaks) of the scan
#: test, whose dates, breaks and h the split test takes too (the same programs of the own Plan)
SPLIT_CASES = ((1, 5, (64, 1)), (2, 70, (20,)), (3, 33, (64,)))
SCAN_CASES = ((1, 37, 0.1, 8), (2, 5, 12, 10), (3, 70, None, 5))
SCAN_N = 96


@pytest.mark.gpu_layout
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_split_rss_gives_the_same_bits(device, dtype):
    """``split=1`` (NVIDIA / AMD profiles: bp_rss over K work-items per pixel and start, a
    column of R each) forced on this device: the bits of the device's own Plan, for several K
    (order 1 / 2 / 3: K = 4 / 6 / 8), pixels per work-group that do not divide the pixels
    (K = 4: 16 of 5, K = 6: 3 of 70, K = 8: 8 of 33) and one pixel a group (``SPLIT_CASES``).
    The number of dates, breaks and h of ``SCAN_CASES`` (``N``, ``breaks`` are built into the
    programs): the device's own Plan is the same program there."""
    if dtype == np.float64:
        _fp64(device)
    for (order, M, wgs), (_, _, h, breaks) in zip(SPLIT_CASES, SCAN_CASES):
        t, y = _cube(12 + order, M=M, N=SCAN_N)
        y = y.astype(dtype)
        kw = dict(freq=1.0, order=order, breaks=breaks, device=device, dtype=dtype,
                  progress=False, **({} if h is None else dict(h=h)))
        own = clts.bfast_breaks(y, t, **kw)
        for wg in wgs:      # pixels per group: wg // K, at least one
            r = clts.bfast_breaks(y, t, split=1, lanes=1, interleave=64, wg=wg, dp_wg=64, **kw)
            for name in ("n_breaks", "breakpoints", "all_breakpoints", "rss", "nobs", "status",
                         "magnitudes"):
                np.testing.assert_array_equal(getattr(r, name), getattr(own, name),
                                              err_msg=f"{name} order={order} wg={wg}")


# ------------------------------------------------------------------ GPU scan of the backtrack
@pytest.mark.gpu_layout
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_scan_backtrack_gives_the_same_bits(device, dtype):
    """``scan=1`` (GPU profiles: bp_dp's backtrack reads whole rows of its tables, the m-break
    RSS is the programme's own sum) forced on this device, alone and with the GPU layout
    (lanes 1, interleave 64, split): the bits of the device's own Plan, with missing values,
    failed pixels (all missing, too short) and up to as many breaks as fit."""
    if dtype == np.float64:
        _fp64(device)
    for order, M, h, breaks in SCAN_CASES:
        t, y = _cube(30 + order, M=M, N=SCAN_N, nan=0.25, shifts=3)
        y[:, 1] = np.nan
        y[20:, 2] = np.nan
        y = y.astype(dtype)
        kw = dict(freq=1.0, order=order, breaks=breaks, device=device, dtype=dtype,
                  progress=False, **({} if h is None else dict(h=h)))
        own = clts.bfast_breaks(y, t, scan=0, **kw)
        for extra in (dict(scan=1), dict(scan=1, split=1, lanes=1, interleave=64, wg=64,
                                         dp_wg=64)):
            r = clts.bfast_breaks(y, t, **extra, **kw)
            for name in ("n_breaks", "breakpoints", "all_breakpoints", "rss", "nobs", "status",
                         "magnitudes"):
                np.testing.assert_array_equal(getattr(r, name), getattr(own, name),
                                              err_msg=f"{name} order={order} {extra}")


def test_scan_plan_per_device(device):
    """GPU profiles scan, CPUs do not (their source renders as before); bad values name
    ``scan``."""

    from clts.bfast.breakpoints_plan import Problem, make_plan
    from clts.runtime.programs import render
    if device.type == "cpu":
        assert make_plan(device, Problem(100, 8)).scan == 0
    params = dict(real="double", lanes=1, interleave=64, K=8, N=40, BREAKS=3, kernels="all",
                  subgroup=0)
    assert render("bfast/breakpoints.cl.mako", params) == render("bfast/breakpoints.cl.mako",
                                                                 dict(params, scan=0))
    with pytest.raises(ValueError, match="scan"):
        clts.bfast_breaks(*_cube(1, M=3, N=40)[::-1], freq=1.0, order=1, device=device,
                          progress=False, scan=2)
    for name, emu in gpus_over_pocl().items():
        assert make_plan(emu, Problem(274, 8, 8)).scan == 1, name


@pytest.mark.oclgrind
def test_split_tiny(device):
    t, y = _cube(11, M=3, N=24, nan=0.2, shifts=1)
    y[:8, 1] = np.nan                   # a later first value than its vector neighbour's
    kw = dict(freq=1.0, order=1, h=6, breaks=1, device=device, magnitudes=False,
              progress=False)
    a = clts.bfast_breaks(y, t, lanes=1, interleave=4, wg=4, dp_wg=2, **kw)
    b = clts.bfast_breaks(y, t, split=1, lanes=1, interleave=4, wg=8, dp_wg=2, **kw)
    np.testing.assert_array_equal(a.rss, b.rss)
    np.testing.assert_array_equal(a.breakpoints, b.breakpoints)
    c = clts.bfast_breaks(y, t, scan=1, lanes=1, interleave=4, wg=4, dp_wg=2, **kw)
    np.testing.assert_array_equal(a.rss, c.rss)
    np.testing.assert_array_equal(a.all_breakpoints, c.all_breakpoints)
    # lanes of a vector whose first values differ: each entry has one writer (the first valid
    # start's row or the backward sweep), the same bits as one pixel a work-item
    d = clts.bfast_breaks(y, t, lanes=2, interleave=4, wg=2, dp_wg=2, **kw)
    np.testing.assert_array_equal(a.rss, d.rss)
    np.testing.assert_array_equal(a.all_breakpoints, d.all_breakpoints)


def test_one_break_rss(device):
    """breaks=1 computes of the RSS triangle only what the one-break programme reads (the first
    valid start's row, one backward sweep for RSS(start .. last value)): against the whole
    triangle (breaks=2's one-break row) on gapped pixels, the same breakpoints and 0-break RSS
    bits, the 1-break RSS to rounding (summed backward); lanes 1 / 4, the split kernel and one
    block a chunk give identical bits."""
    _fp64(device)
    t, y = _cube(5, M=13, N=100, nan=0.25, shifts=2)
    y[:35, 4] = np.nan                       # late first value, early last value
    y[-25:, 5] = np.nan
    kw = dict(freq=1.0, order=1, h=15, device=device, magnitudes=False, progress=False)
    full = clts.bfast_breaks(y, t, breaks=2, **kw)
    one = clts.bfast_breaks(y, t, breaks=1, lanes=1, interleave=1, **kw)
    ok = one.status == 0
    assert ok.all() and (full.all_breakpoints[1] >= 0).all()      # two breaks fit: a triangle
    np.testing.assert_array_equal(one.all_breakpoints[0], full.all_breakpoints[0])
    np.testing.assert_array_equal(one.rss[0], full.rss[0])
    np.testing.assert_allclose(one.rss[1], full.rss[1], rtol=1e-12)
    for ex in (dict(lanes=4, interleave=8), dict(split=1, lanes=1, interleave=4),
               dict(lanes=4, interleave=4, chunk_bytes=1)):
        r = clts.bfast_breaks(y, t, breaks=1, **ex, **kw)
        np.testing.assert_array_equal(r.rss, one.rss, err_msg=str(ex))
        np.testing.assert_array_equal(r.all_breakpoints, one.all_breakpoints, err_msg=str(ex))


def test_split_plan_per_device(device):
    """NVIDIA and AMD profiles split bp_rss; Intel's GPUs keep one work-item per (pixel, start)
    (the Data Center GPU Max its SIMD16 / large-GRF build), CPUs too, whose source renders as
    before; bad values name ``split``."""

    from clts.bfast.breakpoints_plan import Problem, make_plan, pixels_per_group
    from clts.runtime.programs import render
    if device.type == "cpu":
        assert make_plan(device, Problem(100, 8)).split == 0
    params = dict(real="double", lanes=1, interleave=64, K=8, N=40, BREAKS=3, kernels="all",
                  subgroup=0)
    assert render("bfast/breakpoints.cl.mako", params) == render("bfast/breakpoints.cl.mako",
                                                                 dict(params, pix=0))
    assert "__local" not in render("bfast/breakpoints.cl.mako", params)
    assert "pub[" in render("bfast/breakpoints.cl.mako", dict(params, pix=8))
    for bad, match in ((dict(split=2), "split"), (dict(split=1, lanes=4), "split")):
        with pytest.raises(ValueError, match=match):
            clts.bfast_breaks(*_cube(1, M=3, N=40)[::-1], freq=1.0, order=1, device=device,
                              progress=False, **bad)
    for name, emu in gpus_over_pocl().items():
        plan = make_plan(emu, Problem(274, 8, 8))
        assert plan.split == (not name.startswith("intel")), name
        assert pixels_per_group(plan, 8, emu) == (8 if plan.split else 0), name


# ----------------------------------------------- edge cases: exact fits, rank, h = n / 2
@pytest.fixture(scope="module")
def edgefix():
    import pandas as pd
    inp = pd.read_csv(DATA / "bfast_bp_edge_input.csv")
    settings = pd.read_csv(DATA / "bfast_bp_edge_settings.csv")
    out = pd.read_csv(DATA / "bfast_bp_edge_output.csv", keep_default_na=False)
    cases = {}
    for _, s in settings.iterrows():
        d = inp[inp.case == s.case]
        o = out[out.case == s.case]
        cases[s["name"]] = (d.time.to_numpy(), d.y.to_numpy(np.float64), s, o)
    return cases


def _edge(device, case, **kw):
    t, y, s, o = case
    h = float(s.h) if s.h < 1 else int(s.h)
    r = clts.bfast_breaks(y[:, None], t, freq=float(s.freq), order=int(s.order),
                          trend=bool(s.trend), h=h, breaks=int(s.breaks), device=device,
                          progress=False, **kw)
    return r, o


def _bps(text):
    return [int(v) - 1 for v in str(text).split()]       # R's 1-based value indices


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_exact_fits_select_no_spurious_break(device, edgefix, dtype):
    """A constant series (also saturated with 20 % gaps) or a pure harmonic is fitted exactly by
    the model without breaks: every RSS is rounding noise (1e-29 .. 0), and BIC on its logarithm
    picked the most breaks (5 and 4 before). R: 0 breaks on the constant (RSS exactly 0, BIC all
    -Inf, which.min takes the first), one at 30 on the sine from RSS of 1e-32."""
    if dtype == np.float64:
        _fp64(device)
    for name in ("constant", "sine", "saturated_gaps"):
        r, o = _edge(device, edgefix[name], dtype=dtype)
        assert r.status[0] == 0 and r.n_breaks[0] == 0, name
        y = edgefix[name][1]
        floor = np.sum(~np.isnan(y)) * np.finfo(dtype).eps ** 2 * np.nansum(y ** 2)
        assert (o.RSS.to_numpy(np.float64) <= floor).all(), name   # R's too: rounding noise
        # the sine's rounding RSS depends on the device's contractions: on NVIDIA's OpenCL
        # (H200) it came out above the floor (no exact fit counted) and still chose no break
        if name != "sine" or device.type == "cpu":
            assert r.diagnostics["exact_fit"] == 1, name
        if name != "sine":
            assert o.selected.iloc[0] == 0, name
    # a noise-free step: one break, R's (R adds a second one from RSS of 1e-30)
    r, o = _edge(device, edgefix["step_exact"], dtype=dtype)
    assert r.n_breaks[0] == 1
    assert r.breakpoints[0, 0] == _bps(o[o.m == 1].breakpoints.iloc[0])[0] == 80
    assert o.selected.iloc[0] == 2 and o[o.m >= 1].RSS.max() < 1e-28


def test_exact_fit_history_bp(device, edgefix):
    """bfast_monitor(history="BP") on a constant pixel: the stable history starts at the first
    date (it started at the last possible break before)."""
    t, y, s, o = edgefix["constant_history_bp"]
    assert o.selected.iloc[0] == 0                     # R: no break with h = 6 K = 48
    rng = np.random.default_rng(3)
    yy = np.stack([y, np.sin(2 * np.pi * t) + 0.1 * rng.standard_normal(t.size)], axis=1)
    # lanes=1: the scalar monitoring kernel, the cheapest build (the profile's 16 lanes took
    # 14 s of Intel's CPU runtime for a history start)
    r = clts.bfast_monitor(yy, t, 2006.0, freq=1, history="BP", device=device, progress=False,
                           lanes=1)
    assert r.history_start[0] == 0
    X = _design(t, 3, True)[t < 2006.0]
    assert bref.history_bp_start(X, y[t < 2006.0]) == 0


def test_rank_deficient_design_fits_its_rank(device, edgefix):
    """Yearly dates with freq=1: the cosines are the intercept and the sines 1e-13 noise
    (singular values 590, 22, 1.5e-11, ...). Those columns are dropped, with a warning: the RSS
    are those of the rank-2 fit (R's lm.fit keeps one sine of rounding noise and its RSS are up
    to 2 % lower); the break of the shifted series is R's."""
    _fp64(device)
    for name, want in (("yearly_noise", 0), ("yearly_shift", 1)):
        t, y, s, o = edgefix[name]
        with pytest.warns(UserWarning, match="rank-deficient.*sin1, cos1, sin2, cos2"):
            r, _ = _edge(device, edgefix[name])
        assert r.diagnostics["dropped_columns"] == ["sin1", "cos1", "sin2", "cos2"]
        assert r.diagnostics["n_coef"] == 2 and r.status[0] == 0
        X = np.column_stack([np.ones_like(t), t - t.mean()])
        beta = np.linalg.lstsq(X, y, rcond=None)[0]
        np.testing.assert_allclose(r.rss[0, 0], np.sum((y - X @ beta) ** 2), rtol=1e-10)
        assert o.aliased.iloc[0] == 3 and o.RSS.iloc[0] < r.rss[0, 0]    # R fits the noise
        assert r.n_breaks[0] == want == o.selected.iloc[0]
        if want:
            assert r.breakpoints[0, 0] == _bps(o[o.m == 1].breakpoints.iloc[0])[0] == 79


def test_rank_deficient_pixel_status(device):
    """A pixel whose valid dates all fall on the same day of the year (the harmonics repeat the
    intercept there): status 4, never a break, as the reference; the others are analysed."""
    _fp64(device)
    rng = np.random.default_rng(4)
    t = 2000 + np.arange(460) / 23
    y = np.sin(2 * np.pi * t)[:, None] + 0.1 * rng.standard_normal((460, 2))
    y[np.arange(460) % 23 != 5, 0] = np.nan
    y[np.arange(460) % 23 > 10, 1] = np.nan
    r = clts.bfast_breaks(y, t, freq=1.0, order=1, h=0.3, device=device, progress=False)
    assert r.status.tolist() == [4, 0] and r.n_breaks[0] == -1
    assert np.isnan(r.rss[:, 0]).all() and (r.breakpoints[:, 0] == -1).all()
    assert r.diagnostics["rank_deficient"] == 1
    X = _design(t, 1, True)
    assert [bref.breakpoints_pixel(X, y[:, p], h=0.3)["status"] for p in range(2)] == [4, 0]


def test_h_half_of_the_values(device, edgefix):
    """h = n / 2 (n = 60, h = 0.5): R caps breaks at ceil(n / h) - 2 = 0 but its RSS table holds
    the one break at h and BIC chooses it; clts returned 0 breaks and rss[1] NaN."""
    _fp64(device)
    r, o = _edge(device, edgefix["half_h"])
    assert r.status[0] == 0 and r.rss.shape[0] == 2
    np.testing.assert_allclose(r.rss[:, 0], o.RSS.to_numpy(np.float64), rtol=1e-6)
    np.testing.assert_allclose(r.bic[:, 0], o.BIC.to_numpy(np.float64), rtol=1e-6)
    assert r.n_breaks[0] == o.selected.iloc[0] == 1
    assert r.breakpoints[0, 0] == _bps(o[o.m == 1].breakpoints.iloc[0])[0] == 29
