"""Plain numpy float64 STL with missing values: slow and obvious; the kernels must match it.

On complete data this is exactly statsmodels' STL (its ``_stl.pyx``, a port of the netlib
Fortran): same windows, the same tricube cut-offs (.001 h / .999 h), the same ``h`` enlargement
``(len - n) // 2`` when the window is longer than the data, linear interpolation between jumped
fits, the same "stale window" for the last point when ``n - 1`` is not a multiple of the jump,
the same ends of the cycle-subseries (fits at positions 0 and k+1, falling back to the
neighbouring value) and the same ``6 * median`` bisquare robustness weights.

Missing values (NaN) generalise it the way stlplus and Serykh et al. do: each LOESS sees only the
valid points of its series (cycle-subseries), on the grid positions they occupy:

* window = the ``min(q, n_valid)`` valid points nearest to the fit position (ties go left),
* ``h`` = distance to the farther end of that window, plus ``(q - n_valid) // 2`` if q > n_valid,
* the degree-1 "flat data" test compares with the span of the valid positions,
* a fit whose weights are all zero falls back to the value of the nearest valid point,
* the median of the robustness weights is taken over the valid residuals only.

Degree 2 (an extension: statsmodels and the Fortran only have 0 and 1) fits a weighted quadratic
by the normal equations in centred coordinates; it falls back to degree 1 when that system is
(near) singular and to degree 0 as degree 1 does.

``interpolation="hermite"`` (an option; the default "linear" is statsmodels') fills the grid
between jumped fits by cubic Hermite interpolation from the fitted values and the slopes of the
local fits, as stlplus and Serykh et al. do: the slope is the derivative of the local polynomial at
the fit point (0 for degree 0, for a fit that falls back to a weighted mean and for the
nearest-value fallback).
"""
from __future__ import annotations

import math

import numpy as np

from .params import QUAD_DET_TOL, fit_points, periodic_mean, periodic_window, resolve_parameters


def nearest_window(valid_pos: np.ndarray, anchor: int, qh: int):
    """(lo, hi) positions of the ``qh`` valid points nearest ``anchor`` (ties to the left)."""
    p = np.searchsorted(valid_pos, anchor, side="right")  # valid_pos[p-1] <= anchor < valid_pos[p]
    left, right = p - 1, p
    picks = []
    for _ in range(qh):
        dl = anchor - valid_pos[left] if left >= 0 else math.inf
        dr = valid_pos[right] - anchor if right < len(valid_pos) else math.inf
        if dl <= dr:
            picks.append(valid_pos[left])
            left -= 1
        else:
            picks.append(valid_pos[right])
            right += 1
    lo, hi = min(picks), max(picks)
    return int(lo), int(hi)


def nearest_valid(valid_pos: np.ndarray, x: int) -> int:
    lo, _ = nearest_window(valid_pos, x, 1)
    return lo


def loess_est(pos, y, rw, q, deg, xf, lo, hi, n_valid, rng, with_slope=False):
    """One LOESS fit at ``xf`` from the valid points with positions in [lo, hi]; NaN if every
    weight is zero. ``pos``, ``y``, ``rw``: the valid points of the series. With
    ``with_slope``, returns (value, slope of the local polynomial at xf)."""
    v, slope = _loess_est(pos, y, rw, q, deg, xf, lo, hi, n_valid, rng)
    return (v, slope) if with_slope else v


