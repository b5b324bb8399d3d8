"""GeoTIFF stacks in and out for the BFAST analyses (the optional extra ``geo``: rasterio,
rioxarray).

A stack is a folder / glob / list of single-band GeoTIFFs (one date each) or one multi-band
GeoTIFF (one band a date). Dates come from a CSV (a ``date`` column, else the first; one row
per file or band, in the order given), a sequence, or the file names (``YYYY-MM-DD``,
``YYYYMMDD`` or Landsat's ``YYYYDDD``). Files are put in date order. Every file must carry a
CRS and share the first one's CRS, transform and size.

:func:`bfast_monitor_geotiff` streams the stack in blocks of rows through
:func:`clts.bfast_monitor` and writes ``break_date.tif`` (decimal year or day of year),
``magnitude.tif``, ``valid_count.tif`` and ``status.tif`` with the input's CRS and transform.
Each file's own nodata value (per band) marks its missing values, and its scale and offset
(GDAL metadata) give the values' units, as rioxarray's ``mask_and_scale``. Output nodata values never
collide with results: NaN for the break dates and magnitudes, -1 (never written) for the
counts and statuses. Outputs go through the command line's safe-output rules
(``clts.io.check_output_folder``): the output folder must not be, lie inside or hold an input;
results of an earlier run are replaced only with ``overwrite=True`` and only files clts wrote
(their ``clts_output`` tag); each file is written under a hidden temporary name and renamed
once the whole stack has been processed.
:func:`bfast_breaks_geotiff` does the same with :func:`clts.bfast_breaks` and its per-pixel maps.
:func:`open_stack` + :meth:`Stack.to_dataarray` give a DataArray for ``clts.xarray``, and
:func:`write_bfast` writes a ``clts.xarray.bfast_monitor`` Dataset the same way.
"""
from __future__ import annotations

import glob
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .geotiff_grid import grid_of

OUTPUTS = ("break_date", "magnitude", "valid_count", "status")
DATE_FORMATS = ("decimal_year", "doy")
_DATE_RE = [(re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)"), "ymd-"),
            (re.compile(r"(?<!\d)(\d{4})(\d{2})(\d{2})(?!\d)"), "ymd"),
            (re.compile(r"(?<!\d)(\d{4})(\d{3})(?!\d)"), "yj")]


def _rasterio():
    try:
        import rasterio
    except ImportError:  # pragma: no cover - the geo extra installs it
        raise ImportError("clts.geotiff needs rasterio: pip install 'clts[geo]'") from None
    return rasterio


def date_from_name(name: str) -> np.datetime64:
    """The date in a file name: YYYY-MM-DD, YYYYMMDD or YYYYDDD (year and day of year)."""
    stem = Path(name).name
    for rx, kind in _DATE_RE:
        m = rx.search(stem)
        if not m:
            continue
        try:
            if kind == "yj":
                y, j = int(m.group(1)), int(m.group(2))
                if not 1 <= j <= 366:
                    continue
                return np.datetime64(f"{y:04d}-01-01") + np.timedelta64(j - 1, "D")
            return np.datetime64(f"{m.group(1)}-{m.group(2)}-{m.group(3)}")
        except ValueError:
            continue
    raise ValueError(f"dates: no date (YYYY-MM-DD, YYYYMMDD or YYYYDDD) in the file name "
                     f"{stem!r}; give dates= (a CSV or a list)")


