"""``clts.compat.pymannkendall``: pymannkendall 1.4's API over :func:`clts.trend_test`.

``import clts.compat.pymannkendall as mk`` keeps a pymannkendall script's calls: the same
function names, positional order and defaults, and named tuples with pymannkendall's type
names and fields, so ``trend, h, p, z, Tau, s, var_s, slope, intercept = mk.original_test(x)``
unpacks as before (``trend`` the strings "increasing" / "decreasing" / "no trend", ``h`` a
bool). Each function also takes a keyword-only ``device=``. One series (or one (n, c)
matrix for the multi-column tests) per call, as pymannkendall; for many at once call
:func:`clts.trend_test` on the whole batch.

Every test of pymannkendall 1.4.3 is here. The multi-column tests (``multivariate_test``,
``regional_test``, ``correlated_multivariate_test``, ``partial_test``) take pymannkendall's
(n, c) matrix, time down and a variable a column. A series (or the complete rows of the
correlated tests, or a pre-whitened series) with fewer than 3 values gives NaN statistics
(clts's rule) where pymannkendall computes from what is left. ``regional_test`` and
``correlated_seasonal_test`` ignore ``alpha`` as pymannkendall's do. See
docs/migrating-from-pymannkendall.md.

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
        raise ValueError(f"{name} must be one series (a 1-D series or an (n, 1) column), got "
                         f"shape {a.shape}: several columns are the multivariate tests' input "
                         "(multivariate_test, correlated_multivariate_test, partial_test), "
                         "or a batch for clts.trend_test(x.T)")
    if a.ndim != 1:
        raise ValueError(f"{name} must be a 1-D series (or an (n, 1) column), got shape "
                         f"{a.shape}")
    return a


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


def _lagged(variant, lag):
    """trend_test's keywords for pymannkendall's ``lag``: ``lag=0`` sums no autocorrelation
    term there (a correction factor of 1), which is the original test's variance."""
    if lag is not None and not isinstance(lag, bool) and isinstance(lag, (int, np.integer)) \
            and lag == 0:
        return dict(variant="original")
    return dict(variant=variant, lag=lag)


def hamed_rao_modification_test(x_old, alpha=0.05, lag=None, *, device=None):
    """pymannkendall.hamed_rao_modification_test: the variance corrected for autocorrelation
    (Hamed and Rao 1998) over the first ``lag`` lags (default all; 0: none, the original
    test's variance, as pymannkendall), by :func:`clts.trend_test` ``variant="hamed_rao"``."""
    return _test(Modified_Mann_Kendall_Test_Hamed_Rao_Approach, x_old, alpha, device,
                 **_lagged("hamed_rao", lag))


def yue_wang_modification_test(x_old, alpha=0.05, lag=None, *, device=None):
    """pymannkendall.yue_wang_modification_test: the effective-sample-size correction (Yue and
    Wang 2004) over the first ``lag`` lags (default all; 0: none, as pymannkendall), by
    :func:`clts.trend_test` ``variant="yue_wang"``."""
    return _test(Modified_Mann_Kendall_Test_Yue_Wang_Approach, x_old, alpha, device,
                 **_lagged("yue_wang", lag))


def seasonal_test(x_old, period=12, alpha=0.05, *, device=None):
    """pymannkendall.seasonal_test: the seasonal Mann-Kendall test (Hirsch and Slack 1984) over
    ``period`` seasons, slope per cycle, by :func:`clts.trend_test` ``variant="seasonal"``.
    A 1-D series (a last incomplete cycle is padded with NaN, as pymannkendall), or a
    (cycles, seasons) matrix: one column per season, ``period`` then ignored (as
    pymannkendall)."""
    x, period = _seasons(x_old, period)
    return _test(Seasonal_Mann_Kendall_Test, x, alpha, device, variant="seasonal",
                 period=period)


