"""Arguments that cannot work are refused before anything is computed or written: a --plot file
matplotlib cannot write (the output was written first, then the command failed), BFAST on a
.npy (no dates), a minimal segment no pixel can hold twice (every pixel failed, exit 0), a
period from a multiplied frequency (statsmodels' rule gives "16D" a weekly period)."""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

import clts
from clts import cli

xr = pytest.importorskip("xarray")


@pytest.fixture
def cube_nc(tmp_path):
    rng = np.random.default_rng(0)
    y = 0.5 + 0.1 * rng.standard_normal((48, 2, 2))
    da = xr.DataArray(y, dims=("time", "y", "x"), name="ndvi",
                      coords={"time": pd.date_range("2000-01-01", periods=48, freq="MS")})
    path = tmp_path / "in.nc"
    da.to_dataset().to_netcdf(path)
    return path


@pytest.mark.parametrize("plot, why", [("p.txt", "does not write .txt"),
                                       ("nodir/p.png", "does not exist")])
def test_bad_plot_path_refused_before_output(tmp_path, cube_nc, plot, why, capsys):
    out = tmp_path / "out.nc"
    rc = cli.main(["stl", str(cube_nc), "--var", "ndvi", "--period", "12", "-o", str(out),
                   "--plot", str(tmp_path / plot), "--no-progress"])
    assert rc == 2 and not out.exists()
    assert why in capsys.readouterr().err


def test_bfast_of_a_npy_names_the_dates(tmp_path, capsys):
    path = tmp_path / "s.npy"
    np.save(path, np.random.default_rng(1).standard_normal((3, 60)))
    rc = cli.main(["bfast", str(path), "--start-monitor", "40", "--freq", "12", "-o",
                   str(tmp_path / "x.nc"), "--no-progress"])
    assert rc == 2 and "a .npy holds none" in capsys.readouterr().err


def test_segments_that_cannot_fit_twice():
    t = 2000 + np.arange(120) / 12
    y = np.random.default_rng(2).standard_normal((120, 3))
    with pytest.raises(ValueError, match="no room for a break"):
        clts.bfast_breaks(y, t, freq=1, h=0.9)
    with pytest.raises(ValueError, match="no room for a break"):
        clts.bfast01(y, t, freq=1, trim=0.6)
    with pytest.raises(ValueError, match="61 of the 120 dates"):
        clts.bfast01(y, t, freq=1, trim=61)
    assert (clts.bfast01(y[:20], t[:20], freq=1).status == 2).all()   # the default: per pixel
    assert (clts.bfast_breaks(y, t, freq=1, h=61).status == 2).all()  # a count: per pixel


@pytest.mark.parametrize("freq", ["16D", "2MS", "12h"])
def test_period_of_a_multiplied_frequency_is_asked_for(freq):
    s = pd.Series(np.random.default_rng(3).random(200),
                  index=pd.date_range("2000-01-01", periods=200, freq=freq))
    with pytest.raises(ValueError, match="give period="):
        clts.stl(s)
    assert clts.stl(s, period=23).trend.shape == (200,)


@pytest.mark.parametrize("argv, message", [
    (["--chunks", "z=2"], "has no dimension 'z'"),            # was silently ignored
    (["--dim", "tim"], "no time dimension 'tim'"),
])
def test_file_options_name_the_file_and_option(tmp_path, cube_nc, argv, message, capsys):
    rc = cli.main(["stl", str(cube_nc), "--var", "ndvi", "--period", "12", "-o",
                   str(tmp_path / "o.nc"), "--no-progress"] + argv)
    assert rc == 2 and message in capsys.readouterr().err


def test_mstl_windows_named_as_windows():
    y = np.random.default_rng(4).standard_normal((2, 120))
    with pytest.raises(ValueError, match="windows"):
        clts.mstl(y, periods=(12,), windows=(4,))


def test_half_segment_rule_is_r_s():
    """strucchange refuses floor(n h) > floor(n / 2) only: h = 0.52 on 20 dates is 10 values."""
    t = 2000 + np.arange(20) / 12
    y = np.random.default_rng(5).standard_normal((20, 2))
    assert clts.bfast_breaks(y, t, freq=1, h=0.52, order=0).status.shape == (2,)
    with pytest.raises(ValueError, match="no room for a break"):
        clts.bfast_breaks(y, t, freq=1, h=0.6)


def test_xarray_break_checks_before_compute():
    n = 40
    da = xr.DataArray(np.random.default_rng(6).standard_normal((n, 2)), dims=("time", "x"),
                      coords={"time": pd.date_range("2000-01-01", periods=n, freq="MS")})
    import clts.xarray as cx
    lazy = da.chunk({"x": 1})
    with pytest.raises(ValueError, match="no room for a break"):
        cx.bfast_breaks(lazy, freq=1, h=0.7)          # raised here, not at .compute()
    with pytest.raises(ValueError, match="no room for a break"):
        cx.bfast01(lazy, freq=1, trim=30)
    with pytest.raises(ValueError, match="two dates"):
        cx.trend_test(da.isel(time=slice(0, 0)), per="year")


