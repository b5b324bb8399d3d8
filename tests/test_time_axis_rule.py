"""Where time is: each function's numpy default (docs/api-conventions.md, "Where time is"),
``time_axis=`` everywhere, and the mismatch checks: an argument that does not fit the axis read
as time but fits another is a ValueError naming ``time_axis=``; correct calls are never
questioned (these tests run under ``-W error`` too)."""
import warnings

import numpy as np
import pytest

import clts
from clts.timeaxis import check_fits

RNG = np.random.default_rng(7)
N = 48                                        # time steps (4 years of months)
Y = RNG.normal(size=(N, 5)) + 0.05 * np.arange(N)[:, None] + np.sin(
    2 * np.pi * np.arange(N) / 12)[:, None]   # [time, stations]
DATES = 2000 + np.arange(N) / 12


def test_check_fits_rule():
    fits = lambda n: n >= 24                  # noqa: E731
    check_fits((5, 48), -1, fits, "period=12")               # time axis fits: nothing
    check_fits((5, 6), -1, fits, "period=12")                # nothing fits: the caller says
    with pytest.raises(ValueError, match=r"period=12 .*axis 1 \(5 values\).*time_axis=0"):
        check_fits((48, 5), 1, fits, "period=12")
    with pytest.raises(ValueError, match="time_axis=0 or time_axis=2"):
        check_fits((30, 3, 30), 1, fits, "period=12")


def test_stl_period_on_wrong_axis(device):
    with pytest.raises(ValueError, match=r"period=12.*time_axis=0"):
        clts.stl(Y, 12, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = clts.stl(Y, 12, time_axis=0, device=device)
        b = clts.stl(Y.T, 12, device=device)
    assert a.trend.shape == Y.shape
    np.testing.assert_allclose(a.trend, b.trend.T, rtol=0, atol=1e-12)


def test_mstl_periods_on_wrong_axis(device):
    with pytest.raises(ValueError, match=r"periods=\(6,\).*time_axis=0"):
        clts.mstl(Y, 6, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = clts.mstl(Y, 6, time_axis=0, device=device)
    assert r.trend.shape == Y.shape


def test_trend_test_season_on_wrong_axis(device):
    with pytest.raises(ValueError, match=r"period=12 \(variant='seasonal'.*time_axis=0"):
        clts.trend_test(Y, variant="seasonal", period=12, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = clts.trend_test(Y, variant="seasonal", period=12, time_axis=0, device=device)
        b = clts.trend_test(Y.T, variant="seasonal", period=12, device=device)
    np.testing.assert_array_equal(a.s, b.s)


def test_trend_test_too_short_series_warn(device):
    with pytest.warns(UserWarning, match=r"2 values, fewer than the 3.*time_axis=0"):
        r = clts.trend_test(Y[:, :2], device=device)
    assert (r.status == 1).all()
    with warnings.catch_warnings():              # correct calls are left alone: series longer
        warnings.simplefilter("error")           # than the test needs, however many of them
        clts.trend_test(Y[:, :2].T, device=device)
        clts.trend_test(RNG.normal(size=(500, 4)), device=device)
        clts.trend_test(Y[:2], time_axis=0, device=device)    # asked for: no guess
        clts.trend_test(Y[:, 0], device=device)


def test_bfast_dates_on_wrong_axis(device):
    with pytest.raises(ValueError, match=r"dates \(48 entries\).*time_axis=1"):
        clts.bfast_monitor(Y.T, DATES, 2003.0, freq=1, device=device)
    with pytest.raises(ValueError, match=r"dates \(48 entries\).*time_axis=1"):
        clts.bfast_breaks(Y.T, DATES, freq=1.0, order=1, device=device, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = clts.bfast_monitor(Y.T, DATES, 2003.0, time_axis=1, freq=1, device=device)
        b = clts.bfast_monitor(Y, DATES, 2003.0, freq=1, device=device)
    np.testing.assert_array_equal(a.breaks, b.breaks)
    # no axis has as many values as dates: the plain length error, no time_axis advice
    with pytest.raises(ValueError, match="dates has 47 entries but y has 48") as e:
        clts.bfast_monitor(Y, DATES[:-1], 2003.0, freq=1, device=device)
    assert "time_axis" not in str(e.value)


def test_matrix_profile_column(device):
    T = np.cumsum(RNG.normal(size=(64, 1)), axis=0)
    with pytest.raises(ValueError, match="give time_axis=0"):
        clts.matrix_profile(T, 8, device=device, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = clts.matrix_profile(T, 8, time_axis=0, device=device, progress=False)
        b = clts.matrix_profile(T[:, 0], 8, device=device, progress=False)
        c = clts.aamp(T, 8, p=1, time_axis=0, device=device)
        d = clts.aamp(T[:, 0], 8, p=1, device=device)
    np.testing.assert_array_equal(a.P, b.P)
    np.testing.assert_array_equal(c.P, d.P)


def test_mass_query_longer_than_series(device):
    T = np.cumsum(RNG.normal(size=(100, 6)), axis=0)       # [time, series]
    Q = T[10:30, 2].copy()
    with pytest.raises(ValueError, match=r"a query of 20 values.*time_axis=0"):
        clts.mass(Q, T, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = clts.mass(Q, T, time_axis=0, device=device)
        b = clts.mass(Q, T.T, device=device)
        m = clts.match(Q, T, time_axis=0, device=device)
    np.testing.assert_array_equal(a, b)
    assert len(m) == 6 and m[2][0][1] == 10


def test_mstump_rows_are_dimensions(device):
    T = np.cumsum(RNG.normal(size=(40, 3)), axis=0)        # [time, dimensions]
    with pytest.raises(ValueError, match=r"m=8 .*time_axis=0"):
        clts.mstump(T, 8, device=device)                    # 3 values a row, m = 8
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = clts.mstump(T, 8, time_axis=0, device=device)
        b = clts.mstump(T.T, 8, device=device)
        i = int(np.argmin(b[0][1]))
        s = clts.subspace(T, 8, i, int(b[1][1, i]), 1, time_axis=0)
    np.testing.assert_array_equal(a[0], b[0])
    assert s.tolist() == clts.subspace(T.T, 8, i, int(b[1][1, i]), 1).tolist()


@pytest.mark.parametrize("name", ["stl", "mstl", "trend_test", "bfast_monitor", "bfast_breaks",
                                  "bfast_decompose",
                                  "matrix_profile", "aamp", "mass", "match", "mstump",
                                  "subspace", "mdl", "mpdist", "ostinato", "snippets",
                                  "mmotifs"])
def test_every_series_function_takes_time_axis(name):
    import inspect
    assert "time_axis" in inspect.signature(getattr(clts, name)).parameters
    doc = getattr(clts, name).__doc__ or ""
    assert "time_axis" in doc


def test_mann_kendall_and_sen_slope_pass_time_axis(device):
    a = clts.mann_kendall(Y, time_axis=0, device=device)
    b = clts.sen_slope(Y, time_axis=0, device=device)
    assert a.s.shape == b.slope.shape == (5,)
