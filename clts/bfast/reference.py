"""Plain numpy float64 BFAST-Monitor, one pixel at a time: slow and obvious.

Both conventions (see ``clts.bfast.api`` for the formulas):

``"r"``        R's ``bfast::bfastmonitor`` with ``strucchange``'s OLS-MOSUM monitoring: sigma with
               n - K degrees of freedom, boundary ``critval * sqrt(2 * log+(j / n))`` with ``j`` the
               observation count from the start of the history, ``-2`` when
               ``floor(hfrac * n) <= 1`` or ``n <= K``; history ``"ROC"`` = reverse-ordered
               Rec-CUSUM test.
``"bfast-py"`` the ``bfast`` 0.7 Python package: sigma with n - (2 + 2k) degrees of freedom,
               boundary ``critval * sqrt(2) * sqrt(log+(t / t_{n-1}))`` with ``t`` the time of
               the date, ``-2`` when ``n <= 5`` or ``N - n <= 5`` (valid values), means and
               magnitudes 0 for those.
In both, a singular history fit (fewer valid values than coefficients, or collinear) gives -2.
"""
from __future__ import annotations

import math

import numpy as np

from . import monitor_types
from .breakpoints_reference import history_bp_start
from .common import ZERO_VARIANCE_ULPS
from .common import (trend_scaling, unscale_coef, design_matrix, end_of_history, log_plus, n_coef,
                     rec_cusum_bound, time_axis)


def _ols(X, y):
    """Least squares; None when X has not full column rank."""
    if X.shape[0] < X.shape[1] or np.linalg.matrix_rank(X) < X.shape[1]:
        return None
    return np.linalg.lstsq(X, y, rcond=None)[0]


def recursive_residuals(X, y):
    """w_r = (y_r - x_r' b_{r-1}) / sqrt(1 + x_r' (X_{r-1}'X_{r-1})^-1 x_r), r = K+1..n
    (b_{r-1}: OLS on the first r-1 rows), computed directly at every step."""
    n, K = X.shape
    w = np.empty(n - K)
    for r in range(K, n):
        # by QR, not the normal equations: the first steps are nearly collinear, and an exact
        # fit's residuals must stay at rounding level (see ZERO_VARIANCE_ULPS)
        Q, R = np.linalg.qr(X[:r])
        b = np.linalg.solve(R, Q.T @ y[:r])
        x = X[r]
        z = np.linalg.solve(R.T, x)
        w[r - K] = (y[r] - x @ b) / math.sqrt(1.0 + z @ z)
    return w


def roc_start(X, y, level, zv_tol=0.0):
    """0-based start (into the rows of X, y: the valid history values) chosen by R's
    ``history_roc``: Rec-CUSUM on the reversed history, start after the first boundary crossing."""
    n, K = X.shape
    if n < K + 2 or _ols(X[::-1][:K], y[::-1][:K]) is None:
        return 0
    w = recursive_residuals(X[::-1], y[::-1])
    sigma = np.std(w, ddof=1)
    if not sigma > zv_tol * np.max(np.abs(y)):      # an exact fit: nothing to cut
        return 0
    proc = np.cumsum(np.concatenate([[0.0], w])) / (sigma * math.sqrt(n - K))
    x = proc[1:]
    m = x.size
    j = np.arange(1, m + 1) / m
    # R tests sctest's p-value against `level` but takes the crossing of boundary(), whose
    # alpha is always strucchange's default 0.05 (history_roc does not pass the level on)
    if not np.max(np.abs(x) / (1.0 + 2.0 * j)) > rec_cusum_bound(level):
        return 0
    b = rec_cusum_bound(0.05)
    cross = np.nonzero(np.abs(x) > b * (1.0 + 2.0 * j))[0]
    if cross.size == 0:
        return 0
    i_min = cross[0] + 1                      # 1-based, as R's which()
    return (m + 1) - i_min                    # length(process) - i_min + 1, made 0-based


