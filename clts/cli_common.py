"""What the file subcommands of ``clts`` share (``clts.cli``, ``clts.cli_bfast``): the input
opened after the output was checked, the safe write, the options of a file and of a GeoTIFF
stack, the functions behind the subcommands and their defaults. Light imports only (``clts
--help`` stays fast)."""
from __future__ import annotations

import inspect
import os
import sys

#: --freq's default for a numeric time axis, per --time-unit (decimal years without one)
FREQ_OF_UNIT = {"year": 1.0, "month": 12.0, "day": 365.0, None: None}


def open_input(args):
    """The input variable (values equal to --nodata masked), after the output was checked
    (never the input, never an existing file without --overwrite); a numpy-backed batch (CSV,
    .npy) is cut into Dask chunks of whole series so that it is computed chunk by chunk with a
    progress bar like NetCDF / Zarr (without Dask, an optional extra: computed whole)."""
    from .io import InputError, check_output, have_dask, read
    check_output(args.output, [args.input], args.overwrite)
    if args.plot and any(os.path.realpath(args.plot) == os.path.realpath(p)
                         for p in (args.input, args.output)):
        raise InputError(f"--plot {args.plot}: that is the input or the output")
    if args.plot:
        check_plot_path(args.plot, args.overwrite)
    da = read(args.input, args.var, args.dim, getattr(args, "chunks", None))
    if args.nodata is not None:
        from .xarray import mask_values
        da = mask_values(da, [args.nodata])
    if args.time_unit is not None and args.dim in da.coords:
        from .timeaxis import kind
        if kind(da[args.dim].values, args.dim) != "number":
            raise ValueError(f"--time-unit is for a time axis of numbers; {args.dim!r} holds "
                             "dates")
    if da.chunks is None and da.ndim > 1 and args.dim in da.dims and have_dask():
        da = da.chunk({d: (-1 if d == args.dim else "auto") for d in da.dims})
    return da


def require_dates(args, da, what) -> None:
    """The dates an algorithm of BFAST needs: a ValueError naming the fix when the input has
    no time coordinate (a .npy file holds none)."""
    if args.dim not in da.coords:
        raise ValueError(f"clts {what} needs the dates: the input has no {args.dim!r} "
                         "coordinate (a .npy holds none: use a CSV, NetCDF or Zarr file)")


def write_output(args, ds):
    """``ds`` to --output, safely (see clts.io.write)."""
    from .io import write
    write(ds, args.output, progress=not args.no_progress, overwrite=args.overwrite,
          inputs=[args.input])
    print(f"wrote {args.output}: {', '.join(map(str, ds.data_vars))}")


