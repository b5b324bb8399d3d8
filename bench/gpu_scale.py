"""The seed-scale table of a GPU: wall time against kernel time and the PCIe bound, per call.

    python bench/gpu_scale.py [--device gpu] [--scale 1] [--quick] [--json FILE] [--md FILE]
                              [--only stl,tridiag,...] [--link-gbps 54] [--budget 200]
    python bench/gpu_scale.py --compare BEFORE.jsonl AFTER.jsonl    # side by side

One process, every workload below at full size (``--scale 1``, about 1-2 minutes on an H100;
``--scale 0.01`` runs the same calls at 1 % of the series / pixels / systems / points, e.g. on
pocl):

- STL 100,000 x 828, period 23, windows 25/39/25, jumps 3/4/3 (the STL-on-GPUs paper's NDVI
  set), float32 and float64; float32 with ``out=``; robust (inner 2, outer 4) float32; robust
  512 x 368, period 12 (statsmodels' defaults: many small launches);
- BFAST-Monitor 500,000 pixels x 256 dates (every 16 days), float32, 20 % NaN, monitoring from
  the 128th date;
- batched tridiagonal solve 20,000 x 115 float64 and 200,000 x 15 float64;
- the ocean TKE step of pyhpc-benchmarks at problem size 2^20 (its inputs, float64);
- Mann-Kendall / Theil-Sen ``trend_test`` 100,000 x 400 float64;
- matrix profile self-join, 2^18 points, m = 256.

Each with numpy arrays in and numpy out; and with ``pyopencl.array.Array`` inputs uploaded
once (their results stay on the device) where the clts under test takes them: a call that
raises TypeError / ValueError / NotImplementedError on device arrays is recorded
``"unsupported"`` (so the same script runs against older trees of clts: set ``PYTHONPATH`` to
the tree to measure; the line ``device`` names the clts it imported).

Per call: ``first_s`` (the first call: kernel builds, cached or not), ``wall_s`` (best of up to
10 warm calls, fewer for slow calls; ``--quick``: 2), and for that call, from the OpenCL
profiling events of every launch (``clts.runtime.timing``): ``kernel_s`` (sum of the kernels'
intervals), ``span_s`` (first kernel start to last kernel end), ``launches``,
``host_us_per_launch`` ((wall - kernel) / launches); ``bytes`` (the numpy inputs and numpy
results that cross the link; 0 for device arrays), ``bound_s`` (bytes / the link's rate,
``--link-gbps``, 54 GB/s: an H100's pinned PCIe 5 rate), ``goal_s`` = 1.5 ``bound_s`` +
``span_s``, and ``wall_over_goal``.

Anchors in the same process where they import (otherwise their lines say why not):
cuSPARSE ``gtsv2StridedBatch`` through CuPy on device arrays (bench/gpu_anchors.py), with the
largest difference from clts's solution; pyhpc-benchmarks' JAX TKE step on JAX's default device
(bench/tke_jax.py, jit-compiled, ``block_until_ready``); the device's copy bandwidth (clts's
copy kernel); the link with pyopencl: pinned (``ALLOC_HOST_PTR``, mapped) and pageable numpy
memory each way, and numpy into pinned memory from 1, 4 and all host threads.

Output: one JSON line per measurement on stdout (and ``--json FILE``), then a markdown table
(and ``--md FILE``). A workload that fails records its error and the run goes on; one that
would start after ``--budget`` seconds is skipped; an interrupt (Ctrl-C, a timeout's SIGINT)
ends the run with the table of what was measured.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(1, str(HERE))   # bench/ helpers; clts itself comes from PYTHONPATH / site
from gpu_scale_table import compare, table  # noqa: E402

WORKLOADS = ("link", "stl", "bfast", "tridiag", "tke", "trend", "mp")
UNSUPPORTED = (TypeError, ValueError, NotImplementedError, AttributeError)


class Run:
    def __init__(self, args):
        self.args = args
        self.rows = []
        self.t0 = time.perf_counter()
        self.jf = open(args.json, "w") if args.json else None
        self.errors = 0

    def emit(self, section, **kw):
        row = {"section": section, **kw, "t": round(time.perf_counter() - self.t0, 1)}
        self.rows.append(row)
        line = json.dumps(row, default=_plain)
        print(line, flush=True)
        if self.jf:
            self.jf.write(line + "\n")
            self.jf.flush()
        return row

    def over_budget(self) -> bool:
        return time.perf_counter() - self.t0 > self.args.budget


def _plain(v):
    if isinstance(v, np.generic):
        return v.item()
    return str(v)


def sized(n: int, scale: float, floor: int = 1) -> int:
    return max(floor, int(round(n * scale)))


# --- measuring one call -------------------------------------------------------------------

def host_arrays(obj, depth=0):
    """The numpy arrays a call returned (fields of result objects, tuples, dicts)."""
    if isinstance(obj, np.ndarray):
        yield None, obj
    elif depth > 2 or obj is None or type(obj).__module__.startswith("pyopencl"):
        return
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from host_arrays(o, depth + 1)
    elif isinstance(obj, dict):
        for k, o in obj.items():
            for _, a in host_arrays(o, depth + 1):
                yield k, a
    elif hasattr(obj, "__dict__"):
        for k, o in vars(obj).items():
            if k.startswith("_"):
                continue
            for _, a in host_arrays(o, depth + 1):
                yield k, a


def moved_bytes(inputs, result) -> int:
    """Bytes that cross the link: numpy inputs, and numpy results that are not the inputs
    themselves (STL's ``observed`` is the input)."""
    ins = [a for _, a in host_arrays(list(inputs))]
    total = sum(a.nbytes for a in ins)
    seen = set()
    for name, a in host_arrays(result):
        if name == "observed" or id(a) in seen or a.nbytes == 0:
            continue
        seen.add(id(a))
        if any(np.shares_memory(a, b) for b in ins):
            continue
        total += a.nbytes
    return int(total)


def measure(run: Run, dev, fn, inputs, *, repeats=None, per_call_budget=None):
    """first call + best of warm calls: a dict of the figures (see the module docstring)."""
    from clts.runtime import timing
    args = run.args
    repeats = repeats or (2 if args.quick else 10)
    per_call_budget = per_call_budget or (1.5 if args.quick else 4.0)
    with timing(dev) as t:
        res = fn()
    first = t.wall
    nbytes = moved_bytes(inputs, res)
    del res
    best, spent, n = None, 0.0, 0
    while n < repeats and (n < 2 or spent + (best.wall if best else 0) < per_call_budget):
        with timing(dev) as t:
            fn()
        n += 1
        spent += t.wall
        if best is None or t.wall < best.wall:
            best = t
    kernel, span, launches = best.kernel_seconds, best.span_seconds, len(best.events)
    bound = nbytes / (args.link_gbps * 1e9)
    goal = 1.5 * bound + span
    return dict(first_s=first, wall_s=best.wall, kernel_s=kernel, span_s=span,
                launches=launches, calls=n,
                host_us_per_launch=(best.wall - kernel) / launches * 1e6 if launches else None,
                wall_over_kernel=best.wall / kernel if kernel else None,
                bytes=nbytes, bound_s=bound, goal_s=goal,
                wall_over_goal=best.wall / goal if goal else None)


def case(run: Run, section, dev, fn, inputs, *, probe=None, **info):
    """Measure ``fn`` and emit its line; anything that fails is an error (the run goes on).

    ``probe``: a device-array call; the same call on a tiny device array, tried first: a clts
    that does not take device arrays refuses it ("unsupported") - some older trees turn a
    device array into a numpy object array element by element, which at full size would take
    hours."""
    device_arrays = probe is not None
    label = dict(info, inputs="device arrays" if device_arrays else "numpy")
    if run.over_budget():
        return run.emit(section, **label, skipped=f"budget of {run.args.budget} s spent")
    try:
        if probe is not None:
            probe()
            dev.queue.finish()
        figs = measure(run, dev, fn, inputs)
    except UNSUPPORTED as exc:
        if device_arrays:
            return run.emit(section, **label, unsupported=f"{type(exc).__name__}: {exc}"[:300])
        return _error(run, section, label, exc)
    except Exception as exc:   # noqa: BLE001 - a failure is a figure of this run
        return _error(run, section, label, exc)
    return run.emit(section, **label, **figs)


def _error(run, section, label, exc):
    run.errors += 1
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)[-4:])
    return run.emit(section, **label, error=f"{type(exc).__name__}: {exc}"[:600], tb=tb[-1500:])


