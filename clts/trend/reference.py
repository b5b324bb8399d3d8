"""Plain numpy float64 Mann-Kendall tests and Theil-Sen slopes, one series at a time: the
statement of what the kernels compute, with pymannkendall's conventions.

* Missing values are skipped: S and its variance are over the valid values in order; Sen's
  slopes over the pairs of valid values at their time positions (``nanmedian``).
* Var(S) = (n (n - 1) (2 n + 5) - sum_t t (t - 1) (2 t + 5)) / 18 over tie groups t;
  Z = (S - sign S) / sqrt(Var S); p = 2 (1 - Phi(|Z|)); Tau = S / (n (n - 1) / 2).
* Hamed and Rao (1998): Var(S) times 1 + 2 / (n (n - 1) (n - 2)) sum_k (n - k)(n - k - 1)
  (n - k - 2) r_k over the significant autocorrelations r_k (outside +-z_(1 - alpha / 2) /
  sqrt(n)) of the ranks of the valid values detrended by Sen's slope (x_i - (i + 1) slope, i
  counting valid values); Yue and Wang (2004): 1 + 2 sum_k (1 - k / n) r_k of the detrended
  values. ``lag``: only the first ``lag`` lags (default all).
* Seasonal (Hirsch and Slack 1984): S, Var(S) and the pair count summed over the seasons
  (time index mod period); Sen's slope per cycle over the within-season pairs.
* Intercept (Conover): nanmedian(x) - median(valid positions) / period * slope.
* Confidence interval of Sen's slope (Gilbert 1987, as R's trend::sens.slope): the sorted
  slopes at ranks round((M - C) / 2) and round((M + C) / 2) + 1 (1-based, M valid slopes,
  round half to even), C = z_(1 - (1 - conf_level) / 2) sqrt(Var S) with the variance before
  any autocorrelation correction; NaN where a rank falls outside 1..M.
* Fewer than 3 valid values: every statistic NaN and status 1.
"""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

VARIANTS = ("original", "hamed_rao", "yue_wang", "seasonal")
#: status codes per series
OK, TOO_FEW = 0, 1
MIN_VALID = 3

_erfc = np.frompyfunc(math.erfc, 1, 1)


def normal_cdf(z):
    """Phi(z) of the standard normal distribution, elementwise (NaN stays NaN): 0.5 erfc(-z /
    sqrt 2), accurate in both tails; numpy / the standard library only, no scipy."""
    z = np.asarray(z, dtype=np.float64)
    out = 0.5 * np.asarray(_erfc(-z / math.sqrt(2)), dtype=np.float64)
    return out if out.ndim else float(out)


def normal_ppf(q):
    """The quantile z_q of the standard normal distribution (``statistics.NormalDist``'s
    inverse, Wichura's AS 241, full double precision) for a probability q in (0, 1)."""
    return NormalDist().inv_cdf(float(q))


def pair_stats(x, period=1):
    """S, the tie-free variance numerator, the tie sum, sum n_r (n_r - 1), n_valid and the
    valid pairwise slopes (per cycle) of series ``x`` (NaN = missing)."""
    S = A = T = D = nv = 0
    slopes = []
    for r in range(period):
        sub = x[r::period]
        pos = np.flatnonzero(~np.isnan(sub))
        v = sub[pos]
        n = len(v)
        for a in range(n):
            d = v[a + 1:] - v[a]
            S += int(np.sum(d > 0)) - int(np.sum(d < 0))
            slopes.extend(d / (pos[a + 1:] - pos[a]))
        _, tp = np.unique(v, return_counts=True)
        T += int(np.sum(tp * (tp - 1) * (2 * tp + 5)))
        A += n * (n - 1) * (2 * n + 5)
        D += n * (n - 1)
        nv += n
    return S, A, T, D, nv, np.asarray(slopes, dtype=np.float64)


def acf(x, nlags):
    y = x - x.mean()
    n = len(x)
    acov = np.correlate(y, y, "full")[n - 1:] / n
    return acov[:nlags + 1] / acov[0]


def ranks(x):
    """Average ranks (ties share the mean rank)."""
    return np.array([(len(x) + 1 + np.sum(np.sign(v - x))) / 2 for v in x])


