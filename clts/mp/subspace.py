"""``clts.subspace``: the dimensions of a k-dimensional motif (stumpy.subspace's computation,
after "Matrix Profile VI: Meaningful Multidimensional Motif Discovery"): the motif's window and
its neighbour's are discretised (z-normalised: 2^n_bit equiprobable bins of the standard
normal; plain: 2^n_bit equal steps between the series' extremes, as stumpy.maamp_subspace) and
the k + 1 dimensions where they differ least are kept. Also the discretisation and the
ordering of the dimensions that ``clts.mdl`` uses. O(d m) on the host (no kernel)."""
from __future__ import annotations

from statistics import NormalDist

import numpy as np

from .mass import _check_p
from .mstump import _include, _series_2d
from ..vocabulary import renamed


def _bins(n_bit):
    """Bin edges of equal probability under the standard normal (2^n_bit bins)."""
    q = np.arange(1, 2 ** n_bit) / 2 ** n_bit
    return np.array([NormalDist().inv_cdf(float(x)) for x in q])


def _znorm_windows(T, start, m):
    """The windows T[:, start:start+m] z-normalised as stumpy does (NaN / inf read as 0, a
    standard deviation below 1e-7 taken as 1, constant windows all 0)."""
    W = T[:, start:start + m]
    fin = np.all(np.isfinite(W), axis=1)
    W = np.where(np.isfinite(W), W, 0.0)
    sd = np.std(W, axis=1, keepdims=True)
    sd[sd < 1e-7] = 1.0
    Z = (W - W.mean(axis=1, keepdims=True)) / sd
    const = fin & (np.ptp(W, axis=1) == 0)
    Z[const] = 0.0
    return Z


def _discretizer(T, m, normalize, n_bit, discretize_func=None):
    """window start -> the d windows there discretised (stumpy's default per ``normalize``,
    or the caller's ``discretize_func`` on the z-normalised / plain [d, m] windows)."""
    if normalize:
        bins = _bins(n_bit) if discretize_func is None else None

        def f(s):
            Z = _znorm_windows(T, s, m)
            return np.digitize(Z, bins, right=True) if bins is not None else discretize_func(Z)
        return f
    fin = T[np.isfinite(T)]
    lo, hi = (float(fin.min()), float(fin.max())) if fin.size else (0.0, 1.0)

    def g(s):
        W = T[:, s:s + m]
        W = np.where(np.isfinite(W), W, 0.0)
        if discretize_func is not None:
            return discretize_func(W)
        return np.round((W - lo) / (hi - lo) * (2.0 ** n_bit - 1.0)).astype(np.int64) + 1
    return g


def _dims(ds, dn, k, inc, discords, p):
    """The k + 1 dimensions of least (``discords``: stumpy's reversed order) p-norm distance
    between the discretised windows ``ds`` and ``dn``, the ``inc`` ones first."""
    D = np.linalg.norm(ds - dn, axis=1, ord=p)
    order = (D[::-1] if discords else D).argsort(kind="mergesort")   # stumpy's, as is
    if inc:
        mask = np.isin(order, inc)
        order = np.concatenate([order[mask], order[~mask]])
    return order[:k + 1]


def _common(T, m, n_bit, normalize, p, discretize_func, time_axis=None):
    """Checked (T [d, n], m, n_bit, normalize, p) of subspace / mdl."""
    T2 = _series_2d(T, time_axis, m)
    n = T2.shape[1]
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 3 <= m <= n:
        raise ValueError(f"m must be an int in [3, {n}], got {m!r}")
    if isinstance(n_bit, bool) or not isinstance(n_bit, (int, np.integer)) or \
            not 1 <= n_bit <= 16:
        raise ValueError(f"n_bit must be an int in [1, 16], got {n_bit!r}")
    if not isinstance(normalize, (bool, np.bool_)):
        raise TypeError(f"normalize must be a bool, got {type(normalize).__name__}")
    if discretize_func is not None and not callable(discretize_func):
        raise TypeError("discretize_func must be callable or None")
    # z-normalised: the Euclidean distance whatever p (stumpy ignores p there)
    p = _check_p(p)[0] if not normalize else 2.0
    return T2, int(m), int(n_bit), bool(normalize), p


@renamed()
def subspace(T, m, subseq_idx, nn_idx, k, include=None, discords=False, discretize_func=None,
             n_bit=8, normalize=True, p=2.0, *, time_axis=None):
    """The k + 1 dimensions of the k-dimensional motif at windows (``subseq_idx``,
    ``nn_idx``): stumpy.subspace's conventions (``normalize=False``:
    stumpy.maamp_subspace's).

    Parameters
    ----------
    T : array_like, shape (d, n)
    m : int
        Window length.
    subseq_idx, nn_idx : int
        The motif's window and its neighbour's, e.g. ``i = argmin(P[k])`` and ``I[k, i]``
        from :func:`clts.mstump`.
    k : int
        0 .. d-1: the subspace of the best k + 1 dimensions.
    include : sequence of int, optional
        Dimensions always in the subspace (as in :func:`clts.mstump`).
    discords : bool
        stumpy's ``discords`` ordering of the dimensions.
    discretize_func : callable, optional
        [d, m] windows (z-normalised, or plain with NaN / inf as 0) -> discretised values;
        default stumpy's (see the module's docstring).
    n_bit : int
        Bits of the default discretisation.
    normalize : bool
        z-normalised windows (default) or plain ones.
    p : float
        Order of the distance between plain discretised windows (ignored when normalising).
    time_axis : int, optional
        The axis of ``T`` that is time: default 1 (-1), stumpy's [d, n]; 0 reads [n, d]
        (time down the rows, as a pandas frame). Without it, an ``m`` longer than the rows
        that fits the columns is a ValueError naming ``time_axis=0``.

    Returns
    -------
    numpy.ndarray of int64, shape (k + 1,)

    Examples
    --------
    >>> import numpy as np, clts
    >>> T = np.array([[584., -11., 23., 79., 1001., 0., -19.],
    ...               [  1.,   2.,  4.,  8.,   16., 0.,  32.]])
    >>> P, I = clts.mstump(T, 3)
    >>> i = int(np.argmin(P[1]))
    >>> clts.subspace(T, 3, i, int(I[1, i]), 1).tolist()
    [0, 1]
    """
    T2, m, n_bit, normalize, p = _common(T, m, n_bit, normalize, p, discretize_func,
                                         time_axis)
    d, n = T2.shape
    for name, v in (("subseq_idx", subseq_idx), ("nn_idx", nn_idx)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v <= n - m:
            raise ValueError(f"{name} must be a window start in [0, {n - m}], got {v!r}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k < d:
        raise ValueError(f"k must be an int in [0, {d}), got {k!r}")
    if not isinstance(discords, (bool, np.bool_)):
        raise TypeError(f"discords must be a bool, got {type(discords).__name__}")
    disc = _discretizer(T2, m, normalize, n_bit, discretize_func)
    return _dims(disc(int(subseq_idx)), disc(int(nn_idx)), int(k), _include(include, d),
                 bool(discords), p).astype(np.int64)
