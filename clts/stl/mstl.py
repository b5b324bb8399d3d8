"""clts.mstl: STL with several seasonal periods (MSTL, Bandara, Hyndman and Bergmeir 2021), with
statsmodels' ``MSTL`` semantics, as iterated batched STL (:func:`clts.stl`) on the device."""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from .. import options
from ..runtime import get_device, integrations, launch
from ..runtime.launch import fixed_local
from ..runtime.arrays import as_rows, is_device_array
from ..runtime.integrations import TimeAxis, time_axis_of
from ..runtime.memory import copy, empty_device, fill, reshaped
from ..runtime.plans import cached_under_profile
from ..runtime.replay import Recorder, run_recorded
from ..runtime.resident import Lazy, LazyDict, device_series, result_to_numpy
from ..timeaxis import check_fits
from ..vocabulary import UnknownParameterError, renamed, unknown_message
from .api import decompose, slope_per_step, stl
from .chunks import validate
from .plan import TUNABLE_KEYS
from ..errors import warn_caller

#: statsmodels' STL keywords MSTL sets itself (dropped from ``stl_kwargs``, as statsmodels does)
_OVERLOADED = ("endog", "period", "seasonal")


@dataclass
class MSTLResult:
    """Result of :func:`clts.mstl`.

    Attributes
    ----------
    seasonal : dict
        ``{period: array}``, one seasonal component per period kept (increasing), each shaped
        like the input (statsmodels: the columns ``seasonal_<period>`` of ``res.seasonal``).
    trend, resid, weights : numpy.ndarray, or labelled like the input
        The trend and robustness weights of the last STL (the longest period), and
        ``observed - sum(seasonal) - trend`` (NaN where the input is).
    observed : numpy.ndarray
        The series decomposed: the input, Box-Cox transformed when ``lmbda`` is given.
    lmbda : float, numpy.ndarray or None
        The Box-Cox parameter used (per series with ``lmbda="auto"``).
    diagnostics : dict
        ``n_failed`` / ``failed`` (series that came back NaN, as :func:`clts.stl`),
        ``periods``, ``windows``, ``iterate`` (the values used).

    For a device array ``y`` the arrays are device arrays (``observed`` is ``y``), the batch
    stays on the device between the STL rounds, ``n_failed`` is read on first access and
    ``to_numpy()`` gives numpy arrays (docs/device-arrays.md).
    """
    seasonal: dict
    trend: np.ndarray
    resid: np.ndarray
    weights: np.ndarray
    observed: np.ndarray
    lmbda: object = None
    diagnostics: dict = field(default_factory=dict)
    labels: TimeAxis | None = field(default=None, repr=False)

    @property
    def periods(self) -> tuple:
        return tuple(self.seasonal)

    def trend_slope(self):
        """Least-squares slope per time step of each series' trend (as STLResult's)."""
        trend = self.labels.to_last(self.trend) if self.labels is not None else self.trend
        trend = trend.get() if is_device_array(trend) else trend
        slope = slope_per_step(trend)
        return self.labels.per_series(slope, "trend_slope") if self.labels else slope

    def plot(self, series=0, *, fig=None, title=None):
        """Data, one panel per seasonal component, trend and residual of one series."""
        return integrations.plot("mstl", self, series, fig=fig, title=title)

    def to_numpy(self):
        """The result with numpy arrays in place of device arrays (waits for the device)."""
        return result_to_numpy(self)


#: the keywords of :func:`stl` that are STL settings (``decompose``'s ``settings``)
_SETTINGS = ("seasonal", "trend", "low_pass", "seasonal_deg", "trend_deg", "low_pass_deg",
             "seasonal_jump", "trend_jump", "low_pass_jump", "robust", "inner_iter",
             "outer_iter", "r_defaults", "interpolation")


@functools.cache
def _defaults() -> tuple:
    import inspect
    params = inspect.signature(stl).parameters      # ~100 µs: read once
    return tuple((k, params[k].default) for k in _SETTINGS)


def _setting_defaults() -> dict:
    return dict(_defaults())


@renamed("stl", loess_version="version", loess_params="**plan_overrides")
def stl_keywords(*, version="auto", **kw):
    """``(settings, version, plan_overrides)`` of :func:`stl` keywords ``kw`` (without ``y``,
    ``period``, ``device``, ``time_axis``, ``progress``, ``out``): what :func:`decompose`
    takes, for callers of the core (MSTL's rounds); the deprecated names are translated."""
    settings = _setting_defaults()
    for k in _SETTINGS:
        if k in kw:
            settings[k] = kw.pop(k)
    return settings, version, kw


