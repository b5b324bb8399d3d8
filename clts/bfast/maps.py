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
    nb = _host(n_breaks, "n_breaks")
    st = _host(status, "status")
    bd = _host(break_dates, "break_dates")
    mg = _host(magnitudes, "magnitudes")
    for a, name in ((nb, "n_breaks"), (st, "status")):
        if a.dtype.kind not in "iu":
            raise TypeError(f"{name} must hold integers, got dtype {a.dtype}")
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
