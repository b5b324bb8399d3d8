"""``clts.bfast_decompose``: R's ``bfast()`` (Verbesselt, Hyndman, Newnham and Culvenor 2010,
"Detecting trend and seasonal changes in satellite image time series"), batched over pixels.

Per pixel, from the seasonal component S of R's ``stl(y, "periodic")`` (``clts.stl`` on the
device, every pixel at once), until the breakpoints stop changing or ``max_iter`` iterations:

1. V = y - S; the fluctuation test of V ~ 1 + t (``type``: OLS-MOSUM, R's default,
   OLS-CUSUM, RE or ME; ``decompose_steps.EFP_TESTS``); where its
   p-value is at most ``level``, Bai-Perron breakpoints of V ~ 1 + t on the device
   (``clts.bfast.breakpoints``); the trend T: the line of each segment (R's
   ``lm(V ~ breakfactor(bp) / t)``), one line where there is no break.
2. W = y - T; the same test of the seasonal model on W, breakpoints where significant;
   S: the seasonal model fitted per segment (``"harmonic"``: three harmonics per segment and
   one intercept; ``"dummy"``: a zero-sum seasonal pattern per segment; ``"none"``: S = 0).

The tests, fits and magnitudes are host numpy over all pixels at once (``decompose_steps``); the
STL and the breakpoints run on the device, each iteration on the pixels that have not
converged and, for the breakpoints, only on those whose test is significant.
"""
from __future__ import annotations

import math

import numpy as np

from ..runtime import get_device
from ..runtime.arrays import is_device_array, native, values_of
from ..runtime.integrations import time_axis_of
from ..timeaxis import check_fits
from .breakpoints import max_breaks, rank_deficient_pixels
from .breakpoints_plan import BreakpointsPlan, Problem, make_plan
from .checks import time_axis_and_dates
from .common import check_increasing, time_axis as _time_axis
from .decompose_result import make_result
from .decompose_steps import (EFP_TESTS, SEASONS, find_breaks, magnitudes, season_design,
                              segment_fit, segment_ids, trend_design)
from ..vocabulary import renamed

#: a component whose residual standard deviation is at most this many machine epsilons of the
#: pixel's largest |value| is fitted exactly: its test is not run (no break there)
EXACT_EPS = 1000.0


def _pair(value, name, check):
    """R's rule for ``level`` / ``breaks``: one value for both components, or (trend, season)."""
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ValueError(f"{name} must be one value or a (trend, season) pair, got {value!r}")
        return check(value[0]), check(value[1])
    v = check(value)
    return v, v


def _check_level(v):
    if isinstance(v, bool) or not isinstance(v, (int, float, np.number)) or not 0 < v < 1:
        raise ValueError(f"level must lie in (0, 1), got {v!r}")
    return float(v)


def _check_breaks(v):
    if v is None or (isinstance(v, str) and v in ("BIC", "LWZ")):
        return v
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise ValueError(f"breaks must be None, 'BIC', 'LWZ' or an integer >= 1, got {v!r}")
    return int(v)


