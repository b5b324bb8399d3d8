"""Host time of the device-array calls of clts (STL, BFAST-Monitor, the trend test, the
matrix profile, MASS, the multi-dimensional profile, a streaming profile's one-point update,
the tridiagonal solve, TKE).

    python bench/device_host_time.py [--device pocl] [--calls 40] [--rounds 3]
                                     [--against DIR] [--emulate h100] [--held]
                                     [--only stl,mstl,bfast,breaks,trend,mp,mass,mstump,stumpi,tri,tke]

With device arrays in and out a call only enqueues its kernels and returns; on a GPU every
microsecond of Python between two launches is a microsecond the GPU idles (span > kernel sum).
Per workload: the host time of one call (from the call to its return, the queue drained before
each call; minimum and median over ``--calls`` calls), the launches it makes (its kernels,
``clts.runtime.timing``), the host time per launch, the kernel sum and the span of one call (the
least span of 5 calls);
and, as the floor, pyopencl's enqueue of a tiny kernel whose arguments were set once.

``--against DIR``: another checkout of clts (e.g. ``git worktree add /tmp/base main``) timed
in the same rounds, each round a fresh process per tree, the trees alternating (the machine is
shared: its speed drifts); reported: per tree the minimum of the rounds' minima and medians.
``--held``: also the host time of calls made while the queue is held by a user event (nothing
runs until all are made): on a CPU device a launch onto an idle queue wakes the driver's worker
threads, which then share the 2 cores with the calling thread, so the plain figure mixes the
kernels into the host time; held, it is the call's own (Python and the driver's enqueue), as
on a GPU, whose kernels take no host core.
``--emulate NAME``: the recorded GPU description NAME (clts/devices/emulated) over the pocl
device: the Plans a GPU gets (transposes, launch counts), run on pocl.
Writes bench/results/device-host-time-<device slug>.md.
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

HERE = Path(__file__).resolve()

#: (label, kind, size): TKE problem sizes as pyhpc-benchmarks defines them; tridiagonal
#: (systems, n) float64, natural layout; STL (series, length) float32 with a missing date,
#: period 12; BFAST-Monitor (dates, pixels) float32, history half the dates; the trend test
#: (series, length) float32; the matrix profile and MASS: float64 series of that length,
#: window 64; ``mstump``: (dimensions, length) float64 random walks, window 64; MSTL:
#: (series, length) float32 with a missing date, periods 12 and 24; ``bfast_breaks``: (dates,
#: pixels) float32, half the pixels with a break mid-way, two breaks at most; ``stumpi``:
#: one point (a device array) appended to a stream of that many float64
#: points, window 50, applied at once (``lazy_points=1``)
WORKLOADS = [("stl 64 x 96", "stl", (64, 96)), ("stl robust 64 x 96", "stl-robust", (64, 96)),
             ("mstl 64 x 96, periods 12, 24", "mstl", (64, 96)),
             ("bfast_monitor 128 x 256", "bfast", (128, 256)),
             ("bfast_breaks 128 x 64, breaks 2", "breaks", (128, 64)),
             ("trend_test 64 x 100", "trend", (64, 100)),
             ("matrix_profile 2,048 m 64", "mp", 2048), ("mass 64 in 2,048", "mass", 2048),
             ("mstump 3 x 1,024 m 64", "mstump", (3, 1024)),
             ("stumpi update, 5,000 m 50", "stumpi", 5000),
             ("tke 2^12", "tke", 2 ** 12), ("tke 2^16", "tke", 2 ** 16),
             ("tridiag 2,000 x 15", "tri", (2000, 15)), ("tridiag 200 x 115", "tri", (200, 115)),
             ("tridiag 20,000 x 115", "tri", (20000, 115))]


def _device(name, emulate):
    from clts.runtime import get_device
    dev = get_device(name)
    if emulate:
        from clts.runtime import emulation
        dev = emulation.emulate(emulate, dev.info)
    return dev


def _call(dev, kind, size):
    import pyopencl.array as cla
    import clts
    q = dev.queue
    if kind == "tke":
        from clts.ocean.inputs import benchmark_inputs
        x = benchmark_inputs(size)
        x["kbot"] = x["kbot"].astype(np.int32)     # a model keeps kbot as int32 on the device
        dx = [cla.to_device(q, np.ascontiguousarray(v)) for v in x.values()]
        return lambda: clts.ocean.tke(*dx, device=dev)
    rng = np.random.default_rng(0)
    if kind in ("stl", "stl-robust"):
        y = rng.standard_normal(size).astype(np.float32)
        y[:, 5] = np.nan
        dy = cla.to_device(q, y)
        return lambda: clts.stl(dy, period=12, robust=kind == "stl-robust", device=dev)
    if kind == "mstl":
        y = (rng.standard_normal(size) + np.sin(np.arange(size[1]) * np.pi / 6)).astype(np.float32)
        y[:, 5] = np.nan
        dy = cla.to_device(q, y)
        return lambda: clts.mstl(dy, periods=(12, 24), device=dev)
    if kind == "breaks":
        N, M = size
        y = rng.standard_normal(size).astype(np.float32)
        y[N // 2:, ::2] += 3
        dy = cla.to_device(q, y)
        return lambda: clts.bfast_breaks(dy, np.arange(float(N)), breaks=2, freq=16,
                                         device=dev, progress=False)
    if kind == "bfast":
        N, M = size
        dy = cla.to_device(q, rng.standard_normal(size).astype(np.float32))
        dates = np.arange(float(N))
        return lambda: clts.bfast_monitor(dy, dates, N / 2, freq=16, device=dev)
    if kind == "trend":
        dy = cla.to_device(q, rng.standard_normal(size).astype(np.float32))
        return lambda: clts.trend_test(dy, device=dev)
    if kind == "mstump":
        dT = cla.to_device(q, np.cumsum(rng.standard_normal(size), axis=1))
        return lambda: clts.mstump(dT, 64, device=dev)
    if kind == "stumpi":
        s = clts.stumpi(cla.to_device(q, rng.standard_normal(size)), 50, device=dev,
                        lazy_points=1)
        pt = cla.to_device(q, rng.standard_normal(1))
        return lambda: s.update(pt)
    if kind in ("mp", "mass"):
        t = rng.standard_normal(size)
        dt_ = cla.to_device(q, t)
        if kind == "mp":
            return lambda: clts.matrix_profile(dt_, 64, device=dev)
        dq = cla.to_device(q, t[100:164].copy())
        return lambda: clts.mass(dq, dt_, device=dev)
    nsys, n = size
    a, c, d = rng.standard_normal((3, nsys, n))
    b = 4 + np.abs(a) + np.abs(c)
    da = [cla.to_device(q, v) for v in (a, b, c, d)]
    return lambda: clts.solve_tridiagonal(*da, device=dev)


def _floor(dev, calls):
    """pyopencl's enqueue of a one-work-item kernel whose arguments were set once (µs)."""
    import pyopencl as cl
    prg = cl.Program(dev.context, "__kernel void k(__global int *p) { p[0] = 1; }").build()
    k = prg.k
    buf = cl.Buffer(dev.context, cl.mem_flags.READ_WRITE, 64)
    k.set_args(buf)
    ts = []
    for _ in range(calls):
        dev.queue.finish()
        t = time.perf_counter()
        cl.enqueue_nd_range_kernel(dev.queue, k, (1,), None)
        ts.append(time.perf_counter() - t)
    dev.queue.finish()
    return min(ts) * 1e6, statistics.median(ts) * 1e6


