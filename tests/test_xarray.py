"""clts.xarray on numpy- and Dask-backed DataArrays: named variables, coordinates and
attributes kept, identical to the numpy functions."""
import warnings

import numpy as np
import pytest

import clts

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")
import clts.xarray as cx  # noqa: E402
from exactness import assert_same_across_programs, exact_across_programs  # noqa: E402


def _cube(seed=0, n=96, ny=3, nx=4):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    y = (0.5 + 0.2 * np.sin(2 * np.pi * t / 12) + 0.002 * t
         + 0.03 * rng.standard_normal((ny, nx, n)))
    y[0, :2, 72:] -= 0.4                  # a planted clearing
    y[rng.random(y.shape) < 0.1] = np.nan
    return xr.DataArray(y, dims=("y", "x", "time"), name="ndvi",
                        coords={"time": pd.date_range("2000-01-01", periods=n, freq="MS"),
                                "y": np.arange(ny) * 30.0, "x": np.arange(nx) * 30.0,
                                "tile": "T31"},
                        attrs={"units": "1", "long_name": "NDVI"})


def test_stl_dataset_matches_numpy(device):
    da = _cube()
    ds = cx.stl(da, 12, device=device)
    ref = clts.stl(da.values.reshape(-1, 96), 12, device=device)
    assert set(ds.data_vars) == {"seasonal", "trend", "resid", "weights", "failed"}
    assert ds["trend"].dims == ("y", "x", "time") and ds["failed"].dims == ("y", "x")
    assert ds.attrs["units"] == "1" and ds["trend"].attrs["units"] == "1"
    assert ds["tile"].item() == "T31" and ds["time"].equals(da["time"])
    np.testing.assert_array_equal(ds["trend"].values.reshape(-1, 96), ref.trend)
    np.testing.assert_array_equal(ds["seasonal"].values.reshape(-1, 96), ref.seasonal)
    # time first in the input: the same numbers, the input's dimension order
    ds_t = cx.stl(da.transpose("time", "x", "y"), 12, device=device)
    assert ds_t["trend"].dims == ("time", "x", "y")
    np.testing.assert_array_equal(ds_t["trend"].transpose("y", "x", "time").values,
                                  ds["trend"].values)


def test_trend_slope_per_year(device):
    da = _cube()
    slope = cx.trend_slope(da, 12, device=device)
    assert slope.dims == ("y", "x") and slope.attrs["units"] == "1 per year"
    ds = cx.stl(da, 12, device=device)
    steps = clts.stl(da.values.reshape(-1, 96), 12, device=device).trend_slope()
    # monthly steps: a slope per step is about a twelfth of the slope per year
    np.testing.assert_allclose(slope.values.ravel() / 12, steps, rtol=0.02)
    np.testing.assert_array_equal(cx.trend_slope(ds).values, slope.values)
    per_step = cx.trend_slope(ds, per="day")
    assert per_step.attrs["units"] == "1 per day"


def test_bfast_dataset_dates_and_dask(device):
    da = _cube()
    ds = cx.bfast_monitor(da, "2005-01-01", freq=365.25, device=device)
    ref = clts.bfast_monitor(da.values, da["time"].values, np.datetime64("2005-01-01"),
                             freq=365.25, time_axis=-1, device=device)
    assert ds["breaks"].dims == ("y", "x") and ds["break_dates"].dtype.kind == "M"
    np.testing.assert_array_equal(ds["breaks"].values, ref.breaks)
    np.testing.assert_array_equal(ds["magnitudes"].values, ref.magnitudes)
    assert (ds["breaks"].values[0, :2] >= 0).all()
    assert (ds["break_dates"].values[0, :2] >= np.datetime64("2006-01-01")).all()
    pytest.importorskip("dask")
    with pytest.warns(UserWarning, match="split over 3 chunks; rechunked"):
        lazy = cx.bfast_monitor(da.chunk({"x": 2, "time": 40}), "2005-01-01", freq=365.25,
                                device=device)
    assert hasattr(lazy["breaks"].data, "dask")
    xr.testing.assert_identical(lazy.compute(), ds)


