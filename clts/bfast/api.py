"""``clts.bfast_monitor``: batched BFAST-Monitor change detection with missing values.

Model per pixel (K = 2k + 2 coefficients with ``trend``, 2k + 1 without), fitted by least
squares on the valid values of the stable history (dates before ``start_monitor``; with
``history="ROC"`` only from the start chosen by the reverse-ordered CUSUM test)::

    y_t = a + b t + sum_j ( c_j sin(2 pi j t / freq) + d_j cos(2 pi j t / freq) ) + e_t

Residuals r of the valid values are numbered 1..n in the history and n+1..N in the monitoring
period (only valid values count). With h = floor(hfrac * n)::

    MOSUM_j = sum_{i = j-h+1..j} r_i / (sigma sqrt(n)),    j = n+1..N
    break   = first monitoring date with |MOSUM_j| > boundary_j

``convention="r"`` (R ``bfast::bfastmonitor`` + ``strucchange`` OLS-MOSUM monitoring):
    sigma^2 = sum_{history} r^2 / (n - K);
    boundary_j = crit * sqrt(2 * log+(j / n)),  log+(x) = log(x) if x > e else 1;
    crit = strucchange's ``monitorMECritvalTable[h, period, , "max"]`` interpolated linearly in
    1 - level (levels 0.001..0.05), h in {0.25, 0.5, 1}, period in {2, 4, 6, 8, 10};
    -2 when floor(hfrac * n) <= 1 or n <= K; means / magnitudes NaN then.
``convention="bfast-py"`` (the ``bfast`` 0.7 Python package):
    sigma^2 = sum_{history} r^2 / (n - (2 + 2k));
    boundary_t = crit * sqrt(2) * sqrt(log+(t / t_{n0-1})) with t the time of the monitoring
    date and t_{n0-1} that of the last history date (days since 1 January of the first year for
    dates); crit at the tabulated level 1 - level, nearest tabulated period;
    -2 when n <= 5 or N - n <= 5; means and magnitudes 0 then.
``type="OLS-CUSUM"`` / ``"RE"`` / ``"ME"``: strucchange's other monitoring processes
(``clts.bfast.monitor_types``, docs/bfast.md "Monitoring processes").
Both: a singular history fit (fewer valid values than coefficients, collinear) gives -2;
``magnitudes`` = median of the monitoring residuals; ``means`` = mean of the MOSUM over the valid
monitoring values; ``breaks`` counts every monitoring date (valid or not) from 0.
"""
from __future__ import annotations

import math

import numpy as np

from ..runtime import get_device
from ..runtime.arrays import device_input, is_device_array, native, values_of
from ..runtime.faults import with_smaller_chunks
from ..runtime.outputs import deliver, out_arrays, view_as
from ..runtime.memory import reshaped
from ..runtime.plans import plan_once
from ..vocabulary import renamed
from .common import STATUS
from .common import log_plus, rec_cusum_bound
from .pixel_device import device_terms
from .regressors import model_terms
from .common import time_axis as _time_axis
from ..timeaxis import check_fits, is_cftime, parse_date
from .plan import Plan, Problem, make_plan
from .axis import monitor_axis
from .device import INT_TYPES, device_axis
from .call_memo import call_key
from .monitor_device import Prepared, monitor, repeat
from .result import BfastResult
from .monitor_run import run_host
from .checks import TYPES, check_arguments, check_history  # noqa: F401 (public here)
from .monitor_types import PROCESS, critval, r_basis
from .checks import (check_params, check_season_units, default_freq, levels, out_specs,
                     time_axis_and_dates)
from ..errors import warn_caller

_INT_TYPES = INT_TYPES
_CUBE_TYPES = (np.dtype(np.float32), np.dtype(np.float64), *INT_TYPES)
#: the boundary table of R's convention (none): one read-only array, found again by identity
_NO_BOUNDS = np.zeros(1)
_NO_BOUNDS.setflags(write=False)


