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


def read(path: str, var: str | None, dim: str = "time", chunks: str | None = None):
    """The DataArray ``var`` of ``path`` with time dimension ``dim``."""
    import xarray as xr
    if not Path(path).exists():
        raise InputError(f"{path}: no such file or directory")
    kind = _kind(path)
    if kind in ("zarr", "netcdf"):
        ch = parse_chunks(chunks)
        try:
            if kind == "zarr":
                ds = xr.open_zarr(path, chunks=ch or {})
            else:
                ds = xr.open_dataset(path, chunks=ch or {})
        except Exception as exc:
            raise InputError(f"{path}: cannot be read as {kind} ({exc})") from None
        return ds[_pick([str(v) for v in ds.data_vars], var, path, "variable")]
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