def read_dates(dates, names, n_bands: int) -> np.ndarray:
    """datetime64[D] dates, one per band, from a CSV path, a sequence or the file names."""
    if dates is None:
        if len(names) != n_bands:
            raise ValueError("dates: a multi-band GeoTIFF needs dates= (a CSV or a list), "
                             "its band names hold none")
        d = np.array([date_from_name(nm) for nm in names], dtype="datetime64[D]")
    elif isinstance(dates, (str, os.PathLike)):
        import pandas as pd
        try:
            df = pd.read_csv(dates)
        except pd.errors.EmptyDataError:
            raise ValueError(f"dates: {dates} is empty (a CSV with a 'date' column, one row per "
                             "file / band)") from None
        except (OSError, pd.errors.ParserError, UnicodeDecodeError) as exc:
            raise ValueError(f"dates: cannot read {dates} as a CSV ({exc})") from None
        if df.shape[1] == 0:
            raise ValueError(f"dates: {dates} has no column")
        cols = {str(c).lower(): c for c in df.columns}
        col = cols.get("date", df.columns[0])
        if df[col].dtype.kind in "iufb":
            raise ValueError(f"dates: column {col!r} of {dates} holds numbers "
                             f"({df[col].iloc[0]!r} ...), not dates: write them as YYYY-MM-DD")
        try:
            d = pd.to_datetime(df[col]).values.astype("datetime64[D]")
        except (ValueError, TypeError) as exc:
            raise ValueError(f"dates: column {col!r} of {dates} is not dates ({exc})") from None
    else:
        a = np.asarray(dates)
        if a.dtype.kind in "iufbc":
            raise ValueError(f"dates must be dates (datetime64, datetime.date or 'YYYY-MM-DD' "
                             f"strings), not numbers ({a.dtype})")
        try:
            d = a.astype("datetime64[D]").ravel()
        except (ValueError, TypeError):
            raise ValueError("dates must be a CSV path, a sequence of dates or None (from the "
                             "file names)") from None
    if d.size != n_bands:
        raise ValueError(f"dates: {d.size} dates for {n_bands} bands / files of the stack")
    if np.isnat(d).any():
        raise ValueError("dates: a date is missing (NaT)")
    return d


def _sources(inputs):
    if isinstance(inputs, (str, os.PathLike)):
        p = str(inputs)
        if os.path.isdir(p):        # a folder's name is a name, not a pattern ("scene[1]")
            q = glob.escape(p)
            files = sorted(glob.glob(os.path.join(q, "*.tif")) + glob.glob(os.path.join(q, "*.tiff")))
        elif any(ch in p for ch in "*?[") and not os.path.exists(p):     # "x[2020].tif": a file
            files = sorted(glob.glob(p))
        else:
            files = [p]
    else:
        files = [str(f) for f in inputs]
    if not files:
        raise ValueError(f"inputs: no GeoTIFF found in {inputs!r}")
    return files


def _input_paths(inputs, files, dates) -> list:
    """What the output folder must not touch: the stack's files, a folder given as the input,
    and a dates CSV."""
    out = list(files)
    if isinstance(inputs, (str, os.PathLike)) and os.path.isdir(str(inputs)):
        out.append(str(inputs))
    if isinstance(dates, (str, os.PathLike)):
        out.append(str(dates))
    return out


