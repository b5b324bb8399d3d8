"""strucchange's structural-change tests of "no break" that ``clts.bfast01`` offers besides
OLS-MOSUM and BIC, batched over a block of pixels on the host (float64), from the 0-break fit's
residuals ``e`` of each pixel's valid values (n of them, K regressors):

- ``"OLS-CUSUM"`` (``sctest(efp(type = "OLS-CUSUM"))``): the largest |cumulative sum| of ``e``
  over sigma sqrt(n) (sigma with n - K degrees of freedom); p-value of the Brownian bridge's
  supremum (``decompose_steps.bridge_sup_pvalue``, as ``bfast_decompose``'s OLS-CUSUM);
- ``"supF"`` (``sctest(Fstats(from = trim))``, Andrews' sup-Wald): the largest
  F(i) = (RSS0 - RSS(i)) / (RSS(i) / (n - 2 K)) over the single breaks i with segments of at
  least ``trim`` values, RSS(i) the two segments' RSS; p-value Hansen's approximation
  (strucchange's ``pvalue.Fstats``: per K a table of 25 chi-square approximations over the
  trimming, interpolated in it), or the Chow test's F(K, n - 2 K) where one break alone is
  admissible;
- ``"aveF"`` and ``"expF"`` (``sctest(Fstats(from = trim), type = "aveF" / "expF")``, which R's
  ``bfast01`` also accepts; Andrews and Ploberger's average and exponential F): the mean of
  those F and log(mean(exp(F / 2))) (computed without overflow, where R's is Inf beyond
  F = 1419), with Hansen's tables for them (aveF: Chow's test where one break alone is
  admissible, as supF; expF: never);
- ``"supLM"`` (``sctest(gefp(...), functional = supLM(trim / n))``, the score-based LM
  process): the largest S(t)' J^-1 S(t) / (t/n (1 - t/n)) over t in floor(n from) ..
  floor(n (1 - from)), S(t) the cumulative sum of the scores x_i e_i and J their sum of
  outer products; the same p-value as supF with the process's dimension.

The RSS of every single break is that of two least-squares fits of ``e`` (the same RSS as of
the values: the 0-break fit lies in each segment's span) from cumulative sums of x x', x e and
e^2 over each pixel's valid values: s - |L^-1 g|^2 with G = L L' (a Cholesky factorisation
vectorised over every (pixel, candidate); e is small, so s - .. loses nothing to
cancellation).
References: Hansen, "Approximate asymptotic p values for structural-change tests" (Journal of
Business & Economic Statistics 1997); Andrews, "Tests for parameter instability and structural
change with unknown change point" (Econometrica 1993); Zeileis, Leisch, Hornik and Kleiber,
"strucchange: An R package for testing for structural change in linear regression models"
(Journal of Statistical Software 2002).
"""
from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np


#: sub-blocks of the single-break RSS: pixels whose [N, P, K, K] cumulative Gram matrices
#: stay within about this many bytes
GRAM_BYTES = 32 << 20


