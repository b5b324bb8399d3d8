"""clts.bfast_decompose with strucchange's other fluctuation tests, ``type="OLS-CUSUM"``,
``"RE"`` and ``"ME"``, against R's bfast(type = ...) (bfast 1.7.2, strucchange 1.5-3) on R's
example series (harvest, simts) and synthetic monthly NDVI-like series, seasonal models
"harmonic" and "dummy", dates R's time(Yt) (RE and ME depend on them). Fixtures:
tests/data/bfast_decompose_types_*.csv (bench/bfast_decompose_type_fixtures.R).

Checked: breakpoints of trend and season, iterations, fitted components (1e-9 of the series'
range, as tests/test_bfast_decompose.py) and the last iteration's p-values of both tests
(relative 1e-6; measured 1e-8).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import clts
from clts.bfast.decompose_steps import bridge_sup_pvalue, cusum_test, me_test, re_test

pd = pytest.importorskip("pandas")
DATA = Path(__file__).resolve().parent / "data"


def _cases(type):
    cs = pd.read_csv(DATA / "bfast_decompose_types_cases.csv", keep_default_na=False,
                     na_values=["NA"])
    ser = pd.read_csv(DATA / "bfast_decompose_types_series.csv")
    return [(row, ser[ser.case == row.case]) for _, row in cs.iterrows() if row.type == type]


def _ints(s):
    s = str(s).strip()
    return [int(float(v)) for v in s.split()] if s else []


CUSUM = _cases("OLS-CUSUM")
ALL = CUSUM + _cases("RE") + _cases("ME")


@pytest.mark.parametrize("row,g", ALL, ids=[c[0].case for c in ALL])
def test_matches_r(device, row, g):
    if not device.fp64:
        pytest.skip("float64 needs cl_khr_fp64")
    y = g.y.to_numpy()
    f = int(row.freq)
    dates = float(row.start) + np.arange(y.size) / f          # R's time(Yt)
    r = clts.bfast_decompose(y, f, dates, h=float(row.h), season=row.season,
                             max_iter=int(row.max_iter), type=row.type, device=device)
    tol = 1e-9 * np.ptp(y)
    assert r.status == 0
    assert int(r.iterations) == row.iterations
    assert [b + 1 for b in r.trend_breaks if b >= 0] == _ints(row.trend_bp)
    assert [b + 1 for b in r.season_breaks if b >= 0] == _ints(row.season_bp)
    np.testing.assert_allclose(r.trend, g.Tt.to_numpy(), rtol=0, atol=tol)
    np.testing.assert_allclose(r.seasonal, g.St.to_numpy(), rtol=0, atol=tol)
    np.testing.assert_allclose([float(r.trend_pvalue), float(r.season_pvalue)],
                               [float(row.p_trend), float(row.p_season)], rtol=1e-6, atol=1e-14)


@pytest.mark.parametrize("type", ["OLS-CUSUM", "RE", "ME"])
def test_batched_with_gaps(device, type):
    """Several pixels at once, one with gaps and one constant, equal to each pixel alone."""
    row, g = CUSUM[4]                                   # syn1, harmonic: one trend break
    y = g.y.to_numpy()
    f = int(row.freq)
    rng = np.random.default_rng(3)
    cube = np.stack([y, y + 0.05 * rng.normal(size=y.size), np.full(y.size, 0.4),
                     np.where(rng.random(y.size) < 0.1, np.nan, y)], axis=1)
    dt = np.float64 if device.fp64 else np.float32
    kw = dict(h=float(row.h), season="harmonic", type=type, device=device, dtype=dt)
    r = clts.bfast_decompose(cube, f, **kw)
    assert r.status.tolist() == [0, 0, 2, 0]
    for p in (0, 1, 3):
        one = clts.bfast_decompose(cube[:, p], f, **kw)
        assert r.trend_breaks[:, p].tolist() == one.trend_breaks.tolist()
        assert int(r.iterations[p]) == int(one.iterations)
        np.testing.assert_allclose(r.trend_pvalue[p], one.trend_pvalue, rtol=1e-9)


def test_cusum_pvalue_table():
    """strucchange's Brownian bridge sup p-value at its usual critical values (1.358 at 5 %,
    1.628 at 1 %, 1.224 at 10 %) and its cut at 0.1."""
    np.testing.assert_allclose(bridge_sup_pvalue([1.3581, 1.6276, 1.2239]), [0.05, 0.01, 0.1],
                               atol=2e-4)
    assert bridge_sup_pvalue(0.05) == 1.0
    e = np.array([[1.0, -1.0, 1.0, -1.0, np.nan, 2.0]]).T
    p, stat, exact = cusum_test(e, np.ones((6, 1)), 0.15, np.array([1.0]), 1e-12)
    v = e[~np.isnan(e)]
    sigma = v.std(ddof=1) * np.sqrt((v.size - 1) / (v.size - 1))
    assert stat[0] == pytest.approx(np.max(np.abs(np.cumsum(v))) / (sigma * np.sqrt(v.size)))
    assert not exact[0]


def test_estimates_tests_drop_missing_values():
    """RE and ME on a pixel with gaps: those of its valid values alone (R's na.omit)."""
    rng = np.random.default_rng(7)
    N = 60
    X = np.column_stack([np.ones(N), np.arange(N) / 12 - 2.5, np.cos(np.arange(N))])
    e = rng.normal(size=(N, 3))
    e[rng.random((N, 3)) < 0.15] = np.nan
    e[:, 2] = e[:, 0]
    e[::2, 2] = np.nan
    for test in (re_test, me_test):
        p, stat, _ = test(e, X, 0.2, np.ones(3), 1e-12)
        for j in range(3):
            v = ~np.isnan(e[:, j])
            p1, s1, _ = test(e[v, j:j + 1], X[v], 0.2, np.ones(1), 1e-12)
            assert stat[j] == pytest.approx(s1[0], rel=1e-10) and p[j] == pytest.approx(p1[0])


@pytest.mark.parametrize("type", ["Rec-CUSUM", "cusum", "Score-CUSUM"])
def test_other_types_refused(type):
    with pytest.raises(ValueError, match="type"):
        clts.bfast_decompose(np.ones((48, 2)), 12, type=type)


def test_cusum_xarray_and_command_line(tmp_path, any_device, capsys):
    """``type`` through clts.xarray.bfast_decompose and ``clts bfast-decompose --type``."""
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    from clts import cli
    from clts.io import reopen
    row, g = CUSUM[4]                                   # syn1: one trend break under OLS-CUSUM
    f = int(row.freq)
    y = g.y.to_numpy()
    rng = np.random.default_rng(5)
    cube = (y[:, None, None] + 0.01 * rng.normal(size=(y.size, 2, 2)))
    dates = np.datetime64("2001-01-01") + (np.arange(y.size) * 30).astype("timedelta64[D]")
    da = xr.DataArray(cube, dims=("time", "y", "x"), coords={"time": dates}, name="ndvi")
    da.to_dataset().to_netcdf(tmp_path / "cube.nc", engine="h5netcdf")
    kw = dict(h=float(row.h), season="harmonic", type="OLS-CUSUM")
    want = clts.bfast_decompose(cube, f, dates, device=any_device, progress=False, **kw)
    ds = clts.xarray.bfast_decompose(da, f, device=any_device, **kw)
    np.testing.assert_array_equal(ds["n_trend_breaks"].values, want.n_trend_breaks)
    np.testing.assert_allclose(ds["trend_pvalue"].values, want.trend_pvalue, rtol=1e-12)
    out = tmp_path / "d.nc"
    assert cli.main(["bfast-decompose", str(tmp_path / "cube.nc"), "--freq", str(f), "--h",
                     str(row.h), "--season", "harmonic", "--type", "OLS-CUSUM", "-o", str(out),
                     "--device", any_device.slug, "--no-progress"]) == 0, \
        capsys.readouterr().err
    got = reopen(str(out))
    np.testing.assert_array_equal(got["n_trend_breaks"].values, want.n_trend_breaks)
    np.testing.assert_allclose(got["trend_pvalue"].values, want.trend_pvalue, rtol=1e-12)
    mosum = clts.bfast_decompose(cube, f, dates, device=any_device, progress=False,
                                 h=float(row.h), season="harmonic")
    assert not np.allclose(mosum.trend_pvalue, want.trend_pvalue)   # the option took effect


def test_r_start():
    """R's start(Yt) that RE and ME test the trend on: numbers as given, dates as decimal
    years, R's ts default 1 without dates."""
    from clts.bfast.decompose import r_start
    assert r_start(np.array([2000.13, 2000.17]), True) == 2000.13
    assert r_start(np.array(["2001-07-02", "2001-07-18"], "datetime64[D]"), True) == \
        pytest.approx(2001 + 182 / 365)
    assert r_start(np.array(["2004-01-01T12:00"], "datetime64[m]"), True) == 2004.0
    assert r_start(np.arange(5), False) == 1.0
