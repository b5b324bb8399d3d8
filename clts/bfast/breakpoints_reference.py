"""Plain numpy float64 Bai-Perron ``breakpoints`` (strucchange's), one pixel at a time.

For the valid values (NaN dropped) of one series, n of them, with K regressors and minimal
segment ``h`` (a fraction of n, floored, or a count):

* RSS(i, j): the residual sum of squares of the OLS fit to the observations i..j (1-based,
  inclusive), as strucchange's ``RSS.triang`` holds it: the cumulated squared recursive
  residuals from i on, here by Givens rotations of one row at a time into the R factor;
* the dynamic programme of ``breakpoints.formula`` for m = 1..breaks: cost_1(i) = RSS(1, i),
  cost_m(i) = min_{j = (m-1)h .. i-h} cost_{m-1}(j) + RSS(j+1, i) for i = mh .. n-h (the first
  minimum, as ``which.min``), the m-break RSS min_i cost_m(i) + RSS(i+1, n);
* ``summary.breakpointsfull``'s BIC, n (log RSS + 1 - log n + log 2 pi) + log(n) (K+1)(m+1), and
  LWZ (Liu, Wu and Zidek's modified Schwarz criterion, 0.299 (log n)^2.1 for the penalty weight
  of the (K+1)(m+1) - 1 parameters: log(RSS / (n - p)) + p 0.299 (log n)^2.1 / n);
* the selected number of breaks (first minimum of the criterion) and its breakpoints.
``breaks`` is capped at ceil(n / h) - 2, as R does, but at least 1 (h = n / 2: R's RSS table
still holds the one break at h, and its BIC chooses among 0 and 1).

Two departures from strucchange, where it answers from rounding noise:

* the criteria read an RSS below n eps^2 sum y^2 (the valid values; eps of the precision the
  RSS were computed in) as that floor: an exact fit's RSS is rounding noise (1e-30 for a
  constant or a pure harmonic), and BIC on its logarithm picks the most breaks (R: 0 breaks on
  a constant series, whose RSS are exactly 0 and BIC all -Inf, but one spurious break on a sine);
* the caller drops design columns that are linear combinations of the others up to rounding
  (``clts.bfast.breakpoints.independent_columns``: e.g. the harmonics of yearly dates with
  freq = 1): R's ``lm.fit`` keeps a harmonic column of rounding noise (1e-13) and fits it.
"""
from __future__ import annotations

import math

import numpy as np

#: per-pixel status codes of ``clts.bfast_breaks``
BP_STATUS = {0: "ok", 1: "too_few_values", 2: "segment_too_short", 3: "non_finite",
             4: "rank_deficient"}

#: singular value of a design, relative to its largest, below which its direction counts as
#: absent (rank deficiency): R's ``lm.fit`` tolerance in float64; float32 RSS lose about
#: cond x 1e-7 of their digits, so there the design may be conditioned up to 1e4
RANK_TOL = {8: 1e-7, 4: 1e-4}


def rank_deficient(X, tol=RANK_TOL[8]) -> bool:
    """Whether ``X`` (the rows of one pixel's valid values) has a singular value below
    ``tol`` times its largest."""
    s = np.linalg.svd(np.asarray(X, np.float64), compute_uv=False)
    return s.size == 0 or not s[-1] > tol * s[0]
CRITERIA = ("BIC", "LWZ")


def rss_triangle(X, y):
    """[n, n] array T with T[i, j] = RSS of the OLS fit to rows i..j (0-based, inclusive), NaN
    below the diagonal and for segments of at most K rows. All starts at once, one row at a
    time: each new row is rotated into every start's R factor (Givens), the last component is
    the recursive residual."""
    X = np.asarray(X, np.float64)
    y = np.asarray(y, np.float64)
    n, K = X.shape
    T = np.full((n, n), np.nan)
    R = np.zeros((n, K, K))           # R factor of every start (rows start..t so far)
    z = np.zeros((n, K))              # Q' y
    rss = np.zeros(n)
    for t in range(n):
        s = np.arange(t + 1)          # starts that include row t
        x = np.broadcast_to(X[t], (s.size, K)).copy()
        e = np.full(s.size, y[t])
        for k in range(K):
            a = R[s, k, k]
            b = x[:, k]
            r = np.hypot(a, b)
            nz = r != 0
            c = np.where(nz, a / np.where(nz, r, 1), 1.0)
            sn = np.where(nz, b / np.where(nz, r, 1), 0.0)
            Rk = R[s, k, k:].copy()
            R[s, k, k:] = c[:, None] * Rk + sn[:, None] * x[:, k:]
            x[:, k:] = -sn[:, None] * Rk + c[:, None] * x[:, k:]
            zk = z[s, k].copy()
            z[s, k] = c * zk + sn * e
            e = -sn * zk + c * e
        rss[s] += e * e
        T[s, t] = rss[s]
    for i in range(n):                # strucchange: NA for the first K rows of a segment
        T[i, i:min(n, i + K)] = np.nan
    return T


