"""How far each solved system can be trusted: its normwise backward error and the growth of
its LU factors, one host-side formula whatever version solved it (Thomas, coalesced, unrolled,
PCR and flat report the same diagnostic).

- The backward error of a computed ``x`` (Rigal and Gaches) is the smallest relative change of
  the matrix and right-hand side for which ``x`` is the exact solution::

      eta = ||A x - d||_inf / (||A||_inf ||x||_inf + ||d||_inf)

- The pivot growth is ``|| |L| |U| ||_inf / ||A||_inf`` of the LU factors without pivoting
  that the Thomas algorithm computes (pivots ``p_i = b_i - a_i c_(i-1) / p_(i-1)``): the
  backward error of any elimination without pivoting is bounded by a small multiple of
  ``eps`` times it (Higham, "Accuracy and Stability of Numerical Algorithms", ch. 9). It is at
  most 3 for a diagonally dominant system; a tiny pivot makes it huge, the sign of a system
  close to one no version can solve without pivoting.

None of the versions pivots. On all-ones rows with one diagonal 1 + 1e-15, Thomas and flat
return an ``x`` several per cent off with no zero pivot and PCR divides by zero; both numbers
say so, whatever version ran. A system counts as *unreliable* when ``max(eta, eps * growth)``
exceeds ``sqrt(eps)`` of the working precision (half its digits may be lost) or is not finite.
"""
from __future__ import annotations

import numpy as np

def threshold(dtype) -> float:
    """The bound on the backward error above which a system of ``dtype`` is unreliable:
    ``sqrt(eps)`` (1.5e-8 in float64, 3.5e-4 in float32)."""
    return float(np.sqrt(np.finfo(dtype).eps))


def unreliable(eta, growth, dtype) -> np.ndarray:
    """Which systems are unreliable, from :func:`assess`'s numbers (a NaN ``eta``, unknown
    after an in-place solve, leaves the pivot growth to judge)."""
    bound = np.fmax(eta, float(np.finfo(dtype).eps) * growth)
    return ~(bound <= threshold(dtype))


def _parts(a, b, c, d, x, start):
    """Sub-, main and super-diagonal, right-hand side and solution [systems, n] in float64,
    zero outside each system's rows (before ``start``, or all of a land system)."""
    a, b, c, d, x = (np.asarray(v, dtype=np.float64) for v in (a, b, c, d, x))
    nsys, n = b.shape
    low = np.array(a)                    # copies: a[..., 0] and c[..., -1] are ignored
    up = np.array(c)
    low[:, 0] = 0.0
    up[:, -1] = 0.0
    if start is None:
        return [low, b, up, d, x, np.ones((nsys, n), bool)]
    first = np.asarray(start, np.int64).reshape(nsys, 1)
    rows = (np.arange(n)[None, :] >= first) & (first >= 0) & (first < n)
    low[np.arange(n)[None, :] <= first] = 0.0       # the first row of a system has no a
    return [np.where(rows, v, 0.0) for v in (low, b, up, d, x)] + [rows]


def assess(a, b, c, d, x, start=None):
    """Backward error and pivot growth of each system: ``a``..``x`` are [systems, n] (natural
    layout), ``start`` (optional, per system) the first row of each. Two float64 arrays over
    the systems; ``inf`` where ``x`` is not finite or a pivot is zero."""
    nsys, n = np.shape(b)
    if nsys == 0 or n == 0:
        return np.zeros(nsys), np.zeros(nsys)
    low, diag, up, rhs, x, rows = _parts(a, b, c, d, x, start)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        norm_a = (np.abs(low) + np.abs(diag) + np.abs(up)).max(axis=1)
        r = diag * x - rhs
        r[:, 1:] += low[:, 1:] * x[:, :-1]
        r[:, :-1] += up[:, :-1] * x[:, 1:]
        den = norm_a * np.abs(x).max(axis=1) + np.abs(rhs).max(axis=1)
        num = np.abs(r).max(axis=1)
        eta = np.where(den > 0, num / np.where(den > 0, den, 1.0),
                       np.where(num > 0, np.inf, 0.0))
        # |L||U| row by row: |a_i| + |a_i c_(i-1) / p_(i-1)| + |p_i| + |c_i|
        # rows one after the other: row-major [n, systems] copies keep each step contiguous;
        # outside a system its row reads a = c = 0, b = 1 (a neutral pivot)
        lo_t, up_t = np.ascontiguousarray(low.T), np.ascontiguousarray(up.T)
        di_t = np.ascontiguousarray((diag if rows.all() else np.where(rows, diag, 1.0)).T)
        m = np.zeros((n, nsys))                 # multipliers a_i c_(i-1) / p_(i-1)
        p = np.empty((n, nsys))                 # pivots
        p[0] = di_t[0]
        prod = lo_t[1:] * up_t[:-1]            # a_i c_(i-1); 0 ends the chain, whatever p
        for i in range(1, n):
            np.divide(prod[i - 1], p[i - 1], out=m[i], where=prod[i - 1] != 0)
            np.subtract(di_t[i], m[i], out=p[i])
        grow = (np.abs(lo_t) + np.abs(m) + np.abs(p) + np.abs(up_t)).max(axis=0)
        grow[(p == 0).any(axis=0) | np.isnan(grow)] = np.inf
        growth = np.where(norm_a > 0, grow / np.where(norm_a > 0, norm_a, 1.0), 0.0)
    bad = ~np.isfinite(x).all(axis=1) | ~np.isfinite(eta)
    eta[bad] = np.inf
    growth[~np.isfinite(growth)] = np.inf
    return eta, growth
