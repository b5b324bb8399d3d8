"""Motifs and discords from a matrix profile result, with exclusion between reported items."""
from __future__ import annotations

import numpy as np


def _result_profile(result):
    P = np.asarray(result.P)
    I = np.asarray(result.I)
    if P.ndim == 2:
        P, I = P[:, 0], I[:, 0]
    return P.astype(np.float64), I.astype(np.int64)


def _int_at_least(value, name, low):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    return int(value)


def _zone(result, exclusion_zone):
    if exclusion_zone is not None:
        return _int_at_least(exclusion_zone, "exclusion_zone", 0)
    if result.exclusion_zone is not None:
        return int(result.exclusion_zone)
    return int(np.ceil(result.m / 4))


def discords(result, k=1, *, exclusion_zone=None):
    """The ``k`` subsequences with the largest finite matrix-profile values, no two within the
    exclusion zone of each other. Returns (indices, distances), largest first."""
    k = _int_at_least(k, "k", 1)
    P, _ = _result_profile(result)
    ez = _zone(result, exclusion_zone)
    P = np.where(np.isfinite(P), P, -np.inf)
    order = np.lexsort((np.arange(len(P)), -P))
    taken = np.zeros(len(P), bool)
    idx, dist = [], []
    for i in order:
        if len(idx) == k or P[i] == -np.inf:
            break
        if taken[i]:
            continue
        idx.append(int(i))
        dist.append(float(P[i]))
        taken[max(0, i - ez):i + ez + 1] = True
    return np.array(idx, dtype=np.int64), np.array(dist)


def motifs(T, result, max_motifs=1, *, max_matches=10, radius=2.0, exclusion_zone=None,
           max_distance=None):
    """Top motifs: repeatedly take the smallest matrix-profile value (pair i, I[i]) not yet
    excluded, then collect up to ``max_matches`` occurrences within ``max_distance``
    (default ``radius`` * the pair's distance) of subsequence i, no two within the exclusion
    zone. Returns a list of dicts {"indices": [...], "distances": [...]} (first two = the pair).
    ``T`` is the series the result was computed on (self-join)."""
    from .reference import windows
    max_motifs = _int_at_least(max_motifs, "max_motifs", 1)
    max_matches = _int_at_least(max_matches, "max_matches", 1)
    if isinstance(radius, bool) or not isinstance(radius, (int, float, np.number)) or \
            not np.isfinite(radius) or radius < 0:
        raise ValueError(f"radius must be a finite number >= 0, got {radius!r}")
    if max_distance is not None and (
            isinstance(max_distance, bool) or not isinstance(max_distance, (int, float, np.number))
            or np.isnan(max_distance) or max_distance < 0):
        raise ValueError(f"max_distance must be None or a number >= 0, got {max_distance!r}")
    if not result.self_join:
        raise ValueError("motifs needs a self-join result")
    P, I = _result_profile(result)
    m = result.m
    ez = _zone(result, exclusion_zone)
    T = np.asarray(T, dtype=np.float64)
    if len(T) - m + 1 != len(P):
        raise ValueError(f"T has {len(T)} values, the result was computed on "
                         f"{len(P) + m - 1}")
    W = windows(T, m)
    valid = np.all(np.isfinite(W), axis=1)
    Wc = np.where(valid[:, None], W, 0.0)
    if result.normalize:
        mu = Wc.mean(1)
        sd = Wc.std(1)
        const = np.all(Wc == Wc[:, :1], axis=1)
        Z = np.where((sd > 0)[:, None], (Wc - mu[:, None]) / np.where(sd > 0, sd, 1)[:, None],
                     0.0)
    else:
        Z, const = Wc, np.zeros(len(W), bool)
    taken = np.zeros(len(P), bool)
    out = []
    order = np.lexsort((np.arange(len(P)), P))
    for i in order:
        if len(out) == max_motifs or not np.isfinite(P[i]):
            break
        j = int(I[i])
        if taken[i] or j < 0 or taken[j]:
            continue
        d = np.sqrt(((Z - Z[i]) ** 2).sum(1))
        if result.normalize:
            d[const ^ const[i]] = np.sqrt(m)
            d[const & const[i]] = 0.0
        d[~valid] = np.inf
        lim = max_distance if max_distance is not None else radius * P[i]
        cand = np.lexsort((np.arange(len(d)), d))
        idx, dist = [], []
        local = taken.copy()
        for c in [i, j] + [int(c) for c in cand]:
            if len(idx) == max_matches:
                break
            if c in idx or local[c] or (len(idx) >= 2 and d[c] > lim):
                continue
            idx.append(int(c))
            dist.append(float(d[c]) if c != i else 0.0)
            local[max(0, c - ez):c + ez + 1] = True
        for c in idx:
            taken[max(0, c - ez):c + ez + 1] = True
        out.append({"indices": np.array(idx), "distances": np.array(dist)})
    return out
