"""The Mann-Kendall tests built on the pair kernel by a transform of the series or a sum over
variables: pre-whitening (Yue and Wang 2002) and trend-free pre-whitening, the multivariate /
regional test (Hirsch and Slack 1984, Helsel and Frans 2006), and the tests with the
covariances of several variables' scores (Libiseller and Grimvall 2002): correlated
multivariate, correlated seasonal and partial. pymannkendall's numbers, series by series,
for a whole batch at once.

Where each part runs:

* S, Var(S) with ties, Kendall's tau and Sen's slope with its bounds: the pair kernel
  (``trend/pairs.cl.mako``) of the other variants, unchanged.
* The pre-whitening transforms: on the host, vectorised over the series of each valid
  count. They are O(n) a series beside the kernel's O(n^2), and the lag-1 autocorrelation is
  formed by the same numpy operations as pymannkendall's (``np.correlate``'s lag-0 sum is a
  plain loop below 12 values and a BLAS dot above), so the whitened values, and with them
  every comparison the kernel makes, are pymannkendall's bits.
* The multivariate / regional test: the variables interleaved on the host into one series
  whose "seasons" are the variables (time-major, as pymannkendall's ``seasonal_test`` hands its
  matrix to ``multivariate_test``), then the seasonal pair kernel: S, Var(S) and the pair count
  summed over the variables, Sen's slope over the within-variable pairs.
* The covariances: ``mk_cross`` (``trend/cross.cl.mako``), O(n^2) a pair of variables, one
  work-item per (series, i <= j), all in integers; Gamma, Var(S) = sum Gamma, rho and Z from
  them on the host (O(C^2) a series).
"""
from __future__ import annotations

import numpy as np

from ..runtime import chunk_sizes, launch
from ..runtime.arrays import as_rows
from ..runtime.launch import fixed_local
from ..runtime.faults import enter_chunk, with_smaller_chunks
from .reference import MIN_VALID, OK, TOO_FEW, normal_cdf, normal_ppf

#: variants on series (..., time)
SERIES_VARIANTS = ("pre_whitening", "trend_free_pre_whitening", "correlated_seasonal")
#: variants on several variables a series (..., variables, time)
MULTI_VARIANTS = ("multivariate", "regional", "correlated_multivariate", "partial")
VARIANTS = SERIES_VARIANTS + MULTI_VARIANTS

_STATS = ("p", "z", "tau", "s", "var_s", "slope", "intercept", "slope_low", "slope_high")


def lag1(X):
    """pymannkendall's lag-1 autocorrelation (``__acf(x, 1)[1]``) of each row of ``X`` (b, n),
    n >= 2, float64, by the operations ``np.correlate(y, y, 'full')`` makes: y = x - mean;
    lag 0 a sequential sum for n <= 11 (numpy's small-kernel loop) and a BLAS dot above;
    lag 1 a BLAS dot."""
    b, n = X.shape
    Y = X - X.mean(axis=1)[:, None]
    if n <= 11:
        c0 = np.zeros(b)
        for k in range(n):
            c0 = c0 + Y[:, k] * Y[:, k]
    else:
        c0 = np.matmul(Y[:, None, :], Y[:, :, None])[:, 0, 0]
    c1 = np.matmul(Y[:, None, 1:], Y[:, :-1, None])[:, 0, 0]
    with np.errstate(invalid="ignore", divide="ignore"):
        return (c1 / n) / (c0 / n)