def segment_h(h, n):
    """strucchange's minimal segment size: floor(n h) for h < 1, else h."""
    return int(math.floor(n * h)) if h < 1 else int(h)


def breakpoints_pixel(X, y, h=0.15, breaks=5, eps=float(np.finfo(np.float64).eps),
                      check_rank=True):
    """Bai-Perron on one series ``y`` ([N], NaN = missing) with regressors ``X`` ([N, K]);
    ``eps``: the precision of the RSS floor of the criteria (see the module docstring);
    ``check_rank``: status 4 when the valid values' rows of ``X`` are rank-deficient.
    Returns a dict: nobs, h, breaks (the cap applied), rss [breaks+1], bic, lwz, bp (list of
    breakpoint lists for m = 0..breaks, 1-based indices of the valid values, as R), idx (the
    date indices of the valid values), status, triangle."""
    X = np.asarray(X, np.float64)
    y = np.asarray(y, np.float64)
    ok = ~np.isnan(y)
    idx = np.nonzero(ok)[0]
    n, K = idx.size, X.shape[1]
    out = dict(nobs=n, idx=idx, status=0, h=0, breaks=0, rss=np.full(breaks + 1, np.nan),
               bic=np.full(breaks + 1, np.nan), lwz=np.full(breaks + 1, np.nan),
               bp=[[] for _ in range(breaks + 1)], triangle=None)
    if np.isinf(y[ok]).any():
        out["status"] = 3
        return out
    hh = segment_h(h, n) if n else 0
    out["h"] = hh
    if n == 0 or hh <= K:
        out["status"] = 1
        return out
    if hh > n // 2:
        out["status"] = 2
        return out
    if check_rank and rank_deficient(X[idx]):
        out["status"] = 4
        return out
    B = min(breaks, max(1, int(math.ceil(n / hh)) - 2))   # R's RSS table: one break at least
    out["breaks"] = B
    T = rss_triangle(X[idx], y[idx])
    out["triangle"] = T

    def RSS(i, j):                     # 1-based inclusive, as R
        return T[i - 1, j - 1]

    cost = {1: {i: RSS(1, i) for i in range(hh, n - hh + 1)}}
    arg = {}
    for m in range(2, B + 1):
        cost[m], arg[m] = {}, {}
        for i in range(m * hh, n - hh + 1):
            js = list(range((m - 1) * hh, i - hh + 1))
            v = np.array([cost[m - 1][j] + RSS(j + 1, i) for j in js])
            o = int(np.argmin(v))
            cost[m][i], arg[m][i] = v[o], js[o]
    rss = [RSS(1, n)]
    bps = [[]]
    for m in range(1, B + 1):
        ii = list(cost[m])
        v = np.array([cost[m][i] + RSS(i + 1, n) for i in ii])
        o = int(np.argmin(v))
        bp = [ii[o]]
        for mm in range(m, 1, -1):
            bp.insert(0, arg[mm][bp[0]])
        # R sums the segments' RSS again in order
        edges = [0] + bp + [n]
        rss.append(sum(RSS(a + 1, b) for a, b in zip(edges[:-1], edges[1:])))
        bps.append(bp)
    rss = np.array(rss)
    floor = max(n * eps * eps * float(np.sum(y[idx] ** 2)), np.finfo(np.float64).tiny)
    rss_c = np.maximum(rss, floor)
    m_ = np.arange(B + 1)
    bic = n * (np.log(rss_c) + 1 - math.log(n) + math.log(2 * math.pi)) + math.log(n) * (K + 1) * (m_ + 1)
    p = (K + 1) * (m_ + 1) - 1
    lwz = np.log(rss_c / (n - p)) + p * 0.299 * math.log(n) ** 2.1 / n
    out["rss"][:B + 1] = rss
    out["bic"][:B + 1] = bic
    out["lwz"][:B + 1] = lwz
    out["bp"][:B + 1] = bps
    return out


def select(out, criterion="BIC"):
    """Number of breaks the criterion selects (its first minimum), -1 for a failed pixel."""
    if out["status"]:
        return -1
    v = out["bic" if criterion == "BIC" else "lwz"][:out["breaks"] + 1]
    return int(np.argmin(v))


def history_bp_start(X, y):
    """bfast's ``history_break`` on the valid history values (rows of X, y): 0-based index of
    the first value after the last BIC-selected break (h = 6 K, every break that fits), 0
    without a break, None when the history is too short for h."""
    n, K = X.shape
    h = 6 * K
    if h > n // 2:
        return None
    r = breakpoints_pixel(X, y, h=h, breaks=max(1, int(math.ceil(n / h)) - 2),
                          check_rank=False)
    m = select(r, "BIC")
    return 0 if m <= 0 else r["bp"][m][-1]
