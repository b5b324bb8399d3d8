"""``clts.compat.pymannkendall``: pymannkendall 1.4's API over :func:`clts.trend_test`.

``import clts.compat.pymannkendall as mk`` keeps a pymannkendall script's calls: the same
function names, positional order and defaults, and named tuples with pymannkendall's type
names and fields, so ``trend, h, p, z, Tau, s, var_s, slope, intercept = mk.original_test(x)``
unpacks as before (``trend`` the strings "increasing" / "decreasing" / "no trend", ``h`` a
bool). Each function also takes a keyword-only ``device=``. One series per call, as
pymannkendall (a 1-D series or an (n, 1) column); for many series at once call
:func:`clts.trend_test` on the whole batch.

The tests clts does not have (``pre_whitening_modification_test``,
``trend_free_pre_whitening_modification_test``, ``multivariate_test``, ``regional_test``,
``correlated_multivariate_test``, ``correlated_seasonal_test``, ``partial_test``) are present
and raise ``NotImplementedError`` naming the missing test. A series with fewer than 3 valid
values gives NaN statistics (clts's rule) where pymannkendall computes from what is left.
See docs/migrating-from-pymannkendall.md.

Examples
--------
>>> import numpy as np
>>> import clts.compat.pymannkendall as mk
>>> trend, h, p, z, Tau, s, var_s, slope, intercept = mk.original_test(np.arange(10.0) ** 2)
>>> trend, h, s, slope
('increasing', True, 45.0, 9.0)
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..trend import trend_test as _trend_test

_FIELDS = ['trend', 'h', 'p', 'z', 'Tau', 's', 'var_s', 'slope', 'intercept']

#: the result types, with pymannkendall's type names and field order
Mann_Kendall_Test = namedtuple('Mann_Kendall_Test', _FIELDS)
Modified_Mann_Kendall_Test_Hamed_Rao_Approach = namedtuple(
    'Modified_Mann_Kendall_Test_Hamed_Rao_Approach', _FIELDS)
Modified_Mann_Kendall_Test_Yue_Wang_Approach = namedtuple(
    'Modified_Mann_Kendall_Test_Yue_Wang_Approach', _FIELDS)
Seasonal_Mann_Kendall_Test = namedtuple('Seasonal_Mann_Kendall_Test', _FIELDS)
Sens_Slope_Test = namedtuple('Sens_Slope_Test', ['slope', 'intercept'])
Seasonal_Sens_Slope_Test = namedtuple('Seasonal_Sens_Slope_Test', ['slope', 'intercept'])

_NAMES = {1: "increasing", -1: "decreasing", 0: "no trend"}


def _series(x, name="x"):
    """One series as float64 1-D: a 1-D input or an (n, 1) column, as pymannkendall's
    preprocessing; several columns are multivariate data (not implemented)."""
    a = np.asarray(x)
    if a.dtype.kind not in "fiub":
        raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
    a = a.astype(np.float64)
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim == 2:
        _missing("tests of several columns at once (pymannkendall's multivariate input)",
                 "pass one column per call, or all columns as a batch to clts.trend_test(x.T)")
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-D series (or an (n, 1) column), got shape "
                         f"{a.shape}")
    return a


def _missing(what, instead):
    raise NotImplementedError(f"clts.compat.pymannkendall: {what} is not implemented in clts; "
                              f"{instead}")


def _test(kind, x, alpha, device, **kw):
    r = _trend_test(_series(x, "x_old"), alpha=alpha, device=device, **kw)
    t = int(r.trend) if np.isfinite(r.z) else 0
    return kind(_NAMES[t], bool(r.h), float(r.p), float(r.z), float(r.tau), float(r.s),
                float(r.var_s), float(r.slope), float(r.intercept))


def original_test(x_old, alpha=0.05, *, device=None):
    """pymannkendall.original_test: the Mann-Kendall test (with ties) and Sen's slope, by
    :func:`clts.trend_test`. NaN values are skipped, as pymannkendall.

    Returns
    -------
    Mann_Kendall_Test(trend, h, p, z, Tau, s, var_s, slope, intercept)
    """
    return _test(Mann_Kendall_Test, x_old, alpha, device, variant="original")


def hamed_rao_modification_test(x_old, alpha=0.05, lag=None, *, device=None):
    """pymannkendall.hamed_rao_modification_test: the variance corrected for autocorrelation
    (Hamed and Rao 1998) over the first ``lag`` lags (default all), by
    :func:`clts.trend_test` ``variant="hamed_rao"``."""
    return _test(Modified_Mann_Kendall_Test_Hamed_Rao_Approach, x_old, alpha, device,
                 variant="hamed_rao", lag=lag)


def yue_wang_modification_test(x_old, alpha=0.05, lag=None, *, device=None):
    """pymannkendall.yue_wang_modification_test: the effective-sample-size correction (Yue and
    Wang 2004), by :func:`clts.trend_test` ``variant="yue_wang"``."""
    return _test(Modified_Mann_Kendall_Test_Yue_Wang_Approach, x_old, alpha, device,
                 variant="yue_wang", lag=lag)


def seasonal_test(x_old, period=12, alpha=0.05, *, device=None):
    """pymannkendall.seasonal_test: the seasonal Mann-Kendall test (Hirsch and Slack 1984) over
    ``period`` seasons, slope per cycle, by :func:`clts.trend_test` ``variant="seasonal"``.
    A 1-D series (a last incomplete cycle is padded with NaN, as pymannkendall), or a
    (cycles, seasons) matrix: one column per season, ``period`` then ignored (as
    pymannkendall)."""
    x = np.asarray(x_old)
    if x.ndim == 2 and x.shape[1] > 1:
        x, period = x.reshape(-1), x.shape[1]
    return _test(Seasonal_Mann_Kendall_Test, x, alpha, device, variant="seasonal",
                 period=period)


def sens_slope(x, *, device=None):
    """pymannkendall.sens_slope: the Theil-Sen slope and the Conover intercept, by
    :func:`clts.sen_slope`. Returns ``Sens_Slope_Test(slope, intercept)``."""
    r = _trend_test(_series(x), variant="original", device=device)
    return Sens_Slope_Test(float(r.slope), float(r.intercept))


def seasonal_sens_slope(x_old, period=12, *, device=None):
    """pymannkendall.seasonal_sens_slope: Sen's slope per cycle over ``period`` seasons.
    Returns ``Seasonal_Sens_Slope_Test(slope, intercept)``."""
    r = _trend_test(_series(x_old, "x_old"), variant="seasonal", period=period,
                    device=device)
    return Seasonal_Sens_Slope_Test(float(r.slope), float(r.intercept))


def _absent(name, what):
    def f(*args, **kwargs):
        _missing(f"pymannkendall.{name} ({what})",
                 "the tests clts has are original_test, hamed_rao_modification_test, "
                 "yue_wang_modification_test, seasonal_test, sens_slope and "
                 "seasonal_sens_slope")
    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"pymannkendall.{name} ({what}): not implemented in clts; calling it raises "
                 "NotImplementedError.")
    return f


pre_whitening_modification_test = _absent(
    "pre_whitening_modification_test", "the pre-whitening correction of Yue and Wang 2002")
trend_free_pre_whitening_modification_test = _absent(
    "trend_free_pre_whitening_modification_test", "the trend-free pre-whitening correction")
multivariate_test = _absent("multivariate_test", "the multivariate Mann-Kendall test")
regional_test = _absent("regional_test", "the regional Mann-Kendall test")
correlated_multivariate_test = _absent("correlated_multivariate_test",
                                       "the correlated multivariate Mann-Kendall test")
correlated_seasonal_test = _absent("correlated_seasonal_test",
                                   "the correlated seasonal Mann-Kendall test")
partial_test = _absent("partial_test", "the partial Mann-Kendall test")

__all__ = ["sens_slope", "seasonal_sens_slope", "original_test", "hamed_rao_modification_test",
           "yue_wang_modification_test", "pre_whitening_modification_test",
           "trend_free_pre_whitening_modification_test", "multivariate_test", "seasonal_test",
           "regional_test", "correlated_multivariate_test", "correlated_seasonal_test",
           "partial_test"]