def check_decompose_arguments(freq, h, season, max_iter, breaks, level, type):
    """The argument checks of :func:`bfast_decompose` that need no data. Returns (freq,
    (breaks_trend, breaks_season), (level_trend, level_season))."""
    if season not in SEASONS:
        raise ValueError(f"season must be one of {SEASONS}, got {season!r}")
    if isinstance(freq, bool) or not isinstance(freq, (int, float, np.number)) \
            or not math.isfinite(freq) or float(freq) != int(freq) or freq < 1:
        raise ValueError(f"freq (values a season, R's frequency) must be a whole number >= 1, "
                         f"got {freq!r}")
    freq = int(freq)
    if season != "none" and freq < 2:
        raise ValueError(f"season={season!r} needs freq >= 2 (R's frequency); use "
                         "season='none' for series without a season")
    if isinstance(h, bool) or not isinstance(h, (float, int, np.number)) or not 0 < h <= 0.5:
        raise ValueError(f"h (minimal segment, a fraction of the valid values) must lie in "
                         f"(0, 0.5], got {h!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    if type not in EFP_TESTS:
        raise ValueError(f"type must be one of {tuple(EFP_TESTS)} (strucchange's fluctuation "
                         f"tests), got {type!r}")
    return freq, _pair(breaks, "breaks", _check_breaks), _pair(level, "level", _check_level)


@renamed()
def bfast_decompose(y, freq, dates=None, *, h=0.15, season="dummy", max_iter=10, breaks=None,
                    level=0.05, type="OLS-MOSUM", confint=None, keep_iterations=False,
                    time_axis=None, dtype=np.float64, device=None, plan=None, progress=True,
                    **plan_overrides):
    """R's ``bfast()``: iterative decomposition into trend, season and remainder with the
    breaks of the trend and of the season, on every pixel of ``y``.

    Parameters
    ----------
    y : array_like
        A regular series or cube with a time axis (NaN = missing): numpy (time first by
        default, ``[time, rows, cols]``), a pandas DataFrame (one pixel per column) or an
        xarray DataArray (labelled results). Device arrays are not taken.
    freq : int
        Values a season (R's ``frequency(Yt)``: 23 for 16-day, 12 for monthly, 1 with
        ``season="none"`` for yearly values).
    dates : array_like or None
        One date (or number) per time step, for the break dates; None: the time labels of a
        pandas / xarray input, else the time indices 0..N-1. The series is taken as regular
        (one step each): put irregular acquisitions on a grid first.
    h : float
        Minimal segment size as a fraction of each pixel's valid values (R's ``h``; also the
        OLS-MOSUM and ME bandwidth), in (0, 0.5].
    season : {"dummy", "harmonic", "none"}
        R's seasonal model (R's default "dummy").
    max_iter : int
        Most iterations (R's ``max.iter``, default 10).
    breaks : None, "BIC", "LWZ", int, or a (trend, season) pair of them
        Breaks reported: the BIC's number (None, R's default), the LWZ criterion's, or that
        many (at most each pixel's cap). As R, the components are fitted on the BIC's
        segmentation whatever ``breaks`` reports.
    level : float or (float, float)
        Significance level of the ``type`` tests (trend, season), R's 0.05.
    type : {"OLS-MOSUM", "OLS-CUSUM", "RE", "ME"}
        The fluctuation test of each component in each iteration (R's ``type``: strucchange's
        ``sctest(efp(..., type = type))``, max functional): "OLS-MOSUM" (R's default, windows
        of floor(n h) residuals), "OLS-CUSUM" (cumulative residuals), "RE" (recursive
        estimates) or "ME" (moving estimates over floor(n h) values). RE and ME depend on R's
        regressors, the trend on R's ``time(Yt)``: pass it as ``dates`` (decimal years, e.g.
        ``clts.bfastts``' ``time``) for R's p-values (date dates: their decimal years; none:
        R's ``ts`` default start 1). RE and ME run on the host, a K x K root per date and
        pixel: several times slower (docs/bfast.md).
    confint : float or None
        Confidence level (R's 0.95) of the break-date intervals R's bfast returns
        (``ci.Vt``, ``ci.Wt``); host, float64, per break (a root find); None: none.
    keep_iterations : bool
        Also every iteration's components, breaks (and with ``confint`` their intervals), as
        R's ``output`` list: ``result.output``, a list of :class:`DecomposeIteration` (memory:
        three more components per iteration).
    time_axis : int or str, optional
        The time axis (numpy default 0, as :func:`clts.bfast_breaks`).
    dtype : {float64, float32}
        Precision of the STL and breakpoint kernels (the tests and fits are float64).
    device, plan, progress, **plan_overrides
        As :func:`clts.bfast_breaks` (``plan`` and the overrides: the breakpoints' Plan,
        ``clts.bfast.BreakpointsPlan``, for the trend and the season).

    Returns
    -------
    DecomposeResult

    Raises
    ------
    ValueError
        Bad ``freq``, ``h``, ``season``, ``max_iter``, ``breaks``, ``level`` or ``type``; fewer
        than two seasons of dates; floor(N h) not above the regressors of a model (R's
        breakpoints stop there too).
    TypeError
        ``y`` not real, or a device array.

    Notes
    -----
    Missing values (R's bfast needs ``stlplus`` for them): the initial season is clts' STL
    with its missing-value rule, then every test, breakpoint search and fit drops each pixel's
    missing dates, as R's ``na.omit`` / ``na.exclude`` do; the components are NaN there.
    Breakpoints are date indices of the whole series (R's are indices of the valid values),
    and the magnitudes evaluate the segment lines at the dates of the valid values around the
    break (R indexes its time with the valid-value index there). Details: docs/bfast.md.

    References
    ----------
    .. [1] J. Verbesselt, R. Hyndman, G. Newnham, D. Culvenor, "Detecting trend and seasonal
       changes in satellite image time series", Remote Sensing of Environment 114(1), 2010.

    Examples
    --------
    >>> import numpy as np, clts
    >>> t = np.arange(230)
    >>> rng = np.random.default_rng(1)
    >>> y = 0.5 + 0.2 * np.sin(2 * np.pi * t / 23)[:, None] + 0.02 * rng.normal(size=(230, 2))
    >>> y[120:, 0] -= 0.3                                     # a drop in pixel 0
    >>> r = clts.bfast_decompose(y, 23, season="harmonic")
    >>> r.n_trend_breaks.tolist(), r.trend_breaks[0].tolist(), round(float(r.magnitude[0]), 1)
    ([1, 0], [119, -1], -0.3)
    """
    freq, (br_t, br_s), (lv_t, lv_s) = check_decompose_arguments(freq, h, season, max_iter,
                                                                 breaks, level, type)
    if confint is not None and (isinstance(confint, bool) or not isinstance(
            confint, (float, int, np.floating)) or not 0 < confint < 1):
        raise ValueError(f"confint must be a level in (0, 1) or None, got {confint!r}")
    if not isinstance(keep_iterations, (bool, np.bool_)):
        raise TypeError(f"keep_iterations must be True or False, got {keep_iterations!r}")
    if is_device_array(y):
        raise TypeError("bfast_decompose takes numpy, pandas or xarray input, not a device "
                        "array (its tests and fits run on the host)")
    if dates is None:
        labels = time_axis_of(y, time_axis, 0)
        t = labels.times()
        dates = None if t is None else values_of(t)
    else:
        labels, dates = time_axis_and_dates(y, dates, time_axis)
    y = native(values_of(y))
    if y.dtype.kind not in "fiu" or y.dtype.kind == "b":
        raise TypeError(f"y must be a real array (NaN = missing), got dtype {y.dtype}")
    N = y.shape[labels.axis]
    labels_given = dates is not None
    if dates is None:
        dates = np.arange(N)
    n_dates = np.asarray(dates).size
    check_fits(y.shape, labels.axis, lambda n: n == n_dates, f"dates ({n_dates} entries)")
    if n_dates != N:
        raise ValueError(f"dates has {n_dates} entries but y has {N} along its time axis")
    tnum, _ = _time_axis(dates, np.asarray(dates).ravel()[0] if n_dates else 0.0)
    check_increasing(tnum)
    y = np.moveaxis(y, labels.axis, 0)
    pix_shape = y.shape[1:]
    M = int(np.prod(pix_shape, dtype=np.int64))
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"dtype must be float32 or float64, got {dtype}")
    XT = trend_design(N)
    XS = season_design(N, freq, season)
    KS = XS.shape[1]
    if season != "none" and N < 2 * freq:
        raise ValueError(f"y has {N} dates: the seasonal models need two seasons "
                         f"({2 * freq} dates of freq={freq})")
    dev = get_device(device)
    dev.require_dtype(dtype)
    if plan is not None and not isinstance(plan, BreakpointsPlan):
        raise TypeError("plan must be a clts.bfast.BreakpointsPlan")
    plans = make_plans(dev, N, KS, dtype, plan, plan_overrides)
    flat = np.array(y.reshape(N, M), dtype=np.float64)
    history = [] if keep_iterations else None
    out = iterate(dev, plans, flat, freq, XT, XS, season, float(h), max_iter, (br_t, br_s),
                  (lv_t, lv_s), dtype, progress, keep=confint is not None, type=type,
                  start=r_start(dates, labels_given), history=history)

    def cis(o):
        o["ciT"] = intervals(o["V"], XT, o["bpT"], o["nT"], float(confint))
        o["ciS"] = (intervals(o["W"], XS, o["bpS"], o["nS"], float(confint)) if KS
                    else np.full((2,) + o["bpS"].shape, -1, np.int32))
    if confint is not None:
        cis(out)
        for e in history or ():
            cis(e)
    return make_result(out, labels, dates, pix_shape, season, dev, history)


