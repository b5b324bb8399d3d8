"""Every ```python block of docs/*.md runs, so the reference pages cannot drift from the API.

The pages show fragments (``clts.mass(Q, T)``) the way a user reads them; each page's blocks
run in order in one namespace, after a set-up that makes the names a fragment assumes (``T``,
``m``, ``cube``, a GeoTIFF folder ``stack/``, ``ndvi.zarr``) from small synthetic data.  Each
block runs in a fresh working folder that links the page's input files, as a user would start.
"""
from __future__ import annotations

import os
import pathlib
import re
import warnings

import numpy as np
import pytest

import clts

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"

# names a page's fragments take for granted, made before the page's first block runs
PAGE_SETUP = {
    "devices.md": """
import numpy as np, clts
T = np.cumsum(np.random.default_rng(0).standard_normal(600))
""",
    "options.md": """
import numpy as np
y = np.sin(2 * np.pi * np.arange(96) / 12) + np.random.default_rng(0).normal(0, .1, (3, 96))
""",
    "bfast.md": """
import numpy as np
from clts import geotiff
""",
}

# names one block takes for granted, made just before it (the page's earlier blocks ran)
BLOCK_SETUP = {
    ("bfast.md", 4): """
dates = np.array([np.datetime64(f"{y}-01-01") + d for y in range(2000, 2012)
                  for d in range(0, 365, 16)])                    # MODIS 16-day composites
t = (dates - dates[0]).astype(float)
cube = (0.6 + 0.2 * np.sin(2 * np.pi * t / 365.25)[:, None, None]
        + 0.02 * np.random.default_rng(1).standard_normal((dates.size, 3, 4)))
cube[dates >= np.datetime64("2006-01-01"), 0] -= 0.3
cube[np.random.default_rng(2).random(cube.shape) < 0.2] = np.nan
""",
    ("bfast.md", 5): """
ndvi = cube
""",
    ("bfast.md", 7): """
da = geotiff.open_stack("stack/").to_dataarray()              # (time, y, x) on the stack's grid
y, dates = da.values, da.time.values
""",
    ("matrix-profile.md", 2): """
m = 32
T = np.cumsum(np.random.default_rng(2).standard_normal((3, 400)), axis=1)   # [ns, n]
Q = T[0, 100:100 + m]
Qs = T[:, 50:50 + m]
""",
    ("matrix-profile.md", 3): """
rng = np.random.default_rng(3)
A, B = np.cumsum(rng.standard_normal(300)), np.cumsum(rng.standard_normal(250))
X, Y = np.cumsum(rng.standard_normal((3, 200)), 1), np.cumsum(rng.standard_normal((3, 200)), 1)
Q, T = A[:100], B
""",
    ("matrix-profile.md", 4): """
Ts = [np.cumsum(np.random.default_rng(i).standard_normal(300)) for i in range(3)]
""",
    ("matrix-profile.md", 5): """
T, k = np.cumsum(np.random.default_rng(5).standard_normal(400)), 2
""",
    ("matrix-profile.md", 6): """
T = np.cumsum(np.random.default_rng(6).standard_normal(1000))
""",
    ("matrix-profile.md", 9): """
j = 10
left_I, right_I = r.left_I, r.right_I
""",
    ("matrix-profile.md", 10): """
x, block = 0.5, np.random.default_rng(10).standard_normal(20)
""",
    ("matrix-profile.md", 12): """
x, y, z = np.cumsum(np.random.default_rng(12).standard_normal((3, 500)), axis=1)
""",
    ("matrix-profile.md", 14): """
T = np.cumsum(np.random.default_rng(14).standard_normal(2000))
""",
}
BLOCK_SETUP[("matrix-profile.md", 7)] = """
m = 32
"""

# blocks that run elsewhere under the same conditions
SKIP = {
    ("xarray-dask.md", 2): "the LocalCluster set-up runs in tests/test_distributed.py",
}


def _stack(folder: pathlib.Path, dates, cube, name="LC08_%Y%j_ndvi.tif"):
    """One single-band GeoTIFF per date, the date in the file name."""
    import rasterio
    from affine import Affine
    folder.mkdir()
    for day, image in zip(dates, cube):
        path = folder / day.astype(object).strftime(name)
        with rasterio.open(path, "w", driver="GTiff", width=image.shape[1],
                           height=image.shape[0], count=1, dtype="float32",
                           crs="EPSG:32633", nodata=np.nan,
                           transform=Affine(30.0, 0, 500000.0, 0, -30.0, 4200000.0)) as ds:
            ds.write(image.astype(np.float32), 1)


def _inputs(root: pathlib.Path, page: str) -> None:
    """The files a page names: GeoTIFF folders and a dates CSV (bfast), a Zarr store (xarray)."""
    rng = np.random.default_rng(0)
    dates = np.arange("2013-01-01", "2023-01-01", 16, dtype="datetime64[D]")
    t = (dates - dates[0]).astype(float)
    cube = (0.6 + 0.2 * np.sin(2 * np.pi * t / 365.25)[:, None, None]
            + 0.02 * rng.standard_normal((dates.size, 3, 4)))
    cube[dates >= np.datetime64("2020-06-01"), :2] -= 0.3
    cube[rng.random(cube.shape) < 0.15] = np.nan
    if page == "bfast.md":
        pytest.importorskip("rasterio")
        _stack(root / "stack", dates, cube, "S2_%Y%m%d.tif")
        _stack(root / "ndvi", dates, cube)
        (root / "dates.csv").write_text("date\n" + "\n".join(map(str, dates)) + "\n")
    if page == "xarray-dask.md":
        xr = pytest.importorskip("xarray")
        pytest.importorskip("zarr")
        da = xr.DataArray(cube, dims=("time", "y", "x"),
                          coords={"time": dates, "y": np.arange(3), "x": np.arange(4)})
        with warnings.catch_warnings():         # zarr 3 on consolidated metadata
            warnings.simplefilter("ignore")
            da.to_dataset(name="ndvi").chunk({"y": 2}).to_zarr(root / "ndvi.zarr")


def _pages():
    out = []
    for path in sorted(DOCS.glob("*.md")):
        blocks = re.findall(r"```python\n(.*?)```", path.read_text(), re.S)
        if blocks:
            out.append(pytest.param(path.name, blocks, id=path.name))
    return out


@pytest.mark.parametrize("page, blocks", _pages())
def test_page_examples(page, blocks, tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    monkeypatch.setenv("CLTS_NO_PROGRESS", "1")
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    _inputs(inputs, page)
    namespace: dict = {}
    with clts.set_options(progress=False):
        exec(PAGE_SETUP.get(page, ""), namespace)
        for i, block in enumerate(blocks, 1):
            if (page, i) in SKIP:
                continue
            work = tmp_path / f"block{i}"
            work.mkdir()
            for item in inputs.iterdir():
                os.symlink(item, work / item.name)
            monkeypatch.chdir(work)
            exec(BLOCK_SETUP.get((page, i), ""), namespace)
            try:
                exec(compile(block, f"docs/{page}, python block {i}", "exec"), namespace)
            except Exception as exc:
                raise AssertionError(f"docs/{page}, python block {i} fails: "
                                     f"{type(exc).__name__}: {exc}") from exc
    import matplotlib.pyplot as plt
    plt.close("all")
