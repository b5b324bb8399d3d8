"""Reading inputs and writing results for the command line: NetCDF / Zarr through xarray,
CSV (a time column or index, one series per column) and .npy for single series or batches."""
from __future__ import annotations

from pathlib import Path

import numpy as np


class InputError(ValueError):
    """A file, variable or time axis the command line cannot use (printed without a trace)."""


def _kind(path: str) -> str:
    p = str(path).rstrip("/").lower()
    for ext, kind in ((".zarr", "zarr"), (".nc", "netcdf"), (".nc4", "netcdf"),
                      (".h5", "netcdf"), (".csv", "csv"), (".npy", "npy")):
        if p.endswith(ext):
            return kind
    raise InputError(f"{path}: unknown file type; inputs: .nc, .zarr, .csv, .npy")


def parse_chunks(text: str | None) -> dict:
    """``"y=100,x=100"`` -> {"y": 100, "x": 100}."""
    if not text:
        return {}
    out = {}
    for part in text.split(","):
        name, _, size = part.partition("=")
        try:
            out[name.strip()] = int(size)
        except ValueError:
            raise InputError(f"--chunks takes DIM=SIZE,... got {text!r}") from None
    return out


def _pick(names: list, var: str | None, path: str, what: str) -> str:
    """``var`` among ``names`` (the only one when None), or an InputError listing them."""
    if var is None:
        if len(names) != 1:
            raise InputError(f"{path} holds {len(names)} {what}s ({', '.join(names)}); "
                             "pick one with --var")
        return names[0]
    if var not in names:
        raise InputError(f"{what} {var!r} not in {path}; {what}s: {', '.join(names)}")
    return var


#: bytes of input per Dask chunk when the file's own chunks cannot be used (a time axis split
#: over chunks, or chunks larger than this): a chunk's working set is several times this
#: (STL about 15x: inputs, outputs and device buffers), times the Dask threads
STREAM_CHUNK_BYTES = 32 << 20


def _open(path, kind, chunks):
    import xarray as xr
    try:
        if kind == "zarr":
            return xr.open_zarr(path, chunks=chunks)
        return xr.open_dataset(path, chunks=chunks)
    except Exception as exc:
        raise InputError(f"{path}: cannot be read as {kind} ({exc})") from None


def _stream_chunks(path, kind, ds, name, dim):
    """``ds[name]`` in Dask chunks that stream: the file's own chunks when each holds whole
    series and at most STREAM_CHUNK_BYTES, else re-opened with the time axis whole and the other
    dimensions cut to that size, read straight from the file (a Dask rechunk of time-split
    chunks would hold every time slice of a chunk row at once)."""
    import warnings
    da = ds[name]
    if da.chunks is None or dim not in da.dims:
        return da
    axis = da.dims.index(dim)
    split = len(da.chunks[axis]) > 1
    biggest = int(np.prod([max(c) for c in da.chunks])) * da.dtype.itemsize
    if not split and biggest <= STREAM_CHUNK_BYTES:
        return da
    import dask
    with dask.config.set({"array.chunk-size": STREAM_CHUNK_BYTES}), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*separate the stored chunks")
        da = _open(path, kind, {d: (-1 if d == dim else "auto") for d in da.dims})[name]
    if split:
        shape = " x ".join(f"{d}={max(c)}" for d, c in zip(da.dims, da.chunks))
        warnings.warn(f"{path}: the file splits the time dimension {dim!r} over chunks; read "
                      f"in chunks of whole series ({shape}), each file chunk read several "
                      "times. Faster: store the file with whole series per chunk (e.g. "
                      f"ds.chunk({{{dim!r}: -1, ...}}).to_zarr(...)), or give --chunks",
                      UserWarning, stacklevel=2)
    return da


def read(path: str, var: str | None, dim: str = "time", chunks: str | None = None):
    """The DataArray ``var`` of ``path`` with time dimension ``dim``; a NetCDF / Zarr input
    is lazy (Dask), in chunks of whole series (see :func:`_stream_chunks`) unless ``chunks``
    gives them."""
    if not Path(path).exists():
        raise InputError(f"{path}: no such file or directory")
    kind = _kind(path)
    if kind in ("zarr", "netcdf"):
        ch = parse_chunks(chunks)
        ds = _open(path, kind, ch or {})
        name = _pick([str(v) for v in ds.data_vars], var, path, "variable")
        return ds[name] if ch else _stream_chunks(path, kind, ds, name, dim)
    import xarray as xr
    if kind == "csv":
        import pandas as pd
        df = pd.read_csv(path, index_col=0)
        try:
            df.index = pd.to_datetime(df.index)
        except (ValueError, TypeError):
            pass
        df.index.name = dim
        var = _pick([str(c) for c in df.columns], var, path, "column")
        return xr.DataArray(df[var].to_numpy(), dims=(dim,), coords={dim: df.index.to_numpy()},
                            name=var)
    a = np.load(path, allow_pickle=False)
    if a.ndim not in (1, 2):
        raise InputError(f"{path}: a .npy input is one series [time] or a batch "
                         f"[series, time], got shape {a.shape}")
    dims = (dim,) if a.ndim == 1 else ("series", dim)
    return xr.DataArray(a, dims=dims, name=var or Path(path).stem)


def reopen(path: str):
    """A result :func:`write` wrote, opened lazily."""
    import xarray as xr
    if str(path).rstrip("/").lower().endswith(".zarr"):
        return xr.open_zarr(path)
    return xr.open_dataset(path, engine="h5netcdf", chunks={})


def write(ds, path: str, progress: bool = True) -> None:
    """``ds`` to ``path`` (.zarr or .nc), computing Dask-backed variables chunk by chunk with
    a progress bar."""
    p = str(path).rstrip("/").lower()
    if p.endswith(".zarr"):
        # Zarr format 2 with consolidated metadata: read back by every zarr / xarray version
        # without warnings
        job = ds.to_zarr(path, mode="w", compute=False, zarr_format=2)
    elif p.endswith((".nc", ".nc4")):
        job = ds.to_netcdf(path, engine="h5netcdf", compute=False)
    else:
        raise InputError(f"{path}: outputs are .zarr or .nc")
    if job is None:
        return
    chunks = [int(np.prod([len(c) for c in v.chunks])) for v in ds.data_vars.values()
              if v.chunks is not None]
    if progress and max(chunks, default=0) > 1:     # a bar when there is more than one chunk
        try:
            from tqdm.dask import TqdmCallback
        except ImportError:
            TqdmCallback = None
        if TqdmCallback is not None:
            import sys
            with TqdmCallback(desc="computing", leave=False, file=sys.stderr):
                job.compute()
            return
    job.compute()