def bfast_pixel(y, t, n, *, k=3, freq=365.0, trend=True, hfrac=0.25, level=0.05, period=10,
                history="all", convention="r", crit=None, dtype=np.float64, level_roc=None,
                type="OLS-MOSUM"):
    """BFAST-Monitor on one series ``y`` (NaN = missing) at times ``t``; the first ``n`` dates
    are the history. Returns a dict with break, mean, magnitude, valid, mosum, bounds,
    prediction, coef, sigma, history_start (date index) and status (see
    ``clts.bfast.api.STATUS``). ``history``: "all", "ROC" (the Rec-CUSUM test at ``level_roc``,
    default ``level``), "BP" (bfast's ``history_break``) or a start time on the axis of ``t``. ``dtype``: the working precision whose rounding decides a zero
    variance (sigma <= ZERO_VARIANCE_ULPS * eps * max |y| of the valid history values).
    ``type``: strucchange's monitoring process, "OLS-MOSUM" or "OLS-CUSUM" (the "mosum" and
    "bounds" entries then hold the CUSUM and its boundary)."""
    zv_tol = ZERO_VARIANCE_ULPS * float(np.finfo(dtype).eps)
    y = np.asarray(y, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    N = y.size
    K = n_coef(k, trend)
    if crit is None:
        crit = monitor_types.critval(type, hfrac, level, period, K, convention)
    # the trend column is centred and scaled (same column space, so the same fit) for conditioning
    center, scale = trend_scaling(t, n)
    X = design_matrix(t, k, freq, trend, center, scale)
    valid = ~np.isnan(y)
    out = dict(valid=int(valid.sum()), mosum=np.full(N - n, np.nan), bounds=np.full(N - n, np.nan),
               prediction=np.full(N, np.nan), coef=np.full(K, np.nan), sigma=np.nan,
               history_start=-1, status=0)
    hv = np.nonzero(valid[:n])[0]
    if np.isinf(y).any():
        fail_val = np.nan if convention == "r" else 0.0
        out.update(breaks=-2, mean=fail_val, magnitude=fail_val, status=4)
        return out
    if history == "ROC" and hv.size:
        s0 = roc_start(X[hv], y[hv], level_roc if level_roc is not None else level, zv_tol)
        hv = hv[s0:]
    elif history == "BP" and hv.size:
        s0 = history_bp_start(X[hv], y[hv])
        hv = hv[:0] if s0 is None else hv[s0:]
    elif not isinstance(history, str):              # a start time on the axis of t
        hv = hv[t[hv] >= float(history)]
    nb = hv.size
    mv = np.nonzero(valid[n:])[0] + n
    nm = mv.size
    if convention == "bfast-py":
        fail, fail_val = (nb <= 5 or nm <= 5), 0.0
    else:
        fail, fail_val = (math.floor(hfrac * nb) <= 1 or nb <= K), np.nan
        if type == "ME":        # a window of fewer values than coefficients has no fit
            fail = fail or math.floor(hfrac * nb) < K
    beta = None if fail else _ols(X[hv], y[hv])
    if beta is None:
        out.update(breaks=-2, mean=fail_val, magnitude=fail_val, status=1 if fail else 2)
        return out
    out["history_start"] = int(hv[0])
    pred = X @ beta
    r = y - pred
    out["prediction"] = pred
    out["coef"] = unscale_coef(beta, trend, center, scale)
    dof = nb - K if convention == "r" else nb - (2 + 2 * k)
    sigma = math.sqrt(np.sum(r[hv] ** 2) / dof)
    out["sigma"] = sigma
    ymax = np.max(np.abs(y[hv]))
    zero_var = sigma <= zv_tol * ymax
    h = int(math.floor(nb * hfrac))
    rc = np.concatenate([r[hv], r[mv]])        # valid residuals from the history start on
    # S: the residual sums (RE: as the CUSUM, ME: as the MOSUM; in the sigma -> 0 limit their
    # processes break where these leave the rounding, see below)
    if type in ("OLS-CUSUM", "RE"):     # every residual from the history start
        S = np.cumsum(rc)[nb:]
        zl = zv_tol * np.arange(nb + 1, nb + nm + 1)
    else:
        S = np.array([rc[j - h + 1:j + 1].sum() for j in range(nb, nb + nm)])
        zl = zv_tol * max(h, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        mo = S / (sigma * math.sqrt(nb))
    if type in ("RE", "ME") and not zero_var:   # the functional max_i |process_i|
        idx = np.concatenate([hv, mv])
        XR = design_matrix(t, k, freq, trend, t[0] - monitor_types.r_step(t),
                           monitor_types.r_step(t))
        mo = estimates_process(type, XR[idx], y[idx], nb, np.linalg.lstsq(XR[hv], y[hv],
                               rcond=None)[0], sigma, h)
    out["mosum"][mv - n] = mo
    if convention == "r":
        counts = np.arange(nb + 1, nb + nm + 1)
        out["bounds"][mv - n] = monitor_types.boundary(type, crit, counts, nb)
    else:
        out["bounds"][mv - n] = crit * math.sqrt(2.0) * np.sqrt(log_plus(t[mv] / t[n - 1]))
    if type in ("RE", "ME"):    # strucchange tests the running maximum of the functional
        over = np.nonzero(np.fmax.accumulate(mo) > out["bounds"][mv - n])[0] if nm else mv[:0]
    else:
        over = np.nonzero(np.abs(out["mosum"][mv - n]) > out["bounds"][mv - n])[0]
    out["magnitude"] = float(np.median(r[mv])) if nm else np.nan
    if zero_var:
        # an exact fit (status 3): S / sigma is infinite wherever the data leave the fit; the
        # break is the first monitoring date whose window sum exceeds the rounding of h values
        over = np.nonzero(np.abs(S / ymax) > zl)[0]
        out.update(breaks=int(mv[over[0]] - n) if over.size else -1, mean=np.nan, status=3)
        return out
    out["breaks"] = int(mv[over[0]] - n) if over.size else -1
    out["mean"] = float(np.mean(mo)) if nm else np.nan
    return out


def _root(A):
    """strucchange's ``root.matrix``: the symmetric square root of a positive semi-definite A."""
    w, V = np.linalg.eigh(A)
    return (V * np.sqrt(np.maximum(w, 0.0))) @ V.T


def estimates_process(type, Xc, yc, nb, beta, sigma, h):
    """strucchange's RE / ME monitoring processes at the monitoring values nb+1..len(yc) of the
    valid rows ``Xc``, ``yc`` from the history start (in R's basis: intercept, ``trend`` = 1, 2,
    ... along the series, harmonics: the estimates-based processes depend on it), history fit
    ``beta``, ``sigma``; ``h`` the ME window: the functional max_i |process_i| at each.

    RE (``mefp`` with rescale FALSE): ``k / (sigma^2 n) root(X_n'X_n) (b_k - beta)``, b_k the
    fit on rows 1..k (``Q12`` of the history holds 1 / (sigma sqrt n) and ``computeEmpProc``
    divides by sigma sqrt(n) again: not invariant to the data's scale, as R).
    ME (rescale TRUE): ``h / (sigma sqrt n) root(X_w'X_w) / sqrt(h) (b_w - beta)``, b_w the fit
    on the h rows up to k."""
    n_all, K = Xc.shape
    root_h = _root(Xc[:nb].T @ Xc[:nb]) / (sigma * math.sqrt(nb))
    stat = []
    for k in range(nb + 1, n_all + 1):
        rows = slice(0, k) if type == "RE" else slice(k - h, k)
        b = np.linalg.lstsq(Xc[rows], yc[rows], rcond=None)[0]
        if type == "RE":
            Q = root_h * k / (sigma * math.sqrt(nb))
        else:
            Q = _root(Xc[rows].T @ Xc[rows]) / math.sqrt(h) * h / (sigma * math.sqrt(nb))
        stat.append(np.max(np.abs(Q @ (b - beta))))
    return np.array(stat)


def bfast_monitor(y, dates, start_monitor, *, k=3, freq=365.0, trend=True, hfrac=0.25,
                  level=0.05, period=10, history="all", convention="r", time_axis_=0,
                  dtype=None, level_roc=None, type="OLS-MOSUM"):
    """The reference on a cube ``[time, ...]`` (float, NaN = missing): arrays of breaks, means,
    magnitudes, valids, status with the cube's pixel shape. Computed in float64; ``dtype`` (by
    default the cube's: float32 data were rounded to float32) is the precision whose rounding
    decides a zero variance."""
    y = np.asarray(y)
    if dtype is None:
        dtype = np.float32 if y.dtype == np.float32 else np.float64
    y = np.moveaxis(y.astype(np.float64), time_axis_, 0)
    t, ts = time_axis(dates, start_monitor)
    n = end_of_history(t, ts)
    if not isinstance(history, str):                # a start date / time
        history = time_axis(dates, history)[1]
    crit = monitor_types.critval(type, hfrac, level, period, n_coef(k, trend), convention)
    flat = y.reshape(y.shape[0], -1)
    res = [bfast_pixel(flat[:, i], t, n, k=k, freq=freq, trend=trend, hfrac=hfrac, level=level,
                       period=period, history=history, convention=convention, crit=crit,
                       dtype=dtype, level_roc=level_roc, type=type)
           for i in range(flat.shape[1])]
    shape = y.shape[1:]
    return dict(
        breaks=np.array([r["breaks"] for r in res], np.int32).reshape(shape),
        status=np.array([r["status"] for r in res], np.int32).reshape(shape),
        means=np.array([r["mean"] for r in res]).reshape(shape),
        magnitudes=np.array([r["magnitude"] for r in res]).reshape(shape),
        valids=np.array([r["valid"] for r in res], np.int32).reshape(shape),
        history_start=np.array([r["history_start"] for r in res], np.int32).reshape(shape),
        pixels=res)