@renamed(progress_bar="progress")
def bfast_monitor(y, dates, start_monitor, *, k=3, freq=None, trend=True, hfrac=0.25,
                  level=0.05, history="all", convention="r", magnitudes=True, detailed=False,
                  nodata=None, time_axis=None, period=10, dtype=None, device=None,
                  version="auto", plan=None, progress=True, type="OLS-MOSUM", out=None,
                  regressors=None, formula=None,
                  **plan_overrides):
    """BFAST-Monitor change detection on every pixel (series) of ``y``.

    Fits a harmonic season + trend model to the valid values of each pixel's stable history
    (dates before ``start_monitor``) and reports the first monitoring date whose OLS-MOSUM of
    residuals crosses the boundary (formulas in the module docstring and ``docs/bfast.md``).

    Parameters
    ----------
    y : array_like
        Cube with a time axis (``time_axis``): float32 / float64 with NaN = missing, or
        int8/16/32 / uint8/16/32 with ``nodata`` = missing (converted on the device). A pandas
        DataFrame holds one pixel per column, time down the rows; per-pixel results of a
        DataFrame come back as Series indexed by its columns, of a DataArray as DataArrays
        without the time dimension.
        A ``pyopencl.array.Array`` (time-major ``[time, pixels...]``, C-contiguous, one of
        these dtypes, on ``device``) runs on the device without a host transfer or wait and
        gives device arrays (``docs/device-arrays.md``, "BFAST").
    dates : array_like or None
        One date per time step, strictly increasing: datetime64 / datetime / date or cftime
        dates of any calendar (time in days since 1 January of the first year, in that
        calendar: give ``freq=360`` for ``360_day``) or numbers such as decimal years (then give
        ``freq=1``) or time steps (``freq`` steps per season). None: the index of a pandas ``y``, the time coordinate of a DataArray.
    start_monitor : date, date string or number
        Start of the monitoring period, the same kind as ``dates`` ("2010-01-01" for dates).
    k : int, optional
        Harmonic terms (R's ``order``), 0..10 (default 3); 0 with ``trend=True`` is R's
        ``formula = response ~ trend``, ``trend=False`` with k >= 1 is ``response ~ harmon``.
    freq : float, optional
        Season length in time-axis units. Default None: a year of the axis's calendar in days,
        365.0 for datetime64 and numbers (R's ``bfastts`` daily series), 365 / 366 / 360 for
        cftime's ``noleap`` / ``all_leap`` / ``360_day`` (365.0 for its other calendars); give
        ``freq=1`` for decimal years (a ``freq`` that counts values per season on numeric
        dates, R's ts frequency, is a ValueError: docs/bfast.md, "Parameters").
    trend : bool, optional
        Include a linear trend (default True).
    regressors, formula : optional
        Covariates shared by all pixels (one value per date, ``[dates]``, ``[dates, q]`` or a
        dict name -> ``[dates]``) or per pixel (``y``'s shape plus a last axis of q, or a dict
        name -> an array shaped like ``y``; with a device cube ``y`` they are device arrays,
        centred and scaled on the device: ``clts.bfast.pixel_device``), at most 16, and R's
        model formula over
        ``trend``, ``harmon`` (of ``k``), their names and ``1``, as :func:`clts.bfast_breaks`
        takes them (R's ``bfastmonitor(formula = response ~ trend + harmon + xreg)``; per pixel
        R runs each pixel's own frame); the covariates of the monitoring dates enter the
        prediction, a NaN covariate makes that value of ``y`` missing (R's ``na.omit``; device
        cubes: shared ones finite, none with ``detailed=True``), a pixel whose own covariate
        makes its history design singular gets status 2.
    hfrac : {0.25, 0.5, 1.0}, optional
        MOSUM window as a fraction of the history's valid values.
    level : float or (float, float), optional
        Significance level of strucchange's critical-value table (default 0.05); a pair gives
        the monitoring level and the ROC history test's level, as R's ``level = c(a, b)``.
    history : {"all", "ROC", "BP"}, date or number, optional
        The whole history; from the start chosen by the reverse-ordered CUSUM test ("ROC");
        from the date after the last of the Bai-Perron breaks that BIC selects in the history
        ("BP", bfast's ``history_break``: h = 6 K, a pixel with fewer than 12 K valid history
        values is not tested, status 1); or from a given date / time (as R's numeric
        ``history``).
    convention : {"r", "bfast-py"}, optional
        R's ``bfastmonitor`` + strucchange, or the bfast 0.7 Python package.
    magnitudes : bool, optional
        Compute the median of the monitoring residuals (default True).
    detailed : bool, optional
        Also return ``mosum``, ``bounds``, ``prediction``, ``coef`` and ``sigma``.
    nodata : number, optional
        The missing-value marker of integer cubes.
    time_axis : int or str, optional
        Axis of ``y`` that is time: default 0 for numpy (``[time, rows, cols]``, an image
        stack's layout), the index of a pandas object, the ``time`` dimension of a DataArray
        (or a dimension name). ``dates`` whose length is not that axis's but another axis's is
        a ValueError naming ``time_axis=`` (docs/api-conventions.md, "Where time is").
    period : float, optional
        strucchange's ``end``: the monitoring horizon relative to the history (10, as in R).
    dtype : {float32, float64}, optional
        Computation precision (default: the cube's float type, float32 for integers).
    device : int, str or Device, optional
        Device index, name substring or slug; the default device if None.
    version : {"auto", "fused", "multi"}, optional
        Code version ("auto": from the device profile).
    plan : clts.bfast.Plan, optional
        A plan to run as is.
    progress : bool, optional
        Show a progress bar over chunks when ``tqdm`` is installed (``progress_bar`` is its
        deprecated name).
    type : {"OLS-MOSUM", "OLS-CUSUM", "RE", "ME"}, optional
        strucchange's monitoring process (R's ``type``): the moving sum of the residuals
        (default), their cumulated sum, or the recursive / moving-window estimates (the
        K-vector of the coefficients' change, tested by its largest component), each with
        strucchange's boundary and critical value (``clts.bfast.monitor_types``; ``means``,
        ``mosum`` and ``bounds`` then hold that process, for RE / ME its largest |component|,
        and its boundary; docs/bfast.md, "Monitoring processes"). Types other than
        "OLS-MOSUM" need ``convention="r"``. "RE" depends on the data's units, as
        strucchange's (it divides by sigma twice): on NDVI in 0..1 it flags nearly every
        pixel at the first monitoring date, on NDVI x 10^4 almost none; rescale with care.
    out : dict of numpy arrays, or BfastResult, optional
        Arrays that receive the results: a dict with any of the result's array attributes
        that this call returns (``breaks``, ``break_dates``, ``magnitudes``, ``means``,
        ``valids``, ``status``, ``history_start``; with ``detailed=True`` ``mosum``, ``bounds``,
        ``prediction``, ``coef``, ``sigma``), numpy arrays of the result's shape and dtype in
        any layout, or the result of an earlier numpy call of the same shape. The same bits as
        without ``out=``; checked before any work (shape, dtype, writeable, no overlap with
        ``y`` or with one another).
    **plan_overrides
        ``lanes``, ``wg``, ``roc_wg``, ``chunk_bytes`` (largest cube + scratch bytes of one
        chunk, 0: no cap), ``scratch`` ("pixel" or "time": layout of the residual scratch,
        same results), ``matrix`` ("pixel" or "rows": one work-item or K work-items per
        pixel hold the K x K matrices of the Gram and ROC kernels, same results), ``bounds``
        ("inline" or "table": R's boundary per date or tabulated once, same results),
        ``subgroup`` (0 or the sub-group size the sweep requires on Intel GPUs): force plan
        parameters.

    Returns
    -------
    BfastResult
        Per-pixel arrays shaped like ``y`` without its time axis (labelled for pandas /
        xarray inputs; device arrays for a device ``y``, whose ``break_dates`` and
        ``diagnostics`` are read on first access); ``plot()`` draws the break maps or one
        pixel's MOSUM; ``to_numpy()`` gives the result with numpy arrays.

    Raises
    ------
    ValueError
        Parameters outside strucchange's table (``hfrac``, ``level``, ``period``), ``k``
        outside 0..10, unknown ``type``, unsorted or mismatched ``dates``, ``start_monitor`` outside the dates.
    TypeError
        Unsupported dtype (bool, complex, int64), non-integer ``time_axis``, non-bool ``trend``.
    clts.DeviceError
        float64 on a device without ``cl_khr_fp64``.

    References
    ----------
    .. [1] F. Gieseke, S. Rosca, T. Henriksen, J. Verbesselt, C. E. Oancea, "Massively-Parallel
       Change Detection for Satellite Time Series Data with Missing Values", IEEE ICDE 2020.
    .. [2] J. Verbesselt, A. Zeileis, M. Herold, "Near real-time disturbance detection using
       satellite image time series", Remote Sensing of Environment 123, 2012.

    Examples
    --------
    >>> import numpy as np, clts
    >>> dates = np.arange("2000-01-01", "2010-01-01", 16, dtype="datetime64[D]")
    >>> t = (dates - dates[0]).astype(float)
    >>> rng = np.random.default_rng(1)
    >>> y = 10 + np.sin(2 * np.pi * t / 365.25)[:, None] + rng.normal(0, 0.1, (t.size, 4))
    >>> y[dates >= np.datetime64("2009-01-01"), :2] -= 3        # pixels 0 and 1 change
    >>> res = clts.bfast_monitor(y, dates, np.datetime64("2008-01-01"))
    >>> res.breaks.tolist(), res.break_dates[:2].astype("datetime64[M]").tolist()
    ([23, 23, -1, -1], [datetime.date(2009, 1, 1), datetime.date(2009, 1, 1)])
    """
    on_device = is_device_array(y)
    fkey = None
    if on_device and regressors is None and formula is None and plan is None and out is None:
        dev = get_device(device)
        fkey = call_key(dev, y, dates, start_monitor,
                        (k, freq, trend, hfrac, level, history, convention, magnitudes,
                         detailed, nodata, time_axis, period, dtype, version, type),
                        plan_overrides)
        res = repeat(dev, fkey, y) if fkey is not None else None
        if res is not None:         # the arguments of an earlier call, checked then
            return res
    level, level_roc = levels(level)
    crit = check_params(k, freq, hfrac, level, period, history, convention, trend, type)
    if on_device:
        dates = device_axis(y, dates, time_axis)
    else:
        labels, dates = time_axis_and_dates(y, dates, time_axis)
    if isinstance(start_monitor, str) and not is_cftime(dates):
        start_monitor = parse_date(start_monitor, np.array([], "datetime64[D]"))
    freq = default_freq(freq, dates)
    history = check_history(history, dates)         # a date string as a datetime64
    check_season_units(dates, freq, k, formula)
    if on_device:
        y_in = y = device_input(y, "y", get_device(device), dtypes=_CUBE_TYPES)
    else:
        time_axis = labels.axis
        y_in = values_of(y)
        y = native(y_in)               # any layout and byte order; pandas / xarray values
        if y.dtype == np.float16:
            y = y.astype(np.float32)
        if y.dtype.kind == "b" or y.dtype.kind not in "fiu" or y.dtype not in _CUBE_TYPES:
            raise TypeError(f"y must be float32/float64 (NaN = missing) or int8/16/32 / "
                            f"uint8/16/32 with nodata, got dtype {y.dtype}")
        if y.ndim < 1:
            raise ValueError("y must have a time axis")
        y = np.moveaxis(y, int(time_axis), 0)
    N = y.shape[0]
    pix_shape = y.shape[1:]
    fits = None if on_device else lambda t: check_fits(
        np.shape(y_in), time_axis, lambda n: n == t.size, f"dates ({t.size} entries)")
    t, _, n, center, scale, bd_src, mon, fill = monitor_axis(dates, start_monitor, N, fits)
    # covariates shared by all pixels ([dates, q]) or per pixel (y's shape + (q,))
    terms = device_terms(formula, k, trend, regressors, y.shape) if on_device else None
    if terms is None:
        terms = model_terms(formula, k, trend, regressors, N,
                            cube=(tuple(y.shape), 0) if on_device else (np.shape(y_in), time_axis))
    if on_device and terms.per_pixel and terms.device is None:
        raise TypeError("per-pixel regressors of a device cube y must be device arrays "
                        "(pyopencl.array.Array, y's shape plus a last axis of q, or a dict of "
                        "arrays shaped like y): numpy ones take a host cube")
    if on_device and terms.missing is not None:
        raise ValueError("regressors of bfast_monitor on a device cube must be finite (on a "
                         "host cube a NaN covariate makes that value of y missing)")
    if terms.q and on_device and detailed:
        raise TypeError("detailed=True with regressors takes a host cube (the coefficients are "
                        "unscaled on the host)")
    k, trend = terms.order, terms.trend
    K = len(terms.columns())
    q_pix = terms.q if terms.per_pixel else 0       # per-pixel columns: the last q_pix of K
    if type in ("RE", "ME"):        # their critical values take strucchange's nreg = K
        crit = critval(type, hfrac, level, period, K, convention)
    hist_given = not isinstance(history, str)
    if dtype is None:
        dtype = y.dtype if y.dtype.kind == "f" else np.dtype(np.float32)
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"dtype must be float32 or float64, got {dtype}")
    if nodata is not None and not np.isfinite(nodata):
        raise ValueError(f"nodata must be a finite number, got {nodata!r}")
    dev = get_device(device)
    dev.require_dtype(dtype)
    if plan is None:
        plan = plan_once(dev, "bfast", make_plan, Problem(n, K), version=version,
                         **plan_overrides)
    else:
        if not isinstance(plan, Plan):
            raise TypeError("plan must be a clts.bfast.Plan")
        plan.validate(dev)
    real = "double" if dtype == np.float64 else "float"
    M = math.prod(int(d) for d in pix_shape)
    flat = reshaped(y, (N, M))
    # a NaN covariate: that value of y is missing (R's na.omit), a float copy of the cube
    flat = terms.apply_missing(flat, dtype)
    in_type = _INT_TYPES.get(flat.dtype, "float" if flat.dtype == np.float32 else "double")
    X = terms.design(t, freq, center, scale)       # the shared columns [N, K - q_pix]
    if convention == "bfast-py":
        bounds_t = crit * math.sqrt(2.0) * np.sqrt(log_plus(t[n:] / t[n - 1]))
    elif type in ("RE", "ME"):
        # R's columns alpha_j + beta_j (the design's column j) for the K columns, then the
        # design matrix [N, K] in the estimates' precision (ereal: double where it can be)
        bounds_t = np.concatenate([r_basis(t, terms, center, scale), X.ravel()])
    else:
        bounds_t = _NO_BOUNDS
    # the kernels' parameters (starts given or from the BP test: the ROC kernels' input)
    tpl = dict(real=real, in_type=in_type, has_nodata=nodata is not None, K=K, N=N, n=n,
               history="ROC" if (hist_given or history == "BP") else history,
               convention=convention, dof_sub=K if convention == "r" else 2 + 2 * k,
               detailed=bool(detailed), magnitudes=bool(magnitudes), process=PROCESS[type],
               ereal="double" if type in ("RE", "ME") and dev.fp64 else real)
    XP = None
    if q_pix:       # the kernels' last q columns, the pixel's own (absent: the sources as before)
        tpl["q"] = q_pix
        XP = pixel_regressors(terms) if terms.device is None else None
    if on_device:
        if out is not None:
            raise TypeError("out= takes numpy arrays; a call on a device array returns device "
                            "arrays of its own")
        prep = Prepared(dev, plan, pix_shape, N, n, K, X, bounds_t, tpl, history,
                        _start_index(t, dates, history, n) if hist_given else None, mon, fill,
                        bd_src, dtype, crit, hfrac, nodata, level_roc, trend, center, scale,
                        terms)
        return monitor(prep, flat, fkey)
    given = out_arrays(out, out_specs(pix_shape, dtype, mon, N, n, K, magnitudes, history,
                                       detailed), {"y": y_in}, "bfast_monitor")
    dests = {_RUN_KEYS.get(key, key): view_as(a, (M,)) for key, a in given.items()
             if key in _DIRECT}
    pre_hs = _history_starts(dev, flat, n, t, dates, history, X, nodata, XP) \
        if hist_given or history == "BP" else None
    out = with_smaller_chunks(lambda max_items: run_host(dev, plan, flat, N, n, K, X, bounds_t, tpl,
        XP=XP,
        dtype=dtype, crit=crit, hfrac=hfrac, nodata=0.0 if nodata is None else float(nodata),
        roc_bounds=(rec_cusum_bound(level_roc), rec_cusum_bound(0.05)) if history == "ROC"
        else None, progress_bar=progress, max_items=max_items, pre_hs=pre_hs, dests=dests),
        device=dev, what="bfast_monitor")
    if pre_hs is not None:
        hs = np.where(pre_hs >= N, -1, pre_hs)
        if hist_given:      # the first valid date from the given start on (-1: none)
            h_y = flat[:n]
            valid = (~np.isnan(h_y) if h_y.dtype.kind == "f" else np.ones(h_y.shape, bool))
            if nodata is not None:
                valid &= h_y != nodata
            after = valid & (np.arange(n)[:, None] >= pre_hs)
            hs = np.where(after.any(axis=0), np.argmax(after, axis=0), -1)
        out["hist_start"] = hs.astype(np.int32)

    def shaped(a, lead=(), name=None):
        if a is None:
            return None
        a = a.reshape(tuple(lead) + pix_shape)
        return a if lead else labels.per_series(a, name)

    breaks = shaped(out["breaks"], name="breaks")
    b_np = np.asarray(breaks)
    break_dates = labels.per_series(np.where(b_np >= 0, mon[np.clip(b_np, 0, None)], fill),
                                    "break_dates")
    res = BfastResult(breaks=breaks, break_dates=break_dates,
                      magnitudes=shaped(out.get("mags"), name="magnitudes") if magnitudes else None,
                      means=shaped(out["means"], name="means"),
                      valids=shaped(out["valids"], name="valids"),
                      history_start=shaped(out.get("hist_start"), name="history_start"),
                      plan=plan, monitor_dates=mon)
    res.status = shaped(out["status"], name="status")
    status = out["status"].reshape(pix_shape)
    if detailed:
        coef = terms.unscale(np.moveaxis(out["coef"], 0, -1).astype(np.float64), center, scale)
        coef = shaped(np.moveaxis(coef, -1, 0).astype(dtype), (K,))
        pred = shaped(out["pred"], (N,))
        sigma = out["sigma"].reshape(pix_shape)
        bad = (status != 0) & (status != 3)     # no fit (zero variance: exact)
        coef = np.where(bad, np.asarray(np.nan, dtype), coef)
        pred = np.where(bad, np.asarray(np.nan, dtype), pred)
        sigma = np.where(bad, np.asarray(np.nan, dtype), sigma)
        # DataFrame / DataArray inputs: lead axes labelled (monitoring dates, dates, terms)
        res.mosum = labels.with_lead(shaped(out["mosum"], (N - n,)), "monitor_time", mon)
        res.bounds = labels.with_lead(shaped(out["bounds"], (N - n,)), "monitor_time", mon)
        res.prediction = labels.with_lead(pred, "time", bd_src)
        res.coef = labels.with_lead(coef, "coef", np.arange(K))
        res.sigma = labels.per_series(sigma, "sigma")
        res.dates, res.observed = bd_src, y
    for key, a in given.items():   # the out= arrays (filled here unless the kernels wrote it)
        deliver(a, np.asarray(getattr(res, key)).reshape(a.shape))
        lead = {"mosum": "monitor_time", "bounds": "monitor_time", "prediction": "time",
                "coef": "coef"}.get(key)
        setattr(res, key, labels.with_lead(a, lead, {"monitor_time": mon, "time": bd_src,
                                                     "coef": np.arange(K)}[lead])
                if lead else labels.per_series(a, key))
    counts = {name: int(np.sum(status == code)) for code, name in STATUS.items() if code}
    res.diagnostics = dict(n_history_dates=n, n_monitor_dates=N - n, n_coef=K, critval=crit,
                           failed=int(np.sum(status != 0)), **counts, device=str(dev.slug),
                           nodata=nodata)
    if counts["non_finite"]:
        warn_caller(f"bfast_monitor: {counts['non_finite']} pixel(s) hold +-inf or values "
                    "too large for the fit; they are marked failed (breaks -2, status 4)",
                    RuntimeWarning)
    return res


