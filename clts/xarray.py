"""``clts.xarray``: the algorithms on xarray DataArrays, numpy- or Dask-backed.

Each function takes a DataArray and the name of its time dimension (``dim``, default "time")
and returns a Dataset with named variables, the input's coordinates and attributes kept:

- :func:`stl`: ``seasonal``, ``trend``, ``resid``, ``weights`` (time, like the input) and
  ``failed`` (per series);
- :func:`trend_slope`: the least-squares slope of the STL trend per unit of time (per year of
  the calendar for datetime64 / cftime dates, per coordinate unit for numbers, per step without a
  coordinate);
- :func:`bfast_monitor`: ``breaks``, ``break_dates`` (of the time coordinate's kind),
  ``magnitudes``, ``means``, ``valids``, ``status`` (+ ``history_start`` with ROC);
- :func:`bfast_breaks`: ``n_breaks``, ``breakpoints``, ``break_dates``, ``magnitudes`` (along
  ``break``), ``rss`` / ``bic`` / ``lwz`` (along ``n``), ``nobs``, ``status``;
- :func:`break_maps`: of a :func:`bfast_breaks` Dataset, ``n_breaks``, ``first_break_date``,
  ``largest_break_date``, ``largest_magnitude``, ``status`` per pixel (and the maps of a
  :func:`bfast_decompose` / :func:`bfast01` Dataset: ``clts.xarray_bfast``);
- :func:`bfast_decompose` (R's ``bfast()``) and :func:`bfast01`: see ``clts.xarray_bfast``;
- :func:`matrix_profile`: ``profile``, ``index``, ``neighbour`` (the neighbour's time) and, for
  self-joins, ``left_index`` / ``right_index``, along the window starts (the time coordinate
  cut to ``n - m + 1``).

The ocean routines take their inputs as the variables of a Dataset: :func:`tke` (``tke``,
``dtke``, ``tke_surf_corr``) and :func:`superbee_fluxes` (``flux_east``, ``flux_north``,
``flux_top``).

The time coordinate may hold numbers, datetime64 or cftime dates of any calendar; it must
strictly increase (checked for every kind). Undecoded ``_FillValue`` / ``missing_value``
entries are masked. Arguments are checked when a function is called, before any compute.

Dask-backed arrays stay lazy (``xr.apply_ufunc(..., dask="parallelized")``): every chunk of the
non-time dimensions is one call of the numpy function, on the device of the process that runs
it (``device=None`` takes ``CLTS_DEVICE`` or the default device there; a Device object travels
as its name). A time dimension split over several chunks is rechunked to one, with a warning.
"""
from __future__ import annotations

import numpy as np

from .runtime.arrays import as_rows
from .xarray_common import apply_core as _apply
from .xarray_common import fill_values as _fill_values
from .xarray_common import packed as _packed
from .xarray_common import mask_values  # noqa: F401 (clts.xarray.mask_values)
from .xarray_common import portable_device as _portable
from .xarray_common import prepare as _prepare
from .xarray_common import quiet as _quiet
from .xarray_common import xr_module as _xr


def _float_dtype(da):
    """The dtype :func:`clts.stl` computes ``da`` in (float32 stays, float16 -> float32,
    integers -> float64)."""
    from .runtime.arrays import float_dtype_of
    return float_dtype_of(np.empty(0, da.dtype), "da")


# ------------------------------------------------------------------------------------- STL

def _stl_block(y, *, period, kw):
    from .stl.api import stl as _stl
    shape = y.shape
    r = _stl(as_rows(y), period, **_quiet(kw))
    failed = np.asarray(r.diagnostics["failed"]).reshape(shape[:-1])
    return tuple(np.asarray(a).reshape(shape) for a in (r.seasonal, r.trend, r.resid,
                                                         r.weights)) + (failed,)


