"""clts.stimp / clts.scrump against stumpy (numba JIT, its warm-up excluded) in the same run:
the pan matrix profile of one random walk over many window lengths, at ``percentage`` 0.01
(SCRIMP++ per length: preSCRIMP then 1 % of the diagonals) and 1.0 (exact profiles), and one
scrump update. Writes bench/results/stimp-<device>.md: seconds and the ratio stumpy / clts
(stumpy and clts run alternately ``--repeat`` times for stimp, 3 for scrump, the best of each
kept; a shared host's load is in the header).

    python bench/bench_stimp.py [--n 10000] [--min-m 10] [--max-m 500] [--step 10]
                                [--device pocl] [--percentages 0.01,1.0] [--repeat 2]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import write_result  # noqa: E402


def _time(f, g, repeat=1):
    """The best seconds of f and of g, run alternately ``repeat`` times."""
    best = [np.inf, np.inf]
    for _ in range(repeat):
        for u, h in enumerate((f, g)):
            t0 = time.perf_counter()
            h()
            best[u] = min(best[u], time.perf_counter() - t0)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--min-m", type=int, default=10)
    ap.add_argument("--max-m", type=int, default=500)
    ap.add_argument("--step", type=int, default=10)
    ap.add_argument("--device", default=None)
    ap.add_argument("--percentages", default="0.01,1.0")
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    import stumpy

    import clts
    dev = clts.get_device(a.device)
    T = np.cumsum(np.random.default_rng(0).standard_normal(a.n))
    # warm-ups: stumpy's JIT, clts's kernel builds
    w = T[:300]
    for mod in (stumpy, clts):
        s = mod.stimp(w, 10, 30, 10, percentage=0.1, **({} if mod is stumpy else
                                                          {"device": dev}))
        for _ in range(3):
            s.update()
        mod.stimp(w, 10, 30, 10, percentage=1.0, **({} if mod is stumpy else
                                                      {"device": dev})).update()
    nm = len(range(a.min_m, a.max_m + 1, a.step))
    rows = []
    for pct in [float(x) for x in a.percentages.split(",")]:
        def run_stumpy():
            s = stumpy.stimp(T, a.min_m, a.max_m, a.step, percentage=pct)
            for _ in range(nm):
                s.update()

        def run_clts():
            s = clts.stimp(T, a.min_m, a.max_m, a.step, percentage=pct, device=dev)
            s.update_all()
        ts, tc = _time(run_stumpy, run_clts, a.repeat)
        rows.append((f"stimp n={a.n}, m={a.min_m}..{a.max_m} step {a.step} ({nm} lengths), "
                     f"percentage={pct}", ts, tc))
    for m in (50,):
        def one_stumpy():
            s = stumpy.scrump(T, m, percentage=0.01, pre_scrump=True)
            s.update()

        def one_clts():
            s = clts.scrump(T, m, percentage=0.01, pre_scrump=True, device=dev)
            s.update()
        rows.append((f"scrump n={a.n}, m={m}, percentage=0.01, pre_scrump, one update",
                     *_time(one_stumpy, one_clts, 3)))
    out = [{"case": name, "stumpy s": ts, "clts s": tc, "x stumpy": ts / tc}
           for name, ts, tc in rows]
    notes = ("stumpy 1.14 with numba's JIT (compiled before the timing), clts with its kernels "
             "built before the timing; the same series, window lengths and percentage.\n")
    print(write_result("stimp", dev, "Pan matrix profile and anytime profile against stumpy",
                       out, notes).read_text())

if __name__ == "__main__":
    main()