#: results the kernels write straight into ``out=`` arrays (others are copied in), and their
#: names in ``monitor_run.run_host``
_DIRECT = ("breaks", "means", "valids", "status", "magnitudes")
_RUN_KEYS = {"magnitudes": "mags"}


def _start_index(t, dates, history, n):
    """The date index where a history given as a date / time starts."""
    th = _time_axis(dates, history)[1]
    i0 = int(np.searchsorted(t, th, side="left"))
    if i0 >= n:
        raise ValueError(f"history (a start date / time, {history!r}) must lie before "
                         "start_monitor")
    return i0


def pixel_regressors(terms):
    """[(N + 2) q, M] float64: the per-pixel columns of ``terms`` centred and scaled, date by
    date (row t q + j: column j at date t), then the q centres and the q scales (R's basis of
    those columns, for RE / ME); the kernels' ``XP``."""
    z = terms.pixel_columns()                       # [N, q, M]
    N, q, M = z.shape
    return np.concatenate([z.reshape(N * q, M), terms.center.T, terms.scale.T])


def _history_starts(dev, flat, n, t, dates, history, X, nodata, XP=None):
    """Date index where each pixel's stable history starts for ``history="BP"`` (bfast's
    ``history_break``, on the device) or a start date / time (the same for all); N (no valid
    history: status 1) where the BP test cannot run (fewer than 12 K valid history values).
    ``XP``: :func:`pixel_regressors` (None: none)."""
    N, M = flat.shape
    if history != "BP":
        return np.full(M, _start_index(t, dates, history, n), np.int32)
    from .breakpoints import history_starts
    from .breakpoints_plan import Problem as BreakpointsProblem, make_plan as make_bp_plan
    hist = flat[:n].astype(np.float64 if dev.fp64 else np.float32)
    if nodata is not None:
        hist[flat[:n] == nodata] = np.nan
    q = 0 if XP is None else (XP.shape[0] // (N + 2))
    xp = None if XP is None else XP[:n * q].reshape(n, q, M).astype(hist.dtype)
    hs = history_starts(dev, make_bp_plan(dev, BreakpointsProblem(n, X.shape[1] + q,
                                                                  hist.itemsize)),
                        hist, X[:n], hist.dtype, XP=xp)
    return np.where(hs < 0, N, hs).astype(np.int32)
