"""Reading inputs and writing results for the command line: NetCDF / Zarr through xarray,
CSV (a time column or index, one series per column) and .npy for single series or batches."""
from __future__ import annotations

import os
from contextlib import contextmanager
import shutil
import uuid
from pathlib import Path

import numpy as np
from .errors import warn_caller


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


def have_dask() -> bool:
    """Whether Dask is importable (an optional extra, ``clts[dask]``): without it NetCDF / Zarr
    inputs are opened without chunks (read lazily by xarray, whole when computed) and
    results are written in one pass."""
    import importlib.util
    try:
        return importlib.util.find_spec("dask") is not None
    except (ImportError, ValueError):
        return False


def _open(path, kind, chunks):
    import xarray as xr
    if chunks is not None and not have_dask():
        chunks = None
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
        warn_caller(f"{path}: the file splits the time dimension {dim!r} over chunks; read "
                    f"in chunks of whole series ({shape}), each file chunk read several "
                    "times. Faster: store the file with whole series per chunk (e.g. "
                    f"ds.chunk({{{dim!r}: -1, ...}}).to_zarr(...)), or give --chunks",
                    UserWarning)
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
        if ch and not have_dask():
            raise InputError(f"--chunks {chunks} needs Dask, which is not installed: "
                             "pip install 'clts[dask]', or leave --chunks out to read "
                             f"{path} whole")
        ds = _open(path, kind, ch or {})
        name = _pick([str(v) for v in ds.data_vars], var, path, "variable")
        if dim not in ds[name].dims:
            raise InputError(f"{path}: {name!r} has no time dimension {dim!r} (its dimensions: "
                             f"{', '.join(map(str, ds[name].dims))}); --dim names it")
        unknown = [d for d in ch if d not in ds[name].dims]
        if unknown:
            raise InputError(f"--chunks {chunks}: {name!r} has no dimension "
                             f"{', '.join(map(repr, unknown))} (its dimensions: "
                             f"{', '.join(map(str, ds[name].dims))})")
        return ds[name] if ch else _stream_chunks(path, kind, ds, name, dim)
    import xarray as xr
    if kind == "csv":
        return _read_csv(path, var, dim)
    a = np.load(path, allow_pickle=False)
    if a.ndim not in (1, 2):
        raise InputError(f"{path}: a .npy input is one series [time] or a batch "
                         f"[series, time], got shape {a.shape}")
    dims = (dim,) if a.ndim == 1 else ("series", dim)
    return xr.DataArray(a, dims=dims, name=var or Path(path).stem)


def _read_csv(path, var, dim):
    """A CSV's column ``var`` along its first column, the time: numbers stay numbers (time
    steps, decimal years), anything else must read as dates."""
    import pandas as pd
    import xarray as xr
    try:
        df = pd.read_csv(path, index_col=0)
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: empty file (no header, no data rows)") from None
    if len(df) == 0:
        raise InputError(f"{path}: no data rows (only the header "
                         f"{', '.join(map(str, [df.index.name] + list(df.columns)))})")
    if df.index.dtype.kind not in "fiu":
        try:        # dates with UTC offsets ("+01:00", a zone's summer and winter) as UTC;
            # dates without one as they are (read as UTC, the zone then dropped)
            df.index = pd.to_datetime(df.index, utc=True).tz_localize(None)
        except (ValueError, TypeError):
            raise InputError(f"{path}: the first column ({df.index.name}) must hold numbers "
                             f"or dates, got {df.index[0]!r}") from None
    var = _pick([str(c) for c in df.columns], var, path, "column")
    col = df[var]
    if col.dtype.kind not in "fiub":
        raise InputError(f"{path}: column {var!r} must hold numbers, got {col.iloc[0]!r}")
    return xr.DataArray(col.to_numpy(), dims=(dim,), coords={dim: df.index.to_numpy()},
                        name=var)


