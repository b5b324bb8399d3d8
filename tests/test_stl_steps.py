"""The two mappings of STL's steps around the LOESS (clts/stl/steps.py): "coalesced" (GPU
profiles) forced on the CPU devices against "series" (what CPUs keep) and the numpy reference;
the gather, packed positions and robustness weights bit-identical, the tiled moving averages
within a few ulp; every LOESS version and lane width; the Plans pick by profile."""
from __future__ import annotations

import importlib
import logging

import numpy as np
import pytest

import clts
from clts.runtime import emulation

import references

steps_mod = importlib.import_module("clts.stl.steps")


def _series(rng, batch, n, period):
    t = np.arange(n)
    y = (3 * np.sin(2 * np.pi * t / period) + 0.01 * t + rng.normal(size=(batch, n))
         + rng.normal(size=(batch, 1)) * 5)
    idx = rng.random(y.shape) < 0.04
    y[idx] += rng.normal(size=idx.sum()) * 30          # outliers: robustness weights < 1
    return y


def _err(a, b, y):
    assert np.array_equal(np.isnan(a), np.isnan(b)), "NaN patterns differ"
    scale = np.nanmax(np.ptp(np.nan_to_num(y), axis=-1))
    d = np.abs(np.asarray(a, np.float64) - b)
    return float(np.nanmax(d) / scale) if np.isfinite(d).any() else 0.0


def _data(dtype, n=181, period=12, batch=6):
    rng = np.random.default_rng(n + period)
    y = _series(rng, batch, n, period)
    y[0, 10:14] = np.nan                               # a few missing
    y[1, rng.random(n) < 0.3] = np.nan                 # 30 % missing
    y[2, ::2] = np.nan                                 # every other: even / odd valid counts
    y[3] = np.round(y[3])                              # ties in the residuals' median
    return y.astype(dtype)


