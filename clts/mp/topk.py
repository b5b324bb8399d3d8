"""Top-k (k > 1): the in-kernel k-lists through the diagonal driver, their exact
re-evaluation and merge, exact k-list scans of special windows, and the blocked path for
k > TOPK_MAX (rows of the distance matrix on the device, top-k on the host)."""
from __future__ import annotations


import numpy as np

from ..runtime import launch, round_up
from ..runtime.launch import fixed_local
from .local_size import ITEM_LOCAL
from ..runtime.memory import empty_device, fill, scratch
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
    q = dev.queue
    # the k > 1 path runs in the exact precision (float64 unless precision="single")
    dA = A.upload(dev, as_columns=False, dtype=A.er)
    dB = B.upload(dev, as_columns=False, dtype=B.er)
    prg = build_program(dev, *exact_spec(dev, p, A.normalize))
    lA, lB = A.l, B.l
    Bk = max(1, min(p.block_rows, lA, (dev.max_alloc // 8) // max(lB, 1)))
    out = empty_device(q, dev.context, Bk * lB, A.er)
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
        fill(dev, out, np.inf)
        launch(dev, prg.kernel("block"), *fixed_local(dev, nr + lB - 1, ITEM_LOCAL),
               np.int32(i0), np.int32(nr),
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


def _topk(job):
    """k nearest neighbours from the diagonal kernel's in-kernel top-k lists, re-evaluated
    exactly and merged on the device; special windows from exact k-list scans (device,
    compacted). Returns (the result's fields as device arrays, temporaries queued kernels
    read). k > TOPK_MAX: the blocked path (host top-k; host arrays, None)."""
    p, self_join, ez, k, both = job.plan, job.self_join, job.ez, job.k, job.both
    A, B = job.A, job.B
    dev = job.devs[0]
    if k > TOPK_MAX:
        return _topk_blocked(dev, p, A, B, self_join, ez, k, both, job.bands), None
    from .diagonal import _filled, _special
    lA, lB = A.l, B.l
    partial = _diag_all(job)
    keep = [job]

    def empty(n):
        return [_filled(dev, n * k, A.er, np.inf), _filled(dev, n * k, np.int32, -1)]
    if self_join:
        prof = {"right": empty(lA), "left": empty(lA)}
    else:
        prof = {"all": empty(lA)}
        profB = {"all": empty(lB)} if both else None
    for di, (pri, pci, kept) in enumerate(partial):
        keep += kept
        if di:      # another device's lists (several devices: numpy inputs only)
            import pyopencl.array as cla
            pri = cla.to_device(dev.queue, pri.get())
            pci = cla.to_device(dev.queue, pci.get()) if pci is not None else None
        keep += [pri, pci]
        if self_join:
            # row lists hold j > i (right), column lists i < j: the left neighbours of j
            for name, I in (("right", pri), ("left", pci)):
                d = _exact_dev(dev, p, A, A, I, lA, k)
                keep.append(d)
                _merge_dev(dev, p, A, lA, k, prof[name], d, I, keep=keep)
        else:
            d = _exact_dev(dev, p, A, B, pri, lA, k)
            keep.append(d)
            _merge_dev(dev, p, A, lA, k, prof["all"], d, pri, keep=keep)
            if both:
                d = _exact_dev(dev, p, B, A, pci, lB, k)
                keep.append(d)
                _merge_dev(dev, p, A, lB, k, profB["all"], d, pci, keep=keep)
    # windows the kernel left out (r = NaN) but that have neighbours: constant or
    # ill-conditioned ones when normalising (plain Euclidean: none)
    if self_join:
        if A.normalize:
            SA = _special(dev, A)
            keep.append(SA)
            _special_k_dev(dev, p, A, A, SA, k, ez, prof, prof, keep)
        P = empty(lA)
        _merge_dev(dev, p, A, lA, k, prof["right"], prof["right"][0], prof["right"][1],
                   other=prof["left"], out=P)
        return _topk_out(dev, job, A, lA, k, P, prof["right"], prof["left"],
                         ("P", "I", "right_P", "right_I", "left_P", "left_I")), keep + [P, prof]
    if A.normalize:
        SA, SB = _special(dev, A), _special(dev, B)
        keep += [SA, SB]
        _special_k_dev(dev, p, A, B, SA, k, -1, prof, profB, keep)
        _special_k_dev(dev, p, B, A, SB, k, -1, profB, prof, keep)
    out = _topk_out(dev, job, A, lA, k, prof["all"], None, None, ("P", "I"))
    keep.append(prof)
    if both:
        o2 = _topk_out(dev, job, A, lB, k, profB["all"], None, None, ("P_B", "I_B"))
        out.update(o2)
        keep.append(profB)
    return out, keep


def _exact_dev(dev, p, X, Y, I, n, k):
    """Exact distances of the candidate lists I (device, [n * k] windows of Y)."""
    return _pair_dist(dev, p, X, Y, None, I, n * k, per=k)


def _merge_dev(dev, p, X, n, k, dst, Pb, Ib, *, other=None, out=None, at=None, keep=None,
               nb=0):
    """Row-wise k best of the [n, k] lists ``dst`` and the candidates (Pb, Ib) (``merge_k``
    of prep.cl.mako: distance, then index, none last), into new arrays that replace dst's
    (the kernel never writes what it reads; the old ones go to ``keep``). With ``other``:
    the k best of ``dst`` and ``other`` into ``out``. ``at`` = (indices, count): rows at[p]
    of dst merged with row p of the candidates, in place. ``nb`` > 0: the candidates are
    column-major, [k, nb] (the exact scans' lists); 0: [rows, k]. The Plan ``p``'s
    ``interleave`` (GPUs) runs a work-item per candidate (coalesced), else one per row."""
    per = 2 * k if p.interleave else 1
    Pa, Ia = dst
    if other is not None:
        Pb, Ib = other
    kern = X.prg.kernel("merge_k")
    if at is None:
        Po, Io = out if out is not None else (scratch(dev, n * k, X.er),
                                              scratch(dev, n * k, np.int32))
        launch(dev, kern, *fixed_local(dev, round_up(n * per, 64), ITEM_LOCAL),
               np.int32(n), np.int32(k), np.int32(0), np.int32(nb), np.int32(per > 1),
               Ia.data, Ia.data, Pa.data, Ia.data, Pb.data, Ib.data, Po.data, Io.data)
        if out is None:
            if keep is not None:
                keep += [Pa, Ia]
            dst[0], dst[1] = Po, Io
        return
    idx, count = at
    rows = max(idx.shape[0], 1)
    Pc, Ic = scratch(dev, rows * k, X.er), scratch(dev, rows * k, np.int32)
    launch(dev, kern, *fixed_local(dev, round_up(rows * per, 64), ITEM_LOCAL),
           np.int32(n), np.int32(k), np.int32(1), np.int32(nb), np.int32(per > 1),
           count.data, idx.data, Pa.data, Ia.data, Pb.data, Ib.data, Pc.data, Ic.data)
    launch(dev, X.prg.kernel("scatter_rows"), *fixed_local(dev, round_up(rows, 64), ITEM_LOCAL),
           np.int32(k),
           count.data, idx.data, Pc.data, Ic.data, Pa.data, Ia.data)
    if keep is not None:
        keep += [Pc, Ic]


def _special_k_dev(dev, p, X, Y, S, k, ez, rows_out, cols_out, keep):
    """:func:`_special_k` on the device: X's special windows ``S`` ((indices, count), device)
    against every window of Y (merged into ``rows_out`` at S) and every window of Y but its
    special ones against S (merged into ``cols_out``)."""
    if rows_out is None and cols_out is None:
        return
    prg = dev.program("mp/exact.cl.mako", **flags.TEMPLATE, real=p.exact_real,
                      NORMALIZE=int(X.normalize), lanes=_vw(dev), K=k,
                      **({"KSG": p.subgroup} if p.subgroup else {}))
    idx, count = S
    lY = Y.l
    args = (X.Td.data, X.mu.data, X.ss.data, X.flags_on(dev).data,
            Y.Td.data, Y.mu.data, Y.ss.data, Y.flags_on(dev).data)
    names = ("left", "right") if ez >= 0 else ("all",)

    def lists(kind, n):
        # column-major [k, n] lists, n a multiple of 32 (the kernels' stores coalesced and
        # each column aligned); plain buffers: dropped here, they live until the kernels
        # queued on them have run
        outs = [empty_device(dev.queue, dev.context, n * k, t)
                for t in (X.er, np.int32, X.er, np.int32)]
        launch(dev, prg.kernel(kind), *fixed_local(dev, round_up(n, 64), ITEM_LOCAL),
               count.data,
               np.int32(X.m), np.int32(lY), np.int32(ez), np.int32(n), idx.data, *args,
               *[o.data for o in outs])
        return {"left": outs[0:2], "right": outs[2:4]}
    if rows_out is not None:
        n = round_up(max(idx.shape[0], 1), 32)
        got = lists("scan_rows_k", n)
        for name in names:
            Pn, In = got["right" if name == "all" else name]
            _merge_dev(dev, p, X, X.l, k, rows_out[name], Pn, In, at=S, keep=keep, nb=n)
    if cols_out is not None:
        n = round_up(max(lY, 1), 32)
        got = lists("scan_cols_k", n)
        for name in names:
            Pn, In = got["right" if name == "all" else name]
            _merge_dev(dev, p, X, lY, k, cols_out[name], Pn, In, keep=keep, nb=n)


def _topk_out(dev, job, X, n, k, lists, first, second, names):
    """The result arrays ``names`` from [n * k] lists: P, I [n, k] (distances times the
    plain-Euclidean unit, indices int64) and, with ``first`` / ``second``, their first
    entries [n]."""
    # results: fresh device arrays, never pool blocks a later call could reuse
    P = empty_device(dev.queue, dev.context, (n, k), X.er)
    I = empty_device(dev.queue, dev.context, (n, k), np.int64)
    two = first is not None
    extra = [empty_device(dev.queue, dev.context, n, t) for t in (X.er, np.int64, X.er, np.int64)] if two \
        else [P, I, P, I]
    f1 = first if two else lists
    f2 = second if two else lists
    launch(dev, X.prg.kernel("topk_out"), *fixed_local(dev, round_up(n * k, 64), ITEM_LOCAL),
           np.int32(n), np.int32(k),
           np.int32(not job.normalize), X.scale.data, lists[0].data, lists[1].data, P.data,
           I.data, np.int32(two), f1[0].data, f1[1].data, f2[0].data, f2[1].data,
           *[a.data for a in extra])
    return dict(zip(names, [P, I] + (extra if two else [])))
