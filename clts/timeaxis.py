"""Time axes of every kind, told apart and checked one way: numbers (time steps, decimal years,
any unit), numpy datetime64, and cftime dates of every CF calendar (``standard``, ``noleap`` /
``365_day``, ``all_leap`` / ``366_day``, ``360_day``, ``julian``, ``proleptic_gregorian``),
as climate-model output holds them. Plain numpy; cftime is imported only for cftime axes."""
from __future__ import annotations

import datetime as _dt
import re

import numpy as np

#: days in a year of each CF calendar (slopes "per year", BFAST's season length)
YEAR_DAYS = {"noleap": 365.0, "365_day": 365.0, "all_leap": 366.0, "366_day": 366.0,
             "360_day": 360.0, "julian": 365.25, "standard": 365.25, "gregorian": 365.25,
             "proleptic_gregorian": 365.25}


def _first(a):
    for v in a.ravel():
        if v is not None:
            return v
    return None


def is_cftime(values) -> bool:
    """Whether ``values`` (array-like) holds cftime dates."""
    a = np.asarray(values)
    if a.dtype != object or a.size == 0:
        return False
    v = _first(a)
    return hasattr(v, "calendar") and type(v).__module__.startswith("cftime")


def kind(values, name: str = "time") -> str:
    """"datetime" (datetime64), "cftime" or "number"; a TypeError for anything else."""
    a = np.asarray(values)
    if a.dtype.kind == "M":
        return "datetime"
    if a.dtype.kind in "fiu":
        return "number"
    if is_cftime(a):
        return "cftime"
    if a.dtype == object and a.size and all(isinstance(v, (_dt.date, np.datetime64))
                                             for v in a.ravel()):
        return "datetime"
    raise TypeError(f"the {name} axis must hold numbers, datetime64 or cftime dates, got "
                    f"dtype {a.dtype}" + (f" ({type(_first(a)).__name__})" if a.size else ""))


def calendar(values) -> str:
    """The cftime calendar of ``values`` (one for all; a ValueError for a mix)."""
    a = np.asarray(values).ravel()
    cals = {getattr(v, "calendar", None) for v in a if v is not None}
    if len(cals) != 1 or None in cals:
        raise ValueError(f"the time axis mixes calendars ({', '.join(map(str, cals))})")
    return cals.pop()


def days(values, origin=None) -> np.ndarray:
    """Dates as float64 days since ``origin`` (default: 1 January of the first date's year, in
    its calendar); numbers are returned as float64."""
    a = np.asarray(values)
    k = kind(a)
    if k == "number":
        return a.astype(np.float64)
    if k == "datetime":
        unit = np.datetime_data(a.dtype)[0]      # seconds, or finer when given finer (10 Hz)
        d = a.astype("datetime64[s]") if unit in ("Y", "M", "W", "D", "h", "m", "s") else a
        o = d.ravel()[0].astype("datetime64[Y]") if origin is None else np.datetime64(origin)
        return (d - o.astype(d.dtype)) / np.timedelta64(1, "D")
    import cftime
    cal = calendar(a)
    if origin is None:
        origin = f"{_first(a).year:04d}-01-01"
    flat = [v for v in a.ravel()]
    return np.asarray(cftime.date2num(flat, f"days since {origin}", calendar=cal),
                      dtype=np.float64).reshape(a.shape)


def year_days(values) -> float:
    """Days in a year on this axis's calendar (365.25 for datetime64)."""
    if kind(values) == "cftime":
        return YEAR_DAYS.get(calendar(values), 365.25)
    return 365.25


def check_increasing(values, what: str, hint: str = "") -> None:
    """A ValueError naming the first position where ``values`` does not strictly increase
    (out of order or a duplicate); numbers, datetime64 and cftime alike."""
    a = np.asarray(values).ravel()
    if a.size < 2:
        return
    t = days(a, origin="1970-01-01" if kind(a) != "number" else None)
    d = np.diff(t)
    bad = ~(d > 0)
    if bad.any():
        i = int(np.argmax(bad))
        why = "a duplicate" if d[i] == 0 else "out of order"
        raise ValueError(f"{what} is not strictly increasing (at position {i + 1}: {a[i]} then "
                         f"{a[i + 1]}, {why}){hint}")


_DATE = re.compile(r"^\s*(-?\d{1,4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2}))?)?\s*$")