def stl(da, period=None, *, dim: str = "time", device=None, **kwargs):
    """STL of every series of ``da`` along ``dim`` (``kwargs`` as :func:`clts.stl`; ``period``
    None: from the frequency of a datetime ``dim`` coordinate, as there). Returns a
    Dataset with ``seasonal``, ``trend``, ``resid``, ``weights`` (dims of ``da``) and ``failed``
    (series that came back NaN), ``da``'s coordinates and attributes kept."""
    xr = _xr()
    da = _prepare(da, dim)
    if period is None:          # from the time coordinate's frequency, as clts.stl
        from .timeaxis import period_of
        period = period_of(da[dim].values if dim in da.coords else None)
    from .stl.api import check_arguments
    check_arguments(da.sizes[dim], period, **kwargs)    # now, not inside a Dask compute
    dt = _float_dtype(da)
    names = ("seasonal", "trend", "resid", "weights")
    out = _apply(_stl_block, da, dim,
                 [(n, dt, True) for n in names] + [("failed", np.dtype(bool), False)],
                 dict(period=period, kw=dict(kwargs, device=_portable(device))))
    ds = xr.Dataset({n: out[n].transpose(*da.dims) for n in names} | {"failed": out["failed"]},
                    attrs=dict(da.attrs))
    ds["weights"].attrs = {"long_name": "robustness weights (1 without robust=True)"}
    ds["failed"].attrs = {"long_name": "series that came back NaN (too few valid values)"}
    ds.attrs["clts_stl_period"] = int(period)
    return ds


def _time_units(da, dim, per, time_unit=None):
    """Times of ``dim`` as floats and their unit's name: years (``per="day"``: days) of the
    axis's calendar for datetime64 and cftime dates, coordinate units (named ``time_unit``)
    for numbers ("step" when they count 0, 1, 2, ...), steps (``per="step"``, or no
    coordinate)."""
    from .timeaxis import days, kind, year_days
    if dim not in da.coords or per == "step":
        if per not in (None, "step"):
            raise ValueError(f"per={per!r} needs a date {dim!r} coordinate")
        return np.arange(da.sizes[dim], dtype=np.float64), "step"
    t = da[dim].values
    if kind(t, dim) != "number":
        unit = per or "year"
        if unit not in ("year", "day"):
            raise ValueError(f"per must be 'year', 'day' or 'step' for a date {dim!r}, "
                             f"got {per!r}")
        d = days(t)
        return (d if unit == "day" else d / year_days(t)), unit
    if per not in (None, "unit"):
        raise ValueError(f"per={per!r} needs a date {dim!r} coordinate (numbers: per=None or "
                         "'step')")
    t = t.astype(np.float64)
    steps = t.size > 1 and bool(np.all(np.diff(t) == 1))       # 0, 1, 2, ...: one per step
    return t, time_unit or da[dim].attrs.get("units") or ("step" if steps else "coordinate unit")


def trend_slope(da, period=None, *, dim: str = "time", per=None, time_unit=None, device=None,
                **kwargs):
    """Least-squares slope of the STL trend of every series: per year (``per="day"``: per day)
    for dates (datetime64, or cftime dates: a year of their calendar, 360 days for
    ``360_day``); per coordinate unit for numbers (``time_unit`` names it in the ``units``
    attribute, default the coordinate's own ``units``, "step" for 0, 1, 2, ... or "coordinate
    unit": decimal years give a slope per year); ``per="step"``: per time step.
    ``da``: a DataArray (STL runs first, ``period`` and ``kwargs`` as :func:`stl`) or the
    Dataset :func:`stl` returned. A failed series gives NaN."""
    xr = _xr()
    if isinstance(da, xr.Dataset):
        if "trend" not in da:
            raise ValueError("a Dataset given to trend_slope must hold a 'trend' variable "
                             "(the result of clts.xarray.stl)")
        trend = da["trend"]
    else:
        if period is None:
            raise ValueError("trend_slope needs period= to run STL on a DataArray")
        trend = stl(da, period, dim=dim, device=device, **kwargs)["trend"]
    t, unit = _time_units(trend, dim, per, time_unit)
    tc = xr.DataArray(t - t.mean(), dims=(dim,))
    slope = ((trend - trend.mean(dim)) * tc).sum(dim, skipna=False) / float((tc * tc).sum())
    slope.name = "trend_slope"
    units = trend.attrs.get("units")
    slope.attrs = {"long_name": "least-squares slope of the STL trend",
                   "units": f"{units} per {unit}" if units else f"per {unit}"}
    return slope


