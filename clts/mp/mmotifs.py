"""``clts.mmotifs``: motifs of a multi-dimensional series from its multi-dimensional matrix
profile (:func:`clts.mstump`'s ``P``, ``I``), stumpy.mmotifs's procedure (after "Matrix Profile
VI: Meaningful Multidimensional Motif Discovery"): each dimensionality k's best window is a
candidate, :func:`clts.mdl` picks the k (the fewest bits) and its subspace, the candidate's
matches are searched in that subspace (the mean of its dimensions' distance profiles, from one
batched :func:`clts.mass` call), then an exclusion zone around every match in every dimension
of the profile, and the next candidate."""
from __future__ import annotations

import math
import numbers

import numpy as np

from .mass import distance_profiles, find_matches
from .mdl import mdl
from .mstump import _series_2d
from .motifs import _host, _int_at_least, _real
from ..vocabulary import renamed
from ..errors import warn_caller


def _profile(T, P, I, time_axis):
    T2 = _series_2d(_host(T), time_axis)
    P2 = np.array(np.asarray(_host(P)), dtype=np.float64)
    I2 = np.asarray(_host(I))
    if P2.ndim == 1:
        P2, I2 = P2[None, :], I2[None, :]
    if P2.ndim != 2 or P2.shape[0] != T2.shape[0]:
        hint = ""
        if time_axis is None and P2.ndim == 2 and T2.shape[1] == P2.shape[0]:
            hint = "; T's time runs down its rows: give time_axis=0"
        raise ValueError(f"T (d, n) and P (d, l) must have the same rows, got shapes "
                         f"{T2.shape} and {P2.shape}{hint}")
    if I2.shape != P2.shape or I2.dtype.kind not in "iuf":
        raise ValueError(f"I must be an index array of P's shape {P2.shape}, got {I2.shape}")
    m = T2.shape[1] - P2.shape[1] + 1
    if m < 3:
        raise ValueError(f"P has {P2.shape[1]} windows for a series of {T2.shape[1]}: m = {m} "
                         "< 3")
    return T2, P2, I2.astype(np.int64), m


def default_cutoffs(P):
    """stumpy's per-dimension cutoff: max(mean - 2 std, min) of each row's finite values (NaN
    for a row without one), as numpy's nanmean / nanstd / nanmin count them. Written out rather
    than silencing their "empty slice" warnings with ``warnings.catch_warnings``, which changes
    the filters of the whole process (other threads raced with it)."""
    P = np.asarray(P, dtype=np.float64)
    fin = np.isfinite(P)
    count = fin.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):      # rows without a finite value
        mean = np.where(fin, P, 0.0).sum(axis=1) / count
        std = np.sqrt((np.where(fin, P - mean[:, None], 0.0) ** 2).sum(axis=1) / count)
    low = np.where(fin, P, np.inf).min(axis=1, initial=np.inf)
    return np.where(count > 0, np.maximum(mean - 2.0 * std, low), np.nan)


