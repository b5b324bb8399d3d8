"""Benchmark clts.mstl against statsmodels' MSTL looped over the series.

    python bench/bench_mstl.py [--quick] [--device SUBSTR] [--rounds 3] [--subset 30 (--quick: 5)]

10,000 hourly series of 8 weeks (1344 points), periods (24, 168), statsmodels' defaults
(windows 11 / 15, iterate 2); ``--quick``: 1,000 series, statsmodels on 5 a round. statsmodels runs on a subset of the
series each round and its time is extrapolated to the batch (stated in the table); clts and
the anchor alternate round by round in one process, the ratio is the median of the per-round
ratios; the subset's components are checked against clts (1e-10 of the range).
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--device", default=None)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--subset", type=int, default=None,
                    help="statsmodels series per round (default 30; --quick: 5)")
    a = ap.parse_args()
    a.subset = a.subset or (5 if a.quick else 30)
    quiet()
    from statsmodels.tsa.seasonal import MSTL
    dev = clts.get_device(a.device)
    B, N = (1_000 if a.quick else 10_000), 24 * 7 * 8
    rng = np.random.default_rng(0)
    t = np.arange(N)
    y = (rng.normal(size=(B, 1)) * np.sin(2 * np.pi * t / 24)
         + rng.normal(size=(B, 1)) * np.cos(2 * np.pi * t / 168) + 0.01 * t
         + rng.normal(size=(B, N)))
    periods = (24, 168)
    clts.mstl(y[:64], periods, device=dev)          # build the kernels
    rows, ratios = [], []
    for r in range(a.rounds):
        t0 = time.perf_counter()
        res = clts.mstl(y, periods, device=dev)
        tc = time.perf_counter() - t0
        idx = (np.arange(a.subset) + r * a.subset) * (B // (a.subset * a.rounds))
        t0 = time.perf_counter()
        outs = [MSTL(y[i], periods=periods).fit() for i in idx]
        ta = (time.perf_counter() - t0) / len(idx) * B
        for i, o in zip(idx, outs):
            assert np.abs(res.trend[i] - o.trend).max() < 1e-10 * np.ptp(y[i])
            assert np.abs(res.seasonal[168][i] - o.seasonal[:, 1]).max() < 1e-10 * np.ptp(y[i])
        ratios.append(ta / tc)
        rows.append(dict(round=r + 1, series=B, n=N, clts_s=tc, statsmodels_s=ta,
                         speedup=ta / tc, load=machine_line().split("load ")[1]))
        print(rows[-1], flush=True)
    note = (f"periods (24, 168), windows (11, 15), iterate 2; statsmodels timed on {a.subset} "
            f"series per round and extrapolated to {B}; speedup median "
            f"{np.median(ratios):.1f}x.\n")
    path = write_result("mstl", dev, "MSTL: clts vs statsmodels", rows, note)
    print(note, path)


if __name__ == "__main__":
    main()
