"""``clts.mdl``: how many dimensions of a multi-dimensional motif to keep, by minimum
description length (stumpy.mdl's computation, after "Matrix Profile VI: Meaningful
Multidimensional Motif Discovery"): for each k, the bits to store a motif's windows given its
neighbour's in the best k + 1 dimensions. O(d^2 m) on the host (no kernel: a few windows)."""
from __future__ import annotations

import numpy as np

from .subspace import _common, _dims, _discretizer
from .mstump import _include
from ..vocabulary import renamed


@renamed()
def mdl(T, m, subseq_idx, nn_idx, include=None, discords=False, discretize_func=None, n_bit=8,
        normalize=True, p=2.0, *, time_axis=None):
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
    discretize_func : callable, optional
        As in :func:`clts.subspace`.
    n_bit : int
        Bits of the discretisation (z-normalised: 2^n_bit equiprobable bins of the standard
        normal; plain: 2^n_bit equal steps between the series' extremes).
    normalize : bool
        z-normalised windows (default) or plain ones (stumpy.maamp_mdl).
    p : float
        Order of the distance between plain discretised windows (ignored when normalising).
    time_axis : int, optional
        The axis of ``T`` that is time: default 1 (-1), stumpy's [d, n]; 0 reads [n, d]
        (time down the rows, as a pandas frame). Without it, an ``m`` longer than the rows
        that fits the columns is a ValueError naming ``time_axis=0``.

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
    T2, m, n_bit, normalize, p = _common(T, m, n_bit, normalize, p, discretize_func,
                                         time_axis)
    d, n = T2.shape
    idx = []
    for name, v in (("subseq_idx", subseq_idx), ("nn_idx", nn_idx)):
        a = np.asarray(v)
        if a.shape != (d,) or a.dtype.kind not in "iu" or np.any(a < 0) or \
                np.any(a > n - m):
            raise ValueError(f"{name} must hold {d} window starts in [0, {n - m}]")
        idx.append(a.astype(np.int64))
    inc = _include(include, d)
    disc = _discretizer(T2, m, normalize, n_bit, discretize_func)
    bit_sizes = np.empty(d)
    S = []
    for k in range(d):
        ds, dn = disc(idx[0][k]), disc(idx[1][k])
        s = _dims(ds, dn, k, inc, discords, p)
        S.append(s)
        n_val = len(np.unique(ds[s] - dn[s]))
        bit_sizes[k] = (n_bit * (2 * d * m - (k + 1) * m) + (k + 1) * m * np.log2(n_val)
                        + n_val * n_bit)
    return bit_sizes, S