def _loess_est(pos, y, rw, q, deg, xf, lo, hi, n_valid, rng):
    h = float(max(xf - lo, hi - xf))
    if q > n_valid:
        h += (q - n_valid) // 2
    sel = (pos >= lo) & (pos <= hi)
    x = pos[sel].astype(np.float64)
    yy = y[sel]
    r = np.abs(x - xf)
    w = np.where(r <= 0.999 * h, np.where(r <= 0.001 * h, 1.0,
                                          (1.0 - (r / max(h, 1e-300)) ** 3) ** 3), 0.0)
    w = w * rw[sel]
    a = w.sum()
    if a <= 0:
        return math.nan, 0.0
    w = w / a
    if h > 0 and deg > 0:
        a = (w * x).sum()
        c = (w * (x - a) ** 2).sum()
        if math.sqrt(c) > 0.001 * rng:
            if deg == 2:
                u = x - a
                c3 = (w * u ** 3).sum()
                c4 = (w * u ** 4).sum()
                det = c * (c4 - c * c) - c3 * c3
                if det > QUAD_DET_TOL * c ** 3:
                    m = np.array([[1.0, 0.0, c], [0.0, c, c3], [c, c3, c4]])
                    rhs = np.array([(w * yy).sum(), (w * u * yy).sum(), (w * u * u * yy).sum()])
                    beta = np.linalg.solve(m, rhs)
                    t = xf - a
                    return (float(beta[0] + beta[1] * t + beta[2] * t * t),
                            float(beta[1] + 2 * beta[2] * t))
            b = (xf - a) / c
            slope = float((w * (x - a) * yy).sum() / c)
            w = w * (b * (x - a) + 1.0)
            return float((w * yy).sum()), slope
    return float((w * yy).sum()), 0.0


def loess_series(y, rw, q, deg, jump, extend=False, interpolation="linear"):
    """LOESS of one series on the grid 1..n (y may hold NaN = missing). ``extend`` adds the
    cycle-subseries end fits at positions 0 and n+1 (returned array then has n+2 values).
    ``interpolation``: "linear" (statsmodels) or "hermite" between jumped fits."""
    n = len(y)
    valid = ~np.isnan(y)
    pos = np.flatnonzero(valid) + 1
    nv = len(pos)
    if nv == 0:
        return np.full(n + 2 if extend else n, np.nan)
    yv, wv = y[valid], rw[valid]
    rng = float(pos[-1] - pos[0])
    qh = min(q, nv)
    out = np.full(n + 2, np.nan)  # index = position
    slope = np.zeros(n + 2)
    pts = fit_points(n, q, jump)
    for xf, anchor in pts:
        lo, hi = nearest_window(pos, anchor, qh)
        v, sl = loess_est(pos, yv, wv, q, deg, xf, lo, hi, nv, rng, with_slope=True)
        if math.isnan(v):
            v, sl = yv[np.searchsorted(pos, nearest_valid(pos, xf))], 0.0
        out[xf], slope[xf] = v, sl
    for (a, _), (b, _) in zip(pts[:-1], pts[1:]):
        if b - a > 1 and interpolation == "hermite":
            # cubic Hermite from the values and slopes at both fit points
            d = b - a
            for j in range(a + 1, b):
                t = (j - a) / d
                out[j] = ((2 * t ** 3 - 3 * t ** 2 + 1) * out[a] + (t ** 3 - 2 * t ** 2 + t) * d
                          * slope[a] + (3 * t ** 2 - 2 * t ** 3) * out[b]
                          + (t ** 3 - t ** 2) * d * slope[b])
        elif b - a > 1:
            # linear interpolation between consecutive fit points (statsmodels' formula)
            delta = (out[b] - out[a]) / (b - a)
            for j in range(a + 1, b):
                out[j] = out[a] + delta * (j - a)
    if not extend:
        return out[1:n + 1]
    for xf, nb in ((0, 1), (n + 1, n)):
        lo, hi = nearest_window(pos, xf, qh)
        v = loess_est(pos, yv, wv, q, deg, xf, lo, hi, nv, rng)
        out[xf] = out[nb] if math.isnan(v) else v
    return out


def moving_average(x, length):
    c = np.concatenate([[0.0], np.cumsum(x)])
    return (c[length:] - c[:-length]) / length


