"""The BFAST-family subcommands beyond BFAST-Monitor: ``clts breaks`` (``clts.bfast_breaks``),
``clts bfast-decompose`` (``clts.bfast_decompose``, R's ``bfast()``) and ``clts bfast01``,
each writing per-pixel maps (``clts.bfast.maps``) of a NetCDF / Zarr / CSV input, or GeoTIFFs
of a GeoTIFF stack, through the safe-output path of ``clts.cli``. Nothing heavy is imported
before a command runs (``clts --help`` stays fast)."""
from __future__ import annotations

import argparse

import numpy as np

from .cli_common import (FREQ_OF_UNIT, defaults_of, file_args, is_geotiff_stack, open_input,
                         require_dates, save_plot, stack_args, user_error, write_output)


class _Given(argparse.Action):
    """Stores the value and notes that it was given (``<dest>_given``)."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        setattr(namespace, f"{self.dest}_given", True)


def _numeric_freq(args, da, freq):
    """--freq as given, else from --time-unit for a numeric time axis (1 for decimal years),
    else ``freq`` (the function's)."""
    from .timeaxis import kind
    if not getattr(args, "freq_given", False) and args.time_unit is not None and da is not None \
            and kind(da[args.dim].values, args.dim) == "number":
        if args.time_unit == "step":
            raise ValueError("--time-unit step: give --freq (time steps per season)")
        return FREQ_OF_UNIT[args.time_unit]
    return freq


def _dated_input(args, what):
    """The input DataArray of a NetCDF / Zarr / CSV file, with its dates."""
    if args.more_inputs:
        raise ValueError("several inputs are for GeoTIFF stacks (one file per date)")
    da = open_input(args)
    require_dates(args, da, what)
    if args.plot and da.ndim != 3:
        raise ValueError(f"--plot draws the maps of a 2-D scene; {da.name} has dims {da.dims}")
    return da


def _quiet(fn, *a, **kw):
    """``fn`` on one pixel before anything is written: its argument checks."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return fn(*a, progress=False, **kw)


def _stack_paths(args, run, *a, **kw) -> int:
    """The GeoTIFF-stack path of a command: ``run(inputs, *a, out_dir, ...)``."""
    if args.plot:
        raise ValueError("--plot is not available for GeoTIFF stacks (open the GeoTIFFs)")
    inputs = [args.input, *args.more_inputs]
    paths = run(inputs if len(inputs) > 1 else inputs[0], *a, dates=args.dates,
                block_rows=args.block_rows, date_format=args.date_format,
                overwrite=args.overwrite, progress=not args.no_progress, **kw)
    print(f"wrote {', '.join(str(p) for p in paths.values())}")
    return 0


def _plot_maps(args, n_name, title):
    from types import SimpleNamespace
    from .io import reopen
    from .plots import plot_breaks_maps
    out = reopen(args.output)                   # the maps as written
    maps = SimpleNamespace(n_breaks=out[n_name], largest_magnitude=out["largest_magnitude"])
    save_plot(plot_breaks_maps(maps, title=title), args.plot)


# ------------------------------------------------------------------------------ breaks

def _breaks_kw(args, da=None) -> dict:
    """The ``clts.bfast_breaks`` arguments of ``clts breaks``."""
    return dict(order=args.order, freq=_numeric_freq(args, da, args.freq), trend=args.trend,
                h=args.h, breaks=args.breaks, criterion=args.criterion, device=args.device)


def _breaks(args) -> int:
    import clts
    import clts.xarray as cx
    if is_geotiff_stack(args.input):                      # GeoTIFF stack -> GeoTIFFs
        from .geotiff import bfast_breaks_geotiff
        return _stack_paths(args, bfast_breaks_geotiff, args.output, **_breaks_kw(args))
    da = _dated_input(args, "breaks")
    kw = _breaks_kw(args, da)
    _quiet(clts.bfast_breaks, np.zeros((da.sizes[args.dim], 1)), da[args.dim].values,
           magnitudes=False, **kw)
    ds = cx.bfast_breaks(da, dim=args.dim, **kw)
    out = cx.break_maps(ds)
    for v in ("break_dates", "magnitudes", "nobs"):          # every break, for the record
        out[v] = ds[v]
    write_output(args, out)
    if args.plot:
        from .io import reopen
        from .plots import plot_breaks_maps
        save_plot(plot_breaks_maps(reopen(args.output)), args.plot)   # the maps as written
    return 0


def add_breaks_command(sub) -> None:
    """The ``breaks`` subcommand: clts.bfast_breaks and its per-pixel maps."""
    p = sub.add_parser("breaks", help="Bai-Perron multiple breaks (R's breakpoints / "
                       "bfastlite) on every pixel of a file or of a GeoTIFF stack, as maps",
                       description="Writes n_breaks, first_break_date, largest_break_date, "
                       "largest_magnitude and status per pixel (and, for NetCDF / Zarr, every "
                       "break's date and magnitude along 'break' and the valid values nobs); "
                       "a GeoTIFF stack gives one GeoTIFF per map in the folder -o.")
    file_args(p)
    d = defaults_of("breaks")
    stack_args(p)
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
    p.set_defaults(fn=lambda a: user_error("breaks", _breaks, a))


# --------------------------------------------------------------------- bfast-decompose

def _decompose_kw(args) -> dict:
    return dict(season=args.season, h=args.h, max_iter=args.max_iter, breaks=args.breaks,
                level=args.level, type=args.type, device=args.device)


def _decompose(args) -> int:
    import clts
    import clts.xarray as cx
    if is_geotiff_stack(args.input):
        from .geotiff_bfast import bfast_decompose_geotiff
        return _stack_paths(args, bfast_decompose_geotiff, args.freq, args.output,
                            **_decompose_kw(args))
    da = _dated_input(args, "bfast-decompose")
    kw = _decompose_kw(args)
    N = da.sizes[args.dim]
    probe = np.random.default_rng(0).normal(size=(N, 1))
    _quiet(clts.bfast_decompose, probe, args.freq, da[args.dim].values, **kw)
    ds = cx.bfast_decompose(da, args.freq, dim=args.dim, components=args.components, **kw)
    out = cx.break_maps(ds)
    keep = ["trend_break_dates", "magnitudes", "season_break_dates", "iterations",
            "trend_pvalue", "season_pvalue"]
    if args.components:
        keep += ["trend", "seasonal", "remainder"]
    for v in keep:                                 # every break and the fit, for the record
        out[v] = ds[v]
    write_output(args, out)
    if args.plot:
        _plot_maps(args, "n_trend_breaks", "BFAST trend breaks")
    return 0


def _breaks_arg(text):
    """--breaks: a number of breaks, or BIC / LWZ."""
    if text in ("BIC", "LWZ"):
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: an integer, BIC or LWZ") from None


def add_decompose_command(sub) -> None:
    """The ``bfast-decompose`` subcommand: clts.bfast_decompose (R's bfast()) as maps."""
    p = sub.add_parser("bfast-decompose", help="BFAST decomposition (R's bfast(): breaks in "
                       "the trend and the season) of every pixel of a file or of a GeoTIFF "
                       "stack, as maps",
                       description="Writes n_trend_breaks, first_trend_break_date, "
                       "largest_break_date and largest_magnitude (R's Time and Magnitude), "
                       "n_season_breaks, first_season_break_date and status per pixel (and, "
                       "for NetCDF / Zarr, every break's date and the trend's change along "
                       "'trend_break' / 'season_break', the iterations and the tests' "
                       "p-values; --components adds the trend, season and remainder); a "
                       "GeoTIFF stack gives one GeoTIFF per map in the folder -o. The series "
                       "must be regular (one value per 1/freq of a season; NaN missing).")
    file_args(p)
    d = defaults_of("bfast-decompose")
    stack_args(p)
    p.add_argument("--freq", type=int, required=True,
                   help="values per season (R's frequency: 23 for 16-day, 12 for monthly)")
    p.add_argument("--season", choices=("dummy", "harmonic", "none"), default=d["season"],
                   help="seasonal model")
    p.add_argument("--h", type=float, default=d["h"], help="minimal segment, a fraction of "
                   "each pixel's valid values")
    p.add_argument("--max-iter", type=int, default=d["max_iter"], help="most iterations")
    p.add_argument("--breaks", type=_breaks_arg, default=d["breaks"],
                   help="breaks reported: a number, BIC or LWZ (default: the BIC's number)")
    p.add_argument("--level", type=float, default=d["level"],
                   help="significance of the --type tests")
    p.add_argument("--type", choices=("OLS-MOSUM", "OLS-CUSUM", "RE", "ME"), default=d["type"],
                   help="fluctuation test of each component (R's type; default OLS-MOSUM)")
    p.add_argument("--components", action="store_true",
                   help="also write trend, seasonal and remainder (NetCDF / Zarr)")
    p.set_defaults(fn=lambda a: user_error("bfast-decompose", _decompose, a))


# ----------------------------------------------------------------------------- bfast01

def _bfast01_kw(args, da=None) -> dict:
    return dict(order=args.order, freq=_numeric_freq(args, da, args.freq), trend=args.trend,
                test=args.test, level=args.level, aggregate=args.aggregate, trim=args.trim,
                bandwidth=args.bandwidth, alpha=args.alpha, pct_stable=args.pct_stable,
                typology=args.typology, classify=args.classify, reg=args.reg,
                device=args.device)


def _bfast01(args) -> int:
    import clts
    import clts.xarray as cx
    if is_geotiff_stack(args.input):
        from .geotiff_bfast import bfast01_geotiff
        return _stack_paths(args, bfast01_geotiff, args.output, **_bfast01_kw(args))
    da = _dated_input(args, "bfast01")
    kw = _bfast01_kw(args, da)
    probe = np.random.default_rng(0).normal(size=(da.sizes[args.dim], 1))
    _quiet(clts.bfast01, probe, da[args.dim].values, **kw)
    ds = cx.bfast01(da, dim=args.dim, **kw)
    out = cx.break_maps(ds)
    for v in ("breakpoint", "mosum_p", "cusum_p", "supf_p", "suplm_p", "avef_p", "expf_p",
              "flag_pct_stable", "flag_subtype", "p_segment1",
              "p_segment2", "pct_segment1", "pct_segment2", "nobs"):
        if v in ds:                                # the flags with classification only
            out[v] = ds[v]
    write_output(args, out)
    if args.plot:
        from types import SimpleNamespace
        from .io import reopen
        from .plots import plot_breaks_maps
        o = reopen(args.output)
        save_plot(plot_breaks_maps(SimpleNamespace(n_breaks=o["breaks"],
                                                    largest_magnitude=o["magnitude"]),
                                    title="bfast01: break or none"), args.plot)
    return 0


def _count_or_fraction(text):
    """--trim: a whole number is a count, else a fraction."""
    v = float(text)
    return int(v) if v >= 1 and v == int(v) else v


def add_bfast01_command(sub) -> None:
    """The ``bfast01`` subcommand: clts.bfast01 (one break or none, its type) as maps."""
    p = sub.add_parser("bfast01", help="one break or none (R's bfast01, with "
                       "bfast01classify's type) on every pixel of a file or of a GeoTIFF "
                       "stack, as maps",
                       description="Writes breaks (1, 0; -1 not analysed), break_date and "
                       "magnitude (where a break is found), flag_type, flag_significance "
                       "(bfast01classify) and status per pixel (and, for NetCDF / Zarr, the "
                       "best breakpoint whatever the decision, the tests' p-values, the "
                       "other flags and the segments' tests); a GeoTIFF stack gives one "
                       "GeoTIFF per map in the folder -o.")
    file_args(p)
    d = defaults_of("bfast01")
    stack_args(p)
    p.add_argument("--order", type=int, default=d["order"], help="harmonic terms")
    p.add_argument("--freq", type=float, default=d["freq"], action=_Given,
                   help="season length in time units (default 365.0: days for dates; for a "
                   "numeric axis per --time-unit: year 1, month 12, day 365)")
    p.add_argument("--no-trend", dest="trend", action="store_false", default=d["trend"],
                   help="no linear trend term (the classification needs one: flag_type is -1 then)")
    p.add_argument("--test", default=d["test"], nargs="+",
                   choices=("OLS-MOSUM", "OLS-CUSUM", "supF", "supLM", "BIC", "aveF", "expF"),
                   help="the test(s) that decide (R's bfast01 test =; several: "
                   "--test supF OLS-CUSUM, after the input file)")
    p.add_argument("--level", type=float, default=d["level"], help="its significance")
    p.add_argument("--aggregate", choices=("all", "any"), default=d["aggregate"],
                   help="how several tests decide")
    p.add_argument("--trim", type=_count_or_fraction, default=d["trim"], help="minimal segment: a count "
                   "or a fraction of the valid values (default 5 x the regressors)")
    p.add_argument("--bandwidth", type=float, default=d["bandwidth"],
                   help="OLS-MOSUM window, a fraction of the valid values")
    p.add_argument("--alpha", type=float, default=d["alpha"],
                   help="bfast01classify's significance of the segments")
    p.add_argument("--pct-stable", type=float, default=d["pct_stable"],
                   help="bfast01classify's stability threshold, percent a year (default: none)")
    p.add_argument("--typology", choices=("standard", "drylands"), default=d["typology"],
                   help="bfast01classify's typology")
    p.add_argument("--no-classify", dest="classify", action="store_false",
                   default=d["classify"], help="no bfast01classify flags")
    p.add_argument("--reg", choices=("lm", "rlm"), default=d["reg"],
                   help="the models' fits (R's reg): least squares or rlm (Huber "
                   "M-estimation; the break stays the least-squares one)")
    p.set_defaults(fn=lambda a: user_error("bfast01", _bfast01, a))


def add_bfast_commands(sub) -> None:
    """``breaks``, ``bfast-decompose`` and ``bfast01``."""
    add_breaks_command(sub)
    add_decompose_command(sub)
    add_bfast01_command(sub)