def _seasons(x_old, period):
    """(series, period) of a seasonal test's input: a (cycles, seasons) matrix read row by row
    with a season a column (``period`` then its column count, as pymannkendall)."""
    x = np.asarray(x_old)
    if x.ndim == 2 and x.shape[1] > 1:
        return x.reshape(-1), x.shape[1]
    return x, period


def sens_slope(x, *, device=None):
    """pymannkendall.sens_slope: the Theil-Sen slope and the Conover intercept, by
    :func:`clts.sen_slope`. Returns ``Sens_Slope_Test(slope, intercept)``."""
    r = _trend_test(_series(x), variant="original", device=device)
    return Sens_Slope_Test(float(r.slope), float(r.intercept))


def seasonal_sens_slope(x_old, period=12, *, device=None):
    """pymannkendall.seasonal_sens_slope: Sen's slope per cycle over ``period`` seasons, of a
    1-D series or a (cycles, seasons) matrix (as :func:`seasonal_test`).
    Returns ``Seasonal_Sens_Slope_Test(slope, intercept)``."""
    x, period = _seasons(x_old, period)
    r = _trend_test(_series(x, "x_old"), variant="seasonal", period=period, device=device)
    return Seasonal_Sens_Slope_Test(float(r.slope), float(r.intercept))


Modified_Mann_Kendall_Test_PreWhitening_Approach = namedtuple(
    'Modified_Mann_Kendall_Test_PreWhitening_Approach', _FIELDS)
Modified_Mann_Kendall_Test_Trend_Free_PreWhitening_Approach = namedtuple(
    'Modified_Mann_Kendall_Test_Trend_Free_PreWhitening_Approach', _FIELDS)
Multivariate_Mann_Kendall_Test = namedtuple('Multivariate_Mann_Kendall_Test', _FIELDS)
Regional_Mann_Kendall_Test = namedtuple('Regional_Mann_Kendall_Test', _FIELDS)
Correlated_Multivariate_Mann_Kendall_Test = namedtuple(
    'Correlated_Multivariate_Mann_Kendall_Test', _FIELDS)
Correlated_Seasonal_Mann_Kendall_test = namedtuple('Correlated_Seasonal_Mann_Kendall_test',
                                                   _FIELDS)
Partial_Mann_Kendall_Test = namedtuple('Partial_Mann_Kendall_Test', _FIELDS)


def _matrix(x, name="x_old"):
    """(n, c) data (time down, one variable a column) as float64 (c, n); a 1-D series or an
    (n, 1) column as one variable, as pymannkendall's preprocessing."""
    a = np.asarray(x)
    if a.dtype.kind not in "fiub":
        raise TypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
    a = a.astype(np.float64)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2:
        raise ValueError(f"{name} must be an (n, c) matrix (time down, a variable a column) "
                         f"or a 1-D series, got shape {a.shape}")
    return np.ascontiguousarray(a.T)


def pre_whitening_modification_test(x_old, alpha=0.05, *, device=None):
    """pymannkendall.pre_whitening_modification_test: the test on the pre-whitened valid values
    x_(i+1) - r1 x_i (Yue and Wang 2002; r1 their lag-1 autocorrelation), Sen's slope of the
    series, by :func:`clts.trend_test` ``variant="pre_whitening"``."""
    return _test(Modified_Mann_Kendall_Test_PreWhitening_Approach, x_old, alpha, device,
                 variant="pre_whitening")


def trend_free_pre_whitening_modification_test(x_old, alpha=0.05, *, device=None):
    """pymannkendall.trend_free_pre_whitening_modification_test: the valid values detrended by
    Sen's slope, pre-whitened and the trend added back (Yue, Pilon, Phinney and Cavadias
    2002), by :func:`clts.trend_test` ``variant="trend_free_pre_whitening"``."""
    return _test(Modified_Mann_Kendall_Test_Trend_Free_PreWhitening_Approach, x_old, alpha,
                 device, variant="trend_free_pre_whitening")