@dataclass
class Stack:
    """An opened GeoTIFF stack: sources in date order and the grid they share."""
    files: list
    bands: list              # (file index, band number) per date, in date order
    dates: np.ndarray
    crs: object
    transform: object
    nodata: float | None     # the first file's (``nodatas``: each band's)
    width: int
    height: int
    dtype: np.dtype
    nodatas: list | None = None      # per date, each band's own nodata (None: none)
    scales: list | None = None       # per date, each band's GDAL scale and offset (None: the
    offsets: list | None = None      # values as stored: scale 1, offset 0 everywhere)

    def read_rows(self, r0: int, r1: int) -> np.ndarray:
        """[time, rows, width] of rows r0..r1 (a window of every band), as stored. A file that
        cannot be read (truncated, corrupt) is a ValueError naming ``inputs``."""
        rio = _rasterio()
        from rasterio.windows import Window
        win = Window(0, r0, self.width, r1 - r0)
        out = np.empty((len(self.bands), r1 - r0, self.width), self.dtype)
        opened = {}
        f = None
        try:
            for i, (f, b) in enumerate(self.bands):
                if f not in opened:
                    opened[f] = rio.open(self.files[f])
                out[i] = opened[f].read(b, window=win)
        except rio.errors.RasterioError as exc:
            raise ValueError(f"inputs: cannot read {self.files[f]} ({exc})") from None
        finally:
            for ds in opened.values():
                ds.close()
        return out

    def read_masked(self, r0: int, r1: int) -> np.ndarray:
        """:meth:`read_rows` as floats with NaN where each band holds its own nodata value,
        and each band's GDAL scale and offset applied (``value * scale + offset``, as rasterio's
        and rioxarray's ``mask_and_scale``: an NDVI stored as int16 x 1e-4 comes back as NDVI);
        float32 for floats of at most 4 bytes and integers of at most 2, else float64."""
        a = self.read_rows(r0, r1)
        exact32 = (a.dtype.kind == "f" and a.dtype.itemsize <= 4) or \
            (a.dtype.kind in "iu" and a.dtype.itemsize <= 2)
        ft = np.float32 if exact32 else np.float64
        out = a.astype(ft)
        for i, nd in enumerate(self.nodatas or [self.nodata] * len(self.bands)):
            if self.scales is not None and (self.scales[i], self.offsets[i]) != (1.0, 0.0):
                out[i] = a[i] * np.float64(self.scales[i]) + np.float64(self.offsets[i])
            if nd is not None and not np.isnan(nd):
                out[i][a[i] == nd] = np.nan
        return out

    def to_dataarray(self):
        """The whole stack as a DataArray (time, y, x) with the dates and the pixel-centre
        coordinates, each band's nodata as NaN (an integer stack with nodata becomes float32,
        float64 beyond 16 bits); CRS / transform in ``attrs`` and, with rioxarray, ``.rio``;
        the nodata is then NaN (the files' own values may be data in other files)."""
        import xarray as xr
        masked = any(nd is not None for nd in (self.nodatas or [self.nodata]))
        if masked or self.scales is not None:
            a = self.read_masked(0, self.height)     # NaN = missing, each band's own nodata
        else:
            a = self.read_rows(0, self.height)
        nodata = float("nan") if masked else None
        tr = self.transform
        xs = tr.c + tr.a * (np.arange(self.width) + 0.5)
        ys = tr.f + tr.e * (np.arange(self.height) + 0.5)
        da = xr.DataArray(a, dims=("time", "y", "x"),
                          coords={"time": self.dates.astype("datetime64[ns]"), "y": ys, "x": xs},
                          attrs={"crs": self.crs.to_string(), "transform": tuple(tr)[:6],
                                 "nodata": nodata})
        try:
            import rioxarray  # noqa: F401
            da = da.rio.write_crs(self.crs).rio.write_transform(tr)
            if nodata is not None:
                da = da.rio.write_nodata(nodata)
        except ImportError:  # pragma: no cover
            pass
        return da


def open_stack(inputs, dates=None) -> Stack:
    """Open a folder / glob / list of single-band GeoTIFFs or one multi-band GeoTIFF; see the
    module docstring. Raises ValueError naming ``inputs`` / ``dates`` for a file without a CRS,
    files on different grids, band and date counts that differ, or repeated dates."""
    rio = _rasterio()
    files = _sources(inputs)
    meta = []
    for f in files:
        try:
            with rio.open(f) as ds:
                meta.append((ds.count, ds.crs, ds.transform, ds.nodata, ds.width, ds.height,
                             np.dtype(ds.dtypes[0]), list(ds.nodatavals),
                             [(float(s), float(o)) for s, o in zip(ds.scales, ds.offsets)]))
        except rio.errors.RasterioError as exc:
            raise ValueError(f"inputs: cannot open {f} ({exc})") from None
    for f, m in zip(files, meta):
        if m[1] is None:
            raise ValueError(f"inputs: {f} has no CRS (coordinate reference system); the "
                             "results could not be placed on the map")
    c0 = meta[0]
    for f, m in zip(files[1:], meta[1:]):
        if m[1] != c0[1] or m[2] != c0[2] or m[4:6] != c0[4:6]:
            raise ValueError(f"inputs: {f} is not on the grid of {files[0]} (CRS, transform "
                             "and size must match)")
    if len(files) == 1:
        bands = [(0, b + 1) for b in range(c0[0])]
        names = [files[0]] * c0[0] if c0[0] == 1 else []
    else:
        if any(m[0] != 1 for m in meta):
            raise ValueError("inputs: several files must each hold one band (one date)")
        bands = [(i, 1) for i in range(len(files))]
        names = files
    d = read_dates(dates, names if names else [], len(bands))
    order = np.argsort(d, kind="stable")
    d = d[order]
    if np.any(np.diff(d) <= np.timedelta64(0, "D")):
        i = int(np.argmax(np.diff(d) <= np.timedelta64(0, "D")))
        raise ValueError(f"dates: {d[i]} appears twice in the stack")
    bands = [bands[i] for i in order]
    packing = [meta[f][8][b - 1] for f, b in bands]
    scaled = any(p != (1.0, 0.0) for p in packing)
    return Stack(files=files, bands=bands, dates=d, crs=c0[1],
                 transform=c0[2], nodata=c0[3], width=c0[4], height=c0[5],
                 dtype=np.dtype(np.result_type(*[m[6] for m in meta])),
                 nodatas=[meta[f][7][b - 1] for f, b in bands],
                 scales=[p[0] for p in packing] if scaled else None,
                 offsets=[p[1] for p in packing] if scaled else None)


