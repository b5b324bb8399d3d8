"""clts.geotiff: GeoTIFF stacks (a folder of dated files, a multi-band file with a CSV of dates)
through bfast_monitor, streamed in row blocks, results round-tripping CRS / transform / nodata;
the same results from clts.xarray; bad stacks refused naming the argument."""
from __future__ import annotations

import numpy as np
import pytest

import clts

rasterio = pytest.importorskip("rasterio")
from affine import Affine  # noqa: E402  (rasterio's)

from clts import geotiff  # noqa: E402

CRS = "EPSG:32633"
TR = Affine(30.0, 0.0, 500000.0, 0.0, -30.0, 4200000.0)      # 30 m pixels, UTM 33N
NODATA = -9999


def _stack(seed=0, H=7, W=5, years=8):
    rng = np.random.default_rng(seed)
    dates = np.arange("2013-01-01", f"{2013 + years}-01-01", 16, dtype="datetime64[D]")
    t = (dates - dates[0]).astype(float)
    y = (5000 + 1500 * np.sin(2 * np.pi * t / 365.25)[:, None, None]
         + 100 * rng.standard_normal((dates.size, H, W)))
    y[dates >= np.datetime64("2019-03-01"), :3, :] -= 2500          # the top rows change
    y = np.round(y).astype(np.int16)
    y[rng.random(y.shape) < 0.2] = NODATA
    y[:, -1, -1] = NODATA                                               # never observed
    return dates, y


def _write(path, arr, crs=CRS, count=None):
    with rasterio.open(path, "w", driver="GTiff", width=arr.shape[-1], height=arr.shape[-2],
                       count=arr.shape[0] if arr.ndim == 3 else 1, dtype=arr.dtype, crs=crs,
                       transform=TR, nodata=NODATA) as ds:
        if arr.ndim == 3:
            ds.write(arr)
        else:
            ds.write(arr, 1)


def _folder(tmp_path, dates, y):
    d = tmp_path / "stack"
    d.mkdir()
    files = []
    for i, day in enumerate(dates):
        name = day.astype(object).strftime("LC08_%Y%j_ndvi.tif" if i % 2 else "S2_%Y%m%d.tif")
        _write(d / name, y[i])
        files.append(str(d / name))
    return d, files


def test_folder_stream_roundtrip(tmp_path, device):
    dates, y = _stack()
    folder, _ = _folder(tmp_path, dates, y)
    out = geotiff.bfast_monitor_geotiff(folder, "2018-01-01", tmp_path / "out", block_rows=3,
                                        device=device, progress=False)
    assert set(out) == set(geotiff.OUTPUTS)
    want = clts.bfast_monitor(y, dates, np.datetime64("2018-01-01"), nodata=NODATA,
                              freq=365.25, device=device, progress=False)
    with rasterio.open(out["break_date"]) as ds:
        assert ds.crs.to_string() == CRS and ds.transform == TR and ds.nodata == NODATA
        bd = ds.read(1)
    exp = geotiff.date_values(want.break_dates, "decimal_year")
    exp = np.where(np.isnan(exp), NODATA, exp).astype(np.float32)
    np.testing.assert_array_equal(bd, exp)
    assert (bd[:3] > 2018.9).all() and (bd[:3] < 2019.7).all()
    with rasterio.open(out["valid_count"]) as ds:
        np.testing.assert_array_equal(ds.read(1), want.valids)
    with rasterio.open(out["status"]) as ds:
        st = ds.read(1)
    assert st[-1, -1] == 1 and (st[:-1] == 0).all()
    with rasterio.open(out["magnitude"]) as ds:
        mg = ds.read(1)
    assert mg[-1, -1] == NODATA and (mg[:3] < -2000).all()
    assert not list((tmp_path / "out").glob(".*tmp*"))


def test_multiband_csv_doy_and_xarray(tmp_path, device):
    pytest.importorskip("rioxarray")
    import clts.xarray as cx
    dates, y = _stack(1, H=4, W=3)
    perm = np.random.default_rng(0).permutation(dates.size)        # bands out of date order
    _write(tmp_path / "multi.tif", y[perm])
    csv = tmp_path / "dates.csv"
    csv.write_text("date\n" + "\n".join(str(d) for d in dates[perm]) + "\n")
    out = geotiff.bfast_monitor_geotiff(tmp_path / "multi.tif", "2018-01-01", tmp_path / "o",
                                        dates=csv, date_format="doy", device=device,
                                        progress=False)
    st = geotiff.open_stack(tmp_path / "multi.tif", dates=csv)
    np.testing.assert_array_equal(st.dates, dates)
    da = st.to_dataarray()
    ds = cx.bfast_monitor(da, "2018-01-01", freq=365.25, device=device)
    paths = geotiff.write_bfast(ds, tmp_path / "x", like=da, date_format="doy")
    with rasterio.open(out["break_date"]) as a, rasterio.open(paths["break_date"]) as b:
        np.testing.assert_array_equal(a.read(1), b.read(1))
        assert a.crs == b.crs and a.transform == b.transform
        doy = a.read(1)
    assert ((doy[:3] >= 1) & (doy[:3] <= 366)).all()


def test_bad_stacks(tmp_path, device):
    dates, y = _stack(2, H=3, W=3, years=6)
    _write(tmp_path / "nocrs.tif", y, crs=None)
    with pytest.raises(ValueError, match="inputs: .*no CRS"):
        geotiff.open_stack(tmp_path / "nocrs.tif", dates=dates)
    _write(tmp_path / "m.tif", y)
    with pytest.raises(ValueError, match=f"dates: {dates.size - 1} dates for {dates.size}"):
        geotiff.open_stack(tmp_path / "m.tif", dates=dates[:-1])
    with pytest.raises(ValueError, match="dates: .* twice"):
        geotiff.open_stack(tmp_path / "m.tif", dates=np.r_[dates[:-1], dates[:1]])
    with pytest.raises(ValueError, match="dates: a multi-band"):
        geotiff.open_stack(tmp_path / "m.tif")
    d = tmp_path / "noname"
    d.mkdir()
    _write(d / "a.tif", y[0])
    _write(d / "b.tif", y[1])
    with pytest.raises(ValueError, match="dates: no date"):
        geotiff.open_stack(d)
    with pytest.raises(ValueError, match="inputs: no GeoTIFF"):
        geotiff.open_stack(tmp_path / "empty*.tif")
    with pytest.raises(ValueError, match="date_format"):
        geotiff.bfast_monitor_geotiff(tmp_path / "m.tif", "2017-01-01", tmp_path / "o",
                                      dates=dates, date_format="julian", device=device)


def test_cli(tmp_path, device):
    from clts.cli import main
    dates, y = _stack(3, H=3, W=4, years=6)
    _, files = _folder(tmp_path, dates, y)         # in date order, as the CSV's rows
    csv = tmp_path / "dates.csv"
    csv.write_text("date\n" + "\n".join(str(d) for d in dates) + "\n")
    rc = main(["bfast", *files, "--dates", str(csv), "--start", "2017-06-01", "-o",
               str(tmp_path / "out"), "--device", device.slug, "--no-progress"])
    assert rc == 0
    with rasterio.open(tmp_path / "out" / "break_date.tif") as ds:
        assert ds.crs.to_string() == CRS and ds.shape == (3, 4)
    rc = main(["bfast", *files[:-1], "--dates", str(csv), "--start", "2017-06-01", "-o",
               str(tmp_path / "out2"), "--device", device.slug])
    assert rc == 2
