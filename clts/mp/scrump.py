"""``clts.scrump`` and ``clts.prescrump``: the anytime approximate matrix profile (SCRIMP++:
preSCRIMP's sampled distance profiles refined along their diagonals, then SCRIMP's diagonals
in a random order, a share of them per ``update()``), with stumpy's semantics and random
order, computed on an OpenCL device.

The diagonals of one update run in ``subdiag.cl.mako``: every pair of the chosen diagonals
scored with SCAMP's O(1) covariance update (exact at the start of each block of rows), folded
into each row's k best (and left / right best) on the device; the winners' distances are then
evaluated exactly (``exact.cl.mako``'s ``pair_dist``), as :func:`clts.matrix_profile` does.
An update that covers every diagonal (``percentage=1``) is :func:`clts.matrix_profile` itself,
so it equals ``stump`` exactly. preSCRIMP's distance profiles are made and reduced on the
device (z-normalised self-joins: dot products with the unit-norm centred windows,
``pre_dist``; otherwise batched :func:`clts.mass`); the chosen pairs and the refinement pairs
are exact ``pair_dist`` evaluations.
"""
from __future__ import annotations

import math

import numpy as np

from ..runtime import get_device, launch, round_up
from ..runtime.memory import fill, scratch, upload_scratch
from . import flags
from .exact import _pair_dist
from .join import Join
from .plan import Problem, make_plan
from .series import PAD_SLACK

#: bytes of one launch's pair scores (diagonals per launch are cut to fit)
PAIR_BYTES = 64 << 20
#: rows per work-item of ``sub_pairs`` (each block starts with an exact O(m) covariance):
#: at least this, at least 2 m, at most the plan's segment (the ill-conditioning test's span)
MIN_BLOCK = 256
#: bytes of preSCRIMP's distance profiles per launch (``pre_dist`` or ``mass``)
MASS_BYTES = 32 << 20
#: rows per work-item of ``sub_reduce`` (k = 1): 1 measured fastest on pocl (1.5 s for every
#: diagonal at n = 10,000; 8 rows: 6.8 s, 32: 4.0 s)
SUB_ROWS = 1

#: stumpy's exclusion-zone denominator: ceil(m / 4)
EXCL_ZONE_DENOM = 4


