"""Per-pixel break maps from a multi-break result (``clts.bfast_breaks``; any result that gives
the number of breaks, the break dates and magnitudes along a break axis, and a status).

:func:`break_maps` takes arrays and returns arrays; the file writers (``clts.xarray.break_maps``
for NetCDF / Zarr, ``clts.geotiff.bfast_breaks_geotiff`` for GeoTIFFs, ``clts breaks`` on the
command line) wrap around it.
"""
from __future__ import annotations

import numpy as np

#: the maps :func:`break_maps` returns, in this order
MAP_FIELDS = ("n_breaks", "first_break_date", "largest_break_date", "largest_magnitude",
              "status")


def _host(a, name):
    from ..runtime.arrays import to_numpy, values_of
    if a is None:
        raise TypeError(f"{name} is None: compute the result with magnitudes=True")
    return values_of(to_numpy(a))


def _integers(a, name):
    a = _host(a, name)
    if a.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers, got dtype {a.dtype}")
    return a


def missing_date(dates: np.ndarray):
    """The missing value of ``dates``' kind: NaT for datetime64, None for cftime objects, NaN
    for numbers."""
    if dates.dtype.kind == "M":
        return np.datetime64("NaT")
    return None if dates.dtype == object else np.nan


def break_maps(n_breaks, break_dates, magnitudes, status, *, axis: int = 0) -> dict:
    """The per-pixel maps of a multi-break result.

    Parameters
    ----------
    n_breaks : array_like of int, pixel shape
        Breaks per pixel; negative: not analysed (``status`` says why).
    break_dates : array_like, ``[breaks, ...]``
        The date of each break (datetime64, numbers or cftime dates), padded beyond
        ``n_breaks``.
    magnitudes : array_like of float, ``[breaks, ...]``
        The magnitude of each break (signed; NaN where it could not be computed).
    status : array_like of int, pixel shape
        Passed through (0 analysed).
    axis : int
        The break axis of ``break_dates`` and ``magnitudes`` (0 as ``clts.bfast_breaks``
        gives them; -1 for ``clts.xarray.bfast_breaks``'s variables).

    Returns
    -------
    dict of numpy.ndarray, pixel shape
        ``n_breaks`` (int32, -1 not analysed), ``first_break_date`` (the first break's date,
        missing without a break: NaT / NaN / None by the dates' kind), ``largest_break_date``
        and ``largest_magnitude`` (the break of the largest absolute magnitude, the first of
        equal ones, its signed magnitude; missing without a break or when every magnitude of
        the pixel is NaN), ``status`` (int32).

    Raises
    ------
    ValueError
        Shapes that do not agree.
    TypeError
        ``magnitudes`` None, non-integer counts or statuses, magnitudes that are not numbers.

    Examples
    --------
    >>> import numpy as np
    >>> from clts.bfast.maps import break_maps
    >>> m = break_maps([2, 0, -1], [[2001.5, np.nan, np.nan], [2004.0, np.nan, np.nan]],
    ...                [[0.2, np.nan, np.nan], [-0.5, np.nan, np.nan]], [0, 0, 1])
    >>> m["n_breaks"].tolist(), m["first_break_date"].tolist()[0], m["largest_break_date"].tolist()[0]
    ([2, 0, -1], 2001.5, 2004.0)
    >>> m["largest_magnitude"].tolist()[0], m["status"].tolist()
    (-0.5, [0, 0, 1])
    """
    nb = _integers(n_breaks, "n_breaks")
    st = _integers(status, "status")
    bd = _host(break_dates, "break_dates")
    mg = _host(magnitudes, "magnitudes")
    if mg.dtype.kind not in "fiu":
        raise TypeError(f"magnitudes must hold numbers, got dtype {mg.dtype}")
    if bd.ndim < 1 or mg.ndim < 1:
        raise ValueError("break_dates and magnitudes need a break axis")
    if not -bd.ndim <= axis < bd.ndim:
        raise ValueError(f"axis {axis} is out of range for break_dates of shape {bd.shape}")
    bd = np.moveaxis(bd, axis, 0)
    mg = np.moveaxis(mg, axis, 0).astype(np.float64)
    if bd.shape != mg.shape or bd.shape[1:] != nb.shape or st.shape != nb.shape:
        raise ValueError(f"shapes disagree: n_breaks {nb.shape}, status {st.shape}, "
                         f"break_dates {bd.shape} and magnitudes {mg.shape} (break axis "
                         "first)")
    B = bd.shape[0]
    if B and int(nb.max(initial=0)) > B:
        raise ValueError(f"n_breaks holds {int(nb.max())} breaks but break_dates has {B} rows")
    fill = missing_date(bd)
    out = {"n_breaks": np.where(nb < 0, -1, nb).astype(np.int32),
           "first_break_date": np.full(nb.shape, fill, dtype=bd.dtype),
           "largest_break_date": np.full(nb.shape, fill, dtype=bd.dtype),
           "largest_magnitude": np.full(nb.shape, np.nan), "status": st.astype(np.int32)}
    if B == 0:
        return out
    has = np.arange(B).reshape((B,) + (1,) * nb.ndim) < nb[None]
    out["first_break_date"] = np.where(nb > 0, bd[0], out["first_break_date"])
    size = np.where(has & np.isfinite(mg), np.abs(mg), -np.inf)
    k = np.argmax(size, axis=0)[None]           # the first of equal sizes
    found = np.take_along_axis(size, k, 0)[0] > -np.inf
    out["largest_break_date"] = np.where(found, np.take_along_axis(bd, k, 0)[0],
                                         out["largest_break_date"])
    out["largest_magnitude"] = np.where(found, np.take_along_axis(mg, k, 0)[0], np.nan)
    return out


