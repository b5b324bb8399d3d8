"""pandas Series / DataFrame inputs to the numpy functions come back labelled; time_axis on
every time-series function; deprecated argument names still work, with a warning."""
import warnings

import numpy as np
import pytest

import clts

pd = pytest.importorskip("pandas")


def _frame(n=72, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    idx = pd.date_range("2001-01-01", periods=n, freq="MS")
    return pd.DataFrame({"north": np.sin(2 * np.pi * t / 12) + 0.02 * t
                         + 0.1 * rng.standard_normal(n),
                         "south": np.cos(2 * np.pi * t / 12) - 0.01 * t
                         + 0.1 * rng.standard_normal(n)}, index=idx)


def test_stl_dataframe_time_down_the_rows(device):
    df = _frame()
    r = clts.stl(df, 12, device=device)
    ref = clts.stl(df.to_numpy().T, 12, device=device)      # [batch, time]
    for name in ("seasonal", "trend", "resid", "weights"):
        out = getattr(r, name)
        assert isinstance(out, pd.DataFrame)
        assert out.index.equals(df.index) and list(out.columns) == ["north", "south"]
        np.testing.assert_array_equal(out.to_numpy(), getattr(ref, name).T)
    slope = r.trend_slope()
    assert isinstance(slope, pd.Series) and list(slope.index) == ["north", "south"]
    np.testing.assert_allclose(slope.to_numpy(), ref.trend_slope())
    assert slope["north"] > 0 > slope["south"]
    s = clts.stl(df["north"], 12, device=device)
    assert isinstance(s.trend, pd.Series) and s.trend.name == "north"
    np.testing.assert_array_equal(s.trend.to_numpy(), ref.trend[0])


def test_stl_time_axis_numpy_any_axis(device):
    y = _frame(48).to_numpy()                      # [time, 2]
    cube = np.stack([y, y[:, ::-1]], axis=1)       # [time, 2, 2]
    r = clts.stl(cube, 12, time_axis=0, device=device)
    assert r.seasonal.shape == cube.shape and r.trend_slope().shape == (2, 2)
    ref = clts.stl(np.moveaxis(cube, 0, -1).reshape(4, -1), 12, device=device)
    np.testing.assert_array_equal(np.moveaxis(r.trend, 0, -1).reshape(4, -1), ref.trend)
    np.testing.assert_allclose(r.resid + r.seasonal + r.trend, cube, atol=1e-12)
    with pytest.raises(ValueError, match="time_axis 3 out of range"):
        clts.stl(cube, 12, time_axis=3, device=device)
    with pytest.raises(TypeError, match="time_axis"):
        clts.stl(cube, 12, time_axis=0.5, device=device)


def test_bfast_dataframe_dates_from_index(device):
    n = 96
    idx = pd.date_range("2000-01-01", periods=n, freq="MS")
    rng = np.random.default_rng(3)
    t = np.arange(n)
    base = 0.5 + 0.2 * np.sin(2 * np.pi * t / 12)
    df = pd.DataFrame({"stable": base + 0.02 * rng.standard_normal(n),
                       "cleared": base + 0.02 * rng.standard_normal(n) - 0.4 * (t >= 80)},
                      index=idx)
    r = clts.bfast_monitor(df, None, "2005-01-01", freq=365.25, device=device)
    ref = clts.bfast_monitor(df.to_numpy(), idx.to_numpy(), np.datetime64("2005-01-01"),
                             freq=365.25, device=device)
    assert isinstance(r.breaks, pd.Series) and list(r.breaks.index) == ["stable", "cleared"]
    np.testing.assert_array_equal(r.breaks.to_numpy(), ref.breaks)
    assert idx[80] <= r.break_dates["cleared"] <= idx[84] and pd.isna(r.break_dates["stable"])
    assert r.break_dates["cleared"] == idx[60 + ref.breaks[1]]
    d = clts.bfast_monitor(df, None, "2005-01-01", freq=365.25, detailed=True, device=device)
    assert isinstance(d.mosum, pd.DataFrame) and d.mosum.index[0] == idx[60]
    assert list(d.mosum.columns) == ["stable", "cleared"] and d.coef.shape == (8, 2)
    np.testing.assert_array_equal(d.mosum.to_numpy(), clts.bfast_monitor(
        df.to_numpy(), idx.to_numpy(), np.datetime64("2005-01-01"), freq=365.25, detailed=True,
        device=device).mosum)
    with pytest.raises(ValueError, match="dates is None"):
        clts.bfast_monitor(df.to_numpy(), None, 5.0, device=device)


def test_matrix_profile_series_labelled(device):
    rng = np.random.default_rng(5)
    idx = pd.date_range("2020-01-01", periods=400, freq="h")
    s = pd.Series(np.cumsum(rng.standard_normal(400)), index=idx)
    r = clts.matrix_profile(s, 20, device=device)
    ref = clts.matrix_profile(s.to_numpy(), 20, device=device)
    assert isinstance(r.profile, pd.Series) and r.profile.index[0] == idx[0]
    assert len(r.profile) == 381 and r.profile.index[-1] == idx[380]
    np.testing.assert_array_equal(r.profile.to_numpy(), ref.P[:, 0])
    # a [1, n] array with time_axis=-1 and a one-column frame are the same one series
    np.testing.assert_array_equal(
        clts.matrix_profile(s.to_numpy()[None], 20, time_axis=-1, device=device).P, ref.P)
    np.testing.assert_array_equal(clts.matrix_profile(s.to_frame(), 20, device=device).P, ref.P)
    with pytest.raises(ValueError, match="one series"):
        clts.matrix_profile(np.zeros((2, 50)), 8, time_axis=-1, device=device)


def test_deprecated_names_warn_and_agree(device):
    y = _frame(48).to_numpy().T
    with pytest.warns(DeprecationWarning, match="loess_version= is deprecated, use version="):
        old = clts.stl(y, 12, loess_version="outer", device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        new = clts.stl(y, 12, version="outer", device=device)
        T = np.cumsum(np.random.default_rng(0).standard_normal(200))
        mp_new = clts.matrix_profile(T, 10, device=device, progress=False)
    np.testing.assert_array_equal(old.trend, new.trend)
    with pytest.warns(DeprecationWarning, match="devices= is deprecated"):
        mp_old = clts.matrix_profile(T, 10, devices=device)
    np.testing.assert_array_equal(mp_old.P, mp_new.P)
    with pytest.raises(TypeError, match="not both"):
        clts.stl(y, 12, loess_version="outer", version="flat", device=device)
    with pytest.warns(DeprecationWarning, match="progress_bar= is deprecated"):
        clts.bfast_monitor(y.T, np.arange(48.0), 30.0, freq=12.0, progress_bar=False,
                           device=device)
    a = np.full((3, 6), -1.0)
    b = np.full((3, 6), 4.0)
    with pytest.warns(DeprecationWarning, match="method= is deprecated"):
        x_old = clts.solve_tridiagonal(a, b, a, b, method="thomas", device=device).x
    x_new = clts.solve_tridiagonal(a, b, a, b, version="thomas", device=device).x
    np.testing.assert_array_equal(x_old, x_new)


@pytest.mark.parametrize("freq, period", [("MS", 12), ("ME", 12), ("QS", 4), ("W-SUN", 52),
                                          ("D", 7), ("B", 5), ("h", 24)])
def test_stl_period_from_the_time_index(device, freq, period):
    """statsmodels' rules: STL(series) without period takes it from the index's frequency."""
    pd = pytest.importorskip("pandas")
    idx = pd.date_range("2001-01-01", periods=6 * period + 3, freq=freq)
    t = np.arange(idx.size)
    s = pd.Series(np.sin(2 * np.pi * t / period) + 0.01 * t, index=idx)
    r = clts.stl(s, device=device)
    assert r.diagnostics["params"]["period"] == period
    sm = pytest.importorskip("statsmodels.tsa.seasonal")
    assert sm.STL(s).period == period
    np.testing.assert_allclose(r.seasonal.values, sm.STL(s).fit().seasonal.values, atol=1e-10)
    pd.testing.assert_series_equal(r.observed, s.astype(float), check_names=False)


def test_stl_period_errors_and_xarray(device):
    pd = pytest.importorskip("pandas")
    xr = pytest.importorskip("xarray")
    import clts.xarray as cx
    with pytest.raises(ValueError, match="period is None"):
        clts.stl(np.ones(48))
    irregular = pd.Series(np.ones(48), index=pd.DatetimeIndex(
        np.datetime64("2000-01-01") + np.cumsum(np.arange(1, 49)).astype("timedelta64[D]")))
    with pytest.raises(ValueError, match="no regular frequency"):
        clts.stl(irregular)
    with pytest.raises(ValueError, match="give period="):
        clts.stl(pd.Series(np.ones(48), index=pd.date_range("2000", periods=48, freq="min")))
    time = pd.date_range("2000-01-01", periods=60, freq="MS")
    da = xr.DataArray(np.random.default_rng(0).random((60, 3)), dims=("time", "x"),
                      coords={"time": time})
    a = clts.stl(da, device=device)
    assert a.diagnostics["params"]["period"] == 12
    xr.testing.assert_equal(a.observed, da)
    b = cx.stl(da, device=device)
    np.testing.assert_allclose(b["seasonal"].values, a.seasonal.values, atol=1e-12)