# ----------------------------------------------------------------------------------- BFAST

def _bfast_block(y, *, dates, start_monitor, roc, kw):
    from .bfast.api import bfast_monitor as _bfast
    r = _bfast(y, dates, start_monitor, time_axis=-1, **_quiet(kw))
    out = (r.breaks, r.break_dates, r.magnitudes, r.means, r.valids, r.status)
    if roc:
        out += (r.history_start,)
    return tuple(np.asarray(a) for a in out)


def bfast_monitor(da, start_monitor, *, dim: str = "time", device=None, **kwargs):
    """BFAST-Monitor of every pixel of ``da`` along ``dim``, whose coordinate gives the dates
    (``kwargs`` as :func:`clts.bfast_monitor`; ``start_monitor`` may be a date string). Returns
    a Dataset with ``breaks``, ``break_dates``, ``magnitudes``, ``means``, ``valids``,
    ``status`` (+ ``history_start`` with ``history="ROC"``) over the non-time dimensions."""
    xr = _xr()
    if _packed(da) and kwargs.get("nodata") is not None:   # a packed value: masked before
        da = mask_values(da, [kwargs["nodata"]])            # unpacking (as the fill values)
        kwargs = {k: v for k, v in kwargs.items() if k != "nodata"}
    fills = (_fill_values(da) if da.dtype.kind in "iu" and "nodata" not in kwargs
             and not _packed(da) else [])     # packed: unpacked to floats, fills masked first
    if len(fills) == 1:                    # integers stay integers: the kernel masks nodata
        kwargs = dict(kwargs, nodata=fills[0])
    da = _prepare(da, dim, mask=len(fills) != 1)
    if dim not in da.coords:
        raise ValueError(f"bfast_monitor needs the dates: give {dim!r} a coordinate")
    for bad in ("detailed", "time_axis", "dates"):
        if kwargs.get(bad):
            raise TypeError(f"clts.xarray.bfast_monitor does not take {bad}= (use the numpy "
                            "function for per-date outputs)")
    dates = da[dim].values
    from .bfast.api import check_arguments
    from .timeaxis import kind, parse_date
    if isinstance(start_monitor, str) and kind(dates, dim) != "number":
        start_monitor = parse_date(start_monitor, dates)
    check_arguments(dates, start_monitor, **kwargs)     # now, not inside a Dask compute
    dt = np.dtype(kwargs.get("dtype") or (da.dtype if da.dtype.kind == "f" and da.dtype.itemsize
                                          >= 4 else np.float32))
    roc = kwargs.get("history", "all") == "ROC"
    bd = date_dtype(dates)
    outs = [("breaks", np.dtype(np.int32), False), ("break_dates", bd, False),
            ("magnitudes", dt, False), ("means", dt, False), ("valids", np.dtype(np.int32), False),
            ("status", np.dtype(np.int32), False)]
    if roc:
        outs.append(("history_start", np.dtype(np.int32), False))
    kw = dict(kwargs, device=_portable(device), magnitudes=True)
    out = _apply(_bfast_block, da, dim, outs,
                 dict(dates=dates, start_monitor=start_monitor, roc=roc, kw=kw))
    ds = xr.Dataset(out, attrs=dict(da.attrs))
    for v in ds.data_vars:
        ds[v].attrs = {}
    ds["breaks"].attrs = {"long_name": "index of the first break among the monitoring dates",
                          "flag_values": "-1 no break, -2 not tested (see status)"}
    ds["break_dates"].attrs = {"long_name": "date of the first break"}
    date_attrs(ds["break_dates"], dates)
    ds["magnitudes"].attrs = {"long_name": "median of the monitoring residuals"}
    if "units" in da.attrs:
        ds["magnitudes"].attrs["units"] = da.attrs["units"]
    ds["status"].attrs = {"long_name": "0 tested, 1 too few values, 2 singular, "
                                       "3 zero variance, 4 non-finite"}
    ds.attrs["clts_bfast_start_monitor"] = str(start_monitor)
    return ds


