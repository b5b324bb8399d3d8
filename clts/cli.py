"""The ``clts`` command: ``clts devices``, ``clts profile``, ``clts warmup``, ``clts demo``, and
the algorithms
on files: ``clts stl``, ``clts bfast``, ``clts breaks``, ``clts mp`` (NetCDF / Zarr / CSV /
.npy in, Zarr or NetCDF out, ``--plot FILE.png``)."""
from __future__ import annotations

import argparse
import inspect
import logging
import os
import sys

import numpy as np


def _gb(n: int) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}".replace(".0 ", " ")
    return f"{n} B"


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    line = lambda r: "  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip()
    return "\n".join([line(header), line(["-" * w for w in widths])] + [line(r) for r in rows])


def cmd_devices(args) -> int:
    from .runtime import devices, profiles
    infos = devices.discover(refresh=args.refresh)
    if not infos:
        print("no OpenCL platform found; on Debian: apt-get install pocl-opencl-icd")
        return 1
    default = devices.usable()[0].index if devices.usable() else None
    rows = []
    for i in infos:
        prof = "-"
        if i.ok:
            logging.getLogger("clts.profiles").disabled = True
            try:
                p = profiles.effective_profile(i)
                names = [f.name for f in p.files]
                prof = names[-1] + ("" if p.level == 3 else " (no tuned profile)")
            except Exception as exc:  # show, don't crash the listing
                prof = f"error: {exc}"
            finally:
                logging.getLogger("clts.profiles").disabled = False
        status = ("ok" + (" (default)" if i.index == default else "")) if i.ok else \
            f"UNUSABLE: {i.reason}"
        rows.append([str(i.index), i.platform, i.name, i.type, i.driver,
                     "yes" if i.fp64 else "no", _gb(i.local_mem),
                     _gb(i.max_alloc), _gb(i.global_mem), status, prof])
    print(_table(rows, ["#", "platform", "device", "type", "driver", "fp64", "local",
                        "max alloc", "global", "status", "profile"]))
    return 0


def cmd_profile(args) -> int:
    from .runtime import get_device
    dev = get_device(args.device)
    prof = dev.profile
    print(f"device: {dev.info.index}: {dev} [{dev.slug}, fingerprint {dev.fingerprint}]")
    print("files:  " + ", ".join(str(f) for f in prof.files))
    flat = prof.flat()
    if not flat:
        print("(no tunable values)")
        return 0
    rows = [[k, repr(v), prof.source_of(k)] for k, v in flat.items()]
    print(_table(rows, ["key", "value", "from"]))
    return 0


def cmd_warmup(args) -> int:
    from .warmup import warmup
    warmup(args.device, threads=args.threads)
    return 0


def cmd_demo(args) -> int:
    from .demo import run_demo
    return run_demo(args.device, quick=args.quick, out_dir=args.out_dir)


def _open(args):
    """The input variable (values equal to --nodata masked), after the output was checked
    (never the input, never an existing file without --overwrite); a numpy-backed batch (CSV,
    .npy) is cut into Dask chunks of whole series so that it is computed chunk by chunk with a
    progress bar like NetCDF / Zarr (without Dask, an optional extra: computed whole)."""
    from .io import InputError, check_output, have_dask, read
    check_output(args.output, [args.input], args.overwrite)
    if args.plot and any(os.path.realpath(args.plot) == os.path.realpath(p)
                         for p in (args.input, args.output)):
        raise InputError(f"--plot {args.plot}: that is the input or the output")
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


def _write(args, ds):
    """``ds`` to --output, safely (see clts.io.write)."""
    from .io import write
    write(ds, args.output, progress=not args.no_progress, overwrite=args.overwrite,
          inputs=[args.input])
    print(f"wrote {args.output}: {', '.join(map(str, ds.data_vars))}")


def _series0(da, dim):
    """The first series of ``da`` with the most valid values as a 1-D DataArray, for plots
    (the count per series is computed chunk by chunk: a large input streams)."""
    other = [d for d in da.dims if d != dim]
    if not other:
        return da, ""
    valid = da.notnull().sum(dim).transpose(*other).values
    pos = dict(zip(other, np.unravel_index(int(np.argmax(valid)), valid.shape)))
    one = da.isel({d: int(i) for d, i in pos.items()})
    where = ", ".join(f"{d}={one[d].values}" if d in one.coords else f"{d}={i}"
                      for d, i in pos.items())
    return one, where


