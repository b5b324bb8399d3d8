"""Benchmark clts.solve_tridiagonal against numpy, LAPACK dgtsv and numba.

    python bench/bench_tridiag.py [--quick] [--device D] [--dtype float64|float32]

Shapes: 50,000 x 115 natural (system axis last) and interleaved (system axis first),
1,000 x 1,000, 10 x 10^6. Device data are resident (uploaded once); clts times are the sum of
the kernels' OpenCL profiling intervals, median of repeats (and their minimum: the machine
may be shared). GB/s counts a, b, c, d read once and x written once. The copy kernel runs in
every round next to the solvers: `% copy` is the median over rounds of a solver's GB/s over
the copy's GB/s of the same round (host memory bandwidth drifts on a shared machine, so a copy
figure taken once before the solvers skews the ratio); `copy GB/s` is its median.
Anchors (host, wall time, median): numpy Thomas vectorised over the batch on the interleaved
layout, one dgtsv call on the whole batch as a single block-diagonal system, numba parallel
Thomas when numba is installed (``--quick``: one timed run each, no warm-up but numba's
compile). A row `stream a+b+c+d -> x (ceiling)` times a kernel that
moves the solver's bytes with no arithmetic (the memory-bound ceiling of any solver here).
Writes bench/results/tridiag-<device slug>.md.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import copy_kernel, median_time, write_result  # noqa: E402

import clts  # noqa: E402
from clts.runtime import all_devices, get_device, timing  # noqa: E402
from clts.tridiag import VERSIONS, solve_tridiagonal  # noqa: E402
from clts.tridiag.reference import thomas_numpy_interleaved  # noqa: E402

SHAPES = [(50_000, 115, "natural"), (50_000, 115, "interleaved"), (1_000, 1_000, "natural"),
          (10, 1_000_000, "natural")]
QUICK = [(10_000, 115, "natural"), (10_000, 115, "interleaved"), (200, 1_000, "natural"),
         (4, 250_000, "natural")]


def systems(batch, n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (batch, n))
    c = rng.uniform(-1, 1, (batch, n))
    b = np.abs(a) + np.abs(c) + rng.uniform(0.5, 2, (batch, n))
    d = rng.standard_normal((batch, n))
    return [v.astype(dtype) for v in (a, b, c, d)]


# -- anchors ---------------------------------------------------------------------------------
def numpy_interleaved(at, bt, ct, dt):
    return thomas_numpy_interleaved(at, bt, ct, dt)


def dgtsv_flat(a, b, c, d):
    """One LAPACK call: the batch as one block-diagonal system (couplings zeroed)."""
    from scipy.linalg.lapack import dgtsv, sgtsv
    f = dgtsv if a.dtype == np.float64 else sgtsv
    dl = a.copy()
    dl[:, 0] = 0
    du = c.copy()
    du[:, -1] = 0
    return f(dl.reshape(-1)[1:], b.reshape(-1), du.reshape(-1)[:-1], d.reshape(-1),
             overwrite_dl=True, overwrite_du=True, overwrite_d=True)[3]


def numba_solvers():
    try:
        import numba
    except ImportError:
        return None

    @numba.njit(parallel=True, fastmath=False, cache=True)
    def interleaved(a, b, c, d, x, cp):
        n, nsys = b.shape
        block = 64
        nblocks = (nsys + block - 1) // block
        for blk in numba.prange(nblocks):
            s0 = blk * block
            s1 = min(nsys, s0 + block)
            for s in range(s0, s1):
                den = b[0, s]
                cp[0, s] = c[0, s] / den
                x[0, s] = d[0, s] / den
            for k in range(1, n):
                for s in range(s0, s1):
                    den = b[k, s] - a[k, s] * cp[k - 1, s]
                    cp[k, s] = c[k, s] / den
                    x[k, s] = (d[k, s] - a[k, s] * x[k - 1, s]) / den
            for k in range(n - 2, -1, -1):
                for s in range(s0, s1):
                    x[k, s] = x[k, s] - cp[k, s] * x[k + 1, s]

    @numba.njit(parallel=True, cache=True)
    def natural(a, b, c, d, x, cp):
        nsys, n = b.shape
        for s in numba.prange(nsys):
            den = b[s, 0]
            cp[s, 0] = c[s, 0] / den
            x[s, 0] = d[s, 0] / den
            for k in range(1, n):
                den = b[s, k] - a[s, k] * cp[s, k - 1]
                cp[s, k] = c[s, k] / den
                x[s, k] = (d[s, k] - a[s, k] * x[s, k - 1]) / den
            for k in range(n - 2, -1, -1):
                x[s, k] = x[s, k] - cp[s, k] * x[s, k + 1]

    return {"natural": natural, "interleaved": interleaved}


STREAM_SRC = """
%s
__kernel void stream5(__global const REAL8 *a, __global const REAL8 *b, __global const REAL8 *c,
                      __global const REAL8 *d, __global REAL8 *x, const long n8)
{
    const size_t i = get_global_id(0);
    if (i < n8) x[i] = a[i] + b[i] + c[i] + d[i];
}
"""


def stream_ceiling(dev, dv, out):
    """Kernel time of the pure stream of the solver's traffic: a, b, c, d read once, x written
    once, no arithmetic dependency (x = a + b + c + d, 8 lanes per work-item): the ceiling."""
    import pyopencl as cl
    from clts.runtime import launch
    head = ("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#define REAL8 double8"
            if out.dtype == np.float64 else "#define REAL8 float8")
    k = cl.Program(dev.context, STREAM_SRC % head).build().stream5
    n8 = out.size // 8    # a tail of < 8 items left out of the count below
    go = lambda: launch(dev, k, -(-n8 // 64) * 64, 64, *[v.data for v in dv], out.data,
                        np.int64(n8))
    return go, 5 * n8 * 8 * out.dtype.itemsize


def bench_device(dev, shapes, dtype, repeats, nb, anchor_repeats=3):
    import pyopencl.array as cla
    copy_run, copy_bytes = copy_kernel(dev)
    print(f"\n{dev.slug}", flush=True)
    rows, copies = [], []
    for batch, n, layout in shapes:
        host = systems(batch, n, dtype)
        inter = [np.ascontiguousarray(v.T) for v in host]
        nbytes = 5 * batch * n * np.dtype(dtype).itemsize
        data = inter if layout == "interleaved" else host
        axis = 0 if layout == "interleaved" else -1
        dv = [cla.to_device(dev.queue, v) for v in data]
        out = cla.empty_like(dv[1])
        ref = numpy_interleaved(*inter).T
        shape = f"{batch:,} x {n:,} {layout}"

        def row(name, seconds, err=float("nan"), kind="clts", best=float("nan"), pct=None):
            if pct is None:    # host anchors: against the median copy of this shape's rounds
                pct = 100 * nbytes / seconds / 1e9 / bw
            r = {"shape": shape, "solver": name, "ms": seconds * 1e3, "min ms": best * 1e3,
                 "systems/s": batch / seconds, "GB/s": nbytes / seconds / 1e9,
                 "% copy": pct, "max rel err": err}
            rows.append(r)
            print(f"  {shape:28s} {name:26s} {seconds * 1e3:9.2f} ms {r['GB/s']:7.1f} GB/s "
                  f"{r['% copy']:5.0f}%", flush=True)
            return r

        # warm every version, then time them round-robin (a loaded machine slows all alike)
        fns, names = {}, {}
        for method in ("auto",) + VERSIONS:
            if method == "thomas-unrolled" and n > 128:
                continue
            if method == "pcr" and n > 1024:
                continue
            fn = (lambda m=method: solve_tridiagonal(*dv, axis=axis, version=m, out=out,
                                                      device=dev))
            try:
                r = fn()
                dev.queue.finish()
            except Exception as exc:  # a version that cannot run this shape
                print(f"  {shape:28s} {method:26s} skipped: {exc}")
                continue
            x = out.get()
            x = x.T if layout == "interleaved" else x
            fns[method] = (fn, float(np.max(np.abs(x - ref)) / np.max(np.abs(ref))))
            names[method] = f"auto ({r.method})" if method == "auto" else method
        go, sbytes = stream_ceiling(dev, dv, out)
        go()
        fns["copy"] = (copy_run, None)
        fns["stream"] = (go, None)
        samples = {m: [] for m in fns}
        order = list(fns)
        for rep in range(repeats):
            # round-robin, the starting version rotated each round: no version always runs
            # right after the same other one (caches, pooled scratch, a neighbour's load)
            for m in order[rep % len(order):] + order[:rep % len(order)]:
                with timing(dev) as t:
                    fns[m][0]()
                samples[m].append(t.kernel_seconds)
        copy_gbs = [copy_bytes / t / 1e9 for t in samples.pop("copy")]
        bw = statistics.median(copy_gbs)
        copies.append(bw)
        print(f"  {shape:28s} copy kernel {bw:.1f} GB/s (median of the rounds)")
        ts = samples.pop("stream")
        del fns["copy"], fns["stream"]
        results = {m: statistics.median(v) for m, v in samples.items()}

        def pct(times, nb=nbytes):
            return 100 * statistics.median(nb / t / 1e9 / cb for t, cb in zip(times, copy_gbs))
        for m in fns:
            row(names[m], results[m], fns[m][1], best=min(samples[m]), pct=pct(samples[m]))
        best = min(v for k, v in results.items() if k != "auto")
        rows[-len(results)]["auto / best"] = results["auto"] / best
        rows[-len(results)]["auto / best (min)"] = (
            min(samples["auto"]) / min(min(v) for k, v in samples.items() if k != "auto"))
        row("stream a+b+c+d -> x (ceiling)", statistics.median(ts) * nbytes / sbytes,
            kind="ceiling", best=min(ts) * nbytes / sbytes, pct=pct(ts, sbytes))
        rows[-1]["copy GB/s"] = bw
        # anchors: host wall time
        t_np = median_time(lambda: numpy_interleaved(*inter), repeats=anchor_repeats,
                           warmup=int(anchor_repeats > 1))
        row("numpy Thomas (interleaved)", t_np, kind="anchor")
        rows[-1]["clts auto speed-up"] = t_np / results["auto"]
        # the whole call, wall time: numpy in and out (a fresh result, and out=) against the
        # same call on device arrays, alternated
        host_out = np.empty_like(data[1])
        calls = {"device": lambda: (solve_tridiagonal(*dv, axis=axis, out=out, device=dev),
                                    dev.queue.finish()),
                 "numpy": lambda: solve_tridiagonal(*data, axis=axis, device=dev),
                 "numpy out": lambda: solve_tridiagonal(*data, axis=axis, out=host_out,
                                                        device=dev)}
        walls = {k: [] for k in calls}
        for f in calls.values():
            f()
        for rep in range(max(3, repeats // 2)):
            for k, f in calls.items():
                t0 = time.perf_counter()
                f()
                walls[k].append(time.perf_counter() - t0)
        wall = {k: statistics.median(v) for k, v in walls.items()}
        row("call on device arrays (wall)", wall["device"], kind="call")
        for k, name in (("numpy", "call numpy in / out (wall)"),
                        ("numpy out", "call numpy in, out= (wall)")):
            row(name, wall[k], kind="call")
            rows[-1]["numpy / device call"] = wall[k] / wall["device"]
            rows[-1]["numpy Thomas / this"] = t_np / wall[k]
        if dtype == np.float64 or True:
            t_la = median_time(lambda: dgtsv_flat(*host), repeats=anchor_repeats,
                               warmup=int(anchor_repeats > 1))
            row("dgtsv (one flattened call)", t_la, kind="anchor")
            rows[-1]["clts auto speed-up"] = t_la / results["auto"]
        if nb is not None:
            x = np.empty_like(data[1])
            cp = np.empty_like(data[1])
            f = nb[layout]
            f(*data, x, cp)
            t_nb = median_time(lambda: f(*data, x, cp), repeats=anchor_repeats)
            row(f"numba parallel Thomas ({layout})", t_nb, kind="anchor")
            rows[-1]["clts auto speed-up"] = t_nb / results["auto"]
    return statistics.median(copies), rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="smaller shapes, fewer repeats")
    p.add_argument("--device", help="device index / name substring / slug (default: all)")
    p.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    args = p.parse_args(argv)
    dtype = np.dtype(args.dtype).type
    shapes = QUICK if args.quick else SHAPES
    repeats = 3 if args.quick else 11
    nb = numba_solvers()
    devs = [get_device(args.device)] if args.device else all_devices()
    for dev in devs:
        bw, rows = bench_device(dev, shapes, dtype, repeats, nb, 1 if args.quick else 3)
        notes = (f"clts {clts.__version__}, {args.dtype}{', --quick' if args.quick else ''}; "
                 f"device copy kernel {bw:.1f} GB/s (bytes read + written; median over "
                 f"shapes of the per-shape medians), timed in every round next to the "
                 f"solvers: `% copy` is the median over rounds of GB/s / that round's copy "
                 f"GB/s (anchor rows: against the median copy). "
                 f"clts rows: kernel time (OpenCL profiling), data resident on the "
                 f"device. Anchor rows: host wall time. `auto / best`: auto's time over the "
                 f"fastest forced version (medians; `(min)`: fastest repeats). "
                 f"`min ms`: the fastest repeat. `call ...` rows: wall time of the whole "
                 f"public call (device arrays with out=; numpy in and a fresh numpy result; numpy "
                 f"in with a numpy out=), alternated; `numpy / device call` their ratio. "
                 f"`stream a+b+c+d -> x`: the same bytes moved by a kernel with no "
                 f"arithmetic (the ceiling). `clts auto speed-up`: anchor time / clts auto "
                 f"time.\n\nCommand: `python bench/bench_tridiag.py"
                 f"{' --quick' if args.quick else ''}"
                 f"{' --dtype ' + args.dtype if args.dtype != 'float64' else ''}`\n")
        path = write_result("tridiag", dev, f"Batched tridiagonal solvers on {dev.slug}",
                            rows, notes)
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