def parse_date(text, like):
    """``text`` ("YYYY-MM-DD[THH:MM[:SS]]") as a date of the axis ``like``: a datetime64 or a
    cftime date of its calendar; a ValueError naming the text otherwise."""
    k = kind(like)
    if k == "number":
        raise ValueError(f"{text!r} is a date but the time axis holds numbers")
    if k == "datetime":
        try:
            return np.datetime64(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a date (YYYY-MM-DD)") from None
    m = _DATE.match(str(text))
    if not m:
        raise ValueError(f"{text!r} is not a date (YYYY-MM-DD)")
    import cftime
    parts = [int(p) if p else 0 for p in m.groups()]
    try:
        return cftime.datetime(*parts, calendar=calendar(like))
    except ValueError as exc:
        raise ValueError(f"{text!r} is not a date of the {calendar(like)} calendar "
                         f"({exc})") from None


def show(value) -> str:
    """A date or number as a user reads it (2005-01-01, not a day count)."""
    if isinstance(value, np.datetime64):
        return str(value.astype("datetime64[D]")) if value == value.astype(
            "datetime64[D]") else str(value)
    if hasattr(value, "calendar") and hasattr(value, "strftime"):
        return value.strftime("%Y-%m-%d") if (value.hour, value.minute, value.second) == (
            0, 0, 0) else str(value)
    return str(value)


def plottable(values):
    """``values`` as matplotlib draws them: cftime dates as decimal years of their calendar
    (matplotlib knows no cftime without an extra package), anything else as it is."""
    a = np.asarray(values)
    if not is_cftime(a):
        return a
    ok = np.array([v is not None for v in a.ravel()]).reshape(a.shape)
    year0 = _first(a).year
    out = np.full(a.shape, np.nan)
    out[ok] = year0 + days(a[ok], f"{year0:04d}-01-01") / year_days(a[ok])   # None: NaN
    return out


def freq_to_period(freq) -> int:
    """Values per seasonal cycle of a pandas frequency, by statsmodels' rules
    (``statsmodels.tsa.tsatools.freq_to_period``): yearly 1, quarterly 4, monthly 12, weekly
    52, daily 7, business-daily 5, hourly 24; another frequency, or a multiple of one ("16D",
    "2MS": statsmodels would give the single step's period), is a ValueError."""
    from pandas.tseries.frequencies import to_offset
    off = to_offset(freq)
    code = off.rule_code.upper()
    if off.n != 1:          # statsmodels reads "16D" as daily (7): not this axis's cycle
        hint = ""
        if off.n < 1:
            raise ValueError(f"period is None and the time index's frequency {off.freqstr!r} "
                             "runs backwards: sort the index, or give period=")
        try:
            hint = f" (a year is {365.2425 * 86400e9 / off.nanos:.1f} of its steps)"
        except ValueError:      # months, quarters, years: no fixed length
            hint = " (the number of steps in one seasonal cycle)"
        raise ValueError(f"period is None and the time index's frequency {off.freqstr!r} is "
                         f"{off.n} steps of {code}: statsmodels' rule would give the period of one "
                         f"{code} step, not of this axis; give period={hint}")
    if code in ("A", "Y") or code.startswith(("A-", "AS-", "Y-", "YS-", "YE-")):
        return 1
    if code == "Q" or code.startswith(("Q-", "QS", "QE")):
        return 4
    if code == "M" or code.startswith(("M-", "MS", "ME")):
        return 12
    if code == "W" or code.startswith("W-"):
        return 52
    periods = {"D": 7, "B": 5, "H": 24}
    if code in periods:
        return periods[code]
    raise ValueError(f"period is None and the time index's frequency {off.freqstr!r} has no "
                     "seasonal period by statsmodels' rules (yearly, quarterly, monthly, weekly, "
                     "daily, business-daily, hourly): give period=")


def period_of(times) -> int:
    """The seasonal period implied by regularly spaced datetime ``times`` (a pandas index or a
    datetime64 array: pandas' ``inferred_freq``, then :func:`freq_to_period`)."""
    import pandas as pd
    if times is None:
        raise ValueError("period is None: give period=, or y as a pandas / xarray object with "
                         "a datetime time index")
    idx = times if isinstance(times, pd.DatetimeIndex) else None
    if idx is None:
        try:
            idx = pd.DatetimeIndex(np.asarray(times))
        except (TypeError, ValueError):
            idx = None
        if idx is None or np.asarray(times).dtype.kind != "M":
            raise ValueError("period is None and the time axis is not datetime: give period=")
    # freq="infer" gives the offset inferred_freq names, without pandas 3's FutureWarning about
    # inferred_freq's type, and so without a warnings.catch_warnings block: that changes the
    # filters of the whole process, not of this call (threads raced with it)
    freq = idx.freq or (pd.DatetimeIndex(idx, freq="infer").freq if len(idx) >= 3 else None)
    if freq is None:
        raise ValueError("period is None and the time index has no regular frequency "
                         "(pandas inferred_freq is None): give period=")
    return freq_to_period(freq)


def check_fits(shape, axis: int, fits, what: str, name: str = "y") -> None:
    """The one time-axis mismatch check of the numpy edge.

    ``what`` (an argument as the user wrote it: ``"period=12"``, ``"dates (120 entries)"``)
    needs a time axis for which ``fits(length)`` is true. When the axis read as time
    (``axis`` of ``shape``) does not fit but another axis does, the call was meant with time
    there: a ValueError naming the argument and the ``time_axis=`` that reads it so. Nothing
    when the time axis fits (a correct call is never questioned) or when no axis fits (the
    function's own check then says what is wrong). Guesses from the shape alone are never made:
    a call that runs is left alone, whatever its shape."""
    shape = tuple(int(s) for s in shape)
    if not shape:
        return
    axis = int(axis) % len(shape)
    if fits(shape[axis]):
        return
    others = [j for j, s in enumerate(shape) if j != axis and fits(s)]
    if not others:
        return
    fits_at = ", ".join(f"axis {k} ({shape[k]} values)" for k in others)
    alt = " or ".join(f"time_axis={k}" for k in others)
    raise ValueError(
        f"{what} does not fit the time axis of {name}: {name} of shape {shape} is read with "
        f"time on axis {axis} ({shape[axis]} values) but fits {fits_at}; if time runs along "
        f"that axis give {alt} (docs/api-conventions.md, 'Where time is')")
