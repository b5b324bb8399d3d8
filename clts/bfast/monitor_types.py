"""strucchange's monitoring processes (``mefp``'s ``type``) for ``bfast_monitor``: which ones
clts runs, their critical values and their boundaries, as ``strucchange::mefp.efp`` defines
them (strucchange 1.5-3). Plain numpy / math, float64.

With n the valid history values, j = n + 1, n + 2, ... the count of valid values from the
history start to a monitoring value, r the residuals of the history fit, sigma its residual
standard deviation (n - K degrees of freedom):

``"OLS-MOSUM"``  process  sum of the last h = floor(hfrac n) residuals / (sigma sqrt(n));
                 boundary crit sqrt(2 log+(j / n)), log+(x) = log(x) for x > e, else 1;
                 crit from ``monitorMECritvalTable[h, period, , "max"]`` at 1 - level.
``"OLS-CUSUM"``  process  sum of all residuals from the history start / (sigma sqrt(n));
                 boundary sqrt(x (x - 1) (crit^2 + log(x / (x - 1)))), x = j / n;
                 crit the root a of 2 - 2 (Phi(a) - a phi(a)) = level (the probability that a
                 Brownian motion crosses that boundary: Chu, Stinchcombe and White,
                 "Monitoring structural change", 1996).
``"RE"``         process  j / (sigma^2 n) root(G) (b_j - b): b_j the fit on the valid values
                 1..j, b the history's, G its Gram matrix X'X, root the symmetric square root
                 (strucchange divides by sigma twice), in R's basis (intercept, trend 1, 2, ...
                 along the series, harmonics: see :func:`r_trend`); tested by the running
                 maximum of max_i |process_i|; boundary as the OLS-CUSUM's, crit the same root
                 at level / K.
``"ME"``         process  sqrt(h) / (sigma sqrt(n)) root(G_w) (b_w - b): b_w the fit on the
                 window of the last h = floor(hfrac n) valid values, G_w its Gram matrix (R's
                 basis as RE); tested as RE; boundary as the OLS-MOSUM's, crit the table at
                 1 - level / K (level / K must lie in the table's 0.001..0.05).
"""
from __future__ import annotations

import math

import numpy as np

from .common import _norm_cdf, bisect_decreasing, critical_value

#: strucchange's monitoring processes
TYPES = ("OLS-MOSUM", "OLS-CUSUM", "RE", "ME")
#: those bfast_monitor runs
RUN = TYPES
#: the template parameter ``process`` of the sweep for each type
PROCESS = {"OLS-MOSUM": "mosum", "OLS-CUSUM": "cusum", "RE": "re", "ME": "me"}


def check_type(type, convention):
    """``type`` checked: one of :data:`TYPES`; the bfast 0.7 Python convention has the
    OLS-MOSUM only."""
    if not isinstance(type, str) or type not in RUN:
        raise ValueError(f"type must be one of {RUN} (strucchange's monitoring processes), "
                         f"got {type!r}")
    if type != "OLS-MOSUM" and convention != "r":
        raise ValueError(f"type={type!r} needs convention='r' (the bfast 0.7 Python package "
                         "monitors with the OLS-MOSUM only)")


def crossing_probability(a: float) -> float:
    """2 - 2 (Phi(a) - a phi(a)): strucchange's ``mreSize``, decreasing from 1 at a = 0."""
    phi = math.exp(-0.5 * a * a) / math.sqrt(2.0 * math.pi)
    return 2.0 - 2.0 * (_norm_cdf(a) - a * phi)


def crossing_critval(alpha: float) -> float:
    """The a in [0, 10] with ``crossing_probability(a) = alpha`` (strucchange finds it with
    ``optimize(|...|, c(0, 10), tol = sqrt(eps))``; here by bisection to full precision: the two
    agree to about 1e-8)."""
    if not (isinstance(alpha, (int, float, np.number)) and 0.0 < alpha < 1.0):
        raise ValueError(f"level must lie in (0, 1) for the CUSUM / RE boundary, got {alpha!r}")
    return bisect_decreasing(crossing_probability, alpha, 10.0)


def critval(type, hfrac, level, period, K, convention="r") -> float:
    """strucchange's critical value of ``type`` for the monitoring level ``level`` (R's
    ``alpha``), window ``hfrac``, horizon ``period`` (R's ``end``) and K regressors."""
    if type == "OLS-MOSUM":
        return critical_value(hfrac, level, period, convention)
    if not (isinstance(hfrac, (int, float, np.number)) and 0.0 < hfrac <= 1.0):
        raise ValueError(f"hfrac must lie in (0, 1] (R's h, here only bfastmonitor's check of "
                         f"the history's length), got {hfrac!r}")
    if type == "OLS-CUSUM":
        return crossing_critval(float(level))
    if type == "RE":
        return crossing_critval(float(level) / K)
    if type == "ME":
        return critical_value(hfrac, float(level) / K, period, convention)
    raise ValueError(f"type must be one of {TYPES}, got {type!r}")


def r_step(t):
    """The grid step of R's ``trend`` regressor (bfastpp's 1, 2, ... along the regular series,
    missing values included): the smallest gap between dates."""
    return float(np.min(np.diff(t))) if len(t) > 1 else 1.0


def r_trend(t, trend, center, scale):
    """(alpha, beta) with R's trend 1 + (t - t[0]) / step = alpha + beta (t - center) / scale
    (the design matrix's column); (0, 1) without a trend (no change of basis)."""
    if not trend:
        return 0.0, 1.0
    step = r_step(t)
    return 1.0 + (center - float(t[0])) / step, scale / step


def r_basis(t, terms, center, scale):
    """[alpha_0..alpha_{K-1}, beta_0..beta_{K-1}]: R's column j = alpha_j + beta_j (the design's
    column j) for the model ``terms`` (``clts.bfast.regressors.Terms``): the trend as
    :func:`r_trend`, the shared regressors as given (the design centres and scales them), the
    intercept and harmonics as they are (alpha 0, beta 1). Per-pixel regressors: the shared
    columns only (the kernels read the pixels' centres and scales with their columns)."""
    K = len(terms.columns()) - (terms.q if terms.per_pixel else 0)
    alpha, beta = np.zeros(K), np.ones(K)
    if terms.trend:
        alpha[1], beta[1] = r_trend(t, True, center, scale)
    for j in range(0 if terms.per_pixel else terms.q):
        alpha[K - terms.q + j] = float(terms.center[j])
        beta[K - terms.q + j] = float(terms.scale[j])
    return np.concatenate([alpha, beta])


def boundary(type, crit, j, n):
    """strucchange's boundary at the counts ``j`` (> n) of a history of ``n`` values."""
    x = np.asarray(j, dtype=np.float64) / float(n)
    if type in ("OLS-MOSUM", "ME"):
        lp = np.where(x > np.e, np.log(np.maximum(x, 1e-300)), 1.0)
        return crit * np.sqrt(2.0 * lp)
    return np.sqrt(x * (x - 1.0) * (crit * crit + np.log(x / (x - 1.0))))
