"""STL search spaces for clts-tune: the tunables of the three LOESS versions (outer lanes,
intra-group work-group size, flat chunk), the fused STL's work-group, and Serykh et al.'s three
version thresholds (jump, q, parallelism) as crossovers. Every candidate runs through
``clts.stl`` with the version and parameters forced and is checked against ``reference.py`` on
the first series of the batch."""
from __future__ import annotations

import numpy as np

from ..tune import Crossover, Tunable, register
from ..tune.sizing import grow
from . import reference
from .api import stl
from .plan import intragroup_fits

_N_CHECK = 2


def _series(batch, n, period, seed):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    return (3 * np.sin(2 * np.pi * t / period) + 0.01 * t + rng.normal(size=(batch, n)))


def _workload(batch, n, period, seed=0, **kw):
    return {"y": _series(batch, n, period, seed), "period": period, "kw": kw}


def _expected(w):
    if "ref" not in w:
        w["ref"] = reference.stl(w["y"][:_N_CHECK], w["period"], **w["kw"])[:2]
    return w["ref"]


def _check(result, w):
    s, t = _expected(w)
    y = w["y"][:_N_CHECK]
    scale = np.ptp(y)
    tol = 1e-9 if result.seasonal.dtype == np.float64 else 1e-4
    return bool(np.nanmax(np.abs(result.seasonal[:_N_CHECK] - s)) < tol * scale
                and np.nanmax(np.abs(result.trend[:_N_CHECK] - t)) < tol * scale)


def _run_with(version):
    def run(device, params, w):
        return stl(w["y"], w["period"], version=version, device=device, **params, **w["kw"])
    return run


A_KW = dict(seasonal=25, trend=39, low_pass=25, seasonal_jump=3, trend_jump=4, low_pass_jump=3)
B_KW = dict(seasonal=49, trend=261, low_pass=169, seasonal_jump=5, trend_jump=27,
            low_pass_jump=17)


#: float64 arrays of a series the LOESS versions read and write (y, seasonal, trend, weights,
#: work)
_SERIES_ARRAYS = 5


def _sizes_a(quick, device=None):
    """Outer-parallel: 256 (quick) / 1024 series of 828 on a CPU; on a GPU one series per
    work-item for four 64-wide groups on every compute unit, within the workload byte limits
    (256 series took 3 ms on an H100 and left most of it idle)."""
    n = 828
    return [{"series": grow(device, 256 if quick else 1024, _SERIES_ARRAYS * 8 * n, wg=64),
             "n": n}]


def _sizes_b(quick, device=None):
    """Intra-group / flat: 8 (quick) / 16 long series; a series gives a work-group per fit point
    (n / 5 points at the workload's smallest jump), so a few already fill a GPU, and these
    compute-bound kernels run for milliseconds there (6 ms on an H100): no byte minimum."""
    n = 4000 if quick else 12000
    return [{"series": grow(device, 8 if quick else 16, _SERIES_ARRAYS * 8 * n,
                            items_per_unit=n // 5 * 64, min_bytes=0), "n": n}]


def _workloads_a(quick, device=None):
    s = _sizes_a(quick, device)[0]
    return [_workload(s["series"], s["n"], 23, **A_KW)]


def _workloads_b(quick, device=None):
    s = _sizes_b(quick, device)[0]
    return [_workload(s["series"], s["n"], 24, **B_KW)]


register(Tunable(
    name="stl.outer", section="stl.outer", params={"lanes": [1, 2, 4, 8, 16]},
    workloads=_workloads_a, sizes=_sizes_a, run=_run_with("outer"), check=_check,
    description="STL outer-parallel LOESS: series per work-item (vector lanes)"))

register(Tunable(
    name="stl.intragroup", section="stl.intragroup", params={"wg": [8, 16, 32, 64, 128, 256]},
    workloads=_workloads_b, sizes=_sizes_b, run=_run_with("intragroup"), check=_check,
    constraint=lambda p, d: intragroup_fits(d, p["wg"]),
    description="STL intra-group LOESS: work-group size (one group per fit point)"))

register(Tunable(
    name="stl.flat", section="stl.flat", params={"chunk": [8, 16, 32, 64, 128, 256]},
    workloads=_workloads_b, sizes=_sizes_b, run=_run_with("flat"), check=_check,
    description="STL flat LOESS: neighbours summed per work-item before the segmented reduce"))


def _run_version(device, version, w):
    return stl(w["y"], w["period"], version=version, device=device, **w["kw"])


register(Crossover(
    name="stl.jump_threshold", key="stl.loess.jump_threshold", versions=("outer", "intragroup"),
    values=[1, 2, 4, 8, 16, 32, 64], quick_values=[1, 4, 16, 64],
    workload=lambda j: _workload(64, 2400, 24, seasonal=25, trend=49, low_pass=25,
                                 seasonal_jump=j, trend_jump=j, low_pass_jump=j),
    run=_run_version, check=_check,
    description="jump beyond which intra-group beats outer-parallel LOESS"))

register(Crossover(
    name="stl.intragroup_max_q", key="stl.loess.intragroup_max_q",
    versions=("intragroup", "flat"), values=[15, 31, 63, 127, 255, 511, 1023],
    quick_values=[15, 63, 255, 1023],
    workload=lambda q: _workload(8, 3000, 12, seasonal=7, trend=q, low_pass=q, trend_jump=8,
                                 low_pass_jump=8, seasonal_jump=2),
    run=_run_version, check=_check,
    description="q from which flat beats intra-group LOESS (intra-group used below it)"))

register(Crossover(
    name="stl.parallelism_threshold", key="stl.loess.parallelism_threshold",
    versions=("flat", "outer"), values=[1000, 4000, 16000, 64000, 256000],
    quick_values=[1000, 16000, 256000],
    # about 1000 fit points per series and LOESS call (n = 2000, jumps 2)
    workload=lambda v: _workload(max(1, v // 1000), 2000, 12, seasonal=13, trend=23,
                                 low_pass=13, seasonal_jump=2, trend_jump=2, low_pass_jump=2),
    run=_run_version, check=_check,
    description="batch x fit points below which flat beats outer-parallel LOESS"))


def _sizes_fused(quick, device=None):
    """The fused STL: a work-group per series of 368 (period 12, robust), 256 (quick) / 1024
    series on a CPU; on a GPU enough for four work-groups of 64 on every compute unit."""
    n = 368
    return [{"series": grow(device, 256 if quick else 1024, _SERIES_ARRAYS * 8 * n, wg=64),
             "n": n}]


def _workloads_fused(quick, device=None):
    s = _sizes_fused(quick, device)[0]
    return [_workload(s["series"], s["n"], 12, robust=True)]


def _run_fused(device, params, w):
    return stl(w["y"], w["period"], device=device, fused=params["fused"], **w["kw"])


def _fused_fits(p, d):
    from .fused import fits
    return p["fused"] == 0 or fits(d, 368, 12, 8, p["fused"])


register(Tunable(
    name="stl.fused", section="stl.fused", params={"fused": [0, 16, 32, 64, 128, 256]},
    workloads=_workloads_fused, sizes=_sizes_fused, run=_run_fused, check=_check,
    constraint=_fused_fits,
    description="STL fused per series (whole inner iterations in a work-group's local memory, "
                "a launch per outer iteration): work-items per series, 0 = the separate kernels"))
