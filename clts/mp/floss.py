"""``clts.floss``: streaming semantic segmentation (FLOSS, Gharghabi et al.): a series of fixed
length slides over a stream; each window keeps its nearest neighbour to the right (the one
direction a stream can keep: a new window can only be somebody's right neighbour, and an
egressing window is nobody's), and the corrected arc curve of that one-directional index marks
regime changes as they arrive. Conventions are stumpy.floss's (its state, its ``cac_1d_``,
``P_``, ``I_``, ``T_``; indices count every point appended since the start).

Appended points wait until the state is read (O(1) per ``update``); then all of them go in one
piece, with the result of one point at a time. Fewer than 16 go through clts.stumpi's host path
one by one (stream_host.py: the new window's dot products by the sliding recurrence as a filter
with an error bound, exact O(m) distances for the windows it cannot decide; O(n) a point).
Longer blocks go to the device: the distance profiles of the new windows against the windows
that stay. Windows far enough before every new one (all but the last
``b + ceil(m / 4)``) take their best new neighbour from one AB-join on the diagonal kernel (O(n b)
work), the rest from the right profile of their self-join (every window that far after one of
them is new); fewer points (or p != 2 plain distances) from batched distance profiles
(:func:`clts.mass`'s kernel). The first new window
that beats a window's neighbour wins, as when the points come one by one. See
docs/matrix-profile.md, "Streaming segmentation"."""
from __future__ import annotations

import math

import numpy as np

from ..runtime import get_device
from .api import matrix_profile
from .fluss import arc_curve, stumpy_iac
from .mass import _check_p, distance_profiles
from .motifs import _host
from .stream_host import EXACT_FRACTION, REFRESH, HostStream, exact_distances

#: entries of one block of distance profiles (rows x windows): the pending points go through in
#: blocks of rows of at most this many entries
BLOCK_ENTRIES = 1 << 22
#: at least this many new windows, and as many far windows, take the far windows by an AB-join
JOIN_MIN = 16


def unidirectional_iac(k):
    """The expected arc curve of a right-only index of ``k`` windows with no regimes (each
    window's neighbour uniform among the windows after it; the last has none): at position i,
    sum over j <= i of (k - 1 - i) / (k - 1 - j) = (k - 1 - i) (H(k - 1) - H(k - 2 - i)), H the
    harmonic numbers. The closed form of what stumpy's ``_iac(..., bidirectional=False)``
    fits by a beta density."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 2:
        raise ValueError(f"k must be an int >= 2, got {k!r}")
    H = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, k, dtype=np.float64))])  # H(0..k-1)
    i = np.arange(k)
    return (k - 1 - i) * (H[k - 1] - H[np.maximum(k - 2 - i, 0)] * (i < k - 1))


def _right_index(mp, l):
    """The right nearest-neighbour index of each window from a clts result or stumpy's (l, 4)
    array."""
    if hasattr(mp, "right_I") and hasattr(mp, "self_join"):
        if not mp.self_join or mp.right_I is None:
            raise ValueError("mp: floss needs a self-join's right index")
        IR = np.asarray(_host(mp.right_I))
    else:
        a = np.asarray(_host(mp))
        if a.ndim != 2 or a.shape[1] < 4 or a.shape[1] % 2:
            raise ValueError(f"mp must be a self-join MatrixProfileResult or stumpy's (l, 2k + 2) "
                             f"array, got shape {a.shape}")
        IR = a[:, -1]
    IR = np.asarray(IR).astype(np.int64)
    if IR.shape != (l,):
        raise ValueError(f"mp has {len(IR)} windows, T has {l} of length m")
    pos = np.arange(l)
    if np.any((IR != -1) & ((IR <= pos) | (IR >= l))):
        raise ValueError("mp's right index must hold -1 or a window after each one")
    return IR


def _windows(T, m):
    return np.lib.stride_tricks.sliding_window_view(T, m)


def _znorm(W):
    """stumpy's z-normalisation of windows (a zero standard deviation divides by 1)."""
    mu = W.mean(axis=1, keepdims=True)
    sd = W.std(axis=1, keepdims=True)
    sd[sd == 0] = 1.0
    return (W - mu) / sd


#: windows whose standard deviation is below this fraction of their largest magnitude (but not
#: 0) keep the far windows off the AB-join: the diagonal kernel's AB-join loses the distances
#: of windows 5 +- 1e-9 (errors of order 1 where the self-join and distance profiles are exact)
ILL_CONDITIONED = 1e-6


