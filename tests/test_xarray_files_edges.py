"""What files and calendars bring to clts.xarray and clts.io: cftime axes in the break functions
(a 360-day calendar's 30 February), packed integers (scale_factor / add_offset still in attrs),
a Zarr 3 store's encodings written to Zarr 2, a seasonal trend's slope per year. Each case gave
a crash, a wrong number or a file that read back wrong before its fix."""
from __future__ import annotations

import numpy as np
import pytest

import clts

xr = pytest.importorskip("xarray")
pytest.importorskip("cftime")
import clts.io as cio  # noqa: E402
import clts.xarray as cx  # noqa: E402


def _cftime_cube(calendar):
    t = xr.date_range("2000-01-05", periods=216, freq="5D", calendar=calendar, use_cftime=True)
    rng = np.random.default_rng(0)
    y = 0.1 * rng.standard_normal((216, 3))
    y[120:, 0] += 1.0
    return t, y


@pytest.mark.parametrize("calendar", ["360_day", "noleap"])
def test_break_functions_keep_cftime_dates(calendar, tmp_path):
    t, y = _cftime_cube(calendar)
    r = clts.bfast_breaks(y, t, freq=72)
    assert r.break_dates.dtype == object
    assert r.break_dates[0, 0] == t[int(r.breakpoints[0, 0])] and r.break_dates[0, 1] is None
    r1 = clts.bfast01(y, t, freq=72)
    assert r1.break_date.dtype == object and r1.break_date[0] == t[int(r1.breakpoint[0])]
    rd = clts.bfast_decompose(y, 72, dates=t)
    assert rd.trend_break_dates.dtype == object
    da = xr.DataArray(y, dims=("time", "x"), coords={"time": t}).chunk({"x": 1})
    for name, ds in (("breaks", cx.bfast_breaks(da, freq=72)), ("b01", cx.bfast01(da, freq=72)),
                     ("dec", cx.bfast_decompose(da, 72))):
        dates = [v for v in ds.data_vars if "date" in v]
        assert dates and all(ds[v].dtype == object for v in dates)       # lazy dtype right
        done = ds.compute()
        assert all(done[v].dtype == object for v in dates)
        path = tmp_path / f"{name}.nc"
        cio.write(done, str(path), progress=False)
        back = xr.open_dataset(path)
        for v in dates:
            assert back[v].attrs["calendar"] == calendar
            assert back[v].attrs["since"] == "2000-01-01"    # one origin per file


def _packed(tmp_path, scale=1e-4):
    rng = np.random.default_rng(1)
    n = 96
    tt = np.arange(n)
    y = 0.5 + 0.2 * np.sin(2 * np.pi * tt / 12) + 0.002 * tt + 0.02 * rng.standard_normal((2, 3, n))
    y[0, 0, 10] = np.nan
    da = xr.DataArray(y, dims=("y", "x", "time"), name="ndvi", attrs={"units": "1"},
                      coords={"time": xr.date_range("2000-01-01", periods=n, freq="MS")})
    path = tmp_path / "packed.nc"
    da.to_dataset().to_netcdf(path, encoding={"ndvi": {
        "dtype": "int16", "scale_factor": scale, "add_offset": type(scale)(0.5),
        "_FillValue": -9999}})
    raw = xr.open_dataset(path, mask_and_scale=False).ndvi
    dec = xr.open_dataset(path).ndvi
    return raw, dec


@pytest.mark.parametrize("scale", [1e-4, np.float32(1e-4)])     # float64 / float32 values
def test_packed_integers_give_the_decoded_results(tmp_path, scale):
    raw, dec = _packed(tmp_path, scale)
    assert raw.dtype == np.int16 and "add_offset" in raw.attrs
    a, b = cx.stl(raw, 12), cx.stl(dec, 12)
    for v in ("seasonal", "trend", "resid"):
        assert a[v].dtype == b[v].dtype
        np.testing.assert_array_equal(a[v].values, b[v].values)
        assert "add_offset" not in a[v].attrs and "scale_factor" not in a[v].attrs
    a.to_netcdf(tmp_path / "out.nc")
    back = xr.open_dataset(tmp_path / "out.nc")
    np.testing.assert_array_equal(back.resid.values, b.resid.values)
    np.testing.assert_array_equal(cx.trend_test(raw).slope.values,
                                  cx.trend_test(dec).slope.values)
    start = str(raw.time.values[60])[:10]
    m1 = cx.bfast_monitor(raw, start, freq=12)
    m2 = cx.bfast_monitor(dec, start, freq=12)
    np.testing.assert_array_equal(m1.magnitudes.values, m2.magnitudes.values)
    m3 = cx.bfast_monitor(raw, start, freq=12, nodata=-9999)      # a packed nodata: masked
    np.testing.assert_array_equal(m3.magnitudes.values, m2.magnitudes.values)


def test_zarr3_store_to_zarr_output(tmp_path):
    pytest.importorskip("zarr")
    _, dec = _packed(tmp_path)
    src = tmp_path / "in.zarr"
    dec.to_dataset().to_zarr(src, zarr_format=3, consolidated=False)
    da = xr.open_zarr(src, consolidated=False).ndvi
    out = tmp_path / "out.zarr"
    cio.write(cx.stl(da, 12), str(out), progress=False)
    back = xr.open_zarr(out)
    np.testing.assert_array_equal(back.trend.values, cx.stl(dec, 12).trend.values)


@pytest.mark.parametrize("variant", ["original", "seasonal", "correlated_seasonal"])
def test_trend_slope_per_year_of_each_variant(variant):
    n = 120
    t = xr.date_range("2000-01-01", periods=n, freq="MS")
    y = 0.001 * np.arange(n) + 0.1 * np.sin(np.arange(n) * 2 * np.pi / 12)
    da = xr.DataArray(np.stack([y, y], 1), dims=("time", "x"), coords={"time": t})
    ds = cx.trend_test(da, per="year", variant=variant)
    np.testing.assert_allclose(ds.slope_per_year.values, 0.012, rtol=1e-3)   # 12 x 0.001
    tc = xr.date_range("2000-01-01", periods=n, freq="MS", calendar="noleap", use_cftime=True)
    dc = cx.trend_test(da.assign_coords(time=tc), per="year", variant=variant)
    np.testing.assert_allclose(dc.slope_per_year.values, 0.012, rtol=1e-3)
    with pytest.raises(ValueError, match="per must be"):
        cx.trend_test(da, per="week", variant=variant)


def test_matrix_profile_names_a_window_dimension_clash():
    da = xr.DataArray(np.random.default_rng(5).standard_normal((2, 60)), dims=("window", "time"))
    with pytest.raises(ValueError, match="'window'"):
        cx.matrix_profile(da, 8)
