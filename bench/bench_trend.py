"""Benchmark clts.trend_test (Mann-Kendall + Sen's slope with its interval) against
pymannkendall's test of the same variant (``original_test`` etc., each computes both) looped
over the series.

    python bench/bench_trend.py [--quick] [--device SUBSTR] [--rounds 3] [--variant original]
                                [--series B] [--length N]

10^5 series x 400 points (``--quick``: 10^4; ``--series`` / ``--length`` set them). The
multi-variable variants test 3 variables a series (``partial``: 2), each of ``--length``
points; ``correlated_seasonal`` has period 12. pymannkendall runs on a subset of the series each
round (its cost is per series and independent of the others: the batch's time is extrapolated
from the subset, stated in the table); clts and the anchor alternate round by round in one
process (the machine is shared), and the ratio is the median of the per-round ratios. The
subset's results are checked against clts (S, Z, p, slope to 1e-10 relative).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import clts  # noqa: E402
from common import machine_line, quiet, write_result  # noqa: E402

ANCHORS = {"original": "original_test", "hamed_rao": "hamed_rao_modification_test",
           "yue_wang": "yue_wang_modification_test", "seasonal": "seasonal_test",
           "pre_whitening": "pre_whitening_modification_test",
           "trend_free_pre_whitening": "trend_free_pre_whitening_modification_test",
           "correlated_seasonal": "correlated_seasonal_test",
           "multivariate": "multivariate_test", "regional": "regional_test",
           "correlated_multivariate": "correlated_multivariate_test",
           "partial": "partial_test"}
#: variants with several variables a series: y (B, variables, N), pymannkendall's (N, variables)
MULTI = {"multivariate": 3, "regional": 3, "correlated_multivariate": 3, "partial": 2}
SEASONAL = ("seasonal", "correlated_seasonal")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--device", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--subset", type=int, default=100)
    ap.add_argument("--variant", default="original", choices=list(ANCHORS))
    ap.add_argument("--median", default=None, choices=[None, "select", "sort"])
    ap.add_argument("--series", type=int, default=None)
    ap.add_argument("--length", type=int, default=400)
    a = ap.parse_args()
    quiet()
    import pymannkendall as mk
    f = getattr(mk, ANCHORS[a.variant])
    C = MULTI.get(a.variant)
    if C:
        def anchor(x):
            return f(x.T)
    elif a.variant in SEASONAL:
        def anchor(x):
            return f(x, period=12)
    else:
        anchor = f
    dev = clts.get_device(a.device)
    B, N = a.series or (10_000 if a.quick else 100_000), a.length
    rng = np.random.default_rng(0)
    shape = (B, C, N) if C else (B, N)
    y = rng.normal(size=shape) + 0.002 * np.arange(N) * rng.normal(size=shape[:-1] + (1,))
    y[::10, ..., rng.random(N) < 0.1] = np.nan     # every tenth series with missing values
    kw = dict(variant=a.variant, device=dev, median=a.median)
    if a.variant in SEASONAL:
        kw["period"] = 12
    clts.trend_test(y[:256], **kw)                 # build the kernels
    rows, ratios = [], []
    for r in range(a.rounds):
        t0 = time.perf_counter()
        res = clts.trend_test(y, **kw)
        tc = time.perf_counter() - t0
        idx = np.arange(r * a.subset, (r + 1) * a.subset) * (B // (a.subset * a.rounds))
        t0 = time.perf_counter()
        outs = [anchor(y[i]) for i in idx]
        ta = (time.perf_counter() - t0) / len(idx) * B
        for i, o in zip(idx, outs):
            if res.status[i]:           # clts's rule: fewer than 3 values, NaN
                continue
            for mine, theirs in (("s", "s"), ("z", "z"), ("p", "p"), ("slope", "slope")):
                u, v = getattr(res, mine)[i], getattr(o, theirs)
                assert np.isclose(u, v, rtol=1e-10, atol=1e-300), (i, mine, u, v)
        ratios.append(ta / tc)
        rows.append(dict(round=r + 1, series=B, n=N if not C else f"{C} x {N}", clts_s=tc,
                         pymannkendall_s=ta, speedup=ta / tc, load=machine_line().split("load ")[1]))
        print(rows[-1], flush=True)
    note = (f"variant {a.variant}; pymannkendall timed on {a.subset} series per round and "
            f"extrapolated to {B}; speedup median {np.median(ratios):.1f}x; median version "
            f"{res.diagnostics['median']}.\n")
    path = write_result(f"trend-{a.variant}", dev, "Mann-Kendall + Sen: clts vs pymannkendall",
                        rows, note)
    print(note, path)


if __name__ == "__main__":
    main()
