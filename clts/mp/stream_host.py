"""The host path of ``clts.stumpi`` for single appended points: stumpy.stumpi's O(n) update
(the new window's dot products with every window by the sliding recurrence, one distance
profile from them) as a filter, and the kernel's exact O(m) distance (``mass.cl.mako``'s
arithmetic in numpy) for the few windows the filter cannot decide. The distances stay exact
and the recurrence's drift never changes a result:

- the approximate squared distance of window j carries an error bound ``delta_j`` (the
  recurrence's steps since the last exact refresh, the cancellation of the means, the
  window's and the new window's standard deviations); a window is re-evaluated exactly when
  its bound straddles the decision (beats its neighbour, or ties the new window's best);
- the dot products are of the series less an offset ``c`` (the mean at the last refresh, so
  a series far from 0 keeps its bound small) and recomputed directly every ``REFRESH`` points;
- constant windows (and a constant new window) take the exact conventions (0 between two
  constant windows, sqrt(m) to any other); windows with NaN / inf are never neighbours.

When the filter leaves more than ``1 / EXACT_FRACTION`` of the windows undecided (a series
of near-constant windows), the caller's device path computes the whole row instead.
z-normalised distances, and plain Euclidean ones (``normalize=False, p=2``)."""
from __future__ import annotations

import math

import numpy as np

#: exact dot products (a direct correlation) every this many appended points
REFRESH = 64
#: the filter gives up (the device computes the row) beyond l / EXACT_FRACTION undecided
EXACT_FRACTION = 16
#: rows of windows per pass when the statistics of many windows are computed
STAT_ROWS = 4096
#: magnitudes beyond which the host path declines (the kernel rescales; the host does not)
HOST_LIMIT = 2.0 ** 120
#: windows whose 1 / std exceeds this are always re-evaluated (the filter would overflow)
ISD_LIMIT = 1e100
EPS = float(np.finfo(np.float64).eps)


class Ring:
    """An array that loses its first rows and gains last ones in O(1) amortised time (a
    buffer with room on both sides, moved or doubled when it runs out)."""

    __slots__ = ("buf", "lo", "hi")

    def __init__(self, a):
        self.set(a)

    def set(self, a):
        a = np.asarray(a)
        n = len(a)
        self.buf = np.empty((max(2 * n, 64),) + a.shape[1:], a.dtype)
        self.buf[:n] = a
        self.lo, self.hi = 0, n

    def view(self):
        return self.buf[self.lo:self.hi]

    def push(self, x, drop=0):
        """Drop the first ``drop`` values, append ``x``."""
        self.lo += drop
        if self.hi == len(self.buf):
            n = self.hi - self.lo
            if 2 * n > len(self.buf):
                buf = np.empty((2 * len(self.buf),) + self.buf.shape[1:], self.buf.dtype)
                buf[:n] = self.buf[self.lo:self.hi]
                self.buf = buf
            else:
                self.buf[:n] = self.buf[self.lo:self.hi]     # numpy copies overlaps safely
            self.lo, self.hi = 0, n
        self.buf[self.hi] = x
        self.hi += 1


def zexact(X):
    """The z-normalised windows ``X`` [k, m] with the kernel's arithmetic (largest |x|
    scaling, corrected two-pass centring), their flags and statistics:
    (Z, bad, const, mean, std); windows with NaN / inf are bad (their values meaningless)."""
    X = np.asarray(X, np.float64)
    bad = ~np.all(np.isfinite(X), axis=1)
    Z, const, mu, sd = _zfinite(np.where(bad[:, None], 0.0, X), stats=True)
    return Z, bad, const & ~bad, mu, sd


def zexact1(q):
    """:func:`zexact` of one window (1-D) by :func:`_zfinite` (so a window equal to it is at 0
    exactly): (z, bad, const, mean, std)."""
    if not float(np.max(np.abs(q))) < math.inf:            # NaN or inf
        return None, True, False, math.nan, math.nan
    Z, const, mu, sd = _zfinite(q[None, :], stats=True)
    return Z[0], False, bool(const[0]), float(mu[0]), float(sd[0])


