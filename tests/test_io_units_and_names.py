"""Files' units, names and stamps taken as the user means them: a float32 marker (1e20) found in
float32 data, GDAL scale / offset applied to GeoTIFF stacks, a folder named ``scene[1]`` read
as itself, sub-second and UTC-offset timestamps; ``progress=`` and argument checks of the
xarray wrappers; ``clts trend`` computed once and its map on the coordinates. Each case gave a
wrong number, another folder's data or a refused input before its fix."""
from __future__ import annotations

import numpy as np
import pytest

import clts

xr = pytest.importorskip("xarray")
import clts.xarray as cx  # noqa: E402
from clts import cli  # noqa: E402


def _seasonal(T=92, B=2, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return (np.sin(2 * np.pi * np.arange(T) / 23)[:, None]
            + rng.normal(0, 0.1, (T, B))).astype(dtype)


@pytest.mark.parametrize("marker", [1e20, -9999.9, -9999.0])
def test_nodata_found_in_float32_data(marker):
    y = _seasonal()
    y[::7, 0] = np.float32(marker)
    da = xr.DataArray(y, dims=("time", "s"))
    got = cx.mask_values(da, [marker]).values
    assert np.isnan(got[::7, 0]).all() and np.isfinite(np.delete(got[:, 0], np.s_[::7])).all()
    assert cx.mask_values(da, [1e40]).notnull().all()       # float32 cannot hold it: no marker


def test_nodata_cli_float32_netcdf(tmp_path, any_device, capsys):
    y = _seasonal()
    y[::7, 0] = np.float32(1e20)
    xr.Dataset({"v": (("time", "s"), y)}, coords={"time": np.arange(92)}).to_netcdf(
        tmp_path / "in.nc")
    assert cli.main(["stl", str(tmp_path / "in.nc"), "--var", "v", "--period", "23",
                     "--nodata", "1e20", "-o", str(tmp_path / "out.nc"), "--no-progress",
                     "--device", any_device.slug]) == 0
    with xr.open_dataset(tmp_path / "out.nc") as o:
        assert np.isnan(o.resid.values[::7, 0]).all()
        assert np.nanmax(np.abs(o.trend.values)) < 1.0


def test_xarray_wrappers_take_progress(device):
    t = np.arange("2010-01-01", "2016-01-01", 16, dtype="datetime64[D]")
    y = np.sin(2 * np.pi * np.arange(t.size) / 23)[:, None] \
        + np.random.default_rng(1).normal(0, 0.1, (t.size, 3))
    da = xr.DataArray(y, dims=("time", "x"), coords={"time": t})
    for lazy in (da, da.chunk({"x": 1})):
        for progress in (True, False):
            kw = dict(device=device, progress=progress)
            a = cx.stl(lazy, 23, **kw).trend.values
            np.testing.assert_allclose(a, cx.stl(da, 23, device=device).trend.values)
            cx.mstl(lazy, [23], **kw).trend.values
            cx.bfast_monitor(lazy, "2014-01-01", **kw).breaks.values
            cx.bfast_breaks(lazy, freq=23, **kw).n_breaks.values
            cx.matrix_profile(lazy, 12, **kw).profile.values


def test_xarray_dask_calls_check_arguments_at_call(device):
    da = xr.DataArray(np.random.default_rng(2).standard_normal((40, 4)),
                      dims=("time", "x")).chunk({"x": 2})
    for call, match in ((lambda: cx.trend_test(da, alpha=5, device=device), "alpha"),
                        (lambda: cx.trend_test(da, variant="bogus", device=device), "variant"),
                        (lambda: cx.trend_test(da, variant="seasonal", period=30,
                                               device=device), "half the series"),
                        (lambda: cx.mstl(da, [5], iterate=0, device=device), "iterate"),
                        (lambda: cx.mstl(da, [5], windows=[4], device=device), "windows")):
        with pytest.raises(ValueError, match=match):
            call()                      # before any compute


def test_subsecond_and_offset_timestamps(tmp_path, any_device):
    from clts.timeaxis import check_increasing, days
    t = np.datetime64("2020-01-01T00:00:00") + np.arange(50) * np.timedelta64(100, "ms")
    check_increasing(t, "t")
    np.testing.assert_allclose(np.diff(days(t)), 0.1 / 86400, rtol=1e-9)
    t15 = np.datetime64("2020-01-01") + np.arange(40) * np.timedelta64(1500, "ms")
    np.testing.assert_allclose(np.diff(days(t15)), 1.5 / 86400, rtol=1e-9)
    # CSV dates with a zone's summer and winter offsets: one increasing UTC axis
    import pandas as pd
    stamps = pd.date_range("2000-01-01", periods=96, freq="W", tz="Europe/Paris")
    y = _seasonal(96, 1, dtype=np.float64)[:, 0]
    (tmp_path / "s.csv").write_text("date,v\n" + "\n".join(
        f"{s.isoformat()},{float(v)!r}" for s, v in zip(stamps, y)) + "\n")
    assert cli.main(["stl", str(tmp_path / "s.csv"), "--var", "v", "--period", "23", "-o",
                     str(tmp_path / "o.nc"), "--no-progress", "--device", any_device.slug]) == 0
    with xr.open_dataset(tmp_path / "o.nc") as o:
        np.testing.assert_array_equal(
            o.time.values, stamps.tz_convert("UTC").tz_localize(None).values)


def test_trend_cli_computes_once_and_maps_on_coordinates(tmp_path, device, monkeypatch,
                                                         capsys):
    pytest.importorskip("matplotlib")
    import matplotlib.figure
    import clts.trend.api as tapi
    lat, lon = np.array([10.0, 20.0, 30.0, 40.0]), np.array([0.0, 10.0, 20.0])
    y = np.random.default_rng(0).normal(0, 0.3, (40, 3, 4))
    y[:, :, lat >= 30] += 0.2 * np.arange(40)[:, None, None]       # the north rises
    xr.Dataset({"v": (("time", "lon", "lat"), y)},
               coords={"time": np.arange(40), "lat": lat, "lon": lon}).to_netcdf(
        tmp_path / "in.nc")
    calls, figs = [], []
    real = tapi.trend_test
    monkeypatch.setattr(tapi, "trend_test",       # (the argument check: a call on 0 series)
                        lambda y, **k: (len(y) and calls.append(1)) or real(y, **k))
    save = matplotlib.figure.Figure.savefig
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig",
                        lambda self, *a, **k: figs.append(self) or save(self, *a, **k))
    assert cli.main(["trend", str(tmp_path / "in.nc"), "--var", "v", "-o",
                     str(tmp_path / "out.nc"), "--plot", str(tmp_path / "map.png"),
                     "--no-progress", "--device", device.slug]) == 0
    assert len(calls) == 1                      # neither the summary nor the plot recompute
    assert "6 of 12 series" in capsys.readouterr().out
    ax = figs[0].axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("lon", "lat")
    drawn = np.asarray(ax.collections[0].get_array()).reshape(4, 3)    # rows: lat upwards
    assert (drawn[2:] > 0.1).all() and (np.abs(drawn[:2]) < 0.1).all()
    assert ax.get_ylim()[0] < ax.get_ylim()[1]


