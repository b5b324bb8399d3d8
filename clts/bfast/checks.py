"""The checks of ``clts.bfast_monitor``'s arguments and dates, apart from the data and the
device: the call makes them first, and callers that must refuse bad arguments before they start
(the command line, before it writes a file) make them through :func:`check_arguments`."""
from __future__ import annotations

import math
from datetime import date as _date

import numpy as np

from ..timeaxis import YEAR_DAYS, calendar, is_cftime, kind, parse_date, show
from .common import CONVENTIONS, HISTORIES, check_increasing, end_of_history
from .common import time_axis as _time_axis


from .monitor_types import TYPES, check_type, critval as _critval  # noqa: F401 (TYPES public)


def check_params(k, freq, hfrac, level, period, history, convention, trend, type="OLS-MOSUM"):
    check_type(type, convention)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= 10:
        raise ValueError(f"k (harmonic terms) must be an integer in 0..10, got {k!r}")
    if k == 0 and not trend:
        raise ValueError("k=0 and trend=False leave only the intercept: give a season (k >= 1, "
                         "R's response ~ harmon) or the trend (R's response ~ trend)")
    if freq is not None and not (isinstance(freq, (int, float, np.number)) and freq > 0
                                 and math.isfinite(freq)):
        raise ValueError(f"freq must be a positive number (season length in time-axis units), got {freq!r}")
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    if isinstance(history, str) and history not in HISTORIES:
        try:
            np.datetime64(history)
        except ValueError:
            raise ValueError(f"history must be one of {HISTORIES}, a date or a time, got "
                             f"{history!r}") from None
    if not isinstance(trend, (bool, np.bool_)):
        raise TypeError(f"trend must be True or False, got {trend!r}")
    return _critval(type, hfrac, level, period, 2 * k + (2 if trend else 1), convention)


def check_history(history, dates):
    """``history`` checked against the axis: "all" / "ROC" / "BP", else a start of the axis's
    kind, a date for dates (a string becomes a datetime64), a finite number for numbers; errors
    name ``history`` (they named ``start_monitor``, and ``True`` passed as the time 1.0)."""
    if isinstance(history, str) and history in HISTORIES:
        return history
    if isinstance(history, (bool, np.bool_)):
        raise TypeError(f"history must be one of {HISTORIES}, a date or a time, not {history!r}")
    number = isinstance(history, (int, float, np.integer, np.floating))
    if number and not math.isfinite(history):
        raise ValueError(f"history (a start time) must be a finite number, got {history!r}")
    try:
        axis = kind(np.asarray(dates).ravel(), "dates")
    except TypeError:
        return history          # the dates' own check says what is wrong with them
    if axis == "number" and not number:
        raise TypeError(f"history {show(history)} is a date but dates are numbers: give the "
                        "history's start as a time of the axis (e.g. 2004.0)")
    if axis != "number" and number:
        raise TypeError(f"history {history!r} is a number but dates are dates: give the "
                        "history's start as a date (e.g. '2004-01-01')")
    if not number and not isinstance(history, (str, np.datetime64, _date)) \
            and not is_cftime(np.array([history], dtype=object)):
        raise TypeError(f"history must be one of {HISTORIES}, a date or a time, got "
                        f"{type(history).__name__}")
    return np.datetime64(history) if isinstance(history, str) else history


def history_end(t, ts, dates, start_monitor) -> int:
    """end_of_history, its range error in dates when the axis holds dates."""
    try:
        return end_of_history(t, ts)
    except ValueError:
        dd = np.asarray(dates).ravel()
        if kind(dd) == "number":
            raise
        raise ValueError(f"start_monitor ({show(start_monitor)}) must lie after the first date "
                         f"({show(dd[0])}) and at or before the last date ({show(dd[-1])}) "
                         "of the time axis") from None


def check_arguments(dates, start_monitor, *, k=3, freq=None, trend=True, hfrac=0.25,
                    level=0.05, history="all", convention="r", period=10, type="OLS-MOSUM", **_):
    """The checks :func:`bfast_monitor` makes of its arguments and dates, without data or a
    device (for callers that must refuse bad arguments before they start, as the command line
    does before it writes a file). Raises as :func:`bfast_monitor` would."""
    check_params(k, freq, hfrac, levels(level)[0], period, history, convention, trend, type)
    check_history(history, dates)
    if isinstance(start_monitor, str) and not is_cftime(dates):
        start_monitor = parse_date(start_monitor, np.array([], "datetime64[D]"))
    check_season_units(dates, default_freq(freq, dates), k, _.get("formula"))
    t, ts = _time_axis(dates, start_monitor)
    check_increasing(t)
    history_end(t, ts, dates, start_monitor)


def levels(level):
    """(monitoring level, ROC history-test level) from R's ``level``: one number for both,
    or a pair."""
    if isinstance(level, (tuple, list, np.ndarray)):
        if len(level) != 2:
            raise ValueError(f"level must be a number or a pair (monitoring, history test), "
                             f"got {level!r}")
        return float(level[0]), float(level[1])
    return level, level


