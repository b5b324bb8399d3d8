"""``clts.prescrump``: preSCRIMP (the first step of SCRIMP++), stumpy's ``prescrump``: the
distance profiles of every s-th window made and reduced on the device (z-normalised
self-joins: dot products with the unit-norm centred windows, ``pre_fused`` at k = 1 (never
stored), else ``pre_dist``; otherwise batched :func:`clts.mass`), each nearest neighbour
refined along its diagonal; the chosen pairs' distances exact (``pair_dist``)."""
from __future__ import annotations

import numpy as np

from ..runtime import launch, round_up
from ..runtime.launch import fixed_local
from .local_size import ITEM_LOCAL, WALK_LOCAL
from ..runtime.memory import copy, fill, scratch
from . import diagset
from .diagset import _check, _series, _Sides, _spec
from ..vocabulary import renamed

#: bytes of preSCRIMP's distance profiles per launch (``pre_dist`` or ``mass``)
MASS_BYTES = 32 << 20
#: work-items per work-group of ``pre_fused`` on pocl (fixed_local): a few hundred work-items
#: at n = 10,000 in groups of 16, so that the groups spread evenly over the cores
FUSED_LOCAL = 16
#: z-normalised self-joins at k = 1 reduce the profiles where they are made (``pre_fused``);
#: False: ``pre_dist`` stores them for ``pre_rows`` / ``pre_cols`` (the path of k > 1)
FUSED = True
#: ``pre_fused``'s dot products screened in float with a bound, the candidates that may win
#: re-checked in double (``pre_fused32``): the same neighbours and distances as ``pre_fused``
SCREEN32 = True

def _topk_candidates(l, k, rows, dist, idx):
    """The k best (distance, then index) distinct-index candidates per row: [l, k] P, I."""
    P = np.full((l, k), np.inf)
    I = np.full((l, k), -1, np.int64)
    ok = np.isfinite(dist)
    rows, dist, idx = rows[ok], dist[ok], idx[ok]
    if len(rows) == 0:
        return P, I
    if k == 1:      # each row's smallest distance, then its smallest index: no sort
        best = np.full(l, np.inf)
        np.minimum.at(best, rows, dist)
        tie = dist == best[rows]
        bi = np.full(l, np.iinfo(np.int64).max)
        np.minimum.at(bi, rows[tie], idx[tie].astype(np.int64))
        has = bi < np.iinfo(np.int64).max
        P[has, 0] = best[has]
        I[has, 0] = bi[has]
        return P, I
    o = np.lexsort((idx, dist, rows))
    rows, dist, idx = rows[o], dist[o], idx[o]
    # one entry per (row, neighbour): its best
    key = rows * (np.int64(idx.max()) + 2) + idx
    _, first = np.unique(key, return_index=True)
    keep = np.zeros(len(rows), bool)
    keep[first] = True
    rows, dist, idx = rows[keep], dist[keep], idx[keep]
    o = np.lexsort((idx, dist, rows))
    rows, dist, idx = rows[o], dist[o], idx[o]
    start = np.searchsorted(rows, rows, side="left")
    rank = np.arange(len(rows)) - start
    sel = rank < k
    P[rows[sel], rank[sel]] = dist[sel]
    I[rows[sel], rank[sel]] = idx[sel]
    return P, I