def _breaks_block(y, *, dates, kw):
    from .bfast.breaks_api import bfast_breaks as _breaks
    r = _breaks(y, dates, time_axis=-1, **_quiet(kw))
    last = (lambda a: np.moveaxis(np.asarray(a), 0, -1))
    out = (r.n_breaks, last(r.breakpoints), last(r.break_dates), last(r.magnitudes),
           last(r.rss), last(r.bic), last(r.lwz), r.nobs, r.status)
    if kw.get("confint") is not None:
        out += (last(r.ci_lower), last(r.ci_upper))
    return tuple(np.asarray(a) for a in out)


def bfast_breaks(da, *, dim: str = "time", device=None, **kwargs):
    """Bai-Perron breakpoints of every pixel of ``da`` along ``dim``, whose coordinate gives
    the dates (``kwargs`` as :func:`clts.bfast_breaks`). Returns a Dataset with ``n_breaks``,
    ``nobs``, ``status`` per pixel, ``breakpoints`` (date indices), ``break_dates``,
    ``magnitudes`` along a new dimension ``break``, and ``rss`` / ``bic`` / ``lwz`` along
    ``n`` (0..breaks breaks); with ``confint=`` also ``ci_lower`` / ``ci_upper`` (date indices
    of each break's interval, -1: none) along ``break``."""
    from .bfast.breakpoints import max_breaks
    from .bfast.regressors import model_terms
    xr = _xr()
    da = _prepare(da, dim)
    if dim not in da.coords:
        raise ValueError(f"bfast_breaks needs the dates: give {dim!r} a coordinate")
    for bad in ("time_axis", "dates", "magnitudes"):
        if bad in kwargs:
            raise TypeError(f"clts.xarray.bfast_breaks does not take {bad}=")
    dates = da[dim].values
    from .bfast.breakpoints import check_h_breaks     # now, not inside a Dask compute
    check_h_breaks(kwargs.get("h", 0.15), kwargs.get("breaks", 5), da.sizes[dim])
    order, trend = kwargs.get("order", 3), kwargs.get("trend", True)
    K = len(model_terms(kwargs.get("formula"), order, trend, kwargs.get("regressors"),
                        da.sizes[dim]).columns())      # formula= / regressors= count too
    B = max(1, min(int(kwargs.get("breaks", 5)),
                   max_breaks(kwargs.get("h", 0.15), da.sizes[dim], K)))
    dt = np.dtype(kwargs.get("dtype") or np.float64)
    bd = date_dtype(dates)
    i4 = np.dtype(np.int32)
    outs = [("n_breaks", i4, False), ("breakpoints", i4, ["break"]),
            ("break_dates", bd, ["break"]), ("magnitudes", np.dtype(np.float64), ["break"]),
            ("rss", dt, ["n"]), ("bic", np.dtype(np.float64), ["n"]),
            ("lwz", np.dtype(np.float64), ["n"]), ("nobs", i4, False), ("status", i4, False)]
    if kwargs.get("confint") is not None:
        outs += [("ci_lower", i4, ["break"]), ("ci_upper", i4, ["break"])]
    out = _apply(_breaks_block, da, dim, outs,
                 dict(dates=dates, kw=dict(kwargs, device=_portable(device))),
                 sizes={"break": B, "n": B + 1})
    ds = xr.Dataset(out, attrs=dict(da.attrs))
    ds = ds.assign_coords({"break": np.arange(1, B + 1), "n": np.arange(B + 1)})
    for v in ds.data_vars:
        ds[v].attrs = {}
    ds["n_breaks"].attrs = {"long_name": "number of breaks the criterion selects",
                            "flag_values": "-1 not analysed (see status)"}
    ds["breakpoints"].attrs = {"long_name": "index of the last date before each break (-1: none)"}
    ds["break_dates"].attrs = {"long_name": "date of the last value before each break"}
    date_attrs(ds["break_dates"], dates)
    ds["magnitudes"].attrs = {"long_name": "fit after minus fit before the break"}
    if "ci_lower" in ds:
        for side in ("lower", "upper"):
            ds[f"ci_{side}"].attrs = {"long_name": f"{side} end of the break's confidence "
                                      f"interval at {kwargs['confint']} (date index, -1: none)"}
    if "units" in da.attrs:
        ds["magnitudes"].attrs["units"] = da.attrs["units"]
    ds["status"].attrs = {"long_name": "0 ok, 1 too few values for h, 2 h > n / 2, "
                                       "3 non-finite, 4 rank-deficient"}
    ds.attrs["clts_bfast_breaks_criterion"] = kwargs.get("criterion", "BIC")
    return ds


