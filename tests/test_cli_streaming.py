"""A Zarr input streams through ``clts bfast`` chunk by chunk: the peak resident memory of the
command (a child process) grows far less than its input (``clts stl`` at larger sizes and under
a hard memory cap: bench/cli_streaming.py)."""
import os
import sys
from pathlib import Path

import pytest

xr = pytest.importorskip("xarray")
pytest.importorskip("zarr")
pytest.importorskip("dask")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from cli_streaming import run_child, write_cube  # noqa: E402

#: rows of 512 pixels x 184 dates (float32; chunks of 8 rows, 3 MiB): 46 MiB and 368 MiB
ROWS = {"small": 128, "large": 1024}


@pytest.fixture(scope="module")
def cubes(tmp_path_factory):
    d = tmp_path_factory.mktemp("stream")
    return d, {size: write_cube(d / f"{size}.zarr", ny, 512, years=8, chunk_y=8)[0]
               for size, ny in ROWS.items()}


def test_clts_bfast_memory_bounded_by_chunks_not_input(cubes):
    # once, on the default device (the host-tests process): what is measured is the command's
    # streaming, not a driver; the kernels themselves are the device tests'
    d, nbytes = cubes
    env = dict(os.environ, PYTHONPATH=str(ROOT), CLTS_NO_PROGRESS="1")
    peak = {}
    for size in ROWS:       # small first: it also pays for any kernel build
        out = d / f"bfast-{size}.zarr"
        rc, peak[size], _, err, _ = run_child(
            [sys.executable, "-m", "clts.cli", "bfast", str(d / f"{size}.zarr"), "--var",
             "ndvi", "--start-monitor", "2010-01-01", "-o", str(out), "--no-progress"], env=env)
        assert rc == 0, err
    res = xr.open_zarr(out)
    assert res.sizes["y"] == ROWS["large"] and int((res["breaks"] >= 0).sum()) > 0
    # 8x the input, 8x the chunks: the chunks in flight, and so the memory, stay the same
    # (measured: +20 MB for +320 MB of input; all of it read at once would be +320 MB)
    assert peak["large"] - peak["small"] < 0.25 * (nbytes["large"] - nbytes["small"]), \
        (peak, nbytes)


def test_time_sliced_file_read_in_whole_series_chunks(tmp_path, monkeypatch):
    # a file stored one scene per chunk: re-opened with the time axis whole and the other
    # dimensions cut to STREAM_CHUNK_BYTES (not one chunk of the whole array), with a warning
    import clts.io as cio
    import clts.xarray as cx
    _, da = write_cube(tmp_path / "c.zarr", 64, 48, years=2, chunk_y=64)
    da.chunk({"time": 1}).to_dataset().to_zarr(tmp_path / "t.zarr", zarr_format=2)
    assert cio.read(str(tmp_path / "c.zarr"), "ndvi").chunks[1] == (64,)   # own chunks kept
    monkeypatch.setattr(cio, "STREAM_CHUNK_BYTES", 46 * 16 * 48 * 4)
    with pytest.warns(UserWarning, match="splits the time dimension 'time'.*whole series"):
        got = cio.read(str(tmp_path / "t.zarr"), "ndvi")
    assert len(got.chunks[0]) == 1 and len(got.chunks[1]) > 1
    assert max(got.chunks[1]) * max(got.chunks[2]) * 46 * 4 <= cio.STREAM_CHUNK_BYTES
    xr.testing.assert_identical(got.compute(), da.compute())
    # clts.xarray's rechunk of a split time axis: the other dims cut to Dask's chunk size
    import dask
    with dask.config.set({"array.chunk-size": "64KiB"}):
        with pytest.warns(UserWarning, match="other dimensions cut"):
            ds = cx.stl(da.chunk({"time": 1}), 23, )
    assert len(ds["trend"].chunks[0]) == 1 and len(ds["trend"].chunks[1]) > 1