def date_values(dates, fmt: str) -> np.ndarray:
    """datetime64 -> float64 decimal year (year + (day of year - 1) / days in the year) or day
    of year; NaT -> NaN."""
    if fmt not in DATE_FORMATS:
        raise ValueError(f"date_format must be one of {DATE_FORMATS}, got {fmt!r}")
    d = np.asarray(dates).astype("datetime64[D]")
    nat = np.isnat(d)
    d = np.where(nat, np.datetime64("2000-01-01"), d)
    y = d.astype("datetime64[Y]")
    doy = (d - y.astype("datetime64[D]")).astype(np.int64) + 1
    if fmt == "doy":
        v = doy.astype(np.float64)
    else:
        days = ((y + 1).astype("datetime64[D]") - y.astype("datetime64[D]")).astype(np.int64)
        v = y.astype(np.int64) + 1970 + (doy - 1) / days
    return np.where(nat, np.nan, v)


class _Writer:
    """The output GeoTIFFs of ``out_dir``: checked by ``clts.io.check_output_folder`` before
    anything is read (``inputs``: the paths it must not touch), written under hidden temporary
    names in the folder, tagged ``clts_output``, renamed into place by :meth:`commit`;
    :meth:`abort` removes them (and the folder, when it made it and it is empty)."""

    def __init__(self, out_dir, names_dtypes, *, inputs=(), overwrite=False):
        from .io import check_output_folder
        self.out = Path(out_dir)
        self.names_dtypes = list(names_dtypes)
        existed = check_output_folder(out_dir, [f"{n}.tif" for n, _ in self.names_dtypes],
                                      inputs, overwrite, is_ours=_written_by_clts)
        self.made = None if existed else self.out
        self.files = {}
        self.overwrite = bool(overwrite)

    def open(self, stack_like):
        """Create the temporary files (after the inputs were opened and checked)."""
        import uuid
        rio = _rasterio()
        crs, transform, width, height = stack_like
        if self.made is not None:
            self.out.mkdir(exist_ok=True)
        tag = f"{os.getpid()}-{uuid.uuid4().hex[:8]}"
        for name, dt in self.names_dtypes:
            tmp = self.out / f".{name}.tif.clts-partial-{tag}"
            nd = _nodata_for(dt)
            ds = rio.open(tmp, "w", driver="GTiff", width=width, height=height, count=1,
                          dtype=dt, crs=crs, transform=transform, nodata=nd,
                          tiled=True, compress="deflate")
            self.files[name] = (ds, tmp, nd)
            ds.update_tags(**{_MARKER: "written by clts"})

    def write(self, name, r0, block):
        from rasterio.windows import Window
        ds, _, nd = self.files[name]
        b = np.asarray(block)
        if nd is not None:
            b = np.where(np.isnan(b), nd, b) if b.dtype.kind == "f" else b
        ds.write(b.astype(ds.dtypes[0]), 1, window=Window(0, r0, b.shape[1], b.shape[0]))

    def nodata(self, name):
        return self.files[name][2]

    def commit(self) -> dict:
        for ds, _, _ in self.files.values():
            ds.close()
        paths = {}
        from .io import InputError, put_in_place
        for name, (_, tmp, _) in self.files.items():
            final = self.out / f"{name}.tif"
            if self.overwrite and os.path.lexists(final) and not _written_by_clts(final):
                raise InputError(f"{final} appeared while this run computed and is not a clts "
                                 "output: never replaced (move it away and run again)")
            # --overwrite: clts's own output replaced; else one that appeared meanwhile stays
            put_in_place(Path(tmp), final, overwrite=self.overwrite)
            paths[name] = final
        self.files = {}
        return paths

    def abort(self):
        for ds, tmp, _ in self.files.values():
            try:
                ds.close()
            finally:
                Path(tmp).unlink(missing_ok=True)
        self.files = {}
        if self.made is not None:
            try:
                self.made.rmdir()            # only when empty: never anything else
            except OSError:
                pass