def _maps_block(nb, bd, mg, st):
    from .bfast.maps import MAP_FIELDS, break_maps
    m = break_maps(nb, bd, mg, st, axis=-1)
    return tuple(m[f] for f in MAP_FIELDS)


def break_maps(ds, *, dim: str = "break"):
    """The per-pixel maps (``clts.bfast.maps.break_maps``) of a Dataset with ``n_breaks``,
    ``break_dates`` and ``magnitudes`` along ``dim`` and ``status``, as
    :func:`bfast_breaks` returns (numpy- or Dask-backed: lazy). Returns a Dataset with
    ``n_breaks``, ``first_break_date``, ``largest_break_date``, ``largest_magnitude``,
    ``status`` over the pixel dimensions."""
    from .bfast.maps import MAP_FIELDS
    xr = _xr()
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"ds must be an xarray Dataset (clts.xarray.bfast_breaks's), got "
                        f"{type(ds).__name__}")
    if "n_trend_breaks" in ds or "breakpoint" in ds:    # bfast_decompose's, bfast01's
        from .xarray_bfast import result_maps
        return result_maps(ds)
    missing = [v for v in ("n_breaks", "break_dates", "magnitudes", "status") if v not in ds]
    if missing:
        raise ValueError(f"ds has no {', '.join(missing)} (variables: "
                         f"{', '.join(map(str, ds.data_vars))})")
    if dim not in ds["break_dates"].dims:
        raise ValueError(f"break_dates has no dimension {dim!r}; give dim=")
    bd = ds["break_dates"].dtype
    outs = [np.dtype(np.int32), bd, bd, np.dtype(np.float64), np.dtype(np.int32)]
    res = xr.apply_ufunc(
        _maps_block, ds["n_breaks"], ds["break_dates"], ds["magnitudes"], ds["status"],
        input_core_dims=[[], [dim], [dim], []], output_core_dims=[[]] * 5,
        dask="parallelized", output_dtypes=outs)
    out = xr.Dataset(dict(zip(MAP_FIELDS, res)), attrs=dict(ds.attrs))
    kept = {k: v for k, v in ds["break_dates"].attrs.items()
            if k in ("calendar", "since", "units")}
    out["n_breaks"].attrs = {"long_name": "number of breaks",
                             "flag_values": "-1 not analysed (see status)"}
    out["first_break_date"].attrs = dict(kept, long_name="date of the first break")
    out["largest_break_date"].attrs = dict(
        kept, long_name="date of the break of the largest absolute magnitude")
    out["largest_magnitude"].attrs = {"long_name": "magnitude of that break (signed)"}
    if "units" in ds["magnitudes"].attrs:
        out["largest_magnitude"].attrs["units"] = ds["magnitudes"].attrs["units"]
    out["status"].attrs = dict(ds["status"].attrs)
    return out


# -------------------------------------------------------------------------- matrix profile

