"""Motifs and discords from a matrix profile: ``motifs`` follows stumpy.motifs's procedure (or
clts's pair-and-radius search), ``discords`` the largest profile values apart from each other."""
from __future__ import annotations

import numbers

import numpy as np
from ..vocabulary import renamed
from ..errors import warn_caller


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


def _bare_columns(P):
    """(profile, partner index) of a bare profile: ``P`` 1-D (partners ``_UNKNOWN``) or
    stumpy's (l, 2k + 2) array (distances, then indices)."""
    a = np.asarray(_host(P))
    if a.ndim == 2 and a.shape[1] >= 4 and a.shape[1] % 2 == 0:
        k = (a.shape[1] - 2) // 2
        return a[:, 0].astype(np.float64), a[:, k].astype(np.int64)
    if a.ndim == 1 and a.dtype.kind in "iuf":
        return a.astype(np.float64), np.full(len(a), _UNKNOWN, np.int64)
    raise ValueError("result must be a MatrixProfileResult, a 1-D profile P or stumpy's "
                     f"(l, 2k + 2) array, got shape {a.shape}, dtype {a.dtype}")


def _bare_profile(T, P):
    """stumpy's inputs to :func:`motifs`: ``P`` 1-D (partners unknown) or stumpy's (l, 2k + 2)
    array (distances, then indices), as a z-normalised self-join result."""
    from types import SimpleNamespace
    prof, idx = _bare_columns(P)
    m = int(np.asarray(T).shape[-1]) - len(prof) + 1
    if m < 3:
        raise ValueError(f"P has {len(prof)} values for a series of {np.asarray(T).shape[-1]}:"
                         f" m = {m} < 3")
    return SimpleNamespace(P=prof, I=idx, m=m, exclusion_zone=int(np.ceil(m / 4)),
                           self_join=True, normalize=True)