def _int_tuple(v, name):
    vals = (v,) if isinstance(v, (int, np.integer)) else tuple(v)
    for p in vals:
        if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, np.integer)):
            raise TypeError(f"{name} must be integers, got {p!r}")
    return tuple(int(p) for p in vals)


def _check_periods_fit(shape, axis, periods):
    """``periods`` none of which fits the time axis (each >= half its length: nothing to
    decompose) but one of which fits another axis: a ValueError with the ``time_axis=`` fix."""
    try:
        ps = _int_tuple(periods, "periods")
    except (TypeError, ValueError):
        return                  # resolve_periods says what is wrong
    if ps:
        check_fits(shape, axis, lambda n: any(p < n / 2 for p in ps),
                   f"periods={ps} (a period shorter than half the series)")


def resolve_periods(periods, windows, nobs):
    """statsmodels MSTL's rules: default windows 7 + 4 i (i = 1, 2, ...) for the periods in
    increasing order; given windows travel with their periods when these are sorted; periods
    >= nobs / 2 are dropped with a UserWarning (and the same number of windows from the end).
    Repeated periods and no period left are ValueErrors."""
    if periods is None:
        raise ValueError("periods is required (an int or a sequence of ints)")
    periods = _int_tuple(periods, "periods")
    if not periods:
        raise ValueError("periods must hold at least one period")
    if windows is not None and not (isinstance(windows, (int, np.integer)) or len(windows)):
        windows = None                     # statsmodels' ``if windows:``
    if windows is not None:
        windows = _int_tuple(windows, "windows")
        if len(windows) != len(periods):
            raise ValueError(f"periods and windows must have the same length, got "
                             f"{len(periods)} and {len(windows)}")
        periods, windows = map(tuple, zip(*sorted(zip(periods, windows))))
    else:
        windows = tuple(7 + 4 * i for i in range(1, len(periods) + 1))
        periods = tuple(sorted(periods))
    if len(set(periods)) != len(periods):
        raise ValueError(f"periods must be distinct, got {periods}")
    if any(p < 2 for p in periods):
        raise ValueError(f"periods must be >= 2, got {periods}")
    if any(p >= nobs / 2 for p in periods):
        kept = tuple(p for p in periods if p < nobs / 2)
        warn_caller(f"period(s) {tuple(p for p in periods if p >= nobs / 2)} are at least "
                    f"half the series length {nobs}: removed, as statsmodels' MSTL does",
                    UserWarning)
        periods, windows = kept, windows[:len(kept)]
        if not periods:
            raise ValueError(f"periods: every period is at least half the series length "
                             f"({nobs}); nothing to decompose")
    if any(w < 3 or w % 2 == 0 for w in windows):      # each is its round's STL seasonal=
        raise ValueError(f"windows (the seasonal smoothers' lengths) must be odd integers "
                         f">= 3, got {windows}")
    return periods, windows


def boxcox(y2, lmbda):
    """Box-Cox transform of each row of ``y2`` (NaN stays NaN), statsmodels' rules: None or 0
    (falsy): no transform; a number: scipy.special.boxcox's formula, expm1(lambda log y) /
    lambda, in numpy; "auto": the maximum-likelihood lambda of each series' valid values
    (scipy.stats.boxcox: the one use of scipy, which the base install does not bring).
    Returns (values, lambda)."""
    if lmbda is None or (not isinstance(lmbda, str) and not lmbda):
        return y2, None
    valid = ~np.isnan(y2)
    if (y2[valid] <= 0).any():
        raise ValueError("y must be positive for a Box-Cox transform (lmbda)")
    if isinstance(lmbda, str):
        if lmbda != "auto":
            raise ValueError(f"lmbda must be a number, 'auto' or None, got {lmbda!r}")
        try:
            from scipy import stats
        except ImportError:
            raise ImportError("clts.mstl(lmbda='auto') needs scipy (its maximum-likelihood "
                              "Box-Cox lambda): pip install scipy") from None
        out = np.full_like(y2, np.nan)
        lam = np.full(y2.shape[0], np.nan)
        for i in range(y2.shape[0]):
            v = valid[i]
            if v.sum() >= 2 and np.ptp(y2[i, v]) > 0:
                out[i, v], lam[i] = stats.boxcox(y2[i, v])
        return out, lam
    if isinstance(lmbda, bool) or not np.isscalar(lmbda) or not np.isfinite(lmbda):
        raise ValueError(f"lmbda must be a finite number, 'auto' or None, got {lmbda!r}")
    lam = float(lmbda)
    with np.errstate(invalid="ignore"):
        return np.expm1(lam * np.log(y2)) / lam, lam