def to_device(dev, *arrays):
    import pyopencl.array as cla
    out = [cla.to_device(dev.queue, np.ascontiguousarray(a)) for a in arrays]
    dev.queue.finish()
    return out


# --- the link and the device's own copies ---------------------------------------------------

def link(run: Run, dev):
    import pyopencl as cl
    from common import copy_bandwidth
    try:
        run.emit("copy_bw", GBps=copy_bandwidth(dev))
    except Exception as exc:   # noqa: BLE001
        _error(run, "copy_bw", {}, exc)
    nbytes = max(16 << 20, int((1 << (29 if run.args.quick else 30)) * min(1.0, run.args.scale)))
    nbytes = min(nbytes, dev.max_alloc // 2)
    ctx, q, mf = dev.context, dev.queue, cl.mem_flags
    dbuf = cl.Buffer(ctx, mf.READ_WRITE, nbytes)
    pageable = np.ones(nbytes, np.uint8)
    pin = cl.Buffer(ctx, mf.READ_WRITE | mf.ALLOC_HOST_PTR, nbytes)
    pinned, _ = cl.enqueue_map_buffer(q, pin, cl.map_flags.READ | cl.map_flags.WRITE, 0,
                                      (nbytes,), np.uint8, is_blocking=True)
    pinned[:] = 1

    def rate(fn, reps=5):
        fn()
        q.finish()
        best = math.inf
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            q.finish()
            best = min(best, time.perf_counter() - t0)
        return nbytes / best / 1e9

    src = np.full(nbytes, 2, np.uint8)

    def fill(threads):
        bounds = np.linspace(0, nbytes, threads + 1).astype(np.int64)
        with ThreadPoolExecutor(threads) as ex:
            def go():
                list(ex.map(lambda i: np.copyto(pinned[bounds[i]:bounds[i + 1]],
                                                src[bounds[i]:bounds[i + 1]]), range(threads)))
            return rate(go)

    cpus = os.cpu_count() or 1
    row = dict(bytes=nbytes, cpus=cpus,
               pageable_h2d_GBps=rate(lambda: cl.enqueue_copy(q, dbuf, pageable)),
               pageable_d2h_GBps=rate(lambda: cl.enqueue_copy(q, pageable, dbuf)),
               pinned_h2d_GBps=rate(lambda: cl.enqueue_copy(q, dbuf, pinned)),
               pinned_d2h_GBps=rate(lambda: cl.enqueue_copy(q, pinned, dbuf)))
    for k in sorted({1, 4, cpus}):
        row[f"host_fill_{k}_threads_GBps"] = fill(k)
    pinned.base.release(q)
    q.finish()
    run.emit("link", **row)


# --- the workloads --------------------------------------------------------------------------

STL_WIN = dict(seasonal=25, trend=39, low_pass=25, seasonal_jump=3, trend_jump=4,
               low_pass_jump=3, inner_iter=2)


def stl_data(batch, n, period, dtype, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    season = 3 * np.sin(2 * np.pi * t / period) + np.cos(4 * np.pi * t / period)
    y = np.empty((batch, n), dtype)
    step = 20000
    for a in range(0, batch, step):
        b = min(batch, a + step)
        y[a:b] = season + 0.002 * t + rng.standard_normal((b - a, n)) + 10 * rng.random((b - a, 1))
    return y


def stl(run: Run, dev):
    import clts
    batch = sized(100_000, run.args.scale, 64)
    y32 = stl_data(batch, 828, 23, np.float32)
    for dtype, robust in ((np.float32, False), (np.float64, False), (np.float32, True)):
        if dtype == np.float64 and not dev.fp64:
            continue
        y = y32 if dtype == np.float32 else y32.astype(dtype)
        kw = dict(STL_WIN, outer_iter=4 if robust else 0, robust=robust, device=dev)
        info = dict(batch=batch, n=828, period=23, dtype=np.dtype(dtype).name,
                    robust=robust, config="C" if robust else "A")
        case(run, "stl", dev, lambda: clts.stl(y, 23, progress=False, **kw), [y], **info)
        if dtype == np.float32 and not robust and not run.args.quick:
            try:    # an earlier result as out=: its arrays are filled again
                first = clts.stl(y, 23, progress=False, **kw)
                case(run, "stl", dev, lambda: clts.stl(y, 23, progress=False, out=first, **kw),
                     [y], **info, out=True)
                del first
            except Exception as exc:  # noqa: BLE001
                _error(run, "stl", dict(info, out=True), exc)
        if dtype == np.float32 and not robust:
            try:
                dy, tiny = to_device(dev, y, y[:4])
                case(run, "stl", dev, lambda: clts.stl(dy, 23, progress=False, **kw), [],
                     probe=lambda: clts.stl(tiny, 23, progress=False, **kw), **info)
            except Exception as exc:  # noqa: BLE001
                _error(run, "stl", dict(info, inputs="device arrays"), exc)
        del y
    small = sized(512, min(1.0, run.args.scale * 10), 16)
    y = stl_data(small, 368, 12, np.float32, seed=1)
    case(run, "stl_small", dev,
         lambda: clts.stl(y, 12, robust=True, device=dev, progress=False), [y],
         batch=small, n=368, period=12, dtype="float32", robust=True)


def bfast(run: Run, dev):
    import clts
    px, n_dates = sized(500_000, run.args.scale, 256), 256
    rng = np.random.default_rng(2)
    dates = np.datetime64("2000-01-01") + (np.arange(n_dates) * 16).astype("timedelta64[D]")
    t = np.arange(n_dates) * 16.0 / 365.0
    y = np.empty((n_dates, px), np.float32)
    step = 50_000
    for a in range(0, px, step):
        b = min(px, a + step)
        m = b - a
        v = (0.5 + 0.002 * t[:, None] + 0.2 * np.sin(2 * np.pi * t[:, None]
                                                      + rng.uniform(0, 6, m))
             + 0.03 * rng.standard_normal((n_dates, m)))
        brk = rng.integers(128, n_dates, m)
        v -= (np.arange(n_dates)[:, None] >= brk) * 0.2 * (rng.random(m) < 0.3)
        v[rng.random((n_dates, m)) < 0.2] = np.nan
        y[:, a:b] = v
    start = dates[128]
    info = dict(pixels=px, dates=n_dates, dtype="float32", nan=0.2)
    case(run, "bfast_monitor", dev,
         lambda: clts.bfast_monitor(y, dates, start, device=dev, progress=False), [y], **info)
    try:
        dy, tiny = to_device(dev, y, y[:, :64])
        case(run, "bfast_monitor", dev,
             lambda: clts.bfast_monitor(dy, dates, start, device=dev, progress=False), [],
             probe=lambda: clts.bfast_monitor(tiny, dates, start, device=dev, progress=False),
             **info)
    except Exception as exc:  # noqa: BLE001
        _error(run, "bfast_monitor", dict(info, inputs="device arrays"), exc)


def tridiag(run: Run, dev):
    import clts
    dt = np.float64 if dev.fp64 else np.float32
    for batch, n in ((sized(20_000, run.args.scale, 64), 115),
                     (sized(200_000, run.args.scale, 64), 15)):
        rng = np.random.default_rng(3)
        a, c, d = (rng.random((batch, n)).astype(dt) for _ in range(3))
        b = (3 + rng.random((batch, n))).astype(dt)
        info = dict(batch=batch, n=n, dtype=np.dtype(dt).name)
        case(run, "tridiag", dev, lambda: clts.solve_tridiagonal(a, b, c, d, device=dev),
             [a, b, c, d], **info)
        try:
            da, db, dc, dd = to_device(dev, a, b, c, d)
            ta, tb, tc, td = to_device(dev, a[:4], b[:4], c[:4], d[:4])
            case(run, "tridiag", dev,
                 lambda: clts.solve_tridiagonal(da, db, dc, dd, device=dev), [],
                 probe=lambda: clts.solve_tridiagonal(ta, tb, tc, td, device=dev), **info)
        except Exception as exc:  # noqa: BLE001
            _error(run, "tridiag", dict(info, inputs="device arrays"), exc)
        ours = np.asarray(clts.solve_tridiagonal(a, b, c, d, device=dev))
        cusparse(run, a, b, c, d, ours, info)


def cusparse(run: Run, a, b, c, d, ours, info):
    try:
        from gpu_anchors import cusparse_gtsv
        solve = cusparse_gtsv(a.shape[1], a.shape[0], a.dtype, data=(a, b, c, d))
        x = solve()
        t = best_wall(solve, 3 if run.args.quick else 10)
        import cupy as cp
        diff = float(np.max(np.abs(cp.asnumpy(x) - ours)))
        del x, solve
        cp.get_default_memory_pool().free_all_blocks()    # the OpenCL calls after it need it
        run.emit("tridiag_anchor", **info, anchor="cuSPARSE gtsv2StridedBatch (CuPy, device "
                 "arrays)", anchor_s=t, maxdiff_vs_clts=diff)
    except Exception as exc:  # noqa: BLE001 - an anchor that cannot run here
        run.emit("tridiag_anchor", **info, anchor="cuSPARSE gtsv2StridedBatch",
                 unavailable=f"{type(exc).__name__}: {exc}"[:300])


def best_wall(fn, repeats):
    fn()
    best = math.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def tke(run: Run, dev):
    import clts
    from clts.ocean.inputs import NAMES, benchmark_inputs
    if not dev.fp64:
        run.emit("tke", skipped="the device has no float64")
        return
    size = sized(1 << 20, run.args.scale, 1 << 12)
    x = benchmark_inputs(size)
    vals = list(x.values())
    info = dict(size=f"2^{math.log2(size):.4g}", grid=list(x["maskW"].shape))
    case(run, "tke", dev, lambda: clts.ocean.tke(*vals, device=dev), vals, **info)
    try:
        dx = to_device(dev, *[v.astype(np.int32) if k == "kbot" else v for k, v in x.items()])
        case(run, "tke", dev, lambda: clts.ocean.tke(*dx, device=dev), [],
             probe=lambda: None, **info)
    except Exception as exc:  # noqa: BLE001
        _error(run, "tke", dict(info, inputs="device arrays"), exc)
    assert tuple(x) == NAMES
    try:
        import tke_jax
        step, where = tke_jax.runner(x)
        got = [np.asarray(o) for o in step()]
        t = best_wall(step, 3 if run.args.quick else 10)
        want = clts.ocean.tke(*vals, device=dev)
        diff = max(float(np.max(np.abs(g - w) / (1 + np.abs(w)))) for g, w in zip(got, want))
        del step                                  # JAX's device arrays of the inputs
        run.emit("tke_anchor", **info, anchor="pyhpc-benchmarks' JAX TKE (bench/tke_jax.py)",
                 anchor_s=t, jax_device=where, maxreldiff_vs_clts=diff)
    except Exception as exc:  # noqa: BLE001 - an anchor that cannot run here
        run.emit("tke_anchor", **info, anchor="JAX TKE",
                 unavailable=f"{type(exc).__name__}: {exc}"[:300])


def trend(run: Run, dev):
    import clts
    dt = np.float64 if dev.fp64 else np.float32
    batch, n = sized(100_000, run.args.scale, 64), 400
    rng = np.random.default_rng(4)
    y = (0.01 * np.arange(n) + rng.standard_normal((batch, n))).astype(dt)
    info = dict(batch=batch, n=n, dtype=np.dtype(dt).name)
    case(run, "trend_test", dev, lambda: clts.trend_test(y, device=dev), [y], **info)
    try:
        dy, tiny = to_device(dev, y, y[:4])
        case(run, "trend_test", dev, lambda: clts.trend_test(dy, device=dev), [],
             probe=lambda: clts.trend_test(tiny, device=dev), **info)
    except Exception as exc:  # noqa: BLE001
        _error(run, "trend_test", dict(info, inputs="device arrays"), exc)


def mp(run: Run, dev):
    import clts
    n, m = sized(1 << 18, run.args.scale, 4 * 256), 256
    T = np.cumsum(np.random.default_rng(5).standard_normal(n))
    info = dict(n=n, m=m, after_errors=run.errors)
    case(run, "matrix_profile", dev,
         lambda: clts.matrix_profile(T, m, device=dev, progress=False), [T], **info)
    try:
        dT, tiny = to_device(dev, T, T[:4 * m])
        case(run, "matrix_profile", dev,
             lambda: clts.matrix_profile(dT, m, device=dev, progress=False), [],
             probe=lambda: clts.matrix_profile(tiny, m, device=dev, progress=False), **info)
    except Exception as exc:  # noqa: BLE001
        _error(run, "matrix_profile", dict(info, inputs="device arrays"), exc)


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--compare"]:
        if len(argv) < 3:
            print("usage: gpu_scale.py --compare A.jsonl B.jsonl [...]", file=sys.stderr)
            return 2
        print(compare(argv[1:]))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--device", default=None, help="an OpenCL device clts knows (default: "
                    "clts's default device, a GPU where there is one)")
    ap.add_argument("--scale", type=float, default=1.0,
                    help="sizes as a fraction of the seed scale (0.01 on a CPU)")
    ap.add_argument("--quick", action="store_true",
                    help="best of 2 warm calls instead of up to 10, no STL out= row, 512 MiB "
                    "link transfers (scripts/gpu-check.sh)")
    ap.add_argument("--only", default=",".join(WORKLOADS),
                    help=f"comma-separated subset of {','.join(WORKLOADS)}")
    ap.add_argument("--link-gbps", type=float, default=54.0,
                    help="the link rate of the bound, GB/s (default 54: an H100's pinned PCIe)")
    ap.add_argument("--budget", type=float, default=200.0,
                    help="seconds after which no new workload starts (default 200)")
    ap.add_argument("--json", help="also write the JSON lines here")
    ap.add_argument("--md", help="also write the markdown table here")
    args = ap.parse_args(argv)
    only = [w.strip() for w in args.only.split(",") if w.strip()]
    bad = set(only) - set(WORKLOADS)
    if bad:
        ap.error(f"--only: unknown {sorted(bad)}; choose from {','.join(WORKLOADS)}")
    import clts
    try:
        from common import quiet
        quiet()
    except Exception:  # noqa: BLE001 - an older clts without some option
        pass
    dev = clts.get_device(args.device)
    run = Run(args)
    run.emit("device", name=f"{dev.platform} / {dev.name}", slug=dev.slug,
             driver=getattr(dev, "driver", ""), clts=getattr(clts, "__version__", "?"),
             clts_path=str(Path(clts.__file__).resolve().parent), scale=args.scale,
             global_mem=dev.global_mem, max_alloc=dev.max_alloc, fp64=bool(dev.fp64),
             python=sys.version.split()[0], numpy=np.__version__)
    interrupted = False
    try:
        for name in only:
            if run.over_budget():
                run.emit(name, skipped=f"budget of {args.budget} s spent")
                continue
            try:
                globals()[name](run, dev)
            except Exception as exc:  # noqa: BLE001 - a failed workload is a figure of the run
                _error(run, name, {}, exc)
    except KeyboardInterrupt:   # a timeout's SIGINT (scripts/gpu-check.sh): the table so far
        interrupted = True
        run.emit("interrupted")
    run.emit("done", errors=run.errors)
    md = (f"# Seed scale on {dev.platform} / {dev.name}\n\n"
          f"clts {getattr(clts, '__version__', '?')} from {Path(clts.__file__).resolve().parent}"
          f"; scale {args.scale}; wall: best of warm calls (first call in parentheses); "
          f"bound: bytes / {args.link_gbps:g} GB/s; goal: 1.5 x bound + span.\n\n"
          + table(run.rows))
    print()
    print(md)
    if args.md:
        Path(args.md).write_text(md)
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