# ------------------------------------------------ maps of bfast_decompose and bfast01 results

#: the maps :func:`decompose_maps` returns, in this order
DECOMPOSE_MAP_FIELDS = ("n_trend_breaks", "first_trend_break_date", "largest_break_date",
                        "largest_magnitude", "n_season_breaks", "first_season_break_date",
                        "status")
#: the maps :func:`bfast01_maps` returns, in this order
BFAST01_MAP_FIELDS = ("breaks", "break_date", "magnitude", "flag_type", "flag_significance",
                      "status")


def decompose_maps(n_trend_breaks, trend_break_dates, magnitudes, n_season_breaks,
                   season_break_dates, status, *, axis: int = 0) -> dict:
    """The per-pixel maps of a ``clts.bfast_decompose`` (R's ``bfast()``) result, from its
    arrays: the trend's through :func:`break_maps`, the season's count and first date.

    Parameters
    ----------
    n_trend_breaks, n_season_breaks : array_like of int, pixel shape
        Breaks per pixel of each component (-1: not analysed).
    trend_break_dates, season_break_dates : array_like, ``[breaks, ...]``
        The break dates of each component (their break axes may differ in length).
    magnitudes : array_like of float, ``[breaks, ...]``
        The trend's change at each break (R's ``Mags[, 3]``).
    status : array_like of int, pixel shape
        Passed through (``clts.bfast.decompose_result.DECOMPOSE_STATUS``).
    axis : int
        The break axis of the ``[breaks, ...]`` arrays (0 as ``bfast_decompose`` gives them).

    Returns
    -------
    dict of numpy.ndarray, pixel shape
        ``n_trend_breaks``, ``first_trend_break_date``; ``largest_break_date`` and
        ``largest_magnitude``: R's ``Time`` and ``Magnitude`` (the trend break of the largest
        absolute change, its signed change), missing without a trend break where R gives 0;
        ``n_season_breaks``, ``first_season_break_date``, ``status``.
    """
    t = break_maps(n_trend_breaks, trend_break_dates, magnitudes, status, axis=axis)
    sd = _host(season_break_dates, "season_break_dates")
    nan = np.full(sd.shape, np.nan)        # the season has no magnitudes: only its dates
    s = break_maps(n_season_breaks, sd, nan, status, axis=axis)
    return {"n_trend_breaks": t["n_breaks"], "first_trend_break_date": t["first_break_date"],
            "largest_break_date": t["largest_break_date"],
            "largest_magnitude": t["largest_magnitude"], "n_season_breaks": s["n_breaks"],
            "first_season_break_date": s["first_break_date"], "status": t["status"]}


