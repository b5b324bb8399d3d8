"""clts.bfastts against R's bfast::bfastts (tests/data/bfastts_*.csv from
bench/bfastts_fixtures.R): the grid's times bit for bit and every value in place, for daily
("irregular"), 16-day and 10-day grids, leap years, repeated dates and dates sharing a grid
point (R keeps the last in date order, NaN included), unsorted input; the same through pandas
and xarray, any numpy layout, and the errors."""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import clts

DATA = Path(__file__).parent / "data"
pd = pytest.importorskip("pandas")


def _read(name):
    """A fixture file with its floats parsed exactly as written (pandas' C parser before 3.0
    rounded some 17-digit numbers one ulp off: the H200 machine's pandas failed every
    bit-for-bit time comparison)."""
    df = pd.read_csv(DATA / name, dtype=str, keep_default_na=False)
    for col in df.columns:
        try:        # Python's float(): correctly rounded, whatever pandas' parser does
            df[col] = [np.nan if v in ("", "NA") else float(v) for v in df[col]]
        except ValueError:
            df[col] = df[col].replace({"NA": np.nan, "": np.nan})
    return df


def _cases():
    inp = _read("bfastts_input.csv")
    out = _read("bfastts_output.csv")
    for case, g in inp.groupby("case", sort=False):
        cols = [c for c in ("v1", "v2", "v3") if not g[c].isna().all()] or ["v1"]
        yield case, g.type.iloc[0], g.date.to_numpy(), g[cols].to_numpy(), \
            out[out.case == case], cols


CASES = list(_cases())


@pytest.mark.filterwarnings("ignore:bfastts. the smallest gap")
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_equal_to_r(case):
    name, type_, dates, v, want, cols = case
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = clts.bfastts(v, dates, type_)
    assert (name == "16day_8day") == any("past the end" in str(x.message) for x in w)
    np.testing.assert_array_equal(r.time, want.time.to_numpy())
    np.testing.assert_array_equal(r.values, want[cols].to_numpy())
    assert r.freq == int(want.frequency.iloc[0]) and r.values.dtype == np.float64
    assert r.time[0] == want.start.iloc[0] and r.time[-1] == want.end.iloc[0]
    d = dates.astype("datetime64[D]")
    if type_ == "irregular":        # each date's own day; 29 February is 1 March's point
        leap_day = (d.astype("datetime64[M]") - d.astype("datetime64[Y]")).astype(int) == 1
        leap_day &= (d - d.astype("datetime64[M]")).astype(int) == 28
        np.testing.assert_array_equal(r.dates[r.slots], np.where(leap_day, d + 1, d))
    elif name in ("16day_modis", "16day_modis_gaps"):
        np.testing.assert_array_equal(r.dates[r.slots], d)
    elif type_ == "10-day":         # dekads: 1, 11, 21 of the month, every year
        dek = d[(d != np.datetime64("2003-12-31"))]
        np.testing.assert_array_equal(r.dates[r.slots[d != np.datetime64("2003-12-31")]], dek)
    # one series as a vector, and the [pixels, dates] layout
    one = clts.bfastts(v[:, 0], dates, type_)
    np.testing.assert_array_equal(one.values, want[cols[0]].to_numpy())
    np.testing.assert_array_equal(clts.bfastts(np.ascontiguousarray(v.T), dates, type_,
                                               time_axis=-1).values, r.values.T)


def test_the_r_rules_by_hand():
    d = np.array(["2012-03-01", "2012-02-29", "2013-07-04", "2012-02-28", "2013-07-04"],
                 "datetime64[D]")
    v = np.array([3.0, 2.0, 5.0, 1.0, np.nan])
    r = clts.bfastts(v, d)
    t = r.values
    assert r.freq == 365 and t.size == 365 + (185 - 59) + 1      # 28 Feb 2012 .. 4 Jul 2013
    # 29 February then 1 March (date order) on one point: 1 March stays; 4 July twice: the
    # later one, a NaN, stays (R's A[matches] = data); each observation's slot, input order
    assert t[0] == 1.0 and t[1] == 3.0 and np.isnan(t[-1]) and np.isnan(t[2:-1]).all()
    assert r.slots.tolist() == [1, 1, t.size - 1, 0, t.size - 1]
    m = clts.bfastts(v, d, duplicates="mean").values
    assert m[1] == 2.5 and m[-1] == 5.0
    # float32 stays float32; big-endian, Fortran and strided inputs give the same values
    cube = np.random.default_rng(0).random((5, 3, 4))
    want = clts.bfastts(cube, d).values
    for c in (cube.astype(">f8"), np.asfortranarray(cube), np.repeat(cube, 2, 2)[:, :, ::2]):
        np.testing.assert_array_equal(clts.bfastts(c, d).values, want)
    assert clts.bfastts(cube.astype(np.float32), d).values.dtype == np.float32
    assert clts.bfastts(np.arange(5), d).values.dtype == np.float64
    assert want.flags.c_contiguous and want.shape == (t.size, 3, 4)     # the input's layout
    # 16-day: two acquisitions on one date (R divides by a gap of 0) use the distinct dates
    m16 = np.array(["2001-01-01", "2001-01-17", "2001-01-17", "2001-02-02"], "datetime64[D]")
    assert clts.bfastts([1.0, 2.0, 3.0, 4.0], m16, "16-day").values.tolist() == [1, 3, 4]