KW = dict(seasonal_jump=2, trend_jump=3, low_pass_jump=2, robust=True, outer_iter=2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n,period", [(181, 12), (182, 12), (150, 4)])
def test_exact_steps_bit_identical(device, dtype, n, period, monkeypatch):
    """With the moving averages left to the series kernel, the coalesced gather, packed
    positions and weights (radix-select median) give the series mapping's bits. The outer
    LOESS at 4 lanes (interleaved layouts between the kernels): the LOESS programs of
    test_coalesced_mapping_every_version."""
    if dtype == np.float64 and not device.fp64:
        pytest.skip("no float64")
    monkeypatch.setattr(steps_mod, "MA_TILE", 1 << 30)      # the tiled MA does not fit
    y = _data(dtype, n, period)          # period 4: 38 cycles, two tiles of the gather
    lp = dict(version="outer", lanes=4)
    a = clts.stl(y, period, device=device, mapping="series", **lp, **KW)
    b = clts.stl(y, period, device=device, mapping="coalesced", **lp, **KW)
    for f in ("seasonal", "trend", "resid", "weights"):
        assert np.array_equal(getattr(a, f), getattr(b, f), equal_nan=True), f
    assert np.array_equal(a.diagnostics["failed"], b.diagnostics["failed"])


@pytest.mark.parametrize("version,lanes,interleave", [
    ("outer", 1, 0), ("outer", 4, 0), ("intragroup", 1, 0), ("flat", 1, 0), ("flat", 1, 1)])
@pytest.mark.parametrize("n,period,jump,interp", [(181, 12, 2, "linear"), (150, 4, 1, "hermite"),
                                                   (400, 52, 1, "linear")])
@pytest.mark.gpu_layout
def test_gpu_layouts_bit_identical(device, version, lanes, interleave, n, period, jump, interp,
                                   monkeypatch):
    """The GPU layouts forced on the CPU devices - NNS planes (mapping coalesced) and the flat
    finish through the local transpose (interleave 1: tiles of 32 fit points x 32 segments;
    period 4 with jump 1: 40 fit points, two tiles; period 52: two tiles of segments) - give
    the bits of the CPUs' layouts. A GPU layout's indexing checked by one CPU compiler
    (``gpu_layout``); on every driver the NNS planes run in test_coalesced_mapping_every_version
    (each LOESS version, against the reference) and the flat finish's transpose in
    test_coalesced_tiny."""
    dtype = np.float64 if device.fp64 else np.float32
    monkeypatch.setattr(steps_mod, "MA_TILE", 1 << 30)      # direct sums: not bit-identical
    y = _data(dtype, n, period)
    kw = dict(KW, seasonal_jump=jump, interpolation=interp)
    lp = {"lanes": lanes, "wg": 16, "chunk": 8, "interleave": interleave}
    a = clts.stl(y, period, device=device, version=version, mapping="series", **lp, **kw)
    b = clts.stl(y, period, device=device, version=version, mapping="coalesced", **lp, **kw)
    for f in ("seasonal", "trend", "resid", "weights"):
        assert np.array_equal(getattr(a, f), getattr(b, f), equal_nan=True), f


@pytest.mark.parametrize("version,lanes", [("outer", 1), ("outer", 4), ("intragroup", 1),
                                           ("flat", 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_coalesced_mapping_every_version(device, version, lanes, dtype):
    """Everything coalesced (tiled moving averages: direct sums) against the series mapping and
    the reference, with each LOESS version (lanes 4: the interleaved layouts between kernels)."""
    if dtype == np.float64 and not device.fp64:
        pytest.skip("no float64")
    y = _data(dtype)
    lp = {"lanes": lanes, "wg": 16, "chunk": 8}
    a = clts.stl(y, 12, device=device, version=version, mapping="series", **lp,
                 **KW)
    b = clts.stl(y, 12, device=device, version=version,
                 mapping="coalesced", **lp, **KW)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    assert _err(b.seasonal, a.seasonal, y) < tol
    assert _err(b.trend, a.trend, y) < tol
    assert np.nanmax(np.abs(b.weights - a.weights)) < (1e-9 if dtype == np.float64 else 1e-4)
    s, t, _, w = references.stl(y.astype(np.float64), 12, **KW)
    rtol = 1e-9 if dtype == np.float64 else 1e-4
    assert _err(b.seasonal, s, y) < rtol
    assert _err(b.trend, t, y) < rtol


def test_long_period_and_complete(device):
    """Period 52 (two column tiles of the gather, a wide moving-average halo) on complete
    data (no packed positions)."""
    dt = np.float64 if device.fp64 else np.float32
    rng = np.random.default_rng(3)
    y = _series(rng, 3, 300, 52).astype(dt)
    kw = dict(seasonal=13, robust=True, outer_iter=1)
    runs = [clts.stl(y, 52, device=device, mapping=m, **kw)
            for m in ("series", "coalesced")]
    tol = 1e-12 if dt == np.float64 else 1e-5
    assert _err(runs[1].seasonal, runs[0].seasonal, y) < tol
    assert _err(runs[1].trend, runs[0].trend, y) < tol


def test_steps_fall_back_where_they_do_not_fit(device):
    class Runner:
        dev, dtype, p = device, np.dtype(np.float64), {"period": 10 ** 7}
    st = steps_mod.Steps(Runner, "coalesced")
    assert not st.ma_tiles and st.ma_kw(1)["tiles"] is False    # local memory
    assert st.robust_wg and st.gather_tiled
    st = steps_mod.Steps(Runner, "series")
    assert not (st.ma_tiles or st.robust_wg or st.gather_tiled or st.stats_wg(100))


@pytest.mark.oclgrind
@pytest.mark.parametrize("missing", [True, False])
@pytest.mark.parametrize("version", ["auto", "flat", "outer"])
def test_coalesced_tiny(device, missing, version):
    """The GPU layouts on the simulator too: NNS planes, the tiled flat finish (interleave 1),
    the outer LOESS of one lane with its window loop rolled."""
    rng = np.random.default_rng(1)
    y = _series(rng, 2, 16, 4)
    if missing:
        y[0, 5] = np.nan
    kw = dict(seasonal=3, trend=7, low_pass=5, seasonal_jump=2, trend_jump=2, inner_iter=1,
              outer_iter=1)
    lp = {"flat": dict(version="flat", interleave=1, chunk=2),
          "outer": dict(version="outer", lanes=1)}.get(version, {})
    r = clts.stl(y, 4, device=device, mapping="coalesced", **lp, **kw)
    s, t, _, _ = references.stl(y, 4, **kw)
    tol = 1e-9 if device.fp64 else 1e-4
    assert _err(r.seasonal, s, y) < tol
    assert _err(r.trend, t, y) < tol


def test_mapping_checked():
    with pytest.raises(ValueError, match="mapping"):
        clts.stl(np.zeros((1, 48)), 12, mapping="rows")


@pytest.mark.parametrize("name", ["a100", "h100", "mi100", "intel-max-1550", "intel-iris-xe"])
def test_gpu_profiles_coalesce_cpu_profiles_keep_series(name, device):
    from clts.runtime import usable
    from clts.stl.params import check_arguments
    from clts.stl.plan import Problem, make_plan
    hits = [i for i in usable() if "portable computing" in i.platform.lower()]
    if not hits:
        pytest.skip("emulation runs on pocl")
    logging.getLogger("clts.profiles").setLevel(logging.ERROR)
    p = check_arguments(368, 23)
    assert make_plan(emulation.emulate(name, hits[0]), Problem(p, 512, 368)).steps == "coalesced"
    # the CPU profiles: pocl's, and the device under test where it is a CPU (a GPU under test
    # has its own profile: nothing to say about it here)
    cpus = [clts.get_device(hits[0], emulation=False)]
    if device.info.type == "cpu" and not device.info.emulates:
        cpus.append(device)
    for cpu in cpus:
        assert make_plan(cpu, Problem(p, 512, 368)).steps == "series", cpu
