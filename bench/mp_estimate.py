"""``clts.matrix_profile.estimate`` against measured k = 1 self-joins over n and m.

    python bench/mp_estimate.py [--device D] [--sizes 14,15,16,17] [--ms 64,256,2048]
                                [--rounds 3] [--precision double] [--keep-calibration]

A fresh calibration first (``recalibrate=True``, timed: what it costs), unless
--keep-calibration; then every (n, m) once per round, rounds interleaved (a shared machine's
load drifts), best of rounds. Columns: the estimate, the best wall time and its error; on a CPU
device also the best idle-machine seconds of the same runs (``estimate.idle_seconds``: the
calling thread's CPU seconds plus the OpenCL workers' over the cores, at most the wall time),
which is what the calibration measures and what a loaded machine still shows, and the error
against it. The load (``uptime``) before and after is in the notes. Random walks; writes
bench/results/mp-estimate-<device slug>.md.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import markdown_table, write_result  # noqa: E402

import clts  # noqa: E402
from clts.mp import estimate  # noqa: E402
from clts.runtime import get_device  # noqa: E402


def walk(n, seed=0):
    return np.cumsum(np.random.default_rng(seed).standard_normal(n))


def measure(dev, T, m, precision):
    """(wall seconds, idle-machine seconds) of one call."""
    c0, s0 = estimate._process_cpu(), time.thread_time()
    t0 = time.perf_counter()
    clts.matrix_profile(T, m, device=dev, precision=precision)
    wall = time.perf_counter() - t0
    return wall, estimate.idle_seconds(wall, estimate._process_cpu() - c0,
                                       time.thread_time() - s0, estimate._cpu_cores(dev))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--device", default=None)
    ap.add_argument("--sizes", default="14,15,16,17", help="exponents E of n = 2^E")
    ap.add_argument("--ms", default="64,256,2048")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--precision", default="double")
    ap.add_argument("--keep-calibration", action="store_true")
    args = ap.parse_args()
    clts.set_options(progress=False)
    dev = get_device(args.device)
    cpu = estimate._cpu_cores(dev) is not None
    load0 = os.getloadavg()
    clts.matrix_profile(walk(3000), 256, device=dev, precision=args.precision)     # build
    t0 = time.perf_counter()
    clts.matrix_profile.estimate(1 << 16, 256, dev, precision=args.precision,
                                 recalibrate=not args.keep_calibration)
    cal_s = time.perf_counter() - t0
    cal = json.loads(estimate.calibration_path(dev, args.precision).read_text())["calibration"]
    cases = [(e, m) for e in map(int, args.sizes.split(",")) for m in map(int, args.ms.split(","))]
    cases = [(e, m) for e, m in cases if m < (1 << e) // 2]
    res = {c: [] for c in cases}
    for e, m in cases:                                  # warm every program / plan once
        clts.matrix_profile(walk(4 * m + 100), m, device=dev, precision=args.precision)
    for r in range(args.rounds):
        for e, m in cases[r % len(cases):] + cases[:r % len(cases)]:
            res[(e, m)].append(measure(dev, walk(1 << e, e), m, args.precision))
    rows = []
    for e, m in cases:
        est = clts.matrix_profile.estimate(1 << e, m, dev, precision=args.precision)
        wall = min(w for w, _ in res[(e, m)])
        row = {"n": f"2^{e}", "m": m, "estimate s": est, "wall s (best)": wall,
               "error % (wall)": 100 * (est - wall) / wall}
        if cpu:
            idle = min(i for _, i in res[(e, m)])
            row.update({"idle s (best)": idle, "error % (idle)": 100 * (est - idle) / idle})
        rows.append(row)
        print(row, flush=True)
    load1 = os.getloadavg()
    rungs = [{"n": f"2^{int(n).bit_length() - 1}", "pairs": p, "seconds": t, "pairs/s": p / t}
             for n, p, t in cal["points"]]
    notes = (f"\nPrecision {args.precision}; load average (1, 5, 15 min) "
             f"{', '.join(f'{x:.2f}' for x in load0)} before, "
             f"{', '.join(f'{x:.2f}' for x in load1)} after; {args.rounds} rounds, best of "
             f"rounds.\n\n## The calibration ({'taken in this run' if not args.keep_calibration else 'on disk'}"
             f", {cal_s:.1f} s, load {cal['load']} per CPU, gamma {cal.get('gamma')}"
             f"{', idle-machine seconds' if cal.get('idle') else ''})\n\n"
             + markdown_table(rungs))
    print("wrote", write_result("mp-estimate", dev, "matrix_profile.estimate against measured "
                                "self-joins", rows, notes))


if __name__ == "__main__":
    main()
