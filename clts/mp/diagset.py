"""The matrix profile over a chosen set of diagonals (the anytime profile's updates,
:mod:`clts.mp.scrump`; preSCRIMP, :mod:`clts.mp.prescrump`): the device side of one (series, m)
(``_Sides``: the prepared windows of ``Join``), the pair scores of the chosen diagonals and
their fold (``subdiag.cl.mako``), the winners' exact distances, and stumpy's merge of two
(top-k) profiles."""
from __future__ import annotations

import math

import numpy as np

from ..runtime import get_device, launch, round_up
from ..runtime.launch import fixed_local
from ..runtime.memory import fill, scratch, upload_scratch
from . import flags
from .api import _series as _api_series, check_arguments
from .exact import _pair_dist
from .join import Join
from .local_size import ITEM_LOCAL
from .plan import Problem, make_plan
from .series import PAD_SLACK

#: bytes of one launch's pair scores (diagonals per launch are cut to fit)
PAIR_BYTES = 64 << 20
#: rows per work-item of ``sub_pairs`` (each block starts with an exact O(m) covariance):
#: at least this, at least 2 m, at most the plan's segment (the ill-conditioning test's span)
MIN_BLOCK = 256
#: rows per work-item of ``sub_reduce`` (k = 1): 1 measured fastest on pocl (1.5 s for every
#: diagonal at n = 10,000; 8 rows: 6.8 s, 32: 4.0 s)
SUB_ROWS = 1

#: profile keys of the sub-diagonal program (subdiag.cl.mako, section ``mp.subdiag``):
#: preSCRIMP's screen (``pre_fused`` / ``pre_fused32``) takes ``fused_windows`` windows a
#: work-item (a multiple of FUSED_WINDOW_STEP: 8-wide double and 16-wide float vectors) and
#: ``fused_queries`` queries a step, its kernels the sub-group size ``subgroup`` on Intel
#: GPUs (0: the compiler picks); ``grf``: the register file per hardware thread IGC gives the
#: whole program (0: the driver's default)
SUBDIAG_KEYS = {"fused_windows": "mp.subdiag.fused_windows",
                "fused_queries": "mp.subdiag.fused_queries",
                "subgroup": "mp.subdiag.subgroup", "grf": "mp.subdiag.grf"}
FUSED_WINDOW_STEP = 16

#: stumpy's exclusion-zone denominator: ceil(m / 4)
EXCL_ZONE_DENOM = 4


