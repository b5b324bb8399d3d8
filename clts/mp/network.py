"""Sorting networks for the multidimensional matrix profile's kernels (templates/mp/mdiag.cl.mako,
templates/mp/aamp.cl.mako): fixed compare-exchange pairs, so that a kernel sorts its
per-dimension distances in registers (a loop whose positions depend on the data keeps its array
on the stack of every GPU back end)."""
from __future__ import annotations


def batcher(n: int) -> list:
    """The comparators (a, b), a < b, of Batcher's odd-even merge sort of ``n`` values: on the
    next power of two, with those that touch an index >= n dropped (those slots would hold
    +inf / -inf, never exchanged). After min / max at every pair in order, ascending."""
    p2 = 1
    while p2 < n:
        p2 *= 2
    out = []
    p = 1
    while p < p2:
        k = p
        while k >= 1:
            for j in range(k % p, p2 - k, 2 * k):
                for i in range(min(k, p2 - j - k)):
                    a, b = i + j, i + j + k
                    if a // (2 * p) == b // (2 * p) and b < n:
                        out.append((a, b))
            k //= 2
        p *= 2
    return out