def _mp_block(y, *, m, k, self_join, kw):
    from .mp.api import matrix_profile as _mp
    lead, n = y.shape[:-1], y.shape[-1]
    flat = y.reshape(-1, n)
    l = n - m + 1
    kk = (k,) if k > 1 else ()           # k > 1: profile and index [..., l, k]
    outs = [np.empty((flat.shape[0], l) + kk), np.empty((flat.shape[0], l) + kk, np.int64),
            *(np.empty((flat.shape[0], l), np.int64) for _ in range(2 if self_join else 0))]
    kw = dict(kw)
    rows = enumerate(flat)
    if kw.pop("progress", False) and len(flat) > 1:    # a bar over the series, not in each
        from .runtime import progress
        rows = progress(rows, total=len(flat), desc="matrix_profile", unit="series")
    for i, s in rows:
        r = _mp(s, m, k=k, progress=False, **kw)
        outs[0][i], outs[1][i] = r.P.reshape((l,) + kk), r.I.reshape((l,) + kk)
        if self_join:
            outs[2][i], outs[3][i] = r.left_I, r.right_I
    return tuple(o.reshape(lead + o.shape[1:]) for o in outs)


def matrix_profile(da, m, *, dim: str = "time", k: int = 1, device=None, **kwargs):
    """Matrix profile (self-join) of every series of ``da`` along ``dim`` (``kwargs`` as
    :func:`clts.matrix_profile`). Returns a Dataset along the window starts (``dim``, its
    coordinate cut to ``n - m + 1``) with ``profile``, ``index``, ``left_index``,
    ``right_index`` and ``neighbour`` (the time coordinate of ``index``; -1 / NaT for none).
    ``k`` > 1: ``profile``, ``index`` and ``neighbour`` gain a last dimension ``k``
    (coordinate 1..k, nearest first), as the numpy result's ``P`` / ``I`` [l, k]."""
    xr = _xr()
    da = _prepare(da, dim)
    if "T_B" in kwargs:
        raise TypeError("clts.xarray.matrix_profile computes self-joins; use "
                        "clts.matrix_profile for AB-joins")
    n = da.sizes[dim]
    if not isinstance(m, (int, np.integer)) or isinstance(m, bool) or not 3 <= m <= n:
        raise ValueError(f"m must be an int in 3..{n} (the length of {dim!r}), got {m!r}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be an int >= 1, got {k!r}")
    k = int(k)
    from .mp.api import check_arguments                # the library's own checks, before any compute
    check_arguments(np.empty(n), m, None, k, kwargs.get("exclusion_zone"),
                    kwargs.get("precision") or "double")
    if k > 1 and "k" in da.dims:
        raise ValueError("k > 1 adds a dimension 'k', which da already has; rename it")
    if "window" in da.dims and dim != "window":
        raise ValueError("the windows are computed along a dimension 'window', which da "
                         "already has; rename it (da.rename(window=...))")
    l = n - int(m) + 1
    names = ("profile", "index", "left_index", "right_index")
    kcore = ["window", "k"] if k > 1 else True
    outs = [(names[0], np.dtype(np.float64), kcore), (names[1], np.dtype(np.int64), kcore)] + [
        (nm, np.dtype(np.int64), True) for nm in names[2:]]
    out = _apply(_mp_block, da, dim, outs,
                 dict(m=int(m), k=k, self_join=True,
                      kw=dict(kwargs, device=_portable(device))),
                 out_core="window", sizes={"window": l} | ({"k": k} if k > 1 else {}))
    dims = tuple("window" if d == dim else d for d in da.dims)
    ds = xr.Dataset({nm: v.transpose(*dims, *(["k"] if "k" in v.dims else []))
                     for nm, v in out.items()}, attrs=dict(da.attrs))
    ds = ds.rename({"window": dim})
    if k > 1:
        ds = ds.assign_coords(k=np.arange(1, k + 1))
        ds["k"].attrs = {"long_name": "neighbour rank (1: nearest)"}
    for v in ds.data_vars:
        ds[v].attrs = {}
    which = "nearest neighbour" if k == 1 else "k-th nearest neighbour"
    if dim in da.coords:
        tv = da[dim].values
        ds = ds.assign_coords({dim: tv[:l]})
        # NaT for datetime64, None for cftime dates (object dtype), NaN for numbers
        fill = {"M": np.datetime64("NaT"), "O": None}.get(tv.dtype.kind, np.nan)
        ds["neighbour"] = xr.apply_ufunc(
            lambda i: np.where(i >= 0, tv[np.clip(i, 0, None)], fill), ds["index"],
            dask="parallelized", output_dtypes=[tv.dtype if tv.dtype.kind in "MO"
                                                else np.dtype(np.float64)])
        ds["neighbour"].attrs = {"long_name": f"{dim} of the {which}"}
        if tv.dtype == object:             # cftime dates (None: no neighbour)
            from .timeaxis import calendar
            ds["neighbour"].attrs.update(calendar=calendar(tv), since=f"{tv[0].year:04d}-01-01")
    ds["profile"].attrs = {"long_name": f"z-normalised distance to the {which}"
                           if kwargs.get("normalize", True) else
                           f"Euclidean distance to the {which}"}
    ds["index"].attrs = {"long_name": f"position of the {which} (-1: none)"}
    ds.attrs["clts_mp_m"] = int(m)
    return ds


