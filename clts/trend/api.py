"""clts.trend_test / mann_kendall / sen_slope: batched Mann-Kendall trend tests and Theil-Sen
slopes with missing values, the O(n^2) pair comparisons and Sen's median in OpenCL kernels."""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .. import options
from ..runtime import integrations
from ..runtime.launch import fixed_local
from ..runtime.integrations import TimeAxis, time_axis_of
from ..runtime import chunk_sizes, get_device, launch
from ..runtime.arrays import as_rows, float_array, is_device_array
from ..runtime.faults import enter_chunk, with_smaller_chunks
from ..runtime.memory import empty_device, reshaped, scratch
from ..runtime.programs import build_program
from ..runtime.plans import plan_once
from ..runtime.replay import Recorder, run_recorded
from ..runtime.resident import (Lazy, LazyDict, aligned_chunks, device_rows, device_series,
                                result_to_numpy, rows_multiple)
from ..timeaxis import check_fits
from . import multi, multi_device
from .plan import Problem, make_plan
from .reference import MIN_VALID, OK, TOO_FEW, VARIANTS, normal_cdf, normal_ppf
from ..vocabulary import renamed
from ..errors import warn_caller

#: every variant of trend_test: VARIANTS on the device path too, the rest (clts.trend.multi)
#: on numpy input
ALL_VARIANTS = VARIANTS + multi.VARIANTS

#: per-series fields of a TrendResult, in order
FIELDS = ("trend", "h", "p", "z", "tau", "s", "var_s", "slope", "intercept", "slope_low",
          "slope_high", "n", "status")


@dataclass
class TrendResult:
    """Result of :func:`clts.trend_test` (and :func:`clts.mann_kendall`, :func:`clts.sen_slope`).

    Every attribute holds one value per series, shaped like the input without its time axis
    (a float for one series; a Series / DataArray for pandas / xarray input): pymannkendall's
    fields ``trend`` (+1 increasing, -1 decreasing, 0 no trend; pymannkendall's strings by
    :meth:`trend_names`), ``h`` (significant at ``alpha``), ``p``, ``z``, ``tau``, ``s``,
    ``var_s`` (after the variant's correction), ``slope`` (Sen's; per cycle for the seasonal
    test), ``intercept``; and ``slope_low`` / ``slope_high`` (Sen's slope confidence interval
    at ``conf_level``), ``n`` (valid values) and ``status`` (0 ok, 1 fewer than 3 valid values:
    every statistic NaN).

    For a device array ``y`` every field is a device array (shaped like ``y`` without its
    time axis; ``h`` bool, ``trend`` / ``status`` int8, ``n`` int64, the rest float64 - float32
    on a device without double precision), still being computed when the call returns;
    ``diagnostics["n_too_few"]`` is read on first access; ``to_numpy()`` (or
    ``clts.to_numpy(result)``) gives the numpy result (docs/device-arrays.md).
    """
    trend: object
    h: object
    p: object
    z: object
    tau: object
    s: object
    var_s: object
    slope: object
    intercept: object
    slope_low: object
    slope_high: object
    n: object
    status: object
    diagnostics: dict = field(default_factory=dict)
    labels: TimeAxis | None = field(default=None, repr=False)

    def trend_names(self):
        """``trend`` as pymannkendall's strings ("increasing", "decreasing", "no trend")."""
        names = np.array(["decreasing", "no trend", "increasing"])
        return names[np.asarray(self.trend, dtype=int) + 1]

    def plot(self, *, field="slope", fig=None, title=None):
        """A map of ``field`` (default Sen's slope) with the significant series hatched, for
        series on a 2-D grid (e.g. an NDVI cube's pixels); a bar chart for a 1-D batch."""
        return integrations.plot("trend", self, field=field, fig=fig, title=title)

    def to_numpy(self):
        """The result with numpy arrays in place of device arrays (waits for the device); the
        fields of one series as the numpy path gives them (Python scalars)."""
        out = result_to_numpy(self)
        for k in FIELDS:
            v = getattr(out, k)
            if isinstance(v, np.ndarray) and v.ndim == 0:
                setattr(out, k, v.item())
        return out