def _prescrump(sides, T_A, T_B, s, indices, p=2.0):
    """preSCRIMP: the distance profiles of the windows ``indices`` of T_A (``pre_dist`` or
    batched :func:`clts.mass`, on the device), each window's nearest neighbour refined along its
    diagonal for s - 1 steps both ways; self-joins also give every window its k best among
    the sampled windows (``pre_rows`` / ``pre_cols`` of subdiag.cl.mako, or at k = 1 of a
    z-normalised self-join ``pre_fused``, which never stores the profiles: only the
    neighbours are read back). Returns (P, I), [l, k]."""
    import pyopencl.array as cla

    from .mass import mass
    dev = sides.dev
    lB, m, k, ez = sides.lB, sides.m, sides.k, sides.ez
    Tb = T_A if T_B is None else T_B
    dt = np.float64 if sides.plan.exact_real == "double" else np.float32
    template, params = _spec(sides, k)
    dots = sides.self_join and sides.normalize and dt == np.float64
    if dots:
        A = sides.A
        Tp = cla.zeros(dev.queue, A.n + 64, dt)      # the scaled series, 64 zeros after it (pre_fused, pre_dist)
        copy(dev, Tp.data, A.Td.data, A.n * 8)
    else:
        Td = cla.to_device(dev.queue, np.ascontiguousarray(Tb, dtype=dt))
    win = np.lib.stride_tricks.sliding_window_view(T_A, m)
    per = max(1, min(MASS_BYTES, dev.max_alloc) // (np.dtype(dt).itemsize * lB))
    nn_all = np.full(len(indices), -1, np.int64)
    dn_all = np.full(len(indices), np.inf)
    if sides.self_join:
        colP = fill(dev, scratch(dev, lB * k, dt), np.inf)
        colI = fill(dev, scratch(dev, lB * k, np.int32), -1)
    fused = FUSED and dots and k == 1
    prg = dev.program(template, **params)
    order = np.arange(len(indices))
    if fused:       # the distance profiles never stored: [nq, l / 16] partial minima
        nbk = -(-lB // diagset.fused_windows(params))
        per = max(1, min(MASS_BYTES, dev.max_alloc) // (8 * nbk))
        order = np.argsort(indices, kind="stable")    # ascending (pre_fused's tie rule)
    for c0 in range(0, len(indices), per):
        ii = indices[order[c0:c0 + per]]
        nq = len(ii)
        idx = cla.to_device(dev.queue, ii.astype(np.int32))
        if fused:
            nn, dn = _fused_profiles(sides, prg, win[ii], idx, Tp, colP, colI,
                                     diagset.fused_windows(params))
            nn_all[order[c0:c0 + nq]] = nn.get()
            dn_all[order[c0:c0 + nq]] = dn.get()
            continue
        if dots:        # z-normalised self-join: dot products, ranked, refined exactly below
            D = _dot_profiles(sides, prg, win[ii], idx, Tp)
        else:
            Qd = cla.to_device(dev.queue, np.ascontiguousarray(win[ii], dtype=dt))
            D = mass(Qd, Td, normalize=sides.normalize, p=p, device=dev).reshape(nq, lB)
        nn = cla.empty(dev.queue, nq, np.int32)
        dn = cla.empty(dev.queue, nq, dt)
        zone = ez if sides.self_join else -1
        launch(dev, prg.kernel("pre_rows"), *fixed_local(dev, round_up(nq, 64), WALK_LOCAL),
               D.data, np.int32(nq), np.int32(lB), idx.data, np.int32(zone), nn.data, dn.data)
        if sides.self_join:
            launch(dev, prg.kernel("pre_cols"), *fixed_local(dev, round_up(lB, 64), ITEM_LOCAL),
                   D.data,
                   np.int32(nq), np.int32(lB), idx.data, np.int32(ez), colP.data, colI.data)
        nn_all[c0:c0 + nq] = nn.get()
        dn_all[c0:c0 + nq] = dn.get()
    ok = (nn_all >= 0) & np.isfinite(dn_all)
    nn_all[~ok] = -1
    ii, jj = indices[ok], nn_all[ok]
    pa, pb = _refine_pairs(sides, s, ii, jj)
    if sides.self_join:
        cP = colP.get().astype(np.float64).reshape(lB, k)
        cI = colI.get().astype(np.int64).reshape(lB, k)
    # the exact distances in one launch: the refinement pairs and, where dot products only
    # ranked them, each sampled window's neighbour and each window's best sampled partner
    ea, eb = [pa], [pb]
    if dots:
        has = cI >= 0
        ea += [ii, np.nonzero(has)[0]]
        eb += [jj, cI[has]]
    d = sides.pair_dist(np.concatenate(ea), np.concatenate(eb))
    if dots:
        dn_all[ok] = d[len(pa):len(pa) + len(ii)]
        cP[has] = d[len(pa) + len(ii):]
    rows, dist, idx = [ii], [dn_all[ok]], [jj]
    if sides.self_join:
        rows.append(np.repeat(np.arange(lB), k))
        dist.append(cP.ravel())
        idx.append(cI.ravel())
    if len(pa):
        rows += [pa]
        dist += [d[:len(pa)]]
        idx += [pb]
        if sides.self_join:
            rows += [pb]
            dist += [d[:len(pa)]]
            idx += [pa]
    return _topk_candidates(sides.lA, k, np.concatenate(rows), np.concatenate(dist),
                            np.concatenate(idx))


def _dot_profiles(sides, prg, windows, idx, Tp):
    """The squared z-normalised distance profiles [nq, l] (device) of the windows
    ``windows`` (host, [nq, m]; their indices ``idx`` on the device) against the scaled series
    ``Tp`` by ``pre_dist`` (dot products with the unit-norm centred queries): they rank the
    candidates, whose distances are then evaluated exactly."""
    import pyopencl.array as cla
    dev, A, l, m = sides.dev, sides.A, sides.lA, sides.m
    nq = len(windows)
    zq = cla.to_device(dev.queue, _unit_queries(windows))
    D = cla.empty(dev.queue, (nq, l), np.float64)
    r = A.upload(dev, as_columns=False, dtype=np.float64)["r"]
    launch(dev, prg.kernel("pre_dist"), *fixed_local(dev, (-(-l // 8), -(-nq // 4)), ITEM_LOCAL),
           np.int32(nq), np.int32(l), np.int32(m), zq.data, idx.data, Tp.data, A.mu.data, A.ss.data,
           r.data, A.fl.data, D.data)
    return D


def _unit_queries(windows):
    """The unit-norm centred windows (0 where flagged: those take the exact rules)."""
    c = windows - windows.mean(axis=1, keepdims=True)
    norm = np.sqrt(np.sum(c * c, axis=1, keepdims=True))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(norm > 0, c / np.where(norm > 0, norm, 1), 0.0)
    z[~np.isfinite(z)] = 0.0
    return np.ascontiguousarray(z)


def _fused_profiles(sides, prg, windows, idx, Tp, colP, colI, fw):
    """``pre_fused`` (z-normalised self-joins, k = 1): the distance profiles of ``windows``
    (in ascending index order) as in :func:`_dot_profiles`, reduced where they are made:
    every window's best among the queries merged into ``colP`` / ``colI`` and each query's
    nearest neighbour (``nn``, its squared distance ``dn``; device arrays) through
    ``pre_rowmin``, without storing the [nq, l] profiles; ``fw`` windows a work-item (the
    program's)."""
    import pyopencl.array as cla
    dev, A, l, m = sides.dev, sides.A, sides.lA, sides.m
    nq, nbk = len(windows), -(-l // fw)
    zh = _unit_queries(windows)
    zq = cla.to_device(dev.queue, zh)
    rowD = cla.empty(dev.queue, (nq, nbk), np.float64)
    r = A.upload(dev, as_columns=False, dtype=np.float64)["r"]
    rules = (zq.data, idx.data, Tp.data, A.mu.data, A.ss.data, r.data, A.fl.data)
    nn = cla.empty(dev.queue, nq, np.int32)
    dn = cla.empty(dev.queue, nq, np.float64)
    if SCREEN32:
        Tp32, r32, bw, bblk = _screen_bounds(sides, prg, Tp, r, nbk)
        zq32 = cla.to_device(dev.queue, zh.astype(np.float32))
        launch(dev, prg.kernel("pre_fused32"), *fixed_local(dev, nbk, FUSED_LOCAL), np.int32(nq),
               np.int32(l), np.int32(m), np.int32(sides.ez), zq.data, zq32.data, idx.data,
               Tp.data, Tp32.data, A.mu.data, A.ss.data, r.data, r32.data, bw.data, A.fl.data,
               colP.data, colI.data, rowD.data)
        launch(dev, prg.kernel("pre_rowmin32"), *fixed_local(dev, round_up(nq, 64), ITEM_LOCAL),
               np.int32(nq), np.int32(nbk), np.int32(l), np.int32(m), np.int32(sides.ez), *rules,
               bblk.data, rowD.data, nn.data, dn.data)
        return nn, dn
    launch(dev, prg.kernel("pre_fused"), *fixed_local(dev, nbk, FUSED_LOCAL), np.int32(nq), np.int32(l),
           np.int32(m), np.int32(sides.ez), *rules, colP.data, colI.data, rowD.data)
    launch(dev, prg.kernel("pre_rowmin"), *fixed_local(dev, round_up(nq, 64), ITEM_LOCAL),
           np.int32(nq),
           np.int32(nbk), np.int32(l), np.int32(m), np.int32(sides.ez), *rules, rowD.data,
           nn.data, dn.data)
    return nn, dn


def _screen_bounds(sides, prg, Tp, r, nbk):
    """``pre_fused32``'s float copies of the scaled series ``Tp`` and of ``r`` and each
    window's and each of the ``nbk`` blocks' bound on |distance in float - distance in double|
    (``pre_bound``).
    The bound: the dot product's error in float over m terms from rounded operands,
    gamma(m + 2) |z| |x_j| (|z| = 1, the query's unit-norm window; |x_j| the window's norm in
    the scaled series), times r_j, plus the product's, the clamp's and the scaling's roundings and
    the double computation's own error, over 2 m (1 - corr); twice that, rounded up."""
    import pyopencl.array as cla
    dev, l, m = sides.dev, sides.lA, sides.m
    u, u64 = 2.0 ** -24, 2.0 ** -53
    g, g64 = ((m + 2) * e / (1 - (m + 2) * e) for e in (u, u64))
    c1 = 2 * m * (g * (1 + u) ** 2 * 1.0001 + g64 * 1.0001)
    c0 = 2 * m * (5 * u + 8 * u64) + 5 * m * u + 1e-30
    npad, A = Tp.size, sides.A
    Tp32 = cla.empty(dev.queue, npad, np.float32)
    r32 = cla.empty(dev.queue, l, np.float32)
    bw = cla.empty(dev.queue, l, np.float32)
    bblk = cla.empty(dev.queue, nbk, np.float32)
    launch(dev, prg.kernel("pre_bound"), *fixed_local(dev, round_up(npad, 64), ITEM_LOCAL),
           np.int32(npad), np.int32(l), np.int32(m), np.float64(c1), np.float64(c0), Tp.data,
           A.mu.data, A.ss.data, r.data, A.fl.data, Tp32.data, r32.data, bw.data, bblk.data)
    return Tp32, r32, bw, bblk


def _refine_pairs(sides, s, ii, jj):
    """preSCRIMP's refinement pairs (i +- g, j +- g), g < s, of each sampled window i and its
    nearest neighbour j (inside both series): (pa, pb)."""
    lA, lB = sides.lA, sides.lB
    fa, fb = [], []
    for sgn in (1, -1):
        if sgn > 0:
            steps = np.minimum(np.minimum(s, lA - ii), lB - jj) - 1
        else:
            steps = np.minimum(np.minimum(s, ii + 1), jj + 1) - 1
        steps = np.maximum(steps, 0)
        rep = np.repeat(np.arange(len(ii)), steps)
        g = np.arange(rep.size) - np.repeat(np.cumsum(steps) - steps, steps) + 1
        fa.append(ii[rep] + sgn * g)
        fb.append(jj[rep] + sgn * g)
    return np.concatenate(fa), np.concatenate(fb)


@renamed()
def prescrump(T_A, m, T_B=None, *, s=None, k=1, normalize=True, p=2.0, device=None):
    """preSCRIMP: an approximate (top-k) matrix profile from the distance profiles of every
    ``s``-th window, refined along each one's nearest-neighbour diagonal (stumpy's
    ``prescrump``). An upper bound of the exact profile; its indices name the windows at those
    distances. ``s`` defaults to the exclusion zone ceil(m / 4). The windows are visited in
    ``np.random.permutation`` order as stumpy (``np.random.seed`` makes a run repeatable;
    only ties depend on it).

    Returns
    -------
    P, I : numpy.ndarray
        [l] (k = 1) or [l, k]: distances (inf: none found) and indices (-1).

    Examples
    --------
    >>> import numpy as np, clts
    >>> T = np.cumsum(np.random.default_rng(0).standard_normal(400))
    >>> P, I = clts.prescrump(T, 20)
    >>> bool(np.all(P >= clts.matrix_profile(T, 20).profile - 1e-9))
    True
    """
    T_A = _series(T_A, "T_A")
    T_B = None if T_B is None else _series(T_B, "T_B")
    m, k = _check(T_A, m, T_B, k, 1.0, s)
    sides = _Sides(T_A, m, T_B, k, bool(normalize), device, p)
    if s is None:
        s = sides.ez
    indices = np.random.permutation(range(0, sides.lA, s)).astype(np.int64)
    P, I = _prescrump(sides, T_A, T_B, s, indices, p)
    if k == 1:
        return P[:, 0], I[:, 0]
    return P, I