def whiten(y2, slope=None):
    """The pre-whitened series of the rows of ``y2`` (B, N): the valid values x in order,
    x_(i+1) - r1 x_i (r1: their lag-1 autocorrelation), valid values first and NaN after,
    shape (B, max(N - 1, 1)), float64. With ``slope`` (per row) the trend-free version: x
    detrended by (i + 1) slope, whitened, and i slope added back (pymannkendall's operations
    in order).
    Also the rows whose valid values are constant (no autocorrelation: r1 undefined)."""
    B, N = y2.shape
    valid = ~np.isnan(y2)
    order = np.argsort(~valid, axis=1, kind="stable")
    xc = np.take_along_axis(y2, order, axis=1).astype(np.float64)
    nv = valid.sum(axis=1)
    out = np.full((B, max(N - 1, 1)), np.nan)        # a column at least: all NaN for N = 1
    flat = np.zeros(B, bool)
    for n in np.unique(nv):
        if n < 2:
            continue
        rows = np.flatnonzero(nv == n)
        x = xc[rows, :n]
        if slope is not None:
            s = slope[rows].astype(np.float64)[:, None]
            x = x - np.arange(1, n + 1) * s
        r1 = lag1(x)
        flat[rows] = np.isnan(r1)
        w = x[:, 1:] - x[:, :-1] * r1[:, None]
        if slope is not None:
            w = w + np.arange(1, n) * s
        out[rows, :n - 1] = w
    return out, flat


def _cross(dev, y3, nv):
    """K, RR ([B, C, C], i <= j) and S ([B, C]) of mk_cross over the complete steps of ``y3``
    (compacted: the first ``nv[b]`` steps of series b)."""
    import pyopencl.array as cla
    B, C, N = y3.shape
    dt = y3.dtype
    q = dev.queue
    kern = dev.program("trend/cross.cl.mako",
                       real="double" if dt == np.float64 else "float").kernel("mk_cross")
    K = np.zeros((B, C, C), np.int64)
    RR = np.zeros((B, C, C), np.int64)
    S = np.zeros((B, C), np.int64)
    per = [C * N * dt.itemsize, 4, 8 * C * C, 8 * C * C, 8 * C]
    i32 = np.int32

    def run(max_items):
        chunks = chunk_sizes(B, per, dev, max_items=max_items)
        for i, (a, b) in enumerate(chunks):
            enter_chunk(i, a, b, len(chunks), B)
            nb = b - a
            xd = cla.to_device(q, np.ascontiguousarray(y3[a:b]))
            nd = cla.to_device(q, nv[a:b].astype(np.int32))
            kd = cla.empty(q, (nb, C, C), np.int64)
            rd = cla.empty(q, (nb, C, C), np.int64)
            sd = cla.empty(q, (nb, C), np.int64)
            launch(dev, kern, *fixed_local(dev, nb * C * C),
                   xd.data, nd.data, i32(N), i32(C), i32(nb),
                   kd.data, rd.data, sd.data)
            kd.get(ary=K[a:b])
            rd.get(ary=RR[a:b])
            sd.get(ary=S[a:b])
    with_smaller_chunks(run, device=dev, what="trend_test")
    iu = np.triu(np.ones((C, C), bool))
    K = np.where(iu, K, K.transpose(0, 2, 1))
    RR = np.where(iu, RR, RR.transpose(0, 2, 1))
    return K, RR, S


def _significance(z, alpha):
    p = 2 * (1 - normal_cdf(np.abs(z)))
    h = np.abs(z) > normal_ppf(1 - alpha / 2)
    trend = np.where(h, np.sign(np.nan_to_num(z)), 0).astype(np.int8)
    return p, h, trend


def _correlated(dev, y3, alpha, partial):
    """S, Var(S), Z, tau (and n) of the correlated multivariate test (or the partial test of
    variable 0 given variable 1) over the complete time steps of ``y3`` (B, C, N)."""
    valid = ~np.isnan(y3).any(axis=1)
    order = np.argsort(~valid, axis=1, kind="stable")
    xc = np.ascontiguousarray(np.take_along_axis(y3, order[:, None, :], axis=2))
    nv = valid.sum(axis=1).astype(np.int64)
    K, RR, S = _cross(dev, xc, nv)
    n = nv
    gamma = (K + RR - (n * (n + 1) ** 2)[:, None, None]).astype(np.float64) / 3
    with np.errstate(invalid="ignore", divide="ignore"):
        if partial:
            v = n * (n - 1) * (2 * n + 5)
            rho = gamma[:, 0, 1] / (v / 18)
            sx, sy = S[:, 0].astype(np.float64), S[:, 1].astype(np.float64)
            s = sx - rho * sy
            var = (1 - rho ** 2) * v / 18
            tau = sx / (0.5 * n * (n - 1))
        else:
            C = y3.shape[1]
            var = gamma.reshape(len(n), C * C).sum(axis=1)
            s = S.sum(axis=1).astype(np.float64)
            tau = s / (C * (0.5 * n * (n - 1)))
        z = s / np.sqrt(var)
    return dict(s=s, var_s=var, z=z, tau=tau, n=nv)