@renamed()
def mmotifs(T, P, I, min_neighbors=1, max_distance=None, cutoffs=None, max_matches=10,
            max_motifs=1, atol=1e-8, k=None, include=None, normalize=True, p=2.0, *,
            device=None, time_axis=None):
    """The top motifs of a multi-dimensional series and the subspace each lives in.

    Parameters
    ----------
    T : array_like, shape (d, n)
        The series (rows are dimensions, as :func:`clts.mstump`).
    P, I : array_like, shape (d, l)
        Its multi-dimensional matrix profile and indices (``P, I = clts.mstump(T, m)``; row k:
        the best k + 1 dimensions). ``m`` is ``n - l + 1``.
    min_neighbors : int, optional
        A candidate is a motif with more than this many matches (itself included, default 1).
    max_distance : float or callable, optional
        Largest mean distance of a match over the subspace (a callable gets each mean distance
        profile); default max(mean - 2 std, min) of it. A float also stops the search when the
        candidate's own profile value is above it.
    cutoffs : float or array_like (d,), optional
        Largest profile value of a candidate, per dimensionality (default
        :func:`default_cutoffs`: max(mean - 2 std, min) of each row).
    max_matches : int or None, optional
        Most matches per motif, the query included (default 10; None: all).
    max_motifs : int, optional
        Most motifs (default 1).
    atol : float, optional
        Added to ``max_distance``.
    k : int, optional
        Search every motif in k + 1 dimensions (row k of ``P``); default: the k with the
        fewest bits (:func:`clts.mdl`) for each candidate.
    include : sequence of int, optional
        Dimensions always in the subspace (as given to :func:`clts.mstump`).
    normalize, p : optional
        z-normalised (default) or plain Minkowski distances of order ``p`` (the ``mdl`` of a
        plain profile discretises plain windows, with p = 2 as stumpy's).
    device : optional
        Where the distance profiles run.
    time_axis : int, optional
        The axis of ``T`` that is time: default 1 (-1), stumpy's (d, n); 0 reads (n, d) (time
        down the rows, as a pandas frame). ``P``, ``I`` are (d, l) either way.

    Returns
    -------
    list of dict
        One per motif, in the order found: ``"indices"`` (int64) and ``"distances"``
        (float64) of its matches (the query first, then best first), ``"subspace"`` (the
        dimensions searched, int64), ``"mdl"`` (the bits of each dimensionality when it was
        chosen). ``clts.compat.stumpy.mmotifs`` returns them in stumpy's four padded
        arrays / lists.

    Notes
    -----
    A window with NaN / inf in any dimension of the subspace is never a match. (stumpy's
    non-normalised ``aamp_mmotifs`` reads the finite-window flags of dimensions 0, 1, ...
    rather than of the subspace's dimensions, so it can match a window with NaN where clts
    does not.)

    Examples
    --------
    >>> import numpy as np, clts
    >>> rng = np.random.default_rng(0)
    >>> T = np.cumsum(rng.standard_normal((3, 600)), axis=1)
    >>> T[:2, 100:130] = T[:2, 400:430] = np.sin(np.arange(30) / 3) * 5   # in dimensions 0, 1
    >>> P, I = clts.mstump(T, 30)
    >>> found = clts.mmotifs(T, P, I)
    >>> sorted(found[0]["indices"][:2].tolist()), found[0]["subspace"].tolist()
    ([100, 400], [0, 1])
    """
    T2, P2, I2, m = _profile(T, P, I, time_axis)
    d, l = P2.shape
    min_neighbors = _int_at_least(min_neighbors, "min_neighbors", 0)
    if isinstance(max_motifs, bool) or not isinstance(max_motifs, numbers.Integral):
        raise ValueError(f"max_motifs must be an int, got {max_motifs!r}")
    if max_motifs < 1:
        warn_caller("The maximum number of motifs, `max_motifs`, must be greater than or "
                    "equal to 1.\n`max_motifs` has been set to `1`")
        max_motifs = 1
    if max_matches is not None and not (isinstance(max_matches, float) and
                                        math.isinf(max_matches)):
        max_matches = _int_at_least(max_matches, "max_matches", 1)
    else:
        max_matches = None
    if not (max_distance is None or callable(max_distance)):
        _real(max_distance, "max_distance", low=0)
    atol = _real(atol, "atol", low=0, finite=True)
    if k is not None:
        k = _int_at_least(k, "k", 0)
        if k >= d:
            raise ValueError(f"k must be below the {d} dimensions, got {k}")
    if cutoffs is None:
        cutoffs = default_cutoffs(P2)
    cutoffs = np.broadcast_to(np.asarray(cutoffs, dtype=np.float64), (d,))
    ez = int(math.ceil(m / 4))
    rows = np.arange(d)
    # mdl's plain discretisation spans the series' extremes: stumpy's, with NaN / inf read as 0
    T0 = np.where(np.isfinite(T2), T2, 0.0)
    P2 = P2.copy()
    out = []
    while len(out) < max_motifs:
        cand = np.argmin(P2, axis=1)
        nn = I2[rows, cand]
        bits, subspaces = mdl(T0, m, cand, np.maximum(nn, 0), include, normalize=normalize)
        kk = int(np.argmin(bits)) if k is None else k
        sub = np.asarray(subspaces[kk], dtype=np.int64)
        c = int(cand[kk])
        v = P2[kk, c]
        if (v > cutoffs[kk] or not np.isfinite(v) or nn[kk] < 0
                or (isinstance(max_distance, float) and v > max_distance)):
            break
        D = np.asarray(distance_profiles(T2[sub, c:c + m], T2[sub], normalize=normalize,
                                         p=p, query_idx=c, device=device, progress=False),
                       np.float64).reshape(len(sub), -1)
        found = find_matches(np.mean(D, axis=0), ez, max_distance, max_matches, c, atol)
        if len(found) > min_neighbors:
            out.append({"indices": found[:, 1].astype(np.int64),
                        "distances": found[:, 0].astype(np.float64),
                        "subspace": sub, "mdl": bits})
        for j in (found[:, 1] if len(found) else [c]):
            j = int(j)
            P2[:, max(0, j - ez):min(l, j + ez + 1)] = np.inf
    return out