def correction(xv, slope, variant, alpha, lag):
    """n / n* of Hamed-Rao or Yue-Wang for the valid values ``xv`` of one series."""
    n = len(xv)
    L = n if lag is None else min(lag + 1, n)
    xd = xv - np.arange(1, n + 1) * slope
    if variant == "hamed_rao":
        r = acf(ranks(xd), L - 1)
        b = normal_ppf(1 - alpha / 2) / math.sqrt(n)
        sni = sum((n - i) * (n - i - 1) * (n - i - 2) * r[i] for i in range(1, L)
                  if not (-b <= r[i] <= b))
        return 1 + (2 / (n * (n - 1) * (n - 2))) * sni
    r = acf(xd, L - 1)
    i = np.arange(1, L)
    return 1 + 2 * np.sum((1 - i / n) * r[i])


def trend_series(x, variant="original", period=None, alpha=0.05, lag=None, conf_level=0.95):
    """The test of one series: a dict with s, var_s, z, p, h, trend, tau, slope, intercept,
    slope_low, slope_high, n, status."""
    x = np.asarray(x, dtype=np.float64)
    P = int(period) if variant == "seasonal" else 1
    S, A, T, D, nv, d = pair_stats(x, P)
    out = dict(n=nv, status=OK)
    if nv < MIN_VALID:
        out.update({k: np.nan for k in ("s", "var_s", "z", "p", "tau", "slope", "intercept",
                                         "slope_low", "slope_high")}, h=False, trend=0,
                   status=TOO_FEW)
        return out
    var0 = (A - T) / 18
    slope = float(np.median(d)) if len(d) else np.nan
    M = len(d)
    C = normal_ppf(1 - (1 - conf_level) / 2) * math.sqrt(var0)
    rl, ru = round((M - C) / 2), round((M + C) / 2 + 1)
    ds = np.sort(d)
    lo = ds[rl - 1] if 1 <= rl <= M else np.nan
    hi = ds[ru - 1] if 1 <= ru <= M else np.nan
    var = var0
    if variant in ("hamed_rao", "yue_wang"):
        var = var0 * correction(x[~np.isnan(x)], slope, variant, alpha, lag)
    z = (S - 1) / math.sqrt(var) if S > 0 else (S + 1) / math.sqrt(var) if S < 0 else 0.0
    p = 2 * (1 - normal_cdf(abs(z)))
    h = bool(abs(z) > normal_ppf(1 - alpha / 2))
    pos = np.flatnonzero(~np.isnan(x))
    intercept = np.nanmedian(x) - np.median(pos) / P * slope
    out.update(s=float(S), var_s=float(var), z=float(z), p=float(p), h=h,
               trend=int(np.sign(z)) if h else 0, tau=S / (0.5 * D), slope=slope,
               intercept=float(intercept), slope_low=float(lo), slope_high=float(hi))
    return out


# -- the tests built on a transform of the series or on several variables ----------------

def whiten_series(xv, slope=None):
    """Pre-whitening (Yue and Wang 2002) of the valid values ``xv``: x_(i+1) - r1 x_i, r1 their
    lag-1 autocorrelation; with ``slope`` trend-free (Yue et al. 2002): detrended by (i + 1)
    slope first, i slope added back after. NaN throughout where xv is constant."""
    n = len(xv)
    x = xv if slope is None else xv - np.arange(1, n + 1) * slope
    with np.errstate(invalid="ignore", divide="ignore"):
        r1 = acf(x, 1)[1]
    w = x[1:] - x[:-1] * r1
    return w if slope is None else w + np.arange(1, n) * slope


def cross_stats(x, z):
    """K = sum_(a < b) sign((x_b - x_a)(z_b - z_a)) and Gamma = (K + 4 sum_a R_x(a) R_z(a) -
    n (n + 1)^2) / 3 (R: average ranks) of two complete series: the covariance of their
    Mann-Kendall scores (Libiseller and Grimvall 2002)."""
    n = len(x)
    K = sum(int(np.sum(np.sign((x[a + 1:] - x[a]) * (z[a + 1:] - z[a])))) for a in range(n))
    return K, (K + 4 * np.sum(ranks(x) * ranks(z)) - n * (n + 1) ** 2) / 3


def _significant(z, alpha):
    p = 2 * (1 - normal_cdf(abs(z))) if np.isfinite(z) else np.nan
    h = bool(abs(z) > normal_ppf(1 - alpha / 2))
    return dict(z=float(z), p=float(p), h=h, trend=int(np.sign(z)) if h else 0)


