"""``clts.scrump``: the anytime approximate matrix profile (SCRIMP++: preSCRIMP's sampled
distance profiles refined along their diagonals, :mod:`clts.mp.prescrump`, then SCRIMP's
diagonals in a random order, a share of them per ``update()``), with stumpy's semantics and
random order, computed on an OpenCL device.

The diagonals of one update run in ``subdiag.cl.mako`` (:mod:`clts.mp.diagset`): every pair of
the chosen diagonals scored with SCAMP's O(1) covariance update (exact at the start of each
block of rows), folded into each row's k best (and left / right best) on the device; the
winners' distances are then evaluated exactly (``exact.cl.mako``'s ``pair_dist``), as
:func:`clts.matrix_profile` does. An update that covers every diagonal (``percentage=1``) is
:func:`clts.matrix_profile` itself, so it equals ``stump`` exactly.
"""
from __future__ import annotations


import numpy as np

from .diagset import _check, _series, _Sides, diagonal_profile, merge_topk
from .mass import _check_p
from .prescrump import _prescrump
from ..vocabulary import renamed

class Scrump:
    """The anytime approximate matrix profile (SCRIMP++), stumpy's ``scrump``: each
    :meth:`update` adds the next share (``percentage`` of the pairs) of the diagonals in a
    random order; after ``ceil(1 / percentage)`` updates the profile is exact.

    Made by :func:`scrump`. Attributes as stumpy's: ``P_``, ``I_`` ([l] for k = 1, else
    [l, k]), ``left_I_``, ``right_I_`` (self-joins; -1 throughout for AB-joins), and
    ``left_P_``, ``right_P_``.
    """

    def __init__(self, T_A, m, T_B=None, *, percentage=0.01, pre_scrump=False, s=None, k=1,
                 normalize=True, p=2.0, device=None):
        T_A = _series(T_A, "T_A")
        T_B = None if T_B is None else _series(T_B, "T_B")
        m, k = _check(T_A, m, T_B, k, percentage, s)
        self._p = float(_check_p(p)[0]) if not normalize else float(p)
        self._sides = sd = _Sides(T_A, m, T_B, k, bool(normalize), device, self._p)
        self._T_A, self._T_B = T_A, T_B
        self._m, self._k = m, k
        lA, lB = sd.lA, sd.lB
        if sd.self_join and lA <= sd.ez + 1:
            raise ValueError(f"The window size, m = {m}, is too long for a self join of "
                             f"{len(T_A)} values")
        self._P = np.full((lA, k), np.inf)
        self._I = np.full((lA, k), -1, np.int64)
        self._PL = np.full(lA, np.inf)
        self._PR = np.full(lA, np.inf)
        self._IL = np.full(lA, -1, np.int64)
        self._IR = np.full(lA, -1, np.int64)
        if s is None:
            s = sd.ez
        if pre_scrump:
            indices = np.random.permutation(range(0, lA, s)).astype(np.int64)
            P, I = _prescrump(sd, T_A, T_B, s, indices, p)
            merge_topk(self._P, self._I, P, I)
        if sd.self_join:
            self._diags = np.random.permutation(range(sd.ez + 1, lA)).astype(np.int64)
        else:
            self._diags = np.random.permutation(range(-lA + 1, lB)).astype(np.int64)
        self._percentage = float(np.clip(percentage, 0.0, 1.0))
        n_chunks = int(np.ceil(1.0 / percentage))
        d = self._diags
        counts = np.where(d >= 0, np.minimum(lB - d, lA), np.minimum(lB, lA + d))
        self._ranges = _array_ranges(counts, n_chunks)
        self._chunk = 0

    def update(self):
        """Add the next share of the diagonals (nothing once all are done)."""
        from ..runtime.threads import serialised
        serialised(lambda device: self._update())(device=self._sides.dev)

    def _update(self):
        if self._chunk >= len(self._ranges):
            return
        a, b = self._ranges[self._chunk]
        sd = self._sides
        if a == 0 and b == len(self._diags):
            res = self._exact()
        else:
            res = diagonal_profile(sd, self._diags[a:b])
        merge_topk(self._P, self._I, res["P"], res["I"])
        if sd.self_join:
            for side in ("left", "right"):
                Pn, In = res[side + "_P"], res[side + "_I"]
                Po = self._PL if side == "left" else self._PR
                Io = self._IL if side == "left" else self._IR
                mask = Pn < Po
                Po[mask] = Pn[mask]
                Io[mask] = In[mask]
        self._chunk += 1

    def _exact(self):
        """Every diagonal at once: the exact profile of :func:`clts.matrix_profile`."""
        from .aamp import aamp
        from .api import matrix_profile
        sd = self._sides

        def run(k):
            if sd.normalize:
                return matrix_profile(self._T_A, self._m, self._T_B, k=k, device=sd.dev,
                                      progress=False)
            return aamp(self._T_A, self._m, self._T_B, p=self._p, k=k, device=sd.dev,
                        progress=False)
        r = run(self._k)
        out = {"P": np.asarray(r.P, np.float64), "I": np.asarray(r.I, np.int64)}
        if sd.self_join:
            if r.left_P is not None:
                out.update(left_P=np.asarray(r.left_P), left_I=np.asarray(r.left_I),
                           right_P=np.asarray(r.right_P), right_I=np.asarray(r.right_I))
            else:       # top-k: the left / right neighbours from the k = 1 profile
                r1 = run(1)
                out.update(left_P=np.asarray(r1.left_P), left_I=np.asarray(r1.left_I),
                           right_P=np.asarray(r1.right_P), right_I=np.asarray(r1.right_I))
        # the exact profile: no earlier approximation can improve it
        self._P[:] = np.inf
        self._I[:] = -1
        return out

    def _flat(self, a):
        return a[:, 0].copy() if self._k == 1 else a.copy()

    @property
    def P_(self):
        """The (top-k) distances so far ([l] for k = 1, else [l, k])."""
        return self._flat(self._P)

    @property
    def I_(self):
        """Their indices (-1: none yet)."""
        return self._flat(self._I)

    @property
    def left_I_(self):
        """The best neighbour before each window so far (-1: none)."""
        return self._IL.copy()

    @property
    def right_I_(self):
        """The best neighbour after each window so far (-1: none)."""
        return self._IR.copy()

    @property
    def left_P_(self):
        return self._PL.copy()

    @property
    def right_P_(self):
        return self._PR.copy()

    @property
    def done(self):
        """Whether every diagonal has been added (the profile is exact)."""
        return self._chunk >= len(self._ranges)