def _check_prob(v, name):
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating)) or not 0 < v < 1:
        raise ValueError(f"{name} must be a number in (0, 1), got {v!r}")
    return float(v)


def _compact(y2):
    """Valid values first (in order), the positions that order takes, and the valid counts."""
    valid = ~np.isnan(y2)
    order = np.argsort(~valid, axis=1, kind="stable")
    return np.take_along_axis(y2, order, axis=1), order, valid.sum(axis=1)


def _check_time_fits(y, labels, P, variant, asked):
    """The time-axis checks of the numpy edge (docs/api-conventions.md, "Where time is"): a
    seasonal ``period`` that does not fit the axis read as time but fits another is a
    ValueError; a plain numpy ``y`` without ``time_axis=`` whose time axis is shorter than a
    test needs (every series would come back ``status`` 1, too few values) while another axis
    is long enough gets a UserWarning naming ``time_axis=``. Nothing else is guessed from the
    shape."""
    shape = np.shape(y)
    if P > 1:
        check_fits(shape, labels.axis, lambda n: n >= 2 * P,
                   f"period={P} (variant={variant!r}: two values a season, {2 * P} values)")
    if asked or labels.labelled or len(shape) < 2:
        return
    axis = labels.axis
    if shape[axis] < MIN_VALID:
        others = [j for j, s in enumerate(shape) if j != axis and s >= MIN_VALID]
        if others and np.prod(shape) > 0:
            warn_caller(
                f"y has shape {tuple(shape)} and is read with time on axis {axis}: every "
                f"series has {shape[axis]} values, fewer than the {MIN_VALID} a trend test "
                f"needs, so every result is empty (status 1); if time runs along axis "
                f"{others[0]} give time_axis={others[0]}", UserWarning)


