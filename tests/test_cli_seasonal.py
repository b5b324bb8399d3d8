"""``clts mstl`` and ``clts trend`` on a NetCDF cube: the files they write equal the numpy
functions' results; bad options are a message and exit code 2."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from clts.cli import main

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")


@pytest.fixture
def cube(tmp_path):
    rng = np.random.default_rng(0)
    t = pd.date_range("2000-01-01", periods=96, freq="MS")
    da = xr.DataArray(rng.normal(size=(2, 3, 96)) + 0.02 * np.arange(96), name="ndvi",
                      dims=("y", "x", "time"), coords={"time": t})
    path = tmp_path / "cube.nc"
    da.to_netcdf(path)
    return da, path


def test_trend(cube, tmp_path, device):
    da, path = cube
    out = tmp_path / "t.nc"
    assert main(["trend", str(path), "-o", str(out), "--variant", "seasonal", "--period", "12",
                 "--no-progress", "-d", device.slug]) == 0
    ds = xr.open_dataset(out)
    r = clts.trend_test(da.values, variant="seasonal", period=12, device=device)
    assert np.allclose(ds["slope"].values, r.slope, rtol=1e-12)
    assert np.array_equal(ds["trend"].values, r.trend)


def test_mstl(cube, tmp_path, device):
    da, path = cube
    out = tmp_path / "m.nc"
    assert main(["mstl", str(path), "-o", str(out), "--periods", "12,6", "--no-progress",
                 "-d", device.slug]) == 0
    ds = xr.open_dataset(out)
    r = clts.mstl(da.values, (6, 12), device=device)
    assert np.allclose(ds["seasonal_12"].values, r.seasonal[12], rtol=0, atol=1e-12)


def test_bad_options(cube, tmp_path, capsys, device):
    _, path = cube
    assert main(["trend", str(path), "-o", str(tmp_path / "x.nc"), "--variant", "seasonal",
                 "--period", "1", "-d", device.slug]) == 2
    assert "period" in capsys.readouterr().err
    assert main(["mstl", str(path), "-o", str(tmp_path / "y.nc"), "--periods", "12,12",
                 "-d", device.slug]) == 2