# ----------------------------------------------------------------------------------- ocean

from .xarray_ocean import superbee_fluxes, tke  # noqa: E402,F401 (clts.xarray.tke, ...)
from .xarray_bfast import bfast01, bfast_decompose  # noqa: E402,F401 (R's bfast(), bfast01)
from .xarray_bfast import date_attrs, date_dtype  # noqa: E402


# ------------------------------------------------------------- MSTL and trend tests (seasonal)
# (kept in one block at the end of the file: other front ends are added above)

def _mstl_block(y, *, periods, kw):
    from .stl.mstl import mstl as _mstl
    shape = y.shape
    r = _mstl(as_rows(y), periods, **_quiet(kw))
    seas = [np.asarray(r.seasonal[p]).reshape(shape) for p in periods]
    failed = np.asarray(r.diagnostics["failed"]).reshape(shape[:-1])
    return tuple(seas) + tuple(np.asarray(a).reshape(shape) for a in (r.trend, r.resid,
                                                                      r.weights)) + (failed,)


def mstl(da, periods, *, dim: str = "time", device=None, **kwargs):
    """MSTL of every series of ``da`` along ``dim`` (``kwargs`` as :func:`clts.mstl`). Returns a
    Dataset with ``seasonal_<period>`` per period kept, ``trend``, ``resid``, ``weights`` (dims
    of ``da``) and ``failed`` per series. Periods are sorted and those >= half the series
    length dropped (with statsmodels' warning) before the blocks run."""
    from .stl.mstl import resolve_periods
    xr = _xr()
    da = _prepare(da, dim)
    dt = _float_dtype(da)
    windows = kwargs.pop("windows", None)
    kept, windows = resolve_periods(periods, windows, da.sizes[dim])
    names = [f"seasonal_{p}" for p in kept] + ["trend", "resid", "weights"]
    if da.chunks is not None:       # the arguments checked now, not inside a Dask compute
        from .stl.mstl import mstl as _mstl
        _mstl(np.zeros((0, da.sizes[dim]), dt), kept, windows=windows, device=device,
              **kwargs)
    out = _apply(_mstl_block, da, dim,
                 [(n, dt, True) for n in names] + [("failed", np.dtype(bool), False)],
                 dict(periods=kept, kw=dict(kwargs, windows=windows,
                                            device=_portable(device))))
    ds = xr.Dataset({n: out[n].transpose(*da.dims) for n in names} | {"failed": out["failed"]},
                    attrs=dict(da.attrs))
    ds["failed"].attrs = {"long_name": "series that came back NaN (too few valid values)"}
    ds.attrs["clts_mstl_periods"] = list(kept)
    return ds


_TREND_OUT = (("trend", np.dtype(np.int8)), ("h", np.dtype(bool)), ("p", None), ("z", None),
              ("tau", None), ("s", None), ("var_s", None), ("slope", None), ("intercept", None),
              ("slope_low", None), ("slope_high", None), ("n", np.dtype(np.int64)),
              ("status", np.dtype(np.int8)))


