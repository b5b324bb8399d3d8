"""The command line never loses a file: an output equal to, inside or holding an input is
refused before anything runs; an existing output is replaced only with --overwrite (a
directory clts did not write, never); a failed or interrupted run leaves no partial file and
the earlier output untouched; arguments are checked before the first byte is written. Also
--nodata, undecoded _FillValue, a header-only CSV, CLTS_DUMP_SOURCES and the scattered inputs
of the distributed matrix profile."""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

from clts import cli

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")
pytest.importorskip("h5netcdf")
pytest.importorskip("zarr")


def snapshot(root: Path) -> dict:
    """Every file under ``root`` and the digest of its bytes."""
    return {str(p.relative_to(root)): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def d(tmp_path):
    rng = np.random.default_rng(0)
    n = 72
    t = np.arange(n)
    y = 0.5 + 0.2 * np.sin(2 * np.pi * t / 12)[:, None, None] + 0.03 * rng.standard_normal(
        (n, 2, 3))
    ds = xr.Dataset({"ndvi": (("time", "y", "x"), y)},
                    coords={"time": pd.date_range("2000-01-01", periods=n, freq="MS")})
    ds.to_netcdf(tmp_path / "cube.nc", engine="h5netcdf")
    ds.to_zarr(tmp_path / "cube.zarr", zarr_format=2)
    return tmp_path


def run(*argv):
    return cli.main(list(map(str, argv)) + ["--no-progress"])


def test_output_equal_to_the_input_is_refused(d, capsys):
    before = snapshot(d)
    assert run("stl", d / "cube.zarr", "-p", 12, "-o", d / "cube.zarr") == 2
    assert run("stl", d / "cube.zarr", "-p", 12, "-o", str(d / "cube.zarr") + "/",
               "--overwrite") == 2
    assert run("stl", d / "cube.nc", "-p", 12, "-o", d / "cube.nc", "--overwrite") == 2
    assert run("mp", d / "cube.zarr", "-m", 8, "-o", d / "cube.zarr" / "in.zarr") == 2
    assert run("bfast", d / "cube.zarr", "--start-monitor", "2004-01-01", "-o",
               d / "cube.zarr" / "ndvi" / "x.nc") == 2
    os.symlink(d / "cube.nc", d / "link.nc")
    before["link.nc"] = before["cube.nc"]
    assert run("stl", d / "cube.nc", "-p", 12, "-o", d / "link.nc", "--overwrite") == 2
    err = capsys.readouterr().err
    assert err.count("would overwrite the input") == 6, err
    assert run("stl", d / "cube.nc", "-p", 12, "-o", d / "x.nc", "--plot", d / "cube.nc") == 2
    assert "--plot" in capsys.readouterr().err
    assert snapshot(d) == before
    assert xr.open_zarr(d / "cube.zarr")["ndvi"].notnull().all()


def test_existing_outputs_need_overwrite_and_foreign_directories_stay(d, capsys):
    (d / "keep.zarr").mkdir()
    (d / "keep.zarr" / "notes.txt").write_text("mine")
    (d / "old.nc").write_bytes(b"earlier result")
    (d / "plain.zarr").write_text("a file")
    before = snapshot(d)
    for out, extra in (("keep.zarr", []), ("keep.zarr", ["--overwrite"]), ("old.nc", []),
                       ("plain.zarr", ["--overwrite"]), ("cube.zarr", ["--overwrite"])):
        assert run("stl", d / "cube.nc", "-p", 12, "-o", d / out, *extra) == 2, out
    err = capsys.readouterr().err
    assert "give --overwrite" in err and "did not write" in err and "not a Zarr store" in err
    assert snapshot(d) == before
    # a store clts wrote is replaced with --overwrite; a .nc file too
    assert run("stl", d / "cube.nc", "-p", 12, "-o", d / "r.zarr") == 0
    assert run("mp", d / "cube.nc", "-m", 8, "-o", d / "r.zarr") == 2
    assert run("mp", d / "cube.nc", "-m", 8, "-o", d / "r.zarr", "--overwrite") == 0
    assert "profile" in xr.open_zarr(d / "r.zarr") and "trend" not in xr.open_zarr(d / "r.zarr")
    assert run("mp", d / "cube.nc", "-m", 8, "-o", d / "old.nc", "--overwrite") == 0
    assert "profile" in xr.open_dataset(d / "old.nc", engine="h5netcdf")
    assert not [p for p in d.iterdir() if p.name.startswith(".")]      # no temporaries left


@pytest.mark.parametrize("argv, message", [
    (["stl", "-p", "1000"], "at least two periods"),
    (["stl", "-p", "12", "--seasonal", "4"], "seasonal must be an odd"),
    (["stl", "-p", "12", "--trend", "5"], "trend must be"),
    (["bfast", "--start-monitor", "2030-01-01"], r"start_monitor \(2030-01-01\) must lie after "
                                                 r"the first date \(2000-01-01\)"),
    (["bfast", "--start-monitor", "2004-01-01", "--k", "11"], "k .* 0..10"),
    (["bfast", "--start-monitor", "2004-01-01", "--hfrac", "0.3"], "hfrac"),
    (["mp", "-m", "500"], "m must be an int"),
    (["mp", "-m", "8", "--exclusion-zone", "-1"], "exclusion_zone must be None or an int >= 0"),
])
@pytest.mark.parametrize("out", ["fail.zarr", "fail.nc"])
def test_bad_arguments_write_nothing(d, capsys, argv, message, out):
    import re
    (d / "fail.nc").write_bytes(b"earlier")                  # an earlier output, kept
    before = snapshot(d)
    assert run(argv[0], d / "cube.zarr", *argv[1:], "-o", d / out, "--overwrite") == 2
    err = capsys.readouterr().err
    assert re.search(message, err), err
    assert snapshot(d) == before
    assert not (d / "fail.zarr").exists()


@pytest.mark.parametrize("exc, code", [(ValueError("injected"), 2), (KeyboardInterrupt(), 130)])
@pytest.mark.parametrize("out", ["res.zarr", "res.nc"])
def test_failure_mid_compute_keeps_the_earlier_output(d, monkeypatch, capsys, exc, code, out):
    import clts.xarray as cx
    assert run("stl", d / "cube.nc", "-p", 12, "-o", d / out) == 0
    before = snapshot(d)
    real, calls = cx._stl_block, []

    def failing(y, **kw):
        calls.append(1)
        if len(calls) == 2:
            raise exc
        return real(y, **kw)
    monkeypatch.setattr(cx, "_stl_block", failing)
    assert run("stl", d / "cube.nc", "-p", 12, "--chunks", "y=1", "-o", d / out,
               "--overwrite") == code
    assert calls and snapshot(d) == before
    assert not [p for p in d.iterdir() if p.name.startswith(".")]
    if code == 130:
        assert "interrupted" in capsys.readouterr().err


def test_nodata_and_undecoded_fill_values(d):
    import clts.xarray as cx
    rng = np.random.default_rng(1)
    raw = (1000 + 200 * np.sin(np.arange(72) * np.pi / 6)[:, None]
           + rng.integers(0, 30, (72, 3))).astype(np.int16)
    raw[5, 0] = raw[40, 2] = -9999
    t = pd.date_range("2000-01-01", periods=72, freq="MS")
    masked = xr.DataArray(np.where(raw == -9999, np.nan, raw.astype(np.float64)),
                          dims=("time", "x"), coords={"time": t})
    ref = cx.stl(masked, 12)
    # the CLI's --nodata
    xr.Dataset({"v": (("time", "x"), raw)}, coords={"time": t}).to_netcdf(
        d / "raw.nc", engine="h5netcdf")
    assert run("stl", d / "raw.nc", "-p", 12, "--nodata", -9999, "-o", d / "s.nc") == 0
    got = xr.open_dataset(d / "s.nc", engine="h5netcdf")
    np.testing.assert_array_equal(got["trend"].values, ref["trend"].values)
    # _FillValue / missing_value of data that were not decoded
    for key in ("_FillValue", "missing_value"):
        da = xr.DataArray(raw, dims=("time", "x"), coords={"time": t}, attrs={key: -9999})
        np.testing.assert_array_equal(cx.stl(da, 12)["trend"].values, ref["trend"].values)
        b = cx.bfast_monitor(da, "2004-01-01", freq=365.25)
        bm = cx.bfast_monitor(masked.astype(np.float32), "2004-01-01", freq=365.25)
        np.testing.assert_array_equal(b["breaks"].values, bm["breaks"].values)
        np.testing.assert_array_equal(b["valids"].values, bm["valids"].values)
    ds = xr.Dataset({"v": (("time", "x"), raw, {"_FillValue": np.int16(-9999)})},
                    coords={"time": t})
    ds.to_netcdf(d / "fill.nc", engine="h5netcdf")
    und = xr.open_dataset(d / "fill.nc", engine="h5netcdf", mask_and_scale=False)["v"]
    assert und.dtype == np.int16 and und.attrs["_FillValue"] == -9999
    np.testing.assert_array_equal(cx.stl(und, 12)["trend"].values, ref["trend"].values)
    m = cx.matrix_profile(und, 8)
    np.testing.assert_array_equal(m["profile"].values, cx.matrix_profile(masked, 8)["profile"])


def test_header_only_csv_says_no_data_rows(tmp_path, capsys):
    (tmp_path / "h.csv").write_text("time,a,b\n")
    assert run("stl", tmp_path / "h.csv", "--var", "a", "-p", 12, "-o", tmp_path / "o.nc") == 2
    assert "no data rows" in capsys.readouterr().err
    assert not (tmp_path / "o.nc").exists()


def test_unwritable_dump_sources_names_the_directory(tmp_path, monkeypatch):
    import clts
    dev = clts.get_device(None)
    (tmp_path / "file").write_text("not a directory")
    monkeypatch.setattr(dev.state, "programs", {})              # build again
    monkeypatch.setattr(dev.state, "program_index", {})         # (and look them up again:
    monkeypatch.setattr(dev.state, "constants", {})             # no Plan / Runner memo)
    with clts.set_options(dump_sources=str(tmp_path / "file" / "src")), \
            pytest.raises(OSError, match="dump_sources=.*file/src.*cannot write") as info:
        clts.stl(np.random.default_rng(0).standard_normal((2, 48)), 12, device=dev)
    assert not isinstance(info.value, clts.DeviceError)


@pytest.mark.parametrize("store", [False, True])
def test_output_that_appears_meanwhile_is_not_replaced(tmp_path, store):
    """Another run wrote the output while this one computed: without --overwrite it stays
    (two runs to one path both reported success, the second replacing the first)."""
    from clts.io import InputError, put_in_place
    final, tmp = tmp_path / "out", tmp_path / ".out.partial"
    if store:
        (final / "x").mkdir(parents=True)
        (tmp / "y").mkdir(parents=True)
    else:
        final.write_text("first run")
        tmp.write_text("second run")
    with pytest.raises(InputError, match="appeared while this run computed"):
        put_in_place(tmp, final, overwrite=False)
    assert (final / "x").is_dir() if store else final.read_text() == "first run"
    fresh = tmp_path / "fresh"
    put_in_place(tmp, fresh, overwrite=False)
    assert fresh.exists() and not tmp.exists()


def test_no_hard_links_still_never_replaces(tmp_path, monkeypatch):
    """A file system without hard links (vfat, SMB: link() fails with EPERM) still writes, and
    still refuses an output that appeared meanwhile."""
    import errno
    from clts.io import InputError, put_in_place

    def no_link(*a, **k):
        raise PermissionError(errno.EPERM, "Operation not permitted")
    monkeypatch.setattr(os, "link", no_link)
    tmp, final = tmp_path / ".o.partial", tmp_path / "o.nc"
    tmp.write_text("result")
    put_in_place(tmp, final, overwrite=False)
    assert final.read_text() == "result" and not tmp.exists()
    tmp.write_text("second")
    with pytest.raises(InputError, match="appeared"):
        put_in_place(tmp, final, overwrite=False)
    assert final.read_text() == "result"


def test_geotiff_result_that_appeared_meanwhile_is_not_replaced(tmp_path):
    pytest.importorskip("rasterio")
    from affine import Affine
    from clts.geotiff import _Writer
    from clts.io import InputError
    for overwrite in (False, True):
        out = tmp_path / f"out{int(overwrite)}"
        w = _Writer(out, [("status", np.int32)], overwrite=overwrite)
        w.open(("EPSG:32633", Affine(30.0, 0, 500000.0, 0, -30.0, 4200000.0), 4, 3))
        w.write("status", 0, np.zeros((3, 4), np.int32))
        (out / "status.tif").write_text("someone else's")        # not a clts output
        with pytest.raises(InputError, match="appeared"):
            w.commit()
        w.abort()
        assert (out / "status.tif").read_text() == "someone else's"


def test_plot_path_rules(tmp_path):
    from clts.cli_common import check_plot_path
    from clts.io import InputError
    (tmp_path / "dir.png").mkdir()
    with pytest.raises(InputError, match="is a folder"):
        check_plot_path(tmp_path / "dir.png")
    (tmp_path / "old.png").write_bytes(b"png")
    with pytest.raises(InputError, match="--overwrite"):
        check_plot_path(tmp_path / "old.png")
    check_plot_path(tmp_path / "old.png", overwrite=True)
    check_plot_path(tmp_path / "new.svg")
