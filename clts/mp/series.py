"""Preparation of a series for the matrix-profile kernels: rescaling by a power of two (and
centring for the float32 kernels), window statistics and flags (``stats.cl.mako``), the O(1)
update coefficients, and the device arrays of a row or column side (``Side``, public so that
tests check its window statistics ``mu_h``, ``ss_h`` and ``flags`` against exact arithmetic)."""
from __future__ import annotations


import numpy as np

from ..runtime.memory import scratch, upload_scratch
from ..runtime import launch, round_up
from ..runtime.launch import fixed_local
from .local_size import ITEM_LOCAL
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
    """One series on one device: cleaned values, window statistics, flags and update
    coefficients, all computed and kept on the device (``prep.cl.mako``, ``stats.cl.mako``).

    ``T`` is a host series already scaled (``_well_scaled``; uploaded once here) or a device
    array of the raw series with ``scale``, the device array of its scale factors
    (:func:`scale_on_device`). The host views ``mu_h``, ``ss_h``, ``flags``, ``df_h``,
    ``dg_h``, ``Tc`` are read back on first use (the top-k and multi-dimensional paths, the
    tests); the k = 1 path never reads them."""

    def __init__(self, dev, T, m, plan, normalize, pad, *, scale=None):
        from ..runtime.arrays import is_device_array
        self.n = int(T.shape[0])
        self.l = self.n - m + 1
        self.m = m
        kr = np.float64 if plan.kernel_real == "double" else np.float32
        er = np.float64 if plan.exact_real == "double" else np.float32
        self.kr, self.er, self.pad = kr, er, pad
        self.normalize = normalize
        self.plan = plan
        if is_device_array(T):
            Tin = T
        else:       # the host path: one upload of the scaled series
            Tin = upload_scratch(dev, np.ascontiguousarray(T, dtype=er if er == np.float32
                                                             and not dev.fp64 else np.float64))
        prg = build_program(dev, *prep_spec(dev, plan, normalize, Tin.dtype))
        self.prg, self.sreal = prg, _sreal(plan, Tin.dtype)
        if scale is None:
            scale = dev.state.constant(("mp.unit_scale", np.dtype(self.sreal).name),
                                       lambda: upload_scratch(dev, np.array([1, 0, 1, 1],
                                                                            self.sreal)))
        self.scale = scale
        vw, u = _vw(dev), _chains(dev)
        # the cleaned series, padded by one work-item's windows: its lanes past the last
        # window read zeros
        ntot = self.n + vw * u
        Td = scratch(dev, ntot, er)
        nf = scratch(dev, self.n, np.int32)
        launch(dev, prg.kernel("clean"), *fixed_local(dev, round_up(ntot, 64), ITEM_LOCAL),
               Tin.data, np.int32(self.n),
               np.int32(ntot), scale.data, Td.data, nf.data)
        # statistics, stably, in the exact precision
        mu = scratch(dev, self.l, er)
        ss = scratch(dev, self.l, er)
        fl = scratch(dev, self.l, np.int32)
        launch(dev, build_program(dev, *stats_spec(dev, plan, normalize)).kernel("window_stats"),
               *fixed_local(dev, round_up(-(-self.l // (vw * u)), 16), ITEM_LOCAL),
               Td.data, np.int32(self.l), np.int32(m), mu.data, ss.data, fl.data)
        nfb = prep_spec(dev, plan, normalize, Tin.dtype)[1]["NFB"]
        launch(dev, prg.kernel("nonfinite_windows"),
               *fixed_local(dev, round_up(-(-self.l // nfb), 64), ITEM_LOCAL),
               nf.data, np.int32(self.l), np.int32(m), fl.data)
        self.Td, self.mu, self.ss, self.fl = Td, mu, ss, fl
        self._nf = nf               # read by queued kernels: kept until the side goes
        self.dev = dev
        self._coef = {}
        self._host = {}

    # -- host views, read back on first use ------------------------------------------------
    def _get(self, key, make):
        if key not in self._host:
            self._host[key] = make()
        return self._host[key]

    @property
    def Tc(self):
        return self._get("Tc", lambda: self.Td.get()[:self.n].astype(np.float64))

    @property
    def mu_h(self):
        return self._get("mu", lambda: self.mu.get().astype(np.float64))

    @property
    def ss_h(self):
        return self._get("ss", lambda: self.ss.get().astype(np.float64))

    @property
    def flags(self):
        return self._get("flags", lambda: self.fl.get())

    @property
    def df_h(self):
        return self._get("df", lambda: _update_coefficients(self.Tc, self.mu_h, self.m, self.l,
                                                            self.normalize)[0])

    @property
    def dg_h(self):
        return self._get("dg", lambda: _update_coefficients(self.Tc, self.mu_h, self.m, self.l,
                                                            self.normalize)[1])

    def flags_on(self, dev):
        """The window flags as a device array."""
        return self.fl

    def mark_ill(self, plan, R, column=False):
        """Flag (bit 2) windows too ill-conditioned for the O(1) update: centred norm^2 below
        C * eps * R * S^2 with S^2 = max|df| * max|dg| (the size of one update term), on the
        device (``ill_flags``).

        ``column``: the column side of an AB-join, whose diagonals enter it from its padding
        (the first value repeated; zero padding made the entry's update terms as large as the
        series' offset, and near-constant windows of an AB-join went wrong), over up to
        m + band steps with terms up to the first window's spread S0 = max |x_t - x_0|: its
        windows below C * eps * (m + band) * S0^2 also take the exact path (the row side's
        terms are those of its own test)."""
        if not self.normalize:
            return
        eps = np.finfo(self.kr).eps
        K = ILL_FACTOR[plan.precision] * eps * R
        K0 = ILL_FACTOR[plan.precision] * eps * (self.m + plan.band) if column else 0.0
        real = np.dtype(self.sreal).type
        launch(self.dev, self.prg.kernel("ill_flags"), ILL_WG, ILL_WG, self.Td.data,
               self.mu.data, self.ss.data, np.int32(self.l), np.int32(self.m),
               real(K), real(K0), self.fl.data)
        self._host.pop("flags", None)

    def upload(self, dev, as_columns, dtype=None):
        """Device arrays T, mu, df, dg, r of the diagonal kernels (see :meth:`arrays`), made
        on the device in ``dtype`` (default the kernel precision) once per layout."""
        kr = np.dtype(self.kr if dtype is None else dtype)
        key = (bool(as_columns), kr.name)
        if key in self._coef:
            return self._coef[key]
        m, l = self.m, self.l
        P = self.pad if as_columns else 0
        E = (P + m + PAD_SLACK) if as_columns else 0
        nw = P + l + E
        name = "coef_k" if kr == np.dtype(self.kr) else "coef_e"
        if kr not in (np.dtype(self.kr), np.dtype(self.er)):
            raise ValueError(f"coefficients in {kr}: the kernel or exact precision only")
        out = {"T": scratch(dev, nw + m, kr)}
        out.update({k: scratch(dev, nw, kr) for k in ("mu", "df", "dg", "r")})
        launch(dev, self.prg.kernel(name), *fixed_local(dev, round_up(nw + m, 64), ITEM_LOCAL),
               self.Td.data,
               np.int32(self.n), self.mu.data, np.int32(l), np.int32(m), np.int32(P),
               np.int32(nw), out["T"].data, out["mu"].data, out["df"].data, out["dg"].data)
        launch(dev, self.prg.kernel(name + "_r"), *fixed_local(dev, round_up(nw, 64), ITEM_LOCAL),
               self.ss.data,
               self.fl.data, np.int32(l), np.int32(P), np.int32(nw), out["r"].data)
        self._coef[key] = out
        return out

    def arrays(self, as_columns):
        """Host arrays (float64) of the diagonal kernels: T, mu, df, dg, r. A column side is
        the series extended by ``pad`` copies of its end values on both sides, with the
        statistics and update coefficients of the extended series' windows (so a diagonal
        entering the series from j < 0 carries an exact covariance, over no jump larger than
        the first window's spread); windows outside the series get r = NaN (never a
        neighbour). (The host's copy for the multi-dimensional profile; the 1-D kernels
        read :meth:`upload`'s device arrays.)"""
        m, l = self.m, self.l
        if self.normalize:
            with np.errstate(divide="ignore"):
                r = np.where(self.flags == 0, 1.0 / np.sqrt(np.maximum(self.ss_h, 1e-300)),
                             np.nan)
        else:
            r = np.where(self.flags & flags.NONFINITE, np.nan, -self.ss_h / 2)
        P = self.pad if as_columns else 0
        E = (P + m + PAD_SLACK) if as_columns else 0
        Te = np.concatenate([np.full(P, self.Tc[0]), self.Tc, np.full(E + m, self.Tc[-1])])
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


#: windows per work-item of the non-finite flags on CPUs (a running count; GPUs: 1, coalesced)
NONFINITE_BLOCK = 64
#: work-group size of the single-work-group kernels of prep.cl.mako (scaling, ILL flags,
#: compaction of the special windows)
ILL_WG = 256


def _sreal(plan, tin):
    """The scaling's precision: float64 where the input or the statistics are."""
    return np.float64 if (plan.exact_real == "double" or np.dtype(tin) == np.float64) \
        else np.float32


def prep_spec(dev, plan, normalize, tin=np.float64):
    """(template, parameters) of the preparation / finishing kernels of a call whose series
    has dtype ``tin``."""
    cname = {np.dtype(np.float64): "double", np.dtype(np.float32): "float"}
    if not dev.fp64:            # such a device gets the series as float32 (Series uploads it so)
        tin = np.float32
    return "mp/prep.cl.mako", dict(**flags.TEMPLATE, real=plan.exact_real,
                                   kreal=plan.kernel_real, tin=cname[np.dtype(tin)],
                                   sreal=cname[np.dtype(_sreal(plan, tin))],
                                   NORMALIZE=int(normalize),
                                   SINGLE=int(plan.precision == "single"), wg=ILL_WG,
                                   NFB=NONFINITE_BLOCK if dev.type == "cpu" else 1)


def scale_on_device(dev, plan, normalize, TA, TB=None):
    """The device array (s1, c, s2, unit) that ``prep.cl.mako``'s ``clean`` applies to the
    device series ``TA`` (and ``TB``: one common scaling, plain Euclidean AB-joins): what
    :func:`_well_scaled` does on the host, in the same float64 arithmetic."""
    prg = build_program(dev, *prep_spec(dev, plan, normalize, TA.dtype))
    sc = scratch(dev, 4, _sreal(plan, TA.dtype))
    other = TB if TB is not None else TA
    launch(dev, prg.kernel("scale_reduce"), ILL_WG, ILL_WG, TA.data, np.int32(TA.shape[0]),
           other.data, np.int32(0 if TB is None else TB.shape[0]),
           np.int32(plan.precision != "double"), sc.data)
    return sc


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