def test_pandas_and_xarray():
    xr = pytest.importorskip("xarray")
    name, type_, dates, v, want, cols = next(c for c in CASES if c[0] == "16day_modis_gaps")
    idx = pd.DatetimeIndex(dates, name="date")
    df = pd.DataFrame(v, index=idx, columns=["a", "b"])
    r = clts.bfastts(df, type="16-day")
    assert list(r.values.columns) == ["a", "b"] and r.values.index.name == "date"
    np.testing.assert_array_equal(r.values.to_numpy(), want[cols].to_numpy())
    np.testing.assert_array_equal(r.values.index.values.astype("datetime64[D]"), r.dates)
    s = clts.bfastts(df["a"], type="16-day").values
    assert isinstance(s, pd.Series) and s.name == "a"
    da = xr.DataArray(v.T, dims=("pixel", "time"), coords={"time": idx.values, "pixel": [7, 9]},
                      name="ndvi", attrs={"units": "1"})
    out = clts.bfastts(da, type="16-day").values
    assert out.dims == ("pixel", "time") and out.name == "ndvi" and out.attrs["units"] == "1"
    np.testing.assert_array_equal(out.values, want[cols].to_numpy().T)
    np.testing.assert_array_equal(out["decimal_year"].values, want.time.to_numpy())
    assert out["pixel"].values.tolist() == [7, 9]
    np.testing.assert_array_equal(clts.bfastts(da.rename(time="t"), type="16-day",
                                               time_axis=-1).values.values, out.values)


def test_errors():
    d = np.array(["2012-01-01", "2012-01-05"], "datetime64[D]")
    with pytest.raises(ValueError, match="type"):
        clts.bfastts([1.0, 2.0], d, "monthly")
    with pytest.raises(ValueError, match="duplicates"):
        clts.bfastts([1.0, 2.0], d, duplicates="first")
    with pytest.raises(TypeError, match="dates"):
        clts.bfastts([1.0, 2.0], [2012.0, 2012.1])
    with pytest.raises(ValueError, match="NaT"):
        clts.bfastts([1.0, 2.0], np.array(["2012-01-01", "NaT"], "datetime64[D]"))
    with pytest.raises(ValueError, match="time_axis=1"):
        clts.bfastts(np.zeros((3, 2)), d)
    with pytest.raises(ValueError, match="dates is None"):
        clts.bfastts([1.0, 2.0])
    with pytest.raises(TypeError, match="numbers"):
        clts.bfastts(np.array(["a", "b"]), d)
    with pytest.raises(ValueError, match="whole number"):     # R's ts() refuses it too
        clts.bfastts([1.0, 2.0, 3.0], np.array(["2001-01-01", "2001-01-17", "2002-06-01"],
                                               "datetime64[D]"), "16-day")


@pytest.mark.parametrize("type_", ["16-day", "irregular"])
def test_into_bfast_monitor_and_breaks_as_r(type_, device):
    """R's bfastmonitor(bfastts(som$NDVI.b, dates, type), start = c(2010, 1)) and bfastlite(...,
    breaks = 3) are clts.bfast_monitor / bfast_breaks on (values, time) with freq=1."""
    som = _read("bfastts_som.csv")
    want = _read("bfastts_som_r.csv").set_index("type").loc[type_]
    r = clts.bfastts(som.y.to_numpy(), som.date.to_numpy(), type_)
    assert r.values.size == want.n
    m = clts.bfast_monitor(r.values, r.time, 2010.0, freq=1, device=device, progress=False)
    assert float(m.break_dates) == want.break_date
    np.testing.assert_allclose(float(m.magnitudes), want.magnitude, rtol=1e-9)
    b = clts.bfast_breaks(r.values, r.time, freq=1, breaks=3, device=device, progress=False)
    among_valid = np.cumsum(~np.isnan(r.values))[b.breakpoints[:int(b.n_breaks)].ravel()]
    assert among_valid.tolist() == [int(x) for x in want.bp.split()]