def _geotiffs(folder, values, scale=None):
    rasterio = pytest.importorskip("rasterio")
    from affine import Affine
    folder.mkdir()
    dates = np.arange("2005-01-01", "2013-01-01", 32, dtype="datetime64[D]")
    for i, d in enumerate(dates):
        with rasterio.open(folder / f"img_{d}.tif", "w", driver="GTiff", width=3, height=2,
                           count=1, dtype=values.dtype, crs="EPSG:32633", nodata=-32768,
                           transform=Affine(30.0, 0.0, 5e5, 0.0, -30.0, 4.2e6)) as ds:
            ds.write(values[i], 1)
            if scale is not None:
                ds.scales, ds.offsets = (scale,), (0.0,)
    return dates


def test_geotiff_scale_offset_and_bracketed_folder(tmp_path, device):
    from clts import geotiff
    rng = np.random.default_rng(3)
    n = np.arange("2005-01-01", "2013-01-01", 32, dtype="datetime64[D]").size
    raw = np.round(5000 + 2000 * np.sin(2 * np.pi * np.arange(n) / 11.4)[:, None, None]
                   + 300 * rng.standard_normal((n, 2, 3))).astype(np.int16)
    raw[n // 2 + 20:, 0] -= 3000
    raw[rng.random(raw.shape) < 0.1] = -32768
    dates = _geotiffs(tmp_path / "scene[1]", raw, scale=1e-4)
    _geotiffs(tmp_path / "scene1", np.full_like(raw, 7))              # what a glob would read
    st = geotiff.open_stack(tmp_path / "scene[1]")
    assert all("scene[1]" in f for f in st.files)
    da = st.to_dataarray()
    ok = raw != -32768
    np.testing.assert_allclose(da.values[ok], raw[ok] * 1e-4, rtol=1e-6)
    assert np.isnan(da.values[~ok]).all()
    out = geotiff.bfast_monitor_geotiff(tmp_path / "scene[1]", "2010-01-01", tmp_path / "out",
                                        device=device, progress=False, freq=11)
    ref = clts.bfast_monitor(np.where(ok, raw * 1e-4, np.nan).astype(np.float32), dates,
                             np.datetime64("2010-01-01"), freq=11, device=device,
                             progress=False)
    rasterio = pytest.importorskip("rasterio")
    with rasterio.open(out["magnitude"]) as ds:
        mg = ds.read(1)
    want = np.where(ref.status == 0, ref.magnitudes, np.nan)
    np.testing.assert_allclose(mg, want, rtol=1e-4, atol=1e-6)
    assert np.nanmax(np.abs(mg)) < 1.0                  # NDVI units, not stored counts
