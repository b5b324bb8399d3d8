"""Plain numpy float64 ``bfast()`` (R's, Verbesselt et al. 2010), one pixel at a time: the
reference of ``clts.bfast_decompose``, written from R's algorithm with none of its batched
pieces: OLS by ``numpy.linalg.lstsq`` on the valid rows, the OLS-MOSUM process by window
sums, the Bai-Perron breakpoints of ``breakpoints_reference``, the segment fits on explicit
``breakfactor`` designs, the initial season from ``clts.stl.reference``. Slow (Python loops
over the dynamic programme): for tests on short series.
"""
from __future__ import annotations

import math

import numpy as np

from . import breakpoints_reference as bref
from .decompose_steps import MOSUM_CRIT, MOSUM_H, MOSUM_P


def _design(N, freq, season):
    """R's seasonal regressors: the harmonic model's 1, co, si, co2, si2, co3, si3 with
    t = 1..N; forecast's seasonaldummy (columns 1..freq-1) with the last season's rows -1."""
    t = np.arange(1, N + 1)
    if season == "harmonic":
        cols = [np.ones(N)]
        for j in (1, 2, 3):
            cols += [np.cos(2 * np.pi * t * j / freq), np.sin(2 * np.pi * t * j / freq)]
        return np.column_stack(cols)
    D = np.zeros((N, freq - 1))
    for i in range(N):
        s = i % freq
        if s < freq - 1:
            D[i, s] = 1.0
        else:
            D[i, :] = -1.0
    return D


def _ols(X, y):
    """Fitted values at the valid rows of ``y`` (NaN elsewhere)."""
    ok = ~np.isnan(y)
    out = np.full(y.shape, np.nan)
    beta = np.linalg.lstsq(X[ok], y[ok], rcond=None)[0]
    out[ok] = X[ok] @ beta
    return out


def mosum_pvalue(x, K, h, resid):
    """p-value of strucchange's OLS-MOSUM test from the valid residuals ``resid`` (the max
    functional): windows of floor(n h) consecutive residuals, sigma = sd sqrt((n-1)/(n-K))."""
    e = resid[~np.isnan(resid)]
    n = e.size
    nh = int(math.floor(n * h))
    proc = np.array([e[j:j + nh].sum() for j in range(n - nh + 1)])
    sigma = math.sqrt(np.sum((e - e.mean()) ** 2) / (n - K))
    if not sigma > 0:
        return None
    stat = np.max(np.abs(proc)) / (sigma * math.sqrt(n))
    crit = [float(np.interp(h, MOSUM_H, MOSUM_CRIT[:, j])) for j in range(4)]
    return float(np.interp(stat, [0.0] + crit, [1.0] + list(MOSUM_P))), sigma


def _segment_design(X, seg, S, shared):
    """The design of R's breakfactor models: the ``shared`` columns once, every other column
    once per segment (zero outside it)."""
    cols = [X[:, j] for j in shared]
    for s in range(S):
        for j in range(X.shape[1]):
            if j not in shared:
                cols.append(np.where(seg == s, X[:, j], 0.0))
    return np.column_stack(cols)


def _component(X, z, h, breaks, level, shared, scale, exact_tol):
    """Test, breakpoints, fit of one component: (fitted, reported breaks (date indices),
    fitted segments' breaks, segment lines [S, K], p-value, exact, status)."""
    N, K = X.shape
    ok = ~np.isnan(z)
    idx = np.nonzero(ok)[0]
    fit0 = _ols(X, z)
    pv = mosum_pvalue(None, K, h, z - fit0)
    exact = pv is None or pv[1] <= exact_tol * scale
    p = np.nan if exact else pv[0]
    none = (fit0, [], [], None, p, exact, 0)
    if exact or p > level:
        return none
    # R's table holds up to ``breaks`` breaks (every one that fits for None / a criterion): its
    # BIC, which the fit takes, chooses among those
    want = N if breaks is None or isinstance(breaks, str) else int(breaks)
    r = bref.breakpoints_pixel(X, z, h=h, breaks=want, check_rank=False)
    if r["status"]:
        return (None, [], [], None, p, exact, 1)
    if breaks is None or isinstance(breaks, str):
        m_rep = bref.select(r, "BIC" if breaks in (None, "BIC") else "LWZ")
    else:
        m_rep = min(int(breaks), r["breaks"])
    m_fit = bref.select(r, "BIC")
    if m_rep == 0:
        return none
    rep = [int(idx[b - 1]) for b in r["bp"][m_rep]]
    fitb = [int(idx[b - 1]) for b in r["bp"][m_fit]]
    seg = np.searchsorted(np.array(fitb), np.arange(N), side="left")
    S = m_fit + 1
    Z = _segment_design(X, seg, S, shared)
    beta = np.linalg.lstsq(Z[ok], z[ok], rcond=None)[0]
    fitted = np.full(N, np.nan)
    fitted[ok] = Z[ok] @ beta
    lines = np.zeros((S, K))
    k = len(shared)
    for s in range(S):
        lines[s, list(shared)] = beta[:len(shared)]
        per = [j for j in range(K) if j not in shared]
        lines[s, per] = beta[k + s * len(per):k + (s + 1) * len(per)]
    return fitted, rep, fitb, lines, p, exact, 0