def reopen(path: str):
    """A result :func:`write` wrote, opened lazily."""
    import xarray as xr
    if str(path).rstrip("/").lower().endswith(".zarr"):
        return xr.open_zarr(path)
    return xr.open_dataset(path, engine=netcdf_engine(), chunks={} if have_dask() else None)


#: xarray's NetCDF back ends clts writes with, in order of preference (h5netcdf: NetCDF-4, the
#: ``io`` extra; netCDF4: the same format; scipy: NetCDF-3, where neither is installed)
NETCDF_ENGINES = (("h5netcdf", "h5netcdf"), ("netcdf4", "netCDF4"), ("scipy", "scipy.io"))


def netcdf_engine() -> str:
    """The first of :data:`NETCDF_ENGINES` whose package imports (a machine without the ``io``
    extra's h5netcdf still reads and writes NetCDF); InputError where none does."""
    import importlib
    for engine, module in NETCDF_ENGINES:
        try:
            importlib.import_module(module)
        except ImportError:
            continue
        return engine
    raise InputError("NetCDF files need h5netcdf (pip install 'clts[io]'), netCDF4 or scipy; "
                     "none imports here")


# ------------------------------------------------------------------------ safe output

#: the attribute every result :func:`write` writes carries; a directory without it is never
#: replaced, whatever ``overwrite`` says
MARKER = "clts_output"


def _output_kind(path) -> str:
    p = str(path).rstrip("/").lower()
    if p.endswith(".zarr"):
        return "zarr"
    if p.endswith((".nc", ".nc4")):
        return "netcdf"
    raise InputError(f"{path}: outputs are .zarr or .nc")


def _is_ours(store: Path) -> bool:
    """Whether directory ``store`` is a Zarr store whose root attributes carry :data:`MARKER`
    (format 2: .zattrs, format 3: zarr.json)."""
    import json
    for name, key in ((".zattrs", None), ("zarr.json", "attributes")):
        f = store / name
        if f.is_file():
            try:
                attrs = json.loads(f.read_text())
            except (OSError, ValueError):
                return False
            attrs = attrs.get(key, {}) if key else attrs
            return isinstance(attrs, dict) and MARKER in attrs
    return False


def _same(a: Path, b: Path) -> bool:
    try:
        return a == b or (a.exists() and b.exists() and os.path.samefile(a, b))
    except OSError:
        return False


def refuse_inputs(path, inputs) -> tuple:
    """An InputError when the output ``path`` is an input (also through a symbolic link), lies
    inside one or holds one; else its absolute and its resolved path."""
    out = Path(str(path).rstrip("/") or str(path)).absolute()
    real = out.resolve()
    for inp in inputs:
        i = Path(inp).absolute()
        ri = i.resolve()
        if _same(real, ri) or _same(out, i) or ri in real.parents or real in ri.parents:
            raise InputError(f"{path}: the output would overwrite the input {inp}; write the "
                             "result to another path")
    return out, real


