"""The near columns of a ``clts.stumpi`` device block (stream.py) on the host: the new windows
against the windows inside some new window's exclusion zone, and with egress against the
windows that leave during the block (a triangle). An AB-join cannot mask those, and distance
profiles cost O(b^2 m) on the device (as much as the far AB-join at b = 256, more beyond);
here one matrix product (z-normalised windows, or plain windows less an offset) gives every
squared distance with an error bound, and only the entries that bound leaves in play get the
exact distance (``stream_host.exact_distances``' arithmetic): those that could be the minimum
of their row, of their row's left part, or beat their column's current neighbour. Every other
entry is returned as inf, which changes no decision of the caller, so the result is exact.

Float64, z-normalised or plain Euclidean; the caller keeps distance profiles for magnitudes
beyond ``stream_host.HOST_LIMIT``, other ``p`` and single precision."""
from __future__ import annotations

import threading

import numpy as np

from .stream_host import EPS, HOST_LIMIT, zexact

#: slack of the bound: the matrix product's and the exact sum's rounding are each within
#: (m + 2) eps (|x|^2 + |y|^2); the bound takes 8 (m + 4) eps of it
SLACK = 8.0


#: exact distances per pass (bounds the temporaries of a block with many candidates)
CHUNK = 1 << 15


#: multiply-adds per matrix product call: OpenBLAS runs products below 4 * 65536 on one
#: thread; two threads on a loaded 2-core machine cost 10x (46 against 3 ms at b = 256)
PRODUCT_OPS = 1 << 18


def _product(X, Y):
    """X @ Y.T in row slices small enough for one BLAS thread."""
    n, C = len(X), len(Y)
    step = max(1, PRODUCT_OPS // max(1, C * X.shape[1]) - 1)
    if step >= n:
        return X @ Y.T
    out = np.empty((n, C))
    Yt = np.ascontiguousarray(Y.T)
    for a in range(0, n, step):
        np.matmul(X[a:a + step], Yt, out=out[a:a + step])
    return out


class Worker(threading.Thread):
    """``fn(*args)`` in a thread; :meth:`result` waits for it and returns its value or raises
    its exception."""

    def __init__(self, fn, *args):
        super().__init__(daemon=True)
        self._fn, self._args, self._out, self._exc = fn, args, None, None
        self.start()

    def run(self):
        try:
            self._out = self._fn(*self._args)
        except BaseException as exc:            # noqa: BLE001 - raised in result()
            self._exc = exc

    def result(self):
        self.join()
        if self._exc is not None:
            raise self._exc
        return self._out


def usable(ext, normalize):
    """Whether ``ext``'s finite values suit squared sums (the host path's rule: neither
    overflow nor, for plain distances, underflow); else the caller takes distance profiles."""
    r = float(np.max(np.abs(ext), where=np.isfinite(ext), initial=0.0))
    return r == 0.0 or (r * max(1.0, r) < HOST_LIMIT and (normalize or r > 1 / HOST_LIMIT))


def near_block(ext, m, cols, nrows, mask, limit, normalize, k=1):
    """Distances of the last ``nrows`` windows of ``cols`` (the new ones, in order) to the
    windows ``cols`` (C, increasing; the others first) of ``ext``: exact (as
    ``stream_host.exact_distances``) where an entry could be among the row's ``k`` smallest,
    the row's minimum over the windows before it, or (old columns) among the column's ``k``
    smallest below ``limit`` (the column's current k-th neighbour distance; inf for none);
    inf elsewhere and where ``mask`` (b x C, True: not a pair) is set. Returns a (b, C)
    float64 array."""
    b, C = nrows, len(cols)
    nold = C - b
    W = np.lib.stride_tricks.sliding_window_view(ext, m)[cols]
    if normalize:
        Z, bad, const, _, _ = zexact(W)
    else:
        bad = ~np.all(np.isfinite(W), axis=1)
        fin = np.isfinite(ext)
        off = float(np.mean(ext[fin])) if fin.any() else 0.0
        Z = np.where(bad[:, None], 0.0, W - off)
        const = np.zeros(C, bool)
    nrm = np.einsum("ij,ij->i", Z, Z)
    A = _product(Z[nold:], Z)
    A *= -2.0
    A += nrm
    A += nrm[nold:, None]
    # one bound for all entries: s (|x|^2 + |y|^2) <= 2 s max |x|^2
    top = float(np.max(nrm, where=~bad, initial=0.0))
    e = 2.0 * SLACK * (m + 4) * EPS * top
    if not normalize:            # the offset's rounding: (x - c) - (y - c) against x - y
        a = float(np.max(np.abs(Z), where=~bad[:, None], initial=0.0)) + abs(off)
        e += 4.0 * SLACK * m * EPS * a * a
    known = None
    if normalize and const.any():   # constant windows: 0 to each other, sqrt(m) to the rest
        kr, kc = const[nold:, None], const[None, :]
        known = kr | kc
        A[known] = np.where(kr & kc, 0.0, float(m))[known]
    out = mask | bad[nold:, None] | bad[None, :] if bad.any() else mask
    np.putmask(A, out, np.inf)

    def thr(x):                     # a threshold of lower bounds; all where x is inf
        return np.where(np.isfinite(x), x + 2.0 * e, np.inf)

    def kth(X, axis):               # the k-th smallest along axis (inf: fewer than k)
        if X.shape[axis] < k:
            return np.full(X.shape[1 - axis], np.inf)
        if k == 1:
            return np.min(X, axis=axis)
        return np.partition(X, k - 1, axis=axis).take(k - 1, axis=axis)
    fin = np.isfinite(A)
    cand = fin & (A <= thr(kth(A, 1))[:, None])
    tri = np.tri(b, k=-1, dtype=bool)            # new columns before the row
    left = np.minimum(np.min(A[:, :nold], axis=1, initial=np.inf),
                      np.min(np.where(tri, A[:, nold:], np.inf), axis=1))
    lt = thr(left)[:, None]
    cand[:, :nold] |= A[:, :nold] <= lt
    cand[:, nold:] |= tri & (A[:, nold:] <= lt)
    lim = np.asarray(limit, np.float64)[:nold]
    col = np.minimum(thr(kth(A[:, :nold], 0)),
                     np.where(np.isfinite(lim), lim * lim * (1.0 + 1e-9) + e, np.inf))
    cand[:, :nold] |= A[:, :nold] <= col
    cand &= fin
    D = np.full((b, C), np.inf)
    if known is not None:               # known exactly
        kc = cand & known
        D[kc] = np.sqrt(A[kc])
        cand &= ~known
    r, c = np.nonzero(cand)
    V = Z if normalize else W
    for a in range(0, len(r), CHUNK):
        rr, cc = r[a:a + CHUNK], c[a:a + CHUNK]
        X = V[cc] - V[nold + rr]
        D[rr, cc] = np.sqrt(np.einsum("ij,ij->i", X, X))
    return D