def _save_plot(fig, path):
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


def cmd_stl(args) -> int:
    import clts.xarray as cx
    da = _open(args)
    kw = dict(seasonal=args.seasonal, robust=args.robust, device=args.device)
    if args.trend is not None:
        kw["trend"] = args.trend
    ds = cx.stl(da, args.period, dim=args.dim, **kw)
    ds["trend_slope"] = cx.trend_slope(ds, dim=args.dim, time_unit=args.time_unit)
    _write(args, ds)
    if args.plot:
        import clts
        one, where = _series0(da, args.dim)
        r = clts.stl(one.to_series(), args.period, device=args.device, progress=False,
                     **{k: v for k, v in kw.items() if k != "device"})
        _save_plot(r.plot(title=f"STL of {da.name or 'the series'} {where}".strip()), args.plot)
    return 0


#: --freq's default for a numeric time axis, per --time-unit (decimal years without one)
_FREQ_OF_UNIT = {"year": 1.0, "month": 12.0, "day": 365.0, None: None}


def _bfast_time(args, da):
    """--start-monitor as the time axis holds it (a number, a datetime64 or a cftime date of
    its calendar) and --freq or its default (a year of the axis's calendar for dates; for
    numbers, from --time-unit)."""
    from .timeaxis import kind, parse_date
    start = args.start_monitor
    if args.dim not in da.coords:
        return start, args.freq
    t = da[args.dim].values
    k = kind(t, args.dim)
    if k == "number":
        try:
            start = float(start)
        except ValueError:
            raise ValueError(f"--start-monitor {start!r}: the time axis holds numbers, give "
                             "a number") from None
        if args.freq is None and args.time_unit == "step":
            raise ValueError("--time-unit step: give --freq (time steps per season, e.g. 12 "
                             "for monthly values)")
        return start, args.freq if args.freq is not None else _FREQ_OF_UNIT[args.time_unit]
    try:
        start = parse_date(start, t)
    except ValueError as exc:
        raise ValueError(f"--start-monitor {exc}") from None
    return start, args.freq        # None: clts.bfast_monitor's year of the axis's calendar


def _bfast_history(args, da):
    """--history: all / ROC / BP, else a start as the time axis holds it (a number for a
    numeric axis: "2004.5" was read as a date string)."""
    from .bfast.common import HISTORIES
    from .timeaxis import kind
    h = args.history
    if h in HISTORIES or args.dim not in da.coords or kind(da[args.dim].values, args.dim) \
            != "number":
        return h
    try:
        return float(h)
    except ValueError:
        raise ValueError(f"--history {h!r}: one of {', '.join(HISTORIES)} or, the time axis "
                         "holding numbers, a number") from None


def _is_geotiff_stack(path) -> bool:
    """A .tif / .tiff file, or a folder (not a Zarr store) of them."""
    p = str(path).rstrip("/").lower()
    if p.endswith((".tif", ".tiff")):
        return True
    if os.path.isdir(path) and not p.endswith(".zarr"):
        import glob
        return bool(glob.glob(os.path.join(glob.escape(str(path)), "*.tif*")))
    return False


def cmd_bfast(args) -> int:
    import clts.xarray as cx
    from types import SimpleNamespace
    if _is_geotiff_stack(args.input):                      # GeoTIFF stack -> GeoTIFFs
        from .geotiff import cli_bfast
        return cli_bfast(args)
    da = _open(args)
    start, freq = _bfast_time(args, da)
    kw = dict(k=args.k, freq=freq, hfrac=args.hfrac, level=args.level, type=args.type,
              history=_bfast_history(args, da), device=args.device)
    ds = cx.bfast_monitor(da, start, dim=args.dim, **kw)
    _write(args, ds)
    if args.plot:
        import clts
        if ds["breaks"].ndim == 2:
            from .io import reopen
            from .plots import plot_bfast
            out = reopen(args.output)           # the maps as written, not computed again
            res = SimpleNamespace(breaks=out["breaks"], break_dates=out["break_dates"],
                                  magnitudes=out["magnitudes"])   # with their coordinates
            _save_plot(plot_bfast(res), args.plot)
        else:
            one, where = _series0(da, args.dim)
            r = clts.bfast_monitor(one.values, one[args.dim].values, start, detailed=True,
                                   progress=False, **kw)
            _save_plot(r.plot((), title=f"BFAST-Monitor of {da.name or 'the series'} {where}"
                              .strip()), args.plot)
    return 0