def _fold_items(lA, k):
    """Work-items of ``sub_reduce``: SUB_ROWS rows each for k = 1, one row each for k > 1."""
    return round_up(-(-lA // SUB_ROWS) if k == 1 else lA, 64)


def _series(T, name):
    a = np.asarray(T)
    if a.dtype.kind not in "fiub":
        raise TypeError(f"{name} must be a real-valued 1-D array, got dtype {a.dtype}")
    a = a.astype(np.float64)
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    return a


def _check(T_A, m, T_B, k, percentage, s):
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)):
        raise TypeError(f"m must be an int, got {type(m).__name__}")
    m = int(m)
    if m < 3:
        raise ValueError(f"m must be >= 3, got {m}")
    for name, t in (("T_A", T_A), ("T_B", T_B)):
        if t is not None and len(t) < m:
            raise ValueError(f"{name} has {len(t)} values, fewer than m={m}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    if not isinstance(percentage, (int, float, np.integer, np.floating)) \
            or not percentage > 0 or not math.isfinite(percentage):
        raise ValueError(f"percentage must be a number in (0, 1], got {percentage!r}")
    if s is not None and (isinstance(s, bool) or not isinstance(s, (int, np.integer))
                          or s < 1):
        raise ValueError(f"s must be None or an int >= 1, got {s!r}")
    return m, int(k)


class _Sides:
    """The device side of one (series, m): the prepared windows (statistics, flags, update
    coefficients: ``Join``'s sides) and the plan, shared by the preSCRIMP and SCRIMP steps."""

    def __init__(self, T_A, m, T_B, k, normalize, device):
        self.dev = get_device(device)
        precision = "double" if self.dev.fp64 else "single"
        self.plan = make_plan(self.dev, Problem(m, precision))
        self.self_join = T_B is None
        self.m, self.k, self.normalize = m, k, normalize
        self.ez = int(math.ceil(m / EXCL_ZONE_DENOM))
        self.job = Join([self.dev], self.plan, T_A, T_B, m, self.ez, k, False, normalize,
                        self.plan.band + self.plan.tile + PAD_SLACK, False)
        self.A, self.B = self.job.A, self.job.B
        self.lA, self.lB = self.A.l, self.B.l
        self._unit = None

    @property
    def unit(self):
        """The factor of plain Euclidean distances (the series were scaled); 1 z-normalised."""
        if self._unit is None:
            self._unit = 1.0 if self.normalize else float(self.A.scale.get()[3])
        return self._unit

    def pair_dist(self, ia, ib):
        """Exact distances (float64, host) of the pairs (ia[p], ib[p]) of windows of A, B."""
        ia, ib = np.asarray(ia, np.int64), np.asarray(ib, np.int64)
        if len(ia) == 0:
            return np.zeros(0)
        return _pair_dist(self.dev, self.plan, self.A, self.B, ia, ib) * self.unit


def _spec(sides, k):
    p = sides.plan
    return "mp/subdiag.cl.mako", dict(**flags.TEMPLATE, real=p.kernel_real, ereal=p.exact_real,
                                      NORMALIZE=int(sides.normalize),
                                      SELF=int(sides.self_join), K=int(k),
                                      SROWS=SUB_ROWS)


def _scored(sides, prg, diags, fold):
    """``sub_pairs`` over the diagonals ``diags`` in launches whose scores fit PAIR_BYTES,
    each followed by ``fold(diags_dev, q0, nq, buf)`` (the reduction of that launch)."""
    dev, p, A, B, m = sides.dev, sides.plan, sides.A, sides.B, sides.m
    lA, lB = sides.lA, sides.lB
    diags = np.ascontiguousarray(diags, dtype=np.int32)
    nd = len(diags)
    if not nd:
        return
    dA = A.upload(dev, as_columns=False)
    dB = B.upload(dev, as_columns=False)
    size = np.dtype(A.kr).itemsize
    dd = upload_scratch(dev, diags)
    blk = int(min(max(MIN_BLOCK, round_up(2 * m, 64)), max(p.segment, MIN_BLOCK)))
    per = max(1, min(nd, PAIR_BYTES // (lA * size), dev.max_alloc // (lA * size)))
    buf = scratch(dev, per * lA, A.kr)
    pairs = prg.kernel("sub_pairs")
    nb = -(-lA // blk)
    for q0 in range(0, nd, per):
        nq = min(per, nd - q0)
        launch(dev, pairs, round_up(nq * nb, 64), None, dd.data, np.int32(q0), np.int32(nq),
               np.int32(nb), np.int32(blk), np.int32(m), np.int32(lA), np.int32(lB),
               *[dA[x].data for x in ("T", "mu", "df", "dg", "r")],
               *[dB[x].data for x in ("T", "mu", "df", "dg", "r")],
               A.Td.data, A.mu.data, A.ss.data, A.fl.data,
               B.Td.data, B.mu.data, B.ss.data, B.fl.data, buf.data)
        fold(dd, q0, nq, buf)


def diagonal_profile(sides, diags):
    """The (top-k) profile over the diagonals ``diags`` only (j - i = d; self-joins d > the
    exclusion zone, each pair once): dict of host arrays P, I ([l, k], best first, inf / -1
    where a window has no pair) and, for self-joins, left_P, left_I, right_P, right_I."""
    dev, p, A, B, k = sides.dev, sides.plan, sides.A, sides.B, sides.k
    lA, lB = sides.lA, sides.lB
    template, params = _spec(sides, k)
    prg = dev.program(template, **params)
    kr = A.kr
    rowS = fill(dev, scratch(dev, lA * k, kr), -np.inf)
    rowI = fill(dev, scratch(dev, lA * k, np.int32), -1)
    extra = []
    if sides.self_join:
        extra = [fill(dev, scratch(dev, lA, kr), -np.inf), fill(dev, scratch(dev, lA, np.int32), -1),
                 fill(dev, scratch(dev, lA, kr), -np.inf), fill(dev, scratch(dev, lA, np.int32), -1)]
    _scored(sides, prg, diags, lambda dd, q0, nq, buf: launch(
        dev, prg.kernel("sub_reduce"), _fold_items(lA, k), None, dd.data, np.int32(q0),
        np.int32(nq), np.int32(lA), np.int32(lB), buf.data, rowS.data, rowI.data,
        *[a.data for a in extra]))
    # the winners' distances, exactly (inf where none)
    unit = sides.unit
    P = _pair_dist(dev, p, A, B, None, rowI, n=lA * k, per=k)
    I = rowI.get().astype(np.int64).reshape(lA, k)
    P = P.get().astype(np.float64).reshape(lA, k) * unit
    P[I < 0] = np.inf
    if k > 1:       # the exact distances in order (the scores ranked them)
        o = np.argsort(P, axis=1, kind="stable")
        P, I = np.take_along_axis(P, o, 1), np.take_along_axis(I, o, 1)
    out = {"P": P, "I": I}
    if sides.self_join:
        for name, idx in (("left", extra[1]), ("right", extra[3])):
            d = _pair_dist(dev, p, A, A, None, idx, n=lA, per=1).get().astype(np.float64)
            i = idx.get().astype(np.int64)
            d = d * unit
            d[i < 0] = np.inf
            out[name + "_P"], out[name + "_I"] = d, i
    return out


def merge_topk(PA, IA, PB, IB):
    """stumpy's ``_merge_topk_PI`` in place on [l, k] arrays: each row keeps the k smallest of
    its two sorted lists, A's entry first on a tie, B's entries whose index A holds dropped."""
    if PA.shape[1] == 1:
        mask = (PB[:, 0] < PA[:, 0]) & (IB[:, 0] != IA[:, 0])
        PA[mask, 0] = PB[mask, 0]
        IA[mask, 0] = IB[mask, 0]
        return
    k = PA.shape[1]
    dup = (IB[:, :, None] == IA[:, None, :]).any(-1) & (IB >= 0)
    PBx = np.where(dup, np.inf, PB)
    IBx = np.where(dup, -1, IB)
    Pc = np.concatenate([PA, PBx], axis=1)
    Ic = np.concatenate([IA, IBx], axis=1)
    o = np.argsort(Pc, axis=1, kind="stable")[:, :k]
    PA[:] = np.take_along_axis(Pc, o, 1)
    IA[:] = np.take_along_axis(Ic, o, 1)


def _topk_candidates(l, k, rows, dist, idx):
    """The k best (distance, then index) distinct-index candidates per row: [l, k] P, I."""
    P = np.full((l, k), np.inf)
    I = np.full((l, k), -1, np.int64)
    ok = np.isfinite(dist)
    rows, dist, idx = rows[ok], dist[ok], idx[ok]
    if len(rows) == 0:
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
    the sampled windows (``pre_rows`` / ``pre_cols`` of subdiag.cl.mako: only the neighbours
    are read back). Returns (P, I), [l, k]."""
    import pyopencl as cl
    import pyopencl.array as cla

    from .mass import mass
    dev = sides.dev
    lB, m, k, ez = sides.lB, sides.m, sides.k, sides.ez
    Tb = T_A if T_B is None else T_B
    dt = np.float64 if sides.plan.exact_real == "double" else np.float32
    template, params = _spec(sides, k)
    prg = dev.program(template, **params)
    dots = sides.self_join and sides.normalize and dt == np.float64
    if dots:
        A = sides.A
        Tp = cla.zeros(dev.queue, A.n + 8, dt)       # the scaled series, 8 zeros after it
        cl.enqueue_copy(dev.queue, Tp.data, A.Td.data, byte_count=A.n * 8)
    else:
        Td = cla.to_device(dev.queue, np.ascontiguousarray(Tb, dtype=dt))
    win = np.lib.stride_tricks.sliding_window_view(T_A, m)
    per = max(1, min(MASS_BYTES, dev.max_alloc) // (np.dtype(dt).itemsize * lB))
    nn_all = np.full(len(indices), -1, np.int64)
    dn_all = np.full(len(indices), np.inf)
    if sides.self_join:
        colP = fill(dev, scratch(dev, lB * k, dt), np.inf)
        colI = fill(dev, scratch(dev, lB * k, np.int32), -1)
    for c0 in range(0, len(indices), per):
        ii = indices[c0:c0 + per]
        nq = len(ii)
        idx = cla.to_device(dev.queue, ii.astype(np.int32))
        if dots:        # z-normalised self-join: dot products, ranked, refined exactly below
            D = _dot_profiles(sides, prg, win[ii], idx, Tp)
        else:
            Qd = cla.to_device(dev.queue, np.ascontiguousarray(win[ii], dtype=dt))
            D = mass(Qd, Td, normalize=sides.normalize, p=p, device=dev).reshape(nq, lB)
        nn = cla.empty(dev.queue, nq, np.int32)
        dn = cla.empty(dev.queue, nq, dt)
        zone = ez if sides.self_join else -1
        launch(dev, prg.kernel("pre_rows"), round_up(nq, 64), None, D.data, np.int32(nq),
               np.int32(lB), idx.data, np.int32(zone), nn.data, dn.data)
        if sides.self_join:
            launch(dev, prg.kernel("pre_cols"), round_up(lB, 64), None, D.data, np.int32(nq),
                   np.int32(lB), idx.data, np.int32(ez), colP.data, colI.data)
        nn_all[c0:c0 + nq] = nn.get()
        dn_all[c0:c0 + nq] = dn.get()
    ok = (nn_all >= 0) & np.isfinite(dn_all)
    nn_all[~ok] = -1
    if dots:
        dn_all[ok] = sides.pair_dist(indices[ok], nn_all[ok])
    rows, dist, idx = [indices[ok]], [dn_all[ok]], [nn_all[ok]]
    if sides.self_join:
        cP = colP.get().astype(np.float64).reshape(lB, k)
        cI = colI.get().astype(np.int64).reshape(lB, k)
        if dots:
            has = cI >= 0
            cP[has] = sides.pair_dist(np.nonzero(has)[0], cI[has])
        rows.append(np.repeat(np.arange(lB), k))
        dist.append(cP.ravel())
        idx.append(cI.ravel())
    return _refined(sides, T_A, Tb, s, p, indices[ok], nn_all[ok], rows, dist, idx)


def _dot_profiles(sides, prg, windows, idx, Tp):
    """The squared z-normalised distance profiles [nq, l] (device) of the windows
    ``windows`` (host, [nq, m]; their indices ``idx`` on the device) against the scaled series
    ``Tp`` by ``pre_dist`` (dot products with the unit-norm centred queries): they rank the
    candidates, whose distances are then evaluated exactly."""
    import pyopencl.array as cla
    dev, A, l, m = sides.dev, sides.A, sides.lA, sides.m
    nq = len(windows)
    c = windows - windows.mean(axis=1, keepdims=True)
    norm = np.sqrt(np.sum(c * c, axis=1, keepdims=True))
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(norm > 0, c / np.where(norm > 0, norm, 1), 0.0)
    z[~np.isfinite(z)] = 0.0            # flagged windows take the exact rules
    zq = cla.to_device(dev.queue, np.ascontiguousarray(z))
    D = cla.empty(dev.queue, (nq, l), np.float64)
    r = A.upload(dev, as_columns=False, dtype=np.float64)["r"]
    launch(dev, prg.kernel("pre_dist"), (-(-l // 8), -(-nq // 4)), None, np.int32(nq),
           np.int32(l), np.int32(m), zq.data, idx.data, Tp.data, A.mu.data, A.ss.data,
           r.data, A.fl.data, D.data)
    return D


def _refined(sides, T_A, Tb, s, p, ii, jj, rows, dist, idx):
    """The candidates ``rows`` / ``dist`` / ``idx`` (lists of arrays) with preSCRIMP's
    refinement pairs (i +- g, j +- g), g < s, of each sampled window i and its nearest
    neighbour j; the k best per window, [l, k] P and I."""
    lA, lB, k, m = sides.lA, sides.lB, sides.k, sides.m
    # the refinement pairs along each sampled window's diagonal
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
    pa, pb = np.concatenate(fa), np.concatenate(fb)
    if len(pa):
        d = sides.pair_dist(pa, pb) if p == 2.0 or sides.normalize else \
            _minkowski(T_A, Tb, m, pa, pb, p)
        rows += [pa]
        dist += [d]
        idx += [pb]
        if sides.self_join:
            rows += [pb]
            dist += [d]
            idx += [pa]
    return _topk_candidates(lA, k, np.concatenate(rows), np.concatenate(dist),
                            np.concatenate(idx))


def _minkowski(T_A, T_B, m, ia, ib, p):
    """Plain Minkowski distances of the pairs (ia, ib) on the host (inf where a window holds
    NaN / inf)."""
    wa = np.lib.stride_tricks.sliding_window_view(T_A, m)[ia]
    wb = np.lib.stride_tricks.sliding_window_view(T_B, m)[ib]
    with np.errstate(invalid="ignore"):
        d = np.abs(wa - wb)
        out = np.max(d, axis=1) if np.isinf(p) else np.sum(d ** p, axis=1) ** (1.0 / p)
    out[~np.isfinite(out)] = np.inf
    return out


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
    sides = _Sides(T_A, m, T_B, k, bool(normalize), device)
    if s is None:
        s = sides.ez
    indices = np.random.permutation(range(0, sides.lA, s)).astype(np.int64)
    P, I = _prescrump(sides, T_A, T_B, s, indices, p)
    if k == 1:
        return P[:, 0], I[:, 0]
    return P, I


class Scrump:
    """The anytime approximate matrix profile (SCRIMP++), stumpy's ``scrump``: each
    :meth:`update` adds the next share (``percentage`` of the pairs) of the diagonals in a
    random order; after ``ceil(1 / percentage)`` updates the profile is exact.

    Made by :func:`scrump`. Attributes as stumpy's: ``P_``, ``I_`` ([l] for k = 1, else
    [l, k]), ``left_I_``, ``right_I_`` (self-joins; -1 throughout for AB-joins), and
    ``left_P_``, ``right_P_``.
    """

    def __init__(self, T_A, m, T_B=None, *, percentage=0.01, pre_scrump=False, s=None, k=1,
                 normalize=True, p=2.0, device=None):
        T_A = _series(T_A, "T_A")
        T_B = None if T_B is None else _series(T_B, "T_B")
        m, k = _check(T_A, m, T_B, k, percentage, s)
        if not normalize and p != 2.0 and percentage < 1:
            raise NotImplementedError("clts.scrump: the diagonal update below percentage=1 "
                                      "needs p = 2 (Euclidean); use percentage=1 or "
                                      "clts.aamp(T, m, p=p) for other p")
        self._p = float(p)
        self._sides = sd = _Sides(T_A, m, T_B, k, bool(normalize), device)
        self._T_A, self._T_B = T_A, T_B
        self._m, self._k = m, k
        lA, lB = sd.lA, sd.lB
        if sd.self_join and lA <= sd.ez + 1:
            raise ValueError(f"The window size, m = {m}, is too long for a self join of "
                             f"{len(T_A)} values")
        self._P = np.full((lA, k), np.inf)
        self._I = np.full((lA, k), -1, np.int64)
        self._PL = np.full(lA, np.inf)
        self._PR = np.full(lA, np.inf)
        self._IL = np.full(lA, -1, np.int64)
        self._IR = np.full(lA, -1, np.int64)
        if s is None:
            s = sd.ez
        if pre_scrump:
            indices = np.random.permutation(range(0, lA, s)).astype(np.int64)
            P, I = _prescrump(sd, T_A, T_B, s, indices, p)
            merge_topk(self._P, self._I, P, I)
        if sd.self_join:
            self._diags = np.random.permutation(range(sd.ez + 1, lA)).astype(np.int64)
        else:
            self._diags = np.random.permutation(range(-lA + 1, lB)).astype(np.int64)
        self._percentage = float(np.clip(percentage, 0.0, 1.0))
        n_chunks = int(np.ceil(1.0 / percentage))
        d = self._diags
        counts = np.where(d >= 0, np.minimum(lB - d, lA), np.minimum(lB, lA + d))
        self._ranges = _array_ranges(counts, n_chunks)
        self._chunk = 0

    def update(self):
        """Add the next share of the diagonals (nothing once all are done)."""
        from ..runtime.threads import serialised
        serialised(lambda device: self._update())(device=self._sides.dev)

    def _update(self):
        if self._chunk >= len(self._ranges):
            return
        a, b = self._ranges[self._chunk]
        sd = self._sides
        if a == 0 and b == len(self._diags):
            res = self._exact()
        else:
            res = diagonal_profile(sd, self._diags[a:b])
        merge_topk(self._P, self._I, res["P"], res["I"])
        if sd.self_join:
            for side in ("left", "right"):
                Pn, In = res[side + "_P"], res[side + "_I"]
                Po = self._PL if side == "left" else self._PR
                Io = self._IL if side == "left" else self._IR
                mask = Pn < Po
                Po[mask] = Pn[mask]
                Io[mask] = In[mask]
        self._chunk += 1

    def _exact(self):
        """Every diagonal at once: the exact profile of :func:`clts.matrix_profile`."""
        from .aamp import aamp
        from .api import matrix_profile
        sd = self._sides

        def run(k):
            if sd.normalize:
                return matrix_profile(self._T_A, self._m, self._T_B, k=k, device=sd.dev,
                                      progress=False)
            return aamp(self._T_A, self._m, self._T_B, p=self._p, k=k, device=sd.dev,
                        progress=False)
        r = run(self._k)
        out = {"P": np.asarray(r.P, np.float64), "I": np.asarray(r.I, np.int64)}
        if sd.self_join:
            if r.left_P is not None:
                out.update(left_P=np.asarray(r.left_P), left_I=np.asarray(r.left_I),
                           right_P=np.asarray(r.right_P), right_I=np.asarray(r.right_I))
            else:       # top-k: the left / right neighbours from the k = 1 profile
                r1 = run(1)
                out.update(left_P=np.asarray(r1.left_P), left_I=np.asarray(r1.left_I),
                           right_P=np.asarray(r1.right_P), right_I=np.asarray(r1.right_I))
        # the exact profile: no earlier approximation can improve it
        self._P[:] = np.inf
        self._I[:] = -1
        return out

    def _flat(self, a):
        return a[:, 0].copy() if self._k == 1 else a.copy()

    @property
    def P_(self):
        """The (top-k) distances so far ([l] for k = 1, else [l, k])."""
        return self._flat(self._P)

    @property
    def I_(self):
        """Their indices (-1: none yet)."""
        return self._flat(self._I)

    @property
    def left_I_(self):
        """The best neighbour before each window so far (-1: none)."""
        return self._IL.copy()

    @property
    def right_I_(self):
        """The best neighbour after each window so far (-1: none)."""
        return self._IR.copy()

    @property
    def left_P_(self):
        return self._PL.copy()

    @property
    def right_P_(self):
        return self._PR.copy()

    @property
    def done(self):
        """Whether every diagonal has been added (the profile is exact)."""
        return self._chunk >= len(self._ranges)


def _array_ranges(a, n_chunks):
    """stumpy's ``_get_array_ranges(a, n_chunks, truncate=True)``: [start, stop) rows of ``a``
    in ``n_chunks`` runs of about equal sum (empty trailing runs dropped)."""
    out = np.zeros((n_chunks, 2), np.int64)
    if a.shape[0] > 0 and n_chunks > 0:
        cum = a.cumsum() / a.sum()
        idx = 1 + np.searchsorted(cum, np.linspace(0, 1, n_chunks + 1)[1:-1])
        out[1:, 0] = idx
        out[:-1, 1] = idx
        out[-1, 1] = a.shape[0]
        diff = np.diff(idx)
        if np.any(diff == 0):
            cut = int(np.argmin(diff)) + 2
            out[cut:, 0] = a.shape[0]
            out[cut - 1:, 1] = a.shape[0]
            out = out[:cut]
    return out


def scrump(T_A, m, T_B=None, *, percentage=0.01, pre_scrump=False, s=None, k=1,
           normalize=True, p=2.0, device=None):
    """The anytime approximate matrix profile (SCRIMP++), stumpy's ``scrump``.

    Parameters
    ----------
    T_A : array_like, 1-D
    m : int
        Window length (>= 3).
    T_B : array_like, 1-D, optional
        An AB-join's second series (default: a self-join with exclusion zone ceil(m / 4)).
    percentage : float, optional
        Share of the pairs each :meth:`Scrump.update` adds (default 0.01); 1: one update
        computes the exact profile (:func:`clts.matrix_profile`).
    pre_scrump : bool, optional
        Start from :func:`prescrump`'s approximation (SCRIMP++).
    s : int, optional
        preSCRIMP's sampling interval (default ceil(m / 4)).
    k : int, optional
        Neighbours per window.
    normalize : bool, optional
        z-normalised (default) or plain Euclidean distances (p = 2 only).
    device : optional

    Returns
    -------
    Scrump
        Call ``update()``; read ``P_``, ``I_``, ``left_I_``, ``right_I_``.

    Notes
    -----
    The diagonals (and preSCRIMP's windows) are ordered by ``np.random.permutation`` as in
    stumpy, so ``np.random.seed(s)`` before the call gives stumpy's order and, update by
    update, the same profile as ``stumpy.scrump`` up to rounding.

    References
    ----------
    .. [1] Y. Zhu, C.-C. M. Yeh, Z. Zimmerman, K. Kamgar, E. Keogh, "Matrix Profile XI:
       SCRIMP++: Time Series Motif Discovery at Interactive Speeds", ICDM 2018.

    Examples
    --------
    >>> import numpy as np, clts
    >>> T = np.cumsum(np.random.default_rng(0).standard_normal(500))
    >>> approx = clts.scrump(T, 25, percentage=0.1)
    >>> approx.update()
    >>> exact = clts.matrix_profile(T, 25).profile
    >>> bool(np.all(approx.P_ >= exact - 1e-9))
    True
    """
    return Scrump(T_A, m, T_B, percentage=percentage, pre_scrump=pre_scrump, s=s, k=k,
                  normalize=normalize, p=p, device=device)
