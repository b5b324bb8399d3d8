"""``clts.bfast_breaks``: multi-break detection over whole series, batched Bai-Perron
``breakpoints`` as R's ``bfast::bfastlite`` runs it (season + trend regressors, the missing
values dropped per pixel, BIC or LWZ choosing the number of breaks).

Model of each segment (K = 1 + trend + 2 order coefficients)::

    y_t = a + b t + sum_{j=1..order} ( c_j cos(2 pi j t / freq) + d_j sin(2 pi j t / freq) ) + e_t

plus the covariates of ``regressors=`` (shared by all pixels), or the terms ``formula=`` names
(R's ``response ~ trend + harmon + xreg``, ``response ~ 1``: ``clts.bfast.regressors``).

Breakpoints, RSS, BIC: strucchange's ``breakpoints.formula`` / ``summary.breakpointsfull``
(see ``clts.bfast.breakpoints_reference``). The trend regressor is the time (for a regular
series an affine function of R's ``trend = 1..n``: the same column space, the same fits).
Magnitudes: at each selected break, the fit of the segment after minus the fit of the segment
before, at the first valid date after the break (segment fits by least squares, float64, host).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from .. import options
from .call_memo import call_key, recall, remember
from .checks import check_season_units, time_axis_and_dates
from .device import INT_TYPES, LazyFields, device_axis
from ..runtime import get_device
from ..vocabulary import renamed
from ..runtime.memory import reshaped
from ..runtime.plans import plan_once
from ..runtime.replay import Recorder, Same, run_recorded
from ..runtime.arrays import device_input, is_device_array, native, values_of
from .breakpoints import (CRITERIA, check_h_breaks, check_half, criteria, fail,
                          independent_columns, pixel_design, rank_deficient_pixels, rss_floor,
                          run_breakpoints, select)
from .breakpoints_plan import BreakpointsPlan, Problem, make_plan
from .breakpoints_reference import BP_STATUS
from .pixel_device import device_terms
from .regressors import model_terms
from .common import check_increasing, trend_scaling
from .common import time_axis as _time_axis
from ..timeaxis import check_fits
from ..errors import warn_caller

#: the memo of remembered device calls (``call_memo``) on each device
MEMO = "bfast.breaks_calls"


#: the types of a device cube (integers converted on the device; no missing-value marker)
_DEVICE_TYPES = (np.dtype(np.float32), np.dtype(np.float64), *INT_TYPES)


@dataclass
class BreaksResult(LazyFields):
    """Result of :func:`clts.bfast_breaks`, per pixel (shaped like the cube without its time
    axis; ``[breaks, ...]`` arrays have one row per possible break).

    Attributes
    ----------
    n_breaks : numpy.ndarray of int32
        Number of breaks the criterion selects; -1 for a pixel not analysed (``status``).
    breakpoints : numpy.ndarray of int32, ``[breaks, ...]``
        Date index of the last value before each selected break (R's breakpoint), -1 padded.
    break_dates : numpy.ndarray, ``[breaks, ...]``
        Their dates (NaT / NaN padded), of the kind of ``dates``.
    magnitudes : numpy.ndarray, ``[breaks, ...]`` or None
        Fit after minus fit before, at the first valid date after each break.
    rss, bic, lwz : numpy.ndarray, ``[breaks + 1, ...]``
        RSS and criteria of the best segmentation with m = 0..breaks breaks (NaN beyond the
        pixel's cap max(1, ceil(n / h) - 2)); the criteria read an RSS below the rounding
        floor n eps^2 sum y^2 as the floor (exact fits: the fewest breaks, see docs/bfast.md).
    nobs, h, status : numpy.ndarray of int32
        Valid values, minimal segment size, and 0 ok / 1 too few values (h <= K) / 2 h > n / 2 /
        3 non-finite values / 4 the valid dates make the design rank-deficient
        (``clts.bfast.breakpoints_reference.BP_STATUS``).
    all_breakpoints : numpy.ndarray of int32, ``[breaks (breaks + 1) / 2, ...]``
        The breakpoints of every m: rows m (m - 1) / 2 .. m (m + 1) / 2 - 1.
    ci_lower, ci_upper : numpy.ndarray of int32, ``[breaks, ...]`` or None
        With ``confint=``: the date indices of the lower / upper ends of each breakpoint's
        confidence interval (strucchange's ``confint``), -1 where R gives NA or no break.
    """
    n_breaks: np.ndarray
    breakpoints: np.ndarray
    break_dates: np.ndarray
    magnitudes: np.ndarray | None
    rss: np.ndarray
    bic: np.ndarray
    lwz: np.ndarray
    nobs: np.ndarray
    h: np.ndarray
    status: np.ndarray
    all_breakpoints: np.ndarray
    criterion: str = "BIC"
    ci_lower: np.ndarray | None = None
    ci_upper: np.ndarray | None = None
    plan: BreakpointsPlan | None = None
    diagnostics: dict = field(default_factory=dict)


@renamed()
def bfast_breaks(y, dates=None, *, order=3, freq=365.0, trend=True, h=0.15, breaks=5,
                 criterion="BIC", magnitudes=True, confint=None, time_axis=None,
                 regressors=None, formula=None, dtype=np.float64,
                 device=None, plan=None, progress=True, **plan_overrides):
    """Bai-Perron multiple breakpoints of a season + trend model on every pixel of ``y``.

    Parameters
    ----------
    y : array_like
        Cube with a time axis, float (NaN = missing); a pandas DataFrame (one pixel per column)
        or an xarray DataArray give labelled results.
        A ``pyopencl.array.Array`` (time-major ``[time, pixels...]``, C-contiguous, float32 /
        float64 or int8..uint32, on ``device``) runs on the device without a host transfer or
        wait: the result's arrays are device arrays (magnitudes by a float64 kernel; break
        dates, diagnostics and ``confint`` intervals on first access; ``docs/device-arrays.md``).
    dates : array_like or None
        Strictly increasing dates (datetime64 / date: days since 1 January of the first year)
        or numbers (decimal years: give ``freq=1``). None: the index / time coordinate.
    order : int
        Harmonic order of the season, 0 (none) .. 10 (default 3, as ``bfastlite``).
    freq : float
        Season length in time-axis units (365.0 for dates).
    trend : bool
        Include the linear trend (default True).
    h : float or int
        Minimal segment: a fraction of each pixel's valid values (floored; a fraction whose
        segment exceeds half the dates, floor(n h) > floor(n / 2), is a ValueError, as R's)
        or a count (a pixel with fewer than twice as many valid values gets status 2).
    breaks : int
        Most breaks (capped per pixel at ceil(n / h) - 2, at least 1, as R).
    criterion : {"BIC", "LWZ"}
        Chooses the number of breaks.
    magnitudes : bool
        Compute the break magnitudes (host, float64).
    confint : float or None
        Confidence level (e.g. 0.95) of the break-date intervals, as strucchange's
        ``confint(breakpoints)`` with its defaults (host, float64, per break); None: none.
    time_axis : int or str, optional
        As :func:`clts.bfast_monitor`: default 0 for numpy (``[time, pixels...]``); ``dates``
        that fit another axis but not that one are a ValueError naming ``time_axis=``.
    regressors : array_like or dict, optional
        Covariates, joining the design after the season (R's ``response ~ trend + harmon +
        xreg``): shared by all pixels, ``[dates]`` or ``[dates, q]`` (named ``x1 .. xq``) or a
        dict name -> ``[dates]``; or per pixel and date, ``y``'s shape plus a last axis of q or
        a dict name -> an array shaped like ``y`` (numpy with a host cube; device arrays with a
        device cube, centred and scaled on the device: ``clts.bfast.pixel_device``). A NaN
        value makes that value of ``y`` missing (device cubes: per-pixel covariates only).
    formula : str, optional
        R's model formula over ``trend``, ``harmon`` (of ``order``), the regressors' names and
        ``1``: ``"response ~ trend + harmon + x1"``, ``"response ~ harmon"``, ``"response ~ 1"``
        (intercept only). Given, it overrides ``trend`` and leaves out the regressors it does
        not name; None: ``trend``, ``order`` and every regressor (``clts.bfast.regressors``).
    dtype : {float64, float32}
        Precision on the device (float64 default: the RSS differences the programme compares
        are small against the RSS).
    device, plan, progress, **plan_overrides
        As :func:`clts.bfast_monitor`; overrides ``lanes``, ``wg``, ``interleave``, ``dp_wg``,
        ``chunk_bytes``, ``subgroup``, ``grf`` (profile keys ``bfast.breakpoints.*``).

    Returns
    -------
    BreaksResult

    Raises
    ------
    ValueError
        ``h``, ``breaks``, ``order``, ``criterion`` out of range, dates unsorted or not one per
        time step, ``formula`` / ``regressors`` malformed.

    Examples
    --------
    >>> import numpy as np, clts
    >>> t = 2000 + np.arange(161) / 23
    >>> y = np.sin(2 * np.pi * t)[:, None] + 0.05 * np.random.default_rng(0).normal(size=(161, 2))
    >>> y[t >= 2004, 0] += 1.0
    >>> r = clts.bfast_breaks(y, t, freq=1)
    >>> r.n_breaks.tolist(), round(float(r.break_dates[0, 0]), 2), r.status.tolist()
    ([1, 0], 2003.96, [0, 0])
    """
    on_device = is_device_array(y)
    fkey = None
    if on_device and regressors is None and plan is None \
            and (formula is None or isinstance(formula, str)):
        dev = get_device(device)
        fkey = call_key(dev, y, dates, 0, (order, freq, trend, h, breaks, criterion, magnitudes,
                                           confint, time_axis, formula, dtype), plan_overrides)
        prep = recall(dev, MEMO, fkey) if fkey is not None else None
        if prep is not None:        # the arguments of an earlier call, checked then
            return _repeat(dev, prep, y, dates, h, breaks, dtype, criterion, magnitudes, confint)
    check_h_breaks(h, breaks)
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or not 0 <= order <= 10:
        raise ValueError(f"order (harmonic terms) must be an integer in 0..10, got {order!r}")
    if not isinstance(trend, (bool, np.bool_)):
        raise TypeError(f"trend must be True or False, got {trend!r}")
    if not (isinstance(freq, (int, float, np.number)) and freq > 0 and math.isfinite(freq)):
        raise ValueError(f"freq must be a positive number, got {freq!r}")
    if criterion not in CRITERIA:
        raise ValueError(f"criterion must be one of {CRITERIA}, got {criterion!r}")
    if on_device:
        dates = device_axis(y, dates, time_axis)
        y = device_input(y, "y", get_device(device), dtypes=_DEVICE_TYPES)
    else:
        labels, dates, y = host_cube(y, dates, time_axis)
    N = y.shape[0]
    pix_shape = y.shape[1:]
    d0 = np.asarray(dates).ravel()
    if d0.size != N:
        raise ValueError(f"dates has {d0.size} entries but y has {N} along its time axis")
    t, _ = _time_axis(dates, d0[0] if d0.size else 0.0)
    check_increasing(t)
    check_season_units(d0, freq, order, formula)
    if h < 1:                           # a fraction no pixel can hold twice (R's rule)
        check_half("h", h, N)
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"dtype must be float32 or float64, got {dtype}")
    dev = get_device(device)
    dev.require_dtype(dtype)
    terms = device_terms(formula, order, trend, regressors, y.shape) if on_device else None
    if terms is None:
        terms = model_terms(formula, order, trend, regressors, N, cube=None if on_device else
                            _original_shape(pix_shape, N, labels.axis))
    if on_device and terms.missing is not None:
        raise TypeError("regressors with NaN take a host cube (the NaN make values of y "
                        "missing); y.get() the device array first")
    center, scale = trend_scaling(t, N)
    X = terms.design(t, freq, center, scale)
    names = terms.columns()
    q_pix = terms.q if terms.per_pixel else 0       # per-pixel columns, after X's
    K_shared = X.shape[1]
    K_design = K_shared + q_pix
    keep = independent_columns(X, dtype)        # the rank the dates give the design
    message = None
    if len(keep) < K_shared:
        message = (f"bfast_breaks: the design is rank-deficient on these dates ("
                   f"{', '.join(names[j] for j in range(K_shared) if j not in keep)} "
                   f"{'is a linear combination' if K_shared - len(keep) == 1 else 'are linear combinations'} "
                   f"of the other columns up to rounding, e.g. harmonics of freq={freq!r} on "
                   f"dates one season apart); fitted with the {len(keep)} independent "
                   "columns (diagnostics['dropped_columns'])")
        warn_caller(message, UserWarning)
        X = X[:, keep]
    K = X.shape[1] + q_pix
    if plan is None:
        plan = plan_once(dev, "bfast", make_plan, Problem(N, K, dtype.itemsize),
                         **plan_overrides)
    elif not isinstance(plan, BreakpointsPlan):
        raise TypeError("plan must be a clts.bfast.BreakpointsPlan")
    else:
        plan.validate(dev)
    M = math.prod(int(d) for d in pix_shape)
    flat = reshaped(y, (N, M))
    if confint is not None and not (isinstance(confint, (float, int)) and 0 < confint < 1):
        raise ValueError(f"confint must be a level in (0, 1) or None, got {confint!r}")
    dropped = [names[j] for j in range(K_shared) if j not in keep]
    if on_device:
        if fkey is not None:
            X = np.array(X)             # its own, read-only: one device copy serves the calls
            X.setflags(write=False)
            remember(dev, MEMO, fkey, _Prepared(plan, N, M, pix_shape, X, K_design, dropped,
                                                terms, message))
        return _breaks_device(dev, plan, flat, pix_shape, X, K_design, h, breaks, dtype,
                              criterion, magnitudes, confint, dates, dropped, terms)
    if flat.dtype != dtype:
        flat = flat.astype(dtype)
    flat = terms.apply_missing(flat, dtype)
    XP = terms.pixel_columns()
    out = run_breakpoints(dev, plan, flat, X, h, breaks, dtype, progress=progress,
                          k_check=K_design, XP=XP)
    ok = out["status"] == 0
    # rank: pixels with gaps (a full pixel has the shared design's rank), all with XP
    fail(out, rank_deficient_pixels(flat, X, dtype, ok & (out["nobs"] < N) if XP is None
                                    else ok, XP=XP), 4)
    floor = rss_floor(flat, dtype)
    bic, lwz = criteria(out, K, floor)
    sel, bp = select(out, bic if criterion == "BIC" else lwz)
    mags = _magnitudes(flat, X, sel, bp, XP) if magnitudes else None
    if confint is not None:
        ci = _intervals(flat, X, sel, bp, float(confint), XP)
    bdates = _break_dates(dates, bp)

    def per(a, name):
        return labels.per_series(np.asarray(a).reshape(pix_shape), name)

    def lead(a, name):
        a = np.asarray(a)
        return labels.with_lead(a.reshape(a.shape[:1] + pix_shape), name,
                                np.arange(a.shape[0]))

    status = out["status"]
    res = BreaksResult(
        n_breaks=per(sel, "n_breaks"), breakpoints=lead(bp, "break"),
        break_dates=lead(bdates, "break"),
        magnitudes=None if mags is None else lead(mags, "break"),
        rss=lead(out["rss"], "breaks"), bic=lead(bic, "breaks"), lwz=lead(lwz, "breaks"),
        nobs=per(out["nobs"], "nobs"), h=per(out["h"], "h"), status=per(status, "status"),
        all_breakpoints=lead(out["bp"], "break_row"), criterion=criterion, plan=plan)
    if confint is not None:
        res.ci_lower, res.ci_upper = lead(ci[0], "break"), lead(ci[1], "break")
    counts = {name: int(np.sum(status == code)) for code, name in BP_STATUS.items() if code}
    chosen = np.take_along_axis(np.asarray(out["rss"], np.float64),
                                np.clip(sel, 0, None)[None, :], 0)[0]
    res.diagnostics = dict(n_coef=K, breaks=out["breaks"], failed=int(np.sum(status != 0)),
                           **counts, exact_fit=int(np.sum((sel >= 0) & (chosen <= floor))),
                           dropped_columns=dropped, device=str(dev.slug))
    return res


class _Prepared(NamedTuple):
    """What a device call derives from its arguments, everything but the cube itself."""
    plan: BreakpointsPlan
    N: int
    M: int
    pix_shape: tuple
    X: np.ndarray
    K_design: int
    dropped: list
    terms: Any
    message: str | None         # the rank-deficient design's warning


def _repeat(dev, prep: _Prepared, y, dates, h, breaks, dtype, criterion, magnitudes, confint):
    """A device call made again from the arguments an earlier call with the same key checked
    and derived (``call_memo``): its warning again, then its kernels on cube ``y``."""
    if prep.message is not None:
        warn_caller(prep.message, UserWarning)
    return _breaks_device(dev, prep.plan, reshaped(y, (prep.N, prep.M)), prep.pix_shape,
                          prep.X, prep.K_design, h, breaks, np.dtype(dtype), criterion,
                          magnitudes, confint, dates, list(prep.dropped), prep.terms)


def _original_shape(pix_shape, N, axis):
    """(shape, time axis) of the cube as given, from its moved shape."""
    axis = axis % (len(pix_shape) + 1)
    return pix_shape[:axis] + (N,) + pix_shape[axis:], axis


def host_cube(y, dates, time_axis):
    """(labels, dates, y with its time axis first) of a host cube ``y`` (numpy, pandas,
    xarray; any layout and byte order)."""
    labels, dates = time_axis_and_dates(y, dates, time_axis)
    y = native(values_of(y))
    if y.dtype.kind not in "fiu" or y.dtype.kind == "b":
        raise TypeError(f"y must be a real array (NaN = missing), got dtype {y.dtype}")
    n_dates = np.asarray(dates).size
    check_fits(y.shape, labels.axis, lambda n: n == n_dates, f"dates ({n_dates} entries)")
    return labels, dates, np.moveaxis(y, labels.axis, 0)


def _break_dates(dates, bp):
    """The dates of breakpoints ``bp`` (NaT / NaN where -1; cftime dates as objects, None where
    -1, as ``bfast_monitor``'s: a 360-day calendar's 30 February has no datetime64)."""
    from ..timeaxis import is_cftime
    src = np.asarray(dates).ravel()
    if is_cftime(src):
        src, fill = src.astype(object), None
        return np.where(bp >= 0, src[np.clip(bp, 0, None)], fill)
    if src.dtype.kind not in "Mfiu":
        src = src.astype("datetime64[D]")
    fill = np.datetime64("NaT") if src.dtype.kind == "M" else np.nan
    return np.where(bp >= 0, src[np.clip(bp, 0, None)], fill)


def _breaks_device(dev, plan, flat, pix_shape, X, K_design, h, breaks, dtype, criterion,
                   magnitudes, confint, dates, dropped, terms=None):
    """``bfast_breaks`` on a device cube ``flat`` ``[N, M]``: the breakpoints, the failed
    pixels' marks (h <= the design's columns, rank-deficient valid dates), the RSS floor, the
    criteria, the selection and the magnitudes as kernels, the result's arrays device arrays,
    nothing read back or waited for (``clts.bfast.device``). ``break_dates``, ``diagnostics``
    and the confidence intervals (a host computation) are computed on first access. Per-pixel
    regressors (``terms.device``): their columns and the cube with the values they make missing
    made on the device first (``pixel_device.prepare``)."""
    from . import device as dv
    xp, pre = None, []
    if terms is not None and terms.device is not None:
        from .pixel_device import prepare
        flat, xp, pre = prepare(dev, flat, None, terms, dtype)
    q = 0 if xp is None else terms.q
    K = X.shape[1] + q
    keep = list(pre)

    def make():
        out, _, kk = dv.run_breakpoints(dev, plan, flat, X, h, breaks, dtype,
                                        k_check=K_design, rank_check=True, xp=xp)
        keep.extend(kk)
        s = dv.select(dev, out, K, dtype, criterion, dv.c_type(flat.dtype))
        out.update(sel=s["sel"], bp_sel=s["bp"], bic=s["bic"], lwz=s["lwz"])
        if magnitudes:
            out["mags"], kk = dv.magnitudes(dev, plan, flat, X, s["sel"], s["bp"], dtype, None,
                                            xp=xp)
            keep.extend(kk)
        return out
    # a shape's repeated calls replay the second's launches (per-pixel regressors: not)
    key = None if xp is not None or dev.info.simulator else (
        Same(plan), flat.shape, flat.dtype.str, dv.element_offset(flat), X.shape, X.tobytes(),
        K_design, h, breaks, dtype.str, criterion, bool(magnitudes), options.get("max_chunk"))
    out = run_recorded(dev, dev.state.constant("bfast.breaks_recorder", _recorder), key,
                       {"y": flat.base_data}, make, keep)
    s = dict(sel=out["sel"], bp=out["bp_sel"], bic=out["bic"], lwz=out["lwz"])
    mags = out.get("mags")
    BREAKS = out["rss"].shape[0] - 1

    def per(a):
        return reshaped(a, pix_shape)

    def lead(a):
        return reshaped(a, a.shape[:1] + pix_shape)

    res = BreaksResult(
        n_breaks=per(s["sel"]), breakpoints=lead(s["bp"]), break_dates=None,
        magnitudes=None if mags is None else lead(mags), rss=lead(out["rss"]),
        bic=lead(s["bic"]), lwz=lead(s["lwz"]), nobs=per(out["nobs"]), h=per(out["h"]),
        status=per(out["status"]), all_breakpoints=lead(out["bp"]), criterion=criterion,
        plan=plan)
    res._keep = keep + [out["bmax"], out["floor"]]
    B = s["bp"].shape[0]

    def diagnostics():
        status = res.status.get().reshape(-1)
        sel = res.n_breaks.get().reshape(-1)
        rss = np.asarray(out["rss"].get(), np.float64)
        chosen = np.take_along_axis(rss, np.clip(sel, 0, None)[None, :], 0)[0]
        counts = {name: int(np.sum(status == code)) for code, name in BP_STATUS.items() if code}
        return dict(n_coef=K, breaks=BREAKS, failed=int(np.sum(status != 0)), **counts,
                    exact_fit=int(np.sum((sel >= 0) & (chosen <= out["floor"].get()))),
                    dropped_columns=list(dropped), device=str(dev.slug))
    res._set_lazy("break_dates",
                  lambda: _break_dates(dates, res.breakpoints.get().reshape(B, -1))
                  .reshape((B,) + pix_shape))
    res._set_lazy("diagnostics", diagnostics)
    if confint is not None:
        def intervals():
            y = flat.get().astype(dtype)
            XP = None if xp is None else \
                xp.get()[:y.shape[0] * q].astype(np.float64).reshape(y.shape[0], q, -1)
            ci = _intervals(y, X, res.n_breaks.get().reshape(-1),
                            res.breakpoints.get().reshape(B, -1), float(confint), XP)
            return ci.reshape((2, B) + pix_shape)
        cache = {}

        def ci(i):
            if "ci" not in cache:
                cache["ci"] = intervals()
            return cache["ci"][i]
        res._set_lazy("ci_lower", lambda: ci(0))
        res._set_lazy("ci_upper", lambda: ci(1))
    return res


def _recorder():
    """A device's recorder of ``bfast_breaks``' device calls: a key's second call is recorded,
    the next ones replay it (``clts.mp.replay`` says why not the first)."""
    return Recorder(after=1)


def _magnitudes(flat, X, sel, bp, XP=None):
    """Fit of the segment after minus that before, at the first valid date after each break
    ([breaks, M], NaN padded): per-segment least squares by masked normal equations. ``XP``
    [N, q, M]: per-pixel columns after those of ``X``."""
    N, M = flat.shape
    B = bp.shape[0]
    mags = np.full((B, M), np.nan)
    y = np.asarray(flat, np.float64)
    valid = ~np.isnan(y)
    y0 = np.where(valid, y, 0.0)
    idx = np.arange(N)[:, None]
    has = sel > 0
    if not has.any():
        return mags
    cols = np.nonzero(has)[0]
    yv, vv, bpv = y0[:, cols], valid[:, cols], bp[:, cols]
    if XP is not None:
        X = pixel_design(X, XP[:, :, cols])          # [N, P, K]
    prev = None
    lo = np.full(cols.size, -1)
    for s in range(B + 1):
        hi = bpv[s] if s < B else np.full(cols.size, N - 1)
        hi = np.where(hi < 0, N - 1, hi)
        live = (s == 0) | (bpv[s - 1] >= 0) if s else np.ones(cols.size, bool)
        mask = vv & (idx > lo) & (idx <= hi)
        beta = masked_fit(X, yv, mask)
        if s > 0 and prev is not None:
            # first valid date after the break
            first = np.argmax(vv & (idx > lo), axis=0)
            xa = X[first] if X.ndim == 2 else X[first, np.arange(cols.size)]
            m = np.einsum("pk,pk->p", xa, beta - prev)
            m = np.where(live & (bpv[s - 1] >= 0), m, np.nan)
            mags[s - 1, cols] = m
        prev = beta
        lo = np.where(hi >= 0, hi, lo)
    return mags


def masked_fit(X, y0, mask):
    """[P, K] least-squares coefficients of each column of ``y0`` [N, P] (zeros where
    missing) on the rows ``mask`` [N, P] of ``X`` ([N, K], or [N, P, K] per pixel), by the
    normal equations (float64; NaN where those rows are rank-deficient)."""
    if X.ndim == 2:       # matrix products: the outer products of the rows, masked
        N, K = X.shape
        m = np.asarray(mask, np.float64)
        G = (m.T @ (X[:, :, None] * X[:, None, :]).reshape(N, K * K)).reshape(-1, K, K)
        Xy = (y0 * m).T @ X
    else:
        G = np.einsum("tpk,tpl,tp->pkl", X, X, mask)
        Xy = np.einsum("tpk,tp->pk", X, y0 * mask)
    K = X.shape[-1]
    with np.errstate(all="ignore"):        # numpy's matrix_rank rule, by the eigenvalues
        ev = np.linalg.eigvalsh(np.where(np.isfinite(G), G, 0.0))
        ok = np.isfinite(G).all(axis=(1, 2)) & (ev[:, 0] > ev[:, -1] * K * np.finfo(float).eps)
        Gs = np.where(ok[:, None, None], G, np.eye(K))
        beta = np.linalg.solve(Gs, Xy[..., None])[..., 0]
    beta[~ok] = np.nan
    return beta


def _intervals(flat, X, sel, bp, level, XP=None, coef=None):
    """[2, breaks, M] date indices of the interval ends (see ``clts.bfast.confint``); ``coef``
    [breaks + 1, M, K]: the segments' fits to use (default: their least-squares fits)."""
    from .confint import intervals
    B, M = bp.shape
    out = np.full((2, B, M), -1, np.int32)
    for p in np.nonzero(sel > 0)[0]:
        y = np.asarray(flat[:, p], np.float64)
        idx = np.nonzero(~np.isnan(y))[0]
        m = int(sel[p])
        vb = np.searchsorted(idx, bp[:m, p]) + 1            # 1-based value indices, as R
        Xp = X if XP is None else np.column_stack([X, XP[:, :, p]])
        iv = intervals(Xp[idx], y[idx], vb, level,
                       coefs=None if coef is None else coef[:m + 1, p])
        for j in range(m):
            if iv[j, 1] >= 0:        # R's NA is -1; a lower end before the values is clipped
                out[0, j, p] = idx[np.clip(iv[j, 0], 1, idx.size) - 1]
                out[1, j, p] = idx[np.clip(iv[j, 1], 1, idx.size) - 1]
    return out
