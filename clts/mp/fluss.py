"""``clts.fluss``: regime boundaries from a matrix-profile index (FLUSS, Gharghabi et al.): the
arc curve (how many nearest-neighbour arcs cross each position), corrected by the idealised
arc curve of an index with no regimes, and its minima under an exclusion zone. O(n) on the
host (two bincounts and a cumulative sum: less work than copying the profile off a device).
Conventions are stumpy.fluss's; see docs/matrix-profile.md, "Segmentation"."""
from __future__ import annotations

import functools

import numpy as np
from ..vocabulary import renamed


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
    paper's closed form; stumpy fits a beta distribution to a random index instead,
    :func:`stumpy_iac`, which approximates it)."""
    i = np.arange(k, dtype=np.float64)
    return 2.0 * i * (k - i) / k


@functools.lru_cache(maxsize=8)
def _stumpy_iac(width, n_iter, n_samples, seed, bidirectional=True):
    try:
        import scipy.stats
    except ImportError as e:       # pragma: no cover - scipy is an optional extra
        raise ImportError("stumpy's idealised arc curve (fluss(..., iac='stumpy'), a beta "
                          "fit) needs scipy; install it, or use iac='closed' (the closed "
                          "form, no scipy)") from e
    rs = np.random.RandomState(seed)       # the stream np.random.seed(seed) gives
    I = rs.randint(0, width, size=width).astype(np.int64)
    if not bidirectional:                  # a right-only index: each after its window
        I[:-1] = width
        for i in range(width - 1):
            I[i] = rs.randint(i + 1, width)
        # the last keeps its first draw, as stumpy's
    target = arc_curve(I)
    hist = scipy.stats.rv_histogram((target, np.append(np.arange(width), width)))
    params = np.empty((n_iter, 2))
    for i in range(n_iter):
        data = hist.rvs(size=n_samples, random_state=rs)
        a, b, _, _ = scipy.stats.beta.fit(data, floc=0, fscale=width)
        params[i] = a, b
    a_mean = np.round(np.mean(params[:, 0]), 2)
    b_mean = np.round(np.mean(params[:, 1]), 2)
    iac = scipy.stats.beta.pdf(np.arange(width), a_mean, b_mean, loc=0, scale=width)
    slope = np.linalg.lstsq(iac[:, None], target, rcond=None)[0]
    iac = iac * slope
    iac.flags.writeable = False
    return iac


def stumpy_iac(width, n_iter=1000, n_samples=1000, seed=0, bidirectional=True):
    """stumpy's idealised arc curve of ``width`` windows (``stumpy.floss._iac``: bidirectional
    as stumpy.fluss uses it, or right-only as stumpy.floss does): the arc curve
    of a random index drawn from ``seed``, fitted by a beta density averaged over ``n_iter``
    resamplings of ``n_samples`` and scaled by least squares; the same numbers as stumpy's
    from the same arguments. Needs scipy; about 0.5 s per width with the defaults, cached for
    the last 8 argument sets."""
    if isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < 2:
        raise ValueError(f"width must be an int >= 2, got {width!r}")
    for name, v in (("n_iter", n_iter), ("n_samples", n_samples)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an int >= 1, got {v!r}")
    return _stumpy_iac(int(width), int(n_iter), int(n_samples), int(seed),
                       bool(bidirectional)).copy()


@renamed()
def fluss(I, L, n_regimes, excl_factor=5, custom_iac=None, *, iac="closed"):
    """Corrected arc curve and regime boundaries of a series from its matrix-profile index.

    Parameters
    ----------
    I : array_like of int, or MatrixProfileResult
        The (bidirectional) nearest-neighbour index of a self-join (``r.I[:, 0]``, or the
        result of :func:`clts.matrix_profile` itself); -1 = no neighbour. A device array (or
        a device-array call's result) is read back: the arc curve is a host computation.
    L : int
        About one period of the series (the edges ``L * excl_factor`` are set to 1, and so
        is the zone around each boundary found).
    n_regimes : int
        Number of regimes: ``n_regimes - 1`` boundaries are returned.
    excl_factor : int, optional
        Exclusion zone factor (default 5, as stumpy).
    custom_iac : array_like, optional
        Idealised arc curve to correct with, of the length of ``I`` (overrides ``iac``).
    iac : {"closed", "stumpy"}, optional
        The idealised arc curve when no ``custom_iac`` is given. ``"closed"`` (default): the
        FLUSS paper's closed form 2 i (k - i) / k (:func:`ideal_arc_curve`), the expected arc
        curve of an index with no regimes (each neighbour uniform): deterministic, no scipy,
        no cost. ``"stumpy"``: stumpy.fluss's curve (:func:`stumpy_iac`, a beta density
        fitted to one seeded random index: needs scipy, about 0.5 s per new length, cached):
        the same ``cac`` and boundaries as stumpy.fluss. For k = 1471 stumpy's curve lies
        8 % below the closed form at 5 % of the length from either end and 3 % above it in
        the middle, so its ``cac`` is higher near the ends: the two can rank minima
        differently (see docs/matrix-profile.md, "Segmentation").

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
        ``custom_iac`` of another length, an unknown ``iac``.

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
    from ..runtime.arrays import to_numpy
    if hasattr(I, "I") and hasattr(I, "self_join"):
        if not I.self_join:
            raise ValueError("I: fluss needs the index of a self-join")
        I = to_numpy(I.I)[:, 0]
    I = np.asarray(to_numpy(I))       # a device index is read back: the curve is host work
    if I.ndim == 2 and I.shape[1] == 1:
        I = I[:, 0]
    if I.ndim != 1 or I.dtype.kind not in "iuf":
        raise ValueError(f"I must be a 1-D array of indices, got shape {I.shape}, dtype "
                         f"{I.dtype}")
    for name, v, low in (("L", L, 1), ("n_regimes", n_regimes, 1), ("excl_factor", excl_factor,
                                                                     0)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
            raise ValueError(f"{name} must be an int >= {low}, got {v!r}")
    if not isinstance(iac, str) or iac not in ("closed", "stumpy"):
        raise ValueError(f"iac must be 'closed' or 'stumpy', got {iac!r}")
    k = I.shape[0]
    ac = arc_curve(I)
    if custom_iac is not None:
        curve = np.array(custom_iac, dtype=np.float64)
        if curve.shape != (k,):
            raise ValueError(f"custom_iac must have the length of I ({k}), got {curve.shape}")
    elif iac == "stumpy":
        curve = stumpy_iac(k)
    else:
        curve = ideal_arc_curve(k)
    curve[curve == 0.0] = 1e-10
    cac = np.minimum(ac / curve, 1.0)
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