def _zfinite(X, stats=False):
    """:func:`zexact`'s z-normalised windows and constant flags for windows without NaN /
    inf, in fewer numpy calls (and with ``stats`` their means and standard deviations)."""
    m = X.shape[1]
    mx = np.max(np.abs(X), axis=1)
    top = np.where(mx > 0, mx, 1.0)
    inv = 1.0 / top
    mu = X.sum(axis=1) / m
    xc = X - mu[:, None]
    dv = xc * inv[:, None]
    c = dv.sum(axis=1)
    cm = c / m
    ss = np.einsum("ij,ij->i", dv, dv) - c * cm
    isd = np.sqrt(m / np.where(ss > 0, ss, 1.0))
    xc *= (inv * isd)[:, None]
    xc -= (cm * isd)[:, None]
    const = ~(ss > 0) | np.all(X == X[:, :1], axis=1)
    if not stats:
        return xc, const
    return xc, const, mu + cm * top, np.sqrt(np.maximum(ss, 0.0) / m) * top


def exact_distances(W, zq, qbad, qconst, normalize, q=None):
    """Exact distances of the windows ``W`` [k, m] (without NaN / inf) to the new window
    (``q``; z-normalised ``zq``; its flags), as the kernel computes them."""
    m = W.shape[1]
    if qbad:
        return np.full(len(W), np.inf)
    if not normalize:
        D = W - q
        return np.sqrt(np.einsum("ij,ij->i", D, D))
    Z, const = _zfinite(W)
    Z -= zq
    d = np.sqrt(np.einsum("ij,ij->i", Z, Z))
    if qconst:
        return np.where(const, 0.0, math.sqrt(m))
    return np.where(const, math.sqrt(m), d)


