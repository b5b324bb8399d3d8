"""``clts.matrix_profile``: exact matrix profile (self-join and AB-join), top-k, on one or
several OpenCL devices. See README section "Matrix profile" and ``plan.py``."""
from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass, field

import numpy as np

from ..runtime import DeviceError, get_device, launch, progress
from ..runtime.memory import max_chunk_env
from .plan import ILL_FACTOR, Plan, make_plan

ULONG_MAX = np.uint64(0xFFFFFFFFFFFFFFFF)
#: independent vectors of windows per work-item of the statistics kernel (stats.cl.mako)
STATS_CHAINS = 4
#: largest k of the in-kernel top-k lists (registers and tile lists grow with k); larger k
#: takes the blocked path (distance-matrix rows on the device, top-k on the host)
TOPK_MAX = 16
#: bytes of the top-k partial lists of one launch (bands per launch are cut to fit)
TOPK_PARTIAL_BYTES = 64 << 20
#: work-items (bands) per compute unit in one top-k launch: fewer launches cost reductions,
#: larger ones insert more (their floors are older); pocl n = 2^15, k = 4: 8 bands per launch
#: (2 compute units) 0.7-1.0 s, 85 bands 2.4 s, 5 bands 1.1 s
TOPK_ITEMS_PER_CU = 4
#: private-memory budget of one work-item's top-k column lists (the tile is cut to fit)
TOPK_PRIVATE_BYTES = 48 << 10
#: ... and of a work-group's (pocl gives each work-group one stack: 32 MiB segfaulted it)
TOPK_PRIVATE_GROUP_BYTES = 1 << 20


@dataclass
class MatrixProfileResult:
    """``P``/``I``: [l, k] distances and indices, best first (inf / -1 where none).
    Self-joins: ``left_I``/``right_I`` (and ``left_P``/``right_P``): nearest neighbour before /
    after each subsequence. AB-joins with ``both=True``: ``P_B``/``I_B`` for T_B against T_A."""
    P: np.ndarray
    I: np.ndarray
    m: int
    exclusion_zone: int | None
    self_join: bool
    normalize: bool
    plan: Plan
    left_P: np.ndarray | None = None
    left_I: np.ndarray | None = None
    right_P: np.ndarray | None = None
    right_I: np.ndarray | None = None
    P_B: np.ndarray | None = None
    I_B: np.ndarray | None = None
    diagnostics: dict = field(default_factory=dict)

    @property
    def profile(self):
        return self.P[:, 0]

    @property
    def index(self):
        return self.I[:, 0]


# ---------------------------------------------------------------------------------------------
# input checks

def _series(T, name):
    if T is None:
        return None
    a = np.asarray(T)
    if a.dtype.kind not in "fiub":
        raise TypeError(f"{name} must be a real-valued 1-D array, got dtype {a.dtype}")
    a = a.astype(np.float64)
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    return a


def _pow2_scale(x) -> float:
    """A power of two near max |x| over the finite values (1 when there is none or it is 0):
    dividing by it is exact and brings the values near 1."""
    fin = x[np.isfinite(x)]
    top = float(np.max(np.abs(fin))) if fin.size else 0.0
    return float(2.0 ** np.frexp(top)[1]) if top > 0 else 1.0


def _affine(x, c, s):
    """(x - c) / s on the finite values; NaN / inf kept (they mark missing windows)."""
    return np.where(np.isfinite(x), (x - c) / s, x)


def _standardise(x, centre):
    """x / s, or (x - c) / s with ``centre``: c the mean of the finite values, s a power of two
    near the largest remaining magnitude (dividing by it is exact); computed after an exact
    first scaling, so nothing overflows."""
    s1 = _pow2_scale(x)
    x1 = _affine(x, 0.0, s1)
    if not centre:
        return x1, s1
    fin = x1[np.isfinite(x1)]
    c = float(np.mean(fin)) if fin.size else 0.0
    x2 = _affine(x1, c, 1.0)
    s2 = _pow2_scale(x2)
    return _affine(x2, 0.0, s2), s1 * s2


def _well_scaled(T_A, T_B, normalize, precision):
    """The series scaled to values near 1 (and, for float32 kernels, centred), and the factor
    that multiplies plain Euclidean distances back (1 for z-normalised ones).

    A z-normalised distance does not depend on a series' offset or scale, but the kernels'
    arithmetic does: squares overflow beyond ~1e154, centred norms underflow below ~1e-160, and
    a float32 kernel loses the variation of a series with a large offset. Each series is divided
    by a power of two near its largest magnitude (exact, so float64 results are unchanged);
    for ``precision="mixed"`` / ``"single"`` it is also centred on its mean first (the float32
    kernel's rounding is far above that of the subtraction). Plain Euclidean distances keep
    their offset invariance only under one common shift and scale for both series, and are
    multiplied back by that scale."""
    centre = precision != "double"
    if normalize:
        A = _standardise(T_A, centre)[0]
        return A, (None if T_B is None else _standardise(T_B, centre)[0]), 1.0
    if T_B is None:
        A, unit = _standardise(T_A, centre)
        return A, None, unit
    both, unit = _standardise(np.concatenate([T_A, T_B]), centre)
    return both[:len(T_A)], both[len(T_A):], unit


def _check(T_A, m, T_B, k, exclusion_zone, precision):
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
    if exclusion_zone is not None and (not isinstance(exclusion_zone, (int, np.integer))
                                       or exclusion_zone < 0):
        raise ValueError(f"exclusion_zone must be None or an int >= 0, got {exclusion_zone!r}")
    if precision not in ("double", "mixed", "single"):
        raise ValueError(f"precision must be 'double', 'mixed' or 'single', got {precision!r}")
    return m


# ---------------------------------------------------------------------------------------------
# per-series preparation: statistics, flags, update coefficients

def _update_coefficients(T, mu, m, nw, normalize):
    """SCAMP's O(1) covariance-update terms ``df``, ``dg`` of the ``nw`` windows of length
    ``m`` of ``T`` (window means ``mu``; plain sums and differences when not normalising)."""
    a = T[m - 1:m - 1 + nw]
    b = np.concatenate([[0.0], T[:nw - 1]])
    if normalize:
        mprev = np.concatenate([[0.0], mu[:-1]])
        df = (a - b) / 2
        dg = (a - mu) + (b - mprev)
    else:
        df = (a + b) / 2
        dg = a - b
    df[0] = dg[0] = 0.0
    return df, dg