def robustness_weights(y, fit):
    r = np.abs(y - fit)
    valid = ~np.isnan(r)
    rv = np.sort(r[valid])
    n = len(rv)
    w = np.zeros_like(r)
    if n == 0:
        return w
    cmad = 3.0 * (rv[n // 2] + rv[n - n // 2 - 1])
    if cmad == 0:
        w[valid] = 1.0
        return w
    rr = r[valid]
    w[valid] = np.where(rr <= 0.001 * cmad, 1.0,
                        np.where(rr <= 0.999 * cmad, (1.0 - (rr / cmad) ** 2) ** 2, 0.0))
    return w


def stl_series(y, period, seasonal, trend, low_pass, seasonal_deg, trend_deg, low_pass_deg,
               seasonal_jump, trend_jump, low_pass_jump, inner_iter, outer_iter,
               interpolation="linear"):
    """STL of one series (NaN = missing). Returns seasonal, trend, resid, weights; all NaN if
    a cycle-subseries has no valid value or fewer than 2 * period values are valid."""
    y = np.asarray(y, dtype=np.float64)
    n, npd = len(y), period
    valid = ~np.isnan(y)
    dead = (any(not valid[j::npd].any() for j in range(npd))
            or valid.sum() < 2 * npd)     # too few values: fewer than two periods' worth
    if dead:
        nan = np.full(n, np.nan)
        return nan, nan.copy(), nan.copy(), np.zeros(n)
    t = np.zeros(n)
    s = np.zeros(n)
    rw = np.where(valid, 1.0, 0.0)
    for k in range(outer_iter + 1):
        for _ in range(inner_iter):
            z = y - t
            c = np.empty(n + 2 * npd)
            for j in range(npd):
                sub = z[j::npd]
                c[j::npd][:len(sub) + 2] = loess_series(sub, rw[j::npd], seasonal,
                                                        seasonal_deg, seasonal_jump, extend=True,
                                                        interpolation=interpolation)
            ma = moving_average(moving_average(moving_average(c, npd), npd), 3)
            low = loess_series(ma, np.ones(n), low_pass, low_pass_deg, low_pass_jump,
                               interpolation=interpolation)
            s = c[npd:npd + n] - low
            t = loess_series(y - s, rw, trend, trend_deg, trend_jump, interpolation=interpolation)
        if k == outer_iter:
            break
        rw = robustness_weights(y, t + s)
    resid = y - s - t
    return s, t, resid, np.where(valid, rw, 0.0)


def stl(y, period, *, seasonal=7, trend=None, low_pass=None, seasonal_deg=None,
        trend_deg=None, low_pass_deg=None, seasonal_jump=None, trend_jump=None,
        low_pass_jump=None, robust=False,
        inner_iter=None, outer_iter=None, interpolation="linear"):
    """Batched reference: ``y`` [batch, time] or [time]; returns (seasonal, trend, resid, weights).
    ``seasonal="periodic"``: R's periodic seasonal (:func:`params.periodic_window`)."""
    seasonal, seasonal_deg, periodic = periodic_window(seasonal, seasonal_deg, np.shape(y)[-1])
    p = resolve_parameters(period, seasonal, trend, low_pass, seasonal_deg, trend_deg,
                           low_pass_deg, seasonal_jump, trend_jump, low_pass_jump, robust,
                           inner_iter, outer_iter, interpolation=interpolation)
    y = np.asarray(y, dtype=np.float64)
    one = y.ndim == 1
    y2 = y[None] if one else y
    outs = [stl_series(row, p["period"], p["seasonal"], p["trend"], p["low_pass"],
                       p["seasonal_deg"], p["trend_deg"], p["low_pass_deg"], p["seasonal_jump"],
                       p["trend_jump"], p["low_pass_jump"], p["inner_iter"], p["outer_iter"],
                       p["interpolation"])
            for row in y2]
    res = tuple(np.array([o[i] for o in outs]) for i in range(4))
    if periodic:
        periodic_mean(res[0], p["period"])
        res = (res[0], res[1], y2 - res[0] - res[1], res[3])
    return tuple(r[0] for r in res) if one else res
