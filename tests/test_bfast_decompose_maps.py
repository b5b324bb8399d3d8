"""Maps of clts.bfast_decompose (R's bfast()) and clts.bfast01: clts.bfast.maps against the
results' own fields (R's Magnitude / Time, the decision and its date), the same maps through
clts.xarray (lazy), ``clts bfast-decompose`` / ``clts bfast01`` on NetCDF / Zarr and GeoTIFF
stacks, and the safe-output rules on the way."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from clts import cli
from clts.bfast.maps import (BFAST01_MAP_FIELDS, DECOMPOSE_MAP_FIELDS, break_maps,
                             result_maps)

FREQ = 23


def _cube(H=2, W=3, seed=1):
    """Ten years of 16-day values: a drop in pixel (0, 0), two trend changes in (1, 2), a
    constant pixel (0, 2), a never-observed one (1, 1)."""
    dates = np.datetime64("2000-01-01") + (np.arange(10 * FREQ) * 16).astype("timedelta64[D]")
    n = dates.size
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    y = 0.5 + 0.2 * np.sin(2 * np.pi * t / FREQ)[:, None, None] \
        + 0.02 * rng.normal(size=(n, H, W))
    y[120:, 0, 0] -= 0.3
    y[60:, 1, 2] += 0.2
    y[170:, 1, 2] -= 0.4
    y[:, 0, 2] = 1.0
    y[:, 1, 1] = np.nan
    y[rng.random(y.shape) < 0.05] = np.nan
    return dates, y


def _equal(got, want, name):
    got, want = np.asarray(got), np.asarray(want)
    if want.dtype.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=0, err_msg=name)
    else:
        np.testing.assert_array_equal(got, want, err_msg=name)


def test_decompose_and_bfast01_maps(device):
    dates, y = _cube()
    r = clts.bfast_decompose(y, FREQ, dates, season="harmonic", device=device, progress=False)
    m = result_maps(r)
    assert list(m) == list(DECOMPOSE_MAP_FIELDS)
    assert m["n_trend_breaks"].tolist() == [[1, 0, 0], [0, -1, 2]]
    assert m["status"].tolist() == [[0, 0, 2], [0, 1, 0]]
    # R's Magnitude and Time where there is a trend break; missing (R: 0) where there is none
    has = m["n_trend_breaks"] > 0
    np.testing.assert_array_equal(m["largest_magnitude"][has], r.magnitude[has])
    np.testing.assert_array_equal(m["largest_break_date"][has], r.magnitude_date[has])
    assert np.isnan(m["largest_magnitude"][~has]).all()
    assert np.isnat(m["largest_break_date"][~has]).all()
    assert m["largest_magnitude"][1, 2] < -0.3 and m["largest_magnitude"][0, 0] < -0.25
    np.testing.assert_array_equal(m["first_trend_break_date"][has],
                                  r.trend_break_dates[0][has])
    assert (m["n_season_breaks"] == r.n_season_breaks).all()
    # the trend's maps are bfast_breaks's maps of the trend's arrays
    t = break_maps(r.n_trend_breaks, r.trend_break_dates, r.magnitudes, r.status)
    np.testing.assert_array_equal(t["largest_magnitude"], m["largest_magnitude"])
    # bfast01: the break's date and jump where the tests decide there is one
    t01 = 2000 + np.arange(dates.size) / FREQ
    b = clts.bfast01(y, t01, freq=1, device=device, progress=False)
    mb = result_maps(b)
    assert list(mb) == list(BFAST01_MAP_FIELDS)
    assert mb["breaks"].tolist() == b.breaks.tolist()
    assert mb["breaks"][0, 0] == 1 and mb["breaks"][1, 1] == -1
    yes = mb["breaks"] == 1
    np.testing.assert_array_equal(mb["break_date"][yes], b.break_date[yes])
    assert np.isnan(mb["break_date"][~yes]).all() and np.isnan(mb["magnitude"][~yes]).all()
    assert abs(mb["break_date"][0, 0] - t01[119]) < 1e-9
    np.testing.assert_array_equal(mb["flag_type"], b.flag_type)
    # the constant pixel: an exact fit (status 5), flat: no type, no significance
    assert mb["status"][0, 2] == 5 and mb["breaks"][0, 2] == 0
    assert mb["flag_type"][0, 2] == -1 and mb["flag_significance"][0, 2] == -1
    with pytest.raises(TypeError, match="result must be"):
        result_maps(object())
    with pytest.raises(ValueError, match="shapes disagree"):
        clts.bfast.bfast01_maps([1, 0], [1.0], None, None, None, [0, 0])


def test_xarray_decompose_and_bfast01_maps(any_device):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("dask")
    import clts.xarray as cx
    dates, y = _cube()
    da = xr.DataArray(y, dims=("time", "y", "x"), coords={"time": dates}, name="ndvi")
    dates = da["time"].values                    # the coordinate's resolution
    r = clts.bfast_decompose(y, FREQ, dates, device=any_device, progress=False)
    m = result_maps(r)
    for arr in (da, da.chunk({"x": 2})):
        ds = cx.bfast_decompose(arr, FREQ, device=any_device)
        assert ds["trend"].dims == da.dims
        _equal(ds["trend"].values, r.trend, "trend")
        maps = cx.break_maps(ds)
        assert maps["n_trend_breaks"].dims == ("y", "x")
        assert (maps["largest_magnitude"].chunks is None) == (arr.chunks is None)   # lazy
        for f in DECOMPOSE_MAP_FIELDS:
            _equal(maps[f].values, m[f], f)
    t01 = 2000 + np.arange(dates.size) / FREQ
    da01 = da.assign_coords(time=t01)
    b = clts.bfast01(y, t01, freq=1, device=any_device, progress=False)
    mb = result_maps(b)
    for arr in (da01, da01.chunk({"y": 1})):
        maps = cx.break_maps(cx.bfast01(arr, freq=1, device=any_device))
        for f in BFAST01_MAP_FIELDS:
            _equal(maps[f].values, mb[f], f)
    no = cx.break_maps(cx.bfast01(da01, freq=1, classify=False, device=any_device))
    assert (no["flag_type"].values == -1).all()
    with pytest.raises(TypeError, match="confint"):
        cx.bfast_decompose(da, FREQ, confint=0.95)
    with pytest.raises(ValueError, match="h "):
        cx.bfast_decompose(da, FREQ, h=0.9)


def test_clts_bfast_decompose_and_bfast01_netcdf_zarr(tmp_path, any_device, capsys):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    from clts.io import reopen
    dates, y = _cube()
    xr.DataArray(y, dims=("time", "y", "x"), coords={"time": dates}, name="ndvi") \
        .to_dataset().to_netcdf(tmp_path / "cube.nc", engine="h5netcdf")
    dates = reopen(str(tmp_path / "cube.nc"))["time"].values
    r = clts.bfast_decompose(y, FREQ, dates, h=0.2, max_iter=3, device=any_device,
                             progress=False)
    want = result_maps(r)
    common = ["--device", any_device.slug, "--no-progress"]
    for out, extra in (("d.nc", ["--components"]),
                       ("d.zarr", ["--plot", str(tmp_path / "d.png")])):
        rc = cli.main(["bfast-decompose", str(tmp_path / "cube.nc"), "--freq", str(FREQ),
                       "--h", "0.2", "--max-iter", "3", "-o", str(tmp_path / out),
                       *common, *extra])
        assert rc == 0, capsys.readouterr().err
        got = reopen(str(tmp_path / out))
        for f in DECOMPOSE_MAP_FIELDS:
            _equal(got[f].values, want[f], f)
        assert got.attrs["clts_output"] and ("trend" in got) == (out == "d.nc")
    assert (tmp_path / "d.png").stat().st_size > 0
    # an existing output: refused without --overwrite; bad options: exit 2, nothing written
    bad = str(tmp_path / "bad.nc")
    assert cli.main(["bfast-decompose", str(tmp_path / "cube.nc"), "--freq", "23", "-o",
                     str(tmp_path / "d.nc"), *common]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert cli.main(["bfast-decompose", str(tmp_path / "cube.nc"), "--freq", "23", "--h",
                     "0.9", "-o", bad, *common]) == 2
    assert "h (minimal segment" in capsys.readouterr().err
    assert cli.main(["bfast-decompose", str(tmp_path / "cube.nc"), "--freq", "200", "-o",
                     bad, *common]) == 2
    assert "two seasons" in capsys.readouterr().err
    assert not (tmp_path / "bad.nc").exists()
    with pytest.raises(SystemExit):
        cli.main(["bfast-decompose", str(tmp_path / "cube.nc"), "--freq", "23", "--breaks",
                  "many", "-o", bad])
    # bfast01 with days as the time unit (freq 365 days by default)
    b = clts.bfast01(y, dates, device=any_device, progress=False)
    assert cli.main(["bfast01", str(tmp_path / "cube.nc"), "-o", str(tmp_path / "b.nc"),
                     "--plot", str(tmp_path / "b.png"), *common]) == 0
    got = reopen(str(tmp_path / "b.nc"))
    for f, v in result_maps(b).items():
        _equal(got[f].values, v, f)
    assert (tmp_path / "b.png").stat().st_size > 0
    b = clts.bfast01(y, dates, reg="rlm", device=any_device, progress=False)    # R's reg
    assert cli.main(["bfast01", str(tmp_path / "cube.nc"), "-o", str(tmp_path / "r.nc"),
                     "--reg", "rlm", *common]) == 0
    got = reopen(str(tmp_path / "r.nc"))
    for f, v in result_maps(b).items():
        _equal(got[f].values, v, f)
    assert cli.main(["bfast01", str(tmp_path / "cube.nc"), "-o", bad, "--trim", "12.5",
                     *common]) == 2 and "trim" in capsys.readouterr().err
    for cmd in ("bfast-decompose", "bfast01"):
        with pytest.raises(SystemExit):
            cli.main([cmd, "--help"])
        text = capsys.readouterr().out
        assert "(default: 0.15)" in text and "``" not in text


def test_clts_bfast_decompose_geotiff_stack(tmp_path, any_device, capsys):
    rasterio = pytest.importorskip("rasterio")
    from affine import Affine
    from clts import geotiff
    dates, y = _cube()
    tr = Affine(30.0, 0.0, 500000.0, 0.0, -30.0, 4200000.0)
    stack = np.where(np.isnan(y), -9999, np.round(y * 10000)).astype(np.int16)
    with rasterio.open(tmp_path / "stack.tif", "w", driver="GTiff", width=3, height=2,
                       count=dates.size, dtype="int16", crs="EPSG:32633", transform=tr,
                       nodata=-9999) as ds:
        ds.write(stack)
    csv = tmp_path / "dates.csv"
    csv.write_text("date\n" + "\n".join(str(d) for d in dates) + "\n")
    yf = np.where(stack == -9999, np.nan, stack.astype(np.float32))
    common = ["--dates", str(csv), "--device", any_device.slug, "--no-progress",
              "--block-rows", "1"]
    for cmd, extra, res in (
            ("bfast-decompose", ["--freq", str(FREQ)],
             lambda: clts.bfast_decompose(yf, FREQ, dates, device=any_device, progress=False)),
            ("bfast01", [], lambda: clts.bfast01(yf, dates, device=any_device, progress=False))):
        out = tmp_path / cmd
        assert cli.main([cmd, str(tmp_path / "stack.tif"), "-o", str(out), *extra,
                         *common]) == 0, capsys.readouterr().err
        for f, v in result_maps(res()).items():
            with rasterio.open(out / f"{f}.tif") as ds:
                assert ds.crs.to_string() == "EPSG:32633" and ds.transform == tr
                got = ds.read(1)
            exp = geotiff.date_values(v, "decimal_year") if f.endswith("_date") else v
            exp = np.asarray(exp).astype(got.dtype)
            np.testing.assert_allclose(got, exp, rtol=1e-6, err_msg=f"{cmd} {f}")
        assert not list(out.glob(".*"))
        # the arguments are checked before the folder is made
        assert cli.main([cmd, str(tmp_path / "stack.tif"), "-o", str(tmp_path / "bad"),
                         *extra, "--level", "2", *common]) == 2
        assert not (tmp_path / "bad").exists()
