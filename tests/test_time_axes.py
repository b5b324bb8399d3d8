"""Time axes of every kind: numbers (steps, decimal years) stay numbers, datetime64 and every
cftime calendar work in clts.xarray, the labelled numpy functions and every subcommand; order
and duplicates are checked for all of them; slopes come per the axis's unit."""
from __future__ import annotations

import numpy as np
import pytest

import clts
from clts import cli

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")
cftime = pytest.importorskip("cftime")
pytest.importorskip("h5netcdf")
pytest.importorskip("zarr")
import clts.xarray as cx  # noqa: E402

CALENDARS = ["noleap", "360_day", "all_leap", "julian", "standard", "proleptic_gregorian"]
N = 96


def cube(time, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(N)
    y = (0.01 * t + np.sin(2 * np.pi * t / 12))[:, None] + 0.02 * rng.standard_normal((N, 3))
    y[80:, 0] += 1.5
    return xr.DataArray(y, dims=("time", "x"), coords={"time": time}, name="v")


def cf_time(calendar, n=N):
    return xr.date_range("2000-01-01", periods=n, freq="MS", calendar=calendar,
                         use_cftime=True)


@pytest.mark.parametrize("calendar", CALENDARS)
def test_every_calendar_in_clts_xarray(calendar):
    da = cube(cf_time(calendar))
    plain = cube(np.arange(N))
    s = cx.stl(da, 12)
    np.testing.assert_array_equal(s["trend"].values, cx.stl(plain, 12)["trend"].values)
    slope = cx.trend_slope(s)
    assert slope.attrs["units"] == "per year"
    # 0.01 per month = 0.12 per year of the calendar, whatever its length
    np.testing.assert_allclose(slope.values[1:], 0.12, rtol=0.05)
    b = cx.bfast_monitor(da, "2005-01-01", freq=cx_year(calendar))
    assert b["breaks"].values[0] >= 0 and (b["breaks"].values[1:] == -1).all()
    assert b["break_dates"].values[0].calendar == da["time"].values[0].calendar
    assert b["break_dates"].values[1] is None
    m = cx.matrix_profile(da, 12)
    i = m["index"].values
    assert (m["neighbour"].values[:, 0] == da["time"].values[i[:, 0]]).all()
    np.testing.assert_array_equal(m["profile"].values,
                                  cx.matrix_profile(plain, 12)["profile"].values)


def cx_year(calendar):
    from clts.timeaxis import YEAR_DAYS
    return YEAR_DAYS[calendar]


@pytest.mark.parametrize("time", [
    cf_time("noleap"), cf_time("360_day"), pd.date_range("2000-01-01", periods=N, freq="MS"),
    np.arange(N) * 1.0, 2000 + np.arange(N) / 12])
@pytest.mark.parametrize("fault", ["shuffled", "duplicate"])
def test_order_and_duplicates_checked_for_every_kind(time, fault):
    da = cube(np.asarray(time))
    if fault == "shuffled":
        da = da.isel(time=np.r_[0, 2, 1, 3:N])
    else:
        da = da.assign_coords(time=np.r_[da["time"].values[:5], da["time"].values[4:N - 1]])
    start = da["time"].values[60] if da["time"].dtype != object else "2005-01-01"
    for call in (lambda: cx.stl(da, 12), lambda: cx.trend_slope(da, 12),
                 lambda: cx.matrix_profile(da, 12), lambda: cx.bfast_monitor(da, start, freq=12)):
        with pytest.raises(ValueError, match="not strictly increasing .*" + (
                "out of order" if fault == "shuffled" else "a duplicate")):
            call()


def test_numbers_stay_numbers_and_slopes_follow_the_unit():
    steps = cube(np.arange(N))
    s = cx.stl(steps, 12)
    per_step = cx.trend_slope(s)
    assert per_step.attrs["units"] == "per step"
    assert cx.trend_slope(cx.stl(cube(2 * np.arange(N)), 12)).attrs["units"] == \
        "per coordinate unit"
    np.testing.assert_allclose(per_step.values[1:], 0.01, rtol=0.05)
    assert cx.trend_slope(s, time_unit="month").attrs["units"] == "per month"
    years = cube(2000 + np.arange(N) / 12)
    np.testing.assert_allclose(cx.trend_slope(years, 12).values[1:], 0.12, rtol=0.05)
    assert cx.trend_slope(cube(cf_time("noleap")), 12, per="step").attrs["units"] == "per step"
    with pytest.raises(ValueError, match="per='day' needs a date"):
        cx.trend_slope(s, per="day")


def test_labelled_numpy_functions_take_cftime():
    da = cube(cf_time("360_day"))
    r = clts.bfast_monitor(da, None, "2005-01-01", freq=360)
    ref = clts.bfast_monitor(da.values, np.arange(N) * 30.0, 5 * 360.0, freq=360)
    np.testing.assert_array_equal(np.asarray(r.breaks), ref.breaks)
    with pytest.raises(ValueError, match=r"start_monitor \(2030-01-01\) must lie after the "
                                         r"first date \(2000-01-01\)"):
        clts.bfast_monitor(da, None, "2030-01-01", freq=360)
    with pytest.raises(ValueError, match="not a date of the 360_day calendar"):
        clts.bfast_monitor(da, None, "2005-02-31", freq=360)
    ser = da.isel(x=1).to_series()
    assert isinstance(ser.index, xr.CFTimeIndex)
    st = clts.stl(ser, 12)
    assert st.trend.index.equals(ser.index)
    mp = clts.matrix_profile(ser, 12)
    assert mp.times[0] == ser.index[0]


# ---------------------------------------------------------------------- the command line

def run(*argv):
    return cli.main(list(map(str, argv)) + ["--no-progress"])


def test_cli_numeric_csv(tmp_path, capsys):
    y = cube(np.arange(N)).values
    pd.DataFrame({"a": y[:, 0], "b": y[:, 1]}, index=pd.Index(np.arange(N), name="t")).to_csv(
        tmp_path / "num.csv")
    assert run("bfast", tmp_path / "num.csv", "--var", "a", "--start-monitor", "72", "--freq",
               12, "-o", tmp_path / "b.nc") == 0
    ref = clts.bfast_monitor(y[:, 0], np.arange(N), 72., freq=12)
    got = xr.open_dataset(tmp_path / "b.nc", engine="h5netcdf")
    assert int(got["breaks"]) == ref.breaks and float(got["break_dates"]) == ref.break_dates
    assert run("bfast", tmp_path / "num.csv", "--var", "a", "--start-monitor", "72",
               "--time-unit", "month", "-o", tmp_path / "b2.nc") == 0
    assert int(xr.open_dataset(tmp_path / "b2.nc", engine="h5netcdf")["breaks"]) == ref.breaks
    assert run("bfast", tmp_path / "num.csv", "--var", "a", "--start-monitor", "72",
               "--time-unit", "step", "-o", tmp_path / "b3.nc") == 2
    assert "give --freq" in capsys.readouterr().err
    assert run("stl", tmp_path / "num.csv", "--var", "b", "-p", 12, "--time-unit", "month",
               "-o", tmp_path / "s.nc") == 0
    s = xr.open_dataset(tmp_path / "s.nc", engine="h5netcdf")
    assert s["time"].dtype.kind == "i" and s["trend_slope"].attrs["units"] == "per month"
    np.testing.assert_allclose(float(s["trend_slope"]), 0.01, rtol=0.05)
    # decimal years stay apart (no duplicate timestamps)
    pd.DataFrame({"a": y[:, 1]}, index=pd.Index(2000 + np.arange(N) / 12, name="t")).to_csv(
        tmp_path / "dec.csv")
    assert run("stl", tmp_path / "dec.csv", "-p", 12, "--time-unit", "year", "-o",
               tmp_path / "d.nc") == 0
    np.testing.assert_allclose(float(xr.open_dataset(tmp_path / "d.nc", engine="h5netcdf")[
        "trend_slope"]), 0.12, rtol=0.05)
    assert run("bfast", tmp_path / "num.csv", "--var", "a", "--start-monitor", "2005-01-01",
               "--freq", 12, "-o", tmp_path / "b4.nc") == 2
    assert "holds numbers" in capsys.readouterr().err


@pytest.mark.parametrize("calendar", ["noleap", "360_day", "julian"])
def test_cli_cftime_files(tmp_path, capsys, calendar):
    da = cube(cf_time(calendar))
    da.to_dataset().to_netcdf(tmp_path / "cf.nc", engine="h5netcdf")
    assert run("stl", tmp_path / "cf.nc", "-p", 12, "-o", tmp_path / "s.zarr") == 0
    s = xr.open_zarr(tmp_path / "s.zarr")
    np.testing.assert_allclose(s["trend_slope"].values[1:], 0.12, rtol=0.05)
    assert run("mp", tmp_path / "cf.nc", "-m", 12, "-o", tmp_path / "m.nc") == 0
    m = xr.open_dataset(tmp_path / "m.nc", engine="h5netcdf")
    assert m["neighbour"].dtype == np.float64 and m["neighbour"].attrs["calendar"] == calendar
    want = cx.matrix_profile(da, 12)["neighbour"].values
    since = m["neighbour"].attrs["since"]
    back = cftime.num2date(m["neighbour"].values, f"days since {since}", calendar=calendar)
    assert (back == want).all()
    assert run("bfast", tmp_path / "cf.nc", "--start-monitor", "2005-01-01", "-o",
               tmp_path / "b.nc") == 0
    ref = cx.bfast_monitor(da, "2005-01-01", freq=cx_year(calendar))
    b = xr.open_dataset(tmp_path / "b.nc", engine="h5netcdf")
    np.testing.assert_array_equal(b["breaks"].values, ref["breaks"].values)
    assert np.isnan(b["break_dates"].values[1:]).all()
    assert run("bfast", tmp_path / "cf.nc", "--start-monitor", "2030-01-01", "-o",
               tmp_path / "b2.nc") == 2
    assert run("bfast", tmp_path / "cf.nc", "--start-monitor", "96", "-o",
               tmp_path / "b2.nc") == 2
    err = capsys.readouterr().err
    assert "start_monitor (2030-01-01) must lie after the first date (2000-01-01)" in err
    assert "'96' is not a date" in err
    assert not (tmp_path / "b2.nc").exists()


def test_cli_dates_start_monitor_out_of_range_in_dates(tmp_path, capsys):
    cube(pd.date_range("2000-01-01", periods=N, freq="MS")).to_dataset().to_netcdf(
        tmp_path / "c.nc", engine="h5netcdf")
    assert run("bfast", tmp_path / "c.nc", "--start-monitor", "2030-01-01", "-o",
               tmp_path / "b.nc") == 2
    assert ("start_monitor (2030-01-01) must lie after the first date (2000-01-01) and at or "
            "before the last date (2007-12-01)") in capsys.readouterr().err
    assert run("stl", tmp_path / "c.nc", "-p", 12, "--time-unit", "month", "-o",
               tmp_path / "s.nc") == 2
    assert "--time-unit is for a time axis of numbers" in capsys.readouterr().err


def test_cli_plots_on_cftime_axes(tmp_path):
    pytest.importorskip("matplotlib")
    da = cube(cf_time("360_day"))
    da.to_dataset().to_netcdf(tmp_path / "cf.nc", engine="h5netcdf")
    da.isel(x=0).to_dataset().to_netcdf(tmp_path / "one.nc", engine="h5netcdf")
    for i, argv in enumerate((["stl", "cf.nc", "-p", 12], ["mp", "cf.nc", "-m", 12],
                              ["bfast", "one.nc", "--start-monitor", "2005-01-01"])):
        png = tmp_path / f"p{i}.png"
        assert run(argv[0], tmp_path / argv[1], *argv[2:], "-o", tmp_path / f"o{i}.nc",
                   "--plot", png) == 0
        assert png.read_bytes()[:4] == b"\x89PNG"