def trend_multi(x, variant, period=None, alpha=0.05, conf_level=0.95):
    """The test ``variant`` of one series ``x`` ("pre_whitening", "trend_free_pre_whitening",
    "correlated_seasonal" with ``period``) or one (variables, time) matrix ("multivariate",
    "regional", "correlated_multivariate", "partial"): a dict as :func:`trend_series`.

    * Pre-whitening: the test (S, Var S, Z, tau, n) of the whitened valid values, Sen's slope
      and intercept of ``x``; constant valid values: S = 0 over n - 1 values without ties.
    * Multivariate / regional: the seasonal test of the variables interleaved time-major, a
      season a variable (each variable's missing values skipped on their own).
    * Correlated multivariate: over the n time steps where no variable is missing, S = sum
      S_i, Var S = sum_ij Gamma_ij, Z = S / sqrt(Var S), tau = S / (C n (n - 1) / 2); Sen's
      slope as the multivariate test. Correlated seasonal: cycles of ``period`` as time steps
      (a last incomplete cycle padded with NaN), a season a variable.
    * Partial (variable 0 given variable 1): rho = Gamma_01 / V, V = n (n - 1)(2 n + 5) / 18,
      S = S_0 - rho S_1, Var S = (1 - rho^2) V, tau = S_0 / (n (n - 1) / 2); Sen's slope of
      variable 0 with its missing values.
    """
    x = np.asarray(x, dtype=np.float64)
    kw = dict(alpha=alpha, conf_level=conf_level)
    if variant in ("pre_whitening", "trend_free_pre_whitening"):
        base = trend_series(x, **kw)
        xv = x[~np.isnan(x)]
        tf = variant == "trend_free_pre_whitening"
        w = whiten_series(xv, base["slope"] if tf else None) if len(xv) >= 2 else xv[:0]
        out = trend_series(w, **kw)
        if len(w) and np.isnan(w).all():
            m = len(w)
            out = dict(out, s=0.0, var_s=m * (m - 1) * (2 * m + 5) / 18, tau=0.0, z=0.0,
                       p=1.0, h=False, trend=0, n=m, status=OK if m >= MIN_VALID else TOO_FEW)
        for k in ("slope", "intercept", "slope_low", "slope_high"):
            out[k] = base[k]
    elif variant in ("multivariate", "regional"):
        C = x.shape[0]
        flat = x.T.reshape(-1)
        return (trend_series(flat, "seasonal", C, **kw) if C > 1
                else trend_series(flat, **kw))
    else:
        if variant == "correlated_seasonal":
            cyc = -(-len(x) // period)
            xs = np.full(cyc * period, np.nan)
            xs[:len(x)] = x
            x = xs.reshape(cyc, period).T
        C = x.shape[0]
        sen = (trend_series(x[0], **kw) if variant == "partial"
               else trend_series(x.T.reshape(-1), "seasonal", C, **kw) if C > 1
               else trend_series(x[0], **kw))
        xc = x[:, ~np.isnan(x).any(axis=0)]
        n = xc.shape[1]
        if n < MIN_VALID:
            return dict(sen, n=n, status=TOO_FEW, h=False, trend=0,
                        **{k: np.nan for k in ("s", "var_s", "z", "p", "tau", "slope",
                                               "intercept", "slope_low", "slope_high")})
        S = [pair_stats(v)[0] for v in xc]
        G = np.array([[cross_stats(xc[i], xc[j])[1] for j in range(C)] for i in range(C)])
        with np.errstate(invalid="ignore", divide="ignore"):
            if variant == "partial":
                V = n * (n - 1) * (2 * n + 5) / 18
                rho = G[0, 1] / V
                s, var, tau = S[0] - rho * S[1], (1 - rho ** 2) * V, S[0] / (0.5 * n * (n - 1))
            else:
                s, var = float(sum(S)), float(np.sum(G))
                tau = s / (C * 0.5 * n * (n - 1))
            z = s / np.sqrt(var)
        out = dict(sen, s=float(s), var_s=float(var), tau=float(tau), n=n, **_significant(z, alpha))
        out["status"] = OK if n >= MIN_VALID else TOO_FEW
    if out["status"] != OK:
        out.update({k: np.nan for k in ("s", "var_s", "z", "p", "tau", "slope", "intercept",
                                         "slope_low", "slope_high")}, h=False, trend=0)
    return out
