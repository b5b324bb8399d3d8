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


def test_folder_stream_roundtrip(tmp_path, any_device):
    dates, y = _stack()
    folder, _ = _folder(tmp_path, dates, y)
    out = geotiff.bfast_monitor_geotiff(folder, "2018-01-01", tmp_path / "out", block_rows=3,
                                        device=any_device, progress=False)
    assert set(out) == set(geotiff.OUTPUTS)
    want = clts.bfast_monitor(y, dates, np.datetime64("2018-01-01"), nodata=NODATA,
                              device=any_device, progress=False)
    with rasterio.open(out["break_date"]) as ds:
        assert ds.crs.to_string() == CRS and ds.transform == TR and np.isnan(ds.nodata)
        bd = ds.read(1)
    exp = geotiff.date_values(want.break_dates, "decimal_year").astype(np.float32)
    np.testing.assert_array_equal(bd, exp)
    assert (bd[:3] > 2018.9).all() and (bd[:3] < 2019.7).all()
    with rasterio.open(out["valid_count"]) as ds:
        np.testing.assert_array_equal(ds.read(1), want.valids)
    with rasterio.open(out["status"]) as ds:
        st = ds.read(1)
    assert st[-1, -1] == 1 and (st[:-1] == 0).all()
    with rasterio.open(out["magnitude"]) as ds:
        mg = ds.read(1)
    assert np.isnan(mg[-1, -1]) and (mg[:3] < -2000).all()
    assert not list((tmp_path / "out").glob(".*"))


def test_multiband_csv_doy_and_xarray(tmp_path, any_device):
    pytest.importorskip("rioxarray")
    import clts.xarray as cx
    dates, y = _stack(1, H=4, W=3)
    perm = np.random.default_rng(0).permutation(dates.size)        # bands out of date order
    _write(tmp_path / "multi.tif", y[perm])
    csv = tmp_path / "dates.csv"
    csv.write_text("date\n" + "\n".join(str(d) for d in dates[perm]) + "\n")
    out = geotiff.bfast_monitor_geotiff(tmp_path / "multi.tif", "2018-01-01", tmp_path / "o",
                                        dates=csv, date_format="doy", device=any_device,
                                        progress=False)
    st = geotiff.open_stack(tmp_path / "multi.tif", dates=csv)
    np.testing.assert_array_equal(st.dates, dates)
    da = st.to_dataarray()
    ds = cx.bfast_monitor(da, "2018-01-01", device=any_device)
    paths = geotiff.write_bfast(ds, tmp_path / "x", like=da, date_format="doy")
    with rasterio.open(out["break_date"]) as a, rasterio.open(paths["break_date"]) as b:
        np.testing.assert_array_equal(a.read(1), b.read(1))
        assert a.crs == b.crs and a.transform == b.transform
        doy = a.read(1)
    assert ((doy[:3] >= 1) & (doy[:3] <= 366)).all()


def test_bad_stacks(tmp_path, any_device):
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
                                      dates=dates, date_format="julian", device=any_device)


def test_cli(tmp_path, any_device):
    from clts.cli import main
    dates, y = _stack(3, H=3, W=4, years=6)
    _, files = _folder(tmp_path, dates, y)         # in date order, as the CSV's rows
    csv = tmp_path / "dates.csv"
    csv.write_text("date\n" + "\n".join(str(d) for d in dates) + "\n")
    rc = main(["bfast", *files, "--dates", str(csv), "--start", "2017-06-01", "-o",
               str(tmp_path / "out"), "--device", any_device.slug, "--no-progress"])
    assert rc == 0
    with rasterio.open(tmp_path / "out" / "break_date.tif") as ds:
        assert ds.crs.to_string() == CRS and ds.shape == (3, 4)
    rc = main(["bfast", *files[:-1], "--dates", str(csv), "--start", "2017-06-01", "-o",
               str(tmp_path / "out2"), "--device", any_device.slug])
    assert rc == 2


# ------------------------------------------------ hostile stacks and safe output
def _hashes(folder):
    import hashlib
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.is_file()}


