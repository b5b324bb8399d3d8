"""The fused STL (a work-group per series, whole inner iterations in local memory, one launch
per outer iteration): against statsmodels, the numpy reference (missing values, failed series)
and the separate kernels, both dtypes, every device, and what the Plan chooses on the emulated
GPUs."""
from __future__ import annotations

import threading

import numpy as np
import pytest

import clts
from clts.runtime import timing
from clts.stl.plan import Problem, make_plan
from clts.stl.params import resolve_parameters

import references
from emulated import gpus_over_pocl
from test_stl import CASES, err, series, sm_fit


@pytest.mark.parametrize("period,n,kw", CASES, ids=[f"p{c[0]}-n{c[1]}-{i}"
                                                   for i, c in enumerate(CASES)])
def test_matches_statsmodels(device, period, n, kw):
    rng = np.random.default_rng(period * 1000 + n)
    y = series(rng, 3, n, period, outliers=kw.get("robust", False))
    r = clts.stl(y, period, device=device, fused=64, **kw)
    assert r.diagnostics["fused"] == 64
    s, t, res, w = sm_fit(y, period, **kw)
    assert err(r.seasonal, s, y) < 1e-9
    assert err(r.trend, t, y) < 1e-9
    assert err(r.resid, res, y) < 1e-9
    assert np.abs(r.weights - w).max() < 1e-9
    assert r.diagnostics["n_failed"] == 0


@pytest.mark.parametrize("frac", [0.0, 0.3, 0.6, 0.9])
@pytest.mark.parametrize("wg", [8, 256])
def test_missing_vs_reference(device, frac, wg):
    """NaN fractions 0-90 %, a gap longer than a period, a series with fewer than two periods'
    worth of values and one with a whole cycle-subseries missing (both NaN, counted). A group
    narrower than the period and one as wide as the select's histogram (the programs of
    test_agrees_with_the_separate_kernels' work-group sweep: degree 1, float64, gaps)."""
    rng = np.random.default_rng(int(frac * 10) + 17)
    y = series(rng, 6, 300, 12, outliers=True)
    y[rng.random(y.shape) < frac] = np.nan
    y[1, 30:50] = np.nan
    y[4] = np.nan
    y[4, 100:118] = 1.0 + rng.standard_normal(18)   # 18 valid values < 2 periods
    y[5, 3::12] = np.nan                             # a cycle-subseries without a value
    kw = dict(seasonal_jump=2, trend_jump=3, low_pass_jump=2, robust=True, outer_iter=2)
    r = clts.stl(y, 12, device=device, fused=wg, **kw)
    s, t, res, w = references.stl(y, 12, **kw)
    assert err(r.seasonal, s, y) < 1e-9
    assert err(r.trend, t, y) < 1e-9
    assert np.array_equal(np.isnan(r.resid), np.isnan(res))
    assert np.nanmax(np.abs(r.weights - w)) < 1e-9
    dead = [any(np.isnan(row[j::12]).all() for j in range(12)) or np.isfinite(row).sum() < 24
            for row in y]
    assert dead[4] and dead[5] and np.array_equal(r.diagnostics["failed"], dead)
    ok = ~r.diagnostics["failed"]
    assert np.isfinite(r.seasonal[ok]).all() and np.isfinite(r.trend[ok]).all()


#: the fused work-groups of each (degree, dtype) of test_agrees_with_the_separate_kernels. The
#: degrees and the dtype are compile-time parameters of the fused program, and so is the
#: work-group (pocl compiles each program at its first launch): the sweep of work-groups (8:
#: one item per cycle-subseries, several rounds over the histogram; 32; 256: items idle past
#: the series, one histogram bin each) runs at degree 1 in float64, the programs of
#: test_missing_vs_reference's 8 and 256; every other (degree, dtype) runs at one of them,
#: each size in both dtypes and at two or more degrees.
AGREE_WGS = {(0, np.float64): (256,), (1, np.float64): (8, 32, 256), (2, np.float64): (8,),
             (0, np.float32): (8,), (1, np.float32): (256,), (2, np.float32): (32,)}


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize("deg", [0, 1, 2])
def test_agrees_with_the_separate_kernels(device, dtype, tol, deg):
    """The fused kernel against the separate kernels (outer, one lane) at each degree in both
    dtypes, robust, with missing values; the work-groups of ``AGREE_WGS``."""
    rng = np.random.default_rng(deg + 31)
    y = series(rng, 5, 96, 8, outliers=True)
    y[rng.random(y.shape) < 0.2] = np.nan
    kw = dict(seasonal_deg=deg, trend_deg=deg, low_pass_deg=deg, seasonal_jump=2,
              trend_jump=3, robust=True, outer_iter=2)
    if deg == 2 and dtype == np.float32:    # as test_stl.test_versions_agree
        kw.update(low_pass_deg=1, robust=False, outer_iter=0)
    if deg == 2 and dtype == np.float64:
        tol = 1e-10
    y = y.astype(dtype)
    sep = clts.stl(y, 8, device=device, version="outer", lanes=1, **kw)
    for wg in AGREE_WGS[deg, dtype]:
        f = clts.stl(y, 8, device=device, fused=wg, **kw)
        assert set(f.diagnostics["loess_versions"].values()) == {"fused"}
        assert f.seasonal.dtype == dtype
        assert err(f.seasonal, sep.seasonal, y) < tol
        assert err(f.trend, sep.trend, y) < tol
        assert np.abs(f.weights - sep.weights).max() < (1e-9 if dtype == np.float64 else 1e-4)


