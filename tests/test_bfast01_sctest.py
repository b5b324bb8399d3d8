"""clts.bfast01's OLS-CUSUM, supF, supLM, aveF and expF tests (strucchange's sctest of
efp(type = "OLS-CUSUM"), of Fstats(from = trim) and of gefp(...) with supLM(trim / n), as R's
bfast01 calls them) against R on the series of tests/data/bfast01_input.csv, gaps included (fixtures
tests/data/bfast01_sctest*.csv from bench/bfast01_sctest_fixtures.R, bfast 1.7.2 with
strucchange 1.5-3): statistics to 1e-8, p-values to 1e-6 relative (R's 1 - pchisq loses the
tail below 1e-15: absolute 1e-15), the decisions; the p-value functions on a grid."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import clts
from clts.bfast.decompose_steps import bridge_sup_pvalue
from clts.bfast.sctest import chisq_sf, fstats_pvalue

DATA = Path(__file__).resolve().parent / "data"
SUP = ("OLS-CUSUM", "supF", "supLM")
COLS = {"OLS-CUSUM": "cusum", "supF": "supf", "supLM": "suplm", "aveF": "avef", "expF": "expf"}


def test_r_fixture(device):
    if not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")
    import pandas as pd
    inp = pd.read_csv(DATA / "bfast01_input.csv")
    out = pd.read_csv(DATA / "bfast01_sctest.csv")
    t = inp.time.values
    names = [c for c in inp.columns if c != "time"]
    Y = inp[names].values
    for s, rows in out.groupby("setting"):
        first = rows.iloc[0]
        trim = None if np.isnan(first.trim) else (
            float(first.trim) if first.trim < 1 else int(first.trim))
        kw = dict(freq=1, order=int(first.order), formula=first.formula, trim=trim,
                  classify=False, device=device, progress=False)
        r = clts.bfast01(Y, t, test=list(SUP), aggregate="any", **kw)
        assert sorted(r.statistics) == sorted(SUP) == sorted(r.p_values)
        f = clts.bfast01(Y, t, test=["aveF", "expF"], **kw)
        for p, name in enumerate(names):
            row = rows[rows.series == name].iloc[0]
            what = f"setting {s} {name}"
            assert r.status[p] == 0 and r.nobs[p] == row.nobs, what
            assert r.breaks[p] == row.breaks, what
            for test, col in COLS.items():
                res = r if test in SUP else f
                if not np.isfinite(row[col]):     # R's expF overflows beyond F = 1419
                    assert res.statistics[test][p] > 700, what
                    continue
                np.testing.assert_allclose(res.statistics[test][p], row[col], rtol=1e-8,
                                           err_msg=f"{what} {test}")
                np.testing.assert_allclose(res.p_values[test][p], row[col + "_p"], rtol=1e-6,
                                           atol=1e-15, err_msg=f"{what} {test}")
                assert res.tests[test][p] == bool(row["test_" + col]), f"{what} {test}"


def test_pvalue_functions():
    """strucchange's pvalue.Fstats (supF, aveF, expF) over the statistic, k and the trimming
    (tau 0.5, >= 0.49, inside the table, <= 0.01) and the OLS-CUSUM p-value, against R; the chi-square
    tail against scipy's."""
    import pandas as pd
    pv = pd.read_csv(DATA / "bfast01_sctest_pvalues.csv")
    sup = pv[pv.kind != "cusum"]
    for (kind, k), g in sup.groupby(["kind", "k"]):
        np.testing.assert_allclose(fstats_pvalue(g.x.values, k, g["lambda"].values, kind),
                                   g.p.values, rtol=1e-9, atol=1e-15, err_msg=f"{kind} k {k}")
    cu = pv[pv.kind == "cusum"]
    np.testing.assert_allclose(bridge_sup_pvalue(cu.x.values), cu.p.values, rtol=1e-12, atol=1e-16)
    assert math.isnan(float(fstats_pvalue(np.nan, 3, 4.0)))
    sp = pytest.importorskip("scipy.special")
    x = np.array([0.0, 1e-3, 0.5, 2.0, 7.3, 30.0, 120.0, 900.0])
    for df in (1.0, 2.5, 8.0, 54.8):
        np.testing.assert_allclose(chisq_sf(x, df), sp.chdtrc(df, x), rtol=1e-10, atol=1e-300)


