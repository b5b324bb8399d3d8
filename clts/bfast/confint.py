"""Confidence intervals of Bai-Perron breakpoints, as strucchange's ``confint.breakpointsfull``
with its defaults (``het.reg = TRUE``, ``het.err = TRUE``, no ``vcov.``): Bai's (1997)
asymptotic distribution of the break date, per break from the fits of the two segments around
it. Host side, float64, plain Python per break (a root find on a CDF).

For the break between segments 1 and 2 (least-squares fits beta_1, beta_2 on n_1, n_2 values):
delta = beta_2 - beta_1, Q_s = X_s'X_s / n_s, sigma_s^2 = RSS_s / n_s, xi = delta'Q_2 delta /
delta'Q_1 delta, phi_s = sigma_s; the interval is
[bp - ceil(u), bp - floor(l)] with u, l the (1 + level) / 2 and (1 - level) / 2 quantiles of
strucchange's ``pargmaxV`` times phi_1^2 / delta'Q_1 delta (in values, not dates).
"""
from __future__ import annotations

import math

import numpy as np

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _log_pnorm_neg(z: float) -> float:
    """log Phi(-z) for z >= 0 (R's pnorm(-z, log.p = TRUE))."""
    if z < 30.0:
        return math.log(0.5 * math.erfc(z / math.sqrt(2.0)))
    z2 = z * z
    return -0.5 * z2 - math.log(z) - _LOG_SQRT_2PI + math.log1p(-1 / z2 + 3 / (z2 * z2))


def pargmaxV(x: float, xi=1.0, phi1=1.0, phi2=1.0) -> float:
    """strucchange's ``pargmaxV``: the CDF of the argmax of a two-sided Brownian motion with
    drift (Bai 1997)."""
    phi = xi * (phi2 / phi1) ** 2
    if x < 0:
        x = -x
        frac = xi / phi
        return (-math.exp(math.log(x) / 2 - x / 8 - _LOG_SQRT_2PI)
                - (phi / xi * (phi + 2 * xi) / (phi + xi))
                * math.exp(frac * (1 + frac) * x / 2 + _log_pnorm_neg((0.5 + frac) * math.sqrt(x)))
                + math.exp(math.log(x / 2 - 2 + (phi + 2 * xi) ** 2 / ((phi + xi) * xi))
                           + _log_pnorm_neg(math.sqrt(x) / 2)))
    frac = xi * xi / phi
    lx = math.log(x) if x > 0 else -math.inf
    sx = math.sqrt(x)
    return (1 + math.sqrt(frac) * math.exp(lx / 2 - frac * x / 8 - _LOG_SQRT_2PI)
            + (xi / phi * (2 * phi + xi) / (phi + xi))
            * math.exp((phi + xi) * x / 2 + _log_pnorm_neg((phi + xi / 2) / math.sqrt(phi) * sx))
            - math.exp(math.log((2 * phi + xi) ** 2 / ((phi + xi) * phi) - 2 + frac * x / 2)
                       + _log_pnorm_neg(math.sqrt(frac) * sx / 2)))


def _root(f, lo, hi, target):
    """x in [lo, hi] with f(x) = target (f increasing), by bisection to rounding."""
    flo = f(lo) - target
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        fm = f(mid) - target
        if (fm < 0) == (flo < 0):
            lo, flo = mid, fm
        else:
            hi = mid
    return 0.5 * (lo + hi)


def break_interval(delta, Q1, Q2, sigma1, sigma2, level=0.95):
    """(lower, upper) offsets in values of one break (see the module docstring), or None where
    strucchange gives NA (the CDF at 0 outside the interval's levels)."""
    a2 = (1 - level) / 2
    q1 = float(delta @ Q1 @ delta)
    q2 = float(delta @ Q2 @ delta)
    if not (q1 > 0 and q2 > 0 and sigma1 > 0 and sigma2 > 0):
        return None
    xi = q2 / q1
    phi1, phi2 = math.sqrt(sigma1), math.sqrt(sigma2)

    def F(x):
        return pargmaxV(x, xi, phi1, phi2)
    p0 = F(0.0)
    if not (a2 <= p0 <= 1 - a2) or math.isnan(p0):
        return None
    ub = lb = 0.0
    while F(ub) < 1 - a2:
        ub += 1000
    while F(lb) > a2:
        lb -= 1000
    scale = phi1 ** 2 / q1
    return _root(F, lb, 0.0, a2) * scale, _root(F, 0.0, ub, 1 - a2) * scale


def intervals(X, y, bps, level=0.95, het_err=True, coefs=None):
    """[m, 2] (lower, upper) 1-based value indices of the breakpoints ``bps`` (1-based, R's) of
    one series' valid values X [n, K], y [n]; -1 where strucchange gives NA. ``het_err=False``
    (R's bfast()): one error variance, the segmented fit's RSS / n, for every segment.
    ``coefs`` [m + 1, K]: the segments' coefficients (R's ``bfast01(reg = "rlm")``: its rlm
    fits, whose residuals give the variances); default their least-squares fits."""
    n = y.size
    edges = [0] + list(bps) + [n]
    fits = []
    for a, b in zip(edges[:-1], edges[1:]):
        Xs, ys = X[a:b], y[a:b]
        beta = (np.linalg.lstsq(Xs, ys, rcond=None)[0] if coefs is None
                else np.asarray(coefs[len(fits)], np.float64))
        r = ys - Xs @ beta
        fits.append((beta, Xs.T @ Xs / (b - a), float(r @ r) / (b - a)))
    if not het_err:
        pooled = sum(f[2] * (b - a) for f, a, b in zip(fits, edges[:-1], edges[1:])) / n
        fits = [(f[0], f[1], pooled) for f in fits]
    out = np.full((len(bps), 2), -1, np.int64)
    for i, bp in enumerate(bps):
        (b1, Q1, s1), (b2, Q2, s2) = fits[i], fits[i + 1]
        iv = break_interval(b2 - b1, Q1, Q2, s1, s2, level)
        if iv is not None:
            lo, up = iv
            out[i] = (bp - math.ceil(up), bp - math.floor(lo))
    return out
