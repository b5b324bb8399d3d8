"""clts.mstl against statsmodels' MSTL (complete data, 1e-10 of range in float64) and against
MSTL written out with the numpy STL reference (missing values); statsmodels' period rules."""
from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest

import clts
from clts.stl import reference as ref

sm = pytest.importorskip("statsmodels.tsa.seasonal")


def series(rng, batch, n, scale=0.3):
    t = np.arange(n, dtype=np.float64)
    return (np.sin(2 * np.pi * t / 24) + 2 * np.cos(2 * np.pi * t / 168) + 0.01 * t + 5
            + rng.normal(size=(batch, n)) * scale)


CASES = [
    dict(periods=(168, 24)),
    dict(periods=(24, 168), windows=(9, 13), lmbda=0.5,
         stl_kwargs=dict(robust=True, seasonal_deg=0)),
    dict(periods=(24, 168), lmbda="auto", iterate=3),
    dict(periods=[24], stl_kwargs=dict(trend_jump=3, seasonal_jump=2, inner_iter=2)),
    dict(periods=(24, 12, 168), windows=(11, 7, 15), stl_kwargs=dict(trend=201)),
]


@pytest.mark.parametrize("kw", CASES, ids=[str(i) for i in range(len(CASES))])
def test_matches_statsmodels(device, kw):
    y = series(np.random.default_rng(len(str(kw))), 2, 24 * 7 * 4)
    r = clts.mstl(y, device=device, **kw)
    for i in range(len(y)):
        # statsmodels pops inner_iter / outer_iter from the caller's stl_kwargs dict
        s = sm.MSTL(y[i], **copy.deepcopy(kw)).fit()
        S = np.asarray(s.seasonal).reshape(len(y[i]), -1)
        assert list(r.periods) == sorted(kw["periods"])
        for j, p in enumerate(r.periods):
            assert np.abs(r.seasonal[p][i] - S[:, j]).max() < 1e-10 * np.ptp(S[:, j])
        assert np.abs(r.trend[i] - s.trend).max() < 1e-10 * np.ptp(s.trend)
        assert np.abs(r.resid[i] - s.resid).max() < 1e-10 * np.ptp(y[i])
        assert np.abs(r.weights[i] - s.weights).max() < 1e-10
        assert np.abs(r.observed[i] - s.observed).max() < 1e-12 * np.ptp(s.observed)
    if kw.get("lmbda") == "auto":
        assert r.lmbda.shape == (2,)


def mstl_reference(y, periods, windows, iterate=2):
    seas = np.zeros((len(periods), len(y)))
    de = y.copy()
    for _ in range(iterate):
        for i, (p, w) in enumerate(zip(periods, windows)):
            de = de + seas[i]
            s, t, _, _ = ref.stl(de, p, seasonal=w)
            seas[i] = s
            de = de - s
    return seas, t, de - t


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-9), (np.float32, 2e-4)])
def test_missing_values(device, dtype, tol):
    rng = np.random.default_rng(1)
    y = series(rng, 3, 24 * 7 * 2 + 5)
    y[rng.random(y.shape) < 0.1] = np.nan
    y[2, 30:60] = np.nan
    y[1, ::24] = np.nan                       # one cycle-subseries of period 24 all missing
    r = clts.mstl(y.astype(dtype), (24, 48), device=device)
    assert r.diagnostics["n_failed"] == 1 and r.diagnostics["failed"].tolist() == [0, 1, 0]
    assert np.isnan(r.trend[1]).all() and (r.weights[1] == 0).all()
    for i in (0, 2):
        seas, t, e = mstl_reference(y[i], (24, 48), (11, 15))
        scale = np.nanmax(np.ptp(np.nan_to_num(y[i])))
        assert np.abs(r.seasonal[24][i] - seas[0]).max() < tol * scale
        assert np.abs(r.seasonal[48][i] - seas[1]).max() < tol * scale
        assert np.abs(r.trend[i] - t).max() < tol * scale
        assert np.array_equal(np.isnan(r.resid[i]), np.isnan(y[i]))


def test_period_rules(device):
    y = series(np.random.default_rng(2), 1, 300)[0]
    with pytest.warns(UserWarning, match="half"):
        r = clts.mstl(y, (24, 168), device=device)
    assert r.periods == (24,) and r.diagnostics["windows"] == (11,)
    with pytest.raises(ValueError, match="periods"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clts.mstl(y, (150, 200), device=device)
    with pytest.raises(ValueError, match="distinct"):
        clts.mstl(y, (24, 24), device=device)
    with pytest.raises(ValueError, match="same length"):
        clts.mstl(y, (12, 24), windows=(7,), device=device)
    with pytest.raises(TypeError, match="periods"):
        clts.mstl(y, (12.5, 24), device=device)
    with pytest.raises(ValueError, match="positive"):
        clts.mstl(y - 100, (12, 24), lmbda=0.5, device=device)
    with pytest.raises(ValueError, match="iterate"):
        clts.mstl(y, (12, 24), iterate=0, device=device)


def test_layouts_and_pandas(device):
    y = series(np.random.default_rng(4), 3, 24 * 14)
    base = clts.mstl(y, (12, 24), device=device)
    yf = np.asfortranarray(y)
    ybe = y.astype(">f8")
    for v in (yf, ybe, y.T.copy().T, np.repeat(y, 2, axis=1)[:, ::2]):
        r = clts.mstl(v, (12, 24), device=device)
        assert np.array_equal(r.trend, base.trend)
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(y.T, index=pd.date_range("2024-01-01", periods=y.shape[1], freq="h"))
    r = clts.mstl(df, (12, 24), device=device)
    assert isinstance(r.trend, pd.DataFrame) and np.allclose(r.trend.to_numpy().T, base.trend)
    assert isinstance(r.seasonal[24], pd.DataFrame)


def test_xarray_and_plot(device):
    xr = pytest.importorskip("xarray")
    y = series(np.random.default_rng(6), 4, 24 * 10)
    da = xr.DataArray(y.reshape(2, 2, -1), dims=("a", "b", "time"))
    import clts.xarray as cx
    import importlib.util
    lazy = importlib.util.find_spec("dask") is not None     # Dask is an optional extra
    ds = cx.mstl(da.chunk({"a": 1}) if lazy else da, (24, 48), device=device)
    r = clts.mstl(y, (24, 48), device=device)
    assert np.array_equal(ds["trend"].values.reshape(4, -1), r.trend)
    assert np.array_equal(ds["seasonal_48"].values.reshape(4, -1), r.seasonal[48])
    pytest.importorskip("matplotlib")
    assert len(r.plot(1).axes) == 5


def test_all_nan_series(device):
    y = series(np.random.default_rng(8), 2, 24 * 6)
    y[0] = np.nan
    r = clts.mstl(y, (12, 24), device=device)
    assert r.diagnostics["failed"].tolist() == [True, False]
    assert np.isnan(r.seasonal[12][0]).all() and np.isfinite(r.trend[1]).all()
