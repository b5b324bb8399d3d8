"""Robust regression as R's ``MASS::rlm`` (its defaults: M-estimation with Huber's psi,
k = 1.345, the scale by the median absolute residual, ``maxit = 20``, ``acc = 1e-4``), batched
over pixels: what ``clts.bfast01(..., reg="rlm")`` fits (R's ``bfast01(reg = "rlm")``).

Per pixel, over its valid values (``rlm.default``'s iteration):

1. start from the least-squares fit (coefficients, residuals r);
2. repeat at most ``maxit`` times: scale s = median(|r|) / 0.6745 (stop, converged, if s = 0);
   weights w = min(1, k / |r / s|); the weighted least-squares fit, its residuals r'; stop when
   sqrt(sum((r - r')^2) / max(1e-20, sum(r^2))) <= ``acc``.

Several disjoint row masks ("groups") per pixel are fitted with their own coefficients and one
shared scale: R's ``rlm(response ~ segment/(.) - 1)``, the two segments of ``bfast01``'s
1-break model. The weighted fits solve the normal equations in float64
(``breaks_api.masked_fit``, weights as its mask); pixels leave the iteration as they converge,
so each is iterated exactly as R iterates it (its own count).

:func:`robust_slope_pvalue` is ``sfsmisc::f.robftest`` of the slope of ``rlm(u ~ time)``
(``summary.rlm(method = "XtWX")``'s covariance): the segments' test of ``bfast01classify`` on
rlm fits. :func:`rlm_reference` is the plain one-series reference (QR least squares, a Python
loop) the batched fit is tested against.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .breaks_api import masked_fit

#: Huber's tuning constant, MAD's consistency factor, R's defaults of rlm
HUBER_K = 1.345
MAD_CONST = 0.6745
MAXIT = 20
ACC = 1e-4


@dataclass
class RlmFit:
    """:func:`rlm_fit`'s result for P pixels and G groups of K coefficients."""
    coef: np.ndarray        # [G, P, K] (NaN: a rank-deficient weighted fit)
    resid: np.ndarray       # [N, P] y - fit on the valid rows, 0 elsewhere (R's wresid)
    scale: np.ndarray       # [P] the last scale computed (R's fit$s); NaN: not fitted
    converged: np.ndarray   # [P] bool (R's fit$converged; False where not fitted)
    iterations: np.ndarray  # [P] int: weighted fits done