def check_plot_path(path, overwrite=False) -> None:
    """--plot checked before anything is computed or written: matplotlib there, a format it
    writes, a folder that exists and takes files, no folder of that name, an existing file
    only with --overwrite (an InputError, status 2, otherwise)."""
    from .io import InputError
    if os.path.isdir(path):
        raise InputError(f"--plot {path}: that is a folder; give a file name (e.g. plot.png)")
    if os.path.lexists(path) and not overwrite:
        raise InputError(f"--plot {path} exists; give --overwrite to replace it")
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError("--plot needs matplotlib: pip install matplotlib") from None
    ext = os.path.splitext(str(path))[1].lstrip(".").lower()
    formats = FigureCanvasAgg(Figure()).get_supported_filetypes()
    if ext not in formats:
        what = f".{ext} files" if ext else "files without an extension"
        raise InputError(f"--plot {path}: matplotlib does not write {what}; use one of "
                         f"{', '.join(sorted(formats))}")
    folder = os.path.dirname(os.path.abspath(str(path)))
    if not os.path.isdir(folder):
        raise InputError(f"--plot {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise InputError(f"--plot {path}: the folder {folder} is not writable")


def save_plot(fig, path):
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


def is_geotiff_stack(path) -> bool:
    """A .tif / .tiff file, or a folder (not a Zarr store) of them."""
    p = str(path).rstrip("/").lower()
    if p.endswith((".tif", ".tiff")):
        return True
    if os.path.isdir(path) and not p.endswith(".zarr"):
        import glob
        return bool(glob.glob(os.path.join(glob.escape(str(path)), "*.tif*")))
    return False


# The functions behind the algorithm subcommands: every option named like one of their
# parameters takes its default from the function's signature (one default, one place;
# tests/test_cli.py compares them). Module paths: at package level ``clts.stl`` is the function.
FUNCTIONS = {"stl": "clts.stl.api:stl", "bfast": "clts.bfast.api:bfast_monitor",
             "mp": "clts.mp.api:matrix_profile", "breaks": "clts.bfast.breaks_api:bfast_breaks",
             "bfast-decompose": "clts.bfast.decompose:bfast_decompose",
             "bfast01": "clts.bfast.bfast01:bfast01"}


def function_of(cmd):
    """The public function behind subcommand ``cmd`` (the matrix profile's is a callable
    object: its ``__call__``)."""
    import importlib
    mod, name = FUNCTIONS[cmd].split(":")
    fn = getattr(importlib.import_module(mod), name)
    return fn if inspect.isfunction(fn) else fn.__call__


def defaults_of(cmd) -> dict:
    """``{parameter: default}`` from the signature of the function behind ``cmd``."""
    return {n: p.default for n, p in inspect.signature(function_of(cmd)).parameters.items()
            if p.default is not inspect.Parameter.empty}


def stack_args(p):
    """The options of a GeoTIFF stack input (``bfast``, ``breaks``)."""
    p.add_argument("more_inputs", nargs="*", help="more GeoTIFFs of the stack (one per date)")
    p.add_argument("--dates", default=None, help="GeoTIFF stacks: CSV of the dates (a 'date' "
                   "column, one row per file / band); default: from the file names")
    p.add_argument("--date-format", choices=("decimal_year", "doy"), default="decimal_year",
                   help="GeoTIFF stacks: break dates as decimal years or days of the year")
    p.add_argument("--block-rows", type=int, default=256, help="GeoTIFF stacks: rows a block")


def file_args(p, var_required=False):
    p.add_argument("input", help="NetCDF (.nc), Zarr (.zarr), CSV (.csv: first column time, one "
                   "series per column) or .npy ([time] or [series, time])")
    p.add_argument("--var", default=None, help="variable (NetCDF / Zarr) or column (CSV); "
                   "needed when the file holds several")
    p.add_argument("--dim", default="time", help="name of the time dimension (default time)")
    p.add_argument("-o", "--output", required=True, help="result file: .zarr or .nc")
    p.add_argument("--plot", default=None, metavar="FILE.png", help="also draw the result")
    p.add_argument("--device", "-d", default=None, help="index or name substring (clts devices)")
    p.add_argument("--chunks", default=None, metavar="DIM=N,...",
                   help="Dask chunks for NetCDF / Zarr inputs (default: the file's own)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.add_argument("--overwrite", action="store_true", help="replace an existing output (a "
                   "file, or a store or GeoTIFFs clts wrote; never an input or another "
                   "directory)")
    p.add_argument("--nodata", type=float, default=None, metavar="VALUE",
                   help="input value that marks a missing value (besides NaN and the file's "
                   "_FillValue)")
    p.add_argument("--time-unit", default=None, choices=("step", "day", "month", "year"),
                   help="what a numeric time axis counts (slope units; BFAST's default --freq: "
                   "year 1, month 12, day 365, step: give --freq)")


def user_error(cmd, fn, args) -> int:
    """``fn(args)``; a ValueError / TypeError (bad input or options) is a message, exit 2."""
    try:
        return fn(args)
    except (ValueError, TypeError) as exc:
        print(f"clts {cmd}: {exc}", file=sys.stderr)
        return 2