@renamed()
def trend_test(y, *, variant="original", period=None, alpha=0.05, lag=None, conf_level=0.95,
               device=None, time_axis=None, **plan_overrides):
    """Batched Mann-Kendall trend test and Theil-Sen slope of every series, NaN-aware.

    The results of pymannkendall's ``original_test``, ``hamed_rao_modification_test``,
    ``yue_wang_modification_test`` and ``seasonal_test`` (with its ``sens_slope`` /
    ``seasonal_sens_slope``), series by series, for a whole batch or cube at once: the
    n (n - 1) / 2 pair comparisons, the tie counts and the pairwise slopes of each series run
    in one kernel, Sen's median and its confidence bounds are selected there from the slopes.

    Parameters
    ----------
    y : array_like, shape (..., time) or (..., variables, time)
        float32 / float64 series, NaN = missing (skipped, as pymannkendall does); +-inf is
        rejected. The multi-variable variants ("multivariate", "regional",
        "correlated_multivariate", "partial") read the axis before time as the variables (or
        sites) of one test: the result has one value per (...) (numpy, no labels). pandas / xarray inputs give labelled per-series results (time: the index /
        the ``time`` dimension). A ``pyopencl.array.Array`` ([batch, time] or [time];
        [batch, variables, time] or [variables, time] for the multi-variable variants;
        C-contiguous) gives a result of device arrays, every step on the device and nothing
        read back or waited for inside the call (docs/device-arrays.md).
    variant : str, optional
        The test: "original" (Mann-Kendall with ties); "hamed_rao" / "yue_wang" (the Hamed-Rao
        (1998) or Yue-Wang (2004) variance correction for autocorrelation); "seasonal" (Hirsch
        and Slack (1984) over ``period`` seasons, slope per cycle); "pre_whitening" /
        "trend_free_pre_whitening" (the test on the pre-whitened valid values, Yue and Wang
        (2002) / Yue et al. (2002); Sen's slope of the series as given; ``n`` the whitened
        values); "multivariate" = "regional" (S and Var(S) summed over the variables, each
        variable's missing values skipped on its own; Sen's slope over within-variable
        pairs); "correlated_multivariate" (Libiseller and Grimvall (2002): Var(S) from the
        covariances of the variables' scores, over the time steps where no variable is
        missing, ``n`` their count; Z without continuity correction); "correlated_seasonal"
        (the same with a season a variable: cycles of ``period`` as time steps); "partial"
        (variable 0 tested given variable 1 as covariate; Sen's slope of variable 0). Every
        variant takes device arrays ([batch, variables, time] for the multi-variable ones);
        see docs/trend.md for where each part runs.
    period : int, optional
        Seasons per cycle for ``variant="seasonal"`` / ``"correlated_seasonal"``
        (pymannkendall's default 12 if None).
    alpha : float, optional
        Significance level of ``h`` / ``trend`` (and of the Hamed-Rao lags), default 0.05.
    lag : int, optional
        Hamed-Rao / Yue-Wang: use only the first ``lag`` autocorrelations (default all).
    conf_level : float, optional
        Confidence level of Sen's slope interval (``slope_low``, ``slope_high``), default 0.95.
    device : int, str or Device, optional
        Device index, name substring or slug; the default device if None.
    time_axis : int, optional
        The time axis: default the last for numpy arrays (``[batch..., time]``), the index of
        a pandas object, the ``time`` dimension of a DataArray. A seasonal ``period`` that
        does not fit that axis (two values a season) but fits another is a ValueError naming
        ``time_axis=``; a numpy ``y`` given without ``time_axis`` whose every series is
        shorter than 3 values while another axis is not gets a UserWarning (every result would
        be empty). Nothing else is guessed from the shape (docs/api-conventions.md, "Where time is").
    **plan_overrides
        Force the tunables ``wg``, ``lanes``, ``items``, ``median``, ``chunk_bytes``,
        ``subgroup``, ``interleave`` (profile keys ``trend.pairs.wg``, ``trend.pairs.lanes``,
        ``trend.pairs.items``, ``trend.sen.median``: "select" | "sort", ``trend.chunk_bytes``,
        ``trend.pairs.subgroup``: 0 or the sub-group size the pair kernel requires on Intel
        GPUs, ignored where the compiler lacks ``cl_intel_required_subgroup_size``;
        ``trend.pairs.interleave``: 1 = the series read time-major and the slopes interleaved
        by work-item, coalesced on GPUs).

    Returns
    -------
    TrendResult
        One value per series of each statistic; ``status`` 1 (and NaN statistics) for series
        with fewer than 3 valid values.

    Raises
    ------
    ValueError
        An unknown variant, a bad period / alpha / conf_level / lag, +-inf values.
    TypeError
        ``y`` is not real numeric; an unknown tunable.
    clts.DeviceError
        float64 data on a device without ``cl_khr_fp64``.

    References
    ----------
    .. [1] H. B. Mann, "Nonparametric tests against trend", Econometrica 13, 1945;
       M. G. Kendall, Rank Correlation Methods, 1975.
    .. [2] P. K. Sen, "Estimates of the regression coefficient based on Kendall's tau", JASA
       63, 1968; R. O. Gilbert, Statistical Methods for Environmental Pollution Monitoring,
       1987.
    .. [3] K. H. Hamed, A. R. Rao, "A modified Mann-Kendall trend test for autocorrelated
       data", J. Hydrology 204, 1998; S. Yue, C. Y. Wang, "The Mann-Kendall test modified by
       effective sample size to detect trend in serially correlated hydrological series",
       Water Resources Management 18, 2004.
    .. [4] R. M. Hirsch, J. R. Slack, "A nonparametric trend test for seasonal data with
       serial dependence", Water Resources Research 20, 1984.
    .. [5] S. Yue, C. Y. Wang, "Applicability of prewhitening to eliminate the influence of
       serial correlation on the Mann-Kendall test", Water Resources Research 38, 2002;
       S. Yue, P. Pilon, B. Phinney, G. Cavadias, "The influence of autocorrelation on the
       ability to detect trend in hydrological series", Hydrological Processes 16, 2002.
    .. [6] C. Libiseller, A. Grimvall, "Performance of partial Mann-Kendall tests for trend
       detection in the presence of covariates", Environmetrics 13, 2002; D. R. Helsel,
       L. M. Frans, "Regional Kendall test for trend", Environmental Science & Technology 40,
       2006.

    Examples
    --------
    >>> import numpy as np, clts
    >>> t = np.arange(40.0)
    >>> y = np.stack([0.5 * t + np.sin(t), -0.1 * t + np.cos(3 * t), np.cos(t)])
    >>> r = clts.trend_test(y)
    >>> r.trend.tolist(), int(r.s[0])
    ([1, -1, 0], 718)
    >>> round(float(r.slope[0]), 3)
    0.499
    """
    on_dev = is_device_array(y)
    C = 1
    if on_dev and variant in multi.VARIANTS:    # [batch, (variables,) time] on the device
        dev = get_device(device)
        yv, dshape = multi_device.device_input_multi(y, dev, variant, time_axis)
        C = y.shape[-2] if variant in multi.MULTI_VARIANTS else 1
        labels = None
    elif on_dev:            # [batch, time] or [time] on the device: no labels, nothing read
        dev = get_device(device)
        yv = device_series(y, dev, time_axis)
        labels = None
    else:                   # the edge: labels and the time axis, once
        labels = time_axis_of(y, time_axis, -1)
        yv = float_array(labels.to_last(y), "y")
        if np.isinf(yv).any():
            raise ValueError("y holds +-inf; only finite values and NaN (= missing) are "
                             "accepted")
    if variant not in ALL_VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(map(repr, ALL_VARIANTS))}, got "
                         f"{variant!r}")
    P = 1
    if variant in ("seasonal", "correlated_seasonal"):
        period = 12 if period is None else period
        if (isinstance(period, bool) or not isinstance(period, (int, np.integer))
                or period < 2):
            raise ValueError(f"period must be an integer >= 2, got {period!r}")
        P = int(period)
    elif period is not None:
        raise ValueError(f"period is for variant='seasonal' or 'correlated_seasonal' (got "
                         f"variant={variant!r})")
    alpha = _check_prob(alpha, "alpha")
    conf_level = _check_prob(conf_level, "conf_level")
    if lag is not None and (isinstance(lag, bool) or not isinstance(lag, (int, np.integer))
                            or lag < 1):
        raise ValueError(f"lag must be a positive integer or None, got {lag!r}")
    N = yv.shape[-1] // C
    if not on_dev:
        _check_time_fits(y, labels, P, variant, time_axis is not None)
    if P > 1 and 2 * P > N:
        raise ValueError(f"period {P} is longer than half the series ({N} values): each season "
                         f"would hold fewer than 2 values")
    if on_dev:
        shape = dshape if variant in multi.VARIANTS else tuple(y.shape[:-1])
        y2 = yv
    else:
        shape = tuple(yv.shape[:-1])
        y2 = as_rows(yv)
        dev = get_device(device)
    dev.require_dtype(y2.dtype)
    if variant in multi.VARIANTS and not on_dev:
        def core(y2, P, slopes=True):
            plan = plan_once(dev, "trend", make_plan, Problem(y2.shape[1], P),
                             **plan_overrides)
            stats, sen, factor = _run(dev, plan, y2, "original", alpha, None, conf_level,
                                      slopes)
            return _statistics(y2, stats, sen, factor, P, alpha), plan
        out, shape, plan = multi.run(dev, yv, variant, P, alpha, conf_level, core)
        multi_axis = variant in multi.MULTI_VARIANTS
    elif variant not in multi.VARIANTS:
        plan = plan_once(dev, "trend", make_plan, Problem(N, P), **plan_overrides)
        multi_axis = False
    if on_dev:
        keep = []
        if variant in multi.VARIANTS:
            out, plan = multi_device.run(dev, y2, variant, P, alpha, conf_level, C, plan_overrides,
                                         keep, _run_device)
        else:
            key = None if y2.offset or dev.info.simulator else (
                plan, variant, P, alpha, lag, conf_level, y2.shape, y2.dtype.str,
                options.get("max_chunk"))
            out = run_recorded(dev, dev.state.constant("trend.recorder", _recorder), key,
                               {"y": y2.base_data}, lambda: _run_device(
                                   dev, plan, y2, variant, alpha, lag, conf_level, keep), keep)
        # [batch] already for a [batch, time] input: no views to make
        out = {k: out[k] if out[k].shape == shape else reshaped(out[k], shape)
               for k in FIELDS}
        status = out["status"]
        diag = LazyDict(variant=variant, period=P, alpha=alpha, conf_level=conf_level, lag=lag,
                        median=plan.median, n_too_few=Lazy(
                            lambda: int(np.count_nonzero(status.get() == TOO_FEW))))
        r = TrendResult(**out, diagnostics=diag, labels=None)
        r._keep = keep
        return r
    if variant not in multi.VARIANTS:
        stats, sen, factor = _run(dev, plan, y2, variant, alpha, lag, conf_level)
        out = _statistics(y2, stats, sen, factor, P, alpha)
    diag = dict(variant=variant, period=P, alpha=alpha, conf_level=conf_level, lag=lag,
                median=plan.median, n_too_few=int((out["status"] == TOO_FEW).sum()))

    def back(a):
        a = a.reshape(shape)
        if a.ndim == 0:
            return a.item()
        # the variables' axis consumed: the labels no longer fit, plain arrays
        return labels.per_series(a, None) if labels.labelled and not multi_axis else a
    return TrendResult(**{k: back(out[k]) for k in FIELDS}, diagnostics=diag, labels=labels)