#: the tag every GeoTIFF clts writes carries (as ``clts.io.MARKER`` for NetCDF / Zarr); an
#: existing output without it is never replaced
_MARKER = "clts_output"


def _written_by_clts(path) -> bool:
    rio = _rasterio()
    try:
        with rio.open(path) as ds:
            return _MARKER in ds.tags()
    except rio.errors.RasterioError:
        return False


def _nodata_for(dt):
    """The outputs' nodata: NaN for floats (break dates, magnitudes), -1 for integers (valid
    counts and status codes, never negative): none collides with a result, whatever the
    input's nodata (0 in many stacks, a valid status and count)."""
    return float("nan") if np.dtype(dt).kind == "f" else -1


_OUT_TYPES = [("break_date", "float32"), ("magnitude", "float32"), ("valid_count", "int32"),
              ("status", "int16")]


def open_run(fn, inputs, out_dir, dates, block_rows, date_format, overwrite, kwargs,
              refused, outputs):
    """The checks of a GeoTIFF run of ``fn`` (its name in messages), its output folder's
    :class:`_Writer` (checked before anything is read) and the opened stack."""
    if isinstance(block_rows, bool) or not isinstance(block_rows, int) or block_rows < 1:
        raise ValueError(f"block_rows must be a positive integer, got {block_rows!r}")
    date_values(np.array([], "datetime64[D]"), date_format)        # checks the format
    for bad in refused:
        if bad in kwargs:
            raise TypeError(f"{fn} does not take {bad}= (the stack gives it)")
    if not isinstance(overwrite, (bool, np.bool_)):
        raise TypeError(f"overwrite must be True or False, got {overwrite!r}")
    files = _sources(inputs)
    w = _Writer(out_dir, outputs, overwrite=overwrite, inputs=_input_paths(inputs, files, dates))
    return w, open_stack(files, dates)


def probe_arguments(call) -> None:
    """The arguments checked before a file is made: ``call`` is a one-pixel call on the stack's
    dates. Its warnings (the design's, the arguments') are those of the blocks' calls, raised at
    the same line of the user's (:func:`clts.errors.warn_caller`), so Python's default filter
    shows each once. No ``warnings.catch_warnings`` to hide them: it changes the filters of the
    whole process, and another thread's run (or the user's own warnings) raced with it."""
    call()


def run_blocks(fn, w, st, block_rows, progress, one_block) -> dict:
    """``one_block(r0, y)`` on each block of ``block_rows`` rows of stack ``st`` (each band's
    nodata as NaN), writing through ``w``; the files renamed into place at the end, removed on
    any failure."""
    try:
        w.open((st.crs, st.transform, st.width, st.height))
        rng = range(0, st.height, block_rows)
        if progress:
            from .runtime import progress as bar
            rng = bar(rng, desc=fn)
        for r0 in rng:
            one_block(r0, st.read_masked(r0, min(st.height, r0 + block_rows)))
        return w.commit()
    except BaseException:
        w.abort()
        raise