def run(dev, yv, variant, P, alpha, conf_level, core):
    """Every field (numpy, one per series) of ``variant`` on ``yv`` (..., time) or (...,
    variables, time); returns (fields, batch shape, plan). ``core(y2, P, slopes=True)``:
    every field of the plain (P = 1) or seasonal test of the rows of ``y2`` by the pair kernel
    (without Sen's slope: ``slopes=False``), and its plan."""
    if variant in MULTI_VARIANTS:
        if yv.ndim < 2:
            raise ValueError(f"variant={variant!r} tests several variables a series: y must "
                             f"be shaped (..., variables, time), got shape {yv.shape}")
        shape = yv.shape[:-2]
        C, N = yv.shape[-2:]
        y3 = yv.reshape((int(np.prod(shape, dtype=np.int64)), C, N))
        if variant == "partial" and C != 2:
            raise ValueError(f"variant='partial' takes two variables (the tested one and the "
                             f"covariate) on the axis before time, got {C}")
    else:
        shape = yv.shape[:-1]
        N = yv.shape[-1]
        y2 = as_rows(yv)
    if variant in ("multivariate", "regional", "correlated_multivariate"):
        # the variables interleaved time-major: the seasonal test with a season a variable
        flat = np.ascontiguousarray(y3.transpose(0, 2, 1)).reshape(len(y3), N * C)
        sen, plan = core(flat, C)
        if variant != "correlated_multivariate":
            return sen, shape, plan
        out = dict(sen)
        out.update(_correlated(dev, y3, alpha, False))
    elif variant == "partial":
        sen, plan = core(np.ascontiguousarray(y3[:, 0]), 1)
        out = dict(sen)
        out.update(_correlated(dev, y3, alpha, True))
    elif variant == "correlated_seasonal":
        sen, plan = core(y2, P)
        cyc = -(-N // P)
        pad = np.full((len(y2), cyc * P), np.nan, y2.dtype)
        pad[:, :N] = y2
        y3 = np.ascontiguousarray(pad.reshape(len(y2), cyc, P).transpose(0, 2, 1))
        out = dict(sen)
        out.update(_correlated(dev, y3, alpha, False))
    else:       # the pre-whitening tests: the test on the whitened series, Sen's on the series
        sen, plan = core(y2, 1)
        slope = sen["slope"] if variant == "trend_free_pre_whitening" else None
        w, flat = whiten(y2, slope)
        out, _ = core(w.astype(y2.dtype), 1, False)     # S only: no slopes of w
        for k in ("slope", "intercept", "slope_low", "slope_high"):
            out[k] = sen[k]
        if flat.any():
            # constant valid values: pymannkendall's whitened values are all NaN, which it
            # counts as n - 1 untied values of S = 0: Var(S) without ties, Z = 0, p = 1
            m = np.maximum(sen["n"][flat] - 1, 0)
            out["n"] = np.where(flat, np.maximum(sen["n"] - 1, 0), out["n"])
            for k, v in (("s", 0.0), ("z", 0.0), ("p", 1.0), ("tau", 0.0), ("h", False),
                         ("trend", 0), ("var_s", m * (m - 1) * (2 * m + 5) / 18)):
                out[k] = np.array(out[k])
                out[k][flat] = v
    if variant in ("correlated_multivariate", "partial", "correlated_seasonal"):
        out["p"], out["h"], out["trend"] = _significance(out["z"], alpha)
    status = np.where(out["n"] < MIN_VALID, TOO_FEW, OK).astype(np.int8)
    bad = status != OK
    out["status"] = status
    for k in _STATS:
        out[k] = np.where(bad, np.nan, out[k])
    out["h"] = np.where(bad, False, out["h"])
    out["trend"] = np.where(bad, 0, out["trend"]).astype(np.int8)
    out["n"] = np.asarray(out["n"], np.int64)
    return out, shape, plan
