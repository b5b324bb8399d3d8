"""Break maps of clts.bfast_breaks: clts.bfast.maps.break_maps against a per-pixel loop, the
same maps through clts.xarray (lazy), NetCDF / Zarr and GeoTIFFs from ``clts breaks`` and
clts.geotiff, and the safe-output rules on the way."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from clts import cli
from clts.bfast.maps import MAP_FIELDS, break_maps


def _loop(nb, bd, mg, st):
    """The maps one pixel at a time (break axis first)."""
    B = bd.shape[0]
    fill = np.datetime64("NaT") if bd.dtype.kind == "M" else np.nan
    out = {f: [] for f in MAP_FIELDS}
    for p in np.ndindex(nb.shape):
        n = int(nb[p])
        d = [bd[(j,) + p] for j in range(min(max(n, 0), B))]
        m = [mg[(j,) + p] for j in range(len(d))]
        ok = [j for j in range(len(d)) if np.isfinite(m[j])]
        big = max(ok, key=lambda j: (abs(m[j]), -j)) if ok else None
        out["n_breaks"].append(max(n, -1))
        out["first_break_date"].append(d[0] if d else fill)
        out["largest_break_date"].append(d[big] if big is not None else fill)
        out["largest_magnitude"].append(m[big] if big is not None else np.nan)
        out["status"].append(int(st[p]))
    return {f: np.array(v, dtype=bd.dtype if f.endswith("date") else None).reshape(nb.shape)
            for f, v in out.items()}


@pytest.mark.parametrize("kind", ["datetime", "decimal"])
def test_break_maps_equal_a_pixel_loop(kind):
    rng = np.random.default_rng(1)
    B, shape = 4, (6, 7)
    nb = rng.integers(-1, B + 1, shape).astype(np.int32)
    st = np.where(nb < 0, 1, 0).astype(np.int32)
    mg = np.round(rng.normal(size=(B,) + shape), 1)             # ties in |magnitude|
    mg[rng.random(mg.shape) < 0.2] = np.nan                      # some not computed
    mg[0, 0, 0] = -mg[1, 0, 0] if np.isfinite(mg[1, 0, 0]) else 0.5    # a tie of signs
    if kind == "datetime":
        bd = np.datetime64("2001-01-01") + np.sort(rng.integers(0, 3000, (B,) + shape), 0) \
            .astype("timedelta64[D]")
    else:
        bd = 2001 + np.sort(rng.random((B,) + shape) * 8, 0)
    beyond = np.arange(B)[:, None, None] >= nb[None]
    bd = np.where(beyond, np.datetime64("NaT") if kind == "datetime" else np.nan, bd)
    mg = np.where(beyond, np.nan, mg)
    want = _loop(nb, bd, mg, st)
    for got in (break_maps(nb, bd, mg, st),
                break_maps(nb, np.moveaxis(bd, 0, -1), np.moveaxis(mg, 0, -1), st, axis=-1),
                break_maps(nb, np.asfortranarray(bd), mg.astype(">f8"), st)):
        assert list(got) == list(MAP_FIELDS)
        for f in MAP_FIELDS:
            np.testing.assert_array_equal(got[f], want[f], err_msg=f)
    with pytest.raises(ValueError, match="shapes"):
        break_maps(nb, bd[:, :3], mg, st)
    with pytest.raises(TypeError, match="magnitudes"):
        break_maps(nb, bd, None, st)
    with pytest.raises(TypeError, match="n_breaks"):
        break_maps(nb.astype(float), bd, mg, st)


def _cube(seed=0, H=3, W=4):
    dates = np.arange("2000-01-01", "2007-01-01", 16, dtype="datetime64[D]")
    t = (dates - dates[0]).astype(float)
    rng = np.random.default_rng(seed)
    y = (0.5 + 0.2 * np.sin(2 * np.pi * t / 365))[:, None, None] \
        + rng.normal(0, 0.02, (t.size, H, W))
    y[dates >= np.datetime64("2003-06-01"), :1] -= 0.3       # the top row breaks twice
    y[dates >= np.datetime64("2005-02-01"), :1] += 0.5
    y[dates >= np.datetime64("2004-03-01"), 1] -= 0.25      # the middle row once
    y[rng.random(y.shape) < 0.15] = np.nan
    y[:, -1, -1] = np.nan                                     # never observed
    return dates, y


def test_maps_of_bfast_breaks_and_xarray(device):
    xr = pytest.importorskip("xarray")
    import clts.xarray as cx
    dates, y = _cube()
    r = clts.bfast_breaks(y, dates, breaks=3, device=device, progress=False)
    m = break_maps(r.n_breaks, r.break_dates, r.magnitudes, r.status)
    assert (m["n_breaks"][0] == 2).all() and (m["n_breaks"][1] == 1).all()
    assert m["n_breaks"][-1, -1] == -1 and m["status"][-1, -1] == 1
    assert (m["first_break_date"][0] < np.datetime64("2003-07-01")).all()
    # the +0.5 step is larger than the -0.3 one: the second break is the largest
    assert (m["largest_break_date"][0] > np.datetime64("2005-01-01")).all()
    assert (m["largest_magnitude"][0] > 0.4).all() and (m["largest_magnitude"][1] < -0.2).all()
    assert np.isnat(m["first_break_date"][-1, -1]) and np.isnan(m["largest_magnitude"][-1, -1])
    # hostile pixels keep their statuses: constant (no break), +inf (3), too short (1)
    yh = y[:, :1, :3].copy()
    yh[:, 0, 0] = 0.5
    yh[5, 0, 1] = np.inf
    yh[8:, 0, 2] = np.nan
    with np.errstate(invalid="ignore"):
        rh = clts.bfast_breaks(yh, dates, breaks=3, device=device, progress=False)
    mh = break_maps(rh.n_breaks, rh.break_dates, rh.magnitudes, rh.status)
    assert mh["n_breaks"].tolist() == [[0, -1, -1]] and mh["status"].tolist() == [[0, 3, 1]]
    assert np.isnat(mh["largest_break_date"]).all() and np.isnan(mh["largest_magnitude"]).all()
    da = xr.DataArray(y, dims=("time", "y", "x"), coords={"time": dates}, name="ndvi")
    try:
        import dask  # noqa: F401 - the chunked case needs it (an optional extra)
        arrays = (da, da.chunk({"y": 1}))
    except ImportError:
        arrays = (da,)
    for arr in arrays:
        ds = cx.break_maps(cx.bfast_breaks(arr, breaks=3, device=device))
        for f in MAP_FIELDS:
            np.testing.assert_array_equal(ds[f].values, m[f], err_msg=f)


def test_clts_breaks_netcdf_and_zarr(tmp_path, device, capsys):
    xr = pytest.importorskip("xarray")
    pytest.importorskip("h5netcdf")
    dates, y = _cube(2)
    xr.DataArray(y, dims=("time", "y", "x"), coords={"time": dates}, name="ndvi") \
        .to_dataset().to_netcdf(tmp_path / "cube.nc", engine="h5netcdf")
    r = clts.bfast_breaks(y, dates, breaks=3, h=0.2, device=device, progress=False)
    want = break_maps(r.n_breaks, r.break_dates, r.magnitudes, r.status)
    for out in ("maps.nc", "maps.zarr"):
        plot = ["--plot", str(tmp_path / "maps.png")] if out == "maps.zarr" else []
        rc = cli.main(["breaks", str(tmp_path / "cube.nc"), "-o", str(tmp_path / out),
                       "--breaks", "3", "--h", "0.2", "--device", device.slug,
                       "--no-progress", *plot])
        assert rc == 0, capsys.readouterr().err
        from clts.io import reopen
        got = reopen(str(tmp_path / out))
        for f in MAP_FIELDS:
            np.testing.assert_array_equal(got[f].values, want[f], err_msg=f)
        assert got.attrs["clts_output"] and got["break_dates"].sizes["break"] == 3
    assert (tmp_path / "maps.png").stat().st_size > 0
    # an existing output: refused without --overwrite, before any work; a bad option: exit 2
    assert cli.main(["breaks", str(tmp_path / "cube.nc"), "-o", str(tmp_path / "maps.nc"),
                     "--no-progress"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert cli.main(["breaks", str(tmp_path / "cube.nc"), "-o", str(tmp_path / "bad.nc"),
                     "--h", "1.5", "--no-progress"]) == 2
    assert "h must be" in capsys.readouterr().err and not (tmp_path / "bad.nc").exists()
    # a CSV of decimal years: --time-unit year is freq=1
    t = 2000 + np.arange(161) / 23
    yc = np.sin(2 * np.pi * t) + 0.05 * np.random.default_rng(0).normal(size=161)
    yc[t >= 2004] += 1.0
    (tmp_path / "num.csv").write_text("t,a\n" + "".join(f"{a:.17g},{b:.17g}\n" for a, b in zip(t, yc)))
    assert cli.main(["breaks", str(tmp_path / "num.csv"), "-o", str(tmp_path / "num.nc"),
                     "--time-unit", "year", "--device", device.slug, "--no-progress"]) == 0
    got = reopen(str(tmp_path / "num.nc"))
    r1 = clts.bfast_breaks(yc, t, freq=1, device=device, progress=False)
    assert int(got["n_breaks"]) == int(r1.n_breaks) == 1
    assert float(got["first_break_date"]) == float(r1.break_dates[0])
    with pytest.raises(SystemExit):
        cli.main(["breaks", "--help"])
    text = capsys.readouterr().out
    assert "--criterion" in text and "(default: 0.15)" in text and "``" not in text


def test_geotiff_break_maps_stream_and_cli(tmp_path, device, capsys):
    rasterio = pytest.importorskip("rasterio")
    from affine import Affine
    from clts import geotiff
    dates, y = _cube(3)
    tr = Affine(30.0, 0.0, 500000.0, 0.0, -30.0, 4200000.0)
    stack = np.where(np.isnan(y), -9999, np.round(y * 10000)).astype(np.int16)
    with rasterio.open(tmp_path / "stack.tif", "w", driver="GTiff", width=4, height=3,
                       count=dates.size, dtype="int16", crs="EPSG:32633", transform=tr,
                       nodata=-9999) as ds:
        ds.write(stack)
    csv = tmp_path / "dates.csv"
    csv.write_text("date\n" + "\n".join(str(d) for d in dates) + "\n")
    paths = geotiff.bfast_breaks_geotiff(tmp_path / "stack.tif", tmp_path / "out",
                                         dates=str(csv), block_rows=2, breaks=3,
                                         device=device, progress=False)
    assert list(paths) == list(MAP_FIELDS)
    yf = np.where(stack == -9999, np.nan, stack.astype(np.float32))
    r = clts.bfast_breaks(yf, dates, breaks=3, device=device, progress=False)
    want = break_maps(r.n_breaks, r.break_dates, r.magnitudes, r.status)
    for f in MAP_FIELDS:
        with rasterio.open(paths[f]) as ds:
            assert ds.crs.to_string() == "EPSG:32633" and ds.transform == tr
            got = ds.read(1)
        exp = want[f]
        if f.endswith("_date"):
            exp = geotiff.date_values(exp, "decimal_year")
        np.testing.assert_allclose(got, exp.astype(got.dtype), rtol=1e-6, err_msg=f)
    assert not list((tmp_path / "out").glob(".*"))
    with pytest.raises(ValueError, match="h must be"):     # before a file or the folder is made
        geotiff.bfast_breaks_geotiff(tmp_path / "stack.tif", tmp_path / "bad", dates=str(csv),
                                     h=2.5, device=device, progress=False)
    assert not (tmp_path / "bad").exists()
    # the CLI: the same stack, doy; an existing folder needs --overwrite
    args = ["breaks", str(tmp_path / "stack.tif"), "--dates", str(csv), "--breaks", "3",
            "-o", str(tmp_path / "out"), "--device", device.slug, "--no-progress"]
    assert cli.main(args) == 2 and "--overwrite" in capsys.readouterr().err
    assert cli.main(args + ["--overwrite", "--date-format", "doy"]) == 0
    with rasterio.open(tmp_path / "out" / "first_break_date.tif") as ds:
        doy = ds.read(1)
    exp = geotiff.date_values(want["first_break_date"], "doy")
    np.testing.assert_array_equal(doy, exp.astype(np.float32))
    # an xarray Dataset written on the stack's grid
    st = geotiff.open_stack(tmp_path / "stack.tif", str(csv))
    import clts.xarray as cx
    ds = cx.bfast_breaks(st.to_dataarray(), breaks=3, device=device)
    p = geotiff.write_breaks(ds, tmp_path / "out2", like=st)
    with rasterio.open(p["n_breaks"]) as f:
        np.testing.assert_array_equal(f.read(1), want["n_breaks"])


def test_xarray_breaks_confint(device):
    """cx.bfast_breaks(confint=) writes ci_lower / ci_upper along break (it was ignored)."""
    xr = pytest.importorskip("xarray")
    import clts.xarray as cx
    t = 2000 + np.arange(161) / 23
    rng = np.random.default_rng(0)
    y = np.sin(2 * np.pi * t)[:, None, None] + 0.1 * rng.normal(size=(161, 2, 3))
    y[t >= 2004, 0] += 1
    da = xr.DataArray(y, dims=("time", "y", "x"), coords={"time": t})
    ds = cx.bfast_breaks(da, freq=1, confint=0.95, device=device)
    r = clts.bfast_breaks(y, t, freq=1, confint=0.95, device=device)
    for side in ("ci_lower", "ci_upper"):
        assert ds[side].dims == ("y", "x", "break") and ds[side].dtype == np.int32
        np.testing.assert_array_equal(ds[side].transpose("break", ...).values, getattr(r, side))
    assert (ds.ci_lower.values[0, :, 0] > 0).all()                 # the planted break's interval
    lazy = cx.bfast_breaks(da.chunk({"x": 1}), freq=1, confint=0.95, device=device).compute()
    np.testing.assert_array_equal(lazy.ci_upper.values, ds.ci_upper.values)
    assert "ci_lower" not in cx.bfast_breaks(da, freq=1, device=device)