class _Side:
    """One series on one device: cleaned values, window statistics and update coefficients."""

    def __init__(self, dev, T, m, plan, normalize, pad):
        import pyopencl.array as cla
        self.n = len(T)
        self.l = self.n - m + 1
        self.m = m
        kr = np.float64 if plan.kernel_real == "double" else np.float32
        er = np.float64 if plan.exact_real == "double" else np.float32
        finite = np.isfinite(T)
        Tc = np.where(finite, T, 0.0)
        if plan.precision == "single":
            Tc = Tc.astype(np.float32).astype(np.float64)
        # windows with a NaN/inf: a running count, O(n)
        c = np.concatenate([[0], np.cumsum(~finite)])
        bad = (c[m:] - c[:-m]) > 0
        # statistics on the device, stably, in the exact precision
        vw, u = _vw(dev), _chains(dev)
        # padded by one work-item's windows: its lanes past the last window read zeros
        Td = cla.to_device(dev.queue, np.concatenate([Tc, np.zeros(vw * u)]).astype(er))
        mu = cla.empty(dev.queue, self.l, er)
        ss = cla.empty(dev.queue, self.l, er)
        fl = cla.empty(dev.queue, self.l, np.int32)
        prg = dev.program("mp/stats.cl.mako", real=plan.exact_real, NORMALIZE=int(normalize),
                          VW=vw, U=u)
        launch(dev, prg.kernel("window_stats"), _ru(-(-self.l // (vw * u)), 16), None,
               Td.data, np.int32(self.l), np.int32(m), mu.data, ss.data, fl.data)
        mu_h = mu.get().astype(np.float64)
        ss_h = ss.get().astype(np.float64)
        flags = fl.get()
        flags[bad] = 1
        self.Td, self.mu, self.ss = Td, mu, ss
        df, dg = _update_coefficients(Tc, mu_h, m, self.l, normalize)
        self.df_h, self.dg_h, self.ss_h, self.mu_h, self.Tc = df, dg, ss_h, mu_h, Tc
        self.flags = flags
        self.kr, self.er, self.pad = kr, er, pad
        self.normalize = normalize

    def mark_ill(self, plan, R):
        """Flag (bit 2) windows too ill-conditioned for the O(1) update: centred norm^2 below
        C * eps * R * S^2 with S^2 = max|df| * max|dg| (the size of one update term)."""
        if not self.normalize:
            return
        ok = self.flags == 0
        if not ok.any():
            return
        S2 = float(np.max(np.abs(self.df_h))) * float(np.max(np.abs(self.dg_h)))
        eps = np.finfo(self.kr).eps
        thr = ILL_FACTOR[plan.precision] * eps * R * S2
        self.flags[ok & (self.ss_h < thr)] |= 4

    def upload(self, dev, plan, as_columns, dtype=None):
        """Device arrays for the diagonal kernel. A column side is the series extended by
        ``pad`` zeros on both sides, with the statistics and update coefficients of the
        extended series' windows (so a diagonal entering the series from j < 0 carries an
        exact covariance); windows outside the series get r = NaN (never a neighbour)."""
        import pyopencl.array as cla
        kr = self.kr if dtype is None else dtype
        m, l = self.m, self.l
        if self.normalize:
            with np.errstate(divide="ignore"):
                r = np.where(self.flags == 0, 1.0 / np.sqrt(np.maximum(self.ss_h, 1e-300)),
                             np.nan)
        else:
            r = np.where(self.flags & 1, np.nan, -self.ss_h / 2)
        P = self.pad if as_columns else 0
        E = (P + m + 64) if as_columns else 0
        Te = np.concatenate([np.zeros(P), self.Tc, np.zeros(E + m)])
        nw = P + l + E                       # windows -P .. l+E-1
        mu = np.zeros(nw)
        mu[P:P + l] = self.mu_h
        if as_columns:
            # windows in the padding: running sums over the two padded ends, O(pad + m)
            for a, b in ((0, P), (P + l, nw)):
                c = np.concatenate([[0.0], np.cumsum(Te[a:b + m - 1])])
                mu[a:b] = (c[m:] - c[:-m]) / m
        df, dg = _update_coefficients(Te, mu, m, nw, self.normalize)
        rr = np.full(nw, np.nan)
        rr[P:P + l] = r
        out = {}
        for name, v in (("df", df), ("dg", dg), ("r", rr), ("mu", mu), ("T", Te[:nw + m])):
            out[name] = cla.to_device(dev.queue, np.ascontiguousarray(v, dtype=kr))
        self.fl_d = cla.to_device(dev.queue, self.flags.astype(np.int32))
        return out


def _vw(dev):
    """Lanes of the statistics / exact-distance loops: 8 on CPUs (pocl vectorises only explicit
    vector types); scalar on GPUs (they vectorise across work-items: 8 lanes x STATS_CHAINS
    windows per work-item took 255 VGPRs and 776 bytes/lane of scratch on gfx908) and on
    Oclgrind, whose uninitialised-value checker crashes on vector loads here."""
    return 1 if getattr(dev.info, "simulator", False) or dev.type != "cpu" else 8


def _chains(dev):
    """Independent windows per lane of the statistics kernels (STATS_CHAINS on CPUs, 1 on GPUs,
    where other work-items hide the latency)."""
    return STATS_CHAINS if dev.type == "cpu" else 1


def _ru(n, m):
    return ((int(n) + m - 1) // m) * m


# ---------------------------------------------------------------------------------------------
# the diagonal kernel over a band range, on one device

def _work_lists(lA, lB, self_join, ez, D, R, b_lo, b_hi, kstart):
    """Per segment s: (s0, desc[int4], kb) of the bands b_lo..b_hi-1 touching rows sR..sR+R."""
    b = np.arange(b_lo, b_hi, dtype=np.int64)
    k0 = kstart + b * D
    if self_join:
        lo = np.zeros_like(k0)
        hi = lA - k0
    else:
        lo = np.maximum(0, -k0 - D + 1)
        hi = np.minimum(lA, lB - k0)
    out = []
    if len(b) == 0:
        return out
    smax = int((hi.max() - 1) // R) if hi.max() > 0 else -1
    for s in range(smax + 1):
        s0 = s * R
        ilo = np.maximum(lo, s0)
        ihi = np.minimum(hi, s0 + R)
        sel = ilo < ihi
        if not sel.any():
            continue
        idx = np.nonzero(sel)[0]
        f, last = idx[0], idx[-1]       # touching bands are consecutive
        assert len(idx) == last - f + 1
        desc = np.zeros((len(idx), 4), np.int32)
        desc[:, 0] = k0[f:last + 1]
        desc[:, 1] = ilo[f:last + 1]
        desc[:, 2] = ihi[f:last + 1]
        out.append((s0, desc, int(k0[f])))
    return out


def split_bands(area, parts: int) -> list[int]:
    """Band bounds ``[0, b1, ..., len(area)]``: ``parts`` runs of consecutive bands with about
    equal total area (pairs), i.e. the triangle split by work, not by diagonal count; each run
    is within one band's area of ``sum / parts``."""
    area = np.asarray(area, float)
    cum = np.concatenate([[0.0], np.cumsum(area)])
    total = cum[-1]
    return ([0] + [int(np.searchsorted(cum, total * i / parts)) for i in range(1, parts)]
            + [len(area)])


def _band_area(lA, lB, self_join, D, nb, kstart):
    k0 = kstart + np.arange(nb) * D
    if self_join:
        return np.maximum(lA - k0, 0).astype(float) * D
    lo = np.maximum(0, -k0 - D + 1)
    hi = np.minimum(lA, lB - k0)
    return np.maximum(hi - lo, 0).astype(float) * D


def _run_diag(dev, plan, A, B, dA, dB, self_join, ez, cols, b_lo, b_hi, kstart, bar, chunk_bands,
              k=1):
    import pyopencl.array as cla
    D, R = plan.band, plan.segment
    lA, lB = A.l, B.l
    atomic = plan.merge == "atomic" and k == 1      # top-k: partial lists, any device
    # room for every column index a padded lane can reach, so packed indices never carry
    idxbits = max(1, int(max(lA, lB) + D + 64).bit_length())
    local = (plan.store if k == 1 else plan.topk_store) == "local"
    params = dict(real=plan.kernel_real, W=plan.lanes, G=plan.groups, L=plan.tile, R=R,
                  NORMALIZE=int(A.normalize), COLS=int(cols), ATOMIC=int(atomic),
                  PACK=int(plan.kernel_real == "double" and k == 1), K=k,
                  LOCAL=int(local), WG=plan.wg if local else 0, UNROLL=plan.unroll,
                  PRECHECK=int(not getattr(dev.info, "simulator", False)))
    if k > 1:
        L, local = _topk_tile(dev, plan, k)
        params.update(L=L, LOCAL=int(local), WG=plan.wg if local else 0)
        # few bands per launch: each launch's reduction raises the entry floors of the next
        chunk_bands = max(1, min(chunk_bands, TOPK_PARTIAL_BYTES // ((2 * R + D) * k * 12),
                                 TOPK_ITEMS_PER_CU * dev.info.compute_units * plan.wg))
    elif local and cols:
        params.update(L=_local_tile(dev, plan))
    prg = dev.program("mp/diag.cl.mako", **params)
    kern = prg.kernel("diag" if k == 1 else "diag_topk")
    kr = A.kr
    q = dev.queue
    if k > 1:
        gRV = cla.to_device(q, np.full(lA * k, -np.inf, kr))
        gRI = cla.to_device(q, np.full(lA * k, -1, np.int32))
        gCV = cla.to_device(q, np.full(lB * k, -np.inf, kr)) if cols else None
        gCI = cla.to_device(q, np.full(lB * k, -1, np.int32)) if cols else None
        nwmax = max(1, min(chunk_bands, b_hi - b_lo))
        rPV = cla.empty(q, nwmax * R * k, kr)
        rPI = cla.empty(q, nwmax * R * k, np.int32)
        if cols:
            cPV = cla.empty(q, nwmax * (R + D) * k, kr)
            cPI = cla.empty(q, nwmax * (R + D) * k, np.int32)
        wfl = cla.empty(q, 2 * nwmax, np.int32)
        red_r = prg.kernel("reduce_rows_k")
        red_c = prg.kernel("reduce_cols_k") if cols else None
    elif atomic:
        rowKey = cla.to_device(q, np.full(lA, ULONG_MAX, np.uint64))
        colKey = cla.to_device(q, np.full(lB, ULONG_MAX, np.uint64)) if cols else None
        outs = [rowKey.data] + ([colKey.data] if cols else [])
    else:
        gRV = cla.to_device(q, np.full(lA, -np.inf, kr))
        gRI = cla.to_device(q, np.full(lA, -1, np.int32))
        gCV = cla.to_device(q, np.full(lB, -np.inf, kr)) if cols else None
        gCI = cla.to_device(q, np.full(lB, -1, np.int32)) if cols else None
        nwmax = max(1, min(chunk_bands, b_hi - b_lo))
        rPV = cla.empty(q, nwmax * R, kr)
        rPI = cla.empty(q, nwmax * R, np.int32)
        if cols:
            cPV = cla.empty(q, nwmax * (R + D), kr)
            cPI = cla.empty(q, nwmax * (R + D), np.int32)
        red_r = prg.kernel("reduce_rows")
        red_c = prg.kernel("reduce_cols") if cols else None
    idxmask = (1 << idxbits) - 1 if plan.kernel_real == "double" else (1 << 32) - 1
    common = [np.int32(A.m), np.int32(lA), np.int32(lB), np.int32(B.pad), np.uint64(idxmask),
              A.dev_arrays["T"].data, A.dev_arrays["mu"].data, A.dev_arrays["df"].data,
              A.dev_arrays["dg"].data, A.dev_arrays["r"].data,
              dB["T"].data, dB["mu"].data, dB["df"].data, dB["dg"].data, dB["r"].data]
    # every launch's work descriptors in one upload, so that the launches below are
    # enqueued without waiting (several devices then run at the same time)
    plan_l = []
    for s0, desc, kb in _work_lists(lA, lB, self_join, ez, D, R, b_lo, b_hi, kstart):
        if k == 1:
            for c0 in range(0, len(desc), chunk_bands):
                plan_l.append((s0, desc[c0:c0 + chunk_bands]))
            continue
        # top-k: launches of 2, 4, 8, ... bands, so that the global lists (the entry floor of
        # the next launches) fill from few candidates and later launches insert almost nothing
        c0, size = 0, min(2, chunk_bands)
        while c0 < len(desc):
            plan_l.append((s0, desc[c0:c0 + size]))
            c0 += size
            size = min(2 * size, chunk_bands)
    if not plan_l:
        plan_l_all = np.zeros((1, 4), np.int32)
    else:
        plan_l_all = np.concatenate([d for _, d in plan_l])
    dd = cla.to_device(q, plan_l_all)
    events = []
    off = 0
    for s0, dsub in plan_l:
        nw = len(dsub)
        gsz = _ru(nw, plan.wg)
        head = (dd.data, np.int32(off), np.int32(nw), np.int32(s0))
        off += nw
        if k > 1:
            pout = [rPV.data, rPI.data, gRV.data, wfl.data] + \
                ([cPV.data, cPI.data, gCV.data] if cols else [])
            launch(dev, kern, gsz, plan.wg, *head, *common, *pout)
            ev = launch(dev, red_r, _ru(R, 64), None, *head[:3], np.int32(s0), np.int32(lA),
                        wfl.data, rPV.data, rPI.data, gRV.data, gRI.data)
            if cols:
                kbc = int(dsub[0, 0])
                ncols = (nw - 1) * D + R + D - 1
                ev = launch(dev, red_c, _ru(ncols, 64), None, *head[:3], np.int32(s0),
                            np.int32(kbc), np.int32(s0 + kbc), np.int32(ncols),
                            np.int32(lB), wfl.data, cPV.data, cPI.data, gCV.data, gCI.data)
        elif atomic:
            ev = launch(dev, kern, gsz, plan.wg, *head, *common, *outs)
        else:
            pout = [rPV.data, rPI.data] + ([cPV.data, cPI.data] if cols else [])
            launch(dev, kern, gsz, plan.wg, *head, *common, *pout)
            ev = launch(dev, red_r, _ru(R, 64), None, np.int32(nw), np.int32(s0),
                        np.int32(lA), rPV.data, rPI.data, gRV.data, gRI.data)
            if cols:
                kbc = int(dsub[0, 0])
                ncols = (nw - 1) * D + R + D - 1
                ev = launch(dev, red_c, _ru(ncols, 64), None, np.int32(nw), np.int32(s0),
                            np.int32(kbc), np.int32(s0 + kbc), np.int32(ncols),
                            np.int32(lB), cPV.data, cPI.data, gCV.data, gCI.data)
        area = float(np.sum((dsub[:, 2] - dsub[:, 1]).astype(float))) * D
        events.append((ev, area))
    yield None          # everything is enqueued: the caller may start the next device
    for e, a in events:
        if e is not None:
            e.wait()
        if bar is not None:
            bar.update(a)
    if k > 1:
        ri = gRI.get().astype(np.int64).reshape(lA, k)
        ci = gCI.get().astype(np.int64).reshape(lB, k) if cols else None
    elif atomic:
        mask = np.uint64((1 << 32) - 1) if plan.kernel_real == "float" else \
            np.uint64((1 << idxbits) - 1)

        def dec(keys):
            k = keys.get()
            idx = (k & mask).astype(np.int64)
            idx[k == ULONG_MAX] = -1
            return idx
        ri = dec(rowKey)
        ci = dec(colKey) if cols else None
    else:
        ri = gRI.get().astype(np.int64)
        ci = gCI.get().astype(np.int64) if cols else None
    yield ri, ci


# ---------------------------------------------------------------------------------------------

def _pair_dist(dev, plan, A, B, ia, ib):
    import pyopencl.array as cla
    n = len(ia)
    if n == 0:
        return np.zeros(0)
    prg = dev.program("mp/exact.cl.mako", real=plan.exact_real, NORMALIZE=int(A.normalize),
                      VW=_vw(dev))
    q = dev.queue
    da = cla.to_device(q, ia.astype(np.int32))
    db = cla.to_device(q, ib.astype(np.int32))
    out = cla.empty(q, n, A.er)
    launch(dev, prg.kernel("pair_dist"), _ru(n, 64), None, np.int32(n), np.int32(A.m),
           da.data, db.data, A.Td.data, A.mu.data, A.ss.data, A.fl_d.data,
           B.Td.data, B.mu.data, B.ss.data, B.fl_d.data, out.data)
    d = out.get().astype(np.float64)
    d[(ia < 0) | (ib < 0)] = np.inf
    return d


def _scan(dev, plan, kind, qs, X, Y, ez):
    """kind 'rows': for each q in qs (windows of X) best over Y; 'cols': for each window of Y,
    best over qs of X. Returns (lv, li, rv, ri)."""
    import pyopencl.array as cla
    q = dev.queue
    prg = dev.program("mp/exact.cl.mako", real=plan.exact_real, NORMALIZE=int(X.normalize),
                      VW=_vw(dev))
    nout = len(qs) if kind == "rows" else Y.l
    dq = cla.to_device(q, np.asarray(qs, np.int32) if len(qs) else np.zeros(1, np.int32))
    outs = [cla.empty(q, max(nout, 1), t) for t in (X.er, np.int32, X.er, np.int32)]
    launch(dev, prg.kernel("scan_" + kind), _ru(max(nout, 1), 64), None, np.int32(len(qs)),
           np.int32(X.m), np.int32(Y.l), np.int32(ez), dq.data,
           X.Td.data, X.mu.data, X.ss.data, X.fl_d.data,
           Y.Td.data, Y.mu.data, Y.ss.data, Y.fl_d.data, *[o.data for o in outs])
    res = [o.get()[:nout] for o in outs]
    return (res[0].astype(np.float64), res[1].astype(np.int64),
            res[2].astype(np.float64), res[3].astype(np.int64))


def _better(d1, i1, d2, i2):
    """Element-wise best of two candidate sets: smaller distance, then smaller index."""
    take = (i2 >= 0) & ((i1 < 0) | (d2 < d1) | ((d2 == d1) & (i2 < i1)))
    return np.where(take, d2, d1), np.where(take, i2, i1)


def _devices(devices):
    if devices is None:
        return [get_device(None)]
    if isinstance(devices, (list, tuple)):
        if not devices:
            raise ValueError("devices must be None, a device, or a non-empty list of devices")
        return [get_device(d) for d in devices]
    return [get_device(devices)]


def _compute(T_A, m, T_B, k, exclusion_zone, normalize, precision, devices, both, plan,
             overrides, show_progress):
    T_A = _series(T_A, "T_A")
    T_B = _series(T_B, "T_B")
    devs = _devices(devices)
    if precision is None:   # float64 where every device has it, else float32 throughout
        precision = "double" if all(d.fp64 for d in devs) else "single"
    m = _check(T_A, m, T_B, k, exclusion_zone, precision)
    self_join = T_B is None
    T_A, T_B, unit = _well_scaled(T_A, T_B, normalize, precision)
    for d in devs:
        if precision != "single" and not d.fp64:
            raise DeviceError(f"device {d} lacks cl_khr_fp64 (double precision), needed by "
                              f"precision={precision!r}; use precision='single' (the default "
                              "on such devices)")
    dev = devs[0]
    p = make_plan(dev, precision=precision, plan=plan, m=m, **overrides)
    ez = int(math.ceil(m / 4)) if exclusion_zone is None else int(exclusion_zone)
    if not self_join:
        ez_arg = -1
    else:
        ez_arg = ez
    t0 = time.perf_counter()
    pad = p.band + p.tile + 64
    sides = {}

    def side(d, key, T):
        if (d.slug, key) not in sides:
            s = _Side(d, T, m, p, normalize, pad)
            s.mark_ill(p, p.segment)
            sides[(d.slug, key)] = s
        return sides[(d.slug, key)]
    A = side(dev, "A", T_A)
    B = A if self_join else side(dev, "B", T_B)
    lA, lB = A.l, B.l
    diag = {"special_A": int(np.sum(A.flags & 6 > 0)),
            "special_B": int(np.sum(B.flags & 6 > 0)), "nan_A": int(np.sum(A.flags & 1)),
            "nan_B": int(np.sum(B.flags & 1)), "devices": [d.slug for d in devs]}
    if k > 1:
        res = _topk(devs, p, A, B, self_join, ez, k, both, side, T_A, T_B, show_progress)
    else:
        res = _top1(devs, p, A, B, self_join, ez, ez_arg, both, side, T_A, T_B, show_progress)
    if unit != 1.0:          # plain Euclidean distances scale with the series
        for key in ("P", "left_P", "right_P", "P_B"):
            if res.get(key) is not None:
                res[key] = res[key] * unit
    diag["seconds"] = time.perf_counter() - t0
    return MatrixProfileResult(m=m, exclusion_zone=ez if self_join else None,
                               self_join=self_join, normalize=normalize, plan=p,
                               diagnostics=diag, **res)


def _diag_all(devs, p, A0, B0, self_join, ez, cols, side, T_A, T_B, show_progress, k=1):
    """Run the diagonal kernel over all bands, split between ``devs`` by area; returns one
    (row indices, column indices) per device ([l] for k = 1, [l, k] for k > 1)."""
    D = p.band
    lA, lB = A0.l, B0.l
    kstart = ez + 1 if self_join else -(lA - 1)
    nb = 0
    if self_join:
        nb = max(0, -(-(lA - kstart) // D)) if lA > kstart else 0
    else:
        nb = -(-(lB - 1 - kstart + 1) // D)
    area = _band_area(lA, lB, self_join, D, nb, kstart)
    total = float(area.sum())
    bounds = split_bands(area, len(devs))
    bar = None
    if show_progress and total > 5e9:
        desc = "matrix profile"
        est = _cached_estimate(devs[0], p.precision, total)
        if est is not None:
            desc += f" (estimate {est / len(devs):.0f} s)"
        bar = progress(range(1), total=total, desc=desc, unit="pair")
        if not hasattr(bar, "update"):
            bar = None
    chunk_bands = max(1, int(min(1 << 14, (devs[0].max_alloc // 4) // (p.segment + D) // 8)))
    env = max_chunk_env()
    if env:
        chunk_bands = min(chunk_bands, env)
    running = []
    for di, d in enumerate(devs):
        b_lo, b_hi = bounds[di], bounds[di + 1]
        if b_hi <= b_lo:
            continue
        A = side(d, "A", T_A)
        B = A if self_join else side(d, "B", T_B)
        A.dev_arrays = A.upload(d, p, as_columns=False)
        dB = B.upload(d, p, as_columns=True)
        run = _run_diag(d, p, A, B, None, dB, self_join, ez, cols, b_lo, b_hi, kstart, bar,
                        chunk_bands, k)
        next(run)                       # enqueue on this device, then go to the next one
        running.append(run)
    partial = [next(run) for run in running]
    if bar is not None:
        bar.close()
    return partial


def _top1(devs, p, A0, B0, self_join, ez, ez_arg, both, side, T_A, T_B, show_progress):
    lA, lB = A0.l, B0.l
    cols = self_join or both
    partial = _diag_all(devs, p, A0, B0, self_join, ez, cols, side, T_A, T_B, show_progress)
    ri = np.full(lA, -1, np.int64)
    ci = np.full(lB, -1, np.int64) if cols else None
    dev = devs[0]
    A, B = A0, B0
    # exact re-evaluation of every device's winner, then the best over devices
    rd = np.full(lA, np.inf)
    cd = np.full(lB, np.inf) if cols else None
    for pri, pci in partial:
        d1 = _pair_dist(dev, p, A, B, np.arange(lA), pri)
        rd, ri = _better(rd, ri, d1, pri)
        if cols:
            d2 = _pair_dist(dev, p, B, A, np.arange(lB), pci)
            cd, ci = _better(cd, ci, d2, pci)
    # special (constant / ill-conditioned) windows: exact scans
    SA = np.nonzero(A.flags & 6)[0]
    SB = SA if self_join else np.nonzero(B.flags & 6)[0]
    if self_join:
        left_d, left_i = cd, ci
        right_d, right_i = rd, ri
        if len(SA):
            lv, li, rv, rj = _scan(dev, p, "rows", SA, A, A, ez)
            left_d[SA], left_i[SA] = _better(left_d[SA], left_i[SA], lv, li)
            right_d[SA], right_i[SA] = _better(right_d[SA], right_i[SA], rv, rj)
            lv, li, rv, rj = _scan(dev, p, "cols", SA, A, A, ez)
            left_d, left_i = _better(left_d, left_i, lv, li)
            right_d, right_i = _better(right_d, right_i, rv, rj)
        P, I = _better(right_d, right_i, left_d, left_i)
        return dict(P=P[:, None], I=I[:, None], left_P=left_d, left_I=left_i,
                    right_P=right_d, right_I=right_i)
    if len(SA):
        _, _, rv, rj = _scan(dev, p, "rows", SA, A, B, -1)
        rd[SA], ri[SA] = _better(rd[SA], ri[SA], rv, rj)
    if len(SB):
        _, _, rv, rj = _scan(dev, p, "cols", SB, B, A, -1)
        rd, ri = _better(rd, ri, rv, rj)
    out = dict(P=rd[:, None], I=ri[:, None])
    if both:
        if len(SB):
            _, _, rv, rj = _scan(dev, p, "rows", SB, B, A, -1)
            cd[SB], ci[SB] = _better(cd[SB], ci[SB], rv, rj)
        if len(SA):
            _, _, rv, rj = _scan(dev, p, "cols", SA, A, B, -1)
            cd, ci = _better(cd, ci, rv, rj)
        out.update(P_B=cd[:, None], I_B=ci[:, None])
    return out


def _block_profile(dev, p, A, B, self_join, ez, k):
    """k nearest neighbours of every window of A in B from blocks of the distance matrix."""
    import pyopencl.array as cla
    q = dev.queue
    # the k > 1 path runs in the exact precision (float64 unless precision="single")
    dA = A.upload(dev, p, as_columns=False, dtype=A.er)
    dB = B.upload(dev, p, as_columns=False, dtype=B.er)
    prg = dev.program("mp/exact.cl.mako", real=p.exact_real, NORMALIZE=int(A.normalize),
                      VW=_vw(dev))
    lA, lB = A.l, B.l
    Bk = max(1, min(p.block_rows, lA, (dev.max_alloc // 8) // max(lB, 1)))
    out = cla.empty(q, Bk * lB, A.er)
    TAk = dA["T"]
    P = np.full((lA, k), np.inf)
    I = np.full((lA, k), -1, np.int64)
    li = np.full(lA, -1, np.int64)
    rix = np.full(lA, -1, np.int64)
    flA = A.fl_d
    flB = B.fl_d
    cols = np.arange(lB)
    for i0 in range(0, lA, Bk):
        nr = min(Bk, lA - i0)
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


def _topk_blocked(dev, p, A, B, self_join, ez, k, both):
    """k > TOPK_MAX: rows of the distance matrix on the device, top-k on the host."""
    res = _block_profile(dev, p, A, B, self_join, ez, k)
    if not self_join and both:
        rb = _block_profile(dev, p, B, A, False, ez, k)
        res.update(P_B=rb["P"], I_B=rb["I"])
    return res


def _local_tile(dev, plan):
    """Rows per tile of the k = 1 kernel with store="local": ``plan.tile``, fewer where the
    work-group's column bests ((tile + band) slots of ``lanes`` values) would not fit."""
    per = plan.lanes * (8 if plan.kernel_real == "double" else 8)   # packed / value + index
    L = min(plan.tile, (dev.local_mem - 1024) // max(plan.wg, 1) // per - plan.band)
    if L < 1:
        from ..runtime import DeviceError
        raise DeviceError(f"device {dev}: store='local' needs {(plan.band + 1) * per} bytes "
                          f"of local memory per work-item (band {plan.band}, wg {plan.wg}), "
                          f"{dev.local_mem} available; use store='private'")
    return L


def _topk_tile(dev, plan, k):
    """(rows per tile, local) of the top-k kernel: ``plan.tile``, fewer where a tile's column
    lists ((tile + band) x k entries) would not fit the device's local memory (per work-item of
    a group; topk_store="local") or TOPK_PRIVATE_BYTES of private memory. Where not even one
    row fits in local memory, private memory, with a warning."""
    rs = 8 if plan.kernel_real == "double" else 4
    per = k * (rs + 4) + rs
    local = plan.topk_store == "local"
    if local and (dev.local_mem - 1024) // max(plan.wg, 1) // per - plan.band < 1:
        import warnings
        warnings.warn(f"clts.matrix_profile: k={k} lists of band {plan.band} x wg {plan.wg} do "
                      f"not fit the {dev.local_mem} bytes of local memory of {dev}; "
                      "topk_store='private' used", stacklevel=4)
        local = False
    if local:
        budget = (dev.local_mem - 1024) // max(plan.wg, 1)
    else:
        budget = min(TOPK_PRIVATE_BYTES, TOPK_PRIVATE_GROUP_BYTES // max(plan.wg, 1))
    L = min(plan.tile, budget // per - plan.band)
    if L < 1:
        from ..runtime import DeviceError
        raise DeviceError(f"device {dev}: the top-k column lists of one work-item (band "
                          f"{plan.band}, k={k}) need {(plan.band + 1) * per} bytes of "
                          f"private memory, {budget} available; use a smaller band")
    return L, local


def _merge_k(P, I, Pc, Ic, k):
    """Row-wise k best of two candidate sets [n, a] and [n, b]: smaller distance, then smaller
    index; index -1 or an infinite distance is no candidate."""
    Pa = np.concatenate([P, Pc], axis=1)
    Ia = np.concatenate([I, Ic], axis=1)
    bad = (Ia < 0) | ~np.isfinite(Pa)
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
    prg = dev.program("mp/exact.cl.mako", real=p.exact_real, NORMALIZE=int(X.normalize),
                      VW=_vw(dev), K=k)
    lY = Y.l
    dq = cla.to_device(q, np.asarray(S, np.int32))
    args = (X.Td.data, X.mu.data, X.ss.data, X.fl_d.data,
            Y.Td.data, Y.mu.data, Y.ss.data, Y.fl_d.data)

    def lists(kind, n, *head):
        outs = [cla.empty(q, n * k, t) for t in (X.er, np.int32, X.er, np.int32)]
        launch(dev, prg.kernel(kind), _ru(n, 64), None, np.int32(len(S)), np.int32(X.m),
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


def _topk(devs, p, A0, B0, self_join, ez, k, both, side, T_A, T_B, show_progress):
    """k nearest neighbours from the diagonal kernel's in-kernel top-k lists, re-evaluated
    exactly; special windows from exact rows. k > TOPK_MAX: the blocked path."""
    if k > TOPK_MAX:
        return _topk_blocked(devs[0], p, A0, B0, self_join, ez, k, both)
    lA, lB = A0.l, B0.l
    cols = self_join or both
    partial = _diag_all(devs, p, A0, B0, self_join, ez, cols, side, T_A, T_B, show_progress,
                        k=k)
    dev = devs[0]
    A, B = A0, B0
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
        return np.nonzero(X.flags & 6)[0] if X.normalize else np.zeros(0, np.int64)
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


# ---------------------------------------------------------------------------------------------
# the first row and column of QT (a parallel sliding dot product)

def _qt_starts(dev, plan, A, dA, dB, pad, desc, ncol, dtype=None):
    """QT[ilo, ilo + k0 + c], c < ncol, for every work descriptor (k0, ilo, ...) in ``desc``
    (int4 rows, as _work_lists makes them): a device array [len(desc) * ncol]. ``dA`` / ``dB``
    are the row / column device arrays of ``_Side.upload`` (the column side padded by ``pad``)."""
    import pyopencl.array as cla
    q = dev.queue
    real = "double" if (dtype or A.kr) == np.float64 else "float"
    vw, u = _vw(dev), _chains(dev)
    prg = dev.program("mp/stats.cl.mako", real=real, NORMALIZE=int(A.normalize), VW=vw, U=u)
    n = len(desc)
    dd = cla.to_device(q, np.ascontiguousarray(desc, np.int32).reshape(-1, 4))
    out = cla.empty(q, max(n * ncol, 1), dA["T"].dtype)
    nq = -(-ncol // (vw * u))
    launch(dev, prg.kernel("qt_starts"), _ru(n * nq, 16), None, dd.data, np.int32(0),
           np.int32(n), np.int32(A.m), np.int32(ncol), np.int32(pad), dA["T"].data,
           dA["mu"].data, dB["T"].data, dB["mu"].data, out.data)
    return out


# ---------------------------------------------------------------------------------------------
# the public callable, with .estimate

class _MatrixProfile:
    """clts.matrix_profile(T_A, m, T_B=None, *, k=1, exclusion_zone=None, normalize=True,
    precision=None, devices=None, both=False, plan=None, progress=True, **plan_overrides)

    Exact matrix profile. ``precision``: "double", "mixed" or "single"; None (default):
    "double" where every device has cl_khr_fp64, else "single". Self-join when ``T_B`` is None (pairs with |i - j| <= exclusion_zone,
    default ceil(m/4), excluded), else AB-join of every subsequence of ``T_A`` against ``T_B``
    (``both=True`` also returns ``T_B``'s profile against ``T_A``). Returns a
    ``MatrixProfileResult`` with ``P``/``I`` of shape [l, k] (best first) and, for self-joins,
    ``left_I``/``right_I``. Subsequences with NaN/inf: P = inf, I = -1, never neighbours; two
    constant subsequences are at distance 0, a constant and a non-constant one at sqrt(m).
    ``devices``: a device, a list of devices (diagonals split by equal area), or None.
    Plan fields (lanes, groups, tile, segment, wg, merge, block_rows) may be forced by keyword.
    """

    def __call__(self, T_A, m, T_B=None, *, k=1, exclusion_zone=None, normalize=True,
                 precision=None, devices=None, both=False, plan=None, progress=True,
                 **plan_overrides):
        res = _compute(T_A, m, T_B, k, exclusion_zone, bool(normalize), precision, devices,
                       bool(both), plan, plan_overrides, progress)
        if (T_B is None and k == 1 and normalize and plan is None and not plan_overrides
                and len(res.diagnostics.get("devices", ())) == 1):
            # a k = 1 self-join with the default plan on one device: one more point of the
            # run-time law that ``estimate`` uses (see _record_run)
            _record_run(_devices(devices)[0], res.plan, _self_pairs(len(T_A), res.m,
                                                                    res.exclusion_zone),
                        res.diagnostics["seconds"])
        return res

    def estimate(self, n, m, device=None, *, n_B=None, precision="double", recalibrate=False):
        """Predicted seconds of a k=1 matrix profile of a length-``n`` series (self-join; an
        AB-join with ``n_B``) on ``device``: the seed's n^2 law through the fastest measured
        run of each size (interpolated between sizes, anchored at the nearest beyond them):
        a one-time calibration (two sizes in the n^2 regime, minimum of repeats), refined by
        the k=1 self-joins this device has run since (see README, "Run-time estimate").
        ``recalibrate=True`` measures again."""
        dev = get_device(device)
        pred = _model(dev, precision, recalibrate)
        l = n - m + 1
        if n_B is None:
            pairs = _self_pairs(n, m, math.ceil(m / 4))
        else:
            pairs = l * (n_B - m + 1)
        return pred(pairs)

    def __repr__(self):
        return "<clts.matrix_profile>"


# ---------------------------------------------------------------------------------------------
# run-time estimate: calibration, records of real runs, the fit
#
# One JSON file per device and precision in the user cache directory, valid for one clts
# version, kernel source and default plan: the calibration (two sizes, the minimum of
# CAL_REPEATS runs each, the machine load per CPU before it) and the last RUNS_KEPT k=1
# self-joins at least as large as the smaller calibration size. The prediction uses the fastest
# run of each half-octave of pairs (timing noise on a shared machine only ever adds time).

CAL_SCHEMA = 2
#: calibration: series lengths; None -> the first power of two from CAL_START whose run takes
#: CAL_MIN_SECONDS (so that both sizes are in the n^2 regime on any device), and twice that
#: (CAL_START is itself large enough on a 2-core CPU, so load cannot push the sizes below it)
CAL_SIZES = None
CAL_START = 1 << 15
CAL_MAX = 1 << 20
CAL_MIN_SECONDS = 0.15
CAL_REPEATS = 5
#: the fixed cost of a run, in the extrapolation beyond the measured sizes, at most this
#: fraction of the smaller of the two nearest sizes' times
INTERCEPT_MAX = 0.1
CAL_M = 256
#: recorded runs kept per file
RUNS_KEPT = 32
#: a calibration taken at this load per CPU or more is redone once the load has dropped by
#: LOAD_DROP per CPU
LOADED, LOAD_DROP = 0.5, 0.5


def _self_pairs(n, m, ez):
    l = n - m + 1
    return max(l - ez - 1, 0) * max(l - ez, 0) / 2


def _load_per_cpu():
    try:
        return os.getloadavg()[0] / (os.cpu_count() or 1)
    except (OSError, AttributeError):
        return 0.0


def _cal_path(dev, precision):
    from ..runtime.icd import cache_dir
    d = cache_dir() / "mp"
    d.mkdir(parents=True, exist_ok=True)
    return d / f"calibration-{dev.fingerprint}-{precision}.json"


_CODE = []


def _code_key(dev, precision):
    """What a calibration is valid for: clts version, kernel sources, the default plan (its
    segment, which scales with m, left out)."""
    if not _CODE:
        import hashlib
        from pathlib import Path
        from .. import __version__
        h = hashlib.sha1(__version__.encode())
        tdir = Path(__file__).resolve().parents[1] / "templates" / "mp"
        for f in sorted(tdir.glob("*.cl.mako")):
            h.update(f.read_bytes())
        _CODE.append(f"{__version__}/{h.hexdigest()[:12]}")
    from dataclasses import replace
    p = make_plan(dev, precision=precision, m=CAL_M)
    return f"{_CODE[0]}/{replace(p, segment=0)!r}"


def _read(path):
    try:
        data = json.loads(path.read_text())
        return data if data.get("schema") == CAL_SCHEMA else None
    except (OSError, ValueError, AttributeError):
        return None


def _write(path, data):
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)


def _stale(data, key, load_now):
    """Why ``data`` cannot be used (a string), or None."""
    if data is None or not data.get("calibration"):
        return "no calibration"
    if data.get("key") != key:
        return "clts version, kernels or default plan changed"
    cal = data["calibration"]
    if cal.get("load", 0.0) >= LOADED and load_now <= cal["load"] - LOAD_DROP:
        return "calibrated on a loaded machine, now quieter"
    return None


def _points(data):
    pts = [(p, t) for _, p, t in data["calibration"]["points"]]
    pts += [(r[0], r[1]) for r in data.get("runs", [])]
    return pts


def _predictor(points):
    """t(pairs) from measured (pairs, seconds): per half-octave of pairs the fastest run; between
    two sizes the line through them; beyond the measured sizes the n^2 law anchored at the
    nearest size, t = a + (t_A - a) * pairs / pairs_A, with the fixed cost a the intercept of the
    line through the two nearest sizes kept within [0, INTERCEPT_MAX * their smaller time] (a
    two-point line extrapolated far amplifies the timing noise of both points; anchoring at one
    point does not, and the fixed cost of a run in the n^2 regime is small)."""
    best = {}
    for p, t in points:
        if p > 0 and t > 0:
            key = round(2 * math.log2(p))
            if key not in best or t / p < best[key][1] / best[key][0]:
                best[key] = (float(p), float(t))
    env = sorted(best.values())
    if not env:
        raise ValueError("no measured run to estimate from")

    def anchored(pairs, anchor, other):
        (pa, ta), (po, to) = anchor, other
        b = (ta - to) / (pa - po)
        a = ta - b * pa
        a = 0.0 if b <= 0 else min(max(a, 0.0), INTERCEPT_MAX * min(ta, to))
        return a + (ta - a) * pairs / pa

    def predict(pairs):
        pairs = float(pairs)
        if len(env) == 1:
            return env[0][1] * pairs / env[0][0]
        if pairs >= env[-1][0]:
            return anchored(pairs, env[-1], env[-2])
        if pairs <= env[0][0]:
            return anchored(pairs, env[0], env[1])
        i = int(np.searchsorted([e[0] for e in env], pairs))
        (p0, t0), (p1, t1) = env[i - 1], env[i]
        if t1 <= t0:        # noise: the n^2 law of the nearer size
            pn, tn = env[i] if pairs / p0 > p1 / pairs else env[i - 1]
            return tn * pairs / pn
        return t0 + (t1 - t0) * (pairs - p0) / (p1 - p0)
    return predict


def _cal_time(dev, precision, n):
    """Wall seconds of one k=1 self-join of a random walk of length n (not recorded)."""
    T = np.cumsum(np.random.default_rng(n).standard_normal(n))
    t0 = time.perf_counter()
    _compute(T, CAL_M, None, 1, None, True, precision, dev, False, None, {}, False)
    return time.perf_counter() - t0


def _calibrate(dev, precision):
    load = _load_per_cpu()
    times = {}
    if CAL_SIZES:
        sizes = tuple(CAL_SIZES)
    else:
        n = CAL_START
        while True:
            _cal_time(dev, precision, n)                    # build, warm caches
            times[n] = [_cal_time(dev, precision, n)]
            if times[n][0] >= CAL_MIN_SECONDS or n >= CAL_MAX:
                break
            n *= 2
        sizes = (n, 2 * n)
    if len(sizes) != 2 or sizes[1] <= sizes[0]:
        raise ValueError(f"calibration sizes must be two increasing lengths, got {sizes}")
    pts = []
    for n in sizes:
        ts = times.get(n, [])
        if not ts:
            _cal_time(dev, precision, n)
        while len(ts) < CAL_REPEATS:
            ts.append(_cal_time(dev, precision, n))
        pts.append([n, _self_pairs(n, CAL_M, math.ceil(CAL_M / 4)), min(ts)])
    return {"date": time.time(), "load": round(load, 3), "cpus": os.cpu_count(),
            "m": CAL_M, "repeats": CAL_REPEATS, "points": pts}


def _model(dev, precision="double", recalibrate=False):
    path = _cal_path(dev, precision)
    key = _code_key(dev, precision)
    data = _read(path)
    if recalibrate or _stale(data, key, _load_per_cpu()):
        runs = data.get("runs", []) if data and data.get("key") == key and not recalibrate \
            else []
        data = {"schema": CAL_SCHEMA, "key": key, "calibration": _calibrate(dev, precision),
                "runs": runs}
        _write(path, data)
    return _predictor(_points(data))


def _record_run(dev, plan, pairs, seconds):
    """Add one k=1 self-join to the calibration file of its device and precision (if it is
    valid for this code and plan, and the run at least as large as the smaller calibration
    size: smaller runs are not in the n^2 regime)."""
    try:
        path = _cal_path(dev, plan.precision)
        data = _read(path)
        key = _code_key(dev, plan.precision)
        if data is None or data.get("key") != key or not data.get("calibration"):
            return
        from dataclasses import replace
        if replace(plan, segment=0) != replace(make_plan(dev, precision=plan.precision,
                                                         m=CAL_M), segment=0):
            return
        if pairs < min(p for _, p, _ in data["calibration"]["points"]):
            return
        runs = data.setdefault("runs", [])
        runs.append([float(pairs), float(seconds), round(_load_per_cpu(), 3), time.time()])
        del runs[:-RUNS_KEPT]
        _write(path, data)
    except (OSError, ValueError, KeyError, TypeError):
        pass            # the estimate is a convenience: never fail a computation for it


def _cached_estimate(dev, precision, pairs):
    """Seconds predicted from a calibration already on disk (never runs one), else None."""
    try:
        data = _read(_cal_path(dev, precision))
        if _stale(data, _code_key(dev, precision), 0.0):
            return None
        return _predictor(_points(data))(pairs)
    except (OSError, ValueError, KeyError, TypeError):
        return None


matrix_profile = _MatrixProfile()