def bfast01_maps(breaks, break_date, magnitude, flag_type, flag_significance, status) -> dict:
    """The per-pixel maps of a ``clts.bfast01`` result, from its arrays (pixel shape each).

    Returns
    -------
    dict of numpy.ndarray
        ``breaks`` (int32: the tests' decision, 1 or 0; -1 not analysed); ``break_date`` and
        ``magnitude``: the break's date and the trend's jump where ``breaks`` is 1, missing
        elsewhere (bfast01 reports the best single break whatever the decision);
        ``flag_type`` and ``flag_significance`` (int32, ``bfast01classify``'s flags, -1
        where R gives NA or without ``classify``); ``status`` (int32).

    Examples
    --------
    >>> from clts.bfast.maps import bfast01_maps
    >>> m = bfast01_maps([1, 0, -1], [2005.2, 2003.0, np.nan], [-0.3, 0.01, np.nan],
    ...                  [8, 2, -1], [3, 3, -1], [0, 0, 1])
    >>> m["breaks"].tolist(), m["break_date"].tolist()[:1], m["magnitude"].tolist()[:1]
    ([1, 0, -1], [2005.2], [-0.3])
    >>> bool(np.isnan(m["break_date"][1])), m["flag_type"].tolist()
    (True, [8, 2, -1])
    """
    br = _integers(breaks, "breaks")
    st = _integers(status, "status")
    bd = _host(break_date, "break_date")
    flags = [np.full(br.shape, -1, np.int32) if a is None else _integers(a, name)
             for a, name in ((flag_type, "flag_type"),
                             (flag_significance, "flag_significance"))]
    mg = np.full(br.shape, np.nan) if magnitude is None else _host(magnitude, "magnitude")
    if mg.dtype.kind not in "fiu":
        raise TypeError(f"magnitude must hold numbers, got dtype {mg.dtype}")
    for a, name in ((st, "status"), (bd, "break_date"), (mg, "magnitude"),
                    (flags[0], "flag_type"), (flags[1], "flag_significance")):
        if a.shape != br.shape:
            raise ValueError(f"shapes disagree: breaks {br.shape}, {name} {a.shape}")
    yes = br == 1
    return {"breaks": np.where(br < 0, -1, br).astype(np.int32),
            "break_date": np.where(yes, bd, np.array(missing_date(bd), dtype=bd.dtype)),
            "magnitude": np.where(yes, mg.astype(np.float64), np.nan),
            "flag_type": flags[0].astype(np.int32),
            "flag_significance": flags[1].astype(np.int32), "status": st.astype(np.int32)}


def result_maps(result) -> dict:
    """The per-pixel maps of a result object: ``clts.bfast_breaks``'s (:func:`break_maps`),
    ``clts.bfast_decompose``'s (:func:`decompose_maps`) or ``clts.bfast01``'s
    (:func:`bfast01_maps`); pandas / xarray-labelled results give their values."""
    from .bfast01 import Bfast01Result
    from .breaks_api import BreaksResult
    from .decompose_result import DecomposeResult
    if isinstance(result, DecomposeResult):
        r = result
        return decompose_maps(r.n_trend_breaks, r.trend_break_dates, r.magnitudes,
                              r.n_season_breaks, r.season_break_dates, r.status)
    if isinstance(result, Bfast01Result):
        r = result
        return bfast01_maps(r.breaks, r.break_date, r.magnitude, r.flag_type,
                            r.flag_significance, r.status)
    if isinstance(result, BreaksResult):
        return break_maps(result.n_breaks, result.break_dates, result.magnitudes,
                          result.status)
    raise TypeError(f"result must be a result of clts.bfast_breaks, clts.bfast_decompose or "
                    f"clts.bfast01, got {type(result).__name__}")
