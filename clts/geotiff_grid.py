"""The grid a map is written on: ``like=`` of :func:`clts.geotiff.write_bfast` /
``write_breaks`` (a Stack, or a DataArray with a CRS) checked to be the maps' own grid."""
from __future__ import annotations

import numpy as np


def grid_of(like, maps) -> tuple:
    """(crs, transform) of ``like`` (a :class:`Stack` or a DataArray with a CRS: rioxarray's,
    or the ``crs`` / ``transform`` attrs of :meth:`Stack.to_dataarray`), checked to be the grid
    of ``maps`` (a 2-D DataArray): the same size and, where both have them, the same pixel
    coordinates, so a map of a cut-out is never written at the whole scene's origin."""
    from affine import Affine
    if getattr(maps, "ndim", 0) != 2:
        raise ValueError(f"the maps must be 2-D (y, x), got dims {getattr(maps, 'dims', None)}")
    if all(hasattr(like, a) for a in ("files", "bands", "height", "width", "transform")):
        # a clts.geotiff.Stack
        crs, tr, shape = like.crs, like.transform, (like.height, like.width)
        coords = None
    else:
        if not hasattr(like, "dims") or not hasattr(like, "coords") or len(like.dims) < 2:
            raise ValueError(f"like must be a Stack or a DataArray on the stack's grid, "
                             f"got {type(like).__name__}")
        ydim, xdim = _grid_dims(like, maps)
        crs = tr = None
        try:
            import rioxarray  # noqa: F401  (registers .rio)
            # (rioxarray's own PendingDeprecationWarning from affine, ignored by Python's
            # default filters, is left alone: a warnings.catch_warnings block would change the
            # filters of the whole process, and other threads raced with it)
            crs = like.rio.crs
            tr = like.rio.transform() if crs is not None else None
        except ImportError:  # pragma: no cover
            pass
        if crs is None and like.attrs.get("crs") and like.attrs.get("transform") is not None:
            from rasterio.crs import CRS      # Stack.to_dataarray's attrs, without rioxarray
            crs, tr = CRS.from_user_input(like.attrs["crs"]), Affine(*like.attrs["transform"][:6])
            if ydim in like.coords and xdim in like.coords and tr.b == tr.d == 0:
                x0, y0 = float(like[xdim][0]), float(like[ydim][0])    # a cut-out's own origin
                tr = Affine(tr.a, 0.0, x0 - tr.a / 2, 0.0, tr.e, y0 - tr.e / 2)
        if crs is None:
            raise ValueError("like has no CRS (write one with da.rio.write_crs, or pass the "
                             "Stack / Stack.to_dataarray() the maps came from)")
        shape = (like.sizes[ydim], like.sizes[xdim])
        coords = {d: (like[d].values, abs(tr.e if d == ydim else tr.a))
                  for d in (ydim, xdim) if d in like.coords}
    if tuple(maps.shape) != tuple(shape):
        raise ValueError(f"like is a {shape[0]} x {shape[1]} grid but the maps are "
                         f"{maps.shape[0]} x {maps.shape[1]}: pass like= the stack or DataArray "
                         "the maps were computed from")
    for d, (values, pixel) in (coords or {}).items():
        mine = maps[d].values if d in maps.coords else None
        if (mine is not None and mine.dtype.kind in "iuf" and values.dtype.kind in "iuf"
                and mine.shape == values.shape
                and not np.allclose(mine, values, rtol=0, atol=pixel / 2)):   # a pixel off
            raise ValueError(f"like's {d} coordinates differ from the maps': pass like= the "
                             "DataArray the maps were computed from (a cut-out has its own grid)")
    return crs, tr


def _grid_dims(like, maps) -> tuple:
    """(y, x) dimension names of ``like``: rioxarray's, else the maps' own where ``like`` has
    them, else its last two."""
    try:
        return like.rio.y_dim, like.rio.x_dim
    except Exception:  # noqa: BLE001 - no rioxarray, or it cannot tell
        pass
    if all(d in like.dims for d in maps.dims):
        return tuple(maps.dims)
    return tuple(like.dims[-2:])