def _write_nd(path, arr, nodata):
    with rasterio.open(path, "w", driver="GTiff", width=arr.shape[-1], height=arr.shape[-2],
                       count=1, dtype=arr.dtype, crs=CRS, transform=TR, nodata=nodata) as ds:
        ds.write(arr, 1)


def test_nodata_zero_outputs_do_not_collide(tmp_path, any_device):
    """A uint16 stack with nodata 0: status 0 (tested) and a count or magnitude of 0 are
    results, never the outputs' nodata (status.tif was nodata on every pixel)."""
    dates, y = _stack(5, H=3, W=4, years=6)
    u = np.where(y == NODATA, 0, y).astype(np.uint16)
    d = tmp_path / "u16"
    d.mkdir()
    for i, day in enumerate(dates):
        _write_nd(d / f"S2_{day.astype(object):%Y%m%d}.tif", u[i], 0)
    out = geotiff.bfast_monitor_geotiff(d, "2017-06-01", tmp_path / "o", device=any_device,
                                        progress=False)
    yf = np.where(u == 0, np.nan, u.astype(np.float64))
    want = clts.bfast_monitor(yf, dates, np.datetime64("2017-06-01"),
                              dtype=np.float32, device=any_device, progress=False)
    with rasterio.open(out["status"]) as ds:
        assert ds.nodata == -1 and (ds.read_masks(1) == 255).all()
        np.testing.assert_array_equal(ds.read(1), want.status)
        assert (ds.read(1)[:-1] == 0).all()
    with rasterio.open(out["valid_count"]) as ds:
        assert ds.nodata == -1 and ds.read(1)[-1, -1] == 0 and (ds.read_masks(1) == 255).all()
    for name in ("break_date", "magnitude"):
        with rasterio.open(out[name]) as ds:
            assert np.isnan(ds.nodata)


def test_each_file_masks_its_own_nodata(tmp_path, any_device):
    """Files 70-79 with nodata -9999, the others 0: each file's own value is missing (the first
    file's was used for all, -9999 read as data: valid counts 10 too high)."""
    dates, y = _stack(6, H=2, W=4, years=6)
    miss = y == NODATA
    d = tmp_path / "mixed"
    d.mkdir()
    for i, day in enumerate(dates):
        nd = NODATA if 70 <= i < 80 else 0
        _write_nd(d / f"S2_{day.astype(object):%Y%m%d}.tif", np.where(miss[i], nd, y[i]), nd)
    st = geotiff.open_stack(d)
    assert st.nodatas[69] == 0 and st.nodatas[70] == NODATA
    out = geotiff.bfast_monitor_geotiff(d, "2017-06-01", tmp_path / "o", device=any_device,
                                        progress=False)
    yf = np.where(miss, np.nan, y.astype(np.float64))
    want = clts.bfast_monitor(yf, dates, np.datetime64("2017-06-01"),
                              dtype=np.float32, device=any_device, progress=False)
    with rasterio.open(out["valid_count"]) as ds:
        np.testing.assert_array_equal(ds.read(1), want.valids)
    with rasterio.open(out["magnitude"]) as ds:
        np.testing.assert_allclose(ds.read(1), np.where(want.status == 0, want.magnitudes,
                                                        np.nan), rtol=1e-6)
    assert np.isnan(st.to_dataarray().values[70:80][miss[70:80]]).all()