class _Kernels:
    """The pair and autocorrelation kernels of one call, their constants, and the device
    bytes per series of a chunk (``per``)."""

    def __init__(self, dev, plan, B, N, dt, variant, alpha, conf_level, extra_per=(),
                 slopes=True):
        self.real = "double" if dt == np.float64 else "float"
        rt = dt.type
        self.corrected = corrected = variant in ("hamed_rao", "yue_wang")
        # the interleaved layout only where chosen: CPU sources stay as they were
        extra = dict(interleave=1) if plan.interleave else {}
        # slopes=0: S and the tie sums only (no slope row, no Sen), sources of the others as
        # they were
        self.sample = plan.sample if slopes else 0
        if not slopes:
            extra["slopes"] = 0
        self.pairs = dev.program("trend/pairs.cl.mako", real=self.real, median=plan.median,
                                 lanes=plan.lanes, sample=self.sample, subgroup=plan.subgroup,
                                 **extra).kernel("mk_pairs")
        self.acf = (dev.program("trend/acf.cl.mako", real=self.real,
                                ranks=variant == "hamed_rao").kernel("mk_acf")
                    if corrected else None)
        self.zq_ci = rt(normal_ppf(1 - (1 - conf_level) / 2))
        self.zq_a = rt(normal_ppf(1 - alpha / 2))
        item = dt.itemsize
        self.M = M = max(plan.pairs, 1) if slopes else 1
        self.wg = wg = plan.wg or None
        # work-items of the pair kernel, each with a scratch row it re-uses for its series
        G = min(B, plan.items) if plan.items else B
        if wg:
            G = -(-G // wg) * wg
        # every buffer sized by the chunk: per series the input (and the corrected variants'
        # detrended copy and work rows) and the outputs; the slope scratch, one row per
        # work-item, at most as many rows as one allocation holds: where the device limits
        # them, a chunk holds no more series than there are rows (and halving a chunk halves
        # the scratch)
        row = (M + self.sample) * item
        per = [N * item * (3 if corrected else 1), 40 + 3 * item + 8]
        rows = max(1, dev.max_alloc // row)
        if wg and rows < wg:        # rows so long that a work-group's would not fit: any size
            self.wg = wg = None
        elif wg:
            rows -= rows % wg
        self.fits = G <= rows
        self.G = G = min(G, rows)
        # bytes per series that chunk_bytes caps: the input, the outputs and the scratch's share
        self.capped = sum(per) + (-(-row * G // B) if B else 0)
        per += list(extra_per)
        if not self.fits:
            per.append(row)
        self.per, self.fixed = per, (G * row if self.fits else 0)
        self.chunk_bytes = plan.chunk_bytes

    def chunks(self, B, dev, max_items, *, rows=1):
        """The chunks of ``B`` series (``rows``: chunk starts a multiple of it, the device
        path's row blocks)."""
        if self.chunk_bytes:
            cap = max(1, self.chunk_bytes // self.capped)
            max_items = min(max_items or cap, cap)
        if not self.fits:
            max_items = min(max_items or self.G, self.G)
        step = self.wg or 1
        if rows == 1:
            return chunk_sizes(B, self.per, dev, fixed_bytes=self.fixed, max_items=max_items,
                               multiple=step)
        return aligned_chunks(B, self.per, dev, fixed_bytes=self.fixed, max_items=max_items,
                              multiple=step * rows // math.gcd(step, rows)) if B else []

    def gsize(self, n):
        return -(-n // self.wg) * self.wg if self.wg else n


def _run(dev, plan, y2, variant, alpha, lag, conf_level, slopes=True):
    """The kernels over chunks of the batch: (stats [B, 5] int64, sen [B, 3], factor [B]);
    ``slopes=False``: S and the tie sums only, sen NaN."""
    import pyopencl.array as cla
    B, N = y2.shape
    dt = y2.dtype
    q = dev.queue
    ks = _Kernels(dev, plan, B, N, dt, variant, alpha, conf_level, slopes=slopes)
    corrected, pairs, acf, zq_ci, zq_a = ks.corrected, ks.pairs, ks.acf, ks.zq_ci, ks.zq_a
    M, wg, G, gsize = ks.M, ks.wg, ks.G, ks.gsize
    stats = np.zeros((B, 5), np.int64)
    sen = np.full((B, 3), np.nan, dt)
    factor = np.ones(B, dt)
    i32 = np.int32

    def run(max_items):
        chunks = ks.chunks(B, dev, max_items)
        for i, (a, b) in enumerate(chunks):
            enter_chunk(i, a, b, len(chunks), B)
            nb = b - a
            # interleaved: the chunk time-major (adjacent work-items read adjacent words)
            yd = cla.to_device(q, np.ascontiguousarray(y2[a:b].T) if plan.interleave
                               else y2[a:b])
            g = min(G, gsize(nb))
            sc = scratch(dev, (g * (M + ks.sample),), dt)
            st = empty_device(q, dev.context, (nb, 5), np.int64)
            se = empty_device(q, dev.context, (nb, 3), dt)
            launch(dev, pairs, g, wg, yd.data, i32(N), i32(plan.period), i32(nb),
                   np.int64(M), zq_ci, st.data, se.data, sc.data)
            st.get(ary=stats[a:b])
            se.get(ary=sen[a:b])
            if corrected:
                xc, _, nv = _compact(y2[a:b])
                slope = sen[a:b, 0].astype(dt)
                xd = np.ascontiguousarray(xc - np.arange(1, N + 1, dtype=dt) * slope[:, None])
                xdd = cla.to_device(q, np.nan_to_num(xd))
                nvd = cla.to_device(q, nv.astype(np.int32))
                work = scratch(dev, (nb * N,), dt)
                fd = empty_device(q, dev.context, (nb,), dt)
                launch(dev, acf, gsize(nb), wg, xdd.data, nvd.data, i32(N), i32(nb),
                       i32(lag or 0), zq_a, work.data, fd.data)
                fd.get(ary=factor[a:b])
    with_smaller_chunks(run, device=dev, what="trend_test")
    return stats, sen, factor


def _recorder():
    """A device's recorder of ``trend_test``'s device-array calls: a key's second call is
    recorded, the next ones replay it (``runtime.replay.run_recorded``; ``clts.mp.replay``
    says why not the first)."""
    return Recorder(after=1)


def _run_device(dev, plan, y2, variant, alpha, lag, conf_level, keep, slopes=True):
    """The test of the rows of the device array ``y2`` with every step on the device: the pair
    kernel, the autocorrelation correction on the valid values detrended by kernels, and the
    statistics of ``_statistics`` by ``mk_finish`` (``trend/finish.cl.mako``). Returns the
    fields (device arrays [B]); nothing is transferred, mapped or waited for. The chunks'
    temporaries go to ``keep``. ``slopes=False``: S and the tie sums only (Sen's fields NaN)."""
    B, N = y2.shape
    dt, item, q = y2.dtype, y2.dtype.itemsize, dev.queue
    stat = np.dtype(np.float64 if dev.fp64 else np.float32)
    # the valid values' median (a scratch row per series), the detrended copy, the transpose
    ks = _Kernels(dev, plan, B, N, dt, variant, alpha, conf_level,
                  extra_per=[N * item, N * item * (1 + bool(plan.interleave)), 8],
                  slopes=slopes)
    fin = dev.program("trend/finish.cl.mako", real=ks.real,
                      stat="double" if stat == np.float64 else "float", min_valid=MIN_VALID,
                      ok=OK, too_few=TOO_FEW)
    zq = stat.type(normal_ppf(1 - alpha / 2))
    kinds = dict(trend=np.int8, h=np.bool_, n=np.int64, status=np.int8)
    out = {k: empty_device(q, dev.context, (B,), kinds.get(k, stat)) for k in FIELDS}
    i32 = np.int32
    if plan.interleave:
        # the one transpose template (element per work-item: once per call, beside the
        # pairs' O(N^2) per series)
        transpose = build_program(dev, "tridiag/transpose.cl.mako",
                                  dict(real=ks.real, tile=0, tile_y=1)).kernel("transpose")

    def run(max_items):
        chunks = ks.chunks(B, dev, max_items, rows=rows_multiple(dev, N * item))
        for i, (a, b) in enumerate(chunks):
            enter_chunk(i, a, b, len(chunks), B)
            nb = b - a
            yc = device_rows(y2, a, b)
            tmp = [yc]
            yin = yc
            if plan.interleave:         # time-major, as the numpy path uploads it
                yin = scratch(dev, (N, nb), dt)
                launch(dev, transpose, (nb, N), None, yc.data, yin.data, i32(nb), i32(N))
                tmp.append(yin)
            g = min(ks.G, ks.gsize(nb))
            sc = scratch(dev, (g * (ks.M + ks.sample),), dt)
            st = scratch(dev, (nb, 5), np.int64)
            se = scratch(dev, (nb, 3), dt)
            launch(dev, ks.pairs, g, ks.wg, yin.data, i32(N), i32(plan.period), i32(nb),
                   np.int64(ks.M), ks.zq_ci, st.data, se.data, sc.data)
            fd = se
            if ks.corrected:
                xd = scratch(dev, (nb, N), dt)
                nvd = scratch(dev, (nb,), np.int32)
                launch(dev, fin.kernel("mk_detrend"), *fixed_local(dev, nb),
                       yc.data, se.data, i32(N),
                       i32(nb), xd.data, nvd.data)
                work = scratch(dev, (nb * N,), dt)
                fd = scratch(dev, (nb,), dt)
                launch(dev, ks.acf, ks.gsize(nb), ks.wg, xd.data, nvd.data, i32(N), i32(nb),
                       i32(lag or 0), ks.zq_a, work.data, fd.data)
                tmp += [xd, nvd, work]
            med = scratch(dev, (nb * N,), dt)
            launch(dev, fin.kernel("mk_finish"), *fixed_local(dev, nb),
                   yc.data, st.data, se.data, fd.data,
                   i32(ks.corrected), i32(N), i32(nb), i32(plan.period), zq, i32(a), med.data,
                   *(out[k].data for k in FIELDS))
            keep.extend(tmp + [sc, st, se, fd, med])
    with_smaller_chunks(run, device=dev, what="trend_test")
    return out


def _statistics(y2, stats, sen, factor, P, alpha):
    """The host part, vectorised: Z, p, h, tau, intercept from the kernels' counts and slopes
    (pymannkendall's formulas, float64)."""
    B, N = y2.shape
    S = stats[:, 0].astype(np.float64)
    var0 = (stats[:, 1] - stats[:, 2]) / 18
    nv = stats[:, 4]
    var = var0 * factor.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(var)
        z = np.where(S > 0, (S - 1) / sd, np.where(S < 0, (S + 1) / sd, 0.0))
        tau = S / (0.5 * stats[:, 3])
    p = 2 * (1 - normal_cdf(np.abs(z)))
    h = np.abs(z) > normal_ppf(1 - alpha / 2)
    trend = np.where(h, np.sign(np.nan_to_num(z)), 0).astype(np.int8)
    slope = sen[:, 0].astype(np.float64)
    srt = np.sort(y2, axis=1).astype(np.float64)     # NaN last
    pos = np.argsort(np.isnan(y2), axis=1, kind="stable")
    lo, hi = np.maximum(nv - 1, 0) // 2, np.maximum(nv, 1) // 2
    r = np.arange(B)
    if N:
        med_x = (srt[r, lo] + srt[r, hi]) / 2
        med_t = (pos[r, lo] + pos[r, hi]) / 2
    else:                           # series of no values: too few, NaN below
        med_x = med_t = np.zeros(B)
    intercept = med_x - med_t / P * slope
    status = np.where(nv < MIN_VALID, TOO_FEW, OK).astype(np.int8)
    bad = status != OK
    out = dict(trend=trend, h=h, p=p, z=z, tau=tau, s=S, var_s=var, slope=slope,
               intercept=intercept, slope_low=sen[:, 1].astype(np.float64),
               slope_high=sen[:, 2].astype(np.float64), n=nv.astype(np.int64), status=status)
    for k in ("p", "z", "tau", "s", "var_s", "slope", "intercept", "slope_low", "slope_high"):
        out[k] = np.where(bad, np.nan, out[k])
    out["h"] = np.where(bad, False, h)
    out["trend"] = np.where(bad, 0, trend).astype(np.int8)
    return out


@renamed()
def mann_kendall(y, variant="original", **kwargs):
    """Batched Mann-Kendall test: :func:`trend_test` with ``variant`` (any of its variants:
    "original", "hamed_rao", "yue_wang", "seasonal", ...); Sen's slope comes with it.

    Examples
    --------
    >>> import numpy as np, clts
    >>> r = clts.mann_kendall(np.arange(10.0) ** 2, variant="yue_wang")
    >>> r.trend, r.s
    (1, 45.0)
    """
    return trend_test(y, variant=variant, **kwargs)


@renamed()
def sen_slope(y, period=None, conf_level=0.95, **kwargs):
    """Batched Theil-Sen slope with its confidence interval (``slope``, ``slope_low``,
    ``slope_high``, ``intercept`` of the :class:`TrendResult`); per cycle with ``period``
    (pymannkendall's ``seasonal_sens_slope``).

    Examples
    --------
    >>> import numpy as np, clts
    >>> r = clts.sen_slope(2.0 * np.arange(20.0) + 1)
    >>> r.slope, r.intercept
    (2.0, 1.0)
    """
    variant = "seasonal" if period is not None else "original"
    return trend_test(y, variant=variant, period=period, conf_level=conf_level, **kwargs)
