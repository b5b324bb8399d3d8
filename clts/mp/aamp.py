"""``clts.aamp``: the non-normalised matrix profile under any Minkowski distance (stumpy.aamp's
``p``). p = 2 is ``matrix_profile(normalize=False)`` (the diagonal kernel, exact); any other
p >= 1 (and inf) is computed from exact distance profiles, blocks of rows of the distance
matrix on the device (``clts.mass``: many queries against one series), O(n_A n_B m) work,
with the k best of each row (and the left / right neighbours of a self-join) kept on the host.
See docs/matrix-profile.md, "Non-normalised distances: p"."""
from __future__ import annotations

import math
import time

import numpy as np

from .api import MatrixProfileResult, matrix_profile
from .mass import _check_p, distance_profiles
from .mass_plan import Problem, make_mass_plan
from ..vocabulary import renamed

#: rows of the distance matrix per launch
BLOCK_ROWS = 256


def _topk_rows(D, k):
    """The k smallest of each row, ascending, ties to the smaller index; inf / -1 padding."""
    l = D.shape[1]
    kk = min(k, l)
    part = np.argpartition(D, kk - 1, axis=1)[:, :kk] if kk < l else np.tile(np.arange(l),
                                                                            (len(D), 1))
    vals = np.take_along_axis(D, part, 1)
    order = np.lexsort((part, vals), axis=1)
    idx = np.take_along_axis(part, order, 1)
    vals = np.take_along_axis(vals, order, 1)
    # ties at the k-th value: argpartition may have taken a larger index; fix by a full sort
    # of the rows where the k-th value repeats beyond the cut
    if kk < l:
        kth = vals[:, -1:]
        rep = np.sum(D == kth, axis=1) > np.sum(vals == kth, axis=1)
        for r in np.nonzero(rep & np.isfinite(kth[:, 0]))[0]:
            o = np.lexsort((np.arange(l), D[r]))[:kk]
            idx[r], vals[r] = o, D[r, o]
    P = np.full((len(D), k), np.inf)
    I = np.full((len(D), k), -1, np.int64)
    fin = np.isfinite(vals)
    P[:, :kk] = np.where(fin, vals, np.inf)
    I[:, :kk] = np.where(fin, idx, -1)
    return P, I


@renamed()
def aamp(T_A, m, T_B=None, *, p=2.0, k=1, exclusion_zone=None, precision=None, device=None,
         progress=None, time_axis=None, **kwargs):
    """Non-normalised matrix profile under the Minkowski distance of order ``p``.

    Parameters
    ----------
    T_A : array_like, 1-D
    m : int
        Subsequence length (>= 3).
    T_B : array_like, 1-D, optional
        AB-join against T_B.
    p : float, optional
        Order of the distance, >= 1 or inf (default 2: ``matrix_profile(normalize=False)``).
    k : int, optional
        Neighbours per subsequence.
    exclusion_zone : int, optional
        Self-joins: default ceil(m / 4).
    precision : {"double", "single"}, optional
    device : optional
    progress : bool, optional
    time_axis : int, optional
        As :func:`clts.matrix_profile`: the axis of ``T_A`` / ``T_B`` that is time (default
        -1); the others must have length 1.
    **kwargs
        p = 2: passed to :func:`clts.matrix_profile`; other p: ``lanes``, ``chains``, ``wg``.

    Returns
    -------
    MatrixProfileResult
        ``P``, ``I`` [l, k]; self-joins also ``left_P`` / ``left_I`` / ``right_P`` /
        ``right_I`` (stumpy.aamp's columns); ``normalize`` False.

    Examples
    --------
    >>> import numpy as np, clts
    >>> T = np.cumsum(np.random.default_rng(0).standard_normal(400))
    >>> r = clts.aamp(T, 16, p=1)
    >>> j = int(r.I[10, 0])
    >>> bool(np.isclose(r.P[10, 0], np.abs(T[10:26] - T[j:j + 16]).sum()))
    True
    """
    p, _ = _check_p(p)
    if p == 2.0:
        return matrix_profile(T_A, m, T_B, k=k, exclusion_zone=exclusion_zone, normalize=False,
                              precision=precision, device=device,
                              progress=True if progress is None else progress,
                              time_axis=time_axis, **kwargs)
    from ..runtime.arrays import is_device_array
    if is_device_array(T_A) or is_device_array(T_B):
        if time_axis not in (None, 0, -1):
            raise ValueError(f"device arrays T_A / T_B are 1-D: time_axis must be 0 or -1, got "
                             f"{time_axis!r}")
        return _aamp_device(T_A, m, T_B, p, k, exclusion_zone, precision, device, kwargs)
    from .api import _one_series, _series, check_arguments
    name = getattr(T_A, "name", None)
    T_A, times = _one_series(T_A, "T_A", time_axis)     # labels as matrix_profile's (p = 2)
    T_B = _one_series(T_B, "T_B", time_axis)[0]
    A = _series(T_A, "T_A")
    B = _series(T_B, "T_B")
    prec = precision or "double"
    m = check_arguments(A, m, B, k, exclusion_zone, prec if prec != "single" else "single")
    self_join = B is None
    Bs = A if self_join else B
    ez = int(math.ceil(m / 4)) if exclusion_zone is None else int(exclusion_zone)
    lA, lB = len(A) - m + 1, len(Bs) - m + 1
    W = np.lib.stride_tricks.sliding_window_view(A, m)
    P = np.full((lA, k), np.inf)
    I = np.full((lA, k), -1, np.int64)
    side = {key: np.full(lA, v) for key, v in (("left_P", np.inf), ("right_P", np.inf))}
    side.update(left_I=np.full(lA, -1, np.int64), right_I=np.full(lA, -1, np.int64))
    cols = np.arange(lB)
    t0 = time.perf_counter()
    for a in range(0, lA, BLOCK_ROWS):
        rows = np.arange(a, min(a + BLOCK_ROWS, lA))
        D = np.array(distance_profiles(W[rows], Bs, normalize=False, p=p, precision=precision,
                                       device=device, progress=False, **kwargs),
                     np.float64, ndmin=2)
        if self_join:
            D[np.abs(cols[None, :] - rows[:, None]) <= ez] = np.inf
            for key, mask in (("left", cols[None, :] < rows[:, None]),
                              ("right", cols[None, :] > rows[:, None])):
                v, j = _topk_rows(np.where(mask, D, np.inf), 1)
                side[f"{key}_P"][rows], side[f"{key}_I"][rows] = v[:, 0], j[:, 0]
        P[rows], I[rows] = _topk_rows(D, k)
    plan = make_mass_plan(_device(device), Problem(prec if prec == "single" else "double"),
                          **kwargs)
    res = MatrixProfileResult(P=P, I=I, m=m, exclusion_zone=ez if self_join else None,
                              self_join=self_join, normalize=False, plan=plan,
                              diagnostics={"seconds": time.perf_counter() - t0, "p": p})
    if times is not None:
        res.times = np.asarray(times)[:lA]
    res.name = None if name is None else str(name)
    if self_join:
        for key, v in side.items():
            setattr(res, key, v)
        res.series = np.asarray(A)
    return res


