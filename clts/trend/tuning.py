"""Trend-test search spaces for clts-tune: the pair kernel's lanes, work-items and work-group
size, and Sen's median (quickselect or heapsort). Every candidate runs through
``clts.trend_test`` with its parameters forced and is checked against ``reference.py`` on the
first series."""
from __future__ import annotations

import numpy as np

from ..tune import Tunable, register
from ..tune.sizing import grow
from . import reference
from .api import trend_test

_N_CHECK = 2


def _sizes(quick, device=None):
    """256 (quick) / 2048 series of 200 / 400 on a CPU; on a GPU a series per work-item for
    four 64-wide groups on every compute unit (the pair kernel is compute-bound, O(n^2) per
    series, and its slope scratch is chunked by the device limits: no byte minimum)."""
    n = 200 if quick else 400
    return [{"series": grow(device, 256 if quick else 2048, 8 * n, wg=64, min_bytes=0),
             "n": n}]


def _workloads(quick, device=None):
    rng = np.random.default_rng(0)
    size = _sizes(quick, device)[0]
    n = size["n"]
    y = rng.normal(size=(size["series"], n)) + 0.002 * np.arange(n)
    y[1, ::7] = np.nan                  # one series on the NaN path
    return [{"y": y}]


def _check(result, w):
    if "ref" not in w:
        w["ref"] = [reference.trend_series(row) for row in w["y"][:_N_CHECK]]
    tol = 1e-12 if result.slope.dtype == np.float64 else 1e-5
    return all(result.s[i] == e["s"] and abs(result.slope[i] - e["slope"])
               <= tol * (abs(e["slope"]) + 1e-12) for i, e in enumerate(w["ref"]))


def _run(device, params, w):
    return trend_test(w["y"], device=device, **params)


register(Tunable(
    name="trend.pairs", section="trend.pairs",
    params={"lanes": [1, 4, 8, 16], "items": [0, 16, 64, 256], "wg": [1, 8, 64]},
    workloads=_workloads, sizes=_sizes, run=_run, check=_check,
    constraint=lambda p, d: p["wg"] <= d.max_work_group,
    description="Mann-Kendall / Sen pair kernel: realN lanes, work-items re-using a scratch "
                "row, work-group size"))

register(Tunable(
    name="trend.sen", section="trend.sen", params={"median": ["select", "sort"]},
    workloads=_workloads, sizes=_sizes, run=_run, check=_check,
    description="Sen's median: sampled-bracket quickselect or a heapsort of all slopes"))