def r_start(dates, given: bool) -> float:
    """R's ``start(Yt)`` as a number, for the RE and ME tests: the first of ``dates`` when they
    are numbers (decimal years, as ``clts.bfastts`` gives: R's ``time(Yt)``), the decimal year
    of the first date for dates, 1 (R's ``ts`` default) without dates."""
    if not given:
        return 1.0
    d0 = np.asarray(dates).ravel()[0]
    if isinstance(d0, (int, float, np.integer, np.floating)) and not isinstance(d0, bool):
        return float(d0)
    try:
        day = np.datetime64(d0, "D")
    except (TypeError, ValueError):
        return 1.0                                  # cftime and the like: R's default
    year = day.astype("datetime64[Y]")
    days = ((year + 1).astype("datetime64[D]") - year.astype("datetime64[D]")).astype(int)
    return float(year.astype(int) + 1970) + float((day - year.astype("datetime64[D]"))
                                                  .astype(int)) / days


def intervals(Z, X, bp, n_rep, level):
    """[2, B, M] date indices of the lower / upper interval ends of the reported breaks of
    every pixel: strucchange's ``confint(bp, het.err = FALSE)`` on the valid values of ``Z``
    [N, M] (the last iteration's V or W) on ``X`` (-1: NA or no break)."""
    from .confint import intervals as one
    B, M = bp.shape
    out = np.full((2, B, M), -1, np.int32)
    for p in np.nonzero(n_rep > 0)[0]:          # R's confint: one pixel, one break at a time
        idx = np.nonzero(~np.isnan(Z[:, p]))[0]
        m = int(n_rep[p])
        vb = np.searchsorted(idx, bp[:m, p]) + 1
        iv = one(X[idx], Z[idx, p], vb, level, het_err=False)
        for j in range(m):
            if iv[j, 1] >= 0:        # R's NA is -1; a lower end before the values is clipped
                out[0, j, p] = idx[np.clip(iv[j, 0], 1, idx.size) - 1]
                out[1, j, p] = idx[np.clip(iv[j, 1], 1, idx.size) - 1]
    return out


