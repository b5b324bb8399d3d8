"""``clts.stimp``: the pan matrix profile (SKIMP) over many window lengths, stumpy's
``stimp``: window lengths in breadth-first order (the middle one first, then the middles of
each half, ...), each one's profile by :func:`clts.scrump` (one update of ``percentage``, with
preSCRIMP) or, at ``percentage=1``, exactly by :func:`clts.matrix_profile` /
:func:`clts.aamp`; ``PAN_`` normalised, contrasted and binarised as stumpy's."""
from __future__ import annotations

import numpy as np

from .diagset import EXCL_ZONE_DENOM, _series
from .scrump import Scrump
from ..vocabulary import renamed


def max_window(n: int) -> int:
    """stumpy's ``get_max_window_size``: the longest window a self-join of n values allows."""
    return int(n - np.floor((n + (EXCL_ZONE_DENOM - 1)) // (EXCL_ZONE_DENOM + 1))) - 1


def bfs_indices(n: int) -> np.ndarray:
    """stumpy's ``_bfs_indices`` (without fill): 0 .. n-1 in breadth-first (level) order of
    the halvings of [0, n)."""
    if n == 1:
        return np.array([0], np.int64)
    out, level = [], [(0, n)]
    while level and len(out) < n:
        nxt = []
        for lo, hi in level:
            mid = (lo + hi) // 2
            out.append(mid)
            if lo < mid:
                nxt.append((lo, mid))
            if mid + 1 < hi:
                nxt.append((mid + 1, hi))
        level = nxt
    return np.array(out[:n], np.int64)


class Stimp:
    """The pan matrix profile, stumpy's ``stimp`` (made by :func:`stimp`).

    :meth:`update` computes the profile of the next window length (``M_`` order);
    :meth:`update_all` the rest of them. ``PAN_``: the transformed pan matrix profile
    (:meth:`pan` with stumpy's defaults), ``M_``: the window lengths in the order they are
    computed, ``P_``: the raw profiles computed so far.
    """

    def __init__(self, T, min_m=3, max_m=None, step=1, *, percentage=0.01, pre_scrump=True,
                 normalize=True, p=2.0, device=None):
        self._T = _series(T, "T").copy()
        n = self._T.shape[0]
        for name, v in (("min_m", min_m), ("step", step)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be an int >= 1, got {v!r}")
        if max_m is None:
            max_m = max(min_m + 1, max_window(n))
            M = np.arange(min_m, max_m + 1, step).astype(np.int64)
        else:
            min_m, max_m = sorted([min_m, max_m])
            M = np.arange(max(3, min_m), min(max_window(n), max_m) + 1, step).astype(np.int64)
        if M.shape[0] == 0:
            raise ValueError(f"no window length in [{min_m}, {max_m}] fits a self-join of "
                             f"{n} values (at most {max_window(n)})")
        self._bfs = bfs_indices(M.shape[0])
        self._M = M[self._bfs]
        self._n_processed = 0
        self._percentage = float(np.clip(percentage, 0.0, 1.0))
        self._pre_scrump = bool(pre_scrump)
        self._normalize, self._p, self._device = bool(normalize), float(p), device
        self._PAN = np.full((self._M.shape[0], n), np.inf)

    def _profile(self, m):
        from .aamp import aamp
        from .api import matrix_profile
        if self._percentage < 1.0:
            approx = Scrump(self._T, int(m), percentage=self._percentage,
                            pre_scrump=self._pre_scrump, normalize=self._normalize, p=self._p,
                            device=self._device)
            approx.update()
            return approx.P_
        if self._normalize:
            r = matrix_profile(self._T, int(m), device=self._device, progress=False)
        else:
            r = aamp(self._T, int(m), p=self._p, device=self._device, progress=False)
        return np.asarray(r.P)[:, 0]

    def update(self):
        """The profile of the next window length (nothing once all are done)."""
        from ..runtime.threads import serialised
        serialised(lambda device: self._update())(device=self._device)

    def _update(self):
        if self._n_processed < self._M.shape[0]:
            m = self._M[self._n_processed]
            P = self._profile(m)
            self._PAN[self._bfs[self._n_processed], :P.shape[0]] = P
            self._n_processed += 1

    def update_all(self):
        """The profiles of every remaining window length."""
        from ..runtime.threads import serialised

        def run(device):
            while self._n_processed < self._M.shape[0]:
                self._update()
        serialised(run)(device=self._device)

    def pan(self, threshold=0.2, normalize=True, contrast=True, binary=True, clip=True):
        """The transformed pan matrix profile, as stumpy's ``pan``: each profile divided by
        2 sqrt(m) (``normalize``), ranks through a logistic around ``threshold``
        (``contrast``), 0 / 1 by ``threshold`` (``binary``), clipped to [0, 1], and the rows
        not computed yet repeated from the computed ones above them; entries without a distance
        (inf: a window length's tail, a NaN window) take the largest value."""
        PAN = self._PAN.copy()
        idx = self._bfs[:self._n_processed]
        sorted_idx = np.sort(idx)
        PAN[PAN == np.inf] = np.nan         # not computed: the largest value in the end
        if normalize:
            norm = 1.0 / (2.0 * np.sqrt(self._M[:self._n_processed]))
            PAN[idx] = np.minimum(1.0, PAN[idx] * norm[:, None])
        if contrast:
            l = self._n_processed * PAN.shape[1]
            tmp = PAN[idx].argsort(kind="mergesort", axis=None)
            ranks = np.empty(l, np.int64)
            ranks[tmp] = np.arange(l)
            pct = np.linspace(0, 1, l)[ranks].reshape(PAN[idx].shape)
            PAN[idx] = 1.0 / (1.0 + np.exp(-10 * (pct - threshold)))
        if binary:
            PAN[idx] = np.where(PAN[idx] <= threshold, 0.0, 1.0)
        if clip:
            PAN[idx] = np.clip(PAN[idx], 0.0, 1.0)
        nrepeat = np.diff(np.append(-1, sorted_idx))
        PAN[:np.sum(nrepeat)] = np.repeat(PAN[sorted_idx], nrepeat, axis=0)
        missing = np.isnan(PAN)
        if not missing.all():               # nothing computed yet: stays NaN, as stumpy's
            PAN[missing] = np.nanmax(PAN)
        return PAN

    @property
    def PAN_(self):
        """:meth:`pan` with its defaults."""
        return self.pan().astype(np.float64)

    @property
    def M_(self):
        """The window lengths in the order they are computed."""
        return self._M.astype(np.int64)

    @property
    def P_(self):
        """The raw profiles, one per window length of ``M_`` (inf where not computed)."""
        n = self._T.shape[0]
        return [self._PAN[idx][:n - self._M[i] + 1] for i, idx in enumerate(self._bfs)]


@renamed()
def stimp(T, min_m=3, max_m=None, step=1, *, percentage=0.01, pre_scrump=True,
          normalize=True, p=2.0, device=None):
    """The pan matrix profile over window lengths min_m .. max_m (SKIMP), stumpy's ``stimp``.

    Parameters
    ----------
    T : array_like, 1-D
    min_m, max_m, step : int, optional
        Window lengths ``range(min_m, max_m + 1, step)`` (max_m default: the longest a
        self-join allows, stumpy's rule).
    percentage : float, optional
        Share of each profile's pairs (:func:`clts.scrump`, one update; default 0.01); 1: each
        profile exactly (:func:`clts.matrix_profile`, or :func:`clts.aamp` with
        ``normalize=False``).
    pre_scrump : bool, optional
        preSCRIMP first (default True; ignored at ``percentage=1``).
    normalize : bool, optional
        z-normalised (default) or plain Minkowski distances of order ``p``.
    device : optional

    Returns
    -------
    Stimp
        ``update()`` (one window length) or ``update_all()``; ``PAN_``, ``M_``, ``P_``.

    References
    ----------
    .. [1] F. Madrid, S. Imani, R. Mercer, Z. Zimmerman, N. Shakibay Senobari, E. Keogh,
       "Matrix Profile XX: Finding and Visualizing Time Series Motifs of All Lengths using
       the Matrix Profile", ICBK 2019.

    Examples
    --------
    >>> import numpy as np, clts
    >>> T = np.cumsum(np.random.default_rng(0).standard_normal(300))
    >>> pan = clts.stimp(T, 10, 40, 10, percentage=1.0)
    >>> pan.update_all()
    >>> pan.M_.tolist(), pan.PAN_.shape
    ([30, 20, 40, 10], (4, 300))
    """
    return Stimp(T, min_m, max_m, step, percentage=percentage, pre_scrump=pre_scrump,
                 normalize=normalize, p=p, device=device)
