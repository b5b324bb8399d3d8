"""``clts.xarray.bfast_decompose``, ``clts.xarray.bfast01`` and the maps of their Datasets
(``clts.xarray.break_maps`` hands those here): R's ``bfast()`` and ``bfast01`` on a DataArray,
numpy- or Dask-backed (lazy), by the rules of :mod:`clts.xarray`."""
from __future__ import annotations

import numpy as np


def date_dtype(dates):
    """The dtype the break dates of ``dates`` come in (datetime64 kept; cftime dates as
    objects; numbers as float64)."""
    from .timeaxis import is_cftime
    if dates.dtype.kind == "M":
        return dates.dtype
    return np.dtype(object) if is_cftime(np.asarray(dates)) else np.dtype(np.float64)


def date_attrs(var, dates):
    """cftime break dates (objects, None for no break): their calendar and origin on ``var``,
    which the file writers need when no pixel broke."""
    if np.asarray(dates).dtype == object:
        from .timeaxis import calendar
        first = np.asarray(dates).ravel()[0]
        var.attrs.update(calendar=calendar(dates), since=f"{first.year:04d}-01-01")


def _refuse(fn, kwargs, names):
    for bad in names:
        if bad in kwargs:
            raise TypeError(f"clts.xarray.{fn} does not take {bad}=")


def _last(a):
    return np.asarray(np.moveaxis(np.asarray(a), 0, -1))


# ------------------------------------------------------------------------ bfast_decompose

_DECOMPOSE_PIXEL = ("n_trend_breaks", "n_season_breaks", "magnitude", "magnitude_break",
                    "magnitude_date", "iterations", "trend_pvalue", "season_pvalue", "status")
_DECOMPOSE_BREAK = ("trend_breaks", "trend_break_dates", "magnitudes")
_DECOMPOSE_SEASON = ("season_breaks", "season_break_dates")
_COMPONENTS = ("trend", "seasonal", "remainder")


def _decompose_block(y, *, freq, dates, components, kw):
    from .bfast.decompose import bfast_decompose as _decompose
    from .xarray_common import quiet
    r = _decompose(y, freq, dates, time_axis=-1, **quiet(kw))
    out = [getattr(r, n) for n in _DECOMPOSE_PIXEL]
    out += [_last(getattr(r, n)) for n in _DECOMPOSE_BREAK + _DECOMPOSE_SEASON]
    if components:
        out += [getattr(r, n) for n in _COMPONENTS]
    return tuple(np.asarray(a) for a in out)


