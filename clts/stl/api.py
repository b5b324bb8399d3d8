"""clts.stl: batched STL decomposition with missing values, all steps in OpenCL kernels."""
from __future__ import annotations

import numpy as np

from ..runtime import get_device
from ..runtime.integrations import time_axis_of
from ..timeaxis import check_fits, period_of
from ..runtime.arrays import as_rows, is_device_array
from ..runtime.outputs import deliver, in_input_layout, out_arrays, view_as
from ..runtime.memory import reshaped
from ..runtime.resident import Lazy, LazyDict, device_series
from ..vocabulary import renamed
from .chunks import COMPONENTS as _COMPONENTS, run_device, run_host
from .chunks import validated as _validated
from .params import QUAD_DET_TOL, check_arguments, outputs_of, periodic_mean  # noqa: F401
from .params import periodic_window
# (check_arguments: public here, for callers that check before they start)
from .result import STLResult, slope_per_step  # noqa: F401 (public here)
from .runner import Runner as _Runner, planned  # noqa: F401 (_Runner: tests)


@renamed(loess_version="version", loess_params="**plan_overrides")
def stl(y, period=None, *, seasonal=7, trend=None, low_pass=None, seasonal_deg=None,
        trend_deg=None, low_pass_deg=None, seasonal_jump=None, trend_jump=None,
        low_pass_jump=None, robust=False,
        inner_iter=None, outer_iter=None, version="auto", r_defaults=False, device=None,
        interpolation="linear", time_axis=None, progress=True, out=None, outputs=None,
        **plan_overrides):
    """Batched STL decomposition (seasonal + trend + remainder) with missing values.

    Every series of the batch is decomposed by the LOESS-based procedure of Cleveland et al.,
    with the parameters, defaults and results of ``statsmodels.tsa.seasonal.STL``, as OpenCL
    kernels that process the whole batch at once (the GPU method of Serykh et al.).

    Parameters
    ----------
    y : array_like, shape (batch, time) or (time,), or any shape with ``time_axis``
        float32 or float64 series (float16 is computed in float32, integers and bools in
        float64); NaN marks a missing value. +-inf is rejected. A series needs at least two
        periods. A pandas Series / DataFrame (one series per column, time down the rows) or
        an xarray DataArray comes back labelled: the components with the input's index /
        coordinates. A ``pyopencl.array.Array`` (C-contiguous [batch, time] or [time],
        float32 / float64, in the context of ``device``) stays on the device: device arrays
        out, nothing read back or waited for inside the call (docs/device-arrays.md).
    period : int, optional
        Length of the seasonal cycle, >= 2. None: from the frequency of a pandas / xarray
        datetime time index by statsmodels' rules (monthly 12, quarterly 4, weekly 52, daily 7,
        business-daily 5, hourly 24).
    seasonal, trend, low_pass : int, optional
        LOESS window lengths (odd, >= 3). ``seasonal=7``, or ``"periodic"`` (R's
        ``s.window = "periodic"``: window 10 n + 1, degree 0, then each cycle position's mean); ``trend`` defaults to the next odd
        integer of ceil(1.5 period / (1 - 1.5 / seasonal)) and must exceed ``period``;
        ``low_pass`` to the smallest odd integer > ``period``.
    seasonal_deg, trend_deg, low_pass_deg : {0, 1, 2}, optional
        Degrees of the local polynomials (default None: 1, statsmodels'; R's with
        ``r_defaults``).
    seasonal_jump, trend_jump, low_pass_jump : int, optional
        Fit every ``jump``-th point and interpolate between them (default None: 1; R's
        ceil(window / 10) with ``r_defaults``).
    robust : bool, optional
        Bisquare robustness weights from 6 x the median absolute residual.
    inner_iter, outer_iter : int, optional
        Iterations; default 5 / 0, or 2 / 15 with ``robust=True`` (statsmodels' choice).
    version : {"auto", "outer", "intragroup", "flat"}, optional
        LOESS code version; "auto" picks per smoother from the device profile.
        ``loess_version`` is its deprecated name (a DeprecationWarning, one release).
    r_defaults : bool, optional
        Take R's ``stl`` defaults (jumps ceil(window / 10), seasonal degree 0, low-pass
        degree the trend's, low-pass window the next odd >= period, iterations) for what is
        left None; values given are kept, as R keeps its given arguments.
    device : int, str or Device, optional
        Device index, name substring or slug (``clts devices``); the default device if None.
    interpolation : {"linear", "hermite"}, optional
        Between jumped fits: linear (statsmodels and R) or cubic Hermite from the fitted values
        and the slopes of the local fits (stlplus and Serykh et al.).
    time_axis : int, optional
        The axis of ``y`` that is time: default the last for numpy arrays (``[batch..., time]``,
        any number of other axes), the index of a pandas object, the ``time`` dimension of a
        DataArray (or a dimension name). A ``period`` that leaves fewer than two periods on
        that axis but fits another is a ValueError naming the ``time_axis=`` that reads it
        (docs/api-conventions.md, "Where time is").
    progress : bool, optional
        A progress bar (tqdm, shown after half a second): over device chunks, or over the
        iterations of a call in one chunk.
    out : dict of numpy arrays, or STLResult, optional
        Arrays that receive the components: a dict with any of ``seasonal``, ``trend``,
        ``resid``, ``weights`` (numpy arrays of the input's shape and of the result's dtype,
        any layout), or the result of an earlier call of the same shape (its numpy components;
        two results used in turn for a loop). Results are the same bits as without ``out=``,
        without the page faults of fresh arrays. Checked before any work: the shape and
        dtype, writeable, no overlap with ``y`` or with one another.
    outputs : str or sequence of str, optional
        The components to return, of ``seasonal``, ``trend``, ``resid``, ``weights``
        (default all); the others are None in the result. On a GPU only what they need
        crosses the link (``outputs=("trend",)``: the trend alone, half the bytes of the
        default's seasonal and trend), and the host skips the residual and weights passes it
        is not asked for. The kernels compute the same either way (each component feeds the
        next iteration); the returned components are the same bits as without ``outputs``.
    **plan_overrides
        Force tunables for this call (each a profile key of section ``stl``): ``lanes``,
        ``wg``, ``chunk``, ``table`` (tricube weight tables for the vector outer LOESS on
        complete data), ``interleave``, ``interp_per_item`` (jump intervals filled per
        work-item, 0 = a whole segment) and the thresholds of ``version="auto"``
        (``jump_threshold``, ``intragroup_max_q``, ``parallelism_threshold``), and
        ``mapping`` ("series" or "coalesced": the kernels of the steps around the LOESS,
        docs/stl.md), and ``fused`` (work-items per series of the fused STL: a work-group
        per series runs whole inner iterations in local memory, one launch per outer
        iteration; 0 = the separate kernels). ``loess_params={...}`` is their deprecated
        form (a DeprecationWarning, one release).

    Returns
    -------
    STLResult
        ``seasonal``, ``trend``, ``resid``, ``weights`` and ``observed`` (the input), shaped
        and labelled like ``y``, and ``diagnostics``; the ``out=`` arrays where given. Device
        arrays for a device array ``y`` (``n_failed`` then read on first access).

    Raises
    ------
    ValueError
        Bad window, degree, jump or iteration values, a series shorter than two periods,
        +-inf values, or an unknown ``version`` / ``interpolation``.
    TypeError
        ``y`` is not real numeric.
    clts.DeviceError
        float64 data on a device without ``cl_khr_fp64``.

    Notes
    -----
    Each LOESS fit uses the ``min(q, n_valid)`` valid points nearest to it. A series with a
    cycle-subseries without any valid value, or with fewer valid values than two periods' worth,
    comes back NaN (weights 0) and is counted in ``diagnostics["n_failed"]``. Details:
    ``docs/stl.md``.

    References
    ----------
    .. [1] R. B. Cleveland, W. S. Cleveland, J. E. McRae, I. Terpenning, "STL: A Seasonal-Trend
       Decomposition Procedure Based on Loess", Journal of Official Statistics 6(1), 1990.
    .. [2] D. Serykh, S. Oehmcke, C. Oancea, D. Masiliunas, J. Verbesselt et al.,
       "Seasonal-Trend Time Series Decomposition on Graphics Processing Units", IEEE BigData
       2023.

    Examples
    --------
    >>> import numpy as np, clts
    >>> t = np.arange(120)
    >>> y = np.sin(2 * np.pi * t / 12) + 0.02 * t
    >>> y2 = np.stack([y, 3 * y])
    >>> y2[1, 30:35] = np.nan                      # missing values
    >>> r = clts.stl(y2, period=12, seasonal=13)
    >>> r.seasonal.shape, r.diagnostics["n_failed"]
    ((2, 120), 0)
    >>> bool(np.allclose(r.seasonal[0] + r.trend[0] + r.resid[0], y))
    True
    >>> bool(np.isnan(r.resid[1, 30]))
    True
    """
    settings = dict(seasonal=seasonal, trend=trend, low_pass=low_pass, seasonal_deg=seasonal_deg,
                    trend_deg=trend_deg, low_pass_deg=low_pass_deg, seasonal_jump=seasonal_jump,
                    trend_jump=trend_jump, low_pass_jump=low_pass_jump, robust=robust,
                    inner_iter=inner_iter, outer_iter=outer_iter, r_defaults=r_defaults,
                    interpolation=interpolation)
    wanted = outputs_of(outputs, _COMPONENTS)
    if is_device_array(y):
        return _stl_device(y, period, settings, device=device, version=version,
                           time_axis=time_axis, out=out, plan_overrides=plan_overrides,
                           wanted=wanted)
    # the edge: labels and the time axis, once; the core sees [batch, time]
    labels = time_axis_of(y, time_axis, -1)
    if period is None:
        period = period_of(labels.times())
    if isinstance(period, (int, np.integer)) and not isinstance(period, bool) and period >= 2:
        check_fits(np.shape(y), labels.axis, lambda n: n >= 2 * period,
                   f"period={int(period)} (two periods: {2 * int(period)} values)")
    y_in = labels.to_last(y)
    y, complete = _validated(y_in)
    y2 = as_rows(y)
    dev = get_device(device)
    # the caller's out= arrays (checked before any work), written in place where they can be
    # viewed as [batch, time]
    shape_in = np.moveaxis(y, -1, labels.axis).shape
    given = out_arrays(out, {k: (shape_in, y2.dtype) for k in wanted},
                       {"y": y_in}, "stl")
    last = {k: np.moveaxis(a, labels.axis, -1) for k, a in given.items()}
    dests = {k: view_as(a, y2.shape) for k, a in last.items()}
    comps, failed, diag = decompose(y2, period, settings, dev, version=version, dests=dests,
                                    progress=progress, plan_overrides=plan_overrides,
                                    complete=complete, wanted=wanted)
    diag = dict(n_failed=int(failed.sum()), failed=failed, **diag)
    wrapped = {}
    for key in _COMPONENTS:
        if key not in wanted:
            wrapped[key] = None
            continue
        a = comps[key].reshape(y.shape)
        if key in given:      # the out= array (filled here unless the kernels wrote it)
            deliver(last[key], a)
            wrapped[key] = labels._wrap_series(given[key])
        else:
            wrapped[key] = in_input_layout(labels, a)
    if labels.labelled or y.ndim > 2:
        diag["failed"] = labels.per_series(failed.reshape(y.shape[:-1]), "failed")
    return STLResult(**wrapped, diagnostics=diag, labels=labels, observed=labels.series(y))