def test_output_folder_never_touches_inputs(tmp_path, any_device, capsys):
    from clts.cli import main
    from clts.io import InputError
    dates, y = _stack(7, H=2, W=3, years=5)
    folder, files = _folder(tmp_path, dates, y)
    before = _hashes(folder)
    # an input inside the output folder (it was replaced by the result)
    o2 = tmp_path / "o2"
    o2.mkdir()
    (o2 / "status.tif").write_bytes((folder / files[-1].split("/")[-1]).read_bytes())
    inside = _hashes(o2)
    with pytest.raises(InputError, match="would overwrite the input .*status.tif"):
        geotiff.bfast_monitor_geotiff([*files[:-1], str(o2 / "status.tif")], "2017-06-01", o2,
                                      dates=dates, device=any_device, progress=False)
    assert _hashes(o2) == inside
    # the input folder as the output (four results were written into the stack)
    for out in (str(folder), str(folder) + "/", files[0]):
        rc = main(["bfast", *files, "--start", "2017-06-01", "-o", out, "--device",
                   any_device.slug, "--no-progress"])
        err = capsys.readouterr().err
        assert rc == 2 and "would overwrite the input" in err and "Traceback" not in err
    rc = main(["bfast", str(folder), "--start", "2017-06-01", "-o", str(tmp_path),
               "--device", any_device.slug, "--no-progress"])
    assert rc == 2 and "would overwrite the input" in capsys.readouterr().err
    assert _hashes(folder) == before
    # a folder inside the stack's folder
    with pytest.raises(InputError, match="would overwrite the input"):
        geotiff.bfast_monitor_geotiff(folder, "2017-06-01", folder / "sub", device=any_device,
                                      progress=False)
    assert not (folder / "sub").exists()


def test_existing_outputs_need_overwrite_and_clts_tag(tmp_path, any_device, capsys):
    from clts.cli import main
    dates, y = _stack(8, H=2, W=3, years=5)
    _, files = _folder(tmp_path, dates, y)
    co1 = tmp_path / "co1"
    argv = ["bfast", *files, "--start", "2017-06-01", "-o", str(co1), "--device", any_device.slug,
            "--no-progress"]
    assert main(argv) == 0
    first = _hashes(co1)
    (co1 / "notes.txt").write_text("mine")
    rc = main(argv)
    err = capsys.readouterr().err
    assert rc == 2 and "--overwrite" in err and _hashes(co1) == dict(first, **{"notes.txt":
                                                                            _hashes(co1)["notes.txt"]})
    assert main(argv + ["--overwrite"]) == 0
    assert (co1 / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in co1.iterdir()) == sorted(
        [f"{n}.tif" for n in geotiff.OUTPUTS] + ["notes.txt"])       # no partial file left
    # a status.tif clts did not write: never replaced, even with --overwrite
    _write_nd(co1 / "status.tif", y[0], NODATA)
    theirs = _hashes(co1)["status.tif"]
    rc = main(argv + ["--overwrite"])
    assert rc == 2 and "did not write" in capsys.readouterr().err
    assert _hashes(co1)["status.tif"] == theirs
    # a file where the folder would be
    (tmp_path / "afile").write_text("x")
    rc = main(argv[:-4] + [str(tmp_path / "afile"), "--device", any_device.slug, "--no-progress"])
    assert rc == 2 and "not a folder" in capsys.readouterr().err


