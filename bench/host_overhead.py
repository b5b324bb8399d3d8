"""How much of a numpy-in, numpy-out call is not kernel time?

    python bench/host_overhead.py [--device pocl] [--rounds 5]

For one representative workload per public function (the same as ``generic_vs_tuned.py``,
plus the ocean TKE step at 2^20), the wall time of the whole numpy call against the time its
kernels ran (sum of OpenCL profiling intervals) and their span (first start to last end), each
the minimum over rounds. wall / span near 1 means transfers, host preparation and launches
cost little beside the kernels; the issue's target for numpy calls is within 1.3x of the same
call on device arrays.

Then the TKE step again as a model calls it, round-robin in one process: on the same input
arrays every call (what the table times), on freshly allocated inputs every call (a model
hands over new fields; the copies are made outside the timing), and on fresh inputs with
``out=`` (two sets of results used in turn): wall time and minor page faults per call.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    from common import quiet
    quiet()
    import clts
    from clts.ocean.inputs import benchmark_inputs
    from clts.runtime import timing
    from common import machine_line
    from generic_vs_tuned import workloads
    dev = clts.get_device(args.device)
    cases = workloads(np.random.default_rng(0))
    x = benchmark_inputs(2 ** 20)
    cases.append(("ocean TKE step 2^20", lambda d: clts.ocean.tke(*x.values(), device=d)))
    print(f"# host overhead of numpy calls: {machine_line(dev)}\n")
    print("| workload | wall ms | kernels ms | kernel span ms | wall / span |")
    print("|---|---|---|---|---|")
    for name, run in cases:
        run(dev)                                        # builds
        wall = kern = span = np.inf
        for _ in range(args.rounds):
            t0 = time.perf_counter()
            with timing(dev) as t:
                run(dev)
            wall = min(wall, time.perf_counter() - t0)
            kern = min(kern, t.kernel_seconds)
            span = min(span, t.span_seconds)
        print(f"| {name} | {wall * 1e3:.1f} | {kern * 1e3:.1f} | {span * 1e3:.1f} | "
              f"{wall / span:.2f} |", flush=True)
    fresh_inputs(dev, x, args.rounds)


def fresh_inputs(dev, x, rounds):
    """TKE 2^20: reused inputs, fresh inputs, fresh inputs with out= (median, min ms)."""
    import resource

    import clts
    faults = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_minflt  # noqa: E731
    sets = [clts.ocean.tke(*x.values(), device=dev) for _ in range(2)]
    modes = {"same inputs": [], "fresh inputs": [], "fresh inputs, out=": []}
    for r in range(max(rounds, 3) * 2):
        for mode, times in modes.items():
            args = list(x.values()) if mode == "same inputs" else [v.copy() for v in x.values()]
            kw = {"out": sets[r % 2]} if "out=" in mode else {}
            f0, t0 = faults(), time.perf_counter()
            clts.ocean.tke(*args, device=dev, **kw)
            times.append((time.perf_counter() - t0, faults() - f0))
    print("\n| TKE 2^20, numpy call | median ms | min ms | page faults per call |")
    print("|---|---|---|---|")
    for mode, times in modes.items():
        w = np.array([t for t, _ in times]) * 1e3
        print(f"| {mode} | {np.median(w):.1f} | {w.min():.1f} | "
              f"{int(np.median([f for _, f in times]))} |")


if __name__ == "__main__":
    main()
