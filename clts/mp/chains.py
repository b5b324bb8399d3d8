"""Time-series chains from the left / right matrix-profile indices (Zhu et al., "Matrix Profile
VII: Time Series Chains: A New Primitive for Time Series Data Mining", ICDM 2017): window j
follows window i in a chain when i's right nearest neighbour is j and j's left nearest
neighbour is i. ``atsc`` follows one chain from an anchor, ``allc`` finds every chain and the
longest. Host work on two index arrays, vectorised: the links in one pass, every window's
chain head and depth by pointer doubling (log2 of the longest chain passes), the chains by
one sort. Conventions are stumpy's; see docs/matrix-profile.md, "Time-series chains"."""
from __future__ import annotations

import numpy as np

from .motifs import _host
from ..vocabulary import renamed


def _indices(I, name):
    a = np.asarray(_host(I))
    if a.dtype == object:                # stumpy's mp[:, 2] / mp[:, 3]
        a = a.astype(np.int64)
    if a.ndim != 1 or a.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be a 1-D array of indices, got shape {a.shape}, "
                         f"dtype {a.dtype}")
    if a.dtype.kind == "f":
        if not np.all(np.isfinite(a)) or np.any(a != np.floor(a)):
            raise ValueError(f"{name} must hold whole indices")
    return a.astype(np.int64)


def _left_right(I):
    """(left_I, right_I) from a self-join result or a pair of arrays, checked: -1 or a window
    before (left) / after (right) each one."""
    if hasattr(I, "left_I") and hasattr(I, "self_join"):
        if not I.self_join or I.left_I is None:
            raise ValueError("I: chains need the left / right indices of a self-join")
        IL, IR = I.left_I, I.right_I
    else:
        try:
            IL, IR = I
        except (TypeError, ValueError):
            raise TypeError("I must be a self-join MatrixProfileResult or a pair "
                            "(left_I, right_I)") from None
    IL, IR = _indices(IL, "left_I"), _indices(IR, "right_I")
    if IL.shape != IR.shape:
        raise ValueError(f"left_I and right_I must have the same length, got {len(IL)} and "
                         f"{len(IR)}")
    pos = np.arange(len(IL))
    if np.any((IL != -1) & ((IL < 0) | (IL >= pos))):
        raise ValueError("left_I must hold -1 or an index before each window")
    if np.any((IR != -1) & ((IR <= pos) | (IR >= len(IR)))):
        raise ValueError("right_I must hold -1 or an index after each window, below its "
                         "length")
    return IL, IR


def _links(IL, IR):
    """The successor of each window in its chain (-1: the chain ends there)."""
    pos = np.arange(len(IL))
    ok = IR >= 0
    ok[ok] = IL[IR[ok]] == pos[ok]
    return np.where(ok, IR, -1)


def _heads(succ):
    """Each window's chain head and its depth in the chain (0 at the head): the predecessor
    array doubled until every pointer reaches a head."""
    n = len(succ)
    pos = np.arange(n)
    pred = np.full(n, -1, np.int64)
    has = succ >= 0
    pred[succ[has]] = pos[has]
    root = np.where(pred >= 0, pred, pos)
    depth = (pred >= 0).astype(np.int64)
    while True:
        nxt = root[root]
        if np.array_equal(nxt, root):
            return root, depth
        depth += depth[root]
        root = nxt


@renamed()
def atsc(I, j):
    """The anchored time-series chain from window ``j``: j, then each right nearest neighbour
    whose left nearest neighbour is the one before it.

    Parameters
    ----------
    I : MatrixProfileResult or (left_I, right_I)
        A self-join's result (:func:`clts.matrix_profile`), or its left and right
        nearest-neighbour indices (-1: none). Any normalisation: only the indices are read.
    j : int
        The anchor window (negative counts from the end, as numpy).

    Returns
    -------
    numpy.ndarray, int64
        The chain's windows in time order, starting with ``j``.

    Examples
    --------
    >>> import numpy as np, clts
    >>> r = clts.matrix_profile(np.array([584., -11., 23., 79., 1001., 0., -19.]), 3)
    >>> clts.atsc(r, 1)
    array([1, 3])
    """
    IL, IR = _left_right(I)
    n = len(IL)
    if isinstance(j, bool) or not isinstance(j, (int, np.integer)) or not -n <= j < n:
        raise ValueError(f"j must be an int index into the {n} windows, got {j!r}")
    succ = _links(IL, IR)
    out = [int(j) % n]
    while succ[out[-1]] >= 0:            # a chain only moves right: at most n steps
        out.append(int(succ[out[-1]]))
    return np.array(out, dtype=np.int64)


@renamed()
def allc(I):
    """The all-chain set and the longest (unanchored) chain.

    Parameters
    ----------
    I : MatrixProfileResult or (left_I, right_I)
        As :func:`atsc`.

    Returns
    -------
    S : list of numpy.ndarray (int64)
        Every chain (windows in time order; a window in no longer chain is a chain of one),
        ordered by first window. Every window is in exactly one.
    C : numpy.ndarray, int64
        The longest chain (the first one, by first window, among equally long ones).

    Notes
    -----
    stumpy.allc returns the same chains and the same ``C``, its ``S`` in the order of a Python
    set (``clts.compat.stumpy.allc`` keeps that order).

    Examples
    --------
    >>> import numpy as np, clts
    >>> r = clts.matrix_profile(np.array([584., -11., 23., 79., 1001., 0., -19.]), 3)
    >>> S, C = clts.allc(r)
    >>> [s.tolist() for s in S], C
    ([[0, 4], [1, 3], [2]], array([0, 4]))
    """
    S, C, _ = _all_chains(*_left_right(I))
    return S, C


def _all_chains(IL, IR):
    """(chains by first window, the longest, the first windows)."""
    n = len(IL)
    if n == 0:
        return [], np.zeros(0, np.int64), np.zeros(0, np.int64)
    root, depth = _heads(_links(IL, IR))
    order = np.lexsort((depth, root)).astype(np.int64)    # grouped by head, in chain order
    starts = np.flatnonzero(depth[order] == 0)
    ends = np.append(starts[1:], n)
    # slices of one array (np.split costs 3x more for the ~n chains of one window each)
    S = [order[a:b] for a, b in zip(starts.tolist(), ends.tolist())]
    C = S[int(np.argmax(ends - starts))].copy()
    return S, C, order[starts]