def test_dask_stl_and_matrix_profile_identical(device):
    da = _cube(1, n=72)
    pytest.importorskip("dask")
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # one chunk along time: no warning
        lazy = cx.stl(da.chunk({"y": 1}), 12, device=device)
    _identical(lazy.compute(), cx.stl(da, 12, device=device), device)
    mp = cx.matrix_profile(da.fillna(0.0), 12, device=device)
    assert mp["profile"].dims == ("y", "x", "time") and mp.sizes["time"] == 61
    assert mp["time"].values[-1] == da["time"].values[60]
    one = clts.matrix_profile(da.fillna(0.0).values[1, 2], 12, device=device)
    np.testing.assert_array_equal(mp["profile"].values[1, 2], one.P[:, 0])
    np.testing.assert_array_equal(mp["index"].values[1, 2], one.I[:, 0])
    i = int(one.I[5, 0])
    assert mp["neighbour"].values[1, 2, 5] == da["time"].values[i]
    lazy = cx.matrix_profile(da.fillna(0.0).chunk({"x": 3}), 12, device=device)
    _identical(lazy.compute(), mp, device)


def _identical(a, b, device):
    """Dask's chunks against one call: other batches, so where the device's results depend on
    the batch (``exactness``) the values within its tolerance, the rest identical."""
    if exact_across_programs(device):
        xr.testing.assert_identical(a, b)
        return
    xr.testing.assert_identical(a.drop_vars(list(a.data_vars)),
                                b.drop_vars(list(b.data_vars)))
    assert list(a.data_vars) == list(b.data_vars) and a.attrs == b.attrs
    for name in a.data_vars:
        assert a[name].dims == b[name].dims and a[name].attrs == b[name].attrs, name
        assert_same_across_programs(a[name].values, b[name].values, device, name)


def test_matrix_profile_topk_gains_a_k_dimension(device):
    da = _cube(2, n=60, ny=2, nx=3).fillna(0.0)
    mp = cx.matrix_profile(da, 10, k=3, device=device)
    assert mp["profile"].dims == ("y", "x", "time", "k") == mp["index"].dims
    assert mp["neighbour"].dims == ("y", "x", "time", "k")
    assert mp["left_index"].dims == ("y", "x", "time")
    assert mp["k"].values.tolist() == [1, 2, 3] and mp.sizes["time"] == 51
    assert mp.attrs == da.attrs | {"clts_mp_m": 10} and mp["tile"].item() == "T31"
    np.testing.assert_array_equal(mp["x"].values, da["x"].values)
    one = clts.matrix_profile(da.values[1, 2], 10, k=3, device=device)
    np.testing.assert_array_equal(mp["profile"].values[1, 2], one.P)
    np.testing.assert_array_equal(mp["index"].values[1, 2], one.I)
    np.testing.assert_array_equal(mp["right_index"].values[1, 2], one.right_I)
    np.testing.assert_array_equal(mp["profile"].sel(k=1), cx.matrix_profile(
        da, 10, device=device)["profile"])
    i = int(one.I[4, 2])
    assert mp["neighbour"].values[1, 2, 4, 2] == da["time"].values[i]
    with pytest.raises(ValueError, match="k must be an int"):
        cx.matrix_profile(da, 10, k=0)
    pytest.importorskip("dask")
    lazy = cx.matrix_profile(da.chunk({"x": 2}), 10, k=3, device=device)
    assert lazy["profile"].chunks is not None
    xr.testing.assert_identical(lazy.compute(), mp)
    with pytest.raises(ValueError, match="dimension 'k'"):
        cx.matrix_profile(da.rename(x="k"), 10, k=2)


def test_errors_name_the_problem():
    da = _cube(n=48)
    with pytest.raises(ValueError, match="no dimension 'date'"):
        cx.stl(da, 12, dim="date")
    with pytest.raises(ValueError, match="not strictly increasing.*sortby"):
        cx.stl(da.isel(time=np.r_[1, 0, 2:48]), 12)
    with pytest.raises(TypeError, match="pick a variable"):
        cx.stl(da.to_dataset(), 12)
    with pytest.raises(ValueError, match="m must be an int"):
        cx.matrix_profile(da, 100)
    with pytest.raises(ValueError, match="needs the dates"):
        cx.bfast_monitor(da.drop_vars("time"), 30.0)
