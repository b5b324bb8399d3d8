"""The helpers every ``clts.xarray`` front end shares (``clts.xarray``, ``clts.xarray_bfast``):
the input's checks, its undecoded fill values masked, ``xr.apply_ufunc`` over the time
dimension, a device every Dask worker can resolve."""
from __future__ import annotations


import numpy as np
from .errors import warn_caller


def xr_module():
    try:
        import xarray
    except ImportError:  # pragma: no cover - the test extra installs it
        raise ImportError("clts.xarray needs xarray: pip install 'clts[dask]'") from None
    return xarray


def fill_values(da) -> list:
    """The ``_FillValue`` / ``missing_value`` of data that were not decoded (opened with
    ``mask_and_scale=False``, or integer data kept raw): they are in ``attrs`` then."""
    out = []
    for key in ("_FillValue", "missing_value"):
        v = da.attrs.get(key)
        if v is not None:
            out += [x for x in np.atleast_1d(v).tolist() if x == x]     # NaN masks itself
    return out


def mask_values(da, values):
    """``da`` with the entries equal to any of ``values`` as NaN; integers become float64 first
    (the dtype the algorithms compute integer data in), floats keep their dtype. The values are
    compared in the data's dtype: float32 data marked 1e20 (CMIP's missing value) or -9999.9
    holds float32(1e20), which no float64 1e20 equals; a value the dtype cannot hold (1e40 for
    float32) marks nothing."""
    if da.dtype.kind in "iub":
        da = da.astype(np.float64)
    if not len(values):
        return da
    wide = np.asarray(list(values), dtype=np.float64)
    with np.errstate(over="ignore"):
        held = wide.astype(da.dtype)
    held = held[np.isfinite(held) | ~np.isfinite(wide)]         # not overflowed to inf
    return da.where(~da.isin(held)) if held.size else da


def mask_fill(da):
    """``da`` with its undecoded fill values as NaN (integers become float64)."""
    fills = fill_values(da)
    if not fills:
        return da
    attrs = {k: v for k, v in da.attrs.items() if k not in ("_FillValue", "missing_value")}
    out = mask_values(da, fills)
    out.attrs = attrs
    return out


def packed(da) -> bool:
    """Whether ``da`` holds undecoded packed values (CF ``scale_factor`` / ``add_offset`` still
    in ``attrs``: opened with ``mask_and_scale=False``)."""
    return "scale_factor" in da.attrs or "add_offset" in da.attrs


def unpack(da):
    """``da`` decoded as xarray decodes a file (``decode_cf_variable``: fill values masked,
    ``_Unsigned`` honoured, ``scale_factor`` / ``add_offset`` applied, in the float type xarray
    picks), the packing attributes gone; so that results equal the decoded file's and files
    written from them read back right (a kept ``add_offset`` would be added again on
    reading)."""
    if not packed(da):
        return da
    xr = xr_module()
    var = xr.Variable(da.dims, da.data, attrs=dict(da.attrs))
    dec = xr.conventions.decode_cf_variable(str(da.name), var, decode_times=False,
                                            decode_timedelta=False)
    out = xr.DataArray(dec, coords=da.coords, name=da.name)
    out.attrs = dict(dec.attrs)
    return out


def prepare(da, dim: str, name: str = "da", mask: bool = True):
    """Check ``da`` and its time dimension (strictly increasing, whatever its kind); undecoded
    fill values masked (``mask``) and packed values unpacked (:func:`unpack`); one chunk along
    the time dimension (with a warning)."""
    xr = xr_module()
    if isinstance(da, xr.Dataset):
        raise TypeError(f"{name} must be a DataArray; pick a variable of the Dataset "
                        f"(variables: {', '.join(map(str, da.data_vars))})")
    if not isinstance(da, xr.DataArray):
        raise TypeError(f"{name} must be an xarray DataArray, got {type(da).__name__}")
    if dim not in da.dims:
        raise ValueError(f"{name} has no dimension {dim!r} (dimensions {tuple(da.dims)}); "
                         "give dim=")
    if dim in da.coords:                   # numbers, datetime64 and cftime alike
        from .timeaxis import check_increasing
        check_increasing(da[dim].values, f"the {dim!r} coordinate of {name}",
                         f"; sort it first with da.sortby({dim!r}) (and drop duplicates)")
    if packed(da):
        da = unpack(da)                    # masked as well, by xarray's rules
    elif mask:
        da = mask_fill(da)
    if da.chunks is not None:
        axis = da.dims.index(dim)
        if len(da.chunks[axis]) > 1:
            # whole series; the other dimensions keep their chunks unless a chunk would then
            # exceed Dask's array.chunk-size (one chunk over y and x of a file stored as
            # time slices would be the whole array): those are cut to it
            import dask
            from dask.utils import parse_bytes
            new = {dim: -1}
            block = da.sizes[dim] * da.dtype.itemsize * int(np.prod(
                [max(c) for d, c in zip(da.dims, da.chunks) if d != dim]))
            if block > parse_bytes(dask.config.get("array.chunk-size")):
                new.update({d: "auto" for d in da.dims if d != dim})
            nchunks = len(da.chunks[axis])
            da = da.chunk(new)
            cut = "" if len(new) == 1 else (
                "; the other dimensions cut to chunks of " + " x ".join(
                    f"{d}={max(c)}" for d, c in zip(da.dims, da.chunks) if d != dim))
            warn_caller(f"{name}: the time dimension {dim!r} is split over {nchunks} "
                        f"chunks; rechunked to one chunk along it (each series is computed "
                        f"whole){cut}", UserWarning)
    return da


def quiet(kw) -> dict:
    """A block's keyword arguments for its core call: no progress bar unless the user asked for
    one (``progress=True`` on an in-memory DataArray: the one block is the whole call)."""
    return {"progress": False, **kw}


def apply_core(fn, da, dim, outs, kwargs, *, out_core=None, sizes=None):
    """apply_ufunc of ``fn`` over ``da`` with ``dim`` as the (last) core dimension; ``outs``:
    [(name, dtype, has_time)], ``has_time`` a bool or the output's core dimensions. A user's
    ``progress`` in ``kwargs["kw"]`` reaches the block of an in-memory DataArray, not Dask's."""
    xr = xr_module()
    kw = kwargs.get("kw")
    if isinstance(kw, dict) and "progress" in kw and da.chunks is not None:
        # Dask runs the blocks in its own threads or workers: no bar per block
        # (dask.diagnostics.ProgressBar, or the distributed dashboard, shows the chunks)
        kwargs = dict(kwargs, kw={k: v for k, v in kw.items() if k != "progress"})
    core = [list(c) if isinstance(c, (list, tuple)) else [out_core or dim] if c else []
            for _, _, c in outs]
    res = xr.apply_ufunc(
        fn, da, kwargs=kwargs, input_core_dims=[[dim]], output_core_dims=core,
        exclude_dims={dim} if out_core else set(), dask="parallelized",
        output_dtypes=[dt for _, dt, _ in outs], keep_attrs=True,
        dask_gufunc_kwargs={"output_sizes": sizes or {}, "allow_rechunk": False})
    if not isinstance(res, tuple):
        res = (res,)
    return {name: r for (name, _, _), r in zip(outs, res)}


def portable_device(device):
    """``device`` as something every process can resolve (a Device travels as its name)."""
    from .runtime.devices import portable
    return portable(device)
