"""Trend-test search spaces for clts-tune: the pair kernel's lanes, work-items and work-group
size, and Sen's median (quickselect or heapsort). Every candidate runs through
``clts.trend_test`` with its parameters forced and is checked against ``reference.py`` on the
first series."""
from __future__ import annotations

import numpy as np

from ..tune import Tunable, register
from . import reference
from .api import trend_test

_N_CHECK = 2


def _workloads(quick):
    rng = np.random.default_rng(0)
    n = 200 if quick else 400
    y = rng.normal(size=(256 if quick else 2048, n)) + 0.002 * np.arange(n)
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
    workloads=_workloads, run=_run, check=_check,
    constraint=lambda p, d: p["wg"] <= d.max_work_group,
    description="Mann-Kendall / Sen pair kernel: realN lanes, work-items re-using a scratch "
                "row, work-group size"))

register(Tunable(
    name="trend.sen", section="trend.sen", params={"median": ["select", "sort"]},
    workloads=_workloads, run=_run, check=_check,
    description="Sen's median: sampled-bracket quickselect or a heapsort of all slopes"))