def _array_ranges(a, n_chunks):
    """stumpy's ``_get_array_ranges(a, n_chunks, truncate=True)``: [start, stop) rows of ``a``
    in ``n_chunks`` runs of about equal sum (empty trailing runs dropped)."""
    out = np.zeros((n_chunks, 2), np.int64)
    if a.shape[0] > 0 and n_chunks > 0:
        cum = a.cumsum() / a.sum()
        idx = 1 + np.searchsorted(cum, np.linspace(0, 1, n_chunks + 1)[1:-1])
        out[1:, 0] = idx
        out[:-1, 1] = idx
        out[-1, 1] = a.shape[0]
        diff = np.diff(idx)
        if np.any(diff == 0):
            cut = int(np.argmin(diff)) + 2
            out[cut:, 0] = a.shape[0]
            out[cut - 1:, 1] = a.shape[0]
            out = out[:cut]
    return out


@renamed()
def scrump(T_A, m, T_B=None, *, percentage=0.01, pre_scrump=False, s=None, k=1,
           normalize=True, p=2.0, device=None):
    """The anytime approximate matrix profile (SCRIMP++), stumpy's ``scrump``.

    Parameters
    ----------
    T_A : array_like, 1-D
    m : int
        Window length (>= 3).
    T_B : array_like, 1-D, optional
        An AB-join's second series (default: a self-join with exclusion zone ceil(m / 4)).
    percentage : float, optional
        Share of the pairs each :meth:`Scrump.update` adds (default 0.01); 1: one update
        computes the exact profile (:func:`clts.matrix_profile`).
    pre_scrump : bool, optional
        Start from :func:`prescrump`'s approximation (SCRIMP++).
    s : int, optional
        preSCRIMP's sampling interval (default ceil(m / 4)).
    k : int, optional
        Neighbours per window.
    normalize : bool, optional
        z-normalised (default) or plain Minkowski distances of order ``p``.
    p : float, optional
        The order of plain distances (>= 1 or inf; default 2).
    device : optional

    Returns
    -------
    Scrump
        Call ``update()``; read ``P_``, ``I_``, ``left_I_``, ``right_I_``.

    Notes
    -----
    The diagonals (and preSCRIMP's windows) are ordered by ``np.random.permutation`` as in
    stumpy, so ``np.random.seed(s)`` before the call gives stumpy's order and, update by
    update, the same profile as ``stumpy.scrump`` up to rounding.

    References
    ----------
    .. [1] Y. Zhu, C.-C. M. Yeh, Z. Zimmerman, K. Kamgar, E. Keogh, "Matrix Profile XI:
       SCRIMP++: Time Series Motif Discovery at Interactive Speeds", ICDM 2018.

    Examples
    --------
    >>> import numpy as np, clts
    >>> T = np.cumsum(np.random.default_rng(0).standard_normal(500))
    >>> approx = clts.scrump(T, 25, percentage=0.1)
    >>> approx.update()
    >>> exact = clts.matrix_profile(T, 25).profile
    >>> bool(np.all(approx.P_ >= exact - 1e-9))
    True
    """
    return Scrump(T_A, m, T_B, percentage=percentage, pre_scrump=pre_scrump, s=s, k=k,
                  normalize=normalize, p=p, device=device)
