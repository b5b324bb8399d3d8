"""``clts.bfastts``: dated observations on a regular grid with NaN where nothing was acquired,
placed as R's ``bfast::bfastts`` places them (bfast 1.7.2's default, ``.bfastts.new`` with its
C++ nearest-point helper).

R's rules, reproduced:

- The dates are sorted (stably: equal dates keep their order). Each date becomes a decimal
  time ``idx``: type ``"irregular"`` (a daily grid, frequency 365): year + (d - 1) / 365 with d
  the day of a 365-day year (the month's offset in a common year plus the day of the month, so
  29 February and 1 March of a leap year are the same day d = 60, and 31 December is d = 365);
  ``"16-day"`` (frequency 23, MODIS composites): year + (j - 1) / delta / 23 with j the day of
  the year and delta the smallest gap between two dates of one year (16 for MODIS; 8 for
  8-day dates, whose times then run past the year, as in R); ``"10-day"`` (frequency 36, SPOT
  VEGETATION dekads): year + round((j0 - 1) / 10) / 36 with j0 the day of the year from 0 and
  R's rounding (half to even).
- The grid runs from the first to the last ``idx`` with R's ``ts(start, end, frequency)``:
  (end - start) * frequency must be a whole number up to 1e-5 (else R stops, and so does
  this, with a ValueError), floor(that + 1.01) points, times ``seq(start, end, length.out)``.
- Each observation goes to the grid point nearest its ``idx``, the earlier one on a tie,
  searched forward from the previous observation's point (where the times decrease, as 8-day
  dates under "16-day" do at a new year, R's search stays where it was: so does this).
- Several observations on one grid point: the last in date order is kept, a missing value
  (NaN) included, as R's ``A[matches] = data`` (``duplicates="mean"`` averages their valid
  values instead, as the package's older ``zoo::aggregate`` path did for "16-day").

Where R fails, this does not: one grid point (a single date; R reads past its vector), and two
acquisitions on one date with ``"16-day"`` (R divides by a gap of 0: here the gap is that of
the distinct dates).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from ..vocabulary import renamed
from ..errors import warn_caller

TYPES = {"irregular": 365, "daily": 365, "16-day": 23, "10-day": 36}
DUPLICATES = ("last", "mean")
#: days before each month in a common year (R's ``yday365``)
_MDAYS = np.array([0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365])
_TS_EPS = 1e-5          # R's getOption("ts.eps")


@dataclass
class RegularSeries:
    """Result of :func:`bfastts`.

    Attributes
    ----------
    values : numpy.ndarray, pandas or xarray object
        The observations on the grid, NaN where nothing was acquired: the input's shape and
        layout with its time axis the grid's length (float; integers become float64); a pandas
        input gives a Series / DataFrame indexed by ``dates``, an xarray input a DataArray
        with ``dates`` as its time coordinate and ``time`` as a ``decimal_year`` coordinate.
    time : numpy.ndarray of float64
        R's ``time()`` of the series: decimal years. ``clts.bfast_monitor(values, time,
        start, freq=1)`` / ``clts.bfast_breaks(values, time, freq=1)`` fit R's harmonics.
    dates : numpy.ndarray of datetime64[D]
        A date per grid point: the day of the 365-day year ("irregular"; 1 March for the
        point 29 February shares), 1 January + k delta days ("16-day"), the dekad's first day
        (1, 11, 21 of the month; "10-day").
    freq : int
        Points per year (R's frequency): 365, 23 or 36.
    slots : numpy.ndarray of int64
        The grid index each observation went to, in the input's order.
    type : str
        The grid type.
    """
    values: object
    time: np.ndarray
    dates: np.ndarray
    freq: int
    slots: np.ndarray
    type: str


def _as_days(dates) -> np.ndarray:
    a = np.asarray(dates)
    if a.dtype.kind in "iufbc" or a.ndim > 1:
        raise TypeError("dates must be dates (datetime64, datetime.date, pandas timestamps or "
                        f"'YYYY-MM-DD' strings), one per observation, got {a.dtype} of shape "
                        f"{a.shape}")
    try:
        d = a.astype("datetime64[D]").ravel()
    except (ValueError, TypeError):
        raise TypeError("dates must be dates (datetime64, datetime.date, pandas timestamps or "
                        "'YYYY-MM-DD' strings)") from None
    if np.isnat(d).any():
        raise ValueError("dates: a date is missing (NaT)")
    return d


def _calendar(d):
    """(year, month 0..11, day of month, day of year from 1) of datetime64[D] ``d``."""
    y = d.astype("datetime64[Y]")
    m = d.astype("datetime64[M]")
    year = y.astype(np.int64) + 1970
    mon = (m - y.astype("datetime64[M]")).astype(np.int64)
    mday = (d - m.astype("datetime64[D]")).astype(np.int64) + 1
    jul = (d - y.astype("datetime64[D]")).astype(np.int64) + 1
    return year, mon, mday, jul


def _idx(d, type_):
    """R's decimal times of the sorted dates ``d`` (and the 16-day delta, else None)."""
    year, mon, mday, jul = _calendar(d)
    yr = year.astype(np.float64)
    if type_ in ("irregular", "daily"):
        return yr + (_MDAYS[mon] + mday - 1) / 365, None
    if type_ == "16-day":
        gaps = [np.diff(np.unique(jul[year == y])) for y in np.unique(year)]
        gaps = np.concatenate(gaps) if gaps else np.array([])
        delta = float(gaps.min()) if gaps.size else np.inf     # R: min() of nothing is Inf
        return yr + (jul - 1) / delta / 23, delta
    return yr + np.round((jul - 2) / 10) / 36, None            # POSIXlt yday is jul - 1


def _grid(start, end, freq):
    """R's ``time(ts(NA, start = start, end = end, frequency = freq))``."""
    cycles = (end - start) * freq
    if abs(round(cycles) - cycles) > _TS_EPS * max(cycles, 1):
        raise ValueError(f"the last date lies {cycles:.4f} grid steps after the first, not a "
                         "whole number (R's ts: \"'end' must be a whole number of cycles after "
                         "'start'\"): with type='16-day' the first and the last date must fall "
                         "on the same day of the 16-day cycle; use type='irregular'")
    n = int(np.floor(cycles + 1.01))
    t = start + np.arange(n) * ((end - start) / (n - 1) if n > 1 else 0.0)
    t[-1] = end
    return t


def _nearest(idx, grid):
    """The 0-based grid index nearest each ``idx``, the earlier one on a tie (R's
    ``.bfast_cpp_closestfrom(idx, grid, TRUE)``)."""
    nb = grid.size
    if nb == 1:
        return np.zeros(idx.size, np.int64)
    # R scans forward from the previous observation's point: where the times decrease (8-day
    # dates under "16-day" run past their year) it stays where it was
    j = np.maximum.accumulate(np.searchsorted(grid[1:nb - 1], idx, side="right") + 1)
    closer = np.abs(idx - grid[j]) < np.abs(idx - grid[j - 1])
    return np.where(closer, j, j - 1).astype(np.int64)


def _grid_dates(t, freq, type_, delta):
    """A date for each grid time (see :class:`RegularSeries`)."""
    year = np.floor(t + 1e-9)
    k = np.round((t - year) * freq).astype(np.int64)
    y0 = (year.astype(np.int64) - 1970).astype("datetime64[Y]")
    if type_ in ("irregular", "daily"):
        yd = k + 1                                        # day of the 365-day year
        mon = np.searchsorted(_MDAYS, yd, side="left") - 1
        first = y0.astype("datetime64[M]") + mon
        return first.astype("datetime64[D]") + (yd - _MDAYS[mon] - 1)
    if type_ == "16-day":
        step = 16 if not np.isfinite(delta) else int(delta)
        return y0.astype("datetime64[D]") + k * step
    first = y0.astype("datetime64[M]") + k // 3           # dekads: 1, 11, 21 of the month
    return first.astype("datetime64[D]") + 10 * (k % 3)


def _split(data, dates, time_axis):
    """(numpy values, their time axis, dates, a function that labels a result laid out as
    those values)."""
    pd = None
    if type(data).__module__.startswith("pandas"):      # pandas only when given (optional)
        import pandas as pd
    if pd is not None and isinstance(data, (pd.Series, pd.DataFrame)):
        if time_axis not in (None, 0, "index"):
            raise ValueError(f"time_axis: a pandas input has its dates along the rows, got "
                             f"{time_axis!r}")
        if dates is None:
            dates = data.index.to_numpy()

        def label(out, grid_dates, t):
            idx = pd.DatetimeIndex(grid_dates.astype("datetime64[ns]"), name=data.index.name)
            if isinstance(data, pd.Series):
                return pd.Series(out, index=idx, name=data.name)
            return pd.DataFrame(out, index=idx, columns=data.columns)
        return data.to_numpy(), 0, dates, label
    if hasattr(data, "dims") and hasattr(data, "coords") and not isinstance(data, np.ndarray):
        dim = "time" if time_axis is None else time_axis
        if isinstance(dim, (int, np.integer)) and not isinstance(dim, bool) \
                and -data.ndim <= dim < data.ndim:
            dim = data.dims[dim]
        if not isinstance(dim, str) or dim not in data.dims:
            raise ValueError(f"time_axis: the DataArray has no dimension {dim!r} (dims "
                             f"{tuple(data.dims)}); give time_axis='<dim>'")
        if dates is None:
            if dim not in data.coords:
                raise ValueError(f"dates is None and the DataArray has no {dim!r} coordinate")
            dates = data[dim].values

        def label(out, grid_dates, t):
            import xarray as xr
            coords = {c: v for c, v in data.coords.items() if dim not in v.dims}
            coords[dim] = grid_dates.astype("datetime64[ns]")
            coords["decimal_year"] = (dim, t)
            return xr.DataArray(out, dims=data.dims, coords=coords, name=data.name,
                                attrs=dict(data.attrs))
        return np.asarray(data.values), data.dims.index(dim), dates, label
    v = np.asarray(data)
    if v.ndim == 0:
        raise ValueError("data must hold one value per date, got a scalar")
    axis = 0 if time_axis is None else time_axis
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) \
            or not -v.ndim <= axis < v.ndim:
        raise ValueError(f"time_axis must be an axis of data (shape {v.shape}), got "
                         f"{time_axis!r}")
    n = np.asarray(dates).size if dates is not None else None
    if n is not None and v.shape[axis] != n:
        fits = [a for a in range(v.ndim) if v.shape[a] == n]
        hint = f"; they fit axis {fits[0]}: give time_axis={fits[0]}" if fits else ""
        raise ValueError(f"dates has {n} entries but data has {v.shape[axis]} along "
                         f"time_axis={axis}{hint}")

    return v, int(axis) % v.ndim, dates, lambda out, grid_dates, t: out