def _breaks_kw(args, da=None) -> dict:
    """The ``clts.bfast_breaks`` arguments of ``clts breaks``: --freq as given, else from
    --time-unit for a numeric time axis (1 for decimal years), else the function's."""
    from .timeaxis import kind
    freq = args.freq
    if not getattr(args, "freq_given", False) and args.time_unit is not None and da is not None \
            and kind(da[args.dim].values, args.dim) == "number":
        if args.time_unit == "step":
            raise ValueError("--time-unit step: give --freq (time steps per season)")
        freq = _FREQ_OF_UNIT[args.time_unit]
    return dict(order=args.order, freq=freq, trend=args.trend, h=args.h, breaks=args.breaks,
                criterion=args.criterion, device=args.device)


def _breaks(args) -> int:
    import warnings
    import clts
    import clts.xarray as cx
    if _is_geotiff_stack(args.input):                      # GeoTIFF stack -> GeoTIFFs
        from .geotiff import cli_breaks
        return cli_breaks(args, _breaks_kw(args))
    if args.more_inputs:
        raise ValueError("several inputs are for GeoTIFF stacks (one file per date)")
    da = _open(args)
    if args.dim not in da.coords:
        raise ValueError(f"clts breaks needs the dates: the input has no {args.dim!r} "
                         "coordinate (a .npy holds none: use a CSV, NetCDF or Zarr file)")
    if args.plot and da.ndim != 3:
        raise ValueError(f"--plot draws the maps of a 2-D scene; {da.name} has dims {da.dims}")
    kw = _breaks_kw(args, da)
    with warnings.catch_warnings():          # the arguments, before anything is written
        warnings.simplefilter("ignore", UserWarning)
        clts.bfast_breaks(np.zeros((da.sizes[args.dim], 1)), da[args.dim].values,
                          magnitudes=False, progress=False, **kw)
    ds = cx.bfast_breaks(da, dim=args.dim, **kw)
    out = cx.break_maps(ds)
    for v in ("break_dates", "magnitudes", "nobs"):          # every break, for the record
        out[v] = ds[v]
    _write(args, out)
    if args.plot:
        from .io import reopen
        from .plots import plot_breaks_maps
        _save_plot(plot_breaks_maps(reopen(args.output)), args.plot)   # the maps as written
    return 0


def cmd_mp(args) -> int:
    import clts.xarray as cx
    da = _open(args)
    kw = dict(device=args.device)
    if args.exclusion_zone is not None:
        kw["exclusion_zone"] = args.exclusion_zone
    ds = cx.matrix_profile(da, args.m, dim=args.dim, **kw)
    _write(args, ds)
    if args.plot:
        import clts
        one, where = _series0(da, args.dim)
        s = one.to_series() if args.dim in one.coords else one.values
        r = clts.matrix_profile(s, args.m, progress=False, **kw)
        _save_plot(r.plot(max_motifs=args.motifs, title=f"matrix profile of "
                          f"{da.name or 'the series'} (m={args.m}) {where}".strip()), args.plot)
    return 0


# The functions behind the algorithm subcommands: every option named like one of their
# parameters takes its default from the function's signature (one default, one place;
# tests/test_cli.py compares them). Module paths: at package level ``clts.stl`` is the function.
FUNCTIONS = {"stl": "clts.stl.api:stl", "bfast": "clts.bfast.api:bfast_monitor",
             "mp": "clts.mp.api:matrix_profile", "breaks": "clts.bfast.breaks_api:bfast_breaks"}


def function_of(cmd):
    """The public function behind subcommand ``cmd`` (the matrix profile's is a callable
    object: its ``__call__``)."""
    import importlib
    mod, name = FUNCTIONS[cmd].split(":")
    fn = getattr(importlib.import_module(mod), name)
    return fn if inspect.isfunction(fn) else fn.__call__


