"""Plain numpy float64 reference for batched tridiagonal systems (slow and obvious).

Row i of each system: ``a[i]*x[i-1] + b[i]*x[i] + c[i]*x[i+1] = d[i]``; ``a[0]`` and
``c[n-1]`` are ignored. Arrays are ``[batch, n]`` (system axis last).
"""
from __future__ import annotations

import numpy as np


def solve_reference(a, b, c, d, start=None):
    """Thomas algorithm in float64, one system at a time.

    ``start`` (per system, optional): rows below it come back 0 and the system is solved from
    row ``start``; a start outside ``0..n-1`` gives all zeros. A zero pivot gives NaN for the
    system. Returns ``(x, bad)`` with ``bad`` a boolean per system.
    """
    a, b, c, d = (np.asarray(v, dtype=np.float64) for v in (a, b, c, d))
    shape = b.shape
    n = shape[-1]
    a, b, c, d = (v.reshape(-1, n) for v in (a, b, c, d))
    nsys = b.shape[0]
    x = np.zeros((nsys, n))
    bad = np.zeros(nsys, dtype=bool)
    starts = np.zeros(nsys, dtype=np.int64) if start is None else \
        np.asarray(start).reshape(-1).astype(np.int64)
    for s in range(nsys):
        lo = int(starts[s])
        if lo < 0 or lo >= n:
            continue
        cp = np.zeros(n)
        dp = np.zeros(n)
        for i in range(lo, n):
            ai = a[s, i] if i > lo else 0.0
            den = b[s, i] - (ai * cp[i - 1] if i > lo else 0.0)
            if den == 0.0:
                bad[s] = True
                break
            cp[i] = (c[s, i] / den) if i < n - 1 else 0.0
            dp[i] = (d[s, i] - (ai * dp[i - 1] if i > lo else 0.0)) / den
        if bad[s]:
            x[s] = np.nan
            continue
        x[s, n - 1] = dp[n - 1]
        for i in range(n - 2, lo - 1, -1):
            x[s, i] = dp[i] - cp[i] * x[s, i + 1]
    return x.reshape(shape), bad.reshape(shape[:-1])


def thomas_numpy(a, b, c, d):
    """Thomas vectorised over the batch with numpy, on ``[batch, n]`` arrays (the benchmark's
    numpy anchor, natural layout); see :func:`thomas_numpy_interleaved` for ``[n, batch]``."""
    x = thomas_numpy_interleaved(np.ascontiguousarray(a.T), np.ascontiguousarray(b.T),
                                 np.ascontiguousarray(c.T), np.ascontiguousarray(d.T))
    return np.ascontiguousarray(x.T)


def thomas_numpy_interleaved(a, b, c, d):
    """Thomas vectorised over the batch with numpy on ``[n, batch]`` arrays."""
    n = b.shape[0]
    cp = np.empty_like(b)
    dp = np.empty_like(b)
    cp[0] = c[0] / b[0]
    dp[0] = d[0] / b[0]
    for i in range(1, n):
        den = b[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / den
        dp[i] = (d[i] - a[i] * dp[i - 1]) / den
    x = np.empty_like(b)
    x[n - 1] = dp[n - 1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return x