def test_mstl_windows_of_dropped_periods_are_not_checked():
    y = np.random.default_rng(7).standard_normal((2, 60))
    with pytest.warns(UserWarning, match="removed"):
        r = clts.mstl(y, periods=(7, 40), windows=(11, 4))   # 40 >= 60 / 2: dropped, as statsmodels
    assert r.seasonal[7].shape == (2, 60)


def test_device_option_types():
    with pytest.raises(TypeError, match="device index"):
        clts.set_options(device=1.5)
    with clts.set_options(device=0):
        assert clts.get_options()["device"] == 0


def test_tune_refuses_emulated_devices_and_bad_arguments(tmp_path, monkeypatch, capsys):
    from clts.tune import cli as tune_cli
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with clts.set_options(emulate="h100"):
        rc = tune_cli.main(["--quick", "--only", "bfast.roc", "-o", str(tmp_path / "p.yaml"),
                            "--no-warmup"])
    assert rc == 2 and "emulates the recorded GPU" in capsys.readouterr().err
    assert not (tmp_path / "p.yaml").exists()
    for argv, why in ((["--strategy", "bogus"], "--strategy"),
                      (["--cache", str(tmp_path)], "is a folder"), (["--only", ","], "names no")):
        assert tune_cli.main(["--dry-run", "--quick"] + argv) == 2
        assert why in capsys.readouterr().err


def test_emulate_option_checked_when_set():
    with pytest.raises(ValueError, match="no recorded device description"):
        clts.set_options(emulate="bogus")
    with pytest.raises(TypeError, match="recorded GPU description"):
        clts.set_options(emulate=1)


def test_device_argument_types():
    for bad in (True, 1.5, [0]):
        with pytest.raises(TypeError, match="device must be"):
            clts.get_device(bad)
    with pytest.raises(TypeError, match="device must be"):
        clts.stl(np.zeros((1, 48)), 12, device=True)


def test_demo_out_dir_that_is_a_file(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from clts.demo import run_demo
    f = tmp_path / "f"
    f.write_text("x")
    assert run_demo(quick=True, out_dir=f) == 2
    assert "is a file" in capsys.readouterr().err


def test_tune_report_reads_the_written_profile(tmp_path):
    from types import SimpleNamespace

    from clts.options import get
    from clts.tune.cli import _written_profile
    (tmp_path / "p.yaml").write_text("schema: 1\n")
    (tmp_path / "other.yaml").write_text("not: a profile: at all\n")   # not searched
    with _written_profile(SimpleNamespace(output=str(tmp_path / "p.yaml"))):
        folder = get("profile_path")[0]
        assert os.listdir(folder) == ["p.yaml"]
        assert os.path.realpath(os.path.join(folder, "p.yaml")) == str(
            (tmp_path / "p.yaml").resolve())
    assert not os.path.exists(folder)


def test_decimal_years_need_a_season_in_years(device):
    """Decimal-year dates with R's ts frequency (23) or the default 365 as freq made a season of
    23 / 365 years: every pixel singular (status 2) or broken at once, silently."""
    rng = np.random.default_rng(0)
    t = 2000 + np.arange(230) / 23
    y = np.sin(2 * np.pi * t)[:, None] + 0.1 * rng.standard_normal((230, 3))
    calls = {"bfast_monitor": lambda **kw: clts.bfast_monitor(y, t, 2006.0, device=device,
                                                              progress=False, **kw),
             "bfast_breaks": lambda **kw: clts.bfast_breaks(y, t, device=device,
                                                            progress=False, **kw),
             "bfast01": lambda **kw: clts.bfast01(y, t, device=device, progress=False, **kw)}
    for name, call in calls.items():
        for freq in ({}, {"freq": 23}):
            with pytest.raises(ValueError, match=r"freq=(23|365) makes the season.*freq=1"):
                call(**freq)
        assert (call(freq=1).status == 0).all(), name
    with pytest.raises(ValueError, match="freq=23 makes the season"):
        clts.bfast.api.check_arguments(t, 2006.0, freq=23)
    # monthly decimal years over 20 years with R's frequency 12: a 12-year season
    tm = 2000 + np.arange(240) / 12
    ym = np.sin(2 * np.pi * tm)[:, None] + 0.1 * rng.standard_normal((240, 2))
    with pytest.raises(ValueError, match=r"freq=12 makes the season 12 units of dates, 144"):
        clts.bfast_breaks(ym, tm, freq=12, device=device)
    assert (clts.bfast_breaks(ym, tm, freq=1, device=device).status == 0).all()
    # other problems of the dates keep their own messages
    with pytest.raises(ValueError, match="finite and strictly increasing|strictly increasing"):
        clts.bfast_monitor(y[:5], np.array([2000.0, 2001, np.nan, 2003, 2004]), 2003.0, k=1)
    # no harmonics, time steps, or a series shorter than a year of decimal years: no objection
    assert (clts.bfast_monitor(y, t, 2006.0, k=0, device=device).status == 0).all()
    assert (clts.bfast_breaks(y, t, order=0, device=device).status == 0).all()
    steps = np.arange(230.0)
    assert (clts.bfast_monitor(y, steps, 150.0, freq=23, device=device).status == 0).all()
    short = 2000 + np.arange(40) / 80
    clts.bfast_monitor(y[:40], short, short[30], freq=1, device=device)