@renamed()
def discords(result, k=1, *, exclusion_zone=None):
    """The ``k`` discords: subsequences farthest from their nearest neighbour.

    Parameters
    ----------
    result : MatrixProfileResult, or a profile array
        A matrix profile (self-join or AB-join; for k > 1 results the first column is used),
        or a bare one: a 1-D profile ``P`` or stumpy's ``(l, 2k + 2)`` array (then
        ``exclusion_zone`` is needed: ``m`` is not known from the profile alone).
    k : int, optional
        Number of discords (default 1).
    exclusion_zone : int, optional
        No two reported discords this close or closer (default ``m``: distinct events, no two
        windows that overlap, after the non-self matches of Keogh et al.'s discord
        definition; the result's zone, ceil(m / 4) by default, is for the profile itself and
        let one anomaly be reported several times). Required with a bare profile.

    Returns
    -------
    indices : numpy.ndarray of int64
        Start indices, largest distance first (fewer than ``k`` when not enough finite values).
    distances : numpy.ndarray of float64
        Their matrix-profile values.

    Raises
    ------
    ValueError
        ``k`` or ``exclusion_zone`` not an int >= 1 / >= 0; an array of another shape.
    TypeError
        A bare profile without ``exclusion_zone``.

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
    if hasattr(result, "P"):
        P, _ = _result_profile(result)
        ez = int(result.m) if exclusion_zone is None else _zone(result, exclusion_zone)
    else:
        P, _ = _bare_columns(result)
        if exclusion_zone is None:
            raise TypeError("discords of a bare profile needs exclusion_zone= (its default, "
                            "m, is not known from the profile alone; exclusion_zone=m keeps "
                            "reported windows from overlapping)")
        ez = _int_at_least(exclusion_zone, "exclusion_zone", 0)
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


def _profile_values(T, result):
    """(T, P, m, default zone, normalize, p) from a result object, a 1-D profile or stumpy's
    (l, 2k + 2) array."""
    T = np.asarray(_host(T), dtype=np.float64)
    if T.ndim != 1:
        raise ValueError(f"T must be 1-D (one series), got shape {T.shape}")
    if hasattr(result, "self_join") and hasattr(result, "P"):
        if not result.self_join:
            raise ValueError("result: motifs needs a self-join result")
        P, _ = _result_profile(result)
        m = int(result.m)
        if len(T) - m + 1 != len(P):
            raise ValueError(f"T has {len(T)} values, the result was computed on "
                             f"{len(P) + m - 1}")
        ez = _zone(result, None)
        return T, P, m, ez, bool(result.normalize), getattr(result, "p", None)
    a = np.asarray(_host(result))
    if a.ndim == 2 and a.shape[1] >= 4 and a.shape[1] % 2 == 0:
        a = a[:, 0]
    if a.ndim != 1:
        raise ValueError("result must be a MatrixProfileResult, a 1-D profile P or stumpy's "
                         f"(l, 2k + 2) array, got shape {a.shape}")
    P = a.astype(np.float64)
    m = len(T) - len(P) + 1
    if m < 3:
        raise ValueError(f"P has {len(P)} values for a series of {len(T)}: m = {m} < 3")
    return T, P, m, int(np.ceil(m / 4)), None, None


def _real(value, name, *, allow_none=False, low=None, finite=False):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or np.isnan(value) or \
            (finite and not np.isfinite(value)) or (low is not None and value < low):
        what = "a finite number" if finite else "a number"
        raise ValueError(f"{name} must be {'None or ' if allow_none else ''}{what}"
                         f"{f' >= {low}' if low is not None else ''}, got {value!r}")
    return float(value)


def default_cutoff(P):
    """stumpy's default ``cutoff`` for :func:`motifs`: max(mean(P) - 2 std(P), min(P)) over
    the finite profile values."""
    Pn = np.where(np.isinf(P), np.nan, np.asarray(P, np.float64))
    if np.all(np.isnan(Pn)):
        return np.nan
    return float(max(np.nanmean(Pn) - 2.0 * np.nanstd(Pn), np.nanmin(Pn)))


@renamed()
def motifs(T, result, max_motifs=1, *, min_neighbors=1, max_distance=None, cutoff=None,
           max_matches=10, atol=1e-8, exclusion_zone=None, normalize=None, p=None,
           search="match", radius=None, device=None):
    """The top motifs of a self-join: by default stumpy's ``motifs`` (the same motifs from
    the same ``T`` and profile), or the pair-and-radius search (``search="pair"``).

    ``search="match"`` (default; stumpy.motifs's procedure): the window with the smallest
    remaining profile value, while that value is <= ``cutoff``, is a query whose matches in
    ``T`` are found as :func:`clts.match` finds them (within ``max_distance`` + ``atol``,
    best first, at most ``max_matches``, an exclusion zone around each); it is a motif when it
    has more than ``min_neighbors`` matches (itself included, as stumpy counts); the profile
    is then set to inf in the exclusion zone of every match, motif or not, and the next
    candidate taken.

    ``search="pair"`` (clts's search before it followed stumpy): the closest pair (i, I[i])
    not yet excluded, then up to ``max_matches`` occurrences within ``radius`` x the pair's
    distance of window i (or ``max_distance``), no two within the exclusion zone of each
    other; the pair is always reported even when its distance is far above the rest of the
    profile. Needs the partner indices (a result object or stumpy's whole array).

    Parameters
    ----------
    T : array_like
        The series the profile was computed on (1-D).
    result : MatrixProfileResult, or array_like
        Its self-join matrix profile: a :func:`clts.matrix_profile` / :func:`clts.aamp`
        result, the profile values alone as stumpy's ``motifs`` takes them (1-D ``P``, e.g.
        ``mp[:, 0]``), or stumpy's whole ``(l, 2k + 2)`` array.
    max_motifs : int, optional
        Most motifs (default 1).
    min_neighbors : int, optional
        A candidate is a motif with more than this many matches (default 1: itself and one
        other). ``search="match"`` only.
    max_distance : float or callable, optional
        Largest distance of a match (a callable gets each distance profile). Default, as
        stumpy: max(mean - 2 std, min) of the candidate's distance profile; with
        ``search="pair"``, ``radius`` x the pair's distance.
    cutoff : float, optional
        Largest profile value a candidate may have (default, as stumpy: max(mean - 2 std,
        min) of the finite profile values, :func:`default_cutoff`). ``search="match"`` only.
    max_matches : int or None, optional
        Most occurrences per motif, the query included (default 10; None: all).
    atol : float, optional
        Added to ``max_distance`` (default 1e-8). ``search="match"`` only.
    exclusion_zone : int, optional
        Around each match, in the profile and in each match search (default the result's
        zone, ceil(m / 4) for a bare profile: stumpy's).
    normalize, p : optional
        Distance of the match search (default the result's; a bare profile: z-normalised,
        p = 2). Give ``normalize=False`` (and ``p``) for a bare stumpy ``aamp`` profile.
    search : {"match", "pair"}, optional
        Default ``"match"``, stumpy's procedure (see above).
    radius : float, optional
        ``search="pair"`` only (default 2.0).
    device : optional
        Where the distance profiles run (:func:`clts.mass`'s ``device``).

    Returns
    -------
    list of dict
        One ``{"indices": int64 array, "distances": float64 array}`` per motif, in the order
        found; the first occurrence is the query (distance 0) and the rest best first
        (stumpy returns the same rows padded into two arrays: see
        ``clts.compat.stumpy.motifs``). Empty when no candidate qualifies (with stumpy's
        warning for ``search="match"``).

    Raises
    ------
    ValueError
        An AB-join result, ``T`` of the wrong length, bad ``max_motifs`` / ``max_matches`` /
        ``min_neighbors`` / ``max_distance`` / ``cutoff`` / ``atol`` / ``radius`` /
        ``exclusion_zone`` / ``search``, or ``normalize`` / ``p`` other than the result's.

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
    if search not in ("match", "pair"):
        raise ValueError(f"search must be 'match' or 'pair', got {search!r}")
    max_motifs = _int_at_least(max_motifs, "max_motifs", 1)
    if max_matches is not None:
        max_matches = _int_at_least(max_matches, "max_matches", 1)
    if not (max_distance is None or callable(max_distance)):
        max_distance = _real(max_distance, "max_distance", low=0)
    T, P, m, ez, r_norm, r_p = _profile_values(T, result)
    if exclusion_zone is not None:
        ez = _int_at_least(exclusion_zone, "exclusion_zone", 0)
    for name, given, own in (("normalize", normalize, r_norm), ("p", p, r_p)):
        if given is not None and own is not None and given != own:
            raise ValueError(f"{name}={given!r} differs from the result's ({own!r})")
    normalize = bool(r_norm if r_norm is not None else (True if normalize is None
                                                           else normalize))
    p = _real(r_p if r_p is not None else (2.0 if p is None else p), "p", low=1)
    if search == "pair":
        for name, v, default in (("min_neighbors", min_neighbors, 1), ("cutoff", cutoff, None),
                                 ("atol", atol, 1e-8)):
            if v is not default and v != default:
                raise ValueError(f"{name} applies to search='match', not 'pair'")
        if callable(max_distance):
            raise ValueError("max_distance: search='pair' takes a number")
        if p != 2.0:
            raise ValueError(f"p={p!r}: search='pair' measures p = 2 distances")
        return _pair_motifs(T, result, max_motifs, max_matches or len(P),
                            2.0 if radius is None else radius, ez, max_distance, m, normalize)
    if radius is not None:
        raise ValueError("radius applies to search='pair'; search='match' takes max_distance")
    min_neighbors = _int_at_least(min_neighbors, "min_neighbors", 0)
    atol = _real(atol, "atol", low=0, finite=True)
    cutoff = default_cutoff(P) if cutoff is None else _real(cutoff, "cutoff")
    if cutoff == 0.0:
        warn_caller("The `cutoff` has been set to 0.0 and may result in little/no candidate "
                    "motifs being identified.\nYou may consider relaxing the constraint by "
                    f"increasing the `cutoff` (e.g., cutoff={np.partition(P, 1)[1]}).")
    return _match_motifs(T, P, m, ez, max_motifs, min_neighbors, max_distance, cutoff,
                         max_matches, atol, normalize, p, device)


def _match_motifs(T, P, m, ez, max_motifs, min_neighbors, max_distance, cutoff, max_matches,
                  atol, normalize, p, device):
    from .mass import distance_profiles, find_matches
    l = len(P)
    P = P.copy()
    # stumpy's aamp_motifs searches for every match (and excludes around all of them), its
    # z-normalised motifs at most max_matches
    search_limit = max_matches if normalize else None
    out = []
    c = int(np.argmin(P))
    for _ in range(l):
        if len(out) >= max_motifs:
            break
        v = P[c]
        if not v <= cutoff or not np.isfinite(v):
            break
        if max_distance is not None and not callable(max_distance) and v > max_distance:
            break       # no other window is this close to any remaining candidate
        D = distance_profiles(T[c:c + m], T, normalize=normalize, p=p, query_idx=c,
                              device=device, progress=False)
        found = find_matches(D, ez, max_distance, search_limit, c, atol)
        if len(found) > min_neighbors:
            keep = found[:max_matches]
            out.append({"indices": keep[:, 1].astype(np.int64),
                        "distances": keep[:, 0].astype(np.float64)})
        for j in (found[:, 1] if len(found) else [c]):
            j = int(j)
            P[max(0, j - ez):min(l, j + ez + 1)] = np.inf
        c = int(np.argmin(P))
    if not out:
        warn_caller(f"No motifs were found. You may consider increasing the `cutoff` (e.g., "
                    f"cutoff={2. * cutoff}) and/or increasing the `max_distance `(e.g., "
                    "max_distance=np.inf).")
    return out


def _pair_motifs(T, result, max_motifs, max_matches, radius, ez, max_distance, m, normalize):
    from .reference import windows
    if isinstance(radius, bool) or not isinstance(radius, numbers.Real) or \
            not np.isfinite(radius) or radius < 0:
        raise ValueError(f"radius must be a finite number >= 0, got {radius!r}")
    if not hasattr(result, "self_join"):
        result = _bare_profile(T, result)
    P, I = _result_profile(result)
    W = windows(T, m)   # the p = 2 distance on the host, O(l m) memory
    valid = np.all(np.isfinite(W), axis=1)
    Wc = np.where(valid[:, None], W, 0.0)
    if normalize:
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
        if normalize:
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