def _defaults(cmd) -> dict:
    """``{parameter: default}`` from the signature of the function behind ``cmd``."""
    return {n: p.default for n, p in inspect.signature(function_of(cmd)).parameters.items()
            if p.default is not inspect.Parameter.empty}


def _stack_args(p):
    """The options of a GeoTIFF stack input (``bfast``, ``breaks``)."""
    p.add_argument("more_inputs", nargs="*", help="more GeoTIFFs of the stack (one per date)")
    p.add_argument("--dates", default=None, help="GeoTIFF stacks: CSV of the dates (a 'date' "
                   "column, one row per file / band); default: from the file names")
    p.add_argument("--date-format", choices=("decimal_year", "doy"), default="decimal_year",
                   help="GeoTIFF stacks: break dates as decimal years or days of the year")
    p.add_argument("--block-rows", type=int, default=256, help="GeoTIFF stacks: rows a block")


def _file_args(p, var_required=False):
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


# ------------------------------------------------------- MSTL and trend tests (seasonal block)

def _user_error(cmd, fn, args) -> int:
    """``fn(args)``; a ValueError / TypeError (bad input or options) is a message, exit 2."""
    try:
        return fn(args)
    except (ValueError, TypeError) as exc:
        print(f"clts {cmd}: {exc}", file=sys.stderr)
        return 2


def _mstl(args) -> int:
    import clts.xarray as cx
    da = _open(args)
    kw = dict(device=args.device, iterate=args.iterate)
    if args.windows:
        kw["windows"] = [int(w) for w in args.windows.split(",")]
    if args.robust:
        kw["stl_kwargs"] = dict(robust=True)
    periods = [int(p) for p in args.periods.split(",")]
    ds = cx.mstl(da, periods, dim=args.dim, **kw)
    _write(args, ds)
    if args.plot:
        import clts
        one, where = _series0(da, args.dim)
        r = clts.mstl(one.to_series(), periods, progress=False,
                      **{k: v for k, v in kw.items()})
        _save_plot(r.plot(title=f"MSTL of {da.name or 'the series'} {where}".strip()), args.plot)
    return 0


def cmd_mstl(args) -> int:
    return _user_error("mstl", _mstl, args)


def _trend(args) -> int:
    import clts.xarray as cx
    da = _open(args)
    kw = dict(variant=args.variant, alpha=args.alpha, conf_level=args.conf_level,
              device=args.device)
    if args.period is not None:
        kw["period"] = args.period
    if args.stl_period is not None:        # the test on STL's trend instead of the raw series
        da = cx.stl(da, args.stl_period, dim=args.dim, device=args.device)["trend"]
    ds = cx.trend_test(da, dim=args.dim, **kw)
    _write(args, ds)
    n_sig = int(ds["h"].sum())
    print(f"{n_sig} of {ds['h'].size} series with a significant trend")
    if args.plot:
        import clts
        other = [d for d in da.dims if d != args.dim]
        r = clts.trend_test(da.transpose(*other, args.dim).values, **kw)
        _save_plot(r.plot(title=f"Mann-Kendall ({args.variant}) and Sen's slope of "
                                f"{da.name or 'the series'}"), args.plot)
    return 0


def cmd_trend(args) -> int:
    return _user_error("trend", _trend, args)


def add_seasonal_commands(sub) -> None:
    """The ``mstl`` and ``trend`` subcommands."""
    p = sub.add_parser("mstl", help="MSTL decomposition (several seasonal periods) of every "
                       "series of a file")
    _file_args(p)
    p.add_argument("--periods", "-p", required=True, help="comma-separated periods, e.g. 24,168")
    p.add_argument("--windows", default=None, help="comma-separated seasonal windows (odd; "
                   "default 11, 15, ...)")
    p.add_argument("--iterate", type=int, default=2, help="rounds over the periods (2)")
    p.add_argument("--robust", action="store_true", help="robust STL fits")
    p.set_defaults(fn=cmd_mstl)
    p = sub.add_parser("trend", help="Mann-Kendall trend test and Sen's slope of every series "
                       "of a file (a trend map for a cube)")
    _file_args(p)
    p.add_argument("--variant", default="original",
                   choices=("original", "hamed_rao", "yue_wang", "seasonal", "pre_whitening",
                            "trend_free_pre_whitening", "correlated_seasonal"))
    p.add_argument("--period", type=int, default=None,
                   help="seasons per cycle (seasonal, correlated_seasonal)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level")
    p.add_argument("--conf-level", type=float, default=0.95, help="Sen's slope interval level")
    p.add_argument("--stl-period", type=int, default=None,
                   help="test STL's trend (this period) instead of the raw series")
    p.set_defaults(fn=cmd_trend)


