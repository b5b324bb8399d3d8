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
EPS = np.finfo(np.float64).eps


def zexact(X):
    """The z-normalised windows ``X`` [k, m] with the kernel's arithmetic (largest |x|
    scaling, corrected two-pass centring) and their flags: (Z, bad, const)."""
    X = np.asarray(X, np.float64)
    m = X.shape[1]
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        mx = np.max(np.abs(X), axis=1)
        bad = ~np.isfinite(X.sum(axis=1)) | np.isinf(mx)
        inv = np.where(mx > 0, 1.0 / np.where(mx > 0, mx, 1.0), 1.0)
        mu = X.sum(axis=1) / m
        xc = X - mu[:, None]
        dv = xc * inv[:, None]
        c = dv.sum(axis=1)
        q = np.einsum("ij,ij->i", dv, dv)
        cm = c / m
        ss = q - c * cm
        isd = np.sqrt(m / np.where(ss > 0, ss, 1.0))
        f, g = inv * isd, -cm * isd
        Z = xc * f[:, None] + g[:, None]
        const = np.all(X == X[:, :1], axis=1) | ~(ss > 0)
    return Z, bad, const & ~bad


def exact_distances(W, q, zq, qbad, qconst, normalize):
    """Exact distances of the windows ``W`` [k, m] to the window ``q`` (z-normalised ``zq``,
    its flags), as the kernel computes them."""
    m = W.shape[1]
    if qbad:
        return np.full(len(W), np.inf)
    if not normalize:
        d = np.sqrt(np.einsum("ij,ij->i", W - q, W - q))
        return np.where(np.isnan(d), np.inf, d)
    Z, bad, const = zexact(W)
    with np.errstate(invalid="ignore"):
        D = Z - zq
        d = np.sqrt(np.einsum("ij,ij->i", D, D))
    d = np.where(const, 0.0 if qconst else math.sqrt(m), d)
    if qconst:
        d = np.where(const, d, math.sqrt(m))
    return np.where(bad, np.inf, d)


def window_stats(T, m, c):
    """Per window of ``T``: mean less ``c`` and standard deviation (for the filter), 1 / std
    (0 for constant windows) and the flags (bad, const, as the kernel's)."""
    W = np.lib.stride_tricks.sliding_window_view(T, m)
    l = len(W)
    mu, sd = np.empty(l), np.empty(l)
    bad, const = np.empty(l, bool), np.empty(l, bool)
    for a in range(0, l, STAT_ROWS):
        X = W[a:a + STAT_ROWS]
        _, bad[a:a + len(X)], const[a:a + len(X)] = zexact(X)
        with np.errstate(invalid="ignore", over="ignore"):
            u = X.mean(axis=1)
            mu[a:a + len(X)] = u - c
            sd[a:a + len(X)] = np.sqrt(np.mean((X - u[:, None]) ** 2, axis=1))
    return mu, sd, bad, const


