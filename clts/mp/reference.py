"""Brute-force float64 matrix profile: slow and obvious, for tests and the tuner.

Conventions (stumpy's): a subsequence containing NaN/inf has P = inf, I = -1 and is never a
neighbour; two constant subsequences (all values equal) are at distance 0, a constant and a
non-constant one at sqrt(m); in a self-join pairs with |i - j| <= exclusion_zone are excluded;
ties go to the smallest index. ``normalize=False`` gives the plain Euclidean distance.
"""
from __future__ import annotations

import math

import numpy as np


def windows(T, m):
    T = np.asarray(T, dtype=np.float64)
    return np.lib.stride_tricks.sliding_window_view(T, m)


def _znorm(W):
    valid = np.all(np.isfinite(W), axis=1)
    Wc = np.where(valid[:, None], W, 0.0)
    # each window divided by a power of two near its largest |value| (exact): the z-normalised
    # values do not depend on it, and squares of tiny or huge values neither underflow nor
    # overflow
    top = np.max(np.abs(Wc), axis=1, initial=0.0)
    Wc = Wc / np.where(top > 0, np.exp2(np.frexp(top)[1].astype(np.float64)), 1.0)[:, None]
    mu = Wc.mean(axis=1)
    X = Wc - mu[:, None]
    sd = np.sqrt((X * X).mean(axis=1))
    const = valid & np.all(Wc == Wc[:, :1], axis=1)
    Z = np.zeros_like(X)
    ok = valid & ~const
    Z[ok] = X[ok] / sd[ok, None]
    return Z, valid, const


def distance_matrix(T_A, m, T_B=None, normalize=True):
    """Full [l_A, l_B] distance matrix (inf where either subsequence has NaN/inf)."""
    WA = windows(T_A, m)
    WB = WA if T_B is None else windows(T_B, m)
    if normalize:
        ZA, va, ca = _znorm(WA)
        ZB, vb, cb = _znorm(WB)
        D = np.empty((len(ZA), len(ZB)))
        for i in range(len(ZA)):            # row by row: O(l_B * m) memory
            D[i] = np.sqrt(((ZB - ZA[i]) ** 2).sum(-1))
        one = ca[:, None] ^ cb[None, :]
        both = ca[:, None] & cb[None, :]
        D[one] = math.sqrt(m)
        D[both] = 0.0
    else:
        va = np.all(np.isfinite(WA), axis=1)
        vb = np.all(np.isfinite(WB), axis=1)
        A = np.where(va[:, None], WA, 0.0)
        B = np.where(vb[:, None], WB, 0.0)
        D = np.empty((len(A), len(B)))
        for i in range(len(A)):
            D[i] = np.sqrt(((B - A[i]) ** 2).sum(-1))
    D[~va, :] = np.inf
    D[:, ~vb] = np.inf
    return D


def _topk(D, k):
    l, lb = D.shape
    P = np.full((l, k), np.inf)
    I = np.full((l, k), -1, dtype=np.int64)
    cols = np.arange(lb)
    for i in range(l):
        order = np.lexsort((cols, D[i]))[:k]
        d = D[i, order]
        fin = np.isfinite(d)
        P[i, :fin.sum()] = d[fin]
        I[i, :fin.sum()] = order[fin]
    return P, I


def matrix_profile(T_A, m, T_B=None, k=1, exclusion_zone=None, normalize=True, both=False):
    """Returns dict with P, I ([l, k]) and for self-joins left_I/right_I/left_P/right_P;
    for AB-joins with ``both`` also P_B, I_B."""
    D = distance_matrix(T_A, m, T_B, normalize)
    out = {}
    if T_B is None:
        ez = int(math.ceil(m / 4)) if exclusion_zone is None else int(exclusion_zone)
        ii, jj = np.indices(D.shape)
        D[np.abs(ii - jj) <= ez] = np.inf
        out["P"], out["I"] = _topk(D, k)
        L = np.where(jj < ii, D, np.inf)
        R = np.where(jj > ii, D, np.inf)
        lp, li = _topk(L, 1)
        rp, ri = _topk(R, 1)
        out["left_P"], out["left_I"] = lp[:, 0], li[:, 0]
        out["right_P"], out["right_I"] = rp[:, 0], ri[:, 0]
    else:
        out["P"], out["I"] = _topk(D, k)
        if both:
            out["P_B"], out["I_B"] = _topk(D.T.copy(), k)
    return out


def rows_profile(T, m, rows, exclusion_zone=None):
    """Self-join nearest neighbour (P, I) of the given rows only: O(len(rows) * n * m); used
    to check large runs (tuner) on a sample of rows."""
    T = np.asarray(T, dtype=np.float64)
    W = windows(T, m)
    Z, valid, const = _znorm(W)
    ez = int(math.ceil(m / 4)) if exclusion_zone is None else int(exclusion_zone)
    P = np.full(len(rows), np.inf)
    I = np.full(len(rows), -1, dtype=np.int64)
    for t, i in enumerate(rows):
        d = np.sqrt(((Z - Z[i]) ** 2).sum(1))
        d[const ^ const[i]] = math.sqrt(m)
        d[const & const[i]] = 0.0
        d[~valid] = np.inf
        if not valid[i]:
            continue
        d[max(0, i - ez):i + ez + 1] = np.inf
        j = int(np.argmin(d))
        if np.isfinite(d[j]):
            P[t], I[t] = d[j], j
    return P, I


