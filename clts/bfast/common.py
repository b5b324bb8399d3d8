"""Host-side pieces shared by the API, the kernels' set-up and the reference: the time axis,
the design matrix, the critical values, the ROC boundary. Plain numpy, float64."""
from __future__ import annotations

import datetime as _dt
import math
import threading
from functools import lru_cache

import numpy as np

from .critvals import H as _TAB_H, LEVEL as _TAB_LEVEL, PERIOD as _TAB_PERIOD, TABLE as _TABLE

CONVENTIONS = ("r", "bfast-py")
#: a history whose residuals' sigma is within this many rounding units (eps of the working
#: precision) of the data's scale (the largest |y| of its valid values) is fitted exactly: the
#: MOSUM statistic is 0 / 0 and the pixel is not tested (status 3). The rounding noise of exact
#: fits measured 1-6 units (constant, uint8 255, harmonic and harmonic + trend pixels, both
#: kernel versions, pocl and the Intel runtime).
ZERO_VARIANCE_ULPS = 64
#: ``BfastResult.status`` codes and their names (also the keys of ``diagnostics``)
STATUS = {0: "tested", 1: "too_few_values", 2: "singular", 3: "zero_variance", 4: "non_finite"}
HISTORIES = ("all", "ROC", "BP")


# ----------------------------------------------------------------------------- time axis
def _to_datetime64_days(values):
    arr = np.asarray(values)
    if arr.dtype.kind == "M":
        return arr.astype("datetime64[D]")
    if arr.dtype == object:
        if all(isinstance(v, (_dt.datetime, _dt.date, np.datetime64)) for v in arr.ravel()):
            return np.array([np.datetime64(v, "D") if not isinstance(v, _dt.datetime)
                             else np.datetime64(v.date(), "D") for v in arr.ravel()]
                            ).reshape(arr.shape)
    return None


def time_axis(dates, start_monitor):
    """Numeric times of ``dates`` and of ``start_monitor``.

    datetime64 / datetime / date / cftime: days since 1 January of the first date's year (the
    ``bfast`` package's mapped indices; cftime in its calendar); numbers (e.g. decimal years):
    as given.
    """
    from ..timeaxis import days, is_cftime, parse_date
    if np.size(dates) < 2:
        check_increasing(np.zeros(np.size(dates)))
    if is_cftime(dates):                   # cftime: days since 1 January in its calendar
        dates = np.asarray(dates).ravel()
        if isinstance(start_monitor, str):
            start_monitor = parse_date(start_monitor, dates)
        if not is_cftime(np.array([start_monitor], dtype=object)):
            raise TypeError("start_monitor must be a date of the dates' calendar when dates "
                            f"are cftime dates (got {type(start_monitor).__name__})")
        origin = f"{dates[0].year:04d}-01-01"
        return days(dates, origin), float(days(np.array([start_monitor], dtype=object),
                                               origin)[0])
    d = _to_datetime64_days(dates)
    if d is not None:
        d = d.ravel()
        sm = np.asarray(start_monitor)
        s = _to_datetime64_days(sm.reshape(1) if sm.dtype.kind == "M"
                                else np.array([start_monitor], dtype=object))
        if s is None:
            raise TypeError("start_monitor must be a date when dates are dates "
                            f"(got {type(start_monitor).__name__})")
        year0 = d[0].astype("datetime64[Y]").astype("datetime64[D]")
        t = (d - year0).astype(np.int64).astype(np.float64)
        ts = float((s[0] - year0).astype(np.int64))
        return t, ts
    try:
        t = np.asarray(dates, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        raise TypeError("dates must be datetime64, datetime/date objects or numbers "
                        "(e.g. decimal years)") from None
    if isinstance(start_monitor, (_dt.date, np.datetime64)):
        raise TypeError("start_monitor is a date but dates are numbers")
    return t, float(start_monitor)


def check_increasing(t) -> None:
    """The one check of a BFAST time axis ``t`` (numbers): two dates or more, finite and
    strictly increasing (every BFAST function fits a model over its pixels' dates)."""
    if t.size < 2:
        raise ValueError(f"dates has {t.size} entr{'y' if t.size == 1 else 'ies'}: BFAST needs "
                         "at least two dates (y with two or more steps along its time axis)")
    if not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0):
        raise ValueError("dates must be finite and strictly increasing")


def end_of_history(t, ts) -> int:
    """Index of the first date >= start_monitor (= number of history dates)."""
    idx = np.nonzero(t >= ts)[0]
    if idx.size == 0 or idx[0] == 0:
        raise ValueError(f"start_monitor ({ts}) must lie after the first date ({t[0]}) and at "
                         f"or before the last date ({t[-1]}) of the time axis")
    return int(idx[0])


def n_coef(k: int, trend: bool) -> int:
    return 2 * k + (2 if trend else 1)


def design_matrix(t, k: int, freq: float, trend: bool, center=None, scale=None):
    """[N, K] columns 1, (t - center)/scale, sin(2 pi j t/f), cos(2 pi j t/f) for j = 1..k.
    Read-only: made once per dates and parameters (a call on the same dates, a time loop over
    cubes, reuses it)."""
    t = np.asarray(t, dtype=np.float64)
    try:
        key = (t.tobytes(), t.shape, int(k), float(freq), bool(trend),
               None if center is None else float(center), None if scale is None else float(scale))
    except (TypeError, ValueError):
        return _design_matrix(t, k, freq, trend, center, scale)
    with _DESIGNS_LOCK:
        X = _DESIGNS.get(key)
    if X is None:
        X = _design_matrix(t, k, freq, trend, center, scale)
        X.setflags(write=False)
        with _DESIGNS_LOCK:
            if len(_DESIGNS) >= 64:
                _DESIGNS.clear()
            _DESIGNS[key] = X
    return X