def bfast_monitor_geotiff(inputs, start_monitor, out_dir, *, dates=None, block_rows=256,
                          date_format="decimal_year", progress=True, overwrite=False,
                          **kwargs) -> dict:
    """BFAST-Monitor on a GeoTIFF stack, in blocks of ``block_rows`` rows (a stack larger than
    memory streams), results as GeoTIFFs in ``out_dir`` (see the module docstring). ``kwargs``
    go to :func:`clts.bfast_monitor` (``freq`` defaults as there: 365 days, R's bfastts daily
    series, as the NetCDF and Zarr paths of the command line). Pixels without a break
    or not tested have the nodata value in ``break_date`` (``status`` says which). Results of
    an earlier run in ``out_dir`` are replaced only with ``overwrite=True``; the output folder
    must not be, lie inside or hold an input (``clts.io.InputError``, a ValueError). Returns
    {name: path}."""
    from .bfast.api import bfast_monitor, check_arguments
    w, st = open_run("bfast_monitor_geotiff", inputs, out_dir, dates, block_rows, date_format,
                      overwrite, kwargs, ("dates", "time_axis", "detailed", "nodata"),
                      _OUT_TYPES)
    start = np.datetime64(start_monitor, "D") if not isinstance(start_monitor, np.datetime64) \
        else start_monitor
    kw = dict(kwargs)
    if st.dtype.kind in "iu":          # as bfast_monitor computes integers (their nodata masked)
        kw.setdefault("dtype", np.float32)
    check_arguments(st.dates, start, **kw)       # before a file is made

    def one_block(r0, y):
        r = bfast_monitor(y, st.dates, start, progress=False, **kw)
        w.write("break_date", r0, date_values(r.break_dates, date_format))
        w.write("magnitude", r0, np.where(r.status == 0, r.magnitudes, np.nan))
        w.write("valid_count", r0, r.valids)
        w.write("status", r0, r.status)
    return run_blocks("bfast_monitor_geotiff", w, st, block_rows, progress, one_block)


def write_bfast(ds, out_dir, *, like, date_format="decimal_year", overwrite=False) -> dict:
    """Write a ``clts.xarray.bfast_monitor`` Dataset (dims y, x) as GeoTIFFs on the grid of
    ``like`` (a :class:`Stack`, or a DataArray from :meth:`Stack.to_dataarray` / rioxarray),
    by the rules of :func:`bfast_monitor_geotiff` (a Stack's files are the inputs the folder
    must not touch; ``overwrite`` to replace an earlier run's results). Returns {name: path}."""
    crs, tr = grid_of(like, ds["breaks"])
    h, wd = ds["breaks"].shape
    w = _Writer(out_dir, _OUT_TYPES, overwrite=overwrite,
                inputs=like.files if isinstance(like, Stack) else ())
    try:
        w.open((crs, tr, wd, h))
        st = ds["status"].values
        w.write("break_date", 0, date_values(ds["break_dates"].values, date_format))
        w.write("magnitude", 0, np.where(st == 0, ds["magnitudes"].values, np.nan))
        w.write("valid_count", 0, ds["valids"].values)
        w.write("status", 0, st)
        return w.commit()
    except BaseException:
        w.abort()
        raise


def cli_bfast(args) -> int:
    """``clts bfast stack/*.tif --dates dates.csv --start 2020-01-01 -o out/``: the CLI's
    GeoTIFF path (``args`` from ``clts.cli``)."""
    if args.plot:
        raise ValueError("--plot is not available for GeoTIFF stacks (open the GeoTIFFs)")
    inputs = [args.input, *args.more_inputs]
    kw = dict(k=args.k, hfrac=args.hfrac, level=args.level, history=args.history,
              device=args.device, type=getattr(args, "type", "OLS-MOSUM"))
    if args.freq is not None:
        kw["freq"] = args.freq
    paths = bfast_monitor_geotiff(inputs if len(inputs) > 1 else inputs[0], args.start_monitor,
                                  args.output, dates=args.dates, block_rows=args.block_rows,
                                  date_format=args.date_format, overwrite=args.overwrite,
                                  progress=not args.no_progress, **kw)
    print(f"wrote {', '.join(str(p) for p in paths.values())}")
    return 0


