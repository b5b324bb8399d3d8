"""How much of a numpy-in, numpy-out call is not kernel time?

    python bench/host_overhead.py [--device pocl] [--rounds 5]

For one representative workload per public function (the same as ``generic_vs_tuned.py``,
plus the ocean TKE step at 2^20), the wall time of the whole numpy call against the time its
kernels ran (sum of OpenCL profiling intervals) and their span (first start to last end), each
the minimum over rounds. wall / span near 1 means transfers, host preparation and launches
cost little beside the kernels; the issue's target for numpy calls is within 1.3x of the same
call on device arrays.
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


if __name__ == "__main__":
    main()