class _Given(argparse.Action):
    """Stores the value and notes that it was given (``<dest>_given``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        setattr(namespace, f"{self.dest}_given", True)


def add_breaks_command(sub) -> None:
    """The ``breaks`` subcommand: clts.bfast_breaks and its per-pixel maps."""
    p = sub.add_parser("breaks", help="Bai-Perron multiple breaks (R's breakpoints / "
                       "bfastlite) on every pixel of a file or of a GeoTIFF stack, as maps",
                       description="Writes n_breaks, first_break_date, largest_break_date, "
                       "largest_magnitude and status per pixel (and, for NetCDF / Zarr, every "
                       "break's date and magnitude along 'break' and the valid values nobs); "
                       "a GeoTIFF stack gives one GeoTIFF per map in the folder -o.")
    _file_args(p)
    d = _defaults("breaks")
    _stack_args(p)
    p.add_argument("--order", type=int, default=d["order"],
                   help="harmonic terms of the season (0: none)")
    p.add_argument("--freq", type=float, default=d["freq"], action=_Given,
                   help="season length in time units (default 365.0: days for dates; for a "
                   "numeric axis per --time-unit: year 1, month 12, day 365)")
    p.add_argument("--no-trend", dest="trend", action="store_false", default=d["trend"],
                   help="no linear trend term (R's response ~ harmon)")
    p.add_argument("--h", type=float, default=d["h"], help="minimal segment: a fraction of "
                   "each pixel's valid values, or a count (>= 1)")
    p.add_argument("--breaks", type=int, default=d["breaks"], help="most breaks")
    p.add_argument("--criterion", choices=("BIC", "LWZ"), default=d["criterion"],
                   help="chooses the number of breaks")
    p.set_defaults(fn=lambda a: _user_error("breaks", _breaks, a))


class _HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written, without RST markup (````clts````); every option's default
    shown unless its help already says it."""

    def _get_help_string(self, action):
        h = action.help or ""
        if "%(default)" not in h and "default" not in h and action.default not in (
                None, False, argparse.SUPPRESS) and action.option_strings:
            h += " (default: %(default)s)"
        return h


def plain(text: str) -> str:
    """``text`` without RST inline literals and roles, for terminal help."""
    import re
    return re.sub(r":\w+:`([^`]*)`", r"\1", text).replace("``", "")


