"""``clts.mdl``: how many dimensions of a multi-dimensional motif to keep, by minimum
description length (stumpy.mdl's computation, after "Matrix Profile VI: Meaningful
Multidimensional Motif Discovery"): for each k, the bits to store a motif's windows given its
neighbour's in the best k + 1 dimensions. O(d^2 m) on the host (no kernel: a few windows)."""
from __future__ import annotations

from statistics import NormalDist

import numpy as np

from .mstump import _include, _series_2d


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


def mdl(T, m, subseq_idx, nn_idx, include=None, discords=False, n_bit=8):
    """Bits needed to describe each motif given its neighbour in its best k + 1 dimensions,
    for k = 0 .. d-1 (stumpy.mdl's conventions); the k with the fewest bits is the motif's
    natural dimensionality.

    Parameters
    ----------
    T : array_like, shape (d, n)
    m : int
        Window length.
    subseq_idx, nn_idx : sequence of int, length d
        For each k, a motif's window and its neighbour's (e.g. ``argmin(P[k])`` and
        ``I[k, argmin(P[k])]`` from :func:`clts.mstump`).
    include : sequence of int, optional
        Dimensions always in the subspace (as in :func:`clts.mstump`).
    discords : bool
        stumpy's ``discords`` ordering of the dimensions.
    n_bit : int
        Bits of the discretisation (2^n_bit equiprobable bins of the standard normal).

    Returns
    -------
    bit_sizes : numpy.ndarray, shape (d,)
    S : list of numpy.ndarray
        For each k, the k + 1 dimensions used.

    Examples
    --------
    >>> import numpy as np, clts
    >>> T = np.array([[584., -11., 23., 79., 1001., 0., -19.],
    ...               [  1.,   2.,  4.,  8.,   16., 0.,  32.]])
    >>> P, I = clts.mstump(T, 3)
    >>> motifs = np.argmin(P, axis=1)
    >>> bits, S = clts.mdl(T, 3, motifs, I[np.arange(2), motifs])
    >>> [int(b) for b in bits], [s.tolist() for s in S]
    ([80, 111], [[1], [0, 1]])
    """
    T2 = _series_2d(T)
    d, n = T2.shape
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or not 3 <= m <= n:
        raise ValueError(f"m must be an int in [3, {n}], got {m!r}")
    if isinstance(n_bit, bool) or not isinstance(n_bit, (int, np.integer)) or \
            not 1 <= n_bit <= 16:
        raise ValueError(f"n_bit must be an int in [1, 16], got {n_bit!r}")
    idx = []
    for name, v in (("subseq_idx", subseq_idx), ("nn_idx", nn_idx)):
        a = np.asarray(v)
        if a.shape != (d,) or a.dtype.kind not in "iu" or np.any(a < 0) or \
                np.any(a > n - m):
            raise ValueError(f"{name} must hold {d} window starts in [0, {n - m}]")
        idx.append(a.astype(np.int64))
    inc = _include(include, d)
    bins = _bins(int(n_bit))
    bit_sizes = np.empty(d)
    S = []
    for k in range(d):
        ds = np.digitize(_znorm_windows(T2, idx[0][k], m), bins, right=True)
        dn = np.digitize(_znorm_windows(T2, idx[1][k], m), bins, right=True)
        D = np.linalg.norm(ds - dn, axis=1)
        order = (D[::-1] if discords else D).argsort(kind="mergesort")   # stumpy's, as is
        if inc:
            mask = np.isin(order, inc)
            order = np.concatenate([order[mask], order[~mask]])
        s = order[:k + 1]
        S.append(s)
        n_val = len(np.unique(ds[s] - dn[s]))
        bit_sizes[k] = (n_bit * (2 * d * m - (k + 1) * m) + (k + 1) * m * np.log2(n_val)
                        + n_val * n_bit)
    return bit_sizes, S