def check_output(path, inputs=(), overwrite: bool = False) -> None:
    """Refuse, before anything runs, an output that would lose data: one that is (or is inside,
    or holds) an input; an existing file or store without ``overwrite``; an existing directory
    that is not a store :func:`write` wrote (never replaced); a missing or read-only folder."""
    kind = _output_kind(path)
    out, real = refuse_inputs(path, inputs)
    folder = real.parent
    if not folder.is_dir():
        raise InputError(f"{path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"{path}: the folder {folder} is not writable")
    if os.path.lexists(out):
        if real.is_dir() and (kind != "zarr" or not _is_ours(real)):
            raise InputError(f"{path} is a directory that clts did not write (no Zarr store "
                             f"with the {MARKER!r} attribute): never replaced, even with "
                             "--overwrite; remove it yourself or write elsewhere")
        if not real.is_dir() and kind == "zarr":
            raise InputError(f"{path} exists and is not a Zarr store: never replaced; remove it "
                             "yourself or write elsewhere")
        if not overwrite:
            raise InputError(f"{path} exists; give --overwrite to replace it")


def check_output_folder(out_dir, names, inputs=(), overwrite: bool = False,
                        is_ours=lambda path: False) -> bool:
    """The rules of :func:`check_output` for a folder of result files (``names``, e.g. the
    GeoTIFFs of ``clts.geotiff``), before anything is read or computed: the folder must not be,
    lie inside or hold an input; an existing file of ``names`` in it is replaced only with
    ``overwrite`` and only if ``is_ours(path)`` (clts wrote it), never otherwise; other files
    are left alone; a path that is not a folder is refused, so are a missing parent and a
    read-only folder. Returns whether the folder exists (else the writer creates it)."""
    out, real = refuse_inputs(out_dir, inputs)
    exists = real.is_dir()
    if os.path.lexists(out) and not exists:
        raise InputError(f"{out_dir} exists and is not a folder (the output is a folder of "
                         f"{', '.join(names)}); never replaced: write elsewhere")
    folder = real if exists else real.parent
    if not folder.is_dir():
        raise InputError(f"{out_dir}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"{out_dir}: the folder {folder} is not writable")
    if not exists:
        return False
    found = [n for n in names if os.path.lexists(real / n)]
    for n in found:
        if (real / n).is_symlink() or not (real / n).is_file() or not is_ours(real / n):
            raise InputError(f"{out_dir}: {n} exists and clts did not write it (no "
                             f"{MARKER!r} tag): never replaced, even with --overwrite; move "
                             "it away or write elsewhere")
    if found and not overwrite:
        raise InputError(f"{out_dir} holds {', '.join(found)} of an earlier run; give "
                         "--overwrite (overwrite=True) to replace them")
    return True


def _encodable(ds):
    """``ds`` with every cftime variable (dates with None for missing, which neither NetCDF
    nor Zarr can store as objects) as float days after its ``since`` attribute (the results'
    time axis origin) or else 1 January of the first date's year (NaN for missing),
    attributes ``units`` "days", ``since`` that date and ``calendar``. Not "days since ...":
    xarray would decode NaN as that date; "days" reads back as timedelta64 with NaT for
    missing."""
    from .timeaxis import calendar, days, is_cftime
    out = ds.copy()
    for name, v in ds.data_vars.items():
        if v.dtype != object:
            continue
        vals = v.values
        if is_cftime(vals):
            cal = calendar(vals)
            first = next(x for x in vals.ravel() if x is not None)
            # the time axis's origin where the result names it: one for every date variable
            origin = v.attrs.get("since") or f"{first.year:04d}-01-01"
        elif all(x is None for x in vals.ravel()) and "calendar" in v.attrs:
            cal, origin = v.attrs["calendar"], v.attrs.get("since", "0001-01-01")  # no dates
        else:
            raise InputError(f"result variable {name!r} holds Python objects; not writable")
        flat = vals.ravel()
        num = np.full(flat.shape, np.nan)
        ok = np.array([x is not None for x in flat], bool)
        if ok.any():
            num[ok] = days(np.array(list(flat[ok]), dtype=object), origin)
        out[name] = v.copy(data=num.reshape(vals.shape))
        out[name].attrs = dict(v.attrs, units="days", since=origin, calendar=cal)
    return out


def _remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, ignore_errors=True)
    elif os.path.lexists(p):
        p.unlink()


def put_in_place(tmp: Path, final: Path, overwrite: bool = True) -> None:
    """Rename ``tmp`` to ``final``; a store ``final`` is moved aside first and removed only
    once ``tmp`` is in its place. Without ``overwrite`` nothing that appeared at ``final``
    while this run computed (another run's output) is replaced: an InputError."""
    if not overwrite:
        appeared = InputError(f"{final} appeared while this run computed (another run's "
                              "output?); it is left as it is and this result is not written: "
                              "give --overwrite to replace it")
        if os.path.lexists(final):
            raise appeared
        if tmp.is_dir():
            try:
                os.rename(tmp, final)      # refused over a file or a store with contents
            except OSError:
                if os.path.lexists(final):
                    raise appeared from None
                raise
            return
        try:
            os.link(tmp, final)            # refused where anything exists
        except FileExistsError:
            raise appeared from None
        except OSError:                    # no hard links here (vfat, SMB, FUSE: EPERM ...)
            try:                           # the name reserved first, then replaced
                os.close(os.open(final, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            except FileExistsError:
                raise appeared from None
            os.replace(tmp, final)
            return
        tmp.unlink()
        return
    if not (final.is_dir() and not final.is_symlink()):
        os.replace(tmp, final)             # atomic for a file over a file
        return
    aside = final.with_name(f".{final.name}.clts-old-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    os.rename(final, aside)
    try:
        os.rename(tmp, final)
    except BaseException:
        os.rename(aside, final)
        raise
    _remove(aside)


#: the encodings a written variable keeps from its input: CF's, not the input store's
_CF_ENCODINGS = ("units", "calendar", "dtype", "_FillValue", "missing_value", "scale_factor",
                 "add_offset")


def _cf_encodings_only(ds):
    """``ds`` (a shallow copy) with every variable's encoding cut to ``_CF_ENCODINGS``."""
    out = ds.copy()
    for v in out.variables.values():
        v.encoding = {k: e for k, e in v.encoding.items() if k in _CF_ENCODINGS}
    return out


def write(ds, path: str, progress: bool = True, *, overwrite: bool = False,
          inputs=()) -> None:
    """``ds`` to ``path`` (.zarr or .nc), computing Dask-backed variables chunk by chunk with
    a progress bar. Safe: :func:`check_output` first (``inputs``: paths the output must not
    touch); the result is written to a hidden sibling and renamed into place only when the
    whole computation succeeded, so a failure or Ctrl-C leaves no partial file and any earlier
    ``path`` untouched."""
    kind = _output_kind(path)
    check_output(path, inputs, overwrite)
    final = Path(str(path).rstrip("/")).absolute()
    ds = _encodable(ds)
    ds.attrs[MARKER] = "written by clts"
    tmp = final.with_name(f".{final.name}.clts-partial-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        direct = not have_dask()     # written in one pass: compute=False hands back a Dask task
        if kind == "zarr":
            # Zarr format 2 with consolidated metadata: read back by every zarr / xarray
            # version without warnings; the input's storage encodings (a Zarr 3 store's
            # codecs, its chunks) do not carry over
            job = _cf_encodings_only(ds).to_zarr(tmp, mode="w-", compute=direct,
                                                 zarr_format=2)
        else:
            job = ds.to_netcdf(tmp, engine=netcdf_engine(), compute=direct)
        if direct:
            job = None
        if job is not None:
            _compute(job, ds, progress)
        put_in_place(tmp, final, overwrite)
    except BaseException:
        _remove(tmp)
        raise


def _compute(job, ds, progress):
    chunks = [int(np.prod([len(c) for c in v.chunks])) for v in ds.data_vars.values()
              if v.chunks is not None]
    with _waited_threads() as kw:
        if progress and max(chunks, default=0) > 1:     # a bar when there is more than one chunk
            try:
                from tqdm.dask import TqdmCallback
            except ImportError:
                TqdmCallback = None
            if TqdmCallback is not None:
                import sys
                with TqdmCallback(desc="computing", leave=False, file=sys.stderr):
                    job.compute(**kw)
                return
        job.compute(**kw)


@contextmanager
def _waited_threads():
    """Dask's threaded scheduler (the default) on a thread pool of our own, waited for on the
    way out: a failed chunk raises at once while the other threads are still writing theirs,
    and the partial output must be removed after their last write, not before it (a chunk
    written after the removal left a stray directory). Another scheduler (a distributed
    client, ``processes``) is left as configured."""
    import dask.threaded
    from dask.base import get_scheduler
    if get_scheduler() not in (None, dask.threaded.get):
        yield {}
        return
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1,
                            thread_name_prefix="clts-write") as pool:
        yield {"scheduler": "threads", "pool": pool}