def test_one_launch_per_outer_iteration(device):
    """(Work-group 64 here and in test_threads: test_matches_statsmodels' program.)"""
    y = series(np.random.default_rng(3), 4, 120, 12, outliers=True)
    for kw, want in ((dict(robust=True), 16), (dict(robust=True, outer_iter=3), 4), ({}, 1)):
        with timing(device) as t:
            clts.stl(y, 12, device=device, fused=64, progress=False, **kw)
        assert len(t.events) == want, kw


def test_threads(device):
    rng = np.random.default_rng(8)
    ys = [series(rng, 3, 100, 12, outliers=True) for _ in range(4)]
    want = [clts.stl(y, 12, device=device, robust=True, outer_iter=2, fused=64) for y in ys]
    got, errors = [None] * 4, []

    def work(i):
        try:
            for _ in range(3):
                got[i] = clts.stl(ys[i], 12, device=device, robust=True, outer_iter=2, fused=64)
        except Exception as exc:       # noqa: BLE001 - reported below
            errors.append(exc)
    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    for g, w in zip(got, want):
        assert np.array_equal(g.trend, w.trend) and np.array_equal(g.weights, w.weights)


def _problem(n, period=12, itemsize=8, complete=True, **kw):
    p = resolve_parameters(period, **kw)
    return Problem(p, 512, n, itemsize, complete)


def test_plan_choice():
    """The GPU profiles choose the fused STL where a series fits a work-group's local memory
    and the interpolation is linear; a forced LOESS version keeps the separate kernels; a
    forced ``fused`` that cannot run is a ValueError; the CPU profiles keep it off."""
    gpus = gpus_over_pocl()
    if not gpus:
        pytest.skip("emulation runs on pocl")
    for name, dev in gpus.items():
        plan = make_plan(dev, _problem(368, robust=True))
        assert plan.fused > 0, name
        assert make_plan(dev, _problem(368, robust=True), version="outer").fused == 0
        assert make_plan(dev, _problem(368, robust=True, interpolation="hermite")).fused == 0
        assert make_plan(dev, _problem(20_000, itemsize=4)).fused == 0     # too long
        with pytest.raises(ValueError, match="fused=128: the fused STL needs"):
            make_plan(dev, _problem(20_000, itemsize=4), fused=128)
        # with missing values the positions need room too
        budget = dev.local_mem
        n_ok = max(n for n in range(100, 4000, 50)
                   if make_plan(dev, _problem(n, complete=False)).fused)
        assert make_plan(dev, _problem(n_ok, complete=True)).fused
        assert n_ok * 8 * 5 < budget
    for dev in clts.runtime.usable():
        d = clts.get_device(dev.index)
        if not d.info.emulates and d.info.type == "cpu":
            assert make_plan(d, _problem(368, robust=True)).fused == 0
    with pytest.raises(ValueError, match="fused"):
        clts.stl(np.zeros((2, 48)), 12, fused=48)


@pytest.mark.parametrize("name", ["h100", "mi100", "intel-max-1550"])
def test_emulated_gpu_runs_fused(name):
    """Under the emulated GPUs' limits (work-group, local memory checked at every launch) the
    auto Plan runs the fused STL and matches the reference, with and without missing values,
    both dtypes where the GPU has them."""
    gpus = gpus_over_pocl()
    if name not in gpus:
        pytest.skip(f"no emulated {name} here")
    dev = gpus[name]
    rng = np.random.default_rng(4)
    y = series(rng, 4, 150, 12, outliers=True)
    y[1, rng.random(150) < 0.2] = np.nan
    kw = dict(robust=True, outer_iter=2, trend_jump=2)
    s, t, _, w = references.stl(y, 12, **kw)
    for dt, tol in ((np.float64, 1e-9), (np.float32, 1e-4)):
        if dt == np.float64 and not dev.fp64:
            continue
        with timing(dev) as tm:
            r = clts.stl(y.astype(dt), 12, device=dev, **kw)
        assert r.diagnostics["fused"] > 0 and len(tm.events) == 3
        assert err(r.seasonal, s, y) < tol and err(r.trend, t, y) < tol