def _held(dev, f, calls):
    """Host times of ``calls`` calls made while the queue is held by a user event: nothing
    runs meanwhile, so on a CPU device the kernels take no core from the calling thread (as
    a GPU's do not) and the time is the call's own (Python and the driver's enqueues)."""
    import pyopencl as cl
    gate = cl.UserEvent(dev.context)
    cl.enqueue_barrier(dev.queue, wait_for=[gate])
    ts = []
    try:
        for _ in range(calls):
            t = time.perf_counter()
            r = f()
            ts.append(time.perf_counter() - t)
            del r
    finally:
        gate.set_status(cl.command_execution_status.COMPLETE)
        dev.queue.finish()
    return ts


def _workloads(only):
    """The workloads ``--only`` names (kinds, comma-separated; "tri" for the tridiagonal,
    "stl" for both STL calls), all without it."""
    if not only:
        return WORKLOADS
    kinds = set(only.split(","))
    return [w for w in WORKLOADS if w[1] in kinds or w[1].split("-")[0] in kinds]


def worker(args):
    """One round in this process: {label: {min, median, launches, kernel, span}}."""
    from clts.runtime import timing
    dev = _device(args.device, args.emulate)
    out = {"floor": _floor(dev, args.calls), "device": str(dev), "slug": dev.slug}
    for label, kind, size in _workloads(args.only):
        f = _call(dev, kind, size)
        for _ in range(3):
            f()
        dev.queue.finish()
        ts = []
        for _ in range(args.calls):
            dev.queue.finish()
            t = time.perf_counter()
            r = f()
            ts.append(time.perf_counter() - t)
        dev.queue.finish()
        del r
        held = _held(dev, f, args.calls) if args.held else []
        spans = []
        for _ in range(5):               # one call's kernels and span, the least of 5
            with timing(dev) as tm:
                f()
            spans.append((tm.span_seconds, tm.kernel_seconds, len(tm.events)))
        span, kernel, launches = min(spans)
        out[label] = {"min": min(ts) * 1e6, "median": statistics.median(ts) * 1e6,
                      "held_min": min(held) * 1e6 if held else None,
                      "held_median": statistics.median(held) * 1e6 if held else None,
                      "launches": launches, "kernel": kernel * 1e6, "span": span * 1e6}
    return out