def default_freq(freq, dates) -> float:
    """``freq``, or for None a year of the calendar of ``dates`` in days: 365.0 for datetime64
    and numbers (R's ``bfastts`` daily series), 365 / 366 / 360 for cftime's ``noleap`` /
    ``all_leap`` / ``360_day``, 365.0 for cftime's other calendars."""
    if freq is not None:
        return freq
    if is_cftime(dates):
        days = YEAR_DAYS.get(calendar(np.asarray(dates).ravel()), 365.0)
        return 365.0 if days == 365.25 else float(days)
    return 365.0


def check_season_units(dates, freq, order: int, formula=None) -> None:
    """Refuse a ``freq`` given as a count of values per season (R's ``ts`` frequency: 12, 23)
    on numeric dates that advance one unit a season (decimal years), where it is the season's
    length in the units of dates: dates ``1 / freq`` apart, or numbers between 1000 and 3000
    with fractions (decimal years) under a season longer than the whole series (the default
    365 days). The harmonics of such a season fit the trend, not the year: every pixel
    singular, or a break at once. Only a model with harmonics (``order`` > 0, and ``harmon``
    in ``formula`` when one is given); other date problems are left to the date checks."""
    d = np.asarray(dates).ravel()
    harmonics = order > 0 and (formula is None or "harmon" in str(formula))
    if not harmonics or d.size < 2 or not freq > 1:
        return
    try:
        if kind(d) != "number":
            return
        d = d.astype(np.float64)
    except (TypeError, ValueError):
        return
    if not np.isfinite(d).all():
        return
    lo, hi = float(d.min()), float(d.max())
    step = float(np.median(np.diff(d)))
    per_unit = step > 0 and abs(freq * step - 1) < 0.05          # freq values make one unit
    years = 1000 <= lo and hi <= 3000 and max(hi - lo, 1.0) < freq and not (d == d.round()).all()
    if per_unit or years:
        raise ValueError(f"freq={freq:g} makes the season {freq:g} units of dates, "
                         f"{freq / step:.0f} values of {step:g} ({lo:g} .. {hi:g}), "
                         + ("longer than the whole series: " if years else "")
                         + "freq is the season's length in the units of dates, not a count of "
                         "values per season (R's ts frequency): give freq=1 for decimal years "
                         "(the CLI: --freq 1 or --time-unit year), or dates that count time "
                         "steps (0, 1, 2, ...) with freq values per season")


def time_axis_and_dates(y, dates, time_axis):
    """The time axis of ``y`` (its labels for pandas / xarray input) and ``dates``: as given, or
    the labels of that axis when None."""
    from ..runtime.arrays import values_of
    from ..runtime.integrations import time_axis_of
    labels = time_axis_of(y, time_axis, 0)
    if dates is None:
        dates = labels.times()
        if dates is None:
            raise ValueError("dates is None: give the dates, or y as a pandas / xarray object "
                             "whose time axis is labelled")
        dates = values_of(dates)
    return labels, dates


def monitor_dates(dates, t, n):
    """(every date, the monitoring dates, the break date of "no break") of ``dates``: numbers
    as float64, datetime64 as is, cftime dates as objects (None for no break)."""
    bd_src = np.asarray(dates).ravel() if np.asarray(dates).dtype.kind == "M" else None
    if bd_src is None and t is not None and np.asarray(dates).dtype.kind in "fiu":
        bd_src = np.asarray(dates, dtype=np.float64).ravel()
    if bd_src is None and is_cftime(dates):
        bd_src = np.asarray(dates, dtype=object).ravel()
    if bd_src is None:
        bd_src = np.asarray(dates, dtype=object).ravel().astype("datetime64[D]")
    mon = bd_src[n:]
    fill = np.datetime64("NaT") if mon.dtype.kind == "M" else (
        None if mon.dtype == object else np.nan)   # cftime dates: None for no break
    return bd_src, mon, fill


def out_specs(pix, dtype, mon, N, n, K, magnitudes, history, detailed):
    """(shape, dtype) of each result ``out=`` may receive in this call."""
    i32 = np.dtype(np.int32)
    specs = {"breaks": (pix, i32), "break_dates": (pix, mon.dtype), "means": (pix, dtype),
             "valids": (pix, i32), "status": (pix, i32)}
    if magnitudes:
        specs["magnitudes"] = (pix, dtype)
    if not (isinstance(history, str) and history == "all"):
        specs["history_start"] = (pix, i32)
    if detailed:
        specs.update(mosum=((N - n,) + pix, dtype), bounds=((N - n,) + pix, dtype),
                     prediction=((N,) + pix, dtype), coef=((K,) + pix, dtype),
                     sigma=(pix, dtype))
    return specs