def test_unreadable_inputs_and_dates_are_value_errors(tmp_path, any_device, capsys):
    from clts.cli import main
    dates, y = _stack(9, H=40, W=30, years=5)
    folder, files = _folder(tmp_path, dates, y)
    big = folder / files[5].split("/")[-1]
    data = big.read_bytes()
    big.write_bytes(data[:len(data) // 2])                   # truncated
    with pytest.raises(ValueError, match="inputs: cannot (read|open) .*" + big.name):
        geotiff.bfast_monitor_geotiff(files, "2017-06-01", tmp_path / "out", dates=dates,
                                      device=any_device, progress=False)
    assert not (tmp_path / "out").exists()                   # no empty folder left behind
    rc = main(["bfast", *files, "--start", "2017-06-01", "-o", str(tmp_path / "out"),
               "--device", any_device.slug, "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and "inputs: cannot" in err and not (tmp_path / "out").exists()
    big.write_bytes(data)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match="dates: .*empty"):
        geotiff.open_stack(files, dates=empty)
    ints = tmp_path / "ints.csv"
    ints.write_text("date\n" + "\n".join(str(20130101 + i) for i in range(len(files))) + "\n")
    with pytest.raises(ValueError, match="dates: column 'date' .* holds numbers"):
        geotiff.open_stack(files, dates=ints)
    with pytest.raises(ValueError, match="dates must be dates"):
        geotiff.open_stack(files, dates=np.arange(len(files)))


def test_like_must_be_the_maps_grid(tmp_path, any_device, monkeypatch):
    """write_bfast / write_breaks place the maps by like=: a DataArray without a CRS, another
    size or a cut-out's coordinates are refused instead of writing at the wrong place."""
    pytest.importorskip("rioxarray")
    import sys

    import xarray as xr

    import clts.xarray as cx
    dates, y = _stack(3, H=6, W=5, years=6)
    folder, _ = _folder(tmp_path, dates, y)
    da = geotiff.open_stack(folder).to_dataarray()
    cut = da.isel(y=slice(2, 6))
    ds = cx.bfast_monitor(cut, "2017-01-01", device=any_device)
    for like in (da, da.isel(y=slice(0, 4))):               # a 6 x 5 grid; another 4 x 5 cut
        for write in (geotiff.write_bfast, geotiff.write_breaks):
            maps = ds if write is geotiff.write_bfast else cx.bfast_breaks(cut, breaks=2,
                                                                          device=any_device)
            with pytest.raises(ValueError, match="like"):
                write(maps, tmp_path / "o", like=like)
    assert not (tmp_path / "o").exists()
    with pytest.raises(ValueError, match="like has no CRS"):
        geotiff.write_bfast(ds, tmp_path / "o", like=xr.DataArray(cut.values, dims=cut.dims))
    with pytest.raises(ValueError, match="like must be"):
        geotiff.write_bfast(ds, tmp_path / "o", like="stack/")
    # the cut-out itself, also by the attrs Stack.to_dataarray writes without rioxarray
    plain = xr.DataArray(cut.values, dims=cut.dims, coords={"y": cut.y, "x": cut.x},
                         attrs={"crs": CRS, "transform": tuple(TR)[:6]})
    a = geotiff.write_bfast(ds, tmp_path / "a", like=cut)
    with monkeypatch.context() as mp:
        mp.setitem(sys.modules, "rioxarray", None)             # import rioxarray fails
        b = geotiff.write_bfast(ds, tmp_path / "b", like=plain)
    with rasterio.open(a["break_date"]) as fa, rasterio.open(b["break_date"]) as fb:
        assert fa.crs == fb.crs and fa.transform == fb.transform
        assert fa.transform.f == TR.f + 2 * TR.e                    # two rows down the scene
        np.testing.assert_array_equal(fa.read(1), fb.read(1))


def test_like_a_pixel_off_transposed_or_a_dataset(tmp_path):
    """grid_of: a same-size cut-out one row off is refused (coordinates compared to half a
    pixel, not numpy's relative 1e-5: 50 m on UTM northings); a like whose dims are (y, x,
    time), or a Dataset, is read by its own y / x."""
    pytest.importorskip("rioxarray")
    import xarray as xr

    from clts.geotiff_grid import grid_of
    tr = Affine(30.0, 0.0, 500000.0, 0.0, -30.0, 5000000.0)
    ys, xs = tr.f + tr.e * (np.arange(40) + 0.5), tr.c + tr.a * (np.arange(50) + 0.5)
    full = xr.DataArray(np.zeros((3, 40, 50)), dims=("time", "y", "x"),
                        coords={"y": ys, "x": xs}).rio.write_crs(CRS)
    a = full.isel(y=slice(0, 10), x=slice(0, 10))
    maps = xr.DataArray(np.zeros((10, 10), "i4"), dims=("y", "x"), coords={"y": a.y, "x": a.x})
    assert tuple(grid_of(a, maps)[1])[:6] == tuple(tr)[:6]
    with pytest.raises(ValueError, match="y coordinates differ"):
        grid_of(full.isel(y=slice(1, 11), x=slice(0, 10)), maps)
    assert tuple(grid_of(a.transpose("y", "x", "time"), maps)[1])[:6] == tuple(tr)[:6]
    assert tuple(grid_of(a.to_dataset(name="v"), maps)[1])[:6] == tuple(tr)[:6]
    with pytest.raises(ValueError, match="2-D"):
        grid_of(a, maps.isel(y=0))