@renamed()
def mstl(y, periods, *, windows=None, lmbda=None, iterate=2, stl_kwargs=None, device=None,
         time_axis=None, progress=False):
    """Batched MSTL: a trend and one seasonal component per period, with missing values.

    statsmodels' ``MSTL(y, periods=..., windows=..., lmbda=..., iterate=..., stl_kwargs=...)``
    for every series of a batch at once: the seasonal components are refined by ``iterate``
    rounds of STL, one per period in increasing order, each on the data with the other
    components removed; every STL is :func:`clts.stl` on the whole batch.

    Parameters
    ----------
    y : array_like, shape (batch, time) or (time,), or any shape with ``time_axis``
        float32 / float64 series, NaN = missing (statsmodels cannot take them). pandas and
        xarray inputs come back labelled, as with :func:`clts.stl`; a ``pyopencl.array.Array``
        gives device arrays, the batch kept on the device between the rounds.
    periods : int or sequence of int
        The seasonal periods. Sorted (their windows with them); periods >= half the series
        length are dropped with a UserWarning, as statsmodels does; repeated periods are an
        error.
    windows : int or sequence of int, optional
        Seasonal LOESS windows per period (odd); default 7 + 4 i for the i-th period
        (11, 15, 19, ...), as statsmodels.
    lmbda : float, "auto" or None, optional
        Box-Cox transform before the decomposition (None or 0: none, statsmodels' rule);
        "auto": each series' maximum-likelihood lambda (``result.lmbda`` per series; needs
        scipy, which the base install does not bring).
    iterate : int, optional
        Rounds over the periods (2; 1 when there is a single period, as statsmodels).
    stl_kwargs : dict, optional
        Further :func:`clts.stl` keywords (statsmodels' STL ones: ``trend``, ``low_pass``,
        degrees, jumps, ``robust``, ``inner_iter``, ``outer_iter``; and clts' ``version``,
        the tuning keywords, ``interpolation``). ``period`` / ``seasonal`` / ``endog`` are ignored.
    device : int, str or Device, optional
        As :func:`clts.stl`.
    time_axis : int, optional
        As :func:`clts.stl` (default the last axis of a numpy array). ``periods`` none of which
        is shorter than half that axis but one of which fits another axis: a ValueError naming
        ``time_axis=``.
    progress : bool, optional
        Progress bars of the STL calls.

    Returns
    -------
    MSTLResult
        ``seasonal`` (a dict per period), ``trend``, ``resid``, ``weights``, ``observed``.

    Raises
    ------
    ValueError
        No period left, repeated periods, bad windows or STL parameters, a non-positive series
        with ``lmbda``, ``iterate`` < 1.
    TypeError
        Non-integer periods or windows, an unknown STL keyword.

    Notes
    -----
    A series that STL cannot decompose for one of the periods (a whole cycle-subseries
    missing, fewer than two periods of valid values) comes back NaN and is counted in
    ``diagnostics["n_failed"]``. Details and the correspondence with statsmodels:
    ``docs/stl.md``.

    References
    ----------
    .. [1] K. Bandara, R. J. Hyndman, C. Bergmeir, "MSTL: A Seasonal-Trend Decomposition
       Algorithm for Time Series with Multiple Seasonal Patterns", arXiv:2107.13462, 2021.

    Examples
    --------
    >>> import numpy as np, clts
    >>> t = np.arange(24 * 7 * 4.0)
    >>> y = np.sin(2 * np.pi * t / 24) + 2 * np.cos(2 * np.pi * t / 168) + 0.01 * t
    >>> r = clts.mstl(np.stack([y, 2 * y]), periods=(24, 168))
    >>> sorted(r.seasonal), r.seasonal[24].shape
    ([24, 168], (2, 672))
    >>> bool(np.allclose(r.seasonal[24] + r.seasonal[168] + r.trend + r.resid, [y, 2 * y]))
    True
    """
    dev = get_device(device)
    on_dev = is_device_array(y)
    if on_dev:              # [batch, time] or [time] on the device: no labels, no checks read
        y2 = device_series(y, dev, time_axis)
        if isinstance(lmbda, str):
            raise TypeError("mstl: lmbda='auto' (the maximum-likelihood lambda of each series, "
                            "scipy on the host) takes numpy data; give lambda as a number")
        labels, shape = None, tuple(y.shape)
    else:                   # the edge: labels and the time axis, once
        labels = time_axis_of(y, time_axis, -1)
        _check_periods_fit(np.shape(y), labels.axis, periods)
        yv = validate(labels.to_last(y))
        shape = yv.shape
        y2 = as_rows(yv)
    B, N = y2.shape
    periods, windows = resolve_periods(periods, windows, N)
    if isinstance(iterate, bool) or not isinstance(iterate, (int, np.integer)) or iterate < 1:
        raise ValueError(f"iterate must be a positive integer, got {iterate!r}")
    kw = dict(stl_kwargs or {})
    if not isinstance(kw, dict):
        raise TypeError("stl_kwargs must be a dict")
    for k in _OVERLOADED:
        kw.pop(k, None)
    for k in ("time_axis", "device", "progress"):
        if k in kw:
            raise TypeError(f"stl_kwargs: {k!r} is a keyword of mstl itself")
    settings, version, overrides = stl_keywords(**kw)
    bad = sorted(set(overrides) - set(TUNABLE_KEYS))
    if bad:             # found here: the kernels' own check would list the tunables alone
        accepted = [k for k in _SETTINGS if k not in _OVERLOADED] + ["version"]
        raise UnknownParameterError(
            unknown_message("mstl stl_kwargs", bad, accepted, TUNABLE_KEYS), bad,
            accepted + sorted(TUNABLE_KEYS), params=accepted, tuning=sorted(TUNABLE_KEYS))
    rounds = 1 if len(periods) == 1 else int(iterate)

    def one_stl(data, p, w, keep=None):
        return decompose(data, p, dict(settings, seasonal=w), dev, version=version,
                         plan_overrides=dict(overrides), progress=progress, keep=keep)
    if on_dev:
        return _mstl_device(y, y2, shape, periods, windows, rounds, one_stl, dev, lmbda,
                            _key(dev, y2, periods, windows, rounds, settings, version,
                                 overrides))
    obs, lam = boxcox(y2, lmbda)
    obs = np.ascontiguousarray(obs, dtype=y2.dtype)
    seasonal = np.zeros((len(periods), B, N), y2.dtype)
    failed = np.zeros(B, bool)
    deseas = obs.copy()
    comps = None
    for _ in range(rounds):
        for i, (p, w) in enumerate(zip(periods, windows)):
            deseas += seasonal[i]
            comps, f, _diag = one_stl(deseas, p, w)
            failed |= f
            seasonal[i] = comps["seasonal"]
            deseas -= seasonal[i]
    trend, weights = comps["trend"], comps["weights"]
    resid = deseas - trend
    for a in (trend, resid, *seasonal):
        a[failed] = np.nan
    weights[failed] = 0
    out = {p: labels.series(seasonal[i].reshape(shape)) for i, p in enumerate(periods)}
    diag = dict(n_failed=int(failed.sum()), failed=failed, periods=periods, windows=windows,
                iterate=rounds)
    if labels.labelled or len(shape) > 2:
        diag["failed"] = labels.per_series(failed.reshape(shape[:-1]), "failed")
    if isinstance(lam, np.ndarray):
        lam = lam.reshape(shape[:-1]) if len(shape) > 1 else float(lam[0])
    return MSTLResult(out, *(labels.series(a.reshape(shape)) for a in (trend, resid, weights,
                                                                       obs)),
                      lmbda=lam, diagnostics=diag, labels=labels)


