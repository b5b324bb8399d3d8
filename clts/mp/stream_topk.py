"""The k-lists of ``clts.stumpi`` (stream.py) for any k >= 1: every window's k nearest
neighbours, sorted by (distance, index), as stumpy.stumpi keeps them. A new window's index is
larger than every index already in a list, so stumpy's insertion (after the entries of equal
distance, when it beats the k-th) and a merge by (distance, index) give the same lists."""
from __future__ import annotations

import numpy as np


def best_k(D, k):
    """Per column of ``D`` [r, C]: the k smallest values and their rows, ordered by (value,
    row); inf / -1 where a column has fewer than k finite values. Returns ([C, k], [C, k])."""
    r, C = D.shape
    if k == 1 or r == 1:
        j = np.argmin(D, axis=0) if r else np.zeros(C, np.int64)
        v = D[j, np.arange(C)] if r else np.full(C, np.inf)
        V, J = v[:, None], j[:, None]
    elif r <= k:
        V = np.ascontiguousarray(D.T)
        J = np.broadcast_to(np.arange(r), (C, r))
    else:
        v = np.partition(D, k - 1, axis=0)[k - 1]           # each column's k-th value
        lt = D < v
        eq = D == v
        # the values below the k-th, then the first of those equal to it: k per column
        take = lt | (eq & (np.cumsum(eq, axis=0) <= k - lt.sum(axis=0)))
        cc, rr = np.nonzero(take.T)                          # by column, then row
        J = rr.reshape(C, k)
        V = D[J, cc.reshape(C, k)]
    if V.shape[1] > 1:
        o = np.lexsort((J, V), axis=1)
        V, J = np.take_along_axis(V, o, 1), np.take_along_axis(J, o, 1)
    fin = np.isfinite(V)
    V, J = np.where(fin, V, np.inf), np.where(fin, J, -1)
    if V.shape[1] < k:
        V = np.concatenate([V, np.full((C, k - V.shape[1]), np.inf)], axis=1)
        J = np.concatenate([J, np.full((C, k - J.shape[1]), -1)], axis=1)
    return V, J.astype(np.int64)


def kth_smallest(x, k):
    """The k-th smallest non-NaN value of ``x`` (inf when there are fewer than k)."""
    if k == 1:
        return float(np.fmin.reduce(x, initial=np.inf))
    x = x[~np.isnan(x)]
    if len(x) < k:
        return np.inf
    return float(np.partition(x, k - 1)[k - 1])


def insert(P, I, rows, d, j):
    """stumpy's update of the k-lists ``P``, ``I`` [l, k] (in place) by a new neighbour of
    index ``j`` at distances ``d`` of windows ``rows``: where it beats the k-th, inserted after
    the entries of equal distance."""
    upd = d < P[rows, -1]
    rows, d = rows[upd], d[upd]
    if not len(rows):
        return
    k = P.shape[1]
    if k == 1:
        P[rows, 0], I[rows, 0] = d, j
        return
    Pr, Ir = P[rows], I[rows]
    pos = np.count_nonzero(Pr <= d[:, None], axis=1)[:, None]
    c = np.arange(k)[None, :]
    prev = np.maximum(c - 1, 0)
    P[rows] = np.where(c < pos, Pr, np.where(c == pos, d[:, None], Pr[:, prev[0]]))
    I[rows] = np.where(c < pos, Ir, np.where(c == pos, j, Ir[:, prev[0]]))