def make_plans(dev, N, KS, dtype, plan=None, overrides=None):
    """The breakpoints' Plans by regressor count (2: the trend, KS: the season)."""
    plans = {}
    for K in {2, KS} - {0}:
        plans[K] = (plan.validate(dev) if plan is not None else
                    make_plan(dev, Problem(N, K, np.dtype(dtype).itemsize), **(overrides or {})))
    return plans


def iterate(dev, plans, flat, freq, XT, XS, season, h, max_iter, breaks, levels, dtype,
            progress=False, season0=None, keep=False, type="OLS-MOSUM", start=1.0,
            history=None):
    """The iteration on ``flat`` [N, M] (float64, NaN = missing; changed in place where it
    holds +-inf); a dict of [.., M] arrays. ``season0`` [N, M]: the initial season instead of
    the STL's (the tests start from R's); ``keep``: also the last iteration's V and W;
    ``type``: the fluctuation test (``EFP_TESTS``); ``start``: R's ``start(Yt)`` as a number
    (RE and ME are tested on R's designs: the trend on ``time(Yt)``, the dummy season from
    ``cycle(Yt)``). ``history``: a list that gets one dict per iteration (R's ``output``: the
    active pixels ``A`` and their components, breaks and, with ``keep``, V and W)."""
    N, M = flat.shape
    KS = XS.shape[1]
    test = EFP_TESTS[type]
    freq_ = max(1, int(freq))
    XTr = np.stack([np.ones(N), float(start) + np.arange(N) / freq_], axis=1)
    XSr = (season_design(N, freq_, season, int(round((start - math.floor(start)) * freq_)))
           if season == "dummy" else XS)
    status = np.zeros(M, np.int32)
    inf = np.isinf(flat).any(axis=0)
    status[inf] = 3
    flat[:, inf] = np.nan
    valid = ~np.isnan(flat)
    n = valid.sum(axis=0)
    few = n <= max(2, KS) + 1          # no residual degree of freedom for a test
    if season != "none":
        few |= n < 2 * freq
    status[(status == 0) & few] = 1
    if KS:
        status[rank_deficient_pixels(flat, XS, np.float64, (status == 0) & (n < N))] = 4
    BT = max(1, min(N if not isinstance(breaks[0], int) else breaks[0], max_breaks(h, N, 2)))
    BS = max(1, min(N if not isinstance(breaks[1], int) else breaks[1],
                    max_breaks(h, N, KS))) if KS else 1
    scale = np.nanmax(np.abs(np.where(valid, flat, 0.0)), axis=0)
    tol = EXACT_EPS * float(np.finfo(dtype).eps)
    St = np.zeros((N, M))
    ok = np.nonzero(status == 0)[0]
    if season0 is not None and season != "none":
        St[:, ok] = np.asarray(season0, np.float64)[:, ok]
    elif season != "none" and ok.size:
        from ..stl.api import decompose
        settings = dict(seasonal="periodic", trend=None, low_pass=None, seasonal_deg=None,
                        trend_deg=None, low_pass_deg=None, seasonal_jump=None, trend_jump=None,
                        low_pass_jump=None, robust=False, inner_iter=None, outer_iter=None,
                        r_defaults=True, interpolation="linear")
        y2 = np.ascontiguousarray(flat[:, ok].T, dtype=dtype)
        comps, failed, _ = decompose(y2, freq, settings, dev, progress=False,
                                     wanted=("seasonal",))
        St[:, ok] = np.asarray(comps["seasonal"], np.float64).T
        status[ok[np.asarray(failed, bool)]] = 1
    o = dict(status=status, trend=np.full((N, M), np.nan), seasonal=np.full((N, M), np.nan),
             bpT=np.full((BT, M), -1, np.int32), bpS=np.full((BS, M), -1, np.int32),
             nT=np.full(M, -1, np.int32), nS=np.full(M, -1, np.int32),
             mags=np.full((BT, M), np.nan), magnitude=np.full(M, np.nan),
             mtime=np.full(M, -1, np.int32), iterations=np.zeros(M, np.int32),
             pT=np.full(M, np.nan), pS=np.full(M, np.nan), exact=np.zeros(M, bool))
    if keep:
        o["V"], o["W"] = np.full((N, M), np.nan), np.full((N, M), np.nan)
    A = np.nonzero(status == 0)[0]
    shared = (0,) if season == "harmonic" else ()
    for it in range(max_iter):
        if A.size == 0:
            break
        Y = flat[:, A]
        V = Y - St[:, A]
        zeros = np.zeros(V.shape, np.int64)
        T, bpT, nT, nfitT, coefT, pT, exT, failT = _component(
            dev, plans.get(2), XT, V, zeros, scale[A], tol, h, breaks[0], levels[0], BT, dtype,
            (), progress, test, XTr)
        if KS:
            W = Y - T
            S, bpS, nS, _, _, pS, exS, failS = _component(
                dev, plans.get(KS), XS, W, zeros, scale[A], tol, h, breaks[1], levels[1], BS,
                dtype, shared, progress, test, XSr)
        else:
            S = np.zeros_like(T)
            bpS = np.full((BS, A.size), -1, np.int32)
            nS = np.zeros(A.size, np.int32)
            pS = np.full(A.size, np.nan)
            exS = np.zeros(A.size, bool)
            failS = np.zeros(A.size, np.int32)
        fail = np.maximum(failT, failS)
        mags, mag, mtime = magnitudes(XT, coefT, nfitT, bpT, nT, ~np.isnan(V))
        # R stops when both breakpoint sets are those of the iteration before (before the
        # first: none, R's Vt.bp = Wt.bp = 0)
        conv = np.all(bpT == o["bpT"][:, A], axis=0) & np.all(bpS == o["bpS"][:, A], axis=0)
        o["trend"][:, A] = T
        if keep:
            o["V"][:, A] = V
            o["W"][:, A] = Y - T
        St[:, A] = S
        o["seasonal"][:, A] = S if KS else np.where(np.isnan(T), np.nan, 0.0)
        o["bpT"][:, A], o["bpS"][:, A], o["nT"][A], o["nS"][A] = bpT, bpS, nT, nS
        o["mags"][:, A], o["magnitude"][A], o["mtime"][A] = mags, mag, mtime
        o["pT"][A], o["pS"][A] = pT, pS
        o["exact"][A] |= exT | exS
        o["iterations"][A] = it + 1
        if history is not None:
            history.append(dict(A=A, T=T, S=o["seasonal"][:, A], Y=Y, bpT=bpT, bpS=bpS,
                                nT=nT, nS=nS, **(dict(V=V, W=Y - T) if keep else {})))
        status[A[fail > 0]] = fail[fail > 0]
        A = A[~conv & (fail == 0)]
    bad = (status != 0)
    o["exact"] &= ~bad
    status[o["exact"]] = 2
    for k in ("trend", "seasonal", "mags"):
        o[k][:, bad] = np.nan
    for k in ("bpT", "bpS"):
        o[k][:, bad] = -1
    o["nT"][bad] = o["nS"][bad] = -1
    o["magnitude"][bad] = np.nan
    o["mtime"][bad] = -1
    if season == "none":
        o["seasonal"][:, ~bad] = 0.0
    o["remainder"] = flat - o["trend"] - o["seasonal"]
    o["BT"], o["BS"] = BT, BS
    for e in history or ():                  # a pixel that failed later has no output
        live = ~bad[e["A"]]
        for k in ("T", "S", "bpT", "bpS", "nT", "nS", "Y", "V", "W"):
            if k in e:
                e[k] = e[k][..., live]
        e["A"] = e["A"][live]
    return o