#: design matrices made by :func:`design_matrix` (key: dates and parameters)
_DESIGNS: dict = {}
_DESIGNS_LOCK = threading.Lock()


def _design_matrix(t, k, freq, trend, center, scale):
    cols = [np.ones_like(t)]
    if trend:
        c = 0.0 if center is None else center
        s = 1.0 if scale is None else scale
        cols.append((t - c) / s)
    w = 2.0 * np.pi * t / float(freq)
    for j in range(1, k + 1):
        cols.append(np.sin(j * w))
        cols.append(np.cos(j * w))
    return np.stack(cols, axis=1)


def design_names(k: int, trend: bool) -> list:
    """Names of :func:`design_matrix`'s columns, in its order."""
    names = ["intercept"] + (["trend"] if trend else [])
    for j in range(1, k + 1):
        names += [f"sin{j}", f"cos{j}"]
    return names


def trend_scaling(t, n):
    """(center, scale) for the trend column: the history's mid-time and half-span of all times."""
    t = np.asarray(t, dtype=np.float64)
    center = 0.5 * (t[0] + t[n - 1])
    scale = max(float(np.max(np.abs(t - center))), 1e-300)
    return center, scale


def unscale_coef(beta, trend, center, scale):
    """Coefficients in the basis 1, t, sin, cos from those of 1, (t - center)/scale, sin, cos."""
    b = np.array(beta, dtype=np.float64, copy=True)
    if trend:
        b[..., 1] = beta[..., 1] / scale
        b[..., 0] = beta[..., 0] - beta[..., 1] * center / scale
    return b


# ----------------------------------------------------------------------------- critical values
def _period_index(period, convention):
    if convention == "bfast-py":       # the bfast package takes the nearest tabulated period
        return int(np.argmin(np.abs(np.asarray(_TAB_PERIOD, float) - float(period))))
    for i, p in enumerate(_TAB_PERIOD):
        if abs(float(period) - p) < 1e-12:
            return i
    raise ValueError(f"period (end) must be one of {_TAB_PERIOD} with convention='r', got {period}")


def critical_value(hfrac, level, period=10, convention="r") -> float:
    """strucchange's OLS-MOSUM critical value (max functional).

    convention 'r': linear interpolation in 1 - level, as ``mefp`` does with ``approx``;
    'bfast-py': 1 - level must be a tabulated level (the bfast package's rule). Memoised."""
    try:
        key = (float(hfrac), float(level), float(period), str(convention))
    except (TypeError, ValueError):     # the checks below name the bad value
        return _critical_value.__wrapped__(hfrac, level, period, convention)
    return _critical_value(*key)


@lru_cache(maxsize=256)
def _critical_value(hfrac, level, period, convention) -> float:
    """strucchange's OLS-MOSUM critical value (max functional).

    convention 'r': linear interpolation in 1 - level, as ``mefp`` does with ``approx``;
    'bfast-py': 1 - level must be a tabulated level (the bfast package's rule)."""
    hi = None
    for i, hv in enumerate(_TAB_H):
        if abs(float(hfrac) - hv) < 1e-12:
            hi = i
    if hi is None:
        raise ValueError(f"hfrac must be one of {_TAB_H} (strucchange's OLS-MOSUM table), got {hfrac}")
    pi = _period_index(period, convention)
    x = 1.0 - float(level)
    levels = np.asarray(_TAB_LEVEL)
    col = _TABLE[hi, pi, :, 0]
    if convention == "bfast-py":
        j = int(np.argmin(np.abs(levels - x)))
        if abs(levels[j] - x) > 1e-9:
            raise ValueError(f"level must be one of 0.001..0.05 in steps of 0.001 with "
                             f"convention='bfast-py', got {level}")
        return float(col[j])
    if not (levels[0] - 1e-12 <= x <= levels[-1] + 1e-12):
        raise ValueError(f"level must lie in [0.001, 0.05] (the table's range), got {level}")
    return float(np.interp(x, levels, col))


def _norm_cdf(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def rec_cusum_pvalue(x: float) -> float:
    """strucchange's p-value of the Rec-CUSUM max statistic (Brownian motion, one process)."""
    if x < 0.3:
        return 1.0 - 0.1465 * x
    return 2.0 * (1.0 - _norm_cdf(3 * x) + math.exp(-4 * x * x) * (_norm_cdf(x) + _norm_cdf(5 * x) - 1)
                  - math.exp(-16 * x * x) * (1.0 - _norm_cdf(x)))


def rec_cusum_bound(level: float) -> float:
    """The boundary constant b with p(b) = level (strucchange's boundary.efp, found by bisection)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    return bisect_decreasing(rec_cusum_pvalue, level, 20.0)


def bisect_decreasing(p, level: float, hi: float) -> float:
    """The x in [0, hi] with p(x) = level for a decreasing p, by bisection to full precision."""
    lo = 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if p(mid) > level:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def log_plus(x):
    x = np.asarray(x, dtype=np.float64)
    return np.where(x > np.e, np.log(np.maximum(x, 1e-300)), 1.0)
