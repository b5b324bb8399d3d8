"""Host microseconds per kernel launch of real calls: what a call costs beside its kernels.

    python bench/launch_overhead.py [--device pocl] [--repeats 7]
    python bench/launch_overhead.py --before /tmp/before [--rounds 3]   # two source trees

For STL robust 512 x 368 (period 12; and with the fused STL forced, 16 launches: on a CPU
slower kernels, see docs/stl.md), the tridiagonal solve 20,000 x 115 (numpy and pyopencl
arrays), the TKE step (2^16, numpy and pyopencl arrays) and the matrix profile of 2^14 points
(m = 128): launches per call, wall, kernel sum (OpenCL profiling), and the host cost per launch
two ways, each the best of ``--repeats`` warm calls:

- ``(wall - kernels) / launches``: what the H100 run measured. On a CPU driver the kernels share
  the cores with the host thread, so this mixes in contention;
- ``host cpu / launches``: the calling thread's CPU time (``time.thread_time``) over the call,
  divided by its launches: everything the thread did (validation, planning, argument setting,
  enqueues, numpy work around the kernels), an upper bound of the cost per launch.

The marginal cost of a launch: the same STL call with 15 and with 5 outer iterations, the
difference of host CPU time over the difference of launches (the enqueue path alone).

Then the floor of the driver and pyopencl on the same device: one enqueue of a tiny kernel
whose arguments were set once, and the same with two numpy-scalar arguments set each time
through pyopencl's ``set_args`` and through clts's launch path.

``--before DIR`` runs the same table under another source tree of clts (a ``git worktree`` of
the commit before a change) in fresh processes, alternating with this tree, ``--rounds`` times,
and prints both sides (medians over rounds).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def workloads(dev):
    import clts
    import pyopencl.array as cla
    from clts.ocean.inputs import benchmark_inputs
    rng = np.random.default_rng(0)
    y = np.sin(2 * np.pi * np.arange(368) / 12)[None] + rng.normal(size=(512, 368))
    a, c, d = (rng.random((20000, 115)) for _ in range(3))
    b = 3 + rng.random((20000, 115))
    da, db, dc, dd = (cla.to_device(dev.queue, v) for v in (a, b, c, d))
    x = benchmark_inputs(2 ** 16)
    dx = {k: cla.to_device(dev.queue, np.ascontiguousarray(v)) if isinstance(v, np.ndarray)
          else v for k, v in x.items()}
    T = np.cumsum(rng.standard_normal(2 ** 14))
    return [
        ("STL robust 512 x 368, period 12",
         lambda: clts.stl(y, 12, robust=True, device=dev, progress=False)),
        ("STL robust 512 x 368, period 12, fused (forced)",
         lambda: clts.stl(y, 12, robust=True, device=dev, progress=False, fused=64)),
        ("tridiagonal 20,000 x 115", lambda: clts.solve_tridiagonal(a, b, c, d, device=dev)),
        ("tridiagonal 20,000 x 115, device arrays",
         lambda: clts.solve_tridiagonal(da, db, dc, dd, device=dev)),
        ("TKE 2^16", lambda: clts.ocean.tke(*x.values(), device=dev)),
        ("TKE 2^16, device arrays", lambda: clts.ocean.tke(*dx.values(), device=dev)),
        ("matrix profile 2^14, m = 128",
         lambda: clts.matrix_profile(T, 128, device=dev, progress=False)),
    ]


def measure(dev, repeats: int) -> dict:
    from clts.runtime import timing
    out = {}
    for name, run in workloads(dev):
        try:
            run()                               # builds, pools
        except TypeError:                       # a tree without that keyword (fused=)
            continue
        dev.queue.finish()
        best = None
        for _ in range(repeats):
            c0, t0 = time.thread_time(), time.perf_counter()
            with timing(dev) as t:
                run()
            wall, cpu = time.perf_counter() - t0, time.thread_time() - c0
            n = max(1, len(t.events))
            r = dict(launches=len(t.events), wall_ms=wall * 1e3, kernel_ms=t.kernel_seconds * 1e3,
                     gap_us=(wall - t.kernel_seconds) / n * 1e6, cpu_us=cpu / n * 1e6)
            if best is None or r["wall_ms"] < best["wall_ms"]:
                best = r
            best["cpu_us"] = min(best["cpu_us"], r["cpu_us"])
        out[name] = best
    out["marginal"] = marginal(dev, repeats)
    out["floor"] = floor(dev)
    return out


def marginal(dev, repeats: int) -> dict:
    """The host cost of one more launch of the same call: STL robust 512 x 368 with 15 and
    with 5 outer iterations (the same work per launch, 10 x (2 inner iterations + weights)
    more launches), the difference of the calling thread's CPU time over the difference of
    launches (best of ``repeats`` each): what the enqueue path costs, without the call's fixed
    work."""
    import clts
    from clts.runtime import timing
    rng = np.random.default_rng(0)
    y = np.sin(2 * np.pi * np.arange(368) / 12)[None] + rng.normal(size=(512, 368))
    got = {}
    for outer in (5, 15):
        def run():
            return clts.stl(y, 12, robust=True, outer_iter=outer, device=dev, progress=False)
        run()
        best, n = np.inf, 0
        for _ in range(repeats):
            c0 = time.thread_time()
            with timing(dev) as t:
                run()
            best, n = min(best, time.thread_time() - c0), len(t.events)
        got[outer] = (best, n)
    (c5, n5), (c15, n15) = got[5], got[15]
    return dict(launches=n15 - n5, us=(c15 - c5) / max(1, n15 - n5) * 1e6)


SRC = "__kernel void k(__global float *a, int n, float s) { if (get_global_id(0) < n) a[0] = s; }"


def floor(dev, n: int = 5000) -> dict:
    """µs per enqueue of a tiny kernel (a buffer and two numpy scalars): arguments set once;
    set by pyopencl's set_args each time; through clts's ``launch``; a prepared launch."""
    import importlib

    import pyopencl as cl
    from clts.runtime.programs import Program
    L = importlib.import_module("clts.runtime.launch")
    prg = Program(cl.Program(dev.context, SRC).build(), "bench", {}, SRC)
    k = cl.Kernel(prg.cl_program, "k")
    buf = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, 4096)
    args = (buf, np.int32(0), np.float32(1))
    k.set_args(*args)
    q = dev.queue
    res = {}

    def clock(name, fn):
        for _ in range(200):
            fn()
        q.finish()
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        res[name] = (time.perf_counter() - t0) / n * 1e6
        q.finish()
    clock("enqueue, arguments set once", lambda: cl.enqueue_nd_range_kernel(q, k, (16,), None))
    clock("pyopencl set_args + enqueue",
          lambda: (k.set_args(*args), cl.enqueue_nd_range_kernel(q, k, (16,), None)))
    shared = prg.kernel("k")
    clock("clts launch()", lambda: L.launch(dev, shared, 16, None, *args))
    if hasattr(L, "prepare"):
        p = L.prepare(dev, prg, "k", 16, None, *args)
        clock("clts prepared launch", p)
    return res


def child(tree: str, device, repeats: int) -> dict:
    env = dict(os.environ, PYTHONPATH=tree + os.pathsep + str(HERE))
    code = ("import json, sys; sys.path.insert(0, %r); sys.path.insert(0, %r); "
            "import launch_overhead as lo, clts; from common import quiet; quiet(); "
            "print(json.dumps(lo.measure(clts.get_device(%r), %d)))"
            % (str(HERE), tree, device, repeats))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                       cwd=tree)
    if r.returncode:
        raise SystemExit(f"{tree}: {r.stderr[-2000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default=None)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3, help="with --before")
    ap.add_argument("--before", default=None, help="another source tree of clts")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(HERE.parent))
    sys.path.insert(0, str(HERE))
    from common import machine_line, quiet
    quiet()
    import clts
    dev = clts.get_device(args.device)
    print(f"# host cost per kernel launch: {machine_line(dev)}\n")
    if args.before is None:
        res = measure(dev, args.repeats)
        print("| call | launches | wall ms | kernels ms | (wall - kernels) / launch µs | "
              "host cpu / launch µs |")
        print("|---|---|---|---|---|---|")
        for name, r in res.items():
            if name not in ("floor", "marginal"):
                print(f"| {name} | {r['launches']} | {r['wall_ms']:.2f} | {r['kernel_ms']:.2f} "
                      f"| {r['gap_us']:.1f} | {r['cpu_us']:.1f} |")
        m = res["marginal"]
        print(f"\nSTL robust 512 x 368, 15 against 5 outer iterations: {m['launches']} more "
              f"launches, {m['us']:.1f} µs of host CPU per launch")
        print("\n| enqueue of a tiny kernel | µs |\n|---|---|")
        for name, v in res["floor"].items():
            print(f"| {name} | {v:.2f} |")
        return
    sides = {"before": [], "after": []}
    after = str(HERE.parent)
    for _ in range(args.rounds):
        for side, tree in (("before", args.before), ("after", after)):
            sides[side].append(child(os.path.abspath(tree), args.device or dev.slug,
                                     args.repeats))

    def med(side, name, key):
        return statistics.median(r[name][key] for r in sides[side])
    print(f"before: {args.before}; after: {after}; {args.rounds} rounds, best of "
          f"{args.repeats} calls each, medians over rounds\n")
    print("| call | launches before / after | wall ms before / after | kernels ms before / "
          "after | (wall - kernels) / launch µs before / after | host cpu / launch µs "
          "before / after |")
    print("|---|---|---|---|---|---|")
    for name in sides["after"][0]:
        if name in ("floor", "marginal") or name not in sides["before"][0]:
            continue
        cells = []
        for key, fmt in (("launches", "{:.0f}"), ("wall_ms", "{:.2f}"), ("kernel_ms", "{:.2f}"),
                         ("gap_us", "{:.1f}"), ("cpu_us", "{:.1f}")):
            cells.append(f"{fmt.format(med('before', name, key))} / "
                         f"{fmt.format(med('after', name, key))}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    mb, ma = (statistics.median(r["marginal"]["us"] for r in sides[k] if "marginal" in r)
              for k in ("before", "after"))
    print(f"\nSTL robust 512 x 368, 15 against 5 outer iterations: host CPU per additional "
          f"launch {mb:.1f} µs before, {ma:.1f} µs after")
    print("\n| enqueue of a tiny kernel | µs before / after |\n|---|---|")
    for name in sides["after"][0]["floor"]:
        b = [r["floor"][name] for r in sides["before"] if name in r["floor"]]
        a = statistics.median(r["floor"][name] for r in sides["after"])
        print(f"| {name} | {statistics.median(b):.2f} / {a:.2f} |" if b
              else f"| {name} | - / {a:.2f} |")


if __name__ == "__main__":
    main()
