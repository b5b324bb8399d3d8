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


def test_trend(cube, tmp_path, any_device):
    da, path = cube
    out = tmp_path / "t.nc"
    assert main(["trend", str(path), "-o", str(out), "--variant", "seasonal", "--period", "12",
                 "--no-progress", "-d", any_device.slug]) == 0
    ds = xr.open_dataset(out)
    r = clts.trend_test(da.values, variant="seasonal", period=12, device=any_device)
    assert np.allclose(ds["slope"].values, r.slope, rtol=1e-12)
    assert np.array_equal(ds["trend"].values, r.trend)


def test_mstl(cube, tmp_path, any_device):
    da, path = cube
    out = tmp_path / "m.nc"
    assert main(["mstl", str(path), "-o", str(out), "--periods", "12,6", "--no-progress",
                 "-d", any_device.slug]) == 0
    ds = xr.open_dataset(out)
    r = clts.mstl(da.values, (6, 12), device=any_device)
    assert np.allclose(ds["seasonal_12"].values, r.seasonal[12], rtol=0, atol=1e-12)


def test_bad_options(cube, tmp_path, capsys, any_device):
    _, path = cube
    assert main(["trend", str(path), "-o", str(tmp_path / "x.nc"), "--variant", "seasonal",
                 "--period", "1", "-d", any_device.slug]) == 2
    assert "period" in capsys.readouterr().err
    assert main(["mstl", str(path), "-o", str(tmp_path / "y.nc"), "--periods", "12,12",
                 "-d", any_device.slug]) == 2


NO_DASK = ("import sys; sys.modules['dask'] = None; from clts.cli import main; "
           "sys.exit(main(sys.argv[1:]))")


def test_netcdf_without_dask(cube, tmp_path, any_device):
    """Dask is an optional extra: without it a NetCDF input is read and the result written in
    one pass (the H100 machine had no Dask: every NetCDF command failed with "chunk manager
    'dask' is not available"); --chunks then says it needs Dask."""
    import os
    import subprocess
    import sys
    da, path = cube
    out = tmp_path / "t.nc"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
        os.path.dirname(os.path.dirname(clts.__file__)), os.environ.get("PYTHONPATH")])))
    run = [sys.executable, "-c", NO_DASK, "trend", str(path), "-o", str(out), "--variant",
           "seasonal", "--period", "12", "--no-progress", "-d", any_device.slug]
    p = subprocess.run(run, capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    r = clts.trend_test(da.values, variant="seasonal", period=12, device=any_device)
    with xr.open_dataset(out) as ds:
        assert np.array_equal(ds["trend"].values, r.trend)
    p = subprocess.run(run[:6] + [str(tmp_path / "c.nc")] + run[7:] + ["--chunks", "y=1"],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 2 and "needs Dask" in p.stderr, p.stderr


NO_H5NETCDF = ("import sys; sys.modules['h5netcdf'] = None; sys.modules['netCDF4'] = None; "
               "from clts.cli import main; sys.exit(main(sys.argv[1:]))")


def test_netcdf_without_h5netcdf(cube, tmp_path, any_device):
    """h5netcdf (the io extra) missing, as on the H200 machine, where every NetCDF command
    failed with ModuleNotFoundError: the result is written with the next back end that
    imports (scipy's NetCDF-3 here) and reads back the same."""
    import os
    import subprocess
    import sys
    pytest.importorskip("scipy")
    da, _ = cube
    path = tmp_path / "cube3.nc"                 # NetCDF-3: what that machine could read
    da.to_netcdf(path, engine="scipy")
    out = tmp_path / "t.nc"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
        os.path.dirname(os.path.dirname(clts.__file__)), os.environ.get("PYTHONPATH")])))
    p = subprocess.run([sys.executable, "-c", NO_H5NETCDF, "trend", str(path), "-o", str(out),
                        "--variant", "seasonal", "--period", "12", "--no-progress",
                        "-d", any_device.slug], capture_output=True, text=True, env=env,
                       timeout=300)
    assert p.returncode == 0, p.stderr
    r = clts.trend_test(da.values, variant="seasonal", period=12, device=any_device)
    with xr.open_dataset(out) as ds:
        assert np.array_equal(ds["trend"].values, r.trend)
        assert np.allclose(ds["slope"].values, r.slope, rtol=1e-12)