def bfast_decompose(da, freq, *, dim: str = "time", components: bool = True, device=None,
                    **kwargs):
    """R's ``bfast()`` (:func:`clts.bfast_decompose`, ``kwargs`` as there) on every pixel of
    ``da`` along ``dim``, whose coordinate (if any) gives the break dates. Returns a Dataset:
    per pixel ``n_trend_breaks``, ``n_season_breaks``, ``magnitude`` / ``magnitude_break`` /
    ``magnitude_date`` (R's ``Magnitude`` and ``Time``), ``iterations``, ``trend_pvalue``,
    ``season_pvalue``, ``status``; along ``trend_break`` ``trend_breaks`` (date indices),
    ``trend_break_dates``, ``magnitudes``; along ``season_break`` ``season_breaks``,
    ``season_break_dates``; with ``components`` (default) ``trend``, ``seasonal``,
    ``remainder`` along ``dim``. ``confint`` and ``keep_iterations`` are not taken here (use
    the numpy function)."""
    from .bfast.breakpoints import max_breaks
    from .bfast.decompose import check_decompose_arguments
    from .bfast.decompose_steps import season_design
    from .xarray_common import apply_core, prepare, portable_device, xr_module
    xr = xr_module()
    _refuse("bfast_decompose", kwargs, ("time_axis", "dates", "confint", "plan",
                                        "keep_iterations"))
    if not isinstance(components, (bool, np.bool_)):
        raise TypeError(f"components must be True or False, got {components!r}")
    da = prepare(da, dim)
    N = da.sizes[dim]
    dates = da[dim].values if dim in da.coords else np.arange(N)
    f, (bt, bs), _ = check_decompose_arguments(
        freq, kwargs.get("h", 0.15), kwargs.get("season", "dummy"), kwargs.get("max_iter", 10),
        kwargs.get("breaks"), kwargs.get("level", 0.05), kwargs.get("type", "OLS-MOSUM"))
    h = kwargs.get("h", 0.15)
    KS = season_design(N, f, kwargs.get("season", "dummy")).shape[1]
    BT = max(1, min(bt if isinstance(bt, int) else N, max_breaks(h, N, 2)))
    BS = max(1, min(bs if isinstance(bs, int) else N, max_breaks(h, N, KS))) if KS else 1
    bd, i4, f8 = date_dtype(dates), np.dtype(np.int32), np.dtype(np.float64)
    outs = [("n_trend_breaks", i4, False), ("n_season_breaks", i4, False),
            ("magnitude", f8, False), ("magnitude_break", i4, False),
            ("magnitude_date", bd, False), ("iterations", i4, False),
            ("trend_pvalue", f8, False), ("season_pvalue", f8, False), ("status", i4, False),
            ("trend_breaks", i4, ["trend_break"]), ("trend_break_dates", bd, ["trend_break"]),
            ("magnitudes", f8, ["trend_break"]), ("season_breaks", i4, ["season_break"]),
            ("season_break_dates", bd, ["season_break"])]
    if components:
        outs += [(n, f8, True) for n in _COMPONENTS]
    out = apply_core(_decompose_block, da, dim, outs,
                 dict(freq=f, dates=dates, components=bool(components),
                      kw=dict(kwargs, device=portable_device(device))),
                 sizes={"trend_break": BT, "season_break": BS})
    for n in _COMPONENTS if components else ():
        out[n] = out[n].transpose(*da.dims)          # the input's layout
    ds = xr.Dataset(out, attrs=dict(da.attrs))
    ds = ds.assign_coords({"trend_break": np.arange(1, BT + 1),
                           "season_break": np.arange(1, BS + 1)})
    for v in ds.data_vars:
        ds[v].attrs = {}
    for v in ("n_trend_breaks", "n_season_breaks"):
        ds[v].attrs = {"long_name": f"number of {v.split('_')[1]} breaks",
                       "flag_values": "-1 not analysed (see status)"}
    ds["magnitude"].attrs = {"long_name": "largest absolute trend change at a break (R's "
                                          "Magnitude; 0 without a trend break)"}
    ds["magnitude_date"].attrs = {"long_name": "date of that break (R's Time)"}
    ds["magnitudes"].attrs = {"long_name": "trend change at each break"}
    for v in ("trend_break_dates", "season_break_dates", "magnitude_date"):
        if ds[v].dtype == object:
            date_attrs(ds[v], dates)
    if "units" in da.attrs:
        for v in ("magnitude", "magnitudes"):
            ds[v].attrs["units"] = da.attrs["units"]
    ds["status"].attrs = {"long_name": "0 ok, 1 too few values, 2 exact fit, 3 non-finite, "
                                       "4 rank-deficient"}
    ds.attrs["clts_bfast_decompose_season"] = kwargs.get("season", "dummy")
    return ds


# -------------------------------------------------------------------------------- bfast01

_B01_PIXEL = ("breaks", "breakpoint", "break_date", "mosum", "mosum_p", "nobs", "status",
              "trim")
_B01_CLASSIFY = ("flag_type", "flag_significance", "flag_pct_stable", "flag_subtype",
                 "p_segment1", "p_segment2", "pct_segment1", "pct_segment2", "magnitude")


#: the Dataset's variables of bfast01's other tests (their statistic; "_p": the p-value)
_B01_TESTS = {"OLS-CUSUM": "cusum", "supF": "supf", "supLM": "suplm", "aveF": "avef",
              "expF": "expf"}