def _multi(kind, x_old, alpha, device, variant):
    x = _matrix(x_old)
    if x.shape[0] == 1 and variant in ("multivariate", "regional"):
        return _test(kind, x[0], alpha, device, variant="original")
    r = _trend_test(x, alpha=alpha, device=device, variant=variant)
    t = int(r.trend) if np.isfinite(r.z) else 0
    return kind(_NAMES[t], bool(r.h), float(r.p), float(r.z), float(r.tau), float(r.s),
                float(r.var_s), float(r.slope), float(r.intercept))


def multivariate_test(x_old, alpha=0.05, *, device=None):
    """pymannkendall.multivariate_test: S, Var(S) and the pair counts summed over the columns
    of the (n, c) matrix, each column's missing values skipped on their own (Hirsch and Slack
    1984); Sen's slope over the within-column pairs. By :func:`clts.trend_test`
    ``variant="multivariate"`` on the columns as variables."""
    return _multi(Multivariate_Mann_Kendall_Test, x_old, alpha, device, "multivariate")


def regional_test(x_old, alpha=0.05, *, device=None):
    """pymannkendall.regional_test: the multivariate test over the sites (columns) of the
    (n, c) matrix (Helsel and Frans 2006). As pymannkendall 1.4.3, ``alpha`` is not used: the
    test is at 0.05 whatever is given (``clts.trend_test(variant="regional")`` honours its
    ``alpha``)."""
    return _multi(Regional_Mann_Kendall_Test, x_old, 0.05, device, "regional")


def correlated_multivariate_test(x_old, alpha=0.05, *, device=None):
    """pymannkendall.correlated_multivariate_test: the columns' summed S with the variance
    from the covariances of their scores (Libiseller and Grimvall 2002), on the rows where
    no column is missing; Sen's slope as :func:`multivariate_test`. By
    :func:`clts.trend_test` ``variant="correlated_multivariate"``."""
    return _multi(Correlated_Multivariate_Mann_Kendall_Test, x_old, alpha, device,
                  "correlated_multivariate")


def correlated_seasonal_test(x_old, period=12, alpha=0.05, *, device=None):
    """pymannkendall.correlated_seasonal_test: the correlated multivariate test with a season
    a variable, a 1-D series cut into cycles of ``period`` (a last incomplete cycle padded
    with NaN, and so left out) or a (cycles, seasons) matrix. As pymannkendall 1.4.3,
    ``alpha`` is not used: the test is at 0.05 (``clts.trend_test(variant=
    "correlated_seasonal")`` honours its ``alpha``)."""
    x = np.asarray(x_old)
    if x.ndim == 2 and x.shape[1] > 1:
        return _multi(Correlated_Seasonal_Mann_Kendall_test, x, 0.05, device,
                      "correlated_multivariate")
    return _test(Correlated_Seasonal_Mann_Kendall_test, x, 0.05, device,
                 variant="correlated_seasonal", period=period)


def partial_test(x_old, alpha=0.05, *, device=None):
    """pymannkendall.partial_test: the test of column 0 of an (n, 2) matrix given column 1 as
    a covariate (Libiseller and Grimvall 2002) on the rows where neither is missing; Sen's
    slope of column 0. By :func:`clts.trend_test` ``variant="partial"``."""
    x = _matrix(x_old)
    if x.shape[0] != 2:
        raise ValueError(f"partial_test takes two columns (the series and its covariate), "
                         f"got {x.shape[0]}")
    return _multi(Partial_Mann_Kendall_Test, x_old, alpha, device, "partial")


__all__ = ["sens_slope", "seasonal_sens_slope", "original_test", "hamed_rao_modification_test",
           "yue_wang_modification_test", "pre_whitening_modification_test",
           "trend_free_pre_whitening_modification_test", "multivariate_test", "seasonal_test",
           "regional_test", "correlated_multivariate_test", "correlated_seasonal_test",
           "partial_test"]
