"""How much of a numpy-in, numpy-out call is not kernel time?

    python bench/host_overhead.py [--device pocl] [--rounds 5] [--quick: 3 rounds]

For one representative workload per public function (the same as ``generic_vs_tuned.py``,
plus the ocean TKE step at 2^20), the wall time of the whole numpy call against the time its
kernels ran (sum of OpenCL profiling intervals) and their span (first start to last end), each
the minimum over rounds. wall / span near 1 means transfers, host preparation and launches
cost little beside the kernels; the issue's target for numpy calls is within 1.3x of the same
call on device arrays.

On a device with its own memory (a discrete GPU; ``--staging`` forces it on a CPU, with
``zero_copy=False``) the same calls round-robin with their transfers straight from numpy's
memory (``staging="pageable"``, "direct") and through the pinned staging buffers
(``staging="pinned"``, "staged", the GPU profiles' default): median and minimum ms of each, the
median per-round ratio direct / staged (> 1: staging pays), and the results compared bit for
bit.

Then every algorithm again as a model or a tile loop calls it, round-robin in one process
(``fresh_inputs``): on the same input arrays every call (what the table times), on freshly
allocated inputs every call, with the pool of dropped results off (new pages for every
result), with the last results kept alive, and with ``out=``: wall time and minor page faults
per call.
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
    ap.add_argument("--rounds", type=int, default=None, help="default 5 (--quick: 3)")
    ap.add_argument("--quick", action="store_true", help="3 rounds (scripts/gpu-check.sh)")
    ap.add_argument("--large", action="store_true",
                    help="fresh-input rounds also for STL 12,000 x 480 (46 MB per result)")
    ap.add_argument("--staging", action="store_true",
                    help="compare direct and pinned-staged transfers also on a device that "
                         "shares host memory (with zero_copy=False)")
    args = ap.parse_args(argv)
    args.rounds = args.rounds or (3 if args.quick else 5)
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
    staged_vs_direct(dev, cases, args.rounds, args.staging)
    fresh_inputs(dev, x, args.rounds, args.large)


def staged_vs_direct(dev, cases, rounds, force=False):
    """Direct (pageable) against pinned-staged transfers, round-robin (see the docstring)."""
    import clts
    from clts.runtime.memory import host_ptr_alignment
    if host_ptr_alignment(dev) is not None:
        if not force:
            print("\n(staged vs direct transfers: the device uses numpy memory in place; "
                  "--staging compares them with zero_copy=False)")
            return
        clts.set_options(zero_copy=False)
    print("\n| numpy call, transfers | direct median ms | staged median ms | direct min ms | "
          "staged min ms | direct / staged (median of rounds) | same bits |")
    print("|---|---|---|---|---|---|---|")
    try:
        for name, run in cases:
            times = {"pageable": [], "pinned": []}
            same = True
            for mode in times:                       # warm: builds, pools
                clts.set_options(staging=mode)
                run(dev)
            for _ in range(max(rounds, 3)):
                res = {}
                for mode, t in times.items():
                    clts.set_options(staging=mode)
                    t0 = time.perf_counter()
                    res[mode] = run(dev)
                    t.append(time.perf_counter() - t0)
                same = same and _same_bits(res["pageable"], res["pinned"])
            d, p = (np.array(times[m]) * 1e3 for m in ("pageable", "pinned"))
            print(f"| {name} | {np.median(d):.1f} | {np.median(p):.1f} | {d.min():.1f} | "
                  f"{p.min():.1f} | {np.median(d / p):.2f} | {'yes' if same else 'NO'} |",
                  flush=True)
    finally:
        clts.set_options(staging=None, zero_copy=True)


def _same_bits(a, b) -> bool:
    """Whether two results (result objects, tuples or arrays) hold the same arrays."""
    def arrays(r):
        if isinstance(r, np.ndarray):
            return [r]
        if isinstance(r, (tuple, list)):
            return [v for x in r for v in arrays(x)]
        return [np.asarray(v) for k, v in sorted(vars(r).items())
                if isinstance(v, np.ndarray)] if hasattr(r, "__dict__") else []
    xa, xb = arrays(a), arrays(b)
    return len(xa) == len(xb) > 0 and all(np.array_equal(u, v, equal_nan=True)
                                      for u, v in zip(xa, xb))


def fresh_inputs(dev, x, rounds, large=False):
    """Per algorithm, round-robin in one process (median, min ms, minor page faults per call):
    the same input arrays every call (what the table above times), freshly allocated inputs
    every call (a model hands over new fields, a reader new tiles; the copies are made outside
    the timing; earlier results dropped), the same with the pool of dropped results off (every
    fresh result on new pages: the code before it), fresh inputs while the last two results
    are kept (the pool cannot serve them), and fresh inputs with ``out=`` (two sets of results
    used in turn)."""
    import clts
    from clts.runtime import memory
    rng = np.random.default_rng(1)
    t = np.arange(828)
    y = np.sin(2 * np.pi * t / 23) + 0.1 * rng.standard_normal((2000, 828))
    dates = 2000 + np.arange(256) / 23
    cube = (np.sin(2 * np.pi * dates)[:, None] + 0.1 * rng.standard_normal((256, 32_768))
            ).astype(np.float32)
    T = np.cumsum(rng.standard_normal(1 << 15))
    stl_kw = dict(seasonal=25, seasonal_jump=3, trend_jump=4, low_pass_jump=3, device=dev)
    a, c, d = rng.standard_normal((3, 50_000, 115))
    b = 4 + np.abs(a) + np.abs(c)
    cases = [
        ("tridiagonal 50,000 x 115", [a, b, c, d],
         lambda v, **kw: clts.solve_tridiagonal(*v, device=dev, **kw)),
        ("TKE 2^20", list(x.values()), lambda a, **kw: clts.ocean.tke(*a, device=dev, **kw)),
        ("STL 2000 x 828", [y], lambda a, **kw: clts.stl(a[0], 23, **stl_kw, **kw)),
        ("BFAST 32,768 x 256", [cube],
         lambda a, **kw: clts.bfast_monitor(a[0], dates, dates[128], freq=1, device=dev, **kw)),
        ("MP n = 2^15, m = 128", [T],
         lambda a, **kw: clts.matrix_profile(a[0], 128, device=dev, progress=False, **kw)),
    ]
    if large:       # results above glibc's largest mmap threshold (32 MiB): new pages each call
        t = np.arange(480)
        yl = np.sin(2 * np.pi * t / 12) + 0.1 * rng.standard_normal((12_000, 480))
        cases.append(("STL 12,000 x 480", [yl], lambda a, **kw: clts.stl(
            a[0], 12, device=dev, progress=False, **kw)))
    print("\n| numpy call | inputs | median ms | min ms | page faults per call |")
    print("|---|---|---|---|---|")
    for name, args, call in cases:
        sets = [call(args) for _ in range(2)]
        if name.startswith("tridiagonal"):
            sets = [r.x for r in sets]       # its out= is the solution array
        modes = {"same": [], "fresh": [], "fresh, pool off": [], "fresh, results kept": [],
                 "fresh, out=": []}
        kept = []
        for r in range(max(rounds, 3) * 2):
            for mode, times in modes.items():
                a = args if mode == "same" else [v.copy() for v in args]
                kw = {"out": sets[r % 2]} if "out=" in mode else {}
                pool = memory.RESULT_POOL_MIN_BYTES
                if "pool off" in mode:
                    memory.RESULT_POOL_MIN_BYTES = 1 << 62
                f0, t0 = _faults(), time.perf_counter()
                res = call(a, **kw)
                times.append((time.perf_counter() - t0, _faults() - f0))
                memory.RESULT_POOL_MIN_BYTES = pool
                if "kept" in mode:
                    kept = (kept + [res])[-2:]
                del res
        for mode, times in modes.items():
            w = np.array([t for t, _ in times]) * 1e3
            print(f"| {name} | {mode} | {np.median(w):.1f} | {w.min():.1f} | "
                  f"{int(np.median([f for _, f in times]))} |", flush=True)
        del kept, sets


def _faults():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


if __name__ == "__main__":
    main()