def chisq_sf(x, df):
    """P(chi2(df) > x), elementwise (the regularized upper incomplete gamma Q(df / 2, x / 2):
    its series below a + 1, its continued fraction above). NaN in, NaN out."""
    x, df = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(df, np.float64))
    a, z = df / 2.0, x / 2.0
    out = np.full(x.shape, np.nan)
    good = np.isfinite(z) & (a > 0)
    out[good & (z <= 0)] = 1.0
    lg = np.vectorize(math.lgamma, otypes=[np.float64])
    ser = good & (z > 0) & (z < a + 1)
    if ser.any():
        aa, zz = a[ser], z[ser]
        term = 1.0 / aa
        tot = term.copy()
        ap = aa.copy()
        for _ in range(1000):
            ap = ap + 1.0
            term = term * zz / ap
            tot = tot + term
            if np.all(np.abs(term) < np.abs(tot) * 1e-17):
                break
        out[ser] = 1.0 - tot * np.exp(-zz + aa * np.log(zz) - lg(aa))
    cf = good & (z > 0) & ~ser & np.isfinite(z)
    if cf.any():
        aa, zz = a[cf], z[cf]
        tiny = 1e-300
        b = zz + 1.0 - aa
        c = np.full_like(zz, 1.0 / tiny)
        d = 1.0 / b
        h = d.copy()
        for i in range(1, 1000):
            an = -i * (i - aa)
            b = b + 2.0
            d = an * d + b
            d = np.where(np.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            d = 1.0 / d
            delta = d * c
            h = h * delta
            if np.all(np.abs(delta - 1.0) < 1e-16):
                break
        out[cf] = np.exp(-zz + aa * np.log(zz) - lg(aa)) * h
    out[good & np.isposinf(z)] = 0.0
    return out


@functools.lru_cache(maxsize=1)
def fstats_tables() -> dict:
    """{"supF" | "aveF" | "expF": [40, 25, 5]} strucchange's tables of Hansen's p-values
    (``fstats_tables.csv`` beside this module, its header says what they hold): per k and
    trimming row (b0, b1, b2, b3, df). Read once, on first use."""
    path = Path(__file__).with_name("fstats_tables.csv")
    kinds = np.loadtxt(path, delimiter=",", comments="#", skiprows=8, usecols=0, dtype=str)
    vals = np.loadtxt(path, delimiter=",", comments="#", skiprows=8, usecols=range(1, 8))
    out = {}
    for kind in ("supF", "aveF", "expF"):
        v = vals[kinds == kind]
        if v.shape[0] != 1000 or not (v[:, 0] == np.repeat(np.arange(1, 41), 25)).all():
            raise RuntimeError(f"{path}: the {kind} table is incomplete")
        out[kind] = np.column_stack([v[:, 3:7], v[:, 2]]).reshape(40, 25, 5)
    return out


def fstats_pvalue(stat, k, lam, kind="supF"):
    """strucchange's ``pvalue.Fstats(stat, type = kind, k, lambda)`` (``kind``: "supF",
    "aveF" or "expF"), elementwise over ``stat`` and ``lam`` (k: the number of regressors,
    capped at 40 as there). Only the (at most two) table rows each value's trimming
    interpolates between are evaluated."""
    k = min(int(k), 40)
    x = np.asarray(stat, np.float64)
    lam = np.broadcast_to(np.asarray(lam, np.float64), x.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where(lam < 1, lam, 1.0 / (1.0 + np.sqrt(lam)))
        taua = (0.51 - tau) * 50.0
        t1 = np.clip(np.nan_to_num(np.floor(taua), nan=1.0), 1, 24).astype(np.int64)
    beta = fstats_tables()[kind][k - 1]
    m = 2 if kind == "supF" else 4            # the polynomial's coefficients; then df

    def row(r):                        # P(chi2(df_r) > max(0, sum_j b_rj x^j)) per value
        b = beta[r]
        with np.errstate(invalid="ignore", over="ignore"):
            d = sum(b[..., j] * x ** j for j in range(m))
        return chisq_sf(np.where(d > 0, d, 0.0), b[..., 4])
    upper = tau >= 0.49
    lower = tau <= 0.01
    r_lo = np.where(upper, 0, np.where(lower, 24, t1 - 1))
    lo, hi = row(r_lo), row(t1)
    chi = chisq_sf(x, k)
    p = (t1 + 1 - taua) * lo + (taua - t1) * hi
    p = np.where(upper, ((0.5 - tau) * lo + (tau - 0.49) * chi) * 100.0, p)
    p = np.where(lower, lo, p)
    p = np.where(tau == 0.5, chi, p)
    p = np.where(np.isposinf(x), 0.0, p)
    return np.where(np.isnan(x) | np.isnan(tau), np.nan, p)


def cusum_statistic(S, sigma, n):
    """The OLS-CUSUM statistic from the cumulative sums ``S`` [N + 1, P] of the compacted
    residuals (row 0: 0), their sigma [P] and count n [P]."""
    with np.errstate(all="ignore"):
        return np.max(np.abs(S), axis=0) / (sigma * np.sqrt(n))


def _chol_rss(G, g, s):
    """s - g' G^-1 g over the leading axis M (G [M, K, K], g [M, K], s [M]): the RSS of a
    least-squares fit from its Gram matrix, by a Cholesky factorisation vectorised over M
    (K steps; NaN where a pivot is below K eps of G's largest diagonal: rank-deficient)."""
    M, K = g.shape
    L = np.zeros_like(G)
    ok = np.ones(M, bool)
    tol = K * np.finfo(np.float64).eps * np.max(np.abs(np.diagonal(G, axis1=1, axis2=2)),
                                                axis=1)
    z = np.zeros_like(g)
    with np.errstate(all="ignore"):
        for j in range(K):
            lj = L[:, j, :j]
            d = G[:, j, j] - np.sum(lj * lj, axis=1)
            ok &= d > tol
            piv = np.sqrt(np.where(d > tol, d, 1.0))
            L[:, j, j] = piv
            if j + 1 < K:
                L[:, j + 1:, j] = (G[:, j + 1:, j] - np.einsum("mik,mk->mi", L[:, j + 1:, :j],
                                                              lj)) / piv[:, None]
            z[:, j] = (g[:, j] - np.sum(lj * z[:, :j], axis=1)) / piv
        rss = s - np.sum(z * z, axis=1)
    return np.where(ok, rss, np.nan)


#: the tests from the F statistics of every single break (``Fstats``)
F_TESTS = ("supF", "aveF", "expF")


def sup_tests(X, e, valid, h, trim01, K, want):
    """supF, aveF, expF and / or supLM (``want``: a set of the names) of a block of pixels.

    ``X`` [N, K'] or per pixel [N, P, K'] (the kept columns), ``e`` [N, P] the 0-break fit's
    residuals (0 where not ``valid``), ``h`` [P] the minimal segment (count; R's
    ``Fstats(from)``), ``trim01`` [P] the trimming as a fraction of n (``supLM(from)``), ``K``
    the model's regressors (R's ``ncol(X)``). Returns {name: (statistic [P], p-value [P])}."""
    N, P = e.shape
    Kx = X.shape[-1]
    n = valid.sum(axis=0)
    order = np.argsort(~valid, axis=0, kind="stable")
    vc = np.take_along_axis(valid, order, axis=0)
    ec = np.take_along_axis(e, order, axis=0) * vc
    iu, ju = np.tril_indices(Kx)                       # G's lower triangle, packed
    packed = np.zeros((Kx, Kx), np.int64)
    packed[iu, ju] = packed[ju, iu] = np.arange(iu.size)
    step = max(1, int(GRAM_BYTES // max(1, 8 * N * iu.size)))
    fstat = {name: np.full(P, np.nan) for name in F_TESTS}
    suplm = np.full(P, np.nan)
    i = np.arange(1, N + 1)[:, None]                  # first segment: compacted rows 0..i-1
    for a in range(0, P, step):
        b = min(P, a + step)
        o = order[:, a:b]
        if X.ndim == 2:
            Xc = X[o]                                  # [N, p, K']
        else:
            Xc = np.take_along_axis(X[:, a:b], o[:, :, None], axis=0)
        Xc = Xc * vc[:, a:b, None]
        E = ec[:, a:b]
        nb = n[a:b]
        g = np.cumsum(Xc * E[..., None], axis=0)      # the scores' cumulative sums
        if set(F_TESTS) & set(want):
            Gp = np.cumsum(Xc[..., iu] * Xc[..., ju], axis=0)
            s = np.cumsum(E * E, axis=0)
            lo_h = h[a:b]
            cand = (i >= lo_h[None, :]) & (i <= (nb - lo_h)[None, :])
            rows, cols = np.nonzero(cand)              # rows: i - 1
            rss = np.full(cand.shape, np.nan)
            if rows.size:
                last = nb[cols] - 1
                Gr, gr, sr = Gp[rows, cols][:, packed], g[rows, cols], s[rows, cols]
                Gt, gt, st = Gp[last, cols][:, packed], g[last, cols], s[last, cols]
                rss[rows, cols] = np.maximum(      # >= 0: an exact 1-break fit's F is +inf
                    _chol_rss(Gr, gr, sr) + _chol_rss(Gt - Gr, gt - gr, st - sr), 0.0)
            rss0 = s[np.clip(nb - 1, 0, None), np.arange(b - a)]
            with np.errstate(all="ignore"):
                F = (rss0[None, :] - rss) / (rss / (nb - 2 * K)[None, :])
            use = cand & ~np.isnan(F)                  # a rank-deficient segment: no F
            F = np.where(use, F, -np.inf)
            fmax = np.max(F, axis=0)
            some = fmax > -np.inf
            cnt = use.sum(axis=0)
            with np.errstate(all="ignore"):
                ave = np.sum(np.where(use, F, 0.0), axis=0) / cnt
                # log(mean(exp(F / 2))) without overflow (R's exp overflows beyond F = 1419)
                top = np.where(np.isfinite(fmax), fmax, 0.0) / 2
                ex = top + np.log(np.sum(np.exp(F / 2 - top[None, :]), axis=0) / cnt)
            fstat["supF"][a:b] = np.where(some, fmax, np.nan)
            fstat["aveF"][a:b] = np.where(some, ave, np.nan)
            fstat["expF"][a:b] = np.where(some, np.where(np.isposinf(fmax), fmax, ex), np.nan)
        if "supLM" in want:
            J = np.einsum("tpk,tpl,tp->pkl", Xc, Xc, E * E)
            with np.errstate(all="ignore"):
                J = np.where(np.isfinite(J), J, 0.0)
                ev = np.linalg.eigvalsh(J)
                pd = ev[:, 0] > ev[:, -1] * Kx * np.finfo(float).eps
                Ji = np.linalg.inv(np.where(pd[:, None, None], J, np.eye(Kx)))
                q = np.where(pd[None, :], np.einsum("tpk,pkl,tpl->tp", g, Ji, g), np.nan)
                tt = i / nb[None, :]
                n1 = np.floor(trim01[a:b] * nb)
                n2 = np.floor((1.0 - trim01[a:b]) * nb)
                win = (i >= n1[None, :]) & (i <= n2[None, :])
                lm = np.where(win, q / (tt * (1.0 - tt)), -np.inf)
            m = np.max(lm, axis=0)
            suplm[a:b] = np.where(np.isfinite(m), m, np.nan)
    out = {}
    nf = n.astype(np.float64)
    with np.errstate(all="ignore"):
        lam = (nf - h) * (nf - h) / (h * h)   # ((n - from) to) / (from (n - to)), to = n - from
    for name in F_TESTS:
        if name not in want:
            continue
        stat = fstat[name]
        p = fstats_pvalue(stat, K, lam, name)
        chow = (lam == 1) if name != "expF" else np.zeros(P, bool)
        if chow.any():                  # one admissible break: Chow's F test (sctest.Fstats)
            d1, d2 = float(K), nf[chow] - 2 * K
            with np.errstate(all="ignore"):
                p[chow] = betainc_reg(d2 / 2, d1 / 2, d2 / (d2 + d1 * stat[chow]))
        out[name] = (stat, p)
    if "supLM" in want:
        lam = (1.0 - trim01) ** 2 / (trim01 * trim01)
        out["supLM"] = (suplm, fstats_pvalue(suplm, Kx, lam))
    return out


def betainc_reg(a, b, x, iters=300):
    """The regularized incomplete beta function I_x(a, b), elementwise, by its continued
    fraction (modified Lentz), evaluated where it converges fast (x < (a + 1) / (a + b + 2)),
    through the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) elsewhere. float64; NaN in, NaN out."""
    a, b, x = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, x)))
    out = np.full(x.shape, np.nan)
    good = (a > 0) & (b > 0) & (x >= 0) & (x <= 1)
    out[good & (x == 0)] = 0.0
    out[good & (x == 1)] = 1.0
    mid = good & (x > 0) & (x < 1)
    swap = mid & (x >= (a + 1) / (a + b + 2))
    aa, bb, xx = np.where(swap, b, a), np.where(swap, a, b), np.where(swap, 1 - x, x)
    aa, bb, xx = aa[mid], bb[mid], xx[mid]
    lbeta = np.vectorize(math.lgamma)
    front = np.exp(aa * np.log(xx) + bb * np.log1p(-xx)
                   - (lbeta(aa) + lbeta(bb) - lbeta(aa + bb)) if aa.size else aa)
    tiny = 1e-300
    f = np.ones_like(xx)
    C = np.ones_like(xx)
    D = np.zeros_like(xx)
    for i in range(1, 2 * iters + 1):
        m = i // 2
        if i % 2:
            d = -(aa + m) * (aa + bb + m) * xx / ((aa + 2 * m) * (aa + 2 * m + 1))
        else:
            d = m * (bb - m) * xx / ((aa + 2 * m - 1) * (aa + 2 * m))
        D = 1.0 + d * D
        D = np.where(np.abs(D) < tiny, tiny, D)
        C = 1.0 + d / C
        C = np.where(np.abs(C) < tiny, tiny, C)
        D = 1.0 / D
        delta = C * D
        f = f * delta
        if i % 2 == 0 and np.all(np.abs(delta - 1.0) < 1e-15):
            break
    val = front / (f * aa)
    out[mid] = np.where(swap[mid], 1.0 - val, val)
    return out
