"""clts.compat.pymannkendall against pymannkendall itself: pymannkendall's own checks (every
field of each test's named tuple: trend, h, p, z, Tau, s, var_s, slope; the lag variants; the
seasonal test at period 12) rerun on the compat module, with pymannkendall's outputs on the
same inputs as the expected values: a real series (statsmodels' Nile and CO2 data when
statsmodels is installed) and random series with ties and NaN."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import clts.compat.pymannkendall as cmk

mk = pytest.importorskip("pymannkendall")

FIELDS = ('trend', 'h', 'p', 'z', 'Tau', 's', 'var_s', 'slope', 'intercept')
CASES = [("original_test", {}), ("hamed_rao_modification_test", {}),
         ("hamed_rao_modification_test", {"lag": 3}), ("yue_wang_modification_test", {}),
         ("yue_wang_modification_test", {"lag": 1}), ("seasonal_test", {"period": 12}),
         ("original_test", {"alpha": 0.2})]


def _series():
    rng = np.random.default_rng(43)
    tied = np.round(np.cumsum(rng.standard_normal(90)) + 0.05 * np.arange(90), 0)   # ties
    gaps = np.round(np.sin(np.arange(100) / 3) + 0.02 * np.arange(100), 2)
    gaps[[0, 7, 33, 34, 80]] = np.nan
    out = {"tied": tied, "gaps": gaps, "flat": np.r_[np.ones(30), 2 * np.ones(30)]}
    try:
        import statsmodels.datasets as ds
        out["nile"] = ds.nile.load_pandas().data["volume"].to_numpy(float)
        out["co2"] = ds.co2.load_pandas().data["co2"].to_numpy(float)[:600]   # NaN inside
    except Exception:       # optional data
        pass
    return out


SERIES = _series()


def _close(a, b, rtol):
    if isinstance(b, (str, bool, np.bool_)):
        return a == b
    a, b = float(a), float(b)
    return (np.isnan(a) and np.isnan(b)) or abs(a - b) <= rtol * max(abs(b), 1e-300)


@pytest.mark.parametrize("name", sorted(SERIES))
@pytest.mark.parametrize("func,kw", CASES)
def test_same_as_pymannkendall(device, name, func, kw):
    x = SERIES[name]
    want = getattr(mk, func)(x, **kw)
    got = getattr(cmk, func)(x, **kw, device=device)
    assert type(got).__name__ == type(want).__name__
    assert got._fields == FIELDS == want._fields
    trend, h, p, z, Tau, s, var_s, slope, intercept = got        # pymannkendall's unpacking
    assert isinstance(trend, str) and isinstance(h, bool)
    for f, a, b in zip(FIELDS, got, want):
        assert _close(a, b, 1e-10), (f, a, b)


@pytest.mark.parametrize("name", sorted(SERIES))
def test_sens_slope(device, name):
    x = SERIES[name]
    for got, want in ((cmk.sens_slope(x, device=device), mk.sens_slope(x)),
                      (cmk.seasonal_sens_slope(x, 6, device=device), mk.seasonal_sens_slope(x, 6))):
        assert type(got).__name__ == type(want).__name__ and got._fields == want._fields
        slope, intercept = got
        assert _close(slope, want.slope, 1e-12) and _close(intercept, want.intercept, 1e-12)


def test_inputs_as_pymannkendall(device):
    x = SERIES["gaps"]
    # a list, an (n, 1) column, positional alpha / lag / period as pymannkendall's order
    assert cmk.original_test(list(x), 0.1, device=device) == cmk.original_test(
        x[:, None], 0.1, device=device)
    assert _all_close(cmk.hamed_rao_modification_test(x, 0.05, 2, device=device),
                      mk.hamed_rao_modification_test(x, 0.05, 2))
    # a pandas column, as pymannkendall's own tests pass (rainfalldata.iloc[:, 2])
    pd = pytest.importorskip("pandas")
    col = pd.DataFrame({"a": np.arange(len(x)), "v": x},
                       index=pd.date_range("2000-01", periods=len(x), freq="MS")).iloc[:, 1]
    assert _all_close(cmk.yue_wang_modification_test(col, device=device),
                      mk.yue_wang_modification_test(col))
    # seasonal data as a (cycles, seasons) matrix
    y = SERIES["tied"][:84].reshape(7, 12)
    assert _all_close(cmk.seasonal_test(y, device=device), mk.seasonal_test(y))


def _all_close(a, b):
    return all(_close(u, v, 1e-10) for u, v in zip(a, b))


NEW_1D = [("pre_whitening_modification_test", {}),
          ("trend_free_pre_whitening_modification_test", {}),
          ("correlated_seasonal_test", {"period": 12}),
          ("correlated_seasonal_test", {"period": 4, "alpha": 0.3})]
NEW_2D = ["multivariate_test", "regional_test", "correlated_multivariate_test", "partial_test"]
DATA = Path(__file__).parent / "data"


def _matrices():
    """(n, c) matrices, time down: pymannkendall's test data (monthly rainfall at six
    stations, water quality with discharge), random ones with ties and NaN."""
    rng = np.random.default_rng(7)
    rain = np.genfromtxt(DATA / "pymannkendall_rainfall.csv", delimiter=",", skip_header=1)
    wq = np.genfromtxt(DATA / "pymannkendall_water_quality.csv", delimiter=",",
                       skip_header=1)
    tied = np.round(np.cumsum(rng.standard_normal((70, 3)), axis=0), 0)
    tied[[3, 40], [0, 2]] = np.nan
    return {"rain6": rain[:, 2:], "rain2": rain[:120, 2:4], "wq": wq[:, 2:], "tied": tied,
            "tied2": tied[:, :2]}


MATRICES = _matrices()


@pytest.mark.parametrize("name", sorted(SERIES))
@pytest.mark.parametrize("func,kw", NEW_1D)
def test_new_series_tests_as_pymannkendall(device, name, func, kw):
    x = SERIES[name]
    with np.errstate(all="ignore"):
        want = getattr(mk, func)(x, **kw)
    got = getattr(cmk, func)(x, **kw, device=device)
    assert type(got).__name__ == type(want).__name__ and got._fields == FIELDS
    trend, h, p, z, Tau, s, var_s, slope, intercept = got
    assert isinstance(trend, str) and isinstance(h, bool)
    assert _all_close(got, want), (got, want)


@pytest.mark.parametrize("name", sorted(MATRICES))
@pytest.mark.parametrize("func", NEW_2D)
def test_matrix_tests_as_pymannkendall(device, name, func):
    x = MATRICES[name]
    if func == "partial_test" and x.shape[1] != 2:
        with pytest.raises(ValueError, match="two columns"):
            cmk.partial_test(x, device=device)
        return
    with np.errstate(all="ignore"):
        want = getattr(mk, func)(x)
    got = getattr(cmk, func)(x, device=device)
    assert type(got).__name__ == type(want).__name__ and got._fields == FIELDS
    trend, h, p, z, Tau, s, var_s, slope, intercept = got
    assert _all_close(got, want), (got, want)


def test_pymannkendalls_own_cases(device):
    """pymannkendall's own test cases (its fixtures: a constant series and matrix, a trend,
    its monthly rainfall and water-quality data) with the numbers its tests expect."""
    bogra = np.genfromtxt(DATA / "pymannkendall_rainfall.csv", delimiter=",",
                          skip_header=1)[:, 2]
    wq = MATRICES["wq"]
    flat, flat2 = np.ones(360) * 7, np.ones((360, 2)) * 7
    trend = np.arange(360.0) + np.random.default_rng(0).random(360) / 10 ** 13
    d = dict(device=device)
    r = cmk.pre_whitening_modification_test(bogra, **d)
    assert _all_close(r[:7], ("no trend", False, 0.9212742990272651, -0.09882867695903437,
                              -0.003545066045066045, -219.0, 4865719.0))
    r = cmk.trend_free_pre_whitening_modification_test(bogra, **d)
    assert _all_close(r[:7], ("no trend", False, 0.7755465706913385, -0.28512735834365455,
                              -0.010198135198135198, -630.0, 4866576.0))
    r = cmk.regional_test(wq, **d)
    assert _all_close(r[:8], ("no trend", False, 0.2613018311185482, -1.1233194854000186,
                              -0.06185919343814081, -362.0, 103278.0, -0.680446465481604))
    r = cmk.correlated_multivariate_test(wq, **d)
    assert _all_close(r[:8], ("no trend", False, 0.05777683185903615, -1.8973873659119118,
                              -0.05868196964087375, -317.0, 27913.000000000007,
                              -0.680446465481604))
    r = cmk.correlated_seasonal_test(bogra, period=12, **d)
    assert _all_close(r[:7], ("no trend", False, 0.06032641537423844, -1.878400366918792,
                              -0.10054347826086957, -333.0, 31427.666666666664))
    r = cmk.partial_test(wq, **d)
    assert _all_close(r, ("no trend", False, 0.06670496348739152, -1.8336567432191642,
                          -0.07552758237689744, -282.53012319329804, 23740.695506142725,
                          -0.5634920634920635, 471.9761904761905))
    for f in (cmk.pre_whitening_modification_test, cmk.trend_free_pre_whitening_modification_test):
        r = f(flat, **d)
        assert (r.trend, r.h, r.p, r.z, r.Tau) == ("no trend", False, 1.0, 0, 0.0)
        assert f(trend, **d)[:3] == ("increasing", True, 0.0)
    assert cmk.trend_free_pre_whitening_modification_test(trend, **d).Tau == 1.0
    r = cmk.regional_test(flat2, **d)
    assert (r.trend, r.h, r.p, r.z, r.Tau, r.s, r.var_s, r.slope) == (
        "no trend", False, 1.0, 0, 0.0, 0.0, 0.0, 0.0)
    r = cmk.correlated_multivariate_test(flat2, **d)
    assert (r.trend, r.h, r.Tau, r.s, r.var_s, r.slope) == ("no trend", False, 0.0, 0.0,
                                                            0.0, 0.0)
    r = cmk.correlated_seasonal_test(trend, period=12, **d)
    assert (r.trend, r.h, round(r.p), r.Tau, r.s) == ("increasing", True, 0, 1.0, 5220.0)
    r = cmk.partial_test(flat2, **d)
    assert (r.trend, r.h, r.p, r.z, r.Tau, r.s, r.var_s) == ("no trend", False, 1.0, 0, 0.0,
                                                             0.0, 5205500.0)


def test_alpha_as_pymannkendall(device):
    """regional_test and correlated_seasonal_test ignore alpha in pymannkendall 1.4.3; the
    others use it."""
    x, y = MATRICES["wq"], SERIES["tied"]
    for a in (0.01, 0.5):
        assert _all_close(cmk.regional_test(x, a, device=device), mk.regional_test(x, a))
        assert _all_close(cmk.correlated_seasonal_test(y, 6, a, device=device),
                          mk.correlated_seasonal_test(y, 6, a))
        assert _all_close(cmk.correlated_multivariate_test(x, a, device=device),
                          mk.correlated_multivariate_test(x, a))
    assert cmk.regional_test(x, 0.5, device=device).h is False
    assert cmk.multivariate_test(x, 0.5, device=device).h is True


def test_one_column_and_bad_input(device):
    x = SERIES["gaps"]
    assert _all_close(cmk.multivariate_test(x[:, None], device=device),
                      mk.multivariate_test(x[:, None]))
    assert _all_close(cmk.regional_test(x, device=device), mk.regional_test(x))
    with pytest.raises(ValueError, match="several columns|one series"):
        cmk.original_test(np.ones((20, 3)))
    with pytest.raises(ValueError, match="matrix"):
        cmk.multivariate_test(np.ones((2, 20, 3)))
    with pytest.raises(TypeError, match="real numbers"):
        cmk.partial_test(np.array([["a", "b"]] * 5))