def distance_profile(Q, T, normalize=True, p=2.0):
    """Distances of the query ``Q`` (length m) to every window of ``T`` (clts.mass): the
    conventions above; a query with NaN / inf gives inf everywhere; ``normalize=False``: the
    Minkowski distance of order ``p`` (1 <= p <= inf)."""
    Q = np.asarray(Q, dtype=np.float64)
    m = len(Q)
    W = windows(T, m)
    if not np.all(np.isfinite(Q)):
        return np.full(len(W), np.inf)
    valid = np.all(np.isfinite(W), axis=1)
    if normalize:
        Z, _, const = _znorm(W)
        zq, _, qc = _znorm(Q[None, :])
        d = np.sqrt(((Z - zq[0]) ** 2).sum(1))
        d[const ^ qc[0]] = math.sqrt(m)
        d[const & qc[0]] = 0.0
    else:
        A = np.abs(np.where(valid[:, None], W, 0.0) - Q)
        if p == np.inf:
            d = A.max(1)
        else:
            top = A.max(1, initial=0.0)         # scaled: p-th powers neither over- nor underflow
            s = np.where(top > 0, top, 1.0)
            d = s * ((A / s[:, None]) ** p).sum(1) ** (1.0 / p)
    d[~valid] = np.inf
    return d


def plain_distance_matrix(T, m, p=2.0, rows=64):
    """[l, l]: row i is ``distance_profile(window i, T, normalize=False, p=p)`` (the same
    arithmetic, ``rows`` queries at a time), inf for a query window with NaN / inf."""
    W = windows(T, m)
    valid = np.all(np.isfinite(W), axis=1)
    Wz = np.where(valid[:, None], W, 0.0)
    out = np.empty((len(W), len(W)))
    for r0 in range(0, len(W), rows):
        A = np.abs(Wz[None, :, :] - W[r0:r0 + rows, None, :])
        if p == np.inf:
            d = A.max(2)
        else:
            top = A.max(2, initial=0.0)
            s = np.where(top > 0, top, 1.0)
            with np.errstate(invalid="ignore"):     # windows with NaN: set to inf below
                d = s * ((A / s[:, :, None]) ** p).sum(2) ** (1.0 / p)
        d[:, ~valid] = np.inf
        out[r0:r0 + rows] = d
    out[~valid] = np.inf
    return out


def mstump_means(T, m, include=None, discords=False, exclusion_zone=None, normalize=True,
                 p=2.0):
    """C [d, l, l]: C[k, i, j] the mean of the first k + 1 of the d per-dimension distances
    of (i, j) in stumpy.mstump's order (the ``include`` dimensions first, in order, the others
    sorted, descending with ``discords``); inf inside the exclusion zone. ``normalize=False``:
    Minkowski distances of order ``p`` (stumpy.maamp)."""
    X = dimension_distances(T, m, exclusion_zone, normalize, p)
    return means_of_sorted(X, include, discords)


def dimension_distances(T, m, exclusion_zone=None, normalize=True, p=2.0):
    """X [d, l, l]: the distance matrices of the d dimensions, inf inside the exclusion zone
    (the part of :func:`mstump_means` that ``include`` and ``discords`` do not change)."""
    T = np.atleast_2d(np.asarray(T, dtype=np.float64))
    ez = math.ceil(m / 4) if exclusion_zone is None else exclusion_zone
    if normalize:
        X = np.stack([distance_matrix(t, m) for t in T])      # [d, l, l]
    else:
        X = np.stack([plain_distance_matrix(t, m, p) for t in T])
    i = np.arange(X.shape[1])
    X[:, np.abs(i[:, None] - i[None, :]) <= ez] = np.inf
    return X


def means_of_sorted(X, include=None, discords=False):
    """:func:`mstump_means` of the distance matrices X (:func:`dimension_distances`)."""
    d = X.shape[0]
    inc = [] if include is None else list(include)
    rest = np.sort(X[[q for q in range(d) if q not in inc]], axis=0)
    if discords:
        rest = rest[::-1]
    return np.cumsum(np.concatenate([X[inc], rest]), axis=0) / np.arange(1, d + 1)[:, None, None]


def mstump(T, m, include=None, discords=False, exclusion_zone=None, normalize=True, p=2.0):
    """Multi-dimensional profile (stumpy.mstump's conventions; ``normalize=False``:
    stumpy.maamp's): P[k] the smallest over j of ``mstump_means`` (I: its smallest j)."""
    return profile_of_means(mstump_means(T, m, include, discords, exclusion_zone, normalize, p))


def profile_of_means(C):
    """(P, I) of the means C [d, l, l] (:func:`mstump_means`): the smallest over j, its
    smallest j (-1 where none is finite)."""
    I = np.argmin(C, axis=2)
    P = np.take_along_axis(C, I[:, :, None], axis=2)[:, :, 0]
    I[~np.isfinite(P)] = -1
    return P, I