def _conditioned(x, m):
    W = _windows(x, m)
    with np.errstate(invalid="ignore"):
        sd = W.std(axis=1)
        mx = np.abs(W).max(axis=1)
        return not np.any((sd > 0) & (sd < ILL_CONDITIONED * mx))


class Floss:
    """clts.floss(T, m, L, *, mp=None, excl_factor=5, custom_iac=None, iac="closed",
    normalize=True, p=2.0, device=None, precision=None)

    Streaming semantic segmentation of a sliding series (stumpy.floss's state and outputs).

    Parameters
    ----------
    T : array_like, 1-D
        The series so far (its length stays: each appended point pushes the oldest out).
    m : int
        Subsequence length (>= 3).
    L : int
        About one period: the first and last ``L * excl_factor`` values of the arc curve are 1.
    mp : MatrixProfileResult or array, optional
        The self-join of ``T`` to start from (its right index is read), or stumpy's
        ``(l, 4)`` array; default: :func:`clts.matrix_profile` (or :func:`clts.aamp` for
        ``normalize=False``) of ``T``.
    excl_factor : int, optional
        Edge factor (default 5, as stumpy).
    custom_iac : array_like, optional
        Idealised arc curve of the ``l`` windows (overrides ``iac``).
    iac : {"closed", "stumpy"}, optional
        ``"closed"`` (default): the exact expected arc curve of a right-only index with no
        regimes (:func:`unidirectional_iac`: deterministic, no scipy, no cost). ``"stumpy"``:
        stumpy.floss's curve (a beta density fitted to a seeded random right-only index,
        :func:`clts.mp.fluss.stumpy_iac` with ``bidirectional=False``: needs scipy, seconds
        per length with ``n_iter=1000``), for stumpy's ``cac_1d_``.
    n_iter, n_samples : int, optional
        The fit's resamplings for ``iac="stumpy"`` (stumpy's defaults 1000, 1000).
    normalize : bool, optional
        z-normalised (default) or plain Minkowski distances of order ``p``.
    device, precision
        As :func:`clts.mass`.

    Attributes
    ----------
    cac_1d_ : numpy.ndarray, float64
        The corrected arc curve of the right index (-1 throughout before the first update, as
        stumpy); low values mark a regime change.
    P_, I_ : numpy.ndarray
        Each window's right nearest-neighbour distance and index (inf / -1: none yet).
    T_ : numpy.ndarray
        The current series.

    Methods
    -------
    update(t)
        Append a point (or a 1-D array of points, as one after the other).

    Notes
    -----
    The method of Gharghabi et al., "Matrix Profile VIII" (ICDM 2017), as :func:`clts.fluss`
    for a whole series.

    Examples
    --------
    >>> import numpy as np, clts
    >>> rng = np.random.default_rng(1)
    >>> x = np.concatenate([np.sin(np.arange(1200) / 5), np.cumsum(rng.standard_normal(800)) / 4])
    >>> f = clts.floss(x[:1000], 40, L=40)
    >>> for v in x[1000:1500]:                  # one point at a time (or f.update(x[1000:1500]))
    ...     f.update(v)
    >>> int(np.argmin(f.cac_1d_)) + 500         # the sine gives way to the walk at 1200
    1160
    """

    def __init__(self, T, m, L, *, mp=None, excl_factor=5, custom_iac=None, iac="closed",
                 n_iter=1000, n_samples=1000, normalize=True, p=2.0, device=None,
                 precision=None):
        T = np.array(np.asarray(_host(T)), dtype=np.float64)
        if T.ndim != 1:
            raise ValueError(f"T must be 1-D (one series), got shape {T.shape}")
        if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 3:
            raise ValueError(f"m must be an int >= 3, got {m!r}")
        if len(T) < m + 1:
            raise ValueError(f"T has {len(T)} values, needs more than m={m}")
        for name, v, low in (("L", L, 1), ("excl_factor", excl_factor, 0)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
                raise ValueError(f"{name} must be an int >= {low}, got {v!r}")
        if not isinstance(iac, str) or iac not in ("closed", "stumpy"):
            raise ValueError(f"iac must be 'closed' or 'stumpy', got {iac!r}")
        self._p, _ = _check_p(p)
        self._m, self._L, self._ef = int(m), int(L), int(excl_factor)
        self._ez = int(math.ceil(m / 4))
        self._normalize = bool(normalize)
        self._device, self._precision = device, precision
        l = len(T) - self._m + 1
        if custom_iac is not None:
            curve = np.array(custom_iac, dtype=np.float64)
            if curve.shape != (l,):
                raise ValueError(f"custom_iac must have one value per window ({l}), got shape "
                                 f"{curve.shape}")
        elif iac == "stumpy":
            curve = stumpy_iac(l, n_iter, n_samples, bidirectional=False)
        else:
            curve = unidirectional_iac(l)
        curve[curve == 0.0] = 1e-10
        self._iac = curve
        if mp is None:
            if self._normalize:
                mp = matrix_profile(T, self._m, device=device, precision=precision,
                                    progress=False)
            else:
                from .aamp import aamp
                mp = aamp(T, self._m, p=self._p, device=device, precision=precision,
                          progress=False)
        IR = _right_index(mp, l)
        self._T = T
        # one point at a time on the host (clts.stumpi's host path: the sliding dot products
        # as a filter, exact distances for the windows it leaves undecided), float64,
        # z-normalised or p = 2
        dev = get_device(device)
        self._host_ok = ((precision == "double" or (precision is None and dev.fp64))
                         and (self._normalize or self._p == 2.0))
        self._hs = None
        self._P, self._I = self._initial(T, IR)
        self._a = 0                          # points appended so far
        self._pending = []
        self._cac = None

    def _initial(self, T, IR):
        """stumpy's start: the distance to each window's right neighbour computed directly
        (inf and the window itself where it has none)."""
        m, l = self._m, len(IR)
        W = _windows(T, m)
        own = np.arange(l)
        has = np.flatnonzero(IR >= 0)            # a neighbour: both windows finite
        A, B = W[has], W[IR[has]]
        d = np.full(l, np.inf)
        if self._normalize:
            dh = np.linalg.norm(_znorm(A) - _znorm(B), axis=1)
            ca, cb = np.ptp(A, axis=1) == 0, np.ptp(B, axis=1) == 0
            dh[ca & cb] = 0.0
            dh[ca ^ cb] = math.sqrt(m)
        else:
            dh = np.linalg.norm(A - B, ord=self._p, axis=1)
        d[has] = dh
        return d, np.where(IR >= 0, IR, own).astype(np.int64)

    def update(self, t):
        """Append ``t`` (a number, or a 1-D array of numbers one after the other); applied when
        the state is next read."""
        t = np.atleast_1d(np.array(_host(t), dtype=np.float64))
        if t.ndim != 1:
            raise ValueError(f"t must be a number or a 1-D array, got shape {t.shape}")
        if len(t):
            self._pending.append(t)

    def _flush(self):
        if not self._pending:
            return
        t = np.concatenate(self._pending)
        self._pending = []
        n = len(self._T)
        if len(t) < JOIN_MIN and self._host_ok:
            for x in t.tolist():
                self._host_point(x)
        else:
            self._hs = None                  # the device block leaves the host state behind
            for s in range(0, len(t), n):    # a block never pushes out more than the series
                self._advance(t[s:s + n])
        I = self._I - self._a
        cac = np.minimum(arc_curve(I) / self._iac, 1.0)
        if self._ef > 0:
            cac[:self._L * self._ef] = 1.0
            cac[-self._L * self._ef:] = 1.0
        self._cac = cac

    def _host_point(self, x):
        """One point by the host path; the device row where the filter leaves too many
        windows undecided (near-constant series), or where the magnitudes do not suit it."""
        m, ez, T = self._m, self._ez, self._T
        if self._hs is not None and not self._hs.usable(x):
            self._hs = None
        if self._hs is None:
            hs = HostStream(T, m, self._normalize)
            if not hs.usable(x):
                self._advance(np.array([x]))
                return
            self._hs = hs
        hs = self._hs
        k = len(T) - m + 1
        q = np.append(T[len(T) - m + 1:], x)
        zq, qbad, qconst = hs.append(q, x, True)
        Tn = np.append(T[1:], x)
        P = np.append(self._P[1:], np.inf)
        I = np.append(self._I[1:], k + self._a)
        lim = k - ez                        # windows the new one (k - 1 now) sees
        if not qbad and lim > 0:
            lo, hi, c0 = hs.bounds(lim)
            bound = np.multiply(P[:lim], P[:lim])
            np.multiply(bound, 1.0 + 1e-12, out=bound)
            np.add(bound, c0, out=bound)
            idx = np.nonzero(np.less(lo, bound, out=lo))[0]
            if len(idx) * EXACT_FRACTION > k:
                idx = np.arange(lim)
                d = np.array(distance_profiles(q, Tn[:lim + m - 1], normalize=self._normalize,
                                               p=self._p, device=self._device,
                                               precision=self._precision, progress=False),
                             np.float64)
            else:
                W = Tn[idx[:, None] + np.arange(m)]
                d = exact_distances(W, zq, qbad, qconst, self._normalize, q)
            upd = d < P[idx]
            P[idx[upd]] = d[upd]
            I[idx[upd]] = k + self._a
        self._T, self._P, self._I = Tn, P, I
        self._a += 1
        if hs.steps >= REFRESH:
            hs.refresh(Tn)

    def _advance(self, t):
        """Append the points ``t`` (at most the series' length) as one after the other."""
        m, ez, b = self._m, self._ez, len(t)
        ext = np.concatenate([self._T, t])
        k = len(self._T) - m + 1                 # windows (the same before and after)
        # the windows that stay are ext's b .. k + b - 1; the new ones k .. k + b - 1; new
        # window q sees window c when c <= q - ez (stumpy's zone for the newest window)
        P = np.concatenate([self._P, np.full(b, np.inf)])[b:]
        I = np.concatenate([self._I, np.arange(k, k + b) + self._a])[b:]
        best = np.full(k, np.inf)
        first = np.full(k, -1, np.int64)         # row (new window - k) of the best
        far_end = k - ez                          # windows b .. far_end: every new one sees them
        kw = dict(normalize=self._normalize, p=self._p, device=self._device,
                  precision=self._precision)
        near0 = b
        if (b >= JOIN_MIN and (self._normalize or self._p == 2.0)):
            jkw = dict(normalize=self._normalize, device=self._device,
                       precision=self._precision, progress=False)
            if far_end - b + 1 >= JOIN_MIN and _conditioned(ext[b:], m):
                # windows b .. far_end: every new window sees them, an AB-join
                r = matrix_profile(ext[k:], m, ext[b:far_end + m], both=True, **jkw)
                nf = far_end - b + 1
                best[:nf] = np.asarray(r.P_B)[:, 0]
                first[:nf] = np.asarray(r.I_B)[:, 0]
                near0 = far_end + 1
            if near0 > far_end:
                # the rest: every window at least ez after one of them is new, so the right
                # profile of their self-join with the zone ez - 1 is what the new ones give
                r = matrix_profile(ext[near0:], m, exclusion_zone=ez - 1, **jkw)
                nr = np.asarray(r.right_I)
                best[near0 - b:] = np.asarray(r.right_P)
                first[near0 - b:] = np.where(nr >= 0, nr + near0 - k, -1)
                near0 = k + b
        cols = np.arange(near0, k + b)            # ext window indices still to do
        if len(cols):
            Wn = _windows(ext, m)[k:]
            rows_per = max(1, BLOCK_ENTRIES // len(cols))
            Tc = ext[cols[0]:cols[-1] + m]
            for r0 in range(0, b, rows_per):
                rows = np.arange(r0, min(b, r0 + rows_per))
                D = np.array(distance_profiles(Wn[rows], Tc, progress=False, **kw),
                             np.float64, ndmin=2)
                D[cols[None, :] > (k + rows)[:, None] - ez] = np.inf
                j = np.argmin(D, axis=0)
                d = D[j, np.arange(len(cols))]
                take = d < best[cols - b]
                best[cols[take] - b] = d[take]
                first[cols[take] - b] = rows[j[take]]
        upd = best < P
        P[upd] = best[upd]
        I[upd] = k + first[upd] + self._a
        self._T, self._P, self._I = ext[b:], P, I
        self._a += b

    @property
    def cac_1d_(self):
        """The corrected arc curve of the right index (-1 before the first update)."""
        self._flush()
        return np.full(len(self._P), -1.0) if self._cac is None else self._cac.copy()

    def _read(name, doc):
        def get(self):
            self._flush()
            return getattr(self, name).copy()
        return property(get, doc=doc)

    P_ = _read("_P", "Each window's distance to its right nearest neighbour (inf: none yet).")
    T_ = _read("_T", "The current series.")
    del _read

    @property
    def I_(self):
        """Each window's right nearest neighbour, counting every point appended since the
        start (-1: none yet)."""
        self._flush()
        return np.where(np.isinf(self._P), -1, self._I)

    def __repr__(self):
        self._flush()
        return f"<clts.floss m={self._m} n={len(self._T)} appended={self._a}>"


floss = Floss
