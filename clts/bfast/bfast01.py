"""``clts.bfast01``: one break or none per pixel, as R's ``bfast::bfast01``, with the break's
typology of ``bfast::bfast01classify`` (de Jong, Verbesselt, Zeileis and Schaepman, "Shifts in
global vegetation activity trends", Remote Sensing 2013).

Per pixel (its valid values, n of them, K regressors of the model):

1. the 1-break segmentation: the break minimising the two segments' RSS with segments of at
   least ``trim`` values (default 5 K; R's ``Fstats(from = trim)`` whose largest F is that
   break): ``clts.bfast_breaks`` with ``h=trim, breaks=1`` on the device;
2. the 0-break fit and the two segments' fits (every coefficient per segment, R's
   ``segment/(.) - 1``): least squares on the host, float64;
3. the tests of "no break": ``"OLS-MOSUM"`` (strucchange's ``sctest(type = "OLS-MOSUM",
   h = bandwidth, functional = "max")``: the largest moving sum of ``floor(n bandwidth)``
   residuals of the 0-break fit over sigma sqrt(n), its p-value interpolated in strucchange's
   table of the Brownian bridge increments' maximum, 0.01 at the least), ``"OLS-CUSUM"``,
   ``"supF"``, ``"aveF"``, ``"expF"`` and ``"supLM"`` (``clts.bfast.sctest``: the residuals'
   cumulative sum, the largest, mean and exponential mean F statistic of one break over the
   trimmed dates and the score-based LM process, with strucchange's p-values) and ``"BIC"`` (the 1-break model's BIC, with one more
   parameter for the break, below the 0-break one), their decisions ``p < level`` aggregated
   by ``all`` / ``any`` into ``breaks`` (0 or 1);
4. with ``classify``: the components of the chosen model (R's ``as.zoo.bfast01``: season = the
   harmonic terms' fit, trend = intercept + trend + the regressors' segment mean), per segment
   the p-value of the F test of a slope of response - season on time (decimal years), the
   percent change of the trend component per year, the magnitude of the trend component at the
   break, and the typology (``"standard"``: types 1..8; ``"drylands"``: 0..6 with sub-types).

Exact fits (status 5, ``BFAST01_STATUS``): where the chosen model's residual standard deviation
is within ``ZERO_VARIANCE_ULPS`` rounding units of the pixel's largest |value| (a constant pixel,
a noise-free trend or step), the fitted slopes, the jump at the break and the response's
variation are rounding noise whose signs move with the batch's layout (the host fits' summation
order). The classification then reads a slope or a jump whose effect over its segment is within
that bound as 0 (no type rule holds: ``flag_type`` -1), a segment whose response less the
season varies within it as untestable (p-value NaN: ``flag_significance`` -1) and the rate of a
flat segment as 0 %. The bound is 1e-14 of the data's scale: a fitted slope of noisy data is
never that small, so the rule changes no other pixel's flags.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .breakpoints import check_half, independent_columns, pixel_design
from .breakpoints_reference import BP_STATUS
from .breaks_api import (_break_dates, _intervals, _original_shape, bfast_breaks, host_cube,
                         masked_fit)
from .common import time_axis as _time_axis
from .common import ZERO_VARIANCE_ULPS, trend_scaling
from .regressors import model_terms
from .rlm import bfast01_models, robust_slope_pvalue
from .rlm import bic as rlm_bic
from .decompose_steps import bridge_sup_pvalue
from .decompose_steps import mosum_pvalue as _mosum_pvalue
from .sctest import betainc_reg, cusum_statistic, sup_tests
from ..runtime.arrays import is_device_array
from ..vocabulary import renamed

#: the tests of "no break" (``clts.bfast.sctest``: OLS-CUSUM, supF, supLM, aveF, expF)
TESTS = ("OLS-MOSUM", "OLS-CUSUM", "supF", "supLM", "BIC", "aveF", "expF")
TYPOLOGIES = ("standard", "drylands")
#: the fits of the two models (R's ``reg``): least squares, or MASS::rlm's M-estimation
REGS = ("lm", "rlm")
#: pixels a block of the host computations holds (memory: a few [N, block] float64 arrays)
BLOCK = 4096
#: ``Bfast01Result.status`` codes: ``clts.bfast_breaks``'s, and 5 for an exact fit
BFAST01_STATUS = {**BP_STATUS, 5: "exact_fit"}


@dataclass
class Bfast01Result:
    """Result of :func:`clts.bfast01`, per pixel (shaped like the cube without its time axis).

    Attributes
    ----------
    breaks : numpy.ndarray of int32
        The tests' decision: 1 break or 0; -1 for a pixel not analysed (``status``).
    breakpoint, break_date :
        The best single break whatever the decision (R's ``bfast01(...)$breakpoints``): date
        index of the last value before it (-1: none) and its date.
    tests : dict
        Test name -> numpy bool array, each test's decision (p < level; BIC: 1 break lower).
    mosum, mosum_p : numpy.ndarray
        The OLS-MOSUM statistic and its p-value (NaN: exact fit or not analysed).
    statistics, p_values : dict
        Test name -> numpy array: the statistic and p-value of each requested test but BIC
        (``"OLS-MOSUM"``: ``mosum``; ``"OLS-CUSUM"``: the max of the residuals' cumulative
        sum over sigma sqrt(n); ``"supF"``, ``"aveF"``, ``"expF"``: the largest F, their
        mean, log(mean(exp(F / 2))); ``"supLM"``: the largest LM statistic; NaN: exact fit or
        not analysed).
    rss, bic : numpy.ndarray, ``[2, ...]``
        RSS and BIC of the 0- and 1-break models (R's ``bfast01`` BIC values).
    coef0 : numpy.ndarray, ``[K, ...]``
        Coefficients of the 0-break model, in the basis ``coef_names`` (intercept, trend per time
        unit of ``dates`` (days for dates), sin_j / cos_j, the regressors as given); NaN for a
        column dropped as rank-deficient.
    coef1 : numpy.ndarray, ``[2, K, ...]``
        The two segments' coefficients of the 1-break model.
    flag_type, flag_significance, flag_pct_stable, flag_subtype : numpy.ndarray of int32
        ``bfast01classify``'s flags (-1 where R gives NA; ``flag_subtype`` with
        ``typology="drylands"`` only), with ``classify=True``.
    p_segment1, p_segment2, pct_segment1, pct_segment2, magnitude : numpy.ndarray
        Per segment of the chosen model: the slope test's p-value and the trend component's
        percent change per year (NaN for the second without a break); the trend component's
        jump at the break (NaN without one).
    nobs, status, trim : numpy.ndarray of int32
        Valid values, the status (``BFAST01_STATUS``: ``clts.bfast_breaks``'s 0 ok; 1 too few
        values for ``trim``; 2 ``trim`` > n / 2; 3 non-finite; 4 rank-deficient; and 5 an exact
        fit: the chosen model fits the values to rounding, e.g. a constant pixel, analysed
        with the flags of the module docstring) and the minimal segment.
    ci_lower, ci_upper : numpy.ndarray of int32 or None
        With ``confint=True``: date indices of the ends of the break's interval (-1: R's NA).
    """
    breaks: np.ndarray
    breakpoint: np.ndarray
    break_date: np.ndarray
    tests: dict
    mosum: np.ndarray
    mosum_p: np.ndarray
    rss: np.ndarray
    bic: np.ndarray
    coef0: np.ndarray
    coef1: np.ndarray
    coef_names: list
    nobs: np.ndarray
    status: np.ndarray
    trim: np.ndarray
    flag_type: np.ndarray | None = None
    flag_significance: np.ndarray | None = None
    flag_pct_stable: np.ndarray | None = None
    flag_subtype: np.ndarray | None = None
    p_segment1: np.ndarray | None = None
    p_segment2: np.ndarray | None = None
    pct_segment1: np.ndarray | None = None
    pct_segment2: np.ndarray | None = None
    magnitude: np.ndarray | None = None
    ci_lower: np.ndarray | None = None
    ci_upper: np.ndarray | None = None
    diagnostics: dict = field(default_factory=dict)
    statistics: dict = field(default_factory=dict)
    p_values: dict = field(default_factory=dict)


@renamed()
def bfast01(y, dates=None, *, order=3, freq=365.0, trend=True, regressors=None, formula=None,
            test="OLS-MOSUM", level=0.05, aggregate="all", trim=None, bandwidth=0.15,
            classify=True, alpha=0.05, pct_stable=None, typology="standard", confint=False,
            reg="lm", time_axis=None, dtype=np.float64, device=None, plan=None, progress=True,
            **plan_overrides):
    """One break or none on every pixel of ``y``, chosen by a test, with the break's type.

    Parameters
    ----------
    y, dates, order, freq, trend, regressors, formula, time_axis, dtype, device, plan, progress
        As :func:`clts.bfast_breaks` (R's ``bfast01(data, formula, order)``: ``formula`` over
        ``trend``, ``harmon``, the regressors and ``1``). A host cube (numpy, pandas, xarray)
        and numpy regressors (device arrays are a TypeError).
    test : str or sequence of str
        One or more of ``"OLS-MOSUM"`` (default), ``"OLS-CUSUM"``, ``"supF"``, ``"supLM"``
        (strucchange's ``sctest`` of each, as R's ``bfast01``), ``"BIC"``, and ``"aveF"``,
        ``"expF"`` (which R's ``bfast01`` also takes).
    level : float
        Significance of the tests (default 0.05).
    aggregate : {"all", "any"}
        How several tests' decisions make one (R's ``aggregate = all``).
    trim : int or float, optional
        Minimal segment: a count, or a fraction of each pixel's valid values; default 5 K
        (K: the model's regressors), as R. It must exceed K; a given trim of more than half
        the dates (R's rule: floor(n trim) or the count above floor(n / 2)) leaves no pixel
        room for a break: a ValueError.
    bandwidth : float
        The OLS-MOSUM window, a fraction of the valid values (default 0.15).
    classify : bool
        Compute ``bfast01classify``'s typology (default True); it needs the ``trend`` term.
    alpha, pct_stable, typology
        ``bfast01classify``'s: the segments' significance level (0.05), the stability threshold
        in percent a year (None: ``flag_pct_stable`` all -1) and ``"standard"`` / ``"drylands"``.
    confint : bool
        Also the confidence interval of the break at level 1 - ``level`` (R's
        ``bfast01(...)$confint``: strucchange's interval for one break, Bai's distribution with
        heterogeneous regressors and errors), as ``ci_lower`` / ``ci_upper`` (host, per pixel).
    reg : {"lm", "rlm"}
        How the 0- and 1-break models are fitted (R's ``reg``): least squares, or ``"rlm"``:
        R's ``MASS::rlm`` (Huber M-estimation by IRLS, ``clts.bfast.rlm``). As in R the break
        is still the least-squares one and the tests but BIC use least-squares residuals;
        ``rlm`` gives the coefficients, ``rss`` / ``bic`` (its residuals, so the BIC test),
        the classification (the segments' slope test: ``sfsmisc::f.robftest`` of
        ``rlm(response - season ~ time)``) and ``confint``'s interval.

    Returns
    -------
    Bfast01Result

    Examples
    --------
    >>> import numpy as np, clts
    >>> t = 2000 + np.arange(230) / 23
    >>> rng = np.random.default_rng(0)
    >>> y = 0.3 + 0.1 * np.sin(2 * np.pi * t)[:, None] + 0.01 * rng.normal(size=(230, 2))
    >>> y[:, 0] += np.where(t < 2005, 0.02 * (t - 2000), 0.1 - 0.03 * (t - 2005))
    >>> r = clts.bfast01(y, t, freq=1)
    >>> r.breaks.tolist(), round(float(r.break_date[0]), 1)
    ([1, 0], 2005.0)
    >>> r.flag_type.tolist(), r.flag_significance.tolist()   # reversal; a flat pixel's sign
    ([7, 2], [0, 3])
    """
    tests = _check(test, level, aggregate, bandwidth, alpha, pct_stable, typology, trim, reg)
    if is_device_array(y):
        raise TypeError("bfast01 takes a host cube (numpy, pandas, xarray): y.get() a device "
                        "array first")
    labels, dates, y = host_cube(y, dates, time_axis)
    N = y.shape[0]
    pix_shape = y.shape[1:]
    flat = y.reshape(N, int(np.prod(pix_shape, dtype=np.int64)))
    terms = model_terms(formula, order, trend, regressors, N,
                        cube=_original_shape(pix_shape, N, labels.axis))
    names = terms.columns()
    K = len(names)
    if trim is None:
        trim = 5 * K                # a short series: status 2 per pixel, as R's bfast01
    else:
        check_half("trim", trim, N)     # a given trim no pixel can hold twice: refused
    # the values a NaN covariate makes missing, and the covariates in flat's layout
    flat = terms.apply_missing(flat, np.float64)
    regs = None if not terms.q else {
        nm: (terms.RP[:, :, j] if terms.per_pixel else terms.R[:, j])
        for j, nm in enumerate(terms.names)}
    r = bfast_breaks(flat, dates, order=order, freq=freq, trend=trend, h=trim, breaks=1,
                     magnitudes=False, time_axis=0, regressors=regs, formula=formula,
                     dtype=dtype, device=device, plan=plan, progress=progress, **plan_overrides)
    t, _ = _time_axis(dates, np.asarray(dates).ravel()[0])
    center, scale = trend_scaling(t, N)
    X = terms.design(t, freq, center, scale)
    keep = independent_columns(X, np.dtype(dtype))
    XP = terms.pixel_columns()
    if XP is not None:          # the per-pixel columns follow the shared ones
        keep = keep + list(range(X.shape[1], K))
    M = flat.shape[1]
    status = np.asarray(r.status, np.int32)
    ok = status == 0
    bp = np.where(ok, r.all_breakpoints[0], -1).astype(np.int32)
    rss = np.asarray(r.rss[:2], np.float64)
    bic = np.asarray(r.bic[:2], np.float64)
    years = _years(dates, t)
    cols = _columns(names, keep)
    keys = {"OLS-MOSUM": "mosum", "OLS-CUSUM": "cusum", "supF": "supF", "supLM": "supLM",
            "aveF": "aveF", "expF": "expF"}
    stat_keys = tuple(k + x for k in keys.values() for x in ("", "_p"))
    out = {k: np.full(M, np.nan) for k in stat_keys + ("p1", "p2", "pct1", "pct2", "mag")}
    out.update({k: np.full(M, -1, np.int32) for k in ("type", "sig", "stable", "sub")})
    out.update(exact0=np.zeros(M, bool), exact1=np.zeros(M, bool), tol=np.zeros(M))
    coef0 = np.full((M, K), np.nan)
    coef1 = np.full((2, M, K), np.nan)
    nh = np.floor(np.asarray(r.nobs, np.float64) * bandwidth).astype(np.int64)
    # the sup tests' trimming: Fstats(from = trim) as bfast_breaks's h, supLM's from = trim / n
    hh = np.asarray(r.h, np.int64).ravel()
    with np.errstate(all="ignore"):
        trim01 = np.full(M, float(trim)) if trim < 1 else float(trim) / np.asarray(
            r.nobs, np.float64).ravel()
    sup = {"supF", "supLM", "aveF", "expF"} & set(tests)
    breaks = np.full(M, -1, np.int32)
    decisions = {name: np.zeros(M, bool) for name in tests}
    Xs = X[:, [j for j in keep if j < X.shape[1]]]

    def design(a, b):           # [N, K] shared, or [N, P, K] with per-pixel columns
        return Xs if XP is None else pixel_design(Xs, XP[:, :, a:b])
    for a in range(0, M, BLOCK):
        b = min(M, a + BLOCK)
        _block(flat[:, a:b], design(a, b), bp[a:b], ok[a:b], nh[a:b], bandwidth, out, coef0,
               coef1, slice(a, b), keep, (sup, hh[a:b], trim01[a:b], K))
    if reg == "rlm":            # R's bfast01(reg = "rlm"): the two models by MASS::rlm
        nc = np.zeros(M, bool)
        for a in range(0, M, BLOCK):
            b = min(M, a + BLOCK)
            b0, b1, rs, conv = bfast01_models(flat[:, a:b], design(a, b), bp[a:b], ok[a:b])
            coef0[a:b][:, keep] = b0
            coef1[0, a:b][:, keep] = b1[0]
            coef1[1, a:b][:, keep] = b1[1]
            rss[:, a:b] = np.where(ok[a:b], rs, np.nan)
            nc[a:b] = ok[a:b] & ~conv.all(axis=0)
        n_ok = np.asarray(r.nobs, np.float64).ravel()
        k_ok = len(keep)
        with np.errstate(all="ignore"):
            bic = np.stack([rlm_bic(rss[0], n_ok, k_ok),
                            rlm_bic(rss[1], n_ok, 2 * k_ok) + np.log(n_ok)])
        bic[:, ~ok] = np.nan
    if "OLS-MOSUM" in tests:
        decisions["OLS-MOSUM"] = ok & (out["mosum_p"] < level)
    for name in tests:
        if name != "BIC":
            decisions[name] = ok & (out[keys[name] + "_p"] < level)
    if "BIC" in tests:
        decisions["BIC"] = ok & (bic[1] < bic[0])
    combine = np.all if aggregate == "all" else np.any
    dec = combine(np.stack([decisions[n] for n in tests]), axis=0)
    breaks[ok] = dec[ok]
    # the chosen model fits exactly (to rounding): status 5, classified with rounding-level
    # slopes, jumps and variations read as 0 (module docstring)
    status[ok & np.where(breaks == 1, out["exact1"], out["exact0"])] = 5
    if classify:
        for a in range(0, M, BLOCK):
            b = min(M, a + BLOCK)
            _classify(flat[:, a:b], design(a, b), bp[a:b], breaks[a:b], cols, years, coef0,
                      coef1, out, slice(a, b), keep, alpha, pct_stable, typology, reg == "rlm")
    if confint:     # strucchange's interval of the one break (bfast_breaks's, reused)
        ci = _intervals(flat, Xs, ok.astype(np.int32), bp[None, :], 1.0 - level, XP,
                        coef=None if reg == "lm" else coef1[:, :, keep])
    coef0 = terms.unscale(coef0, center, scale)
    coef1 = terms.unscale(coef1, center, scale)

    def per(a, name):
        return labels.per_series(np.asarray(a).reshape(pix_shape), name)

    def lead(a, name, values):
        a = np.asarray(a)
        return labels.with_lead(a.reshape(a.shape[:1] + pix_shape), name, values)

    res = Bfast01Result(
        breaks=per(breaks, "breaks"), breakpoint=per(bp, "breakpoint"),
        break_date=per(_break_dates(dates, bp), "break_date"),
        tests={n: per(v, n) for n, v in decisions.items()},
        mosum=per(out["mosum"], "mosum"), mosum_p=per(out["mosum_p"], "mosum_p"),
        rss=lead(rss, "breaks", [0, 1]), bic=lead(bic, "breaks", [0, 1]),
        coef0=lead(coef0.T, "coef", names),
        coef1=np.moveaxis(coef1, 2, 1).reshape((2, K) + pix_shape), coef_names=names,
        nobs=per(r.nobs, "nobs"), status=per(status, "status"), trim=per(r.h, "trim"))
    res.statistics = {n: per(out[keys[n]], n) for n in tests if n != "BIC"}
    res.p_values = {n: per(out[keys[n] + "_p"], n + "_p") for n in tests if n != "BIC"}
    if confint:
        res.ci_lower, res.ci_upper = per(ci[0, 0], "ci_lower"), per(ci[1, 0], "ci_upper")
    if classify:
        res.flag_type = per(out["type"], "flag_type")
        res.flag_significance = per(out["sig"], "flag_significance")
        res.flag_pct_stable = per(out["stable"], "flag_pct_stable")
        res.flag_subtype = per(out["sub"], "flag_subtype")
        res.p_segment1, res.p_segment2 = per(out["p1"], "p_segment1"), per(out["p2"], "p_segment2")
        res.pct_segment1 = per(out["pct1"], "pct_segment1")
        res.pct_segment2 = per(out["pct2"], "pct_segment2")
        res.magnitude = per(out["mag"], "magnitude")
    res.diagnostics = dict(r.diagnostics, tests=list(tests), aggregate=aggregate,
                           n_coef=K, breaks_found=int(np.sum(breaks == 1)),
                           exact_fit=int(np.sum(status == 5)), reg=reg)
    if reg == "rlm":
        res.diagnostics["rlm_not_converged"] = int(np.sum(nc))
    return res


def _check(test, level, aggregate, bandwidth, alpha, pct_stable, typology, trim, reg="lm"):
    if not isinstance(reg, str) or reg not in REGS:
        raise ValueError(f"reg must be one of {REGS} (R's bfast01 reg), got {reg!r}")
    tests = (test,) if isinstance(test, str) else tuple(test)
    if not tests or any(t not in TESTS for t in tests) or len(set(tests)) < len(tests):
        raise ValueError(f"test must be one or more of {TESTS} (R's other sctest "
                         f"types are not implemented), got {test!r}")
    for name, v in (("level", level), ("alpha", alpha), ("bandwidth", bandwidth)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.number)) or not 0 < v < 1:
            raise ValueError(f"{name} must lie in (0, 1), got {v!r}")
    if aggregate not in ("all", "any"):
        raise ValueError(f"aggregate must be 'all' or 'any', got {aggregate!r}")
    if typology not in TYPOLOGIES:
        raise ValueError(f"typology must be one of {TYPOLOGIES}, got {typology!r}")
    if pct_stable is not None and not (isinstance(pct_stable, (int, float, np.number))
                                       and not isinstance(pct_stable, bool)
                                       and pct_stable >= 0 and math.isfinite(pct_stable)):
        raise ValueError(f"pct_stable must be None or a number >= 0, got {pct_stable!r}")
    if trim is not None and (isinstance(trim, bool) or not isinstance(
            trim, (int, float, np.integer, np.floating)) or not trim > 0
            or not math.isfinite(trim) or (trim >= 1 and float(trim) != int(trim))):
        raise ValueError(f"trim must be a count or a fraction of the valid values, got {trim!r}")
    return tests


#: the checks of bfast01's arguments that need no data (``clts.xarray.bfast01`` runs them
#: before any compute): (test, level, aggregate, bandwidth, alpha, pct_stable, typology, trim,
#: reg)
check_arguments = _check


def _years(dates, t):
    """Times for the rates and the slope tests: decimal years for dates (days / 365.25 after
    1 January of the first year; cftime: the calendar's year), the numbers as given."""
    from ..timeaxis import kind, year_days
    d = np.asarray(dates).ravel()
    if d.dtype.kind in "fiu":
        return np.asarray(t, np.float64)
    if kind(d) == "cftime":
        year0 = d[0].year
    else:
        year0 = int(str(np.datetime64(d[0], "Y")))
    return year0 + np.asarray(t, np.float64) / year_days(d)


def _columns(names, keep):
    """Indices (in the kept columns) of the intercept, the trend, the season and the regressors."""
    kept = [names[j] for j in keep]
    trend = kept.index("trend") if "trend" in kept else None
    season = [i for i, n in enumerate(kept) if n[:3] in ("sin", "cos") and n[3:].isdigit()]
    regs = [i for i, n in enumerate(kept) if i and i != trend and i not in season]
    return dict(trend=trend, season=season, regs=regs)


def mosum_pvalue(stat, h):
    """strucchange's p-value of the OLS-MOSUM max statistic ``stat`` for bandwidth ``h``
    (``decompose_steps.mosum_pvalue``: the one table, ``sc.me``'s first rows), NaN where the
    statistic is NaN (exact fit or not analysed)."""
    x = np.asarray(stat, np.float64)
    return np.where(np.isnan(x), np.nan, _mosum_pvalue(x, h))


def _compact(v, valid):
    """The valid entries of each column of ``v`` [N, P] moved to its top (order kept)."""
    order = np.argsort(~valid, axis=0, kind="stable")
    return np.take_along_axis(v, order, axis=0)


def _block(flat, X, bp, ok, nh, bandwidth, out, coef0, coef1, sl, keep, sup):
    """Fits and the OLS-MOSUM and OLS-CUSUM statistics of a block of pixels; ``sup``: (the
    sup tests wanted, h [P], trim / n [P], K) for ``sctest.sup_tests``."""
    y = np.asarray(flat, np.float64)
    valid = ~np.isnan(y) & ok[None, :]
    y0 = np.where(valid, y, 0.0)
    idx = np.arange(y.shape[0])[:, None]
    b0 = masked_fit(X, y0, valid)
    s1 = valid & (idx <= bp[None, :])
    b1 = masked_fit(X, y0, s1)
    b2 = masked_fit(X, y0, valid & ~s1)
    coef0[sl][:, keep] = b0
    coef1[0, sl][:, keep] = b1
    coef1[1, sl][:, keep] = b2
    e = np.where(valid, y0 - _apply(X, b0, slice(None)), 0.0)
    e1 = np.where(valid, y0 - np.where(s1, _apply(X, b1, slice(None)),
                                       _apply(X, b2, slice(None))), 0.0)
    n = valid.sum(axis=0)
    with np.errstate(all="ignore"):
        sigma = np.sqrt(np.sum(e * e, axis=0) / (n - X.shape[-1]))
        sigma1 = np.sqrt(np.sum(e1 * e1, axis=0) / (n - 2 * X.shape[-1]))
        S = np.vstack([np.zeros((1, e.shape[1])), np.cumsum(_compact(e, valid), axis=0)])
        j = np.arange(S.shape[0])[:, None]
        hi = np.take_along_axis(S, np.clip(j + nh[None, :], 0, S.shape[0] - 1), axis=0)
        proc = np.where(j <= (n - nh)[None, :], np.abs(hi - S), 0.0)
        stat = proc.max(axis=0) / (sigma * np.sqrt(n))
        cusum = cusum_statistic(S, sigma, n)
    # an exact fit (residuals of rounding size): no statistic, as bfast_monitor's status 3
    scale = np.max(np.abs(y0), axis=0)
    tol = ZERO_VARIANCE_ULPS * np.finfo(np.float64).eps * scale
    exact = ~(sigma > tol)
    stat = np.where(ok & ~exact, stat, np.nan)
    out["exact0"][sl] = ok & exact
    out["exact1"][sl] = ok & ~(sigma1 > tol)       # the 1-break model, when it is chosen
    out["tol"][sl] = tol
    out["mosum"][sl] = stat
    out["mosum_p"][sl] = mosum_pvalue(stat, bandwidth)
    live = ok & ~exact
    out["cusum"][sl] = np.where(live, cusum, np.nan)
    out["cusum_p"][sl] = bridge_sup_pvalue(out["cusum"][sl])
    if sup[0]:
        res = sup_tests(X, e, valid, sup[1], sup[2], sup[3], sup[0])
        for name, (st, p) in res.items():
            out[name][sl] = np.where(live, st, np.nan)
            out[name + "_p"][sl] = np.where(live, p, np.nan)


def _classify(flat, X, bp, breaks, cols, years, coef0, coef1, out, sl, keep, alpha,
              pct_stable, typology, robust=False):
    """bfast01classify on a block of pixels (see the module docstring)."""
    y = np.asarray(flat, np.float64)
    N, P = y.shape
    idx = np.arange(N)[:, None]
    use = breaks >= 0
    valid = ~np.isnan(y) & use[None, :]
    one = breaks == 1
    seg2 = valid & one[None, :] & (idx > bp[None, :])
    b0 = coef0[sl][:, keep]
    b1, b2 = coef1[0, sl][:, keep], coef1[1, sl][:, keep]
    bA = np.where(one[:, None], b1, b0)              # the chosen model's first segment
    bB = np.where(one[:, None], b2, b0)
    segs = [valid & ~seg2, seg2]
    cols_ = np.arange(P)
    ends = [(np.argmax(s, axis=0), N - 1 - np.argmax(s[::-1], axis=0)) for s in segs]
    tol = out["tol"][sl]
    tr = cols["trend"]
    if tr is not None:      # a slope whose change over its segment is rounding noise: 0
        x = X[:, tr] if X.ndim == 2 else X[:, :, tr]
        for b, (first, last) in zip((bA, bB), ends):
            dx = (x[last] - x[first]) if X.ndim == 2 else (x[last, cols_] - x[first, cols_])
            b[np.abs(b[:, tr] * dx) <= tol, tr] = 0.0
    beta = lambda cs: (np.where(seg2, _apply(X, bB, cs), _apply(X, bA, cs))  # noqa: E731
                       if cs else np.zeros((N, P)))
    season = beta(cols["season"])
    reg = beta(cols["regs"])
    base = beta([0] + ([tr] if tr is not None else []))
    trend_c = base.copy()
    for s in segs:                                    # the regressors' mean over each segment
        with np.errstate(all="ignore"):
            mean = np.sum(np.where(s, reg, 0.0), axis=0) / s.sum(axis=0)
        trend_c = np.where(s, base + mean[None, :], trend_c)
    u = y - season
    tau = years[:, None]
    pv, pct = [], []
    for s, (first, last) in zip(segs, ends):
        slope_test = robust_slope_pvalue if robust else _slope_pvalue
        pv.append(slope_test(np.where(s, u, 0.0), tau, s, tol))
        ts, te = trend_c[first, cols_], trend_c[last, cols_]
        with np.errstate(all="ignore"):
            span = years[last] - years[first]
            ratio = te / ts
            shift = np.where(ts < te, 2 * np.abs(ts), 2 * np.abs(te))
            grow = np.where(ratio > 0, ratio, (te + shift) / (ts + shift))
            pc = (grow ** (1.0 / span) - 1.0) * 100.0
        pct.append(np.where(s.any(axis=0), pc, np.nan))
    p1, p2 = pv[0], np.where(one, pv[1], np.nan)
    pct1, pct2 = pct[0], np.where(one, pct[1], np.nan)
    nxt = np.argmax(valid & (idx > bp[None, :]), axis=0)
    mag = np.where(one, trend_c[nxt, cols_] - trend_c[np.clip(bp, 0, None), cols_], np.nan)
    mag = np.where(np.abs(mag) <= tol, 0.0, mag)     # a jump of rounding size: none
    nan = np.full(P, np.nan)
    slope0 = sl1 = bA[:, tr] if tr is not None else nan     # bA: b0 without a break, else b1
    sl2 = bB[:, tr] if tr is not None else nan
    ftype = np.full(P, -1, np.int32)
    sub = np.full(P, -1, np.int32)
    if typology == "standard":
        ftype[~one & (slope0 > 0)] = 1
        ftype[~one & (slope0 < 0)] = 2
        rules = [(3, (sl1 > 0) & (sl2 > 0) & (mag > 0)), (4, (sl1 < 0) & (sl2 < 0) & (mag < 0)),
                 (5, (sl1 > 0) & (sl2 > 0) & (mag < 0)), (6, (sl1 < 0) & (sl2 < 0) & (mag > 0)),
                 (7, (sl1 > 0) & (sl2 < 0)), (8, (sl1 < 0) & (sl2 > 0))]
        for code, cond in rules:
            ftype[one & cond] = code
    else:
        flat0 = ~one & (p1 > alpha)
        ftype[flat0] = 0
        ftype[~one & ~flat0 & (p1 <= alpha) & (slope0 > 0)] = 1
        ftype[~one & ~flat0 & (p1 <= alpha) & (slope0 < 0)] = 2
        flat1 = one & (p1 > alpha) & (p2 > alpha)
        ftype[flat1] = 0
        live = one & ~flat1 & ~(np.isnan(p1) | np.isnan(p2))
        for code, cond in [(3, (sl1 > 0) & (sl2 > 0)), (4, (sl1 < 0) & (sl2 < 0)),
                           (5, (sl1 > 0) & (sl2 < 0)), (6, (sl1 < 0) & (sl2 > 0))]:
            ftype[live & cond] = code
        subl = one & (ftype > 0)
        same = ((sl1 > 0) & (sl2 > 0)) | ((sl1 < 0) & (sl2 < 0))
        rev = ((sl1 < 0) & (sl2 > 0)) | ((sl1 > 0) & (sl2 < 0))
        sub[subl & same & (np.abs(sl1) > np.abs(sl2))] = 1
        sub[subl & same & (np.abs(sl1) < np.abs(sl2))] = 2
        sig1, sig2 = p1 <= alpha, p2 <= alpha
        sub[subl & rev & (sig1 ^ sig2)] = 3
        sub[subl & rev & sig1 & sig2] = 4
    sig = np.full(P, -1, np.int32)
    s1, s2 = p1 <= alpha, p2 <= alpha
    i1, i2 = p1 > alpha, p2 > alpha
    sig[~one & s1] = 0
    sig[~one & i1] = 3
    sig[one & s1 & s2] = 0
    sig[one & s1 & i2] = 1
    sig[one & i1 & s2] = 2
    sig[one & i1 & i2] = 3
    stable = np.full(P, -1, np.int32)
    if pct_stable is not None:
        a1, a2 = np.abs(pct1) > pct_stable, np.abs(pct2) > pct_stable
        b1_, b2_ = np.abs(pct1) <= pct_stable, np.abs(pct2) <= pct_stable
        stable[~one & a1] = 0
        stable[~one & b1_] = 3
        stable[one & a1 & a2] = 0
        stable[one & a1 & b2_] = 1
        stable[one & b1_ & a2] = 2
        stable[one & b1_ & b2_] = 3
    for key, v in (("type", ftype), ("sig", sig), ("stable", stable), ("sub", sub)):
        out[key][sl] = np.where(use, v, -1)
    for key, v in (("p1", p1), ("p2", p2), ("pct1", pct1), ("pct2", pct2), ("mag", mag)):
        out[key][sl] = np.where(use, v, np.nan)


def _apply(X, beta, cs):
    """[N, P] fit of the columns ``cs`` of ``X`` ([N, K] or per pixel [N, P, K]) with the
    coefficients ``beta`` [P, K]."""
    if X.ndim == 2:
        return X[:, cs] @ beta[:, cs].T
    return np.einsum("tpk,pk->tp", X[:, :, cs], beta[:, cs])


def _slope_pvalue(u0, tau, mask, tol):
    """p-value of the F test of the slope of ``u`` on ``tau`` over each column's ``mask``
    (R's ``anova(lm(u ~ time))``): two passes, centred sums. NaN where ``u`` varies by at most
    ``tol`` [P] (its root mean square deviation: rounding noise, no test)."""
    n = mask.sum(axis=0).astype(np.float64)
    with np.errstate(all="ignore"):
        tm = np.sum(np.where(mask, tau, 0.0), axis=0) / n
        um = np.sum(u0, axis=0) / n
        dt = np.where(mask, tau - tm, 0.0)
        du = np.where(mask, u0 - um, 0.0)
        sxx = np.sum(dt * dt, axis=0)
        sxy = np.sum(dt * du, axis=0)
        syy = np.sum(du * du, axis=0)
        ssr = sxy * sxy / sxx
        sse = np.maximum(syy - ssr, 0.0)
        df = n - 2
        F = ssr / (sse / df)
        p = betainc_reg(df / 2, 0.5, df / (df + F))
    return np.where((n > 2) & (sxx > 0) & (syy > n * tol * tol), p, np.nan)