def _trend_block(y, *, kw):
    from .trend.api import trend_test as _tt
    shape = y.shape
    r = _tt(as_rows(y), **kw)
    return tuple(np.asarray(getattr(r, n)).reshape(shape[:-1]).astype(dt or np.float64)
                 for n, dt in _TREND_OUT)


def _per_slope_scale(da, dim, per, steps_per_slope):
    """The factor from a slope per ``steps_per_slope`` time steps (1; a seasonal test's cycle of
    ``period`` steps) to a slope per ``per`` ("year" / "day" of the axis's calendar), checked
    before any computation: a date ``dim`` with a regular step."""
    from .timeaxis import kind
    if per not in ("year", "day"):
        raise ValueError(f"per must be 'year' or 'day', got {per!r}")
    if dim not in da.coords or kind(da[dim].values, dim) == "number":
        raise ValueError(f"per={per!r} needs a date {dim!r} coordinate")
    if da.sizes[dim] < 2:
        raise ValueError(f"per={per!r} needs two dates or more along {dim!r} (a step), got "
                         f"{da.sizes[dim]}")
    t, _ = _time_units(da, dim, per)
    step = np.diff(t)
    if not step.size or not np.allclose(step, step.mean(), rtol=0.1):
        raise ValueError(f"per={per!r} needs a regular {dim!r} step (monthly is fine)")
    return 1.0 / (float(step.mean()) * steps_per_slope)


def trend_test(da, *, dim: str = "time", device=None, per=None, **kwargs):
    """Mann-Kendall test and Sen's slope of every series of ``da`` along ``dim`` (``kwargs`` as
    :func:`clts.trend_test`). Returns a Dataset of per-series maps (``trend``, ``h``, ``p``,
    ``z``, ``tau``, ``s``, ``var_s``, ``slope``, ``intercept``, ``slope_low``, ``slope_high``,
    ``n``, ``status``). ``per="year"`` / ``"day"`` (a datetime ``dim`` with a regular step)
    adds ``slope_per_<per>``: Sen's slope per step (seasonal variants: per cycle of
    ``period`` steps) divided by the mean step (cycle) in that unit of the axis's calendar
    (datetime64 or cftime)."""
    xr = _xr()
    from .trend.multi import MULTI_VARIANTS
    if kwargs.get("variant") in MULTI_VARIANTS:
        raise ValueError(f"variant={kwargs['variant']!r} tests several variables together; "
                         "clts.xarray.trend_test tests each series along dim: call "
                         "clts.trend_test on a (..., variables, time) array")
    da = _prepare(da, dim)
    seasonal = kwargs.get("variant") in ("seasonal", "correlated_seasonal")
    scale = None if per is None else _per_slope_scale(
        da, dim, per, (kwargs.get("period") or 12) if seasonal else 1)
    if da.chunks is not None:       # the arguments checked now, not inside a Dask compute
        from .trend.api import trend_test as _tt
        _tt(np.zeros((0, da.sizes[dim]), da.dtype if da.dtype.kind == "f" else np.float64),
            device=device, **kwargs)
    out = _apply(_trend_block, da, dim, [(n, dt or np.dtype(np.float64), False)
                                         for n, dt in _TREND_OUT],
                 dict(kw=dict(kwargs, device=_portable(device))))
    ds = xr.Dataset(out, attrs=dict(da.attrs))
    ds["trend"].attrs = {"long_name": "Mann-Kendall trend (+1 increasing, -1 decreasing)"}
    ds["slope"].attrs = {"long_name": "Sen's slope per time step"
                         + (" (per cycle)" if seasonal else "")}
    ds["status"].attrs = {"long_name": "0 ok, 1 fewer than 3 valid values"}
    if scale is not None:
        ds[f"slope_per_{per}"] = ds["slope"] * scale
    ds.attrs["clts_trend_variant"] = kwargs.get("variant", "original")
    return ds