def bfast_pixel(y, freq, season="dummy", h=0.15, max_iter=10, breaks=(None, None),
                level=(0.05, 0.05), season0=None, exact_tol=1000 * np.finfo(float).eps):
    """R's ``bfast()`` on one series ``y`` [N] (NaN = missing). ``season0``: the initial season
    (default: R's ``stl(y, "periodic")`` by ``clts.stl.reference``, freq even: its low-pass
    window is then R's). Returns a dict: trend, seasonal, trend_breaks, season_breaks (date
    indices), iterations, magnitude, magnitude_break, mags, status (0, 1 a breakpoint search
    without room, 2 exact fit)."""
    y = np.asarray(y, np.float64)
    N = y.size
    t = np.arange(N, dtype=np.float64)
    XT = np.column_stack([np.ones(N), t])
    XS = _design(N, freq, season) if season != "none" else None
    ok = ~np.isnan(y)
    scale = float(np.max(np.abs(y[ok])))
    if season == "none":
        St = np.zeros(N)
    elif season0 is not None:
        St = np.asarray(season0, np.float64).copy()
    else:
        from ..stl import reference as sref
        sw = 10 * N + 1
        tw = int(math.ceil(1.5 * freq / (1 - 1.5 / sw)))
        tw += tw % 2 == 0
        lw = freq + (freq % 2 == 0)
        St = sref.stl(y, freq, seasonal="periodic", trend=tw, low_pass=lw, trend_deg=1,
                      low_pass_deg=1, seasonal_jump=int(math.ceil(sw / 10)),
                      trend_jump=int(math.ceil(tw / 10)), low_pass_jump=int(math.ceil(lw / 10)),
                      inner_iter=2, outer_iter=0)[0]
    prev = ([], [])
    shared = [0] if season == "harmonic" else []
    exact_any = False
    it = 0
    while it < max_iter:
        it += 1
        V = y - St
        T, rT, fT, lines, pT, exT, stT = _component(XT, V, h, breaks[0], level[0], [], scale,
                                                    exact_tol)
        if stT:
            return dict(status=stT, iterations=it)
        if season == "none":
            S, rS, exS = np.where(ok, 0.0, np.nan), [], False
        else:
            S, rS, _, _, _, exS, stS = _component(XS, y - T, h, breaks[1], level[1], shared,
                                                  scale, exact_tol)
            if stS:
                return dict(status=stS, iterations=it)
        exact_any |= exT or exS
        St = S
        if (rT, rS) == prev:
            break
        prev = (rT, rS)
    mags = []
    if rT and lines is not None:
        idx = np.nonzero(ok)[0]
        for r in range(len(fT)):
            if r >= len(rT):
                mags.append(np.nan)
                continue
            b = rT[r]
            nxt = idx[np.searchsorted(idx, b) + 1]
            mags.append(float(XT[nxt] @ lines[r + 1] - XT[b] @ lines[r]))
    if rT:
        finite = [abs(m) if not np.isnan(m) else -np.inf for m in mags]
        k = int(np.argmax(finite)) if mags else 0
        magnitude = mags[k] if mags and np.isfinite(finite[k]) else np.nan
        mbreak = rT[k] if mags and np.isfinite(finite[k]) else -1
    else:
        magnitude, mbreak = 0.0, -1
    return dict(trend=T, seasonal=S if season != "none" else np.zeros(N), trend_breaks=rT,
                season_breaks=rS, iterations=it, magnitude=magnitude, magnitude_break=mbreak,
                mags=mags, status=2 if exact_any else 0)