class HostStream:
    """The state of the host path for one series, in rings aligned with the current series'
    windows: the series less an offset ``c`` (NaN / inf as 0), the dot products of the last
    window with every window, per-window mean less ``c``, 1 / std (0 where undecidable), the
    filter's bound factor (inf where undecidable), NaN for windows with NaN / inf."""

    def __init__(self, T, m, normalize):
        self.m, self.normalize = m, normalize
        T = np.asarray(T, np.float64)
        fin = np.isfinite(T)
        self.c = float(np.mean(T[fin])) if fin.any() else 0.0
        W = np.lib.stride_tricks.sliding_window_view(T, m)
        parts = [self._stats(*zexact(W[a:a + STAT_ROWS])[1:])
                 for a in range(0, len(W), STAT_ROWS)]
        self.mu, self.isd, self.isdb, self.nan = (Ring(np.concatenate(x)) for x in zip(*parts))
        self.Tc = Ring(np.where(fin, T - self.c, 0.0))
        if not normalize:                          # sums of squares of the centred windows
            Wc = np.lib.stride_tricks.sliding_window_view(self.Tc.view(), m)
            self.ss = Ring(np.concatenate([np.einsum("ij,ij->i", Wc[a:a + STAT_ROWS],
                                                     Wc[a:a + STAT_ROWS])
                                           for a in range(0, len(Wc), STAT_ROWS)]))
        self.refresh(T)

    def _stats1(self, bad, const, mu, sd):
        """:meth:`_stats` of one window, in scalars."""
        if bad:
            return 0.0, 0.0, 0.0, math.nan
        isd = 1.0 / sd if sd > 0 else math.inf
        und = const or not isd <= ISD_LIMIT
        return mu - self.c, 0.0 if und else isd, math.inf if und else isd, 0.0

    def _stats(self, bad, const, mu, sd):
        with np.errstate(divide="ignore", invalid="ignore"):
            isd = 1.0 / sd
        und = const | ~(isd <= ISD_LIMIT)
        return (mu - self.c, np.where(und | bad, 0.0, isd), np.where(und, np.inf, isd),
                np.where(bad, np.nan, 0.0))

    def refresh(self, T):
        """Exact dot products again (z-normalised: about the current mean)."""
        fin = np.isfinite(T)
        if self.normalize and fin.any():
            c = float(np.mean(T[fin]))
            self.mu.view()[:] += self.c - c
            self.c = c
            self.Tc.set(np.where(fin, T - c, 0.0))
        Tc = self.Tc.view()
        self.amax = float(np.max(np.abs(Tc), initial=0.0))
        self.rmax = float(np.max(np.abs(T), where=fin, initial=0.0))
        self.QT = Ring(np.correlate(Tc, Tc[-self.m:], "valid"))
        self.steps = 0

    def usable(self, x):
        """Whether the host path takes the point ``x``: magnitudes whose squares neither
        overflow nor (plain distances, which the kernel rescales) underflow."""
        r = max(self.rmax, abs(x) if math.isfinite(x) else 0.0)
        if r == 0.0:
            return True
        return r * max(1.0, self.amax) < HOST_LIMIT and (self.normalize or r > 1 / HOST_LIMIT)

    def append(self, q, x, egress):
        """Append the point ``x`` (``q``: the new last window). Returns the new window's
        z-normalised values and flags (zq, bad, const)."""
        m = self.m
        xc = x - self.c if math.isfinite(x) else 0.0
        Tc = self.Tc.view()
        l = len(Tc) - m + 1
        qc = np.append(Tc[l:], xc)
        qq = float(qc @ qc)
        # QT_new[j] = QT[j] - Tc[j] Tc[l - 1] + Tc[j + m] x, the windows numbered after egress
        tmp = np.multiply(Tc[:l - 1], Tc[l - 1])
        if egress:
            QT = self.QT.view()
            np.subtract(QT[:l - 1], tmp, out=QT[:l - 1])
            np.multiply(Tc[m:], xc, out=tmp)
            np.add(QT[:l - 1], tmp, out=QT[:l - 1])
            QT[l - 1] = qq
        else:
            QT = np.empty(l + 1)
            np.subtract(self.QT.view()[:l - 1], tmp, out=QT[1:l])
            np.multiply(Tc[m:], xc, out=tmp)
            np.add(QT[1:l], tmp, out=QT[1:l])
            QT[0], QT[l] = Tc[:m] @ qc, qq
            self.QT.set(QT)
        drop = int(egress)
        self.Tc.push(xc, drop)
        self.amax = max(self.amax, abs(xc))
        if math.isfinite(x):
            self.rmax = max(self.rmax, abs(x))
        zq, qb, qk, qmu, qsd = zexact1(q)
        for ring, v in zip((self.mu, self.isd, self.isdb, self.nan),
                           self._stats1(qb, qk, qmu, qsd)):
            ring.push(v, drop)
        if not self.normalize:
            self.ss.push(qq, drop)
        self.steps += 1
        return zq, qb, qk

    def bounds(self, lim):
        """For the windows 0 .. lim - 1 (outside the new window's exclusion zone): the
        filter's squared distance less and plus its error bound (NaN for windows with NaN /
        inf; -inf / inf where the filter cannot tell), and the absolute slack ``c0`` (both
        bounds hold within it)."""
        m = self.m
        QT = self.QT.view()[:lim]
        mu, nan = self.mu.view(), self.nan.view()
        amax2 = self.amax * self.amax
        # the recurrence's drift, the rounding of the sums and of the means' product
        k = 8.0 * EPS * (2 * m + 3 * REFRESH + 8) * m
        c0 = 64.0 * EPS * m * (m + 1)
        if self.normalize:
            iq, muq = self.isd.view()[-1], mu[-1]
            if self.isdb.view()[-1] == np.inf:      # a constant new window: known exactly
                d2 = np.where(self.isdb.view()[:lim] == np.inf, 0.0, float(m)) + nan[:lim]
                return d2, d2, c0
            d2 = mu[:lim] * (m * muq)
            np.subtract(QT, d2, out=d2)
            np.multiply(d2, self.isd.view()[:lim], out=d2)
            np.multiply(d2, -2.0 * iq, out=d2)
            np.add(d2, 2.0 * m, out=d2)
            np.add(d2, nan[:lim], out=d2)
            e = np.multiply(self.isdb.view()[:lim],
                            2.0 * k * iq * (amax2 + self.amax * abs(muq)))
        else:
            ss = self.ss.view()
            d2 = np.multiply(QT, -2.0)
            np.add(d2, ss[:lim], out=d2)
            np.add(d2, ss[-1] + 0.0, out=d2)
            np.add(d2, nan[:lim], out=d2)
            e = 2.0 * k * amax2
            c0 = c0 * max(amax2, 1.0)
        return d2 - e, np.add(d2, e, out=d2), c0