def masked_median(a, mask):
    """[P] median of each column of ``a`` [N, P] over its rows ``mask`` (R's ``median``: the
    mean of the two middle values for an even count; NaN for none)."""
    n = mask.sum(axis=0)
    s = np.sort(np.where(mask, a, np.inf), axis=0)
    lo = np.clip((n - 1) // 2, 0, None)[None, :]
    hi = np.clip(n // 2, 0, a.shape[0] - 1)[None, :]
    med = 0.5 * (np.take_along_axis(s, lo, 0)[0] + np.take_along_axis(s, hi, 0)[0])
    return np.where(n > 0, med, np.nan)


def _predict(X, beta):
    """[N, P] fit of ``beta`` [P, K] with ``X`` [N, K] or per pixel [N, P, K]."""
    return (beta @ X.T).T if X.ndim == 2 else np.einsum("tpk,pk->tp", X, beta)


def _weighted_fit(X, y0, w):
    """[P, K] weighted least squares of ``y0`` [N, P] on ``X`` with weights ``w`` [N, P] (0:
    row not used) whose unweighted fit was of full rank: Huber weights are positive, so the
    normal equations stay regular (``masked_fit``, with its rank check, where they are not)."""
    if X.ndim == 3:
        return masked_fit(X, y0, w)
    N, K = X.shape
    iu, ju = np.triu_indices(K)
    g = (X[:, iu] * X[:, ju]).T @ w                        # [K(K+1)/2, P]: one triangle
    G = np.empty((w.shape[1], K, K))
    G[:, iu, ju] = g.T
    G[:, ju, iu] = g.T
    Xy = (X.T @ (w * y0)).T
    try:
        return np.linalg.solve(G, Xy[..., None])[..., 0]
    except np.linalg.LinAlgError:
        return masked_fit(X, y0, w)


def _wls(X, y0, groups, w, first=False):
    """Weighted least squares per group: coefficients [G, P, K] and the fit [N, P]
    (``first``: the unweighted start, through ``masked_fit``'s rank check). The groups'
    fits are one batch of G P columns (the groups are disjoint: the fit is their sum)."""
    G, P = len(groups), y0.shape[1]
    if G == 1:
        W, Y, XX = groups[0] * w, y0, X
    else:
        W = np.concatenate([g * w for g in groups], axis=1)
        Y = np.tile(y0, (1, G))
        XX = X if X.ndim == 2 else np.concatenate([X] * G, axis=1)
    b = masked_fit(XX, Y, W) if first else _weighted_fit(XX, Y, W)
    pred = _predict(XX, b)
    fit = pred[:, :P] * groups[0]
    for j in range(1, G):
        fit += pred[:, j * P:(j + 1) * P] * groups[j]
    return b.reshape(G, P, -1), fit


def rlm_fit(X, y0, groups, *, k=HUBER_K, maxit=MAXIT, acc=ACC) -> RlmFit:
    """R's ``rlm`` (see the module docstring) of each column of ``y0`` [N, P] (values on the
    rows of ``groups``, anything elsewhere) on ``X`` ([N, K] or per pixel [N, P, K]); ``groups``:
    a list of disjoint [N, P] bool masks, each with its own coefficients, one scale per pixel.
    A pixel without rows is not fitted (NaN coefficients and scale)."""
    groups = [np.asarray(g, bool) for g in groups]
    valid = np.logical_or.reduce(groups)
    y0 = np.where(valid, np.asarray(y0, np.float64), 0.0)
    P = y0.shape[1]
    with np.errstate(all="ignore"):
        coef, fit = _wls(X, y0, groups, valid.astype(np.float64), first=True)
    resid = np.where(valid, y0 - fit, 0.0)
    scale = np.full(P, np.nan)
    converged = np.zeros(P, bool)
    iterations = np.zeros(P, np.int32)
    act = np.nonzero(valid.any(axis=0))[0]
    for it in range(maxit):
        if act.size == 0:
            break
        r, m = resid[:, act], valid[:, act]
        s = masked_median(np.abs(r), m) / MAD_CONST
        scale[act] = s
        zero = ~(s != 0)                   # R: scale == 0 ends the iteration, converged
        converged[act[zero]] = True
        keep = ~zero
        act, r, m, s = act[keep], r[:, keep], m[:, keep], s[keep]
        if act.size == 0:
            break
        with np.errstate(all="ignore"):
            w = np.where(m, np.minimum(1.0, k / np.abs(r / s)), 0.0)
            Xa = X if X.ndim == 2 else X[:, act]
            ca, fa = _wls(Xa, y0[:, act], [g[:, act] for g in groups], w)
            new = np.where(m, y0[:, act] - fa, 0.0)
            conv = np.sqrt(np.sum((r - new) ** 2, axis=0)
                           / np.maximum(1e-20, np.sum(r * r, axis=0)))
        coef[:, act] = ca
        resid[:, act] = new
        iterations[act] = it + 1
        done = conv <= acc
        converged[act[done]] = True
        act = act[~done]
    return RlmFit(coef=coef, resid=resid, scale=scale, converged=converged,
                  iterations=iterations)


def robust_slope_pvalue(u0, tau, mask, tol, *, k=HUBER_K):
    """p-value of ``sfsmisc::f.robftest(rlm(u ~ tau))`` (the Wald F test of the slope with
    ``summary.rlm(method = "XtWX")``'s covariance) over each column's rows ``mask`` of ``u0``
    [N, P]; ``tau`` [N, 1] the times. NaN where ``u`` varies by at most ``tol`` [P] (rounding
    noise, no test: as the least-squares test of ``bfast01classify``) or fewer than 3 rows."""
    from .sctest import betainc_reg
    n = mask.sum(axis=0).astype(np.float64)
    tau = np.asarray(tau, np.float64).reshape(-1)
    tc = (tau - tau.mean())[:, None]          # a shift of the times leaves the slope's test
    with np.errstate(all="ignore"):
        um = np.sum(np.where(mask, u0, 0.0), axis=0) / n
        syy = np.sum(np.where(mask, u0 - um, 0.0) ** 2, axis=0)
        tm = np.sum(np.where(mask, tc, 0.0), axis=0) / n
        sxx = np.sum(np.where(mask, tc - tm, 0.0) ** 2, axis=0)
    X = np.column_stack([np.ones(tau.size), tc[:, 0]])
    f = rlm_fit(X, u0, [mask], k=k)
    b = f.coef[0]
    p = 2
    with np.errstate(all="ignore"):
        z = f.resid / f.scale
        w = np.where(mask, np.minimum(1.0, k / np.abs(z)), 0.0)
        S = np.sum((f.resid * w) ** 2, axis=0) / (n - p)
        psip = np.where(mask, np.abs(z) <= k, False).astype(np.float64)
        mn = np.sum(psip, axis=0) / n
        var = np.sum(np.where(mask, psip - mn, 0.0) ** 2, axis=0) / (n - 1)
        kappa = 1 + p * var / (n * mn * mn)
        stddev = np.sqrt(S) * kappa / mn
        ww = w / (np.sum(w, axis=0) / n)                      # X sqrt(w / mean(w))
        g00 = np.sum(ww, axis=0)
        g01 = np.sum(ww * tc, axis=0)
        g11 = np.sum(ww * tc * tc, axis=0)
        cov11 = g00 / (g00 * g11 - g01 * g01)                 # (X'WX)^-1's slope entry
        F = b[:, 1] ** 2 / (cov11 * stddev ** 2)
        df = n - p
        pv = betainc_reg(df / 2, 0.5, df / (df + F))
    return np.where((n > 2) & (sxx > 0) & (syy > n * tol * tol), pv, np.nan)


def bic(rss, n, k):
    """R's ``BIC`` of a Gaussian linear model (``logLik.lm``: ``df = k + 1``) from its residuals'
    sum of squares ``rss`` over ``n`` values and ``k`` coefficients: what ``bfast01`` reports
    for rlm fits too (``logLik.lm`` on their unweighted residuals)."""
    n = np.asarray(n, np.float64)
    with np.errstate(all="ignore"):
        return n * (np.log(2 * np.pi) + 1 - np.log(n) + np.log(rss)) + np.log(n) * (k + 1)


def bfast01_models(y, X, bp, ok):
    """bfast01's two rlm models on a block of pixels: ``y`` [N, P] (NaN: missing), ``X`` its
    design, ``bp`` [P] the break (last index of segment 1), ``ok`` [P] the pixels analysed.
    Returns (coefficients of the 0-break model [P, K], of the two segments [2, P, K], their
    residuals' sums of squares [2, P], converged [2, P])."""
    y = np.asarray(y, np.float64)
    valid = ~np.isnan(y) & ok[None, :]
    y0 = np.where(valid, y, 0.0)
    s1 = valid & (np.arange(y.shape[0])[:, None] <= bp[None, :])
    f0 = rlm_fit(X, y0, [valid])
    f1 = rlm_fit(X, y0, [s1, valid & ~s1])
    rss = np.stack([np.sum(f0.resid ** 2, axis=0), np.sum(f1.resid ** 2, axis=0)])
    return f0.coef[0], f1.coef, rss, np.stack([f0.converged, f1.converged])


# ------------------------------------------------------------------------- plain reference

def rlm_reference(X, y, groups=None, *, k=HUBER_K, maxit=MAXIT, acc=ACC):
    """One series: R's ``rlm.default`` step by step (QR least squares, a Python loop). ``X``
    [n, K], ``y`` [n] (all valid), ``groups``: a list of index arrays (default: all rows, one
    group). Returns (coefficients [G, K], residuals [n], scale, converged, iterations)."""
    X = np.asarray(X, np.float64)
    y = np.asarray(y, np.float64)
    n = y.size
    groups = [np.arange(n)] if groups is None else [np.asarray(g) for g in groups]

    def wls(w):
        coef, res = [], np.empty(n)
        for g in groups:
            sw = np.sqrt(w[g])
            b = np.linalg.lstsq(X[g] * sw[:, None], y[g] * sw, rcond=None)[0]
            coef.append(b)
            res[g] = y[g] - X[g] @ b
        return np.array(coef), res

    coef, resid = wls(np.ones(n))
    scale, done, it = np.nan, False, 0
    for it in range(1, maxit + 1):
        old = resid
        scale = float(np.median(np.abs(resid))) / MAD_CONST
        if scale == 0:
            done, it = True, it - 1
            break
        u = np.abs(resid / scale)
        w = np.array([min(1.0, k / v) if v > 0 else 1.0 for v in u])
        coef, resid = wls(w)
        conv = np.sqrt(np.sum((old - resid) ** 2) / max(1e-20, float(np.sum(old ** 2))))
        if conv <= acc:
            done = True
            break
    return coef, resid, scale, done, it