def _key(dev, y2, periods, windows, rounds, settings, version, overrides):
    """The recording key of a device call (everything its launches depend on: the shape, the
    STL settings and the state of the profile's ``stl`` section, through a token that
    changes with it), or None where a keyword cannot be hashed."""
    token = cached_under_profile(dev, "mstl.profile", "stl", "stl", object)
    key = (tuple(y2.shape), y2.dtype.str, periods, windows, rounds,
           tuple(sorted(settings.items())), version, tuple(sorted(overrides.items())),
           options.get("max_chunk"), token)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _mstl_device(y, y2, shape, periods, windows, rounds, one_stl, dev, lmbda=None, key=None):
    """MSTL's rounds on a device array: the batch, the seasonal components and the failed mask
    stay on the device between the STL rounds; the numpy path's arithmetic, value by value
    (kernels of ``stl/finish.cl.mako``), a numeric ``lmbda``'s Box-Cox transform too (the
    device's ``log`` / ``expm1``). Nothing is read back. From a ``key``'s second call on the
    launches, fills and copies are recorded and the next calls of that key replay them
    (``runtime.replay.run_recorded``: no STL parameters checked, Plans looked up or
    temporaries allocated; only the results are new)."""
    lam = None
    if lmbda is not None and lmbda:      # statsmodels' rule: None or 0, no transform
        if (isinstance(lmbda, bool) or not np.isscalar(lmbda)
                or not np.isfinite(lmbda)):
            raise ValueError(f"lmbda must be a finite number, 'auto' or None, got {lmbda!r}")
        lam = float(lmbda)
    keep = []
    if key is not None and not dev.info.simulator:
        key += (lam,)
    else:
        key = None
    out = run_recorded(dev, dev.state.constant("mstl.recorder", _recorder), key,
                       {"y": y2.base_data},
                       lambda: _rounds(dev, y2, periods, windows, rounds, one_stl, lam, keep),
                       keep)
    failed = reshaped(out["failed"], shape[:-1])
    observed = y if lam is None else reshaped(out["observed"], shape)
    diag = LazyDict(n_failed=Lazy(lambda: int(np.count_nonzero(failed.get()))), failed=failed,
                    periods=periods, windows=windows, iterate=rounds)
    r = MSTLResult({p: reshaped(out[f"seasonal{i}"], shape) for i, p in enumerate(periods)},
                   *(reshaped(out[k], shape) for k in ("trend", "resid", "weights")),
                   observed=observed, lmbda=lam, diagnostics=diag, labels=None)
    r._keep = keep
    return r