# ------------------------------------------------------------- break maps of bfast_breaks

#: the GeoTIFFs of :func:`bfast_breaks_geotiff` / :func:`write_breaks`
#: (``clts.bfast.maps.MAP_FIELDS``; dates as decimal years or days of the year)
BREAK_OUTPUTS = [("n_breaks", "int16"), ("first_break_date", "float32"),
                 ("largest_break_date", "float32"), ("largest_magnitude", "float32"),
                 ("status", "int16")]


def _write_maps(w, r0, maps, date_format):
    for name, _ in BREAK_OUTPUTS:
        v = np.asarray(maps[name])
        w.write(name, r0, date_values(v, date_format) if name.endswith("_date") else v)


def bfast_breaks_geotiff(inputs, out_dir, *, dates=None, block_rows=256,
                         date_format="decimal_year", progress=True, overwrite=False,
                         **kwargs) -> dict:
    """:func:`clts.bfast_breaks` on a GeoTIFF stack, in blocks of ``block_rows`` rows, its
    per-pixel maps (``clts.bfast.maps.break_maps``) as GeoTIFFs in ``out_dir``:
    ``n_breaks.tif`` (-1 not analysed), ``first_break_date.tif`` and
    ``largest_break_date.tif`` (decimal year or day of year; nodata NaN: no break),
    ``largest_magnitude.tif`` (the signed magnitude of the break of the largest absolute
    magnitude) and ``status.tif``, with the input's CRS and transform, by the rules of
    :func:`bfast_monitor_geotiff` (the stack, the nodata values, safe output, ``overwrite``).
    ``kwargs`` go to :func:`clts.bfast_breaks` (``order``, ``freq``, ``h``, ``breaks``,
    ``criterion``, ...). Returns {name: path}."""
    from .bfast.breaks_api import bfast_breaks
    from .bfast.maps import break_maps
    w, st = open_run("bfast_breaks_geotiff", inputs, out_dir, dates, block_rows, date_format,
                      overwrite, kwargs, ("dates", "time_axis", "magnitudes", "confint"),
                      BREAK_OUTPUTS)
    probe_arguments(lambda: bfast_breaks(np.zeros((st.dates.size, 1)), st.dates,
                                         progress=False, magnitudes=False, **kwargs))

    def one_block(r0, y):
        r = bfast_breaks(y, st.dates, progress=False, **kwargs)
        _write_maps(w, r0, break_maps(r.n_breaks, r.break_dates, r.magnitudes, r.status),
                    date_format)
    return run_blocks("bfast_breaks_geotiff", w, st, block_rows, progress, one_block)


def write_breaks(ds, out_dir, *, like, date_format="decimal_year", overwrite=False) -> dict:
    """Write a ``clts.xarray.break_maps`` Dataset (dims y, x; or a ``clts.xarray.bfast_breaks``
    Dataset, whose maps are made first) as the GeoTIFFs of :func:`bfast_breaks_geotiff` on the
    grid of ``like`` (as :func:`write_bfast`). Returns {name: path}."""
    if "first_break_date" not in ds:
        from .xarray import break_maps
        ds = break_maps(ds)
    if ds["n_breaks"].ndim != 2:
        raise ValueError(f"the maps must be 2-D (y, x), got dims {ds['n_breaks'].dims}")
    crs, tr = grid_of(like, ds["n_breaks"])
    h, wd = ds["n_breaks"].shape
    w = _Writer(out_dir, BREAK_OUTPUTS, overwrite=overwrite,
                inputs=like.files if isinstance(like, Stack) else ())
    try:
        w.open((crs, tr, wd, h))
        _write_maps(w, 0, {name: ds[name].values for name, _ in BREAK_OUTPUTS}, date_format)
        return w.commit()
    except BaseException:
        w.abort()
        raise
