"""Series of no values or of one step: each function's own rule (too few values, fewer than two
periods, two dates needed) and never a numpy reshape or index error from inside the call. Each
case raised ``cannot reshape array of size 0`` or an IndexError before its fix."""
from __future__ import annotations

import numpy as np
import pytest

import clts
import clts.compat.pymannkendall as mk


@pytest.mark.parametrize("shape", [(0,), (3, 0), (2, 2, 0), (0, 0)])
@pytest.mark.parametrize("variant", ["original", "hamed_rao", "pre_whitening"])
def test_trend_of_no_values_is_too_few(device, shape, variant):
    r = clts.trend_test(np.zeros(shape), variant=variant, device=device)
    assert np.shape(r.status) == shape[:-1]
    assert np.all(np.asarray(r.status) == 1) and np.all(np.asarray(r.n) == 0)
    assert np.all(np.isnan(np.asarray(r.p))) and np.all(np.isnan(np.asarray(r.slope)))


def test_multivariate_trend_of_no_values(device):
    r = clts.trend_test(np.zeros((2, 3, 0)), variant="multivariate", device=device)
    assert np.asarray(r.status).tolist() == [1, 1]


@pytest.mark.parametrize("call", [
    lambda y: clts.stl(y, period=12),
    lambda y: clts.stl_hastl(y, 12, 7),
], ids=["stl", "stl_hastl"])
@pytest.mark.parametrize("shape", [(0,), (3, 0)])
def test_stl_of_no_values_says_two_periods(call, shape):
    with pytest.raises(ValueError, match="at least two periods"):
        call(np.zeros(shape))


@pytest.mark.filterwarnings("ignore:period")
def test_mstl_of_no_values():
    with pytest.raises(ValueError, match="half the series length"):
        clts.mstl(np.zeros((3, 0)), periods=[12])


@pytest.mark.parametrize("n", [0, 1])
def test_bfast_needs_two_dates(n):
    d = np.datetime64("2000-01-01") + np.arange(n) * 16
    t = 2000.0 + np.arange(n)
    y = np.zeros((n, 3))
    calls = [
        lambda: clts.bfast_monitor(y, d, "2000-01-01"),
        lambda: clts.bfast_monitor(y, t, 2000.0, freq=1),
        lambda: clts.bfast_decompose(y, 23),
        lambda: clts.bfast01(y, t, freq=1),
        lambda: clts.bfast_breaks(y, t, freq=1),
    ]
    for call in calls:
        with pytest.raises(ValueError, match="at least two dates"):
            call()


def test_mstl_unknown_stl_keyword_lists_stl_settings():
    y = np.random.default_rng(0).standard_normal((2, 200))
    with pytest.raises(TypeError, match="bogus") as e:
        clts.mstl(y, periods=(12, 30), stl_kwargs=dict(bogus=1))
    assert "robust" in str(e.value) and "lanes" in str(e.value)


def test_pymannkendall_lag_zero_is_no_correction():
    x = np.cumsum(np.random.default_rng(1).standard_normal(50))
    base = mk.original_test(x)
    for fn in (mk.hamed_rao_modification_test, mk.yue_wang_modification_test):
        r = fn(x, lag=0)
        assert (r.var_s, r.p, r.slope) == (base.var_s, base.p, base.slope)
        assert type(r).__name__ != type(base).__name__      # still that test's result type


def test_pymannkendall_seasonal_sens_slope_of_a_matrix():
    x = np.cumsum(np.random.default_rng(2).standard_normal(60))
    assert mk.seasonal_sens_slope(x.reshape(5, 12)) == mk.seasonal_sens_slope(x, 12)
    assert mk.seasonal_sens_slope(x.reshape(10, 6)) == mk.seasonal_sens_slope(x, 6)
