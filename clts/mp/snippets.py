"""``clts.snippets``: the k snippets of a series (Imani et al., "Matrix Profile XIII: Time Series
Snippets: A New Primitive for Time Series Data Mining", ICBK 2018), stumpy.snippets's
definition, defaults and return layout.

Each non-overlapping segment of length m (the series NaN-padded to a multiple of m) gets its
MPdist profile against every length-m subsequence (``mpdist_vect`` with windows of length s);
the snippets are chosen greedily, each minimising the area under the running minimum of the
profiles. Device: the distance matrix of every segment's windows against the series, in
batched :func:`clts.mass` calls (many queries against one series); host: the rolling minima,
the k-th values, the greedy choice, fractions and regimes.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from . import snippets_join
from .mass import distance_profiles
from .mpdist import _k_of, _rows, vect_from_matrix
from ..vocabulary import renamed

#: distance-matrix rows per clts.mass call (bounds host memory: rows x n values)
ROWS_PER_CALL = 2048


def _mask_slices(mask):
    """[start, stop) of each run of True in ``mask``, as an int64 [runs, 2] array."""
    m = np.concatenate([[False], mask, [False]]).astype(np.int8)
    d = np.diff(m)
    return np.column_stack([np.flatnonzero(d == 1), np.flatnonzero(d == -1)]).astype(np.int64)


def snippet_profiles(T, m, *, percentage=1.0, s=None, mpdist_percentage=0.05, mpdist_k=None,
                     normalize=True, p=2.0, precision=None, device=None):
    """The MPdist profile of every non-overlapping length-``m`` segment of ``T`` against its
    length-``m`` subsequences: [n // m, n - m + 1] (stumpy's ``_get_all_profiles``)."""
    n = len(T)
    if s is not None:
        if isinstance(s, bool) or not isinstance(s, numbers.Real):
            raise TypeError(f"s must be None or an int, got {type(s).__name__}")
        s = min(int(s), m)
    else:
        if isinstance(percentage, bool) or not isinstance(percentage, numbers.Real):
            raise ValueError(f"percentage must be a number in [0, 1], got {percentage!r}")
        s = min(int(math.ceil(float(np.clip(percentage, 0.0, 1.0)) * m)), m)
    if s < 3:
        raise ValueError(f"the MPdist window s = {s} must be >= 3 (raise percentage or s)")
    npad = int(m * math.ceil(n / m))
    # stumpy: n // m segments; its non-normalised variant leaves out the last segment
    nseg = n // m if normalize else npad // m - 1
    Tp = np.full(npad, np.nan)
    Tp[:n] = T
    j = m - s + 1
    if mpdist_k is None:
        kk = _k_of(None, mpdist_percentage, 2 * m, 2 * j - 1)
    else:
        kk = _k_of(mpdist_k, mpdist_percentage, 0, 2 * j - 1)
    nv = npad - m + 1
    if normalize and snippets_join.usable(j, kk):
        # windows shorter than the segments: rows by the sliding update, minima on the device
        D = snippets_join.segment_profiles(Tp, m, s, nseg, kk, device=device,
                                           precision=precision)
        return D[:, :n - m + 1]
    W = np.lib.stride_tricks.sliding_window_view(Tp, s)
    bad = np.any(np.isnan(W), axis=1)
    D = np.empty((nseg, nv))
    per = max(1, ROWS_PER_CALL // j)
    for a in range(0, nseg, per):
        b = min(nseg, a + per)
        starts = (np.arange(a, b)[:, None] * m + np.arange(j)[None, :]).reshape(-1)
        Dm = np.asarray(distance_profiles(W[starts], Tp, normalize=normalize, p=p,
                                          precision=precision, device=device, progress=False),
                        np.float64).reshape(b - a, j, -1)
        if not normalize:       # stumpy's plain distances: NaN (not inf) at windows with NaN
            Dm[bad[starts].reshape(b - a, j)] = np.nan
            Dm[:, :, bad] = np.nan
        for i in range(b - a):
            own = starts[i * j:(i + 1) * j]
            fin = np.isfinite(Dm[i, np.arange(j), own])
            Dm[i, np.arange(j)[fin], own[fin]] = 0.0      # each window against itself
            D[a + i] = vect_from_matrix(Dm[i], nv, kk, stumpy_nan=not normalize)
    return D[:, :n - m + 1]


@renamed()
def snippets(T, m, k, *, percentage=1.0, s=None, mpdist_percentage=0.05, mpdist_k=None,
             normalize=True, p=2.0, precision=None, device=None, time_axis=None):
    """The ``k`` snippets of a series: the non-overlapping length-``m`` segments whose MPdist
    profiles together lie lowest, chosen greedily (stumpy.snippets).

    Parameters
    ----------
    T : array_like, [n]
        The series (NaN / inf: windows that contain them are at inf); m <= n // 2.
    m : int
        Snippet length (the segments are T[0:m], T[m:2m], ...).
    k : int
        Number of snippets (more than the segments repeats the last choice, as stumpy).
    percentage : float, optional
        The MPdist window s = ceil(percentage m) (default 1.0: s = m).
    s : int, optional
        The MPdist window instead of ``percentage``.
    mpdist_percentage, mpdist_k : optional
        MPdist's selection (``clts.mpdist_vect``'s ``percentage`` / ``k``).
    normalize, p : optional
        z-normalised (default) or Minkowski-``p`` distances (stumpy's ``aampdist_snippets``,
        with its rules: the last segment left out when m divides n, inf kept as inf, NaN
        windows at NaN, skipped by its rolling minimum, scipy's ``minimum_filter1d``, which
        is used here too where scipy is installed).
    precision, device : optional
    time_axis : int, optional
        The time axis of an input with extra length-1 axes (default the last).

    Returns
    -------
    tuple
        stumpy's six arrays: ``snippets`` [k, m], ``snippets_indices`` [k],
        ``snippets_profiles`` [k, n - m + 1], ``snippets_fractions`` [k], ``snippets_areas``
        [k], ``snippets_regimes`` [regimes, 3] (snippet, start, stop).

    Examples
    --------
    >>> import numpy as np, clts
    >>> t = np.arange(1200)
    >>> T = np.where(t < 600, np.sin(2 * np.pi * t / 50), np.sign(np.sin(2 * np.pi * t / 50)))
    >>> snip, idx, prof, frac, area, reg = clts.snippets(T, 100, 2)
    >>> sorted(int(i) < 600 for i in idx), float(frac.sum())
    ([False, True], 1.0)
    """
    from .api import _one_series
    a, _ = _one_series(T, "T", time_axis)
    T, _ = _rows(a, "T", None)
    T = T[0]
    if normalize:               # stumpy's: inf is NaN (its non-normalised variant keeps inf)
        T = np.where(np.isinf(T), np.nan, T)
    n = len(T)
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)):
        raise TypeError(f"m must be an int, got {type(m).__name__}")
    m = int(m)
    if not 3 <= m <= n // 2:
        raise ValueError(f"The snippet window size of {m} is too large for a time series with "
                         f"length {n}. Please try `m <= len(T) // 2` (and m >= 3)")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    D = snippet_profiles(T, m, percentage=percentage, s=s, mpdist_percentage=mpdist_percentage,
                         mpdist_k=mpdist_k, normalize=normalize, p=p, precision=precision,
                         device=device)
    k = int(k)
    snips = np.empty((k, m))
    idx = np.empty(k, np.int64)
    profiles = np.empty((k, D.shape[1]))
    areas = np.empty(k)
    Q = np.full(D.shape[1], np.inf)
    starts = np.arange(D.shape[0], dtype=np.int64) * m
    for i in range(k):
        a = np.argmin(np.sum(np.minimum(D, Q), axis=1))
        snips[i] = T[starts[a]:starts[a] + m]
        idx[i] = starts[a]
        profiles[i] = D[a]
        areas[i] = np.sum(np.minimum(D[a], Q))
        Q = np.minimum(D[a], Q)
    total = np.min(profiles, axis=0)
    fractions = np.empty(k)
    regimes = []
    for i in range(k):
        mask = profiles[i] <= total
        fractions[i] = np.sum(mask) / total.shape[0]
        total = total - mask.astype(np.float64)
        regimes.append(_mask_slices(mask))
    counts = [len(r) for r in regimes]
    reg = np.empty((sum(counts), 3), np.int64)
    reg[:, 0] = np.repeat(np.arange(k), counts)
    if sum(counts):
        reg[:, 1:] = np.vstack(regimes)
    return snips, idx, profiles, fractions, areas, reg