def _component(dev, plan, X, Z, zeros, scale, tol, h, breaks, level, B, dtype, shared,
               progress, test, Xr):
    """One component of one iteration on the active pixels: the ``test`` (``EFP_TESTS``) of ``Z`` on
    ``X``, the breakpoints where it is significant, the fit on R's segmentation. Returns
    (fitted, reported bp [B, m], reported count, fit count, coef [m, S, K], p-value, exact,
    failed status (0 none))."""
    N, m = Z.shape
    fit0, coef0 = segment_fit(X, Z, zeros, 1, shared)
    p, _, exact = test(Z - fit0, Xr, h, scale, tol)
    sig = (p <= level) & ~exact
    p = np.where(exact, np.nan, p)
    bp_rep = np.full((B, m), -1, np.int32)
    n_rep = np.zeros(m, np.int32)
    n_fit = np.zeros(m, np.int32)
    seg = zeros
    fail = np.zeros(m, np.int32)
    if sig.any():
        fb = find_breaks(dev, plan, Z[:, sig], X, h, breaks, dtype, progress)
        cols = np.nonzero(sig)[0]
        st = fb["status"]
        fail[cols[st != 0]] = np.where(st[st != 0] == 4, 4, np.where(st[st != 0] == 3, 3, 1))
        good = st == 0
        bb = fb["B"]
        bp_rep[:bb, cols[good]] = fb["bp_rep"][:B, good]
        n_rep[cols[good]] = fb["n_rep"][good]
        n_fit[cols[good]] = np.where(fb["n_rep"][good] > 0, fb["n_fit"][good], 0)
        seg = zeros.copy()
        fitbp = np.where((fb["n_rep"] > 0)[None, :], fb["bp_fit"], -1)
        seg[:, cols[good]] = segment_ids(fitbp[:, good], N)
    if n_fit.max(initial=0) == 0:
        fitted, coef = fit0, coef0
    else:
        fitted, coef = segment_fit(X, Z, seg, int(n_fit.max()) + 1, shared)
    return fitted, bp_rep, n_rep, n_fit, coef, p, exact, fail
