"""``clts.fluss``: regime boundaries from a matrix-profile index (FLUSS, Gharghabi et al.): the
arc curve (how many nearest-neighbour arcs cross each position), corrected by the idealised
arc curve of an index with no regimes, and its minima under an exclusion zone. O(n) on the
host (two bincounts and a cumulative sum: less work than copying the profile off a device).
Conventions are stumpy.fluss's; see docs/matrix-profile.md, "Segmentation"."""
from __future__ import annotations

import numpy as np


def arc_curve(I):
    """The number of arcs i -> I[i] that pass over each position (an index < 0, no neighbour,
    counts as an arc to itself): stumpy's ``_nnmark``."""
    I = np.array(I, dtype=np.int64)
    k = I.shape[0]
    i = np.arange(k, dtype=np.int64)
    I = np.where(I < 0, i, I)
    if np.any(I >= k):
        raise ValueError(f"I holds indices beyond its length {k}: give a self-join's index")
    ac = np.bincount(np.minimum(i, I), minlength=k) - np.bincount(np.maximum(i, I), minlength=k)
    return np.cumsum(ac)


def ideal_arc_curve(k):
    """The arc curve of a bidirectional index with no regimes, 2 i (k - i) / k (the FLUSS
    paper's closed form; stumpy fits a beta distribution to a random index instead, which
    approximates it)."""
    i = np.arange(k, dtype=np.float64)
    return 2.0 * i * (k - i) / k


def fluss(I, L, n_regimes, excl_factor=5, custom_iac=None):
    """Corrected arc curve and regime boundaries of a series from its matrix-profile index.

    Parameters
    ----------
    I : array_like of int, or MatrixProfileResult
        The (bidirectional) nearest-neighbour index of a self-join (``r.I[:, 0]``, or the
        result of :func:`clts.matrix_profile` itself); -1 = no neighbour.
    L : int
        About one period of the series (the edges ``L * excl_factor`` are set to 1, and so
        is the zone around each boundary found).
    n_regimes : int
        Number of regimes: ``n_regimes - 1`` boundaries are returned.
    excl_factor : int, optional
        Exclusion zone factor (default 5, as stumpy).
    custom_iac : array_like, optional
        Idealised arc curve to correct with (default: the closed form 2 i (k - i) / k; give
        stumpy's ``_iac(k)`` to reproduce stumpy's curve exactly).

    Returns
    -------
    cac : numpy.ndarray, float64, [k]
        The corrected arc curve, in [0, 1] (low: a regime change).
    regime_locs : numpy.ndarray, int64, [n_regimes - 1]
        Boundaries, best first.

    Raises
    ------
    ValueError
        ``L`` / ``n_regimes`` / ``excl_factor`` out of range, an index beyond its length, a
        ``custom_iac`` of another length.

    References
    ----------
    .. [1] S. Gharghabi, Y. Ding, C.-C. M. Yeh, K. Kamgar, L. Ulanova, E. Keogh, "Matrix
       Profile VIII: Domain Agnostic Online Semantic Segmentation at Superhuman Performance
       Levels", ICDM 2017.

    Examples
    --------
    >>> import numpy as np, clts
    >>> rng = np.random.default_rng(0)
    >>> t = np.arange(3000)
    >>> T = np.where(t < 1500, np.sin(t / 8), np.sign(np.sin(t / 15))) + 0.1 * rng.standard_normal(3000)
    >>> cac, locs = clts.fluss(clts.matrix_profile(T, 64), L=64, n_regimes=2)
    >>> bool(abs(int(locs[0]) - 1500) < 100)
    True
    """
    if hasattr(I, "I") and hasattr(I, "self_join"):
        if not I.self_join:
            raise ValueError("I: fluss needs the index of a self-join")
        I = I.I[:, 0]
    I = np.asarray(I)
    if I.ndim != 1 or I.dtype.kind not in "iuf":
        raise ValueError(f"I must be a 1-D array of indices, got shape {I.shape}, dtype "
                         f"{I.dtype}")
    for name, v, low in (("L", L, 1), ("n_regimes", n_regimes, 1), ("excl_factor", excl_factor,
                                                                     0)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
            raise ValueError(f"{name} must be an int >= {low}, got {v!r}")
    k = I.shape[0]
    ac = arc_curve(I)
    if custom_iac is None:
        iac = ideal_arc_curve(k)
    else:
        iac = np.array(custom_iac, dtype=np.float64)
        if iac.shape != (k,):
            raise ValueError(f"custom_iac must have the length of I ({k}), got {iac.shape}")
    iac[iac == 0.0] = 1e-10
    cac = np.minimum(ac / iac, 1.0)
    if excl_factor > 0:
        cac[:L * excl_factor] = 1.0
        cac[-L * excl_factor:] = 1.0
    return cac, _regimes(cac, int(n_regimes), int(L), int(excl_factor))


def _regimes(cac, n_regimes, L, excl_factor):
    locs = np.empty(n_regimes - 1, dtype=np.int64)
    tmp = cac.copy()
    for r in range(n_regimes - 1):
        locs[r] = np.argmin(tmp)
        tmp[max(locs[r] - excl_factor * L, 0):min(locs[r] + excl_factor * L, len(cac))] = 1.0
    return locs