def _device(device):
    from ..runtime import get_device
    return get_device(device)


def _aamp_device(T_A, m, T_B, p, k, exclusion_zone, precision, device, overrides):
    """:func:`aamp` with p != 2 on device arrays: per block of BLOCK_ROWS rows, the block's
    windows gathered by a kernel, their distance profiles (``mass``' kernels, as the host path)
    and the k best of each row (and a self-join's left / right neighbours) kept by
    ``aamp_topk`` in the result arrays (``templates/mp/aamp.cl.mako``). Nothing is read back or
    waited for; the results equal the host path's (the same distances, the same selection)."""
    from ..runtime import get_device, launch, round_up
    from ..runtime.launch import fixed_local
    from ..runtime.memory import empty_device
    from .local_size import ITEM_LOCAL
    from .api import _device_series, check_arguments
    from .mass import _device_profiles
    dev = get_device(device)
    self_join = T_B is None
    from ..runtime.arrays import is_device_array
    if not (is_device_array(T_A) and (self_join or is_device_array(T_B))):
        raise TypeError("T_A and T_B must both be device arrays or both host arrays")
    A = _device_series(T_A, "T_A", dev, dev.fp64)
    B = None if self_join else _device_series(T_B, "T_B", dev, dev.fp64)
    if B is not None and B.dtype != A.dtype:
        raise TypeError(f"device arrays T_A and T_B must have one dtype, got {A.dtype} and "
                        f"{B.dtype}")
    dt = np.dtype(A.dtype)
    own = "double" if dt == np.float64 else "single"
    if precision is not None and precision != own:
        raise TypeError(f"precision={precision!r} with {dt} device arrays: p != 2 computes in "
                        f"the arrays' precision ({own!r}); convert with .astype on the device")
    m = check_arguments(A, m, B, k, exclusion_zone, own)
    k = int(k)
    Bs = A if self_join else B
    ez = int(math.ceil(m / 4)) if exclusion_zone is None else int(exclusion_zone)
    lA, lB = A.size - m + 1, Bs.size - m + 1
    real = "double" if dt == np.float64 else "float"
    odt = np.dtype(np.float64 if dev.fp64 else np.float32)
    prg = dev.program("mp/aamp.cl.mako", real=real, out_double=int(dev.fp64))
    q = dev.queue
    P = empty_device(q, dev.context, (lA, k), odt)
    I = empty_device(q, dev.context, (lA, k), np.int64)
    side = ({key: empty_device(q, dev.context, lA, odt if key.endswith("P") else np.int64)
             for key in ("left_P", "left_I", "right_P", "right_I")} if self_join else {})
    dummy = (side["left_P"], side["left_I"], side["right_P"], side["right_I"]) if self_join \
        else (P, I, P, I)
    t0 = time.perf_counter()
    i32 = np.int32
    # one block's windows and distances, re-used block after block (the queue runs in order)
    rows = min(BLOCK_ROWS, lA)
    Qb = empty_device(q, dev.context, (rows, m), dt)
    Db = empty_device(q, dev.context, (rows, lB), dt)
    for a in range(0, lA, BLOCK_ROWS):
        nr = min(BLOCK_ROWS, lA - a)
        Q, D = Qb[:nr], Db[:nr]
        launch(dev, prg.kernel("aamp_windows"),
               *fixed_local(dev, round_up(nr * m, 64), ITEM_LOCAL),
               A.data, i32(a),
               i32(nr), i32(m), Q.data)
        _device_profiles(dev, Q, Bs, False, p, own, None, None, dict(overrides), out=D)
        launch(dev, prg.kernel("aamp_topk"), *fixed_local(dev, round_up(nr, 64), ITEM_LOCAL),
               D.data, i32(nr), i32(lB),
               i32(a), i32(self_join), i32(ez), i32(k), P.data, I.data,
               *(x.data for x in dummy))
    plan = make_mass_plan(dev, Problem(own), **overrides)
    res = MatrixProfileResult(P=P, I=I, m=m, exclusion_zone=ez if self_join else None,
                              self_join=self_join, normalize=False, plan=plan,
                              diagnostics={"seconds": time.perf_counter() - t0, "p": p},
                              _keep=[Qb, Db])
    for key, v in side.items():
        setattr(res, key, v)
    return res
