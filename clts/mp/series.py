"""Preparation of a series for the matrix-profile kernels: rescaling by a power of two (and
centring for the float32 kernels), window statistics and flags (``stats.cl.mako``), the O(1)
update coefficients, and the device arrays of a row or column side (``Side``, public so that
tests check its window statistics ``mu_h``, ``ss_h`` and ``flags`` against exact arithmetic)."""
from __future__ import annotations


import numpy as np

from ..runtime.memory import scratch, upload_scratch
from ..runtime import launch, round_up
from ..runtime.programs import build_program
from . import flags
from .plan import ILL_FACTOR


#: zero-padded columns beyond the band and tile reach on each side of a column series: the lanes
#: of a band past the last window read them (also room for their indices in a packed key)
PAD_SLACK = 64
#: independent vectors of windows per work-item of the statistics kernel (stats.cl.mako)
STATS_CHAINS = 4


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


class Side:
    """One series on one device: cleaned values, window statistics and update coefficients."""

    def __init__(self, dev, T, m, plan, normalize, pad):
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
        Td = upload_scratch(dev, np.concatenate([Tc, np.zeros(vw * u)]).astype(er))
        mu = scratch(dev, self.l, er)
        ss = scratch(dev, self.l, er)
        fl = scratch(dev, self.l, np.int32)
        prg = build_program(dev, *stats_spec(dev, plan, normalize))
        launch(dev, prg.kernel("window_stats"), round_up(-(-self.l // (vw * u)), 16), None,
               Td.data, np.int32(self.l), np.int32(m), mu.data, ss.data, fl.data)
        mu_h = mu.get().astype(np.float64)
        ss_h = ss.get().astype(np.float64)
        wflags = fl.get()
        wflags[bad] = flags.NONFINITE
        self.Td, self.mu, self.ss = Td, mu, ss
        df, dg = _update_coefficients(Tc, mu_h, m, self.l, normalize)
        self.df_h, self.dg_h, self.ss_h, self.mu_h, self.Tc = df, dg, ss_h, mu_h, Tc
        self.flags = wflags
        self.kr, self.er, self.pad = kr, er, pad
        self.normalize = normalize

    def flags_on(self, dev):
        """The window flags as a device array (uploaded here when no band kernel ran on this
        side: every window constant, or all of this device's bands empty)."""
        if getattr(self, "fl_d", None) is None:
            self.fl_d = upload_scratch(dev, self.flags.astype(np.int32))
        return self.fl_d

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
        self.flags[ok & (self.ss_h < thr)] |= flags.ILL

    def upload(self, dev, as_columns, dtype=None):
        """Device arrays for the diagonal kernel (:meth:`arrays`, uploaded)."""
        kr = self.kr if dtype is None else dtype
        out = {name: upload_scratch(dev, np.ascontiguousarray(v, dtype=kr))
               for name, v in self.arrays(as_columns).items()}
        self.fl_d = upload_scratch(dev, self.flags.astype(np.int32))
        return out

    def arrays(self, as_columns):
        """Host arrays (float64) of the diagonal kernels: T, mu, df, dg, r. A column side is
        the series extended by ``pad`` zeros on both sides, with the statistics and update
        coefficients of the extended series' windows (so a diagonal entering the series from
        j < 0 carries an exact covariance); windows outside the series get r = NaN (never a
        neighbour)."""
        m, l = self.m, self.l
        if self.normalize:
            with np.errstate(divide="ignore"):
                r = np.where(self.flags == 0, 1.0 / np.sqrt(np.maximum(self.ss_h, 1e-300)),
                             np.nan)
        else:
            r = np.where(self.flags & flags.NONFINITE, np.nan, -self.ss_h / 2)
        P = self.pad if as_columns else 0
        E = (P + m + PAD_SLACK) if as_columns else 0
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
        return {"df": df, "dg": dg, "r": rr, "mu": mu, "T": Te[:nw + m]}


def stats_spec(dev, plan, normalize):
    """(template, parameters) of the window statistics kernel of a call."""
    return "mp/stats.cl.mako", dict(**flags.TEMPLATE, real=plan.exact_real,
                                    NORMALIZE=int(normalize), lanes=_vw(dev),
                                    chains=_chains(dev))


def _vw(dev):
    """Lanes of the statistics / exact-distance loops: 8 on CPUs (pocl vectorises only explicit
    vector types); scalar on GPUs (they vectorise across work-items: 8 lanes x STATS_CHAINS
    windows per work-item took 255 VGPRs and 776 bytes/lane of scratch on gfx908) and on
    Oclgrind, whose uninitialised-value checker crashes on vector loads here."""
    return 1 if getattr(dev.info, "simulator", False) or dev.type != "cpu" else 8


def _chains(dev):
    """Independent windows per lane of the statistics kernels: STATS_CHAINS on CPUs, 1 on GPUs
    (other work-items hide the latency there)."""
    return STATS_CHAINS if dev.type == "cpu" else 1