def decompose(y2, period, settings: dict, dev, *, version="auto", dests=None, progress=True,
              plan_overrides=None, keep=None, complete=None, wanted=_COMPONENTS):
    """The core of :func:`stl` (and of MSTL's rounds): the STL of the rows of ``y2`` (batch,
    time), a checked C-contiguous numpy array or a device array (:func:`_stl_device`'s
    checks), with the keyword ``settings`` of :func:`stl`. Returns ``(components, failed,
    diagnostics)``: components by name (``_COMPONENTS``) of y2's shape and kind (numpy or
    device arrays; numpy into ``dests`` where given), the failed-series mask (numpy bool, or
    a device array of bytes: nothing read back) and the diagnostics other than the failures.
    ``keep``: a list that receives the temporaries of a device call's queued kernels;
    ``complete``: whether numpy ``y2`` has no NaN, when the caller knows (else scanned);
    ``wanted``: the components the caller returns (numpy data: the others are not brought to
    the host and come back None, but the seasonal and trend of a residual)."""
    on_dev = is_device_array(y2)
    B, N = y2.shape
    seasonal, seasonal_deg, periodic = periodic_window(settings["seasonal"],
                                                       settings["seasonal_deg"], N)
    p = check_arguments(N, period, **dict(settings, seasonal=seasonal,
                                          seasonal_deg=seasonal_deg), version=version)
    # device data are not scanned (a host read): they take the missing-value code path
    if on_dev:
        complete = False
    elif complete is None:
        complete = bool(np.isfinite(y2).all())
    dev.require_dtype(y2.dtype)
    plan, runner = planned(dev, p, B, N, y2.dtype, complete, version, plan_overrides)
    diag = dict(params=dict(p, periodic=periodic),
                loess_versions={k: "fused" if plan.fused else getattr(plan, k).version
                                for k in ("seasonal", "trend", "low_pass")},
                fused=plan.fused)
    run = run_device if on_dev else run_host
    comps, failed = run(dev, runner, p, periodic, y2, dests=dests or {}, progress=progress,
                        wanted=wanted, keep=keep)
    return comps, failed, diag


def _stl_device(y, period, settings, *, device, version, time_axis, out, plan_overrides,
                wanted=_COMPONENTS):
    """:func:`stl` of a device array: checked without a copy or a read, decomposed by
    :func:`decompose`, results on the device (``n_failed`` read on first access)."""
    dev = get_device(device)
    y2 = device_series(y, dev, time_axis)
    if period is None:
        raise ValueError("period is required for a device array y (it has no time index to "
                         "read it from)")
    if out is not None:
        raise TypeError("stl: out= takes numpy arrays; the results of a device array are "
                        "fresh device arrays")
    keep = []
    comps, failed, diag = decompose(y2, period, settings, dev, version=version,
                                    plan_overrides=plan_overrides, keep=keep, progress=False)
    shape = tuple(y.shape)
    # every component is computed on the device (each feeds the next iteration): the ones
    # not asked for are dropped
    comps = {k: (reshaped(a, shape) if k in wanted else None) for k, a in comps.items()}
    failed = reshaped(failed, shape[:-1])
    diag = LazyDict(n_failed=Lazy(lambda: int(np.count_nonzero(failed.get()))), failed=failed,
                    **diag)
    r = STLResult(**comps, diagnostics=diag, labels=None, observed=y)
    r._keep = keep
    return r
