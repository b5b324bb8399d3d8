"""``clts.xarray.tke`` and ``clts.xarray.superbee_fluxes``: the ocean routines on the variables
of an xarray Dataset (numpy- or Dask-backed; see :mod:`clts.xarray`)."""
from __future__ import annotations


def _xr():
    import xarray as xr
    return xr


#: dimensions of each ocean input, as positions in the grid's dims (x, y, z[, time level]);
#: velocities have the level only in the TKE step
_OCEAN_DIMS = {"u": (0, 1, 2, 3), "v": (0, 1, 2, 3), "w": (0, 1, 2, 3), "tke": (0, 1, 2, 3),
               "dtke": (0, 1, 2, 3), "q": (0, 1, 2), "maskU": (0, 1, 2), "maskV": (0, 1, 2),
               "maskW": (0, 1, 2), "kappaM": (0, 1, 2), "mxl": (0, 1, 2), "forc": (0, 1, 2),
               "dxt": (0,), "dxu": (0,), "dyt": (1,), "dyu": (1,), "cost": (1,), "cosu": (1,),
               "dzt": (2,), "dzw": (2,), "kbot": (0, 1), "forc_tke_surface": (0, 1)}


def _ocean_inputs(ds, names, grid_var, name="ds"):
    """``ds``'s variables ``names`` as numpy arrays in the order the ocean routines take their
    axes, and the grid's dims (x, y, z[, level]) read from ``grid_var``."""
    xr = _xr()
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"{name} must be an xarray Dataset holding the inputs as variables "
                        f"({', '.join(names)}), got {type(ds).__name__}")
    missing = [n for n in names if n not in ds.data_vars]
    if missing:
        raise ValueError(f"{name} lacks the variables {', '.join(missing)} (it has "
                         f"{', '.join(map(str, ds.data_vars)) or 'none'}); rename yours with "
                         "ds.rename({...})")
    nd = 4 if grid_var == "tke" else 3
    axes = []
    for n in ("dxt", "dyt", "dzw"):                     # the 1-D spacings name x, y and z
        if ds[n].ndim != 1:
            raise ValueError(f"{name}[{n!r}] must be 1-D, got dimensions {ds[n].dims}")
        axes.append(ds[n].dims[0])
    rest = [d for d in ds[grid_var].dims if d not in axes]
    grid = tuple(axes) + tuple(rest)
    if len(set(axes)) != 3 or len(grid) != nd or set(grid) != set(ds[grid_var].dims):
        raise ValueError(f"{name}[{grid_var!r}] must have the dimensions of dxt, dyt, dzw "
                         f"({', '.join(axes)}){' and a time level' if nd == 4 else ''}, got "
                         f"{ds[grid_var].dims}")
    out = {}
    for n in names:
        want = tuple(grid[i] for i in _OCEAN_DIMS[n][:len(grid)])
        v = ds[n]
        if set(v.dims) != set(want) or v.ndim != len(want):
            raise ValueError(f"{name}[{n!r}] must have the dimensions {want}, got {v.dims}")
        out[n] = v.transpose(*want).values
    return out, grid


def _ocean_dataset(ds, grid, outputs, attrs, order):
    """The outputs ({name: (dims, array)}) as a Dataset, their dims in the order of ``order``."""
    xr = _xr()
    coords = {k: c for k, c in ds.coords.items() if set(c.dims) <= set(grid)}
    res = xr.Dataset({n: (dims, a) for n, (dims, a) in outputs.items()}, coords=coords,
                     attrs=dict(ds.attrs))
    res = res.transpose(*order, missing_dims="ignore")
    for n, a in attrs.items():
        res[n].attrs = a
    return res


def tke(ds, *, device=None, **kwargs):
    """One TKE step (:func:`clts.ocean.tke`) of the inputs held as variables of ``ds``.

    ``ds`` has the variables named as :func:`clts.ocean.tke`'s arguments (``u``, ``v``, ``w``,
    ``maskU`` ... ``tke``, ``dtke``), with dims of any names in any order: the dims of
    ``dxt``, ``dyt`` and ``dzw`` are the grid's x, y and z, the other dim of ``tke`` its time
    level (``dxu`` is along x; ``dyu``, ``cost``, ``cosu`` along y; ``dzt`` along z;
    ``kbot`` and ``forc_tke_surface`` on (x, y)). Returns a Dataset with ``tke`` and ``dtke``
    (dims ordered as in ``ds.tke``) and ``tke_surf_corr`` (x, y), the coordinates on those
    dims and the attributes of ``ds`` kept. ``kwargs`` as :func:`clts.ocean.tke` (``tau``, constants,
    ``plan``). Dask-backed variables are computed: the grid is one call (which splits it into
    device-sized pieces itself).
    """
    from .ocean.api import tke as _tke
    from .ocean.inputs import NAMES
    arrs, grid = _ocean_inputs(ds, NAMES, "tke")
    new, dnew, corr = _tke(*(arrs[n] for n in NAMES), device=device, **kwargs)
    return _ocean_dataset(
        ds, grid, {"tke": (grid, new), "dtke": (grid, dnew), "tke_surf_corr": (grid[:2], corr)},
        {"tke": dict(ds["tke"].attrs), "dtke": dict(ds["dtke"].attrs),
         "tke_surf_corr": {"long_name": "surface correction of tke (negative values removed)"}},
        ds["tke"].dims)


#: the inputs of clts.ocean.superbee_fluxes, in its argument order
_SUPERBEE_NAMES = ("q", "u", "v", "w", "maskW", "dxt", "dyt", "dzw", "cost", "cosu")


def superbee_fluxes(ds, dt, *, device=None, **kwargs):
    """Superbee advection fluxes (:func:`clts.ocean.superbee_fluxes`) of tracer ``ds.q``.

    ``ds`` has the variables ``q``, ``u``, ``v``, ``w``, ``maskW`` on the grid (the dims of
    ``q``: x, y, z) and ``dxt`` (x), ``dyt``, ``cost``, ``cosu`` (y), ``dzw`` (z). Returns a
    Dataset with ``flux_east``, ``flux_north``, ``flux_top`` on the grid, coordinates and
    attributes kept. ``kwargs`` as :func:`clts.ocean.superbee_fluxes`.
    """
    from .ocean.api import superbee_fluxes as _sb
    arrs, grid = _ocean_inputs(ds, _SUPERBEE_NAMES, "q")
    fluxes = _sb(*(arrs[n] for n in _SUPERBEE_NAMES), dt, device=device, **kwargs)
    names = ("flux_east", "flux_north", "flux_top")
    return _ocean_dataset(ds, grid, {n: (grid, f) for n, f in zip(names, fluxes)},
                          {n: {"long_name": f"Superbee advective {n.split('_')[1]} flux of q"}
                           for n in names}, ds["q"].dims)