def test_chow_statuses_and_aggregate(device):
    """trim = n / 2 admits one break only: supF is Chow's F test (R's sctest.Fstats);
    constant and short pixels have no statistic; aggregate all / any of the five tests;
    per pixel a cube equals pixels alone."""
    rng = np.random.default_rng(5)
    n = 60
    t = 2000 + np.arange(n) / 12
    y = 0.5 + 0.05 * np.sin(2 * np.pi * t)[:, None] + 0.02 * rng.normal(size=(n, 5))
    y[30:, 0] += 0.1
    y[:, 2] = 0.7                      # constant: exact fit
    y[:45, 3] = np.nan                 # too short
    y[::5, 4] = np.nan                 # gaps
    kw = dict(freq=1, order=1, device=device, progress=False, classify=False)
    r = clts.bfast01(y, t, trim=30, test=["supF", "aveF", "expF"], **kw)
    K = 4
    F = r.statistics["supF"][0]
    sp = pytest.importorskip("scipy.special")
    assert r.p_values["supF"][0] == pytest.approx(sp.fdtrc(K, n - 2 * K, F), rel=1e-9)
    assert r.statistics["aveF"][0] == F and r.p_values["aveF"][0] == r.p_values["supF"][0]
    assert r.p_values["expF"][0] == pytest.approx(sp.chdtrc(K, r.statistics["expF"][0]))
    assert r.breakpoint[0] == 29 and r.breaks[0] == 1
    allt = ["OLS-MOSUM", "OLS-CUSUM", "supF", "supLM", "aveF", "expF", "BIC"]
    a = clts.bfast01(y, t, test=allt, **kw)
    b = clts.bfast01(y, t, test=allt, aggregate="any", **kw)
    assert a.status.tolist() == [0, 0, 5, 2, 0]
    for name in allt[:-1]:
        assert np.isnan(a.statistics[name][[2, 3]]).all() and np.isnan(a.p_values[name][2])
    np.testing.assert_array_equal(a.statistics["OLS-MOSUM"], a.mosum)
    dec = np.stack([a.tests[name] for name in allt])
    ok = a.status == 0
    assert (a.breaks[ok] == dec.all(axis=0)[ok]).all()
    assert (b.breaks[ok] == dec.any(axis=0)[ok]).all() and b.breaks[0] == 1
    step = 0.5 + 0.05 * np.sin(2 * np.pi * t) + 0.2 * (np.arange(n) >= 30)
    e = clts.bfast01(step, t, test="supF", **kw)      # a noise-free step: F huge or inf, p 0
    assert e.breaks == 1 and e.statistics["supF"] > 1e12 and e.p_values["supF"] == 0
    assert e.breakpoint == 29 and e.status == 5
    for p in (0, 4):
        one = clts.bfast01(y[:, p], t, test=allt, **kw)
        for name in allt[:-1]:
            np.testing.assert_allclose(one.statistics[name], a.statistics[name][p], rtol=1e-9)


def test_cli_and_xarray(tmp_path, any_device, capsys):
    """``clts bfast01 --test supF OLS-CUSUM --aggregate any`` and clts.xarray.bfast01 give the
    numpy function's decisions and p-values."""
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    import clts.xarray as cx
    from clts import cli
    from clts.io import reopen
    rng = np.random.default_rng(9)
    dates = np.datetime64("2001-01-01") + (np.arange(120) * 16).astype("timedelta64[D]")
    y = 0.5 + 0.1 * np.sin(2 * np.pi * np.arange(120) / 23)[:, None, None] \
        + 0.02 * rng.normal(size=(120, 2, 2))
    y[70:, 0, 0] -= 0.2
    y[rng.random(y.shape) < 0.05] = np.nan
    da = xr.DataArray(y, dims=("time", "y", "x"), coords={"time": dates}, name="ndvi")
    da.to_dataset().to_netcdf(tmp_path / "cube.nc", engine="h5netcdf")
    dates = reopen(str(tmp_path / "cube.nc"))["time"].values
    kw = dict(test=["supF", "OLS-CUSUM"], aggregate="any", device=any_device)
    r = clts.bfast01(y, dates, progress=False, **kw)
    ds = cx.bfast01(da, **kw)
    np.testing.assert_allclose(ds["supf_p"].values, r.p_values["supF"], rtol=1e-9)
    np.testing.assert_allclose(ds["cusum"].values, r.statistics["OLS-CUSUM"], rtol=1e-9)
    assert "suplm" not in ds
    assert cli.main(["bfast01", str(tmp_path / "cube.nc"), "-o", str(tmp_path / "b.nc"),
                     "--test", "supF", "OLS-CUSUM", "--aggregate", "any", "--device",
                     any_device.slug, "--no-progress"]) == 0, capsys.readouterr().err
    got = reopen(str(tmp_path / "b.nc"))
    np.testing.assert_array_equal(got["breaks"].values, r.breaks)
    np.testing.assert_allclose(got["supf_p"].values, r.p_values["supF"], rtol=1e-9)
    np.testing.assert_allclose(got["cusum_p"].values, r.p_values["OLS-CUSUM"], rtol=1e-9)


def test_per_pixel_regressors_and_blocks(device, monkeypatch):
    """A covariate per pixel: each pixel's tests as bfast01 on its own with that covariate
    shared; sub-blocks of one pixel (the cumulative Gram sums' memory bound) and host blocks of
    two change nothing; a Fortran, big-endian cube gives the same statistics."""
    import importlib
    rng = np.random.default_rng(11)
    N, M = 100, 4
    t = 2000 + np.arange(N) / 23
    x = rng.normal(size=(N, M)).cumsum(axis=0) / 3
    y = 0.5 + 0.02 * (t - 2000)[:, None] + 0.3 * x + 0.01 * rng.normal(size=(N, M))
    y[55:, :2] -= 0.05
    y[rng.random((N, M)) < 0.08] = np.nan
    tests = ["OLS-CUSUM", "supF", "supLM"]
    kw = dict(freq=1, order=1, test=tests, classify=False, device=device, progress=False)
    r = clts.bfast01(y, t, regressors=x[:, :, None], **kw)
    for p in range(M):
        one = clts.bfast01(y[:, p], t, regressors=x[:, p], **kw)
        for name in tests:
            np.testing.assert_allclose(r.statistics[name][p], one.statistics[name], rtol=1e-8)
            np.testing.assert_allclose(r.p_values[name][p], one.p_values[name], rtol=1e-7)
    plain = clts.bfast01(y, t, **kw)
    sc = importlib.import_module("clts.bfast.sctest")
    monkeypatch.setattr(sc, "GRAM_BYTES", 1)
    monkeypatch.setattr(importlib.import_module("clts.bfast.bfast01"), "BLOCK", 2)
    big = np.zeros((N, M), ">f8", order="F")
    big[...] = y
    small = clts.bfast01(big, t, **kw)
    for name in tests:
        np.testing.assert_allclose(small.statistics[name], plain.statistics[name], rtol=1e-10)
        np.testing.assert_array_equal(small.tests[name], plain.tests[name])