def _recorder():
    """A device's recorder of MSTL's device calls: a key's second call is recorded, the next
    ones replay it (``clts.mp.replay`` says why not the first)."""
    return Recorder(after=1)


def _rounds(dev, y2, periods, windows, rounds, one_stl, lam, keep):
    """The launches of :func:`_mstl_device` (the rows ``y2`` [batch, time]); returns the
    results by slot name (``seasonal<i>`` per period, ``trend``, ``resid``, ``weights``,
    ``failed``, ``observed``: the Box-Cox transform, else None); the temporaries go to
    ``keep``."""
    q = dev.queue
    B, N = y2.shape
    dt = y2.dtype
    seasonal = [fill(dev, empty_device(q, dev.context, (B, N), dt), 0) for _ in periods]
    failed = fill(dev, empty_device(q, dev.context, (B,), np.bool_), 0)
    prg = dev.program("stl/finish.cl.mako", real="double" if dt == np.float64 else "float")
    i32, n = np.int32, np.int64(B * N)
    deseas = empty_device(q, dev.context, (B, N), dt)
    observed = None
    if lam is not None:
        launch(dev, prg.kernel("stl_boxcox"), *fixed_local(dev, B * N), y2.data, deseas.data,
               n, dt.type(lam))
        observed = empty_device(q, dev.context, (B, N), dt)
        copy(dev, observed.data, deseas.data, deseas.nbytes)
    else:
        copy(dev, deseas.data, y2.data, deseas.nbytes)
    comps = None
    # pyopencl's array arithmetic would wait on the host once an array holds 12 events
    add, sub = prg.kernel("stl_add"), prg.kernel("stl_sub")
    for _ in range(rounds):
        for i, (p, w) in enumerate(zip(periods, windows)):
            launch(dev, add, *fixed_local(dev, B * N), deseas.data, seasonal[i].data, n)
            comps, f, _diag = one_stl(deseas, p, w, keep)
            launch(dev, prg.kernel("stl_or"), *fixed_local(dev, B), failed.data, f.data, i32(B))
            keep.append(f)
            keep.append(seasonal[i])
            seasonal[i] = comps["seasonal"]
            launch(dev, sub, *fixed_local(dev, B * N), deseas.data, seasonal[i].data, n)
    trend, weights = comps["trend"], comps["weights"]
    resid = empty_device(q, dev.context, (B, N), dt)
    launch(dev, prg.kernel("stl_diff"), *fixed_local(dev, B * N), deseas.data, trend.data,
           resid.data, n)
    keep.append(deseas)
    if B and N:
        fill_failed = prg.kernel("stl_fill_failed")
        for a, v in [(trend, np.nan), (resid, np.nan), (weights, 0)] + [
                (s, np.nan) for s in seasonal]:
            launch(dev, fill_failed, *fixed_local(dev, B * N), a.data, failed.data, i32(N),
                   np.int64(B * N), dt.type(v))
    out = {f"seasonal{i}": s for i, s in enumerate(seasonal)}
    out.update(trend=trend, resid=resid, weights=weights, failed=failed, observed=observed)
    return out