def _fold_items(lA, k, self_join=False):
    """Work-items of ``sub_reduce``: SUB_ROWS rows each for k = 1, one row each for k > 1;
    ``sub_reduce_self8`` (self-joins at k = 1): 8 rows each."""
    if k == 1 and self_join:
        return round_up(-(-lA // 8), 64)
    return round_up(-(-lA // SUB_ROWS) if k == 1 else lA, 64)


def _series(T, name):
    """A host series as float64 (``matrix_profile``'s rules); device arrays are refused."""
    from ..runtime.arrays import is_device_array
    if is_device_array(T):
        raise TypeError(f"{name} must be a numpy array (array_like) here, got a device array")
    return _api_series(T, name)


def _check(T_A, m, T_B, k, percentage, s):
    m = check_arguments(T_A, m, T_B, k, None, "double")
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

    def __init__(self, T_A, m, T_B, k, normalize, device, p=2.0):
        self.dev = get_device(device)
        self.p = float(p)
        self._T = (T_A, T_A if T_B is None else T_B)
        self._raw = None
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

    def __reduce__(self):
        # pickled (an anytime Scrump saved or sent to a Dask worker) as its inputs: the
        # receiving process prepares its own device side, the same on the same device
        T_A, T_B = self._T
        return (_Sides, (T_A, self.m, None if self.self_join else T_B, self.k, self.normalize,
                         self.dev, self.p))

    @property
    def unit(self):
        """The factor of plain Euclidean distances (the series were scaled); 1 z-normalised."""
        if self._unit is None:
            self._unit = 1.0 if self.normalize else float(self.A.scale.get()[3])
        return self._unit

    @property
    def plain_p(self):
        """Plain distances of an order p other than 2 (the diagonal update's ``sub_pairs_p``)."""
        return not self.normalize and self.p != 2.0

    def raw(self):
        """``sub_pairs_p``'s device arrays: the raw series A, B in the exact precision
        (non-finite values as 0) and their windows' finiteness (int32, 1: finite), uploaded
        once."""
        if self._raw is None:
            import pyopencl.array as cla
            dt = np.float64 if self.plan.exact_real == "double" else np.float32
            out = []
            for T in self._T:
                fin = np.isfinite(T)
                ok = np.lib.stride_tricks.sliding_window_view(fin, self.m).all(axis=1)
                out += [cla.to_device(self.dev.queue, np.where(fin, T, 0.0).astype(dt)),
                        cla.to_device(self.dev.queue, ok.astype(np.int32))]
            self._raw = out
        return self._raw

    def pair_dist(self, ia, ib):
        """Exact distances (float64, host) of the pairs (ia[p], ib[p]) of windows of A, B."""
        ia, ib = np.asarray(ia, np.int64), np.asarray(ib, np.int64)
        if len(ia) == 0:
            return np.zeros(0)
        if self.plain_p:
            return minkowski(self._T[0], self._T[1], self.m, ia, ib, self.p)
        return _pair_dist(self.dev, self.plan, self.A, self.B, ia, ib) * self.unit


def minkowski(T_A, T_B, m, ia, ib, p):
    """Plain Minkowski distances of order p of the pairs (ia, ib) of windows of T_A, T_B on the
    host, float64 (inf where a window holds NaN / inf)."""
    ia, ib = np.asarray(ia, np.int64), np.asarray(ib, np.int64)
    WA = np.lib.stride_tricks.sliding_window_view(T_A, m)
    WB = np.lib.stride_tricks.sliding_window_view(T_B, m)
    out = np.empty(len(ia))
    per = max(1, (1 << 21) // m)        # pairs per block: ~16 MB of differences
    for a in range(0, len(ia), per):
        with np.errstate(invalid="ignore"):
            d = np.abs(WA[ia[a:a + per]] - WB[ib[a:a + per]])
            out[a:a + per] = np.max(d, axis=1) if np.isinf(p) else \
                np.sum(d ** p, axis=1) ** (1.0 / p)
    out[~np.isfinite(out)] = np.inf
    return out


def subdiag_params(dev) -> dict:
    """The sub-diagonal program's parameters from ``dev``'s profile (:data:`SUBDIAG_KEYS`):
    FUSED_FQ (queries a step), FUSED_FC (8-wide vectors of windows a work-item), SUBGROUP and,
    where not 0, ``grf``; a bad value is a ProfileError naming its file and key."""
    from ..runtime.plans import GRF_MODES, SUBGROUPS, read_tunables
    t = read_tunables(dev, SUBDIAG_KEYS, {})
    w = t.int_in("fused_windows", FUSED_WINDOW_STEP, 64)
    if w % FUSED_WINDOW_STEP:
        raise t.error("fused_windows", f"must be a multiple of {FUSED_WINDOW_STEP}, got {w}")
    grf = t.int_in("grf", choices=GRF_MODES)
    return dict(FUSED_FQ=t.int_in("fused_queries", 1, 8), FUSED_FC=w // 8,
                SUBGROUP=t.int_in("subgroup", choices=SUBGROUPS),
                **({"grf": grf} if grf else {}))


def fused_windows(params) -> int:
    """Windows per work-item of preSCRIMP's screen in the program of ``params``."""
    return 8 * params["FUSED_FC"]


def _spec(sides, k):
    p = sides.plan
    return "mp/subdiag.cl.mako", dict(**flags.TEMPLATE, real=p.kernel_real, ereal=p.exact_real,
                                      NORMALIZE=int(sides.normalize),
                                      SELF=int(sides.self_join), K=int(k),
                                      SROWS=SUB_ROWS, **subdiag_params(sides.dev))


def _scored(sides, prg, diags, fold):
    """``sub_pairs`` (``sub_pairs_p`` for plain distances of order p != 2) over the diagonals
    ``diags`` in launches whose scores fit PAIR_BYTES, each followed by
    ``fold(diags_dev, q0, nq, buf)`` (the reduction of that launch)."""
    dev, p, A, B, m = sides.dev, sides.plan, sides.A, sides.B, sides.m
    lA, lB = sides.lA, sides.lB
    diags = np.ascontiguousarray(diags, dtype=np.int32)
    nd = len(diags)
    if not nd:
        return
    if sides.plain_p:
        kernel = "sub_pairs_p"
        er = np.float64 if p.exact_real == "double" else np.float32
        args = [er(sides.p)] + [x.data for x in sides.raw()[::2]] + \
            [x.data for x in sides.raw()[1::2]]
    else:
        kernel = "sub_pairs"
        dA = A.upload(dev, as_columns=False)
        dB = B.upload(dev, as_columns=False)
        args = [*[dA[x].data for x in ("T", "mu", "df", "dg", "r")],
                *[dB[x].data for x in ("T", "mu", "df", "dg", "r")],
                A.Td.data, A.mu.data, A.ss.data, A.fl.data,
                B.Td.data, B.mu.data, B.ss.data, B.fl.data]
    size = np.dtype(A.kr).itemsize
    dd = upload_scratch(dev, diags)
    blk = int(min(max(MIN_BLOCK, round_up(2 * m, 64)), max(p.segment, MIN_BLOCK)))
    per = max(1, min(nd, PAIR_BYTES // (lA * size), dev.max_alloc // (lA * size)))
    buf = scratch(dev, per * lA, A.kr)
    pairs = prg.kernel(kernel)
    nb = -(-lA // blk)
    for q0 in range(0, nd, per):
        nq = min(per, nd - q0)
        launch(dev, pairs, *fixed_local(dev, round_up(nq * nb, 64), ITEM_LOCAL),
               dd.data, np.int32(q0),
               np.int32(nq), np.int32(nb), np.int32(blk), np.int32(m), np.int32(lA),
               np.int32(lB), *args, buf.data)
        fold(dd, q0, nq, buf)


def diagonal_profile(sides, diags):
    """The (top-k) profile over the diagonals ``diags`` only (j - i = d; self-joins d > the
    exclusion zone, each pair once): dict of host arrays P, I ([l, k], best first, inf / -1
    where a window has no pair) and, for self-joins, left_P, left_I, right_P, right_I."""
    dev, A, k = sides.dev, sides.A, sides.k
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
    fold = "sub_reduce_self8" if k == 1 and sides.self_join else "sub_reduce"
    _scored(sides, prg, diags, lambda dd, q0, nq, buf: launch(
        dev, prg.kernel(fold), *fixed_local(dev, _fold_items(lA, k, sides.self_join), ITEM_LOCAL),
        dd.data,
        np.int32(q0), np.int32(nq), np.int32(lA), np.int32(lB), buf.data, rowS.data, rowI.data,
        *[a.data for a in extra]))
    # the winners' distances, exactly, in one launch (inf where none): each row's k best and,
    # for self-joins, its left and right best
    I = rowI.get().astype(np.int64).reshape(lA, k)
    ia, ib = [np.repeat(np.arange(lA), k)], [I.ravel()]
    if sides.self_join:
        IL, IR = extra[1].get().astype(np.int64), extra[3].get().astype(np.int64)
        ia += [np.arange(lA)] * 2
        ib += [IL, IR]
    ia, ib = np.concatenate(ia), np.concatenate(ib)
    d = np.full(len(ib), np.inf)
    has = ib >= 0
    d[has] = sides.pair_dist(ia[has], ib[has])      # (self-joins: B is A)
    P = d[:lA * k].reshape(lA, k)
    if k > 1:       # the exact distances in order (the scores ranked them)
        o = np.argsort(P, axis=1, kind="stable")
        P, I = np.take_along_axis(P, o, 1), np.take_along_axis(I, o, 1)
    out = {"P": P, "I": I}
    if sides.self_join:
        out.update(left_P=d[lA * k:lA * k + lA], left_I=IL, right_P=d[lA * k + lA:],
                   right_I=IR)
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