def _round(tree, args):
    cmd = [sys.executable, str(HERE), "--worker", "--device", args.device, "--calls",
           str(args.calls)] + (["--emulate", args.emulate] if args.emulate else []) + (
           ["--held"] if args.held else []) + (["--only", args.only] if args.only else [])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(tree)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    res = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="pocl")
    p.add_argument("--calls", type=int, default=40)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--against", help="another clts checkout timed in the same rounds")
    p.add_argument("--emulate", help="a recorded GPU description over the device (e.g. h100)")
    p.add_argument("--held", action="store_true",
                   help="also time calls made while the queue is held (nothing runs: on a CPU "
                        "device the host time without the kernels competing for its cores)")
    p.add_argument("--only", help="workload kinds, comma-separated (stl, mstl, bfast, breaks, trend, "
                                  "mp, stumpi, mass, mstump, tke, tri)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        sys.path.insert(0, os.getcwd())
        print(json.dumps(worker(args)))
        return 0
    trees = {"this tree": HERE.parents[1]}
    if args.against:
        trees = {"against": Path(args.against).resolve(), **trees}
    runs = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            runs[name].append(_round(tree, args))
    rows = []
    for label in ["floor"] + [w[0] for w in _workloads(args.only)]:
        for name, rs in runs.items():
            if label == "floor":
                rows.append({"workload": "pyopencl enqueue, arguments set once", "tree": name,
                             "host us/call (min)": f"{min(r['floor'][0] for r in rs):.0f}",
                             "host us/call (median)": f"{min(r['floor'][1] for r in rs):.0f}",
                             "launches": 1})
                continue
            best = min(rs, key=lambda r: r[label]["min"])[label]
            med = min(r[label]["median"] for r in rs)
            rows.append({"workload": label, "tree": name,
                         "host us/call (min)": f"{best['min']:.0f}",
                         "host us/call (median)": f"{med:.0f}",
                         "launches": best["launches"],
                         "host us/launch": f"{best['min'] / max(1, best['launches']):.0f}",
                         **({"held us/call (min / median)": (
                             f"{min(r[label]['held_min'] for r in rs):.0f} / "
                             f"{min(r[label]['held_median'] for r in rs):.0f}")}
                            if args.held else {}),
                         "kernels us": f"{best['kernel']:.0f}", "span us": f"{best['span']:.0f}"})
    first = next(iter(runs.values()))[0]
    sys.path.insert(0, str(HERE.parent))
    from common import markdown_table
    title = "Host time of device-array calls"
    text = (f"# {title}\n\n{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; device "
            f"{first['device']}{' (emulated ' + args.emulate + ')' if args.emulate else ''}; "
            f"{args.rounds} rounds x {args.calls} calls; trees: "
            + ", ".join(f"{k} = {v}" for k, v in trees.items()) + "\n\n" + markdown_table(rows))
    print(text)
    results = HERE.parent / "results"
    results.mkdir(exist_ok=True)
    slug = first["slug"]             # an emulated device's slug names it (emulated-<name>)
    part = f"-{args.only.replace(',', '-')}" if args.only else ""     # a partial run: beside
    (results / f"device-host-time-{slug}{part}.md").write_text(text)      # the full table
    return 0


if __name__ == "__main__":
    sys.exit(main())
