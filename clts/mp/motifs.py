"""Motifs and discords from a matrix profile result, with exclusion between reported items."""
from __future__ import annotations

import numpy as np


def _host(x):
    """``x`` as numpy: a device array (a device-array call's result) is read back once (motifs
    and discords are short host lists by nature)."""
    from ..runtime.arrays import is_device_array
    return x.get() if is_device_array(x) else x


def _result_profile(result):
    P = np.asarray(_host(result.P))
    I = np.asarray(_host(result.I))
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


#: the partner index of a bare profile's windows, found in ``motifs``
_UNKNOWN = -2


def _bare_profile(T, P):
    """stumpy's inputs to :func:`motifs`: ``P`` 1-D (partners unknown) or stumpy's (l, 2k + 2)
    array (distances, then indices), as a z-normalised self-join result."""
    from types import SimpleNamespace
    a = np.asarray(P)
    if a.ndim == 2 and a.shape[1] >= 4 and a.shape[1] % 2 == 0:
        k = (a.shape[1] - 2) // 2
        prof, idx = a[:, 0].astype(np.float64), a[:, k].astype(np.int64)
    elif a.ndim == 1:
        prof = a.astype(np.float64)
        idx = np.full(len(prof), _UNKNOWN, np.int64)
    else:
        raise ValueError("result must be a MatrixProfileResult, a 1-D profile P or stumpy's "
                         f"(l, 2k + 2) array, got shape {a.shape}")
    m = int(np.asarray(T).shape[-1]) - len(prof) + 1
    if m < 3:
        raise ValueError(f"P has {len(prof)} values for a series of {np.asarray(T).shape[-1]}:"
                         f" m = {m} < 3")
    return SimpleNamespace(P=prof, I=idx, m=m, exclusion_zone=int(np.ceil(m / 4)),
                           self_join=True, normalize=True)


def discords(result, k=1, *, exclusion_zone=None):
    """The ``k`` discords: subsequences farthest from their nearest neighbour.

    Parameters
    ----------
    result : MatrixProfileResult
        A matrix profile (self-join or AB-join; for k > 1 results the first column is used).
    k : int, optional
        Number of discords (default 1).
    exclusion_zone : int, optional
        No two reported discords this close or closer (default ``m``: distinct events, no two
        windows that overlap, after the non-self matches of Keogh et al.'s discord
        definition; the result's zone, ceil(m / 4) by default, is for the profile itself and
        let one anomaly be reported several times).

    Returns
    -------
    indices : numpy.ndarray of int64
        Start indices, largest distance first (fewer than ``k`` when not enough finite values).
    distances : numpy.ndarray of float64
        Their matrix-profile values.

    Raises
    ------
    ValueError
        ``k`` or ``exclusion_zone`` not an int >= 1 / >= 0.

    References
    ----------
    .. [1] Y. Zhu, Z. Zimmerman, N. Shakibay Senobari, C.-C. M. Yeh, G. Funning, A. Mueen,
       P. Brisk, E. Keogh, "Exploiting a novel algorithm and GPUs to break the ten quadrillion
       pairwise comparisons barrier for time series motifs and joins", Knowledge and
       Information Systems, 2017.
    .. [2] E. Keogh, J. Lin, A. Fu, "HOT SAX: Efficiently finding the most unusual time series
       subsequence", IEEE International Conference on Data Mining, 2005.

    Examples
    --------
    >>> import numpy as np, clts
    >>> T = np.sin(np.arange(2000) * 2 * np.pi / 50)
    >>> T[1000:1010] += 2.0                            # an anomaly
    >>> idx, dist = clts.discords(clts.matrix_profile(T, 50), 1)
    >>> bool(950 <= idx[0] <= 1010)         # a window that overlaps it
    True
    """
    k = _int_at_least(k, "k", 1)
    P, _ = _result_profile(result)
    ez = int(result.m) if exclusion_zone is None else _zone(result, exclusion_zone)
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
    """The top motifs of a self-join: closest pairs of subsequences and their other occurrences.

    Repeatedly takes the smallest matrix-profile value (pair i, I[i]) not yet excluded, then
    collects up to ``max_matches`` occurrences within ``max_distance`` of subsequence i, no two
    within the exclusion zone of each other.

    Parameters
    ----------
    T : array_like
        The series the result was computed on.
    result : MatrixProfileResult, or array_like
        Its self-join matrix profile; or, as stumpy's ``motifs`` takes it, the profile values
        alone (1-D ``P``, e.g. ``mp[:, 0]``: z-normalised, exclusion zone ceil(m / 4), each
        pair's partner found from the distance profile) or stumpy's whole ``(l, 2k + 2)``
        array (its second column the partners). For stumpy's own procedure and return layout
        see ``clts.compat.stumpy.motifs``.
    max_motifs : int, optional
        Number of motifs (default 1).
    max_matches : int, optional
        Most occurrences per motif, the pair included (default 10).
    radius : float, optional
        Occurrences within ``radius`` x the pair's distance count (default 2.0).
    exclusion_zone : int, optional
        Default: the result's exclusion zone.
    max_distance : float, optional
        Overrides ``radius``: an absolute distance bound.

    Returns
    -------
    list of dict
        One ``{"indices": [...], "distances": [...]}`` per motif, closest first; the first two
        indices are the pair.

    Raises
    ------
    ValueError
        An AB-join result, ``T`` of the wrong length, or bad ``max_motifs`` / ``max_matches``
        / ``radius`` / ``max_distance`` / ``exclusion_zone``.

    References
    ----------
    .. [1] Y. Zhu, Z. Zimmerman, N. Shakibay Senobari, C.-C. M. Yeh, G. Funning, A. Mueen,
       P. Brisk, E. Keogh, "Exploiting a novel algorithm and GPUs to break the ten quadrillion
       pairwise comparisons barrier for time series motifs and joins", Knowledge and
       Information Systems, 2017.

    Examples
    --------
    >>> import numpy as np, clts
    >>> T = np.random.default_rng(0).standard_normal(3000)
    >>> T[500:540] = T[2000:2040] = np.sin(np.arange(40) / 3)   # a planted motif
    >>> found = clts.motifs(T, clts.matrix_profile(T, 40))
    >>> sorted(found[0]["indices"][:2].tolist())
    [500, 2000]
    """
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
    if not hasattr(result, "self_join"):
        result = _bare_profile(T, result)
    if not result.self_join:
        raise ValueError("motifs needs a self-join result")
    P, I = _result_profile(result)
    m = result.m
    ez = _zone(result, exclusion_zone)
    T = np.asarray(_host(T), dtype=np.float64)
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
        if taken[i] or j == -1 or (j >= 0 and taken[j]):
            continue
        d = np.sqrt(((Z - Z[i]) ** 2).sum(1))
        if result.normalize:
            d[const ^ const[i]] = np.sqrt(m)
            d[const & const[i]] = 0.0
        d[~valid] = np.inf
        if j == _UNKNOWN:       # a bare profile: the nearest window outside i's zone
            dz = d.copy()
            dz[max(0, i - ez):i + ez + 1] = np.inf
            j = int(np.argmin(dz))
            if not np.isfinite(dz[j]) or taken[j]:
                continue
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