def _bfast01_block(y, *, dates, classify, kw, extra=()):
    from .bfast.bfast01 import bfast01 as _bfast01
    from .xarray_common import quiet
    r = _bfast01(y, dates, time_axis=-1, classify=classify, **quiet(kw))
    out = [getattr(r, n) for n in _B01_PIXEL]
    if classify:
        out += [getattr(r, n) for n in _B01_CLASSIFY]
    for t in extra:
        out += [r.statistics[t], r.p_values[t]]
    out += [_last(r.rss), _last(r.bic)]
    return tuple(np.asarray(a) for a in out)


def bfast01(da, *, dim: str = "time", device=None, **kwargs):
    """R's ``bfast01`` (:func:`clts.bfast01`, ``kwargs`` as there) on every pixel of ``da``
    along ``dim``, whose coordinate gives the dates. Returns a Dataset per pixel: ``breaks``
    (the decision, -1 not analysed), ``breakpoint``, ``break_date``, ``mosum``, ``mosum_p``,
    ``nobs``, ``status``, ``trim``; per requested test ``"OLS-CUSUM"`` / ``"supF"`` /
    ``"supLM"`` / ``"aveF"`` / ``"expF"`` its statistic and p-value (``cusum``, ``cusum_p``,
    ``supf``, ``supf_p``, ``suplm``, ``suplm_p``, ``avef``, ``avef_p``, ``expf``,
    ``expf_p``); with ``classify`` (default) ``bfast01classify``'s flags,
    the segments' p-values and percent changes and ``magnitude``; ``rss`` / ``bic`` along
    ``n`` (0 and 1 break). The coefficients and ``confint`` are the numpy function's."""
    from .bfast.bfast01 import check_arguments
    from .xarray_common import apply_core, prepare, portable_device, xr_module
    xr = xr_module()
    _refuse("bfast01", kwargs, ("time_axis", "dates", "confint", "plan"))
    da = prepare(da, dim)
    if dim not in da.coords:
        raise ValueError(f"bfast01 needs the dates: give {dim!r} a coordinate")
    tests = check_arguments(kwargs.get("test", "OLS-MOSUM"), kwargs.get("level", 0.05),
                    kwargs.get("aggregate", "all"), kwargs.get("bandwidth", 0.15),
                    kwargs.get("alpha", 0.05), kwargs.get("pct_stable"),
                    kwargs.get("typology", "standard"), kwargs.get("trim"),
                    kwargs.get("reg", "lm"))
    if kwargs.get("trim") is not None:          # now, not inside a Dask compute
        from .bfast.breakpoints import check_half
        check_half("trim", kwargs["trim"], da.sizes[dim])
    classify = kwargs.pop("classify", True)
    if not isinstance(classify, (bool, np.bool_)):
        raise TypeError(f"classify must be True or False, got {classify!r}")
    dates = da[dim].values
    i4, f8 = np.dtype(np.int32), np.dtype(np.float64)
    outs = [("breaks", i4, False), ("breakpoint", i4, False),
            ("break_date", date_dtype(dates), False), ("mosum", f8, False),
            ("mosum_p", f8, False), ("nobs", i4, False), ("status", i4, False),
            ("trim", i4, False)]
    if classify:
        outs += [(n, i4 if n.startswith("flag") else f8, False) for n in _B01_CLASSIFY]
    extra = [t for t in tests if t in _B01_TESTS]
    for t in extra:
        outs += [(_B01_TESTS[t], f8, False), (_B01_TESTS[t] + "_p", f8, False)]
    outs += [("rss", f8, ["n"]), ("bic", f8, ["n"])]
    out = apply_core(_bfast01_block, da, dim, outs,
                 dict(dates=dates, classify=bool(classify), extra=tuple(extra),
                      kw=dict(kwargs, device=portable_device(device))), sizes={"n": 2})
    ds = xr.Dataset(out, attrs=dict(da.attrs)).assign_coords(n=[0, 1])
    for v in ds.data_vars:
        ds[v].attrs = {}
    ds["breaks"].attrs = {"long_name": "1 break or 0 (the tests' decision)",
                          "flag_values": "-1 not analysed (see status)"}
    ds["break_date"].attrs = {"long_name": "date of the last value before the best single "
                                           "break (whatever the decision)"}
    date_attrs(ds["break_date"], dates)
    ds["status"].attrs = {"long_name": "0 ok, 1 too few values for trim, 2 trim > n / 2, "
                                       "3 non-finite, 4 rank-deficient, 5 exact fit"}
    return ds


