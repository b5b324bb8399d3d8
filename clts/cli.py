"""The ``clts`` command: ``clts devices``, ``clts profile``, ``clts warmup``, ``clts demo``, and
the algorithms
on files: ``clts stl``, ``clts bfast``, ``clts mp`` (NetCDF / Zarr / CSV / .npy in, Zarr or
NetCDF out, ``--plot FILE.png``); ``clts breaks``, ``clts bfast-decompose`` and ``clts bfast01``
live in ``clts.cli_bfast``."""
from __future__ import annotations

import argparse
import logging
import sys

import numpy as np

from .cli_common import FREQ_OF_UNIT as _FREQ_OF_UNIT
from .cli_common import FUNCTIONS, function_of  # noqa: F401 (clts.cli.FUNCTIONS, ...)
from .cli_common import defaults_of as _defaults
from .cli_common import file_args as _file_args
from .cli_common import is_geotiff_stack as _is_geotiff_stack
from .cli_common import open_input as _open
from .cli_common import require_dates
from .cli_common import save_plot as _save_plot
from .cli_common import stack_args as _stack_args
from .cli_common import user_error as _user_error
from .cli_common import write_output as _write


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
    try:                # what a call with device=None runs on (the device option honoured)
        default = devices.get_device(None).info.index if devices.usable() else None
    except Exception:   # a device option matching nothing: get_device says so at a call
        default = None
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


def cmd_bfast(args) -> int:
    import clts.xarray as cx
    from types import SimpleNamespace
    if _is_geotiff_stack(args.input):                      # GeoTIFF stack -> GeoTIFFs
        from .geotiff import cli_bfast
        return cli_bfast(args)
    da = _open(args)
    require_dates(args, da, "bfast")
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


# ------------------------------------------------------- MSTL and trend tests (seasonal block)

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
    from types import SimpleNamespace
    da = _open(args)
    kw = dict(variant=args.variant, alpha=args.alpha, conf_level=args.conf_level,
              device=args.device)
    if args.period is not None:
        kw["period"] = args.period
    if args.stl_period is not None:        # the test on STL's trend instead of the raw series
        da = cx.stl(da, args.stl_period, dim=args.dim, device=args.device)["trend"]
    ds = cx.trend_test(da, dim=args.dim, **kw)
    _write(args, ds)
    from .io import reopen
    out = reopen(args.output)           # the results as written, not computed again
    n_sig = int(out["h"].sum())
    print(f"{n_sig} of {out['h'].size} series with a significant trend")
    if args.plot:
        from .plots import plot_trend_map
        res = SimpleNamespace(slope=out["slope"].load(), h=out["h"].load(),   # with their
                              diagnostics=dict(variant=args.variant, alpha=args.alpha))
        _save_plot(plot_trend_map(res, title=f"Mann-Kendall ({args.variant}) and Sen's slope "
                                             f"of {da.name or 'the series'}"), args.plot)
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
                   help="threads building at once (default: the CPU count; 1 on pocl and "
                        "NVIDIA, whose builds do not overlap)")
    p.set_defaults(fn=cmd_warmup)
    p = sub.add_parser("demo", help="STL and BFAST-Monitor of a synthetic NDVI cube and the "
                       "matrix profile of the sunspot record on a device, with figures")
    p.add_argument("--device", "-d", default=None, help="index or name substring (clts devices)")
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
    from .cli_bfast import add_bfast_commands       # breaks, bfast-decompose, bfast01
    add_bfast_commands(sub)
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
    import warnings
    formatwarning = warnings.formatwarning      # warnings as one line each, as the errors
    warnings.formatwarning = (lambda message, category, *_a, **_k:
                              f"clts {args.cmd}: {category.__name__}: {message}\n")
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
    finally:
        warnings.formatwarning = formatwarning


if __name__ == "__main__":
    sys.exit(main())
