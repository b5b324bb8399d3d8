"""clts.compat.pymannkendall against pymannkendall itself: pymannkendall's own checks (every
field of each test's named tuple: trend, h, p, z, Tau, s, var_s, slope; the lag variants; the
seasonal test at period 12) rerun on the compat module, with pymannkendall's outputs on the
same inputs as the expected values: a real series (statsmodels' Nile and CO2 data when
statsmodels is installed) and random series with ties and NaN."""
from __future__ import annotations

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


@pytest.mark.parametrize("func", ["pre_whitening_modification_test",
                                  "trend_free_pre_whitening_modification_test",
                                  "multivariate_test", "regional_test",
                                  "correlated_multivariate_test", "correlated_seasonal_test",
                                  "partial_test"])
def test_missing_tests_raise(func):
    with pytest.raises(NotImplementedError, match=f"pymannkendall.{func} "):
        getattr(cmk, func)(np.arange(20.0))
    assert func in cmk.__all__ and hasattr(mk, func)


def test_several_columns_raise():
    with pytest.raises(NotImplementedError, match="several columns"):
        cmk.original_test(np.ones((20, 3)))