# ----------------------------------------------------------------------------------- maps

def _decompose_maps_block(nt, td, mg, ns, sd, st):
    from .bfast.maps import DECOMPOSE_MAP_FIELDS, decompose_maps
    m = decompose_maps(nt, td, mg, ns, sd, st, axis=-1)
    return tuple(m[f] for f in DECOMPOSE_MAP_FIELDS)


def _bfast01_maps_block(br, bd, mg, ft, fs, st):
    from .bfast.maps import BFAST01_MAP_FIELDS, bfast01_maps
    m = bfast01_maps(br, bd, mg, ft, fs, st)
    return tuple(m[f] for f in BFAST01_MAP_FIELDS)


def result_maps(ds):
    """The per-pixel maps (``clts.bfast.maps.decompose_maps`` / ``bfast01_maps``) of a
    :func:`bfast_decompose` or :func:`bfast01` Dataset (lazy on Dask): a Dataset over the pixel
    dimensions."""
    from .bfast.maps import BFAST01_MAP_FIELDS, DECOMPOSE_MAP_FIELDS
    from .xarray_common import xr_module
    xr = xr_module()
    if "n_trend_breaks" in ds:
        need = ("n_trend_breaks", "trend_break_dates", "magnitudes", "n_season_breaks",
                "season_break_dates", "status")
        fields, fn = DECOMPOSE_MAP_FIELDS, _decompose_maps_block
        core = [[], ["trend_break"], ["trend_break"], [], ["season_break"], []]
        dates = ds["trend_break_dates"]
    else:
        need = ("breaks", "break_date", "magnitude", "flag_type", "flag_significance",
                "status")
        fields, fn = BFAST01_MAP_FIELDS, _bfast01_maps_block
        core = [[]] * 6
        dates = ds["break_date"] if "break_date" in ds else None
        if "breaks" in ds and "flag_type" not in ds:          # bfast01 without classify
            ds = ds.assign(flag_type=xr.full_like(ds["breaks"], -1),
                           flag_significance=xr.full_like(ds["breaks"], -1),
                           magnitude=xr.full_like(ds["breaks"], np.nan, dtype=np.float64))
    missing = [v for v in need if v not in ds]
    if missing:
        raise ValueError(f"ds has no {', '.join(missing)} (variables: "
                         f"{', '.join(map(str, ds.data_vars))})")
    d = dates.dtype
    i4, f8 = np.dtype(np.int32), np.dtype(np.float64)
    dts = {"n_trend_breaks": i4, "n_season_breaks": i4, "largest_magnitude": f8,
           "breaks": i4, "magnitude": f8, "flag_type": i4, "flag_significance": i4,
           "status": i4}
    res = xr.apply_ufunc(fn, *(ds[v] for v in need), input_core_dims=core,
                         output_core_dims=[[]] * len(fields), dask="parallelized",
                         output_dtypes=[dts.get(f, d) for f in fields])
    out = xr.Dataset(dict(zip(fields, res)), attrs=dict(ds.attrs))
    for f in fields:
        out[f].attrs = {"long_name": _LONG_NAMES[f]}
        if f.endswith("_date"):
            out[f].attrs.update({k: v for k, v in dates.attrs.items()
                                 if k in ("calendar", "since", "units")})
    out["status"].attrs = dict(ds["status"].attrs)
    return out


_LONG_NAMES = {
    "n_trend_breaks": "number of trend breaks (-1 not analysed)",
    "first_trend_break_date": "date of the first trend break",
    "largest_break_date": "date of the trend break of the largest absolute change (R's Time)",
    "largest_magnitude": "that change, signed (R's Magnitude)",
    "n_season_breaks": "number of season breaks (-1 not analysed)",
    "first_season_break_date": "date of the first season break",
    "breaks": "1 break or 0 (-1 not analysed)", "break_date": "date of the break",
    "magnitude": "trend jump at the break", "flag_type": "bfast01classify's break type",
    "flag_significance": "bfast01classify's significance flag", "status": "status"}