def build_parser() -> argparse.ArgumentParser:
    """The ``clts`` argument parser (algorithm options' defaults from the functions)."""
    from ._version import __version__
    ap = argparse.ArgumentParser(prog="clts", description=plain(__doc__),
                                 formatter_class=_HelpFormatter)
    ap.add_argument("--version", action="version", version=f"clts {__version__}")
    ap.add_argument("-v", "--verbose", action="store_true", help="log probing and profile lookup")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub_parser = sub.add_parser
    sub.add_parser = lambda *a, **k: sub_parser(*a, formatter_class=_HelpFormatter, **k)
    p = sub.add_parser("devices", help="list every OpenCL device, its status and its profile")
    p.add_argument("--refresh", action="store_true", help="probe again instead of using the cache")
    p.set_defaults(fn=cmd_devices)
    p = sub.add_parser("profile", help="print a device's effective profile and each value's file")
    p.add_argument("--device", "-d", default=None, help="index or name substring (clts devices)")
    p.set_defaults(fn=cmd_profile)
    p = sub.add_parser("warmup", help="build the kernels of the common calls ahead (in "
                       "parallel; kept in the driver's disk cache for later processes)")
    p.add_argument("--device", "-d", default=None, help="index or name substring (clts devices)")
    p.add_argument("--threads", type=int, default=None,
                   help="threads building at once (default: the CPU count; 1 on NVIDIA)")
    p.set_defaults(fn=cmd_warmup)
    p = sub.add_parser("demo", help="STL and BFAST-Monitor of a synthetic NDVI cube and the "
                       "matrix profile of the sunspot record on a device, with figures")
    p.add_argument("--device", "-d", default=None)
    p.add_argument("--quick", action="store_true", help="smaller problem sizes")
    p.add_argument("--out-dir", default="clts-demo",
                   help="where the figures go (default ./clts-demo, made if missing; a clone's "
                   ".gitignore keeps it out of git)")
    p.set_defaults(fn=cmd_demo)
    p = sub.add_parser("stl", help="STL decomposition of every series of a file")
    _file_args(p)
    d = _defaults("stl")
    p.add_argument("--period", "-p", type=int, required=True, help="values per seasonal cycle")
    p.add_argument("--seasonal", type=int, default=d["seasonal"],
                   help="seasonal smoother length (odd)")
    p.add_argument("--trend", type=int, default=d["trend"], help="trend smoother length (odd; "
                   "default: the next odd integer of 1.5 period / (1 - 1.5 / seasonal))")
    p.add_argument("--robust", action="store_true", default=d["robust"],
                   help="robustness iterations")
    p.set_defaults(fn=cmd_stl)
    p = sub.add_parser("bfast", help="BFAST-Monitor break detection on every pixel of a file "
                       "or of a GeoTIFF stack")
    _file_args(p)
    d = _defaults("bfast")
    _stack_args(p)
    p.add_argument("--start-monitor", "--start", required=True, help="first monitoring date "
                   "(YYYY-MM-DD, or a number for a numeric time axis)")
    p.add_argument("--freq", type=float, default=d["freq"], help="season length in time units "
                   "(default: clts.bfast_monitor's, a year of the axis's calendar in days for "
                   "dates: 365 as R's bfastts, 360 for 360_day, 366 for all_leap; for numbers "
                   "per --time-unit, else 365)")
    p.add_argument("--k", type=int, default=d["k"], help="harmonic terms")
    p.add_argument("--hfrac", type=float, default=d["hfrac"],
                   help="MOSUM bandwidth (0.25, 0.5, 1)")
    p.add_argument("--level", type=float, default=d["level"], help="significance level")
    p.add_argument("--history", default=d["history"],
                   help="stable history: all, ROC (reverse-ordered CUSUM test), BP (after the "
                   "last Bai-Perron break), or a start date")
    p.add_argument("--type", default=d["type"], choices=("OLS-MOSUM", "OLS-CUSUM", "RE", "ME"),
                   help="monitoring process, R's type (see docs/bfast.md)")
    p.set_defaults(fn=cmd_bfast)
    add_breaks_command(sub)
    p = sub.add_parser("mp", help="matrix profile (self-join) of every series of a file")
    _file_args(p)
    d = _defaults("mp")
    p.add_argument("-m", type=int, required=True, help="subsequence length")
    p.add_argument("--exclusion-zone", type=int, default=d["exclusion_zone"],
                   help="default ceil(m / 4)")
    p.add_argument("--motifs", type=int, default=2, help="motifs marked on the plot")
    p.set_defaults(fn=cmd_mp)
    add_seasonal_commands(sub)
    return ap


def main(argv=None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    from contextlib import nullcontext
    from .options import set_options
    # global for the command (dask's threads compute the file's chunks), restored after it
    opts = set_options(progress=False) if getattr(args, "no_progress", False) else nullcontext()
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(message)s")
    try:
        with opts:
            return args.fn(args)
    except KeyboardInterrupt:
        print(f"clts {args.cmd}: interrupted; no output written, an earlier one untouched",
              file=sys.stderr)
        return 130
    except Exception as exc:
        from .errors import CltsError
        from .io import InputError
        if isinstance(exc, (CltsError, InputError)) or (
                args.cmd in ("stl", "bfast", "mp") and isinstance(exc, (ValueError, TypeError))):
            print(f"clts {args.cmd}: {exc}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
