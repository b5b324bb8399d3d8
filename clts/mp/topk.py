"""Top-k (k > 1): the in-kernel k-lists through the diagonal driver, their exact
re-evaluation and merge, exact k-list scans of special windows, and the blocked path for
k > TOPK_MAX (rows of the distance matrix on the device, top-k on the host)."""
from __future__ import annotations


import numpy as np

from ..runtime import launch, round_up
from ..runtime.programs import build_program
from . import flags
from .diagonal import _diag_all
from .exact import _pair_dist, exact_spec
from .series import _vw


#: largest k of the in-kernel top-k lists (registers and tile lists grow with k); larger k
#: takes the blocked path (distance-matrix rows on the device, top-k on the host)
TOPK_MAX = 16


def _block_profile(dev, p, A, B, self_join, ez, k, rows=None):
    """k nearest neighbours of every window of A in B from blocks of the distance matrix;
    ``rows``: (first, end) computes only those windows of A (the others have none)."""
    import pyopencl.array as cla
    q = dev.queue
    # the k > 1 path runs in the exact precision (float64 unless precision="single")
    dA = A.upload(dev, as_columns=False, dtype=A.er)
    dB = B.upload(dev, as_columns=False, dtype=B.er)
    prg = build_program(dev, *exact_spec(dev, p, A.normalize))
    lA, lB = A.l, B.l
    Bk = max(1, min(p.block_rows, lA, (dev.max_alloc // 8) // max(lB, 1)))
    out = cla.empty(q, Bk * lB, A.er)
    TAk = dA["T"]
    P = np.full((lA, k), np.inf)
    I = np.full((lA, k), -1, np.int64)
    li = np.full(lA, -1, np.int64)
    rix = np.full(lA, -1, np.int64)
    flA = A.flags_on(dev)
    flB = B.flags_on(dev)
    cols = np.arange(lB)
    r0, r1 = rows or (0, lA)
    for i0 in range(r0, r1, Bk):
        nr = min(Bk, r1 - i0)
        out.fill(np.inf)
        launch(dev, prg.kernel("block"), nr + lB - 1, None, np.int32(i0), np.int32(nr),
               np.int32(A.m), np.int32(lA), np.int32(lB),
               TAk.data, dA["mu"].data, A.ss.data, flA.data,
               dA["df"].data, dA["dg"].data, dA["r"].data,
               dB["T"].data, dB["mu"].data, B.ss.data, flB.data,
               dB["df"].data, dB["dg"].data, dB["r"].data, out.data)
        Dm = out.get()[:nr * lB].reshape(nr, lB).astype(np.float64)
        rows = np.arange(i0, i0 + nr)
        if self_join:
            Dm[np.abs(rows[:, None] - cols[None, :]) <= ez] = np.inf
        for t in range(nr):
            dr = Dm[t]
            i = i0 + t
            kk = min(k, lB)
            v = np.partition(dr, kk - 1)[kk - 1]
            cand = np.nonzero(dr <= v)[0]
            order = cand[np.lexsort((cand, dr[cand]))][:kk]
            order = order[np.isfinite(dr[order])]
            I[i, :len(order)] = order
            if self_join:
                if i > 0:
                    j = int(np.argmin(dr[:i]))
                    if np.isfinite(dr[j]):
                        li[i] = j
                if i + 1 < lB:
                    j = i + 1 + int(np.argmin(dr[i + 1:]))
                    if np.isfinite(dr[j]):
                        rix[i] = j
    # exact distances of the chosen pairs, then re-sort each row (distance, index)
    ia = np.repeat(np.arange(lA), k)
    d = _pair_dist(dev, p, A, B, ia, I.ravel()).reshape(lA, k)
    key_i = np.where(I < 0, np.iinfo(np.int64).max, I)
    for i in range(lA):
        o = np.lexsort((key_i[i], d[i]))
        P[i], I[i] = d[i, o], I[i, o]
    P[I < 0] = np.inf
    res = dict(P=P, I=I)
    if self_join:
        res.update(left_I=li, right_I=rix,
                   left_P=_pair_dist(dev, p, A, B, np.arange(lA), li),
                   right_P=_pair_dist(dev, p, A, B, np.arange(lA), rix))
    return res


def _part_rows(l, bands):
    """The rows of part ``bands = (part, parts)`` of a distributed run of the blocked path
    (every row costs the same there: consecutive runs of about equal length)."""
    if bands is None:
        return None
    part, parts = bands
    return l * part // parts, l * (part + 1) // parts


def _topk_blocked(dev, p, A, B, self_join, ez, k, both, bands=None):
    """k > TOPK_MAX: rows of the distance matrix on the device, top-k on the host; ``bands``
    (part, parts): only that part's rows (a distributed run)."""
    res = _block_profile(dev, p, A, B, self_join, ez, k, _part_rows(A.l, bands))
    if not self_join and both:
        rb = _block_profile(dev, p, B, A, False, ez, k, _part_rows(B.l, bands))
        res.update(P_B=rb["P"], I_B=rb["I"])
    return res


def _merge_k(P, I, Pc, Ic, k, unique=False):
    """Row-wise k best of two candidate sets [n, a] and [n, b]: smaller distance, then smaller
    index; index -1 or an infinite distance is no candidate. ``unique``: an index in both sets
    counts once, at its smaller distance (the parts of a distributed run overlap where each
    scans the special windows)."""
    Pa = np.concatenate([P, Pc], axis=1)
    Ia = np.concatenate([I, Ic], axis=1)
    bad = (Ia < 0) | ~np.isfinite(Pa)
    if unique:      # sorted by (index, distance), every repeat of an index is dropped
        o = np.lexsort((Pa, np.where(bad, -1, Ia)), axis=1)
        Is = np.take_along_axis(np.where(bad, -1, Ia), o, 1)
        rep = np.zeros(Is.shape, bool)
        rep[:, 1:] = (Is[:, 1:] == Is[:, :-1]) & (Is[:, 1:] >= 0)
        np.put_along_axis(bad, o, np.take_along_axis(bad, o, 1) | rep, 1)
    Pa = np.where(bad, np.inf, Pa)
    Ia = np.where(bad, -1, Ia)
    o = np.lexsort((np.where(bad, np.iinfo(np.int64).max, Ia), Pa), axis=1)[:, :k]
    return np.take_along_axis(Pa, o, 1), np.take_along_axis(Ia, o, 1)


def _exact_k(dev, p, X, Y, I):
    """Exact distances of the candidate lists I [l_X, k] (windows of Y)."""
    rows = np.repeat(np.arange(X.l), I.shape[1])
    return _pair_dist(dev, p, X, Y, rows, I.ravel()).reshape(I.shape)


def _special_k(dev, p, X, Y, S, k, ez, rows_out, cols_out, skip_cols=None):
    """Exact k nearest neighbours involving the special windows ``S`` of X (the diagonal kernel
    leaves them out), on the device: X's windows S against every window of Y (merged into
    ``rows_out``), and every window of Y except ``skip_cols`` against the windows S (merged into
    ``cols_out``). Each is a dict side -> [P, I] with side "all" (AB-join) or "left"/"right"
    (self-join, ``ez`` >= 0: pairs |i - j| <= ez excluded)."""
    import pyopencl.array as cla
    if len(S) == 0 or (rows_out is None and cols_out is None):
        return
    q = dev.queue
    prg = dev.program("mp/exact.cl.mako", **flags.TEMPLATE, real=p.exact_real,
                      NORMALIZE=int(X.normalize), lanes=_vw(dev), K=k)
    lY = Y.l
    dq = cla.to_device(q, np.asarray(S, np.int32))
    args = (X.Td.data, X.mu.data, X.ss.data, X.flags_on(dev).data,
            Y.Td.data, Y.mu.data, Y.ss.data, Y.flags_on(dev).data)

    def lists(kind, n, *head):
        outs = [cla.empty(q, n * k, t) for t in (X.er, np.int32, X.er, np.int32)]
        launch(dev, prg.kernel(kind), round_up(n, 64), None, np.int32(len(S)), np.int32(X.m),
               np.int32(lY), np.int32(ez), *head, *args, *[o.data for o in outs])
        lv, li, rv, ri = (o.get().reshape(n, k) for o in outs)
        return {"left": (lv.astype(np.float64), li.astype(np.int64)),
                "right": (rv.astype(np.float64), ri.astype(np.int64))}
    names = ("left", "right") if ez >= 0 else ("all",)
    if rows_out is not None:
        got = lists("scan_rows_k", len(S), dq.data)
        for name in names:
            Pr, Ir = rows_out[name]
            Pn, In = _merge_k(Pr[S], Ir[S], *got["right" if name == "all" else name], k)
            Pr[S], Ir[S] = Pn, In
    if cols_out is not None:
        skip = np.zeros(lY, np.int32)
        if skip_cols is not None:
            skip[skip_cols] = 1
        got = lists("scan_cols_k", lY, dq.data, cla.to_device(q, skip).data)
        for name in names:
            Pc, Ic = cols_out[name]
            Pn, In = _merge_k(Pc, Ic, *got["right" if name == "all" else name], k)
            Pc[...], Ic[...] = Pn, In


def _topk(job):
    """k nearest neighbours from the diagonal kernel's in-kernel top-k lists, re-evaluated
    exactly; special windows from exact rows. k > TOPK_MAX: the blocked path."""
    p, self_join, ez, k, both = job.plan, job.self_join, job.ez, job.k, job.both
    A, B = job.A, job.B
    dev = job.devs[0]
    if k > TOPK_MAX:
        return _topk_blocked(dev, p, A, B, self_join, ez, k, both, job.bands)
    lA, lB = A.l, B.l
    partial = _diag_all(job)
    empty = lambda n: [np.full((n, k), np.inf), np.full((n, k), -1, np.int64)]  # noqa: E731
    if self_join:
        prof = {"right": empty(lA), "left": empty(lA)}
    else:
        prof = {"all": empty(lA)}
        profB = {"all": empty(lB)} if both else None
    for pri, pci in partial:
        if self_join:
            # row lists hold j > i (right), column lists i < j: the left neighbours of j
            for name, I in (("right", pri), ("left", pci)):
                Pn, In = _merge_k(*prof[name], _exact_k(dev, p, A, A, I), I, k)
                prof[name][:] = [Pn, In]
        else:
            Pn, In = _merge_k(*prof["all"], _exact_k(dev, p, A, B, pri), pri, k)
            prof["all"][:] = [Pn, In]
            if both:
                Pn, In = _merge_k(*profB["all"], _exact_k(dev, p, B, A, pci), pci, k)
                profB["all"][:] = [Pn, In]
    # windows the kernel left out (r = NaN) but that have neighbours: constant or
    # ill-conditioned ones when normalising (plain Euclidean: none)
    def special(X):
        return np.nonzero(X.flags & flags.SPECIAL)[0] if X.normalize else np.zeros(0, np.int64)
    SA = special(A)
    if self_join:
        _special_k(dev, p, A, A, SA, k, ez, prof, prof, skip_cols=SA)
        P, I = _merge_k(*prof["right"], *prof["left"], k)
        (rP, rI), (lP, lI) = prof["right"], prof["left"]
        return dict(P=P, I=I, left_P=lP[:, 0].copy(), left_I=lI[:, 0].copy(),
                    right_P=rP[:, 0].copy(), right_I=rI[:, 0].copy())
    SB = special(B)
    _special_k(dev, p, A, B, SA, k, -1, prof, profB, skip_cols=SB)
    _special_k(dev, p, B, A, SB, k, -1, profB, prof, skip_cols=SA)
    out = dict(P=prof["all"][0], I=prof["all"][1])
    if both:
        out.update(P_B=profB["all"][0], I_B=profB["all"][1])
    return out