@renamed()
def bfastts(data, dates=None, type="irregular", *, time_axis=None, duplicates="last"):
    """Dated observations on R's regular grid, NaN where nothing was acquired (R's
    ``bfast::bfastts``).

    Parameters
    ----------
    data : array_like, pandas Series / DataFrame or xarray DataArray
        Observations, one per date along ``time_axis`` (numpy: one series, a cube
        ``[dates, pixels...]``, or give ``time_axis=-1`` for ``[pixels, dates]``); a pandas
        object has its dates along the rows (one series per column), a DataArray along its
        ``"time"`` dimension. NaN: missing.
    dates : array_like of dates or None
        The date of each observation (datetime64, ``datetime.date``, timestamps, ISO strings),
        in any order, repeats allowed. None: the pandas index / the DataArray's coordinate.
    type : {"irregular", "16-day", "10-day"}
        R's grid: daily with 365 points a year ("irregular", also named "daily"), MODIS's
        23 composites a year ("16-day") or SPOT's 36 dekads ("10-day").
    time_axis : int or str, optional
        The dates' axis of a numpy ``data`` (default 0) or dimension of a DataArray (default
        "time").
    duplicates : {"last", "mean"}
        Several observations on one grid point: R keeps the last in date order, a NaN
        included ("last"); "mean" averages their valid values.

    Returns
    -------
    RegularSeries
        ``values`` (labelled like ``data``), ``time`` (R's decimal years), ``dates``,
        ``freq``, ``slots``, ``type``.

    Raises
    ------
    ValueError
        An unknown ``type`` / ``duplicates``, a missing date, dates that do not fit ``data``,
        "16-day" dates whose last one is not a whole number of steps after the first.
    TypeError
        ``dates`` that are not dates, ``data`` that is not numeric.

    Examples
    --------
    >>> import numpy as np, clts
    >>> d = np.array(["2012-02-28", "2012-02-29", "2012-03-01", "2012-03-03"], "datetime64[D]")
    >>> r = clts.bfastts([1.0, 2.0, 3.0, 4.0], d)
    >>> r.values.tolist()          # 29 February and 1 March share a day: the last one stays
    [1.0, 3.0, nan, 4.0]
    >>> r.dates.astype(str).tolist(), r.freq
    (['2012-02-28', '2012-03-01', '2012-03-02', '2012-03-03'], 365)
    >>> m = np.array(["2001-01-01", "2001-01-17", "2001-02-18"], "datetime64[D]")
    >>> r = clts.bfastts([0.2, 0.3, 0.5], m, "16-day")
    >>> r.values.tolist(), r.dates.astype(str).tolist()[-1], round(float(r.time[-1]), 4)
    ([0.2, 0.3, nan, 0.5], '2001-02-18', 2001.1304)
    """
    if type not in TYPES:
        raise ValueError(f"type must be one of {tuple(TYPES)}, got {type!r}")
    if duplicates not in DUPLICATES:
        raise ValueError(f"duplicates must be one of {DUPLICATES}, got {duplicates!r}")
    v, axis, dates, label = _split(data, dates, time_axis)
    if dates is None:
        raise ValueError("dates is None: give the dates, or data as a pandas / xarray object "
                         "whose time axis is labelled")
    d = _as_days(dates)
    if d.size != v.shape[axis]:
        raise ValueError(f"dates has {d.size} entries but data has {v.shape[axis]} "
                         "observations")
    if d.size == 0:
        raise ValueError("data has no observation")
    if v.dtype.kind not in "fiub":
        raise TypeError(f"data must be numbers (NaN = missing), got dtype {v.dtype}")
    ft = np.float32 if v.dtype.kind == "f" and v.dtype.itemsize <= 4 else np.float64
    order = np.argsort(d, kind="stable")                 # R's order(): stable
    ds = d[order]
    vs = np.moveaxis(v, axis, -1)[..., order].astype(ft)     # time last, in date order
    idx, delta = _idx(ds, type)
    freq = TYPES[type]
    if type == "16-day" and np.any(idx - _calendar(ds)[0] >= 1):
        warn_caller(f"bfastts: the smallest gap between two dates of a year is {delta:g} "
                    "days, so R's 16-day grid puts dates past the end of their year (R does "
                    "the same, silently): their values land on the next year's points; "
                    "type='irregular' keeps every date on its day", UserWarning)
    t = _grid(idx[0], idx[-1], freq)
    slot_sorted = _nearest(idx, t)
    out = np.full(v.shape[:axis] + (t.size,) + v.shape[axis + 1:], np.nan, ft)  # as the input
    last = np.moveaxis(out, axis, -1)                    # a view, time last
    if duplicates == "last":
        rev = slot_sorted[::-1]
        u, first_rev = np.unique(rev, return_index=True)
        last[..., u] = vs[..., slot_sorted.size - 1 - first_rev]
    else:
        ok = ~np.isnan(vs)
        sums = np.zeros(last.shape, np.float64)
        counts = np.zeros(last.shape, np.int64)
        np.add.at(np.moveaxis(sums, -1, 0), slot_sorted, np.moveaxis(np.where(ok, vs, 0), -1, 0))
        np.add.at(np.moveaxis(counts, -1, 0), slot_sorted, np.moveaxis(ok, -1, 0))
        with np.errstate(invalid="ignore", divide="ignore"):
            last[...] = np.where(counts > 0, sums / counts, np.nan)
    slots = np.empty(d.size, np.int64)
    slots[order] = slot_sorted
    gd = _grid_dates(t, freq, type, delta)
    return RegularSeries(values=label(out, gd, t), time=t, dates=gd, freq=freq, slots=slots,
                         type=type)