class HostStream:
    """The state of the host path for one series: the centred series, the dot products of
    the last window with every window, per-window statistics. Arrays are aligned with the
    current series' windows; ``a`` is the caller's index offset."""

    def __init__(self, T, m, ez, normalize):
        self.m, self.ez, self.normalize = m, ez, normalize
        self._set(np.asarray(T, np.float64))

    def _set(self, T):
        fin = np.isfinite(T)
        self.c = float(np.mean(T[fin])) if fin.any() else 0.0
        self.mu, self.sd, self.bad, self.const = window_stats(T, self.m, self.c)
        ok = (self.sd > 0) & ~self.const
        self.isd = np.where(ok, 1.0 / np.where(ok, self.sd, 1.0), 0.0)
        self.Tc = np.where(fin, T - self.c, 0.0)
        if not self.normalize:                       # sums of squares of the centred windows
            W = np.lib.stride_tricks.sliding_window_view(self.Tc, self.m)
            self.ss = np.concatenate([np.einsum("ij,ij->i", W[a:a + STAT_ROWS],
                                                W[a:a + STAT_ROWS])
                                      for a in range(0, len(W), STAT_ROWS)])
        self._refresh(T)

    def _refresh(self, T):
        """Exact dot products again (z-normalised: about the current mean)."""
        fin = np.isfinite(T)
        if self.normalize and fin.any():
            c = float(np.mean(T[fin]))
            self.mu += self.c - c
            self.c = c
            self.Tc = np.where(fin, T - c, 0.0)
        self.amax = float(np.max(np.abs(self.Tc), initial=0.0))
        self.QT = np.correlate(self.Tc, self.Tc[-self.m:], "valid")
        self.steps = 0

    def usable(self):
        return self.amax * max(1.0, abs(self.c)) < HOST_LIMIT

    def append(self, T_new, x, egress):
        """Advance the state to the series ``T_new`` (the old one plus ``x``, less its first
        point with ``egress``). Returns the new window's (q, d2 filter, delta, flags)."""
        m = self.m
        xc = x - self.c if math.isfinite(x) else 0.0
        Tc = self.Tc
        l = len(Tc) - m + 1
        # QT_new[j] = QT[j - 1] - Tc[j - 1] Tc[l - 1] + Tc[j + m - 1] x (old window numbering)
        mid = self.QT[:l - 1] - Tc[:l - 1] * Tc[l - 1] + Tc[m:] * xc
        Tc = np.append(Tc, xc)
        self.amax = max(self.amax, abs(xc))
        qc = Tc[-m:]
        q = T_new[-m:]
        zq, qb, qk = zexact(q[None, :])
        qbad, qconst = bool(qb[0]), bool(qk[0])
        with np.errstate(invalid="ignore", over="ignore"):
            u = q.mean()
            qmu, qsd = u - self.c, float(np.sqrt(np.mean((q - u) ** 2)))
        qq = float(qc @ qc)
        if egress:
            Tc = Tc[1:]
            self.QT = np.append(mid, qq)
            sl = slice(1, None)
        else:
            self.QT = np.concatenate([[Tc[:m] @ qc], mid, [qq]])
            sl = slice(None)
        self.Tc = Tc
        self.mu = np.append(self.mu[sl], qmu)
        self.sd = np.append(self.sd[sl], qsd)
        self.isd = np.append(self.isd[sl], 1.0 / qsd if qsd > 0 and not qconst else 0.0)
        self.bad = np.append(self.bad[sl], qbad)
        self.const = np.append(self.const[sl], qconst)
        if not self.normalize:
            self.ss = np.append(self.ss[sl], qq)
        self.steps += 1
        if self.steps >= REFRESH:
            self._refresh(T_new)
        return q, zq[0], qbad, qconst

    def filter(self):
        """The filter's squared distances of the last window to every window and their error
        bounds (inf where the filter cannot tell: constant windows, a constant new window)."""
        m = self.m
        QT, mu, isd = self.QT, self.mu, self.isd
        amax2 = self.amax * self.amax
        # the recurrence's drift plus the rounding of the sums and of the means' product
        k = 8.0 * EPS * (2 * m + 3 * REFRESH + 8) * m
        if self.normalize:
            iq = isd[-1]
            d2 = 2.0 * m - (2.0 * iq) * (QT - m * mu[-1] * mu) * isd
            delta = (2.0 * k * iq) * (amax2 + np.abs(mu[-1] * mu)) * isd \
                + 64.0 * EPS * m * (m + 1)
            undecided = self.const | (isd == 0) | (iq == 0)
        else:
            d2 = self.ss[-1] + self.ss - 2.0 * QT
            delta = np.full(len(QT), 2.0 * k * amax2 + 64.0 * EPS * m * amax2)
            undecided = np.zeros(len(QT), bool)
        if self.normalize and self.const[-1]:      # a constant new window: known exactly
            d2 = np.where(self.const, 0.0, float(m))
            delta, undecided = np.zeros(len(QT)), np.zeros(len(QT), bool)
        np.maximum(d2, 0.0, out=d2)
        with np.errstate(invalid="ignore"):
            undecided |= ~(np.isfinite(d2) & np.isfinite(delta))
        return d2, delta, undecided
